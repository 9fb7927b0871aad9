"""Privacy accounting: pure-DP composition and Gaussian differential privacy (GDP).

Gaussian differential privacy (paper 004, Definition 3.1): a mechanism is µ-GDP when it is
(ε, δ_µ(ε))-DP for every ε ≥ 0, with

    δ_µ(ε) = Φ(−ε/µ + µ/2) − e^ε Φ(−ε/µ − µ/2).

A mechanism whose privacy profile is δ(ε) is therefore µ-GDP for µ = max_ε µ_ε, where µ_ε solves
δ_{µ_ε}(ε) = δ(ε). This module computes that µ for the Riemannian Gaussian mechanism
(density ∝ exp(−d(η, y)² / (2σ²)) around the true value η):

- on R^d exactly, µ = Δ/σ;
- on the circle S¹ exactly, from the closed-form profile (paper 004, Corollary 3.2.1 and
  Algorithm 1): :func:`privacy_profile_circle`, :func:`gdp_mu_circle`;
- on other homogeneous manifolds by Monte Carlo (paper 004, Algorithm 2):
  :func:`gdp_mu_monte_carlo`, which also reports the Monte Carlo standard error.

:func:`calibrate_sigma` inverts these: the smallest rate σ that meets a target µ. Conversions
between ε-DP and GDP (:func:`eps_to_mu`, :func:`mu_to_eps`), composition
(:func:`compose_dp`, :func:`compose_gdp`) and the GDP trade-off curve (:func:`tradeoff_gdp`)
complete the accounting. All numerics are done in log space so that tiny δ and large ε neither
underflow to spurious zeros nor produce ``inf * 0``.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from scipy import optimize, special

from ._validation import as_float_array, check_int, check_positive
from .manifolds.base import Manifold
from .settings import check_limit

__all__ = [
    "calibrate_sigma",
    "compose_dp",
    "compose_gdp",
    "delta_mu",
    "eps_to_mu",
    "gdp_mu_circle",
    "gdp_mu_monte_carlo",
    "mu_from_delta",
    "mu_to_eps",
    "privacy_profile_circle",
    "tradeoff_gdp",
]

_SQRT2 = math.sqrt(2.0)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


# --------------------------------------------------------------------------- validation
def _nonneg_array(value, name: str, *, allow_inf: bool = True) -> np.ndarray:
    """``value`` as a float array after checking every entry is a non-negative number."""
    if value is None or isinstance(value, (bool, str, bytes)):
        raise TypeError(
            f"`{name}` must be a real number or an array of them, got {type(value).__name__}."
        )
    arr = as_float_array(value, name)
    bad = np.isnan(arr) | (arr < 0)
    if not allow_inf:
        bad |= np.isinf(arr)
    if np.any(bad):
        first = float(arr[bad].flat[0])
        kind = "non-negative" if allow_inf else "non-negative and finite"
        raise ValueError(f"`{name}` must be {kind}, got {first!r}.")
    return arr


def _nonneg_values(values, name: str) -> np.ndarray:
    """A flat float array from a scalar, an array or any iterable of non-negative numbers."""
    if not isinstance(values, (list, tuple, np.ndarray, str, bytes)) and hasattr(
        values, "__iter__"
    ):
        values = list(values)
    return _nonneg_array(values, name).ravel()


def _out(arr: np.ndarray, *inputs) -> float | np.ndarray:
    """Return a Python float when every input was a scalar, else the array."""
    if all(np.ndim(x) == 0 for x in inputs):
        return float(arr)
    return arr


def _check_sensitivity(sensitivity, upper: float = np.inf) -> float:
    sensitivity = check_positive(sensitivity, "sensitivity")
    if sensitivity > upper:
        raise ValueError(
            f"`sensitivity` must be at most {upper!r} (no two points are farther apart), "
            f"got {sensitivity!r}."
        )
    return sensitivity


# --------------------------------------------------------------------------- numerics
def _log_ndtr_diff(lo, hi):
    """log(Φ(hi) − Φ(lo)) for lo ≤ hi, accurate in both tails and for short intervals."""
    lo, hi = np.broadcast_arrays(np.asarray(lo, dtype=float), np.asarray(hi, dtype=float))
    flip = lo > 0
    a = np.where(flip, -hi, lo)  # reflect an upper-tail interval into the lower tail
    b = np.where(flip, -lo, hi)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        la = special.log_ndtr(a)
        lb = special.log_ndtr(b)
        tail = lb + np.log(-np.expm1(np.minimum(la - lb, 0.0)))
        across = np.log(0.5 * (special.erf(b / _SQRT2) + special.erf(-a / _SQRT2)))
    out = np.where(b <= 0, tail, across)
    return np.where(a < b, out, -np.inf)


def _log_delta_mu(eps, mu):
    """log δ_µ(ε) for arrays ε ≥ 0, µ ≥ 0 (no validation)."""
    eps, mu = np.broadcast_arrays(np.asarray(eps, dtype=float), np.asarray(mu, dtype=float))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        r = eps / mu
        la = special.log_ndtr(mu / 2 - r)
        lb = special.log_ndtr(-mu / 2 - r)
        # δ = Φ(a) (1 − e^{ε + log Φ(b) − log Φ(a)}); the exponent is ≤ 0 because δ ≥ 0.
        out = la + np.log(-np.expm1(np.minimum(eps + lb - la, 0.0)))
        # ε = 0: δ_µ(0) = Φ(µ/2) − Φ(−µ/2) = erf(µ / (2√2)), accurate also for small µ.
        out = np.where(eps == 0, np.log(special.erf(mu / (2 * _SQRT2))), out)
    out = np.where(np.isneginf(la), -np.inf, out)
    out = np.where(np.isposinf(mu) & np.isfinite(eps), 0.0, out)
    return np.where((mu == 0) | np.isposinf(eps), -np.inf, out)


def _log1m_delta_mu(eps, mu):
    """log(1 − δ_µ(ε)) = log(Φ(ε/µ − µ/2) + e^ε Φ(−ε/µ − µ/2)) for ε ≥ 0 and finite µ > 0."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        r = eps / mu
        return np.logaddexp(special.log_ndtr(r - mu / 2), eps + special.log_ndtr(-r - mu / 2))


