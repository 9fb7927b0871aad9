r"""Independent numpy oracle for the audit of the ambient Laplace and Gaussian-DP releases.

Like :mod:`tests.audit._oracle` and :mod:`tests.audit._manifold_oracle_spd` (whose sphere and
SPD(2) geometry is reused), nothing here imports the library: embeddings, ambient radii, densities,
samplers, Fréchet means on S¹, trade-off functions and the choice of the black-box events are
written from the formulas below.

Embeddings (isometric for the ambient Euclidean / Frobenius norm)
    S² ⊂ R³: the identity. For x on the sphere, |x − c|² = 2 − 2 cos d(x, c) = 4 sin²(d/2),
    increasing in d on [0, π], so B_r(c) lies in the Euclidean ball of radius
    r_E = 2 sin(r/2) about c; two points of B_r(c) are at geodesic distance ≤ 2r, hence at
    chord ≤ 2 sin r (r ≤ π/2): the embedded cap has diameter exactly 2 sin r (two opposite
    boundary points).

    SPD(2) ⊂ Sym(2) ≅ R³: [[a, c], [c, b]] ↦ (a, b, √2 c) (|·| = Frobenius norm). A point of
    B_r(C) is P = C^½ e^S C^½ with ‖S‖_F ≤ r, so ‖P − C‖_F ≤ ‖C‖_op ‖e^S − I‖_F and, with
    λ_i the eigenvalues of S, ‖e^S − I‖_F² = Σ (e^{λ_i} − 1)² ≤ (e^{‖S‖_F} − 1)² (the map
    t ↦ (e^{√t} − 1)² is convex and vanishes at 0, hence superadditive on Σ λ_i² ≤ r²; and
    (e^{−|λ|} − 1)² ≤ (e^{|λ|} − 1)²). Hence r_E = ‖C‖_op (e^r − 1). A pair of points at
    Frobenius distance 2 ‖C‖_op sinh r exists (P± = C^½ exp(±r u uᵀ) C^½, u the top
    eigenvector of C, P± − C = ‖C‖_op (e^{±r} − 1) u uᵀ); it is a floor for the searches.

Ambient K-norm (Laplace) mechanism in R^D
    f_a(z) = exp(−|z − a|/σ) / (Γ(D) |S^{D−1}| σ^D) (polar coordinates: ∫ e^{−ρ/σ} ρ^{D−1} dρ
    = Γ(D) σ^D), i.e. a + σ R U with R ~ Gamma(D, 1) and U uniform on the unit sphere. The
    normalizer does not depend on a, so log f_a(z) − log f_a′(z) = (|z − a′| − |z − a|)/σ,
    whose supremum over z is |a − a′|/σ (triangle inequality, attained on the ray from a′
    through a beyond a).

Riemannian Gaussian on the circle S¹ (arc length θ)
    f_φ(θ) = exp(−d(θ, φ)²/(2σ²)) / Z with d the arc distance in [0, π]; with t = θ − φ taken
    in [−π, π), d = |t|, so f_φ is a normal law N(0, σ²) in t truncated to [−π, π):
    Z = σ √(2π) (2Φ(π/σ) − 1), CDF of t: (Φ(t/σ) − Φ(−π/σ)) / (2Φ(π/σ) − 1).

Fréchet mean on S¹ of data in an arc of half-width r < π/3 about c (angles θ_i ∈ [−r, r] from
c): for |φ| ≤ π − r every |φ − θ_i| ≤ π, so F(φ) = (1/2n) Σ d(φ, θ_i)² = (1/2n) Σ (φ − θ_i)²
there, with minimum at the arithmetic mean θ̄ and value ≤ r²/2; for |φ| > π − r every
d(φ, θ_i) ≥ π − 2r > r, so F(φ) > r²/2. The Fréchet mean is the point at angle θ̄, and a
replaced row moves it by |θ_y − θ_w|/n ≤ 2r/n.

Trade-off functions by quadrature (S¹, and R^d reduced to the line through both means)
    T(P, Q)(α) = inf {1 − E_Q φ : E_P φ ≤ α}. The oracle cuts the circle into cells whose
    edges include the antipodes of both centres, so that on every cell both distances are
    affine in θ; each cell's two masses are exact differences of Φ (computed in log space).
    Sorting the cells by log(p/q) gives the Neyman–Pearson tests measurable for the cell
    partition; their (α, β) breakpoints, joined by segments (randomized tests), form the
    trade-off curve T_N of the discretized experiment. T_N ≥ T (fewer tests), and
    T_N → T as the cells shrink; the tolerance is the change when the cells are halved.
    T ≥ G_µ(α) = Φ(Φ⁻¹(1 − α) − µ) at the breakpoints implies it everywhere (T_N is
    piecewise linear and G_µ convex, so G_µ lies below its chords), hence the smallest such µ
    is max_k [Φ⁻¹(1 − α_k) − Φ⁻¹(β_k)] over the breakpoints, for both orders (P, Q), (Q, P).
    On R^d the two Gaussian laws differ only along u = (m − m′)/|m − m′|, and T = G_{|m−m′|/σ}
    exactly; the same cells on the line reproduce it (a check of the machinery).
"""

