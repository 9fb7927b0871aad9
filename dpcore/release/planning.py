"""Exact or MCMC, decided before sampling from public inputs only (DESIGN §12), and the
public predictions of an exact release's work.
"""

from __future__ import annotations

import warnings

import numpy as np

from .._validation import check_manifold
from ..exceptions import (
    ApproximatePrivacyWarning,
    ExactSamplingUnavailable,
)
from ..learning.regression import regression_gradient
from ..mechanisms.kng import (
    exact_support_available,
    refined_joint_available,
    regression_gradient_bounds,
)
from ..sampling.rejection import worst_case_proposals
from ..sensitivity import (
    geodesic_regression_sensitivity,
)
from ..settings import get_limits
from ._common import _check_mode


def _choose_exact(m, sampler, mode, *, clip, speed_cap, g_max, sigma, n, draws, what,
                  stacklevel, support_ok=True, predicted_work=None, refined=False, warn=True):
    """Exact or MCMC, decided before sampling from public inputs only (DESIGN §12).

    The uniform-proposal sampler's worst-case expected cost over all data sets is ``draws * n
    * exp(g_max / sigma)`` gradient terms (:func:`~dpcore.sampling.rejection.
    worst_case_proposals`); the refined-envelope sampler's cost is predicted from a public
    model target (``predicted_work``, :func:`~dpcore.sampling.envelope.predict_refined_cost`).
    ``"auto"`` goes exact when either is within the ``max_exact_work`` limit.
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
        "Pass sampler='exact' to insist, or lower n x epsilon / the number of draws.",
        ApproximatePrivacyWarning, stacklevel=stacklevel)
    return False


def plan_regression_sampler(manifold, n, *, eps_p, eps_v, tau, tau_m=None, max_speed=None,
                            draws=1, mode="strict", scheme=None, sampler="auto"):
    """What :func:`private_geodesic_regression` will run, from public inputs only.

    Lets a page say *before* sampling whether the release will be exact (labelled private) or
    MCMC (approximately private), and why.

    Parameters
    ----------
    manifold : Manifold
    n : int
        Number of observations (public: the release states it).
    eps_p, eps_v, tau, tau_m, max_speed, mode, scheme, sampler
        As for :func:`private_geodesic_regression`.
    draws : int
        ``n_footpoints * n_vectors``.

    Returns
    -------
    dict
        ``scheme``, ``exact`` (bool: the sampler that will run), ``exact_possible`` (an exact
        sampler exists here), ``worst_case_proposals`` (per draw), ``work`` (worst-case gradient
        terms), ``limit`` (``max_exact_work``) and ``guarantee`` (what the label will say).
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
        max_speed = m.diameter if m.is_compact else 2.0 * (float(tau_m or 0.0) + tau)
    dp, dv = geodesic_regression_sensitivity(int(n), tau, m.curvature_bounds[0],
                                             tau_m if m.curvature_bounds[0] < 0 else None)
    sigma = 2.0 * float(np.hypot(dp, dv)) / (eps_p + eps_v)
    g_max = float(np.hypot(*regression_gradient_bounds(m, tau, max_speed)))
    out["exact_possible"] = bool(exact_support_available(m))
    out["worst_case_proposals"] = worst_case_proposals(g_max, sigma)
    out["work"] = exact_work(g_max, sigma, n, draws)
    refined = refined_joint_available(m) and tau_m is not None
    predicted = (predicted_joint_kng_work(m, float(tau_m) + tau, max_speed, tau, sigma, int(n),
                                          draws)
                 if refined and sampler == "auto" else None)
    if predicted is not None:
        out["predicted_work"] = predicted
    # The release's own decision rule (_choose_exact), without its warning or error.
    out["exact"] = out["exact_possible"] and _choose_exact(
        m, sampler, mode, clip=tau, speed_cap=max_speed, g_max=g_max, sigma=sigma, n=int(n),
        draws=draws, what="plan", stacklevel=2, warn=False, predicted_work=predicted,
        refined=refined)
    out["guarantee"] = "private" if out["exact"] else "approximately private"
    return out


#: Relative cost of one gradient term (one log map) against the sphere's closed form, for the
#: work predictions: SPD and Kendall logs need eigen- or complex decompositions.
_TERM_COST = {"Sphere": 1.0, "Euclidean": 1.0, "Hyperbolic": 2.0}


def predicted_frechet_kng_work(manifold, center, radius, sigma, n, draws):
    """Public prediction of an exact (refined-envelope) Fréchet KNG release's work, in
    sphere-equivalent gradient terms: (envelope cells + draws x proposals per draw) x n."""
    from ..sampling.envelope import NormalChart, frechet_gradient_lipschitz, predict_refined_cost

    cells, per_draw = predict_refined_cost(NormalChart(manifold, center), radius,
                                           frechet_gradient_lipschitz(manifold, radius), sigma,
                                           draws=draws)
    weight = _TERM_COST.get(type(manifold).__name__, 10.0)
    return (cells + draws * per_draw) * float(n) * weight


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


def exact_work(g_max, sigma, n, draws):
    """Public worst-case expected work (gradient terms) of an exact KNG release."""
    return float(draws) * float(n) * worst_case_proposals(g_max, sigma)


