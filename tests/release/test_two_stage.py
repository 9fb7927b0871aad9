"""Two-stage private geodesic regression (issue 28 point 4; DESIGN §12, "Two-stage designs"):
a private Fréchet mean, then the joint KNG with its footpoints in a ball about it."""

import json
import warnings
from dataclasses import replace

import numpy as np
import pytest

import dpcore.release.two_stage as two_stage
from dpcore.data import make_regression_data
from dpcore.exceptions import ExactSamplingUnavailable, WorkBudgetError
from dpcore.learning import GeodesicRegression, frechet_mean
from dpcore.manifolds import SPD, KendallShape, Sphere
from dpcore.release import (
    APPROXIMATE_LABELS,
    SEEDED_CAVEAT,
    private_frechet_mean,
    private_geodesic_regression,
    private_geodesic_regression_two_stage,
    project_to_ball,
)
from dpcore.release.two_stage import CENTER_SOURCE
from tests.test_hygiene import ASSUMPTION_FIELDS, PUBLIC_SOURCES, RECORD_KEYS, matches

NORTH = np.array([0.0, 0.0, 1.0])
QUICK = {"chain_length": 60, "burn_in": 40}
#: A small S² design every test can draw exactly in well under a second.
SPHERE = {"eps_center": 1.0, "eps_p": 1.0, "eps_v": 2.0, "tau": 0.2,
          "covariate_range": (0.0, 1.0), "footpoint_radius": 0.5,
          "center_ball": (NORTH, 0.7), "max_speed": 0.9}


@pytest.fixture(scope="module")
def sphere_data():
    d = make_regression_data(Sphere(2), 20, rng=4, footpoint_region=(NORTH, 0.2))
    return Sphere(2), d.x, d.y


def run(m, x, y, **kw):
    args = {**SPHERE, **kw}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the planner's MCMC notice, where it applies
        return private_geodesic_regression_two_stage(m, x, y, **args)


def _no_stage_one(monkeypatch):
    """Fail the test if stage 1 runs (an error must come before any sampling)."""
    def refuse(*args, **kwargs):
        raise AssertionError("stage 1 ran before the inputs were refused")
    monkeypatch.setattr(two_stage, "private_frechet_mean", refuse)


# =========================================================================== budget
def test_total_epsilon_is_the_sum(sphere_data):
    m, x, y = sphere_data
    rel = run(m, x, y, n_footpoints=2, n_vectors=2, sampler="exact", rng=1)
    assert rel.epsilon == pytest.approx(1.0 + 2 * 2 * (1.0 + 2.0))
    assert rel.details["epsilon_center"] == pytest.approx(1.0)
    assert rel.details["epsilon_stage2"] == pytest.approx(12.0)
    assert rel.details["stage1"]["epsilon"] == pytest.approx(1.0)
    assert rel.details["epsilon_per_geodesic"] == pytest.approx(3.0)
    assert rel.values["footpoint"].shape == (4, 3)
    assert "total epsilon = epsilon_1 + 4 x epsilon_2 = 1 + 12 = 13" in rel.caveats[0]


# =========================================================================== labels
def test_both_stages_exact_give_a_private_release(sphere_data):
    m, x, y = sphere_data
    rel = run(m, x, y, sampler="exact")  # OS entropy: a publishable release
    assert not rel.seeded and rel.guarantee == "private" and rel.label == "private"
    assert rel.delta == 0.0 and rel.coverage == "proven"
    assert rel.details["stage1"]["guarantee"] == "private"
    assert rel.diagnostics["joint"]["exact"] and rel.diagnostics["center"]["exact"]
    assert "both stages are exact" in rel.caveats[0]


def test_stage_two_by_mcmc_is_approximately_private(sphere_data):
    m, x, y = sphere_data
    rel = run(m, x, y, sampler="mcmc", **QUICK)
    assert rel.details["stage1"]["guarantee"] == "private"
    assert rel.guarantee == "approximately private" and rel.delta is None
    assert rel.label == APPROXIMATE_LABELS["mcmc"]
    assert "no delta is certified" in rel.caveats[0]


