"""Radial laws: volume factors against each manifold's metric, log-concavity, the 1-D sampler."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from dpcore.manifolds import SPD, Euclidean, Hyperbolic, KendallShape, Sphere
from dpcore.sampling import laplace_growth_rate, radial_density, sample_radius
from dpcore.sampling.radial import radial_sampler, volume_profile

from .reference import P_THRESHOLD, ks_pvalue, log_volume, radial_cdf, radial_log_density


# ---------------------------------------------------------------------- geometry
def _orthonormal_basis(manifold, x, rng):
    basis = []
    while len(basis) < manifold.dim:
        v = manifold.random_tangent(x, rng)
        for b in basis:
            v = v - manifold.inner(x, v, b) * b
        basis.append(v / manifold.norm(x, v))
    return basis


def _exp_volume_factor(manifold, x, v, basis, h=1e-6):
    """sqrt(det G) of d exp_x at v in orthonormal coordinates, by central differences.

    The difference quotients are projected onto T_y M (for Kendall shapes this keeps the
    horizontal part, i.e. the differential of exp on the quotient).
    """
    y = manifold.exp(x, v)
    cols = [
        manifold.proj_tangent(y, (manifold.exp(x, v + h * e) - manifold.exp(x, v - h * e)) / h / 2)
        for e in basis
    ]
    gram = np.array([[manifold.inner(y, a, b) for b in cols] for a in cols])
    return math.sqrt(np.linalg.det(gram))


def _expected_factor(manifold, x, v):
    """Volume factor J(v) / |v|^(dim - 1) from the Jacobi fields (curvature eigenvalues)."""
    r = float(manifold.norm(x, v))
    if isinstance(manifold, Sphere):
        return (math.sin(r) / r) ** (manifold.dim - 1)
    if isinstance(manifold, Hyperbolic):
        return (math.sinh(r) / r) ** (manifold.dim - 1)
    if isinstance(manifold, KendallShape):
        m = manifold.k_landmarks - 2
        return (math.sin(r) / r) ** (2 * m - 2) * math.sin(2 * r) / (2 * r)
    if isinstance(manifold, SPD):
        chol = np.linalg.cholesky(x)
        inv = np.linalg.inv(chol)
        lam = np.linalg.eigvalsh(inv @ v @ inv.T)
        out = 1.0
        for i in range(manifold.k):
            for j in range(i + 1, manifold.k):
                half = abs(lam[i] - lam[j]) / 2
                out *= math.sinh(half) / half
        return out
    raise NotImplementedError


@pytest.mark.parametrize(
    "manifold",
    [Sphere(3), Hyperbolic(3), KendallShape(4), KendallShape(5), SPD(2), SPD(3)],
    ids=repr,
)
@pytest.mark.parametrize("radius", [0.4, 1.3])
def test_volume_factor_matches_the_metric(manifold, radius, rng):
    """The radial laws rest on these Jacobians; check them against the code's exp and metric."""
    x = manifold.random_point(rng=rng)
    v = manifold.random_tangent(x, rng)
    v = v * (radius / manifold.norm(x, v))
    basis = _orthonormal_basis(manifold, x, rng)
    measured = _exp_volume_factor(manifold, x, v, basis)
    expected = _expected_factor(manifold, x, v)
    assert measured == pytest.approx(expected, rel=1e-6)
    # the manifold's own volume density (used by the samplers) is the same fact
    assert manifold.log_volume_density(x, v) == pytest.approx(math.log(expected), abs=1e-12)


@pytest.mark.statistical
@pytest.mark.parametrize("manifold", [Sphere(3), KendallShape(3), KendallShape(5)], ids=repr)
def test_uniform_distribution_has_the_volume_law(manifold, rng):
    """Distances of uniform points (the manifold's random_point) follow J(r) alone."""
    x = manifold.random_point(rng=rng)
    y = manifold.random_point(20_000, rng)
    dist = manifold.dist(x, y)
    log_j, r_max = log_volume(manifold)
    from .reference import tabulated_cdf

    assert ks_pvalue(dist, tabulated_cdf(log_j, 0.0, r_max)) >= P_THRESHOLD


PROFILED = [Euclidean(1), Euclidean(4), Sphere(1), Sphere(2), Sphere(6), KendallShape(3),
            KendallShape(6), Hyperbolic(2), Hyperbolic(4), SPD(1), SPD(2)]


