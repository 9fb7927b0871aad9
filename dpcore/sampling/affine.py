r"""Affine arithmetic with rigorous rounding (first-order Taylor models on a box).

An :class:`AffineForm` over a box :math:`\{c + h\varepsilon : \varepsilon \in [-1, 1]^k\}`
stands for the set of functions
:math:`x(\varepsilon) = x_0 + \sum_j a_j\varepsilon_j + \xi(\varepsilon)`
with :math:`|\xi(\varepsilon)| \le e`: a centre, ``k`` linear coefficients and an error radius,
all arrays. Operations return forms that contain the exact result **pointwise in**
:math:`\varepsilon` (the same :math:`\varepsilon` for every quantity), so linear dependencies
cancel exactly and only second-order terms go to the error: where interval arithmetic
overestimates the range of a formula to first order (the dependency problem) and the
mean-value form of :mod:`dpcore.sampling.interval_ad` pays the first-order overestimation of
its Jacobian enclosure times the box size, an affine form's error is of the order of the
formula's own second-order remainder.

Rules (:math:`x = x_0 + X`, :math:`|X| \le r_x = \sum_j|a_j| + e_x`, likewise :math:`y`):

* sums and scalings are linear: exact up to rounding;
* :math:`xy = x_0y_0 + \sum_j (x_0 b_j + y_0 a_j)\varepsilon_j + \zeta` with
  :math:`|\zeta| \le |x_0| e_y + |y_0| e_x + r_x r_y`;
* :math:`x^2`: as above with :math:`X^2 \in [0, r_x^2]` (centre shifted by :math:`r_x^2/2`);
* a function :math:`F` (:meth:`AffineForm.apply`) with enclosures of :math:`F` at a point and of
  :math:`F'` over an interval :math:`I` containing the range of :math:`x` (and the expansion
  point :math:`x^\circ \in I`): by the mean-value theorem,
  :math:`F(x) = F(x^\circ) + \alpha(x - x^\circ) + (F'(\xi) - \alpha)(x - x^\circ)` for any float
  :math:`\alpha`, so the error grows by :math:`|F(x^\circ)| \text{'s radius} +
  \max_I|F' - \alpha|\,(|x_0 - x^\circ| + r_x)`. For :math:`F` continuous and piecewise
  :math:`C^1` (a kink inside :math:`I`), :math:`F(x) - F(x^\circ) = \int F'` still lies in
  :math:`(x - x^\circ)\,\mathrm{hull}\,F'(I)`. Where the interval value :math:`F(I)` is
  narrower than that linearization, the form :math:`\mathrm{mid}\,F(I) \pm \mathrm{rad}\,F(I)`
  is used instead when its radius is below the linearization's error (both are valid).

Rounding: every coefficient is a float computed by a few correctly rounded operations; the
error radius absorbs :math:`8u` (:math:`u = 2^{-53}`) times a bound on the magnitudes that
entered them, plus :math:`10^{-300}` against underflow, and is itself rounded up by a factor
:math:`1 + 16u` (it is a sum of a few non-negative products). Sums along an axis of
:math:`k` terms absorb numpy's summation error bound :math:`\gamma_{k-1}\sum|x_i| \le
2ku\sum|x_i|`. The only assumption is that of :mod:`dpcore.sampling.intervals` on libm
accuracy, through the enclosures passed to :meth:`~AffineForm.apply`.
"""

from __future__ import annotations

import numpy as np

from .intervals import Interval, _down, _up

__all__ = ["AffineForm", "box_variables"]

_U = 2.0**-53
_TINY = 1e-300
_UP = 1.0 + 16 * _U


def _finish(c, a, e_raw, scale):
    return AffineForm(c, a, (e_raw + 8 * _U * scale + _TINY) * _UP)


