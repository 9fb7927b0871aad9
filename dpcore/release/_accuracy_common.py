"""Shared pieces of the accuracy predictions (:mod:`dpcore.release.accuracy`).

The model data set of a regression prediction (covariates evenly spread, responses at the
public centre), weighted quantiles of an importance sample, the batch size of gradient
evaluations, and the log-scale bisection behind the "smallest ε" and "largest σ" searches.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["MIN_ESS"]

#: Smallest effective sample size of a prediction.
MIN_ESS = 200
#: Gradient terms evaluated per batch (memory: a batch holds ``terms x point size`` floats).
_TERMS_PER_BATCH = 2_000_000


def _model_data(manifold, n, center):
    t = (np.arange(n) + 0.5) / n
    y = np.broadcast_to(np.asarray(center, dtype=float), (n, *manifold.point_shape)).copy()
    return t, y


def _weighted_quantiles(values, weights, qs):
    order = np.argsort(values)
    cum = np.cumsum(weights[order])
    cum /= cum[-1]
    idx = np.minimum(np.searchsorted(cum, qs), values.size - 1)
    return [float(values[order][i]) for i in idx]


def _log_bisect(is_good, *, good, bad, rel_tol, max_iter):
    """Geometric bisection between a value where ``is_good`` holds (``good``) and one where it
    does not (``bad``), for a monotone ``is_good``; returns the last good value, within a
    factor ``1 + rel_tol`` of the boundary."""
    for _ in range(max_iter):
        mid = math.sqrt(good * bad)
        if is_good(mid):
            good = mid
        else:
            bad = mid
        if max(good, bad) / min(good, bad) < 1.0 + rel_tol:
            break
    return good


def _smallest_epsilon(err, target, bounds):
    """The smallest ε in ``bounds`` with ``err(ε) <= target`` for a decreasing ``err``, by
    bisection in log ε, rounded up to 3 significant digits; None when ``bounds[1]`` misses."""
    lo, hi = (float(b) for b in bounds)
    if err(hi) > target:
        return None
    if err(lo) <= target:
        return lo
    hi = _log_bisect(lambda eps: err(eps) <= target, good=hi, bad=lo, rel_tol=1e-3,
                     max_iter=40)
    step = math.floor(math.log10(hi)) - 2
    return round(math.ceil(hi / 10.0**step) * 10.0**step, max(0, -step))
