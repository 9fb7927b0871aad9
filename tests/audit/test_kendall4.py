r"""Privacy audit of the strict mechanisms on Kendall's shape space of quadrilaterals, Σ⁴₂ = CP².

Unlike Σ³₂ = CP¹ (:mod:`tests.audit.test_kendall`, a round sphere by the Hopf map), CP² is
not a space form: its sectional curvature lies between 1 and 4 (4 on holomorphic planes
{u, i u}), so the audit works directly on preshapes with its own complex-number geometry
(:mod:`tests.audit._kendall_oracle`): z ∈ C⁴ centred with ‖z‖ = 1, d(z, w) = arccos |⟨z, w⟩_C|,
Log by the optimal rotation (horizontal projection), parallel transport and Jacobi fields along
horizontal great circles, the volume density J(ρ) = (sin ρ/ρ)² sin(2ρ)/(2ρ) of normal
coordinates and the Huber-clipped regression gradients. The first tests check that geometry
against the library's public ``KendallShape(4)`` (dist, log, exp on random points and rotated
representatives), against finite differences (the chart's volume density, the Fréchet and
regression gradients) and against Monte Carlo (ball volumes, the Laplace normalizer), and check
the library's own regression gradient defines the same target.

Public inputs: the ball B_r(c), r = 0.3 < r* = π/8 (κ_high = 4, inj π/2), about the
quadrilateral c with landmarks (0, 0), (1, 0), (1.1, 0.9), (0.2, 1.1); strict mode projects the
data onto it. With h = 4r cot 4r: Δ = 2r(2 − h)/(n h), Δ_g = 2r(2 − h)/n. Regression
(κ_low = 1 ≥ 0, compact): τ = 0.1, Δ_p = Δ_v = 2τ/n, footpoints anywhere, ‖v‖ ≤ π/2 (the
diameter). The records are checked against these.

Mechanisms and their densities (w.r.t. the Riemannian volume; Sasaki volume on the bundle)
    Laplace: exp(−d(z, m̂_D)/σ) on all of CP², σ = Δ/ε. The space is homogeneous, so the
    normalizer Z(σ) = π²[(1 + e)/(a² + 4) − (1 − e)/(a² + 16)] (a = 1/σ, e = e^{−aπ/2}) does not
    depend on the mean and log f_D − log f_D′ = (d(z, m̂_D′) − d(z, m̂_D))/σ, whose supremum is
    exactly d(m̂_D, m̂_D′)/σ (at z = m̂_D).
    KNG: exp(−‖(1/n) Σ Log_z y_i‖/σ) on B_r(c), σ = 2Δ_g/ε.
    Joint regression: exp(−‖(∇_p E_D, ∇_v E_D)‖/σ) on CP² × {‖v‖ ≤ π/2},
    σ = 2√(Δ_p² + Δ_v²)/ε, E_D the Huber-clipped energy.

(a) Log-density ratios with normalizers on adversarial neighbours (one row replaced) found by
    random-restart searches: Laplace over data sets in the ball maximizing the mean shift
    (closed-form normalizer, itself checked by Monte Carlo at different centres); KNG over the
    shared configuration and the replaced point, on coarse Monte Carlo points; regression over
    the shared configuration, the replaced observation and its replacement (responses anywhere,
    covariates in [0, 1]). KNG and regression normalizers are Monte Carlo means over common
    uniform points of the support (4-d and 8-d: too many dimensions for product quadrature),
    with a 6-standard-error tolerance on log Z_D − log Z_D′; sup |log f_D − log f_D′| over the
    points, refined by local searches, must be ≤ ε + tolerance, and the sensitivities
    themselves (mean shift ≤ Δ, sup |g_D − g_D′| ≤ Δ_g or √(Δ_p² + Δ_v²)) are asserted.
(b) Black box: 4000 library draws per data set (``sampler="exact"`` for KNG and regression),
    boundary points given raw near the cut locus of the centre and covariates outside the
    public range, data as randomly rotated representatives. Goodness of fit first (KS on the
    Laplace radius and direction against closed forms; two-sample KS against the audit's own
    exact rejection draws of the gradient norm and of the distance to the centre (KNG) or ‖v‖
    (regression)). Events {log f_D − log f_D′ > c} and mirrors, thresholds fixed from the
    oracle before any library draw, one-sided Clopper–Pearson at the shared Bonferroni level
    (19 certifications in the whole audit, :mod:`tests.audit._manifold_draws`); a certified
    P_D(A) − e^ε P_D′(A) > δ = 0 fails. Power: the same machinery certifies a violation of ε
    for the library run at 8ε (Laplace, KNG: the neighbouring pair) and at 3ε on data sets
    that differ in every row (regression: at 8ε the library's uniform-proposal sampler accepts
    about one proposal in 800 in these 8 dimensions, millions of proposals per data set).
"""

