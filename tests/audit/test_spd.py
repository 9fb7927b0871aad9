r"""Privacy audit of the strict Fréchet-mean mechanisms on SPD(2) (affine-invariant metric).

Public inputs: the ball B_r(P₀) about P₀ = [[1.5, 0.3], [0.3, 0.8]] (not the identity, so the
library's handling of a general centre is exercised). Strict mode projects the data onto it.
Curvature lies in [−½, 0], so κ_high = 0, h = 1, Δ = 2r/n (mean) and Δ_g = 2r/n (gradient);
there is no radius limit (r* = ∞).

Mechanisms (read off ``dpcore.release`` and ``_laplace_integrable``; the records are checked):

* Laplace mean, *unrestricted*: f_D(z) ∝ exp(−d(m_D, z)/σ) on all of SPD(2) with σ = Δ/ε, used
  when that density is integrable, i.e. 1/σ > 1/√2 (the volume grows like e^{ρ/√2});
* Laplace mean, *restricted*: otherwise the support is the public ball B_r(P₀) and σ = 2Δ/ε
  (the normalizer then depends on m_D); audited with r = 1.5 and small n ε;
* KNG mean: f_D(z) ∝ exp(−‖(1/n) Σ Log_z y_i‖_z/σ) on B_r(P₀), σ = 2Δ_g/ε, r = 0.5.

All densities are w.r.t. the Riemannian volume. The oracle (:mod:`tests.audit._manifold_oracle_spd`)
integrates in normal coordinates c ∈ R³ at a base point (a base-orthonormal basis of Sym(2))
with the volume density J(c) = sinh(|a − b|/2)/(|a − b|/2) (a, b the eigenvalues), checked
against a finite-difference Jacobian of its own exponential map at I and at random base points.

(a) Exact log-density ratio on adversarial neighbours (:class:`tests.audit.contract
    .ExactRatioContract`: sup |log f_D − log f_D′| ≤ ε + quadrature tolerance).
    * Unrestricted Laplace: a random-restart search of the mean shift d(m_D, m_D′)/Δ (one or
      two clusters of shared points, or all points free for n ≤ 5, anywhere in the ball).
      Each normalizer is a spherical Gauss–Legendre quadrature in normal coordinates at its
      own mean (tail below e⁻⁴⁵ cut), checked against the closed form
      2√2 π² ∫ e^{−ρ/σ} ρ L₀(ρ/√2) dρ, and on a grid at the *public centre* (off-centre kinks):
      the normalizer does not depend on the mean, as σ = Δ/ε needs. The sup of the log-ratio
      is attained beyond m_D on the geodesic through both means (evaluated there and on the
      grids); on the flat of commuting matrices the mean moves by 2r/n: ratio = ε, attained.
    * Restricted Laplace and KNG: neighbours from a random-restart search of the coarse-grid
      sup |log f_D − log f_D′| over the shared cluster (KNG: centre, boundary cluster, two
      boundary clusters in non-commuting directions, uniform), the replaced point and its
      replacement; a fine ball grid at P₀ (KNG: spherical grids about each mode, along whose
      rays the integrand is smooth) normalizes, the sup is taken over the nodes and refined
      locally; tolerance: the change of the log-normalizers when the grid is halved. KNG also
      checks sup |g_D − g_D′| ≤ Δ_g on the grid.

(b) Black box (:class:`tests.audit.contract.MechanismAuditContract`): 4000 library draws per
    data set (``sampler="exact"`` for KNG), the replaced boundary points given raw far outside
    the ball, checked against the oracle (unrestricted Laplace: KS on d(m, Z) against the radial
    law ∝ e^{−ρ/σ} ρ L₀(ρ/√2), and Pearson χ² over radius octiles × sectors in normal
    coordinates at m — sign of the trace part, and whether the traceless part dominates, which
    J weighs — with exact cell probabilities; ball-supported: χ² over log-density levels ×
    chart quadrants). Power: violations are certified for the audit's own exact draws with σ/4
    (Laplace, KNG), and the χ² check rejects paper-mode KNG draws (σ = Δ_g/ε).

On B_0.5, J ≤ 1.02, so the KNG case is repeated on B_3(P₀) (J up to 2): (a) for n = 10 and
ε = 1, 0.3, and a goodness-of-fit test at ε = 0.3 whose KS test on J(Z) rejects draws that
ignore J (uniform in the chart instead of the volume) — a check that the library's exact
sampler weighs the volume correctly.

``test_laplace_heavy_tail_draws_are_spd`` is the regression test of a library bug the audit
found: close to 1/σ = 1/√2 the whole-space Laplace's tail overflowed float64 matrices (non-SPD
"means" labelled private); the library now requires 1/σ ≥ √2 for the whole space.
"""

