"""Exact or MCMC, decided before sampling from public inputs only (DESIGN §12), the public
predictions of an exact release's work, and the public bound a forced exact release must fit.

``sampler="auto"`` goes exact where the uniform proposals' worst case or the refined envelope's
public prediction is within the ``max_exact_work`` limit (:mod:`dpcore.settings`), else MCMC.
``sampler="exact"`` never falls back to MCMC; it is refused before any sampling, with
:class:`~dpcore.exceptions.ExactSamplingUnavailable`, when the public worst-case bound of the
exact sampler that would run (:func:`joint_exact_bound`, :func:`frechet_exact_bound`) is above
that limit, unless the refined envelope's public prediction (the one ``"auto"`` reads) is within
it: a forced exact release runs wherever ``"auto"`` would draw exactly, and nowhere beyond the
limit otherwise. Every quantity here is computed from public inputs (n, ε, τ, the bounds, the
number of draws, the manifold), never from the data.
"""

from __future__ import annotations

import math
import warnings
from typing import NamedTuple

import numpy as np

from .._validation import check_manifold
from ..exceptions import (
    ApproximatePrivacyWarning,
    ExactSamplingUnavailable,
)
from ..learning.regression import regression_gradient
from ..mechanisms.kng import (
    exact_support_available,
    refined_chart_available,
    refined_joint_available,
    regression_gradient_bounds,
)
from ..sampling.rejection import worst_case_proposals
from ..sensitivity import (
    default_max_speed,
    geodesic_regression_sensitivity,
)
from ..settings import get_limits
from ._common import _check_mode


class ExactBound(NamedTuple):
    """A public bound on the work of an exact sampler, whatever the data.

    Attributes
    ----------
    terms : float
        Worst-case expected gradient terms (data terms evaluated, envelope cells included).
    detail : str
        How it is made up, for a message.
    """

    terms: float
    detail: str


def uniform_exact_bound(g_max, sigma, n, draws, batches=1):
    """The public worst case of exact rejection from uniform proposals:
    ``batches x draws x n x exp(g_max / sigma)`` gradient terms (:func:`exact_work`).

    Parameters
    ----------
    g_max : float
        Public bound on the gradient norm over the support, for every data set.
    sigma : float
        The KNG scale (the smallest, with several budgets).
    n, draws : int
        Observations and draws.
    batches : int
        Budgets sampled together.

    Returns
    -------
    ExactBound
    """
    per = worst_case_proposals(g_max, sigma)
    terms = float(batches) * exact_work(g_max, sigma, n, draws)
    lead = f"{int(batches)} budget(s) x " if int(batches) > 1 else ""
    return ExactBound(terms, f"uniform proposals, {lead}{int(draws)} draw(s) x n = {int(n)} x "
                             f"exp(g_max/sigma) = {per:.3g} proposals per draw")


def refined_exact_bound(dim, radius, exp_lip, lipschitz, sigma, n, draws, batches=1):
    """The public worst case of exact rejection from a refined Lipschitz envelope on a domain
    of ``dim`` coordinates within ``radius`` of its centre in each
    (:func:`~dpcore.sampling.envelope.refined_worst_case`): ``batches x (cells + draws x
    proposals per draw) x n`` gradient terms.

    Parameters
    ----------
    dim : int
        Coordinates of the envelope's domain.
    radius : float
        Half-width of the domain's bounding cube.
    exp_lip : float
        Lipschitz constant of the chart's exponential map on the domain.
    lipschitz : float
        Lipschitz constant of the gradient norm, for every data set.
    sigma : float
        The KNG scale.
    n, draws, batches : int
        Observations, draws and budgets sampled together.

    Returns
    -------
    ExactBound
    """
    from ..sampling.envelope import refined_worst_case

    cells, per = refined_worst_case(int(dim), float(radius), float(exp_lip), float(lipschitz),
                                    float(sigma))
    terms = float(batches) * (cells + float(draws) * per) * float(n)
    lead = f"{int(batches)} budget(s) x " if int(batches) > 1 else ""
    return ExactBound(terms, f"refined envelope, {lead}({cells:,.0f} cells + {int(draws)} "
                             f"draw(s) x {per:.3g} proposals per draw) x n = {int(n)}")


