r"""Privacy audit of the strict mechanisms on Kendall's shape space of triangles (KendallShape(3)).

Σ²₃ = CP¹ is a sphere of radius ½ (curvature 4): the Hopf map Φ of
:mod:`tests.audit._manifold_oracle` sends it onto the unit sphere S² with every distance
doubled (checked there: d_{S²}(Φx, Φy) = 2 arccos |⟨x, y⟩_C|, logs, horizontal lengths, the
KNG gradient norm, the regression energy and vector gradient computed directly on preshapes).
The oracle therefore works on S² with its own sphere code (:mod:`tests.audit._oracle`) and the
scale rules derived there; the library gets and returns (3, 2) preshapes, and the data are
handed over as *rotated* representatives (random landmark rotations), which must not matter.

Public inputs: the ball B_r(c) with r = 0.3 < r* = π/8 about the triangle c with landmarks
(0, 0), (1, 0), (0.3, 0.9); strict mode projects the data onto it. Sensitivities with
κ_high = 4 (h = 4r cot 4r): Δ = 2r(2 − h)/(n h), Δ_g = 2r(2 − h)/n; regression (κ_low = 1 ≥ 0)
Δ_p = Δ_v = 2τ/n with τ = 0.1, covariate range (0, 1) (black box: (−1, 3)).

Mechanisms (records checked): Laplace mean on the whole (compact, homogeneous) space with
σ = Δ/ε — on S²: exp(−d_S/(2σ)); KNG mean on B_r(c) with σ = 2Δ_g/ε — on S²:
exp(−½ ‖(1/n) Σ Log_z y_i‖_S/σ) on B_{2r}(Φc); joint regression over (p, v), p anywhere,
‖v‖ ≤ π/2 (the diameter), σ = 2√(Δ_p² + Δ_v²)/ε — on S²: the sphere's joint KNG with
residual bound 2τ, noise 2σ and speed bound π.

(a) Exact log-density ratios on adversarial neighbours found by random-restart searches, as
    for S² (mean shift for Laplace; coarse-grid log-ratio over shared configurations and the
    replaced point for KNG; over shared configurations and the replaced observation, response
    anywhere and covariate in [0, 1], for regression). Laplace normalizers by polar quadrature
    about each mean (checked against the closed form 2π(1 + e^{−π/σ_S})/(1 + σ_S^{−2})); KNG
    normalizers on polar grids about each Fréchet mean inside the ball; regression on the
    product grid of the tangent-disk bundle. Tolerances: change of the log-normalizers when
    the grids are halved.

(b) Black box: 4000 library draws per data set (``sampler="exact"`` for KNG and regression),
    replaced boundary points given raw near the cut locus of the centre (Kendall distance
    π/2 − 10⁻³), checked against the oracle (KS on radius and angle for Laplace, χ² over
    level sets × sectors otherwise, the sector boundaries falling between the grid's
    azimuths so that the grid's bin probabilities are not biased by the discretization);
    events from the oracle before sampling, one-sided Clopper–Pearson, fail on a certified
    P_D(A) − e^ε P_D′(A) > δ. Power: the audit's own exact draws with σ/8 are caught by the
    same machinery (σ/4 is not enough here: Kendall's Δ and Δ_g are loose — the searches
    reach 0.35 Δ and 0.68 Δ_g — so σ/4 leaves a true log-ratio barely above ε).
"""

import functools

import numpy as np
import pytest
from scipy import stats

from dpcore.manifolds import KendallShape
from dpcore.release import private_frechet_mean, private_geodesic_regression

from . import _manifold_oracle as M
from . import _oracle as O
from . import _oracle_regression as RG
from . import _regression_mc as R
from ._draws import record_only
from ._manifold_draws import ALPHA_EACH, N_DRAWS, frechet_draws, regression_draws
from ._released import released_sigma
from .contract import Distinguisher, Draws, Exact, MechanismAuditContract

