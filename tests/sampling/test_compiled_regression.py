"""The compiled (numba) Metropolis-Hastings chains of geodesic regression on SPD(2) and
KendallShape(k).

Oracles, as for the sphere (``test_compiled_sphere.py``): the numpy log densities of
:mod:`dpcore.mechanisms.kng` (captured from the real mechanism functions), the numpy sampler on
the same random numbers (same trajectories up to rounding), and the release's record of which
path ran.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dpcore.sampling as sampling
from dpcore.data import make_regression_data
from dpcore.manifolds import SPD, Euclidean, Hyperbolic, KendallShape
from dpcore.mechanisms.base import Ball
from dpcore.mechanisms.kng import (
    KNormGradient,
    regression_footpoints_many,
    regression_joint_many,
    regression_vectors_many,
)
from dpcore.release import private_geodesic_regression
from dpcore.sampling import _compiled_sphere, mcmc

pytestmark = pytest.mark.skipif(not _compiled_sphere.NUMBA_AVAILABLE,
                                reason="numba is not installed: the compiled path is off")

SPACES = {"SPD(2)": SPD(2), "Kendall(4)": KendallShape(4), "Kendall(6)": KendallShape(6)}
KINDS = ("joint", "footpoint", "vector")


class _Captured(Exception):
    pass


def _problem(m, n=40, seed=0):
    data = make_regression_data(m, n, rng=seed)
    rng = np.random.default_rng(seed)
    p_hat = data.y[0]
    v_hat = 0.3 * m.random_tangent(p_hat, rng)
    return data.x, data.y, p_hat, v_hat


def capture(m, kind, monkeypatch, *, tau=0.2, n_chains=4, max_norm=None, seed=0,
            epsilons=(1.0,), ball=None):
    """The (manifold, log density, init, options) the mechanism hands to the sampler."""
    t, y, p_hat, v_hat = _problem(m, seed=seed)
    mech = [KNormGradient(manifold=m, epsilon=eps, sensitivity=0.05, chain_length=100,
                          burn_in=200) for eps in epsilons]
    seen = {}

    def fake(manifold, log_density, init, **options):
        seen.update(manifold=manifold, log_density=log_density, init=init, options=options)
        raise _Captured

    monkeypatch.setattr(sampling, "metropolis_hastings", fake)
    support = None if ball is None else Ball.make(m, p_hat, ball)
    with pytest.raises(_Captured):
        if kind == "joint":
            regression_joint_many(mech, t, y, p_hat, v_hat, size=n_chains, rng=0, tau=tau,
                                  max_norm=max_norm, support=support)
        elif kind == "footpoint":
            regression_footpoints_many(mech, t, y, p_hat, v_hat, size=n_chains, rng=0,
                                       tau=tau, support=support)
        else:
            n_feet = 2 * len(mech)
            feet = m.exp(p_hat, 0.2 * m.random_tangent(np.broadcast_to(
                p_hat, (n_feet, *m.point_shape)), rng=3))
            regression_vectors_many(mech, t, y, feet, v_hat, n_chains // 2, rng=0, tau=tau,
                                    max_norm=max_norm)
    monkeypatch.undo()
    return seen


def _numpy_only(log_density):
    """The same log density without its description: the sampler takes the numpy path."""
    return lambda z: log_density(z)


def _random_states(m, kind, seen, n, rng):
    if kind == "vector":
        return rng.normal(scale=0.5, size=(n, m.dim))
    center = seen["init"] if kind == "footpoint" else seen["init"][0]
    p = m.exp(np.broadcast_to(center, (n, *m.point_shape)),
              0.4 * m.random_tangent(np.broadcast_to(center, (n, *m.point_shape)), rng))
    if kind == "footpoint":
        return p
    v = m.proj_tangent(p, rng.normal(scale=0.6, size=(n, *m.point_shape)))
    v[0] = 0.0  # |v| = 0: the numpy closed forms hand over (Kendall) or take the flat limit
    return seen["manifold"].join(p, v)


@pytest.mark.parametrize("space", SPACES)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("tau", [0.2, None], ids=["clipped", "unclipped"])
def test_compiled_log_density_matches_numpy(space, kind, tau, monkeypatch):
    m = SPACES[space]
    seen = capture(m, kind, monkeypatch, tau=tau, n_chains=8,
                   max_norm=1.0 if kind != "footpoint" else None)
    chain = _compiled_sphere.compiled_chain(seen["manifold"], seen["log_density"], 8)
    assert chain is not None
    rng = np.random.default_rng(1)
    for _ in range(4):
        z = _random_states(m, kind, seen, 8, rng)
        expected = seen["log_density"](z)
        got = chain.evaluate(z)
        finite = np.isfinite(expected)
        np.testing.assert_array_equal(np.isfinite(got), finite)
        np.testing.assert_allclose(got[finite], expected[finite], rtol=1e-10, atol=1e-12)
        assert finite.any()
    z[1] = np.nan
    assert chain.evaluate(z)[1] == -np.inf


def test_spd_joint_target_keeps_its_footpoint_ball(monkeypatch):
    m = SPACES["SPD(2)"]
    seen = capture(m, "joint", monkeypatch, n_chains=8, max_norm=2.0, ball=0.3)
    chain = _compiled_sphere.compiled_chain(seen["manifold"], seen["log_density"], 8)
    assert chain is not None
    z = _random_states(m, "joint", seen, 8, np.random.default_rng(2))
    expected = seen["log_density"](z)
    assert 0 < np.isfinite(expected).sum() < 8  # states inside and outside the ball
    got = chain.evaluate(z)
    np.testing.assert_array_equal(np.isfinite(got), np.isfinite(expected))
    finite = np.isfinite(expected)
    np.testing.assert_allclose(got[finite], expected[finite], rtol=1e-10)


def test_uncovered_targets_keep_the_numpy_path(monkeypatch):
    # SPD(3) has no compiled kernels; a footpoint ball on the shape space neither
    seen = capture(SPD(3), "joint", monkeypatch)
    assert _compiled_sphere.compiled_chain(seen["manifold"], seen["log_density"], 4) is None
    m = SPACES["Kendall(4)"]
    seen = capture(m, "joint", monkeypatch, ball=0.5)
    assert _compiled_sphere.compiled_chain(seen["manifold"], seen["log_density"], 4) is None
    seen = capture(m, "joint", monkeypatch)
    assert _compiled_sphere.compiled_chain(seen["manifold"], seen["log_density"], 4) is not None
    assert _compiled_sphere.compiled_chain(m, seen["log_density"], 4) is None  # wrong space
    monkeypatch.setattr(_compiled_sphere, "NUMBA_AVAILABLE", False)
    assert _compiled_sphere.compiled_chain(seen["manifold"], seen["log_density"], 4) is None


@pytest.mark.parametrize("space", ["SPD(2)", "Kendall(4)"])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("adapt,thin,epsilons", [(True, 1, (1.0,)), (False, 2, (1.0,)),
                                                 (True, 1, (0.3, 3.0))],
                         ids=["adaptive", "fixed-thinned", "two-groups"])
def test_compiled_chain_follows_the_numpy_chain(space, kind, adapt, thin, epsilons,
                                                monkeypatch):
    m = SPACES[space]
    # SPD is not compact: its footpoints are kept in a public ball, as in the releases
    ball = 1.0 if space == "SPD(2)" and kind != "vector" else None
    seen = capture(m, kind, monkeypatch, n_chains=6,
                   max_norm=2.0 if kind != "footpoint" else None, epsilons=epsilons, ball=ball)
    options = dict(seen["options"], adapt=adapt, thin=thin, burn_in=150, n_samples=100)
    rng_c, rng_n = np.random.default_rng(11), np.random.default_rng(11)
    compiled = mcmc.metropolis_hastings(seen["manifold"], seen["log_density"], seen["init"],
                                        **dict(options, rng=rng_c))
    plain = mcmc.metropolis_hastings(seen["manifold"], _numpy_only(seen["log_density"]),
                                     seen["init"], **dict(options, rng=rng_n))
    assert compiled.compute_path == "compiled (numba)" and plain.compute_path == "numpy"
    scale = np.max(np.abs(plain.samples))
    np.testing.assert_allclose(compiled.samples, plain.samples, rtol=0, atol=1e-10 * scale)
    np.testing.assert_allclose(compiled.log_density, plain.log_density, rtol=1e-9)
    np.testing.assert_array_equal(compiled.acceptance_rate, plain.acceptance_rate)
    assert 0 < compiled.acceptance_rate.mean() < 1  # both decisions occur
    np.testing.assert_allclose(compiled.step_size, plain.step_size, rtol=1e-9)
    assert compiled.ess == pytest.approx(plain.ess, rel=1e-6)
    assert compiled.rhat == pytest.approx(plain.rhat, rel=1e-6)
    assert rng_c.random() == rng_n.random()  # the same random numbers were consumed


def _release(m, mode, n=60, **extra):
    data = make_regression_data(m, n, rng=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return private_geodesic_regression(
            m, data.x, data.y, eps_p=1.0, eps_v=1.0, tau=0.2, covariate_range=(0.0, 1.0),
            n_footpoints=1, n_vectors=3, mode=mode, rng=1, chain_length=60, burn_in=40,
            **extra)


@pytest.mark.parametrize("space", ["SPD(2)", "Kendall(4)"])
@pytest.mark.parametrize("mode", ["paper", "strict"])
def test_releases_record_the_compiled_path(space, mode, monkeypatch):
    m = SPACES[space]
    extra = {"tau_m": 3.0} if mode == "strict" and space == "SPD(2)" else {}
    if mode == "strict":            # the chains' path (auto may draw exactly here)
        extra["sampler"] = "mcmc"
    release = _release(m, mode, **extra)
    parts = ("joint",) if mode == "strict" else ("footpoint", "shooting_vector")
    assert [release.diagnostics[p]["compute_path"] for p in parts] == [
        "compiled (numba)"] * len(parts)
    monkeypatch.setattr(_compiled_sphere, "NUMBA_AVAILABLE", False)
    numpy_release = _release(m, mode, **extra)
    assert [numpy_release.diagnostics[p]["compute_path"] for p in parts] == [
        "numpy"] * len(parts)
    np.testing.assert_allclose(release.values["footpoint"], numpy_release.values["footpoint"],
                               atol=1e-8)


@pytest.mark.parametrize("space", ["SPD(2)", "Kendall(4)"])
@pytest.mark.parametrize("tau", [0.05, 0.2, None], ids=["tight", "clipped", "unclipped"])
def test_vectorized_sums_near_the_fit_match_numpy(space, tau, monkeypatch):
    # Near the least-squares fit the residuals are small: the branch-free loops (polynomial
    # expm1 / asinh on SPD(2), sin, cos and asin on the shape space) compute the sums; far
    # from it the wide or scalar loops take over. Both against the numpy log density.
    from dpcore.learning.regression import GeodesicRegression
    from dpcore.sampling import _kendall_numba

    m = SPACES[space]
    data = make_regression_data(m, 100, rng=0)
    fit = GeodesicRegression(m, covariate_range=(0.0, 1.0)).fit(data.x, data.y)
    seen = {}

    def fake(manifold, log_density, init, **options):
        seen.update(manifold=manifold, log_density=log_density)
        raise _Captured

    mech = KNormGradient(manifold=m, epsilon=1.0, sensitivity=0.05)
    monkeypatch.setattr(sampling, "metropolis_hastings", fake)
    with pytest.raises(_Captured):
        regression_joint_many([mech], data.x, data.y, fit.footpoint_, fit.shooting_vector_,
                              size=6, rng=0, tau=tau, max_norm=10.0)
    monkeypatch.undo()
    chain = _compiled_sphere.compiled_chain(seen["manifold"], seen["log_density"], 6)
    rng = np.random.default_rng(0)
    base = np.broadcast_to(fit.footpoint_, (6, *m.point_shape))
    scales = np.array([0.0, 0.003, 0.01, 0.03, 0.3, 1.0])[:, None, None]
    p = m.exp(base, scales * m.random_tangent(base, rng))
    v = m.transport(base, p, np.broadcast_to(fit.shooting_vector_, p.shape))
    z = seen["manifold"].join(p, v)
    expected = seen["log_density"](z)
    # at the fit the gradient is a cancellation of O(1) sums: rounding is absolute there
    np.testing.assert_allclose(chain.evaluate(z), expected, rtol=1e-10, atol=1e-13)
    if space == "Kendall(4)":  # the fit itself took the vectorized loop
        y = data.y.reshape(100, -1)
        u = (fit.shooting_vector_ / np.linalg.norm(fit.shooting_vector_)).ravel()
        bad = _kendall_numba._fast_sums(
            fit.footpoint_.ravel(), u, float(np.linalg.norm(fit.shooting_vector_)), data.x,
            np.ascontiguousarray(y.T), np.einsum("ij,ij->i", y, y),
            -1.0 if tau is None else tau, np.empty((4, 100)), np.empty((4, 8)))[0]
        assert not bad


@pytest.mark.parametrize("space", ["SPD(2)", "Kendall(4)", "R⁴", "H²"])
def test_uniform_exact_releases_use_the_compiled_norms(space, monkeypatch):
    """The uniform-proposal exact sampler evaluates its proposals by the compiled kernels
    (dpcore.mechanisms.kng_exact; on R⁴ and H² the norm-only kernels) and records it; without
    numba it takes the numpy gradient and, from the same seed, accepts the same proposals: the
    same draws."""
    m = {"R⁴": Euclidean(4), "H²": Hyperbolic(2)}.get(space) or SPACES[space]
    extra = ({"sampler": "exact"} if space == "Kendall(4)" else
             {"tau_m": 1.0, "sampler": "exact"} if space == "SPD(2)" else
             {"tau_m": 1.0, "center": np.asarray(m.origin, dtype=float), "sampler": "exact"})
    compiled = _release(m, "strict", n=30, **extra)
    assert compiled.diagnostics["joint"]["compute_path"] == "compiled (numba)"
    monkeypatch.setattr(_compiled_sphere, "NUMBA_AVAILABLE", False)
    plain = _release(m, "strict", n=30, **extra)
    assert plain.diagnostics["joint"]["compute_path"] == "numpy"
    assert plain.diagnostics["joint"]["proposals"] == compiled.diagnostics["joint"]["proposals"]
    for key in compiled.values:
        np.testing.assert_allclose(np.asarray(compiled.values[key]),
                                   np.asarray(plain.values[key]), rtol=0, atol=1e-12)
