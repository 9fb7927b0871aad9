r"""Privacy audit of strict joint geodesic regression on S² with a footpoint ball (DESIGN §8, §12).

Mechanism under audit: ``private_geodesic_regression(Sphere(2), x, y, eps_p, eps_v, tau,
covariate_range=(lo, hi), scheme="joint", footpoint_radius=r, center=c, max_speed=s)``. The
release (p, v) has density w.r.t. area(dp) × Lebesgue(dv) on the public restricted domain
{(p, v): d(p, c) ≤ r, v ∈ T_p S², ‖v‖ ≤ s}

    f_D(p, v) = exp(−‖(∇_p E, ∇_v E)(p, v; D)‖ / σ) / C_D,   C_D = ∫ over that domain,

the joint KNG of :mod:`tests.audit.test_regression_joint` restricted to the domain and
renormalised there (σ = 2Δ/(ε_p + ε_v), Δ = √2 · 2τ/n). The audit uses only its own oracle
(:mod:`tests.audit._oracle`, :mod:`tests.audit._oracle_regression`); the geometry, gradients and
quadrature are not the library's.
Here r = 0.5 about a centre c that is not the north pole (so a release that ignored ``center``
would put draws outside the domain), and s = 1.

(a) Exact log-density ratio on the restricted domain. A 4-d product grid (geodesic polar
    Gauss–Legendre × uniform grid of the cap B_r(c), polar grid of each tangent disk)
    normalizes both densities on the domain; sup |log f_D − log f_D′| over the grid is refined
    by the local search of the unrestricted audit (moves that leave the domain are refused).
    Tolerance: change of the log-normalizers when the grid is halved in every direction.
    Adversarial pairs (n = 3, 10) are built as in the unrestricted audit (same shared
    configurations, replaced observation and replacement searched anywhere on S² × [0, 1],
    seeded with the sensitivity-attaining configuration), scored on a coarse grid of the
    restricted domain.

(b) Black-box distinguishing test on the n = 3 and n = 10 pairs (ε_p = ε_v = 0.5, covariate
    range (−1, 3) with raw covariates beyond it): 4000 exact library draws
    (``sampler="exact"``) under each data set; the draws must lie in the domain, fit the
    oracle's restricted density (Pearson χ² over 8 level sets of the density; the oracle's own
    exact sampler passes the same test), and no event A_c = {log f_D − log f_D′ > c} (and
    mirrors; thresholds fixed from the oracle before sampling) may certify
    P_D(A) − e^ε P_D′(A) > δ = 0 by one-sided Clopper–Pearson bounds.

(c) Power: the same machinery on draws of the restricted joint KNG with σ = Δ/(4ε) (factor 8
    too small) for the n = 10 pair, made by the oracle's own rejection sampler (uniform
    proposals on the domain), certifies a violation with 700 draws per data set.

Error budget. The certification in (b) is one of the audit's family of black-box privacy
certifications (``N_PRIVACY_TESTS`` = 22 in :mod:`tests.audit._draws`: 3 + 1 on S², 16 on the
other manifolds, 2 of the quantile mechanism), so the family stays at 1e-6 in all: its
``ALPHA_EACH`` = 1e-6/22 is split equally between the two cases (Bonferroni). The six
goodness-of-fit tests of this file (four on library draws, two on the oracle's own draws)
each fail falsely with chance ≤ ``GOF_ALPHA_BALL`` = 1e-9, 6e-9 in all.
(c) fails only for lack of power; its margin is printed.
"""

import functools

import numpy as np
import pytest

from dpcore.release import private_geodesic_regression

from . import _oracle as O
from . import _oracle_regression as RG
from . import _regression_mc as R
from ._draws import ALPHA_EACH, S2, record_only, regression_draws, require_sampler_keyword
from .contract import Distinguisher, Draws, Exact, MechanismAuditContract
from .test_regression_joint import (
    EPS,
    EPS_P,
    EPS_V,
    HI,
    LO,
    N_DRAWS,
    P0,
    SEED,
    TAU,
    Oracle,
    _library_inputs,
    _sigma,
    adversarial_search,
)

#: Public footpoint ball B_R(CENTER) (P0, the shared configurations' anchor, lies inside it).
CENTER = O.normalize(np.array([0.1, -0.1, 1.0]))
RADIUS = 0.5
MAX_SPEED = 1.0
#: Slack of the domain test for points produced in floating point on the boundary.
SUPPORT_SLACK = 1e-9
#: False-failure chance of each goodness-of-fit test of this file (see the module docstring).
GOF_ALPHA_BALL = 1e-9
BALL_SEED = SEED + 700


def restricted_grid(n_rho, n_rho_v):
    """Product grid on {d(p, CENTER) ≤ RADIUS} × {‖v‖ ≤ MAX_SPEED} (area × Lebesgue)."""
    return O.disk_bundle(O.ball_grid(CENTER, RADIUS, n_rho), n_rho_v, MAX_SPEED)


def in_domain(p, v, slack=SUPPORT_SLACK):
    return (O.dist(p, CENTER) <= RADIUS + slack) & (O.norm(v) <= MAX_SPEED + slack)


