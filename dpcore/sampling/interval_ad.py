r"""Forward-mode differentiation in interval arithmetic (:class:`DualInterval`).

A :class:`DualInterval` carries an interval value :math:`[x]` and intervals :math:`[\partial_j x]`
for :math:`k` partial derivatives with respect to the coordinates of a box :math:`B`. Every
operation applies the chain rule in interval arithmetic (:mod:`dpcore.sampling.intervals`,
outward rounding), so that, by the inclusion property, a formula evaluated on the
:math:`k` coordinate variables of :math:`B` returns enclosures of its value **and of its
gradient over the whole box**: for every :math:`z \in B`, :math:`x(z) \in [x]` and
:math:`\nabla x(z) \in [\partial x]` (componentwise). Derivative arrays carry the partials on a
leading axis of length :math:`k`; ``k = 0`` evaluates the value only, at the cost of plain
interval arithmetic.

The mean-value (centred) form
-----------------------------
For :math:`G: B \to \mathbb{R}^m` and :math:`c \in B`, :math:`G(z) \in G(c) + [DG](B)(z - c)`.
Proof: along the segment :math:`s(t) = c + t(z - c)` (inside the convex box),
:math:`G(z) - G(c) = \int_0^1 \frac{d}{dt} G(s(t))\,dt`, and the integrand lies, for almost
every :math:`t`, in the box :math:`[DG](B)(z - c)`; the integral of a function valued in a
convex set over :math:`[0, 1]` stays in it. This also holds for the **piecewise smooth**
functions made by :meth:`DualInterval.clip_max` and by :meth:`DualInterval.apply` with a
slope enclosure covering every branch (Clarke's mean-value theorem, elementary here): with
:math:`h` smooth and :math:`m = \min(h, b)`, :math:`t \mapsto m(s(t))` is Lipschitz, hence
absolutely continuous and differentiable almost everywhere, and its derivative is
:math:`h'` where :math:`h < b`, :math:`0` where :math:`h > b`, and :math:`0` at almost every
point of the closed set :math:`\{h = b\}` (at its density points where both derivatives exist,
:math:`m' = h' = 0`). So almost everywhere the derivative is in
:math:`\mathrm{hull}\{h', 0\}`, which :meth:`~DualInterval.clip_max` returns where the value
straddles :math:`b`. Compositions with smooth functions keep the chain rule at every point
where the non-smooth parts are differentiable, i.e. almost everywhere (a finite union of null
sets). Discontinuous functions have no such form: callers must enclose them by value only.

Special functions of a squared argument (:func:`sinc_of_sqrt`, :func:`cos_of_sqrt`) are
differentiated in :math:`q = r^2`, where they are analytic, so no derivative of a norm
(singular at 0) occurs. Their slopes use proven monotonicity on :math:`[0, \pi]`:
:math:`\frac{d}{dq}\cos\sqrt q = -\tfrac12\mathrm{sinc}\,r` and
:math:`\frac{d}{dq}\mathrm{sinc}\sqrt q = -\tfrac12 A(r)` with
:math:`A(r) = (\sin r - r\cos r)/r^3 = \int_0^1 s^2\,\mathrm{sinc}(rs)\,ds` (from
:math:`\sin r - r\cos r = \int_0^r x\sin x\,dx`), positive and decreasing on
:math:`[0, \pi]` because sinc is; its point values come from the alternating series
:math:`A(r) = \sum_{k\ge1} (-1)^{k+1} 2k\,r^{2k-2}/(2k+1)!` (terms decreasing for
:math:`r^2 < 10`, so consecutive partial sums bracket it) below 0.5 and from the closed form
in interval arithmetic above. Beyond :math:`\pi` the closed forms are evaluated in interval
arithmetic directly.
"""

from __future__ import annotations

import math

import numpy as np

from .intervals import Interval, sinc, sinc_at

__all__ = ["DualInterval", "a_function", "alternating_series", "cos_of_sqrt", "cos_sqrt_parts",
           "decreasing_range", "sinc_of_sqrt", "sinc_sqrt_parts", "variables"]

