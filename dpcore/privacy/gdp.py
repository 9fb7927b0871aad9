"""Generic privacy accounting: pure-DP composition and Gaussian differential privacy (GDP).

Gaussian differential privacy (paper 004, Definition 3.1): a mechanism is µ-GDP when it is
(ε, δ_µ(ε))-DP for every ε ≥ 0, with

    δ_µ(ε) = Φ(−ε/µ + µ/2) − e^ε Φ(−ε/µ − µ/2).

This module holds what does not depend on a mechanism: δ_µ and its inverse
(:func:`delta_mu`, :func:`mu_from_delta`), conversions between ε-DP and GDP
(:func:`eps_to_mu`, :func:`mu_to_eps`), composition (:func:`compose_dp`,
:func:`compose_gdp`) and the GDP trade-off curve (:func:`tradeoff_gdp`). The GDP analysis of the
Riemannian Gaussian mechanism is in :mod:`dpcore.privacy.profiles`, the running total of a
session's releases in :mod:`dpcore.privacy.accountant`. All numerics are done in log space so
that tiny δ and large ε neither underflow to spurious zeros nor produce ``inf * 0``.
"""

from __future__ import annotations

import math

import numpy as np

from .._lazy import lazy_module
from .._validation import (
    check_nonnegative_array,
    check_nonnegative_values,
    check_positive,
)

special = lazy_module("scipy.special")  # imported on first use (about 3x numpy's import)

__all__ = [
    "compose_dp",
    "compose_gdp",
    "delta_mu",
    "eps_to_mu",
    "mu_from_delta",
    "mu_to_eps",
    "tradeoff_gdp",
]

_SQRT2 = math.sqrt(2.0)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


# --------------------------------------------------------------------------- validation
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
    e = check_nonnegative_array(eps, "eps")
    m = check_nonnegative_array(mu, "mu")
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
    e = check_nonnegative_array(eps, "eps")
    d = check_nonnegative_array(delta, "delta")
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
    e = check_nonnegative_array(eps, "eps")
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
    m = check_nonnegative_array(mu, "mu")
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
    m = check_nonnegative_values(mus, "mus")
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
    e = check_nonnegative_values(epsilons, "epsilons")
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
    a = check_nonnegative_array(alpha, "alpha")
    if np.any(a > 1):
        raise ValueError(f"`alpha` must be at most 1, got {float(a[a > 1].flat[0])!r}.")
    m = check_nonnegative_array(mu, "mu")
    # Φ⁻¹(1 − α) = −Φ⁻¹(α), which keeps small α accurate.
    with np.errstate(invalid="ignore"):
        out = special.ndtr(-special.ndtri(a) - m)
    out = np.where(np.isposinf(m), 0.0, out)
    return _out(out, alpha, mu)
