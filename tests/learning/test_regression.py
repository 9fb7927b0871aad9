"""Geodesic regression: OLS in flat space, optimality, geomstats comparison, real data."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.pre_shape import PreShapeSpace
from geomstats.geometry.spd_matrices import SPDMatrices
from geomstats.learning.geodesic_regression import GeodesicRegression as GsGeodesicRegression

from dpcore.learning import GeodesicRegression, regression_energy, regression_gradient
from dpcore.learning.regression import generic_regression_gradient
from dpcore.manifolds import SPD, Euclidean, Hyperbolic, KendallShape, Sphere

RAT_SKULLS = Path(__file__).resolve().parents[3] / "shared" / "data" / "rat_skulls.npy"
RAT_AGES = np.array([7, 14, 21, 30, 40, 60, 90, 150], dtype=float)


def noisy_geodesic(manifold, rng, n=60, speed=0.6, noise=0.05):
    p = manifold.random_point(rng=rng)
    v = manifold.random_tangent(p, rng)
    v *= speed / manifold.norm(p, v)
    x = rng.uniform(-3.0, 5.0, n)
    pred = manifold.geodesic(p, v, (x + 3.0) / 8.0)
    e = manifold.random_tangent(pred, rng)
    return x, manifold.exp(pred, noise / np.sqrt(manifold.dim) * e), (p, v)


def total_gradient_norm(model, x, y):
    m = model.manifold
    t = model._rescale(x)
    gp, gv = regression_gradient(m, model.footpoint_, model.shooting_vector_, t, y)
    return float(np.sqrt(m.norm(model.footpoint_, gp) ** 2 + m.norm(model.footpoint_, gv) ** 2))


def test_euclidean_fit_is_ordinary_least_squares(rng):
    x = rng.uniform(10, 50, 80)
    y = 3.0 + np.outer(x, [0.5, -1.0, 2.0]) + rng.normal(size=(80, 3))
    model = GeodesicRegression(Euclidean(3)).fit(x, y)
    design = np.column_stack([np.ones_like(x), x])
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    np.testing.assert_allclose(model.intercept_, coef[0], atol=1e-10)
    np.testing.assert_allclose(model.coef_, coef[1], atol=1e-10)
    np.testing.assert_allclose(model.predict(x), design @ coef, atol=1e-10)
    assert model.converged_


MANIFOLDS = [Sphere(2), SPD(2), SPD(3), KendallShape(8), Hyperbolic(2)]


@pytest.mark.parametrize("manifold", MANIFOLDS, ids=repr)
@pytest.mark.parametrize("noise", [0.0, 0.05, 0.3])
def test_fit_reaches_first_order_optimality(manifold, noise, rng):
    x, y, _ = noisy_geodesic(manifold, rng, noise=noise)
    model = GeodesicRegression(manifold).fit(x, y)
    assert model.converged_
    assert total_gradient_norm(model, x, y) < 1e-8
    assert model.mse(x, y) == pytest.approx(2 * model.energy_, rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("manifold", MANIFOLDS, ids=repr)
def test_noise_free_data_recovers_the_geodesic(manifold, rng):
    x, y, (p, v) = noisy_geodesic(manifold, rng, noise=0.0)
    model = GeodesicRegression(manifold, covariate_range=(-3.0, 5.0)).fit(x, y)
    assert manifold.dist(model.footpoint_, p) < 1e-8
    np.testing.assert_allclose(manifold.dist(model.predict(x), y), 0.0, atol=1e-8)


@pytest.mark.parametrize("manifold", MANIFOLDS, ids=repr)
def test_intercept_and_coef_describe_the_same_geodesic(manifold, rng):
    x, y, _ = noisy_geodesic(manifold, rng)
    model = GeodesicRegression(manifold).fit(x, y)
    xs = np.linspace(-3, 5, 9)
    direct = manifold.exp(
        model.intercept_, xs.reshape(-1, *[1] * manifold.point_ndim) * model.coef_
    )
    np.testing.assert_allclose(manifold.dist(direct, model.predict(xs)), 0.0, atol=1e-8)


def _kendall_space(k):
    space = PreShapeSpace(k, 2)
    space.equip_with_group_action("rotations")
    space.equip_with_quotient()

    class KendallQuotient:
        """The quotient metric with the preshape projection geomstats' regression needs."""

        metric = space.quotient.metric
        shape = space.shape
        dim = space.dim - 1

        @staticmethod
        def projection(point):
            return space.projection(point)

        @staticmethod
        def to_tangent(vector, base_point):
            return space.fiber_bundle.horizontal_projection(
                space.to_tangent(vector, base_point), base_point
            )

    return KendallQuotient()


