r"""Privacy audit of strict geodesic regression on S², joint scheme (DESIGN §8, §12).

Mechanism under audit: ``private_geodesic_regression(Sphere(2), x, y, eps_p, eps_v, tau,
covariate_range=(lo, hi), scheme="joint")``. Covariates are clipped to the public range and
mapped to t ∈ [0, 1]; the release (p, v) has density w.r.t. area(dp) × Lebesgue(dv) on
{(p, v): p ∈ S², v ∈ T_p S², ‖v‖ ≤ max_speed = π}

    f_D(p, v) = exp(−‖(∇_p E, ∇_v E)(p, v; D)‖ / σ) / C_D,
    E(p, v; D) = (1/n) Σ ρ_τ(d(Exp_p(t_i v), y_i))  (Huber: residuals clipped to τ),

σ = 2Δ/(ε_p + ε_v), Δ = √(Δ_p² + Δ_v²), Δ_p = Δ_v = 2τ/n. The oracle's gradients are its own
closed forms (Jacobi fields on S²), verified against finite differences of its own energy in
:mod:`tests.audit.test_oracle`.

(a) Exact log-density ratio. A 4-d product grid (Gauss–Legendre × uniform on S², and a polar
    Gauss–Legendre grid of the tangent disk in an orthonormal frame) normalizes both densities;
    sup |log f_D − log f_D′| is taken over the grid and refined by a local search in (p, v)
    from the best grid points (footpoint moves carry v by parallel transport). The tolerance is
    the change of the log-normalizers when the grid is halved in every direction. Adversarial
    pairs (n = 3, 10, 40): for several shared configurations (all responses at one point, on a
    geodesic, on a noisy geodesic, uniform on S², alternating between antipodes) a vectorized
    random-restart local search over the replaced observation and its replacement (response
    anywhere on S², covariate anywhere in [0, 1] including the clipped ends) maximizes a
    coarse-grid log-ratio, seeded with the configuration that attains the gradient sensitivity
    (v = 0, t = 1, opposite residuals longer than τ).

(b) Black-box distinguishing test on the n = 10 adversarial pair (ε_p = ε_v = 0.5, covariate
    range (−1, 3) with raw covariates outside it): 4000 exact draws (``sampler="exact"``) under
    each. The draws are checked against the oracle's density (Pearson χ²), then the events
    A_c = {log f_D − log f_D′ > c} (and mirrors), thresholds fixed from the oracle before
    sampling (largest anticipated certified log-ratio), get one-sided Clopper–Pearson bounds;
    a certified P_D(A) − e^ε P_D′(A) > δ (δ = Release.delta per draw = 0) fails, family-wise
    false-failure chance ≤ 1e-6/3. Power: the same machinery on draws of the joint
    KNG with σ = Δ/(4ε) (the oracle's own rejection sampler) certifies a violation.
"""

import functools

import numpy as np
import pytest

from dpcore.release import private_geodesic_regression

from . import _oracle as O
from . import _oracle_regression as RG
from . import _regression_mc as R
from ._draws import (
    ALPHA_EACH,
    GOF_ALPHA,
    S2,
    record_only,
    regression_draws,
    require_sampler_keyword,
)
from .contract import Distinguisher, Draws, Exact, MechanismAuditContract

TAU = 0.2
EPS_P = EPS_V = 0.5
EPS = EPS_P + EPS_V
MAX_SPEED = np.pi
SEED = 5_150
N_DRAWS = 4000
P0 = O.normalize(np.array([0.2, -0.3, 0.9]))
E1, E2 = O.tangent_frame(P0)


def _sigma(n):
    return 2 * np.hypot(*O.regression_sensitivity(n, TAU)) / EPS


