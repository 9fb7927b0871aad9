"""GDP analysis of the Riemannian Gaussian mechanism (paper 004).

A mechanism whose privacy profile is δ(ε) is µ-GDP for µ = max_ε µ_ε, where µ_ε solves
δ_{µ_ε}(ε) = δ(ε) (:mod:`dpcore.privacy.gdp`). For the Riemannian Gaussian mechanism
(density ∝ exp(−d(η, y)² / (2σ²)) around the true value η) this module computes that µ:

- on R^d exactly, µ = Δ/σ;
- on the circle S¹ exactly, from the closed-form profile (paper 004, Corollary 3.2.1 and
  Algorithm 1): :func:`privacy_profile_circle`, :func:`gdp_mu_circle`;
- on other homogeneous manifolds by Monte Carlo (paper 004, Algorithm 2):
  :func:`gdp_mu_monte_carlo`, which also reports the Monte Carlo standard error (a statistical
  estimate, not a proof: releases calibrated this way are labelled approximately private).

:func:`calibrate_sigma` inverts these: the smallest rate σ that meets a target µ. The Monte
Carlo estimator lives in :mod:`dpcore.privacy._monte_carlo` and is re-exported here; the circle's
closed forms and the calibration are in this module.
"""

from __future__ import annotations

import math
import numbers
import threading

import numpy as np

from .._lazy import lazy_module
from .._validation import (
    check_int,
    check_manifold,
    check_nonnegative,
    check_nonnegative_array,
    check_positive,
)
from ._monte_carlo import (  # noqa: F401  (re-exported; the tests use the private pieces)
    _default_eps_max,
    _jackknife_candidates,
    _mc_profile,
    _mu_from_losses,
    _mu_of_profile,
    _privacy_losses,
    gdp_mu_monte_carlo,
)
from .gdp import _SQRT2, _check_sensitivity, _log_ndtr_diff, _out, _solve_mu

optimize = lazy_module("scipy.optimize")  # on first use

__all__ = [
    "calibrate_sigma",
    "exact_gdp_accounting",
    "gdp_mu_circle",
    "gdp_mu_monte_carlo",
    "privacy_profile_circle",
]


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
    e = check_nonnegative_array(eps, "eps")
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


def exact_gdp_accounting(manifold):
    """Which exact form µ(σ) of the Riemannian Gaussian mechanism has on ``manifold``, if any.

    Parameters
    ----------
    manifold : Manifold

    Returns
    -------
    {"euclidean", "circle"} or None
        ``"euclidean"`` on ``Euclidean(d)`` (µ = Δ/σ; Dong et al. 2022, paper 004 §3),
        ``"circle"`` on ``Sphere(1)`` (exact quadrature, :func:`gdp_mu_circle`, paper 004
        Algorithm 1), None elsewhere: µ is then estimated by Monte Carlo
        (:func:`gdp_mu_monte_carlo`, Algorithm 2), a statistical rather than a proven value.
    """
    # Closed forms of the trade-off curve that exist on these two spaces only (the unit
    # circle: the one compact 1-dimensional space of diameter pi).
    if manifold.is_linear:
        return "euclidean"
    if manifold.dim == 1 and manifold.is_compact and manifold.diameter == math.pi:
        return "circle"
    return None


#: σ of :func:`calibrate_sigma` per argument tuple, for integer seeds (the Monte Carlo branch
#: costs seconds; its result is then a function of the arguments). Oldest first out.
_CALIBRATED: dict = {}
_CALIBRATED_MAX = 512
#: Guards the dictionary (the dashboard's sessions run in threads); never held while calibrating.
_CALIBRATED_LOCK = threading.Lock()


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
      Carlo runs), with bisection as the fallback (from the bracket the secant's runs hold,
      else from σ0); either way the returned σ has been evaluated and meets the bound.
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
    target_mu = check_positive(target_mu, "target_mu")
    check_manifold(manifold)
    rtol = check_positive(rtol, "rtol")
    margin = check_nonnegative(margin, "margin", allow_inf=True)
    exact = exact_gdp_accounting(manifold)
    if exact == "euclidean":
        sensitivity = _check_sensitivity(sensitivity)
        return sensitivity / target_mu
    sigma0 = check_positive(sensitivity, "sensitivity") / target_mu
    if exact == "circle":
        sensitivity = _check_sensitivity(sensitivity, math.pi)
        return _smallest_sigma(
            lambda s: gdp_mu_circle(s, sensitivity) - target_mu, sigma0, rtol, smooth=True
        )
    # One seed for every σ, so the bisection sees common random numbers. With an integer seed
    # the result is a function of the arguments: it is kept (the pages ask for the same σ at
    # every rerun, the studies once per cell, a release once per µ).
    key = None
    if isinstance(rng, numbers.Integral):
        key = (float(target_mu), float(sensitivity), repr(manifold), float(rtol),
               float(margin), int(n_samples), int(n_eps), int(repeats), int(rng))
        with _CALIBRATED_LOCK:
            if key in _CALIBRATED:
                return _CALIBRATED[key]
    seed = rng if key is not None else int(np.random.default_rng(rng).integers(2**63))

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
    if sigma is None:
        sigma = _bisect_evaluated(bound, evaluated, target_mu, rtol)
    if sigma is None:
        sigma = _smallest_sigma(lambda s: bound(s) - target_mu, sigma0, rtol)
    if key is not None:
        with _CALIBRATED_LOCK:
            if len(_CALIBRATED) >= _CALIBRATED_MAX:
                _CALIBRATED.pop(next(iter(_CALIBRATED)))
            _CALIBRATED[key] = sigma
    return sigma


def _bisect_evaluated(bound, evaluated, target_mu, rtol):
    """Bisection in log σ from the bracket the evaluations ``{σ: bound(σ)}`` already hold, or
    ``None`` if they hold none.

    The bracket is the smallest evaluated σ that meets the bound and the largest evaluated σ
    below it (which does not). When the secant method gives up (the Monte Carlo bound is
    jagged at the scale of ``rtol``: its jackknife error jumps with the ε that holds the
    maximum), its runs usually bracket the root to within a few ``rtol`` already, where a
    bisection from ``sigma0`` spends about ten more runs to get back there. The result meets
    the same contract as :func:`_smallest_sigma`'s bisection: ``bound(σ) <= target_mu`` and
    ``bound(σ / (1 + rtol)) > target_mu`` at an evaluated point.
    """
    meets = [s for s, value in evaluated.items() if value <= target_mu]
    if not meets:
        return None
    hi = min(meets)
    below = [s for s in evaluated if s < hi]
    if not below:
        return None
    lo = max(below)
    while hi / lo - 1.0 > rtol:
        mid = math.sqrt(lo * hi)
        if bound(mid) > target_mu:
            lo = mid
        else:
            hi = mid
    return hi


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