def joint_exact_bound(manifold, *, tau, max_speed, sigma, n, draws, support_radius=None,
                      batches=1):
    """Public worst-case work of an exact joint regression release
    (:func:`~dpcore.mechanisms.kng.regression_joint_exact`), from public inputs only.

    Where the refined envelope runs (:func:`~dpcore.mechanisms.kng.refined_joint_available`
    and a footpoint ball of radius ``support_radius``): its worst case on the product of the
    footpoint ball and the speed ball, with the Lipschitz constant 2 that bounds
    :func:`~dpcore.sampling.envelope.regression_joint_lipschitz` for every covariate in
    [0, 1]. Elsewhere: the uniform proposals' worst case, ``g_max`` from
    :func:`~dpcore.mechanisms.kng.regression_gradient_bounds`.

    Parameters
    ----------
    manifold : Manifold
    tau, max_speed : float
        The residual clip and the shooting-vector bound.
    sigma : float
        The smallest KNG scale of the release.
    n, draws : int
        Observations and (footpoint, vector) pairs drawn.
    support_radius : float, optional
        Radius of the public footpoint ball (None: the whole compact space).
    batches : int
        Budget pairs sampled together.

    Returns
    -------
    ExactBound
    """
    if refined_joint_available(manifold) and support_radius is not None:
        from ..sampling.envelope import regression_joint_lipschitz

        lipschitz = regression_joint_lipschitz(np.ones(1))  # its largest value, t_i in [0, 1]
        return refined_exact_bound(2 * manifold.dim, max(float(support_radius),
                                                         float(max_speed)),
                                   1.0, lipschitz, sigma, n, draws, batches)
    g_max = float(np.hypot(*regression_gradient_bounds(manifold, tau, max_speed)))
    return uniform_exact_bound(g_max, sigma, n, draws, batches)


def frechet_exact_bound(manifold, *, center, radius, sigma, n, draws):
    """Public worst-case work of an exact Fréchet-mean KNG release
    (:func:`~dpcore.mechanisms.kng.frechet_mean_exact` on the public ball ``B_radius(center)``),
    from public inputs only: the refined envelope's worst case where a normal chart exists,
    else the uniform proposals' (the gradient norm is at most ``2 radius`` on the ball).

    Parameters
    ----------
    manifold : Manifold
    center : array
        Centre of the public ball.
    radius : float
        Its radius.
    sigma : float
        The KNG scale.
    n, draws : int
        Observations and draws.

    Returns
    -------
    ExactBound
    """
    if refined_chart_available(manifold):
        from ..sampling.envelope import NormalChart, frechet_gradient_lipschitz

        exp_lip = NormalChart(manifold, np.asarray(center, dtype=float)).exp_lipschitz(
            float(radius))
        return refined_exact_bound(manifold.dim, radius, exp_lip,
                                   frechet_gradient_lipschitz(manifold, float(radius)), sigma,
                                   n, draws)
    return uniform_exact_bound(2.0 * float(radius), sigma, n, draws)


def within_limit(work, limit=None):
    """Whether ``work`` (gradient terms, or None) is a finite number within ``limit``
    (default: ``get_limits().max_exact_work``)."""
    limit = get_limits().max_exact_work if limit is None else int(limit)
    return work is not None and math.isfinite(float(work)) and float(work) <= limit


def exact_bound_refusal(bound, what, *, predicted_work=None, limit=None):
    """The message a forced exact release (``sampler="exact"``) is refused with, else None.

    It is refused when its public work bound is above the ``max_exact_work`` limit and the
    refined envelope's public prediction (``predicted_work``, where that sampler runs) is not
    within it either.

    Parameters
    ----------
    bound : ExactBound
    what : str
        The mechanism, for the message.
    predicted_work : float, optional
        The public prediction of the refined envelope's work
        (:func:`predicted_joint_kng_work`, :func:`predicted_frechet_kng_work`).
    limit : int, optional
        Default: ``get_limits().max_exact_work``.

    Returns
    -------
    str or None
    """
    limit = get_limits().max_exact_work if limit is None else int(limit)
    if within_limit(bound.terms, limit) or within_limit(predicted_work, limit):
        return None
    predicted = ("" if predicted_work is None else
                 f"; the envelope's public prediction, {predicted_work:.3g} gradient terms, "
                 "is above the limit too")
    return (f"Exact sampling of the {what} (sampler='exact') could need up to "
            f"{bound.terms:.3g} gradient terms (public bound over all data sets: "
            f"{bound.detail}{predicted}), above the limit max_exact_work = {limit:,}; it was "
            "refused before any sampling. Lower n x epsilon or the number of draws; or pass "
            "sampler='mcmc' for an approximately private release; or raise the limit "
            "(dpcore.settings: the environment variable DPCORE_MAX_EXACT_WORK).")


