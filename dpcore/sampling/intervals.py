r"""Small vectorized interval arithmetic on numpy float64 arrays.

An :class:`Interval` holds two arrays ``lo <= hi`` of one (broadcast) shape; it stands for the
set of arrays ``x`` with ``lo <= x <= hi`` elementwise. Every operation returns an interval
that contains the exact (real-number) result of the operation applied to every point of its
inputs: the *inclusion property*. Composing operations therefore gives a rigorous enclosure of
any formula over a box, at the price of overestimation where a variable occurs more than once
(the dependency problem: ``x - x`` over ``[0, 1]`` is ``[-1, 1]``, not ``0``).

Outward rounding, the one rule
------------------------------
Every endpoint is computed in float64 with numpy and then moved outward by a relative
amount: ``lo - (|lo| * c + TINY)`` and ``hi + (|hi| * c + TINY)`` (TINY = 2**-1074, the
smallest subnormal; multiplying by a power of two is exact, so the step is at least
``c / 2**-52`` ulp, and TINY covers underflow):

* ``+ - * /`` and ``sqrt`` are correctly rounded in IEEE 754 (the result is within half an
  ulp of the exact value); with ``c = 2**-51`` the endpoints move by 2 to 4 ulp, and after
  the rounding of that subtraction still by more than 1.5 ulp, which encloses the exact value;
* ``exp``, ``log``, ``sin``, ``cos``, ``arccos`` come from numpy's libm/SIMD implementations,
  which we *assume* to be accurate to 2 ulp of the exact value (measured: below 1 ulp against mpmath
  on this machine, see ``tests/sampling/test_intervals.py``); with ``c = 2**-50`` the
  endpoints move by 4 to 8 ulp (near 8 at the top of a binade, where an error can cross into
  the next binade), more than 3 ulp after rounding, which covers that error;
* a sum along an axis (:meth:`Interval.sum`) uses numpy's summation, whose error is at most
  :math:`\gamma_{k-1}\sum|x_i|` for any summation order (:math:`\gamma_j = ju/(1-ju)`,
  :math:`u = 2^{-53}`, :math:`k` terms); the endpoints move by ``2 k u sum|x_i|`` plus the
  basic step.

(``np.nextafter`` would do the same one ulp at a time, but it is several times slower than
the three vectorized arithmetic passes of the relative step.) The step keeps a finite
endpoint finite; a ``hi`` of ``-inf`` is not supported.

Ranges are tight where the function's shape is known: ``square`` and ``abs`` of an interval
straddling 0 start at 0; ``sin``/``cos`` use the location of their extrema (critical points
:math:`k\pi/2`) and return ``[-1, 1]`` for intervals wider than :math:`2\pi`; monotone
functions are evaluated at the endpoints. Inputs are assumed finite; no overflow handling.
Operations outside a function's domain are explicit: ``sqrt`` and ``arccos`` restrict their
argument to the domain (``[0, inf)``, ``[-1, 1]``) and raise if nothing is left; division by
an interval containing 0 raises :class:`ZeroDivisionError` (use :meth:`Interval.div` with
``on_zero="whole"`` to get ``[-inf, inf]`` there instead).
"""

from __future__ import annotations

import numpy as np

__all__ = ["Interval", "dot", "hull", "intersect", "pi_interval", "sinc", "sinc_at", "sqnorm",
           "where"]

_U = 2.0**-53
_TINY = 2.0**-1074  # smallest subnormal
_PI_LO = 3.141592653589793  # float(pi) < pi
_PI_HI = float(np.nextafter(_PI_LO, np.inf))
_TWO_PI = 2.0 * _PI_LO
#: Relative widening of correctly rounded results (2 to 4 ulp) and of libm results (4 to 8).
BASIC_WIDEN = 2.0**-51
LIBM_WIDEN = 2.0**-50


def _step(x, rel):
    """``|x| * rel + TINY``: the step by which an endpoint moves outward (exact for normal x;
    TINY covers underflow). A fresh array (or a scalar for 0-d input)."""
    d = np.abs(x)
    if np.ndim(d) == 0:
        return d * rel + _TINY
    d *= rel
    d += _TINY
    return d


def _down(x, rel=BASIC_WIDEN):
    """A float below ``x`` by at least 1.5 ulp (``rel = 2**-51``) or 3 ulp (``2**-50``)."""
    d = _step(x, rel)
    return x - d if np.ndim(d) == 0 else np.subtract(x, d, out=d)