K3 = KendallShape(3)
RADIUS = 0.3  # Kendall units; 0.6 on the unit sphere
RADIUS_S = 2 * RADIUS
EPS = 1.0
SEED = 3_141
CENTER_LANDMARKS = np.array([[0.0, 0.0], [1.0, 0.0], [0.3, 0.9]])
CENTER = K3.from_landmarks(CENTER_LANDMARKS)
CENTER_S = M.kendall_to_s2(CENTER)
E1, E2 = O.tangent_frame(CENTER_S)


def h_factor():
    return 4 * RADIUS / np.tan(4 * RADIUS)  # 2 r √κ cot(2 r √κ), κ = 4


def delta_mean(n):
    h = h_factor()
    return 2 * RADIUS * (2 - h) / (n * h)


def delta_gradient(n):
    return 2 * RADIUS * (2 - h_factor()) / n


def chart(c):
    """Normal coordinates (unit-sphere units) at Φ(centre) → points of S²."""
    c = np.asarray(c, dtype=float)
    return O.exp(np.broadcast_to(CENTER_S, c.shape[:-1] + (3,)),
                 c[..., 0:1] * E1 + c[..., 1:2] * E2)


def chart_inv(z):
    v = O.log(np.broadcast_to(CENTER_S, np.shape(z)), z)
    return np.stack([O.dot(v, E1), O.dot(v, E2)], axis=-1)


def area_weights(coords, w):
    """Lebesgue weights in the chart → area weights on S² (density sin ρ/ρ)."""
    return w * np.sinc(M.norm_last(coords) / np.pi)


def ball_pt(a, radius=RADIUS_S):
    return O.ball_point(a, CENTER_S, radius)


def to_library(points_s, rng):
    """Points of S² → preshapes, each as a randomly rotated representative."""
    pre = M.s2_to_kendall(points_s)
    z = (pre[..., 0] + 1j * pre[..., 1]) * np.exp(1j * rng.uniform(0, 2 * np.pi,
                                                                  pre.shape[:-2]))[..., None]
    return np.stack([z.real, z.imag], axis=-1)


def raw_far(points_s, radius=RADIUS_S):
    """Boundary points replaced by raw points on the same geodesic from the centre at unit-sphere
    distance π − 2·10⁻³ (Kendall π/2 − 10⁻³); returns (raw, projected), on S²."""
    points_s = np.array(points_s, dtype=float)
    raw = points_s.copy()
    d = O.dist(points_s, CENTER_S)
    edge = d > radius - 1e-3
    u = O.normalize(O.log(np.broadcast_to(CENTER_S, points_s.shape), points_s)[edge])
    raw[edge] = O.exp(np.broadcast_to(CENTER_S, u.shape), (np.pi - 2e-3) * u)
    return raw, O.project_ball(raw, CENTER_S, radius)


def test_centre_and_sensitivity_records():
    """The library's radius limit is π/8 (κ = 4, inj π/2) and its Δ, Δ_g are the oracle's."""
    rng = np.random.default_rng(SEED)
    y = to_library(O.uniform_ball(CENTER_S, RADIUS_S, 7, rng), rng)
    lap = private_frechet_mean(K3, y, epsilon=EPS, mechanism="laplace", radius=RADIUS,
                               center=CENTER, rng=SEED)
    assert lap.sensitivity["mean"] == pytest.approx(delta_mean(7), rel=1e-12)
    assert lap.sigma["mean"] == pytest.approx(delta_mean(7) / EPS, rel=1e-12)
    kng = private_frechet_mean(K3, y, epsilon=EPS, mechanism="kng", radius=RADIUS,
                               center=CENTER, rng=SEED, **record_only(private_frechet_mean))
    assert kng.sensitivity["gradient"] == pytest.approx(delta_gradient(7), rel=1e-12)
    with pytest.raises(ValueError):
        private_frechet_mean(K3, y, epsilon=EPS, radius=np.pi / 8 + 1e-3, center=CENTER, rng=1)