def _shared_configurations(n, rng):
    k = n - 1
    t = np.linspace(0.0, 1.0, k)
    geo = O.exp(P0, t[:, None] * E1)
    return {
        "one point": (t, np.repeat(P0[None], k, axis=0)),
        "geodesic": (t, geo),
        "noisy geodesic": (t, O.normalize(geo + 0.15 * rng.standard_normal((k, 3)))),
        "uniform": (rng.uniform(size=k), O.uniform_sphere(k, rng)),
        "antipodal clusters": (t, np.where((np.arange(k) % 2 == 0)[:, None], P0, -P0)),
    }


def _t_of(a):
    return np.clip(0.5 + 0.6 * np.tanh(a), 0.0, 1.0)


def _new_obs(a):
    return _t_of(a[..., 2]), O.ball_point(a[..., 0:2], P0, np.pi - 1e-6)


class Oracle:
    """Normalized joint-KNG densities of D and D′ on a product grid of the tangent-disk bundle."""

    def __init__(self, d, e, sigma, n_theta, n_rho):
        self.d, self.e, self.sigma = d, e, sigma  # d, e: (t, y) pairs
        self.grid = O.bundle_grid(n_theta, n_rho, MAX_SPEED)
        pts, vecs, w = self.grid.points, self.grid.vectors, self.grid.weights
        # both data sets' norms at once, the shared observations' terms computed once
        self.g_d, self.g_e = R.joint_gradient_norms(pts, vecs, (d, e), TAU)
        self.log_c_d = O.log_integral(-self.g_d / sigma, w)
        self.log_c_e = O.log_integral(-self.g_e / sigma, w)

    def inside(self, p, v):
        """The support (‖v‖ ≤ max_speed)."""
        return O.norm(v) <= MAX_SPEED

    def _log_f_of(self, g, which, p, v):
        log_c = self.log_c_d if which == "D" else self.log_c_e
        return np.where(self.inside(p, v), -g / self.sigma - log_c, -np.inf)

    def log_f(self, p, v, which="D"):
        data = self.d if which == "D" else self.e
        return self._log_f_of(RG.joint_gradient_norm(p, v, *data, TAU), which, p, v)

    def stat(self, p, v):
        """log f_D − log f_D′ (NaN outside the support, where both densities vanish); the
        numbers of ``log_f(p, v, "D") - log_f(p, v, "E")``."""
        g_d, g_e = R.joint_gradient_norms(p, v, (self.d, self.e), TAU)
        with np.errstate(invalid="ignore"):
            return self._log_f_of(g_d, "D", p, v) - self._log_f_of(g_e, "E", p, v)

    def grid_log_f(self, which="D"):
        if which == "D":
            return -self.g_d / self.sigma - self.log_c_d
        return -self.g_e / self.sigma - self.log_c_e

    def grid_stat(self):
        return self.grid_log_f("D") - self.grid_log_f("E")

    def thresholds(self, n_draws, alpha):
        """Event thresholds from the oracle's grid densities (before sampling)."""
        return O.event_thresholds(self.grid_stat(), self.grid_log_f("D"), self.grid_log_f("E"),
                                  self.grid.weights, n_draws, alpha)

    def sup_abs_stat(self, rng, n_starts=6):
        """sup |stat| over the grid, refined by a local search around the best grid points."""
        s = self.grid_stat()
        best = float(np.max(np.abs(s)))
        for sign in (1.0, -1.0):
            idx = np.argsort(-sign * s)[:n_starts]
            p0, v0 = self.grid.points[idx], self.grid.vectors[idx]
            f1, f2 = O.tangent_frame(p0)

            def moved(a, p0=p0, v0=v0, f1=f1, f2=f2):
                p = O.exp(p0, a[:, 0:1] * f1 + a[:, 1:2] * f2)
                v = O.transport(p0, p, v0 + a[:, 2:3] * f1 + a[:, 3:4] * f2)
                return p, v

            def objective(a, sign=sign, moved=moved):
                val = sign * self.stat(*moved(a))
                return np.where(np.isfinite(val), val, -np.inf)

            _, f = O.local_search(objective, np.zeros((n_starts, 4)), rng, steps=80, scale=0.05)
            best = max(best, float(f.max()))
        return best