from __future__ import annotations

import numpy as np
from scipy import special, stats

from . import _manifold_oracle as M
from . import _manifold_oracle_spd as SP
from . import _oracle as O


# ============================================================================ GDP
def gdp_delta(eps, mu):
    """δ_µ(ε) = Φ(−ε/µ + µ/2) − e^ε Φ(−ε/µ − µ/2), the privacy profile of µ-GDP."""
    eps = np.asarray(eps, dtype=float)
    return stats.norm.cdf(-eps / mu + mu / 2) - np.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2)


def gdp_tradeoff(alpha, mu):
    """G_µ(α) = Φ(Φ⁻¹(1 − α) − µ)."""
    return stats.norm.cdf(stats.norm.isf(np.asarray(alpha, dtype=float)) - mu)


# ============================================================================ embeddings
def sphere_ambient_radius(radius):
    """r_E = 2 sin(r/2): the largest chord from the centre of B_r to a point of it."""
    return 2.0 * np.sin(radius / 2.0)


def sphere_cap_diameter(radius):
    """Diameter of the embedded cap B_r ⊂ R³: 2 sin r (r ≤ π/2)."""
    assert radius <= np.pi / 2
    return 2.0 * np.sin(radius)


def spd_embed(triples):
    """(a, b, c) ↦ (a, b, √2 c): Frobenius-isometric coordinates of [[a, c], [c, b]]."""
    return SP.coords_from_sym(triples)


def spd_embed_matrix(mats):
    """The same coordinates of (…, 2, 2) matrices (symmetrized)."""
    return SP.coords_from_sym(SP.from_matrix(mats))


def spd_op_norm(triple):
    """Largest eigenvalue (mid + half) of an SPD triple."""
    a, b, c = np.asarray(triple, dtype=float)
    return 0.5 * (a + b) + np.hypot(0.5 * (a - b), c)


def spd_ambient_radius(center, radius):
    """r_E = ‖C‖_op (e^r − 1) (module docstring)."""
    return spd_op_norm(center) * np.expm1(radius)


def spd_ball_point(a, center, radius):
    """Rows of R³ → points (triples) of the open geodesic ball B_radius(center)."""
    return SP.spd_chart(O.squash_disk(a, radius), center)


# ============================================================================ K-norm Laplace
def knorm_log_normalizer(sigma, dim):
    """log(Γ(D) |S^{D−1}| σ^D), |S^{D−1}| = 2 π^{D/2} / Γ(D/2)."""
    return (special.gammaln(dim) + np.log(2.0) + 0.5 * dim * np.log(np.pi)
            - special.gammaln(dim / 2.0) + dim * np.log(sigma))


def knorm_log_density(z, a, sigma):
    z = np.asarray(z, dtype=float)
    return -M.norm_last(z - a) / sigma - knorm_log_normalizer(sigma, z.shape[-1])


def knorm_stat(z, a_d, a_e, sigma):
    """log f_D(z) − log f_D′(z) = (|z − a′| − |z − a|)/σ."""
    return (M.norm_last(z - a_e) - M.norm_last(z - a_d)) / sigma