def _choose_exact(m, sampler, mode, *, clip, speed_cap, g_max, sigma, n, draws, what,
                  stacklevel, support_ok=True, predicted_work=None, refined=False, warn=True,
                  exact_bound=None, hint=""):
    """Exact or MCMC, decided before sampling from public inputs only (DESIGN §12).

    The uniform-proposal sampler's worst-case expected cost over all data sets is ``draws * n
    * exp(g_max / sigma)`` gradient terms (:func:`~dpcore.sampling.rejection.
    worst_case_proposals`); the refined-envelope sampler's cost is predicted from a public
    model target (``predicted_work``, :func:`~dpcore.sampling.envelope.predict_refined_cost`).
    ``"auto"`` goes exact when either is within the ``max_exact_work`` limit.

    ``"exact"`` is refused (with ``warn``: :class:`~dpcore.exceptions.ExactSamplingUnavailable`
    before any sampling) where no exact sampler exists, or where ``exact_bound``, the public
    worst-case work of the exact sampler that would run (:class:`ExactBound`; default the
    uniform proposals' :func:`uniform_exact_bound`), is above the limit and
    ``predicted_work`` is not within it (:func:`exact_bound_refusal`). Without ``warn`` it
    returns whether an exact sampler exists (a plan reports the refusal itself). ``hint`` ends
    the warning of a fallback to MCMC (another design that may draw exactly).
    """
    if sampler == "mcmc":
        return False
    possible = (support_ok and (exact_support_available(m) or refined) and clip is not None
                and speed_cap is not None and g_max is not None)
    if sampler == "exact":
        if not possible:
            if not warn:
                return False
            raise ExactSamplingUnavailable(
                f"No exact sampler for the {what} on {m!r} in {mode} mode (exact rejection "
                "sampling needs strict mode and uniform proposals on the support: Sphere, "
                "KendallShape, SPD(2), Euclidean, Hyperbolic). Pass sampler='mcmc' for an "
                "approximately private release.")
        if warn:
            bound = (uniform_exact_bound(g_max, sigma, n, draws) if exact_bound is None
                     else exact_bound)
            refusal = exact_bound_refusal(bound, what, predicted_work=predicted_work)
            if refusal is not None:
                raise ExactSamplingUnavailable(refusal)
        return True
    if mode == "paper" or not possible:
        return False
    work = exact_work(g_max, sigma, n, draws)
    limit = get_limits().max_exact_work
    if work <= limit or (predicted_work is not None and predicted_work <= limit):
        return True
    if not warn:
        return False
    warnings.warn(
        f"Exact sampling of the {what} could need up to {work:.3g} gradient terms (worst "
        f"case over data sets: {draws} draw(s) x n = {n} x exp(g_max/sigma) = "
        f"{worst_case_proposals(g_max, sigma):.3g} proposals per draw), above the limit "
        f"max_exact_work = {limit:,}. Using MCMC: the release is only approximately private. "
        "Lower n x epsilon / the number of draws, or raise the limit (environment variable "
        f"DPCORE_MAX_EXACT_WORK) to draw exactly.{hint}",
        ApproximatePrivacyWarning, stacklevel=stacklevel)
    return False