def _up(x, rel=BASIC_WIDEN):
    """A float above ``x`` by at least 1.5 ulp (``rel = 2**-51``) or 3 ulp (``2**-50``)."""
    d = _step(x, rel)
    return x + d if np.ndim(d) == 0 else np.add(x, d, out=d)


def _as_array(x):
    return np.asarray(x, dtype=float)


class Interval:
    """Elementwise intervals ``[lo, hi]`` over numpy arrays (see the module docstring).

    Parameters
    ----------
    lo, hi : array-like
        Endpoints (broadcast against each other). ``hi`` defaults to ``lo`` (a point).

    Raises
    ------
    ValueError
        If some ``lo > hi`` or an endpoint is NaN.
    """

    __slots__ = ("lo", "hi")
    #: numpy arrays defer binary operators to ours (``array * Interval`` is an Interval).
    __array_ufunc__ = None

    def __init__(self, lo, hi=None):
        lo = _as_array(lo)
        hi = lo if hi is None else _as_array(hi)
        lo, hi = np.broadcast_arrays(lo, hi)
        if np.any(np.isnan(lo)) or np.any(np.isnan(hi)):
            raise ValueError("Interval endpoints must not be NaN.")
        if np.any(lo > hi):
            raise ValueError("Interval needs lo <= hi elementwise.")
        self.lo, self.hi = lo, hi

    @classmethod
    def _make(cls, lo, hi):
        """Internal constructor without checks."""
        out = cls.__new__(cls)
        out.lo, out.hi = lo, hi
        return out

    @classmethod
    def point(cls, x):
        """The degenerate interval ``[x, x]`` (the float ``x`` itself, exactly).

        ``lo`` and ``hi`` are the same array object, which operations use as a fast path."""
        x = _as_array(x)
        if np.any(np.isnan(x)):
            raise ValueError("Interval endpoints must not be NaN.")
        return cls._make(x, x)

    def is_point(self):
        """Whether this was built by :meth:`point` (``lo`` and ``hi`` the same array)."""
        return self.lo is self.hi

    @classmethod
    def whole(cls, shape=()):
        """``[-inf, inf]`` of the given shape."""
        return cls._make(np.full(shape, -np.inf), np.full(shape, np.inf))

    @classmethod
    def stack(cls, items, axis=0):
        """Stack intervals along a new axis, like :func:`numpy.stack`."""
        items = [_coerce(it) for it in items]
        return cls._make(np.stack([it.lo for it in items], axis=axis),
                         np.stack([it.hi for it in items], axis=axis))

    # ------------------------------------------------------------------ basics
    @property
    def shape(self):
        return np.broadcast_shapes(np.shape(self.lo), np.shape(self.hi))

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        return f"Interval(lo={self.lo!r}, hi={self.hi!r})"

    def __getitem__(self, index):
        return Interval._make(self.lo[index], self.hi[index])

    def mid(self):
        """Midpoints (float; not rounded)."""
        return 0.5 * self.lo + 0.5 * self.hi

    def width(self):
        """``hi - lo`` (float; not rounded)."""
        return self.hi - self.lo

    def contains(self, x):
        """Elementwise ``lo <= x <= hi``."""
        x = _as_array(x)
        return (self.lo <= x) & (x <= self.hi)

    def straddles_zero(self):
        """Elementwise ``lo <= 0 <= hi``."""
        return (self.lo <= 0.0) & (self.hi >= 0.0)

    def mig(self):
        """Mignitude ``min |x|`` over the interval (exact)."""
        return np.where(self.straddles_zero(), 0.0, np.minimum(np.abs(self.lo), np.abs(self.hi)))

    def mag(self):
        """Magnitude ``max |x|`` over the interval (exact)."""
        return np.maximum(np.abs(self.lo), np.abs(self.hi))

    def hull(self, other):
        """Smallest interval containing both."""
        other = _coerce(other)
        return Interval._make(np.minimum(self.lo, other.lo), np.maximum(self.hi, other.hi))

    def intersect(self, other):
        """Elementwise intersection; raises ``ValueError`` where it is empty."""
        other = _coerce(other)
        lo, hi = np.maximum(self.lo, other.lo), np.minimum(self.hi, other.hi)
        if np.any(lo > hi):
            raise ValueError("Empty interval intersection.")
        return Interval._make(lo, hi)

    def clip(self, lo, hi):
        """Intersection with the point bounds ``[lo, hi]`` (floats or arrays), raising where
        empty."""
        return self.intersect(Interval(lo, hi))

    # -------------------------------------------------------------- arithmetic
    def __neg__(self):
        return Interval._make(-self.hi, -self.lo)

    def __pos__(self):
        return self

    def __add__(self, other):
        if isinstance(other, Interval):
            return Interval._make(_down(self.lo + other.lo), _up(self.hi + other.hi))
        b = _as_array(other)
        return Interval._make(_down(self.lo + b), _up(self.hi + b))

    __radd__ = __add__

    def __sub__(self, other):
        if isinstance(other, Interval):
            return Interval._make(_down(self.lo - other.hi), _up(self.hi - other.lo))
        b = _as_array(other)
        return Interval._make(_down(self.lo - b), _up(self.hi - b))

    def __rsub__(self, other):
        b = _as_array(other)
        return Interval._make(_down(b - self.hi), _up(b - self.lo))

    def __mul__(self, other):
        if isinstance(other, Interval) and other.is_point():
            other = other.lo
        if isinstance(other, Interval):
            if self.is_point():
                return other * self.lo
            a, b, c, d = self.lo, self.hi, other.lo, other.hi
            if np.ndim(a) + np.ndim(c) > 0:
                # Sign-aware fast paths (fewer passes over large arrays).
                a_pos, c_pos = bool(np.all(a >= 0)), bool(np.all(c >= 0))
                if a_pos and c_pos:
                    return Interval._make(_down(a * c), _up(b * d))
                if a_pos or c_pos:
                    if c_pos:
                        a, b, c, d = c, d, a, b
                    # [a, b] >= 0: min is a c or b c, max is a d or b d.
                    return Interval._make(_down(np.minimum(a * c, b * c)),
                                          _up(np.maximum(a * d, b * d)))
            p1, p2, p3, p4 = a * c, a * d, b * c, b * d
            if np.ndim(p1) == 0:
                lo, hi = min(p1, p2, p3, p4), max(p1, p2, p3, p4)
            else:  # in place: fewer temporaries
                lo = np.minimum(p1, p2)
                np.minimum(lo, p3, out=lo)
                np.minimum(lo, p4, out=lo)
                hi = np.maximum(p1, p2, out=p1)
                np.maximum(hi, p3, out=hi)
                np.maximum(hi, p4, out=hi)
            return Interval._make(_down(lo), _up(hi))
        b = _as_array(other)
        p1, p2 = self.lo * b, self.hi * b
        return Interval._make(_down(np.minimum(p1, p2)), _up(np.maximum(p1, p2)))

    __rmul__ = __mul__

    def div(self, other, on_zero="raise"):
        """``self / other``.

        Parameters
        ----------
        other : Interval or array-like
        on_zero : {"raise", "whole"}
            Where ``other`` contains 0: raise :class:`ZeroDivisionError`, or return
            ``[-inf, inf]`` for those elements.
        """
        other = _coerce(other)
        zero = other.straddles_zero()
        if np.any(zero):
            if on_zero == "raise":
                raise ZeroDivisionError("Interval division by an interval containing 0.")
            if on_zero != "whole":
                raise ValueError(f"on_zero must be 'raise' or 'whole', got {on_zero!r}.")
            safe = Interval._make(np.where(zero, 1.0, other.lo), np.where(zero, 1.0, other.hi))
            out = self.div(safe)
            return Interval._make(np.where(zero, -np.inf, out.lo), np.where(zero, np.inf, out.hi))
        a, b, c, d = self.lo, self.hi, other.lo, other.hi
        if other.is_point():
            q1, q2 = a / c, b / c
            return Interval._make(_down(np.minimum(q1, q2)), _up(np.maximum(q1, q2)))
        if self.is_point():
            q1, q2 = a / c, a / d
            return Interval._make(_down(np.minimum(q1, q2)), _up(np.maximum(q1, q2)))
        q1, q2, q3, q4 = a / c, a / d, b / c, b / d
        lo = np.minimum(np.minimum(q1, q2), np.minimum(q3, q4))
        hi = np.maximum(np.maximum(q1, q2), np.maximum(q3, q4))
        return Interval._make(_down(lo), _up(hi))

    def __truediv__(self, other):
        return self.div(other)

    def __rtruediv__(self, other):
        return Interval.point(other).div(self)

    # --------------------------------------------------------------- functions
    def square(self):
        """``x**2``, tight: ``[0, max]`` where the interval straddles 0."""
        lo2, hi2 = self.lo * self.lo, self.hi * self.hi
        lo = np.where(self.straddles_zero(), 0.0, _down(np.minimum(lo2, hi2)))
        return Interval._make(np.maximum(lo, 0.0), _up(np.maximum(lo2, hi2)))

    def abs(self):
        """``|x|`` as ``[mig, mag]``."""
        return Interval._make(self.mig(), self.mag())

    __abs__ = abs

    def sqrt(self):
        """Square root of the part of the interval in ``[0, inf)`` (raises if that is empty)."""
        if np.any(self.hi < 0):
            raise ValueError("sqrt of an interval with no point in [0, inf).")
        lo = np.maximum(self.lo, 0.0)
        return Interval._make(np.maximum(_down(np.sqrt(lo)), 0.0), _up(np.sqrt(self.hi)))

    def exp(self):
        """Exponential (increasing)."""
        return Interval._make(np.maximum(_down(np.exp(self.lo), LIBM_WIDEN), 0.0),
                              _up(np.exp(self.hi), LIBM_WIDEN))

    def log(self):
        """Natural logarithm (increasing) of an interval in ``(0, inf)`` (raises otherwise)."""
        if np.any(self.lo <= 0):
            raise ValueError("log of an interval that reaches 0 or below.")
        return Interval._make(_down(np.log(self.lo), LIBM_WIDEN), _up(np.log(self.hi), LIBM_WIDEN))

    def arccos(self):
        """``arccos`` of the part of the interval in ``[-1, 1]`` (decreasing)."""
        if np.any(self.hi < -1.0) or np.any(self.lo > 1.0):
            raise ValueError("arccos of an interval with no point in [-1, 1].")
        lo = np.clip(self.lo, -1.0, 1.0)
        hi = np.clip(self.hi, -1.0, 1.0)
        return Interval._make(np.maximum(_down(np.arccos(hi), LIBM_WIDEN), 0.0),
                              np.minimum(_up(np.arccos(lo), LIBM_WIDEN), _PI_HI))

    def sin(self):
        """Sine, with the extrema at ``pi/2 + 2 k pi`` (max) and ``-pi/2 + 2 k pi`` (min)."""
        # float(pi)/2 < pi/2: [-float(pi)/2, float(pi)/2] is inside the increasing stretch.
        return _periodic(self, np.sin, 0.5 * _PI_LO, -0.5 * _PI_LO, -0.5 * _PI_LO,
                         0.5 * _PI_LO, True)

    def cos(self):
        """Cosine, with the extrema at ``2 k pi`` (max) and ``pi + 2 k pi`` (min)."""
        return _periodic(self, np.cos, 0.0, _PI_LO, 0.0, _PI_LO, False)

    def sinc(self):
        """``sin(x)/x`` (1 at 0); see :func:`sinc`."""
        return sinc(self)

    # ------------------------------------------------------------- reductions
    def sum(self, axis=-1):
        """Rigorous enclosure of the sum along ``axis`` (see the module docstring)."""
        lo, hi = np.broadcast_arrays(self.lo, self.hi)
        k = lo.shape[axis]
        if k == 0:
            zeros = np.zeros(np.delete(np.array(lo.shape), axis % lo.ndim))
            return Interval._make(zeros, zeros.copy())
        s_lo, s_hi = np.sum(lo, axis=axis), np.sum(hi, axis=axis)
        if k == 1:
            return Interval._make(s_lo, s_hi)
        # |fl(sum) - sum| <= gamma_{k-1} sum |x_i| <= 2 k u fl(sum |x_i|) while k u < 1/4.
        if not k * _U < 0.25:
            raise ValueError("Too many terms for the summation error bound.")
        err_lo = (2.0 * k * _U) * np.sum(np.abs(lo), axis=axis)
        err_hi = (2.0 * k * _U) * np.sum(np.abs(hi), axis=axis)
        out_lo = _down(s_lo - err_lo)
        # A sum of non-negative terms is non-negative (keeps squared norms' lower end at 0).
        out_lo = np.where(np.all(lo >= 0, axis=axis), np.maximum(out_lo, 0.0), out_lo)
        return Interval._make(out_lo, _up(s_hi + err_hi))

    def mean(self, axis=-1):
        """Rigorous enclosure of the mean along ``axis``."""
        k = self.shape[axis]
        return self.sum(axis=axis).div(float(k))


