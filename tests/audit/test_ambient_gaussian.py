r"""Privacy audit of the strict ambient-Laplace and Gaussian-DP Fréchet means (DESIGN §6, §7, §12).

Mechanisms under audit (read off ``dpcore.release.frechet``; the records are checked):

* ``mechanism="ambient_laplace"`` on ``Sphere(2)`` and ``SPD(2)``: strict mode projects the data
  onto the public geodesic ball B_r(c), embeds the points isometrically in R³ (S²: the identity;
  SPD(2): [[a, c], [c, b]] ↦ (a, b, √2 c), the Frobenius norm), averages them (a_D) and releases
  ``values["ambient"]`` = a_D + σ R U, R ~ Gamma(3, 1), U uniform, i.e. density
  f_D(z) = exp(−|z − a_D|/σ)/(8πσ³) on R³, with σ = Δ/ε and Δ = 2 r_E/n, r_E the radius of a
  Euclidean ball about c holding the embedded ball: r_E = 2 sin(r/2) on S², ‖c‖_op (e^r − 1)
  on SPD(2) (derived in :mod:`tests.audit._ambient_oracle`). ``values["mean"]`` (the projection
  back onto the manifold) and ``values["left_manifold"]`` are functions of the ambient draw
  (checked on every draw), so auditing the ambient draw covers the whole release.
* ``mechanism="gaussian"`` with ``mu=µ`` on ``Euclidean(d)`` and ``Sphere(1)``: a draw from
  f_D(z) ∝ exp(−d(m_D, z)²/(2σ²)) (Riemannian volume) about the Fréchet mean m_D of the
  projected data; σ calibrated from µ and the library's Δ (R^d: Δ = 2r/n and σ = Δ/µ; S¹: the
  library uses Δ = 2r(2 − h)/(nh), h = 2r cot 2r, of paper 001 Thm 2 with κ = 1, which exceeds
  the circle's own 2r/n).

Error budget (independent of ``tests/audit/_draws.py``): each black-box certification below
(4 of them: ambient Laplace on S² and SPD(2), Gaussian on R² and S¹) fails falsely with chance
≤ ``ALPHA_EACH`` = 1e-8, shared by Bonferroni over its events, their two one-sided
Clopper–Pearson bounds and (Gaussian) its values of ε; each goodness-of-fit test fails falsely
with chance ≤ ``GOF_ALPHA`` = 1e-8 (18 on library draws, 4 oracle self-checks).

(a) Exact privacy loss on adversarial neighbours (one row replaced).
    * Ambient Laplace: the normalizer does not depend on a_D (checked by quadrature against
      8πσ³ about each mean), so log f_D(z) − log f_D′(z) = (|z − a_D′| − |z − a_D|)/σ, whose
      supremum over z is |a_D − a_D′|/σ (evaluated on spherical grids about both means and at
      the analytic maximizer). A random-restart search (one or two clusters of shared points,
      all points free for n ≤ 5; every point anywhere in the ball, the boundary reached as the
      parametrization saturates) maximizes |a_D − a_D′|; asserted: |a_D − a_D′| ≤ Δ (the
      library's stated sensitivity, equal to the audit's own 2 r_E/n) and sup loss ≤ ε. The
      search must reach the embedded diameter / n (S²: 2 sin r, exact; SPD(2): at least
      2‖c‖_op sinh r, a crafted pair), so it is not vacuous.
    * Gaussian on R^d: the two laws differ only along m_D − m_D′, so their trade-off function
      is exactly G_µ with µ = |m_D − m_D′|/σ; a search maximizes the shift (reaching 2r/n) and
      the audit asserts µ_true ≤ µ, confirming it with its own trade-off quadrature on the line.
    * Gaussian on S¹: the Fréchet mean of data in an arc of half-width r < π/3 is the mean
      angle (derived in the oracle; checked against a brute-force minimization and the
      library's ``frechet_mean``); a search maximizes the mean shift s (reaching 2r/n). The
      trade-off function of the two truncated-normal laws is computed by the oracle's own cell
      quadrature (exact cell masses, Neyman–Pearson order, log-space quantiles; tolerance =
      change with half the cells) and compared with G_µ at every breakpoint (≥ 10⁵ points)
      and on a grid of 1381 levels α ∈ [1e-9, 1 − 1e-9]:
      asserted µ_true(s) ≤ µ and, since µ_true is checked non-decreasing in s, also the
      library's own claim µ_true(Δ_lib) ≤ µ.
(b) Black box: 4000 library draws per data set (10 seeded calls of ≤ 400) for an n = 10 (R²,
    S², SPD(2)) or n = 2 (S¹) adversarial pair whose boundary points are given raw far outside
    the public ball (strict mode projects them). The draws are first checked against the
    oracle's density (Kolmogorov–Smirnov: the radius |z − a_D| against Gamma(3, σ) and the
    direction against uniform; R²: |z − m|²/σ² against χ²₂ and the angle; S¹: the signed
    offset against the truncated normal), so the exact losses of (a) are the library's.
    Events are level sets of the oracle's log-likelihood ratio, {L > c} and {L < −c}, with
    thresholds fixed from the oracle before any draw (those whose certified excess it
    anticipates to be largest). One-sided Clopper–Pearson bounds; the test fails on a
    certified P_D(A) − e^ε P_D′(A) > δ, with δ = 0 at the stated ε (ambient Laplace) or
    δ = δ_µ(ε) = Φ(−ε/µ + µ/2) − e^ε Φ(−ε/µ − µ/2) at ε ∈ {0, 0.5, 1} (Gaussian).
    Power: the same machinery, fed with the audit's own exact draws of a deliberately broken
    mechanism with σ/4 (ambient Laplace: sup loss 4 × 0.97 ε on S², 4 × 0.80 ε on SPD(2);
    Gaussian on R²: µ four times the stated one; on S¹: the pair's true µ 1.94 against the
    stated 1, four times its true 0.48), must certify a violation.

Findings recorded by this audit (no privacy violation): the ambient Laplace bound is not
attained (sup loss / ε = cos(r/2) = 0.969 on S², sinh r/(e^r − 1) = 0.803 on SPD(2) at
r = 0.5); the Gaussian is tight on R^d (µ_true = µ); on S¹ the library's Δ (paper 001 with
κ = 1) is (2 − h)/h times the circle's 2r/n (2.1 at r = 0.5, 7.3 at r = 0.7), so the true µ of
the worst neighbours is 0.2–0.48 of the stated one, while the library's own claim µ(Δ_lib) = µ
holds to 1e-8 (where Δ_lib > π, e.g. n ≤ 3 at r = 0.7, the release refuses to run).

Layout: the ambient Laplace audits and the oracle self-checks are here; the Gaussian audits
(R^d and S¹) are in ``test_ambient_gaussian_gdp.py``; the budget constants and the library's
pooled draws they share are in ``_ambient_gaussian.py``.
"""