def knorm_sample(a, sigma, size, rng):
    """Exact draws a + σ R U, R ~ Gamma(D, 1), U uniform on the unit sphere of R^D."""
    a = np.asarray(a, dtype=float)
    g = rng.standard_normal((size, a.size))
    u = g / M.norm_last(g)[:, None]
    return a + sigma * rng.gamma(a.size, 1.0, size)[:, None] * u


def knorm_thresholds(a_d, a_e, sigma, n_draws, alpha, n_rho=60):
    """Event thresholds for {stat > c} / {stat < −c} from a quadrature of both densities on a
    spherical grid of radius 40σ about the midpoint (before sampling; affects power only)."""
    coords, w = M.ball3_grid(40.0 * sigma + M.norm_last(a_d - a_e), n_rho)
    z = 0.5 * (a_d + a_e) + coords
    lf_d, lf_e = -M.norm_last(z - a_d) / sigma, -M.norm_last(z - a_e) / sigma
    return O.event_thresholds(lf_d - lf_e, lf_d, lf_e, w, n_draws, alpha)


# ============================================================================ circle S¹
def circle_frame(center):
    """(c, e): c and its rotation by +π/2 (an oriented frame of R² ⊃ S¹)."""
    c = np.asarray(center, dtype=float)
    return c, np.array([-c[1], c[0]])


def circle_point(center, theta):
    """The point at signed arc ``theta`` from ``center``."""
    c, e = circle_frame(center)
    theta = np.asarray(theta, dtype=float)[..., None]
    return np.cos(theta) * c + np.sin(theta) * e


def circle_angle(center, x):
    """Signed arc from ``center`` to unit vectors ``x``, in (−π, π]."""
    c, e = circle_frame(center)
    x = np.asarray(x, dtype=float)
    return np.arctan2(x @ e, x @ c)


def wrap(t):
    """Angles → [−π, π)."""
    return np.mod(np.asarray(t, dtype=float) + np.pi, 2.0 * np.pi) - np.pi


def circle_dist(s, t):
    return np.abs(wrap(np.asarray(s, dtype=float) - t))


def circle_project_arc(theta, radius):
    """Geodesic projection onto the arc [−r, r] (angles from the centre, not at the antipode)."""
    return np.clip(theta, -radius, radius)


def circle_frechet_mean_angle(theta):
    """Fréchet mean (angle from the centre) of angles in [−r, r], r < π/3: their mean."""
    theta = np.asarray(theta, dtype=float)
    assert np.max(np.abs(theta)) < np.pi / 3
    return theta.mean(axis=-1)


def circle_frechet_mean_brute(theta, n_grid=200_001):
    """Independent check: the minimizer of (1/2n) Σ d(φ, θ_i)² over a fine grid of the circle,
    refined by a parabola through the best three nodes."""
    phi = np.linspace(-np.pi, np.pi, n_grid, endpoint=False)
    f = np.zeros_like(phi)
    for t in np.asarray(theta, dtype=float):
        f += circle_dist(phi, t) ** 2
    k = int(np.argmin(f))
    h = phi[1] - phi[0]
    fm, f0, fp = f[k - 1], f[k], f[(k + 1) % n_grid]
    return float(phi[k] + 0.5 * h * (fm - fp) / (fm - 2 * f0 + fp))


def circle_gauss_log_z(sigma):
    """log Z, Z = σ √(2π) (2Φ(π/σ) − 1) (arc-length measure)."""
    return np.log(sigma * np.sqrt(2 * np.pi)) + np.log(special.erf(np.pi / (sigma * np.sqrt(2))))


def circle_gauss_log_density(theta, phi, sigma):
    return -circle_dist(theta, phi) ** 2 / (2 * sigma**2) - circle_gauss_log_z(sigma)


def circle_gauss_cdf(t, sigma):
    """CDF of the signed offset t ∈ [−π, π) from the centre (truncated normal)."""
    lo = stats.norm.cdf(-np.pi / sigma)
    return (stats.norm.cdf(np.asarray(t, dtype=float) / sigma) - lo) / (1.0 - 2.0 * lo)