# ============================================================================ Laplace
def laplace_sigma_s(n, eps=EPS):
    """σ on the unit sphere: 2 Δ/ε (Kendall's d is half the sphere's)."""
    return 2 * delta_mean(n) / eps


@functools.cache
def laplace_pair(n):
    rng = np.random.default_rng(SEED + n)
    ratio, d, e = M.mean_shift_search(ball_pt, 2, O.frechet_mean_batch, O.dist, n,
                                      2 * delta_mean(n), rng, steps=100, starts=60)
    return d, e, ratio


def _centred_log_c(m, sigma_s, n_rho):
    grid = O.ball_grid(m, np.pi, n_rho)
    return O.log_integral(-O.dist(grid.points, m) / sigma_s, grid.weights), grid.points


def _laplace_exact(n):
    d_set, e_set, shift = laplace_pair(n)
    rng = np.random.default_rng(SEED)
    rel = private_frechet_mean(K3, to_library(d_set, rng), epsilon=EPS, mechanism="laplace",
                               radius=RADIUS, center=CENTER, rng=SEED)
    sigma_s = laplace_sigma_s(n)
    assert rel.sigma["mean"] == pytest.approx(sigma_s / 2, rel=1e-12)
    m_d, m_e = O.frechet_mean(d_set), O.frechet_mean(e_set)
    log_c_d, pts_d = _centred_log_c(m_d, sigma_s, 120)
    log_c_e, pts_e = _centred_log_c(m_e, sigma_s, 120)
    half, _ = _centred_log_c(m_d, sigma_s, 60)
    tol = 2 * abs(log_c_d - half) + 1e-12
    exact = O.laplace_log_normalizer(sigma_s)
    assert abs(log_c_d - exact) < 1e-9 and abs(log_c_e - exact) < 1e-9
    u = O.normalize(O.log(m_d, m_e))
    extra = np.stack([O.exp(m_d, -0.05 * u), O.exp(m_e, 0.05 * O.transport(m_d, m_e, u))])
    pts = np.vstack([pts_d, pts_e, extra])
    stat = (O.dist(pts, m_e) - O.dist(pts, m_d)) / sigma_s + log_c_e - log_c_d
    sup = float(np.max(np.abs(stat)))
    h = h_factor()
    assert O.dist(m_d, m_e) / 2 <= delta_mean(n) * (1 + 1e-9)
    assert shift >= 0.95 * h / (2 - h)  # the search finds at least the flat shift
    return Exact(f"Kendall Laplace n={n} (sup d(m_D, m_D')/Δ = {shift:.4f})", sup, EPS, tol)


def _laplace_blackbox_data():
    d_set, e_set, _ = laplace_pair(10)
    d_raw, d_set = raw_far(d_set)
    e_raw, e_set = raw_far(e_set)
    return d_set, e_set, d_raw, e_raw


def _laplace_thresholds(m_d, m_e, sigma_s):
    grid = O.sphere_grid(200)
    lf_d, lf_e = -O.dist(grid.points, m_d) / sigma_s, -O.dist(grid.points, m_e) / sigma_s
    return O.event_thresholds(lf_d - lf_e, lf_d, lf_e, grid.weights, N_DRAWS, ALPHA_EACH)


