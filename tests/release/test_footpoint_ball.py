"""A public footpoint ball for geodesic regression (``footpoint_radius``)."""

import warnings

import numpy as np
import pytest

from dpcore.data import make_regression_data
from dpcore.manifolds import SPD, KendallShape, Sphere
from dpcore.release import private_geodesic_regression

NORTH = np.array([0.0, 0.0, 1.0])


def _sphere_data(n=20, seed=4):
    return make_regression_data(Sphere(2), n, rng=seed, footpoint_region=(NORTH, 0.2))


def _release(m, d, **kw):
    kw = {"eps_p": 1.0, "eps_v": 2.0, "tau": 0.2, "covariate_range": (0.0, 1.0),
          "n_footpoints": 2, "n_vectors": 2, "rng": 1, **kw}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return private_geodesic_regression(m, d.x, d.y, **kw)


@pytest.mark.parametrize("sampler", ["exact", "mcmc"])
def test_sphere_footpoints_stay_in_the_public_ball(sampler):
    m, d = Sphere(2), _sphere_data()
    rel = _release(m, d, footpoint_radius=0.3, max_speed=0.9, sampler=sampler,
                   chain_length=200, burn_in=200)
    feet = np.asarray(rel.values["footpoint"]).reshape(-1, 3)
    vecs = np.asarray(rel.values["shooting_vector"]).reshape(-1, 3)
    assert np.all(m.dist(feet, NORTH) <= 0.3 + 1e-9)
    assert np.all(m.norm(feet, vecs) <= 0.9 + 1e-9)
    support = rel.assumptions["footpoint_support"]
    assert support["value"] == 0.3 and support["source"] == "public"
    assert rel.assumptions["center"]["source"] == "public default"
    assert rel.guarantee == ("private" if sampler == "exact" else "approximately private")


def test_sphere_without_a_ball_records_none_and_a_typed_centre_is_public():
    m, d = Sphere(2), _sphere_data()
    rel = _release(m, d, sampler="exact", max_speed=0.9)
    assert "footpoint_support" not in rel.assumptions
    centre = np.array([0.0, 0.6, 0.8])
    rel = _release(m, d, sampler="exact", max_speed=0.9, footpoint_radius=1.0, center=centre)
    feet = np.asarray(rel.values["footpoint"]).reshape(-1, 3)
    assert np.all(m.dist(feet, centre) <= 1.0 + 1e-9)
    assert rel.assumptions["center"]["source"] == "public"


def test_kendall_ball_defaults_to_the_template():
    m = KendallShape(4)
    d = make_regression_data(m, 15, rng=2)
    rel = _release(m, d, footpoint_radius=0.3, max_speed=0.7, sampler="exact", tau=0.15)
    feet = np.asarray(rel.values["footpoint"]).reshape(-1, *m.point_shape)
    assert np.all(m.dist(feet, m.origin) <= 0.3 + 1e-9)


def test_negative_curvature_ball_must_stay_within_the_proven_radius():
    m = SPD(2)
    d = make_regression_data(m, 10, rng=0)
    with pytest.raises(ValueError, match="tau_m \\+ tau"):
        _release(m, d, tau=0.1, tau_m=1.5, footpoint_radius=2.0, sampler="mcmc")
    rel = _release(m, d, tau=0.1, tau_m=1.5, footpoint_radius=0.8, sampler="mcmc",
                   chain_length=100, burn_in=100)
    feet = np.asarray(rel.values["footpoint"]).reshape(-1, 2, 2)
    assert np.all(m.dist(feet, np.eye(2)) <= 0.8 + 1e-9)
    assert rel.assumptions["footpoint_support"]["value"] == 0.8


def test_footpoint_radius_must_be_positive():
    m, d = Sphere(2), _sphere_data()
    with pytest.raises(ValueError, match="footpoint_radius"):
        _release(m, d, footpoint_radius=0.0)


def test_the_ball_turns_a_uniform_looking_release_into_a_useful_one():
    """S², n = 20, ε = 3, exact: without the ball the exact target is close to uniform (the
    clipped energy's far regions dominate); with the public ball and speed bound the private
    curve lies near the data. Median over 12 draws of the private MSE / non-private MSE,
    measured 2900 without and 3-9 with (seeds fixed; the gap is three orders of magnitude)."""
    from dpcore.learning import GeodesicRegression

    m, d = Sphere(2), _sphere_data(seed=7)
    fit = GeodesicRegression(m, covariate_range=(0.0, 1.0)).fit(d.x, d.y)

    def mse(p, v):
        return np.mean(m.dist(m.geodesic(p, v, d.x), d.y) ** 2)

    base = mse(fit.footpoint_, fit.shooting_vector_)

    def median_ratio(**kw):
        rel = _release(m, d, sampler="exact", n_footpoints=3, n_vectors=4, **kw)
        feet = np.asarray(rel.values["footpoint"]).reshape(-1, 3)
        vecs = np.asarray(rel.values["shooting_vector"]).reshape(-1, 3)
        return np.median([mse(p, v) / base for p, v in zip(feet, vecs, strict=True)])

    without = median_ratio()
    with_ball = median_ratio(footpoint_radius=0.3, max_speed=0.9)
    assert with_ball < 20 < 200 < without
