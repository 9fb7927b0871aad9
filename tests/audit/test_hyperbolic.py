r"""Privacy audit of the strict Fréchet-mean mechanisms on the hyperbolic plane H².

H² is the hyperboloid {x ∈ R³ : ⟨x, x⟩_L = −1, x₀ > 0}, ⟨u, w⟩_L = −u₀w₀ + u₁w₁ + u₂w₂,
curvature −1. The geometry below is this module's own (closed forms, checked against finite
differences): d(x, y) = 2 asinh(‖x − y‖_L/2) (the chord is spacelike), Exp_x v =
cosh‖v‖ x + sinh‖v‖ v/‖v‖, Log_x y = d · (y + ⟨x, y⟩_L x)/sinh d, an orthonormal frame at z
by the Lorentz boost taking (1, 0, 0) to z, and the volume density of normal coordinates
J(ρ) = sinh ρ/ρ.

Public inputs: the ball B_r(C), r = 0.5, about C = Exp_o(0, 0.7, −0.4) (not the origin).
Strict mode projects the data onto it. Curvature ≤ 0, so h = 1 and Δ = Δ_g = 2r/n
(paper 001, Thm 2; no radius limit).

Mechanisms (read off ``dpcore.release``; the records are checked):

* Laplace mean, *unrestricted*: f_D(z) ∝ exp(−d(m_D, z)/σ) on all of H², σ = Δ/ε, used when
  1/(2σ) > 1 (the volume grows like e^ρ; the library keeps a factor 2 so that draws stay
  finite in float64). The normalizer is 2π/(σ⁻² − 1) whatever the mean (homogeneity), so the
  log-ratio is (d(m_D′, z) − d(m_D, z))/σ ≤ d(m_D, m_D′)/σ.
* Laplace mean, *restricted* to B_r(C) with σ = 2Δ/ε otherwise (its normalizer depends on m).
* KNG mean: f_D(z) ∝ exp(−‖(1/n) Σ Log_z y_i‖/σ) on B_r(C), σ = 2Δ_g/ε.

(a) Exact log-density ratios on adversarial neighbours: a random-restart search of the mean
    shift d(m_D, m_D′)/Δ (Laplace) or of the coarse-grid sup |log f_D − log f_D′| over shared
    configurations and the replaced point (KNG). Normalizers by polar Gauss–Legendre
    quadrature: unrestricted Laplace about each mean (checked against the closed form);
    restricted Laplace and KNG on star grids of the ball about each density's mode. The sup
    over z is taken on the grids (and refined by a local search for KNG) and asserted ≤ ε plus
    the change of the log-normalizers when the grids are halved.
(b) Black box: 4000 library draws per data set, replaced boundary points given raw at
    distance 4 from C (the library projects them). Draws are checked against the oracle (KS on
    d(m, Z) for unrestricted Laplace, χ² over log-density levels × quadrants otherwise);
    events fixed from the oracle before sampling; one-sided Clopper–Pearson; a certified
    P_D(A) − e^ε P_D′(A) > δ = 0 fails. Power: the audit's own exact draws with σ/4 (Laplace)
    and σ/8 (KNG) are caught by the same machinery.
"""

import functools

import numpy as np
import pytest
from scipy import stats

from dpcore.manifolds import Hyperbolic
from dpcore.release import private_frechet_mean

from . import _manifold_oracle as M
from . import _oracle as O
from ._draws import record_only
from ._hyperbolic_oracle import (
    dist,
    exp,
    frame,
    frechet_mean_batch,
    log,
    log_coords,
    mink,
    transport,
    volume_density,
)
from ._manifold_draws import ALPHA_EACH, N_DRAWS, frechet_draws
from ._released import released_sigma
from .contract import (
    Distinguisher,
    Draws,
    Exact,
    ExactRatioContract,
    MechanismAuditContract,
)

H2 = Hyperbolic(2)
RADIUS = 0.5
EPS = 1.0
SEED = 1_732


# ============================================================================ chart at C
O_H = np.array([1.0, 0.0, 0.0])
CENTER = exp(O_H, np.array([0.0, 0.7, -0.4]))
E1, E2 = frame(CENTER)


