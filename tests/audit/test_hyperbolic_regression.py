r"""Privacy audit of strict joint geodesic regression on the hyperbolic plane H².

The same audit as tests/audit/test_spd_regression.py (read its docstring), on H² with the
audit's own hyperboloid geometry (:mod:`tests.audit._hyperbolic_oracle`). The strict joint
release: responses projected onto the public ball B_{τ_m}(C), covariates clipped to the public
range and mapped onto [0, 1], residuals clipped to τ; footpoints restricted to
B_{τ_m+τ}(C), shooting vectors to ‖v‖ ≤ V = 2(τ_m + τ); density
exp(−‖∇_{(p,v)} E_D‖/σ) w.r.t. area in p times Lebesgue measure in T_p, with
σ = 2√(Δ_p² + Δ_v²)/ε and, for κ_l = −1 and c = τ_m + τ, Δ_p = (2τ/n) cosh 2c,
Δ_v = (τ/n) sinh(2c)/c (paper 002, Thm D.1).

The gradient of E_D(p, v) = (1/n) Σ ρ_τ(d(Exp_p(t_i v), y_i)) is taken by central
differences: along Exp_p(s e_k) with v parallel-transported and along v + s e_k, e_k the
boost frame at p. It is checked on a geodesic (a totally geodesic line, where H² is the real
line: 1-d Euclidean regression) and against the library's Jacobi-field gradient.
Integrals over the 4-d support are Monte Carlo over uniform draws with common random numbers.

(a) sup |log f_D − log f_D′| over 100,000 support points (refined by local search) on
    adversarial neighbours, ≤ ε + 6 standard errors of log Z_D − log Z_D′, and
    sup |g_D − g_D′| ≤ √(Δ_p² + Δ_v²).
(b) Black box on 4000 exact library draws per data set, events fixed from the oracle first,
    one-sided Clopper–Pearson; power: the library at 4ε on data sets that differ in every row.

(a) and (b) are the audits of :class:`tests.audit.contract.MechanismAuditContract`
(``TestH2Regression``); the black box has no goodness-of-fit test of the draws (``n_gof=0``).
"""

from __future__ import annotations

import functools
import types

import numpy as np
import pytest

from dpcore.learning.regression import regression_gradient
from dpcore.manifolds import Hyperbolic
from dpcore.release import private_geodesic_regression

from . import _manifold_oracle as M
from . import _oracle as O
from . import _oracle_regression as RG
from . import _regression_mc as R
from ._draws import PER_CALL, record_only
from ._hyperbolic_oracle import dist, exp, frame, log, mink, transport
from ._manifold_draws import ALPHA_EACH, N_DRAWS, regression_draws
from .contract import Distinguisher, Draws, Exact, MechanismAuditContract

H2 = Hyperbolic(2)
CENTER = exp(np.array([1.0, 0.0, 0.0]), np.array([0.0, -0.5, 0.3]))
E1, E2 = frame(CENTER)
TAU_M = 0.6
TAU = 0.2
EPS_P = EPS_V = 0.5
EPS = EPS_P + EPS_V
FOOT_R = TAU_M + TAU
V_MAX = 2.0 * (TAU_M + TAU)
SEED = 1_618
POWER = 4.0  # the power check releases at POWER·ε
FD_H = 1e-5
N_MC = 100_000


def sensitivities(n):
    c = TAU_M + TAU
    return 2 * TAU / n * np.cosh(2 * c), TAU / n * np.sinh(2 * c) / c


def reg_sigma(n, eps=EPS):
    return 2 * np.hypot(*sensitivities(n)) / eps


# ------------------------------------------------------------------------- own calculus
def chart(c):
    """Normal coordinates (..., 2) at C → points."""
    c = np.asarray(c, float)
    return exp(np.broadcast_to(CENTER, c.shape[:-1] + (3,)),
               c[..., 0:1] * E1 + c[..., 1:2] * E2)