import functools

import numpy as np
import pytest
from scipy import stats

from dpcore.manifolds import SPD
from dpcore.release import private_frechet_mean

from . import _manifold_oracle as M
from . import _manifold_oracle_spd as SP
from . import _oracle as O
from ._draws import record_only
from ._manifold_draws import ALPHA_EACH, GOF_ALPHA, N_DRAWS, frechet_draws
from ._released import released_sigma
from .contract import Distinguisher, Draws, Exact, MechanismAuditContract

SPD2 = SPD(2)
P0 = np.array([1.5, 0.8, 0.3])  # [[1.5, 0.3], [0.3, 0.8]] as a triple (a, b, c)
P0_MATRIX = SP.to_matrix(P0)
RADIUS = 0.5
EPS = 1.0
SEED = 1_414


def chart(c):
    return SP.spd_chart(c, P0)


def ball_pt(a, radius=RADIUS):
    """Parameter rows of R³ → points of the open ball B_radius(P₀)."""
    return chart(O.squash_disk(a, radius))


lib = SP.to_matrix  # (a, b, c) triples → the library's 2×2 matrices


def raw_far(points, radius, far=4.0):
    """Boundary points (within 1e-3) replaced by raw points at distance ``far`` on the same
    geodesic from P₀; returns (raw, projected)."""
    points = np.array(points, dtype=float)
    c = SP.spd_chart_inv(points, P0)
    d = M.norm_last(c)
    edge = d > radius - 1e-3
    c[edge] *= far / d[edge, None]
    raw = np.where(edge[:, None], chart(c), points)
    return raw, SP.spd_project_ball(raw, radius, P0)


def ball_grid(radius, n_rho, n_theta, n_phi):
    """Chart coordinates of a spherical grid of B_radius(P₀) and volume weights (× J)."""
    coords, w = M.ball3_grid(radius, n_rho, n_theta, n_phi)
    return coords, w * SP.spd_volume_density(coords)


def sectors_at(base, z):
    """0..3: sign of the trace part × (traceless part larger), in normal coordinates at base."""
    c = SP.spd_chart_inv(z, base)
    s = (c[..., 0] + c[..., 1]) / np.sqrt(2.0)
    w = np.hypot((c[..., 0] - c[..., 1]) / np.sqrt(2.0), c[..., 2])
    return (s > 0).astype(int) * 2 + (w > np.abs(s)).astype(int)


# ============================================================================ unrestricted Laplace
def laplace_sigma(n, eps=EPS):
    return 2 * RADIUS / n / eps


@functools.cache
def laplace_pair(n):
    rng = np.random.default_rng(SEED + n)
    ratio, d, e = M.mean_shift_search(ball_pt, 3, SP.spd_frechet_mean, SP.spd_dist, n,
                                      2 * RADIUS / n, rng, steps=80, starts=40)
    return d, e, ratio


def _truncation(sigma):
    """Radius beyond which the Laplace mass is below e⁻⁴⁵ (volume growth e^{ρ/√2})."""
    return 45.0 / (1.0 / sigma - 1.0 / np.sqrt(2.0))


def centred_laplace(m, sigma, n_rho, n_theta):
    """Normal-coordinate grid at m (m-orthonormal), its points and log ∫ e^{−ρ/σ} J dc."""
    coords, w = M.ball3_grid(_truncation(sigma), n_rho, n_theta)
    log_c = O.log_integral(-M.norm_last(coords) / sigma + np.log(SP.spd_volume_density(coords)),
                           w)
    return coords, w * SP.spd_volume_density(coords), log_c