def _laplace_distinguisher():
    d_set, e_set, d_raw, e_raw = _laplace_blackbox_data()
    sigma_s = laplace_sigma_s(10)
    m_d, m_e = O.frechet_mean(d_set), O.frechet_mean(e_set)

    def draw():
        """KS of the radius d(m, Z) and of the angle at m."""
        rng = np.random.default_rng(SEED)
        kw = dict(epsilon=EPS, mechanism="laplace", radius=RADIUS, center=CENTER,
                  total=N_DRAWS)
        z_d, delta_d, rel = frechet_draws(K3, to_library(d_raw, rng), seed=SEED, **kw)
        z_e, delta_e, _ = frechet_draws(K3, to_library(e_raw, rng), seed=SEED + 10_000, **kw)
        assert delta_d == delta_e == 0.0 and rel.diagnostics["exact"]
        assert rel.guarantee == "private"
        z_d, z_e = M.kendall_to_s2(z_d), M.kendall_to_s2(z_e)
        pvalues = []
        for z, m in ((z_d, m_d), (z_e, m_e)):
            e1, e2 = O.tangent_frame(m)
            v = O.log(m, z)
            angle = np.mod(np.arctan2(O.dot(v, e2), O.dot(v, e1)), 2 * np.pi)
            pvalues += [stats.kstest(O.dist(z, m),
                                     lambda r: O.laplace_radial_cdf(r, sigma_s)).pvalue,
                        stats.kstest(angle, stats.uniform(0, 2 * np.pi).cdf).pvalue]
        stat = lambda z: (O.dist(z, m_e) - O.dist(z, m_d)) / sigma_s
        return Draws(stat(z_d), stat(z_e), delta_d, tuple(pvalues))

    return Distinguisher("Kendall Laplace black box (n=10)",
                         _laplace_thresholds(m_d, m_e, sigma_s), draw, EPS)


def _laplace_broken():
    """Kendall Laplace with σ = Δ/(8ε), sampled exactly by the audit. (Δ is loose here — the
    largest mean shift found is 0.35 Δ — so σ/4 would leave a true sup log-ratio of only
    1.4 ε.)"""
    d_set, e_set, _, _ = _laplace_blackbox_data()
    sigma_s = laplace_sigma_s(10) / 8
    m_d, m_e = O.frechet_mean(d_set), O.frechet_mean(e_set)

    def draw():
        rng = np.random.default_rng(SEED)
        stat = lambda z: (O.dist(z, m_e) - O.dist(z, m_d)) / sigma_s
        return Draws(stat(O.sample_laplace(m_d, sigma_s, N_DRAWS, rng)),
                     stat(O.sample_laplace(m_e, sigma_s, N_DRAWS, rng)))

    return Distinguisher("Kendall Laplace, σ/8 (power)", _laplace_thresholds(m_d, m_e, sigma_s),
                         draw, EPS)


class TestKendallLaplace(MechanismAuditContract):
    cases = [(2,), (3,), (5,), (10,), (40,)]
    exact, distinguisher, broken = _laplace_exact, _laplace_distinguisher, _laplace_broken


# ============================================================================ KNG
def kng_sigma(n, eps=EPS):
    """Kendall σ = 2Δ_g/ε; the oracle scales the sphere's gradient norm by ½ instead."""
    return 2 * delta_gradient(n) / eps


def kng_oracle(d_set, e_set, sigma, n_rho):
    stars = {}
    for which, data in (("D", d_set), ("E", e_set)):
        coords, w = M.disk_star_grid(chart_inv(O.frechet_mean(data)), RADIUS_S, n_rho // 2,
                                     n_rho)
        stars[which] = (coords, area_weights(coords, w))
    coords, w = O.disk_grid(RADIUS_S, n_rho)
    return M.KNGOracle(O.log, chart, (coords, area_weights(coords, w)), RADIUS_S, d_set,
                       e_set, sigma, scale=0.5, star_grids=stars)