def chart_inv(z):
    v = log(np.broadcast_to(CENTER, np.shape(z)), z)
    return np.stack([mink(v, E1), mink(v, E2)], axis=-1)


def term_losses(p, v, t, y):
    """ρ_τ(d(Exp_p(t_i v), y_i)) per observation; p, v (..., 3), t (n,), y (n, 3) → (..., n)."""
    q = exp(p[..., None, :], t[:, None] * v[..., None, :])
    return RG.huber(dist(q, y), TAU)


def energy(p, v, t, y):
    """E(p, v) = (1/n) Σ ρ_τ(d(Exp_p(t_i v), y_i)); p, v (..., 3), t (n,), y (n, 3)."""
    return term_losses(p, v, t, y).mean(axis=-1)


def fd_points(p, v):
    """The points (p′, v′) at which the central differences evaluate E: per frame vector e,
    Exp_p(±h e) with v parallel-transported, then v ± h e (h = FD_H)."""
    out = []
    for e in frame(p):
        w = FD_H * e
        plus, minus = exp(p, w), exp(p, -w)
        out += [(plus, transport(p, plus, v)), (minus, transport(p, minus, v)),
                (p, v + w), (p, v - w)]
    return out


def gradient_coords(p, v, t, y):
    """(∂_p E, ∂_v E) in the frame at p, by central differences (:func:`fd_points`)."""
    return R.fd_gradient_coords(fd_points, energy, FD_H, p, v, t, y)


def gradient_norm(p, v, t, y):
    return R.fd_gradient_norm(gradient_coords, p, v, t, y, dim=3)


def vector_from_coords(p, w):
    e1, e2 = frame(p)
    return w[..., 0:1] * e1 + w[..., 1:2] * e2


def coords_of_vector(p, v):
    e1, e2 = frame(p)
    return np.stack([mink(v, e1), mink(v, e2)], axis=-1)


def uniform_disk(size, rng):
    return np.sqrt(rng.uniform(size=(size, 1))) * O.normalize(rng.normal(size=(size, 2)))


def uniform_support(size, rng):
    """Uniform (area × Lebesgue) draws of B_{τ_m+τ}(C) × {‖v‖ ≤ V}: p, v (size, 3)."""
    rho = np.arccosh(1.0 + rng.uniform(size=size) * (np.cosh(FOOT_R) - 1.0))
    phi = rng.uniform(0, 2 * np.pi, size=size)
    p = chart(np.stack([rho * np.cos(phi), rho * np.sin(phi)], axis=-1))
    return p, vector_from_coords(p, V_MAX * uniform_disk(size, rng))


def support_point(a):
    """Rows of R⁴ → points (p, v) of the open support (smooth, onto), for local searches."""
    p = chart(O.squash_disk(a[..., :2], FOOT_R))
    return p, vector_from_coords(p, O.squash_disk(a[..., 2:], V_MAX))


def response_point(a):
    """Rows of R² → responses in the public ball B_{τ_m}(C)."""
    return chart(O.squash_disk(a, TAU_M))


# ------------------------------------------------------------------------- oracle checks
def test_gradient_on_a_geodesic_is_euclidean_regression():
    """p, v and the responses on one geodesic through C: there H² is the real line, and the
    clipped-residual gradient is −(1/n) Σ (1, t_i) clip(s_i − a − t_i b) along it, 0 across."""
    rng = np.random.default_rng(SEED)
    n = 7
    t = rng.uniform(size=n)
    s = rng.normal(scale=0.5, size=n)
    a, b = rng.normal(scale=0.3, size=20), rng.normal(scale=0.6, size=20)
    line = lambda x: chart(np.stack([x, 0 * x], axis=-1))  # noqa: E731
    p, y = line(a), line(s)
    start = np.broadcast_to(CENTER, p.shape)
    along = transport(start, p, np.broadcast_to(E1, p.shape))  # the line's unit direction
    across = transport(start, p, np.broadcast_to(E2, p.shape))
    v = b[:, None] * along
    gp, gv = (vector_from_coords(p, g) for g in gradient_coords(p, v, t, y))
    r = np.clip(s[None] - a[:, None] - t[None] * b[:, None], -TAU, TAU)
    np.testing.assert_allclose(mink(gp, along), -r.mean(axis=1), atol=1e-7)
    np.testing.assert_allclose(mink(gv, along), -(t[None] * r).mean(axis=1), atol=1e-7)
    np.testing.assert_allclose(mink(gp, across), 0, atol=1e-7)
    np.testing.assert_allclose(mink(gv, across), 0, atol=1e-7)


