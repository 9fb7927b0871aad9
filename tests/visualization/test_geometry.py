"""Points along geodesics (:mod:`dpcore.visualization.geometry`)."""

import numpy as np
import pytest

from dpcore.data import make_regression_data
from dpcore.manifolds import KendallShape, Sphere
from dpcore.visualization.geometry import geodesic_curve

from .helpers import T


def test_geodesic_curve_on_sphere(sphere_case):
    data, true, _ = sphere_case
    assert true.shape == (T.size, 3)
    np.testing.assert_allclose(np.linalg.norm(true, axis=-1), 1.0, atol=1e-12)
    np.testing.assert_allclose(true[0], data.footpoint, atol=1e-12)
    np.testing.assert_allclose(true[-1], Sphere(2).exp(data.footpoint, data.shooting_vector),
                               atol=1e-12)


def test_geodesic_curve_on_spd_is_positive_definite(spd_case):
    m, data, _ = spd_case
    curve = geodesic_curve(m, data.footpoint, data.shooting_vector, np.linspace(-1, 2, 40))
    assert curve.shape == (40, 2, 2)
    np.testing.assert_allclose(curve, np.swapaxes(curve, -1, -2), atol=1e-12)
    assert np.all(np.linalg.eigvalsh(curve) > 0)


def test_geodesic_curve_on_kendall_stays_in_preshape_space(rng):
    m = KendallShape(6)
    data = make_regression_data(m, 10, rng=rng)
    curve = geodesic_curve(m, data.footpoint, data.shooting_vector, T)
    assert np.all(m.belongs(curve))


def test_geodesic_curve_validates_shapes():
    with pytest.raises(ValueError, match="t_grid"):
        geodesic_curve(Sphere(2), [0, 0, 1], [1, 0, 0], np.zeros((2, 2)))
    with pytest.raises(ValueError, match="`p`"):
        geodesic_curve(Sphere(2), [0, 1], [1, 0, 0], T)