def plan_regression_sampler(manifold, n, *, eps_p, eps_v, tau, tau_m=None, max_speed=None,
                            draws=1, mode="strict", scheme=None, sampler="auto",
                            footpoint_radius=None):
    """What :func:`private_geodesic_regression` will run, from public inputs only.

    Lets a page say *before* sampling whether the release will be exact (labelled private) or
    MCMC (approximately private), and why.

    Parameters
    ----------
    manifold : Manifold
    n : int
        Number of observations (public: the release states it).
    eps_p, eps_v, tau, tau_m, max_speed, mode, scheme, sampler, footpoint_radius
        As for :func:`private_geodesic_regression`.
    draws : int
        ``n_footpoints * n_vectors``.

    Returns
    -------
    dict
        ``scheme``, ``exact`` (bool: the sampler that will run), ``exact_possible`` (an exact
        sampler exists here), ``worst_case_proposals`` (per draw), ``work`` (worst-case gradient
        terms), ``limit`` (``max_exact_work``), ``guarantee`` (what the label will say) and
        ``exact_sampler`` (``"uniform proposals"``, ``"refined envelope"``, ``"certified
        bundle"``, ``"uniform proposals with a certified squeeze"``, or None where the release
        is not exact) and ``cost_kind`` (the calibration its estimate and its own work check
        price it by, :func:`exact_cost_kind`; None where not exact); for the bundle sampler
        also ``leaf_cap``, the public cap on its envelope's leaves.
        With ``sampler="exact"`` also ``exact_bound`` (the public worst-case gradient terms of
        the exact sampler that would run, :func:`joint_exact_bound`) and ``refusal`` (the
        :class:`~dpcore.exceptions.ExactSamplingUnavailable` message the release would raise
        before sampling because that bound is above the limit, else None).
    """
    m = check_manifold(manifold)
    mode = _check_mode(mode)
    scheme = ("joint" if mode == "strict" else "sequential") if scheme is None else scheme
    out = {"scheme": scheme, "exact": False, "exact_possible": False,
           "worst_case_proposals": None, "work": None, "limit": get_limits().max_exact_work}
    if scheme == "sequential" or mode == "paper" or tau is None:
        out["guarantee"] = ("not private" if mode == "paper" else "not covered")
        return out
    if max_speed is None:
        max_speed = default_max_speed(m, float(tau_m or 0.0), tau)
    dp, dv = geodesic_regression_sensitivity(int(n), tau, m.curvature_bounds[0],
                                             tau_m if m.curvature_bounds[0] < 0 else None)
    sigma = 2.0 * float(np.hypot(dp, dv)) / (eps_p + eps_v)
    g_max = float(np.hypot(*regression_gradient_bounds(m, tau, max_speed)))
    out["exact_possible"] = bool(exact_support_available(m))
    out["worst_case_proposals"] = worst_case_proposals(g_max, sigma)
    out["work"] = exact_work(g_max, sigma, n, draws)
    support = (float(footpoint_radius) if footpoint_radius is not None
               else float(tau_m) + tau if tau_m is not None else None)
    refined = refined_joint_available(m) and support is not None
    bound = (joint_exact_bound(m, tau=tau, max_speed=max_speed, sigma=sigma, n=int(n),
                               draws=draws, support_radius=support)
             if sampler == "exact" and out["exact_possible"] else None)
    # The prediction "auto" reads; a forced exact release reads it only beyond its bound.
    predicted, limit_terms = (
        joint_prediction(m, foot_radius=support, speed_cap=max_speed, tau=tau, sigma=sigma,
                         n=int(n), draws=draws, with_limit_terms=True)
        if sampler == "auto" or bound is not None and not within_limit(bound.terms)
        else (None, None))
    if predicted is not None:
        out["predicted_work"] = predicted
    if bound is not None:
        out["exact_bound"] = bound.terms
        out["refusal"] = exact_bound_refusal(bound, "joint (footpoint, shooting vector) KNG",
                                             predicted_work=limit_terms)
    # The release's own decision rule (_choose_exact), without its warning or error.
    out["exact"] = out["exact_possible"] and _choose_exact(
        m, sampler, mode, clip=tau, speed_cap=max_speed, g_max=g_max, sigma=sigma, n=int(n),
        draws=draws, what="plan", stacklevel=2, warn=False, predicted_work=limit_terms,
        refined=refined)
    out["guarantee"] = "private" if out["exact"] else "approximately private"
    # the calibration the release prices its predicted terms by (the estimate reads it too)
    kind = (exact_cost_kind(m, foot_radius=support, speed_cap=max_speed, tau=tau, sigma=sigma,
                            n=int(n), draws=draws) if out["exact"] else None)
    out["cost_kind"] = None if kind is None else kind if "predicted_work" in out else "exact"
    out["exact_sampler"] = (None if not out["exact"] else "refined envelope" if refined
                            else {"bundle": "certified bundle",
                                  "squeeze": "uniform proposals with a certified squeeze"}.get(
                                      kind, "uniform proposals"))
    if out["exact_sampler"] == "certified bundle":
        from ..mechanisms.kng_bundle import bundle_leaf_cap

        out["leaf_cap"] = bundle_leaf_cap(int(n), m, 4.0 * g_max / sigma)
    return out