@pytest.mark.parametrize("manifold", PROFILED, ids=repr)
def test_log_volume_is_concave(manifold):
    """Exactness of the hull rejection sampler needs log-concave radial laws."""
    profile = volume_profile(manifold)
    r_max = min(profile.r_max, 2000.0)
    r = np.concatenate([np.geomspace(1e-6, r_max, 4000)[:-1], np.linspace(1e-3, r_max, 4000)[1:-1]])
    r = np.unique(r)
    slope = profile.dlog_vol(r)
    assert np.all(np.diff(slope) <= 1e-9 * (1 + np.abs(slope[1:])))
    # the derivative is the derivative of log_vol
    h = 1e-6 * r
    fd = (profile.log_vol(r + h) - profile.log_vol(r - h)) / (2 * h)
    inner = (r > 1e-4) & (r < r_max - 1e-3)
    np.testing.assert_allclose(fd[inner], slope[inner], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("manifold", PROFILED, ids=repr)
@pytest.mark.parametrize("kind", ["laplace", "gaussian"])
def test_radial_density_matches_reference(manifold, kind):
    sigma = 0.3
    dens = radial_density(manifold, sigma, kind)
    log_f, r_max = radial_log_density(manifold, sigma, kind)
    r = np.linspace(0.01, min(r_max, 5.0) - 0.01, 50)
    ratio = np.log(dens(r)) - log_f(r)
    np.testing.assert_allclose(ratio, ratio[0], atol=1e-9)
    assert dens(dens.mode) == pytest.approx(1.0)
    assert dens(-1.0) == 0.0
    if math.isfinite(r_max):
        assert dens(r_max + 0.1) == 0.0
    truncated = radial_density(manifold, sigma, kind, r_max=0.3)
    assert truncated(0.31) == 0.0 and truncated(0.29) > 0


@pytest.mark.statistical
@pytest.mark.parametrize(
    "manifold,kind,sigma,r_max",
    [
        (Sphere(2), "laplace", 0.5, None),
        (Sphere(2), "gaussian", 0.5, 0.5),
        (Hyperbolic(3), "laplace", 0.6, 2.0),  # not integrable untruncated
        (Euclidean(3), "gaussian", 1.0, None),
        (Euclidean(3), "laplace", 1.0, 1.5),
        (KendallShape(4), "laplace", 1e-8, None),
        (SPD(2), "laplace", 0.5, None),
    ],
    ids=repr,
)
def test_sample_radius(manifold, kind, sigma, r_max, rng):
    r = sample_radius(manifold, sigma, kind, 20_000, rng, r_max=r_max)
    assert r.shape == (20_000,)
    assert ks_pvalue(r, radial_cdf(manifold, sigma, kind, r_max=r_max)) >= P_THRESHOLD
    assert ks_pvalue(r, radial_cdf(manifold, 1.2 * sigma, kind, r_max=r_max)) < P_THRESHOLD
    assert np.ndim(sample_radius(manifold, sigma, kind, None, rng, r_max=r_max)) == 0
    assert sample_radius(manifold, sigma, kind, (2, 3), rng, r_max=r_max).shape == (2, 3)


@pytest.mark.parametrize("manifold", PROFILED, ids=repr)
@pytest.mark.parametrize("kind", ["laplace", "gaussian"])
def test_rejection_efficiency_is_bounded(manifold, kind, rng):
    """The hull's acceptance rate stays high from sigma = 1e-10 to nearly flat laws."""
    rate = laplace_growth_rate(manifold)
    profile = volume_profile(manifold)
    for sigma in [1e-10, 1e-3, 0.3, 1.0, 50.0, 1e8]:
        r_max = None
        if kind == "laplace" and not sigma * rate < 1:
            r_max = 3.0  # only integrable when truncated
        if kind == "gaussian" and sigma > 10 and profile.growth > 0:
            r_max = 50.0
        sampler = radial_sampler(profile, sigma, kind, 0.0, r_max)
        _, ok = sampler.propose(20_000, rng)
        assert ok.mean() > 0.9, (sigma, ok.mean())


def test_errors():
    with pytest.raises(ValueError, match="infinite mass"):
        radial_density(Hyperbolic(2), 1.0, "laplace")
    with pytest.raises(ValueError, match="infinite mass"):
        sample_radius(SPD(2), 2.0, "laplace", 5)
    assert sample_radius(SPD(2), 2.0, "laplace", 5, r_max=1.0).max() <= 1.0
    with pytest.raises(NotImplementedError, match="MCMC"):
        radial_density(SPD(3), 0.3, "laplace")
    with pytest.raises(ValueError, match="`kind`"):
        sample_radius(Sphere(2), 0.3, "uniform", 5)
    with pytest.raises(ValueError, match="`sigma`"):
        radial_density(Sphere(2), 0.0, "gaussian")
    with pytest.raises(ValueError, match="`r_max`"):
        radial_density(Sphere(2), 1.0, "gaussian", r_max=-1.0)


def test_growth_rates():
    assert laplace_growth_rate(Hyperbolic(4)) == 3.0
    assert laplace_growth_rate(SPD(2)) == pytest.approx(1 / math.sqrt(2))
    assert laplace_growth_rate(SPD(3)) == pytest.approx(math.sqrt(2.0))
    assert laplace_growth_rate(Sphere(2)) == 0.0
    json.dumps(repr(radial_density(Sphere(2), 1.0, "laplace")))