_PI_LO = 3.141592653589793
#: Below this argument the series of A is used (the closed form cancels).
A_SERIES = 0.5


def _coerce(x):
    return x if isinstance(x, Interval) else Interval.point(x)


def _zero_like(der):
    z = np.zeros(np.broadcast_shapes(np.shape(der.lo), np.shape(der.hi)))
    return Interval._make(z, z)


class DualInterval:
    r"""An interval value with interval partial derivatives (module docstring).

    Parameters
    ----------
    val : Interval
        Enclosure of the value over the box, shape ``S``.
    der : Interval
        Enclosures of the ``k`` partial derivatives, shape ``(k, *S')`` with ``S'``
        broadcastable to ``S``.

    Operators ``+ - * /`` combine a DualInterval with another, with an :class:`Interval` or
    with floats/arrays (constants, derivative 0).
    """

    __slots__ = ("val", "der")
    __array_ufunc__ = None

    def __init__(self, val, der):
        self.val = _coerce(val)
        self.der = _coerce(der)

    @property
    def k(self):
        """Number of partial derivatives."""
        return self.der.shape[0]

    def __repr__(self):
        return f"DualInterval(val={self.val!r}, der={self.der!r})"

    def __getitem__(self, index):
        index = index if isinstance(index, tuple) else (index,)
        return DualInterval(self.val[index], self.der[(slice(None),) + index])

    # ------------------------------------------------------------------ arithmetic
    def __neg__(self):
        return DualInterval(-self.val, -self.der)

    def __add__(self, other):
        if isinstance(other, DualInterval):
            return DualInterval(self.val + other.val, self.der + other.der)
        return DualInterval(self.val + other, self.der)

    __radd__ = __add__

    def __sub__(self, other):
        if isinstance(other, DualInterval):
            return DualInterval(self.val - other.val, self.der - other.der)
        return DualInterval(self.val - other, self.der)

    def __rsub__(self, other):
        return DualInterval(_coerce(other) - self.val, -self.der)

    def __mul__(self, other):
        if isinstance(other, DualInterval):
            return DualInterval(self.val * other.val,
                                self.der * other.val + other.der * self.val)
        if not isinstance(other, Interval):
            other = np.asarray(other, dtype=float)
        return DualInterval(self.val * other, self.der * other)

    __rmul__ = __mul__

    def __truediv__(self, other):
        if isinstance(other, DualInterval):
            val = self.val / other.val
            return DualInterval(val, (self.der - other.der * val) / other.val)
        if not isinstance(other, Interval):
            other = np.asarray(other, dtype=float)
        return DualInterval(self.val / other, self.der / other)

    def __rtruediv__(self, other):
        val = _coerce(other) / self.val
        return DualInterval(val, -(self.der * (val / self.val)))

    # ------------------------------------------------------------------ functions
    def apply(self, value, slope):
        r"""Chain rule: :math:`F(x)` given enclosures ``value`` of :math:`F` and ``slope`` of
        :math:`F'` over the value interval (a slope covering every branch of a piecewise
        smooth continuous :math:`F` is allowed; module docstring)."""
        return DualInterval(value, self.der * slope)

    def square(self):
        """``x**2`` (tight value)."""
        return DualInterval(self.val.square(), self.der * (self.val * 2.0))

    def sqrt(self):
        """Square root; the value must be bounded away from 0 for the derivative."""
        val = self.val.sqrt()
        if np.any(val.lo <= 0):
            raise ZeroDivisionError("The derivative of sqrt is unbounded at 0.")
        return DualInterval(val, self.der / (val * 2.0))

    def sin(self):
        return self.apply(self.val.sin(), self.val.cos())

    def cos(self):
        return self.apply(self.val.cos(), -self.val.sin())

    def exp(self):
        val = self.val.exp()
        return self.apply(val, val)

    def arccos(self):
        """``arccos``; the value must stay inside ``(-1, 1)`` (derivative
        :math:`-1/\\sqrt{1 - x^2}`)."""
        if np.any(self.val.lo <= -1.0) or np.any(self.val.hi >= 1.0):
            raise ZeroDivisionError("The derivative of arccos is unbounded at +-1.")
        return self.apply(self.val.arccos(), -1.0 / (1.0 - self.val.square()).sqrt())

    def clip_max(self, bound):
        r""":math:`\min(x, b)`: derivative :math:`x'` below, 0 above, hull of both where the
        value straddles ``b`` (valid in the mean-value form, module docstring)."""
        lo, hi = np.broadcast_arrays(self.val.lo, self.val.hi)
        val = Interval._make(np.minimum(lo, bound), np.minimum(hi, bound))
        below, above = hi <= bound, lo >= bound
        d = self.der
        zero = np.zeros(1)
        dlo = np.where(below, d.lo, np.where(above, 0.0, np.minimum(d.lo, zero)))
        dhi = np.where(below, d.hi, np.where(above, 0.0, np.maximum(d.hi, zero)))
        return DualInterval(val, Interval._make(dlo, dhi))

    def clamp_value(self, lo, hi):
        """Restrict the value to ``[lo, hi]`` where the exact value is known to lie there
        (derivatives unchanged)."""
        return DualInterval(Interval._make(np.clip(self.val.lo, lo, hi),
                                           np.clip(self.val.hi, lo, hi)), self.der)

    def masked(self, keep):
        """The same where ``keep`` (bool array, broadcast to the value), exactly 0 (value and
        derivatives) elsewhere."""
        zero = np.zeros(1)
        val = Interval._make(np.where(keep, self.val.lo, zero), np.where(keep, self.val.hi,
                                                                         zero))
        der = Interval._make(np.where(keep, self.der.lo, zero), np.where(keep, self.der.hi,
                                                                         zero))
        return DualInterval(val, der)

    # ------------------------------------------------------------------ reductions
    def sum(self, axis=-1):
        """Sum along a value axis (a negative ``axis`` counts from the end)."""
        if axis >= 0:
            raise ValueError("Use a negative axis (the derivative axis comes first).")
        return DualInterval(self.val.sum(axis=axis), self.der.sum(axis=axis))

    def mean(self, axis=-1):
        if axis >= 0:
            raise ValueError("Use a negative axis (the derivative axis comes first).")
        k = self.val.shape[axis]
        return DualInterval(self.val.mean(axis=axis), self.der.sum(axis=axis).div(float(k)))


