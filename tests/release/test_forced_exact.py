"""A forced exact release (``sampler="exact"``) has a public bound on its work and is refused
before any sampling above the ``max_exact_work`` limit (dpcore.release.planning); the decision
reads public inputs only, never the data."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpcore.data import make_mean_data
from dpcore.exceptions import ExactSamplingUnavailable
from dpcore.manifolds import Euclidean, Sphere
from dpcore.release import (
    frechet_mechanisms,
    plan_regression_sampler,
    private_frechet_mean,
    private_geodesic_regression,
    regression,
)
from dpcore.release.planning import (
    exact_bound_refusal,
    exact_work,
    frechet_exact_bound,
    joint_exact_bound,
    uniform_exact_bound,
)
from dpcore.settings import get_limits

LINE = Euclidean(1)
NORTH = np.array([0.0, 0.0, 1.0])
#: The issue's request: R^1, n = 5, epsilon = 500, tau = 0.01 (ran for more than 8 minutes).
HUGE = dict(eps_p=250.0, eps_v=250.0, tau=0.01, covariate_range=(0.0, 1.0), tau_m=1.0,
            sampler="exact")


def _line_data(seed, n=5):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.0, 1.0, n)
    return x, (0.2 + 0.5 * x + rng.normal(0.0, 0.01, n))[:, None]


@pytest.fixture
def no_sampling(monkeypatch):
    """Any sampler reached fails the test: a refusal must come before sampling."""
    def reached(*args, **kwargs):
        raise AssertionError("a sampler ran before the refusal")

    for module, names in ((regression, ("regression_joint_exact", "regression_joint_many")),
                          (frechet_mechanisms, ("frechet_mean_exact",))):
        for name in names:
            monkeypatch.setattr(module, name, reached)


def _refusal(call):
    with pytest.raises(ExactSamplingUnavailable) as err:
        call()
    return str(err.value)


# --------------------------------------------------------------------------- regression
def test_the_issue_s_request_is_refused_before_sampling(no_sampling):
    message = _refusal(lambda: private_geodesic_regression(LINE, *_line_data(0), **HUGE))
    assert message.startswith("Exact sampling of the joint (footpoint, shooting vector) KNG "
                              "(sampler='exact') could need up to ")
    assert f"above the limit max_exact_work = {get_limits().max_exact_work:,}" in message
    assert "refined envelope" in message and "n = 5" in message
    assert "public prediction" in message  # auto's prediction is beyond reach too
    for remedy in ("Lower n x epsilon or the number of draws", "sampler='mcmc'",
                   "dpcore.settings", "DPCORE_MAX_EXACT_WORK"):
        assert remedy in message, remedy
    assert isinstance(ExactSamplingUnavailable(message), ValueError)


def test_the_refusal_does_not_depend_on_the_data(no_sampling):
    """Two data sets with the same public inputs: the same refusal, word for word, and the
    same as the plan made without any data."""
    first = _refusal(lambda: private_geodesic_regression(LINE, *_line_data(1), **HUGE))
    x, y = _line_data(2)
    second = _refusal(lambda: private_geodesic_regression(LINE, 1.0 - x, -3.0 * y, **HUGE))
    assert first == second
    plan = plan_regression_sampler(LINE, 5, eps_p=250.0, eps_v=250.0, tau=0.01, tau_m=1.0,
                                   sampler="exact")
    assert plan["refusal"] == first and plan["exact_bound"] > plan["limit"]


def test_a_small_forced_exact_release_still_runs():
    for seed in (3, 4):  # the same decision (run) for two data sets
        x, y = _line_data(seed, n=20)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # seeded: not for publication
            rel = private_geodesic_regression(LINE, x, y, eps_p=1.0, eps_v=1.0, tau=1.0,
                                              covariate_range=(0.0, 1.0), tau_m=1.0,
                                              sampler="exact", rng=seed)
        assert rel.guarantee == "private" and rel.delta == 0.0
        assert rel.diagnostics["joint"]["exact"]
    plan = plan_regression_sampler(LINE, 20, eps_p=1.0, eps_v=1.0, tau=1.0, tau_m=1.0,
                                   sampler="exact")
    assert plan["refusal"] is None and plan["exact_bound"] <= plan["limit"]


def test_the_limit_is_read_from_the_settings(monkeypatch, no_sampling):
    """Lowering DPCORE_MAX_EXACT_WORK below the small request's bound and prediction (n = 20
    gradient terms are at least 20 per envelope cell) refuses it too; the plan agrees."""
    monkeypatch.setenv("DPCORE_MAX_EXACT_WORK", "10")
    message = _refusal(lambda: private_geodesic_regression(
        LINE, *_line_data(3, n=20), eps_p=1.0, eps_v=1.0, tau=1.0, covariate_range=(0.0, 1.0),
        tau_m=1.0, sampler="exact"))
    assert "above the limit max_exact_work = 10;" in message
    plan = plan_regression_sampler(LINE, 20, eps_p=1.0, eps_v=1.0, tau=1.0, tau_m=1.0,
                                   sampler="exact")
    assert plan["refusal"] == message and plan["predicted_work"] > 10


def test_uniform_proposals_are_refused_above_their_worst_case(no_sampling):
    """On S² (uniform proposals) the bound is exp(g_max/sigma) proposals per draw."""
    rng = np.random.default_rng(5)
    x = rng.uniform(0.0, 1.0, 30)
    y = Sphere(2).exp(np.broadcast_to(NORTH, (30, 3)),
                      np.stack([0.3 * x, 0.1 * x, 0 * x], axis=1))
    message = _refusal(lambda: private_geodesic_regression(
        Sphere(2), x, y, eps_p=20.0, eps_v=20.0, tau=0.3, covariate_range=(0.0, 1.0),
        sampler="exact"))
    assert "uniform proposals, 1 draw(s) x n = 30 x exp(g_max/sigma)" in message


def test_the_bounds_are_the_documented_worst_cases():
    bound = uniform_exact_bound(0.5, 0.1, 40, 3, batches=2)
    assert bound.terms == pytest.approx(2 * exact_work(0.5, 0.1, 40, 3))
    assert bound.terms == pytest.approx(2 * 3 * 40 * np.exp(5.0))
    from dpcore.sampling.envelope import refined_worst_case

    joint = joint_exact_bound(LINE, tau=1.0, max_speed=4.0, sigma=0.2, n=20, draws=3,
                              support_radius=2.0)
    cells, per = refined_worst_case(2, 4.0, 1.0, 2.0, 0.2)
    assert joint.terms == pytest.approx((cells + 3 * per) * 20)
    # without a footpoint ball (or off R^1) the uniform proposals run
    assert joint_exact_bound(Euclidean(2), tau=1.0, max_speed=4.0, sigma=0.2, n=20, draws=3,
                             support_radius=2.0).detail.startswith("uniform proposals")
    within = exact_bound_refusal(bound._replace(terms=10.0), "x", limit=100)
    beyond = exact_bound_refusal(bound._replace(terms=1e3), "x", limit=100)
    assert within is None and "above the limit max_exact_work = 100" in beyond
    assert exact_bound_refusal(bound._replace(terms=1e3), "x", limit=100,
                               predicted_work=50.0) is None  # "auto" would draw exactly
    assert exact_bound_refusal(bound._replace(terms=float("inf")), "x", limit=100) is not None


# --------------------------------------------------------------------------- Fréchet mean
def _frechet(pts, epsilon, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return private_frechet_mean(Sphere(2), pts, epsilon=epsilon, mechanism="kng",
                                    radius=0.4, center=NORTH, sampler="exact", **kw)


def test_a_forced_exact_frechet_kng_is_refused_above_its_bound(monkeypatch, no_sampling):
    """The Fréchet-mean KNG had the same hole. The refusal reads public inputs only: the same
    for two data sets; its bound is frechet_exact_bound's."""
    # Below both the bound and the envelope's public prediction (at least n terms a cell):
    # the refined envelope reaches far, so only a small limit refuses it on S².
    monkeypatch.setenv("DPCORE_MAX_EXACT_WORK", "5")
    messages = [_refusal(lambda pts=pts: _frechet(pts, 1.0))
                for pts in (make_mean_data(Sphere(2), 10, radius=0.4, rng=6),
                            make_mean_data(Sphere(2), 10, radius=0.3, rng=7))]
    assert messages[0] == messages[1]
    assert messages[0].startswith("Exact sampling of the Fréchet-mean KNG (sampler='exact')")
    assert "above the limit max_exact_work = 5;" in messages[0]
    assert "public prediction" in messages[0]


def test_a_small_forced_exact_frechet_kng_still_runs():
    pts = make_mean_data(Sphere(2), 10, radius=0.4, rng=8)
    rel = _frechet(pts, 1.0, rng=0)
    assert rel.guarantee == "private" and rel.diagnostics["exact"]
    bound = frechet_exact_bound(Sphere(2), center=NORTH, radius=0.4, sigma=rel.sigma["mean"],
                                n=10, draws=1)
    assert bound.terms <= get_limits().max_exact_work