def _coerce(x):
    return x if isinstance(x, Interval) else Interval.point(x)


def _contains_critical(lo, hi, phase):
    """Whether ``[lo, hi]`` may contain a point ``phase + 2 k pi`` (conservative: a point
    within ~1e-12 relative of an endpoint counts as contained, which only widens)."""
    a = (lo - phase) / _TWO_PI
    b = (hi - phase) / _TWO_PI
    slack = 1e-12 * (1.0 + np.abs(a) + np.abs(b))
    return np.floor(b + slack) >= np.ceil(a - slack)


def _periodic(x, fn, phase_max, phase_min, mono_lo, mono_hi, increasing):
    if x.is_point():
        val = fn(x.lo)
        return Interval._make(np.maximum(_down(val, LIBM_WIDEN), -1.0),
                              np.minimum(_up(val, LIBM_WIDEN), 1.0))
    lo, hi = np.broadcast_arrays(x.lo, x.hi)
    if np.all(lo >= mono_lo) and np.all(hi <= mono_hi):
        # Fast path: everything in one monotone stretch.
        a, b = (lo, hi) if increasing else (hi, lo)
        out_lo = _down(fn(a), LIBM_WIDEN)
        out_hi = _up(fn(b), LIBM_WIDEN)
        return Interval._make(np.maximum(out_lo, -1.0), np.minimum(out_hi, 1.0))
    # Beyond 2**40 the critical-point test below loses its accuracy; give up there.
    full = (hi - lo >= _TWO_PI) | (np.abs(lo) > 2.0**40) | (np.abs(hi) > 2.0**40)
    full |= ~(np.isfinite(lo) & np.isfinite(hi))
    with np.errstate(invalid="ignore"):
        f_lo, f_hi = fn(lo), fn(hi)
        has_max = full | _contains_critical(lo, hi, phase_max)
        has_min = full | _contains_critical(lo, hi, phase_min)
    out_lo = np.where(has_min, -1.0, _down(np.minimum(f_lo, f_hi), LIBM_WIDEN))
    out_hi = np.where(has_max, 1.0, _up(np.maximum(f_lo, f_hi), LIBM_WIDEN))
    return Interval._make(np.maximum(out_lo, -1.0), np.minimum(out_hi, 1.0))