def _laplace_exact(n):
    d_set, e_set, shift = laplace_pair(n)
    rel = private_frechet_mean(SPD2, lib(d_set), epsilon=EPS, mechanism="laplace",
                               radius=RADIUS, center=P0_MATRIX, rng=SEED)
    sigma = released_sigma(rel, laplace_sigma(n))
    assert rel.sensitivity["mean"] == pytest.approx(2 * RADIUS / n, rel=1e-12)
    assert not any("restricted" in c for c in rel.caveats)
    m_d, m_e = SP.spd_frechet_mean(d_set), SP.spd_frechet_mean(e_set)
    coords, _, log_c_d = centred_laplace(m_d, sigma, 64, 24)
    _, _, log_c_e = centred_laplace(m_e, sigma, 64, 24)
    _, _, half = centred_laplace(m_d, sigma, 32, 12)
    tol = 2 * abs(log_c_d - half) + 1e-12
    exact = SP.spd_laplace_log_normalizer(sigma)
    assert abs(log_c_d - exact) < 1e-9 and abs(log_c_e - exact) < 1e-9
    # the log-ratio on the nodes near both means and beyond each mean on their geodesic
    near = coords[M.norm_last(coords) < 10 * sigma]
    u, u_e = SP.spd_log(m_d, m_e), SP.spd_log(m_e, m_d)
    beyond = np.stack([SP.spd_exp(m_d, -s * u) for s in (1e-3, 0.5, 2.0)]
                      + [SP.spd_exp(m_e, -s * u_e) for s in (1e-3, 0.5, 2.0)])
    pts = np.vstack([SP.spd_chart(near, m_d), SP.spd_chart(near, m_e), beyond])
    stat = (SP.spd_dist(pts, m_e) - SP.spd_dist(pts, m_d)) / sigma + log_c_e - log_c_d
    sup = float(np.max(np.abs(stat)))
    assert float(SP.spd_dist(m_d, m_e)) <= 2 * RADIUS / n * (1 + 1e-9)
    assert shift >= 0.99  # the flat of commuting matrices attains the bound
    return Exact(f"SPD(2) Laplace (unrestricted) n={n} (sup d(m_D, m_D')/Δ = {shift:.4f})",
                 sup, EPS, tol, slack=1e-9)


@pytest.mark.parametrize("n", [2, 10])
def test_laplace_normalizer_does_not_depend_on_the_mean(n):
    """Both densities integrated on one grid at the public centre P₀ (the real distance, kinks
    off-centre) give the closed-form normalizer: the homogeneity behind σ = Δ/ε."""
    d_set, e_set, _ = laplace_pair(n)
    sigma = laplace_sigma(n)
    radius = RADIUS + 30 * sigma
    exact = SP.spd_laplace_log_normalizer(sigma)
    out = []
    grids = [(chart(c), w) for c, w in (ball_grid(radius, n_rho, n_theta, 2 * n_theta)  # once
                                        for n_rho, n_theta in ((96, 48), (48, 24)))]
    for m in (SP.spd_frechet_mean(d_set), SP.spd_frechet_mean(e_set), P0):
        vals = [O.log_integral(-SP.spd_dist(m, pts) / sigma, w) for pts, w in grids]
        out.append((vals[0] - exact, abs(vals[0] - vals[1])))
    print(f"\nSPD(2) Laplace normalizer on a grid at P₀ (n={n}), minus the closed form: "
          + ", ".join(f"{err:+.1e} (halving {t:.0e})" for err, t in out))
    for err, t in out:
        assert abs(err) <= 2 * t + 1e-6
        assert abs(err) < 1e-3


def _laplace_blackbox_data():
    d_set, e_set, _ = laplace_pair(10)
    d_raw, d_set = raw_far(d_set, RADIUS)
    e_raw, e_set = raw_far(e_set, RADIUS)
    assert (SP.spd_dist(d_raw[-1], P0) > RADIUS) or (SP.spd_dist(e_raw[-1], P0) > RADIUS)
    return d_set, e_set, d_raw, e_raw


def _laplace_grid_and_thresholds(m_d, m_e, sigma, alpha):
    coords, w, log_c = centred_laplace(m_d, sigma, 64, 24)
    z = SP.spd_chart(coords, m_d)
    lf_d = -M.norm_last(coords) / sigma - log_c
    lf_e = -SP.spd_dist(m_e, z) / sigma - log_c  # same normalizer (checked above)
    return (coords, w, z, lf_d), O.event_thresholds(lf_d - lf_e, lf_d, lf_e, w, N_DRAWS, alpha)