#: Relative cost of one gradient term (one log map) against the sphere's closed form, for the
#: work predictions: SPD and Kendall logs need eigen- or complex decompositions.
_TERM_COST = {"Sphere": 1.0, "Euclidean": 1.0, "Hyperbolic": 2.0}
#: Cost of one proposal term of the uniform exact joint sampler (drawing the proposal and its
#: gradient norm, compiled where a kernel exists) against S²'s at the same n, rounded up with a
#: margin from ``python -m benchmarks.bench_uniform_proposals`` (2026-12-01, n = 30, 100, 300,
#: 1,000, 3,000: SPD(2) 2.0-2.8, Kendall(4) 2.2-2.7, R⁴ 0.37-1.96 and H² 6.4-45 (the compiled
#: norm kernels; H² was 11-173 in numpy)): ``{n: weight}``, read by
#: :func:`uniform_term_weight`. Public constants: the exact-or-MCMC choice must not depend on
#: the machine.
_UNIFORM_TERM_COST = {"Sphere": {30: 1.0}, "SPD": {30: 3.0}, "KendallShape": {30: 3.0},
                      "Euclidean": {30: 0.75, 100: 1.25, 300: 1.75, 1000: 2.25, 3000: 2.5},
                      "Hyperbolic": {30: 8.0, 100: 20.0, 300: 35.0, 1000: 50.0, 3000: 56.0}}


#: How much longer than on S² an exact release drawn with the certified squeeze
#: (:func:`release_squeeze`) may be predicted to take, before ``"auto"`` prefers MCMC (against
#: ``max_exact_work``): issue 28 asks for exact releases in 10 s on S² and in 30 s on SPD(2).
#: Measured at the reach this gives on the page's design (2026-12-02, CPU s): 9 draws at
#: n = 250 (n·ε = 505) 7.2-7.8 s, at n = 10 (707) 4.9-11.7 s; one draw at n = 100 (917)
#: 3.1-25.9 s over six data sets and at n = 30 (1,013) 1.8-15.4 s (one draw's proposals are
#: geometric). Elsewhere uniform proposals keep S²'s limit (their time varies several-fold
#: with the data: with 3 times, Kendall(4)'s reach rose from 233 to 281 and its release there
#: took 73 s). Public constants.
_PRACTICAL_SCALE = {"SPD": 4.0}


def uniform_term_weight(manifold, n):
    """Sphere-equivalent cost of one term of the uniform exact proposals on ``manifold`` at
    ``n`` observations: :data:`_UNIFORM_TERM_COST` interpolated linearly in log n, constant
    beyond its first and last n (10 for a space not measured). Public inputs only."""
    table = _UNIFORM_TERM_COST.get(type(manifold).__name__)
    if table is None:
        return 10.0
    sizes = np.log(np.array(sorted(table), dtype=float))
    weights = np.array([table[k] for k in sorted(table)], dtype=float)
    return float(np.interp(np.log(max(float(n), 1.0)), sizes, weights))


def predicted_frechet_kng_work(manifold, center, radius, sigma, n, draws):
    """Public prediction of an exact (refined-envelope) Fréchet KNG release's work in the
    space's own gradient terms (which the work estimate prices):
    (envelope cells + draws x proposals per draw) x n."""
    from ..sampling.envelope import NormalChart, frechet_gradient_lipschitz, predict_refined_cost

    cells, per_draw = predict_refined_cost(NormalChart(manifold, center), radius,
                                           frechet_gradient_lipschitz(manifold, radius), sigma,
                                           draws=draws)
    return (cells + draws * per_draw) * float(n)


def frechet_prediction(manifold, center, radius, sigma, n, draws):
    """The public prediction of an exact Fréchet KNG release's work that ``"auto"`` reads
    (:func:`predicted_frechet_kng_work`, the space's own terms), or None where it is above the
    limit in sphere-equivalent terms (weighted by :data:`_TERM_COST`: an SPD or Kendall log map
    costs about ten of the sphere's). Public inputs only."""
    predicted = predicted_frechet_kng_work(manifold, np.asarray(center, dtype=float),
                                           float(radius), sigma, n, draws)
    return predicted if within_limit(frechet_term_weight(manifold) * predicted) else None


