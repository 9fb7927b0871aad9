"""Exact draws from the combined envelope of the whole-sphere sampler's public charts
(:mod:`dpcore.sampling.bundle_sphere`, whose module docstring gives the argument): a chart is
chosen with a dyadic public probability, a proposal drawn from its envelope and accepted with
the ratio of the target to the combined envelope. Shared by the whole-sphere sampler and by a
single chart drawing alone (:meth:`~dpcore.sampling.bundle_sphere_chart.SphereChartSampler.
sample_indices`)."""

from __future__ import annotations

import math

import numpy as np

from .._progress import report
from .bundle_sampler import accept_batch

#: Units of the dyadic chart probabilities (2^-53 each).
_UNITS = 2**53


def _chart_units(log_ms):
    """Dyadic chart probabilities (units of 2^-53, each >= 1) about proportional to
    ``exp(log_ms)``."""
    if len(log_ms) == 1:
        return [_UNITS]
    a, b = log_ms
    share = 1.0 / (1.0 + math.exp(min(b - a, 700.0)))
    first = int(min(max(math.floor(share * _UNITS), 1), _UNITS - 1))
    return [first, _UNITS - first]


def draw_from_charts(charts, size, rng, progress=None):
    """``size`` exact draws from the charts' combined envelope (module docstring): returns
    ``(chart ids, indices (size, 4), proposals)``; ``progress(have / size)`` after every batch.

    Raises
    ------
    EnvelopeViolation
        If a proposal's acceptance ratio exceeds ``1 + 1e-9``.
    """
    rng = np.random.default_rng(rng)
    log_ms = [float(c.log_m) for c in charts]
    units = _chart_units(log_ms)
    log_pi = [math.log(u / _UNITS) for u in units]
    log_big = max(m - p for m, p in zip(log_ms, log_pi, strict=True))
    shift = [m - p - log_big for m, p in zip(log_ms, log_pi, strict=True)]
    estimate = acceptance(charts)
    batch = int(min(20_000, max(16, 3 * size / max(estimate, 1e-4))))
    ids, out, have, tried = [], [], 0, 0
    while have < size:
        label = (rng.integers(0, _UNITS, batch, dtype=np.int64) >= units[0]).astype(np.int64)
        index = np.empty((batch, 4), dtype=np.int64)
        log_acc = np.full(batch, -np.inf)
        for c, chart in enumerate(charts):
            rows = np.flatnonzero(label == c)
            if rows.size == 0:
                continue
            z, idx = chart._propose(rows.size, rng)
            ok, la = chart.ratios(z, idx)
            index[rows] = idx
            log_acc[rows] = np.where(ok, la + shift[c], -np.inf)
        hits, used = accept_batch(log_acc, rng, size - have)
        tried += used
        ids.append(label[hits])
        out.append(index[hits])
        have += hits.size
        report(progress, have / size)
    return np.concatenate(ids)[:size], np.concatenate(out)[:size], tried


def acceptance(charts):
    """Estimated acceptance of the combined envelope: the largest target-mass estimate of
    the charts over the sum of their envelope masses (steers batch sizes only)."""
    log_z = max(float(c._state()[1]) for c in charts)
    log_m = float(np.logaddexp.reduce([float(c.log_m) for c in charts]))
    return float(math.exp(min(0.0, log_z - log_m)))
