"""GeomstatsManifold: a wrapped geomstats space behaves like the closed-form manifold."""

from __future__ import annotations

import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.spd_matrices import SPDMatrices

from dpcore.learning import frechet_mean
from dpcore.manifolds import SPD, GeomstatsManifold, Sphere


@pytest.fixture(params=["sphere", "spd"])
def pair(request):
    if request.param == "sphere":
        return GeomstatsManifold(Hypersphere(2), curvature_bounds=(1, 1)), Sphere(2)
    return GeomstatsManifold(SPDMatrices(2), curvature_bounds=(-0.5, 0)), SPD(2)


def test_distance_based_operations_match_closed_forms(pair, rng):
    wrapped, ours = pair
    x = ours.random_point(5, rng)
    v = 0.5 * ours.random_tangent(x, rng)
    y = ours.exp(x, v)
    np.testing.assert_allclose(wrapped.exp(x, v), y, atol=1e-9)
    np.testing.assert_allclose(wrapped.log(x, y), v, atol=1e-9)
    np.testing.assert_allclose(wrapped.dist(x, y), ours.dist(x, y), atol=1e-9)
    np.testing.assert_allclose(wrapped.inner(x, v, v), ours.inner(x, v, v), atol=1e-9)
    np.testing.assert_allclose(wrapped.transport(x, y, v), ours.transport(x, y, v), atol=1e-8)
    np.testing.assert_allclose(wrapped.proj_tangent(x, v), v, atol=1e-9)
    assert wrapped.dim == ours.dim
    assert wrapped.point_shape == ours.point_shape


def test_random_points_are_reproducible_and_leave_global_state_alone(pair):
    wrapped, ours = pair
    state = np.random.get_state()  # noqa: NPY002 - checking the adapter restores it
    a = wrapped.random_point(4, rng=3)
    b = wrapped.random_point(4, rng=3)
    np.testing.assert_array_equal(a, b)
    assert a.shape == (4, *ours.point_shape)
    assert np.all(ours.belongs(a))
    assert wrapped.random_point(rng=1).shape == ours.point_shape
    after = np.random.get_state()  # noqa: NPY002
    np.testing.assert_array_equal(state[1], after[1])


def test_frechet_mean_runs_on_wrapped_space(pair, rng):
    wrapped, ours = pair
    center = ours.random_point(rng=rng)
    y = ours.exp(
        center, 0.3 * ours.random_tangent(np.broadcast_to(center, (12, *ours.point_shape)), rng)
    )
    np.testing.assert_allclose(
        ours.dist(frechet_mean(wrapped, y), frechet_mean(ours, y)), 0.0, atol=1e-8
    )


def test_attributes_and_missing_jacobi_fields(pair, rng):
    wrapped, ours = pair
    assert wrapped.curvature_bounds == ours.curvature_bounds
    assert wrapped.is_homogeneous is False  # the safe default: Laplace doubles its scale
    x = ours.random_point(rng=rng)
    v = ours.random_tangent(x, rng)
    with pytest.raises(NotImplementedError, match="Jacobi"):
        wrapped.adjoint_dexp_point(x, v, v)


def test_rejects_unequipped_objects():
    with pytest.raises(TypeError, match="geomstats space"):
        GeomstatsManifold(object())


def test_volume_laws_are_a_clear_not_implemented(pair, rng):
    """The base class has no volume law; the samplers rely on NotImplementedError to fall back."""
    wrapped, ours = pair
    x = ours.random_point(rng=rng)
    v = ours.random_tangent(x, rng)
    with pytest.raises(NotImplementedError, match="volume density of the exponential map"):
        wrapped.log_volume_density(x, v)
    with pytest.raises(NotImplementedError, match="bound of the volume density"):
        wrapped.log_volume_density_max(0.0, 1.0)
    with pytest.raises(NotImplementedError, match="No exact radial law"):
        wrapped.radial_log_volume(1.0)
    with pytest.raises(NotImplementedError, match="No exact radial law"):
        wrapped.radial_dlog_volume(1.0)
    with pytest.raises(NotImplementedError, match="growth rate"):
        wrapped.volume_growth_rate  # noqa: B018 - the property raises
    # the closed-form counterpart has all of them
    assert np.isfinite(ours.log_volume_density(x, v))
    assert ours.volume_growth_rate >= 0