def chart(c):
    """Normal coordinates (..., 2) at C → points of H²."""
    c = np.asarray(c, float)
    return exp(np.broadcast_to(CENTER, c.shape[:-1] + (3,)),
               c[..., 0:1] * E1 + c[..., 1:2] * E2)


def chart_inv(z):
    return log_coords(np.broadcast_to(CENTER, np.shape(z)), z)


def ball_pt(a, radius=RADIUS):
    return chart(O.squash_disk(a, radius))


def raw_far(points, radius=RADIUS, far=4.0):
    """Boundary points (within 1e-3) replaced by raw points at distance ``far`` on the same
    geodesic from C; returns (raw, projected onto the ball)."""
    c = chart_inv(points)
    r = M.norm_last(c)
    edge = r > radius - 1e-3
    raw_c, proj_c = c.copy(), c.copy()
    raw_c[edge] *= far / r[edge, None]
    proj_c[edge] *= radius / r[edge, None]
    return chart(raw_c), chart(proj_c)


def delta(n):
    return 2.0 * RADIUS / n


# ============================================================================ oracle checks
def test_own_geometry_against_finite_differences():
    rng = np.random.default_rng(SEED)
    x = chart(rng.normal(scale=0.8, size=(50, 2)))
    e1, e2 = frame(x)
    assert np.allclose(mink(x, x), -1.0) and np.allclose(mink(x, e1), 0.0)
    assert np.allclose(mink(e1, e1), 1.0) and np.allclose(mink(e1, e2), 0.0)
    w = rng.normal(scale=1.2, size=(50, 2))
    v = w[:, 0:1] * e1 + w[:, 1:2] * e2
    y = exp(x, v)
    assert np.allclose(dist(x, y), M.norm_last(w), atol=1e-12)
    assert np.allclose(log(x, y), v, atol=1e-9)
    assert np.allclose(log_coords(x, y), w, atol=1e-9)
    # the geodesic's speed, by central differences, is ‖v‖ (unit-speed after rescaling)
    h = 1e-6
    speed = dist(exp(x, (0.5 + h) * v), exp(x, (0.5 - h) * v)) / (2 * h)
    assert np.allclose(speed, M.norm_last(w), rtol=1e-6)
    # J(c) = sinh ρ/ρ: area distortion of the chart, from its finite-difference Jacobian
    c = rng.normal(scale=1.0, size=(30, 2))
    cols = [(chart(c + h * np.eye(2)[k]) - chart(c - h * np.eye(2)[k])) / (2 * h)
            for k in range(2)]
    gram = np.array([[mink(a, b) for b in cols] for a in cols])
    assert np.allclose(np.sqrt(np.linalg.det(np.moveaxis(gram, -1, 0))), volume_density(c),
                       rtol=1e-6)
    # parallel transport: tangent at y, an isometry, and Log_x y ↦ −Log_y x along the geodesic
    u = rng.normal(size=(50, 2))
    a = u[:, 0:1] * e1 + u[:, 1:2] * e2
    moved = transport(x, y, a)
    assert np.allclose(mink(moved, y), 0.0, atol=1e-9)
    assert np.allclose(mink(moved, moved), mink(a, a))
    assert np.allclose(mink(transport(x, y, v), transport(x, y, a)), mink(v, a))
    assert np.allclose(transport(x, y, log(x, y)), -log(y, x), atol=1e-9)
    # the Fréchet mean is a critical point of F
    data = ball_pt(rng.normal(scale=2.0, size=(7, 9, 2)))
    m = frechet_mean_batch(data)
    assert np.max(M.norm_last(log_coords(m[:, None], data).mean(axis=1))) < 1e-12


def test_records():
    rng = np.random.default_rng(SEED)
    y = ball_pt(rng.normal(size=(10, 2)))
    lap = private_frechet_mean(H2, y, epsilon=EPS, mechanism="laplace", radius=RADIUS,
                               center=CENTER, rng=SEED)
    assert lap.sensitivity["mean"] == pytest.approx(delta(10), rel=1e-12)
    released_sigma(lap, delta(10) / EPS)
    assert not any("restricted" in c for c in lap.caveats)
    low = private_frechet_mean(H2, y, epsilon=0.2, mechanism="laplace", radius=RADIUS,
                               center=CENTER, rng=SEED)
    assert low.sigma["mean"] == pytest.approx(2 * delta(10) / 0.2, rel=1e-12)
    assert any("restricted" in c for c in low.caveats)
    kng = private_frechet_mean(H2, y, epsilon=EPS, mechanism="kng", radius=RADIUS,
                               center=CENTER, rng=SEED, **record_only(private_frechet_mean))
    assert kng.sensitivity["gradient"] == pytest.approx(delta(10), rel=1e-12)
    assert kng.sigma["mean"] == pytest.approx(2 * delta(10) / EPS, rel=1e-12)
    for rel in (lap, low):
        assert rel.guarantee == "private" and rel.delta == 0.0


