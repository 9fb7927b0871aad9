"""Release requests (dpcore.release.requests): frozen, hashable descriptions of a release by its
public inputs, which answer a page's questions by delegating to the functional API.

Every request validates its inputs when made; equal inputs give equal requests with equal
hashes (a cache key); ``run`` with a seed is bit for bit the functional call; ``plan``, ``work``
and ``predict`` equal the functions they wrap; ``event`` is the accountant's event of the
release ``run`` makes; the script settings survive JSON and rebuild the request.
"""

from __future__ import annotations

import dataclasses
import json
import warnings

import numpy as np
import pytest

import dpcore.release as release_module
from dpcore.data import make_mean_data, make_regression_data
from dpcore.exceptions import PrivacyLeakWarning
from dpcore.manifolds import SPD, Euclidean, Sphere
from dpcore.privacy import PrivacyEvent
from dpcore.release import (
    FrechetMeanRequest,
    GaussianReleaseRequest,
    GeodesicRegressionRequest,
    PrivateRangeRequest,
    plan_regression_sampler,
    private_frechet_mean,
    private_geodesic_regression,
    private_range,
)
from dpcore.release.accuracy import (
    predict_frechet_error,
    predict_gaussian_error,
    predict_linear_regression_error,
    predict_regression_error,
)
from dpcore.release.frechet_mechanisms import estimate_frechet_release_work
from dpcore.release.requests import group_privacy, manifold_from_repr, request_from_script_dict
from dpcore.release.work import WorkCosts, estimate_regression_work

S2, S1, LINE = Sphere(2), Sphere(1), Euclidean(1)
NORTH = np.array([0.0, 0.0, 1.0])
#: Fixed per-unit costs: work estimates without a timing calibration.
COSTS = WorkCosts(per_step=1e-4, per_term=3e-8, per_sample=1e-5)
#: A strict joint release on S² that the exact sampler draws in milliseconds (n ε small).
S2_JOINT = dict(eps_p=0.25, eps_v=0.25, tau=0.2, covariate_range=(0.0, 1.0))
#: The same bounds with short chains, for the MCMC paths.
QUICK = dict(chain_length=60, burn_in=40)
#: A strict joint linear regression on R^1 (refined exact sampler).
LINE_JOINT = dict(eps_p=1.0, eps_v=1.0, tau=1.0, tau_m=3.0, covariate_range=(0.0, 1.0),
                  center=(0.0,))
BALL = dict(radius=0.4, center=NORTH)


@pytest.fixture(scope="module")
def sphere_data():
    data = make_regression_data(S2, 20, rng=0)
    return data.x, data.y


@pytest.fixture(scope="module")
def line_data():
    data = make_regression_data(LINE, 30, rng=1)
    return data.x, data.y


@pytest.fixture(scope="module")
def mean_data():
    return make_mean_data(S2, 20, radius=0.4, rng=0)


@pytest.fixture(scope="module")
def circle_data():
    return make_mean_data(S1, 20, radius=0.4, rng=0)


