"""The compiled (numba) Metropolis-Hastings chain of geodesic regression on the sphere.

Oracles: the numpy log densities of :mod:`dpcore.mechanisms.kng` (captured from the real
mechanism functions), finite differences of the regression energy, the numpy sampler on the
same random numbers (same trajectories), and the exact rejection sampler of the joint target.
"""

from __future__ import annotations

import numpy as np
import pytest

import dpcore.sampling as sampling
from dpcore.data import make_regression_data
from dpcore.manifolds import Sphere
from dpcore.mechanisms.kng import (
    KNormGradient,
    regression_footpoints_many,
    regression_joint_exact,
    regression_joint_many,
    regression_vectors_many,
)
from dpcore.sampling import _compiled_sphere, mcmc

from .reference import P_THRESHOLD, ks2_pvalue

pytestmark = pytest.mark.skipif(not _compiled_sphere.NUMBA_AVAILABLE,
                                reason="numba is not installed: the compiled path is off")

S2 = Sphere(2)
KINDS = ("joint", "footpoint", "vector")


class _Captured(Exception):
    pass


def _problem(n=40, seed=0):
    data = make_regression_data(S2, n, rng=seed)
    rng = np.random.default_rng(seed)
    p_hat = data.y[0] / np.linalg.norm(data.y[0])
    v_hat = S2.proj_tangent(p_hat, 0.3 * rng.standard_normal(3))
    return data.x, data.y, p_hat, v_hat


def capture(kind, monkeypatch, *, tau=0.2, n_chains=4, max_norm=None, seed=0, epsilons=(1.0,)):
    """The (manifold, log density, init, options) the mechanism hands to the sampler; several
    ``epsilons`` run as step-size groups."""
    t, y, p_hat, v_hat = _problem(seed=seed)
    mech = [KNormGradient(manifold=S2, epsilon=eps, sensitivity=0.05, chain_length=100,
                          burn_in=200) for eps in epsilons]
    seen = {}

    def fake(manifold, log_density, init, **options):
        seen.update(manifold=manifold, log_density=log_density, init=init, options=options)
        raise _Captured

    monkeypatch.setattr(sampling, "metropolis_hastings", fake)
    with pytest.raises(_Captured):
        if kind == "joint":
            regression_joint_many(mech, t, y, p_hat, v_hat, size=n_chains, rng=0, tau=tau,
                                  max_norm=max_norm)
        elif kind == "footpoint":
            regression_footpoints_many(mech, t, y, p_hat, v_hat, size=n_chains, rng=0,
                                       tau=tau)
        else:
            n_feet = 2 * len(mech)
            feet = S2.exp(p_hat, 0.2 * S2.random_tangent(np.tile(p_hat, (n_feet, 1)), rng=3))
            regression_vectors_many(mech, t, y, feet, v_hat * 0, n_chains // 2, rng=0,
                                    tau=tau, max_norm=max_norm)
    monkeypatch.undo()
    return seen


def _numpy_only(log_density):
    """The same log density without its description: the sampler takes the numpy path."""
    return lambda z: log_density(z)


def _random_states(kind, seen, n, rng):
    m = seen["manifold"]
    if kind == "vector":
        return rng.normal(scale=0.5, size=(n, 2))
    if kind == "footpoint":
        return S2.random_point(n, rng=rng)
    p = S2.random_point(n, rng=rng)
    v = S2.proj_tangent(p, rng.normal(scale=0.8, size=(n, 3)))
    v[0] = 0.0  # |v| = 0: the numpy closed form hands over to the generic gradient
    return m.join(p, v)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("tau", [0.2, None], ids=["clipped", "unclipped"])
def test_compiled_log_density_matches_numpy(kind, tau, monkeypatch):
    seen = capture(kind, monkeypatch, tau=tau, n_chains=8,
                   max_norm=1.0 if kind != "footpoint" else None)
    chain = _compiled_sphere.compiled_chain(seen["manifold"], seen["log_density"], 8)
    assert chain is not None
    rng = np.random.default_rng(1)
    for _ in range(5):
        z = _random_states(kind, seen, 8, rng)
        expected = seen["log_density"](z)
        got = chain.evaluate(z)
        finite = np.isfinite(expected)
        np.testing.assert_array_equal(np.isfinite(got), finite)
        np.testing.assert_allclose(got[finite], expected[finite], rtol=1e-10, atol=1e-12)
    # non-finite states have density zero
    z[1] = np.nan
    assert chain.evaluate(z)[1] == -np.inf


def test_footpoint_density_is_zero_at_the_cut_locus_without_clipping(monkeypatch):
    seen = capture("footpoint", monkeypatch, tau=None, n_chains=2)
    chain = _compiled_sphere.compiled_chain(seen["manifold"], seen["log_density"], 2)
    _, _, p_hat, _ = _problem()
    z = np.stack([-p_hat, p_hat])  # transport from p_hat to its antipode is undefined
    got = chain.evaluate(z)
    assert got[0] == -np.inf and np.isfinite(got[1])


