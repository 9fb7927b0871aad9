r"""Privacy audit of strict joint geodesic regression on SPD(2) (affine-invariant metric).

The library's strict joint release on a non-compact space with negative curvature (read off
``dpcore.release``; the record is checked): responses projected onto the public ball
B_{τ_m}(C), covariates clipped to the public range and mapped onto [0, 1], residuals clipped to
τ; footpoints restricted to B_{τ_m+τ}(C), shooting vectors to ‖v‖ ≤ V = 2(τ_m + τ); density

.. math:: f_D(p, v) \propto \exp(-\|\nabla_{(p,v)} E_D\| / \sigma), \qquad
          \sigma = 2\sqrt{\Delta_p^2 + \Delta_v^2}/\varepsilon,

w.r.t. the Riemannian volume in p times Lebesgue measure in an orthonormal frame of T_p, with
κ_l = −½ and c = √(−κ_l)(τ_m + τ): Δ_p = (2τ/n) cosh 2c, Δ_v = (τ/n) sinh(2c)/c
(paper 002, Thm D.1).

The oracle is this module's own: SPD(2) geometry from :mod:`tests.audit._manifold_oracle_spd`
(closed-form 2 × 2 calculus, checked there against scipy), parallel transport
Γ_{P→Q} V = E V Eᵀ with E = P^½ exp(½ P^-½ W P^-½) P^-½ (Q = Exp_P W), and the gradient of
E_D(p, v) = (1/n) Σ ρ_τ(d(Exp_p(t_i v), y_i)) (ρ_τ Huber: its gradient is the clipped residual)
by central differences: along Exp_p(s e_k) with v parallel-transported (the papers'
d_p Exp, Jacobi field J(0) = e_k, J′(0) = 0) and along v + s e_k, for an orthonormal frame
e_k = p^½ B_k p^½ of T_p. It is checked against a closed form on the flat of diagonal matrices
(Euclidean regression in log-eigenvalue coordinates) and against the library's Jacobi-field
gradient at random points (both must define the same target).

Six dimensions are too many for product quadrature, so integrals are Monte Carlo over uniform
draws of the support, with common random numbers for D and D′ and a 6-standard-error
tolerance on log Z_D − log Z_D′.

(a) Log-density ratio on adversarial neighbours: a random-restart search over the shared
    configuration, the replaced observation and its replacement maximizes sup |g_D − g_D′| on
    the Monte Carlo points; then sup_z |log f_D − log f_D′| = sup |(g_D′ − g_D)/σ + log Z_D′ −
    log Z_D| is taken over 100,000 support points and refined by a local search, and must be
    ≤ ε (+ the normalizers' tolerance); the sensitivity itself, sup |g_D − g_D′| ≤ √(Δ_p² +
    Δ_v²), is asserted too.
(b) Black box: 4000 library draws per data set (``sampler="exact"``), replaced responses given
    raw far outside the ball and covariates outside the range. Events {log f_D − log f_D′ > c}
    and mirrors, thresholds fixed from the Monte Carlo points before any library draw, one-sided
    Clopper–Pearson; a certified P_D(A) − e^ε P_D′(A) > δ = 0 fails. Power: the same machinery,
    on library draws at 4ε, certifies a violation of ε between data sets differing in every row.

(a) and (b) are the audits of :class:`tests.audit.contract.MechanismAuditContract`
(``TestSPDRegression``); the black box has no goodness-of-fit test of the draws (``n_gof=0``).
"""

from __future__ import annotations

import functools
import hashlib
import types

import numpy as np
import pytest

from dpcore.learning.regression import regression_gradient
from dpcore.manifolds import SPD
from dpcore.release import private_geodesic_regression

from . import _manifold_oracle as M
from . import _manifold_oracle_spd as SP
from . import _oracle as O
from . import _oracle_regression as RG
from . import _regression_mc as R
from ._draws import PER_CALL, record_only
from ._manifold_draws import ALPHA_EACH, N_DRAWS, regression_draws
from .contract import Distinguisher, Draws, Exact, MechanismAuditContract

SPD2 = SPD(2)
C0 = np.array([1.2, 0.9, -0.2])  # public centre [[1.2, -0.2], [-0.2, 0.9]] (not I)
TAU_M = 0.6
TAU = 0.2
EPS_P = EPS_V = 0.5
EPS = EPS_P + EPS_V
FOOT_R = TAU_M + TAU
V_MAX = 2.0 * (TAU_M + TAU)
KAPPA = 0.5  # −κ_l
SEED = 2_718
POWER = 4.0  # the power check releases at POWER·ε
FD_H = 1e-5
N_MC = 100_000


