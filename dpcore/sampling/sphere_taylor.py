r"""Second-order Taylor-model enclosure of the joint-regression gradient on :math:`S^2`.

The formulas of :mod:`dpcore.sampling.sphere_enclosure` (the same as those of
:func:`~dpcore.sampling.sphere_affine.enclose_gradient_parallelepiped`, operation for
operation) evaluated in the second-order Taylor-model arithmetic of
:mod:`dpcore.sampling.taylor2` over parallelepipeds
:math:`\{c + A\varepsilon + \zeta : \varepsilon \in [-1, 1]^4, |\zeta_j| \le e_j\}` of the
chart's coordinates. The result is, for each of the six gradient components,

.. math:: G(c + A\varepsilon + \zeta) = G_0 + L\varepsilon + \varepsilon^\top Q\varepsilon
          + \xi, \qquad |\xi| \le E,

valid pointwise: the gradient's value, its first *and* second derivatives along the
parallelepiped are summed over the :math:`n` terms with their signs; only third-order
remainders, and first-order terms of the terms whose residual angle can cross :math:`\tau`
inside the region (the clipping kink), are bounded term by term in absolute value.

Why, and what it gains (measured, ``benchmarks/bench_bundle_taylor.py``, n = 250,
n·ε = 1000, random boxes of the support with half-widths (h, h, 3h, 3h); median largest error
radius in units of σ; "ideal" is the true per-term second-order remainder, sampled, the floor
of any bound that treats the terms separately):

=======  ========  ========  =====  ======================
h        affine    taylor    ideal  CPU ms/box aff / tay
=======  ========  ========  =====  ======================
0.0125   4.6       0.9       0.3    1.0 / 4.4
0.025    22.9      8.7       1.2    1.0 / 4.4
0.05     118       73        5.5    1.0 / 4.2
0.1      689       497       24     1.0 / 4.3
=======  ========  ========  =====  ======================

Every product of two affine forms pays the product of their total radii; the Taylor model
keeps those products exactly, hence 3 to 5 times tighter on small boxes. On large boxes the
gain falls to 1.4: there the residual factor :math:`\varphi(c) = \tau/\sin\theta` of terms
whose angle spans e.g. [0.25, 0.45] has a curvature in :math:`c` so large that the
second-order expansion loses to the interval value (a constant, first-order form), so those
terms stay first order; a different parametrisation of the clipped residual (its direction
turns at rate :math:`1/\sin\theta` as the prediction moves) would be needed there.

Special functions (all rigorous enclosures):

* :math:`\cos\sqrt s`, :math:`\mathrm{sinc}\sqrt s`, :math:`K(\sqrt s)`, :math:`R(\sqrt q)`:
  value and slope over an interval from :mod:`~dpcore.sampling.interval_ad` and
  :mod:`~dpcore.sampling.sphere_mean_value` (as the affine enclosure), curvature from their
  power series (:func:`~dpcore.sampling.taylor2.series_curvature`);
* the residual factor :math:`\varphi(c) = \min(\theta, \tau)/\sin\theta`
  (:math:`c = \cos\theta`): value and slope as in the affine enclosure (the slope hull covers
  both branches); a curvature only where the whole range of :math:`c` lies on the clipped
  branch, :math:`c \le \cos\tau` (then :math:`\varphi = \tau(1 - c^2)^{-1/2}`,
  :math:`\varphi'' = \tau(1 + 2c^2)(1 - c^2)^{-5/2}`, :math:`C^2` on the closed range); on the
  unclipped branch and across the kink the first-order expansion is used (valid for
  continuous, piecewise :math:`C^1` functions);
* cut terms (range of :math:`\theta` reaching :math:`\pi - \mathrm{CUT\_MARGIN}`): the crude
  residual :math:`0 \pm b` per component, as in the affine enclosure.

Scope of rigour: that of :mod:`~dpcore.sampling.sphere_enclosure` (exact arithmetic on the
float frame taken as orthonormal; a sampler subtracts a small slack for the O(1e-15)
difference between the library's float gradient and the exact one).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .interval_ad import cos_sqrt_parts, sinc_sqrt_parts
from .intervals import Interval, _up, where
from .sphere_enclosure import CUT_MARGIN, _residual_factor, response_coordinates
from .sphere_mean_value import _check, factor_slope, k_sqrt_parts, r_sqrt_parts
from .taylor2 import (
    COS_SQRT,
    K_SQRT,
    R_SQRT,
    SINC_SQRT,
    parallelepiped_variables,
    series_curvature,
)

__all__ = ["TaylorEnclosure", "enclose_gradient_taylor", "fold_quadratic",
           "lower_bound_along_quadratic"]

_PI = np.pi
CHUNK = 1 << 13
_U = 2.0**-53


class TaylorEnclosure(NamedTuple):
    r"""Result of :func:`enclose_gradient_taylor` for ``m`` regions.

    Attributes
    ----------
    value : ndarray (m, 6)
        :math:`G_0`.
    linear : ndarray (m, 6, 4)
        :math:`L`.
    quad : ndarray (m, 6, 4, 4)
        :math:`Q` (symmetric).
    error : ndarray (m, 6)
        :math:`E`.
    cut : ndarray of bool (m,)
    """

    value: np.ndarray
    linear: np.ndarray
    quad: np.ndarray
    error: np.ndarray
    cut: np.ndarray


def _entire(parts1, series):
    def parts(x, order=2):
        value, slope = parts1(x)
        return value, slope, (series_curvature(series, x) if order >= 2 else None)
    return parts


_PARTS = {"cos": _entire(cos_sqrt_parts, COS_SQRT), "sinc": _entire(sinc_sqrt_parts, SINC_SQRT),
          "k": _entire(k_sqrt_parts, K_SQRT), "r": _entire(r_sqrt_parts, R_SQRT)}


def _factor_parts(cut, tau):
    cos_tau_lo = float(Interval.point(np.asarray(tau)).cos().lo)

    def parts(c_int, order=2):
        theta = c_int.arccos()
        theta = Interval._make(np.where(cut, 0.0, theta.lo), np.where(cut, 0.0, theta.hi))
        value, slope = _residual_factor(theta, tau), factor_slope(theta, tau)
        if order < 2:
            return value, slope, None
        clipped = (~cut) & (c_int.hi <= cos_tau_lo)
        lo, hi = np.broadcast_arrays(c_int.lo, c_int.hi)
        cs = Interval._make(np.where(clipped, lo, 0.0), np.where(clipped, hi, 0.0))
        c2 = cs.square()
        w = 1.0 - c2
        curv = tau * (1.0 + 2.0 * c2) / (w.square() * w.sqrt())
        return value, slope, Interval._make(np.where(clipped, curv.lo, -np.inf),
                                            np.where(clipped, curv.hi, np.inf))
    return parts


def _dot3(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _chunk_forms(u1, u2, w1, w2, t, ycoords, tau, bound):
    """The six gradient components as Taylor models (mirrors
    :func:`dpcore.sampling.sphere_affine._chunk_forms`)."""
    s_u = u1.square() + u2.square()
    s_r = s_u.apply(_PARTS["sinc"], lo=0.0)
    c_r = s_u.apply(_PARTS["cos"], lo=0.0)
    k_r = s_u.apply(_PARTS["k"], lo=0.0)
    p = (c_r, s_r * u1, s_r * u2)
    uw = u1 * w1 + u2 * w2
    uwk = uw * k_r
    v = (-(uw * s_r), w1 - uwk * u1, w2 - uwk * u2)
    q = (w1.square() + w2.square()).scale(t * t)
    cc = q.apply(_PARTS["cos"], lo=0.0)
    ss = q.apply(_PARTS["sinc"], lo=0.0)
    rr = q.apply(_PARTS["r"], lo=0.0)
    st = ss.scale(t)
    cos_t = cc * _dot3(p, ycoords) + st * _dot3(v, ycoords)
    rng = cos_t.range()
    theta_hi = np.arccos(np.clip(np.maximum(rng.lo, -1.0), -1.0, 1.0))
    cut = theta_hi >= _PI - CUT_MARGIN - 1e-12
    f = cos_t.apply(_factor_parts(cut, tau), lo=-1.0, hi=1.0)
    yhat = [cc * p[k] + st * v[k] for k in range(3)]
    eps = []
    for k in range(3):
        e = (f * (-(cos_t * yhat[k]) + ycoords[k])).masked(~cut)
        eps.append(e.widened(np.where(cut, bound, 0.0)))
    pe = _dot3(p, eps)
    ve = _dot3(v, eps)
    gp = [-(cc * eps[k] - pe * yhat[k]).mean() for k in range(3)]
    pb, vb = [x[:, 0] for x in p], [x[:, 0] for x in v]
    m_pst = (pe * st).mean()
    m_coef = (rr * (cc * ve.scale(t) - q * ss * pe)).scale(t * t).mean()
    gv = [-((st * eps[k]).mean() - m_pst * pb[k] + m_coef * vb[k]) for k in range(3)]
    return gp + gv, np.any(cut, axis=-1)


def enclose_gradient_taylor(chart, center, basis, slack, t, y, tau, *, chunk=CHUNK):
    r"""Second-order Taylor model of the clipped regression gradient over parallelepipeds
    :math:`\{c + A\varepsilon + \zeta\}` (module docstring; arguments as for
    :func:`~dpcore.sampling.sphere_affine.enclose_gradient_parallelepiped`; axis-aligned
    boxes are ``basis = diag(h)``).

    Returns
    -------
    TaylorEnclosure
    """
    center = np.atleast_2d(np.asarray(center, dtype=float))
    m = center.shape[0]
    basis = np.asarray(basis, dtype=float).reshape(m, 4, 4)
    slack = np.asarray(slack, dtype=float).reshape(center.shape)
    reach = (np.sum(np.abs(basis), axis=-1) + slack) * (1 + 1e-12)
    if not (np.all(np.isfinite(center)) and np.all(np.isfinite(reach)) and np.all(slack >= 0)):
        raise ValueError("Parallelepipeds need finite centres, bases and slacks >= 0.")
    _, _, t, y, tau = _check(chart, center - reach, center + reach, t, y, tau)
    bound, ycoords = response_coordinates(chart, y, tau)
    value, error = np.empty((m, 6)), np.empty((m, 6))
    linear, quad = np.empty((m, 6, 4)), np.empty((m, 6, 4, 4))
    cut = np.zeros(m, dtype=bool)
    step = max(1, int(chunk) // t.size)
    for start in range(0, m, step):
        sl = slice(start, min(m, start + step))
        k = sl.stop - sl.start
        coords = parallelepiped_variables(center[sl], basis[sl], slack[sl])
        forms, cut[sl] = _chunk_forms(*coords, t, ycoords, tau, bound)
        for i, g in enumerate(forms):
            value[sl, i] = np.broadcast_to(g.c, (k,))
            error[sl, i] = np.broadcast_to(g.e, (k,))
            linear[sl, i] = np.broadcast_to(g.a, (4, k)).T
            quad[sl, i] = np.moveaxis(np.broadcast_to(g.B, (4, 4, k)), -1, 0)
    return TaylorEnclosure(value, linear, quad, error, cut)


def fold_quadratic(enc):
    r"""``(value, linear, error)`` of an affine enclosure implied by a Taylor enclosure:
    :math:`\varepsilon^\top Q\varepsilon \in [q_-, q_+]` (diagonal terms in
    :math:`[\min(Q_{jj}, 0), \max(Q_{jj}, 0)]`, others in :math:`\pm|Q_{jl}|`), so
    :math:`G = (G_0 + \tfrac12(q_- + q_+)) + L\varepsilon + \xi'`,
    :math:`|\xi'| \le E + \tfrac12(q_+ - q_-)` plus the rounding of the new centre."""
    quad = enc.quad
    diag = np.diagonal(quad, axis1=-2, axis2=-1)
    off = np.sum(np.abs(quad), axis=(-2, -1)) - np.sum(np.abs(diag), axis=-1)
    off = np.maximum(off, 0.0) * (1 + 32 * _U)
    q_lo = (np.sum(np.minimum(diag, 0.0), axis=-1) * (1 + 8 * _U)) - off
    q_hi = (np.sum(np.maximum(diag, 0.0), axis=-1) * (1 + 8 * _U)) + off
    mid = 0.5 * q_lo + 0.5 * q_hi
    rad = np.maximum(_up(q_hi - mid), _up(mid - q_lo))
    value = enc.value + mid
    err = (enc.error + rad + 4 * _U * (np.abs(enc.value) + np.abs(mid)) + 1e-300) * (1 + 8 * _U)
    return value, enc.linear, err


def lower_bound_along_quadratic(enc, direction):
    r"""Rigorous lower bound of :math:`\langle n, G\rangle` over the region for unit
    directions ``n`` (m, 6): with :math:`l = L^\top n`, :math:`M = \sum_k n_k Q_k` (interval
    arithmetic), :math:`l^\top\varepsilon + \varepsilon^\top M\varepsilon \ge \sum_j
    \min_{|\varepsilon_j|\le1}(l_j\varepsilon_j + M_{jj}\varepsilon_j^2) - \sum_{j\ne i}
    |M_{ji}|`, and :math:`\min_{[-1,1]}(l\varepsilon + m\varepsilon^2) \ge
    -|l|^2/(4m)` if :math:`0 < m`, :math:`|l| \le 2m`, else :math:`\ge m - |l|`
    (endpoints; :math:`m` replaced by a lower bound, :math:`|l|` by an upper bound, which
    only lowers each expression)."""
    n = np.asarray(direction, dtype=float)
    base = (Interval.point(enc.value) * n).sum(axis=-1)
    row = (Interval.point(enc.linear) * n[:, :, None]).sum(axis=1)             # (m, 4)
    mat = (Interval.point(enc.quad) * n[:, :, None, None]).sum(axis=1)         # (m, 4, 4)
    lmag = row.mag()
    dlo = np.diagonal(mat.lo, axis1=-2, axis2=-1)
    mmag = mat.mag()
    off = Interval(np.sum(mmag, axis=(-2, -1))) - Interval(np.sum(np.diagonal(mmag, axis1=-2,
                                                                             axis2=-1), axis=-1))
    off_hi = np.maximum(off.hi, 0.0) * (1 + 32 * _U)
    li, mi = Interval(lmag), Interval(dlo)
    pos = (dlo > 0) & (lmag <= 2 * dlo)
    safe = Interval(np.where(pos, dlo, 1.0))
    vertex = -(li.square() / (safe * 4.0))
    ends = mi - li
    per = where(pos, vertex, ends)
    spread = (Interval.point(enc.error) * np.abs(n)).sum(axis=-1)
    total = base + per.sum(axis=-1) - spread - off_hi
    return total.lo