def _energy(p, v, t, y):
    pred = S2.exp(np.broadcast_to(p, (t.size, 3)), t[:, None] * v)
    return 0.5 * np.mean(S2.dist(pred, y) ** 2)


def test_compiled_gradients_match_finite_differences():
    from dpcore.sampling import _sphere_numba as kernels

    t, y, p, v = _problem()
    gp, gv = np.empty(3), np.empty(3)
    assert kernels.regression_gradients(p, v, t, y, np.ascontiguousarray(y.T), -1.0, gp,
                                         gv, np.empty((3, 3)))
    h = 1e-6
    for w in S2.orthonormal_basis(p):
        # vector: d/dh E(p, v + h w); footpoint: along exp_p(h w) with v transported
        dv = (_energy(p, v + h * w, t, y) - _energy(p, v - h * w, t, y)) / (2 * h)
        p1, p0 = S2.exp(p, h * w), S2.exp(p, -h * w)
        dp = (_energy(p1, S2.transport(p, p1, v), t, y)
              - _energy(p0, S2.transport(p, p0, v), t, y)) / (2 * h)
        assert dv == pytest.approx(gv @ w, abs=1e-8)
        assert dp == pytest.approx(gp @ w, abs=1e-8)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("adapt,thin,epsilons", [(True, 1, (1.0,)), (False, 2, (1.0,)),
                                                 (True, 1, (0.3, 3.0))],
                         ids=["adaptive", "fixed-thinned", "two-groups"])
def test_compiled_chain_follows_the_numpy_chain(kind, adapt, thin, epsilons, monkeypatch):
    seen = capture(kind, monkeypatch, n_chains=6, max_norm=2.0 if kind != "footpoint" else None,
                   epsilons=epsilons)
    if len(epsilons) > 1:
        assert seen["options"]["groups"] is not None
    # Rounding differences grow along a chain (on the wide footpoint target, chains pass near
    # the antipode of p_hat where the transported vector turns fast, and the two paths drift
    # apart by ~1e-8 after 500 steps at epsilon = 3): compare the first 250 steps.
    options = dict(seen["options"], rng=np.random.default_rng(11), adapt=adapt, thin=thin,
                   burn_in=150, n_samples=100)
    rng_c, rng_n = np.random.default_rng(11), np.random.default_rng(11)
    compiled = mcmc.metropolis_hastings(seen["manifold"], seen["log_density"], seen["init"],
                                        **dict(options, rng=rng_c))
    plain = mcmc.metropolis_hastings(seen["manifold"], _numpy_only(seen["log_density"]),
                                     seen["init"], **dict(options, rng=rng_n))
    np.testing.assert_allclose(compiled.samples, plain.samples, rtol=0, atol=1e-9)
    np.testing.assert_allclose(compiled.log_density, plain.log_density, rtol=1e-9)
    np.testing.assert_array_equal(compiled.acceptance_rate, plain.acceptance_rate)
    point_axes = tuple(range(2, compiled.samples.ndim))
    moved_c = np.any(np.diff(compiled.samples, axis=1) != 0, axis=point_axes)
    moved_n = np.any(np.diff(plain.samples, axis=1) != 0, axis=point_axes)
    np.testing.assert_array_equal(moved_c, moved_n)
    assert 0 < compiled.acceptance_rate.mean() < 1  # both decisions occur
    np.testing.assert_allclose(compiled.step_size, plain.step_size, rtol=1e-9)
    assert compiled.ess == pytest.approx(plain.ess, rel=1e-6)
    assert compiled.rhat == pytest.approx(plain.rhat, rel=1e-6)
    # the same random numbers were consumed
    assert rng_c.random() == rng_n.random()


def test_compiled_path_reports_progress(monkeypatch):
    seen = capture("joint", monkeypatch, n_chains=3)
    fractions = []
    options = dict(seen["options"], burn_in=1000, n_samples=1000, rng=2, progress=None)
    options.pop("progress")
    with_progress = mcmc.metropolis_hastings(seen["manifold"], seen["log_density"],
                                             seen["init"], progress=fractions.append, **options)
    without = mcmc.metropolis_hastings(seen["manifold"], seen["log_density"], seen["init"],
                                       **options)
    assert 90 <= len(fractions) <= 110 and fractions[-1] == 1.0
    assert np.all(np.diff(fractions) > 0)
    np.testing.assert_array_equal(with_progress.samples, without.samples)

    def cancel(fraction):
        if fraction >= 0.5:
            raise KeyboardInterrupt("cancelled")

    with pytest.raises(KeyboardInterrupt):
        mcmc.metropolis_hastings(seen["manifold"], seen["log_density"], seen["init"],
                                 progress=cancel, **options)


def test_without_numba_the_numpy_path_runs(monkeypatch):
    seen = capture("joint", monkeypatch)
    monkeypatch.setattr(_compiled_sphere, "NUMBA_AVAILABLE", False)
    assert _compiled_sphere.compiled_chain(seen["manifold"], seen["log_density"], 4) is None