import functools

import numpy as np
import pytest
from scipy import stats

from dpcore.manifolds import SPD, Sphere
from dpcore.release import private_frechet_mean

from . import _ambient_oracle as A
from . import _manifold_oracle as M
from . import _manifold_oracle_spd as SP
from . import _oracle as O
from ._ambient_gaussian import (
    ALPHA_EACH,
    EPS,
    GOF_ALPHA,
    N_DRAWS,
    RADIUS,
    SEED,
    ks,
    library_draws,
)
from ._released import released_sigma
from .contract import Distinguisher, Draws, Exact, MechanismAuditContract

# ============================================================================ ambient Laplace
NORTH = np.array([0.0, 0.0, 1.0])
P0 = np.array([1.5, 0.8, 0.3])  # [[1.5, 0.3], [0.3, 0.8]] (not the identity)


class SphereSpec:
    """S² ⊂ R³ with the public cap B_r(north)."""

    name = "S2"
    manifold = Sphere(2)
    k = 2
    center = NORTH
    r_e = A.sphere_ambient_radius(RADIUS)
    diameter_floor = A.sphere_cap_diameter(RADIUS)

    @staticmethod
    def pt(a):
        return O.ball_point(a, NORTH, RADIUS)

    @staticmethod
    def embed(points):
        return np.asarray(points, dtype=float)

    to_library = embed
    from_library = embed

    @staticmethod
    def raw_far(points):
        """Boundary points (within 1e-3) replaced by raw points near the antipode on the same
        geodesic ray; returns (raw, projected)."""
        points = np.array(points, dtype=float)
        raw = points.copy()
        edge = O.dist(points, NORTH) > RADIUS - 1e-3
        u = O.normalize(O.log(np.broadcast_to(NORTH, points[edge].shape), points[edge]))
        raw[edge] = O.exp(NORTH, (np.pi - 0.01) * u)
        return raw, O.project_ball(raw, NORTH, RADIUS)

    @staticmethod
    def check_postprocessing(means, ambient, left):
        np.testing.assert_allclose(means, ambient / M.norm_last(ambient)[:, None], atol=1e-12)
        np.testing.assert_array_equal(left, np.abs(M.norm_last(ambient) - 1.0) > 1e-9)