def frechet_term_weight(manifold):
    """Sphere-equivalent cost of one of the space's Fréchet gradient terms (:data:`_TERM_COST`),
    for comparing a prediction with ``max_exact_work``."""
    return _TERM_COST.get(type(manifold).__name__, 10.0)


def predicted_joint_kng_work(manifold, radius, max_norm, tau, sigma, n, draws):
    """Public prediction of an exact (refined-envelope) joint regression release's work in
    gradient terms, ``(envelope cells + draws x proposals per draw) x n``.

    The envelope is built for a model data set with the release's public inputs only: at most
    64 covariates evenly spread on [0, 1] and responses on a flat line through the ball's
    centre (a target as concentrated as real data's, whose gradient also vanishes at the
    fit). The data's own envelope differs (a timing side channel, not a change of the output's
    law); this only says before sampling whether the request is within reach.
    """
    from ..sampling.envelope import (
        ProductBallDomain,
        RefinedEnvelope,
        regression_joint_lipschitz,
    )

    k = int(min(int(n), 64))
    t = (np.arange(k) + 0.5) / k
    y = np.zeros((k, *manifold.point_shape))

    def model(z):
        gp, gv = regression_gradient(manifold, z[:, 0], z[:, 1], t, y, tau=tau)
        return np.sqrt(manifold.norm(z[:, 0], gp) ** 2 + manifold.norm(z[:, 0], gv) ** 2)

    env = RefinedEnvelope(None, None, model, regression_joint_lipschitz(t), sigma,
                          domain=ProductBallDomain(np.zeros(manifold.dim), radius, max_norm),
                          n_terms=k, draws=draws)
    per_draw = 1.0 / max(env.acceptance_lower_bound(), 1e-300)
    return (env.centers.shape[0] + float(draws) * per_draw) * float(n)


def joint_prediction(manifold, *, foot_radius, speed_cap, tau, sigma, n, draws, batches=1,
                     with_limit_terms=False):
    """The public prediction of an exact joint release's work that ``"auto"`` reads (gradient
    terms, the space's own, which the work estimate prices), or None where only the uniform
    proposals' worst case applies. With ``with_limit_terms``, ``(prediction, terms the limit
    reads)`` (both None without a prediction): for the uniform proposals the prediction
    weighted to sphere-equivalent terms (:func:`uniform_term_weight`, and with the squeeze
    :data:`_PRACTICAL_SCALE`), elsewhere the prediction itself; :func:`_choose_exact` and
    :func:`exact_bound_refusal` compare these with ``max_exact_work``.

    The refined envelope's (:func:`predicted_joint_kng_work`) on R¹ with a footpoint ball; the
    certified bundle sampler's (:func:`~dpcore.mechanisms.kng_bundle.bundle_joint_work`) on S²
    with a footpoint ball, or on the whole sphere (``foot_radius`` None, the native boxes),
    where its public cost is below the uniform proposals' worst case
    (:func:`~dpcore.mechanisms.kng_bundle.bundle_preferred`, the rule the release samples by).
    Elsewhere, where the uniform proposals' public worst case is above the limit, their
    predicted work for a public model data set
    (:func:`~dpcore.release.uniform_cost.predicted_uniform_joint_work`), given only where it
    is within the limit in sphere-equivalent terms. Public inputs only.
    """
    predicted, weight = _joint_prediction(manifold, foot_radius, speed_cap, tau, sigma, int(n),
                                          draws, batches)
    if not with_limit_terms:
        return predicted
    return (None, None) if predicted is None else (predicted, weight * predicted)