# ---------------------------------------------------------------- free functions
def hull(a, b):
    """Smallest interval containing ``a`` and ``b``."""
    return _coerce(a).hull(b)


def intersect(a, b):
    """Elementwise intersection (raises where empty)."""
    return _coerce(a).intersect(b)


def where(cond, a, b):
    """Elementwise choice between intervals, like :func:`numpy.where`."""
    a, b = _coerce(a), _coerce(b)
    return Interval._make(np.where(cond, a.lo, b.lo), np.where(cond, a.hi, b.hi))


def dot(a, b, axis=-1):
    """Enclosure of ``sum(a * b, axis)`` for interval vectors (or arrays)."""
    return (_coerce(a) * _coerce(b)).sum(axis=axis)


def sqnorm(a, axis=-1):
    """Enclosure of ``sum(a**2, axis)`` (each square tight, so the lower end is exact)."""
    return _coerce(a).square().sum(axis=axis)


def sinc_at(x):
    """Enclosure of sin(x)/x at the floats ``x >= 0`` (1 at 0)."""
    x = _as_array(x)
    pos = x > 0
    if np.all(pos):
        q = Interval.point(x).sin() / x
        return Interval._make(q.lo, np.minimum(q.hi, 1.0))
    safe = Interval.point(np.where(pos, x, 1.0))
    q = safe.sin() / safe
    return Interval._make(np.where(pos, q.lo, 1.0), np.where(pos, np.minimum(q.hi, 1.0), 1.0))