def variables(lo, hi, *, derivatives=True):
    """The ``d`` coordinate variables of boxes ``[lo, hi]`` (arrays ``(m, d)``), each a
    DualInterval of value shape ``(m, 1)`` with unit derivative along its own axis (``d``
    partials; none with ``derivatives=False``)."""
    lo = np.asarray(lo, dtype=float)
    hi = np.asarray(hi, dtype=float)
    d = lo.shape[-1]
    out = []
    for j in range(d):
        if derivatives:
            unit = np.zeros((d, 1, 1))
            unit[j] = 1.0
        else:
            unit = np.zeros((0, 1, 1))
        val = Interval(lo[:, j, None], hi[:, j, None])
        if np.array_equal(lo[:, j], hi[:, j]):
            val = Interval.point(lo[:, j, None])
        out.append(DualInterval(val, Interval.point(unit)))
    return out


# ------------------------------------------------------------------ special functions
def alternating_series(x2, coefs):
    r"""Enclosure of :math:`\sum_k c_k x^{2k}` given an enclosure ``x2`` (Interval) of
    :math:`x^2`, for alternating coefficients whose terms decrease in magnitude: consecutive
    partial sums bracket the sum. ``coefs`` are intervals enclosing the coefficients; the last
    term only bounds the tail."""
    powers = [Interval.point(np.ones(np.shape(x2.lo)))]
    for _ in range(len(coefs) - 1):
        powers.append(powers[-1] * x2)
    terms = [c * p for c, p in zip(coefs, powers, strict=True)]
    partial = terms[0]
    for term in terms[1:-1]:
        partial = partial + term
    ends = partial + terms[-1]
    return Interval._make(np.minimum(partial.lo, ends.lo), np.maximum(partial.hi, ends.hi))


