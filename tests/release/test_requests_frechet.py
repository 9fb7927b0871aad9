"""Fréchet-mean requests (dpcore.release.requests.frechet): what the Fréchet mean page reads
before the release, beyond tests/release/test_requests.py.

The planned event is the release's own (epsilon or mu, delta, guarantee, label) also where the
draws are exact but their floats depend on the data (no public lattice: DESIGN §12), which
the plan decides from public inputs as the mechanisms do; a Gaussian request at an ε states
its event without calibrating σ; the smallest-ε search is the library's, and says why where
there is none.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpcore.data import make_mean_data
from dpcore.manifolds import SPD, Euclidean, Hyperbolic, Sphere
from dpcore.privacy import PrivacyEvent
from dpcore.release import FrechetMeanRequest, GaussianReleaseRequest
from dpcore.release.accuracy import smallest_frechet_epsilon

NORTH = np.array([0.0, 0.0, 1.0])

#: (manifold, radius, mechanism, epsilon) -> whether the draws lie on a public lattice.
EVENT_CASES = {
    "Laplace on S2 (lattice)": (Sphere(2), 0.4, "laplace", 1.0, True),
    "ambient on S2 (lattice of R^3)": (Sphere(2), 0.4, "ambient_laplace", 1.0, True),
    "ambient on SPD(3) (D = 6: radial)": (SPD(3), 1.0, "ambient_laplace", 1.0, False),
    "Laplace on R^5 (dimension 5: radial)": (Euclidean(5), 1.0, "laplace", 1.0, False),
    "Laplace on SPD(2), r = 3 (truncated lattice)": (SPD(2), 3.0, "laplace", 1.0, True),
    # Far out the chart of SPD(2) is numerically degenerate: the radial sampler runs.
    "Laplace on SPD(2), r = 6, eps = 1 (chart unsound)": (SPD(2), 6.0, "laplace", 1.0, False),
    "Laplace on SPD(2), r = 6, eps = 0.1 (support ball)": (SPD(2), 6.0, "laplace", 0.1, True),
    "Laplace on SPD(3) (radial part by MCMC)": (SPD(3), 1.0, "laplace", 1.0, False),
    "Gaussian on R^2 (radial)": (Euclidean(2), 1.0, "gaussian", 1.0, False),
    "Gaussian on S1 (lattice, exact µ)": (Sphere(1), 0.4, "gaussian", 1.0, True),
    "Gaussian on H2 (Monte Carlo µ)": (Hyperbolic(2), 1.0, "gaussian", 1.0, False),
}


def _quiet(func, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return func(*args, **kwargs)


@pytest.mark.parametrize("case", list(EVENT_CASES))
def test_planned_event_is_the_release_event_float_safe_or_not(case):
    m, radius, mechanism, epsilon, lattice = EVENT_CASES[case]
    y = make_mean_data(m, 30, radius=radius, rng=0, center=m.origin)
    req = FrechetMeanRequest(m, 30, epsilon=epsilon, mechanism=mechanism, radius=radius,
                             center=m.origin, seed=1)
    plan = req.plan()
    assert plan["float_safe"] is lattice
    assert ("public lattice" in plan["sampler"]) is lattice
    rel = _quiet(req.run, y)
    assert req.event() == PrivacyEvent.of(rel)
    assert plan["guarantee"] == rel.guarantee
    assert ("public lattice" in rel.diagnostics["sampler"]) is lattice


def test_radial_draws_are_labelled_before_the_release():
    """The event of exact draws whose floats depend on the data states no δ and the release's
    label, where the plan used to say private (δ = 0)."""
    req = FrechetMeanRequest(SPD(3), 30, epsilon=1.0, mechanism="ambient_laplace", radius=1.0,
                             center=np.eye(3))
    event = req.event()
    assert event.delta is None and event.guarantee == "approximately private"
    assert "floats depend on the data" in event.label
    assert req.replace(manifold=SPD(2), center=np.eye(2)).event().delta == 0.0


def test_paper_mode_without_the_ball_keeps_the_plan_open():
    req = FrechetMeanRequest(Sphere(2), 20, epsilon=1.0, mode="paper")
    assert req.plan()["float_safe"] is None
    assert req.event().guarantee == "not private"


def test_gaussian_event_at_an_epsilon_needs_no_calibration(monkeypatch):
    """At a µ or an ε the event is known without the model release (σ's Monte Carlo); at a rate
    σ, µ is the model release's estimate."""
    m = Sphere(2)
    y = make_mean_data(m, 20, radius=0.4, rng=0)
    req = FrechetMeanRequest(m, 20, epsilon=1.0, mechanism="gaussian", radius=0.4,
                             center=NORTH, n_draws=3, seed=0)
    released = _quiet(req.run, y)
    calls = []

    def counted(self):
        calls.append(self)
        raise AssertionError("no model release at a µ or an ε")

    monkeypatch.setattr(GaussianReleaseRequest, "model_release", counted)
    assert req.event() == PrivacyEvent.of(released)
    assert req.event().mu == pytest.approx(released.mu) and not calls
    by_sigma = GaussianReleaseRequest(m, 20, sigma=0.5, radius=0.4, center=NORTH)
    with pytest.raises(AssertionError, match="no model release"):
        by_sigma.event()
    assert len(calls) == 1


def test_gaussian_prediction_without_a_radial_law_skips_the_calibration(monkeypatch):
    def no_rate(self):
        raise AssertionError("σ calibrated for nothing")

    monkeypatch.setattr(GaussianReleaseRequest, "rate", no_rate)
    assert GaussianReleaseRequest(SPD(3), 20, epsilon=1.0, radius=1.0,
                                  center=np.eye(3)).predict() is None
    with pytest.raises(AssertionError, match="σ calibrated"):
        GaussianReleaseRequest(Sphere(2), 20, epsilon=1.0, radius=0.4, center=NORTH).predict()


@pytest.mark.parametrize("mechanism", ["laplace", "kng"])
def test_smallest_epsilon_is_the_library_search(mechanism):
    req = FrechetMeanRequest(Sphere(2), 50, epsilon=1.0, mechanism=mechanism, radius=0.4,
                             center=NORTH)
    target = 0.5 * req.predict()["median"]
    found = req.smallest_epsilon(target)
    assert found == smallest_frechet_epsilon(Sphere(2), 50, target, radius=0.4, center=NORTH,
                                             mechanism=mechanism)
    assert found > 1.0  # half the error needs more budget
    assert req.replace(epsilon=found).predict()["median"] <= target
    assert req.smallest_epsilon(1e-12) is None


@pytest.mark.parametrize("change, reason", [
    (dict(mechanism="gaussian"), "calibrated by Monte Carlo at each ε"),
    (dict(mechanism="ambient_laplace"), "no closed-form law"),
    (dict(mode="paper"), "no closed-form law"),
    (dict(manifold=SPD(3), center=np.eye(3)), "closed-form"),
])
def test_smallest_epsilon_says_why_there_is_no_search(change, reason):
    req = FrechetMeanRequest(Sphere(2), 50, epsilon=1.0, radius=0.4, center=NORTH)
    with pytest.raises(NotImplementedError, match=reason):
        req.replace(**change).smallest_epsilon(0.01)
