"""Private geodesic regression releases (paper 002; the joint scheme of DESIGN §8).

This module draws the private geodesics of a request (joint or sequential scheme). The
request's validation, public bounds, supports and sensitivities are fixed first by
:func:`dpcore.release._regression_setup.regression_setup`; the public defaults (centre, chain
start) and the assembly of each :class:`~dpcore.release.record.Release` are in
:mod:`dpcore.release._regression_records`.
"""

from __future__ import annotations

import numpy as np

from .._progress import report, stages
from .._validation import check_positive
from ..exceptions import ExactSamplingUnavailable
from ..mechanisms import Ball, KNormGradient
from ..mechanisms.kng import (
    refined_joint_available,
    regression_footpoints_many,
    regression_gradient_bounds,
    regression_joint_exact,
    regression_joint_many,
    regression_vectors_many,
)
from ._common import _warn_paper_mode
from ._regression_records import (  # noqa: F401  (DATA_SOURCE_NOTE re-exported)
    DATA_SOURCE_NOTE,
    _data_note,
    _default_center,
    _public_start,
    _regression_release,
)
from ._regression_setup import BOUND_NAMES, regression_setup  # noqa: F401  (re-exported)
from .planning import (
    _choose_exact,
    exact_cost_kind,
    exact_work,
    joint_exact_bound,
    joint_prediction,
    release_squeeze,
    within_limit,
)
from .record import (
    SEQUENTIAL_CAVEAT,
    SEQUENTIAL_STRICT_CAVEAT,
)
from .work import check_work, regression_work, resolve_budget


def two_stage_hint():
    """The end of the MCMC fallback's warning for a joint release without a footpoint ball."""
    return (" Without a tight public footpoint region, private_geodesic_regression_two_stage "
            "(a private centre first, then the footpoints within a public radius of it; the "
            "budgets add up) may draw exactly where this release cannot.")