def _laplace_distinguisher():
    d_set, e_set, d_raw, e_raw = _laplace_blackbox_data()
    sigma = laplace_sigma(10)
    m_d, m_e = SP.spd_frechet_mean(d_set), SP.spd_frechet_mean(e_set)
    _, thresholds = _laplace_grid_and_thresholds(m_d, m_e, sigma, ALPHA_EACH)

    def draw():
        kw = dict(epsilon=EPS, mechanism="laplace", radius=RADIUS, center=P0_MATRIX,
                  total=N_DRAWS)
        z_d, delta_d, rel = frechet_draws(SPD2, lib(d_raw), seed=SEED, **kw)
        z_e, delta_e, _ = frechet_draws(SPD2, lib(e_raw), seed=SEED + 10_000, **kw)
        assert delta_d == delta_e == 0.0 and rel.diagnostics["exact"]
        assert rel.guarantee == "private"
        rho, cdf = SP.spd_radial_cdf_table(sigma, _truncation(sigma))
        edges = np.interp(np.linspace(0, 1, 9), cdf, rho)
        edges[-1] = np.inf
        probs = SP.spd_laplace_cell_probs(sigma, np.append(edges[:-1], _truncation(sigma)))
        pvalues = []
        for draws, m in ((z_d, m_d), (z_e, m_e)):
            z = SP.from_matrix(draws)
            r = SP.spd_dist(m, z)
            radial = stats.kstest(r, lambda x: np.interp(x, rho, cdf)).pvalue
            cells = (np.searchsorted(edges, r, side="right") - 1) * 4 + sectors_at(m, z)
            pvalues += [radial, O.chi_square_pvalue(cells, probs.ravel())]
        stat = lambda z: (SP.spd_dist(m_e, z) - SP.spd_dist(m_d, z)) / sigma
        return Draws(stat(SP.from_matrix(z_d)), stat(SP.from_matrix(z_e)), delta_d,
                     tuple(pvalues))

    return Distinguisher("SPD(2) Laplace black box (n=10)", thresholds, draw, EPS)


def _laplace_broken():
    """SPD(2) Laplace with σ = Δ/(4ε), sampled exactly by the audit."""
    d_set, e_set, _, _ = _laplace_blackbox_data()
    sigma = laplace_sigma(10) / 4
    m_d, m_e = SP.spd_frechet_mean(d_set), SP.spd_frechet_mean(e_set)
    _, thresholds = _laplace_grid_and_thresholds(m_d, m_e, sigma, ALPHA_EACH)

    def draw():
        rng = np.random.default_rng(SEED)
        stat = lambda z: (SP.spd_dist(m_e, z) - SP.spd_dist(m_d, z)) / sigma
        return Draws(stat(SP.spd_sample_laplace(m_d, sigma, N_DRAWS, rng)),
                     stat(SP.spd_sample_laplace(m_e, sigma, N_DRAWS, rng)))

    return Distinguisher("SPD(2) Laplace, σ/4 (power)", thresholds, draw, EPS)


class TestSPDLaplace(MechanismAuditContract):
    cases = [(2,), (3,), (10,), (40,)]
    exact, distinguisher, broken = _laplace_exact, _laplace_distinguisher, _laplace_broken


# ============================================================================ restricted Laplace
BIG_RADIUS = 1.5
#: (n, ε) with Δ/ε ≥ √2, where the library restricts the support: Δ = 2 r/n, r = 1.5.
RESTRICTED_CASES = [(2, 1.0), (3, 0.7), (10, 0.2)]


def restricted_sigma(n, eps):
    return 2 * (2 * BIG_RADIUS / n) / eps


class RestrictedLaplaceOracle:
    """f ∝ exp(−d(m, z)/σ) on B_1.5(P₀), normalized on a ball grid at P₀."""

    def __init__(self, m_d, m_e, sigma, n_rho, n_theta):
        self.m = {"D": m_d, "E": m_e}
        self.sigma = sigma
        self.coords, self.weights = ball_grid(BIG_RADIUS, n_rho, n_theta, 2 * n_theta)
        self.points = chart(self.coords)
        self.log_c = {w: O.log_integral(-SP.spd_dist(self.m[w], self.points) / sigma,
                                        self.weights) for w in "DE"}

    def log_f(self, z, which="D"):
        return -SP.spd_dist(self.m[which], z) / self.sigma - self.log_c[which]

    def stat(self, z):
        return self.log_f(z, "D") - self.log_f(z, "E")

    def grid_log_f(self, which="D"):
        return self.log_f(self.points, which)

    def thresholds(self, alpha):
        lf_d, lf_e = self.grid_log_f("D"), self.grid_log_f("E")
        return O.event_thresholds(lf_d - lf_e, lf_d, lf_e, self.weights, N_DRAWS, alpha)

    def sup_abs_stat(self, rng):
        s = self.stat(self.points)
        best = float(np.max(np.abs(s)))
        for sign in (1.0, -1.0):
            c0 = self.coords[np.argsort(-sign * s)[:8]]

            def objective(c, sign=sign):
                inside = M.norm_last(c) <= BIG_RADIUS
                val = sign * self.stat(chart(np.where(inside[:, None], c, 0.0)))
                return np.where(inside, val, -np.inf)

            _, f = O.local_search(objective, c0, rng, steps=60, scale=0.03)
            best = max(best, float(f.max()))
        return best


