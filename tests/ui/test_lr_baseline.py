"""The Linear regression page's diffprivlib comparison as a request
(:class:`ui.logic.linear_regression_baseline.DiffprivlibRequest`): its event, stated before any
data, is what the cost line and the ledger entry use."""

import importlib.util

import numpy as np
import pytest

from dpcore.release import GeodesicRegressionRequest
from dpcore.release.record import DATA_BOUNDS_LABEL, LABELS
from ui.logic.linear_regression_baseline import DiffprivlibRequest

HAS_DIFFPRIVLIB = importlib.util.find_spec("diffprivlib") is not None


def bounds(sources=None, covariate_range=(0.0, 10.0)):
    return {"covariate_range": covariate_range, "tau": 5.0, "tau_m": 5.0, "center": [0.0],
            "box": [("y", -5.0, 5.0)], "bound_sources": sources or {}}


def dpcore_request(mode="strict", eps_p=0.5, eps_v=1.5):
    kw = ({"tau": 5.0, "covariate_range": (0.0, 10.0), "tau_m": 5.0, "center": [0.0]}
          if mode == "strict" else {})
    return GeodesicRegressionRequest.linear(1, 50, eps_p=eps_p, eps_v=eps_v, mode=mode, **kw)


def test_matching_takes_dpcores_total_epsilon_and_bounds():
    req = DiffprivlibRequest.matching(dpcore_request(), bounds())
    assert req.epsilon == pytest.approx(2.0)
    assert req.covariate_range == (0.0, 10.0)
    assert (req.lower, req.upper) == ((-5.0,), (5.0,))
    assert req.mode == "strict" and req.from_data == ()
    assert hash(req) == hash(DiffprivlibRequest.matching(dpcore_request(), bounds()))


def test_event_is_pure_epsilon_dp_with_its_label():
    event = DiffprivlibRequest.matching(dpcore_request(), bounds()).event()
    assert (event.epsilon, event.delta, event.mu) == (pytest.approx(2.0), 0.0, None)
    assert event.guarantee == "private" and event.label == "private (diffprivlib)"
    grouped = DiffprivlibRequest.matching(dpcore_request(), bounds()).event(rows=3)
    assert grouped.epsilon == pytest.approx(6.0) and grouped.delta == 0.0
    assert "3 rows per person" in grouped.note


def test_bounds_from_the_data_make_it_not_private_as_dpcores():
    sources = {"tau": "public", "covariate_range": "data"}
    req = DiffprivlibRequest.matching(dpcore_request(), bounds(sources))
    assert req.from_data == ("covariate_range",)
    event = req.event()
    assert event.guarantee == "not private" and event.label == DATA_BOUNDS_LABEL
    paper = DiffprivlibRequest.matching(dpcore_request("paper"),
                                        bounds(covariate_range=None)).event()
    assert paper.guarantee == "not private" and paper.label == LABELS["not private"]
    # the same guarantee as dpcore's release with those bounds
    assert dpcore_request("paper").event().guarantee == "not private"


@pytest.mark.skipif(not HAS_DIFFPRIVLIB, reason="diffprivlib is not installed")
def test_fit_lines_gives_one_intercept_and_slope_per_response():
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 10, 200)
    y = np.column_stack([1 + 0.5 * x + rng.normal(0, 0.1, 200), -x / 5])
    req = DiffprivlibRequest(epsilon=50.0, covariate_range=(0.0, 10.0), lower=(-5.0, -5.0),
                             upper=(10.0, 5.0))
    intercept, coef = req.fit_lines(x, y)
    assert intercept.shape == coef.shape == (2,)
    assert np.all(np.isfinite(intercept)) and np.all(np.isfinite(coef))