def _mu_lower_bound(eps, z):
    """µ solving µ/2 − ε/µ = z, i.e. Φ(µ/2 − ε/µ) = Φ(z).

    Since δ_µ(ε) ≤ Φ(µ/2 − ε/µ), with z = Φ⁻¹(δ) this is a lower bound on µ_ε.
    """
    root = np.sqrt(z * z + 2 * eps)
    # z + sqrt(z² + 2ε), written without cancellation when z < 0.
    return np.where(z < 0, 2 * eps / np.maximum(root - z, 1e-300), z + root)


def _solve_mu(eps, log_delta, mu0=None, *, log1m_delta=None, tol=1e-12, max_iter=200):
    """µ_ε with δ_{µ_ε}(ε) = δ, elementwise, by safeguarded Newton in log µ.

    ``log_delta`` is log δ; ``log1m_delta`` optionally log(1 − δ), which keeps δ close to 1
    (large µ) resolved: where δ > 1/2 the equation is solved for 1 − δ instead. Uses
    ∂δ_µ(ε)/∂µ = φ(ε/µ − µ/2), which follows from e^ε φ(ε/µ + µ/2) = φ(ε/µ − µ/2).
    ``mu0`` is an optional starting point (e.g. the solution for a nearby δ).
    """
    eps, log_delta = np.broadcast_arrays(
        np.asarray(eps, dtype=float), np.asarray(log_delta, dtype=float)
    )
    if log1m_delta is None:
        with np.errstate(divide="ignore"):
            log1m_delta = np.log(-np.expm1(np.minimum(log_delta, 0.0)))
    log1m_delta = np.broadcast_to(np.asarray(log1m_delta, dtype=float), eps.shape)
    upper = log_delta > -math.log(2.0)
    out = np.zeros(eps.shape)
    out[np.isneginf(log1m_delta)] = np.inf
    with np.errstate(over="ignore"):
        # δ_µ(0) = erf(µ / (2√2)) = 1 − 2 Φ(−µ/2) inverts in closed form.
        low0 = (eps == 0) & ~upper
        out[low0] = 2 * _SQRT2 * special.erfinv(np.exp(log_delta[low0]))
        up0 = (eps == 0) & upper & np.isfinite(log1m_delta)
        out[up0] = -2 * special.ndtri_exp(log1m_delta[up0] - math.log(2.0))
    work = np.flatnonzero((eps > 0) & np.isfinite(log_delta) & np.isfinite(log1m_delta))
    if work.size == 0:
        return out
    e = eps.flat[work]
    up = upper.flat[work]
    t = np.where(up, log1m_delta.flat[work], log_delta.flat[work])
    z0 = np.where(up, -special.ndtri_exp(np.where(up, t, -1.0)), special.ndtri_exp(t))
    lo = np.log(np.maximum(_mu_lower_bound(e, z0), 1e-300))
    hi = np.full(e.shape, np.inf)
    s = lo.copy()
    if mu0 is not None:
        guess = np.broadcast_to(np.asarray(mu0, dtype=float), eps.shape).flat[work]
        ok = np.isfinite(guess) & (guess > 0)
        s = np.where(ok, np.log(np.where(ok, guess, 1.0)), s)
    active = np.arange(e.size)
    for _ in range(max_iter):
        ea, ta, sa, ua = e[active], t[active], s[active], up[active]
        mu = np.exp(sa)
        # g increases with µ in both branches: log δ_µ − log δ, or log(1 − δ) − log(1 − δ_µ).
        level = np.where(ua, _log1m_delta_mu(ea, mu), _log_delta_mu(ea, mu))
        g = np.where(ua, ta - level, level - ta)
        lo[active] = np.where(g < 0, sa, lo[active])
        hi[active] = np.where(g > 0, sa, hi[active])
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            z = ea / mu - mu / 2
            slope = np.exp(sa - 0.5 * z * z - _LOG_SQRT_2PI - level)
            new = sa - g / slope
        la, ha = lo[active], hi[active]
        outside = ~np.isfinite(new) | (new <= la) | (new >= ha)
        fallback = np.where(np.isfinite(ha), 0.5 * (la + ha), la + 1.0)
        new = np.where(outside, fallback, new)
        s[active] = new
        done = (np.abs(new - sa) <= tol) | (g == 0) | (ha - la <= tol)
        active = active[~done]
        if active.size == 0:
            break
    out.flat[work] = np.exp(s)
    return out


# --------------------------------------------------------------------------- GDP basics
def delta_mu(eps, mu):
    r"""Privacy profile of µ-GDP: δ_µ(ε) = Φ(−ε/µ + µ/2) − e^ε Φ(−ε/µ − µ/2).

    A mechanism is µ-GDP if and only if it is (ε, δ_µ(ε))-DP for all ε ≥ 0 (paper 004,
    Definition 3.1). Evaluated in log space, so large ε gives a tiny positive number rather
    than ``inf * 0`` or a negative rounding error.

    Parameters
    ----------
    eps : float or array_like
        Privacy parameter(s) ε ≥ 0 (``inf`` allowed, giving 0).
    mu : float or array_like
        GDP parameter(s) µ ≥ 0 (``inf`` allowed, giving 1); broadcast against ``eps``.

    Returns
    -------
    float or ndarray
        δ_µ(ε) in [0, 1]; a float when both inputs are scalars.

    Examples
    --------
    >>> round(delta_mu(0.0, 1.0), 6)  # 2 Φ(1/2) − 1
    0.382925
    """
    e = _nonneg_array(eps, "eps")
    m = _nonneg_array(mu, "mu")
    with np.errstate(under="ignore"):
        return _out(np.exp(_log_delta_mu(e, m)), eps, mu)