# ---------------------------------------------------------------------- regression
def private_geodesic_regression(
    manifold,
    x,
    y,
    *,
    eps_p,
    eps_v,
    tau=None,
    covariate_range=None,
    tau_m=None,
    n_vectors=1,
    mode="strict",
    rng=None,
    center=None,
    n_footpoints=1,
    max_speed=None,
    chain_length=2000,
    burn_in=1000,
    scheme=None,
    sampler="auto",
    max_work=None,
    progress=None,
    footpoint_radius=None,
    bound_sources=None,
):
    r"""Private footpoint and shooting vectors of geodesic regression (paper 002, sequential KNG).

    First ``n_footpoints`` private footpoints :math:`\tilde p` are drawn by KNG on
    :math:`p \mapsto E(p, \Gamma_{\hat p \to p}\hat v)` with budget ``eps_p``; then at each,
    ``n_vectors`` private shooting vectors by KNG on :math:`v \mapsto E(\tilde p, v)` with budget
    ``eps_v``. One geodesic costs ``eps_p + eps_v``; publishing every draw costs
    ``n_footpoints * eps_p + n_footpoints * n_vectors * eps_v`` (the ``epsilon`` reported).

    Parameters
    ----------
    manifold : Manifold
    x : array-like, shape (n,)
        Covariates.
    y : array-like, shape (n, *point_shape)
        Responses.
    eps_p, eps_v : float
        Budgets of the footpoint and of each shooting vector.
    tau : float
        Public bound on residual norms; residuals are clipped to it (required in strict mode).
    covariate_range : (float, float)
        Public range of the covariate; x is clipped to it and mapped to [0, 1] (strict: required).
    tau_m : float
        Radius of a public ball ``B_{tau_m}(center)`` holding the responses (required in strict
        mode on non-compact manifolds and whenever the curvature can be negative).
    n_vectors, n_footpoints : int
        Number of private shooting vectors per footpoint and of footpoints.
    mode : {"strict", "paper"}
    rng : None, int or Generator
        None uses OS entropy (required for publication); a seed gives a reproducible demo.
    center : array, optional
        Centre m0 of the public ball (default: origin of R^d, identity of SPD).
    max_speed : float, optional
        Public bound on the shooting-vector norm, the support of the vector mechanism
        (default: the diameter on compact spaces, 2 (tau_m + tau) otherwise, paper 002 app. C).
    footpoint_radius : float, optional
        Radius r of a public ball ``B_r(center)`` to which the released footpoints are
        restricted (the mechanism's domain; ``center`` defaults as above, the north pole on the
        sphere). KNG is ε-DP on any data-independent domain with the same sensitivity, so this
        is a public prior region, not a bound taken from the data. On compact spaces it removes
        the far regions where the clipped energy's gradient is small, which otherwise dominate
        the target at small n x ε. Where the curvature can be negative the sensitivity proof
        covers footpoints within ``tau_m + tau`` of the centre, so r must not exceed it
        (default there: ``tau_m + tau``; elsewhere: no restriction).
    chain_length, burn_in : int
        Metropolis-Hastings settings where no exact sampler exists.
    scheme : {None, "joint", "sequential"}
        ``"joint"`` (default in strict mode): one KNG on the tangent bundle over (p, v) with the
        stacked gradient, sensitivity :math:`\sqrt{\Delta_p^2 + \Delta_v^2}` and budget
        ``eps_p + eps_v`` per geodesic (DESIGN §8, §12); ``n_footpoints * n_vectors``
        independent pairs are drawn and returned as footpoints ``(n_draws, *point_shape)`` with
        one vector each ``(n_draws, 1, *point_shape)``. ``"sequential"`` (default in paper
        mode, the papers' scheme): footpoints by KNG with budget ``eps_p``, then vectors by KNG
        with budget ``eps_v``; its footpoint stage evaluates the gradient at the data's own
        shooting vector, outside the sensitivity proof, so a strict sequential release is
        labelled not private.
    sampler : {"auto", "exact", "mcmc"}
        ``"exact"``: rejection sampling from uniform proposals (δ = 0,
        :mod:`dpcore.sampling.rejection`); raises :class:`~dpcore.exceptions.
        ExactSamplingUnavailable` before sampling where no exact sampler exists.
        ``"mcmc"``: Metropolis-Hastings, labelled "approximately private". ``"auto"``: exact
        in strict mode when its public worst-case cost is within the ``max_exact_work`` limit
        (:mod:`dpcore.settings`), else MCMC with an
        :class:`~dpcore.exceptions.ApproximatePrivacyWarning`; paper mode uses MCMC as the
        papers did.
    max_work : float, optional
        Work budget in seconds of estimated run time (:mod:`dpcore.release.work`): a request
        estimated above it is refused before sampling with a
        :class:`~dpcore.exceptions.WorkBudgetError`. None: the default budget
        (:data:`~dpcore.release.work.DEFAULT_WORK_BUDGET`); ``float("inf")``: no limit.
    progress : callable, optional
        ``progress(fraction)`` with the finished fraction of the release, in ``[0, 1]``
        (:mod:`dpcore._progress`): the exact samplers report as they accept draws, the
        Metropolis-Hastings chains as they step; the stages (footpoints, then vectors, in the
        sequential scheme) get shares proportional to their estimated time
        (:mod:`dpcore.release.work`). Non-decreasing, it ends at 1.0. An exception it raises (a
        user interface's cancel) propagates and nothing is released. The draws do not depend
        on it.
    bound_sources : mapping, optional
        Where supplied bounds came from, for those not known publicly: bound name
        (``"covariate_range"``, ``"tau"``, ``"tau_m"`` or ``"center"``) -> ``"public"`` or
        ``"data"``. A bound marked ``"data"`` (e.g. a field still holding the data's own range)
        is recorded with source ``"data"`` in :attr:`Release.assumptions`, so the release's
        guarantee is ``"not private"`` and its label, in strict mode, "NOT PRIVATE (bounds from
        the data)"; a :class:`~dpcore.exceptions.PrivacyLeakWarning` says so. Only a bound
        that is passed can be named. Default: every supplied bound is public.

    Returns
    -------
    Release
        ``values``: ``footpoint`` (shape ``(n_footpoints, *point_shape)``, at the lower end of the
        covariate range), ``shooting_vector`` (``(n_footpoints, n_vectors, *point_shape)``,
        velocity per unit of the rescaled covariate), ``intercept`` and ``coef`` in the original
        covariate units (as :class:`~dpcore.learning.GeodesicRegression`).
    """
    eps_p = check_positive(eps_p, "eps_p")
    eps_v = check_positive(eps_v, "eps_v")
    return _geodesic_regression_releases(
        manifold, x, y, [(eps_p, eps_v)], tau=tau, covariate_range=covariate_range,
        tau_m=tau_m, n_vectors=n_vectors, mode=mode, rng=rng, center=center,
        n_footpoints=n_footpoints, max_speed=max_speed, chain_length=chain_length,
        burn_in=burn_in, scheme=scheme, sampler=sampler, max_work=max_work, stacklevel=3,
        progress=progress, footpoint_radius=footpoint_radius, bound_sources=bound_sources,
    )[0]