class BallOracle(Oracle):
    """The joint-KNG densities of D and D′ normalized on the restricted domain."""

    def __init__(self, d, e, sigma, n_rho, n_rho_v):
        self.d, self.e, self.sigma = d, e, sigma
        self.grid = restricted_grid(n_rho, n_rho_v)
        pts, vecs, w = self.grid.points, self.grid.vectors, self.grid.weights
        self.g_d, self.g_e = R.joint_gradient_norms(pts, vecs, (d, e), TAU)
        self.log_c_d = O.log_integral(-self.g_d / sigma, w)
        self.log_c_e = O.log_integral(-self.g_e / sigma, w)

    def inside(self, p, v):
        """The restricted domain (log_f and stat are −∞ / NaN outside it)."""
        return in_domain(p, v)


def fine_oracle(d, e, sigma):
    return BallOracle(d, e, sigma, 12, 10)


def half_oracle(d, e, sigma):
    return BallOracle(d, e, sigma, 6, 5)


@functools.cache
def adversarial_ball_pair(n):
    """((t_D, y_D), (t_D′, y_D′), name) with the largest log-ratio on a coarse restricted grid,
    searched as in :func:`tests.audit.test_regression_joint.adversarial_pair`."""
    assert O.dist(P0, CENTER) < RADIUS  # the shared configurations sit inside the domain
    return adversarial_search(n, restricted_grid(5, 4), np.random.default_rng(BALL_SEED + n))


# ------------------------------------------------------------------ (a) exact ratio
def _ball_exact(n):
    d, e, name = adversarial_ball_pair(n)
    sigma = _sigma(n)
    rel = private_geodesic_regression(S2, d[0], d[1], eps_p=EPS_P, eps_v=EPS_V, tau=TAU,
                                      covariate_range=(0, 1), scheme="joint", rng=SEED,
                                      footpoint_radius=RADIUS, center=CENTER,
                                      max_speed=MAX_SPEED,
                                      **record_only(private_geodesic_regression))
    assert rel.sigma["joint"] == pytest.approx(sigma, rel=1e-12)
    assert rel.assumptions["max_speed"]["value"] == pytest.approx(MAX_SPEED)
    assert rel.assumptions["footpoint_support"]["value"] == pytest.approx(RADIUS)
    np.testing.assert_allclose(rel.assumptions["center"]["value"], CENTER, atol=1e-15)
    fine, half = fine_oracle(d, e, sigma), half_oracle(d, e, sigma)
    tol = abs(fine.log_c_d - half.log_c_d) + abs(fine.log_c_e - half.log_c_e)
    sup = fine.sup_abs_stat(np.random.default_rng(BALL_SEED))
    pointwise = float(np.max(np.abs(fine.g_d - fine.g_e)))
    delta = np.hypot(*O.regression_sensitivity(n, TAU))
    return Exact(f"S² joint regression on B_{RADIUS}(c), ‖v‖ ≤ {MAX_SPEED}, n={n} ({name})",
                 sup, EPS, tol, tol_cap=0.02 * EPS, pointwise=pointwise, delta=delta, rtol=1e-9)


# ------------------------------------------------------------------ (b) black box
#: Sizes n of the black-box runs: a nearly flat target (n = 3) and a concentrated one.
BLACKBOX_CASES = [3, 10]
#: Each black-box case's share of the certification's family-wise budget.
ALPHA_CASE = ALPHA_EACH / len(BLACKBOX_CASES)


def _ball_oracle_for_library(n, factor=1.0):
    """The oracle of the size-``n`` pair as given to the library (σ / ``factor``)."""
    d, e, _ = adversarial_ball_pair(n)
    (x_d, y_d), (x_e, y_e) = _library_inputs(d), _library_inputs(e)
    d = (RG.covariate_t(x_d, LO, HI), y_d)
    e = (RG.covariate_t(x_e, LO, HI), y_e)
    return fine_oracle(d, e, _sigma(n) / factor), (x_d, y_d), (x_e, y_e)


def _gof_pvalue(oracle, which, p, v, n_levels=8):
    """χ² of the draws over ``n_levels`` level sets of the oracle's restricted density."""
    w = oracle.grid.weights
    log_f = oracle.grid_log_f(which)
    edges = O.level_bins(log_f, w, n_levels)
    probs = np.bincount(np.searchsorted(edges, log_f), weights=w * np.exp(log_f),
                        minlength=n_levels)
    return O.chi_square_pvalue(np.searchsorted(edges, oracle.log_f(p, v, which)), probs)


def _oracle_draws(oracle, which, size, rng):
    """Exact draws ∝ exp(−g/σ) on the domain: rejection from uniform proposals on it (the
    draws of ``O.rejection_sample`` with ``RG.joint_gradient_norm``, bit for bit, by
    ``RG.rejection_sample_joint``)."""
    data = oracle.d if which == "D" else oracle.e
    z = RG.rejection_sample_joint(RG.uniform_bundle(MAX_SPEED, CENTER, RADIUS), data, TAU,
                                  oracle.sigma, size, rng, batch=50_000)
    return z[:, 0], z[:, 1]


