"""Exact samplers: distance laws against quadrature, directions, support balls, API contract."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import k1e

from dpcore.manifolds import SPD, Euclidean, Hyperbolic, KendallShape, Manifold, Sphere
from dpcore.sampling import exact_sampler_available, sample_gaussian, sample_laplace

from .reference import (
    P_THRESHOLD,
    ks2_pvalue,
    ks_pvalue,
    radial_cdf,
    tabulated_cdf,
)

SAMPLERS = {"laplace": sample_laplace, "gaussian": sample_gaussian}
N_KS = 20_000

# (manifold, kind, sigma, power): `power` marks cases where sigma x 1.2 must be rejected too
# (not for nearly uniform laws on compact spaces, where sigma barely matters).
CASES = [
    (Euclidean(1), "laplace", 1.0, True),
    (Euclidean(3), "laplace", 0.5, True),
    (Euclidean(3), "gaussian", 2.0, True),
    (Euclidean(3), "laplace", 1e-8, True),
    (Sphere(1), "laplace", 0.5, True),
    (Sphere(1), "gaussian", 1.0, True),
    (Sphere(1), "laplace", 1e8, False),
    (Sphere(2), "laplace", 0.5, True),
    (Sphere(2), "laplace", 1.5, True),
    (Sphere(2), "gaussian", 0.3, True),
    (Sphere(2), "laplace", 1e-8, True),
    (Sphere(2), "laplace", 1e6, False),
    (Sphere(2), "gaussian", 1e6, False),
    (Sphere(5), "laplace", 0.3, True),
    (KendallShape(3), "laplace", 0.2, True),
    (KendallShape(4), "laplace", 0.5, True),
    (KendallShape(5), "gaussian", 0.3, True),
    (KendallShape(4), "laplace", 1e-8, True),
    (KendallShape(4), "gaussian", 1e5, False),
    (Hyperbolic(2), "laplace", 0.5, True),
    (Hyperbolic(3), "laplace", 0.4, True),
    (Hyperbolic(3), "gaussian", 1.5, True),
    (Hyperbolic(2), "gaussian", 1e-8, True),
    (SPD(1), "laplace", 0.7, True),
    (SPD(2), "laplace", 0.5, True),
    (SPD(2), "laplace", 0.7, True),  # integrable for sigma < sqrt 2; heavy tail
    (SPD(2), "gaussian", 0.5, True),
    (SPD(2), "gaussian", 3.0, True),
    (SPD(2), "laplace", 1e-8, True),
]


def _case_id(case):
    manifold, kind, sigma, _ = case
    return f"{manifold!r}-{kind}-{sigma:g}"


def _center(manifold, rng):
    return manifold.random_point(rng=rng)


@pytest.mark.statistical
@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_distance_law_matches_quadrature(case, rng):
    manifold, kind, sigma, power = case
    center = _center(manifold, rng)
    points = SAMPLERS[kind](manifold, center, sigma, N_KS, rng)
    dist = manifold.dist(center, points)
    assert ks_pvalue(dist, radial_cdf(manifold, sigma, kind)) >= P_THRESHOLD
    if power:
        assert ks_pvalue(dist, radial_cdf(manifold, 1.2 * sigma, kind)) < P_THRESHOLD


# (manifold, kind, sigma, R, power): support ball centred at the centre = radial truncation at
# R. Every case must reject R x 1.2; `power` marks those where sigma x 1.2 must be rejected too
# (a truncated law can depend on sigma too weakly for that).
TRUNCATED = [
    (Euclidean(2), "gaussian", 1.0, 0.8, True),
    (Sphere(2), "laplace", 0.5, 1.0, True),
    (Sphere(2), "laplace", 1e6, 2.0, False),
    (KendallShape(4), "gaussian", 0.2, 0.3, True),
    (Hyperbolic(2), "laplace", 2.0, 2.5, True),  # not integrable without the support
    (Hyperbolic(3), "laplace", 1e6, 1.0, False),
    (SPD(2), "laplace", 3.0, 1.5, False),  # not integrable without the support
    (SPD(2), "gaussian", 0.5, 0.6, True),
]


@pytest.mark.statistical
@pytest.mark.parametrize("case", TRUNCATED, ids=[f"{c[0]!r}-{c[1]}-{c[2]:g}" for c in TRUNCATED])
def test_truncated_distance_law(case, rng):
    manifold, kind, sigma, radius, power = case
    center = _center(manifold, rng)
    points = SAMPLERS[kind](manifold, center, sigma, N_KS, rng, support=(center, radius))
    dist = manifold.dist(center, points)
    assert np.all(dist <= radius + 1e-9)
    assert ks_pvalue(dist, radial_cdf(manifold, sigma, kind, r_max=radius)) >= P_THRESHOLD
    wrong_radius = radial_cdf(manifold, sigma, kind, r_max=1.2 * radius)
    assert ks_pvalue(dist, wrong_radius) < P_THRESHOLD
    if power:
        wrong_sigma = radial_cdf(manifold, 1.2 * sigma, kind, r_max=radius)
        assert ks_pvalue(dist, wrong_sigma) < P_THRESHOLD


OFF_CENTRE = [
    (Euclidean(2), "laplace", 0.7),
    (Sphere(2), "laplace", 0.5),
    (Hyperbolic(2), "laplace", 0.5),
    (SPD(2), "gaussian", 0.4),
    (KendallShape(4), "laplace", 0.3),
]


@pytest.mark.statistical
@pytest.mark.parametrize("case", OFF_CENTRE, ids=[f"{c[0]!r}-{c[1]}" for c in OFF_CENTRE])
def test_off_centre_ball_matches_brute_force(case, rng):
    """Truncation to B_R(m0) with m0 != centre equals plain rejection of untruncated draws."""
    manifold, kind, sigma = case
    center = _center(manifold, rng)
    v = manifold.random_tangent(center, rng)
    m0 = manifold.exp(center, v * (0.6 * sigma / manifold.norm(center, v)))
    radius = 0.9 * sigma
    sampler = SAMPLERS[kind]
    ours = sampler(manifold, center, sigma, 5000, rng, support=(m0, radius))
    assert ours.shape == (5000, *manifold.point_shape)
    assert np.all(manifold.dist(ours, m0) <= radius)
    kept = []
    while sum(len(k) for k in kept) < 10_000:
        free = sampler(manifold, center, sigma, 50_000, rng)
        kept.append(free[manifold.dist(free, m0) <= radius])
    brute = np.concatenate(kept)
    for ref in (center, m0):
        assert ks2_pvalue(manifold.dist(ours, ref), manifold.dist(brute, ref)) >= P_THRESHOLD


def test_centre_outside_the_support_ball(rng):
    sphere = Sphere(2)
    center = np.array([0.0, 0.0, 1.0])
    m0 = np.array([1.0, 0.0, 0.0])
    points = sample_laplace(sphere, center, 0.3, 500, rng, support=(m0, 0.2))
    assert np.all(sphere.dist(points, m0) <= 0.2)


# ---------------------------------------------------------------------- directions
def _orthonormal_basis(manifold, x, rng):
    basis = []
    while len(basis) < manifold.dim:
        v = manifold.random_tangent(x, rng)
        for b in basis:
            v = v - manifold.inner(x, v, b) * b
        basis.append(v / manifold.norm(x, v))
    return np.stack(basis)


@pytest.mark.statistical
@pytest.mark.parametrize(
    "manifold", [Euclidean(3), Sphere(1), Sphere(2), KendallShape(4), Hyperbolic(2)], ids=repr
)
def test_directions_are_uniform(manifold, rng):
    """Coordinates of log_centre(y)/|.| in an orthonormal basis: mean 0 and E u_j^2 = 1/dim."""
    center = _center(manifold, rng)
    n = 20_000
    points = sample_laplace(manifold, center, 0.4, n, rng)
    logs = manifold.log(center, points)
    units = logs / manifold.pointwise(manifold.norm(center, logs))
    basis = _orthonormal_basis(manifold, center, rng)
    coords = np.stack([manifold.inner(center, units, b) for b in basis], axis=-1)
    dim = manifold.dim
    np.testing.assert_allclose(np.sum(coords**2, axis=-1), 1.0, atol=1e-8)
    assert np.all(np.abs(coords.mean(axis=0)) <= 6 * math.sqrt(1.0 / (dim * n)))
    var_sq = 3.0 / (dim * (dim + 2)) - 1.0 / dim**2  # variance of u_j^2 on the unit sphere
    if var_sq > 0:
        assert np.all(np.abs((coords**2).mean(axis=0) - 1.0 / dim) <= 6 * math.sqrt(var_sq / n))


def _whitened_eigen(center, points):
    chol = np.linalg.cholesky(center)
    inv = np.linalg.inv(chol)
    return np.linalg.eigh(inv @ points @ inv.T)


@pytest.mark.statistical
def test_spd2_eigenvectors_are_haar(rng):
    manifold = SPD(2)
    center = _center(manifold, rng)
    points = sample_laplace(manifold, center, 0.5, N_KS, rng)
    _, vecs = _whitened_eigen(center, points)
    angle = np.mod(np.arctan2(vecs[:, 1, 1], vecs[:, 0, 1]), math.pi)
    assert ks_pvalue(angle, lambda t: np.clip(np.asarray(t) / math.pi, 0, 1)) >= P_THRESHOLD


# ---------------------------------------------------------------------- SPD(2) eigen-radii
@pytest.mark.statistical
@pytest.mark.parametrize("kind,sigma", [("gaussian", 0.6), ("laplace", 0.6)])
def test_spd2_eigen_radius_marginals(kind, sigma, rng):
    """In a = (r1 + r2)/sqrt2, b = |r1 - r2|/sqrt2 the density is h(|(a, b)|) sinh(b/sqrt2).

    Gaussian: a ~ N(0, sigma^2) independent of b ~ e^{-b^2/2sigma^2} sinh(b/sqrt2).
    Laplace: b ~ sinh(b/sqrt2) int e^{-sqrt(a^2+b^2)/sigma} da = 2 b K_1(b/sigma) sinh(b/sqrt2).
    """
    manifold = SPD(2)
    center = _center(manifold, rng)
    points = SAMPLERS[kind](manifold, center, sigma, N_KS, rng)
    vals, _ = _whitened_eigen(center, points)
    r = np.log(vals)
    a = (r[:, 0] + r[:, 1]) / math.sqrt(2.0)
    b = np.abs(r[:, 0] - r[:, 1]) / math.sqrt(2.0)
    def log_sinh(x):  # log sinh(x / sqrt 2), up to the constant log 2
        with np.errstate(divide="ignore"):
            return x / math.sqrt(2) + np.log(-np.expm1(-math.sqrt(2) * x))

    if kind == "gaussian":
        log_b = lambda x: -0.5 * (x / sigma) ** 2 + log_sinh(x)
        cdf_a = tabulated_cdf(lambda x: -0.5 * (x / sigma) ** 2, 0.0, math.inf)
        assert ks_pvalue(np.abs(a), cdf_a) >= P_THRESHOLD
    else:
        log_b = lambda x: np.log(x) + np.log(k1e(x / sigma)) - x / sigma + log_sinh(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        cdf_b = tabulated_cdf(log_b, 0.0, math.inf)
    assert ks_pvalue(b, cdf_b) >= P_THRESHOLD
    assert np.mean(a > 0) == pytest.approx(0.5, abs=6 * 0.5 / math.sqrt(N_KS))


@pytest.mark.statistical
def test_spd3_mcmc_eigen_radii_match_quadrature(rng):
    """SPD(3) draws its eigen-radius vector by MCMC: its distance law still matches."""
    manifold = SPD(3)
    assert not exact_sampler_available(manifold, "laplace")
    center = _center(manifold, rng)
    points = sample_laplace(manifold, center, 0.3, 4000, rng)
    assert np.all(manifold.belongs(points))
    dist = manifold.dist(center, points)
    assert ks_pvalue(dist, radial_cdf(manifold, 0.3, "laplace")) >= P_THRESHOLD
    assert ks_pvalue(dist, radial_cdf(manifold, 0.36, "laplace")) < P_THRESHOLD


# ---------------------------------------------------------------------- API contract
ALL = [Euclidean(2), Sphere(1), Sphere(2), KendallShape(5), Hyperbolic(2), SPD(1), SPD(2),
       SPD(3)]


@pytest.mark.parametrize("manifold", ALL, ids=repr)
@pytest.mark.parametrize("kind", ["laplace", "gaussian"])
def test_points_belong_and_shapes(manifold, kind, rng):
    center = _center(manifold, rng)
    sampler = SAMPLERS[kind]
    ps = manifold.point_shape
    assert sampler(manifold, center, 0.3, rng=rng).shape == ps
    assert sampler(manifold, center, 0.3, 5, rng).shape == (5, *ps)
    batch = sampler(manifold, center, 0.3, (2, 3), rng)
    assert batch.shape == (2, 3, *ps)
    assert np.all(manifold.belongs(batch, atol=1e-8))
    assert sampler(manifold, center, 0.3, 0, rng).shape == (0, *ps)


@pytest.mark.parametrize("manifold", ALL, ids=repr)
def test_reproducible_with_seed(manifold):
    center = manifold.random_point(rng=0)
    a = sample_laplace(manifold, center, 0.3, 10, rng=42)
    b = sample_laplace(manifold, center, 0.3, 10, rng=np.random.default_rng(42))
    c = sample_laplace(manifold, center, 0.3, 10, rng=43)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)


def test_generator_is_advanced_not_copied():
    sphere = Sphere(2)
    gen = np.random.default_rng(5)
    first = sample_gaussian(sphere, [0.0, 0.0, 1.0], 0.5, 3, gen)
    second = sample_gaussian(sphere, [0.0, 0.0, 1.0], 0.5, 3, gen)
    assert not np.allclose(first, second)


def test_tiny_and_huge_sigma_stay_fast_and_valid(rng):
    sphere = Sphere(2)
    center = np.array([0.0, 0.0, 1.0])
    tiny = sample_laplace(sphere, center, 1e-12, 1000, rng)
    assert np.all(sphere.dist(center, tiny) < 1e-9)
    huge = sample_gaussian(sphere, center, 1e12, 1000, rng)
    assert np.all(sphere.belongs(huge))
    kendall = KendallShape(6)
    k_center = kendall.random_point(rng=rng)
    assert np.all(kendall.belongs(sample_laplace(kendall, k_center, 1e9, 1000, rng)))


def test_overflow_is_reported():
    hyp = Hyperbolic(2)
    with pytest.raises(ValueError, match="overflow"):
        sample_gaussian(hyp, hyp.origin, 40.0, 100, rng=0)


@pytest.mark.parametrize(
    "manifold,sigma",
    [(Hyperbolic(3), 0.5), (Hyperbolic(2), 1.0), (SPD(2), 1.5), (SPD(3), 0.75)],
    ids=repr,
)
def test_non_integrable_laplace_is_refused(manifold, sigma):
    center = manifold.random_point(rng=0)
    with pytest.raises(ValueError, match="infinite mass"):
        sample_laplace(manifold, center, sigma, 10, rng=0)
    # a support ball makes it integrable; the Gaussian always is
    out = sample_laplace(manifold, center, sigma, 10, rng=0, support=(center, 1.0))
    assert np.all(manifold.dist(center, out) <= 1.0 + 1e-9)
    assert sample_gaussian(manifold, center, sigma, 10, rng=0).shape[0] == 10


def test_validation_messages():
    sphere = Sphere(2)
    north = np.array([0.0, 0.0, 1.0])
    with pytest.raises(ValueError, match="`sigma` must be positive"):
        sample_laplace(sphere, north, -1.0)
    with pytest.raises(TypeError, match="`sigma`"):
        sample_laplace(sphere, north, "1")
    with pytest.raises(ValueError, match="`center` must be one point of shape"):
        sample_laplace(sphere, np.zeros((2, 3)), 1.0)
    with pytest.raises(ValueError, match="`center` is not a point"):
        sample_laplace(sphere, [0.0, 0.0, 2.0], 1.0)
    with pytest.raises(ValueError, match="`size`"):
        sample_laplace(sphere, north, 1.0, size=-2)
    with pytest.raises(TypeError, match="`support`"):
        sample_laplace(sphere, north, 1.0, support=north)
    with pytest.raises(ValueError, match="`support radius` must be positive"):
        sample_laplace(sphere, north, 1.0, support=(north, 0.0))
    with pytest.raises(ValueError, match="`kind`"):
        exact_sampler_available(sphere, "cauchy")


def test_whole_manifold_support_is_no_restriction():
    sphere = Sphere(2)
    north = np.array([0.0, 0.0, 1.0])
    a = sample_laplace(sphere, north, 0.5, 50, rng=1, support=(north, 10.0))
    b = sample_laplace(sphere, north, 0.5, 50, rng=1)
    np.testing.assert_array_equal(a, b)


class _Flat(Manifold):
    """A manifold the samplers know nothing about (stands in for GeomstatsManifold)."""

    point_shape = (2,)
    dim = 2

    def exp(self, x, v):
        return np.add(x, v)

    def log(self, x, y):
        return np.subtract(y, x)

    def dist(self, x, y):
        return np.linalg.norm(np.subtract(y, x), axis=-1)

    def transport(self, x, y, v):
        return v

    def proj_tangent(self, x, v):
        return v

    def random_point(self, size=None, rng=None):
        return np.random.default_rng(rng).standard_normal(np.atleast_1d(size or ()).tolist() + [2])

    def _scale_by_curvature(self, p, v, w0, scale):
        return w0


def test_generic_manifold_points_to_mcmc():
    flat = _Flat()
    assert not exact_sampler_available(flat, "gaussian")
    with pytest.raises(NotImplementedError, match="metropolis_hastings"):
        sample_gaussian(flat, np.zeros(2), 1.0, 5)


def test_exact_sampler_available():
    for manifold in [Euclidean(4), Sphere(1), Sphere(3), KendallShape(3), Hyperbolic(5), SPD(1),
                     SPD(2)]:
        assert exact_sampler_available(manifold, "laplace")
        assert exact_sampler_available(manifold, "gaussian")
    assert not exact_sampler_available(SPD(3), "gaussian")
