"""Exact rejection sampling from a log-concave density on an interval.

The envelope is the minimum of tangent lines of ``log f`` (Gilks & Wild's adaptive rejection
sampling, without the adaptation): by concavity every tangent line lies above ``log f``, so the
piecewise-exponential hull is a valid envelope wherever the breakpoints between tangents are put.
Exactness therefore needs only that ``log f`` is concave and its derivative correct; the choice of
tangent points affects only the efficiency. They are put at the mode and where ``log f`` has
dropped by fixed amounts (:data:`LEVELS`) on each side, which keeps the acceptance rate high for
any scale of the density (from sigma = 1e-8 to nearly flat).
"""

from __future__ import annotations

import math

import numpy as np

#: Drops of ``log f`` below its maximum at which tangent points are placed (on each side).
LEVELS = (
    0.02, 0.1, 0.25, 0.5, 0.8, 1.2, 1.7, 2.3, 3.0, 4.0, 5.5, 7.5,
    10.0, 13.5, 18.0, 24.0, 32.0, 42.0, 55.0, 72.0,
)

#: Largest excess of ``log f`` over the hull tolerated as rounding before an error is raised.
HULL_TOL = 1e-7

_MAX_STEPS = 2000


def _scalar(fun, x):
    with np.errstate(all="ignore"):
        return float(fun(np.float64(x)))


def _root(fun, a, b):
    """Root of ``fun`` between ``a`` and ``b`` (values of opposite signs), to relative accuracy."""
    fa, fb = _scalar(fun, a), _scalar(fun, b)
    if not (np.isfinite(fa) and np.isfinite(fb)):
        return 0.5 * (a + b)  # any point serves as a tangent point
    if fa == 0.0:
        return a
    if fb == 0.0:
        return b
    from scipy.optimize import brentq  # lazy: scipy.optimize costs several times numpy's import

    return brentq(lambda t: _scalar(fun, t), a, b, xtol=1e-10 * abs(b - a), maxiter=200)


