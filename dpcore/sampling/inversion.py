r"""Fast sampling of a 1-D log-concave law by numerical inversion of its CDF (not exact).

For Monte Carlo work where exactness is not the guarantee -- studies, accuracy predictions,
the Monte Carlo µ of the Riemannian Gaussian and its calibration -- a radius is drawn as
:math:`X = \tilde F^{-1}(U)` with :math:`U` uniform and :math:`\tilde F^{-1}` a piecewise cubic
approximation of the inverse CDF. This is the approach of Hörmann and Leydold, "Continuous
random variate generation by fast numerical inversion" (ACM TOMACS 13(4), 2003): tabulate the
CDF on a grid, interpolate the inverse CDF on each cell by the cubic Hermite polynomial whose
end slopes are :math:`1/f`, and split every cell whose *u-error*
:math:`|F(\tilde F^{-1}(u)) - u|` exceeds a tolerance. Here:

- the grid starts at the mode and at the points where :math:`\log f` has dropped by fixed
  amounts below its peak (so it follows the law's scale), and ends where it has dropped by
  :data:`DROP`: by log-concavity the mass beyond is below :math:`e^{-72}` of the total;
- cell masses come from 10-point Gauss-Legendre quadrature, and a cell is split until the rule
  agrees with the sum over its two halves to :math:`10^{-14}` of the total mass;
- a cell's cubic is used only when it is monotone (Fritsch and Carlson's sufficient condition
  :math:`\alpha^2 + \beta^2 \le 9` on the slopes relative to the secant), otherwise the
  inverse is linear there (as where :math:`f = 0` at a cell's end, e.g. :math:`\sin r` at 0);
- the u-error is measured at five points of every cell against the quadrature CDF and cells
  are split until it is below ``tol`` (default :data:`TOL`) everywhere.

The law drawn is then within about ``tol`` of the exact one in Kolmogorov distance; any
expectation of a function of bounded variation ``V`` (on the radius) moves by at most about
``V * tol``, far below the Monte Carlo error of any study here. Releases never use it: they
draw radii exactly (:mod:`dpcore.sampling._logconcave`). A draw costs one uniform, a guide
table look-up (Chen and Asau) and a cubic, all vectorized.
"""

from __future__ import annotations

import math

import numpy as np

#: Largest u-error :math:`|F(\tilde F^{-1}(u)) - u|` accepted on a cell (checked at five points).
TOL = 1e-10
#: Drop of ``log f`` below its peak beyond which the tails are cut (relative mass < e^-72).
DROP = 72.0
#: Drops of ``log f`` at which the first grid is placed, on each side of the mode.
_LEVELS = np.array([0.25, 1.0, 2.5, 5.0, 9.0, 15.0, 24.0, 36.0, 52.0, DROP])
_GL_X, _GL_W = np.polynomial.legendre.leggauss(10)
_CHECK_T = np.array([0.1, 0.3, 0.5, 0.7, 0.9])
_QUAD_RTOL = 1e-14
_MAX_ROUNDS = 80
_MAX_STEPS = 2000


def _scalar(fun, x):
    with np.errstate(all="ignore"):
        return float(fun(np.float64(x)))


def _find_mode(dlogf, lo, hi, scale):
    """Mode of a log-concave density on ``[lo, hi]`` by bisection on the sign of ``dlogf``."""
    if _scalar(dlogf, lo) <= 0:
        return lo
    if math.isfinite(hi) and _scalar(dlogf, hi) >= 0:
        return hi
    a, b = lo, hi
    if not math.isfinite(hi):
        b = lo + scale
        for _ in range(_MAX_STEPS):
            if _scalar(dlogf, b) <= 0:
                break
            a, b = b, lo + 2.0 * (b - lo)
        else:
            raise ValueError("the density does not decay: it has no mode on the interval.")
    for _ in range(200):
        m = 0.5 * (a + b)
        if not a < m < b:
            break
        if _scalar(dlogf, m) > 0:
            a = m
        else:
            b = m
    return 0.5 * (a + b)