def mu_from_delta(eps, delta):
    r"""The µ_ε with δ_{µ_ε}(ε) = δ, elementwise (the inverse of :func:`delta_mu` in µ).

    For a mechanism with privacy profile δ(ε), its GDP parameter is ``max`` over ε of
    ``mu_from_delta(eps, delta(eps))`` (paper 004, Theorem 3.2).

    Parameters
    ----------
    eps : float or array_like
        ε ≥ 0.
    delta : float or array_like
        δ in [0, 1], broadcast against ``eps``. δ = 0 gives µ = 0 and δ = 1 gives ``inf``.

    Returns
    -------
    float or ndarray
        µ_ε ≥ 0, solved to about 1e-12 relative accuracy.
    """
    e = _nonneg_array(eps, "eps")
    d = _nonneg_array(delta, "delta")
    if np.any(d > 1):
        raise ValueError(f"`delta` must be at most 1, got {float(d[d > 1].flat[0])!r}.")
    with np.errstate(divide="ignore"):
        return _out(_solve_mu(e, np.log(d)), eps, delta)


def eps_to_mu(eps):
    r"""GDP parameter implied by pure ε-DP: µ = −2 Φ⁻¹(1 / (1 + e^ε)).

    An ε-DP mechanism is µ-GDP with this µ (Liu et al. 2022, quoted in paper 004 §5); it is how
    the Laplace mechanism is compared with the Gaussian one at equal µ.

    Parameters
    ----------
    eps : float or array_like
        ε ≥ 0 (``inf`` gives ``inf``).

    Returns
    -------
    float or ndarray
        µ ≥ 0. Accurate for tiny ε (µ ≈ ε √(π/2)) and for huge ε (µ ≈ 2√(2ε)).
    """
    e = _nonneg_array(eps, "eps")
    with np.errstate(over="ignore"):
        # Φ⁻¹(1/(1+e^ε)) = −√2 erfinv(tanh(ε/2)): exact and cancellation-free for small ε.
        small = 2 * _SQRT2 * special.erfinv(np.tanh(np.minimum(e, 2.0) / 2))
        # log(1/(1+e^ε)) = −(ε + log1p(e^−ε)); ndtri_exp never underflows.
        large = -2 * special.ndtri_exp(-(e + np.log1p(np.exp(-e))))
    return _out(np.where(e < 2.0, small, large), eps)


def mu_to_eps(mu):
    r"""Inverse of :func:`eps_to_mu`: ε = log(Φ(µ/2) / Φ(−µ/2)).

    With q = Φ(−µ/2), :func:`eps_to_mu` reads q = 1/(1 + e^ε), so e^ε = (1 − q)/q.

    Parameters
    ----------
    mu : float or array_like
        µ ≥ 0 (``inf`` gives ``inf``).

    Returns
    -------
    float or ndarray
        ε ≥ 0.
    """
    m = _nonneg_array(mu, "mu")
    # tanh(ε/2) = erf(µ/(2√2)) for small µ; a difference of log Φ's where that saturates.
    small = 2 * np.arctanh(special.erf(np.minimum(m, 2.0) / (2 * _SQRT2)))
    with np.errstate(invalid="ignore"):
        large = special.log_ndtr(m / 2) - special.log_ndtr(-m / 2)
    return _out(np.where(m < 2.0, small, large), mu)


def compose_gdp(mus) -> float:
    r"""GDP parameter of the composition of µ_i-GDP mechanisms: √(Σ µ_i²).

    Parameters
    ----------
    mus : iterable of float
        Non-negative GDP parameters (an empty collection gives 0).

    Returns
    -------
    float
    """
    m = _nonneg_values(mus, "mus")
    return float(np.linalg.norm(m)) if m.size else 0.0


def compose_dp(epsilons) -> float:
    r"""Pure ε-DP budget of a sequential composition: Σ ε_i.

    Parameters
    ----------
    epsilons : iterable of float
        Non-negative budgets (an empty collection gives 0).

    Returns
    -------
    float
    """
    e = _nonneg_values(epsilons, "epsilons")
    return float(np.sum(e))


def tradeoff_gdp(alpha, mu):
    r"""GDP trade-off curve G_µ(α) = Φ(Φ⁻¹(1 − α) − µ).

    The smallest type II error of a test between N(0, 1) and N(µ, 1) at type I error α; a
    mechanism is µ-GDP when no test between neighbouring datasets does better (paper 004,
    Definition 2.2).

    Parameters
    ----------
    alpha : float or array_like
        Type I error(s) in [0, 1].
    mu : float or array_like
        µ ≥ 0, broadcast against ``alpha``.

    Returns
    -------
    float or ndarray
        Type II error(s) in [0, 1].
    """
    a = _nonneg_array(alpha, "alpha")
    if np.any(a > 1):
        raise ValueError(f"`alpha` must be at most 1, got {float(a[a > 1].flat[0])!r}.")
    m = _nonneg_array(mu, "mu")
    # Φ⁻¹(1 − α) = −Φ⁻¹(α), which keeps small α accurate.
    with np.errstate(invalid="ignore"):
        out = special.ndtr(-special.ndtri(a) - m)
    out = np.where(np.isposinf(m), 0.0, out)
    return _out(out, alpha, mu)