class SPDSpec:
    """SPD(2) in Frobenius coordinates with the public ball B_r(P0)."""

    name = "SPD2"
    manifold = SPD(2)
    k = 3
    center = SP.to_matrix(P0)
    r_e = A.spd_ambient_radius(P0, RADIUS)
    diameter_floor = 2.0 * A.spd_op_norm(P0) * np.sinh(RADIUS)

    @staticmethod
    def pt(a):
        return A.spd_ball_point(a, P0, RADIUS)

    @staticmethod
    def embed(points):
        return A.spd_embed(points)

    @staticmethod
    def to_library(points):
        return SP.to_matrix(points)

    @staticmethod
    def from_library(mats):
        return A.spd_embed_matrix(mats)

    @staticmethod
    def raw_far(points):
        """Boundary points replaced by raw points at distance 4 on the same geodesic ray."""
        points = np.array(points, dtype=float)
        c = SP.spd_chart_inv(points, P0)
        d = M.norm_last(c)
        raw = points.copy()
        edge = d > RADIUS - 1e-3
        raw[edge] = SP.spd_chart(c[edge] * (4.0 / d[edge])[:, None], P0)
        return raw, SP.spd_project_ball(raw, RADIUS, P0)

    @staticmethod
    def check_postprocessing(means, ambient, left):
        w, v = np.linalg.eigh(ambient)
        pd = w[:, 0] > 0
        np.testing.assert_array_equal(left, ~pd)
        np.testing.assert_allclose(means[pd], ambient[pd], atol=1e-12)
        if np.any(~pd):  # same eigenvectors, eigenvalues ≤ 0 floored to a tiny positive value
            rot = np.einsum("kji,kjl,klm->kim", v[~pd], means[~pd], v[~pd])  # Vᵀ mean V
            scale = np.maximum(1.0, np.abs(w[~pd]).max(axis=1, keepdims=True))
            np.testing.assert_allclose(rot[:, 0, 1], 0.0, atol=1e-10)
            diag = np.stack([rot[:, 0, 0], rot[:, 1, 1]], axis=1)
            kept = w[~pd] > 1e-6 * scale
            np.testing.assert_allclose(diag[kept], w[~pd][kept], atol=1e-10)
            tiny = np.broadcast_to(1e-6 * scale, diag.shape)
            assert np.all(diag[~kept] > 0) and np.all(diag[~kept] <= tiny[~kept])


SPECS = {"S2": SphereSpec, "SPD2": SPDSpec}