def circle_gauss_sample(phi, sigma, size, rng):
    """Exact draws (angles): normal offsets, rejected outside [−π, π)."""
    out = np.empty(0)
    while out.size < size:
        t = rng.normal(0.0, sigma, 2 * size + 16)
        out = np.concatenate([out, t[(t >= -np.pi) & (t < np.pi)]])
    return wrap(phi + out[:size])


def circle_gauss_stat(theta, phi_d, phi_e, sigma):
    """log f_D(θ) − log f_D′(θ) = (d(θ, φ′)² − d(θ, φ)²)/(2σ²) (same normalizer)."""
    return (circle_dist(theta, phi_e) ** 2 - circle_dist(theta, phi_d) ** 2) / (2 * sigma**2)


def log_ndtr_diff(a, b):
    """log(Φ(b) − Φ(a)) for a < b, accurate in both tails."""
    a, b = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    flip = a > 0
    lo, hi = np.where(flip, -b, a), np.where(flip, -a, b)
    lb, la = special.log_ndtr(hi), special.log_ndtr(lo)
    return lb + np.log(-np.expm1(la - lb))


def circle_cells(phi_d, phi_e, sigma, n_cells):
    """Cells of the circle with exact log-masses under both Gaussian laws.

    Edges: ``n_cells`` uniform edges plus both antipodes (so no cell straddles a cut point and
    both offsets are affine on every cell). Returns (midpoints, log p, log q).
    """
    edges = np.linspace(-np.pi, np.pi, n_cells + 1)[:-1]
    edges = np.unique(np.concatenate([edges, wrap([phi_d + np.pi, phi_e + np.pi])]))
    right = np.append(edges[1:], edges[0] + 2 * np.pi)
    width = right - edges
    mid = edges + 0.5 * width
    log_norm = np.log(special.erf(np.pi / (sigma * np.sqrt(2))))

    def log_mass(phi):
        t = wrap(mid - phi)  # the cell is [t − w/2, t + w/2] ⊂ [−π, π]
        a = np.maximum(t - 0.5 * width, -np.pi)
        b = np.minimum(t + 0.5 * width, np.pi)
        return log_ndtr_diff(a / sigma, b / sigma) - log_norm

    return wrap(mid), log_mass(phi_d), log_mass(phi_e)


def line_cells(shift, sigma, n_cells, half_width=40.0):
    """Cells of the line t = ⟨z − m, u⟩ for N(0, σ²) (D) and N(−shift, σ²) (D′), exact
    log-masses; the tails beyond ±(half_width σ) are two further cells."""
    lo, hi = -shift - half_width * sigma, half_width * sigma
    edges = np.concatenate([[-np.inf], np.linspace(lo, hi, n_cells + 1), [np.inf]])
    a, b = edges[:-1], edges[1:]
    mid = np.clip(0.5 * (a + b), lo, hi)
    return (mid, log_ndtr_diff(a / sigma, b / sigma),
            log_ndtr_diff((a + shift) / sigma, (b + shift) / sigma))


def tradeoff_quantiles(log_p, log_q):
    """Normal quantiles of the Neyman–Pearson breakpoints of P vs Q measurable for the cells
    (reject P on the cells of smallest log(p/q) first): (Φ⁻¹(1 − α_k), Φ⁻¹(β_k)).

    Everything is in log space (cumulative log-sum-exp, Φ⁻¹ of a log-probability), and both
    tails of α and β are summed from their own ends, so that the quantiles stay accurate for
    α or β near 0 or 1 (masses below the smallest double included). The trivial end points
    (α, β) = (0, 1), (1, 0) are left out.
    """
    order = np.argsort(log_p - log_q, kind="stable")
    lp, lq = log_p[order], log_q[order]
    acc = np.logaddexp.accumulate
    log_alpha, log_1m_alpha = acc(lp)[:-1], acc(lp[::-1])[::-1][1:]
    log_beta, log_1m_beta = acc(lq[::-1])[::-1][1:], acc(lq)[:-1]
    half = np.log(0.5)
    with np.errstate(divide="ignore", over="ignore"):
        z_alpha = np.where(log_alpha < half, -special.ndtri_exp(log_alpha),
                           special.ndtri_exp(np.minimum(log_1m_alpha, 0.0)))
        z_beta = np.where(log_beta < half, special.ndtri_exp(log_beta),
                          -special.ndtri_exp(np.minimum(log_1m_beta, 0.0)))
    ok = np.isfinite(z_alpha) & np.isfinite(z_beta)
    return z_alpha[ok], z_beta[ok]


