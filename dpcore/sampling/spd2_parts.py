r"""Rigorous value and slope enclosures of the special functions of the SPD(2) regression
gradient (:mod:`dpcore.sampling.spd2_chart`), as ``parts`` for
:meth:`dpcore.sampling.affine.AffineForm.apply`.

Every function here but the clip is monotone with a monotone derivative on its domain, so an
enclosure over an interval is the enclosure at its two endpoints:

* power series with non-negative coefficients (increasing, as their derivatives):
  :math:`\cosh\sqrt x = \sum x^j/(2j)!`, :math:`\sinh\sqrt x/\sqrt x = \sum x^j/(2j+1)!`,
  :math:`\varphi_1(x) = \sum x^j/(2j+2)!`, :math:`\varphi_2(x) = \sum x^j/(2j+3)!`
  (:math:`x \ge 0`); derivatives :math:`\tfrac12\sinh\sqrt x/\sqrt x` and the series
  :math:`\sum (j+1)x^j/(2j+2q+1)!` for :math:`q = 1, 2, 3`;
* :math:`h(q) = \operatorname{arsinh}(\sqrt q)/\sqrt q = \int_0^1(1 + qs^2)^{-1/2}ds`
  (decreasing and convex) and :math:`\operatorname{arsinh}^2\sqrt q = qh(q)^2` (increasing
  with a decreasing derivative), :math:`q \ge 0`, whose ranges over an interval are also at its
  endpoints; at a point below :math:`q = 1/4`, alternating series bracketed by consecutive
  partial sums (:func:`~dpcore.sampling.interval_ad.alternating_series`).

At a float point the series is summed in interval arithmetic below a threshold (the tail is
bounded by a geometric series: each omitted term is at most 1/4 of the previous one, so the
tail is at most 4/3 of the first omitted term), and the closed form in interval arithmetic
(:meth:`~dpcore.sampling.intervals.Interval.exp`, ``log``) above it.

The clip :math:`f(s) = \min(1, \tau/\sqrt s)` of the squared residual norm is continuous,
decreasing and piecewise :math:`C^1`, with :math:`f' = 0` below :math:`\tau^2` and
:math:`-\tau s^{-3/2}/2` (increasing) above; the hull of its slopes over an interval is what
:meth:`~dpcore.sampling.affine.AffineForm.apply` needs at a kink.
"""

from __future__ import annotations

import math

import numpy as np

from .interval_ad import alternating_series
from .intervals import Interval

try:
    from ._series_numba import alternating_at as _alternating_kernel
    from ._series_numba import series_at as _series_kernel
except ImportError:  # numba missing: the interval arithmetic
    _alternating_kernel = _series_kernel = None

__all__ = ["asinh2_parts", "asinhc_parts", "clip_parts", "cosh_sqrt_parts", "phi1_parts",
           "phi2_parts", "sinhc_sqrt_parts"]

#: Series terms at a point (below the thresholds the ratio of consecutive terms is <= 1/4).
_TERMS = 14
_X_SERIES = 1.0
_R_SERIES = 0.25


def _coef(num, den):
    return Interval.point(float(num)) / float(den)


def _series_at(x, series, ratio):
    """Enclosure of ``sum c_j x^j`` at floats ``x >= 0`` where every omitted term is at most
    ``ratio`` times the previous one (tail <= first omitted / (1 - ratio)): the compiled
    kernel where numba is installed (the same floats, :mod:`dpcore.sampling._series_numba`),
    else :func:`_series_at_intervals`."""
    if _series_kernel is None:
        return _series_at_intervals(x, series, ratio)
    coefs, first_omitted = series
    return _compiled(_series_kernel, x, *_endpoints(coefs), float(first_omitted.lo),
                     float(first_omitted.hi), 1.0 - ratio, 1 + 1e-15)


def _endpoints(coefs):
    """The interval coefficients as two float arrays (cached by the list's identity)."""
    key = id(coefs)
    if key not in _ENDPOINTS:
        _ENDPOINTS[key] = (coefs, np.array([float(c.lo) for c in coefs]),
                           np.array([float(c.hi) for c in coefs]))
    return _ENDPOINTS[key][1:]