def private_geodesic_regression_budgets(manifold, x, y, *, budgets, **kwargs):
    r"""One :func:`private_geodesic_regression` release per budget pair, sampled together.

    The budget pairs share the data, the non-private fit, the bounds and the sensitivities;
    their Metropolis-Hastings chains run as one batched array with one step-size group per
    budget, which is several times faster than separate calls when many budgets are compared
    on one data set (budget-split studies). Each returned release is distributed exactly as the
    release of a separate call (only the random stream differs), with its own diagnostics.

    Every release is a separate use of the data: publishing several of them costs the sum of
    their ε (sequential composition).

    Parameters
    ----------
    budgets : sequence of (eps_p, eps_v)
        The budget pairs.
    **kwargs
        As for :func:`private_geodesic_regression` (all but ``eps_p`` and ``eps_v``), including
        ``progress``, which follows the whole run (all budget pairs).

    Returns
    -------
    list of Release
        One per budget pair, in order.
    """
    pairs = [(check_positive(p, "eps_p"), check_positive(v, "eps_v")) for p, v in budgets]
    if not pairs:
        raise ValueError("`budgets` must hold at least one (eps_p, eps_v) pair.")
    return _geodesic_regression_releases(manifold, x, y, pairs, stacklevel=3, **kwargs)


def _geodesic_regression_releases(
    manifold,
    x,
    y,
    budgets,
    *,
    tau=None,
    covariate_range=None,
    tau_m=None,
    n_vectors=1,
    mode="strict",
    rng=None,
    center=None,
    n_footpoints=1,
    max_speed=None,
    chain_length=2000,
    burn_in=1000,
    scheme=None,
    sampler="auto",
    max_work=None,
    stacklevel=2,
    progress=None,
    footpoint_radius=None,
    bound_sources=None,
):
    """Body of :func:`private_geodesic_regression` for validated budget pairs."""
    resolve_budget(max_work)  # a bad budget is refused before any work
    s = regression_setup(
        manifold, x, y, tau=tau, covariate_range=covariate_range, tau_m=tau_m,
        n_vectors=n_vectors, mode=mode, rng=rng, center=center, n_footpoints=n_footpoints,
        max_speed=max_speed, chain_length=chain_length, burn_in=burn_in, scheme=scheme,
        sampler=sampler, footpoint_radius=footpoint_radius, bound_sources=bound_sources,
        stacklevel=stacklevel + 1)
    if s.scheme == "joint":
        return _joint_scheme(s, budgets, sampler, max_work, progress, stacklevel + 1)
    if sampler == "exact":
        raise ExactSamplingUnavailable(
            "The sequential scheme has no exact sampler (its footpoint stage is not covered by "
            "the sensitivity proof either); use scheme='joint' for an exact, private release.")
    return _sequential_scheme(s, budgets, max_work, progress, stacklevel + 1)


