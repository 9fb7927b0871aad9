r"""Affine-arithmetic enclosure of the joint-regression gradient on :math:`S^2` over boxes.

The formulas of :mod:`dpcore.sampling.sphere_enclosure` evaluated in affine arithmetic
(:mod:`dpcore.sampling.affine`) over a box :math:`c + h\varepsilon`,
:math:`\varepsilon \in [-1, 1]^4`: the result is, for each of the six gradient components
(frame coordinates, :math:`\nabla_p E` then :math:`\nabla_v E`),

.. math:: G(c + h\varepsilon) = G_0 + L\varepsilon + \xi(\varepsilon), \qquad |\xi| \le E,

valid pointwise, with :math:`L \approx DG(c)\,\mathrm{diag}(h)` and :math:`E` of the order of the
per-term second-order remainders. This is tighter than the mean-value form of
:mod:`dpcore.sampling.sphere_mean_value` on boxes much larger than the scale where its
Jacobian enclosure stays narrow, which is what a sampler certifying a large domain needs.

The special functions use the value and slope enclosures of the mean-value module (slopes in
the squared radii, from proven monotonicity); the clipped residual factor
:math:`\varphi(c) = \min(\theta, \tau)/\sin\theta` uses the slope enclosure that covers both
branches (continuous, piecewise :math:`C^1`: the mean-value theorem holds with the hull).
Cut terms (the range of :math:`\theta` reaches :math:`\pi - \mathrm{CUT\_MARGIN}`) get the crude
residual :math:`0 \pm b` in each component, :math:`b = \min(\tau, \pi)`, which contains the
library's 0 and every residual of norm :math:`\le b`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .affine import AffineForm, box_variables
from .interval_ad import cos_sqrt_parts, sinc_sqrt_parts
from .intervals import Interval
from .sphere_enclosure import CUT_MARGIN, _residual_factor, response_coordinates
from .sphere_mean_value import _check, factor_slope, k_sqrt_parts, r_sqrt_parts

__all__ = ["AffineEnclosure", "ParallelepipedEnclosure", "enclose_gradient_affine",
           "enclose_gradient_parallelepiped", "lower_bound_along"]

_PI = np.pi
CHUNK = 1 << 14


class AffineEnclosure(NamedTuple):
    r"""Result of :func:`enclose_gradient_affine` for ``m`` boxes.

    Attributes
    ----------
    lower, upper : ndarray (m,)
        Rigorous bounds of :math:`g` over each box.
    value : ndarray (m, 6)
        :math:`G_0`.
    linear : ndarray (m, 6, 4)
        :math:`L` (per unit :math:`\varepsilon`).
    error : ndarray (m, 6)
        :math:`E`.
    center, half : ndarray (m, 4)
        The box as :math:`c + h\varepsilon` (it contains ``[lo, hi]``).
    cut : ndarray of bool (m,)
        Boxes where some term used the crude cut-locus residual.
    """

    lower: np.ndarray
    upper: np.ndarray
    value: np.ndarray
    linear: np.ndarray
    error: np.ndarray
    center: np.ndarray
    half: np.ndarray
    cut: np.ndarray


def _dot3(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _factor_parts(cut, tau):
    def parts(c_int, slope=True):
        theta = c_int.arccos()
        theta = Interval._make(np.where(cut, 0.0, theta.lo), np.where(cut, 0.0, theta.hi))
        return _residual_factor(theta, tau), (factor_slope(theta, tau) if slope else None)
    return parts


def _chunk(lo, hi, t, ycoords, tau, bound):
    (u1, u2, w1, w2), c, h = box_variables(lo, hi)
    forms, cut = _chunk_forms(u1, u2, w1, w2, t, ycoords, tau, bound)
    return forms, c, h, cut


def _chunk_forms(u1, u2, w1, w2, t, ycoords, tau, bound):
    """The six gradient components as affine forms over the region spanned by the coordinate
    forms ``u1, u2, w1, w2`` (value shape ``(mc, 1)``), and the cut flags."""
    s_u = u1.square() + u2.square()
    s_r = s_u.apply(sinc_sqrt_parts, lo=0.0)
    c_r = s_u.apply(cos_sqrt_parts, lo=0.0)
    k_r = s_u.apply(k_sqrt_parts, lo=0.0)
    p = (c_r, s_r * u1, s_r * u2)
    uw = u1 * w1 + u2 * w2
    uwk = uw * k_r
    v = (-(uw * s_r), w1 - uwk * u1, w2 - uwk * u2)
    q = (w1.square() + w2.square()).scale(t * t)            # rho^2, (mc, n)
    cc = q.apply(cos_sqrt_parts, lo=0.0)
    ss = q.apply(sinc_sqrt_parts, lo=0.0)
    rr = q.apply(r_sqrt_parts, lo=0.0)
    st = ss.scale(t)
    cos_t = cc * _dot3(p, ycoords) + st * _dot3(v, ycoords)
    rng = cos_t.range()
    theta_hi = np.arccos(np.clip(np.maximum(rng.lo, -1.0), -1.0, 1.0))
    # arccos is decreasing: the largest theta comes from the smallest cosine (with a margin
    # for libm's rounding, far below CUT_MARGIN).
    cut = theta_hi >= _PI - CUT_MARGIN - 1e-12
    f = cos_t.apply(_factor_parts(cut, tau), lo=-1.0, hi=1.0)
    yhat = [cc * p[k] + st * v[k] for k in range(3)]
    eps = []
    for k in range(3):
        e = (f * (-(cos_t * yhat[k]) + ycoords[k])).masked(~cut)
        eps.append(AffineForm(e.c, e.a, e.e + np.where(cut, bound, 0.0)))
    pe = _dot3(p, eps)
    ve = _dot3(v, eps)
    gp = [-(cc * eps[k] - pe * yhat[k]).mean() for k in range(3)]
    pb, vb = [x[:, 0] for x in p], [x[:, 0] for x in v]
    m_pst = (pe * st).mean()
    m_coef = (rr * (cc * ve.scale(t) - q * ss * pe)).scale(t * t).mean()
    gv = [-((st * eps[k]).mean() - m_pst * pb[k] + m_coef * vb[k]) for k in range(3)]
    return gp + gv, np.any(cut, axis=-1)


def lower_bound_along(value, linear, error, direction):
    r"""Rigorous lower bound of :math:`\langle n, G_0 + L\varepsilon + \xi\rangle` over
    :math:`\varepsilon \in [-1, 1]^4`, :math:`|\xi_k| \le E_k`, for directions ``n`` (m, 6)."""
    n = np.asarray(direction, dtype=float)
    base = (Interval.point(value) * n).sum(axis=-1)
    row = (Interval.point(linear) * n[:, :, None]).sum(axis=1)        # (m, 4)
    spread = Interval(row.mag()).sum(axis=-1) + (Interval.point(error) * np.abs(n)).sum(axis=-1)
    return (base - spread).lo


def enclose_gradient_affine(chart, lo, hi, t, y, tau, *, chunk=CHUNK):
    """Affine enclosure of the clipped regression gradient over boxes (module docstring).

    Parameters
    ----------
    chart : SphereBundleChart
    lo, hi : array, shape (m, 4)
        Box corners inside :math:`|u| < \\pi`.
    t : array (n,)
    y : array (n, 3)
    tau : float
    chunk : int
        (box, term) pairs evaluated at once.

    Returns
    -------
    AffineEnclosure
    """
    lo, hi, t, y, tau = _check(chart, lo, hi, t, y, tau)
    bound, ycoords = response_coordinates(chart, y, tau)
    m = lo.shape[0]
    value, error = np.empty((m, 6)), np.empty((m, 6))
    linear = np.empty((m, 6, 4))
    center, half = np.empty((m, 4)), np.empty((m, 4))
    cut = np.zeros(m, dtype=bool)
    step = max(1, int(chunk) // t.size)
    for start in range(0, m, step):
        sl = slice(start, min(m, start + step))
        forms, center[sl], half[sl], cut[sl] = _chunk(lo[sl], hi[sl], t, ycoords, tau, bound)
        for k, g in enumerate(forms):
            value[sl, k] = np.broadcast_to(g.c, (sl.stop - sl.start,))
            error[sl, k] = np.broadcast_to(g.e, (sl.stop - sl.start,))
            linear[sl, k] = np.broadcast_to(g.a, (4, sl.stop - sl.start)).T
    spread = np.sum(np.abs(linear), axis=-1) * (1 + 1e-15) + error
    box = Interval(value) + Interval._make(-spread, spread)
    lower = Interval(box.mig()).square().sum(axis=-1).sqrt().lo
    upper = Interval(box.mag()).square().sum(axis=-1).sqrt().hi
    norm = np.sqrt(np.sum(value * value, axis=-1, keepdims=True))
    direction = np.divide(value, norm * (1 + 1e-12), out=np.zeros_like(value), where=norm > 0)
    lower = np.maximum(lower, np.maximum(lower_bound_along(value, linear, error, direction), 0.0))
    return AffineEnclosure(lower, upper, value, linear, error, center, half, cut)


class ParallelepipedEnclosure(NamedTuple):
    r"""Result of :func:`enclose_gradient_parallelepiped` for ``m`` regions:
    :math:`G(c + A\varepsilon + \zeta) = G_0 + L\varepsilon + \xi`, :math:`|\xi_k| \le E_k`,
    for every :math:`\varepsilon \in [-1, 1]^4` and :math:`|\zeta_j| \le e_j`.

    Attributes
    ----------
    value : ndarray (m, 6)
    linear : ndarray (m, 6, 4)
    error : ndarray (m, 6)
    cut : ndarray of bool (m,)
    """

    value: np.ndarray
    linear: np.ndarray
    error: np.ndarray
    cut: np.ndarray


def enclose_gradient_parallelepiped(chart, center, basis, slack, t, y, tau, *, chunk=CHUNK):
    r"""Affine enclosure of the clipped regression gradient over parallelepipeds
    :math:`\{c + A\varepsilon + \zeta : \varepsilon \in [-1, 1]^4, |\zeta_j| \le e_j\}`
    (the formulas of the module docstring with general affine coordinate forms: every rule
    of :mod:`dpcore.sampling.affine` holds for any coefficients, and the coordinate error
    :math:`e` enters as the forms' error radius, which covers any point within it).

    Parameters
    ----------
    chart : SphereBundleChart
    center : array (m, 4)
        :math:`c` (floats, taken exactly).
    basis : array (m, 4, 4)
        :math:`A` (row: coordinate, column: noise symbol; floats, taken exactly).
    slack : array (m, 4)
        :math:`e \ge 0`, e.g. the rounding of :math:`c` and :math:`A` computed from other
        quantities.
    t, y, tau
        Data, as for :func:`enclose_gradient_affine`.
    chunk : int
        (region, term) pairs evaluated at once.

    Returns
    -------
    ParallelepipedEnclosure
    """
    center = np.atleast_2d(np.asarray(center, dtype=float))
    basis = np.asarray(basis, dtype=float).reshape(center.shape[0], 4, 4)
    slack = np.asarray(slack, dtype=float).reshape(center.shape)
    reach = (np.sum(np.abs(basis), axis=-1) + slack) * (1 + 1e-12)
    if not (np.all(np.isfinite(center)) and np.all(np.isfinite(reach)) and np.all(slack >= 0)):
        raise ValueError("Parallelepipeds need finite centres, bases and slacks >= 0.")
    lo, hi = center - reach, center + reach
    lo, hi, t, y, tau = _check(chart, lo, hi, t, y, tau)
    bound, ycoords = response_coordinates(chart, y, tau)
    m = center.shape[0]
    value, error = np.empty((m, 6)), np.empty((m, 6))
    linear = np.empty((m, 6, 4))
    cut = np.zeros(m, dtype=bool)
    step = max(1, int(chunk) // t.size)
    for start in range(0, m, step):
        sl = slice(start, min(m, start + step))
        k = sl.stop - sl.start
        coords = [AffineForm(center[sl, j, None].copy(),
                             np.ascontiguousarray(basis[sl, j, :].T)[:, :, None],
                             slack[sl, j, None].copy()) for j in range(4)]
        forms, cut[sl] = _chunk_forms(*coords, t, ycoords, tau, bound)
        for i, g in enumerate(forms):
            value[sl, i] = np.broadcast_to(g.c, (k,))
            error[sl, i] = np.broadcast_to(g.e, (k,))
            linear[sl, i] = np.broadcast_to(g.a, (4, k)).T
    return ParallelepipedEnclosure(value, linear, error, cut)