# ============================================================================ unrestricted Laplace
def laplace_sigma(n, eps=EPS):
    return delta(n) / eps


def laplace_log_normalizer(sigma):
    """log ∫_{H²} e^{−ρ/σ} dvol = log 2π ∫ e^{−ρ/σ} sinh ρ dρ = log 2π/(σ⁻² − 1)."""
    return np.log(2 * np.pi / (sigma**-2 - 1.0))


def _truncation(sigma):
    return 45.0 / (1.0 / sigma - 1.0)


def centred_log_c(sigma, n_rho):
    coords, w = O.disk_grid(_truncation(sigma), n_rho)
    return O.log_integral(-M.norm_last(coords) / sigma + np.log(volume_density(coords)), w)


@functools.cache
def laplace_pair(n):
    rng = np.random.default_rng(SEED + n)
    ratio, d, e = M.mean_shift_search(ball_pt, 2, frechet_mean_batch, dist, n, delta(n), rng,
                                      steps=80, starts=40)
    return d, e, ratio


def _laplace_exact(n):
    d_set, e_set, shift = laplace_pair(n)
    rel = private_frechet_mean(H2, d_set, epsilon=EPS, mechanism="laplace", radius=RADIUS,
                               center=CENTER, rng=SEED)
    sigma = laplace_sigma(n)
    sigma = released_sigma(rel, sigma)
    assert not any("restricted" in c for c in rel.caveats)
    log_c, half = centred_log_c(sigma, 200), centred_log_c(sigma, 100)
    tol = 2 * abs(log_c - half) + 1e-12
    assert abs(log_c - laplace_log_normalizer(sigma)) < 1e-8
    m_d, m_e = frechet_mean_batch(d_set), frechet_mean_batch(e_set)
    # the ratio on a grid about both means and beyond each mean on their geodesic
    coords, _ = O.disk_grid(20 * sigma, 40)
    u, u_e = log(m_d, m_e), log(m_e, m_d)
    beyond = np.stack([exp(m_d, -s * u) for s in (1e-3, 0.5, 2.0)]
                      + [exp(m_e, -s * u_e) for s in (1e-3, 0.5, 2.0)])
    e1, e2 = frame(m_d)
    f1, f2 = frame(m_e)
    near = np.vstack([exp(m_d, coords[:, 0:1] * e1 + coords[:, 1:2] * e2),
                      exp(m_e, coords[:, 0:1] * f1 + coords[:, 1:2] * f2), beyond])
    stat = (dist(near, m_e) - dist(near, m_d)) / sigma  # equal normalizers (homogeneity)
    sup = float(np.max(np.abs(stat)))
    assert float(dist(m_d, m_e)) <= delta(n) * (1 + 1e-9)
    assert shift >= 0.9  # a geodesic through C gives nearly the bound (the search finds it)
    return Exact(f"H² Laplace (unrestricted) n={n} (sup d(m_D, m_D')/Δ = {shift:.4f})", sup,
                 EPS, tol, slack=1e-9)


def test_laplace_normalizer_does_not_depend_on_the_mean():
    """e^{−d(m, z)/σ} integrated on one polar grid at C, for m = C and for a mean off C, gives
    the closed form: the homogeneity that σ = Δ/ε relies on."""
    sigma = laplace_sigma(10)
    exact = laplace_log_normalizer(sigma)
    m_off = chart(np.array([0.3, -0.2]))
    errs = []
    for m in (CENTER, m_off):
        vals = []
        for n_rho in (400, 200):
            coords, w = O.disk_grid(_truncation(sigma) + 0.5, n_rho)
            vals.append(O.log_integral(-dist(m, chart(coords)) / sigma,
                                       w * volume_density(coords)))
        errs.append((vals[0] - exact, abs(vals[0] - vals[1])))
    print("\nH² Laplace normalizer on a grid at C minus the closed form: "
          + ", ".join(f"{e:+.1e} (halving {t:.0e})" for e, t in errs))
    for err, t in errs:
        assert abs(err) <= 2 * t + 1e-6 and abs(err) < 1e-3


