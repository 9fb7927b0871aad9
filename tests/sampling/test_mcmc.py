"""Batched Riemannian random-walk Metropolis-Hastings."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dpcore.manifolds import SPD, CutLocusError, Euclidean, KendallShape, Sphere
from dpcore.sampling import MCMCResult, metropolis_hastings, sample_gaussian, sample_laplace

from .reference import P_THRESHOLD, ks2_pvalue

NORTH = np.array([0.0, 0.0, 1.0])


def _log_density(manifold, center, sigma, kind):
    if kind == "laplace":
        return lambda y: -manifold.dist(center, y) / sigma
    return lambda y: -0.5 * (manifold.dist(center, y) / sigma) ** 2


@pytest.mark.statistical
@pytest.mark.parametrize(
    "manifold,kind,sigma",
    [(Sphere(2), "laplace", 0.5), (SPD(2), "laplace", 0.5), (KendallShape(4), "gaussian", 0.3),
     (Euclidean(2), "laplace", 0.5)],  # R^2: the linear proposal (Gaussian drawn directly)
    ids=repr,
)
def test_mcmc_matches_exact_sampler(manifold, kind, sigma, rng):
    """Two-sample KS of distance-to-centre: 1000 independent chains, 4 draws each 80 steps apart
    (the distance's autocorrelation has died out by then: its lag-80 correlation is checked)."""
    center = manifold.random_point(rng=rng)
    result = metropolis_hastings(
        manifold, _log_density(manifold, center, sigma, kind), center,
        n_samples=4, n_chains=1000, burn_in=250, thin=80, rng=rng,
    )
    draws = manifold.dist(center, result.samples.reshape(-1, *manifold.point_shape))
    per_chain = draws.reshape(1000, 4)
    lag_corr = np.corrcoef(per_chain[:, 0], per_chain[:, 1])[0, 1]
    assert abs(lag_corr) < 0.12
    exact = {"laplace": sample_laplace, "gaussian": sample_gaussian}[kind]
    ref = manifold.dist(center, exact(manifold, center, sigma, 20_000, rng))
    wrong = manifold.dist(center, exact(manifold, center, 1.2 * sigma, 20_000, rng))
    assert ks2_pvalue(draws, ref) >= P_THRESHOLD
    assert ks2_pvalue(draws, wrong) < P_THRESHOLD
    assert result.rhat < 1.1
    assert 0.1 < result.acceptance_rate.mean() < 0.9


def test_result_shapes_and_dict(rng):
    sphere = Sphere(2)
    result = metropolis_hastings(
        sphere, _log_density(sphere, NORTH, 0.3, "laplace"), NORTH,
        n_samples=50, n_chains=3, burn_in=40, thin=2, rng=rng,
    )
    assert isinstance(result, MCMCResult)
    assert result.samples.shape == (3, 50, 3)
    assert result.log_density.shape == (3, 50)
    assert result.acceptance_rate.shape == (3,)
    assert result.final.shape == (3, 3)
    np.testing.assert_array_equal(result.final, result.samples[:, -1])
    assert np.all(sphere.belongs(result.samples))
    np.testing.assert_allclose(
        result.log_density, -sphere.dist(NORTH, result.samples) / 0.3, atol=1e-12
    )
    assert result.n_burn_in == 40 and result.thin == 2
    info = result.to_dict()
    json.dumps(info, allow_nan=False)
    assert info["n_chains"] == 3 and info["n_samples"] == 50
    for key in ("ess", "rhat", "step_size", "acceptance_rate_mean"):
        assert isinstance(info[key], float)


def test_step_size_is_tuned_toward_target(rng):
    plane = Euclidean(2)
    result = metropolis_hastings(
        plane, lambda y: -0.5 * np.sum(y**2, axis=-1), np.zeros(2),
        n_samples=400, n_chains=20, burn_in=400, target_accept=0.4, rng=rng,
    )
    assert result.acceptance_rate.mean() == pytest.approx(0.4, abs=0.06)
    assert result.ess > 500


def test_step_size_capped_below_injectivity_radius(rng):
    kendall = KendallShape(4)
    x = kendall.random_point(rng=rng)
    result = metropolis_hastings(
        kendall, lambda y: np.zeros(y.shape[0]), x, n_samples=20, n_chains=2, burn_in=50,
        step_size=10.0, rng=rng,
    )
    assert result.step_size <= 0.5 * kendall.injectivity_radius


def test_fixed_step_without_adaptation(rng):
    sphere = Sphere(2)
    result = metropolis_hastings(
        sphere, _log_density(sphere, NORTH, 0.3, "laplace"), NORTH, n_samples=10,
        burn_in=20, step_size=0.123, adapt=False, rng=rng,
    )
    assert result.step_size == 0.123


def test_reproducible_and_batch_init():
    sphere = Sphere(2)
    init = sphere.random_point(4, rng=0)
    runs = [
        metropolis_hastings(sphere, _log_density(sphere, NORTH, 0.5, "gaussian"), init,
                            n_samples=20, n_chains=4, burn_in=10, rng=seed)
        for seed in (7, 7, 8)
    ]
    np.testing.assert_array_equal(runs[0].samples, runs[1].samples)
    assert not np.allclose(runs[0].samples, runs[2].samples)


def test_cut_locus_and_nan_proposals_are_rejected(rng):
    sphere = Sphere(2)

    def log_density(y):
        if np.any(y[..., 2] < -0.5):
            raise CutLocusError("forbidden cap")
        out = -sphere.dist(NORTH, y)
        return np.where(y[..., 0] > 0.6, np.nan, out)

    result = metropolis_hastings(
        sphere, log_density, NORTH, n_samples=300, n_chains=8, burn_in=100, step_size=1.5,
        rng=rng,
    )
    pts = result.samples
    assert np.all(pts[..., 2] >= -0.5)
    assert np.all(pts[..., 0] <= 0.6)
    assert np.all(np.isfinite(result.log_density))


def test_zero_density_start_moves_into_support(rng):
    plane = Euclidean(1)

    def log_density(y):
        return np.where(np.abs(y[:, 0] - 1.5) < 1.0, 0.0, -np.inf)

    result = metropolis_hastings(
        plane, log_density, np.zeros(1), n_samples=50, n_chains=4, burn_in=300, step_size=1.0,
        rng=rng,
    )
    assert np.all(np.abs(result.samples[..., 0] - 1.5) < 1.0)


def test_errors():
    sphere = Sphere(2)
    ld = _log_density(sphere, NORTH, 0.5, "laplace")
    with pytest.raises(ValueError, match="`init`"):
        metropolis_hastings(sphere, ld, np.zeros((2, 3)), n_samples=5, n_chains=3)
    with pytest.raises(ValueError, match="shape"):
        metropolis_hastings(sphere, lambda y: 0.0, NORTH, n_samples=5, n_chains=3, burn_in=2)
    with pytest.raises(ValueError, match="`target_accept`"):
        metropolis_hastings(sphere, ld, NORTH, n_samples=5, target_accept=1.5)
    with pytest.raises(ValueError, match="`n_samples`"):
        metropolis_hastings(sphere, ld, NORTH, n_samples=0)
    with pytest.raises(TypeError, match="callable"):
        metropolis_hastings(sphere, None, NORTH, n_samples=5)


def test_non_homogeneous_manifold_is_refused():
    class Lumpy(Euclidean):
        is_homogeneous = False

    with pytest.raises(NotImplementedError, match="Hastings correction"):
        metropolis_hastings(Lumpy(2), lambda y: np.zeros(len(y)), np.zeros(2), n_samples=5)


# ------------------------------------------------------------------------ step-size groups
@pytest.mark.statistical
def test_groups_tune_their_own_step_and_match_exact_samplers(rng):
    """Two groups whose targets differ in scale by 80: each tunes its own step size toward the
    target acceptance, and each group's draws match the exact sampler (two-sample KS)."""
    m = Sphere(2)
    sigmas = np.array([0.005, 0.4])
    n_per = 600
    groups = np.repeat([0, 1], n_per)
    sigma_chain = sigmas[groups]
    result = metropolis_hastings(
        m, lambda y: -m.dist(NORTH, y) / sigma_chain, NORTH, n_samples=4,
        n_chains=2 * n_per, burn_in=250, thin=80, rng=rng, groups=groups,
        step_size=sigmas,
    )
    assert result.step_size.shape == (2,)
    assert result.step_size[1] > 10 * result.step_size[0]
    assert json.dumps(result.to_dict())
    for g, sigma in enumerate(sigmas):
        rate = result.acceptance_rate[groups == g].mean()
        assert 0.25 < rate < 0.55
        draws = m.dist(NORTH, result.samples[groups == g].reshape(-1, 3))
        exact = m.dist(NORTH, sample_laplace(m, NORTH, sigma, size=4 * n_per, rng=rng))
        assert ks2_pvalue(draws, exact) > P_THRESHOLD
        sub = result.subset(m, np.flatnonzero(groups == g), group=g)
        assert sub.step_size == result.step_size[g]
        assert sub.samples.shape == (n_per, 4, 3) and np.isfinite(sub.ess)


def test_one_group_is_the_ungrouped_sampler():
    m = Sphere(2)

    def run(**kw):
        return metropolis_hastings(m, lambda y: -m.dist(NORTH, y) / 0.3, NORTH, n_samples=30,
                                   n_chains=5, burn_in=40, rng=3, **kw)

    a, b = run(), run(groups=np.zeros(5, dtype=int))
    np.testing.assert_array_equal(a.samples, b.samples)
    assert a.step_size == b.step_size and np.ndim(b.step_size) == 0


def test_group_labels_are_validated():
    m = Euclidean(1)
    kw = dict(n_samples=5, n_chains=4, burn_in=5, rng=0)
    with pytest.raises(ValueError, match="one per chain"):
        metropolis_hastings(m, lambda y: -np.abs(y[:, 0]), [0.0], groups=[0, 1], **kw)
    with pytest.raises(ValueError, match="every label"):
        metropolis_hastings(m, lambda y: -np.abs(y[:, 0]), [0.0], groups=[0, 0, 2, 2], **kw)
    with pytest.raises(ValueError, match="one per group"):
        metropolis_hastings(m, lambda y: -np.abs(y[:, 0]), [0.0], groups=[0, 0, 1, 1],
                            step_size=[0.1, 0.2, 0.3], **kw)