def test_library_gradient_defines_the_same_target():
    rng = np.random.default_rng(SEED + 1)
    n = 6
    t = rng.uniform(size=n)
    y = response_point(rng.normal(size=(n, 2)))
    p, v = uniform_support(50, rng)
    gp, gv = regression_gradient(H2, p, v, t, y, tau=TAU)
    lib = np.sqrt(H2.norm(p, gp) ** 2 + H2.norm(p, gv) ** 2)
    np.testing.assert_allclose(lib, gradient_norm(p, v, t, y), rtol=1e-6, atol=1e-9)


# ------------------------------------------------------------------------- adversarial pairs
def _shared(n, rng):
    k = n - 1
    t = np.linspace(0.0, 1.0, k)
    far = response_point(np.array([[5.0, -5.0]]))[0]
    return {
        "one point": (t, np.repeat(CENTER[None], k, axis=0)),
        "boundary cluster": (t, np.repeat(far[None], k, axis=0)),
        "geodesic": (t, chart(np.outer(2 * t - 1, [0.5, -0.3]))),
        "uniform": (rng.uniform(size=k), response_point(rng.normal(scale=2.0, size=(k, 2)))),
    }


def support_params(p, v):
    """Approximate inverse of :func:`support_point` (starting rows inside the support)."""
    return np.hstack([np.arctanh(np.clip(chart_inv(p) / FOOT_R, -0.999, 0.999)),
                      np.arctanh(np.clip(coords_of_vector(p, v) / V_MAX, -0.999, 0.999))])


#: This space for :mod:`tests.audit._regression_mc`.
GEOMETRY = types.SimpleNamespace(
    uniform_support=uniform_support, gradient_norm=gradient_norm, support_point=support_point,
    support_params=support_params, response_point=response_point, n_response_params=2,
    terms=R.FDTerms(fd_points, term_losses, FD_H),
)


@functools.cache
def regression_pair(n):
    """Adversarial neighbours of size n (:func:`tests.audit._regression_mc.adversarial_pair`)."""
    return R.adversarial_pair(GEOMETRY, lambda rng: _shared(n, rng),
                              np.random.default_rng(SEED + n))


def mc_oracle(d, e, sigma, size=N_MC, seed=SEED):
    """The Monte Carlo oracle of D and D′ on this space."""
    return R.MonteCarloOracle(GEOMETRY, d, e, sigma, size=size, seed=seed, n_draws=N_DRAWS)


def _record(n, d):
    return private_geodesic_regression(
        H2, d[0], d[1], eps_p=EPS_P, eps_v=EPS_V, tau=TAU, tau_m=TAU_M, center=CENTER,
        covariate_range=(0, 1), scheme="joint", rng=SEED,
        **record_only(private_geodesic_regression))


def _regression_exact(n):
    d, e, name = regression_pair(n)
    rel = _record(n, d)
    sigma = reg_sigma(n)
    assert rel.sigma["joint"] == pytest.approx(sigma, rel=1e-12)
    assert rel.assumptions["max_speed"]["value"] == pytest.approx(V_MAX)
    assert rel.assumptions["footpoint_support"]["value"] == pytest.approx(FOOT_R)
    oracle = mc_oracle(d, e, sigma)
    tol = 6 * oracle.diff_se
    sup = oracle.sup_abs_stat(np.random.default_rng(SEED))
    delta = float(np.hypot(*sensitivities(n)))
    pointwise = float(np.max(np.abs(oracle.g["D"] - oracle.g["E"])))
    return Exact(f"H² joint regression n={n} ({name}; Monte Carlo tol)", sup, EPS, tol,
                 tol_cap=0.05 * EPS, pointwise=pointwise, delta=delta)