from __future__ import annotations

import functools
import types

import numpy as np
import pytest
from scipy import integrate, stats

from dpcore.learning.regression import regression_gradient
from dpcore.manifolds import KendallShape
from dpcore.release import private_frechet_mean, private_geodesic_regression

from . import _kendall_oracle as G
from . import _manifold_oracle as M
from . import _oracle as O
from . import _regression_mc as R
from ._draws import PER_CALL, record_only
from ._manifold_draws import (
    ALPHA_EACH,
    GOF_ALPHA,
    N_DRAWS,
    certify,
    frechet_draws,
    regression_draws,
)
from ._released import released_sigma

K4 = KendallShape(4)
RADIUS = 0.3
EPS = 1.0
SEED = 4_142
POWER = 8.0  # the Laplace and KNG power checks release at POWER·ε
REG_POWER = 3.0  # the regression power check releases at REG_POWER·ε (every row replaced)
CENTER = G.preshape(np.array([[0.0, 0.0], [1.0, 0.0], [1.1, 0.9], [0.2, 1.1]]))
CENTER_R = G.to_real(CENTER)
CHART = G.Chart(CENTER)
N_MC = 100_000


def h_factor():
    return 4 * RADIUS / np.tan(4 * RADIUS)  # 2 r √κ cot(2 r √κ), κ = 4


def delta_mean(n):
    h = h_factor()
    return 2 * RADIUS * (2 - h) / (n * h)


def delta_gradient(n):
    return 2 * RADIUS * (2 - h_factor()) / n


def to_library(z, rng):
    """Complex preshapes → (…, 4, 2) real arrays, each a randomly rotated representative."""
    z = np.asarray(z, complex)
    return G.to_real(z * np.exp(1j * rng.uniform(0, 2 * np.pi, z.shape[:-1]))[..., None])


def from_library(x):
    return G.to_complex(x)


def ball_pt(a):
    return CHART.ball_point(a, RADIUS)


def unsquash(c, radius):
    """Inverse of :func:`tests.audit._oracle.squash_disk` (rows strictly inside the ball)."""
    r = G.enorm(c)[..., None]
    ratio = np.clip(r / radius, 0.0, 1 - 1e-9)
    return c * np.divide(np.arctanh(ratio), r, out=np.full_like(r, 1.0 / radius), where=r > 0)


def raw_far(points):
    """Points on the boundary of B_r(c) replaced by raw points on the same geodesic from c at
    distance π/2 − 10⁻³ (near c's cut locus); returns (raw, projected)."""
    points = np.array(points, complex)
    raw = points.copy()
    edge = G.dist(CENTER, points) > RADIUS - 1e-3
    u = G.log(np.broadcast_to(CENTER, points.shape), points)[edge]
    raw[edge] = G.exp(CENTER, (np.pi / 2 - 1e-3) * u / G.cnorm(u)[:, None])
    return raw, G.project_ball(raw, CENTER, RADIUS)


# ============================================================================ own geometry
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


def test_records():
    """σ, Δ and supports of the three strict releases are the audit's."""
    rng = np.random.default_rng(SEED + 5)
    y = CHART.uniform_ball(RADIUS, 7, rng)
    lap = private_frechet_mean(K4, to_library(y, rng), epsilon=EPS, mechanism="laplace",
                               radius=RADIUS, center=CENTER_R, rng=SEED)
    assert lap.sensitivity["mean"] == pytest.approx(delta_mean(7), rel=1e-12)
    assert lap.sigma["mean"] == pytest.approx(delta_mean(7) / EPS, rel=1e-12)
    assert lap.diagnostics["exact"] and lap.guarantee == "private"  # whole space (Δ/ε)
    kng = private_frechet_mean(K4, to_library(y, rng), epsilon=EPS, mechanism="kng",
                               radius=RADIUS, center=CENTER_R, rng=SEED,
                               **record_only(private_frechet_mean))
    assert kng.sensitivity["gradient"] == pytest.approx(delta_gradient(7), rel=1e-12)
    assert kng.sigma["mean"] == pytest.approx(2 * delta_gradient(7) / EPS, rel=1e-12)
    with pytest.raises(ValueError):
        private_frechet_mean(K4, to_library(y, rng), epsilon=EPS, radius=np.pi / 8 + 1e-3,
                             center=CENTER_R, rng=1)
    reg = private_geodesic_regression(K4, np.linspace(0, 1, 7), to_library(y, rng),
                                      eps_p=EPS_P, eps_v=EPS_V, tau=TAU, covariate_range=(0, 1),
                                      scheme="joint", rng=SEED,
                                      **record_only(private_geodesic_regression))
    assert reg.sigma["joint"] == pytest.approx(reg_sigma(7), rel=1e-12)
    assert reg.assumptions["max_speed"]["value"] == pytest.approx(np.pi / 2)
    assert "footpoint_support" not in reg.assumptions  # compact: footpoints anywhere