def _kng_configurations(n, rng):
    k = n - 1
    b, opp = chart([RADIUS_S, 0.0]), chart([-RADIUS_S, 0.0])
    configs = {
        "centre": np.repeat(CENTER_S[None], k, axis=0),
        "boundary cluster": np.repeat(b[None], k, axis=0),
        "two boundary clusters": np.vstack([np.repeat(b[None], k // 2, axis=0),
                                            np.repeat(opp[None], k - k // 2, axis=0)]),
        "uniform": O.uniform_ball(CENTER_S, RADIUS_S, k, rng),
    }
    return {name: pts for name, pts in configs.items() if pts.shape[0] == k}


@functools.cache
def kng_pair(n, eps=EPS):
    rng = np.random.default_rng(SEED + 500 + n)
    coords, w = O.disk_grid(RADIUS_S, 24)
    # the search uses the unscaled sphere gradient norm, hence σ_S = 2σ
    _, d_set, e_set, name = M.kng_pair_search(O.log, ball_pt, 2, chart(coords),
                                              area_weights(coords, w),
                                              _kng_configurations(n, rng), n,
                                              2 * kng_sigma(n, eps), rng, starts=40, steps=60)
    return d_set, e_set, name


def _kng_exact(n, eps):
    d_set, e_set, name = kng_pair(n, eps)
    rng = np.random.default_rng(SEED)
    rel = private_frechet_mean(K3, to_library(d_set, rng), epsilon=eps, mechanism="kng",
                               radius=RADIUS, center=CENTER, rng=SEED,
                               **record_only(private_frechet_mean))
    sigma = kng_sigma(n, eps)
    sigma = released_sigma(rel, sigma)
    fine, half = kng_oracle(d_set, e_set, sigma, 160), kng_oracle(d_set, e_set, sigma, 80)
    tol = sum(abs(fine.log_c[w] - half.log_c[w]) for w in "DE")
    sup = fine.sup_abs_stat(np.random.default_rng(SEED))
    pointwise = float(np.max(np.abs(fine.g_grid["D"] - fine.g_grid["E"])))
    return Exact(f"Kendall KNG n={n}, ε={eps} ({name})", sup, eps, tol, tol_cap=1e-3 * eps,
                 pointwise=pointwise, delta=delta_gradient(n), rtol=1e-9)


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
        rng = np.random.default_rng(SEED)
        kw = dict(epsilon=EPS, mechanism="kng", radius=RADIUS, center=CENTER, total=N_DRAWS,
                  sampler="exact")
        z_d, delta_d, rel = frechet_draws(K3, to_library(d_raw, rng), seed=SEED, **kw)
        z_e, delta_e, _ = frechet_draws(K3, to_library(e_raw, rng), seed=SEED + 10_000, **kw)
        assert delta_d == delta_e == 0.0 and rel.diagnostics["exact"]
        assert rel.sigma["mean"] == pytest.approx(oracle.sigma, rel=1e-12)
        z_d, z_e = M.kendall_to_s2(z_d), M.kendall_to_s2(z_e)
        for z in (z_d, z_e):
            assert np.all(O.dist(z, CENTER_S) <= RADIUS_S + 1e-9)
        pvalues = (_kng_gof(oracle, "D", z_d), _kng_gof(oracle, "E", z_e))
        return Draws(oracle.stat(z_d), oracle.stat(z_e), delta_d, pvalues)

    return Distinguisher("Kendall KNG black box (n=10)", oracle.thresholds(N_DRAWS, ALPHA_EACH),
                         draw, EPS)


def _kng_broken():
    """Kendall KNG with σ/8 (σ = Δ_g/(4ε)), sampled by the audit."""
    d_set, e_set, _, _ = _kng_blackbox_data()
    oracle = kng_oracle(d_set, e_set, kng_sigma(10) / 8, 160)

    def draw():
        rng = np.random.default_rng(SEED)
        propose = lambda k, r: O.uniform_ball(CENTER_S, RADIUS_S, k, r)
        z = [O.rejection_sample(propose, lambda z, w=w: -oracle.g(z, w) / oracle.sigma,
                                N_DRAWS, rng) for w in "DE"]
        return Draws(oracle.stat(z[0]), oracle.stat(z[1]))

    return Distinguisher("Kendall KNG, σ/8 (power)", oracle.thresholds(N_DRAWS, ALPHA_EACH),
                         draw, EPS)


class TestKendallKNG(MechanismAuditContract):
    cases = [(2, EPS), (5, EPS), (10, EPS), (40, EPS), (40, 3.0)]
    exact, distinguisher, broken = _kng_exact, _kng_distinguisher, _kng_broken


# ============================================================================ regression
TAU = 0.1  # Kendall units: residuals clipped to 0.1; 0.2 on the unit sphere
TAU_S = 2 * TAU
EPS_P = EPS_V = 0.5
MAX_SPEED_S = np.pi  # π/2 in Kendall units (the diameter)
P_REF = O.normalize(np.array([0.2, -0.3, 0.9]))


def reg_sigma(n):
    """Kendall σ = 2√(Δ_p² + Δ_v²)/ε."""
    return 2 * np.hypot(2 * TAU / n, 2 * TAU / n) / (EPS_P + EPS_V)


class RegressionOracle:
    """Kendall joint-KNG densities computed on S²: exp(−‖∇E_S^{(2τ)}‖/(2σ)) on the product grid
    of {(p, v): p ∈ S², |v| ≤ π} (area × Lebesgue; Kendall's measure is 1/16 of it)."""

    def __init__(self, d, e, sigma, n_theta, n_rho):
        self.d, self.e, self.sigma_s = d, e, 2 * sigma
        self.grid = O.bundle_grid(n_theta, n_rho, MAX_SPEED_S)
        pts, vecs, w = self.grid.points, self.grid.vectors, self.grid.weights
        # both data sets' norms at once, the shared observations' terms computed once
        self.g = dict(zip("DE", R.joint_gradient_norms(pts, vecs, (d, e), TAU_S), strict=True))
        self.log_c = {k: O.log_integral(-self.g[k] / self.sigma_s, w) for k in "DE"}

    def _log_f_of(self, g, which, v):
        out = -g / self.sigma_s - self.log_c[which]
        return np.where(O.norm(v) <= MAX_SPEED_S + 1e-12, out, -np.inf)

    def log_f(self, p, v, which="D"):
        data = self.d if which == "D" else self.e
        return self._log_f_of(RG.joint_gradient_norm(p, v, *data, TAU_S), which, v)

    def stat(self, p, v):
        """The numbers of ``log_f(p, v, "D") - log_f(p, v, "E")``."""
        g_d, g_e = R.joint_gradient_norms(p, v, (self.d, self.e), TAU_S)
        with np.errstate(invalid="ignore"):
            return self._log_f_of(g_d, "D", v) - self._log_f_of(g_e, "E", v)

    def grid_log_f(self, which="D"):
        return -self.g[which] / self.sigma_s - self.log_c[which]

    def grid_stat(self):
        return self.grid_log_f("D") - self.grid_log_f("E")

    def thresholds(self, alpha):
        return O.event_thresholds(self.grid_stat(), self.grid_log_f("D"), self.grid_log_f("E"),
                                  self.grid.weights, N_DRAWS, alpha)

    def sup_abs_stat(self, rng, n_starts=6):
        s = self.grid_stat()
        best = float(np.max(np.abs(s)))
        for sign in (1.0, -1.0):
            idx = np.argsort(-sign * s)[:n_starts]
            p0, v0 = self.grid.points[idx], self.grid.vectors[idx]
            f1, f2 = O.tangent_frame(p0)

            def objective(a, sign=sign, p0=p0, v0=v0, f1=f1, f2=f2):
                p = O.exp(p0, a[:, 0:1] * f1 + a[:, 1:2] * f2)
                v = O.transport(p0, p, v0 + a[:, 2:3] * f1 + a[:, 3:4] * f2)
                val = sign * self.stat(p, v)
                return np.where(np.isfinite(val), val, -np.inf)

            _, f = O.local_search(objective, np.zeros((n_starts, 4)), rng, steps=80, scale=0.05)
            best = max(best, float(f.max()))
        return best


def _shared_configurations(n, rng):
    k = n - 1
    t = np.linspace(0.0, 1.0, k)
    e1, _ = O.tangent_frame(P_REF)
    geo = O.exp(P_REF, t[:, None] * e1)
    return {
        "one point": (t, np.repeat(P_REF[None], k, axis=0)),
        "geodesic": (t, geo),
        "noisy geodesic": (t, O.normalize(geo + 0.15 * rng.standard_normal((k, 3)))),
        "uniform": (rng.uniform(size=k), O.uniform_sphere(k, rng)),
        "orthogonal shapes": (t, np.where((np.arange(k) % 2 == 0)[:, None], P_REF, -P_REF)),
    }


def _new_obs(a):
    return (np.clip(0.5 + 0.6 * np.tanh(a[..., 2]), 0.0, 1.0),
            O.ball_point(a[..., 0:2], P_REF, np.pi - 1e-6))


@functools.cache
def regression_pair(n):
    """((t_D, y_D), (t_D′, y_D′), name) on S², with the largest coarse-grid log-ratio found."""
    rng = np.random.default_rng(SEED + 600 + n)
    sigma_s = 2 * reg_sigma(n)
    search = RG.PairSearchGrid(O.bundle_grid(6, 5, MAX_SPEED_S), TAU_S)
    a_r = np.arctanh(1.2 * TAU_S / (np.pi - 1e-6))
    crafted = np.array([[a_r, 0, 5, -a_r, 0, 5], [0, a_r, 5, 0, -a_r, 5]])
    best = (-np.inf, None)
    for name, (t_sh, y_sh) in _shared_configurations(n, rng).items():
        shared = search.shared(t_sh, y_sh)

        def log_f(t_new, y_new, shared=shared):
            return search.log_f(shared, n, sigma_s, t_new, y_new)

        def objective(a, log_f=log_f):
            return np.max(np.abs(log_f(*_new_obs(a[:, :3])) - log_f(*_new_obs(a[:, 3:]))),
                          axis=1)

        starts = np.vstack([crafted, rng.normal(scale=2.0, size=(12, 6))])
        x, f = O.local_search(objective, starts, rng, steps=25, scale=0.5)
        i = int(np.argmax(f))
        if f[i] > best[0]:
            (t1, y1), (t2, y2) = _new_obs(x[i, :3]), _new_obs(x[i, 3:])
            best = (f[i], ((np.append(t_sh, t1), np.vstack([y_sh, y1])),
                           (np.append(t_sh, t2), np.vstack([y_sh, y2])), name))
    return best[1]


def _regression_exact(n):
    d, e, name = regression_pair(n)
    rng = np.random.default_rng(SEED)
    rel = private_geodesic_regression(K3, d[0], to_library(d[1], rng), eps_p=EPS_P,
                                      eps_v=EPS_V, tau=TAU, covariate_range=(0, 1),
                                      scheme="joint", rng=SEED,
                                      **record_only(private_geodesic_regression))
    sigma = reg_sigma(n)
    assert rel.sigma["joint"] == pytest.approx(sigma, rel=1e-12)
    assert rel.assumptions["max_speed"]["value"] == pytest.approx(np.pi / 2)
    assert "footpoint_support" not in rel.assumptions  # compact: footpoints anywhere
    fine = RegressionOracle(d, e, sigma, 12, 10)
    half = RegressionOracle(d, e, sigma, 6, 5)
    tol = sum(abs(fine.log_c[w] - half.log_c[w]) for w in "DE")
    sup = fine.sup_abs_stat(np.random.default_rng(SEED))
    delta = np.hypot(2 * TAU / n, 2 * TAU / n)
    pointwise = float(np.max(np.abs(fine.g["D"] - fine.g["E"]))) / 2  # Kendall units
    return Exact(f"Kendall joint regression n={n} ({name})", sup, EPS, tol, tol_cap=0.02 * EPS,
                 pointwise=pointwise, delta=delta, rtol=1e-9)


LO, HI = -1.0, 3.0


def _library_inputs(data, rng):
    t, y = data
    x = np.where(t >= 1.0, HI + 0.7, np.where(t <= 0.0, LO - 0.5, LO + t * (HI - LO)))
    return x, to_library(y, rng), (RG.covariate_t(x, LO, HI), y)


def _regression_oracle(factor=1.0):
    d, e, _ = regression_pair(10)
    rng = np.random.default_rng(SEED)
    x_d, y_d, d = _library_inputs(d, rng)
    x_e, y_e, e = _library_inputs(e, rng)
    return RegressionOracle(d, e, reg_sigma(10) / factor, 12, 10), (x_d, y_d), (x_e, y_e)


def _regression_sector(p, v):
    """Sign of p's first coordinate × sign of v along the first frame vector at p: the grid's
    azimuths (uniform, offset by half a step) never fall on these boundaries, so the grid's bin
    probabilities carry no boundary discretization (level sets aside)."""
    e1, _ = O.tangent_frame(p)
    return (p[..., 0] > 0).astype(int) * 2 + (O.dot(v, e1) > 0).astype(int)


def _regression_gof(oracle, which, p, v, n_levels=8):
    pts, vecs, w = oracle.grid.points, oracle.grid.vectors, oracle.grid.weights
    return M.gof_pvalue(oracle.grid_log_f(which), w, _regression_sector(pts, vecs),
                        oracle.log_f(p, v, which), _regression_sector(p, v), 4, n_levels)


def _regression_distinguisher():
    oracle, (x_d, y_d), (x_e, y_e) = _regression_oracle()

    def draw():
        kw = dict(eps_p=EPS_P, eps_v=EPS_V, tau=TAU, covariate_range=(LO, HI), total=N_DRAWS,
                  sampler="exact")
        p_d, v_d, delta_d, rel = regression_draws(K3, x_d, y_d, seed=SEED, **kw)
        p_e, v_e, delta_e, _ = regression_draws(K3, x_e, y_e, seed=SEED + 10_000, **kw)
        assert delta_d == delta_e == 0.0 and rel.diagnostics["joint"]["exact"]
        assert rel.sigma["joint"] == pytest.approx(oracle.sigma_s / 2, rel=1e-12)
        out = []
        for p, v in ((p_d, v_d), (p_e, v_e)):
            np.testing.assert_allclose(M.herm(p, v), 0, atol=1e-10)  # horizontal
            np.testing.assert_allclose(v.mean(axis=-2), 0, atol=1e-12)
            ps, vs = M.kendall_to_s2(p), M.kendall_vector_to_s2(p, v)
            assert np.all(O.norm(vs) <= MAX_SPEED_S + 1e-9)
            out.append((ps, vs))
        (ps_d, vs_d), (ps_e, vs_e) = out
        pvalues = (_regression_gof(oracle, "D", ps_d, vs_d),
                   _regression_gof(oracle, "E", ps_e, vs_e))
        return Draws(oracle.stat(ps_d, vs_d), oracle.stat(ps_e, vs_e), delta_d, pvalues)

    return Distinguisher("Kendall joint regression black box (n=10)",
                         oracle.thresholds(ALPHA_EACH), draw, EPS)


def _regression_broken():
    """Kendall joint KNG with σ/8, sampled by the audit's own rejection sampler."""
    oracle, _, _ = _regression_oracle(8.0)

    def draw():
        return Draws(*RG.oracle_draw_stats(oracle, MAX_SPEED_S, TAU_S, oracle.sigma_s, N_DRAWS,
                                           SEED))

    return Distinguisher("Kendall joint regression, σ/8 (power)", oracle.thresholds(ALPHA_EACH),
                         draw, EPS)


class TestKendallRegression(MechanismAuditContract):
    cases = [(3,), (10,), (40,)]
    exact, distinguisher, broken = _regression_exact, _regression_distinguisher, _regression_broken