_ENDPOINTS = {}


def _compiled(kernel, x, *args):
    """``kernel(x, *args)`` as an Interval of ``x``'s shape. At ``x = 0`` every power is a
    subnormal (the outward steps of 0), slow to compute, so the zeros (often a third of the
    points: intervals clipped at 0) take the kernel's result at one 0, the same floats."""
    x = np.asarray(x, dtype=float)
    flat = x.ravel()
    zero = flat == 0.0
    lo, hi = np.empty(flat.shape), np.empty(flat.shape)
    if zero.any():
        z_lo, z_hi = kernel(np.zeros(1), *args)
        lo[zero], hi[zero] = z_lo[0], z_hi[0]
    lo[~zero], hi[~zero] = kernel(flat[~zero], *args)
    return Interval._make(lo.reshape(x.shape), hi.reshape(x.shape))


def _series_at_intervals(x, series, ratio):
    """:func:`_series_at` in the interval arithmetic of :mod:`dpcore.sampling.intervals`."""
    coefs, first_omitted = series
    xi = Interval.point(x)
    acc = coefs[-1]
    for c in coefs[-2::-1]:
        acc = acc * xi + c
    power = Interval.point(np.ones_like(x))
    for _ in range(len(coefs)):
        power = power * xi
    tail = (first_omitted * power).hi / (1.0 - ratio) * (1 + 1e-15)
    return acc + Interval._make(np.zeros_like(x), tail)


def _make_series(term):
    """Coefficients ``term(j)`` (numerator, denominator) for ``j < _TERMS``, and the first
    omitted one."""
    return [_coef(*term(j)) for j in range(_TERMS)], _coef(*term(_TERMS))


_CH = _make_series(lambda j: (1, math.factorial(2 * j)))
_SH = _make_series(lambda j: (1, math.factorial(2 * j + 1)))
_PHI1 = _make_series(lambda j: (1, math.factorial(2 * j + 2)))
_PHI2 = _make_series(lambda j: (1, math.factorial(2 * j + 3)))
_DSH = _make_series(lambda j: (j + 1, math.factorial(2 * j + 3)))
_DPHI1 = _make_series(lambda j: (j + 1, math.factorial(2 * j + 4)))
_DPHI2 = _make_series(lambda j: (j + 1, math.factorial(2 * j + 5)))


def _split(x, small, series, closed):
    """Enclosure at floats ``x``: ``series(x[small])``, ``closed(Interval.point(x[~small]))``."""
    x = np.asarray(x, dtype=float)
    lo, hi = np.empty(x.shape), np.empty(x.shape)
    if np.any(small):
        s = series(x[small])
        lo[small], hi[small] = s.lo, s.hi
    if np.any(~small):
        c = closed(Interval.point(x[~small]))
        lo[~small], hi[~small] = c.lo, c.hi
    return Interval._make(lo, hi)


def _hyperbolic(xi):
    """(cosh s, sinh s / s) at intervals ``x = s^2 >= 1`` (points)."""
    s = xi.sqrt()
    ep, em = s.exp(), (-s).exp()
    return (ep + em) * 0.5, (ep - em) * 0.5 / s


def _ch(x):
    return _split(x, x <= _X_SERIES, lambda v: _series_at(v, _CH, 0.25),
                  lambda xi: _hyperbolic(xi)[0])


def _sh(x):
    return _split(x, x <= _X_SERIES, lambda v: _series_at(v, _SH, 0.25),
                  lambda xi: _hyperbolic(xi)[1])


def _phi1(x):
    return _split(x, x <= _X_SERIES, lambda v: _series_at(v, _PHI1, 0.25),
                  lambda xi: (_hyperbolic(xi)[0] - 1.0) / xi)


def _phi2(x):
    return _split(x, x <= _X_SERIES, lambda v: _series_at(v, _PHI2, 0.25),
                  lambda xi: (_hyperbolic(xi)[1] - 1.0) / xi)


