r"""Privacy audit of the strict Gaussian-DP Fréchet mean (DESIGN §6, §7, §12).

``mechanism="gaussian"`` with ``mu=µ`` on ``Euclidean(d)`` and ``Sphere(1)``: a draw from
f_D(z) ∝ exp(−d(m_D, z)²/(2σ²)) (Riemannian volume) about the Fréchet mean m_D of the projected
data. The audits, (a) exact µ of adversarial neighbours (R^d: the mean shift over σ, confirmed
by the audit's own trade-off quadrature; S¹: the oracle's cell quadrature of the trade-off
curve, against G_µ on a grid of levels) and (b) black boxes of 4000 library draws with their
power checks at σ/4, and their error budget, are described in the docstring of
``test_ambient_gaussian.py``, which audits the ambient Laplace mean; the constants and the
library's pooled draws both use are in ``_ambient_gaussian.py``.
"""

import functools

import numpy as np
import pytest
from scipy import stats

from dpcore.learning import frechet_mean
from dpcore.manifolds import Euclidean, Sphere
from dpcore.release import private_frechet_mean

from . import _ambient_oracle as A
from . import _manifold_oracle as M
from . import _oracle as O
from ._ambient_gaussian import (
    ALPHA_EACH,
    GOF_ALPHA,
    N_DRAWS,
    RADIUS,
    SEED,
    _expected_guarantee,
    ks,
    library_draws,
)
from ._released import released_sigma

#: ε values of the Gaussian black box (δ = δ_µ(ε) at each).
GDP_EPS = (0.0, 0.5, 1.0)
#: Cells of the circle for the trade-off quadrature (tolerance: the change with half of them).
N_CELLS = 2**17


def certify(name, stat_d, stat_e, thresholds, epsilon, alpha, delta):
    """Clopper–Pearson bounds of the pre-chosen events; prints them; returns the largest
    certified excess over δ (> 0 is a certified violation)."""
    bounds = O.distinguishing_bounds(stat_d, stat_e, thresholds, epsilon, alpha)
    worst = max(b.excess for b in bounds) - delta
    print(f"\n{name} at ε = {epsilon}: δ = {delta:.4f}; largest certified "
          f"P_a − e^ε P_b = {worst + delta:+.4f} (excess over δ {worst:+.4f})")
    for b in bounds:
        print("  ", b)
    return worst


# ============================================================================ Gaussian on R^d
CENTERS = {1: np.array([0.4]), 2: np.array([0.3, -0.2]), 3: np.array([0.3, -0.2, 0.1])}


@functools.cache
def euclid_pair(d, n):
    rng = np.random.default_rng(SEED + 2000 + 10 * d + n)
    pt = lambda a: CENTERS[d] + O.squash_disk(a, RADIUS)
    ratio, d_set, e_set = M.mean_shift_search(pt, d, lambda y: y.mean(axis=-2),
                                              lambda a, b: M.norm_last(a - b), n,
                                              2 * RADIUS / n, rng, steps=100, starts=60)
    return d_set, e_set, ratio


def gauss_stat(z, m_d, m_e, sigma):
    """log f_D(z) − log f_D′(z) = (|z − m′|² − |z − m|²)/(2σ²)."""
    return (M.norm_last(z - m_e) ** 2 - M.norm_last(z - m_d) ** 2) / (2 * sigma**2)


@pytest.mark.parametrize(("d", "n", "mu"), [(1, 2, 1.0), (2, 10, 1.0), (3, 5, 0.5), (2, 40, 3.0)])
def test_gaussian_euclidean_exact_mu(d, n, mu):
    d_set, e_set, ratio = euclid_pair(d, n)
    delta = 2 * RADIUS / n
    rel = private_frechet_mean(Euclidean(d), d_set, mu=mu, mechanism="gaussian", radius=RADIUS,
                               center=CENTERS[d], rng=SEED)
    # mu is exact for the continuous law; the radial sampler's floats are not float-safe.
    assert rel.guarantee == _expected_guarantee(rel) == "approximately private"
    assert rel.details["mu_per_draw"] == mu
    assert rel.sensitivity["mean"] == pytest.approx(delta, rel=1e-12)
    sigma = rel.sigma["mean"]
    assert sigma == pytest.approx(delta / mu, rel=1e-12)
    m_d, m_e = d_set.mean(axis=0), e_set.mean(axis=0)
    shift = float(M.norm_last(m_d - m_e))
    mu_true = shift / sigma
    # the audit's own trade-off quadrature on the line through both means agrees
    mu_cells = A.gdp_mu_of_cells(*A.line_cells(shift, sigma, 2**15)[1:])
    print(f"\nGaussian R^{d} n={n}: true µ = {mu_true:.6f} (quadrature {mu_cells:.6f}) = "
          f"{mu_true / mu:.6f} × stated µ = {mu}; shift/Δ = {shift / delta:.6f} "
          f"(search {ratio:.6f})")
    assert mu_cells == pytest.approx(mu_true, rel=1e-9)
    assert shift <= delta * (1 + 1e-12)
    assert mu_true <= mu * (1 + 1e-12)
    assert shift >= (1 - 1e-4) * delta  # the search reaches the diameter: µ is attained