def _library_inputs(data):
    """Covariates in a public range (−1, 3), the replaced one outside it; responses given raw:
    the replaced one far outside the ball on the same geodesic from C (projection recovers it)."""
    t, y = data
    lo, hi = -1.0, 3.0
    x = np.where(t >= 1.0, hi + 0.7, np.where(t <= 0.0, lo - 0.5, lo + t * (hi - lo)))
    c = chart_inv(y)
    r = M.norm_last(c)
    edge = r > TAU_M - 1e-6
    c[edge] *= 3.0 / r[edge, None]
    raw = np.where(edge[:, None], chart(c), y)
    return x, raw, (lo, hi)


def _regression_distinguisher():
    n = 10
    d, e, _ = regression_pair(n)
    oracle = mc_oracle(d, e, reg_sigma(n), size=40_000, seed=SEED + 5)
    x_d, y_d, rng_ = _library_inputs(d)
    x_e, y_e, _ = _library_inputs(e)

    def draw():
        kw = dict(eps_p=EPS_P, eps_v=EPS_V, tau=TAU, tau_m=TAU_M, center=CENTER,
                  covariate_range=rng_, total=N_DRAWS, sampler="exact")
        p_d, v_d, delta_d, rel = regression_draws(H2, x_d, y_d, seed=SEED, **kw)
        p_e, v_e, delta_e, _ = regression_draws(H2, x_e, y_e, seed=SEED + 10_000, **kw)
        assert delta_d == delta_e == 0.0 and rel.diagnostics["joint"]["exact"]
        assert rel.guarantee == "private" and rel.epsilon == pytest.approx(PER_CALL * EPS)
        return Draws(oracle.stat(p_d, v_d), oracle.stat(p_e, v_e), delta_d)

    # No goodness-of-fit test of the draws against the Monte Carlo oracle (n_gof=0).
    return Distinguisher("H² joint regression black box (n=10)", oracle.thresholds(ALPHA_EACH),
                         draw, EPS, n_gof=0)


def _regression_broken():
    """The same machinery (4000 exact library draws a side, events fixed in advance from a
    Monte Carlo oracle, Clopper–Pearson at the same α) certifies a violation of ε for a
    release that leaks: the library at POWER·ε on data sets that differ in every row
    (responses mirrored through C). At ε itself even that pair is not distinguishable: at
    n·ε = 10 strict KNG on H² is close to uniform on its support."""
    n = 10
    d, _, _ = regression_pair(n)
    t, y = d
    far = (t, chart(-chart_inv(y)))
    oracle = mc_oracle(d, far, reg_sigma(n, POWER * EPS), size=40_000, seed=SEED + 5)
    x_d, y_d, rng_ = _library_inputs(d)
    x_f, y_f, _ = _library_inputs(far)

    def draw():
        kw = dict(eps_p=POWER * EPS_P, eps_v=POWER * EPS_V, tau=TAU, tau_m=TAU_M,
                  center=CENTER, covariate_range=rng_, total=N_DRAWS, sampler="exact")
        p_d, v_d, _, _ = regression_draws(H2, x_d, y_d, seed=SEED + 1, **kw)
        p_f, v_f, _, _ = regression_draws(H2, x_f, y_f, seed=SEED + 20_000, **kw)
        return Draws(oracle.stat(p_d, v_d), oracle.stat(p_f, v_f))

    return Distinguisher("H² joint regression, every row replaced (power)",
                         oracle.thresholds(ALPHA_EACH), draw, EPS)


@pytest.mark.slow
class TestH2Regression(MechanismAuditContract):
    cases = [(3,), (10,)]
    exact, distinguisher, broken = _regression_exact, _regression_distinguisher, _regression_broken
