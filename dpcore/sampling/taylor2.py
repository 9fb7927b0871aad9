r"""Second-order Taylor models with rigorous rounding (quadratic forms on a box).

A :class:`TaylorForm2` over a box :math:`\{c + h\varepsilon : \varepsilon \in [-1, 1]^k\}`
(or any parallelepiped given by affine coordinate forms) stands for the set of functions

.. math:: x(\varepsilon) = x_0 + a^\top\varepsilon + \varepsilon^\top B\varepsilon
          + \xi(\varepsilon), \qquad |\xi(\varepsilon)| \le e,

with ``B`` symmetric. It extends the affine forms of :mod:`dpcore.sampling.affine` by one
order: products of linear parts are kept *exactly* as quadratic coefficients, so second-order
terms of a formula cancel (with their signs) within a term and across the terms of a sum, and
only third-order terms (and first-order terms of a kink) go to the error. Where an affine
form pays :math:`r_x r_y` (product of total radii) for every product -- the dominant,
dependency-inflated error of the regression-gradient enclosures on large boxes (measured on
:math:`S^2`: 10-20 times the true per-term second-order remainder, with a benchmark removed
with the :math:`S^2` enclosures in favour of the native sampler, session 35) -- a Taylor model
pays :math:`L_x q_y + L_y q_x + q_x q_y` (:math:`L = \sum_j|a_j|`,
:math:`q = \sum_{jl}|B_{jl}|`, a bound of :math:`|\varepsilon^\top B\varepsilon|`).

Rules (all pointwise in :math:`\varepsilon`; :math:`l_x = a^\top\varepsilon`,
:math:`Q_x = \varepsilon^\top B_x\varepsilon`, so :math:`|l_x| \le L_x`, :math:`|Q_x| \le q_x`):

* sums and scalings are linear: exact up to rounding;
* :math:`xy = x_0y_0 + (x_0 a_y + y_0 a_x)^\top\varepsilon + \varepsilon^\top(x_0B_y + y_0B_x
  + \mathrm{sym}(a_x a_y^\top))\varepsilon + \zeta` with
  :math:`\zeta = l_xQ_y + l_yQ_x + Q_xQ_y + \xi_x(y_0 + l_y + Q_y + \xi_y) + \xi_y(x_0 + l_x
  + Q_x)`, so :math:`|\zeta| \le L_xq_y + L_yq_x + q_xq_y + e_x(|y_0| + L_y + q_y + e_y)
  + e_y(|x_0| + L_x + q_x)` (:math:`(a_x^\top\varepsilon)(a_y^\top\varepsilon) =
  \varepsilon^\top a_x a_y^\top\varepsilon = \varepsilon^\top\mathrm{sym}(a_xa_y^\top)
  \varepsilon` exactly);
* a function :math:`F` (:meth:`TaylorForm2.apply`) over an interval :math:`I` that contains
  every value of :math:`x` and the expansion point :math:`x^\circ`, with
  :math:`\Delta = x - x^\circ`, :math:`|\Delta| \le D`:

  - where :math:`F \in C^2(I)` and :math:`F''(I) \subset [\beta - d_2, \beta + d_2]`:
    Taylor's theorem with the Lagrange remainder gives
    :math:`F(x) = F(x^\circ) + F'(x^\circ)\Delta + \tfrac12\beta\Delta^2 + \rho`,
    :math:`|\rho| \le \tfrac12 d_2 D^2` (plus the radii of the enclosures of
    :math:`F(x^\circ)`, :math:`F'(x^\circ)` times 1 and :math:`D`);
  - where :math:`F` is only continuous and piecewise :math:`C^1` (a kink in :math:`I`), with
    :math:`F'(I) \subset [\alpha - d_1, \alpha + d_1]`:
    :math:`F(x) - F(x^\circ) = \int F' \in \Delta\,(\alpha \pm d_1)`, so
    :math:`F(x) = F(x^\circ) + \alpha\Delta + \rho`, :math:`|\rho| \le d_1 D`;
  - the interval value :math:`\mathrm{mid}\,F(I) \pm \mathrm{rad}\,F(I)` (a constant form)
    where its radius is below the error of the expansions.

  All three are valid; each element takes the one with the smallest error radius.

Rounding: as in :mod:`dpcore.sampling.affine`: every coefficient is a float computed by a few
correctly rounded operations; the error radius absorbs :math:`8u` times a bound on the
magnitudes that entered (for a coefficient of :math:`B` its effect on the value is at most
its own error since :math:`|\varepsilon_j\varepsilon_l| \le 1`, and the sum over all
coefficients of those magnitudes is at most the product of the operands' magnitudes
:math:`|x_0| + L_x + q_x + e_x`), plus :math:`10^{-300}` against underflow, and is itself
rounded up by a factor :math:`1 + 16u` (a sum of at most 16 non-negative terms: numpy's
summation error :math:`\gamma_{15} < 16u` relative). The only assumption is that of
:mod:`dpcore.sampling.intervals` on libm accuracy, through the enclosures passed to
:meth:`~TaylorForm2.apply`.

Entire special functions (:func:`series_curvature`): for a power series
:math:`F(s) = \sum_k c_k s^k` whose coefficient ratios satisfy
:math:`|c_{k+1}/c_k| \le 4/((2k+1)(2k+2))` (``cos``, ``sinc``, ``K`` and ``R`` of
:math:`\sqrt s`, below), :math:`F''(I)` for :math:`I = [a, b] \subset [0, \infty)` is enclosed
by the sum of the exact ranges :math:`c_k k(k-1)[a^{k-2}, b^{k-2}]` of the first terms (each
monotone in :math:`s \ge 0`) and a geometric bound of the tail.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .intervals import Interval, _down, _up

__all__ = ["TaylorForm2", "parallelepiped_variables", "series_curvature", "COS_SQRT",
           "SINC_SQRT", "K_SQRT", "R_SQRT"]

_U = 2.0**-53
_TINY = 1e-300
_UP = 1.0 + 16 * _U


def _finish(c, a, b, e_raw, scale):
    return TaylorForm2(c, a, b, (e_raw + 8 * _U * scale + _TINY) * _UP)


def _sym_outer(x, y):
    """:math:`\\tfrac12(xy^\\top + yx^\\top)` of coefficient arrays ``(k, ...)``."""
    p = x[:, None] * y[None, :]
    return 0.5 * (p + np.swapaxes(p, 0, 1))


class TaylorForm2:
    """Centre ``c`` (shape S), linear coefficients ``a`` (``(k, *S')``), symmetric quadratic
    coefficients ``B`` (``(k, k, *S'')``), error ``e >= 0`` (module docstring)."""

    __slots__ = ("c", "a", "B", "e")
    __array_ufunc__ = None

    def __init__(self, c, a, B, e):
        self.c, self.a, self.B, self.e = c, a, B, e

    @classmethod
    def constant(cls, x, k):
        """A constant: a float array, or an :class:`Interval` (centre its midpoint, error its
        radius)."""
        if isinstance(x, Interval):
            c = x.mid()
            e = np.maximum(np.maximum(_up(x.hi - c), _up(c - x.lo)), 0.0)
        else:
            c = np.asarray(x, dtype=float)
            e = np.zeros(c.shape)
        ones = (1,) * np.ndim(c)
        return cls(c, np.zeros((k,) + ones), np.zeros((k, k) + ones), e)

    @property
    def k(self):
        return self.a.shape[0]

    @property
    def shape(self):
        """The value shape."""
        return np.broadcast_shapes(np.shape(self.c), np.shape(self.e), np.shape(self.a)[1:],
                                   np.shape(self.B)[2:])

    def linear_radius(self):
        r""":math:`L = \sum_j |a_j|` (rounded up)."""
        return np.sum(np.abs(self.a), axis=0) * _UP

    def quad_radius(self):
        r""":math:`q = \sum_{jl} |B_{jl}| \ge |\varepsilon^\top B\varepsilon|` (rounded up)."""
        return np.sum(np.abs(self.B), axis=(0, 1)) * _UP

    def radius(self):
        """Every value lies within this of the centre."""
        return (self.linear_radius() + self.quad_radius() + self.e) * _UP

    def _mag(self):
        return np.abs(self.c) + self.linear_radius() + self.quad_radius()

    def range(self):
        r"""Interval enclosure of the values: the quadratic's diagonal terms
        :math:`B_{jj}\varepsilon_j^2` lie in :math:`[\min(B_{jj}, 0), \max(B_{jj}, 0)]`, the
        others in :math:`\pm|B_{jl}|`."""
        d = np.diagonal(self.B, axis1=0, axis2=1)             # (*S'', k)
        off = np.maximum(self.quad_radius() - np.sum(np.abs(d), axis=-1), 0.0) * _UP
        lin = self.linear_radius()
        down = (lin + off + np.sum(np.maximum(-d, 0.0), axis=-1) * _UP + self.e) * _UP
        up = (lin + off + np.sum(np.maximum(d, 0.0), axis=-1) * _UP + self.e) * _UP
        return Interval._make(_down(self.c - down), _up(self.c + up))

    def __getitem__(self, index):
        index = index if isinstance(index, tuple) else (index,)
        a = self.a[(slice(None),) + index] if np.ndim(self.a) > 1 else self.a
        b = self.B[(slice(None), slice(None)) + index] if np.ndim(self.B) > 2 else self.B
        return TaylorForm2(self.c[index], a, b, self.e[index])

    # ------------------------------------------------------------------ linear operations
    def __neg__(self):
        return TaylorForm2(-self.c, -self.a, -self.B, self.e)

    def __add__(self, other):
        if not isinstance(other, TaylorForm2):
            other = TaylorForm2.constant(other, self.k)
        return _finish(self.c + other.c, self.a + other.a, self.B + other.B, self.e + other.e,
                       self._mag() + other._mag())

    __radd__ = __add__

    def __sub__(self, other):
        if not isinstance(other, TaylorForm2):
            other = TaylorForm2.constant(other, self.k)
        return _finish(self.c - other.c, self.a - other.a, self.B - other.B, self.e + other.e,
                       self._mag() + other._mag())

    def __rsub__(self, other):
        return (-self).__add__(other)

    def scale(self, s):
        """Times a float array ``s`` (exact constant)."""
        s = np.asarray(s, dtype=float)
        return _finish(self.c * s, self.a * s, self.B * s, self.e * np.abs(s),
                       self._mag() * np.abs(s))

    def __mul__(self, other):
        if isinstance(other, Interval):
            mid = other.mid()
            rad = np.maximum(_up(other.hi - mid), _up(mid - other.lo))
            out = self.scale(mid)
            mag = np.abs(self.c) + self.radius()
            return TaylorForm2(out.c, out.a, out.B, (out.e + rad * mag) * _UP)
        if not isinstance(other, TaylorForm2):
            return self.scale(other)
        x0, y0 = self.c, other.c
        lx, ly = self.linear_radius(), other.linear_radius()
        qx, qy = self.quad_radius(), other.quad_radius()
        ex, ey = self.e, other.e
        a = x0 * other.a + y0 * self.a
        b = x0 * other.B + y0 * self.B + _sym_outer(self.a, other.a)
        e = (lx * qy + ly * qx + qx * qy + ex * (np.abs(y0) + ly + qy + ey)
             + ey * (np.abs(x0) + lx + qx))
        return _finish(x0 * y0, a, b, e, (np.abs(x0) + lx + qx + ex) * (np.abs(y0) + ly + qy + ey))

    __rmul__ = __mul__

    def square(self):
        r""":math:`x^2` (the product rule with :math:`y = x`)."""
        x0 = self.c
        lx, qx, ex = self.linear_radius(), self.quad_radius(), self.e
        mag = np.abs(x0) + lx + qx
        p = self.a[:, None] * self.a[None, :]
        e = 2.0 * lx * qx + qx * qx + ex * (2.0 * mag + ex)
        return _finish(x0 * x0, (2.0 * x0) * self.a, (2.0 * x0) * self.B + p, e,
                       (mag + ex) ** 2)

    def masked(self, keep):
        """Exactly 0 where ``keep`` is False."""
        return TaylorForm2(np.where(keep, self.c, 0.0), np.where(keep, self.a, 0.0),
                           np.where(keep, self.B, 0.0), np.where(keep, self.e, 0.0))

    def widened(self, extra):
        """The same form with ``extra >= 0`` added to the error radius."""
        return TaylorForm2(self.c, self.a, self.B, (self.e + extra) * _UP)

    # ------------------------------------------------------------------ functions
    def apply(self, parts, lo=-np.inf, hi=np.inf):
        r""":math:`F(x)` where ``parts(I, order)`` returns Interval enclosures
        ``(F(I), F'(I), F''(I))`` over an Interval ``I`` (``F''`` None for ``order < 2``;
        elements where :math:`F` is not :math:`C^2` on ``I`` get an infinite ``F''``), and
        the exact values of ``x`` lie in ``[lo, hi]`` (module docstring)."""
        rng = self.range()
        i_lo = np.minimum(np.maximum(rng.lo, lo), hi)
        i_hi = np.maximum(np.minimum(rng.hi, hi), i_lo)
        x0 = np.clip(self.c, i_lo, i_hi)
        value, slope, curv = parts(Interval._make(i_lo, i_hi), 2)
        f0, s0, _ = parts(Interval.point(x0), 1)
        delta = self - x0
        dmax = (np.abs(delta.c) + delta.radius()) * _UP
        f0c = f0.mid()
        f0r = np.maximum(_up(f0.hi - f0c), _up(f0c - f0.lo))
        # first order (valid for continuous, piecewise C^1 F)
        alpha = slope.mid()
        d1 = np.maximum(_up(slope.hi - alpha), _up(alpha - slope.lo))
        first = delta.scale(alpha) + f0c
        first = first.widened(f0r + d1 * dmax)
        # second order (where F is C^2 on I: finite curvature enclosure)
        ok2 = np.isfinite(curv.lo) & np.isfinite(curv.hi)
        c_lo, c_hi = np.where(ok2, curv.lo, 0.0), np.where(ok2, curv.hi, 0.0)
        beta = 0.5 * c_lo + 0.5 * c_hi
        d2 = np.where(ok2, np.maximum(_up(c_hi - beta), _up(beta - c_lo)), np.inf)
        s0c = s0.mid()
        s0r = np.maximum(_up(s0.hi - s0c), _up(s0c - s0.lo))
        second = delta.scale(s0c) + delta.square().scale(0.5 * beta) + f0c
        second = second.widened(np.where(ok2, f0r + s0r * dmax + 0.5 * d2 * dmax * dmax, 0.0))
        use2 = ok2 & (second.e < first.e)
        out = _select(use2, second, first)
        vc = value.mid()
        vr = np.maximum(_up(value.hi - vc), _up(vc - value.lo))
        narrower = vr < out.e
        if not np.any(narrower):
            return out
        ones = (1,) * np.ndim(vc)
        const = TaylorForm2(vc, np.zeros((out.k,) + ones), np.zeros((out.k, out.k) + ones), vr)
        return _select(narrower, const, out)

    # ------------------------------------------------------------------ reductions
    def sum(self, axis=-1):
        """Sum along a (negative) value axis."""
        if axis >= 0:
            raise ValueError("Use a negative axis (the coefficient axes come first).")
        shape = self.shape
        n = shape[axis]
        mag = np.broadcast_to(self._mag(), shape)
        scale = (2 * n) * np.sum(mag, axis=axis) / 8.0
        a = np.sum(np.broadcast_to(self.a, (self.k,) + shape), axis=axis)
        b = np.sum(np.broadcast_to(self.B, (self.k, self.k) + shape), axis=axis)
        e = np.sum(np.broadcast_to(self.e, shape), axis=axis) * (1 + 2 * n * _U)
        return _finish(np.sum(np.broadcast_to(self.c, shape), axis=axis), a, b, e, scale)

    def mean(self, axis=-1):
        n = self.shape[axis]
        inv = 1.0 / n
        # fl(1/n) is within u of 1/n: [fl(1/n)(1 - 4u), fl(1/n)(1 + 4u)] contains it.
        return self.sum(axis=axis) * Interval._make(np.asarray(inv * (1 - 4 * _U)),
                                                    np.asarray(inv * (1 + 4 * _U)))


def _select(mask, x, y):
    """Elementwise choice between two forms (each valid; so is the choice)."""
    shape = np.broadcast_shapes(x.shape, y.shape, np.shape(mask))
    k = x.k
    return TaylorForm2(np.where(mask, x.c, y.c),
                       np.where(mask, np.broadcast_to(x.a, (k,) + shape),
                                np.broadcast_to(y.a, (k,) + shape)),
                       np.where(mask, np.broadcast_to(x.B, (k, k) + shape),
                                np.broadcast_to(y.B, (k, k) + shape)),
                       np.where(mask, x.e, y.e))


def parallelepiped_variables(center, basis, slack):
    r"""Coordinates :math:`z = c + A\varepsilon + \zeta` (:math:`|\zeta_j| \le e_j`) as forms
    of value shape ``(m, 1)``: ``center`` (m, d), ``basis`` (m, d, k) (row: coordinate,
    column: symbol; floats taken exactly), ``slack`` (m, d)."""
    center = np.asarray(center, dtype=float)
    basis = np.asarray(basis, dtype=float)
    slack = np.asarray(slack, dtype=float)
    m, d, k = basis.shape
    zero_b = np.zeros((k, k, 1, 1))
    return [TaylorForm2(center[:, j, None].copy(),
                        np.ascontiguousarray(basis[:, j, :].T)[:, :, None], zero_b,
                        slack[:, j, None].copy()) for j in range(d)]


# ---------------------------------------------------------------------- entire functions
class _Series:
    r"""Power series :math:`\sum_k c_k s^k` with exact rational coefficients and
    :math:`|c_{k+1}/c_k| \le 4/((2k+1)(2k+2))` (checked)."""

    def __init__(self, coef):
        self.coef = coef                                   # k -> Fraction
        for k in range(60):
            ck, c1 = abs(coef(k)), abs(coef(k + 1))
            if ck and c1 > Fraction(4, (2 * k + 1) * (2 * k + 2)) * ck:
                raise ValueError("coefficient ratio bound fails")

    def curvature_coef(self, k):
        """Interval enclosure of :math:`c_k k(k-1)` (floats)."""
        v = self.coef(k) * k * (k - 1)
        f = float(v)
        return _down(f), _up(f)


COS_SQRT = _Series(lambda k: Fraction((-1) ** k, math.factorial(2 * k)))
SINC_SQRT = _Series(lambda k: Fraction((-1) ** k, math.factorial(2 * k + 1)))
#: K(sqrt s) = (1 - cos sqrt s)/s
K_SQRT = _Series(lambda k: Fraction((-1) ** k, math.factorial(2 * k + 2)))
#: R(sqrt q) = (1 - sinc 2 sqrt q)/q
R_SQRT = _Series(lambda k: Fraction((-1) ** k * 4 ** (k + 1), math.factorial(2 * k + 3)))


def _terms_needed(b_max):
    r"""Smallest ``K >= 4`` with tail ratio :math:`\rho_K = 4(K+1)b/((K-1)(2K+1)(2K+2))
    \le 1/2` and first omitted term factor below 1e-18 (then the tail beyond ``K`` is at
    most twice the first omitted term)."""
    for kk in range(4, 200):
        rho = 4.0 * (kk + 1) * b_max / ((kk - 1) * (2 * kk + 1) * (2 * kk + 2))
        if rho <= 0.5 and b_max ** (kk - 1) / math.factorial(2 * kk) < 1e-18:
            return kk
    raise ValueError("Argument too large for the series enclosure.")


def series_curvature(series, s):
    r"""Enclosure of :math:`F''(s) = \sum_{k\ge2} c_k k(k-1)s^{k-2}` over an Interval
    ``s >= 0`` (module docstring).

    For :math:`k > K`, :math:`|c_{k+1}(k+1)k\,b^{k-1}| \le \rho_K|c_k k(k-1)b^{k-2}|` with
    :math:`\rho_K \le 1/2` (the coefficient ratio bound times :math:`(k+1)/(k-1)`, both
    decreasing in :math:`k`), so the tail is at most twice its first term
    :math:`|c_{K+1}|(K+1)K\,b^{K-1}`.
    """
    lo = np.maximum(np.asarray(s.lo, dtype=float), 0.0)
    hi = np.maximum(np.asarray(s.hi, dtype=float), lo)
    b_max = float(np.max(hi)) if hi.size else 0.0
    kk = _terms_needed(max(b_max, 1e-3))
    x = Interval._make(lo, hi)
    power = Interval.point(np.ones(np.shape(lo)))
    total = None
    for k in range(2, kk + 1):
        c_lo, c_hi = series.curvature_coef(k)
        term = power * Interval._make(np.asarray(c_lo), np.asarray(c_hi))
        total = term if total is None else total + term
        power = power * x
    # tail: 2 |c_{K+1}| (K+1) K b^(K-1), b^(K-1) is power.hi (rounded up)
    c_lo, c_hi = series.curvature_coef(kk + 1)
    tail = 2.0 * max(abs(c_lo), abs(c_hi)) * power.hi * (1 + 1e-12) + _TINY
    return Interval._make(_down(total.lo - tail), _up(total.hi + tail))