@functools.cache
def restricted_pair(n, eps):
    """(D, D′): one cluster of n − 1 shared points, the replaced point and its replacement,
    searched for the largest coarse-grid sup |log f_D − log f_D′|."""
    rng = np.random.default_rng(SEED + 300 + n)
    sigma = restricted_sigma(n, eps)
    coords, w = ball_grid(BIG_RADIUS, 8, 6, 12)
    pts = chart(coords)
    pt = lambda a: ball_pt(a, BIG_RADIUS)

    def log_f(data):
        m = SP.spd_frechet_mean(data)
        lf = -SP.spd_dist(m[:, None], pts[None]) / sigma
        top = lf.max(axis=1, keepdims=True)
        return lf - (top + np.log(np.sum(w * np.exp(lf - top), axis=1, keepdims=True)))

    def build(a):
        shared = np.repeat(pt(a[:, :3])[:, None], n - 1, axis=1)
        return (np.concatenate([shared, pt(a[:, 3:6])[:, None]], axis=1),
                np.concatenate([shared, pt(a[:, 6:])[:, None]], axis=1))

    objective = lambda a: np.max(np.abs(log_f(build(a)[0]) - log_f(build(a)[1])), axis=1)
    x, f = O.local_search(objective, rng.normal(scale=2.0, size=(30, 9)), rng, steps=60)
    d_set, e_set = build(x[int(np.argmax(f))][None])
    return d_set[0], e_set[0]


def _restricted_exact(n, eps):
    d_set, e_set = restricted_pair(n, eps)
    rel = private_frechet_mean(SPD2, lib(d_set), epsilon=eps, mechanism="laplace",
                               radius=BIG_RADIUS, center=P0_MATRIX, rng=SEED)
    sigma = restricted_sigma(n, eps)
    assert (2 * BIG_RADIUS / n) / eps >= np.sqrt(2)  # σ = Δ/ε would not be integrable
    sigma = released_sigma(rel, sigma)
    assert any("restricted" in c for c in rel.caveats)
    m_d, m_e = SP.spd_frechet_mean(d_set), SP.spd_frechet_mean(e_set)
    fine = RestrictedLaplaceOracle(m_d, m_e, sigma, 40, 20)
    half = RestrictedLaplaceOracle(m_d, m_e, sigma, 20, 10)
    tol = sum(abs(fine.log_c[w] - half.log_c[w]) for w in "DE")
    sup = fine.sup_abs_stat(np.random.default_rng(SEED))
    return Exact(f"SPD(2) Laplace (restricted to B_1.5) n={n}, ε={eps} (d(m_D, m_D')/Δ = "
                 f"{SP.spd_dist(m_d, m_e) / (2 * BIG_RADIUS / n):.3f})", sup, eps, tol,
                 tol_cap=1e-3 * eps)


def _restricted_blackbox_data():
    d_set, e_set = restricted_pair(2, 1.0)
    d_raw, d_set = raw_far(d_set, BIG_RADIUS, far=5.0)
    e_raw, e_set = raw_far(e_set, BIG_RADIUS, far=5.0)
    return d_set, e_set, d_raw, e_raw


def _restricted_distinguisher():
    d_set, e_set, d_raw, e_raw = _restricted_blackbox_data()
    sigma = restricted_sigma(2, 1.0)
    oracle = RestrictedLaplaceOracle(SP.spd_frechet_mean(d_set), SP.spd_frechet_mean(e_set),
                                     sigma, 40, 20)

    def draw():
        kw = dict(epsilon=1.0, mechanism="laplace", radius=BIG_RADIUS, center=P0_MATRIX,
                  total=N_DRAWS)
        z_d, delta_d, rel = frechet_draws(SPD2, lib(d_raw), seed=SEED, **kw)
        z_e, delta_e, _ = frechet_draws(SPD2, lib(e_raw), seed=SEED + 10_000, **kw)
        assert delta_d == delta_e == 0.0 and rel.diagnostics["exact"]
        released_sigma(rel, sigma)
        z_d, z_e = SP.from_matrix(z_d), SP.from_matrix(z_e)
        for z in (z_d, z_e):
            assert np.all(SP.spd_dist(P0, z) <= BIG_RADIUS + 1e-9)
        quad = M.quadrant(oracle.coords)
        pvalues = tuple(M.gof_pvalue(oracle.grid_log_f(w), oracle.weights, quad,
                                     oracle.log_f(z, w), M.quadrant(SP.spd_chart_inv(z, P0)), 4)
                        for w, z in (("D", z_d), ("E", z_e)))
        return Draws(oracle.stat(z_d), oracle.stat(z_e), delta_d, pvalues)

    return Distinguisher("SPD(2) restricted Laplace black box (n=2, ε=1)",
                         oracle.thresholds(ALPHA_EACH), draw, 1.0)