def radial_cdf_table(sigma, n=20_001):
    rho = np.linspace(0.0, _truncation(sigma), n)
    dens = np.exp(-rho / sigma) * np.sinh(rho)
    cdf = np.concatenate([[0.0], np.cumsum(0.5 * (dens[1:] + dens[:-1]) * np.diff(rho))])
    return rho, cdf / cdf[-1]


def sample_laplace(m, sigma, size, rng):
    """The audit's own exact-up-to-table draws: radius by the inverse CDF, angle uniform."""
    rho_t, cdf = radial_cdf_table(sigma)
    rho = np.interp(rng.uniform(size=size), cdf, rho_t)
    phi = rng.uniform(0, 2 * np.pi, size=size)
    e1, e2 = frame(m)
    return exp(m, (rho * np.cos(phi))[:, None] * e1 + (rho * np.sin(phi))[:, None] * e2)


def _laplace_blackbox_data():
    d_set, e_set, _ = laplace_pair(10)
    d_raw, d_set = raw_far(d_set)
    e_raw, e_set = raw_far(e_set)
    return d_set, e_set, d_raw, e_raw


def _laplace_thresholds(m_d, m_e, sigma):
    coords, w = O.disk_grid(_truncation(sigma), 200)
    e1, e2 = frame(m_d)
    z = exp(m_d, coords[:, 0:1] * e1 + coords[:, 1:2] * e2)
    log_c = laplace_log_normalizer(sigma)
    lf_d = -M.norm_last(coords) / sigma - log_c
    lf_e = -dist(m_e, z) / sigma - log_c
    return O.event_thresholds(lf_d - lf_e, lf_d, lf_e, w * volume_density(coords), N_DRAWS,
                              ALPHA_EACH)


def _laplace_distinguisher():
    d_set, e_set, d_raw, e_raw = _laplace_blackbox_data()
    assert np.max(dist(d_raw, CENTER)) > 3 or np.max(dist(e_raw, CENTER)) > 3
    sigma = laplace_sigma(10)
    m_d, m_e = frechet_mean_batch(d_set), frechet_mean_batch(e_set)

    def draw():
        """KS of the radius d(m, Z) and of the angle in normal coordinates at m."""
        kw = dict(epsilon=EPS, mechanism="laplace", radius=RADIUS, center=CENTER,
                  total=N_DRAWS)
        z_d, delta_d, rel = frechet_draws(H2, d_raw, seed=SEED, **kw)
        z_e, delta_e, _ = frechet_draws(H2, e_raw, seed=SEED + 10_000, **kw)
        assert delta_d == delta_e == 0.0 and rel.diagnostics["exact"]
        assert rel.guarantee == "private"
        rho_t, cdf = radial_cdf_table(sigma)
        pvalues = []
        for z, m in ((z_d, m_d), (z_e, m_e)):
            c = log_coords(np.broadcast_to(m, z.shape), z)
            pvalues += [stats.kstest(dist(m, z), lambda x: np.interp(x, rho_t, cdf)).pvalue,
                        stats.kstest(np.arctan2(c[:, 1], c[:, 0]), "uniform",
                                     args=(-np.pi, 2 * np.pi)).pvalue]
        stat = lambda z: (dist(m_e, z) - dist(m_d, z)) / sigma
        return Draws(stat(z_d), stat(z_e), delta_d, tuple(pvalues))

    return Distinguisher("H² Laplace black box (n=10)", _laplace_thresholds(m_d, m_e, sigma),
                         draw, EPS)