def _dsh(x):
    def closed(xi):
        ch, sh = _hyperbolic(xi)
        return (ch - sh) / (xi * 2.0)
    return _split(x, x <= _X_SERIES, lambda v: _series_at(v, _DSH, 0.25), closed)


def _dphi1(x):
    def closed(xi):
        ch, sh = _hyperbolic(xi)
        return (sh * 0.5 - (ch - 1.0) / xi) / xi
    return _split(x, x <= _X_SERIES, lambda v: _series_at(v, _DPHI1, 0.25), closed)


def _dphi2(x):
    def closed(xi):
        ch, sh = _hyperbolic(xi)
        return ((ch - sh) / (xi * 2.0) - (sh - 1.0) / xi) / xi
    return _split(x, x <= _X_SERIES, lambda v: _series_at(v, _DPHI2, 0.25), closed)


def _domain(x, lo_bound=0.0):
    """(non-finite mask, lower end, upper end) of intervals clipped to ``[lo_bound, inf)``."""
    bad = ~(np.isfinite(x.lo) & np.isfinite(x.hi))
    lo = np.maximum(np.where(bad, lo_bound, x.lo), lo_bound)
    return bad, lo, np.maximum(np.where(bad, lo_bound, x.hi), lo)


def _whole_where(bad, iv):
    return Interval._make(np.where(bad, -np.inf, iv.lo), np.where(bad, np.inf, iv.hi))


def _monotone(f, df, f_increasing, df_increasing):
    r"""``parts`` of a function of :math:`x \ge 0` that is monotone with a monotone derivative
    (value and slope ranges at the endpoints); non-finite intervals give the whole line."""
    def parts(x, slope=True):
        bad, lo, hi = _domain(x)
        a, b = (lo, hi) if f_increasing else (hi, lo)
        v = _whole_where(bad, Interval._make(f(a).lo, f(b).hi))
        if not slope:
            return v, None
        a, b = (lo, hi) if df_increasing else (hi, lo)
        return v, _whole_where(bad, Interval._make(df(a).lo, df(b).hi))
    return parts


def _increasing(f, df):
    return _monotone(f, df, True, True)


cosh_sqrt_parts = _increasing(_ch, lambda x: _sh(x) * 0.5)
sinhc_sqrt_parts = _increasing(_sh, _dsh)
phi1_parts = _increasing(_phi1, _dphi1)
phi2_parts = _increasing(_phi2, _dphi2)


#: :math:`\operatorname{arsinh}(\sqrt q)/\sqrt q = \sum_j (-1)^j c_jq^j`,
#: :math:`c_j = \binom{2j}{j}/(4^j(2j + 1))` (magnitudes decrease for :math:`q \le 1`), and its
#: derivative's :math:`-\sum_i (-1)^i (i + 1)c_{i+1}q^i` (ratios at most 0.9).
_ASINHC = [Interval.point(float((-1) ** j * math.comb(2 * j, j))) / float(4**j * (2 * j + 1))
           for j in range(24)]
_DASINHC = [Interval.point(float((-1) ** (i + 1) * (i + 1) * math.comb(2 * i + 2, i + 1)))
            / float(4 ** (i + 1) * (2 * i + 3)) for i in range(24)]


def _alternating_at(q, coefs):
    """:func:`~dpcore.sampling.interval_ad.alternating_series` at the floats ``q``: the
    compiled kernel where numba is installed (the same floats), else the intervals."""
    if _alternating_kernel is None:
        return alternating_series(Interval.point(q), coefs)
    return _compiled(_alternating_kernel, q, *_endpoints(coefs))


def _asinhc(q):
    def closed(qi):
        x = qi.sqrt()
        return (x + (qi + 1.0).sqrt()).log() / x
    return _split(q, q <= _R_SERIES, lambda v: _alternating_at(v, _ASINHC), closed)


def _dasinhc(q):
    def closed(qi):
        return (1.0 / (qi + 1.0).sqrt() - _asinhc(qi.lo)) / (qi * 2.0)
    return _split(q, q <= _R_SERIES, lambda v: _alternating_at(v, _DASINHC), closed)