def _joint_scheme(s, budgets, sampler, max_work, progress, stacklevel):
    """The joint scheme's releases of a request set up as ``s`` (DESIGN §8): every
    (footpoint, vector) pair drawn from the joint KNG, exactly where the public plan
    allows, one release per budget pair."""
    m, t, y, gen, mode = s.m, s.t, s.y, s.gen, s.mode
    tau, clip, speed_cap, foot_support = s.tau, s.clip, s.speed_cap, s.foot_support
    delta_p, delta_v, sigma_rule = s.delta_p, s.delta_v, s.sigma_rule
    n_footpoints, n_vectors = s.n_footpoints, s.n_vectors
    chain_length, burn_in = s.chain_length, s.burn_in
    p_hat, v_start, caveats, leaks, common = s.p_hat, s.v_start, s.caveats, s.leaks, s.common
    delta_j = float(np.hypot(delta_p, delta_v))
    sigma_factor = 2.0 if sigma_rule == "rigorous" else 1.0
    smallest_sigma = sigma_factor * delta_j / max(ep + ev for ep, ev in budgets)
    refined = (refined_joint_available(m) and foot_support is not None
               and clip is not None and speed_cap is not None)
    # A forced exact release is refused in _choose_exact, before any sampling, when the
    # public worst-case work of the sampler that would run is above the limit and the
    # public prediction "auto" reads is not within it (public inputs only).
    forced_bound = (joint_exact_bound(
        m, tau=tau, max_speed=speed_cap, sigma=smallest_sigma, n=int(y.shape[0]),
        draws=n_footpoints * n_vectors,
        support_radius=None if foot_support is None else foot_support[1],
        batches=len(budgets))
        if sampler == "exact" and clip is not None and speed_cap is not None else None)
    predicted, limit_terms = (joint_prediction(
        m, foot_radius=None if foot_support is None else foot_support[1],
        speed_cap=speed_cap, tau=clip, sigma=smallest_sigma, n=int(y.shape[0]),
        draws=n_footpoints * n_vectors, batches=len(budgets), with_limit_terms=True)
        if mode == "strict" and (sampler == "auto" or forced_bound is not None
                                 and not within_limit(forced_bound.terms)) else (None, None))
    use_exact = _choose_exact(
        m, sampler, mode, clip=clip, speed_cap=speed_cap,
        g_max=(float(np.hypot(*regression_gradient_bounds(m, tau, speed_cap)))
               if clip is not None and speed_cap is not None else None),
        sigma=smallest_sigma, n=int(y.shape[0]), draws=n_footpoints * n_vectors,
        what="joint (footpoint, shooting vector) KNG", stacklevel=stacklevel + 1,
        predicted_work=limit_terms, refined=refined, exact_bound=forced_bound,
        hint="" if foot_support is not None else two_stage_hint())
    n_draws = n_footpoints * n_vectors
    exact_terms = None
    if use_exact:
        g_max = float(np.hypot(*regression_gradient_bounds(m, tau, speed_cap)))
        exact_terms = (predicted if predicted is not None
                       else len(budgets) * exact_work(g_max, smallest_sigma, y.shape[0],
                                                      n_draws))
    check_work(regression_work(
        m, y.shape[0], draws=n_draws, n_footpoints=n_footpoints, chain_length=chain_length,
        burn_in=burn_in, scheme="joint", exact_terms=exact_terms, n_budgets=len(budgets),
        exact_worst_case=predicted is None,
        exact_kind=(exact_cost_kind(
            m, foot_radius=None if foot_support is None else foot_support[1],
            speed_cap=speed_cap, tau=clip, sigma=smallest_sigma, n=int(y.shape[0]),
            draws=n_draws, batches=len(budgets))
            if use_exact and predicted is not None else "exact"),
        linear_exact=not use_exact and m.is_linear and clip is None and speed_cap is None
        and foot_support is None), max_work)
    if p_hat is None:
        p_hat, v_start = _public_start(m, foot_support)
    releases = _joint_releases(m, budgets, t, y, p_hat, v_start, gen, delta_p=delta_p,
                               delta_v=delta_v, sigma_rule=sigma_rule, clip=clip,
                               foot_support=foot_support, speed_cap=speed_cap,
                               n_draws=n_footpoints * n_vectors, chain_length=chain_length,
                               burn_in=burn_in, exact=use_exact,
                               caveats=[c for c in caveats if c != SEQUENTIAL_CAVEAT],
                               progress=progress, **common)
    report(progress, 1.0)
    _warn_paper_mode(mode, leaks, stacklevel + 1)
    return releases