# --------------------------------------------------------------------------- circle S¹
def _circle_log_profile(eps, sigma, sensitivity):
    r"""log δ(ε) and log(1 − δ(ε)) of the Riemannian Gaussian mechanism on S¹ (ε ≥ 0).

    Put the centres at angles η = −Δ/2 and η' = Δ/2. The privacy loss
    L(θ) = [d(θ, η')² − d(θ, η)²] / (2σ²) is −Δθ/σ² on the arc |θ| ≤ π − Δ/2 and
    2(π − Δ/2)(θ + π)/σ² on (−π, −π + Δ/2), so for 0 ≤ ε < Δ(2π − Δ)/(2σ²) the set {L > ε}
    (the set A of paper 004, Corollary 3.2.1) is the single arc (a, b) with
    a = −π + εσ²/(2π − Δ) and b = −εσ²/Δ, and it is empty beyond. On (a, b) the distance to η
    never wraps; the distance to η' wraps on (a, −π + Δ/2), where it equals θ + 2π − Δ/2.
    Both densities share the constant Z = σ√(2π) (2Φ(π/σ) − 1), so the probabilities are
    differences of Φ, and δ(ε) = P_η(A) − e^ε P_η'(A). The complement
    1 − δ(ε) = P_η(outside A) + e^ε P_η'(A) is a sum of such terms, which keeps µ resolved
    when δ(0) is within rounding of 1 (µ above about 16).
    """
    eps = np.asarray(eps, dtype=float)
    pi, half = math.pi, sensitivity / 2
    a = -pi + eps * sigma**2 / (2 * pi - sensitivity)
    b = -eps * sigma**2 / sensitivity
    log_z = math.log(math.erf(pi / (sigma * _SQRT2)))
    log_p = _log_ndtr_diff((a + half) / sigma, (b + half) / sigma) - log_z
    wrapped = _log_ndtr_diff((a + 2 * pi - half) / sigma, np.full_like(a, pi / sigma))
    direct = _log_ndtr_diff(np.full_like(b, -pi / sigma), (b - half) / sigma)
    log_q = np.logaddexp(wrapped, direct) - log_z
    with np.errstate(divide="ignore", invalid="ignore"):
        out = log_p + np.log(-np.expm1(np.minimum(eps + log_q - log_p, 0.0)))
    # 1 − P_η(A): the two arcs of the circle around η left and right of A.
    log_rest = (
        np.logaddexp(
            _log_ndtr_diff((b + half) / sigma, np.full_like(b, pi / sigma)),
            _log_ndtr_diff(np.full_like(a, -pi / sigma), (a + half) / sigma),
        )
        - log_z
    )
    log1m = np.logaddexp(log_rest, eps + log_q)
    empty = ~np.isfinite(log_p)
    return np.where(empty, -np.inf, out), np.where(empty, 0.0, np.minimum(log1m, 0.0))


def privacy_profile_circle(eps, sigma, sensitivity):
    r"""Exact privacy profile δ(ε) of the Riemannian Gaussian mechanism on the circle S¹.

    The mechanism releases an angle with density ∝ exp(−d(η, θ)²/(2σ²)) (arc-length distance
    d). δ(ε) is the smallest δ for which it is (ε, δ)-DP over centres at distance
    ``sensitivity`` (paper 004, Corollary 3.2.1), computed in closed form from normal CDFs.

    Parameters
    ----------
    eps : float or array_like
        ε ≥ 0.
    sigma : float
        Rate σ > 0.
    sensitivity : float
        Arc distance Δ between neighbouring outputs, 0 < Δ ≤ π.

    Returns
    -------
    float or ndarray
        δ(ε) ≥ 0; it is exactly 0 for ε ≥ Δ(2π − Δ)/(2σ²), the largest possible privacy loss.
    """
    e = _nonneg_array(eps, "eps")
    sigma = check_positive(sigma, "sigma")
    sensitivity = _check_sensitivity(sensitivity, math.pi)
    with np.errstate(under="ignore"):
        return _out(np.exp(_circle_log_profile(e, sigma, sensitivity)[0]), eps)


def gdp_mu_circle(sigma, sensitivity, *, n_eps: int = 1000) -> float:
    r"""Exact GDP parameter µ of the Riemannian Gaussian mechanism on S¹ (paper 004, Alg. 1).

    µ = max over ε of µ_ε, where δ_{µ_ε}(ε) equals the exact profile of
    :func:`privacy_profile_circle`. The maximum is located on a grid of ``n_eps`` values of ε
    spanning [0, Δ(2π − Δ)/(2σ²)] (the full range of the privacy loss) and then refined with a
    bounded scalar optimiser. For small σ the result tends to the Euclidean µ = Δ/σ; for larger
    σ it is smaller, since the circle is compact.

    Parameters
    ----------
    sigma : float
        Rate σ > 0.
    sensitivity : float
        Arc distance Δ between neighbouring outputs, 0 < Δ ≤ π.
    n_eps : int, optional
        Size of the ε grid before refinement.

    Returns
    -------
    float
        µ such that the mechanism is µ-GDP and no smaller µ works.

    Notes
    -----
    Paper 004 scans ε ∈ (0, πΔ/(2σ²)] as printed; the privacy loss on S¹ actually reaches
    Δ(2π − Δ)/(2σ²), so the whole range is scanned here, including ε = 0. In every case we
    checked, µ_ε is non-increasing in ε (up to rounding), so µ = 2 Φ⁻¹((1 + δ(0))/2) with δ(0)
    the total variation distance; the scan does not rely on that.
    """
    sigma = check_positive(sigma, "sigma")
    sensitivity = _check_sensitivity(sensitivity, math.pi)
    n_eps = check_int(n_eps, "n_eps", minimum=2)
    eps_sup = sensitivity * (2 * math.pi - sensitivity) / (2 * sigma**2)
    grid = np.linspace(0.0, eps_sup, n_eps + 1)[:-1]
    log_delta, log1m_delta = _circle_log_profile(grid, sigma, sensitivity)
    mus = _solve_mu(grid, log_delta, log1m_delta=log1m_delta)
    k = int(np.argmax(mus))
    best = float(mus[k])
    lo = grid[k - 1] if k > 0 else 0.0
    hi = grid[k + 1] if k + 1 < n_eps else eps_sup
    if hi > lo:

        def neg_mu(e):
            log_delta, log1m_delta = _circle_log_profile(e, sigma, sensitivity)
            return -float(_solve_mu(e, log_delta, log1m_delta=log1m_delta))

        res = optimize.minimize_scalar(
            neg_mu,
            bounds=(lo, hi),
            method="bounded",
            options={"xatol": 1e-10 * max(eps_sup, 1.0)},
        )
        best = max(best, -float(res.fun))
    return best