class AffineForm:
    """Centre ``c`` (shape S), coefficients ``a`` (shape ``(k, *S')``), error ``e >= 0``
    (module docstring)."""

    __slots__ = ("c", "a", "e", "_linear_radius")
    __array_ufunc__ = None

    def __init__(self, c, a, e):
        self.c, self.a, self.e = c, a, e
        self._linear_radius = None  # forms are never changed in place: computed once

    @classmethod
    def constant(cls, x, k):
        """A constant: a float array, or an :class:`Interval` (centre its midpoint, error its
        radius)."""
        if isinstance(x, Interval):
            c = x.mid()
            e = np.maximum(_up(x.hi - c), _up(c - x.lo))
            return cls(c, np.zeros((k,) + (1,) * np.ndim(c)), np.maximum(e, 0.0))
        x = np.asarray(x, dtype=float)
        return cls(x, np.zeros((k,) + (1,) * x.ndim), np.zeros(x.shape))

    @property
    def k(self):
        return self.a.shape[0]

    def linear_radius(self):
        """:math:`\\sum_j |a_j|` (rounded up; computed once per form, read-only)."""
        if self._linear_radius is None:
            r = np.sum(np.abs(self.a), axis=0) * _UP
            if isinstance(r, np.ndarray):
                r.flags.writeable = False
            self._linear_radius = r
        return self._linear_radius

    def radius(self):
        """:math:`\\sum_j |a_j| + e`: every value lies within this of the centre."""
        return (self.linear_radius() + self.e) * _UP

    def _mag_lin(self):
        return np.abs(self.c) + self.linear_radius()

    def range(self):
        """Interval enclosure of the values over the box."""
        r = self.radius()
        return Interval._make(_down(self.c - r), _up(self.c + r))

    def __getitem__(self, index):
        index = index if isinstance(index, tuple) else (index,)
        a = self.a[(slice(None),) + index] if np.ndim(self.a) > 1 else self.a
        return AffineForm(self.c[index], a, self.e[index])

    # ------------------------------------------------------------------ linear operations
    def __neg__(self):
        return AffineForm(-self.c, -self.a, self.e)

    def __add__(self, other):
        if not isinstance(other, AffineForm):
            other = AffineForm.constant(other, self.k)
        return _finish(self.c + other.c, self.a + other.a, self.e + other.e,
                       self._mag_lin() + other._mag_lin())

    __radd__ = __add__

    def __sub__(self, other):
        if not isinstance(other, AffineForm):
            other = AffineForm.constant(other, self.k)
        return _finish(self.c - other.c, self.a - other.a, self.e + other.e,
                       self._mag_lin() + other._mag_lin())

    def __rsub__(self, other):
        return (-self).__add__(other)

    def scale(self, s):
        """Times a float array ``s`` (exact constant)."""
        s = np.asarray(s, dtype=float)
        return _finish(self.c * s, self.a * s, self.e * np.abs(s), self._mag_lin() * np.abs(s))

    def __mul__(self, other):
        if isinstance(other, Interval):
            mid = other.mid()
            rad = np.maximum(_up(other.hi - mid), _up(mid - other.lo))
            out = self.scale(mid)
            mag = np.abs(self.c) + self.radius()
            return AffineForm(out.c, out.a, (out.e + rad * mag) * _UP)
        if not isinstance(other, AffineForm):
            return self.scale(other)
        x0, y0 = self.c, other.c
        rx, ry = self.radius(), other.radius()
        a = x0 * other.a + y0 * self.a
        e = np.abs(x0) * other.e + np.abs(y0) * self.e + rx * ry
        return _finish(x0 * y0, a, e, (np.abs(x0) + rx) * (np.abs(y0) + ry))

    __rmul__ = __mul__

    def square(self):
        r = self.radius()
        half = 0.5 * r * r
        return _finish(self.c * self.c + half, (2.0 * self.c) * self.a,
                       2.0 * np.abs(self.c) * self.e + half * _UP, (np.abs(self.c) + r) ** 2)

    # ------------------------------------------------------------------ functions
    def apply(self, parts, lo=-np.inf, hi=np.inf):
        r""":math:`F(x)` where ``parts(I, slope=True)`` returns Interval enclosures
        ``(F(I), F'(I))`` over an Interval ``I`` (``F'`` may be None without ``slope``), and
        the exact values of ``x`` lie in ``[lo, hi]`` (module docstring)."""
        rng = self.range()
        i_lo = np.minimum(np.maximum(rng.lo, lo), hi)
        i_hi = np.maximum(np.minimum(rng.hi, hi), i_lo)
        x0 = np.clip(self.c, i_lo, i_hi)
        x0 = np.where(np.isnan(x0), 0.0, x0)  # a NaN input gives a NaN form (no point value)
        value, slope = parts(Interval._make(i_lo, i_hi))
        f0 = parts(Interval.point(x0), slope=False)[0]
        alpha = slope.mid()
        dev = np.maximum(_up(slope.hi - alpha), _up(alpha - slope.lo))
        d = self.c - x0
        lin_r = self.linear_radius()
        f0c = f0.mid()
        f0r = np.maximum(_up(f0.hi - f0c), _up(f0c - f0.lo))
        reach = (np.abs(d) + lin_r + self.e) * _UP
        e_lin = f0r + np.abs(alpha) * self.e + dev * reach
        lin = _finish(f0c + alpha * d, alpha * self.a, e_lin,
                      np.abs(f0c) + np.abs(alpha) * (np.abs(d) + lin_r))
        # The interval value as a constant form where its radius is below the linearization's
        # error alone (then it is the tighter set; elsewhere the linear part is kept, since it
        # cancels against other quantities).
        vc = value.mid()
        vr = np.maximum(_up(value.hi - vc), _up(vc - value.lo))
        narrower = vr < lin.e
        if not np.any(narrower):
            return lin
        a = np.where(narrower, 0.0, lin.a)
        return AffineForm(np.where(narrower, vc, lin.c), a, np.where(narrower, vr, lin.e))

    def masked(self, keep):
        """Exactly 0 where ``keep`` is False."""
        return AffineForm(np.where(keep, self.c, 0.0), np.where(keep, self.a, 0.0),
                          np.where(keep, self.e, 0.0))

    def widened(self, extra):
        """The same form with ``extra >= 0`` added to the error radius."""
        return AffineForm(self.c, self.a, (self.e + extra) * _UP)

    # ------------------------------------------------------------------ reductions
    def sum(self, axis=-1):
        """Sum along a (negative) value axis."""
        if axis >= 0:
            raise ValueError("Use a negative axis (the coefficient axis comes first).")
        shape = self.shape
        k = shape[axis]
        mag = np.broadcast_to(np.abs(self.c) + self.linear_radius(), shape)
        scale = (2 * k) * np.sum(mag, axis=axis) / 8.0
        a_full = np.broadcast_to(self.a, (self.k,) + shape)
        e_full = np.broadcast_to(self.e, shape)
        c_full = np.broadcast_to(self.c, shape)
        return _finish(np.sum(c_full, axis=axis), np.sum(a_full, axis=axis),
                       np.sum(e_full, axis=axis) * (1 + 2 * k * _U), scale)

    @property
    def shape(self):
        """The value shape."""
        return np.broadcast_shapes(np.shape(self.c), np.shape(self.e), np.shape(self.a)[1:])

    def mean(self, axis=-1):
        k = self.shape[axis]
        s = self.sum(axis=axis)
        inv = 1.0 / k
        # fl(1/k) is within u of 1/k, and so is each product below: [fl(1/k)(1 - 4u),
        # fl(1/k)(1 + 4u)] contains 1/k.
        return s * Interval._make(np.asarray(inv * (1 - 4 * _U)), np.asarray(inv * (1 + 4 * _U)))


def box_variables(lo, hi):
    r"""The coordinates of boxes ``[lo, hi]`` (arrays ``(m, d)``) as affine forms of value
    shape ``(m, 1)`` with :math:`d` noise symbols: :math:`z_j = c_j + h_j\varepsilon_j`, ``c``
    the float midpoint and ``h`` a half-width rounded up so that the box lies inside. Returns
    ``(variables, c, h)``."""
    lo = np.asarray(lo, dtype=float)
    hi = np.asarray(hi, dtype=float)
    c = np.clip(0.5 * lo + 0.5 * hi, lo, hi)
    h = np.maximum(_up(hi - c), _up(c - lo))
    h = np.where(hi > lo, h, 0.0)
    m, d = lo.shape
    out = []
    for j in range(d):
        a = np.zeros((d, m, 1))
        a[j, :, 0] = h[:, j]
        out.append(AffineForm(c[:, j, None].copy(), a, np.zeros((m, 1))))
    return out, c, h