def _level_points(logf, inner, outer, targets):
    """For each target, the point between ``inner`` (log f above it) and ``outer`` where
    ``log f`` falls to it; ``outer`` for the targets ``log f`` does not fall to before it."""
    a = np.full(targets.shape, float(inner))
    b = np.full(targets.shape, float(outer))
    for _ in range(90):
        m = 0.5 * (a + b)
        with np.errstate(all="ignore"):
            above = np.asarray(logf(m), dtype=float) >= targets
        a, b = np.where(above, m, a), np.where(above, b, m)
    return b


class InversionSampler:
    r"""Draws from a log-concave density :math:`f \propto e^{\ell}` on ``[lo, hi]`` by inversion.

    Parameters
    ----------
    logf, dlogf : callable
        Vectorized :math:`\ell` and :math:`\ell'` (``logf`` may be ``-inf`` at an end).
    lo, hi : float
        Interval; ``hi`` may be ``inf`` if the density decays there.
    scale : float
        Rough width of the density (a starting point for the searches).
    tol : float, optional
        Largest u-error accepted (see the module docstring).

    Attributes
    ----------
    mode : float
        Where the density peaks.
    nodes : numpy.ndarray
        Grid of the inverse CDF (cell ends), from the lower to the upper cut.
    """

    def __init__(self, logf, dlogf, lo, hi, *, scale, tol=TOL):
        lo, hi, scale = float(lo), float(hi), float(scale)
        if not hi > lo:
            raise ValueError(f"empty interval [{lo}, {hi}].")
        self.logf, self.tol = logf, float(tol)
        self.mode = _find_mode(dlogf, lo, hi, scale)
        self.log_peak = _scalar(logf, self.mode)
        if not math.isfinite(self.log_peak):
            raise ValueError("the density is not finite at its mode.")
        self._build(self._first_grid(lo, hi, scale))

    # ------------------------------------------------------------------ construction
    def _density(self, x):
        with np.errstate(all="ignore"):
            f = np.exp(np.asarray(self.logf(x), dtype=float) - self.log_peak)
        return np.where(np.isnan(f), 0.0, f)

    def _mass(self, a, b):
        """Gauss-Legendre integrals of the peak-scaled density over the intervals [a, b]."""
        half, mid = 0.5 * (b - a), 0.5 * (a + b)
        values = self._density(mid[..., None] + half[..., None] * _GL_X)
        return half * (values @ _GL_W)

    def _first_grid(self, lo, hi, scale):
        targets = self.log_peak - _LEVELS
        outer = hi
        if not math.isfinite(hi):
            outer = self.mode + scale
            for _ in range(_MAX_STEPS):
                if _scalar(self.logf, outer) < self.log_peak - DROP:
                    break
                outer = self.mode + 2.0 * (outer - self.mode)
            else:
                raise ValueError("the density does not decay: it is not integrable.")
        right = _level_points(self.logf, self.mode, outer, targets)
        left = _level_points(self.logf, self.mode, lo, targets)
        pts = np.unique(np.concatenate([left, [self.mode], right]))
        gaps = np.diff(pts)
        grid = (pts[:-1, None] + gaps[:, None] * (np.arange(4) / 4.0)).ravel()
        return np.unique(np.append(grid, pts[-1]))

    def _cells(self, a, b, fa, fb):
        """Mass, quadrature discrepancy, Hermite slopes and u-error (in units of the total
        mass, which they do not depend on) of the cells [a, b] with end densities fa, fb."""
        mid = 0.5 * (a + b)
        mass = self._mass(a, mid) + self._mass(mid, b)
        dx = b - a
        with np.errstate(all="ignore"):
            alpha, beta = mass / (fa * dx), mass / (fb * dx)
        cubic = np.isfinite(alpha) & np.isfinite(beta) & (alpha**2 + beta**2 <= 9.0)
        alpha, beta = np.where(cubic, alpha, 1.0), np.where(cubic, beta, 1.0)
        t = _CHECK_T[None, :]
        y = t * (alpha[:, None] + t * ((3.0 - 2.0 * alpha - beta)[:, None]
                                       + t * (alpha + beta - 2.0)[:, None]))
        x_t = a[:, None] + dx[:, None] * np.clip(y, 0.0, 1.0)
        err = np.abs(self._mass(np.broadcast_to(a[:, None], x_t.shape), x_t)
                     - t * mass[:, None])
        return {"a": a, "b": b, "fa": fa, "fb": fb, "mass": mass, "alpha": alpha,
                "beta": beta, "quad": np.abs(self._mass(a, b) - mass), "err": err.max(axis=1)}

    def _build(self, x):
        f = self._density(x)
        cells = self._cells(x[:-1], x[1:], f[:-1], f[1:])
        for _ in range(_MAX_ROUNDS):
            total = float(np.sum(cells["mass"]))
            a, b = cells["a"], cells["b"]
            mid = 0.5 * (a + b)
            split = (cells["quad"] > _QUAD_RTOL * total) | (cells["err"] > self.tol * total)
            split &= (a < mid) & (mid < b)  # cells too small to split stay as they are
            if not np.any(split):
                self._tabulate(cells, total)
                return
            m, fm = mid[split], self._density(mid[split])
            keep = {k: v[~split] for k, v in cells.items()}
            left = self._cells(a[split], m, cells["fa"][split], fm)
            right = self._cells(m, b[split], fm, cells["fb"][split])
            order = np.argsort(np.concatenate([keep["a"], left["a"], right["a"]]))
            cells = {k: np.concatenate([keep[k], left[k], right[k]])[order] for k in cells}
        raise RuntimeError(f"numerical inversion did not reach the u-error {self.tol!r}.")

    def _tabulate(self, cells, total):
        self.nodes = np.append(cells["a"], cells["b"][-1])
        cdf = np.concatenate([[0.0], np.cumsum(cells["mass"]) / total])
        cdf[-1] = 1.0
        self._cdf = cdf
        dF, dx = np.diff(cdf), np.diff(self.nodes)
        alpha, beta = cells["alpha"], cells["beta"]
        # With t = (u - F_i) / dF_i in [0, 1], x = x_i + t (c1 + t (c2 + t c3)) is the Hermite
        # cubic with end slopes dF / f, i.e. x_i + dx (alpha t + (3 - 2 alpha - beta) t^2 +
        # (alpha + beta - 2) t^3), monotone from x_i to x_{i+1} (Fritsch-Carlson).
        self._coef = (cdf[:-1], np.where(dF > 0, 1.0 / np.where(dF > 0, dF, 1.0), 0.0),
                      self.nodes[:-1], dx * alpha, dx * (3.0 - 2.0 * alpha - beta),
                      dx * (alpha + beta - 2.0))
        # Guide table (Chen and Asau): bucket k of [0, 1) names the cell holding it, or -1 when
        # a cell boundary falls inside the bucket (the draws there are searched for).
        size = 1 << (32 * dF.size - 1).bit_length()  # a power of 2: u * size is exact, < size
        edges = np.arange(size + 1) / size
        first = np.searchsorted(cdf, edges[:-1], side="right") - 1
        last = np.searchsorted(cdf, edges[1:], side="left") - 1
        self._guide = np.where(first == last, first, -1)

    def quantile(self, u):
        r"""The approximate inverse CDF :math:`\tilde F^{-1}(u)` for ``u`` in [0, 1]."""
        u = np.asarray(u, dtype=float)
        flat = u.ravel()
        k = (flat * self._guide.size).astype(np.intp)
        i = self._guide[np.minimum(k, self._guide.size - 1, out=k)]  # u = 1 is the last bucket
        mixed = np.flatnonzero(i < 0)
        if mixed.size:
            i[mixed] = np.searchsorted(self._cdf, flat[mixed], side="right") - 1
        i = np.clip(i, 0, self._cdf.size - 2)
        cdf, inv_dF, x0, c1, c2, c3 = (c[i] for c in self._coef)
        t = np.subtract(flat, cdf, out=cdf)
        t *= inv_dF
        x = np.multiply(c3, t, out=c3)  # Horner's scheme in place: x0 + t (c1 + t (c2 + t c3))
        x += c2
        x *= t
        x += c1
        x *= t
        x += x0
        return np.clip(x, self.nodes[0], self.nodes[-1], out=x).reshape(u.shape)

    def sample(self, n, rng):
        """``n`` draws (one uniform each)."""
        return self.quantile(rng.random(n))
