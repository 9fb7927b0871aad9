"""Fixtures of the figure tests: a regression data set and perturbed fits on S² and SPD(2)."""

import pytest

from dpcore.data import make_regression_data
from dpcore.manifolds import SPD, Sphere
from dpcore.visualization.geometry import geodesic_curve

from .helpers import T, fake_draws


@pytest.fixture
def sphere_case(rng):
    m = Sphere(2)
    data = make_regression_data(m, 30, rng=rng)
    true = geodesic_curve(m, data.footpoint, data.shooting_vector, T)
    private = [geodesic_curve(m, p, v, T)
               for p, v in fake_draws(m, data.footpoint, data.shooting_vector, 3, rng)]
    return data, true, private


@pytest.fixture
def spd_case(rng):
    m = SPD(2)
    data = make_regression_data(m, 20, rng=rng)
    draws = fake_draws(m, data.footpoint, data.shooting_vector, 2, rng)
    return m, data, draws