def _euclid_blackbox_data():
    d_set, e_set, _ = euclid_pair(2, 10)
    c = CENTERS[2]
    raw = []
    for data in (d_set, e_set):
        data = np.array(data)
        r = M.norm_last(data - c)
        edge = r > RADIUS - 1e-3
        out = data.copy()
        out[edge] = c + (data[edge] - c) / r[edge, None] * 50.0
        raw.append(out)
    proj = [M.r2_project(x, c, RADIUS) for x in raw]
    return proj[0], proj[1], raw[0], raw[1]


def _euclid_thresholds(m_d, m_e, sigma, mu):
    shift = float(M.norm_last(m_d - m_e))
    t, lp, lq = A.line_cells(shift, sigma, 4096, half_width=12.0)
    u = (m_d - m_e) / shift
    stat_cells = gauss_stat(m_d + t[:, None] * u, m_d, m_e, sigma)
    return A.gdp_thresholds(stat_cells, lp, lq, GDP_EPS, mu, N_DRAWS,
                            ALPHA_EACH / len(GDP_EPS))


def _gdp_certify(name, stat_d, stat_e, thresholds, mu):
    return max(certify(name, stat_d, stat_e, thresholds[eps], eps, ALPHA_EACH / len(GDP_EPS),
                       float(A.gdp_delta(eps, mu))) for eps in GDP_EPS)


@pytest.mark.statistical
def test_gaussian_euclidean_blackbox():
    mu = 1.0
    d_set, e_set, d_raw, e_raw = _euclid_blackbox_data()
    sigma = 2 * RADIUS / d_set.shape[0] / mu
    m_d, m_e = d_set.mean(axis=0), e_set.mean(axis=0)
    thresholds = _euclid_thresholds(m_d, m_e, sigma, mu)  # before any draw
    kw = dict(mu=mu, mechanism="gaussian", radius=RADIUS, center=CENTERS[2], total=N_DRAWS)
    stat = {}
    for which, raw, m, seed in (("D", d_raw, m_d, SEED), ("D'", e_raw, m_e, SEED + 10_000)):
        z, _, _, rel = library_draws(Euclidean(2), raw, seed=seed, **kw)
        sigma = released_sigma(rel, sigma)
        w = (z - m) / sigma
        pvalues = (ks(np.sum(w**2, axis=1), stats.chi2(2).cdf),
                   ks(np.mod(np.arctan2(w[:, 1], w[:, 0]), 2 * np.pi),
                      stats.uniform(0, 2 * np.pi).cdf))
        print(f"\nGaussian R² ({which}): KS p-values radius² {pvalues[0]:.3f}, "
              f"angle {pvalues[1]:.3f}")
        assert min(pvalues) > GOF_ALPHA
        stat[which] = gauss_stat(z, m_d, m_e, sigma)
    print(f"true µ {M.norm_last(m_d - m_e) / sigma:.4f} (stated {mu})")
    worst = _gdp_certify("Gaussian R² black box (n=10)", stat["D"], stat["D'"], thresholds, mu)
    assert worst <= 0.0


@pytest.mark.statistical
def test_gaussian_euclidean_blackbox_has_power():
    """The Gaussian with σ/4 (true µ four times the stated one), own draws, is caught."""
    mu = 1.0
    d_set, e_set, _, _ = _euclid_blackbox_data()
    sigma = 2 * RADIUS / d_set.shape[0] / mu / 4
    m_d, m_e = d_set.mean(axis=0), e_set.mean(axis=0)
    thresholds = _euclid_thresholds(m_d, m_e, sigma, mu)
    rng = np.random.default_rng(SEED)
    z_d = m_d + sigma * rng.standard_normal((N_DRAWS, 2))
    z_e = m_e + sigma * rng.standard_normal((N_DRAWS, 2))
    print(f"\nσ/4: true µ {M.norm_last(m_d - m_e) / sigma:.3f} (stated {mu})")
    worst = _gdp_certify("Gaussian R², σ/4 (power)", gauss_stat(z_d, m_d, m_e, sigma),
                         gauss_stat(z_e, m_d, m_e, sigma), thresholds, mu)
    assert worst > 0.0