def ambient_sensitivity(spec, n):
    """The audit's own Δ = 2 r_E / n."""
    return 2.0 * spec.r_e / n


@functools.cache
def ambient_pair(name, n):
    spec = SPECS[name]
    rng = np.random.default_rng(SEED + n + (0 if name == "S2" else 1000))
    ratio, d_set, e_set = M.mean_shift_search(
        spec.pt, spec.k, lambda y: spec.embed(y).mean(axis=-2),
        lambda a, b: M.norm_last(a - b), n, ambient_sensitivity(spec, n), rng, steps=100,
        starts=60)
    return d_set, e_set, ratio


def _knorm_log_c(center, sigma, n_rho):
    coords, w = M.ball3_grid(60.0 * sigma, n_rho)
    return O.log_integral(-M.norm_last(coords) / sigma, w), center + coords


def _ambient_exact(name, n):
    spec = SPECS[name]
    d_set, e_set, ratio = ambient_pair(name, n)
    delta = ambient_sensitivity(spec, n)
    rel = private_frechet_mean(spec.manifold, spec.to_library(d_set), epsilon=EPS,
                               mechanism="ambient_laplace", radius=RADIUS, center=spec.center,
                               rng=SEED)
    assert rel.guarantee == "private" and rel.delta == 0.0
    assert rel.assumptions["ambient_radius"]["value"] == pytest.approx(spec.r_e, rel=1e-12)
    assert rel.sensitivity["ambient_mean"] == pytest.approx(delta, rel=1e-12)
    sigma = released_sigma(rel, delta / EPS, "ambient")
    a_d, a_e = spec.embed(d_set).mean(axis=0), spec.embed(e_set).mean(axis=0)
    shift = float(M.norm_last(a_d - a_e))
    # normalizers by quadrature about each mean (equal: translation invariance)
    log_c_d, nodes_d = _knorm_log_c(a_d, sigma, 40)
    log_c_e, nodes_e = _knorm_log_c(a_e, sigma, 40)
    half, _ = _knorm_log_c(a_d, sigma, 20)
    tol = 2 * abs(log_c_d - half) + 1e-12
    assert log_c_d == pytest.approx(A.knorm_log_normalizer(sigma, 3), abs=1e-9)
    u = (a_d - a_e) / shift
    pts = np.vstack([nodes_d, nodes_e, a_d + 0.01 * sigma * u, a_e - 0.01 * sigma * u])
    loss = (A.knorm_stat(pts, a_d, a_e, sigma) + log_c_e - log_c_d)
    sup = float(np.max(np.abs(loss)))
    assert shift <= delta * (1 + 1e-12)
    assert sup == pytest.approx(shift / sigma, abs=tol + 1e-9)  # attained at the maximizer
    assert shift * n >= (1 - 1e-3) * spec.diameter_floor  # the search reaches the diameter
    # sup ≤ ε + tol: asserted by the contract
    return Exact(f"ambient Laplace {name} n={n} (|a_D − a_D'|/Δ = {shift / delta:.4f}, search "
                 f"{ratio:.4f}; |a_D − a_D'| n / diameter floor = "
                 f"{shift * n / spec.diameter_floor:.4f})", sup, EPS, tol)


def _ambient_blackbox_data(name):
    spec = SPECS[name]
    d_set, e_set, _ = ambient_pair(name, 10)
    d_raw, d_set = spec.raw_far(d_set)
    e_raw, e_set = spec.raw_far(e_set)
    assert not np.allclose(e_raw[-1], e_set[-1])  # the replaced point is given raw, far out
    return spec, d_set, e_set, d_raw, e_raw