def sinc(x):
    r"""Enclosure of :math:`\mathrm{sinc}(x) = \sin(x)/x` (1 at 0) over an interval.

    sinc is even and decreasing on :math:`[0, \pi]`, so on ``|x|``'s part in :math:`[0, \pi]`
    the range is spanned by the endpoint values (each enclosed by ``sin`` and ``/`` with
    outward rounding; no cancellation: ``sin`` keeps full relative accuracy near 0); the part
    beyond :math:`\pi` is enclosed by ``sin(X)/X`` in interval arithmetic (``X >= pi``).
    """
    a = _coerce(x).abs()
    lo, hi = np.broadcast_arrays(a.lo, a.hi)
    b = np.minimum(hi, _PI_LO)
    a_near = np.minimum(lo, b)
    near = Interval._make(sinc_at(b).lo, sinc_at(a_near).hi)
    far_needed = hi > _PI_LO
    if not np.any(far_needed):
        return near
    far_x = Interval._make(np.where(far_needed, np.maximum(lo, _PI_LO), 4.0),
                           np.where(far_needed, hi, 4.0))
    far = far_x.sin() / far_x
    out = where(far_needed, near.hull(far), near)
    return where(lo > _PI_LO, far, out)


def pi_interval():
    """An enclosure of pi."""
    return Interval._make(np.array(_PI_LO), np.array(_PI_HI))

