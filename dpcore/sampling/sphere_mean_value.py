r"""Mean-value (centred) enclosure of the joint-regression gradient on :math:`S^2` over boxes.

:func:`dpcore.sampling.sphere_enclosure.enclose_gradient` evaluates the clipped gradient
:math:`G(u, w) = (\nabla_p E, \nabla_v E)` (frame coordinates, :math:`\mathbb{R}^6`) over a box
of the chart's coordinates by plain interval arithmetic, which overestimates to first order
(the dependency problem). This module evaluates the same formulas with
:class:`~dpcore.sampling.interval_ad.DualInterval` (forward differentiation in interval
arithmetic), which also encloses the Jacobian :math:`[DG](B)` over the box, and returns the
mean-value form

.. math:: G(z) \in G_s(c) + [DG_s](B)\,(z - c) + [G_{cut}](B) \qquad (z \in B),

intersected componentwise with the plain enclosure (both are valid, so is their
intersection). Here :math:`G_s` is the sum of the terms that stay away from the cut locus on
the whole box and :math:`G_{cut}` the others:

* **smooth terms**: every quantity of the term is a smooth function of :math:`(u, w)`, except
  the residual factor :math:`\varphi(c) = \min(\theta, \tau)/\sin\theta` of
  :math:`c = \cos\theta`, which is continuous and piecewise smooth (the clipping switch at
  :math:`\theta = \tau`). Its slope enclosure covers both branches where :math:`\theta`
  straddles :math:`\tau`:
  :math:`d\varphi/dc = -A(\theta)/\mathrm{sinc}^3\theta` below :math:`\tau`
  (:math:`A(\theta) = (\sin\theta - \theta\cos\theta)/\theta^3`, so no singularity at
  :math:`\theta = 0`) and :math:`\tau\cos\theta/\sin^3\theta` above, which the mean-value form
  allows (:mod:`dpcore.sampling.interval_ad`, Clarke's mean-value theorem along segments);
  :math:`G_s(c)` is enclosed at the float centre :math:`c` of the box (a point box), with the
  box's own choice of smooth terms;
* **cut terms** (the enclosure of :math:`\theta` over the box reaches
  :math:`\pi - \mathrm{CUT\_MARGIN}`, where the library's residual jumps): value only, by the
  crude residual box of :mod:`~dpcore.sampling.sphere_enclosure` (which covers both the
  library's 0 and every clipped residual).

The chart's special functions are differentiated in the squared radii
:math:`s = |u|^2` and :math:`q = t^2|w|^2`, where they are analytic:
:math:`\frac{d}{ds}K(\sqrt s) = -\mathrm{sinc}(r/2)A(r/2)/8` for
:math:`K(r) = \tfrac12\mathrm{sinc}^2(r/2)`, and for
:math:`R(\rho) = (1 - \mathrm{sinc}\,2\rho)/\rho^2 = 2\int_0^1 \sigma^2\mathrm{sinc}^2(\rho\sigma)
d\sigma`, :math:`\frac{d}{dq}R(\sqrt q) = -B(\rho)`,
:math:`B(\rho) = 2\int_0^1\sigma^4\mathrm{sinc}(\rho\sigma)A(\rho\sigma)\,d\sigma`, a product of
positive decreasing functions, so decreasing on :math:`[0, \pi]` (range from the endpoint
values). Point values of :math:`B`: the alternating series
:math:`\sum_{j\ge2}(-1)^j (j-1)4^j q^{j-2}/(2j+1)!` (terms decreasing for :math:`q < 5`) below
:math:`\rho = 0.5`, the closed form :math:`8[3(x - \sin x) - x(1 - \cos x)]/x^5`
(:math:`x = 2\rho`) in interval arithmetic above.

Scope of rigour: that of :mod:`~dpcore.sampling.sphere_enclosure` (exact arithmetic on the
float frame taken as orthonormal; a sampler subtracts a small slack for the O(1e-15)
difference between the library's float gradient and the exact one).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .interval_ad import (
    a_function,
    alternating_series,
    cos_of_sqrt,
    decreasing_range,
    sinc_of_sqrt,
    variables,
)
from .intervals import Interval, sinc, sinc_at, where
from .sphere_enclosure import (
    CUT_MARGIN,
    _residual_factor,
    assemble_gradient,
    r_function,
    response_coordinates,
)

__all__ = ["MeanValueEnclosure", "b_function", "enclose_gradient_mv", "factor_slope",
           "k_sqrt_parts", "r_sqrt_parts"]

_PI = np.pi
#: Target number of (box, term) pairs per chunk.
CHUNK = 1 << 13
#: Below this rho the series of B is used.
_B_SERIES = 0.5


def _const(num, den):
    return Interval.point(float(num)) / float(den)


#: B's series in q = rho^2: (-1)^j (j - 1) 4^j / (2j + 1)!, j = 2..6 (bracket width
#: 5 4^6 q^4 / 13! < 1e-7 below rho = 0.5: ample for slopes).
_B_COEF = [_const((-1) ** j * (j - 1) * 4**j, math.factorial(2 * j + 1)) for j in range(2, 7)]


def _b_direct(x):
    """8 [3 (x - sin x) - x (1 - cos x)] / x^5 over an interval ``x = 2 rho > 0``."""
    return 8.0 * (3.0 * (x - x.sin()) - x * (1.0 - x.cos())) / (x.square().square() * x)


def b_at(rho):
    r"""Enclosure of :math:`B(\rho) = -\frac{d}{dq}R(\sqrt q)` at floats ``rho >= 0``."""
    rho = np.asarray(rho, dtype=float)
    small = rho < _B_SERIES
    lo, hi = np.empty(rho.shape), np.empty(rho.shape)
    if np.any(small):
        s = alternating_series(Interval.point(rho[small]).square(), _B_COEF)
        lo[small], hi[small] = s.lo, s.hi
    if np.any(~small):
        big = _b_direct(Interval.point(2.0 * rho[~small]))
        lo[~small], hi[~small] = big.lo, big.hi
    return Interval._make(lo, hi)


def b_function(rho):
    """Enclosure of B over intervals ``rho >= 0`` (decreasing on [0, pi])."""
    return decreasing_range(rho, b_at, lambda X: _b_direct(X * 2.0))


def k_sqrt_parts(s, slope=True):
    """Enclosures of K(sqrt s) = sinc(r/2)^2 / 2 and (``slope``) of its slope
    -sinc(r/2) A(r/2) / 8 over an Interval ``s >= 0``."""
    half = s.sqrt() * 0.5
    value = sinc(half).square() * 0.5
    if not slope:
        return value, None
    slope = decreasing_range(half, sinc_at, lambda X: X.sin() / X) * a_function(half)
    return value, slope * -0.125


def r_sqrt_parts(q, slope=True):
    """Enclosures of R(sqrt q) and (``slope``) of its slope -B(sqrt q) over an Interval
    ``q >= 0``."""
    rho = q.sqrt()
    return r_function(rho), (-b_function(rho) if slope else None)


def _k_of_sqrt(s):
    return s.apply(*k_sqrt_parts(s.val))


def _r_of_sqrt(q):
    return q.apply(*r_sqrt_parts(q.val))


def factor_slope(theta, tau):
    r"""Enclosure of :math:`d\varphi/dc` for :math:`\theta` inside
    :math:`[0, \pi - \mathrm{CUT\_MARGIN}]` (module docstring)."""
    lo, hi = np.broadcast_arrays(theta.lo, theta.hi)
    u_hi = np.minimum(hi, tau)
    th_u = Interval._make(np.minimum(lo, u_hi), u_hi)
    su = sinc(th_u)
    slope = -(a_function(th_u) / (su.square() * su))
    above = hi > tau
    if np.any(above):
        th_c = Interval._make(np.where(above, np.maximum(lo, tau), 1.0), np.where(above, hi, 1.0))
        sc = th_c.sin()
        clipped = tau * th_c.cos() / (sc.square() * sc)
        slope = where(above, where(lo >= tau, clipped, slope.hull(clipped)), slope)
    return slope


def _dot3(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _evaluate(coords, t, ycoords, tau, bound, cut=None):
    """Per chunk of boxes: the smooth terms' gradient sums (DualIntervals, value shape
    (mc,)), the cut terms' sums (Intervals) and the cut mask (mc, n). With ``cut`` given,
    those terms are left out (used at the centres) and no cut sums are returned."""
    u1, u2, w1, w2 = coords
    s_u = u1.square() + u2.square()
    s_r, c_r, k_r = sinc_of_sqrt(s_u), cos_of_sqrt(s_u), _k_of_sqrt(s_u)
    p = (c_r, s_r * u1, s_r * u2)
    uw = u1 * w1 + u2 * w2
    uwk = uw * k_r
    v = (-(uw * s_r), w1 - uwk * u1, w2 - uwk * u2)
    q = (w1.square() + w2.square()) * (t * t)           # rho^2, (mc, n)
    cc, ss, rr = cos_of_sqrt(q), sinc_of_sqrt(q), _r_of_sqrt(q)
    st = ss * t
    c = (cc * _dot3(p, ycoords) + st * _dot3(v, ycoords)).clamp_value(-1.0, 1.0)
    yhat = [cc * p[k] + st * v[k] for k in range(3)]
    theta = c.val.arccos()
    box_cut = theta.hi >= _PI - CUT_MARGIN
    if cut is None:
        cut = box_cut
    safe = where(cut | box_cut, Interval.point(0.0), theta)
    f = c.apply(_residual_factor(safe, tau), factor_slope(safe, tau))
    keep = ~cut
    eps = [(f * (-(c * yhat[k]) + ycoords[k])).clamp_value(-bound, bound).masked(keep)
           for k in range(3)]
    smooth = _assemble(p, v, eps, cc, st, ss, rr, q, t, yhat)
    cut_sums = None
    if cut is box_cut and np.any(cut):
        crude = Interval(-bound, bound)
        zero = Interval.point(0.0)
        eps_c = [where(cut, crude, zero) for _ in range(3)]
        vals = [x.val for x in (*p, *v)]
        cut_sums = _assemble_values(vals[:3], vals[3:], eps_c, cc.val, st.val, ss.val, rr.val,
                                    q.val, t, [x.val for x in yhat])
    return smooth, cut_sums, cut


def _assemble(p, v, eps, cc, st, ss, rr, rho2, t, yhat):
    """Mean gradient terms (DualIntervals): see the formulas of sphere_enclosure."""
    pe = _dot3(p, eps)
    ve = _dot3(v, eps)
    gp = [-(cc * eps[k] - pe * yhat[k]).mean() for k in range(3)]
    pb, vb = [x[:, 0] for x in p], [x[:, 0] for x in v]
    m_pst = (pe * st).mean()
    m_coef = (rr * (cc * (ve * t) - rho2 * ss * pe) * (t * t)).mean()
    gv = [-((st * eps[k]).mean() - m_pst * pb[k] + m_coef * vb[k]) for k in range(3)]
    return gp + gv


def _assemble_values(p, v, eps, cc, st, ss, rr, rho2, t, yhat):
    """The same formulas on plain intervals (the cut terms' values)."""
    gp, gv = assemble_gradient(p, v, eps, cc, st, ss, rr, rho2, t, yhat)
    return gp + gv


def _projected_lower(cv, jac, cutp, dz):
    r"""Lower bound of :math:`g` over each box along the direction of :math:`G_s(c)`:
    :math:`g(z) \ge \langle n, G(z)\rangle` for :math:`|n| \le 1`, and
    :math:`\langle n, G(z)\rangle \in \langle n, G_s(c) + G_{cut}\rangle + (n^\top[DG_s])(z - c)`.
    With :math:`n` the unit direction of the centre value this loses only the Jacobian's
    width, where the componentwise distance of the enclosing box to 0 also pays for its
    wrapping (it approaches the ideal first-order constant :math:`|\nabla g|_1`)."""
    mid = cv.mid()
    norm = np.sqrt(np.sum(mid * mid, axis=-1, keepdims=True))
    # |n| <= 1 despite rounding: divide by a norm enlarged by a relative 1e-12.
    n = np.divide(mid, norm * (1.0 + 1e-12), out=np.zeros_like(mid), where=norm > 0)
    base = (cv + cutp) * n
    row = (jac * n[:, :, None]).sum(axis=1)                    # (m, 4): n^T [DG]
    val = base.sum(axis=-1) + (row * dz).sum(axis=-1)
    return np.maximum(val.lo, 0.0)


class MeanValueEnclosure(NamedTuple):
    r"""Result of :func:`enclose_gradient_mv` for ``m`` boxes (gradient components in frame
    coordinates: :math:`\nabla_p E` then :math:`\nabla_v E`).

    Attributes
    ----------
    lower, upper : ndarray (m,)
        Rigorous bounds of :math:`g = |G|` over each box (from ``grad``).
    grad : Interval (m, 6)
        The mean-value form intersected with the plain enclosure.
    center : ndarray (m, 4)
        The float centres :math:`c` (inside their boxes).
    center_value : Interval (m, 6)
        :math:`G_s(c)`, the smooth terms at the centre.
    jacobian : Interval (m, 6, 4)
        :math:`[DG_s](B)`.
    cut_part : Interval (m, 6)
        :math:`[G_{cut}](B)` (exactly 0 where no term is cut).
    plain : Interval (m, 6)
        The plain interval enclosure of :math:`G` over the box.
    cut : ndarray of bool (m,)
        Boxes where some term is cut.
    """

    lower: np.ndarray
    upper: np.ndarray
    grad: Interval
    center: np.ndarray
    center_value: Interval
    jacobian: Interval
    cut_part: Interval
    plain: Interval
    cut: np.ndarray


def _check(chart, lo, hi, t, y, tau):
    lo = np.atleast_2d(np.asarray(lo, dtype=float))
    hi = np.atleast_2d(np.asarray(hi, dtype=float))
    if lo.shape != hi.shape or lo.ndim != 2 or lo.shape[-1] != 4:
        raise ValueError(f"`lo` and `hi` must both have shape (m, 4), got {lo.shape}, {hi.shape}.")
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi)) and np.all(lo <= hi)):
        raise ValueError("Boxes need finite corners with lo <= hi.")
    u_mag = np.sqrt(np.maximum(lo[:, 0] ** 2, hi[:, 0] ** 2)
                    + np.maximum(lo[:, 1] ** 2, hi[:, 1] ** 2))
    if np.any(u_mag * (1 + 1e-12) >= _PI):
        raise ValueError("Every box must lie inside |u| < pi (the chart's domain).")
    t = np.asarray(t, dtype=float).reshape(-1)
    y = np.asarray(y, dtype=float)
    if t.size == 0 or y.shape != (t.size, 3) or not np.all(np.isfinite(t)):
        raise ValueError(f"`y` must have shape (n, 3) with n = {t.size} >= 1 and `t` be finite.")
    if not float(tau) > 0:
        raise ValueError("`tau` must be positive.")
    return lo, hi, t, y, float(tau)