def _ambient_distinguisher(name):
    spec, d_set, e_set, d_raw, e_raw = _ambient_blackbox_data(name)
    n = d_set.shape[0]
    sigma = ambient_sensitivity(spec, n) / EPS
    a_d, a_e = spec.embed(d_set).mean(axis=0), spec.embed(e_set).mean(axis=0)

    def draw():
        kw = dict(epsilon=EPS, mechanism="ambient_laplace", radius=RADIUS, center=spec.center,
                  total=N_DRAWS)
        draws, pvalues = {}, []
        for which, raw, a, seed in (("D", d_raw, a_d, SEED), ("D'", e_raw, a_e, SEED + 10_000)):
            means, ambient, left, rel = library_draws(spec.manifold, spec.to_library(raw),
                                                      seed=seed, **kw)
            released_sigma(rel, sigma, "ambient")  # the same law up to a 1e-9 relative scale
            spec.check_postprocessing(means, ambient, left)
            z = spec.from_library(ambient)
            r = M.norm_last(z - a)
            u = (z - a) / r[:, None]
            ks_p = (ks(r, stats.gamma(3, scale=sigma).cdf), ks(u[:, 2], stats.uniform(-1, 2).cdf),
                    ks(np.mod(np.arctan2(u[:, 1], u[:, 0]), 2 * np.pi),
                       stats.uniform(0, 2 * np.pi).cdf))
            print(f"\nambient Laplace {name} ({which}): KS p-values radius {ks_p[0]:.3f}, "
                  f"cos θ {ks_p[1]:.3f}, φ {ks_p[2]:.3f}; left the manifold "
                  f"{np.mean(left):.3f}")
            pvalues += ks_p
            draws[which] = A.knorm_stat(z, a_d, a_e, sigma)
        print(f"true sup loss {M.norm_last(a_d - a_e) / sigma:.4f} (ε = {EPS})")
        return Draws(draws["D"], draws["D'"], 0.0, tuple(pvalues))

    return Distinguisher(f"ambient Laplace {name} black box (n={n})",
                         A.knorm_thresholds(a_d, a_e, sigma, N_DRAWS, ALPHA_EACH), draw, EPS,
                         alpha=ALPHA_EACH, gof_alpha=GOF_ALPHA)


def _ambient_broken(name):
    """The ambient K-norm mechanism with σ/4 (the audit's own exact draws) is caught."""
    spec, d_set, e_set, _, _ = _ambient_blackbox_data(name)
    sigma = ambient_sensitivity(spec, d_set.shape[0]) / EPS / 4
    a_d, a_e = spec.embed(d_set).mean(axis=0), spec.embed(e_set).mean(axis=0)

    def draw():
        rng = np.random.default_rng(SEED)
        stat_d = A.knorm_stat(A.knorm_sample(a_d, sigma, N_DRAWS, rng), a_d, a_e, sigma)
        stat_e = A.knorm_stat(A.knorm_sample(a_e, sigma, N_DRAWS, rng), a_d, a_e, sigma)
        print(f"\nσ/4: true sup loss {M.norm_last(a_d - a_e) / sigma:.3f} (ε = {EPS})")
        return Draws(stat_d, stat_e)

    return Distinguisher(f"ambient Laplace {name}, σ/4 (power)",
                         A.knorm_thresholds(a_d, a_e, sigma, N_DRAWS, ALPHA_EACH), draw, EPS,
                         alpha=ALPHA_EACH)


class TestAmbientLaplace(MechanismAuditContract):
    """The ambient Laplace audits of (a) and (b) in the module docstring, at this file's
    ``ALPHA_EACH`` and ``GOF_ALPHA`` (1e-8 each)."""

    cases = [(name, n) for n in (2, 10, 40) for name in ("S2", "SPD2")]
    blackbox_cases = power_cases = [("S2",), ("SPD2",)]
    exact, distinguisher, broken = _ambient_exact, _ambient_distinguisher, _ambient_broken