def test_other_targets_keep_the_numpy_path(monkeypatch):
    seen = capture("joint", monkeypatch)
    log_density = seen["log_density"]
    assert _compiled_sphere.compiled_chain(seen["manifold"], log_density, 4) is not None
    # one sigma per chain must match the number of chains
    log_density.sphere_target = log_density.sphere_target.with_sigma(np.ones(3))
    assert _compiled_sphere.compiled_chain(seen["manifold"], log_density, 4) is None
    assert _compiled_sphere.compiled_chain(S2, log_density, 4) is None
    assert _compiled_sphere.compiled_chain(seen["manifold"], _numpy_only(log_density),
                                           4) is None


@pytest.mark.statistical
def test_compiled_joint_chain_matches_the_exact_sampler():
    # n * epsilon small: the exact rejection sampler (uniform bundle proposals) is cheap
    t, y, p_hat, v_hat = _problem(n=10, seed=4)
    mech = KNormGradient(manifold=S2, epsilon=0.5, sensitivity=0.05, chain_length=1000,
                         burn_in=1000)
    draws = 1000  # independent chains, one draw (the last state) each
    mcmc_vals = regression_joint_many([mech], t, y, p_hat, v_hat, size=draws, rng=5, tau=0.3,
                                      max_norm=1.5)[0]
    assert "chains" in mcmc_vals.sampler
    exact = regression_joint_exact([mech], t, y, size=draws, rng=6, tau=0.3, max_norm=1.5)[0]
    a, b = np.asarray(mcmc_vals.values), np.asarray(exact.values)
    # two scalar summaries: the footpoint's last coordinate and the shooting vector's norm,
    # each at half the threshold (union bound)
    for summary in (lambda z: z[:, 0, 2], lambda z: np.linalg.norm(z[:, 1], axis=-1)):
        assert ks2_pvalue(summary(a), summary(b)) > P_THRESHOLD / 2


def test_gaussians_drawn_in_small_pieces_give_the_same_chain(monkeypatch):
    seen = capture("joint", monkeypatch, n_chains=3)
    options = dict(seen["options"], burn_in=300, n_samples=300, rng=4)
    whole = mcmc.metropolis_hastings(seen["manifold"], seen["log_density"], seen["init"],
                                     **options)
    monkeypatch.setattr(_compiled_sphere, "_GAUSSIAN_BYTES", 1)  # one step per draw
    pieces = mcmc.metropolis_hastings(seen["manifold"], seen["log_density"], seen["init"],
                                      **options)
    np.testing.assert_array_equal(whole.samples, pieces.samples)


@pytest.mark.parametrize("tau", [0.05, 0.2, None], ids=["tight", "clipped", "unclipped"])
def test_vectorized_gradient_near_the_fit_matches_numpy(tau):
    # Near the least-squares fit the residuals are small: the branch-free S^2 loop
    # (polynomial sin, cos and theta / sin(theta)) computes the gradient; far from it the
    # scalar loop takes over. Both against dpcore's numpy closed form.
    from dpcore.learning.kernels.sphere import sphere_regression_gradient
    from dpcore.learning.regression import GeodesicRegression
    from dpcore.sampling import _sphere_numba as kernels

    data = make_regression_data(S2, 100, rng=0)
    t, y = data.x, data.y
    yt = np.ascontiguousarray(y.T)
    fit = GeodesicRegression(S2).fit(t, y)
    rng = np.random.default_rng(0)
    tau_arg = -1.0 if tau is None else tau
    handed_over = []
    for scale, length in ((0.0, None), (0.01, None), (0.05, None), (1.0, None), (0.01, 4.0)):
        p = S2.exp(fit.footpoint_, scale * S2.random_tangent(fit.footpoint_, rng=rng))
        v = (S2.transport(fit.footpoint_, p, fit.shooting_vector_)
             + S2.proj_tangent(p, scale * rng.standard_normal(3)))
        if length is not None:  # t |v| beyond the polynomials' range
            v *= length / np.linalg.norm(v)
        nv = np.linalg.norm(v)
        handed_over.append(kernels._weighted_sums_s2(p, *(v / nv), nv, t, yt[0], yt[1], yt[2],
                                                     tau_arg)[0])
        gp, gv = np.empty(3), np.empty(3)
        assert kernels.regression_gradients(p, v, t, y, yt, tau_arg, gp, gv,
                                            np.empty((3, 3)))
        ep, ev = sphere_regression_gradient(p, v, t, y, tau)
        np.testing.assert_allclose(gp, ep, rtol=1e-11, atol=1e-14)
        np.testing.assert_allclose(gv, ev, rtol=1e-11, atol=1e-14)
    assert not any(handed_over[:2])  # the states nearest the fit took the vectorized loop
    assert handed_over[4]  # the long vector went to the scalar loop
    if tau is None:
        assert handed_over[3]  # and so did the large unclipped residuals