# --------------------------------------------------------------------------- Monte Carlo
def _mc_profile(losses_eta, losses_eta2, eps, estimator):
    """Per-repeat estimates of δ(ε) on the grid ``eps``, shape ``(repeats, len(eps))``.

    Each loss is placed into its cell of the sorted ε grid once with :func:`numpy.searchsorted`
    (cell c holds ε_c < L ≤ ε_{c+1}; losses ≤ ε_0 never enter a tail {L > ε_k}); per-cell sums
    over (repeat, cell) come from one :func:`numpy.bincount`, and the tail sums over
    {L > ε_k} are reverse cumulative sums over cells. There is no loop over ε.
    """
    repeats, n = losses_eta.shape
    n_eps = eps.size

    def cells(losses):
        cell = np.searchsorted(eps, losses, side="left") - 1
        keep = cell >= 0
        rows = np.broadcast_to(np.arange(repeats)[:, None], losses.shape)[keep]
        return rows * n_eps + cell[keep], cell[keep], losses[keep]

    def cell_sums(index, weights=None):
        sums = np.bincount(index, weights=weights, minlength=repeats * n_eps)
        return sums.reshape(repeats, n_eps)

    def tail(sums):
        return np.cumsum(sums[:, ::-1], axis=1)[:, ::-1]

    if estimator == "tails":
        # Paper 004, Algorithm 2, line 6: empirical P_η(L > ε) − e^ε P_η'(L > ε).
        t1 = tail(cell_sums(cells(losses_eta)[0]))
        t2 = tail(cell_sums(cells(losses_eta2)[0]))
        with np.errstate(over="ignore"):
            penalty = np.where(t2 > 0, np.exp(np.minimum(eps, 700.0)) * t2, 0.0)
        penalty = np.where((t2 > 0) & (eps > 700.0), np.inf, penalty)
        return (t1 - penalty) / n

    # Multiple importance sampling with the balance heuristic: the 2n losses are draws from the
    # mixture (P_η + P_η')/2, whose densities relative to it are 2 sigmoid(±L) because the
    # normalising constants agree on a homogeneous manifold (paper 004, Proposition 4.1). So
    #   δ(ε) = E_mix[1(L > ε) 2(sigmoid(L) − e^ε sigmoid(−L))],
    # estimated by (1/n) Σ_{L_i > ε} sigmoid(L_i)(1 − e^{ε − L_i}), each term in [0, 1).
    index, cell, losses = cells(np.concatenate([losses_eta, losses_eta2], axis=1))
    w = special.expit(losses)
    # e^{ε_k} Σ_{L_i > ε_k} sigmoid(−L_i) = Σ_{c ≥ k} e^{ε_k − ε_c} Σ_{i in c} e^{ε_c − L_i} w_i,
    # every exponent ≤ 0; the sum over cells is a reverse log-cumsum-exp.
    sv = cell_sums(index, w * np.exp(eps[cell] - losses))
    with np.errstate(divide="ignore"):
        log_terms = np.log(sv) - eps
    log_tail = np.logaddexp.accumulate(log_terms[:, ::-1], axis=1)[:, ::-1]
    with np.errstate(under="ignore"):
        return np.maximum(tail(cell_sums(index, w)) - np.exp(log_tail + eps), 0.0) / n


def _mu_of_profile(eps, delta, mu0=None):
    """µ_ε for profile estimates ``delta`` (shape ``(rows, n_eps)``), row by row."""
    with np.errstate(divide="ignore"):
        log_delta = np.log(np.clip(delta, 0.0, 1.0))  # the "tails" estimate can be negative
    return _solve_mu(np.broadcast_to(eps, delta.shape), log_delta, mu0=mu0)


#: The default top of the ε grid leaves this many losses per repeat beyond it (in |L|), but
#: never more than ``_TAIL_FRACTION`` of all losses.
_TAIL_PER_REPEAT = 20
_TAIL_FRACTION = 0.05


def _privacy_losses(manifold, sigma, sensitivity, n_samples, repeats, rng):
    """Privacy losses at samples from η and from η', each of shape ``(repeats, n_samples)``."""
    from .sampling import sample_gaussian

    eta = manifold.random_point(rng=rng)
    u = manifold.random_tangent(eta, rng)
    eta2 = manifold.exp(eta, u * (sensitivity / manifold.norm(eta, u)))
    size = (repeats, n_samples)
    y1 = sample_gaussian(manifold, eta, sigma, size, rng=rng)
    y2 = sample_gaussian(manifold, eta2, sigma, size, rng=rng)
    scale = 1.0 / (2 * sigma**2)
    l1 = (manifold.squared_dist(eta2, y1) - manifold.squared_dist(eta, y1)) * scale
    l2 = (manifold.squared_dist(eta2, y2) - manifold.squared_dist(eta, y2)) * scale
    return l1, l2


