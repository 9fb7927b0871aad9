"""The public ball that restricts a mechanism's support, and chains started outside it."""

import numpy as np
import pytest

from dpcore.manifolds import SPD, Hyperbolic, Sphere
from dpcore.mechanisms.base import Ball
from dpcore.mechanisms.kng import KNormGradient, regression_footpoints_many


@pytest.mark.parametrize("manifold", [Hyperbolic(2), SPD(2), Sphere(2)], ids=repr)
def test_pull_inside_moves_only_outside_points_onto_the_centre_geodesic(manifold):
    rng = np.random.default_rng(0)
    center = manifold.random_point(rng=rng)
    ball = Ball(center, 0.5)
    tangents = manifold.random_tangent(np.broadcast_to(center, (40, *manifold.point_shape)),
                                       rng=rng)
    norms = manifold.norm(center, tangents)
    lengths = np.linspace(0.05, 1.4, 40)
    points = manifold.exp(center, tangents * (lengths / norms).reshape(
        (40,) + (1,) * manifold.point_ndim))
    moved = ball.pull_inside(manifold, points)
    d_old = manifold.dist(points, center)
    d_new = manifold.dist(moved, center)
    inside = d_old <= 0.5
    np.testing.assert_array_equal(moved[inside], points[inside])
    np.testing.assert_allclose(d_new[~inside], 0.999 * 0.5, rtol=1e-8)
    # same direction from the centre: the log maps are positively proportional
    lo, ln = manifold.log(center, points[~inside]), manifold.log(center, moved[~inside])
    cos = manifold.inner(center, lo, ln) / (manifold.norm(center, lo) * manifold.norm(center, ln))
    np.testing.assert_allclose(cos, 1.0, atol=1e-8)


def test_chains_started_outside_the_support_start_inside_it():
    """A non-private fit just outside the footpoint ball (a strict budget split on H² put it
    at distance 1.22 from the centre, radius 1.2) used to start the chains where the
    log-density is −inf everywhere: they drifted to coordinates of 1e6 and crashed the vector
    stage with "init contains NaN". They now start inside the ball and stay there."""
    h2 = Hyperbolic(2)
    rng = np.random.default_rng(3)
    origin = h2.origin
    p_hat = h2.exp(origin, np.array([0.0, 1.5, 0.0]))
    v_hat = h2.proj_tangent(p_hat, np.array([0.0, 0.0, 0.3]))
    t = rng.uniform(size=20)
    y = h2.exp(np.broadcast_to(origin, (20, 3)),
               h2.proj_tangent(np.broadcast_to(origin, (20, 3)),
                               rng.normal(scale=0.3, size=(20, 3))))
    mechs = [KNormGradient(manifold=h2, epsilon=eps, sensitivity=0.05, chain_length=60,
                           burn_in=40) for eps in (0.5, 2.0)]
    out = regression_footpoints_many(mechs, t, y, p_hat, v_hat, size=4, rng=1, tau=0.2,
                                     support=Ball(origin, 1.2))
    for res in out:
        feet = np.asarray(res.values).reshape(-1, 3)
        assert np.all(np.isfinite(feet))
        assert np.all(h2.dist(feet, origin) <= 1.2 + 1e-9)