def _laplace_broken():
    """H² Laplace with σ/4, drawn by the audit."""
    d_set, e_set, _, _ = _laplace_blackbox_data()
    sigma = laplace_sigma(10) / 4
    m_d, m_e = frechet_mean_batch(d_set), frechet_mean_batch(e_set)

    def draw():
        rng = np.random.default_rng(SEED)
        stat = lambda z: (dist(m_e, z) - dist(m_d, z)) / sigma
        return Draws(stat(sample_laplace(m_d, sigma, N_DRAWS, rng)),
                     stat(sample_laplace(m_e, sigma, N_DRAWS, rng)))

    return Distinguisher("H² Laplace, σ/4 (power)", _laplace_thresholds(m_d, m_e, sigma), draw,
                         EPS)


class TestH2Laplace(MechanismAuditContract):
    cases = [(3,), (10,), (40,)]
    exact, distinguisher, broken = _laplace_exact, _laplace_distinguisher, _laplace_broken


# ============================================================================ restricted Laplace
#: (n, ε) with 1/(2Δ/ε) ≤ 1, where the library restricts the support to B_r(C), σ = 2Δ/ε.
RESTRICTED_CASES = [(2, 1.0), (3, 0.6), (10, 0.2)]


def restricted_log_c(m, sigma, n_rho):
    coords, w = M.disk_star_grid(chart_inv(m), RADIUS, n_rho, 2 * n_rho)
    return O.log_integral(-dist(m, chart(coords)) / sigma, w * volume_density(coords))


def _restricted_exact(n, eps):
    d_set, e_set, _ = laplace_pair(n)
    rel = private_frechet_mean(H2, d_set, epsilon=eps, mechanism="laplace", radius=RADIUS,
                               center=CENTER, rng=SEED)
    sigma = 2 * delta(n) / eps
    sigma = released_sigma(rel, sigma)
    assert any("restricted" in c for c in rel.caveats)
    m = {"D": frechet_mean_batch(d_set), "E": frechet_mean_batch(e_set)}
    log_c = {k: restricted_log_c(m[k], sigma, 160) for k in "DE"}
    tol = sum(abs(log_c[k] - restricted_log_c(m[k], sigma, 80)) for k in "DE")
    coords, _ = O.disk_grid(RADIUS, 200)
    z = np.vstack([chart(coords), m["D"][None], m["E"][None]])
    stat = (-dist(m["D"], z) + dist(m["E"], z)) / sigma - log_c["D"] + log_c["E"]
    sup = float(np.max(np.abs(stat)))
    return Exact(f"H² Laplace (restricted) n={n}, ε={eps}", sup, eps, tol, tol_cap=1e-6)


class TestH2RestrictedLaplace(ExactRatioContract):
    """Exact ratios only: the black box of the ball-restricted Laplace is audited on SPD(2)."""

    cases = RESTRICTED_CASES
    exact = _restricted_exact


# ============================================================================ KNG
def kng_sigma(n, eps=EPS):
    return 2 * delta(n) / eps


def kng_oracle(d_set, e_set, sigma, n_rho):
    stars = {}
    for which, data in (("D", d_set), ("E", e_set)):
        coords, w = M.disk_star_grid(chart_inv(frechet_mean_batch(data)), RADIUS, n_rho // 2,
                                     n_rho)
        stars[which] = (coords, w * volume_density(coords))
    coords, w = O.disk_grid(RADIUS, n_rho)
    return M.KNGOracle(log_coords, chart, (coords, w * volume_density(coords)), RADIUS, d_set,
                       e_set, sigma, star_grids=stars)


