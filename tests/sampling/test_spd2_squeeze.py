"""The certified squeeze of the uniform exact joint sampler on SPD(2)
(:mod:`dpcore.sampling.spd2_squeeze`): its bound holds, its draws have the uniform sampler's
law, its proposals do not depend on the data, and a broken bound raises."""

import numpy as np
import pytest
from scipy import stats

from dpcore.data import make_regression_data
from dpcore.exceptions import EnvelopeViolation
from dpcore.manifolds import SPD, Sphere
from dpcore.mechanisms.kng_exact import joint_gradient_norms
from dpcore.release.uniform_cost import squeeze_plan
from dpcore.sampling.rejection import BundleBall, UniformBall, sample_kng_exact
from dpcore.sampling.spd2_squeeze import (
    SPD2Squeeze,
    sample_squeezed,
    squeeze_available,
)

M = SPD(2)
TAU, RADIUS, SPEED = 0.175, 0.1, 0.55
#: Two-sample KS threshold: a false failure has probability below 1e-6.
KS_ALPHA = 1e-6


def _data(n, seed):
    d = make_regression_data(M, n, noise=0.05, rng=seed, footpoint_region=(np.eye(2), RADIUS))
    return np.clip(np.asarray(d.x, float), 0.0, 1.0), np.asarray(d.y, float)


def _norms(t, y):
    def gradient_norm(z):
        return joint_gradient_norms(M, z[:, 0], z[:, 1], t, y, TAU)[0]
    return gradient_norm


def _sigma(n, n_eps):
    # the joint KNG scale of the page's design: 2 * hypot(dp, dv) / eps, dp, dv ~ tau / n
    from dpcore.sensitivity import geodesic_regression_sensitivity

    dp, dv = geodesic_regression_sensitivity(n, TAU, M.curvature_bounds[0], 0.8)
    return 2.0 * float(np.hypot(dp, dv)) / (n_eps / n)


@pytest.fixture(scope="module")
def built():
    t, y = _data(60, 1)
    sigma = _sigma(60, 200.0)
    sq = SPD2Squeeze(np.eye(2), RADIUS, SPEED, t, y, TAU, sigma, max_leaves=400, rng=0)
    return sq, t, y, sigma


def test_the_bound_holds_at_uniform_points_of_the_support(built):
    sq, t, y, sigma = built
    z, low = sq.propose(40_000, np.random.default_rng(1))
    g = _norms(t, y)(sq.points(z))
    assert z.shape[0] > 10_000
    assert np.all(g >= low), float(np.min(g - low))
    # and it is not void: most proposals are rejected from the bound alone
    share = float(np.mean(np.exp(-low / sigma)))
    print(f"share of proposals that need their gradient: {share:.3f}")
    assert share < 0.9


def test_proposals_are_uniform_on_the_support_and_do_not_depend_on_the_data(built):
    sq, t, y, sigma = built
    t2, y2 = t.copy(), y.copy()
    y2[0] = M.exp(y[0], 0.3 * M.random_tangent(y[0], np.random.default_rng(7)))  # a neighbour
    other = SPD2Squeeze(np.eye(2), RADIUS, SPEED, t2, y2, TAU, sigma, max_leaves=200, rng=0)
    z1, _ = sq.propose(5000, np.random.default_rng(3))
    z2, _ = other.propose(5000, np.random.default_rng(3))
    # the same floats whatever the data: every output is a proposal (float safety)
    assert np.array_equal(z1, z2)
    p, v = sq.points(z1)[:, 0], sq.points(z1)[:, 1]
    assert np.all(M.dist(p, np.eye(2)) <= RADIUS * (1 + 1e-9))
    assert np.all(M.norm(p, v) <= SPEED * (1 + 1e-9))
    # uniform in the Sasaki volume: |v| has the law V U^(1/3), independent of p
    ks = stats.kstest(M.norm(p, v) / SPEED, lambda x: np.clip(x, 0, 1) ** 3)
    assert ks.pvalue > KS_ALPHA, ks


@pytest.mark.statistical
def test_draws_have_the_uniform_samplers_law():
    """Two-sample KS of the footpoint's distance to the centre, the speed and the footpoint
    frame coordinate against the (audited) plain uniform sampler, n·ε = 60."""
    t, y = _data(40, 2)
    sigma = _sigma(40, 60.0)
    size = 1500
    sq = SPD2Squeeze(np.eye(2), RADIUS, SPEED, t, y, TAU, sigma, max_leaves=300, rng=0)
    a, _, evaluated = sample_squeezed(sq, _norms(t, y), np.array([sigma]), size,
                                      np.random.default_rng(11))
    b, _ = sample_kng_exact(_norms(t, y), sigma,
                            BundleBall(UniformBall(M, np.eye(2), RADIUS), SPEED), size,
                            np.random.default_rng(12), n_terms=t.size)
    a = a[0]

    def stats_of(x):
        p, v = x[:, 0], x[:, 1]
        return [M.dist(p, np.eye(2)), M.norm(p, v), p[:, 0, 1], v[:, 0, 0]]

    for sa, sb in zip(stats_of(a), stats_of(b), strict=True):
        res = stats.ks_2samp(sa, sb)
        assert res.pvalue > KS_ALPHA, res
    assert evaluated > 0


def test_a_bound_above_the_gradient_norm_raises(built):
    sq, t, y, sigma = built
    broken = SPD2Squeeze.__new__(SPD2Squeeze)
    broken.__dict__.update(sq.__dict__)
    broken._slack = sq._slack - 10.0  # "certifies" g 10 above the truth everywhere
    # (a wide scale, so that the bound lets proposals through to their gradient)
    with pytest.raises(EnvelopeViolation, match="certified lower bound"):
        sample_squeezed(broken, _norms(t, y), np.array([100.0]), 1,
                        np.random.default_rng(0), batch=1 << 12)


def test_the_release_builds_a_squeeze_only_where_its_public_rule_says():
    assert squeeze_available(M) and not squeeze_available(SPD(3))
    assert not squeeze_available(Sphere(2))
    sig = _sigma(100, 500.0)
    plan = squeeze_plan(M, RADIUS, SPEED, TAU, sig, 100, 9)
    assert 500 <= plan["max_leaves"] <= 3000 and plan["proposals"] >= 2e6
    assert squeeze_plan(M, RADIUS, SPEED, TAU, _sigma(100, 60.0), 100, 9) is None
    assert squeeze_plan(M, None, SPEED, TAU, sig, 100, 9) is None
    # a wider design, where the enclosures decide almost nothing (docs/measurements.md)
    assert squeeze_plan(M, 0.2, 0.8, TAU, sig, 100, 9, cheaper_only=False) is None
    assert squeeze_plan(M, 0.15, 0.65, TAU, sig, 100, 9, cheaper_only=False) is not None
    assert squeeze_plan(Sphere(2), RADIUS, SPEED, TAU, sig, 100, 9) is None