@pytest.mark.parametrize(
    ("manifold", "make_space"),
    [
        (Sphere(2), lambda: Hypersphere(2)),
        (SPD(2), lambda: SPDMatrices(2)),
        (KendallShape(8), lambda: _kendall_space(8)),
    ],
    ids=["S2", "SPD2", "Kendall8"],
)
def test_energy_no_higher_than_geomstats_extrinsic(manifold, make_space, rng):
    x, y, _ = noisy_geodesic(manifold, rng, n=40, noise=0.1)
    ours = GeodesicRegression(manifold).fit(x, y)
    theirs = GsGeodesicRegression(make_space(), method="extrinsic", initialization="frechet")
    np.random.seed(0)  # noqa: NPY002 - geomstats draws from numpy's global state
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs.fit(x, y)
    xc = (x - theirs.mean_).reshape(-1, *[1] * manifold.point_ndim)
    their_energy = 0.5 * np.mean(
        manifold.squared_dist(manifold.exp(theirs.intercept_, xc * theirs.coef_), y)
    )
    assert ours.energy_ <= their_energy + 1e-8
    assert total_gradient_norm(ours, x, y) < 1e-8


def test_rescaling_uses_public_range(rng):
    x, y, _ = noisy_geodesic(Sphere(2), rng)
    a = GeodesicRegression(Sphere(2)).fit(x, y)
    b = GeodesicRegression(Sphere(2), covariate_range=(-10.0, 10.0)).fit(x, y)
    assert b.covariate_range_ == (-10.0, 10.0)
    # Same least-squares geodesic, different parametrization.
    np.testing.assert_allclose(Sphere(2).dist(a.predict(x), b.predict(x)), 0.0, atol=1e-8)
    assert not np.allclose(a.shooting_vector_, b.shooting_vector_)


def test_bad_inputs_raise_clear_errors(rng):
    model = GeodesicRegression(Sphere(2))
    y = Sphere(2).random_point(5, rng)
    with pytest.raises(ValueError, match="constant"):
        model.fit(np.ones(5), y)
    with pytest.raises(ValueError, match="shape"):
        model.fit(np.arange(4.0), y)
    with pytest.raises(ValueError, match="NaN"):
        model.fit(np.array([0, 1, 2, 3, np.nan]), y)
    with pytest.raises(ValueError, match="covariate_range"):
        GeodesicRegression(Sphere(2), covariate_range=(1.0, 1.0)).fit(np.arange(5.0), y)
    with pytest.raises(RuntimeError, match="not fitted"):
        GeodesicRegression(Sphere(2)).predict([1.0])


def test_two_points_interpolate_exactly(rng):
    y = Sphere(2).random_point(2, rng)
    model = GeodesicRegression(Sphere(2)).fit(np.array([0.0, 1.0]), y)
    np.testing.assert_allclose(Sphere(2).dist(model.predict([0.0, 1.0]), y), 0.0, atol=1e-9)


def test_energy_matches_definition(rng):
    m = SPD(2)
    p = m.random_point(rng=rng)
    v = m.random_tangent(p, rng)
    t = rng.uniform(size=6)
    y = m.random_point(6, rng)
    expected = 0.5 * np.mean(
        [m.dist(m.exp(p, ti * v), yi) ** 2 for ti, yi in zip(t, y, strict=True)]
    )
    assert regression_energy(m, p, v, t, y) == pytest.approx(expected, rel=1e-12)