@functools.cache
def adversarial_pair(n):
    """((t_D, y_D), (t_D′, y_D′), name) with the largest coarse-grid log-ratio found."""
    return adversarial_search(n, O.bundle_grid(6, 5, MAX_SPEED), np.random.default_rng(SEED + n))


def adversarial_search(n, grid, rng):
    """The pair of neighbouring data sets with the largest log-ratio of the joint targets on
    ``grid`` (a coarse grid of (p, v)): each shared configuration completed by two new
    observations, from crafted starts (residuals just beyond the clip) and random ones, by
    local search. Returns ((t_D, y_D), (t_D′, y_D′), name)."""
    sigma = _sigma(n)
    search = RG.PairSearchGrid(grid, TAU)
    best = (-np.inf, None)
    r = 1.2 * TAU  # residual just beyond the clipping bound
    a_r = np.arctanh(r / (np.pi - 1e-6))
    crafted = np.array([[a_r, 0, 5, -a_r, 0, 5], [0, a_r, 5, 0, -a_r, 5]])
    for name, (t_sh, y_sh) in _shared_configurations(n, rng).items():
        shared = search.shared(t_sh, y_sh)

        def log_f(t_new, y_new, shared=shared):
            return search.log_f(shared, n, sigma, t_new, y_new)

        def objective(a, log_f=log_f):
            return np.max(np.abs(log_f(*_new_obs(a[:, 0:3])) - log_f(*_new_obs(a[:, 3:6]))),
                          axis=1)

        starts = np.vstack([crafted, rng.normal(scale=2.0, size=(14, 6))])
        x, f = O.local_search(objective, starts, rng, steps=30, scale=0.5)
        i = int(np.argmax(f))
        if f[i] > best[0]:
            (t1, y1), (t2, y2) = _new_obs(x[i, 0:3]), _new_obs(x[i, 3:6])
            best = (f[i], ((np.append(t_sh, t1), np.vstack([y_sh, y1])),
                           (np.append(t_sh, t2), np.vstack([y_sh, y2])), name))
    return best[1]


def _regression_exact(n):
    d, e, name = adversarial_pair(n)
    sigma = _sigma(n)
    rel = private_geodesic_regression(S2, d[0], d[1], eps_p=EPS_P, eps_v=EPS_V, tau=TAU,
                                      covariate_range=(0, 1), scheme="joint", rng=SEED,
                                      **record_only(private_geodesic_regression))
    assert rel.sigma["joint"] == pytest.approx(sigma, rel=1e-12)
    assert rel.assumptions["max_speed"]["value"] == pytest.approx(MAX_SPEED)
    fine = Oracle(d, e, sigma, 12, 10)
    half = Oracle(d, e, sigma, 6, 5)
    tol = abs(fine.log_c_d - half.log_c_d) + abs(fine.log_c_e - half.log_c_e)
    sup = fine.sup_abs_stat(np.random.default_rng(SEED))
    pointwise = float(np.max(np.abs(fine.g_d - fine.g_e)))
    delta = np.hypot(*O.regression_sensitivity(n, TAU))
    return Exact(f"S² joint regression n={n} ({name})", sup, EPS, tol, tol_cap=0.02 * EPS,
                 pointwise=pointwise, delta=delta, rtol=1e-9)


# ------------------------------------------------------------------ (b) black box
LO, HI = -1.0, 3.0


def _library_inputs(data):
    """Raw covariates in the public range (−1, 3) for the oracle's t; the ends of [0, 1] are
    given beyond the range, so the library's clipping is exercised."""
    t, y = data
    x = LO + t * (HI - LO)
    x = np.where(t >= 1.0, HI + 0.7, np.where(t <= 0.0, LO - 0.5, x))
    return x, y


def _bins(oracle, which, p, v, edges, p_mode):
    # Level sets of the density only: extra partitions by distance or speed cut through the
    # quadrature cells and biased the grid's bin probabilities (exact draws scored p ~ 1e-3).
    del p_mode
    return np.searchsorted(edges, oracle.log_f(p, v, which))