def _default_eps_max(l1, l2):
    """The ε with ``_TAIL_PER_REPEAT`` losses per repeat beyond it in |L| (see above)."""
    size = np.abs(np.concatenate([l1, l2], axis=1)).ravel()
    k = max(1, min(_TAIL_PER_REPEAT * l1.shape[0], int(_TAIL_FRACTION * size.size)))
    return float(np.partition(size, size.size - k)[size.size - k])


def _jackknife_candidates(eps, loo):
    """Grid points where some leave-one-out curve µ_ε can attain its maximum over ε.

    µ_ε increases with δ(ε), so the curves of the pointwise largest and smallest leave-one-out
    profiles bound every leave-one-out curve from above and below. Every curve's maximum is
    at least the largest value of the lower envelope, so only the ε where the upper envelope
    reaches that value can hold a maximum (a small slack absorbs the solver's tolerance).
    Solving the 2 envelopes first and then the leave-one-out curves at these ε alone gives the
    same maxima as solving them everywhere, at a fraction of the cost.
    """
    envelopes = _mu_of_profile(eps, np.stack([loo.max(axis=0), loo.min(axis=0)]))
    floor = float(np.max(envelopes[1]))
    keep = envelopes[0] >= floor - 1e-9 * (1.0 + abs(floor))
    return keep if keep.any() else np.ones(eps.shape, dtype=bool)


def _mu_from_losses(l1, l2, n_eps, estimator, eps_max):
    """µ and its jackknife standard error from the losses (see :func:`gdp_mu_monte_carlo`)."""
    repeats = l1.shape[0]
    if eps_max is None:
        eps_max = _default_eps_max(l1, l2)
    eps = np.linspace(0.0, eps_max, n_eps) if eps_max > 0 else np.zeros(1)
    if estimator == "tails":
        per_repeat = _mc_profile(l1, l2, eps, "tails")
    else:
        # With an isometry exchanging η and η', the loss at a sample from η' is distributed as
        # minus the loss at a sample from η, so the reverse profile estimate (losses negated,
        # roles swapped) estimates the same δ(ε); averaging the two reduces the variance.
        per_repeat = 0.5 * (_mc_profile(l1, l2, eps, "mis") + _mc_profile(-l2, -l1, eps, "mis"))
    total = per_repeat.sum(axis=0)
    curve = _mu_of_profile(eps, total[None, :] / repeats)[0]
    mu = float(np.max(curve))
    loo = (total[None, :] - per_repeat) / (repeats - 1)
    candidates = _jackknife_candidates(eps, loo)
    mu_loo = np.max(_mu_of_profile(eps[candidates], loo[:, candidates],
                                   mu0=curve[None, candidates]), axis=1)
    se = math.sqrt((repeats - 1) / repeats * float(np.sum((mu_loo - mu_loo.mean()) ** 2)))
    return mu, se