def sensitivities(n):
    c = np.sqrt(KAPPA) * (TAU_M + TAU)
    return 2 * TAU / n * np.cosh(2 * c), TAU / n * np.sinh(2 * c) / c


def reg_sigma(n, eps=EPS):
    return 2 * np.hypot(*sensitivities(n)) / eps


# ------------------------------------------------------------------------- own geometry
def mat(s):
    return SP.to_matrix(s)


def frame(p):
    """Orthonormal frame e_k = p^½ B_k p^½ of T_p, (..., 3, 3) triples (B_k Frobenius-unit)."""
    root = SP.spd_sqrt(p)
    return np.stack([SP.sandwich(root, SP.sym_from_coords(np.eye(3)[k])) for k in range(3)],
                    axis=-2)


def transport(p, w, v):
    """Parallel transport of v from p to Exp_p(w) along the geodesic (matrices E V Eᵀ)."""
    root, inv = mat(SP.spd_sqrt(p)), mat(SP.spd_invsqrt(p))
    half = mat(SP.sym_exp(0.5 * SP.sandwich(SP.spd_invsqrt(p), w)))
    e = root @ half @ inv
    return SP.from_matrix(e @ mat(v) @ np.swapaxes(e, -1, -2))


def term_losses(p, v, t, y):
    """ρ_τ(d(Exp_p(t_i v), y_i)) per observation; p, v (..., 3), t (n,), y (n, 3) → (..., n)."""
    q = SP.spd_exp(p[..., None, :], t[:, None] * v[..., None, :])
    return RG.huber(SP.spd_dist(q, y), TAU)


def energy(p, v, t, y):
    """E(p, v) = (1/n) Σ ρ_τ(d(Exp_p(t_i v), y_i)); p, v (..., 3), t (n,), y (n, 3)."""
    return term_losses(p, v, t, y).mean(axis=-1)


def fd_points(p, v):
    """The points (p′, v′) at which the central differences evaluate E: per frame vector e_k,
    Exp_p(±h e_k) with v parallel-transported, then v ± h e_k (h = FD_H)."""
    e = frame(p)
    out = []
    for k in range(3):
        w = FD_H * e[..., k, :]
        out += [(SP.spd_exp(p, w), transport(p, w, v)), (SP.spd_exp(p, -w), transport(p, -w, v)),
                (p, v + w), (p, v - w)]
    return out


def gradient_coords(p, v, t, y):
    """(∂_p E, ∂_v E) in the orthonormal frame at p, by central differences (:func:`fd_points`)."""
    return R.fd_gradient_coords(fd_points, energy, FD_H, p, v, t, y)


def gradient_norm(p, v, t, y):
    return R.fd_gradient_norm(gradient_coords, p, v, t, y, dim=3)


def vector_from_coords(p, w):
    return np.einsum("...k,...kj->...j", w, frame(p))


def coords_of_vector(p, v):
    return SP.coords_from_sym(SP.sandwich(SP.spd_invsqrt(p), v))


def uniform_support(size, rng):
    """Uniform (Sasaki volume) draws of B_{τ_m+τ}(C) × {‖v‖ ≤ V}: p (size, 3), v (size, 3)."""
    p = SP.spd_chart(SP.spd_uniform_ball(FOOT_R, size, rng), base=C0)
    w = O.uniform_sphere(size, rng) * (V_MAX * rng.uniform(size=(size, 1)) ** (1 / 3))
    return p, vector_from_coords(p, w)


def support_point(a):
    """Rows of R⁶ → points (p, v) of the open support (smooth, onto), for local searches."""
    p = SP.spd_chart(O.squash_disk(a[..., :3], FOOT_R), base=C0)
    return p, vector_from_coords(p, O.squash_disk(a[..., 3:], V_MAX))


def response_point(a):
    """Rows of R³ → responses in the public ball B_{τ_m}(C)."""
    return SP.spd_chart(O.squash_disk(a, TAU_M), base=C0)