def _gof_pvalue(oracle, which, p, v, n_levels=8):
    g = oracle.g_d if which == "D" else oracle.g_e
    log_c = oracle.log_c_d if which == "D" else oracle.log_c_e
    pts, vecs, w = oracle.grid.points, oracle.grid.vectors, oracle.grid.weights
    log_f = -g / oracle.sigma - log_c
    edges = O.level_bins(log_f, w, n_levels)
    p_mode = pts[np.argmin(g)]
    probs = np.bincount(_bins(oracle, which, pts, vecs, edges, p_mode),
                        weights=w * np.exp(log_f), minlength=n_levels)
    return O.chi_square_pvalue(_bins(oracle, which, p, v, edges, p_mode), probs)


def _oracle_for_library(factor=1.0):
    """The oracle of the n = 10 adversarial pair as given to the library (σ / ``factor``)."""
    d, e, _ = adversarial_pair(10)
    (x_d, y_d), (x_e, y_e) = _library_inputs(d), _library_inputs(e)
    d = (RG.covariate_t(x_d, LO, HI), y_d)
    e = (RG.covariate_t(x_e, LO, HI), y_e)
    oracle = Oracle(d, e, _sigma(10) / factor, 12, 10)
    return oracle, (x_d, y_d), (x_e, y_e)


def _regression_distinguisher():
    require_sampler_keyword(private_geodesic_regression)
    oracle, (x_d, y_d), (x_e, y_e) = _oracle_for_library()

    def draw():
        kw = dict(eps_p=EPS_P, eps_v=EPS_V, tau=TAU, covariate_range=(LO, HI), scheme="joint",
                  total=N_DRAWS, sampler="exact")
        p_d, v_d, delta_d, rel = regression_draws(x_d, y_d, seed=SEED, **kw)
        p_e, v_e, delta_e, _ = regression_draws(x_e, y_e, seed=SEED + 10_000, **kw)
        assert delta_d == delta_e == 0.0 and rel.diagnostics["joint"]["exact"]
        assert rel.sigma["joint"] == pytest.approx(oracle.sigma, rel=1e-12)
        for p, v in ((p_d, v_d), (p_e, v_e)):
            np.testing.assert_allclose(O.norm(p), 1.0, atol=1e-12)
            np.testing.assert_allclose(O.dot(p, v), 0.0, atol=1e-10)
            assert np.all(O.norm(v) <= MAX_SPEED + 1e-12)
        pvalues = (_gof_pvalue(oracle, "D", p_d, v_d), _gof_pvalue(oracle, "E", p_e, v_e))
        return Draws(oracle.stat(p_d, v_d), oracle.stat(p_e, v_e), delta_d, pvalues)

    return Distinguisher(f"S² joint regression black box (n=10, ε={EPS})",
                         oracle.thresholds(N_DRAWS, ALPHA_EACH), draw, EPS, alpha=ALPHA_EACH,
                         gof_alpha=GOF_ALPHA)


def _regression_broken(factor):
    """Joint KNG with σ/factor, sampled by the oracle's own rejection sampler, is caught."""
    oracle, _, _ = _oracle_for_library(factor)

    def draw():
        return Draws(*RG.oracle_draw_stats(oracle, MAX_SPEED, TAU, oracle.sigma, N_DRAWS, SEED))

    return Distinguisher(f"S² joint regression, σ/{factor} (power)",
                         oracle.thresholds(N_DRAWS, ALPHA_EACH), draw, EPS, alpha=ALPHA_EACH)


class TestS2Regression(MechanismAuditContract):
    """(a) and (b) of the module docstring (the draws' goodness of fit at ``GOF_ALPHA`` of
    tests/audit/_draws.py)."""

    cases = [(3,), (10,), (40,)]
    power_cases = [(8,)]
    exact, distinguisher, broken = _regression_exact, _regression_distinguisher, _regression_broken
