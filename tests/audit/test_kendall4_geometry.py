r"""Own geometry of the Kendall Σ⁴₂ = CP² audit (:mod:`tests.audit.test_kendall4`), checked.

The audit's complex-number geometry (:mod:`tests.audit._kendall_oracle`) against the library's
public ``KendallShape(4)`` (dist, log, exp on random points and rotated representatives),
against finite differences (the chart's volume density, sectional curvatures, the Fréchet and
regression gradients) and against Monte Carlo (ball volumes, the Laplace normalizer), and the
library's own regression gradient against the audit's (the same target). Split from
``test_kendall4.py`` (the mechanism audits) to keep both files within the size limit.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats

from dpcore.learning.regression import regression_gradient

from . import _kendall_oracle as G
from . import _oracle as O
from ._manifold_draws import GOF_ALPHA
from .test_kendall4 import CENTER, CENTER_R, CHART, K4, RADIUS, SEED, to_library


def test_geometry_matches_library():
    """Distances, logs and exps agree with ``KendallShape(4)`` on random shapes, near pairs and
    rotated representatives (the points exchanged with the black box mean the same thing)."""
    rng = np.random.default_rng(SEED)
    x = G.random_points(4, 200, rng)
    y = np.concatenate([G.random_points(4, 100, rng),
                        G.exp(x[100:], 1e-4 * G.random_directions(x[100:], rng))])
    rot = y * np.exp(1j * rng.uniform(0, 2 * np.pi, (200, 1)))
    xr, yr = G.to_real(x), G.to_real(rot)
    np.testing.assert_allclose(K4.dist(xr, yr), G.dist(x, y), atol=1e-12)
    np.testing.assert_allclose(K4.log(xr, yr), G.to_real(G.log(x, rot)), atol=1e-12)
    v = G.uniform_tangent_ball(x, np.pi / 2, rng)
    np.testing.assert_allclose(K4.exp(xr, G.to_real(v)), G.to_real(G.exp(x, v)), atol=1e-12)
    np.testing.assert_allclose(K4.from_landmarks(G.to_real(CENTER) * 3.0 + 0.7), CENTER_R,
                               atol=1e-14)
    assert K4.dim == 4 and K4.curvature_bounds == (1.0, 4.0)
    # own identities: Exp∘Log = id (as shapes), d = ‖Log‖, logs horizontal
    lg = G.log(x, y)
    np.testing.assert_allclose(G.dist(G.exp(x, lg), y), 0, atol=1e-7)
    np.testing.assert_allclose(G.cnorm(lg), G.dist(x, y), atol=1e-12)
    np.testing.assert_allclose(G.herm(x, lg), 0, atol=1e-12)
    np.testing.assert_allclose(lg.sum(axis=-1), 0, atol=1e-12)
    f = G.frame(x)
    np.testing.assert_allclose(G.inner(f[:, :, None], f[:, None]), np.broadcast_to(np.eye(4),
                               (200, 4, 4)), atol=1e-12)
    np.testing.assert_allclose(G.herm(x[:, None], f), 0, atol=1e-12)


def test_curvature_and_volume_density():
    """J(ρ) = (sin ρ/ρ)² sin(2ρ)/(2ρ) against a finite-difference Jacobian of the normal chart
    (horizontal parts of the chart's derivatives), at the centre and at a random point;
    transport keeps lengths and sends Log_x y to −Log_y x; the sectional curvature of the
    plane {u, i u} is 4 and of {u, w ⟂_C u} is 1 (second-order expansion of the distance)."""
    rng = np.random.default_rng(SEED + 1)
    for base in (CENTER, G.random_points(4, 1, rng)[0]):
        chart = G.Chart(base)
        for rho in (0.05, 0.3, 0.9, 1.4):
            c = rho * O.normalize(rng.standard_normal(4))
            z = chart(c)
            cols = []
            for a in range(4):
                step = 1e-6 * np.eye(4)[a]
                dz = (chart(c + step) - chart(c - step)) / 2e-6
                cols.append(G.horizontal(z, dz))  # its image in the quotient's tangent space
            gram = G.inner(np.array(cols)[:, None], np.array(cols)[None])
            assert np.sqrt(np.linalg.det(gram)) == pytest.approx(
                G.volume_density(rho, 2), rel=1e-7)
    x = G.random_points(4, 50, rng)
    y = G.exp(x, G.uniform_tangent_ball(x, 1.4, rng))
    lg = G.log(x, y)
    d = G.dist(x, y)
    u = lg / d[:, None]
    w = G.uniform_tangent_ball(x, 1.0, rng)
    moved = G.transport_along(x, u, d, w)
    np.testing.assert_allclose(G.cnorm(moved), G.cnorm(w), atol=1e-12)
    y_rep = G.exp(x, lg)
    np.testing.assert_allclose(G.transport_along(x, u, d, lg), -G.log(y_rep, x), atol=1e-10)
    # curvature from d(Exp_x(s a), Exp_x(s b))² = s²|a − b|² − (K/3) s⁴ |a ∧ b|² + O(s⁵)
    s = 1e-2
    a = G.random_directions(x[:1], rng)[0]
    b_hol = 1j * a
    b_real = G.horizontal(x[0], G.random_directions(x[:1], rng)[0])
    b_real = b_real - G.inner(a, b_real) * a - G.inner(1j * a, b_real) * 1j * a
    b_real /= G.cnorm(b_real)
    for b, kappa in ((b_hol, 4.0), (b_real, 1.0)):
        d2 = G.dist(G.exp(x[0], s * a), G.exp(x[0], s * b)) ** 2
        measured = 3 * (2 * s * s - d2) / s**4  # |a − b|² = 2, |a ∧ b|² = 1
        assert measured == pytest.approx(kappa, rel=1e-3)


def test_uniform_sampling_and_ball_volume():
    """Gaussian-landmark preshapes are uniform: the fraction in B_r(c) is vol B_r / vol CP² =
    sin⁴ r; the chart's uniform-ball sampler has the radial law sin⁴ρ / sin⁴ r (KS)."""
    rng = np.random.default_rng(SEED + 2)
    z = G.random_points(4, 400_000, rng)
    d = G.dist(CENTER, z)
    for r in (0.3, 0.7, 1.2):
        frac = np.mean(d <= r)
        p = np.sin(r) ** 4
        assert abs(frac - p) < 6 * np.sqrt(p * (1 - p) / z.shape[0])
        assert G.ball_volume(r) / G.ball_volume(np.pi / 2) == pytest.approx(p)
    pts = CHART.uniform_ball(RADIUS, 20_000, rng)
    rho = G.dist(CENTER, pts)
    pvalue = stats.kstest(rho, lambda x: np.sin(np.clip(x, 0, RADIUS)) ** 4
                          / np.sin(RADIUS) ** 4).pvalue
    assert pvalue > GOF_ALPHA


def test_laplace_normalizer_and_radial_law():
    """The closed-form Laplace normalizer equals Monte Carlo integrals over uniform points about
    two different centres (6 standard errors; homogeneity), the radial CDF equals quadrature,
    and the audit's own exact sampler follows it."""
    rng = np.random.default_rng(SEED + 3)
    z = G.random_points(4, 400_000, rng)
    vol = G.ball_volume(np.pi / 2)
    for sigma in (0.1, 0.2, 0.6):
        for m in (CENTER, G.random_points(4, 1, rng)[0]):
            w = np.exp(-G.dist(m, z) / sigma)
            se = w.std() / (w.mean() * np.sqrt(w.size))
            assert abs(np.log(vol * w.mean()) - G.laplace_log_normalizer(sigma)) < 6 * se
        radial = lambda r, s=sigma: 2 * np.pi**2 * np.exp(-r / s) * np.sin(r) ** 3 * np.cos(r)
        total, _ = integrate.quad(radial, 0, np.pi / 2, epsabs=0, epsrel=1e-12)
        assert np.log(total) == pytest.approx(G.laplace_log_normalizer(sigma), abs=1e-10)
        part, _ = integrate.quad(radial, 0, 0.4, epsabs=0, epsrel=1e-12)
        assert G.laplace_radial_cdf(0.4, sigma) == pytest.approx(part / total, abs=1e-10)
        draws = G.sample_laplace(CENTER, sigma, 20_000, rng)
        pvalue = stats.kstest(G.dist(CENTER, draws),
                              lambda r, s=sigma: G.laplace_radial_cdf(r, s)).pvalue
        assert pvalue > GOF_ALPHA


def test_gradients_against_finite_differences_and_library():
    """Closed-form Huber regression gradients (footpoint with the vector parallel-transported,
    and vector) against central differences of the energy, for short and long shooting vectors
    and for clipped and unclipped residuals; the Fréchet gradient −mean Log against differences
    of (1/2n) Σ d²; and the library's regression gradient norm (the target it samples) against
    the audit's."""
    rng = np.random.default_rng(SEED + 4)
    n = 6
    t = np.append(rng.uniform(size=n - 1), 0.0)
    y = G.random_points(4, n, rng)
    for speed in (0.0, 0.3, 1.2, np.pi / 2):
        p = G.random_points(4, 1, rng)[0]
        v = speed * G.random_directions(p, rng)
        for tau in (0.1, 10.0):
            gp, gv = G.regression_gradient(p[None], v[None], t, y, tau)
            fp, fv = G.fd_regression_gradient(p, v, t, y, tau)
            np.testing.assert_allclose(G.coords(p, gp[0]), fp, atol=1e-8)
            np.testing.assert_allclose(G.coords(p, gv[0]), fv, atol=1e-8)
    data = CHART.uniform_ball(RADIUS, 7, rng)
    z = CHART.uniform_ball(RADIUS, 1, rng)[0]
    grad = -G.log(z, data).mean(axis=0)
    energy = lambda q: 0.5 * np.mean(G.dist(q, data) ** 2)
    for e in G.frame(z):
        fd = (energy(G.exp(z, 1e-6 * e)) - energy(G.exp(z, -1e-6 * e))) / 2e-6
        assert fd == pytest.approx(G.inner(grad, e), abs=1e-8)
    p = G.random_points(4, 300, rng)
    v = G.uniform_tangent_ball(p, np.pi / 2, rng)
    rot = np.exp(1j * rng.uniform(0, 2 * np.pi, (300, 1)))
    for tau in (0.1, 0.5):
        lp, lv = regression_gradient(K4, G.to_real(p * rot), G.to_real(v * rot), t,
                                     to_library(y, rng), tau=tau)
        pr = G.to_real(p * rot)
        lib = np.sqrt(K4.norm(pr, lp) ** 2 + K4.norm(pr, lv) ** 2)
        np.testing.assert_allclose(lib, G.joint_gradient_norm(p, v, t, y, tau), atol=1e-12)
