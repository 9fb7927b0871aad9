"""Uniform samplers of geodesic balls (Manifold.sample_uniform_ball): SPD(2)'s closed form
and the isotropic spaces' rejection in normal coordinates (spheres, Kendall's CP^2, the
hyperbolic plane). The distance to the centre follows the radial law (KS against its
quadrature CDF); on SPD(2) the log-determinant follows the marginal of the line factor and the
eigenvector angle is uniform; each agrees with the library's independent truncated-Laplace
route (two-sample KS). Every test uses a fixed seed and rejects at p < 1e-6 (false-failure
chance below 1e-6)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from dpcore.manifolds import SPD, Hyperbolic, KendallShape, Sphere
from dpcore.sampling.exact import sample_laplace

SPD2 = SPD(2)
CENTER = np.array([[2.0, 0.3], [0.3, 0.5]])
ALPHA = 1e-6
SIZE = 20_000


def _whitened(p, center=CENTER):
    vals, vecs = np.linalg.eigh(center)
    inv_root = (vecs / np.sqrt(vals)) @ vecs.T
    return inv_root @ p @ inv_root


def _cdf(density, upper):
    """The CDF of ``density`` on [lower, upper] by quadrature (normalized)."""
    total = integrate.quad(density, 0.0, upper, limit=200)[0]

    def cdf(x):
        return np.array([integrate.quad(density, 0.0, xi, limit=200)[0] / total for xi in
                         np.atleast_1d(x)])
    return cdf


def _kendall_center():
    return KendallShape(4).origin


CASES = [(SPD2, lambda: CENTER, 0.1), (SPD2, lambda: CENTER, 1.0), (SPD2, lambda: CENTER, 2.5),
         (Sphere(2), lambda: np.array([0.6, 0.0, 0.8]), 1.2),
         (Sphere(3), lambda: np.array([0.0, 0.0, 0.0, 1.0]), 2.0),
         (KendallShape(4), _kendall_center, 1.0),
         (Hyperbolic(2), lambda: np.array([1.25, 0.75, 0.0]), 2.0)]


@pytest.mark.parametrize("manifold, center, radius", CASES,
                         ids=[f"{m!r}-{r}" for m, _, r in CASES])
def test_the_distance_follows_the_radial_law(manifold, center, radius):
    """d(C, p) has density proportional to J(r) = exp(radial_log_volume(r)) on [0, R]."""
    rng = np.random.default_rng(int(radius * 100))
    c = center()
    p = manifold.sample_uniform_ball(c, radius, SIZE, rng)
    assert p.shape == (SIZE, *manifold.point_shape)
    assert np.all(manifold.belongs(p))
    d = np.asarray(manifold.dist(np.broadcast_to(c, p.shape), p))
    assert d.max() <= radius * (1 + 1e-9)
    shift = float(manifold.radial_log_volume(np.array(radius)))

    def density(r):
        return (math.exp(float(manifold.radial_log_volume(np.array(r))) - shift) if r > 0
                else 0.0)

    cdf = _cdf(density, radius)
    grid = np.linspace(0.0, radius, 401)
    table = cdf(grid)
    assert stats.kstest(d, lambda x: np.interp(x, grid, table)).pvalue > ALPHA


def test_the_log_determinant_and_the_angle_follow_the_product_law():
    """In the whitened frame, x = sqrt2 x mean log-eigenvalue has density proportional to
    cosh(sqrt(R^2 - x^2) / sqrt2) - 1 on [-R, R] (the hyperbolic disc's area over the slice),
    and the eigenvector's angle is uniform on [0, pi)."""
    radius = 3.0
    p = _whitened(SPD2.sample_uniform_ball(CENTER, radius, SIZE, np.random.default_rng(7)))
    vals, vecs = np.linalg.eigh(p)
    x = np.sum(np.log(vals), axis=1) / math.sqrt(2.0)
    grid = np.linspace(-radius, radius, 801)
    dens = np.cosh(np.sqrt(np.maximum(radius**2 - grid**2, 0.0)) / math.sqrt(2.0)) - 1.0
    table = integrate.cumulative_trapezoid(dens, grid, initial=0.0)
    table /= table[-1]
    assert stats.kstest(x, lambda v: np.interp(v, grid, table)).pvalue > ALPHA
    top = vecs[:, :, 1]                              # eigenvector of the larger eigenvalue
    angle = np.mod(np.arctan2(top[:, 1], top[:, 0]), math.pi)
    assert stats.kstest(angle / math.pi, "uniform").pvalue > ALPHA


@pytest.mark.parametrize("manifold, center", [(Sphere(2), np.array([0.0, 0.6, 0.8])),
                                              (KendallShape(4), None)])
def test_isotropic_balls_agree_with_the_truncated_laplace_route(manifold, center):
    """Two-sample KS on the distance to the centre and on the first ambient coordinate of the
    point (a direction-sensitive statistic) against the truncated Laplace route."""
    radius, rng = 0.9, np.random.default_rng(13)
    center = manifold.origin if center is None else center
    ours = manifold.sample_uniform_ball(center, radius, 8000, rng)
    z = sample_laplace(manifold, center, radius, size=30_000, rng=rng, support=(center, radius))
    d = np.asarray(manifold.dist(np.broadcast_to(center, z.shape), z))
    other = z[rng.random(d.size) < np.exp((d - radius) / radius)][:8000]
    assert other.shape[0] == 8000
    for stat in (lambda q: manifold.dist(np.broadcast_to(center, q.shape), q),
                 lambda q: np.abs(q.reshape(q.shape[0], -1)[:, 0])):
        assert stats.ks_2samp(np.asarray(stat(ours)), np.asarray(stat(other))).pvalue > ALPHA


def test_it_agrees_with_the_truncated_laplace_route():
    """The library's other exact route to the same law (a truncated Laplace draw accepted with
    probability exp((d - R)/R)): two-sample KS on the distance and the log-determinant."""
    radius, rng = 0.8, np.random.default_rng(11)
    ours = SPD2.sample_uniform_ball(CENTER, radius, 8000, rng)
    z = sample_laplace(SPD2, CENTER, radius, size=30_000, rng=rng, support=(CENTER, radius))
    d = np.asarray(SPD2.dist(np.broadcast_to(CENTER, z.shape), z))
    other = z[rng.random(d.size) < np.exp((d - radius) / radius)][:8000]
    for stat in (lambda q: SPD2.dist(np.broadcast_to(CENTER, q.shape), q),
                 lambda q: np.linalg.slogdet(q)[1]):
        assert stats.ks_2samp(np.asarray(stat(ours)), np.asarray(stat(other))).pvalue > ALPHA


def test_spaces_without_a_sampler_return_none():
    """SPD(3) (not isotropic) and a sphere's ball beyond its injectivity radius (exp covers it
    twice) have none: UniformBall then uses the truncated Laplace route."""
    rng = np.random.default_rng(0)
    assert SPD(3).sample_uniform_ball(np.eye(3), 0.5, 10, rng) is None
    assert Sphere(2).sample_uniform_ball(np.array([0.0, 0.0, 1.0]), 3.5, 10, rng) is None
