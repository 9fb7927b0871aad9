r"""Compiled (numba) point enclosures of the power series of :mod:`dpcore.sampling.spd2_parts`.

The SPD(2) squeeze (:mod:`dpcore.sampling.spd2_squeeze`) spends most of its construction in
the special functions' series, summed at float points in the interval arithmetic of
:mod:`dpcore.sampling.intervals`: each step a numpy call over one small array. These kernels do
the *same floating-point operations in the same order*, element by element, so their endpoints
are bit-identical to the interval versions (``tests/sampling/test_series_numba.py`` compares
them with ``array_equal``); the proofs of :mod:`~dpcore.sampling.spd2_parts` and
:mod:`~dpcore.sampling.interval_ad` therefore cover them unchanged.

The interval rules reproduced (:class:`~dpcore.sampling.intervals.Interval`):

- outward rounding: :math:`x \mapsto x \mp (|x|\,2^{-51} + 2^{-1074})` (``_down``, ``_up``);
- ``[a, b] * x`` with a float ``x``: ``[down(min(ax, bx)), up(max(ax, bx))]``;
- ``[a, b] * [c, d]``: ``[down(min of the four products), up(max of them)]`` (the class's
  sign-aware shortcuts pick the same product: rounding is monotone);
- ``[a, b] + [c, d]``: ``[down(a + c), up(b + d)]``.

The points must be finite (``min``/``max`` here differ from numpy's only at NaN); the callers
pass the series' points, floats in ``[0, threshold]``.

Import fails without numba; the caller falls back to the interval arithmetic.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_REL = 2.0**-51  # intervals.BASIC_WIDEN
_TINY = 2.0**-1074  # intervals._TINY


@njit(cache=True, inline="always")
def _down(x):
    return x - (abs(x) * _REL + _TINY)


@njit(cache=True, inline="always")
def _up(x):
    return x + (abs(x) * _REL + _TINY)


@njit(cache=True)
def series_at(x, coef_lo, coef_hi, first_lo, first_hi, divisor, widen):
    r"""``(lo, hi)`` of :func:`dpcore.sampling.spd2_parts._series_at` at the finite floats
    ``x`` (1-D): Horner's scheme on the interval coefficients ``[coef_lo, coef_hi]``, plus the
    tail ``up(max(first * x^J)) / divisor * widen`` on the upper end. Loops run over the
    points innermost (vectorized by the compiler)."""
    m = x.shape[0]
    k = coef_lo.shape[0]
    lo = np.full(m, coef_lo[k - 1])
    hi = np.full(m, coef_hi[k - 1])
    for j in range(k - 2, -1, -1):
        c_lo = coef_lo[j]
        c_hi = coef_hi[j]
        for i in range(m):
            p1 = lo[i] * x[i]
            p2 = hi[i] * x[i]
            lo[i] = _down(_down(min(p1, p2)) + c_lo)
            hi[i] = _up(_up(max(p1, p2)) + c_hi)
    p_lo = np.ones(m)
    p_hi = np.ones(m)
    for _ in range(k):
        for i in range(m):
            p1 = p_lo[i] * x[i]
            p2 = p_hi[i] * x[i]
            p_lo[i] = _down(min(p1, p2))
            p_hi[i] = _up(max(p1, p2))
    for i in range(m):
        top = _up(max(max(max(first_lo * p_lo[i], first_lo * p_hi[i]), first_hi * p_lo[i]),
                      first_hi * p_hi[i]))
        lo[i] = _down(lo[i] + 0.0)
        hi[i] = _up(hi[i] + top / divisor * widen)
    return lo, hi


@njit(cache=True, inline="always")
def _term(p_lo, p_hi, q, a, b):
    """The next power ``[p_lo, p_hi] * q`` and the term ``[a, b] * power``."""
    p1 = p_lo * q
    p2 = p_hi * q
    c = _down(min(p1, p2))
    d = _up(max(p1, p2))
    return (c, d, _down(min(min(min(a * c, a * d), b * c), b * d)),
            _up(max(max(max(a * c, a * d), b * c), b * d)))


@njit(cache=True)
def alternating_at(q, coef_lo, coef_hi):
    r"""``(lo, hi)`` of :func:`dpcore.sampling.interval_ad.alternating_series` at the finite
    points ``q`` (1-D; the enclosure of :math:`x^2` a point): terms ``c_j q^j`` with the
    powers built by repeated products, partial sums of all but the last term, and the hull
    of the last two partial sums."""
    m = q.shape[0]
    k = coef_lo.shape[0]
    # terms[0] = c_0 * 1.0 (a product by the float 1)
    s_lo = np.full(m, _down(min(coef_lo[0] * 1.0, coef_hi[0] * 1.0)))
    s_hi = np.full(m, _up(max(coef_lo[0] * 1.0, coef_hi[0] * 1.0)))
    if k == 1:
        return s_lo, s_hi
    p_lo = np.ones(m)
    p_hi = np.ones(m)
    for j in range(1, k - 1):
        a = coef_lo[j]
        b = coef_hi[j]
        for i in range(m):
            c, d, t_lo, t_hi = _term(p_lo[i], p_hi[i], q[i], a, b)
            p_lo[i] = c
            p_hi[i] = d
            s_lo[i] = _down(s_lo[i] + t_lo)
            s_hi[i] = _up(s_hi[i] + t_hi)
    a = coef_lo[k - 1]
    b = coef_hi[k - 1]
    lo = np.empty(m)
    hi = np.empty(m)
    for i in range(m):
        _, _, t_lo, t_hi = _term(p_lo[i], p_hi[i], q[i], a, b)
        lo[i] = min(s_lo[i], _down(s_lo[i] + t_lo))
        hi[i] = max(s_hi[i], _up(s_hi[i] + t_hi))
    return lo, hi