@pytest.mark.skipif(not RAT_SKULLS.exists(), reason="../shared/data/rat_skulls.npy not present")
def test_rat_skulls_regression_converges():
    landmarks = np.load(RAT_SKULLS)
    assert landmarks.shape == (144, 8, 2)
    kendall = KendallShape(8)
    y = kendall.from_landmarks(landmarks)
    x = np.tile(RAT_AGES, 18)
    model = GeodesicRegression(kendall).fit(x, y)
    assert model.converged_
    assert total_gradient_norm(model, x, y) < 1e-8
    r2 = model.r2_score(x, y)
    # Growth explains most of the shape variation in Vilmann's data.
    assert 0.5 < r2 < 1.0


@pytest.mark.parametrize("d", [1, 2, 4])
@pytest.mark.parametrize("tau", [None, 0.05])
def test_sphere_fast_gradient_equals_generic(d, tau, rng):
    m = Sphere(d)
    p = m.random_point((3, 4), rng)
    v = m.random_tangent(p, rng) * rng.uniform(0.01, 5.0, size=(3, 4, 1))  # also past pi
    t = rng.uniform(0, 1, 40)
    y = m.exp(m.geodesic(p[0, 0], v[0, 0], t), 0.05 * m.random_tangent(
        m.geodesic(p[0, 0], v[0, 0], t), rng))
    fast = regression_gradient(m, p, v, t, y, tau=tau)
    slow = generic_regression_gradient(m, p, v, t, y, tau=tau)
    for a, b in zip(fast, slow, strict=True):
        assert a.shape == b.shape == p.shape
        np.testing.assert_allclose(a, b, atol=1e-12)
    # zero shooting vectors fall back to the generic path
    zero = regression_gradient(m, p, 0 * v, t, y, tau=tau)
    np.testing.assert_allclose(zero[0], generic_regression_gradient(m, p, 0 * v, t, y,
                                                                    tau=tau)[0], atol=1e-12)


@pytest.mark.parametrize("which", ["footpoint", "vector"])
def test_sphere_fast_gradient_single_part(which, rng):
    m = Sphere(2)
    p = m.random_point(5, rng)
    v = m.random_tangent(p, rng)
    t = rng.uniform(0, 1, 30)
    y = m.random_point(30, rng)
    both = regression_gradient(m, p, v, t, y, tau=0.3)
    part = regression_gradient(m, p, v, t, y, tau=0.3, which=which)
    keep = 0 if which == "footpoint" else 1
    assert part[1 - keep] is None
    np.testing.assert_allclose(part[keep], both[keep], atol=1e-15)


def test_regression_gradient_rejects_unknown_part(rng):
    m = Sphere(2)
    p = m.random_point(rng=rng)
    with pytest.raises(ValueError, match="which"):
        regression_gradient(m, p, m.random_tangent(p, rng), [0.0, 1.0],
                            m.random_point(2, rng), which="shooting")


def test_sphere_fast_gradient_near_half_turn(rng):
    """cos/sin from tan(rho/2) stay accurate where rho crosses pi (tan's pole at rho/2 = pi/2)."""
    m = Sphere(2)
    p = np.array([0.0, 0.0, 1.0])
    v = np.array([np.pi, 0.0, 0.0])
    t = np.concatenate([1.0 + np.array([-1e-9, -1e-15, 0.0, 1e-15, 1e-9]), rng.uniform(0, 2, 20)])
    y = m.exp(m.geodesic(p, v, t), 0.1 * m.random_tangent(m.geodesic(p, v, t), rng))
    fast = regression_gradient(m, p, v, t, y)
    slow = generic_regression_gradient(m, p, v, t, y)
    for a, b in zip(fast, slow, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-13)