def _sequential_scheme(s, budgets, max_work, progress, stacklevel):
    """The sequential scheme's releases of a request set up as ``s`` (paper 002): the
    footpoints by the footpoint KNG, then the vectors by the vector KNG at each, all
    budget pairs in one sampler run per stage."""
    m, t, y, gen, mode = s.m, s.t, s.y, s.gen, s.mode
    clip, speed_cap, foot_support = s.clip, s.speed_cap, s.foot_support
    delta_p, delta_v, sigma_rule = s.delta_p, s.delta_v, s.sigma_rule
    n_footpoints, n_vectors = s.n_footpoints, s.n_vectors
    chain_length, burn_in = s.chain_length, s.burn_in
    p_hat, v_start, caveats, leaks, common = s.p_hat, s.v_start, s.caveats, s.leaks, s.common
    if mode == "strict":
        caveats = [SEQUENTIAL_STRICT_CAVEAT, *(c for c in caveats if c != SEQUENTIAL_CAVEAT)]

    # --- footpoints and shooting vectors, all budgets in one sampler run per stage -------
    kng_p = [KNormGradient(manifold=m, epsilon=ep, sensitivity=delta_p, sigma_rule=sigma_rule,
                           chain_length=chain_length, burn_in=burn_in) for ep, _ in budgets]
    kng_v = [KNormGradient(manifold=m, epsilon=ev, sensitivity=delta_v, sigma_rule=sigma_rule,
                           chain_length=chain_length, burn_in=burn_in) for _, ev in budgets]
    foot_shape = (n_footpoints, *m.point_shape)
    exact_path = m.is_linear and clip is None  # affine gradients: exact K-norm stages
    work = check_work(regression_work(
        m, y.shape[0], draws=n_footpoints * n_vectors, n_footpoints=n_footpoints,
        chain_length=chain_length, burn_in=burn_in, scheme="sequential",
        linear_exact=exact_path, n_budgets=len(budgets)), max_work)
    # Shares of the two stages: their estimated times (closed-form R^d draws: one part, equal).
    foot_progress, vector_progress = stages(
        progress, [p.seconds for p in work.parts] if len(work.parts) == 2 else [1.0, 1.0])
    if exact_path or len(budgets) == 1:
        feet = [k.regression_footpoint(t, y, p_hat, v_start, size=n_footpoints, rng=gen,
                                       tau=clip, support=foot_support, progress=part)
                for k, part in zip(kng_p, stages(foot_progress, [1.0] * len(kng_p)),
                                   strict=True)]
    else:
        ball = None if foot_support is None else Ball.make(m, *foot_support)
        feet = regression_footpoints_many(kng_p, t, y, p_hat, v_start, size=n_footpoints,
                                          rng=gen, tau=clip, support=ball,
                                          progress=foot_progress)
    report(foot_progress, 1.0)
    footpoints = [np.asarray(f.values).reshape(foot_shape) for f in feet]
    v_inits = [m.transport(np.broadcast_to(p_hat, fp.shape), fp, v_start) for fp in footpoints]
    if exact_path or len(budgets) == 1:
        vecs = [k.regression_vector(t, y, fp, vi, size=n_vectors, rng=gen, tau=clip,
                                    max_norm=speed_cap, progress=part)
                for k, fp, vi, part in zip(kng_v, footpoints, v_inits,
                                           stages(vector_progress, [1.0] * len(kng_v)),
                                           strict=True)]
    else:
        vecs = regression_vectors_many(kng_v, t, y, np.concatenate(footpoints),
                                       np.concatenate(v_inits), n_vectors, gen, tau=clip,
                                       max_norm=speed_cap, progress=vector_progress)
    report(progress, 1.0)
    _warn_paper_mode(mode, leaks, stacklevel + 1)
    releases = []
    for (eps_p, eps_v), fp, kp, kv, foot, vec in zip(budgets, footpoints, kng_p, kng_v, feet,
                                                     vecs, strict=True):
        vectors = np.asarray(vec.values).reshape((n_footpoints, n_vectors, *m.point_shape))
        guarantee_p = kp.guarantee(exact=foot.exact)
        guarantee_v = kv.guarantee(exact=vec.exact)
        n_draws_v = n_footpoints * n_vectors
        releases.append(_regression_release(
            m, fp, vectors, eps_p=eps_p, eps_v=eps_v, mechanism="kng_sequential",
            epsilon=n_footpoints * eps_p + n_draws_v * eps_v,
            delta=n_footpoints * guarantee_p.delta + n_draws_v * guarantee_v.delta,
            exact=bool(foot.exact and vec.exact),
            delta_note=guarantee_p.note or guarantee_v.note,
            sensitivity={"footpoint": delta_p, "shooting_vector": delta_v},
            sigma={"footpoint": kp.sigma, "shooting_vector": kv.sigma},
            diagnostics={
                "footpoint": {"compute_path": "numpy", **foot.diagnostics, "exact": foot.exact,
                              "sampler": foot.sampler},
                "shooting_vector": {"compute_path": "numpy", **vec.diagnostics,
                                    "exact": vec.exact, "sampler": vec.sampler},
            },
            caveats=list(caveats), sigma_rule=guarantee_p.sigma_rule,
            draws=f"{n_footpoints} footpoint(s) x {n_vectors} vector(s)",
            coverage="sequential", **common,
        ))
    return releases