def _asinh2(x):
    return Interval.point(x) * _asinhc(x).square()


def _dasinh2(x):
    return _asinhc(x) / (Interval.point(x) + 1.0).sqrt()


#: ``parts`` of :math:`h(q) = \operatorname{arsinh}(\sqrt q)/\sqrt q`: decreasing and
#: convex (its derivatives under the integral have signs -, +).
asinhc_parts = _monotone(_asinhc, _dasinhc, False, True)
#: ``parts`` of :math:`\operatorname{arsinh}^2\sqrt q = qh(q)^2`: increasing, with the
#: decreasing derivative :math:`h(q)/\sqrt{1 + q}` (a product of two decreasing positive
#: functions).
asinh2_parts = _monotone(_asinh2, _dasinh2, True, False)


def clip_parts(tau):
    r"""``parts`` of :math:`f(s) = \min(1, \tau/\sqrt s)`, :math:`s \ge 0` (module docstring)."""
    tau = float(tau)
    t2 = Interval.point(tau) * tau

    def f(s):
        si = Interval.point(np.maximum(s, t2.lo))
        return Interval._make(np.where(s <= t2.lo, 1.0, np.minimum((tau / si.sqrt()).lo, 1.0)),
                              np.where(s <= t2.hi, 1.0, np.minimum((tau / si.sqrt()).hi, 1.0)))

    def df(s):
        si = Interval.point(np.maximum(s, t2.lo))
        return (-0.5 * tau) / (si * si.sqrt())

    def parts(x, slope=True):
        bad = ~(np.isfinite(x.lo) & np.isfinite(x.hi))
        lo = np.maximum(np.where(bad, 0.0, x.lo), 0.0)
        hi = np.maximum(np.where(bad, np.inf, x.hi), lo)
        v = Interval._make(f(hi).lo, f(lo).hi)
        if not slope:
            return v, None
        above = hi > t2.lo
        d_lo = np.where(above, df(np.maximum(lo, t2.lo)).lo, 0.0)
        d_hi = np.where(lo > t2.hi, df(hi).hi, 0.0)
        return v, Interval._make(np.minimum(d_lo, 0.0), np.minimum(d_hi, 0.0))
    return parts


# ---------------------------------------------------------------------- second derivatives
# For the second-order Taylor models of :mod:`dpcore.sampling.taylor2`: ``parts2(I, order)``
# returns (F(I), F'(I), F''(I) or None). The hyperbolic series' second derivatives are again
# series with non-negative coefficients (increasing); they are summed below x = 4 (each
# omitted term is then below 1/200 of the previous one) and taken from closed forms above.
_X2_SERIES = 4.0
_D2SH = _make_series(lambda j: ((j + 1) * (j + 2), math.factorial(2 * j + 5)))
_D2PHI1 = _make_series(lambda j: ((j + 1) * (j + 2), math.factorial(2 * j + 6)))
_D2PHI2 = _make_series(lambda j: ((j + 1) * (j + 2), math.factorial(2 * j + 7)))
#: :math:`h''(q) = \sum_i (-1)^i (i + 1)(i + 2)c_{i+2}q^i` (magnitudes decrease for
#: :math:`q \le 1/4`: consecutive ratios at most 1.79 q).
_D2ASINHC = [Interval.point(float((-1) ** i * (i + 1) * (i + 2) * math.comb(2 * i + 4, i + 2)))
             / float(4 ** (i + 2) * (2 * i + 5)) for i in range(24)]


def _d2sh(x):
    def closed(xi):
        return (_sh(xi.lo) * 0.5 - _dsh(xi.lo) * 3.0) / (xi * 2.0)
    return _split(x, x <= _X2_SERIES, lambda v: _series_at(v, _D2SH, 0.25), closed)


def _d2phi1(x):
    def closed(xi):
        return (_dsh(xi.lo) * 0.5 - _dphi1(xi.lo) * 2.0) / xi
    return _split(x, x <= _X2_SERIES, lambda v: _series_at(v, _D2PHI1, 0.25), closed)


