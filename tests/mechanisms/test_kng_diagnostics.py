"""Per-footpoint MCMC diagnostics of the vector stage (``mcmc._diagnostics_many``): the ESS
and R-hat of every footpoint's chains are exactly those of its own summaries diagnosed one at
a time (``rank_diagnostics``), while the rank diagnostics of all footpoints take one batched
call."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpcore.sampling as sampling
from dpcore.data import make_regression_data
from dpcore.manifolds import Euclidean, Sphere
from dpcore.mechanisms.kng import KNormGradient, regression_vectors_many
from dpcore.sampling.diagnostics import rank_diagnostics
from dpcore.sampling.mcmc import _diagnostics, _diagnostics_many, _summaries


def _one_at_a_time(manifold, reference, samples, log_values):
    """min ESS / max R-hat over the group's summaries, each diagnosed on its own."""
    if log_values.shape[1] < 4:
        return math.nan, math.nan
    ess, rhat = math.inf, -math.inf
    for s in _summaries(manifold, reference, samples, log_values):
        bulk, tail, r = rank_diagnostics(s)
        ess = min([ess, *(e for e in (bulk, tail) if not math.isnan(e))])
        rhat = rhat if math.isnan(r) else max(rhat, r)
    if not math.isfinite(ess):
        return math.nan, math.nan
    return float(ess), (float(rhat) if math.isfinite(rhat) else math.nan)


def _same(a, b):
    return all((x == y) or (math.isnan(x) and math.isnan(y)) for x, y in zip(a, b, strict=True))


@pytest.mark.parametrize("n_draws, n_samples", [(1, 40), (3, 25), (2, 3)])
def test_batched_equals_one_group_at_a_time(n_draws, n_samples):
    gen = np.random.default_rng(5)
    coords, n_groups = Euclidean(2), 7
    # Random walks with rejections (repeated draws: ties in the ranks), one constant group
    # (no summary) and one whose second coordinate never moves.
    steps = gen.standard_normal((n_groups * n_draws, n_samples, 2))
    steps *= gen.random((n_groups * n_draws, n_samples, 1)) < 0.6
    samples = np.cumsum(steps, axis=1)
    samples[:n_draws] = 1.5
    samples[n_draws:2 * n_draws, :, 1] = -0.25
    log_values = -np.linalg.norm(samples, axis=-1)
    refs = gen.standard_normal((n_groups, 2))
    got = _diagnostics_many(coords, refs, samples, log_values, n_groups)
    want = [_one_at_a_time(coords, refs[g], samples[g * n_draws:(g + 1) * n_draws],
                           log_values[g * n_draws:(g + 1) * n_draws]) for g in range(n_groups)]
    assert len(got) == n_groups
    for a, b in zip(got, want, strict=True):
        assert _same(a, b), (a, b)
    if n_samples >= 4:
        assert math.isnan(got[0][0]) and all(math.isfinite(e) for e, _ in got[1:])


def test_release_reports_the_per_footpoint_diagnostics(monkeypatch):
    """End to end: the vector stage's reported ESS and R-hat are the min and max of the
    per-footpoint ``_diagnostics`` of its own chains."""
    m = Sphere(2)
    x, y = make_regression_data(m, 12, rng=3)
    t = (x - x.min()) / (x.max() - x.min())
    feet = m.random_point(5, rng=4) * 0.1 + y[:1]
    feet /= np.linalg.norm(feet, axis=-1, keepdims=True)
    kng = KNormGradient(manifold=m, epsilon=2.0, sensitivity=0.1, chain_length=60, burn_in=40)
    runs = []
    real = sampling.metropolis_hastings

    def capture(*args, **kwargs):
        runs.append((args, real(*args, **kwargs)))
        return runs[-1][1]

    monkeypatch.setattr(sampling, "metropolis_hastings", capture)
    out = regression_vectors_many([kng], t, y, feet, np.zeros(3), 3, rng=1, tau=0.2)[0]
    (args, res), = runs
    coords, c0 = args[0], args[2]
    per = [_diagnostics(coords, c0[3 * g], res.samples[3 * g:3 * g + 3],
                        res.log_density[3 * g:3 * g + 3]) for g in range(5)]
    assert out.diagnostics["ess"] == min(e for e, _ in per if math.isfinite(e))
    assert out.diagnostics["rhat"] == max(r for _, r in per if math.isfinite(r))
    assert out.diagnostics["diagnostics_grouping"] == "per footpoint (min ESS, max R-hat)"