def _ball_distinguisher(n):
    require_sampler_keyword(private_geodesic_regression)
    oracle, (x_d, y_d), (x_e, y_e) = _ball_oracle_for_library(n)

    def draw():
        kw = dict(eps_p=EPS_P, eps_v=EPS_V, tau=TAU, covariate_range=(LO, HI), scheme="joint",
                  total=N_DRAWS, sampler="exact", footpoint_radius=RADIUS, center=CENTER,
                  max_speed=MAX_SPEED)
        p_d, v_d, delta_d, rel = regression_draws(x_d, y_d, seed=BALL_SEED + n, **kw)
        p_e, v_e, delta_e, _ = regression_draws(x_e, y_e, seed=BALL_SEED + n + 10_000, **kw)
        assert delta_d == delta_e == 0.0 and rel.diagnostics["joint"]["exact"]
        assert rel.sigma["joint"] == pytest.approx(oracle.sigma, rel=1e-12)
        for p, v in ((p_d, v_d), (p_e, v_e)):
            np.testing.assert_allclose(O.norm(p), 1.0, atol=1e-12)
            np.testing.assert_allclose(O.dot(p, v), 0.0, atol=1e-10)
            assert np.all(in_domain(p, v, slack=1e-12))
        print(f"\njoint regression on B_{RADIUS}(c) (n={n}): sampler "
              f"{rel.diagnostics['joint']['sampler']}")
        pvalues = (_gof_pvalue(oracle, "D", p_d, v_d), _gof_pvalue(oracle, "E", p_e, v_e))
        return Draws(oracle.stat(p_d, v_d), oracle.stat(p_e, v_e), delta_d, pvalues)

    return Distinguisher(f"S² joint regression on B_{RADIUS}(c) black box (n={n}, ε={EPS})",
                         oracle.thresholds(N_DRAWS, ALPHA_CASE), draw, EPS, alpha=ALPHA_CASE,
                         gof_alpha=GOF_ALPHA_BALL)


@pytest.mark.statistical
def test_oracle_sampler_fits_restricted_density():
    """The oracle's own restricted sampler fits the binned quadrature the library's draws are
    tested against (on the concentrated case, where the quadrature is hardest)."""
    oracle, _, _ = _ball_oracle_for_library(max(BLACKBOX_CASES))
    rng = np.random.default_rng(BALL_SEED + 1)
    pvalues = [_gof_pvalue(oracle, w, *_oracle_draws(oracle, w, N_DRAWS, rng)) for w in "DE"]
    print(f"\noracle's restricted sampler: χ² p-values {pvalues[0]:.3f}, {pvalues[1]:.3f}")
    assert min(pvalues) > GOF_ALPHA_BALL


# ------------------------------------------------------------------ (c) power
#: Draws per data set of the power test: the oracle's uniform-proposal rejection sampler
#: accepts about 2e-4 of its proposals at σ/8 for n = 10, so 4000 draws would take minutes;
#: fewer draws only weaken the test (measured certified excess +0.08 to +0.13 with 500 draws,
#: +0.15 to +0.19 with 1000, +0.21 with 2000). 700: certified excess +0.162 at the test's seed
#: (BALL_SEED), +0.189 and +0.176 at BALL_SEED + 1, + 2 (thresholds chosen for 700 draws);
#: planned from the event probabilities measured at 1000 draws (P_D(A) ≈ 0.43, P_D′(A) ≈
#: 0.025) the expected excess at 700 is +0.107, about 3.5 standard deviations above 0.
N_POWER_DRAWS = 700


def _ball_broken(n, factor):
    """Restricted joint KNG with σ/factor = Δ/(4ε), sampled by the oracle, is caught.

    (On the nearly flat n = 3 pair the same test at 4000 draws certifies only a log-ratio of
    0.77 < ε = 1: there the black box is a goodness-of-fit and support check.)
    """
    oracle, _, _ = _ball_oracle_for_library(n, factor)

    def draw():
        rng = np.random.default_rng(BALL_SEED)
        return Draws(*[oracle.stat(*_oracle_draws(oracle, w, N_POWER_DRAWS, rng)) for w in "DE"])

    return Distinguisher(f"S² joint regression on B_{RADIUS}(c), n={n}, σ/{factor} (power)",
                         oracle.thresholds(N_POWER_DRAWS, ALPHA_CASE), draw, EPS,
                         alpha=ALPHA_CASE)


class TestS2BallRegression(MechanismAuditContract):
    """(a), (b) and (c) of the module docstring."""

    cases = [(3,), (10,)]
    blackbox_cases = [(n,) for n in BLACKBOX_CASES]
    #: slow_first: about 15 s in CI (the oracle's rejection sampler at σ/8)
    power_cases = [pytest.param(10, 8, marks=pytest.mark.slow_first(15))]
    exact, distinguisher, broken = _ball_exact, _ball_distinguisher, _ball_broken