# ============================================================================ Gaussian on S¹
S1 = Sphere(1)
C1 = np.array([0.0, 1.0])


def _circle_mean_points(y):
    return A.circle_point(C1, A.circle_frechet_mean_angle(A.circle_angle(C1, y)))


def _circle_point_dist(a, b):
    return np.abs(A.wrap(A.circle_angle(C1, a) - A.circle_angle(C1, b)))


@functools.cache
def circle_pair(n, radius):
    rng = np.random.default_rng(SEED + 3000 + n)
    pt = lambda a: A.circle_point(C1, radius * np.tanh(a[..., 0]))
    ratio, d_set, e_set = M.mean_shift_search(pt, 1, _circle_mean_points, _circle_point_dist, n,
                                              2 * radius / n, rng, steps=100, starts=60)
    return d_set, e_set, ratio


@pytest.mark.parametrize(("n", "radius", "mu"), [(2, 0.5, 1.0), (4, 0.7, 0.5), (10, 0.5, 3.0)])
def test_gaussian_circle_exact_mu(n, radius, mu):
    d_set, e_set, ratio = circle_pair(n, radius)
    rel = private_frechet_mean(S1, d_set, mu=mu, mechanism="gaussian", radius=radius, center=C1,
                               rng=SEED)
    assert rel.guarantee == "private" and rel.details["mu_per_draw"] == mu
    sigma, delta_lib = rel.sigma["mean"], rel.sensitivity["mean"]
    own_delta = 2 * radius / n
    assert own_delta <= delta_lib  # the library's Δ bounds the circle's own sensitivity
    th_d, th_e = A.circle_angle(C1, d_set), A.circle_angle(C1, e_set)
    phi_d, phi_e = A.circle_frechet_mean_angle(th_d), A.circle_frechet_mean_angle(th_e)
    for th, phi, data in ((th_d, phi_d, d_set), (th_e, phi_e, e_set)):  # cross-checks
        assert A.circle_frechet_mean_brute(th) == pytest.approx(phi, abs=1e-9)
        assert A.circle_angle(C1, frechet_mean(S1, data)) == pytest.approx(phi, abs=1e-9)
    shift = float(A.circle_dist(phi_d, phi_e))
    mu_true, tol = A.circle_gdp_mu(shift, sigma, N_CELLS)
    mu_claim, tol_claim = A.circle_gdp_mu(delta_lib, sigma, N_CELLS)
    # literally: T(α) ≥ G_µ(α) on a grid of levels, both orders of the two laws
    _, lp, lq = A.circle_cells(phi_d, phi_e, sigma, N_CELLS)
    levels = np.concatenate([np.geomspace(1e-9, 1e-2, 200), np.linspace(0.01, 0.99, 981),
                             1 - np.geomspace(1e-9, 1e-2, 200)])
    gap = min(float(np.min(A.tradeoff_on_grid(a, b, levels) - A.gdp_tradeoff(levels, mu)))
              for a, b in ((lp, lq), (lq, lp)))
    assert gap >= -1e-9
    # µ is non-decreasing in the shift, so sup over neighbours = µ(sup shift) ≤ µ(Δ_lib)
    grid = [A.circle_gdp_mu(s, sigma, 2**13)[0] for s in np.linspace(0.1, 1.0, 10) * delta_lib]
    assert np.all(np.diff(grid) >= -1e-9)
    print(f"\nGaussian S¹ n={n}, r={radius}: σ = {sigma:.5f}; true µ = {mu_true:.6f} = "
          f"{mu_true / mu:.4f} × stated µ = {mu} (tol {tol:.1e}; shift/(2r/n) = "
          f"{shift / own_delta:.6f}, search {ratio:.6f}); at the library's Δ = {delta_lib:.4f} "
          f"(= {delta_lib / own_delta:.3f} × 2r/n): µ = {mu_claim:.10f} (tol {tol_claim:.1e}); "
          f"min_α T(α) − G_µ(α) = {gap:+.2e}")
    assert shift <= own_delta * (1 + 1e-12)
    assert shift >= (1 - 1e-4) * own_delta
    assert mu_true <= mu + tol
    assert mu_claim <= mu + tol_claim + 1e-9 * mu


