"""Exact KNG by uniform rejection (dpcore.sampling.rejection): the uniform proposals and the
exact draws, checked by one-sample KS tests against closed forms and grid quadrature."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dpcore.manifolds import SPD, Euclidean, KendallShape, Sphere
from dpcore.mechanisms.base import Ball
from dpcore.mechanisms.kng import (
    KNormGradient,
    frechet_mean_exact,
    regression_gradient_bounds,
)
from dpcore.sampling.rejection import (
    BundleBall,
    UniformBall,
    WholeSpace,
    sample_kng_exact,
    worst_case_proposals,
)

from .reference import P_THRESHOLD

NORTH = np.array([0.0, 0.0, 1.0])
pytestmark = pytest.mark.statistical


def ks_pvalue(samples, cdf):
    return stats.kstest(samples, cdf).pvalue


class TestUniformProposals:
    def test_spherical_cap(self):
        # Uniform on the cap of radius R: 1 - cos d is uniform on [0, 1 - cos R].
        r = 0.7
        z = UniformBall(Sphere(2), NORTH, r).sample(4000, np.random.default_rng(1))
        assert np.all(Sphere(2).dist(z, NORTH) <= r + 1e-12)
        u = (1 - z @ NORTH) / (1 - np.cos(r))
        assert ks_pvalue(u, "uniform") > P_THRESHOLD

    def test_euclidean_ball(self):
        z = UniformBall(Euclidean(3), np.ones(3), 2.0).sample(4000, np.random.default_rng(2))
        u = (np.linalg.norm(z - 1.0, axis=-1) / 2.0) ** 3
        assert ks_pvalue(u, "uniform") > P_THRESHOLD

    def test_spd2_ball_radius_law(self):
        # The geodesic radius of a uniform point of B_R(I) in SPD(2) has density
        # proportional to the radial volume factor J(r) = r L0(r / sqrt 2) (DESIGN §6).
        from dpcore.sampling.radial import volume_profile

        radius = 1.5
        z = UniformBall(SPD(2), np.eye(2), radius).sample(3000, np.random.default_rng(3))
        d = SPD(2).dist(z, np.eye(2))
        grid = np.linspace(1e-9, radius, 20001)
        dens = np.exp(volume_profile(SPD(2)).log_vol(grid))
        cdf = np.concatenate([[0.0], np.cumsum(0.5 * (dens[1:] + dens[:-1]) * np.diff(grid))])
        cdf /= cdf[-1]
        assert ks_pvalue(d, lambda r: np.interp(r, grid, cdf)) > P_THRESHOLD

    def test_bundle_speeds_and_tangency(self):
        bundle = BundleBall(WholeSpace(KendallShape(5)), 0.8)
        z = bundle.sample(2000, np.random.default_rng(4))
        m = KendallShape(5)
        p, v = z[:, 0], z[:, 1]
        assert np.all(m.belongs(p)) and np.all(m.is_tangent(p, v))
        u = (m.norm(p, v) / 0.8) ** m.dim  # |v|^d / V^d uniform in a d-ball
        assert ks_pvalue(u, "uniform") > P_THRESHOLD


    @pytest.mark.parametrize("manifold", [SPD(2), KendallShape(5), Sphere(2)])
    def test_bundle_directions_are_uniform_in_the_metric(self, manifold):
        """The first two coordinates of v / |v| in an orthonormal basis of T_p (each draw's own
        p): (c + 1) / 2 is Beta((d - 1) / 2, (d - 1) / 2) for a uniform direction in d
        dimensions (KS, p > P_THRESHOLD / 2 each: below P_THRESHOLD for the test)."""
        base = (UniformBall(manifold, np.eye(2), 1.5) if isinstance(manifold, SPD)
                else WholeSpace(manifold))
        z = BundleBall(base, 0.8).sample(3000, np.random.default_rng(6))
        p, v = z[:, 0], z[:, 1]
        basis = manifold.orthonormal_basis(p)
        unit = v * manifold.pointwise(1.0 / manifold.norm(p, v))
        half = (manifold.dim - 1) / 2
        for a in range(2):
            c = manifold.inner(p, basis[:, a], unit)
            assert ks_pvalue((c + 1) / 2, stats.beta(half, half).cdf) > P_THRESHOLD / 2, a


class TestExactFrechetKNG:
    def test_matches_grid_quadrature_on_the_cap(self):
        """Exact Fréchet KNG on a spherical cap against the target's CDF of the polar angle,
        computed by 2-D quadrature of exp(-|mean log_z y_i| / sigma) on the cap."""
        m = Sphere(2)
        rng = np.random.default_rng(5)
        r = 0.5
        ys = UniformBall(m, NORTH, r).sample(12, rng)
        kng = KNormGradient(manifold=m, epsilon=2.0, sensitivity=0.05)
        res = frechet_mean_exact([kng], ys, size=3000, rng=6, support=Ball.make(m, NORTH, r))[0]
        assert res.exact and res.values.shape == (3000, 3)
        theta_draws = m.dist(res.values, NORTH)
        # Quadrature in (theta, phi) with area element sin(theta).
        th = np.linspace(0, r, 801)[1:] - r / 1600
        ph = np.linspace(0, 2 * np.pi, 721)[:-1]
        tt, pp = np.meshgrid(th, ph, indexing="ij")
        z = np.stack([np.sin(tt) * np.cos(pp), np.sin(tt) * np.sin(pp), np.cos(tt)], -1)
        # independent gradient: -(1/n) sum log_z y with the sphere's closed-form log
        c = np.clip(z @ ys.T, -1, 1)
        ang = np.arccos(c)
        f = np.where(ang > 0, ang / np.sin(np.where(ang > 0, ang, 1)), 1.0)
        logs = f[..., None] * (ys[None, None] - c[..., None] * z[..., None, :])
        g = np.linalg.norm(logs.mean(axis=2), axis=-1)
        w = np.exp(-g / kng.sigma) * np.sin(tt)
        cdf = np.concatenate([[0.0], np.cumsum(w.sum(axis=1))])
        cdf /= cdf[-1]
        edges = np.concatenate([[0.0], th + r / 1600])
        assert ks_pvalue(theta_draws, lambda t: np.interp(t, edges, cdf)) > P_THRESHOLD
        # power: a wrong sigma is rejected by the same test
        w_bad = np.exp(-g / (0.3 * kng.sigma)) * np.sin(tt)
        cdf_bad = np.concatenate([[0.0], np.cumsum(w_bad.sum(axis=1))])
        cdf_bad /= cdf_bad[-1]
        assert ks_pvalue(theta_draws, lambda t: np.interp(t, edges, cdf_bad)) < P_THRESHOLD


class TestRejectionLoop:
    def test_several_scales_share_proposals(self):
        m = Sphere(2)
        values, tried = sample_kng_exact(lambda z: 1.0 - z @ NORTH, np.array([0.1, 10.0]),
                                         WholeSpace(m), 500, np.random.default_rng(7))
        assert values.shape == (2, 500, 3) and tried.shape == (2,)
        # Target proportional to exp(-(1 - cos theta)/sigma): 1 - cos theta is a truncated
        # exponential on [0, 2] with rate 1/sigma (area element d cos theta).
        for vals, s in zip(values, (0.1, 10.0), strict=True):
            x = 1.0 - vals @ NORTH
            cdf = lambda t, s=s: (1 - np.exp(-np.clip(t, 0, 2) / s)) / (1 - np.exp(-2 / s))  # noqa: E731
            assert ks_pvalue(x, cdf) > P_THRESHOLD
        assert tried[0] > tried[1]  # the concentrated scale needs more proposals

    def test_rejects_bad_gradient_values(self):
        with pytest.raises(RuntimeError, match="gradient_norm"):
            sample_kng_exact(lambda z: -np.ones(len(z)), 1.0, WholeSpace(Sphere(2)), 3,
                             np.random.default_rng(0))

    def test_worst_case_bound(self):
        assert worst_case_proposals(2.0, 1.0) == pytest.approx(np.exp(2.0))
        assert np.isfinite(worst_case_proposals(1e9, 1e-9))


@pytest.mark.parametrize("manifold", [Sphere(2), KendallShape(5), Euclidean(2), SPD(2)])
def test_regression_gradient_bounds_hold(manifold):
    """The public bound on the clipped gradient holds at random (p, v, data) with |v| <= V."""
    from dpcore.data import make_regression_data
    from dpcore.learning.regression import regression_gradient

    rng = np.random.default_rng(8)
    tau, speed = 0.3, 2.0
    x, y = make_regression_data(manifold, 30, rng=9)
    t = (x - x.min()) / (x.max() - x.min())
    base = (WholeSpace(manifold) if isinstance(manifold, (Sphere, KendallShape))
            else UniformBall(manifold, np.eye(2) if isinstance(manifold, SPD)
                             else np.zeros(manifold.point_shape), 2.0))
    z = BundleBall(base, speed).sample(400, rng)
    gp, gv = regression_gradient(manifold, z[:, 0], z[:, 1], t, y, tau=tau)
    bp, bv = regression_gradient_bounds(manifold, tau, speed)
    assert np.all(manifold.norm(z[:, 0], gp) <= bp * (1 + 1e-9))
    assert np.all(manifold.norm(z[:, 0], gv) <= bv * (1 + 1e-9))