def _d2phi2(x):
    def closed(xi):
        return (_d2sh(xi.lo) - _dphi2(xi.lo) * 2.0) / xi
    return _split(x, x <= _X2_SERIES, lambda v: _series_at(v, _D2PHI2, 0.25), closed)


def _d2asinhc(q):
    def closed(qi):
        inv = 1.0 / (qi + 1.0).sqrt()
        return -(inv * inv * inv * 0.5 + _dasinhc(qi.lo) * 3.0) / (qi * 2.0)
    return _split(q, q <= _R_SERIES, lambda v: _alternating_at(v, _D2ASINHC), closed)


def _increasing_curvature(d2):
    def curv(x):
        bad, lo, hi = _domain(x)
        return _whole_where(bad, Interval._make(d2(lo).lo, d2(hi).hi))
    return curv


def _asinhc_curvature(x):
    """:math:`h''` is decreasing (:math:`h''' = -\\tfrac{15}{8}\\int s^6(1 + qs^2)^{-7/2}`)."""
    bad, lo, hi = _domain(x)
    return _whole_where(bad, Interval._make(_d2asinhc(hi).lo, _d2asinhc(lo).hi))


def _asinh2_curvature(x):
    r""":math:`(qh^2)'' = h'/\sqrt{1 + q} - h/(2(1 + q)^{3/2})` in interval arithmetic over
    the whole interval, with the monotone ranges of :math:`h` and :math:`h'`."""
    bad, lo, hi = _domain(x)
    h = Interval._make(_asinhc(hi).lo, _asinhc(lo).hi)
    dh = Interval._make(_dasinhc(lo).lo, _dasinhc(hi).hi)
    root = (Interval._make(lo, hi) + 1.0).sqrt()
    return _whole_where(bad, dh / root - h / (root * root * root * 2.0))


def clip_curvature(tau):
    r""":math:`f''` of the clip: 0 below :math:`\tau^2`, :math:`\tfrac34\tau s^{-5/2}`
    (decreasing) above, unbounded (a kink) on intervals that reach both sides."""
    tau = float(tau)
    t2 = Interval.point(tau) * tau

    def curv(x):
        bad, lo, hi = _domain(x)
        inside = hi < t2.lo
        outside = lo > t2.hi
        li = Interval.point(np.where(outside, lo, 1.0))
        hi_i = Interval.point(np.where(outside, hi, 1.0))
        top = (0.75 * tau) / (li.square() * li.sqrt())
        low = (0.75 * tau) / (hi_i.square() * hi_i.sqrt())
        out_lo = np.where(inside, 0.0, np.where(outside, low.lo, -np.inf))
        out_hi = np.where(inside, 0.0, np.where(outside, top.hi, np.inf))
        return _whole_where(bad, Interval._make(out_lo, out_hi))
    return curv


def second_order(parts, curvature):
    """``parts2(I, order)`` of :class:`~dpcore.sampling.taylor2.TaylorForm2.apply` from the
    first-order ``parts`` and an enclosure ``curvature(I)`` of :math:`F''` over ``I``."""
    def parts2(x, order):
        value, slope = parts(x, slope=True)
        return value, slope, (curvature(x) if order >= 2 else None)
    return parts2


cosh_sqrt_parts2 = second_order(cosh_sqrt_parts, _increasing_curvature(lambda x: _dsh(x) * 0.5))
sinhc_sqrt_parts2 = second_order(sinhc_sqrt_parts, _increasing_curvature(_d2sh))
phi1_parts2 = second_order(phi1_parts, _increasing_curvature(_d2phi1))
phi2_parts2 = second_order(phi2_parts, _increasing_curvature(_d2phi2))
asinhc_parts2 = second_order(asinhc_parts, _asinhc_curvature)
asinh2_parts2 = second_order(asinh2_parts, _asinh2_curvature)


def clip_parts2(tau):
    """``parts2`` of the clip (:func:`clip_parts`, :func:`clip_curvature`)."""
    return second_order(clip_parts(tau), clip_curvature(tau))