def _restricted_broken():
    """The ball-restricted Laplace with σ/4, sampled exactly by the audit."""
    d_set, e_set, _, _ = _restricted_blackbox_data()
    oracle = RestrictedLaplaceOracle(SP.spd_frechet_mean(d_set), SP.spd_frechet_mean(e_set),
                                     restricted_sigma(2, 1.0) / 4, 40, 20)

    def draw():
        rng = np.random.default_rng(SEED)
        propose = lambda k, r: chart(SP.spd_uniform_ball(BIG_RADIUS, k, r))
        z = [O.rejection_sample(propose, lambda z, w=w: -SP.spd_dist(oracle.m[w], z)
                                / oracle.sigma, N_DRAWS, rng) for w in "DE"]
        return Draws(oracle.stat(z[0]), oracle.stat(z[1]))

    return Distinguisher("SPD(2) restricted Laplace, σ/4 (power)",
                         oracle.thresholds(ALPHA_EACH), draw, 1.0)


class TestSPDRestrictedLaplace(MechanismAuditContract):
    cases = RESTRICTED_CASES
    exact, distinguisher, broken = _restricted_exact, _restricted_distinguisher, _restricted_broken


# ============================================================================ KNG
def kng_sigma(n, eps=EPS, radius=RADIUS):
    return 2 * (2 * radius / n) / eps


