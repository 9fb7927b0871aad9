"""The bundle samplers in the releases (dpcore.mechanisms.kng_bundle): where they run (public
inputs only), what ``auto`` predicts, and that a release through them is exact, private, on its
public lattice and draws the same law as the uniform exact sampler.

The samplers themselves (their bounds, their law, a planted violation, neighbour reachability)
are tested in tests/sampling/test_bundle_native.py (S²) and tests/sampling/test_bundle_flat.py
(R² and R³).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from scipy.spatial.transform import Rotation

from dpcore.manifolds import SPD, Euclidean, Sphere
from dpcore.mechanisms import Ball, KNormGradient
from dpcore.mechanisms.kng import regression_gradient_bounds, regression_joint_exact
from dpcore.mechanisms.kng_bundle import (
    FLAT3_MIN_LEAVES,
    FLAT_MAX_N_EPS,
    FLAT_MIN_LEAVES,
    LEAF_TERMS,
    MAX_LEAVES,
    NATIVE_LEAF_TERMS,
    NATIVE_MAX_LEAVES,
    NATIVE_MIN_LEAVES,
    SPHERE_MAX_N_EPS,
    bundle_joint_available,
    bundle_joint_work,
    bundle_leaf_cap,
    bundle_preferred,
    bundle_reach,
    native_leaf_cap,
)
from dpcore.release import plan_regression_sampler, private_geodesic_regression
from dpcore.sampling.rejection import worst_case_proposals
from dpcore.sampling.sphere_native import NativeLattice
from dpcore.settings import get_limits

from ..sampling._chart import NormalChart

S2 = Sphere(2)
NORTH = np.array([0.0, 0.0, 1.0])
TAU = 0.2


def _data(n, rng):
    t = rng.random(n)
    t[:2] = 0.0, 1.0
    p, v = NormalChart(NORTH).to_bundle(np.array([0.1, -0.1]), np.array([0.8, 0.5]))
    pred = S2.exp(p, t[:, None] * v)
    return t, S2.exp(pred, S2.proj_tangent(pred, 0.1 * rng.standard_normal((n, 3))))


def _native_coordinates(p, v):
    """(rotation vector of the frame (p, v/|v|, p x v/|v|), |v|) by scipy (independent of the
    library's Rodrigues formula)."""
    e = v / np.linalg.norm(v)
    frame = np.stack([p, e, np.cross(p, e)], axis=1)
    return np.concatenate([Rotation.from_matrix(frame).as_rotvec(), [np.linalg.norm(v)]])


def test_available_on_the_two_sphere_and_the_plane():
    assert bundle_joint_available(S2, 0.5, 1.5)
    assert bundle_joint_available(S2, 2.2, math.pi)
    assert bundle_joint_available(S2, math.pi, math.pi)   # any ball: the native lattice
    assert bundle_joint_available(S2, None, math.pi)      # the whole sphere
    assert not bundle_joint_available(S2, None, None)
    assert not bundle_joint_available(Sphere(3), None, 1.5)
    assert not bundle_joint_available(S2, 3.5, 1.5)       # not a ball of the sphere
    assert not bundle_joint_available(S2, 0.5, 4.0)       # speeds beyond pi
    assert not bundle_joint_available(Sphere(3), 0.5, 1.5)
    assert not bundle_joint_available(SPD(2), 0.5, 1.5)
    assert bundle_joint_available(Euclidean(2), 12.0, 24.0)   # dpcore.sampling.bundle_flat
    assert not bundle_joint_available(Euclidean(2), None, 24.0)  # needs the public ball
    assert bundle_joint_available(Euclidean(3), 12.0, 24.0)
    assert not bundle_joint_available(Euclidean(4), 12.0, 24.0)   # not measured
    assert not bundle_joint_available(Euclidean(1), 12.0, 24.0)  # R^1: the refined envelope
    assert bundle_reach(12.0, 24.0, Euclidean(2)) == FLAT_MAX_N_EPS
    assert bundle_reach(12.0, 24.0, Euclidean(3)) == FLAT_MAX_N_EPS
    assert bundle_reach(12.0, 24.0, SPD(2)) == 0.0


def test_preferred_where_the_uniform_worst_case_is_beyond_the_limit():
    n, draws = 250, 9
    g_max = float(np.hypot(*regression_gradient_bounds(S2, TAU, 1.5)))
    delta = math.hypot(2 * TAU / n, 2 * TAU / n)
    assert bundle_joint_work(n, draws, n_eps=1000.0) == pytest.approx(
        2 * NATIVE_MAX_LEAVES * NATIVE_LEAF_TERMS * n)
    assert bundle_joint_work(n, draws, manifold=Euclidean(2)) == pytest.approx(
        2 * bundle_leaf_cap(n, Euclidean(2)) * LEAF_TERMS * n)
    for n_eps in (10.0, 30.0, 60.0, 250.0, 1000.0):  # n (eps_p + eps_v)
        sigma = 2 * delta / (n_eps / n)
        uniform = draws * n * worst_case_proposals(g_max, sigma)
        assert bundle_preferred(S2, 0.5, 1.5, g_max=g_max, sigma=sigma, n=n,
                                draws=draws) == (uniform > get_limits().max_exact_work)
    assert not bundle_preferred(S2, 0.5, 1.5, g_max=g_max, sigma=2 * delta / (10 / n), n=n,
                                draws=draws)
    assert bundle_preferred(S2, 0.5, 1.5, g_max=g_max, sigma=2 * delta / (1000 / n), n=n,
                            draws=draws)
    assert not bundle_preferred(S2, 0.5, 1.5, g_max=g_max,
                                sigma=2 * delta / (1.01 * SPHERE_MAX_N_EPS / n), n=n,
                                draws=draws)


def test_reach_is_the_measured_range_of_the_public_support():
    """n eps = 1,000 on S^2 on every ball and on the whole sphere (the native sampler,
    bench_bundle_native), at any speed bound up to pi."""
    for radius, speed in ((0.5, 1.5), (0.2, 0.8), (1.25, 0.8), (1.5, 1.0), (0.5, math.pi),
                          (math.pi, math.pi), (None, math.pi)):
        assert bundle_reach(radius, speed) == SPHERE_MAX_N_EPS == 1000.0
    n, draws = 250, 9
    g_max = float(np.hypot(*regression_gradient_bounds(S2, TAU, math.pi)))
    delta = math.hypot(2 * TAU / n, 2 * TAU / n)
    at_1000 = 2 * delta / (1000 / n)
    assert bundle_preferred(S2, 0.5, math.pi, g_max=g_max, sigma=at_1000, n=n, draws=draws)
    assert not bundle_preferred(S2, 0.5, math.pi, g_max=g_max, sigma=at_1000 / 1.01, n=n,
                                draws=draws)


def test_plan_is_exact_at_n_eps_1000_with_a_footpoint_ball():
    plan = plan_regression_sampler(S2, 250, eps_p=2, eps_v=2, tau=TAU, draws=9,
                                   footpoint_radius=0.5, max_speed=1.5)
    assert plan["exact"] and plan["guarantee"] == "private"
    assert plan["predicted_work"] == pytest.approx(bundle_joint_work(250, 9, n_eps=1000.0))
    assert plan["predicted_work"] <= plan["limit"]
    assert plan["leaf_cap"] == NATIVE_MAX_LEAVES
    # the request: the whole sphere at n eps = 1,000, exact in native coordinates
    whole = plan_regression_sampler(S2, 250, eps_p=2, eps_v=2, tau=TAU, draws=9)
    assert whole["exact"] and whole["guarantee"] == "private"
    assert whole["predicted_work"] == pytest.approx(
        bundle_joint_work(250, 9, n_eps=1000.0))
    assert whole["predicted_work"] <= whole["limit"]
    # beyond the measured range: MCMC
    assert not plan_regression_sampler(S2, 250, eps_p=2.5, eps_v=2.5, tau=TAU,
                                       draws=9)["exact"]
    # beyond the measured range n (eps_p + eps_v) <= SPHERE_MAX_N_EPS: not the bundle sampler
    assert not plan_regression_sampler(S2, 250, eps_p=2.5, eps_v=2.5, tau=TAU, draws=9,
                                       footpoint_radius=0.5, max_speed=1.5)["exact"]
    # beyond the public cap's reach (n so large that the leaves alone exceed the limit)
    big = plan_regression_sampler(S2, 20_000, eps_p=0.05, eps_v=0.05, tau=TAU, draws=9,
                                  footpoint_radius=0.5, max_speed=1.5)
    assert not big["exact"]


def test_a_release_through_it_is_private_exact_and_on_its_lattice():
    rng = np.random.default_rng(5)
    n, eps = 40, 1.0                                           # n eps = 80 per geodesic
    t, y = _data(n, rng)
    plan = plan_regression_sampler(S2, n, eps_p=eps, eps_v=eps, tau=TAU, draws=1,
                                   footpoint_radius=0.5, max_speed=1.5)
    assert plan["exact"] and "predicted_work" in plan
    rel = private_geodesic_regression(S2, t, y, eps_p=eps, eps_v=eps, tau=TAU,
                                      covariate_range=(0, 1), center=NORTH,
                                      footpoint_radius=0.5, max_speed=1.5, rng=3)
    joint = rel.diagnostics["joint"]
    assert rel.delta == 0 and "geodesic's own coordinates" in joint["sampler"]
    assert joint["float_safety"].startswith("each output is the public lattice cell")
    lat = NativeLattice(1.5, NORTH, 0.5)
    assert list(joint["lattice_spacing"]) == lat.spacing.tolist()
    ball = joint["lattice_ball"]
    assert list(ball["center"]) == NORTH.tolist() and ball["radius"] == 0.5
    p = np.asarray(rel.values["footpoint"]).reshape(3)
    v = np.asarray(rel.values["shooting_vector"]).reshape(3)
    assert S2.dist(p, NORTH) <= 0.5 and np.linalg.norm(v) <= 1.5
    # the released pair is the public point of a support cell, bit for bit
    k = lat.index_of(_native_coordinates(p, v)[None])
    assert lat.in_support(k)[0]
    p_k, v_k = lat.point(k)
    np.testing.assert_array_equal(p_k[0], p)
    np.testing.assert_array_equal(v_k[0], v)


def test_same_law_as_the_uniform_exact_sampler():
    """n = 30, n eps = 60: 400 draws of each exact sampler (fixed seeds), two-sample KS on the
    footpoint's distance to the centre, the speed and the footpoint's first chart coordinate.
    Each test fails falsely with chance 1e-7 when the laws agree (3e-7 in all)."""
    rng = np.random.default_rng(11)
    n = 30
    t, y = _data(n, rng)
    kng = [KNormGradient(manifold=S2, epsilon=60.0 / n,
                         sensitivity=math.hypot(2 * TAU / n, 2 * TAU / n))]
    ball = Ball.make(S2, NORTH, 0.5)
    kw = dict(tau=TAU, support=ball, max_norm=1.5)
    far = regression_joint_exact(kng, t, y, 400, 1, bundle=True, **kw)[0]
    uni = regression_joint_exact(kng, t, y, 400, 2, bundle=False, **kw)[0]
    own = "geodesic's own coordinates"
    assert own in far.sampler and own not in uni.sampler
    chart = NormalChart(NORTH)

    def stats_of(values):
        u, _ = chart.from_bundle(values[:, 0], values[:, 1])
        return (S2.dist(values[:, 0], NORTH), np.linalg.norm(values[:, 1], axis=-1), u[:, 0])

    for a, b in zip(stats_of(np.asarray(far.values)), stats_of(np.asarray(uni.values)),
                    strict=True):
        assert stats.ks_2samp(a, b).pvalue > 1e-7


def test_whole_sphere_preferred_within_its_measured_range():
    n, draws = 250, 9
    g_max = float(np.hypot(*regression_gradient_bounds(S2, TAU, math.pi)))
    delta = math.hypot(2 * TAU / n, 2 * TAU / n)
    for n_eps, cap in ((100.0, NATIVE_MIN_LEAVES), (250.0, 50_000),
                       (1000.0, NATIVE_MAX_LEAVES)):
        assert native_leaf_cap(n_eps) == cap
        assert bundle_joint_work(n, draws, n_eps=n_eps) == pytest.approx(
            2 * cap * NATIVE_LEAF_TERMS * n)
    with pytest.raises(ValueError, match="n_eps"):
        bundle_joint_work(n, draws)
    for n_eps in (30.0, 100.0, 150.0, SPHERE_MAX_N_EPS, 1.01 * SPHERE_MAX_N_EPS):
        sigma = 2 * delta / (n_eps / n)
        uniform = draws * n * worst_case_proposals(g_max, sigma)
        expect = uniform > get_limits().max_exact_work and n_eps <= SPHERE_MAX_N_EPS
        assert bundle_preferred(S2, None, math.pi, g_max=g_max, sigma=sigma, n=n,
                                draws=draws) == expect, n_eps
    plan = plan_regression_sampler(S2, 250, eps_p=0.2, eps_v=0.2, tau=TAU, draws=9)
    assert plan["exact"] and plan["guarantee"] == "private"
    assert plan["exact_sampler"] == "certified bundle"
    assert plan["predicted_work"] == pytest.approx(
        bundle_joint_work(250, 9, n_eps=100.0))
    assert plan["predicted_work"] <= plan["limit"]


def test_a_whole_sphere_release_is_private_exact_and_on_a_public_lattice():
    rng = np.random.default_rng(8)
    n, eps = 40, 1.0                                           # n eps = 80 per geodesic
    t, y = _data(n, rng)
    rel = private_geodesic_regression(S2, t, y, eps_p=eps, eps_v=eps, tau=TAU,
                                      covariate_range=(0, 1), rng=4)
    joint = rel.diagnostics["joint"]
    assert rel.delta == 0 and "geodesic's own coordinates" in joint["sampler"]
    assert joint["float_safety"].startswith("each output is the public lattice cell")
    p = np.asarray(rel.values["footpoint"]).reshape(3)
    v = np.asarray(rel.values["shooting_vector"]).reshape(3)
    assert np.linalg.norm(v) <= math.pi
    # the released pair is the public point of a support cell of the public lattice
    lattice = NativeLattice(math.pi)
    assert list(joint["lattice_spacing"]) == lattice.spacing.tolist()
    k = lattice.index_of(_native_coordinates(p, v)[None])
    assert lattice.in_support(k)[0]
    p_k, v_k = lattice.point(k)
    assert np.array_equal(p_k[0], p) and np.array_equal(v_k[0], v)


@pytest.mark.parametrize("d, eps, seed", [(2, 5.0, 7), (3, 20.0, 8)])
def test_flat_release_is_exact_private_and_on_the_public_lattice(d, eps, seed):
    """R^2 at n (eps_p + eps_v) = 1,000 and R^3 at 4,000 (the Linear regression page with two
    or three responses): n = 100, 3 x 3 draws. The plan and the release agree (exact, private,
    the bundle sampler), the values are points of the public lattice about the public centre,
    and at this budget they lie near the least-squares fit. (R^3 at n eps = 400-1,000 costs
    12-15 CPU s with these data: in the benchmark, not here.)"""
    rng = np.random.default_rng(seed)
    t = rng.uniform(0.0, 1.0, 100)
    center = np.array([6.0, 7.5, 5.0])[:d]
    slope = np.array([8.0, -5.0, 3.0])[:d]
    y = center + np.outer(t - 0.5, slope) + rng.normal(0.0, 0.8, (100, d))
    kwargs = dict(eps_p=eps, eps_v=eps, tau=2.0, tau_m=12.0)
    plan = plan_regression_sampler(Euclidean(d), 100, draws=9, **kwargs)
    assert plan["exact"] and plan["exact_sampler"] == "certified bundle"
    rel = private_geodesic_regression(Euclidean(d), t, y, center=center,
                                      covariate_range=(0.0, 1.0), n_footpoints=3,
                                      n_vectors=3, rng=3, **kwargs)
    assert rel.guarantee == "private" and rel.delta == 0.0   # seeded: "not for publication"
    diag = rel.diagnostics["joint"]
    p = np.asarray(rel.values["footpoint"]).reshape(-1, d)
    v = np.asarray(rel.values["shooting_vector"]).reshape(-1, d)
    assert p.shape == (9, d)
    z = np.concatenate([p - center, v], axis=-1)
    cells = (z - np.asarray(diag["lattice_origin"])) / np.asarray(diag["lattice_spacing"]) - 0.5
    np.testing.assert_array_equal(cells, np.round(cells))
    design = np.stack([np.ones_like(t), t], axis=1)
    fit_p, fit_v = np.linalg.lstsq(design, y, rcond=None)[0]
    assert np.max(np.abs(p - fit_p)) < 1.0
    assert np.max(np.abs(v - fit_v)) < 1.5


def test_plane_plan_is_exact_within_the_public_cost_and_reach_only():
    """R^2's choice between the bundle sampler and MCMC reads public inputs only: exact where
    the uniform proposals' worst case is beyond the limit, n (eps_p + eps_v) is within
    FLAT_MAX_N_EPS and the public cost (2 x leaf cap x LEAF_TERMS x n) within the limit;
    MCMC beyond either."""
    kwargs = dict(tau=2.0, tau_m=10.0, draws=9)
    exact = plan_regression_sampler(Euclidean(2), 1000, eps_p=50.0, eps_v=50.0, **kwargs)
    assert exact["exact"] and exact["exact_sampler"] == "certified bundle"
    assert exact["predicted_work"] == pytest.approx(2 * MAX_LEAVES * LEAF_TERMS * 1000)
    beyond_reach = plan_regression_sampler(Euclidean(2), 1000, eps_p=51.0, eps_v=51.0,
                                           **kwargs)
    assert not beyond_reach["exact"]
    # the public leaf cap falls with n (bundle_leaf_cap): exact to n = 10,000, MCMC beyond
    large = plan_regression_sampler(Euclidean(2), 10_000, eps_p=1.0, eps_v=1.0, **kwargs)
    assert large["exact"]
    assert bundle_leaf_cap(10_000, Euclidean(2)) == FLAT_MIN_LEAVES == 6_000
    assert large["predicted_work"] == pytest.approx(2 * 6_000 * LEAF_TERMS * 10_000)
    beyond_cost = plan_regression_sampler(Euclidean(2), 20_000, eps_p=1.0, eps_v=1.0, **kwargs)
    assert not beyond_cost["exact"]
    # R^3's envelopes need more leaves: a higher floor, so exact to n of about 5,000 only
    assert bundle_leaf_cap(10_000, Euclidean(3)) == FLAT3_MIN_LEAVES == 12_000
    assert plan_regression_sampler(Euclidean(3), 5_000, eps_p=1.0, eps_v=1.0, **kwargs)["exact"]
    assert not plan_regression_sampler(Euclidean(3), 6_000, eps_p=1.0, eps_v=1.0,
                                       **kwargs)["exact"]
    assert bundle_leaf_cap(250, Sphere(2), 1000.0) == NATIVE_MAX_LEAVES
    small = plan_regression_sampler(Euclidean(2), 100, eps_p=0.2, eps_v=0.2, **kwargs)
    assert small["exact"] and small["exact_sampler"] == "uniform proposals"


def test_the_sphere_prices_its_terms_by_the_native_leaf_bound():
    """The time estimate's "bundle" kind on S² times the native leaf bound (the envelope's
    dominant cost, in which NATIVE_LEAF_TERMS counts), on unit responses or on points of the
    plane mapped onto the sphere."""
    from dpcore.mechanisms.kng_bundle import bundle_proposal_norm
    from dpcore.sampling.sphere_native import cap_lower_bound

    kernel = bundle_proposal_norm(S2)
    assert kernel is not None and bundle_proposal_norm(SPD(2)) is None
    rng = np.random.default_rng(3)
    t, y = _data(20, rng)
    z = np.concatenate([rng.normal(size=(30, 3)) * 0.5, rng.uniform(0, 1, (30, 1))], axis=1)
    expected = cap_lower_bound(z, np.full(z.shape, 0.05), t, y, TAU)[0]
    np.testing.assert_allclose(kernel(z, t, y, TAU), expected, atol=1e-12)
    assert kernel(z, t, rng.normal(size=(20, 2)), TAU).shape == (30,)