def gdp_mu_monte_carlo(
    manifold,
    sigma,
    sensitivity,
    *,
    n_samples: int = 1000,
    n_eps: int = 1000,
    repeats: int = 100,
    eps_max=None,
    estimator: str = "mis",
    rng=None,
):
    r"""Monte Carlo GDP parameter µ of the Riemannian Gaussian mechanism (paper 004, Alg. 2).

    Fix a centre η and a neighbour η' = exp_η(Δ u) at distance Δ (u a random unit tangent
    vector), draw ``n_samples`` exact samples from the Riemannian Gaussian at each of them in
    each of ``repeats`` independent repeats, and evaluate the privacy loss
    L(y) = [d(η', y)² − d(η, y)²]/(2σ²) at every sample; on a homogeneous manifold the
    normalising constants cancel, so L is the exact log-likelihood ratio (paper 004,
    Proposition 4.1). The profile δ(ε) is estimated on a grid of ``n_eps`` values of ε and
    averaged over the repeats (Algorithm 2, line 9); µ_ε solves δ_{µ_ε}(ε) = δ(ε) and
    µ = max_ε µ_ε.

    Two estimators of δ(ε) are offered:

    - ``"mis"`` (default): multiple importance sampling. Because the likelihood ratio is known,
      both samples are draws from the mixture (P_η + P_η')/2 and
      δ̂(ε) = (1/n) Σ_{L_i > ε} sigmoid(L_i)(1 − e^{ε − L_i}) over all 2n losses: unbiased, each
      term in [0, 1), and far less variable at large ε than a difference of tails. The estimate
      is averaged with the same estimate for the reversed pair (η', η), which has the same
      profile when an isometry exchanges η and η'.
    - ``"tails"``: the paper's estimator, empirical P_η(L > ε) − e^ε P_η'(L > ε). Its e^ε factor
      amplifies the noise in the η' tail, so µ comes out too large for small σ (as paper 004
      reports for its Figure 1).

    The ε grid is evenly spaced on [0, ``eps_max``] and includes ε = 0 (on S¹ the maximum sits
    there). By default ``eps_max`` is where only 20 losses per repeat remain beyond it (the
    (20·repeats)-th largest |L|; at most the top 5 % of all |L| are cut off). Further out δ̂(ε)
    rests on a handful of samples, and the maximum over ε would pick up their noise
    (overestimating µ by several standard errors when µ_ε is flat, as on R^d) in a way the
    jackknife cannot see. The price: the profile beyond that point (δ of order 10/n_samples)
    is not examined, so a µ_ε that peaked only there would be missed. Pass ``eps_max`` to
    choose the range yourself, e.g. the largest possible loss Δ(2 diam M − Δ)/(2σ²) on a
    compact manifold.

    The standard error is the delete-one-repeat jackknife of the whole estimator (average the
    profiles of all repeats but one, take µ, and repeat for each left-out repeat). The maximum
    over ε of a noisy curve is biased upwards — the safe direction — by about one standard
    error where µ_ε is flat in ε; averaging the profiles before maximising keeps that bias
    small, whereas averaging per-repeat maxima would bias µ by many standard errors.

    Parameters
    ----------
    manifold : Manifold
        A homogeneous manifold (``manifold.is_homogeneous``) on which some isometry exchanges
        any two points at distance Δ, so that one pair (η, η') determines the guarantee
        (paper 004, Theorem 4.1). This holds on every Riemannian symmetric space, hence on all
        built-in homogeneous manifolds.
    sigma : float
        Rate σ > 0 of the mechanism.
    sensitivity : float
        Distance Δ > 0 between neighbouring outputs, at most the injectivity radius.
    n_samples : int, optional
        Samples per centre per repeat (n in the paper).
    n_eps : int, optional
        Number of ε values in the grid.
    repeats : int, optional
        Independent repeats (m in the paper), at least 2.
    eps_max : float, optional
        Top of the ε grid; default as described above.
    estimator : {"mis", "tails"}, optional
        Estimator of δ(ε), see above.
    rng : None, int or numpy.random.Generator, optional
        Randomness for the centre, the direction and the samples.

    Returns
    -------
    mu : float
        Estimated µ.
    standard_error : float
        Jackknife standard error of ``mu``.

    Notes
    -----
    Samples come from :func:`dpcore.sampling.sample_gaussian`, imported on first use.
    """
    if not isinstance(manifold, Manifold):
        raise TypeError(f"`manifold` must be a Manifold, got {type(manifold).__name__}.")
    if not manifold.is_homogeneous:
        raise ValueError(
            f"`manifold` must be homogeneous for the Monte Carlo GDP estimate, got {manifold!r}."
        )
    sigma = check_positive(sigma, "sigma")
    sensitivity = _check_sensitivity(sensitivity, float(manifold.injectivity_radius))
    n_samples = check_int(n_samples, "n_samples", minimum=1)
    n_eps = check_int(n_eps, "n_eps", minimum=2)
    repeats = check_int(repeats, "repeats", minimum=2)
    check_limit("max_mc_samples", n_samples * repeats)
    if eps_max is not None:
        eps_max = check_positive(eps_max, "eps_max")
    if estimator not in ("mis", "tails"):
        raise ValueError(f"`estimator` must be 'mis' or 'tails', got {estimator!r}.")
    rng = np.random.default_rng(rng)
    l1, l2 = _privacy_losses(manifold, sigma, sensitivity, n_samples, repeats, rng)
    return _mu_from_losses(l1, l2, n_eps, estimator, eps_max)


# --------------------------------------------------------------------------- calibration
def _smallest_sigma(excess, sigma0, rtol, *, smooth=False, max_expand=60):
    """Smallest σ (to ``rtol``) with ``excess(σ) <= 0``, for ``excess`` decreasing in σ.

    Brackets the root by doubling / halving from ``sigma0``, then refines in log σ: Brent's
    method for a smooth ``excess``, bisection for a noisy one. The σ returned always has
    ``excess(σ) <= 0``.
    """
    hi, f_hi = sigma0, excess(sigma0)
    for _ in range(max_expand):
        if f_hi <= 0:
            break
        try:
            f_next = excess(2.0 * hi)
        except ValueError as exc:  # e.g. samples overflowing on hyperbolic space
            raise ValueError(
                f"`target_mu` is not reachable: µ stays above it for σ up to {hi!r} and "
                f"σ = {2.0 * hi!r} cannot be evaluated ({exc})"
            ) from exc
        hi, f_hi = 2.0 * hi, f_next
    if f_hi > 0:
        raise ValueError(
            f"`target_mu` is not reachable: µ stays above it for σ up to {hi!r} on this manifold."
        )
    lo = hi / 2.0
    for _ in range(max_expand):
        if excess(lo) > 0:
            break
        hi, lo = lo, lo / 2.0
    else:
        return lo
    if smooth:
        root = math.exp(
            optimize.brentq(
                lambda t: excess(math.exp(t)),
                math.log(lo),
                math.log(hi),
                xtol=rtol / 4,
                rtol=4 * np.finfo(float).eps,
            )
        )
        for _ in range(8):
            if root >= hi or excess(root) <= 0:
                break
            root *= 1.0 + rtol
        return min(root, hi)
    while hi / lo - 1.0 > rtol:
        mid = math.sqrt(lo * hi)
        if excess(mid) > 0:
            lo = mid
        else:
            hi = mid
    return hi