class LogConcaveSampler:
    r"""Exact sampler for a density :math:`f \propto e^{\ell}` on ``[lo, hi]``, ``\ell`` concave.

    Parameters
    ----------
    logf, dlogf : callable
        Vectorized :math:`\ell` and :math:`\ell'`. ``logf`` may be ``-inf`` at an endpoint and
        ``dlogf`` infinite there.
    lo, hi : float
        Interval; ``hi`` may be ``inf`` if the density decays there.
    scale : float
        Rough width of the density (only a starting point for the searches).
    """

    def __init__(self, logf, dlogf, lo, hi, scale):
        self.logf = logf
        self.dlogf = dlogf
        self.lo = float(lo)
        self.hi = float(hi)
        self.scale = float(scale)
        if not self.hi > self.lo:
            raise ValueError(f"empty interval [{self.lo}, {self.hi}].")
        self.mode = self._find_mode()
        self.log_peak = _scalar(logf, self.mode)
        self._build_hull(self._tangent_points())

    # ------------------------------------------------------------------ construction
    def _start(self):
        width = self.hi - self.lo
        return self.lo + (min(self.scale, 0.5 * width) if np.isfinite(width) else self.scale)

    def _find_mode(self):
        g = self.dlogf
        lo, hi = self.lo, self.hi
        if _scalar(g, lo) <= 0:
            return lo
        if np.isfinite(hi) and _scalar(g, hi) >= 0:
            return hi
        x = self._start()
        if _scalar(g, x) > 0:
            a = x
            for _ in range(_MAX_STEPS):
                b = lo + 2.0 * (a - lo) if not np.isfinite(hi) else 0.5 * (a + hi)
                if _scalar(g, b) <= 0:
                    break
                a = b
            else:
                raise ValueError("the density does not decay: it has no mode on the interval.")
        else:
            b = x
            for _ in range(_MAX_STEPS):
                a = lo + 0.5 * (b - lo)
                if a == lo or _scalar(g, a) > 0:
                    break
                b = a
        return _root(g, a, b)

    def _right_points(self):
        points, prev, step = [], self.mode, self.scale
        for level in LEVELS:
            target = self.log_peak - level
            h = lambda t, target=target: self.logf(t) - target
            if np.isfinite(self.hi) and _scalar(h, self.hi) >= 0:
                break
            for _ in range(_MAX_STEPS):
                x_new = min(prev + step, self.hi)
                if _scalar(h, x_new) < 0:
                    break
                prev, step = x_new, 2.0 * step
            else:
                raise ValueError("the density does not decay: it is not integrable.")
            x = _root(h, prev, x_new)
            points.append(x)
            prev, step = x, max(x_new - x, 1e-300)
        return points

    def _left_points(self):
        points, prev = [], self.mode
        for level in LEVELS:
            target = self.log_peak - level
            h = lambda t, target=target: self.logf(t) - target
            if _scalar(h, self.lo) >= 0:
                break
            for _ in range(_MAX_STEPS):
                x_new = self.lo + 0.5 * (prev - self.lo)
                if x_new == self.lo or _scalar(h, x_new) < 0:
                    break
                prev = x_new
            x = _root(h, x_new, prev)
            points.append(x)
            prev = x
        return points

    def _tangent_points(self):
        pts = [self.mode, *self._right_points(), *self._left_points()]
        pts = np.unique(np.clip(pts, self.lo, self.hi))
        with np.errstate(all="ignore"):
            f = np.asarray(self.logf(pts), dtype=float)
            g = np.asarray(self.dlogf(pts), dtype=float)
        keep = np.isfinite(f) & np.isfinite(g)
        if not np.any(keep):
            raise ValueError("no finite tangent point: the density is degenerate.")
        return pts[keep], f[keep], g[keep]

    def _build_hull(self, tangents):
        x, f, g = tangents
        # Breakpoints between consecutive tangents: their intersection, kept inside the cell (any
        # breakpoint gives a valid envelope, see the module docstring).
        with np.errstate(all="ignore"):
            z = x[:-1] + (f[1:] - f[:-1] - g[1:] * (x[1:] - x[:-1])) / (g[:-1] - g[1:])
        z = np.where(np.isfinite(z), z, 0.5 * (x[:-1] + x[1:]))
        z = np.clip(z, x[:-1], x[1:])
        a = np.concatenate([[self.lo], z])
        b = np.concatenate([z, [self.hi]])
        if not np.isfinite(self.hi) and g[-1] >= 0:
            raise ValueError("the density does not decay at infinity: it is not integrable.")
        self._x, self._f, self._g, self._a, self._b = x, f, g, a, b
        log_w = np.array([self._log_mass(*seg) for seg in zip(a, b, x, f, g, strict=True)])
        w = np.exp(log_w - np.max(log_w))
        self._cum = np.cumsum(w) / np.sum(w)
        self._cum[-1] = 1.0
        self._log_total = float(np.max(log_w) + np.log(np.sum(w)))
        # Guide table (Chen & Asau): _guide[k] is the first segment whose cumulative weight
        # exceeds k / size, so locating u needs a lookup and rarely a step or two.
        size = 8 * self._cum.size
        self._guide = np.searchsorted(self._cum, np.arange(size) / size, side="right")
        # Squeeze (Gilks & Wild): the chords between consecutive tangent points lie below log f
        # by concavity. Segment j holds tangent point x_j; left / right chord slopes from it.
        with np.errstate(all="ignore"):
            chord = np.diff(f) / np.diff(x)
        self._chord_left = np.concatenate([[np.nan], chord])
        self._chord_right = np.concatenate([chord, [np.nan]])

    @staticmethod
    def _log_mass(a, b, x0, f0, g0):
        """log of the integral of exp(f0 + g0 (t - x0)) over [a, b]."""
        width = b - a
        if width <= 0:
            return -np.inf
        if not np.isfinite(width):
            return f0 + g0 * (a - x0) - math.log(-g0)
        top = f0 + g0 * ((b if g0 > 0 else a) - x0)
        t = abs(g0) * width
        # int_0^width e^{-|g| s} ds = width * (1 - e^{-t}) / t
        factor = 1.0 if t < 1e-300 else -math.expm1(-t) / t
        return top + math.log(width) + math.log(factor)

    # ------------------------------------------------------------------ sampling
    @property
    def log_envelope_mass(self):
        """log of the envelope's total mass (in units of ``exp(logf)``)."""
        return self._log_total

    def _segments(self, u):
        seg = self._guide[(u * self._guide.size).astype(np.intp)]
        while True:
            behind = np.flatnonzero(self._cum[seg] <= u)
            if behind.size == 0:
                return seg
            seg[behind] += 1

    def propose(self, n, rng):
        """``n`` proposals with an acceptance mask (i.i.d. draws are the accepted ones)."""
        seg = self._segments(rng.random(n))
        a, b = self._a[seg], self._b[seg]
        x0, f0, g0 = self._x[seg], self._f[seg], self._g[seg]
        width = b - a
        absg = np.abs(g0)
        u = rng.random(n)
        with np.errstate(all="ignore"):
            # Inverse CDF of the density proportional to e^{-|g| s} on [0, width], s measured
            # from the segment's higher end.
            q = np.where(np.isfinite(width), -np.expm1(-absg * width), 1.0)
            s = -np.log1p(-u * q) / absg
            s = np.where(absg * width < 1e-12, u * width, s)
            t = np.where(g0 > 0, b - s, a + s)
            t = np.clip(t, a, b)
            offset = t - x0
            hull = f0 + g0 * offset
            slope = np.where(offset < 0, self._chord_left[seg], self._chord_right[seg])
            squeeze = np.where(np.isnan(slope), -np.inf, f0 + slope * offset)
        log_u = -rng.standard_exponential(n)
        accept = log_u < squeeze - hull
        todo = np.flatnonzero(~accept)
        if todo.size:
            with np.errstate(all="ignore"):
                excess = np.asarray(self.logf(t[todo]), dtype=float) - hull[todo]
            excess = np.where(np.isnan(excess), -np.inf, excess)
            bad = excess > HULL_TOL * (1.0 + np.abs(hull[todo]))
            if np.any(bad):
                raise RuntimeError(
                    "log-concave envelope violated (the density is not log-concave or its "
                    f"derivative is wrong) at t = {t[todo][bad][0]!r}."
                )
            accept[todo] = log_u[todo] < excess
        return t, accept

    def sample(self, n, rng):
        """``n`` i.i.d. draws."""
        return fill_by_rejection(lambda m: self.propose(m, rng), n, initial_rate=0.9)