def _circle_blackbox_data(n=2, radius=0.5):
    d_set, e_set, _ = circle_pair(n, radius)
    out = []
    for data in (d_set, e_set):
        th = A.circle_angle(C1, data)
        edge = np.abs(th) > radius - 1e-3
        raw_th = np.where(edge, np.sign(th) * (np.pi - 0.3), th)
        out.append((A.circle_point(C1, raw_th), A.circle_project_arc(raw_th, radius)))
    (d_raw, th_d), (e_raw, th_e) = out
    return d_raw, e_raw, A.circle_frechet_mean_angle(th_d), A.circle_frechet_mean_angle(th_e)


def _circle_thresholds(phi_d, phi_e, sigma, mu):
    mid, lp, lq = A.circle_cells(phi_d, phi_e, sigma, 2**14)
    return A.gdp_thresholds(A.circle_gauss_stat(mid, phi_d, phi_e, sigma), lp, lq, GDP_EPS, mu,
                            N_DRAWS, ALPHA_EACH / len(GDP_EPS))


@functools.cache
def _circle_sigma(mu, radius=0.5, n=2):
    rel = private_frechet_mean(S1, np.tile(C1, (n, 1)), mu=mu, mechanism="gaussian",
                               radius=radius, center=C1, rng=SEED)
    return rel.sigma["mean"]


@pytest.mark.statistical
def test_gaussian_circle_blackbox():
    mu = 1.0
    d_raw, e_raw, phi_d, phi_e = _circle_blackbox_data()
    sigma = _circle_sigma(mu)  # a public function of (µ, n, r): the library's calibration
    mu_true, _ = A.circle_gdp_mu(float(A.circle_dist(phi_d, phi_e)), sigma, N_CELLS)
    thresholds = _circle_thresholds(phi_d, phi_e, sigma, mu)  # before any draw
    kw = dict(mu=mu, mechanism="gaussian", radius=0.5, center=C1, total=N_DRAWS)
    stat = {}
    for which, raw, phi, seed in (("D", d_raw, phi_d, SEED), ("D'", e_raw, phi_e, SEED + 10_000)):
        z, _, _, rel = library_draws(S1, raw, seed=seed, **kw)
        assert rel.sigma["mean"] == sigma
        np.testing.assert_allclose(M.norm_last(z), 1.0, atol=1e-12)
        theta = A.circle_angle(C1, z)
        p = ks(A.wrap(theta - phi), lambda t: A.circle_gauss_cdf(t, sigma))
        print(f"\nGaussian S¹ ({which}): KS p-value of the offset {p:.3f}")
        assert p > GOF_ALPHA
        stat[which] = A.circle_gauss_stat(theta, phi_d, phi_e, sigma)
    print(f"true µ {mu_true:.4f} (stated {mu}; σ = {sigma:.4f})")
    worst = _gdp_certify("Gaussian S¹ black box (n=2)", stat["D"], stat["D'"], thresholds, mu)
    assert worst <= 0.0


@pytest.mark.statistical
def test_gaussian_circle_blackbox_has_power():
    """The circle Gaussian with σ/4 (own exact draws) on the same pair is caught."""
    mu = 1.0
    _, _, phi_d, phi_e = _circle_blackbox_data()
    sigma = _circle_sigma(mu) / 4
    mu_true, _ = A.circle_gdp_mu(float(A.circle_dist(phi_d, phi_e)), sigma, N_CELLS)
    thresholds = _circle_thresholds(phi_d, phi_e, sigma, mu)
    rng = np.random.default_rng(SEED)
    th_d = A.circle_gauss_sample(phi_d, sigma, N_DRAWS, rng)
    th_e = A.circle_gauss_sample(phi_e, sigma, N_DRAWS, rng)
    print(f"\nσ/4: true µ {mu_true:.3f} (stated {mu})")
    worst = _gdp_certify("Gaussian S¹, σ/4 (power)", A.circle_gauss_stat(th_d, phi_d, phi_e, sigma),
                         A.circle_gauss_stat(th_e, phi_d, phi_e, sigma), thresholds, mu)
    assert worst > 0.0