def calibrate_sigma(
    target_mu,
    sensitivity,
    manifold,
    *,
    rtol: float = 1e-8,
    margin: float = 3.0,
    n_samples: int = 1000,
    n_eps: int = 1000,
    repeats: int = 100,
    rng=0,
) -> float:
    r"""Smallest rate σ for which the Riemannian Gaussian mechanism is ``target_mu``-GDP.

    - ``Euclidean(d)``: σ = Δ/µ exactly (Dong et al. 2022; paper 004 §3).
    - ``Sphere(1)``: root finding in log σ (Brent's method) on the exact
      :func:`gdp_mu_circle`, to relative tolerance ``rtol``; the returned σ always satisfies
      µ(σ) ≤ target.
    - any other homogeneous manifold: bisection on the Monte Carlo estimate of
      :func:`gdp_mu_monte_carlo` plus ``margin`` standard errors, i.e. the smallest σ with
      µ̂(σ) + margin · SE(σ) ≤ target, with the seed ``rng`` fixed so every σ sees the same
      random stream (relative tolerance ``max(rtol, 1e-3)``, far below the Monte Carlo error).
      The root is found by the secant method in log-log coordinates (three or four Monte
      Carlo runs), with bisection as the fallback; either way the returned σ has been
      evaluated and meets the bound.
      This is a statistical, not a proven, guarantee. Paper 004 gives no comparison result
      for curved spaces — its only evidence is numerical (Figure 1, where µ on S¹ is below the
      Euclidean Δ/σ) — so the Euclidean σ = Δ/µ is not used as a shortcut: it is not known to
      be conservative on S^d for d ≥ 2, and on negatively curved spaces µ can exceed Δ/σ.
      (Measured with the defaults: on S² with Δ = 1, µ = 0.5 needs σ ≈ 1.39 rather than 2;
      on Hyperbolic(2), µ ≈ 1.16 at σ = 1 and µ levels off near 0.79 as σ grows.)

    Parameters
    ----------
    target_mu : float
        Target GDP parameter µ > 0.
    sensitivity : float
        Distance Δ > 0 between neighbouring outputs.
    manifold : Manifold
        Output space of the mechanism.
    rtol : float, optional
        Relative tolerance of the bisection on σ.
    margin : float, optional
        Number of Monte Carlo standard errors added to µ̂ (Monte Carlo branch only).
    n_samples, n_eps, repeats : int, optional
        Passed to :func:`gdp_mu_monte_carlo` (Monte Carlo branch only).
    rng : None, int or numpy.random.Generator, optional
        Seed for the Monte Carlo branch; an integer makes the calibration reproducible.

    Returns
    -------
    float
        σ > 0.

    Raises
    ------
    ValueError
        If the manifold is neither Euclidean, S¹ nor homogeneous, or if µ cannot be brought
        down to ``target_mu`` (e.g. on hyperbolic space µ stays bounded away from 0).
    """
    from .manifolds import Euclidean, Sphere

    target_mu = check_positive(target_mu, "target_mu")
    if not isinstance(manifold, Manifold):
        raise TypeError(f"`manifold` must be a Manifold, got {type(manifold).__name__}.")
    rtol = check_positive(rtol, "rtol")
    if isinstance(margin, bool) or not isinstance(margin, numbers.Real):
        raise TypeError(f"`margin` must be a real number, got {type(margin).__name__}.")
    if not margin >= 0:
        raise ValueError(f"`margin` must be non-negative, got {margin!r}.")
    if isinstance(manifold, Euclidean):
        sensitivity = _check_sensitivity(sensitivity)
        return sensitivity / target_mu
    sigma0 = check_positive(sensitivity, "sensitivity") / target_mu
    if isinstance(manifold, Sphere) and manifold.d == 1:
        sensitivity = _check_sensitivity(sensitivity, math.pi)
        return _smallest_sigma(
            lambda s: gdp_mu_circle(s, sensitivity) - target_mu, sigma0, rtol, smooth=True
        )
    # One seed for every σ, so the bisection sees common random numbers.
    seed = (
        rng
        if isinstance(rng, numbers.Integral)
        else int(np.random.default_rng(rng).integers(2**63))
    )

    evaluated = {}

    def bound(s):
        """µ̂(σ) + margin · SE(σ), memoized (each value is a full Monte Carlo run)."""
        if s not in evaluated:
            mu, se = gdp_mu_monte_carlo(
                manifold,
                s,
                sensitivity,
                n_samples=n_samples,
                n_eps=n_eps,
                repeats=repeats,
                rng=seed,
            )
            evaluated[s] = mu + margin * se
        return evaluated[s]

    rtol = max(rtol, 1e-3)
    sigma = _secant_sigma(bound, target_mu, sigma0, rtol)
    if sigma is not None:
        return sigma
    return _smallest_sigma(lambda s: bound(s) - target_mu, sigma0, rtol)


def _secant_sigma(bound, target_mu, sigma0, rtol, *, max_iter=10):
    """σ with ``bound(σ) <= target_mu`` found by the secant method on log bound against log σ.

    µ(σ) behaves like Δ/σ for small σ, so log µ is close to linear in log σ with slope −1;
    with common random numbers the Monte Carlo bound is a smooth function of σ. The secant
    method starts from σ0 = Δ/µ with slope −1 and aims each step at the root plus rtol/2, so
    that the iterate usually lands in the window [root, root · (1 + rtol)] on the safe side.
    It returns the first evaluated σ that meets the bound and lies within ``rtol`` of the
    estimated root (typically the second or third Monte Carlo run, where bisection needs a
    dozen), or ``None`` when the iteration misbehaves (a non-decreasing bound, no
    convergence), so that the caller falls back to bisection.
    """
    log_target = math.log(target_mu)
    step_in = math.log1p(rtol)
    prev = None
    x = math.log(sigma0)
    for _ in range(max_iter):
        value = bound(math.exp(x))
        if not (value > 0 and math.isfinite(value)):
            return None
        fx = math.log(value) - log_target
        slope = -1.0
        if prev is not None and x != prev[0]:
            slope = (fx - prev[1]) / (x - prev[0])
            if not slope < 0:
                return None
            # Between -5 and -0.05, so that one noisy pair cannot throw the iterate far.
            slope = min(max(slope, -5.0), -0.05)
        root = x - fx / slope
        if fx <= 0 and x - root < step_in:
            return math.exp(x)
        prev, x = (x, fx), root + 0.5 * step_in
    return None