def fill_by_rejection(propose, n, *, initial_rate=0.5, min_rate=1e-7, max_batch=2_000_000):
    """Collect the first ``n`` accepted proposals of an i.i.d. proposal stream.

    ``propose(m)`` returns ``(values, accept)`` for ``m`` proposals; values are stacked along the
    first axis. Batches are sized from the acceptance rate seen so far, so only a few rounds run.

    Raises
    ------
    RuntimeError
        If the acceptance rate is below ``min_rate`` (the loop would not end in reasonable time).
    """
    chunks, have, tried, accepted = [], 0, 0, 0
    rate = initial_rate
    while have < n:
        need = n - have
        m = int(min(max_batch, math.ceil(1.2 * need / rate) + 16))
        values, ok = propose(m)
        tried += m
        accepted += int(np.count_nonzero(ok))
        take = values[ok][:need]
        chunks.append(take)
        have += take.shape[0]
        rate = max(accepted, 0.5) / tried
        if have < n and tried > 100_000 and rate < min_rate:
            raise RuntimeError(
                f"rejection sampling accepts only {accepted} of {tried} proposals; the support "
                "is too small a part of the distribution to sample it this way."
            )
    if not chunks:
        values, _ = propose(0)
        return values[:0]
    return np.concatenate(chunks, axis=0)
