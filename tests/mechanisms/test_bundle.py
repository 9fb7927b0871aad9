"""The tangent-bundle random walk and the joint KNG of geodesic regression (DESIGN §8)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dpcore.data import make_regression_data
from dpcore.manifolds import SPD, Euclidean, KendallShape, Sphere
from dpcore.mechanisms import KNormGradient
from dpcore.mechanisms.bundle import TangentBundleWalk
from dpcore.mechanisms.kng import regression_joint_many
from dpcore.sampling import metropolis_hastings, sample_laplace

from ..sampling.reference import P_THRESHOLD, ks2_pvalue

BASES = [Sphere(2), SPD(2), KendallShape(4), Euclidean(3)]


@pytest.mark.parametrize("base", BASES, ids=repr)
def test_moves_are_invertible_and_symmetric(base, rng):
    """exp then log recovers the increment, and the reverse increment has the same norm
    (parallel transport is an isometry): the random-walk proposal is symmetric."""
    walk = TangentBundleWalk(base, vector_scale=2.5)
    p = base.random_point(5, rng)
    x = walk.join(p, 0.7 * base.random_tangent(p, rng))
    u = 0.3 * walk.random_tangent(x, rng)
    y = walk.exp(x, u)
    np.testing.assert_allclose(walk.log(x, y), u, atol=1e-9)
    back = walk.log(y, x)
    np.testing.assert_allclose(walk.norm(y, back), walk.norm(x, u), rtol=1e-9)
    np.testing.assert_allclose(walk.exp(y, back), x, atol=1e-9)
    # the vector part stays tangent at the new footpoint
    p2, v2 = walk.split(y)
    np.testing.assert_allclose(base.proj_tangent(p2, v2), v2, atol=1e-9)
    assert walk.dim == 2 * base.dim and walk.point_shape == (2, *base.point_shape)


@pytest.mark.parametrize("block", [5, 100])
@pytest.mark.parametrize("base", BASES, ids=repr)
def test_log_of_a_large_batch_is_blocked_and_bit_identical(base, block, rng, monkeypatch):
    """A batch beyond ``_BLOCK`` numbers is done block by block (``manifolds.base.blockwise``):
    the same numbers to the bit as in one piece, for one reference against many states (the
    diagnostics' use), for states against states and for a batch of several axes."""
    from dpcore.manifolds import base as manifold_base

    walk = TangentBundleWalk(base, vector_scale=0.4)
    p = base.random_point(37, rng)
    x = walk.join(p, 0.5 * base.random_tangent(p, rng))
    y = walk.exp(x, 0.4 * walk.random_tangent(x, rng))
    cases = [(x[0], y), (x, y), (x[0], y[:36].reshape(6, 6, *walk.point_shape)),
             (x[:36].reshape(6, 6, *walk.point_shape), y[0])]
    whole = [walk.log(a, b) for a, b in cases]
    monkeypatch.setattr(manifold_base, "_BLOCK", block)
    for (a, b), want in zip(cases, whole, strict=True):
        got = walk.log(a, b)
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    assert np.array_equal(walk.dist(x[0], y), np.asarray(walk.norm(x[0], whole[0])))


def test_refuses_a_non_homogeneous_base():
    class Lumpy(Sphere):
        is_homogeneous = False

    with pytest.raises(ValueError, match="homogeneous"):
        TangentBundleWalk(Lumpy(2))


@pytest.mark.statistical
def test_walk_on_the_sphere_bundle_samples_known_marginals(rng):
    """Target exp(-d(p, c)/s1 - |v|^2/(2 s2^2)) on TS²: p is Riemannian-Laplace distributed
    (exact sampler) and |v| is Rayleigh(s2), whatever the curvature does to the moves."""
    base = Sphere(2)
    walk = TangentBundleWalk(base, vector_scale=1.0)
    c = np.array([0.0, 0.0, 1.0])
    s1, s2 = 0.4, 0.5

    def log_density(z):
        p, v = walk.split(z)
        return -base.dist(c, p) / s1 - base.inner(p, v, v) / (2 * s2**2)

    res = metropolis_hastings(walk, log_density, walk.join(c, np.zeros(3)), n_samples=4,
                              n_chains=1500, burn_in=300, thin=60, rng=rng)
    p, v = walk.split(res.samples.reshape(-1, 2, 3))
    exact = sample_laplace(base, c, s1, size=20_000, rng=rng)
    assert ks2_pvalue(base.dist(c, p), base.dist(c, exact)) > P_THRESHOLD
    assert stats.kstest(np.linalg.norm(v, axis=-1), stats.rayleigh(scale=s2).cdf).pvalue \
        > P_THRESHOLD


@pytest.mark.statistical
def test_joint_kng_mcmc_matches_the_exact_euclidean_sampler(rng):
    """On R^d the stacked gradient is affine and the joint KNG has an exact sampler; the
    tangent-bundle MCMC must agree with it (two-sample KS on footpoint and slope coordinates)."""
    m = Euclidean(1)
    x, y = make_regression_data(m, 40, rng=rng)
    t = (x - x.min()) / np.ptp(x)
    kng = KNormGradient(manifold=m, epsilon=5.0, sensitivity=0.1, chain_length=400,
                        burn_in=400)
    exact = kng.regression_joint(t, y, y.mean(axis=0), np.zeros(1), size=4000, rng=rng)
    assert exact.exact and exact.values.shape == (4000, 2, 1)
    (mcmc,) = regression_joint_many([kng], t, y, y.mean(axis=0), np.zeros(1), size=1500,
                                    rng=rng)
    assert not mcmc.exact
    for part in (0, 1):
        assert ks2_pvalue(mcmc.values[:, part, 0], exact.values[:, part, 0]) > P_THRESHOLD
    # and the test has power: a twice larger sigma is told apart
    wide = KNormGradient(manifold=m, epsilon=2.5, sensitivity=0.1)
    other = wide.regression_joint(t, y, y.mean(axis=0), np.zeros(1), size=4000, rng=rng)
    assert ks2_pvalue(mcmc.values[:, 1, 0], other.values[:, 1, 0]) < P_THRESHOLD


def test_joint_many_gives_one_result_per_budget(rng):
    m = Sphere(2)
    x, y = make_regression_data(m, 30, rng=rng)
    mechs = [KNormGradient(manifold=m, epsilon=e, sensitivity=0.05, chain_length=40,
                           burn_in=40) for e in (0.5, 5.0)]
    out = regression_joint_many(mechs, x, y, y[0], np.zeros(3), size=6, rng=rng, tau=0.3,
                                max_norm=np.pi)
    assert len(out) == 2
    for res in out:
        assert res.values.shape == (6, 2, 3)
        assert res.diagnostics["n_chains"] == 6 and "tangent-bundle" in res.sampler
        assert np.all(np.linalg.norm(res.values[:, 1], axis=-1) <= np.pi)
    assert out[0].diagnostics["step_size"] > out[1].diagnostics["step_size"]