def enclose_gradient_mv(chart, lo, hi, t, y, tau, *, chunk=CHUNK):
    r"""Mean-value enclosure of the clipped regression gradient over boxes (module
    docstring).

    Parameters
    ----------
    chart : SphereBundleChart
    lo, hi : array, shape (m, 4)
        Box corners ``(u1, u2, w1, w2)`` inside :math:`|u| < \pi`.
    t : array, shape (n,)
    y : array, shape (n, 3)
    tau : float
    chunk : int
        (box, term) pairs evaluated at once.

    Returns
    -------
    MeanValueEnclosure
    """
    lo, hi, t, y, tau = _check(chart, lo, hi, t, y, tau)
    bound, ycoords = response_coordinates(chart, y, tau)
    m = lo.shape[0]
    center = np.clip(0.5 * lo + 0.5 * hi, lo, hi)
    out = {name: (np.empty(shape), np.empty(shape)) for name, shape in (
        ("cv", (m, 6)), ("jac", (m, 6, 4)), ("cutp", (m, 6)), ("plain", (m, 6)))}
    cut_box = np.zeros(m, dtype=bool)
    step = max(1, int(chunk) // t.size)
    for start in range(0, m, step):
        sl = slice(start, min(m, start + step))
        smooth, cut_sums, cut = _evaluate(variables(lo[sl], hi[sl]), t, ycoords, tau, bound)
        at_c, _, _ = _evaluate(variables(center[sl], center[sl], derivatives=False), t,
                               ycoords, tau, bound, cut=cut)
        cut_box[sl] = np.any(cut, axis=-1)
        for k in range(6):
            jl, jh = np.broadcast_arrays(smooth[k].der.lo, smooth[k].der.hi)
            out["jac"][0][sl, k], out["jac"][1][sl, k] = jl.T, jh.T
            out["cv"][0][sl, k], out["cv"][1][sl, k] = at_c[k].val.lo, at_c[k].val.hi
            cp = Interval.point(0.0) if cut_sums is None else cut_sums[k]
            cpl, cph = np.broadcast_arrays(cp.lo, cp.hi, smooth[k].val.lo)[:2]
            out["cutp"][0][sl, k], out["cutp"][1][sl, k] = cpl, cph
            total = smooth[k].val + cp
            out["plain"][0][sl, k], out["plain"][1][sl, k] = total.lo, total.hi
    cv, jac, cutp, plain = (Interval(*out[name]) for name in ("cv", "jac", "cutp", "plain"))
    dz = Interval(lo, hi) - center                         # (m, 4), contains z - c
    lin = (jac * Interval._make(dz.lo[:, None, :], dz.hi[:, None, :])).sum(axis=-1)
    mv = cv + lin + cutp
    grad = mv.intersect(plain)
    lower = np.maximum(Interval(grad.mig()).square().sum(axis=-1).sqrt().lo,
                       _projected_lower(cv, jac, cutp, dz))
    upper = Interval(grad.mag()).square().sum(axis=-1).sqrt().hi
    return MeanValueEnclosure(lower, upper, grad, center, cv, jac, cutp, plain, cut_box)