def _joint_prediction(manifold, foot_radius, speed_cap, tau, sigma, n, draws, batches):
    """``(prediction, weight of its terms for the limit)`` of :func:`joint_prediction`."""
    from ..mechanisms.kng_bundle import bundle_joint_work, bundle_preferred

    if speed_cap is None or tau is None:
        return None, 1.0
    if refined_joint_available(manifold):
        if foot_radius is None:
            return None, 1.0
        return float(batches) * predicted_joint_kng_work(manifold, foot_radius, speed_cap, tau,
                                                         sigma, int(n), draws), 1.0
    g_max = float(np.hypot(*regression_gradient_bounds(manifold, tau, speed_cap)))
    if bundle_preferred(manifold, foot_radius, speed_cap, g_max=g_max, sigma=sigma, n=int(n),
                        draws=draws, batches=batches):
        return bundle_joint_work(int(n), draws, batches, manifold=manifold,
                                 n_eps=4.0 * g_max / float(sigma)), 1.0
    uniform = float(batches) * exact_work(g_max, sigma, n, draws)
    if (not exact_support_available(manifold) or within_limit(uniform)
            or (foot_radius is None and not manifold.is_compact)):
        return None, 1.0
    from .uniform_cost import predicted_squeeze_terms

    plan, predicted = _squeeze_and_plain(manifold, foot_radius, speed_cap, tau, sigma, n,
                                         draws, batches)
    # the limit counts sphere-equivalent terms here (the prediction itself stays in the
    # space's own terms, which the work estimate prices); with the squeeze, scaled by the
    # time the issue deems practical on the space
    weight = uniform_term_weight(manifold, n)
    if plan is not None:
        predicted = predicted_squeeze_terms(plan, int(n))
        weight /= _PRACTICAL_SCALE.get(type(manifold).__name__, 1.0)
    if predicted is None or not within_limit(weight * predicted):
        return None, 1.0
    return predicted, weight


def release_squeeze(manifold, foot_radius, speed_cap, tau, sigma, n, draws, batches=1):
    """The certified squeeze an exact uniform joint release builds
    (:func:`~dpcore.release.uniform_cost.squeeze_plan`), or None. Where the plain uniform
    proposals' prediction is within S²'s limit, the squeeze is built only where it is
    predicted to pay (many proposals, half the terms); beyond that limit it is built wherever
    it is offered, and
    :func:`joint_prediction` prices it against :data:`_PRACTICAL_SCALE` times the limit. So
    ``"auto"`` is exact exactly where one of the two predictions fits its limit, a set that
    grows with n x epsilon (each prediction does), and the release runs the path that fits.
    Public inputs only."""
    return _squeeze_and_plain(manifold, foot_radius, speed_cap, tau, sigma, n, draws,
                              batches)[0]


def _squeeze_and_plain(manifold, foot_radius, speed_cap, tau, sigma, n, draws, batches):
    """(:func:`release_squeeze`, the plain uniform proposals' predicted terms or None)."""
    from .uniform_cost import predicted_uniform_joint_work, squeeze_plan

    args = (manifold, foot_radius, speed_cap, tau, sigma, int(n), draws, batches)
    plain = predicted_uniform_joint_work(*args)
    if plain is None:
        return None, None
    fits = within_limit(uniform_term_weight(manifold, n) * plain)
    return squeeze_plan(*args, cheaper_only=fits), plain


def exact_cost_kind(manifold, *, foot_radius, speed_cap, tau, sigma, n, draws, batches=1):
    """The calibration that prices an exact joint release's predicted terms
    (:func:`~dpcore.release.work.regression_work`'s ``exact_kind``): ``"bundle"`` where the
    certified bundle sampler runs (the rule the release samples by,
    :func:`~dpcore.mechanisms.kng_bundle.bundle_preferred`), ``"squeeze"`` where uniform
    proposals run with their certified squeeze (:func:`release_squeeze`), else ``"exact"``
    (plain uniform proposals and the refined envelope). Public inputs only."""
    from ..mechanisms.kng_bundle import bundle_preferred

    if refined_joint_available(manifold) or speed_cap is None or tau is None:
        return "exact"
    g_max = float(np.hypot(*regression_gradient_bounds(manifold, tau, speed_cap)))
    if bundle_preferred(manifold, foot_radius, speed_cap, g_max=g_max, sigma=sigma, n=int(n),
                        draws=draws, batches=batches):
        return "bundle"
    return ("squeeze" if release_squeeze(manifold, foot_radius, speed_cap, tau, sigma, n, draws,
                                         batches) is not None else "exact")


def exact_work(g_max, sigma, n, draws):
    """Public worst-case expected work (gradient terms) of an exact KNG release."""
    return float(draws) * float(n) * worst_case_proposals(g_max, sigma)


