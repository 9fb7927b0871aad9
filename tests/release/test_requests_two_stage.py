"""TwoStageRegressionRequest: the two-stage design (issue 28 point 4) as a request object
(issue 29 point 1): validated once, hashable, its questions answered stage by stage and its
run bit for bit the functional release."""

import json
import warnings

import numpy as np
import pytest

from dpcore.data import make_regression_data
from dpcore.manifolds import SPD, Sphere
from dpcore.release import (
    FrechetMeanRequest,
    GeodesicRegressionRequest,
    TwoStageRegressionRequest,
    private_geodesic_regression_two_stage,
)
from dpcore.release.requests import REQUESTS, request_from_script_dict
from dpcore.release.work import estimate_work

NORTH = (0.0, 0.0, 1.0)
DESIGN = {"eps_center": 1.0, "eps_p": 1.0, "eps_v": 2.0, "tau": 0.2,
          "covariate_range": (0.0, 1.0), "footpoint_radius": 0.5,
          "center_ball": (NORTH, 0.7), "max_speed": 0.9, "chain_length": 60, "burn_in": 40}


def request(**changes):
    return TwoStageRegressionRequest(Sphere(2), 20, **{**DESIGN, **changes})


@pytest.fixture(scope="module")
def data():
    d = make_regression_data(Sphere(2), 20, rng=4, footpoint_region=(np.array(NORTH), 0.2))
    return d.x, d.y


def test_equal_inputs_make_equal_requests_and_a_cache_key():
    a = request(center_ball=(np.array(NORTH), 0.7))
    b = request(center_ball=([0.0, 0.0, 1.0], 0.7))
    assert a == b and hash(a) == hash(b)
    assert a.center_ball == (NORTH, 0.7)
    assert request(eps_center=2.0) != a
    assert REQUESTS["TwoStageRegressionRequest"] is TwoStageRegressionRequest


@pytest.mark.parametrize("change, message", [
    ({"eps_center": 0.0}, "eps_center"),
    ({"footpoint_radius": -1.0}, "footpoint_radius"),
    ({"center_mechanism": "gaussian"}, "center_mechanism"),
    ({"center_ball": (NORTH, 2.0)}, "r\\*"),        # the Laplace mechanism's radius limit
    ({"center_ball": ((0.0, 0.0, 2.0), 0.5)}, "center_ball"),   # not on the sphere
    ({"center_ball": None}, "r\\*"),                 # the whole sphere: ambient only
    ({"covariate_range": (1.0, 0.0)}, "covariate_range"),
])
def test_bad_inputs_are_refused_when_made(change, message):
    with pytest.raises(ValueError, match=message):
        request(**change)


def test_stage_two_checks_run_when_made():
    """SPD needs tau_m for stage 2, and the footpoint ball must stay within tau_m + tau."""
    spd = {"center_ball": (np.eye(2), 0.5), "footpoint_radius": 0.5}
    with pytest.raises(ValueError, match="tau_m"):
        TwoStageRegressionRequest(SPD(2), 20, **{**DESIGN, **spd})
    TwoStageRegressionRequest(SPD(2), 20, **{**DESIGN, **spd, "tau_m": 1.0})


def test_stages_and_totals():
    req = request(n_footpoints=2, n_vectors=2)
    assert req.draws == 4 and req.epsilon == pytest.approx(1.0 + 4 * 3.0)
    first, second = req.stage1(), req.stage2()
    assert isinstance(first, FrechetMeanRequest) and first.epsilon == 1.0
    assert first.radius == 0.7 and first.center == NORTH and first.mechanism == "laplace"
    assert isinstance(second, GeodesicRegressionRequest)
    assert second.footpoint_radius == 0.5 and second.resolved_scheme == "joint"
    assert second.epsilon == pytest.approx(4 * 3.0)
    # the work is both stages' together
    w = req.work()
    parts = estimate_work(*first.work().parts, *second.work().parts)
    assert w.seconds == pytest.approx(parts.seconds)


@pytest.mark.parametrize("sampler, guarantee, delta", [
    ("exact", "private", 0.0), ("mcmc", "approximately private", None)])
def test_event_and_plan_are_the_releases(data, sampler, guarantee, delta):
    x, y = data
    req = request(sampler=sampler)
    plan, event = req.plan(), req.event()
    assert plan["guarantee"] == guarantee and plan["exact"] == (sampler == "exact")
    assert event.epsilon == pytest.approx(req.epsilon) and event.delta == delta
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rel = req.run(x, y)
    assert rel.guarantee == guarantee == event.guarantee
    assert rel.epsilon == pytest.approx(event.epsilon) and rel.delta == event.delta
    assert rel.label == event.label
    # group privacy: 3 rows per person triple ε
    assert req.event(rows=3).epsilon == pytest.approx(3 * req.epsilon)


def test_run_is_the_functional_release_bit_for_bit(data):
    x, y = data
    req = request(sampler="exact", seed=7)
    a = req.run(x, y)
    b = private_geodesic_regression_two_stage(Sphere(2), x, y, rng=7, **req.release_kwargs())
    for key in ("footpoint", "shooting_vector", "center"):
        np.testing.assert_array_equal(a.values[key], b.values[key])
    assert a.seeded and req.event().label == a.label
    with pytest.raises(ValueError, match="n = 20"):
        req.run(x[:10], y[:10])


def test_script_dict_round_trips_through_json():
    req = request(seed=3, max_work=float("inf"))
    data = json.loads(json.dumps(req.to_script_dict()))
    assert data["request"] == "TwoStageRegressionRequest" and data["release_seed"] == 3
    assert data["settings"]["center_ball"] == [[0.0, 0.0, 1.0], 0.7]
    assert request_from_script_dict(data) == req