# ------------------------------------------------------------------------- oracle checks
def test_gradient_on_the_diagonal_flat_is_euclidean_regression():
    """Diagonal p, v, y: SPD(2) restricted to the flat is R² in log-eigenvalues, where the
    clipped-residual gradient is −(1/n) Σ (1, t_i) ⊗ clip(log y_i − log p − t_i v)."""
    rng = np.random.default_rng(SEED)
    n = 7
    t = rng.uniform(size=n)
    ly = rng.normal(scale=0.4, size=(n, 2))
    lp, lv = rng.normal(scale=0.3, size=(20, 2)), rng.normal(scale=0.5, size=(20, 2))
    diag = lambda a: np.stack([np.exp(a[..., 0]), np.exp(a[..., 1]), 0 * a[..., 0]], -1)  # noqa: E731
    p, y = diag(lp), diag(ly)
    v = np.stack([p[:, 0] * lv[:, 0], p[:, 1] * lv[:, 1], 0 * lv[:, 0]], -1)  # p^½ diag(lv) p^½
    gp, gv = gradient_coords(p, v, t, y)
    r = RG.clip_norm(ly[None] - lp[:, None] - t[None, :, None] * lv[:, None], TAU)
    np.testing.assert_allclose(gp[:, :2], -r.mean(axis=1), atol=1e-8)
    np.testing.assert_allclose(gv[:, :2], -(t[None, :, None] * r).mean(axis=1), atol=1e-8)
    np.testing.assert_allclose(gp[:, 2], 0, atol=1e-8)
    np.testing.assert_allclose(gv[:, 2], 0, atol=1e-8)


def test_library_gradient_defines_the_same_target():
    rng = np.random.default_rng(SEED + 1)
    n = 6
    t = rng.uniform(size=n)
    y = response_point(rng.normal(size=(n, 3)))
    p, v = uniform_support(50, rng)
    gp, gv = regression_gradient(SPD2, mat(p), mat(v), t, mat(y), tau=TAU)
    lib = np.sqrt(SPD2.norm(mat(p), gp) ** 2 + SPD2.norm(mat(p), gv) ** 2)
    np.testing.assert_allclose(lib, gradient_norm(p, v, t, y), rtol=1e-6, atol=1e-9)


# ------------------------------------------------------------------------- adversarial pairs
def _shared(n, rng):
    k = n - 1
    t = np.linspace(0.0, 1.0, k)
    far = response_point(np.array([[5.0, -5.0, 5.0]]))[0]
    return {
        "one point": (t, np.repeat(C0[None], k, axis=0)),
        "boundary cluster": (t, np.repeat(far[None], k, axis=0)),
        "geodesic": (t, SP.spd_chart(np.outer(2 * t - 1, [0.5, -0.3, 0.2]), base=C0)),
        "uniform": (rng.uniform(size=k), response_point(rng.normal(scale=2.0, size=(k, 3)))),
    }


def support_params(p, v):
    """Approximate inverse of :func:`support_point` (starting rows inside the support)."""
    c_p = SP.spd_chart_inv(p, C0)
    c_v = coords_of_vector(p, v)
    return np.hstack([np.arctanh(np.clip(c_p / FOOT_R, -0.999, 0.999)),
                      np.arctanh(np.clip(c_v / V_MAX, -0.999, 0.999))])


#: This space for :mod:`tests.audit._regression_mc`.
GEOMETRY = types.SimpleNamespace(
    uniform_support=uniform_support, gradient_norm=gradient_norm, support_point=support_point,
    support_params=support_params, response_point=response_point, n_response_params=3,
    terms=R.FDTerms(fd_points, term_losses, FD_H),
)


#: Monte Carlo points of the black-box oracles: the distinguisher and the power check draw
#: the same 40,000 points (same size and seed) and share the data set D.
BLACKBOX_MC = 40_000
_KEPT = {}  # the black-box points' SharedTerms, by the points' bytes; emptied after the module


@pytest.fixture(autouse=True, scope="module")
def _forget_kept_columns():
    yield
    _KEPT.clear()


def _gradient_norms(p, v, datasets):
    """``gradient_norm`` of several data sets at the same points, as
    :func:`tests.audit._regression_mc.gradient_norms` computes them (``SharedTerms``: each
    observation's columns computed once, the norms bit for bit ``gradient_norm``'s). On the
    black-box oracles' points the columns are also kept for the module, so the power check
    reuses those of D that the distinguisher computed (about half of its oracle's work)."""
    if p.shape[0] != BLACKBOX_MC:
        return R.SharedTerms(GEOMETRY, p, v).norms(datasets)
    key = hashlib.sha256(p.tobytes() + v.tobytes()).digest()
    if key not in _KEPT:
        _KEPT[key] = R.SharedTerms(GEOMETRY, p, v)
    for t, y in datasets:
        _KEPT[key].pin(t, y)
    return _KEPT[key].norms(datasets)


GEOMETRY.gradient_norms = _gradient_norms


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
        SPD2, d[0], mat(d[1]), eps_p=EPS_P, eps_v=EPS_V, tau=TAU, tau_m=TAU_M,
        center=mat(C0), covariate_range=(0, 1), scheme="joint", rng=SEED,
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
    return Exact(f"SPD(2) joint regression n={n} ({name}; Monte Carlo tol)", sup, EPS, tol,
                 tol_cap=0.05 * EPS, pointwise=pointwise, delta=delta)


