r"""Privacy audit of the strict Riemannian-Laplace Fréchet mean on S² (DESIGN §6, §12).

Mechanism under audit: ``private_frechet_mean(Sphere(2), y, mechanism="laplace", radius=r,
center=north)``. Strict mode projects the data onto B_r(north) and releases a draw from
f_D(z) ∝ exp(−d(m(D), z)/σ) on S² with σ = Δ/ε, Δ = 2r(2 − h)/(n h), h = 2r cot 2r.

(a) Exact log-density ratio. For neighbouring D, D′ (one row replaced), the oracle computes its
    own Fréchet means, normalizes both densities by quadrature on a Gauss–Legendre × uniform
    grid of S² (checked against the closed form 2π(1 + e^{−π/σ})/(1 + σ^{−2})), and takes the
    supremum of |log f_D − log f_D′| over the grid and the analytic maximizers (points on the
    geodesic through both means, beyond one of them). The quadrature tolerance is the change of
    the log-normalizers when the grid is halved. Adversarial pairs come from a vectorized
    random-restart local search over the replaced point and the shared points (one cluster,
    two clusters, or all points free for n ≤ 5), for n = 2, 3, 5, 10, 40; the same search
    measures sup d(m(D), m(D′)) / Δ, an independent check of the sensitivity bound.

(b) Black-box distinguishing test. 4000 library draws under each of an adversarial pair
    (n = 10, ε = 1; the replaced point is given raw, near the antipode of the centre, so the
    projection path is exercised). The draws are first checked against the oracle's density
    (Kolmogorov–Smirnov on the distance to the oracle's mean and on the direction angle), so
    the exact ratio in (a) is the library's. Events A_c = {log f_D − log f_D′ > c} and their
    mirror images, with thresholds fixed from the oracle before sampling (those whose certified
    log-ratio the oracle anticipates to be largest), get one-sided Clopper–Pearson bounds; the
    test fails only if P_D(A) − e^ε P_D′(A) > δ (δ = Release.delta per draw = 0) is certified,
    with family-wise false-failure chance ≤ 1e-6/3. The same
    machinery applied to a deliberately wrong Laplace (σ = Δ/(4ε), sampled by the oracle)
    must certify a violation: the test has power.
"""

import functools

import numpy as np
import pytest
from scipy import stats

from . import _oracle as O
from ._draws import ALPHA_EACH, GOF_ALPHA, frechet_draws
from ._released import released_sigma
from .contract import Distinguisher, Draws, Exact, MechanismAuditContract

RADIUS = 0.5
EPS = 1.0
SEED = 424_242
N_DRAWS = 4000


def _means_shift(shared, y, w):
    """d(m(shared ∪ y), m(shared ∪ w)) for batches: shared (K, n−1, 3), y, w (K, 3)."""
    m1 = O.frechet_mean_batch(np.concatenate([shared, y[:, None]], axis=1))
    m2 = O.frechet_mean_batch(np.concatenate([shared, w[:, None]], axis=1))
    return O.dist(m1, m2)