def _kng_configurations(n, rng):
    k = n - 1
    b, opp = chart([RADIUS, 0.0]), chart([-RADIUS, 0.0])
    configs = {
        "centre": np.repeat(CENTER[None], k, axis=0),
        "boundary cluster": np.repeat(b[None], k, axis=0),
        "two boundary clusters": np.vstack([np.repeat(b[None], k // 2, axis=0),
                                            np.repeat(opp[None], k - k // 2, axis=0)]),
        "uniform": ball_pt(rng.normal(scale=1.5, size=(k, 2))),
    }
    return {name: pts for name, pts in configs.items() if pts.shape[0] == k}


@functools.cache
def kng_pair(n, eps=EPS):
    rng = np.random.default_rng(SEED + 500 + n)
    coords, w = O.disk_grid(RADIUS, 24)
    _, d_set, e_set, name = M.kng_pair_search(log_coords, ball_pt, 2, chart(coords),
                                              w * volume_density(coords),
                                              _kng_configurations(n, rng), n,
                                              kng_sigma(n, eps), rng, starts=40, steps=60)
    return d_set, e_set, name


def _kng_exact(n, eps):
    d_set, e_set, name = kng_pair(n, eps)
    rel = private_frechet_mean(H2, d_set, epsilon=eps, mechanism="kng", radius=RADIUS,
                               center=CENTER, rng=SEED, **record_only(private_frechet_mean))
    sigma = kng_sigma(n, eps)
    sigma = released_sigma(rel, sigma)
    fine, half = kng_oracle(d_set, e_set, sigma, 160), kng_oracle(d_set, e_set, sigma, 80)
    tol = sum(abs(fine.log_c[w] - half.log_c[w]) for w in "DE")
    sup = fine.sup_abs_stat(np.random.default_rng(SEED))
    pointwise = float(np.max(np.abs(fine.g_grid["D"] - fine.g_grid["E"])))
    return Exact(f"H² KNG n={n}, ε={eps} ({name})", sup, eps, tol, tol_cap=1e-3 * eps,
                 pointwise=pointwise, delta=delta(n), rtol=1e-9)


def _kng_blackbox_data():
    d_set, e_set, _ = kng_pair(10)
    d_raw, d_set = raw_far(d_set)
    e_raw, e_set = raw_far(e_set)
    return d_set, e_set, d_raw, e_raw


def _kng_gof(oracle, which, z):
    return M.gof_pvalue(oracle.grid_log_f(which), oracle.weights, M.quadrant(oracle.coords),
                        oracle.log_f(z, which), M.quadrant(chart_inv(z)), 4)


def _kng_distinguisher():
    d_set, e_set, d_raw, e_raw = _kng_blackbox_data()
    oracle = kng_oracle(d_set, e_set, kng_sigma(10), 160)

    def draw():
        kw = dict(epsilon=EPS, mechanism="kng", radius=RADIUS, center=CENTER, total=N_DRAWS,
                  sampler="exact")
        z_d, delta_d, rel = frechet_draws(H2, d_raw, seed=SEED, **kw)
        z_e, delta_e, _ = frechet_draws(H2, e_raw, seed=SEED + 10_000, **kw)
        assert delta_d == delta_e == 0.0 and rel.diagnostics["exact"]
        assert rel.guarantee == "private"
        assert rel.sigma["mean"] == pytest.approx(oracle.sigma, rel=1e-12)
        for z in (z_d, z_e):
            assert np.all(dist(z, CENTER) <= RADIUS + 1e-9)
        pvalues = (_kng_gof(oracle, "D", z_d), _kng_gof(oracle, "E", z_e))
        return Draws(oracle.stat(z_d), oracle.stat(z_e), delta_d, pvalues)

    return Distinguisher("H² KNG black box (n=10)", oracle.thresholds(N_DRAWS, ALPHA_EACH),
                         draw, EPS)


def uniform_ball(size, rng):
    """Uniform (for area) on B_r(C): cosh ρ uniform on [1, cosh r]."""
    rho = np.arccosh(1.0 + rng.uniform(size=size) * (np.cosh(RADIUS) - 1.0))
    phi = rng.uniform(0, 2 * np.pi, size=size)
    return chart(np.stack([rho * np.cos(phi), rho * np.sin(phi)], axis=-1))


def _kng_broken():
    """H² KNG with σ/8, drawn by the audit's own rejection sampler."""
    d_set, e_set, _, _ = _kng_blackbox_data()
    oracle = kng_oracle(d_set, e_set, kng_sigma(10) / 8, 160)

    def draw():
        rng = np.random.default_rng(SEED)
        z = [O.rejection_sample(uniform_ball, lambda z, w=w: -oracle.g(z, w) / oracle.sigma,
                                N_DRAWS, rng) for w in "DE"]
        return Draws(oracle.stat(z[0]), oracle.stat(z[1]))

    return Distinguisher("H² KNG, σ/8 (power)", oracle.thresholds(N_DRAWS, ALPHA_EACH), draw,
                         EPS)


class TestH2KNG(MechanismAuditContract):
    cases = [(2, EPS), (5, EPS), (10, EPS), (40, EPS), (40, 3.0)]
    exact, distinguisher, broken = _kng_exact, _kng_distinguisher, _kng_broken