def kng_oracle(d_set, e_set, sigma, n_rho, radius=RADIUS):
    """KNG oracle on B_r(P₀); normalizers from star grids about each Fréchet mean (g = 0)."""
    n_theta = max(4, 2 * n_rho // 3)
    stars = {}
    for which, data in (("D", d_set), ("E", e_set)):
        apex = SP.spd_chart_inv(SP.spd_frechet_mean(data), P0)
        coords, w = M.ball3_star_grid(apex, radius, n_rho, n_theta)
        stars[which] = (coords, w * SP.spd_volume_density(coords))
    return M.KNGOracle(SP.spd_log_coords, chart, ball_grid(radius, n_rho, n_theta, 2 * n_theta),
                       radius, d_set, e_set, sigma, star_grids=stars)


def _kng_configurations(n, rng, radius):
    k = n - 1
    e1, e3 = np.array([radius, 0, 0]), np.array([0, 0, radius])
    configs = {
        "centre": np.repeat(P0[None], k, axis=0),
        "boundary cluster": np.repeat(chart(e1)[None], k, axis=0),
        "two boundary clusters": np.vstack([np.repeat(chart(e3)[None], k // 2, axis=0),
                                            np.repeat(chart(-e1)[None], k - k // 2, axis=0)]),
        "uniform": chart(SP.spd_uniform_ball(radius, k, rng)),
    }
    return {name: pts for name, pts in configs.items() if pts.shape[0] == k}


@functools.cache
def kng_pair(n, eps=EPS, radius=RADIUS):
    rng = np.random.default_rng(SEED + 400 + n)
    coords, w = ball_grid(radius, 8, 6, 12)
    _, d_set, e_set, name = M.kng_pair_search(
        SP.spd_log_coords, lambda a: ball_pt(a, radius), 3, chart(coords), w,
        _kng_configurations(n, rng, radius), n, kng_sigma(n, eps, radius), rng, starts=30,
        steps=50)
    return d_set, e_set, name


#: (n, ε, r): r = 3 makes the volume density matter (J up to sinh(2.1)/2.1 ≈ 2 on the ball).
KNG_CASES = [(2, EPS, RADIUS), (5, EPS, RADIUS), (10, EPS, RADIUS), (40, EPS, RADIUS),
             (40, 3.0, RADIUS), (10, EPS, 3.0), (10, 0.3, 3.0)]


def _kng_exact(n, eps, radius):
    d_set, e_set, name = kng_pair(n, eps, radius)
    rel = private_frechet_mean(SPD2, lib(d_set), epsilon=eps, mechanism="kng", radius=radius,
                               center=P0_MATRIX, rng=SEED, **record_only(private_frechet_mean))
    sigma = released_sigma(rel, kng_sigma(n, eps, radius))
    assert rel.sensitivity["gradient"] == pytest.approx(2 * radius / n, rel=1e-12)
    fine = kng_oracle(d_set, e_set, sigma, 30, radius)
    half = kng_oracle(d_set, e_set, sigma, 15, radius)
    tol = sum(abs(fine.log_c[w] - half.log_c[w]) for w in "DE")
    sup = fine.sup_abs_stat(np.random.default_rng(SEED))
    pointwise = float(np.max(np.abs(fine.g_grid["D"] - fine.g_grid["E"])))
    return Exact(f"SPD(2) KNG r={radius}, n={n}, ε={eps} ({name})", sup, eps, tol,
                 tol_cap=5e-3 * eps, pointwise=pointwise, delta=2 * radius / n, rtol=1e-9)


def _kng_blackbox_data():
    d_set, e_set, _ = kng_pair(10)
    d_raw, d_set = raw_far(d_set, RADIUS)
    e_raw, e_set = raw_far(e_set, RADIUS)
    return d_set, e_set, d_raw, e_raw


def _kng_gof(oracle, which, z):
    return M.gof_pvalue(oracle.grid_log_f(which), oracle.weights, M.quadrant(oracle.coords),
                        oracle.log_f(z, which), M.quadrant(SP.spd_chart_inv(z, P0)), 4)


def _kng_distinguisher():
    d_set, e_set, d_raw, e_raw = _kng_blackbox_data()
    oracle = kng_oracle(d_set, e_set, kng_sigma(10), 30)

    def draw():
        kw = dict(epsilon=EPS, mechanism="kng", radius=RADIUS, center=P0_MATRIX,
                  total=N_DRAWS, sampler="exact")
        z_d, delta_d, rel = frechet_draws(SPD2, lib(d_raw), seed=SEED, **kw)
        z_e, delta_e, _ = frechet_draws(SPD2, lib(e_raw), seed=SEED + 10_000, **kw)
        assert delta_d == delta_e == 0.0 and rel.diagnostics["exact"]
        assert rel.sigma["mean"] == pytest.approx(oracle.sigma, rel=1e-12)
        z_d, z_e = SP.from_matrix(z_d), SP.from_matrix(z_e)
        for z in (z_d, z_e):
            assert np.all(SP.spd_dist(P0, z) <= RADIUS + 1e-9)
        pvalues = (_kng_gof(oracle, "D", z_d), _kng_gof(oracle, "E", z_e))
        return Draws(oracle.stat(z_d), oracle.stat(z_e), delta_d, pvalues)

    return Distinguisher("SPD(2) KNG black box (n=10)", oracle.thresholds(N_DRAWS, ALPHA_EACH),
                         draw, EPS)


def _kng_broken():
    """SPD(2) KNG with σ = Δ_g/(2ε) (4× too little noise), sampled by the audit."""
    d_set, e_set, _, _ = _kng_blackbox_data()
    oracle = kng_oracle(d_set, e_set, kng_sigma(10) / 4, 30)

    def draw():
        rng = np.random.default_rng(SEED)
        propose = lambda k, r: chart(SP.spd_uniform_ball(RADIUS, k, r))
        z = [O.rejection_sample(propose, lambda z, w=w: -oracle.g(z, w) / oracle.sigma,
                                N_DRAWS, rng) for w in "DE"]
        return Draws(oracle.stat(z[0]), oracle.stat(z[1]))

    return Distinguisher("SPD(2) KNG, σ/4 (power)", oracle.thresholds(N_DRAWS, ALPHA_EACH), draw,
                         EPS)


class TestSPDKNG(MechanismAuditContract):
    cases = KNG_CASES
    exact, distinguisher, broken = _kng_exact, _kng_distinguisher, _kng_broken


@pytest.mark.statistical
def test_kng_goodness_of_fit_has_power():
    """The χ² check notices a factor 2 in σ: the library's paper-mode draws (σ = Δ_g/ε,
    labelled not private) are rejected against the strict oracle."""
    d_set, e_set, _, _ = _kng_blackbox_data()
    oracle = kng_oracle(d_set, e_set, kng_sigma(10), 30)
    with pytest.warns(Warning, match="[Pp]aper mode"):
        z, _, rel = frechet_draws(SPD2, lib(d_set), epsilon=EPS, mechanism="kng", radius=RADIUS,
                                  center=P0_MATRIX, total=N_DRAWS, seed=SEED, mode="paper",
                                  sampler="exact")
    assert not rel.private
    assert rel.sigma["mean"] == pytest.approx(oracle.sigma / 2, rel=1e-12)
    pvalue = _kng_gof(oracle, "D", SP.from_matrix(z))
    print(f"\nSPD(2) KNG χ² against the strict oracle, paper-mode draws: p = {pvalue:.2e}")
    assert pvalue < GOF_ALPHA


def _j_cdf(oracle, which="D"):
    """CDF of J at the chart coordinates of Z ~ f (from the oracle's grid) as a function."""
    p = oracle.weights * np.exp(oracle.grid_log_f(which))
    j = SP.spd_volume_density(oracle.coords)
    order = np.argsort(j)
    cdf = np.cumsum(p[order]) / p.sum()
    return lambda x: np.interp(x, j[order], cdf, left=0.0, right=1.0)


@pytest.mark.statistical
def test_kng_goodness_of_fit_on_a_large_ball():
    """On B_3(P₀) with ε = 0.3 (a broad target) the volume density J ranges over [1, 2]: the
    library's exact draws follow the oracle (χ² over levels × quadrants, and KS on J(Z)), while
    draws that ignore J (the audit's own, uniform in the chart instead of the volume) are
    rejected by the KS test on J(Z)."""
    radius, eps = 3.0, 0.3
    d_set, e_set, _ = kng_pair(10, eps, radius)
    oracle = kng_oracle(d_set, e_set, kng_sigma(10, eps, radius), 30, radius)
    d_raw, _ = raw_far(d_set, radius, far=8.0)
    z, delta, rel = frechet_draws(SPD2, lib(d_raw), epsilon=eps, mechanism="kng", radius=radius,
                                  center=P0_MATRIX, total=N_DRAWS, seed=SEED, sampler="exact")
    assert delta == 0.0 and rel.diagnostics["exact"]
    z = SP.from_matrix(z)
    j_of = lambda x: SP.spd_volume_density(SP.spd_chart_inv(x, P0))
    chi2 = _kng_gof(oracle, "D", z)
    ks_j = stats.kstest(j_of(z), _j_cdf(oracle)).pvalue
    rng = np.random.default_rng(SEED)

    def flat_ball(k, r):  # uniform in the chart (Lebesgue), not in the volume
        return chart(O.uniform_sphere(k, r) * radius * r.uniform(size=(k, 1)) ** (1 / 3))

    no_j = O.rejection_sample(flat_ball, lambda x: -oracle.g(x, "D") / oracle.sigma, N_DRAWS,
                              rng)
    ks_no_j = stats.kstest(j_of(no_j), _j_cdf(oracle)).pvalue
    print(f"\nSPD(2) KNG on B_3, ε = 0.3: library χ² p = {chi2:.3f}, KS on J p = {ks_j:.3f}; "
          f"draws without J: KS on J p = {ks_no_j:.1e}")
    assert min(chi2, ks_j) > GOF_ALPHA
    assert ks_no_j < GOF_ALPHA


def test_laplace_heavy_tail_draws_are_spd():
    """Strict Laplace with n = 2, r = 0.5, ε = 0.4: σ = Δ/ε = 1.25 is within the whole-space
    integrability limit (1/σ > 1/√2) but its tail is too heavy for float64 (the audit found
    non-SPD "means" there). The library now keeps the whole space only for 1/σ ≥ √2 and
    otherwise restricts to the public ball with σ = 2Δ/ε: every released mean is a point of
    SPD(2) inside the ball."""
    y = SP.to_matrix(ball_pt(np.array([[0.3, -0.2, 0.1], [-1.0, 0.4, 0.2]])))
    rel = private_frechet_mean(SPD2, y, epsilon=0.4, mechanism="laplace", radius=RADIUS,
                               center=P0_MATRIX, rng=SEED, n_draws=400)
    assert rel.guarantee == "private" and rel.sigma["mean"] == pytest.approx(2 * 1.25)
    assert any("Support restricted" in c for c in rel.caveats)
    values = np.asarray(rel.values["mean"])
    assert np.all(np.isfinite(values))
    assert np.all(np.linalg.eigvalsh(values)[:, 0] > 0)
    assert np.all(SPD2.dist(values, P0_MATRIX) <= RADIUS + 1e-9)