def _const(num, den):
    return Interval.point(float(num)) / float(den)


#: Series of A: (-1)^(k+1) 2k / (2k+1)!, k = 1..5 (bracket width 10 x^8 / 11! < 1e-9 below
#: 0.5: ample for slopes).
_A_COEF = [_const((-1) ** (k + 1) * 2 * k, math.factorial(2 * k + 1)) for k in range(1, 6)]


def a_at(x):
    r"""Enclosure of :math:`A(x) = (\sin x - x\cos x)/x^3` (1/3 at 0) at floats ``x >= 0``."""
    x = np.asarray(x, dtype=float)
    small = x < A_SERIES
    out_lo, out_hi = np.empty(x.shape), np.empty(x.shape)
    if np.any(small):
        s = alternating_series(Interval.point(x[small]).square(), _A_COEF)
        out_lo[small], out_hi[small] = s.lo, s.hi
    if np.any(~small):
        xi = Interval.point(x[~small])
        big = (xi.sin() - xi * xi.cos()) / (xi.square() * xi)
        out_lo[~small], out_hi[~small] = big.lo, big.hi
    return Interval._make(out_lo, out_hi)


def decreasing_range(x, point_fn, general_fn):
    r"""Enclosure over intervals ``x`` (``>= 0``) of a function decreasing on
    :math:`[0, \pi]`: the endpoint values there (``point_fn`` encloses it at floats);
    ``general_fn`` (an interval formula) for the part beyond :math:`\pi`."""
    lo, hi = np.broadcast_arrays(np.maximum(x.lo, 0.0), x.hi)
    b = np.minimum(hi, _PI_LO)
    a = np.minimum(lo, b)
    out = Interval._make(point_fn(b).lo, point_fn(a).hi)
    far = hi > _PI_LO
    if np.any(far):
        fx = Interval._make(np.where(far, np.maximum(lo, _PI_LO), 4.0), np.where(far, hi, 4.0))
        g = general_fn(fx)
        hull = out.hull(g)
        out = Interval._make(np.where(far, np.where(lo > _PI_LO, g.lo, hull.lo), out.lo),
                             np.where(far, np.where(lo > _PI_LO, g.hi, hull.hi), out.hi))
    return out


def a_function(r):
    r"""Enclosure of :math:`A` over intervals ``r >= 0`` (decreasing on :math:`[0, \pi]`)."""
    return decreasing_range(r, a_at, lambda X: (X.sin() - X * X.cos()) / (X.square() * X))


def _sinc_range(r):
    return decreasing_range(r, sinc_at, lambda X: X.sin() / X)


def sinc_sqrt_parts(q, slope=True):
    r"""Enclosures of :math:`\mathrm{sinc}\sqrt q` and (``slope``; else None) of its
    derivative :math:`-A(\sqrt q)/2` over an Interval ``q >= 0``."""
    r = q.sqrt()
    return sinc(r), (a_function(r) * -0.5 if slope else None)


def cos_sqrt_parts(q, slope=True):
    r"""Enclosures of :math:`\cos\sqrt q` and (``slope``; else None) of its derivative
    :math:`-\mathrm{sinc}(\sqrt q)/2` over an Interval ``q >= 0``."""
    r = q.sqrt()
    return r.cos(), (_sinc_range(r) * -0.5 if slope else None)


def sinc_of_sqrt(q):
    r""":math:`\mathrm{sinc}\sqrt q` of a DualInterval ``q >= 0``."""
    return q.apply(*sinc_sqrt_parts(q.val))


def cos_of_sqrt(q):
    r""":math:`\cos\sqrt q` of a DualInterval ``q >= 0``."""
    return q.apply(*cos_sqrt_parts(q.val))