# ============================================================================ Laplace
@functools.cache
def laplace_pair(n):
    rng = np.random.default_rng(SEED + n)
    ratio, d, e = M.mean_shift_search(ball_pt, 4, G.frechet_mean_batch, G.dist, n,
                                      delta_mean(n), rng, steps=80, starts=40)
    return d, e, ratio


def laplace_event_points(m_d, m_e, sigma, size, rng):
    """Importance points for the Laplace events: half exact draws about each mean; returns
    points, log f_D, log f_D′ (normalized) and the importance weights 1/q."""
    z = np.concatenate([G.sample_laplace(m_d, sigma, size // 2, rng),
                        G.sample_laplace(m_e, sigma, size - size // 2, rng)])
    log_c = G.laplace_log_normalizer(sigma)
    lf_d, lf_e = -G.dist(m_d, z) / sigma - log_c, -G.dist(m_e, z) / sigma - log_c
    log_q = np.logaddexp(lf_d, lf_e) - np.log(2)
    return z, lf_d, lf_e, np.exp(-(log_q - log_q.max()))


@pytest.mark.parametrize("n", [2, 3, 5, 10, 40])
def test_laplace_log_density_ratio(n):
    d_set, e_set, shift = laplace_pair(n)
    rng = np.random.default_rng(SEED)
    rel = private_frechet_mean(K4, to_library(d_set, rng), epsilon=EPS, mechanism="laplace",
                               radius=RADIUS, center=CENTER_R, rng=SEED)
    sigma = delta_mean(n) / EPS
    sigma = released_sigma(rel, sigma)
    m_d, m_e = G.frechet_mean(d_set), G.frechet_mean(e_set)
    z, lf_d, lf_e, _ = laplace_event_points(m_d, m_e, sigma, 20_000, rng)
    u = G.log(m_e, m_d)
    extra = np.stack([m_d, m_e, G.exp(m_e, 1.5 * u)])
    stat = np.concatenate([lf_d - lf_e, (G.dist(m_e, extra) - G.dist(m_d, extra)) / sigma])
    sup = float(np.max(np.abs(stat)))
    h = h_factor()
    print(f"\nKendall Σ⁴₂ Laplace n={n}: sup |log f_D − log f_D'| = {sup:.4f} = "
          f"{sup / EPS:.3f} ε (normalizers equal: closed form); sup d(m_D, m_D')/Δ = "
          f"{shift:.4f}")
    assert G.dist(m_d, m_e) <= delta_mean(n) * (1 + 1e-9)
    assert sup <= EPS * (1 + 1e-9)
    assert shift >= 0.95 * h / (2 - h)  # the search finds at least the flat-space shift


def _laplace_blackbox_data():
    d_set, e_set, _ = laplace_pair(10)
    d_raw, d_set = raw_far(d_set)
    e_raw, e_set = raw_far(e_set)
    return d_set, e_set, d_raw, e_raw


def _laplace_thresholds(m_d, m_e, sigma, seed):
    z, lf_d, lf_e, w = laplace_event_points(m_d, m_e, sigma, 100_000,
                                            np.random.default_rng(seed))
    return O.event_thresholds(lf_d - lf_e, lf_d, lf_e, w, N_DRAWS, ALPHA_EACH)


def _direction_cdf(x):
    """CDF of ⟨U, e⟩ for U uniform on the unit sphere S³ of a 4-d tangent space."""
    x = np.clip(x, -1.0, 1.0)
    return 0.5 + (x * np.sqrt(1 - x * x) + np.arcsin(x)) / np.pi


@pytest.mark.statistical
def test_laplace_blackbox_distinguisher():
    d_set, e_set, d_raw, e_raw = _laplace_blackbox_data()
    sigma = delta_mean(10) / EPS
    m_d, m_e = G.frechet_mean(d_set), G.frechet_mean(e_set)
    thresholds = _laplace_thresholds(m_d, m_e, sigma, SEED + 7)  # fixed before any draw
    rng = np.random.default_rng(SEED)
    kw = dict(epsilon=EPS, mechanism="laplace", radius=RADIUS, center=CENTER_R, total=N_DRAWS)
    z_d, delta_d, rel = frechet_draws(K4, to_library(d_raw, rng), seed=SEED, **kw)
    z_e, delta_e, _ = frechet_draws(K4, to_library(e_raw, rng), seed=SEED + 10_000, **kw)
    assert delta_d == delta_e == 0.0 and rel.diagnostics["exact"] and rel.guarantee == "private"
    z_d, z_e = from_library(z_d), from_library(z_e)
    for z, m, other in ((z_d, m_d, m_e), (z_e, m_e, m_d)):
        radial = stats.kstest(G.dist(m, z), lambda r: G.laplace_radial_cdf(r, sigma)).pvalue
        lg = G.log(np.broadcast_to(m, z.shape), z)
        toward = G.log(m, other)
        cosines = [G.inner(lg, e) / G.cnorm(lg) for e in (toward / G.cnorm(toward),
                                                           1j * toward / G.cnorm(toward))]
        direction = [stats.kstest(c, _direction_cdf).pvalue for c in cosines]
        print(f"\nKendall Σ⁴₂ Laplace KS p-values: radius {radial:.3f}, direction "
              f"(toward the other mean, and i times it) {direction[0]:.3f}, {direction[1]:.3f}")
        assert min(radial, *direction) > GOF_ALPHA
    stat = lambda z: (G.dist(m_e, z) - G.dist(m_d, z)) / sigma
    bounds = certify("Kendall Σ⁴₂ Laplace black box (n=10)", stat(z_d), stat(z_e), thresholds,
                     EPS, ALPHA_EACH, delta_d)
    assert all(b.excess <= delta_d for b in bounds)


@pytest.mark.statistical
def test_laplace_blackbox_has_power():
    """The library's Laplace at POWER·ε (σ/8), on the same neighbours, is caught by the same
    machinery at ε. (Δ is loose on Kendall's space, the largest mean shift found is about
    0.35 Δ, so a smaller factor would leave a true sup log-ratio too close to ε.)"""
    d_set, e_set, d_raw, e_raw = _laplace_blackbox_data()
    sigma = delta_mean(10) / (POWER * EPS)
    m_d, m_e = G.frechet_mean(d_set), G.frechet_mean(e_set)
    thresholds = _laplace_thresholds(m_d, m_e, sigma, SEED + 8)
    rng = np.random.default_rng(SEED)
    kw = dict(epsilon=POWER * EPS, mechanism="laplace", radius=RADIUS, center=CENTER_R,
              total=N_DRAWS)
    z_d, _, _ = frechet_draws(K4, to_library(d_raw, rng), seed=SEED + 1, **kw)
    z_e, _, _ = frechet_draws(K4, to_library(e_raw, rng), seed=SEED + 20_000, **kw)
    stat = lambda z: (G.dist(m_e, z) - G.dist(m_d, z)) / sigma
    bounds = certify(f"Kendall Σ⁴₂ Laplace at {POWER:g}ε (power)", stat(from_library(z_d)),
                     stat(from_library(z_e)), thresholds, EPS, ALPHA_EACH, 0.0)
    assert max(b.excess for b in bounds) > 0


# ============================================================================ KNG
def kng_sigma(n, eps=EPS):
    return 2 * delta_gradient(n) / eps


#: The Fréchet KNG on B_r(c) in the (p, v) interface of :mod:`tests.audit._regression_mc`
#: (v is a copy of the point and ignored; data sets are 1-tuples (y,)).
KNG_GEOMETRY = types.SimpleNamespace(
    uniform_support=lambda size, rng: (CHART.uniform_ball(RADIUS, size, rng),) * 2,
    gradient_norm=lambda p, v, y: G.frechet_gradient_norm(p, y),
    # the same numbers for several data sets, their shared points' logs computed once
    gradient_norms=lambda p, v, datasets: G.frechet_gradient_norms(p, [y for y, in datasets]),
    support_point=lambda a: (ball_pt(a),) * 2,
    support_params=lambda p, v: unsquash(CHART.inverse(p), RADIUS),
)


def kng_oracle(d_set, e_set, sigma, size=N_MC, seed=SEED):
    return R.MonteCarloOracle(KNG_GEOMETRY, (d_set,), (e_set,), sigma, size=size, seed=seed,
                              n_draws=N_DRAWS)


def _log_coords(z, y):
    lg = G.log(z, y)
    return np.concatenate([lg.real, lg.imag], axis=-1)


def _kng_configurations(n, rng):
    k = n - 1
    e = np.eye(4)
    b1, b2, opp = CHART(RADIUS * e[0]), CHART(RADIUS * e[1]), CHART(-RADIUS * e[0])
    configs = {
        "centre": np.repeat(CENTER[None], k, axis=0),
        "boundary cluster": np.repeat(b1[None], k, axis=0),
        "two boundary clusters": np.vstack([np.repeat(b1[None], k // 2, axis=0),
                                            np.repeat(opp[None], k - k // 2, axis=0)]),
        # b2 = Exp_c(r i e₁): a holomorphic plane, where the curvature is 4
        "holomorphic pair": np.vstack([np.repeat(b1[None], k // 2, axis=0),
                                       np.repeat(b2[None], k - k // 2, axis=0)]),
        "uniform": CHART.uniform_ball(RADIUS, k, rng),
    }
    return {name: pts for name, pts in configs.items() if pts.shape[0] == k}


@functools.cache
def kng_pair(n, eps=EPS):
    rng = np.random.default_rng(SEED + 500 + n)
    pts = CHART.uniform_ball(RADIUS, 800, rng)
    _, d_set, e_set, name = M.kng_pair_search(_log_coords, ball_pt, 4, pts, np.ones(800),
                                              _kng_configurations(n, rng), n,
                                              kng_sigma(n, eps), rng, starts=24, steps=40)
    return d_set, e_set, name


@pytest.mark.parametrize(("n", "eps"), [(2, EPS), (5, EPS), (10, EPS), (40, EPS), (10, 3.0)])
def test_kng_log_density_ratio(n, eps):
    d_set, e_set, name = kng_pair(n, eps)
    rng = np.random.default_rng(SEED)
    rel = private_frechet_mean(K4, to_library(d_set, rng), epsilon=eps, mechanism="kng",
                               radius=RADIUS, center=CENTER_R, rng=SEED,
                               **record_only(private_frechet_mean))
    sigma = kng_sigma(n, eps)
    sigma = released_sigma(rel, sigma)
    oracle = kng_oracle(d_set, e_set, sigma)
    tol = 6 * oracle.diff_se
    sup = oracle.sup_abs_stat(np.random.default_rng(SEED))
    pointwise = float(np.max(np.abs(oracle.g["D"] - oracle.g["E"])))
    print(f"\nKendall Σ⁴₂ KNG n={n}, ε={eps} ({name}): sup |log f_D − log f_D'| = {sup:.4f} = "
          f"{sup / eps:.3f} ε (Monte Carlo tol {tol:.1e}); sup |g_D − g_D'|/Δ_g = "
          f"{pointwise / delta_gradient(n):.3f}")
    assert tol < 0.05 * eps
    assert pointwise <= delta_gradient(n) * (1 + 1e-9)
    assert sup <= eps + tol


def _kng_blackbox_data():
    d_set, e_set, _ = kng_pair(10)
    d_raw, d_set = raw_far(d_set)
    e_raw, e_set = raw_far(e_set)
    return d_set, e_set, d_raw, e_raw


def own_kng_draws(data, sigma, size, rng):
    """Exact draws of the Fréchet KNG by rejection from uniform points of the ball."""
    return O.rejection_sample(lambda k, r: CHART.uniform_ball(RADIUS, k, r),
                              lambda z: -G.frechet_gradient_norm(z, data) / sigma, size, rng,
                              batch=20_000)


@pytest.mark.statistical
def test_kng_blackbox_distinguisher():
    d_set, e_set, d_raw, e_raw = _kng_blackbox_data()
    sigma = kng_sigma(10)
    oracle = kng_oracle(d_set, e_set, sigma, seed=SEED + 7)
    thresholds = oracle.thresholds(ALPHA_EACH)  # fixed before any draw
    rng = np.random.default_rng(SEED)
    kw = dict(epsilon=EPS, mechanism="kng", radius=RADIUS, center=CENTER_R, total=N_DRAWS,
              sampler="exact")
    z_d, delta_d, rel = frechet_draws(K4, to_library(d_raw, rng), seed=SEED, **kw)
    z_e, delta_e, _ = frechet_draws(K4, to_library(e_raw, rng), seed=SEED + 10_000, **kw)
    assert delta_d == delta_e == 0.0 and rel.diagnostics["exact"] and rel.guarantee == "private"
    sigma = released_sigma(rel, sigma)
    z_d, z_e = from_library(z_d), from_library(z_e)
    pvalues = []
    for z, data in ((z_d, d_set), (z_e, e_set)):
        assert np.all(G.dist(CENTER, z) <= RADIUS + 1e-9)
        own = own_kng_draws(data, sigma, N_DRAWS, rng)
        for summary in (lambda w, data=data: G.frechet_gradient_norm(w, data),
                        lambda w: G.dist(CENTER, w)):
            pvalues.append(stats.ks_2samp(summary(z), summary(own)).pvalue)
    print("\nKendall Σ⁴₂ KNG two-sample KS p-values, library vs own exact draws (gradient "
          "norm, distance to the centre; D, then D'): "
          + ", ".join(f"{p:.3f}" for p in pvalues)
          + f" (sampler: {rel.diagnostics['sampler']})")
    assert min(pvalues) > GOF_ALPHA
    bounds = certify("Kendall Σ⁴₂ KNG black box (n=10)", oracle.stat(z_d, z_d),
                     oracle.stat(z_e, z_e), thresholds, EPS, ALPHA_EACH, delta_d)
    assert all(b.excess <= delta_d for b in bounds)


@pytest.mark.statistical
def test_kng_blackbox_has_power():
    """The library's KNG at POWER·ε (σ/8), on the same neighbours, is caught at ε."""
    d_set, e_set, d_raw, e_raw = _kng_blackbox_data()
    oracle = kng_oracle(d_set, e_set, kng_sigma(10, POWER * EPS), seed=SEED + 8)
    thresholds = oracle.thresholds(ALPHA_EACH)
    rng = np.random.default_rng(SEED)
    kw = dict(epsilon=POWER * EPS, mechanism="kng", radius=RADIUS, center=CENTER_R,
              total=N_DRAWS, sampler="exact")
    z_d, _, _ = frechet_draws(K4, to_library(d_raw, rng), seed=SEED + 1, **kw)
    z_e, _, _ = frechet_draws(K4, to_library(e_raw, rng), seed=SEED + 20_000, **kw)
    z_d, z_e = from_library(z_d), from_library(z_e)
    bounds = certify(f"Kendall Σ⁴₂ KNG at {POWER:g}ε (power)", oracle.stat(z_d, z_d),
                     oracle.stat(z_e, z_e), thresholds, EPS, ALPHA_EACH, 0.0)
    assert max(b.excess for b in bounds) > 0


# ============================================================================ regression
TAU = 0.1
EPS_P = EPS_V = 0.5
V_MAX = np.pi / 2  # the diameter
FOOT_R = np.pi / 2 - 1e-6  # the chart at the centre covers CP² but c's cut locus (a CP¹)


def reg_sigma(n, eps=EPS_P + EPS_V):
    return 2 * np.hypot(2 * TAU / n, 2 * TAU / n) / eps


def _uniform_support(size, rng):
    p = G.random_points(4, size, rng)
    return p, G.uniform_tangent_ball(p, V_MAX, rng)


def _support_point(a):
    p = CHART(O.squash_disk(a[..., :4], FOOT_R))
    return p, G.from_coords(p, O.squash_disk(a[..., 4:], V_MAX))


def _support_params(p, v):
    p, v = G.align_to(CENTER, p, v)  # the representative _support_point produces
    return np.concatenate([unsquash(CHART.inverse(p), FOOT_R),
                           unsquash(G.coords(p, v), V_MAX)], axis=-1)


class _RegressionTerms:
    """``G.joint_gradient_norm`` in per-observation pieces for
    :class:`tests.audit._regression_mc.SharedTerms`: the term gradients of
    ``G.regression_gradient`` (observations along axis 1), then the same means and norm."""

    chunk = 10_000

    def prepare(self, p, v):
        return np.asarray(p, complex), np.asarray(v, complex)

    def columns(self, state, t, y):
        p, v = state
        return list(G.term_gradients(p[:, None], t[None, :, None] * v[:, None],
                                     np.asarray(y, complex)[None], TAU))

    def norm(self, state, parts, t):
        del state
        a, b = parts
        gp, gv = a.mean(axis=1), (t[None, :, None] * b).mean(axis=1)
        return np.sqrt(G.inner(gp, gp) + G.inner(gv, gv))


#: Kendall Σ⁴₂ for :mod:`tests.audit._regression_mc`.
REG_GEOMETRY = types.SimpleNamespace(
    uniform_support=_uniform_support,
    gradient_norm=lambda p, v, t, y: G.joint_gradient_norm(p, v, t, y, TAU),
    support_point=_support_point, support_params=_support_params,
    response_point=lambda a: CHART(O.squash_disk(a, FOOT_R)), n_response_params=4,
    terms=_RegressionTerms(),
)


def _shared(n, rng):
    k = n - 1
    t = np.linspace(0.0, 1.0, k)
    u = G.random_directions(CENTER, rng)
    geo = G.exp(CENTER, 0.5 * t[:, None] * u)
    noisy = G.exp(geo, 0.15 * G.random_directions(geo, rng))
    orth = G.exp(CENTER, V_MAX * u)  # ⟨c, orth⟩ = 0: distance π/2
    return {
        "one point": (t, np.repeat(CENTER[None], k, axis=0)),
        "noisy geodesic": (t, noisy),
        "uniform": (rng.uniform(size=k), G.random_points(4, k, rng)),
        "orthogonal shapes": (t, np.where((np.arange(k) % 2 == 0)[:, None], CENTER, orth)),
    }


@functools.cache
def regression_pair(n):
    return R.adversarial_pair(REG_GEOMETRY, lambda rng: _shared(n, rng),
                              np.random.default_rng(SEED + 600 + n), n_points=1000)


def reg_oracle(d, e, sigma, size=N_MC, seed=SEED):
    return R.MonteCarloOracle(REG_GEOMETRY, d, e, sigma, size=size, seed=seed, n_draws=N_DRAWS)


@pytest.mark.slow
@pytest.mark.parametrize("n", [3, 10])
def test_regression_log_density_ratio(n):
    d, e, name = regression_pair(n)
    rng = np.random.default_rng(SEED)
    rel = private_geodesic_regression(K4, d[0], to_library(d[1], rng), eps_p=EPS_P,
                                      eps_v=EPS_V, tau=TAU, covariate_range=(0, 1),
                                      scheme="joint", rng=SEED,
                                      **record_only(private_geodesic_regression))
    sigma = reg_sigma(n)
    assert rel.sigma["joint"] == pytest.approx(sigma, rel=1e-12)
    oracle = reg_oracle(d, e, sigma)
    tol = 6 * oracle.diff_se
    sup = oracle.sup_abs_stat(np.random.default_rng(SEED))
    delta = np.hypot(2 * TAU / n, 2 * TAU / n)
    pointwise = float(np.max(np.abs(oracle.g["D"] - oracle.g["E"])))
    print(f"\nKendall Σ⁴₂ joint regression n={n} ({name}): sup |log f_D − log f_D'| = "
          f"{sup:.4f} = {sup / EPS:.3f} ε (Monte Carlo tol {tol:.1e}); sup |g_D − g_D'|/Δ = "
          f"{pointwise / delta:.3f}")
    assert tol < 0.05 * EPS
    assert pointwise <= delta * (1 + 1e-9)
    assert sup <= EPS + tol


LO, HI = -1.0, 3.0


def _library_inputs(data, rng):
    """Covariates in the public range (−1, 3), those at 0 or 1 given outside it (clipping
    recovers them); responses as randomly rotated representatives."""
    t, y = data
    x = np.where(t >= 1.0, HI + 0.7, np.where(t <= 0.0, LO - 0.5, LO + t * (HI - LO)))
    return x, to_library(y, rng), (O.covariate_t(x, LO, HI), y)


def own_regression_draws(data, sigma, size, rng):
    """Exact joint-KNG draws (p, v) by rejection from uniform points of CP² × {‖v‖ ≤ π/2}."""
    def propose(k, r):
        return np.stack(_uniform_support(k, r), axis=1)

    z = O.rejection_sample(propose, lambda z: -G.joint_gradient_norm(z[:, 0], z[:, 1], *data,
                                                                      TAU) / sigma,
                           size, rng, batch=20_000)
    return z[:, 0], z[:, 1]


def _regression_library_draws(x, y, eps_factor, seed):
    kw = dict(eps_p=eps_factor * EPS_P, eps_v=eps_factor * EPS_V, tau=TAU,
              covariate_range=(LO, HI), total=N_DRAWS, sampler="exact")
    p, v, delta, rel = regression_draws(K4, x, y, seed=seed, **kw)
    return from_library(p), from_library(v), delta, rel


@pytest.mark.slow
@pytest.mark.statistical
def test_regression_blackbox_distinguisher():
    n = 10
    d, e, _ = regression_pair(n)
    rng = np.random.default_rng(SEED)
    x_d, y_d, d = _library_inputs(d, rng)
    x_e, y_e, e = _library_inputs(e, rng)
    sigma = reg_sigma(n)
    oracle = reg_oracle(d, e, sigma, seed=SEED + 7)
    thresholds = oracle.thresholds(ALPHA_EACH)  # fixed before any draw
    p_d, v_d, delta_d, rel = _regression_library_draws(x_d, y_d, 1.0, SEED)
    p_e, v_e, delta_e, _ = _regression_library_draws(x_e, y_e, 1.0, SEED + 10_000)
    assert delta_d == delta_e == 0.0 and rel.diagnostics["joint"]["exact"]
    assert rel.guarantee == "private" and rel.epsilon == pytest.approx(PER_CALL * EPS)
    assert rel.sigma["joint"] == pytest.approx(sigma, rel=1e-12)
    pvalues = []
    for p, v, data in ((p_d, v_d, d), (p_e, v_e, e)):
        np.testing.assert_allclose(G.herm(p, v), 0, atol=1e-10)  # horizontal
        np.testing.assert_allclose(v.sum(axis=-1), 0, atol=1e-10)
        assert np.all(G.cnorm(v) <= V_MAX + 1e-9)
        own_p, own_v = own_regression_draws(data, sigma, N_DRAWS, rng)
        pvalues.append(stats.ks_2samp(REG_GEOMETRY.gradient_norm(p, v, *data),
                                      REG_GEOMETRY.gradient_norm(own_p, own_v, *data)).pvalue)
        pvalues.append(stats.ks_2samp(G.cnorm(v), G.cnorm(own_v)).pvalue)
    print("\nKendall Σ⁴₂ joint regression two-sample KS p-values, library vs own exact draws "
          "(gradient norm, ‖v‖; D, then D'): " + ", ".join(f"{p:.3f}" for p in pvalues))
    assert min(pvalues) > GOF_ALPHA
    bounds = certify("Kendall Σ⁴₂ joint regression black box (n=10)", oracle.stat(p_d, v_d),
                     oracle.stat(p_e, v_e), thresholds, EPS, ALPHA_EACH, delta_d)
    assert all(b.excess <= delta_d for b in bounds)


@pytest.mark.slow
@pytest.mark.statistical
def test_regression_blackbox_has_power():
    """The same machinery certifies a violation of ε for the library at REG_POWER·ε on data
    sets that differ in every row: responses near a geodesic through the centre, and the same
    responses moved by 0.9 in the centre's normal coordinates. (At 8ε on neighbours the
    library's uniform-proposal sampler would need millions of proposals per data set; the
    adversarial neighbours, whose responses are scattered over CP², give a nearly flat target
    and are not distinguishable at 2ε even with every row replaced.)"""
    n = 10
    rng = np.random.default_rng(SEED + 9)
    t = np.linspace(0.0, 1.0, n)
    y = G.exp(CENTER, 0.5 * t[:, None] * G.random_directions(CENTER, rng))
    y = G.exp(y, 0.05 * G.random_directions(y, rng))
    d, far = (t, y), (t, CHART(CHART.inverse(y) + [0.9, 0.0, 0.0, 0.0]))
    x_d, y_d, d = _library_inputs(d, rng)
    x_f, y_f, far = _library_inputs(far, rng)
    oracle = reg_oracle(d, far, reg_sigma(n, REG_POWER * EPS), seed=SEED + 8)
    thresholds = oracle.thresholds(ALPHA_EACH)
    p_d, v_d, _, _ = _regression_library_draws(x_d, y_d, REG_POWER, SEED + 1)
    p_f, v_f, _, _ = _regression_library_draws(x_f, y_f, REG_POWER, SEED + 20_000)
    bounds = certify(f"Kendall Σ⁴₂ joint regression at {REG_POWER:g}ε, every row replaced "
                     "(power)", oracle.stat(p_d, v_d), oracle.stat(p_f, v_f), thresholds, EPS,
                     ALPHA_EACH, 0.0)
    assert max(b.excess for b in bounds) > 0