# ============================================================================ oracle checks
def test_oracle_self_checks():
    """The oracle's pieces against first principles (not against the library's mechanisms)."""
    rng = np.random.default_rng(SEED)
    # S²: chord from the centre ≤ 2 sin(r/2) on the cap; cap diameter 2 sin r
    pts = O.uniform_ball(NORTH, RADIUS, 20_000, rng)
    assert np.max(M.norm_last(pts - NORTH)) <= A.sphere_ambient_radius(RADIUS) + 1e-12
    edge = O.point_at(np.broadcast_to(NORTH, (2, 3)), RADIUS, np.array([0.0, np.pi]))
    assert M.norm_last(edge[0] - edge[1]) == pytest.approx(A.sphere_cap_diameter(RADIUS))
    # SPD(2): the ball lies in the Frobenius ball of radius ‖P0‖_op (e^r − 1); embedding isometric
    ball = A.spd_ball_point(rng.normal(scale=3.0, size=(20_000, 3)), P0, RADIUS)
    assert np.max(SP.spd_dist(P0, ball)) <= RADIUS + 1e-12
    frob = np.linalg.norm(SP.to_matrix(ball) - SP.to_matrix(P0), axis=(-2, -1))
    np.testing.assert_allclose(M.norm_last(A.spd_embed(ball) - A.spd_embed(P0)), frob,
                               rtol=1e-12)
    assert frob.max() <= A.spd_ambient_radius(P0, RADIUS)
    np.testing.assert_allclose(A.spd_embed(ball), SPD(2).embed(SP.to_matrix(ball))[:, [0, 2, 1]],
                               rtol=1e-12)  # library geometry: the same isometry, reordered
    # K-norm: normalizer and sampler (radius Gamma(3, σ), direction uniform)
    z = A.knorm_sample(np.zeros(3), 0.7, 20_000, rng)
    assert ks(M.norm_last(z), stats.gamma(3, scale=0.7).cdf) > GOF_ALPHA
    coords, w = M.ball3_grid(60 * 0.7, 60)
    assert O.log_integral(-M.norm_last(coords) / 0.7, w) == pytest.approx(
        A.knorm_log_normalizer(0.7, 3), abs=1e-10)
    # circle Gaussian: normalizer by quadrature, sampler against the CDF
    t = np.linspace(-np.pi, np.pi, 200_001)
    for sigma in (0.3, 1.0, 3.0):
        f = np.exp(-(t**2) / (2 * sigma**2))
        z_num = np.sum((f[1:] + f[:-1]) / 2) * (t[1] - t[0])
        assert np.log(z_num) == pytest.approx(A.circle_gauss_log_z(sigma), abs=1e-8)
        s = A.circle_gauss_sample(0.4, sigma, 20_000, rng)
        assert ks(A.wrap(s - 0.4),
                  lambda x, sigma=sigma: A.circle_gauss_cdf(x, sigma)) > GOF_ALPHA
    # trade-off quadrature: the line recovers G_{s/σ}; on the circle small σ tends to s/σ and
    # the compact circle gives less; total variation at ε = 0 matches the cell masses
    for shift, sigma in ((1.0, 1.0), (0.3, 0.1)):
        assert A.gdp_mu_of_cells(*A.line_cells(shift, sigma, 2**14)[1:]) == pytest.approx(
            shift / sigma, rel=1e-9)
    mu_small, tol = A.circle_gdp_mu(0.1, 0.02, 2**15)
    assert mu_small == pytest.approx(5.0, rel=1e-6) and tol < 1e-6
    mu_wide, _ = A.circle_gdp_mu(2.0, 2.0, 2**15)
    assert mu_wide < 1.0
    _, lp, lq = A.circle_cells(0.0, 2.0, 2.0, 2**15)
    tv = 0.5 * np.sum(np.abs(np.exp(lp) - np.exp(lq)))
    assert mu_wide >= 2 * stats.norm.ppf((1 + tv) / 2) - 1e-9  # T(TV point) bound: µ ≥ µ_0
    assert A.gdp_delta(0.0, 1.0) == pytest.approx(2 * stats.norm.cdf(0.5) - 1)