def _quiet(func, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return func(*args, **kwargs)


def _same_release(a, b):
    assert a.values.keys() == b.values.keys()
    for key in a.values:
        np.testing.assert_array_equal(a.values[key], b.values[key])
    assert (a.epsilon, a.delta, a.mu, a.label, a.coverage) == (
        b.epsilon, b.delta, b.mu, b.label, b.coverage)
    assert a.sigma == b.sigma and a.sensitivity == b.sensitivity


# ====================================================================== validation
REGRESSION_BAD = [
    (dict(eps_p=-1.0), ValueError, "`eps_p` must be positive"),
    (dict(eps_v=0.0), ValueError, "`eps_v` must be positive"),
    (dict(n=1), ValueError, "`n` must be at least 2"),
    (dict(n=2.5), TypeError, "`n` must be an integer"),
    (dict(tau=-0.2), ValueError, "`tau` must be positive"),
    (dict(covariate_range=(1.0, 0.0)), ValueError, "`covariate_range` must satisfy low < high"),
    (dict(covariate_range=3.0), TypeError, "`covariate_range` must be a pair"),
    (dict(center=(0.0, 1.0)), ValueError, "`center` must be one point of shape (3,)"),
    (dict(center=(0.0, 0.0, 2.0)), ValueError, "`center` is not a point of Sphere(2)"),
    (dict(scheme="both"), ValueError, "`scheme` must be 'sequential' or 'joint'"),
    (dict(sampler="fast"), ValueError, "`sampler` must be"),
    (dict(mode="loose"), ValueError, "`mode` must be 'strict' or 'paper'"),
    (dict(n_vectors=0), ValueError, "`n_vectors` must be at least 1"),
    (dict(burn_in=-1), ValueError, "`burn_in` must be at least 0"),
    (dict(max_work=0.0), ValueError, "`max_work` must be a positive number"),
    (dict(seed=-1), ValueError, "`seed` must be at least 0"),
    (dict(seed="a"), TypeError, "`seed` must be an integer"),
    (dict(tau=None), ValueError, "Strict mode needs a public residual bound `tau`"),
    (dict(covariate_range=None), ValueError, "Strict mode needs a public `covariate_range"),
    (dict(bound_sources={"radius": "data"}), ValueError, "unknown bound 'radius'"),
    (dict(bound_sources={"tau": "guess"}), ValueError, "must be 'public' or 'data'"),
    (dict(bound_sources={"tau_m": "data"}), ValueError, "names 'tau_m', which was not passed"),
    (dict(bound_sources=3), TypeError, "`bound_sources` must be a mapping"),
]


@pytest.mark.parametrize(("change", "error", "message"), REGRESSION_BAD)
def test_regression_request_refuses_bad_inputs(change, error, message):
    kwargs = {"manifold": S2, "n": 20, **S2_JOINT, **change}
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        GeodesicRegressionRequest(**kwargs)


def test_regression_request_checks_its_manifold_and_the_ball_it_needs():
    with pytest.raises(TypeError, match="`manifold` must be a dpcore Manifold"):
        GeodesicRegressionRequest("sphere", 20, **S2_JOINT)
    with pytest.raises(ValueError, match="needs `tau_m`"):
        GeodesicRegressionRequest(LINE, 30, eps_p=1.0, eps_v=1.0, tau=1.0,
                                  covariate_range=(0.0, 1.0))
    # Paper mode takes missing bounds from the data: nothing is required.
    GeodesicRegressionRequest(LINE, 30, eps_p=1.0, eps_v=1.0, mode="paper")


FRECHET_BAD = [
    (dict(epsilon=-1.0), ValueError, "`epsilon` must be positive"),
    (dict(mechanism="gauss"), ValueError, "`mechanism` must be"),
    (dict(radius=-0.4), ValueError, "`radius` must be positive"),
    (dict(radius=None), ValueError, "Strict mode needs the public `radius`"),
    (dict(center=None), ValueError, "Strict mode needs the public `center`"),
    (dict(center=(1.0, 1.0, 1.0)), ValueError, "`center` is not a point of Sphere(2)"),
    (dict(n_draws=0), ValueError, "`n_draws` must be at least 1"),
    (dict(project="yes"), TypeError, "`project` must be a bool"),
    (dict(chain_length=0), ValueError, "`chain_length` must be at least 1"),
]


@pytest.mark.parametrize(("change", "error", "message"), FRECHET_BAD)
def test_frechet_request_refuses_bad_inputs(change, error, message):
    kwargs = {"manifold": S2, "n": 20, "epsilon": 1.0, **BALL, **change}
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        FrechetMeanRequest(**kwargs)


class _Lumpy(Sphere):
    """A sphere that claims not to be homogeneous (no Riemannian Gaussian on it)."""

    is_homogeneous = False


@pytest.mark.parametrize(("change", "error", "message"), [
    (dict(sigma=None), ValueError, "exactly one of `sigma`, `mu` and `epsilon`"),
    (dict(mu=1.0), ValueError, r"exactly one of .*\['sigma', 'mu'\]"),
    (dict(sigma=-0.5), ValueError, "`sigma` must be positive"),
    (dict(manifold=_Lumpy(2)), ValueError, "needs a homogeneous manifold"),
    (dict(radius=None), ValueError, "Strict mode needs the public `radius`"),
])
def test_gaussian_request_refuses_bad_inputs(change, error, message):
    kwargs = {"manifold": S2, "n": 20, "sigma": 0.5, **BALL, **change}
    with pytest.raises(error, match=message):
        GaussianReleaseRequest(**kwargs)


@pytest.mark.parametrize(("change", "error", "message"), [
    (dict(epsilon=-1.0), ValueError, "`epsilon` must be positive"),
    (dict(bounds=(1.0, 0.0)), ValueError, "`bounds` must satisfy low < high"),
    (dict(bounds=((0.0, 1.0), (2.0, 2.0))), ValueError, r"`bounds\[1\]` must satisfy"),
    (dict(quantiles=(0.1, 1.5)), ValueError, r"`quantiles` must lie in \[0, 1\]"),
    (dict(n_draws=0), ValueError, "`n_draws` must be at least 1"),
])
def test_range_request_refuses_bad_inputs(change, error, message):
    with pytest.raises(error, match=message):
        PrivateRangeRequest(**{"epsilon": 0.5, "bounds": (0.0, 10.0), **change})


# ====================================================================== hashing
def test_equal_inputs_make_equal_requests_with_equal_hashes():
    a = GeodesicRegressionRequest(Sphere(2), 20, eps_p=0.25, eps_v=0.25, tau=0.2,
                                  covariate_range=[0, 1], center=[0, 0, 1],
                                  bound_sources={"tau": "public", "center": "data"})
    b = GeodesicRegressionRequest(Sphere(2), 20, eps_p=0.25, eps_v=0.25, tau=0.2,
                                  covariate_range=(0.0, 1.0), center=np.array([0.0, 0.0, 1.0]),
                                  bound_sources={"center": "data", "tau": "public"})
    assert a == b and hash(a) == hash(b)
    assert a.center == (0.0, 0.0, 1.0) and a.covariate_range == (0.0, 1.0)
    assert len({a, b}) == 1
    cache = {a: "release plan"}
    assert cache[b] == "release plan"  # usable as a cache key
    c = a.replace(eps_p=0.5)
    assert c != a and c.eps_p == 0.5 and c.replace(eps_p=0.25) == a
    assert a != a.replace(manifold=Sphere(3), center=(0.0, 0.0, 0.0, 1.0))
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.eps_p = 1.0


@pytest.mark.parametrize("make", [
    lambda m: FrechetMeanRequest(m, 20, epsilon=1.0, mechanism="kng", radius=0.4,
                                 center=[0.0, 0.0, 1.0]),
    lambda m: GaussianReleaseRequest(m, 20, sigma=0.5, radius=0.4, center=(0, 0, 1)),
])
def test_frechet_requests_hash_by_value(make):
    a, b = make(Sphere(2)), make(Sphere(2))
    assert a == b and hash(a) == hash(b) and {a: 1}[b] == 1
    assert a != a.replace(n=21) and a != a.replace(seed=3)


def test_spd_centre_is_held_as_nested_tuples():
    a = FrechetMeanRequest(SPD(2), 10, epsilon=1.0, radius=0.5, center=np.eye(2))
    b = FrechetMeanRequest(SPD(2), 10, epsilon=1.0, radius=0.5, center=[[1, 0], [0, 1]])
    assert a.center == ((1.0, 0.0), (0.0, 1.0)) and a == b and hash(a) == hash(b)
    np.testing.assert_array_equal(a.center_array, np.eye(2))


def test_range_request_hashes_by_value():
    a = PrivateRangeRequest(epsilon=0.5, bounds=[[0, 10], [0, 5]], quantiles=[0.05, 0.95])
    b = PrivateRangeRequest(epsilon=0.5, bounds=((0.0, 10.0), (0.0, 5.0)),
                            quantiles=(0.05, 0.95))
    assert a == b and hash(a) == hash(b) and a.per_column
    one = PrivateRangeRequest(epsilon=0.5, bounds=[0, 10])
    assert one.bounds == (0.0, 10.0) and not one.per_column and one != a


def test_other_manifolds_compare_by_identity():
    m = _Lumpy(2)
    a = GeodesicRegressionRequest(m, 20, **S2_JOINT)
    assert a == GeodesicRegressionRequest(m, 20, **S2_JOINT)
    assert a != GeodesicRegressionRequest(_Lumpy(2), 20, **S2_JOINT)


# ====================================================================== regression
REGRESSION_CASES = {
    "joint exact": (S2, S2_JOINT, "sphere_data"),
    "joint MCMC": (S2, dict(S2_JOINT, sampler="mcmc", **QUICK), "sphere_data"),
    "sequential": (S2, dict(S2_JOINT, scheme="sequential", n_footpoints=2, n_vectors=2,
                            **QUICK), "sphere_data"),
    "bounds from the data": (S2, dict(S2_JOINT, bound_sources={"tau": "data"}),
                             "sphere_data"),
    "paper mode": (S2, dict(eps_p=1.0, eps_v=1.0, mode="paper", **QUICK), "sphere_data"),
    "linear, exact": (LINE, LINE_JOINT, "line_data"),
    "linear, paper mode": (LINE, dict(eps_p=1.0, eps_v=1.0, mode="paper", **QUICK),
                           "line_data"),
}


@pytest.mark.parametrize("case", list(REGRESSION_CASES))
def test_regression_run_is_the_functional_release_and_its_event(case, request):
    m, kwargs, fixture = REGRESSION_CASES[case]
    x, y = request.getfixturevalue(fixture)
    req = GeodesicRegressionRequest(m, len(y), seed=7, **kwargs)
    expected = _quiet(private_geodesic_regression, m, x, y, rng=7, **kwargs)
    got = _quiet(req.run, x, y)
    _same_release(got, expected)
    # The event before the release is the accountant's event of the release.
    assert req.event() == PrivacyEvent.of(got)
    assert req.plan()["guarantee"] == got.guarantee
    assert req.epsilon == got.epsilon


def test_regression_run_warns_in_paper_mode_and_checks_n(sphere_data):
    x, y = sphere_data
    req = GeodesicRegressionRequest(S2, len(y), eps_p=1.0, eps_v=1.0, mode="paper", **QUICK)
    with pytest.warns(PrivacyLeakWarning):
        req.run(x, y, rng=0)
    with pytest.raises(ValueError, match="`y` has 20 rows, but the request was made for n = 21"):
        req.replace(n=21).run(x, y)


def test_rng_argument_overrides_the_seed(sphere_data):
    x, y = sphere_data
    req = GeodesicRegressionRequest(S2, len(y), seed=1, **S2_JOINT)
    _same_release(req.run(x, y, rng=5), private_geodesic_regression(S2, x, y, rng=5,
                                                                    **S2_JOINT))


@pytest.mark.parametrize("kwargs", [
    S2_JOINT,
    dict(S2_JOINT, sampler="mcmc", n_footpoints=2, n_vectors=3),
    dict(S2_JOINT, scheme="sequential"),
    dict(eps_p=1.0, eps_v=2.0, mode="paper"),
    dict(S2_JOINT, sampler="exact", center=NORTH, footpoint_radius=0.5),
])
def test_regression_plan_and_work_are_the_functions(kwargs):
    req = GeodesicRegressionRequest(S2, 20, **kwargs)
    common = dict(eps_p=req.eps_p, eps_v=req.eps_v, tau=req.tau, tau_m=req.tau_m,
                  max_speed=req.max_speed, mode=req.mode, scheme=req.scheme,
                  sampler=req.sampler)
    assert req.plan() == plan_regression_sampler(S2, 20, draws=req.draws,
                                                 footpoint_radius=req.footpoint_radius,
                                                 **common)
    assert req.work(costs=COSTS) == estimate_regression_work(
        S2, 20, n_vectors=req.n_vectors, n_footpoints=req.n_footpoints,
        chain_length=req.chain_length, burn_in=req.burn_in, costs=COSTS, **common)


def test_regression_plan_of_bounds_from_the_data_is_not_private():
    req = GeodesicRegressionRequest(S2, 20, bound_sources={"tau": "data"}, **S2_JOINT)
    plan = req.plan()
    assert plan["exact"] and plan["guarantee"] == "not private"
    assert req.event().label == "NOT PRIVATE (bounds from the data)"


def test_regression_refusal_follows_the_work_budget():
    req = GeodesicRegressionRequest(S2, 20, sampler="mcmc", **{**S2_JOINT, **QUICK})
    assert req.refusal(costs=COSTS) is None
    slow = WorkCosts(per_step=10.0, per_term=1.0)
    assert "above the work budget" in req.refusal(costs=slow)
    assert req.replace(max_work=float("inf")).refusal(costs=slow) is None


def test_regression_prediction_is_the_function():
    req = GeodesicRegressionRequest(S2, 20, **S2_JOINT)
    got = req.predict(proposals=2000, min_ess=10, rng=3)
    assert got == predict_regression_error(S2, 20, eps_p=0.25, eps_v=0.25, tau=0.2,
                                           proposals=2000, min_ess=10, rng=3)
    assert req.replace(mode="paper").predict() is None
    assert req.replace(scheme="sequential").predict() is None
    with pytest.raises(ValueError, match="linear regression on Euclidean"):
        req.predict(metric="excess_mse")
    with pytest.raises(ValueError, match="`metric` must be"):
        req.predict(metric="mse")


def test_linear_regression_request():
    req = GeodesicRegressionRequest.linear(1, 30, **LINE_JOINT)
    assert req.manifold.d == 1 and req == GeodesicRegressionRequest(Euclidean(1), 30,
                                                                    **LINE_JOINT)
    split = GeodesicRegressionRequest.linear(
        1, 30, epsilon=2.0, **{k: v for k, v in LINE_JOINT.items() if k[:3] != "eps"})
    assert split == req
    with pytest.raises(ValueError, match="not both"):
        GeodesicRegressionRequest.linear(1, 30, epsilon=2.0, **LINE_JOINT)
    assert req.predict(metric="excess_mse", proposals=2000) == predict_linear_regression_error(
        30, 1, epsilon=2.0, tau=1.0, tau_m=3.0, proposals=2000, rng=0)
    assert req.predict(proposals=2000, min_ess=10) == predict_regression_error(
        LINE, 30, eps_p=1.0, eps_v=1.0, tau=1.0, tau_m=3.0, center=np.zeros(1),
        proposals=2000, min_ess=10, rng=0)


# ====================================================================== Fréchet means
FRECHET_CASES = {
    "laplace": dict(epsilon=1.0, mechanism="laplace", n_draws=2, **BALL),
    "kng exact": dict(epsilon=1.0, mechanism="kng", **BALL),
    "kng MCMC": dict(epsilon=1.0, mechanism="kng", sampler="mcmc", **QUICK, **BALL),
    "ambient": dict(epsilon=1.0, mechanism="ambient_laplace", project=False, **BALL),
    "gaussian at an epsilon": dict(epsilon=1.0, mechanism="gaussian", **BALL),
    "paper mode": dict(epsilon=1.0, mechanism="laplace", mode="paper"),
}


@pytest.mark.parametrize("case", list(FRECHET_CASES))
def test_frechet_run_is_the_functional_release_and_its_event(case, mean_data):
    kwargs = FRECHET_CASES[case]
    req = FrechetMeanRequest(S2, len(mean_data), seed=4, **kwargs)
    expected = _quiet(private_frechet_mean, S2, mean_data, rng=4, **kwargs)
    got = _quiet(req.run, mean_data)
    _same_release(got, expected)
    assert req.event() == PrivacyEvent.of(got)
    assert req.plan()["guarantee"] == got.guarantee


@pytest.mark.parametrize("sampler", ["auto", "mcmc"])
def test_frechet_kng_plan_is_the_release_decision(sampler, mean_data):
    req = FrechetMeanRequest(S2, 20, epsilon=1.0, mechanism="kng", sampler=sampler,
                             **QUICK, **BALL)
    rel = _quiet(req.run, mean_data, rng=0)
    plan = req.plan()
    assert plan["exact"] == rel.diagnostics["exact"] == (sampler == "auto")
    assert plan["sigma"] == rel.sigma["mean"]
    assert plan["guarantee"] == ("private" if sampler == "auto" else "approximately private")


@pytest.mark.parametrize("mechanism", ["laplace", "kng", "ambient_laplace", "gaussian"])
def test_frechet_work_is_the_function(mechanism):
    req = FrechetMeanRequest(S1, 20, epsilon=1.0, mechanism=mechanism, radius=0.4,
                             center=S1.origin)
    assert req.work(costs=COSTS) == estimate_frechet_release_work(
        S1, 20, mechanism=mechanism, epsilon=1.0, radius=0.4, center=S1.origin,
        costs=COSTS)


@pytest.mark.parametrize("mechanism", ["laplace", "kng"])
def test_frechet_prediction_is_the_function(mechanism):
    req = FrechetMeanRequest(S2, 20, epsilon=1.0, mechanism=mechanism, **BALL)
    assert req.predict(rng=2) == predict_frechet_error(S2, 20, epsilon=1.0, mechanism=mechanism,
                                                       rng=2, **BALL)


def test_frechet_without_a_prediction_says_none():
    req = FrechetMeanRequest(S2, 20, epsilon=1.0, mechanism="ambient_laplace", **BALL)
    assert req.predict() is None
    assert req.replace(mechanism="laplace", mode="paper").predict() is None
    assert FrechetMeanRequest(SPD(3), 20, epsilon=1.0, radius=0.5, center=np.eye(3)
                              ).predict() is None


# ====================================================================== Gaussian DP
GAUSSIAN_CASES = {
    "sigma on S1 (exact µ)": (S1, dict(sigma=0.5)),
    "mu on S1": (S1, dict(mu=1.0, n_draws=3)),
    "sigma on S2 (Monte Carlo µ)": (S2, dict(sigma=0.5)),
}


@pytest.mark.parametrize("case", list(GAUSSIAN_CASES))
def test_gaussian_run_is_the_functional_release_and_its_event(case):
    m, kwargs = GAUSSIAN_CASES[case]
    y = make_mean_data(m, 20, radius=0.4, rng=0)
    req = GaussianReleaseRequest(m, 20, radius=0.4, center=m.origin, seed=2, **kwargs)
    expected = private_frechet_mean(m, y, mechanism="gaussian", radius=0.4, center=m.origin,
                                    rng=2, **kwargs)
    got = req.run(y)
    _same_release(got, expected)
    assert req.event() == PrivacyEvent.of(got)
    assert req.plan()["guarantee"] == got.guarantee


def test_gaussian_plan_work_and_prediction():
    req = GaussianReleaseRequest(S2, 20, sigma=0.5, **BALL)
    plan = req.plan()
    assert plan["exact"] and plan["accounting"] == "monte_carlo"
    assert plan["guarantee"] == "approximately private"
    assert GaussianReleaseRequest(S1, 20, sigma=0.5, radius=0.4, center=S1.origin
                                  ).plan()["guarantee"] == "private"
    assert req.work(costs=COSTS) == estimate_frechet_release_work(
        S2, 20, mechanism="gaussian", sigma=0.5, costs=COSTS, **BALL)
    assert req.predict() == predict_gaussian_error(S2, 0.5)
    # A µ target: σ is the one the release calibrates.
    by_mu = GaussianReleaseRequest(S1, 20, mu=1.0, radius=0.4, center=S1.origin)
    assert by_mu.rate() == by_mu.model_release().sigma["mean"]
    assert by_mu.predict() == predict_gaussian_error(S1, by_mu.rate())
    assert req.sensitivity() == by_mu.replace(manifold=S2, center=NORTH).sensitivity()


def test_frechet_gaussian_is_the_gaussian_request_at_that_epsilon():
    req = FrechetMeanRequest(S1, 20, epsilon=1.0, mechanism="gaussian", radius=0.4,
                             center=S1.origin)
    gauss = req.as_gaussian()
    assert gauss == GaussianReleaseRequest(S1, 20, epsilon=1.0, radius=0.4, center=S1.origin)
    assert req.event() == gauss.event() and req.plan() == gauss.plan()
    with pytest.raises(ValueError, match="for mechanism='gaussian'"):
        req.replace(mechanism="laplace").as_gaussian()


# ====================================================================== private ranges
def test_range_run_is_the_functional_release_and_its_event():
    x = np.random.default_rng(0).uniform(2.0, 8.0, size=(40, 2))
    req = PrivateRangeRequest(epsilon=0.5, bounds=[(0, 10), (0, 10)], n_draws=2, seed=9)
    seen = []
    got = req.run(x, progress=seen.append)
    _same_release(got, private_range(x, epsilon=0.5, bounds=[(0, 10), (0, 10)], n_draws=2,
                                     rng=9))
    assert seen == [1.0]
    assert req.event() == PrivacyEvent.of(got)
    assert req.plan()["exact"] and req.plan()["guarantee"] == "private"
    assert req.work().seconds == 0.0 and req.predict() is None


# ====================================================================== events
def test_event_group_privacy():
    req = GeodesicRegressionRequest(S2, 20, **S2_JOINT)
    one, three = req.event(), req.event(rows=3)
    assert three.epsilon == pytest.approx(3 * one.epsilon) and three.delta == 0.0
    assert three.guarantee == one.guarantee and "3 rows per person" in three.note
    mcmc = req.replace(sampler="mcmc").event(rows=2)
    assert mcmc.delta is None and mcmc.guarantee == "approximately private"
    gauss = GaussianReleaseRequest(S1, 20, mu=1.0, radius=0.4, center=S1.origin)
    assert gauss.event(rows=4).mu == pytest.approx(4.0) and gauss.event().epsilon is None
    with pytest.raises(ValueError, match="`rows` must be at least 1"):
        req.event(rows=0)
    # (ε, δ) with δ > 0: k ε and k e^{(k-1) ε} δ.
    eps, delta, mu = group_privacy(0.5, 1e-6, None, rows=3)
    assert eps == 1.5 and delta == pytest.approx(3 * np.exp(1.0) * 1e-6) and mu is None


def test_event_of_a_seeded_request_says_not_for_publication():
    req = GeodesicRegressionRequest(S2, 20, **S2_JOINT)
    assert req.event().label == "private"
    assert req.replace(seed=1).event().label == "private mechanism, seeded: not for publication"


def test_paper_mode_events_are_not_private():
    reg = GeodesicRegressionRequest(S2, 20, eps_p=1.0, eps_v=1.0, mode="paper")
    assert reg.event().guarantee == "not private"
    assert reg.event().label == "NOT PRIVATE (paper mode: bounds from the data)"
    mean = FrechetMeanRequest(S2, 20, epsilon=1.0, mode="paper", **BALL)
    assert mean.event().label == "NOT PRIVATE (paper mode: sigma = Delta/epsilon)"


# ====================================================================== scripts
SCRIPT_REQUESTS = [
    GeodesicRegressionRequest(S2, 20, seed=3, bound_sources={"tau": "data"},
                              max_work=float("inf"), **S2_JOINT),
    GeodesicRegressionRequest(SPD(2), 20, eps_p=1.0, eps_v=1.0, tau=0.5, tau_m=1.0,
                              center=2.0 * np.eye(2), covariate_range=(0.0, 10.0),
                              scheme="joint", n_footpoints=2, footpoint_radius=1.2),
    FrechetMeanRequest(S2, 20, epsilon=1.0, mechanism="kng", sampler="mcmc", **BALL),
    GaussianReleaseRequest(S2, 20, sigma=0.5, seed=1, **BALL),
    PrivateRangeRequest(epsilon=0.5, bounds=[(0, 10), (-1, 1)], quantiles=(0.1, 0.9)),
]


@pytest.mark.parametrize("req", SCRIPT_REQUESTS, ids=lambda r: type(r).__name__)
def test_script_dict_round_trips_through_json(req):
    data = req.to_script_dict()
    text = json.dumps(data, allow_nan=False)
    back = json.loads(text)
    assert back == data and back["request"] == type(req).__name__
    assert request_from_script_dict(back) == req
    assert type(req).from_script_dict(back) == req


def test_script_settings_are_the_functional_release_arguments(sphere_data):
    x, y = sphere_data
    req = GeodesicRegressionRequest(S2, len(y), seed=3, center=NORTH, **S2_JOINT)
    data = json.loads(json.dumps(req.to_script_dict()))
    assert data["manifold"] == "Sphere(2)" and data["n"] == 20
    assert data["settings"]["covariate_range"] == [0.0, 1.0]
    # What an exported script runs: private_...(manifold, data, rng=SEED, **SETTINGS).
    script = private_geodesic_regression(manifold_from_repr(data["manifold"]), x, y,
                                         rng=data["release_seed"], **data["settings"])
    _same_release(script, req.run(x, y))


def test_script_dict_errors():
    data = SCRIPT_REQUESTS[0].to_script_dict()
    with pytest.raises(ValueError, match="describes a 'GeodesicRegressionRequest'"):
        FrechetMeanRequest.from_script_dict(data)
    with pytest.raises(ValueError, match="must be one of"):
        request_from_script_dict({"request": "Nothing"})
    with pytest.raises(ValueError, match="does not take"):
        GeodesicRegressionRequest.from_script_dict({**data, "settings": {**data["settings"],
                                                                         "rng": 3}})
    gauss = SCRIPT_REQUESTS[3].to_script_dict()
    with pytest.raises(ValueError, match="has `mechanism` = 'gaussian', got 'laplace'"):
        GaussianReleaseRequest.from_script_dict(
            {**gauss, "settings": {**gauss["settings"], "mechanism": "laplace"}})
    with pytest.raises(ValueError, match="must name a built-in manifold"):
        manifold_from_repr("GeomstatsManifold(Hypersphere)")
    assert repr(manifold_from_repr("SPD(3)")) == "SPD(3)"


def test_requests_are_exported_from_dpcore_release():
    for name in ("FrechetMeanRequest", "GaussianReleaseRequest", "GeodesicRegressionRequest",
                 "PrivateRangeRequest"):
        assert name in release_module.__all__ and hasattr(release_module, name)