def test_a_stage_one_that_is_not_float_safe_weakens_the_label():
    """Laplace on S⁵ draws by its radial sampler (dimension above the lattice's reach): an
    exact law whose floats depend on the data. Stage 2 is exact; the label follows stage 1."""
    m = Sphere(5)
    d = make_regression_data(m, 15, rng=2, footpoint_region=(m.origin, 0.2))
    rel = run(m, d.x, d.y, eps_p=0.5, eps_v=0.5, tau=0.3, footpoint_radius=0.6,
              center_ball=(m.origin, 0.6), sampler="exact", rng=1)
    assert rel.diagnostics["joint"]["exact"]
    assert rel.details["stage1"]["guarantee"] == "approximately private"
    assert rel.guarantee == "approximately private" and rel.delta is None
    assert replace(rel, seeded=False).label == APPROXIMATE_LABELS["float"]


def test_seeded_release_says_not_for_publication(sphere_data):
    m, x, y = sphere_data
    rel = run(m, x, y, sampler="exact", rng=3)
    assert rel.seeded and "not for publication" in rel.label
    assert rel.caveats.count(SEEDED_CAVEAT) == 1


# =========================================================================== composition
@pytest.mark.parametrize("sampler", ["exact", "mcmc"])
def test_a_seed_equals_the_two_calls_by_hand(sphere_data, sampler):
    m, x, y = sphere_data
    rel = run(m, x, y, sampler=sampler, rng=11, n_vectors=2, **QUICK)
    gen = np.random.default_rng(11)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first = private_frechet_mean(m, y, epsilon=1.0, mechanism="laplace", radius=0.7,
                                     center=NORTH, rng=gen)
        second = private_geodesic_regression(
            m, x, y, eps_p=1.0, eps_v=2.0, tau=0.2, covariate_range=(0.0, 1.0),
            center=first.values["mean"][0], footpoint_radius=0.5, max_speed=0.9,
            n_vectors=2, sampler=sampler, rng=gen, **QUICK)
    np.testing.assert_array_equal(rel.values["center"], first.values["mean"])
    for key in ("footpoint", "shooting_vector", "intercept", "coef"):
        np.testing.assert_array_equal(rel.values[key], second.values[key])
    assert rel.epsilon == first.epsilon + second.epsilon
    # A Generator passed in is used as it is (the same stream).
    again = run(m, x, y, sampler=sampler, rng=np.random.default_rng(11), n_vectors=2, **QUICK)
    np.testing.assert_array_equal(again.values["footpoint"], rel.values["footpoint"])


def test_stage_two_is_centred_on_the_released_mean(sphere_data):
    m, x, y = sphere_data
    rel = run(m, x, y, sampler="exact", n_footpoints=3, rng=5)
    center = rel.values["center"][0]
    stage1 = np.asarray(rel.details["stage1"]["values"]["mean"][0])
    np.testing.assert_array_equal(center, stage1)
    np.testing.assert_array_equal(rel.assumptions["center"]["value"], center)
    assert rel.assumptions["center"]["source"] == CENTER_SOURCE
    assert rel.assumptions["footpoint_support"]["value"] == 0.5
    assert np.all(m.dist(rel.values["footpoint"], center) <= 0.5 + 1e-9)
    # A released value is public: the bounds are public and the guarantee stands.
    assert rel.bounds_public
    assert rel.assumptions["center_ball_center"]["source"] == "public"
    assert rel.assumptions["center_ball_radius"]["value"] == 0.7


def test_spd_projects_onto_a_response_ball_about_the_private_centre():
    m = SPD(2)
    d = make_regression_data(m, 30, rng=1, noise=0.05, footpoint_region=(None, 0.1))
    rel = run(m, d.x, d.y, tau=0.175, tau_m=0.8, footpoint_radius=0.5, max_speed=0.55,
              center_ball=(np.eye(2), 1.5), sampler="mcmc", rng=2, **QUICK)
    center = rel.values["center"][0]
    np.testing.assert_array_equal(rel.assumptions["center"]["value"], center)
    assert rel.assumptions["tau_m"]["value"] == 0.8
    assert np.all(m.dist(rel.values["footpoint"], center) <= 0.5 + 1e-9)
    assert rel.sensitivity["center_mean"] > 0 and rel.sigma["center_mean"] > 0