def _library_inputs(data):
    """Covariates in a public range (−1, 3), the replaced one outside it; responses given raw:
    the replaced one far outside the ball on the same geodesic from C (projection recovers it)."""
    t, y = data
    lo, hi = -1.0, 3.0
    x = np.where(t >= 1.0, hi + 0.7, np.where(t <= 0.0, lo - 0.5, lo + t * (hi - lo)))
    c = SP.spd_chart_inv(y, C0)
    r = M.norm_last(c)
    edge = r > TAU_M - 1e-6
    c[edge] *= 3.0 / r[edge, None]
    raw = np.where(edge[:, None], SP.spd_chart(c, base=C0), y)
    return x, mat(raw), (lo, hi)


def _regression_distinguisher():
    n = 10
    d, e, _ = regression_pair(n)
    oracle = mc_oracle(d, e, reg_sigma(n), size=BLACKBOX_MC, seed=SEED + 5)
    x_d, y_d, rng_ = _library_inputs(d)
    x_e, y_e, _ = _library_inputs(e)

    def draw():
        kw = dict(eps_p=EPS_P, eps_v=EPS_V, tau=TAU, tau_m=TAU_M, center=mat(C0),
                  covariate_range=rng_, total=N_DRAWS, sampler="exact")
        p_d, v_d, delta_d, rel = regression_draws(SPD2, x_d, y_d, seed=SEED, **kw)
        p_e, v_e, delta_e, _ = regression_draws(SPD2, x_e, y_e, seed=SEED + 10_000, **kw)
        assert delta_d == delta_e == 0.0 and rel.diagnostics["joint"]["exact"]
        assert rel.guarantee == "private" and rel.epsilon == pytest.approx(PER_CALL * EPS)
        return Draws(oracle.stat(SP.from_matrix(p_d), SP.from_matrix(v_d)),
                     oracle.stat(SP.from_matrix(p_e), SP.from_matrix(v_e)), delta_d)

    # No goodness-of-fit test of the draws against the Monte Carlo oracle (n_gof=0).
    return Distinguisher("SPD(2) joint regression black box (n=10)",
                         oracle.thresholds(ALPHA_EACH), draw, EPS, n_gof=0)


def _regression_broken():
    """The same machinery (4000 exact library draws a side, events fixed in advance from a
    Monte Carlo oracle, Clopper–Pearson at the same α) certifies a violation of ε for a
    release that leaks: the library at POWER·ε on data sets that differ in every row
    (responses mirrored through C). At ε itself even that pair is not distinguishable: at
    n·ε = 10 strict KNG on SPD(2) is close to uniform on its support."""
    n = 10
    d, _, _ = regression_pair(n)
    t, y = d
    far = (t, SP.spd_chart(-SP.spd_chart_inv(y, C0), base=C0))
    oracle = mc_oracle(d, far, reg_sigma(n, POWER * EPS), size=BLACKBOX_MC, seed=SEED + 5)
    x_d, y_d, rng_ = _library_inputs(d)
    x_f, y_f, _ = _library_inputs(far)

    def draw():
        kw = dict(eps_p=POWER * EPS_P, eps_v=POWER * EPS_V, tau=TAU, tau_m=TAU_M,
                  center=mat(C0), covariate_range=rng_, total=N_DRAWS, sampler="exact")
        p_d, v_d, _, _ = regression_draws(SPD2, x_d, y_d, seed=SEED + 1, **kw)
        p_f, v_f, _, _ = regression_draws(SPD2, x_f, y_f, seed=SEED + 20_000, **kw)
        return Draws(oracle.stat(SP.from_matrix(p_d), SP.from_matrix(v_d)),
                     oracle.stat(SP.from_matrix(p_f), SP.from_matrix(v_f)))

    return Distinguisher("SPD(2) joint regression, every row replaced (power)",
                         oracle.thresholds(ALPHA_EACH), draw, EPS)


@pytest.mark.slow
class TestSPDRegression(MechanismAuditContract):
    """(a) and (b) of the module docstring. The audits share regression_pair (cached) and, on
    the black-box points, D's columns (_KEPT), so they start first together (slow_first)."""

    cases = [pytest.param(3, marks=pytest.mark.slow_first(5)),
             pytest.param(10, marks=pytest.mark.slow_first(5))]
    blackbox_cases = [pytest.param(marks=pytest.mark.slow_first(10))]
    power_cases = [pytest.param(marks=pytest.mark.slow_first(20))]
    exact, distinguisher, broken = _regression_exact, _regression_distinguisher, _regression_broken