@functools.cache
def adversarial_pair(n):
    """The neighbouring pair (D, D′) with the largest mean shift found, and that shift / Δ."""
    rng = np.random.default_rng(SEED + n)
    delta = O.frechet_mean_sensitivity(n, RADIUS)
    pt = lambda a: O.ball_point(a, O.NORTH, RADIUS)
    best = (-np.inf, None)

    def consider(params, build):
        nonlocal best
        x, f = O.local_search(lambda a: _means_shift(*build(a)) / delta, params, rng,
                              steps=150)
        i = int(np.argmax(f))
        if f[i] > best[0]:
            shared, y, w = build(x[i:i + 1])
            best = (f[i], (shared[0], y[0], w[0]))

    # one cluster of n−1 shared points; the replaced point anywhere (boundary reached as the
    # squash saturates)
    consider(rng.normal(scale=2.0, size=(120, 6)),
             lambda a: (np.repeat(pt(a[:, 0:2])[:, None], n - 1, axis=1), pt(a[:, 2:4]),
                        pt(a[:, 4:6])))
    # two clusters of k and n−1−k shared points
    for k in sorted({1, (n - 1) // 2}):
        if 1 <= k <= n - 2:
            consider(rng.normal(scale=2.0, size=(120, 8)),
                     lambda a, k=k: (np.concatenate(
                         [np.repeat(pt(a[:, 0:2])[:, None], k, axis=1),
                          np.repeat(pt(a[:, 2:4])[:, None], n - 1 - k, axis=1)], axis=1),
                         pt(a[:, 4:6]), pt(a[:, 6:8])))
    # every point free (small n)
    if n <= 5:
        consider(rng.normal(scale=2.0, size=(120, 2 * n + 2)),
                 lambda a: (np.stack([pt(a[:, 2 * j:2 * j + 2]) for j in range(n - 1)], axis=1),
                            pt(a[:, 2 * n - 2:2 * n]), pt(a[:, 2 * n:2 * n + 2])))
    ratio, (shared, y, w) = best
    return np.vstack([shared, y]), np.vstack([shared, w]), float(ratio)


def _log_ratio_sup(m_d, m_e, sigma, n_theta):
    """sup_z |log f_D(z) − log f_D′(z)| with numerically normalized densities, and the
    log-normalizers."""
    grid = O.sphere_grid(n_theta)
    # analytic maximizers: just beyond each mean on the geodesic through both
    u = O.normalize(O.log(m_d, m_e))
    extra = np.stack([O.exp(m_d, -0.05 * u), O.exp(m_e, 0.05 * O.transport(m_d, m_e, u))])
    pts = np.vstack([grid.points, extra])
    log_c_d = O.log_integral(-O.dist(grid.points, m_d) / sigma, grid.weights)
    log_c_e = O.log_integral(-O.dist(grid.points, m_e) / sigma, grid.weights)
    diff = (-O.dist(pts, m_d) / sigma - log_c_d) - (-O.dist(pts, m_e) / sigma - log_c_e)
    return float(np.max(np.abs(diff))), log_c_d, log_c_e


def _laplace_exact(n):
    d_set, e_set, shift_ratio = adversarial_pair(n)
    delta = O.frechet_mean_sensitivity(n, RADIUS)
    # the library's record for these data (its σ is the one audited)
    _, _, rel = frechet_draws(d_set, epsilon=EPS, mechanism="laplace", radius=RADIUS,
                              center=O.NORTH, total=1, seed=SEED)
    sigma = rel.sigma["mean"]
    assert sigma == pytest.approx(delta / EPS, rel=1e-12)
    m_d, m_e = O.frechet_mean(d_set), O.frechet_mean(e_set)
    sup, log_c_d, log_c_e = _log_ratio_sup(m_d, m_e, sigma, 400)
    _, half_d, half_e = _log_ratio_sup(m_d, m_e, sigma, 200)
    tol = abs(log_c_d - half_d) + abs(log_c_e - half_e)
    # the quadrature agrees with the closed form (homogeneity: no dependence on the centre)
    exact = O.laplace_log_normalizer(sigma)
    assert abs(log_c_d - exact) < 1e-4 and abs(log_c_e - exact) < 1e-4
    # sensitivity (paper 001 Thm 2) holds on the adversarial pair
    assert O.dist(m_d, m_e) <= delta
    # the search is not vacuous: it finds at least the flat-space shift h/(2 − h) of Δ
    h = O.frechet_h(RADIUS)
    assert shift_ratio >= 0.95 * h / (2 - h)
    # the ratio is ≤ ε + tol, the quadrature converged (tol < 1e-3): asserted by the contract
    return Exact(f"S² Laplace n={n} (sup d(m_D, m_D')/Δ = {shift_ratio:.4f})", sup, EPS, tol,
                 tol_cap=1e-3)


def _blackbox_pair():
    """The n = 10 adversarial pair with D′'s new point given raw near the antipode."""
    d_set, e_set, _ = adversarial_pair(10)
    w = e_set[-1]
    raw = e_set.copy()
    if O.dist(w, O.NORTH) > RADIUS - 1e-3:  # a boundary point: reach it by projection
        u = O.normalize(O.log(O.NORTH, w))
        raw[-1] = O.exp(O.NORTH, (np.pi - 1e-3) * u)
        np.testing.assert_allclose(O.project_ball(raw[-1], O.NORTH, RADIUS), w, atol=1e-3)
        e_set = e_set.copy()
        e_set[-1] = O.project_ball(raw[-1], O.NORTH, RADIUS)
    return d_set, e_set, raw


def _thresholds(m_d, m_e, sigma):
    """Event thresholds from the oracle's densities on a grid of S² (before sampling)."""
    grid = O.sphere_grid(200)
    log_f_d = -O.dist(grid.points, m_d) / sigma
    log_f_e = -O.dist(grid.points, m_e) / sigma  # same normalizer (homogeneous sphere)
    return O.event_thresholds(log_f_d - log_f_e, log_f_d, log_f_e, grid.weights, N_DRAWS,
                              ALPHA_EACH)


def _gof(draws, mean, sigma):
    radial = stats.kstest(O.dist(draws, mean), lambda r: O.laplace_radial_cdf(r, sigma)).pvalue
    e1, e2 = O.tangent_frame(mean)
    v = O.log(mean, draws)
    angle = np.mod(np.arctan2(O.dot(v, e2), O.dot(v, e1)), 2 * np.pi)
    angular = stats.kstest(angle, stats.uniform(0, 2 * np.pi).cdf).pvalue
    return radial, angular


def _laplace_distinguisher():
    d_set, e_set, e_raw = _blackbox_pair()
    n = d_set.shape[0]
    sigma = O.frechet_mean_sensitivity(n, RADIUS) / EPS
    m_d, m_e = O.frechet_mean(d_set), O.frechet_mean(e_set)
    sup = O.dist(m_d, m_e) / sigma

    def draw():
        kw = dict(epsilon=EPS, mechanism="laplace", radius=RADIUS, center=O.NORTH,
                  total=N_DRAWS)
        z_d, delta_d, rel = frechet_draws(d_set, seed=SEED, **kw)
        z_e, delta_e, _ = frechet_draws(e_raw, seed=SEED + 10_000, **kw)
        released = released_sigma(rel, sigma)
        assert delta_d == delta_e == 0.0 and rel.diagnostics["exact"]
        pvalues = []
        for draws, mean in ((z_d, m_d), (z_e, m_e)):
            pvalues += _gof(draws, mean, released)  # radial, angular
        stat = lambda z: (O.dist(z, m_e) - O.dist(z, m_d)) / released  # normalizers cancel
        return Draws(stat(z_d), stat(z_e), delta_d, tuple(pvalues))

    return Distinguisher(f"S² Laplace black box (n={n}, ε={EPS}, true sup log-ratio {sup:.3f})",
                         _thresholds(m_d, m_e, sigma), draw, EPS, alpha=ALPHA_EACH,
                         gof_alpha=GOF_ALPHA)


def _laplace_broken():
    """A Laplace with σ = Δ/(4ε) (4× too little noise) is caught by the same machinery."""
    d_set, e_set, _ = _blackbox_pair()
    n = d_set.shape[0]
    sigma = O.frechet_mean_sensitivity(n, RADIUS) / (4 * EPS)
    m_d, m_e = O.frechet_mean(d_set), O.frechet_mean(e_set)

    def draw():
        stat = lambda z: (O.dist(z, m_e) - O.dist(z, m_d)) / sigma
        rng = np.random.default_rng(SEED)
        z_d = O.sample_laplace(m_d, sigma, N_DRAWS, rng)
        z_e = O.sample_laplace(m_e, sigma, N_DRAWS, rng)
        return Draws(stat(z_d), stat(z_e))

    return Distinguisher("S² Laplace, σ/4 (power)", _thresholds(m_d, m_e, sigma), draw, EPS,
                         alpha=ALPHA_EACH)


class TestS2Laplace(MechanismAuditContract):
    """(a) and (b) of the module docstring (goodness of fit at ``GOF_ALPHA`` of
    tests/audit/_draws.py)."""

    cases = [(2,), (3,), (5,), (10,), (40,)]
    exact, distinguisher, broken = _laplace_exact, _laplace_distinguisher, _laplace_broken