def gdp_mu_of_cells(log_p, log_q):
    """Smallest µ with T ≥ G_µ in both directions for the discretized experiment: at every
    breakpoint β_k ≥ Φ(Φ⁻¹(1 − α_k) − µ) ⟺ µ ≥ Φ⁻¹(1 − α_k) − Φ⁻¹(β_k) (module docstring)."""
    best = -np.inf
    for lp, lq in ((log_p, log_q), (log_q, log_p)):
        z_alpha, z_beta = tradeoff_quantiles(lp, lq)
        best = max(best, float(np.max(z_alpha - z_beta)))
    return best


def tradeoff_on_grid(log_p, log_q, alpha):
    """T(P, Q) of the discretized experiment at the levels ``alpha`` (linear between the
    Neyman–Pearson breakpoints, i.e. randomized tests)."""
    z_alpha, z_beta = tradeoff_quantiles(log_p, log_q)
    a = np.concatenate([[0.0], stats.norm.sf(z_alpha), [1.0]])
    b = np.concatenate([[1.0], stats.norm.cdf(z_beta), [0.0]])
    return np.interp(alpha, a, b)


def circle_gdp_mu(shift, sigma, n_cells):
    """True µ of the circle Gaussians at arc distance ``shift`` (cells, n_cells) and its
    quadrature tolerance (the change with half the cells)."""
    fine = gdp_mu_of_cells(*circle_cells(0.0, shift, sigma, n_cells)[1:])
    coarse = gdp_mu_of_cells(*circle_cells(0.0, shift, sigma, n_cells // 2)[1:])
    return fine, abs(fine - coarse)


def gdp_thresholds(stat_cells, log_p, log_q, eps_list, mu, n_draws, alpha, k=2,
                   n_candidates=80):
    """Events for the GDP black box, chosen from the oracle before sampling.

    For each ε, events A_c = {stat > c} (tested as P_D(A) − e^ε P_D′(A) ≤ δ_µ(ε)) and
    B_c = {stat < −c} (P_D′(B) − e^ε P_D(B) ≤ δ_µ(ε)): among candidate c (quantiles of the
    stat under both laws) keep the ``k`` per direction whose certified excess over δ_µ(ε)
    would be largest if the counts were their expectations under ``n_draws`` draws, at the
    Clopper–Pearson level the test will use (``alpha`` per ε). Affects power only.

    Returns
    -------
    dict ε -> (list of float, list of float)
    """
    p, q = np.exp(log_p), np.exp(log_q)
    level = alpha / (2 * k) / 2.0
    out = {}
    for eps in eps_list:
        delta = float(gdp_delta(eps, mu))
        pair = []
        for s, pa, pb in ((stat_cells, p, q), (-stat_cells, q, p)):
            order = np.argsort(s)
            cdf_a = np.cumsum(pa[order]) / pa.sum()
            qs = np.linspace(0.02, 0.98, n_candidates)
            cands = np.unique(s[order][np.searchsorted(cdf_a, qs).clip(0, s.size - 1)])
            scores = []
            for c in cands:
                ka = int(round(n_draws * pa[s > c].sum()))
                kb = int(round(n_draws * pb[s > c].sum()))
                scores.append(O.cp_lower(ka, n_draws, level)
                              - np.exp(eps) * O.cp_upper(kb, n_draws, level) - delta)
            pair.append(sorted(float(c) for c in cands[np.argsort(scores)[::-1][:k]]))
        out[eps] = (pair[0], pair[1])
    return out