def test_ambient_centre_may_use_the_whole_sphere(sphere_data):
    m, x, y = sphere_data
    rel = run(m, x, y, center_ball=None, center_mechanism="ambient_laplace", eps_center=2.0,
              footpoint_radius=1.0, sampler="mcmc", rng=4, **QUICK)
    assert rel.assumptions["center_ball_radius"]["value"] == pytest.approx(np.pi)
    assert rel.details["stage1"]["mechanism"] == "ambient_laplace"
    assert np.isclose(np.linalg.norm(rel.values["center"][0]), 1.0)
    assert rel.epsilon == pytest.approx(2.0 + 3.0)


def test_progress_goes_up_to_one(sphere_data):
    m, x, y = sphere_data
    seen = []
    run(m, x, y, sampler="mcmc", rng=1, progress=seen.append, **QUICK)
    assert seen and seen[-1] == 1.0 and bool(np.all(np.diff(seen) >= 0))


# =========================================================================== bad inputs
BAD = {
    "eps_center": ({"eps_center": 0.0}, ValueError, "eps_center"),
    "eps_p": ({"eps_p": -1.0}, ValueError, "eps_p"),
    "radius": ({"footpoint_radius": 0.0}, ValueError, "footpoint_radius"),
    "tau": ({"tau": float("nan")}, ValueError, "tau"),
    "range": ({"covariate_range": (1.0, 0.0)}, ValueError, "covariate_range"),
    "mechanism": ({"center_mechanism": "gaussian"}, ValueError, "center_mechanism"),
    "sampler": ({"sampler": "fast"}, ValueError, "sampler"),
    "center sampler": ({"center_sampler": "fast"}, ValueError, "center_sampler"),
    "draws": ({"n_vectors": 0}, ValueError, "n_vectors"),
    "r star": ({"center_ball": (NORTH, 1.0)}, ValueError, r"r\* = 0.7854"),
    "whole sphere": ({"center_ball": None}, ValueError, "whole space"),
    "ball shape": ({"center_ball": NORTH}, TypeError, "center_ball"),
    "ball point": ({"center_ball": (np.array([0.0, 0.0, 2.0]), 0.5)}, ValueError,
                   r"center_ball\[0\]"),
    "ball radius": ({"center_ball": (NORTH, -0.5)}, ValueError, r"center_ball\[1\]"),
    "speed": ({"max_speed": 0.0}, ValueError, "max_speed"),
    "work": ({"max_work": 0.0}, ValueError, "max_work"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_inputs_are_refused_before_any_sampling(sphere_data, monkeypatch, case):
    m, x, y = sphere_data
    kw, error, message = BAD[case]
    _no_stage_one(monkeypatch)
    with pytest.raises(error, match=message):
        run(m, x, y, **kw)


def test_bad_data_and_spaces_are_refused(sphere_data, monkeypatch):
    m, x, y = sphere_data
    _no_stage_one(monkeypatch)
    with pytest.raises(ValueError, match="`x` must have shape"):
        run(m, x[:-1], y)
    with pytest.raises(ValueError, match="NaN"):
        run(m, np.where(np.arange(x.size) == 3, np.nan, x), y)
    with pytest.raises(ValueError, match="`y` must have shape"):
        run(m, x, y[:, :2])
    spd = SPD(2)
    d = make_regression_data(spd, 10, rng=0)
    base = {"tau": 0.2, "center_ball": (np.eye(2), 1.5), "footpoint_radius": 0.5}
    with pytest.raises(ValueError, match="needs `tau_m`"):
        run(spd, d.x, d.y, **base)
    with pytest.raises(ValueError, match=r"tau_m \+ tau"):
        run(spd, d.x, d.y, **{**base, "tau_m": 0.2, "footpoint_radius": 1.0})
    with pytest.raises(ValueError, match="not compact"):
        run(spd, d.x, d.y, **{**base, "tau_m": 1.0, "center_ball": None})
    kendall = KendallShape(4)
    k = make_regression_data(kendall, 10, rng=0)
    with pytest.raises(ValueError, match="embedding"):
        run(kendall, k.x, k.y, center_mechanism="ambient_laplace",
            center_ball=(kendall.origin, 0.3))


def test_forced_exact_and_work_budget_are_refused_before_stage_one(sphere_data, monkeypatch):
    m, x, y = sphere_data
    _no_stage_one(monkeypatch)
    with pytest.raises(ExactSamplingUnavailable, match="Stage 2"):
        run(m, x, y, eps_p=500.0, eps_v=500.0, footpoint_radius=1.5, sampler="exact")
    with pytest.raises(WorkBudgetError):
        run(m, x, y, sampler="mcmc", max_work=1e-9)


# =========================================================================== hygiene
def test_the_release_record_holds_no_data(sphere_data):
    m, x, y = sphere_data
    rel = run(m, x, y, sampler="exact", n_vectors=2)
    record = rel.to_dict()
    assert set(record) == RECORD_KEYS
    json.dumps(record, allow_nan=False)
    assert set(record["values"]) == {"footpoint", "shooting_vector", "intercept", "coef",
                                     "center"}
    for name, a in record["assumptions"].items():
        assert set(a) <= ASSUMPTION_FIELDS and {"value", "source"} <= set(a), name
        assert a["source"] in PUBLIC_SOURCES | {CENTER_SOURCE}, (name, a)
    for key in ("sensitivity", "sigma"):
        assert all(isinstance(v, float) for v in record[key].values()), key
    projected = project_to_ball(m, y, NORTH, 0.7)
    secrets = [x, y, projected, frechet_mean(m, y), frechet_mean(m, projected),
               m.dist(y, y[::-1])]
    fit = GeodesicRegression(m, covariate_range=(0.0, 1.0), tol=1e-8).fit(x, y)
    secrets += [fit.footpoint_, fit.shooting_vector_]
    assert matches(record, secrets) == []
    assert "nan" not in json.dumps(record).lower()


def test_footpoint_radius_helper_reads_public_inputs_only():
    m = Sphere(2)
    low = two_stage.two_stage_footpoint_radius(m, 50, eps_center=1.0, center_ball=(NORTH, 0.7),
                                               tau=0.2, max_speed=0.9)
    high = two_stage.two_stage_footpoint_radius(m, 50, eps_center=4.0,
                                                center_ball=(NORTH, 0.7), tau=0.2,
                                                max_speed=0.9)
    assert low > high > 0.9 + 0.2  # a larger stage-1 budget: a smaller centre error
    with pytest.raises(ValueError, match="center_mechanism"):
        two_stage.two_stage_footpoint_radius(m, 50, eps_center=1.0, center_ball=(NORTH, 0.7),
                                             tau=0.2, max_speed=0.9,
                                             center_mechanism="ambient_laplace")


def test_combine_refuses_releases_that_are_not_one_design(sphere_data):
    m, x, y = sphere_data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first = private_frechet_mean(m, y, epsilon=1.0, radius=0.7, center=NORTH, rng=1)
        other = private_geodesic_regression(
            m, x, y, eps_p=1.0, eps_v=2.0, tau=0.2, covariate_range=(0.0, 1.0), center=NORTH,
            footpoint_radius=0.5, max_speed=0.9, sampler="exact", rng=1)
        paper = private_frechet_mean(m, y, epsilon=1.0, mode="paper", rng=1)
    with pytest.raises(ValueError, match="not centred"):
        two_stage.combine_stages(first, other, footpoint_radius=0.5)
    with pytest.raises(ValueError, match="strict-mode"):
        two_stage.combine_stages(paper, other, footpoint_radius=0.5)
    with pytest.raises(TypeError, match="Release"):
        two_stage.combine_stages({"mean": NORTH}, other, footpoint_radius=0.5)