def _joint_releases(m, budgets, t, y, p_hat, v_start, gen, *, delta_p, delta_v, sigma_rule,
                    clip, foot_support, speed_cap, n_draws, chain_length, burn_in, caveats,
                    exact=False, progress=None, **common):
    """Releases of ``scheme="joint"``: one KNG over (p, v) per budget pair, all in one run
    (``progress`` follows the sampler)."""
    delta_j = float(np.hypot(delta_p, delta_v))
    kng = [KNormGradient(manifold=m, epsilon=ep + ev, sensitivity=delta_j,
                         sigma_rule=sigma_rule, chain_length=chain_length, burn_in=burn_in)
           for ep, ev in budgets]
    ball = None if foot_support is None else Ball.make(m, *foot_support)
    if exact:
        squeeze = release_squeeze(m, None if ball is None else ball.radius, speed_cap, clip,
                                  min(k.sigma for k in kng), t.shape[0], n_draws, len(budgets))
        draws = regression_joint_exact(kng, t, y, size=n_draws, rng=gen, tau=clip,
                                       support=ball, max_norm=speed_cap, squeeze=squeeze,
                                       progress=progress)
    elif m.is_linear and clip is None and speed_cap is None and ball is None:
        # R^d only: the stacked gradient is affine, so the draw is an exact K-norm one
        draws = [k.regression_joint(t, y, p_hat, v_start, size=n_draws, rng=gen) for k in kng]
    else:
        draws = regression_joint_many(kng, t, y, p_hat, v_start, size=n_draws, rng=gen,
                                      tau=clip, support=ball, max_norm=speed_cap,
                                      progress=progress)
    releases = []
    for (eps_p, eps_v), k, res in zip(budgets, kng, draws, strict=True):
        values = np.asarray(res.values)
        g = k.guarantee(exact=res.exact)
        releases.append(_regression_release(
            m, values[:, 0], values[:, 1][:, None], eps_p=eps_p, eps_v=eps_v,
            mechanism="kng_joint", epsilon=n_draws * (eps_p + eps_v), delta=n_draws * g.delta,
            exact=res.exact, delta_note=g.note,
            sensitivity={"joint": delta_j, "footpoint": delta_p, "shooting_vector": delta_v},
            sigma={"joint": k.sigma},
            diagnostics={"joint": {"compute_path": "numpy", **res.diagnostics,
                                   "exact": res.exact, "sampler": res.sampler}},
            caveats=list(caveats), sigma_rule=g.sigma_rule,
            draws=f"{n_draws} (footpoint, vector) pair(s)",
            coverage="proven" if res.exact else "mcmc", **common,
        ))
    return releases
