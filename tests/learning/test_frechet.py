"""Fréchet mean: first-order optimality, closed forms and agreement with geomstats."""

from __future__ import annotations

import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.spd_matrices import SPDMatrices
from geomstats.learning.frechet_mean import FrechetMean

from dpcore.learning import ConvergenceWarning, frechet_mean, frechet_mean_gradient
from dpcore.manifolds import SPD, Euclidean, Hyperbolic, KendallShape, Sphere

MANIFOLDS = [Sphere(2), Sphere(5), SPD(2), SPD(3), KendallShape(6), Hyperbolic(3)]


def cloud(manifold, rng, n=30, spread=0.4):
    center = manifold.random_point(rng=rng)
    v = manifold.random_tangent(np.broadcast_to(center, (n, *manifold.point_shape)), rng)
    return manifold.exp(center, spread / np.sqrt(manifold.dim) * v)


@pytest.mark.parametrize("manifold", MANIFOLDS, ids=repr)
def test_gradient_vanishes_at_the_mean(manifold, rng):
    y = cloud(manifold, rng)
    mean, info = frechet_mean(manifold, y, return_info=True)
    assert info["converged"]
    grad = frechet_mean_gradient(manifold, mean, y)
    assert manifold.norm(mean, grad) < 1e-10


@pytest.mark.parametrize("manifold", MANIFOLDS, ids=repr)
def test_symmetric_cloud_has_its_center_as_mean(manifold, rng):
    center = manifold.random_point(rng=rng)
    v = manifold.random_tangent(np.broadcast_to(center, (5, *manifold.point_shape)), rng) * 0.2
    y = manifold.exp(center, np.concatenate([v, -v]))
    mean = frechet_mean(manifold, y, init=y[0])
    assert manifold.dist(mean, center) < 1e-9


def test_euclidean_mean_is_the_average(rng):
    y = rng.normal(size=(40, 3))
    np.testing.assert_allclose(frechet_mean(Euclidean(3), y), y.mean(axis=0), atol=1e-14)
    w = rng.uniform(size=40)
    np.testing.assert_allclose(
        frechet_mean(Euclidean(3), y, weights=w), np.average(y, axis=0, weights=w), atol=1e-14
    )


@pytest.mark.parametrize(
    ("manifold", "space"),
    [(Sphere(2), Hypersphere(2)), (SPD(2), SPDMatrices(2))],
    ids=["S2", "SPD2"],
)
def test_agrees_with_geomstats(manifold, space, rng):
    y = cloud(manifold, rng)
    ours = frechet_mean(manifold, y)
    estimator = FrechetMean(space)
    # geomstats compares the squared gradient norm with epsilon * dim.
    estimator.set(max_iter=500, epsilon=1e-24)
    theirs = estimator.fit(y).estimate_
    assert manifold.dist(ours, theirs) < 1e-8


def test_weights_are_validated():
    y = Sphere(2).random_point(4, rng=0)
    with pytest.raises(ValueError, match="weights"):
        frechet_mean(Sphere(2), y, weights=[1, -1, 1, 1])
    with pytest.raises(ValueError, match="shape"):
        frechet_mean(Sphere(2), np.ones((4, 2)))
    with pytest.raises(ValueError, match="NaN"):
        frechet_mean(Sphere(2), np.full((2, 3), np.nan))


def test_warns_when_not_converged(rng):
    y = cloud(Sphere(2), rng, spread=1.0)
    with pytest.warns(ConvergenceWarning):
        frechet_mean(Sphere(2), y, max_iter=1)
