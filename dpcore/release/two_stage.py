r"""Two-stage private geodesic regression: a private centre, then the joint KNG in a public
ball about it (DESIGN §12, "Two-stage designs"; issue 28 point 4).

The strict joint KNG of :func:`~dpcore.release.private_geodesic_regression` samples
:math:`f(p, v) \propto e^{-\|G(p, v)\|/\sigma}` on its support. On a compact space without a
public footpoint region, far from the data every residual is clipped to :math:`\tau` and the
clipped residuals nearly cancel: those far geodesics hold more of the target's mass than the
basin about the fit until :math:`n\varepsilon` is very large (on the rat-skull preset at least
9.3e5, :mod:`dpcore.release.asymptotic`). A public footpoint ball removes them, but it needs a
public centre near the data, which real data rarely come with.

The two-stage design makes that centre private instead of public:

1. **Stage 1** spends :math:`\varepsilon_1` (``eps_center``) on a private Fréchet mean
   :math:`\tilde c` of the responses (:func:`~dpcore.release.private_frechet_mean`; the
   Riemannian Laplace mechanism by default, exact and float-safe where its lattice sampler
   applies), from a public ball :math:`B_r(m_0)` holding the data (``center_ball``).
2. **Stage 2** runs the strict joint KNG with the footpoints restricted to
   :math:`B_\rho(\tilde c)`, :math:`\rho` = ``footpoint_radius`` public, budget
   :math:`\varepsilon_2 = \varepsilon_p + \varepsilon_v` per geodesic. For every fixed
   centre the joint KNG is :math:`\varepsilon_2`-DP on any data-independent support; stage 2
   reads the data only through the mechanism and :math:`\tilde c` only as a released value, so
   the pair is an adaptive composition (post-processing of stage 1 for the choice of support).
3. **Total**: :math:`\varepsilon = \varepsilon_1 + k\,\varepsilon_2`, k the number of
   (footpoint, vector) pairs drawn (basic composition of pure DP). The guarantee is the weaker
   of the two stages': ``"private"`` only when both samplers are exact and float-safe;
   ``"approximately private"`` when either is not (stage 2 by MCMC, or a stage-1 sampler whose
   floats depend on the data); never more.

On spaces whose sensitivity needs a response ball (curvature below 0, or non-compact), stage 2
also centres that ball on :math:`\tilde c`: the responses are projected onto
:math:`B_{\tau_m}(\tilde c)` (``tau_m`` public), and the footpoint ball must stay within
:math:`\tau_m + \tau` of :math:`\tilde c` (paper 002 app. C).
"""

from __future__ import annotations

import numpy as np

from .._progress import report, stages
from .._validation import (
    check_choice,
    check_int,
    check_interval,
    check_manifold,
    check_positive,
)
from ..exceptions import ExactSamplingUnavailable
from ..mechanisms.base import check_point
from ..sensitivity import frechet_radius_limit
from ._common import _check_covariates, _check_responses
from .frechet import private_frechet_mean
from .frechet_mechanisms import (
    FRECHET_RELEASES,
    estimate_frechet_release_work,
    frechet_mechanism,
)
from .planning import plan_regression_sampler
from .record import SAMPLERS, SEEDED_CAVEAT, Release
from .regression import private_geodesic_regression
from .work import (
    check_work,
    estimate_regression_work,
    estimate_work,
    resolve_budget,
)

__all__ = [
    "CENTER_MECHANISMS",
    "CENTER_SOURCE",
    "combine_stages",
    "private_geodesic_regression_two_stage",
    "two_stage_footpoint_radius",
    "weaker_coverage",
]

#: Stage-1 mechanisms: pure ε-DP private means (the Gaussian mechanism's µ-GDP would need a
#: conversion to compose with the ε of stage 2, so it is not offered here).
CENTER_MECHANISMS = ("laplace", "kng", "ambient_laplace")
#: Source recorded for the footpoint ball's centre: a released value of stage 1 (public once
#: released; :attr:`Release.bounds_public` counts every source but ``"data"`` as public).
CENTER_SOURCE = "private (stage 1)"
#: Order of weakness of a stage's coverage (:attr:`Release.coverage`): the combined release
#: takes the weakest.
_WEAKNESS = {"proven": 0, "float": 1, "monte_carlo": 1, "mcmc": 2, "sequential": 3}


def private_geodesic_regression_two_stage(
    manifold,
    x,
    y,
    *,
    eps_center,
    eps_p,
    eps_v,
    tau,
    covariate_range,
    footpoint_radius,
    center_ball=None,
    center_mechanism="laplace",
    tau_m=None,
    max_speed=None,
    n_footpoints=1,
    n_vectors=1,
    sampler="auto",
    center_sampler="auto",
    chain_length=2000,
    burn_in=1000,
    rng=None,
    max_work=None,
    progress=None,
):
    r"""Private geodesic regression in two stages: a private centre, then the joint KNG with
    its footpoints in a public-radius ball about that centre (module docstring).

    Strict mode only: every bound is public, and the centre of the footpoint ball is the
    released value of stage 1.

    Parameters
    ----------
    manifold : Manifold
    x : array-like, shape (n,)
        Covariates.
    y : array-like, shape (n, *point_shape)
        Responses.
    eps_center : float
        Budget :math:`\varepsilon_1` of the private centre (stage 1), spent once.
    eps_p, eps_v : float
        Budget of one geodesic in stage 2, :math:`\varepsilon_2 = \varepsilon_p +
        \varepsilon_v` (the joint scheme draws (p, v) together with this total; the split
        only names the parts, as in :func:`~dpcore.release.private_geodesic_regression`).
    tau : float
        Public bound on residual norms; residuals are clipped to it.
    covariate_range : (float, float)
        Public range of the covariate; x is clipped to it and mapped to [0, 1].
    footpoint_radius : float
        Public radius :math:`\rho` of the footpoint ball :math:`B_\rho(\tilde c)` about the
        private centre. The footpoint is the geodesic at the low end of the covariate range;
        a sensible public choice covers the distance from the responses' mean to it (at most
        about ``max_speed`` plus ``tau``) and the centre's own error (of order
        ``dim x sigma`` of stage 1). A ball much smaller than the injectivity radius keeps out
        the far geodesics where clipped residuals cancel.
    center_ball : (center, radius), optional
        Public ball :math:`B_r(m_0)` holding the responses, for stage 1 (responses outside
        are projected onto it there). The Laplace and KNG mechanisms need
        :math:`r < r^*` (paper 001 Thm 2: half the smaller of the injectivity radius and
        :math:`\pi/(2\sqrt{\kappa})`); the ambient Laplace mechanism takes any radius. None
        on a compact space: the whole space (the manifold's origin and its diameter), which
        only the ambient mechanism accepts (e.g. the whole sphere); required elsewhere.
    center_mechanism : {"laplace", "kng", "ambient_laplace"}
        Mechanism of the private centre (:func:`~dpcore.release.private_frechet_mean`). The
        ambient mechanism releases the projected extrinsic mean (spaces with an embedding:
        Sphere, SPD, Euclidean).
    tau_m : float, optional
        Where stage 2 needs a response ball (curvature below 0 or a non-compact space): the
        public radius of :math:`B_{\tau_m}(\tilde c)` onto which stage 2 projects the
        responses (required there; the footpoint radius may not exceed ``tau_m + tau``).
        Ignored on other spaces, as by :func:`~dpcore.release.private_geodesic_regression`.
    max_speed : float, optional
        Public bound on the shooting-vector norm (default as in
        :func:`~dpcore.release.private_geodesic_regression`).
    n_footpoints, n_vectors : int
        Stage 2 draws ``n_footpoints * n_vectors`` independent (footpoint, vector) pairs, each
        at :math:`\varepsilon_2`.
    sampler : {"auto", "exact", "mcmc"}
        Stage 2's sampler (as in :func:`~dpcore.release.private_geodesic_regression`). A
        forced ``"exact"`` that stage 2 would refuse is refused before stage 1 runs.
    center_sampler : {"auto", "exact", "mcmc"}
        Stage 1's sampler (KNG only; the other mechanisms draw exactly).
    chain_length, burn_in : int
        Metropolis-Hastings settings of any stage that runs by MCMC.
    rng : None, int or Generator
        None: OS entropy in both stages (required for publication). Otherwise one generator
        ``np.random.default_rng(rng)`` is passed to stage 1 and then to stage 2, so the result
        equals the two functional calls made by hand in that order with that generator; the
        release is then labelled "not for publication".
    max_work : float, optional
        Work budget in seconds of estimated run time (:mod:`dpcore.release.work`) for both
        stages together, checked before stage 1 runs from public inputs; each stage also
        checks its own estimate. None: the default budget; ``float("inf")``: no limit.
    progress : callable, optional
        ``progress(fraction)`` over both stages (shares from their estimated times).

    Returns
    -------
    Release
        ``values``: stage 2's ``footpoint``, ``shooting_vector``, ``intercept`` and ``coef``
        (as :func:`~dpcore.release.private_geodesic_regression`) and ``center`` (shape
        ``(1, *point_shape)``, the released stage-1 mean). ``epsilon`` is
        ``eps_center + n_footpoints * n_vectors * (eps_p + eps_v)``; ``delta`` 0 only when both
        stages are exact and float-safe, else None. ``assumptions``: stage 2's, with the
        footpoint ball's centre of source :data:`CENTER_SOURCE`, and stage 1's ball as
        ``center_ball_center`` and ``center_ball_radius``. ``sensitivity`` / ``sigma``: stage
        2's keys plus stage 1's prefixed ``center_``. ``diagnostics``: stage 2's plus
        ``center`` (stage 1's). ``details``: stage 2's, plus ``two_stage`` (True),
        ``epsilon_center``, ``epsilon_stage2``, ``footpoint_radius`` and ``stage1`` (the
        stage-1 release's :meth:`Release.to_dict`). The label follows the weaker stage.

    Raises
    ------
    ValueError, TypeError
        Before any sampling, for invalid inputs (naming the argument), a stage-1 ball at or
        beyond :math:`r^*` for the Laplace or KNG mechanism, a footpoint ball beyond
        ``tau_m + tau`` where the sensitivity proof needs it, or a missing ``tau_m``.
    ExactSamplingUnavailable
        Before stage 1, when a forced ``sampler="exact"`` cannot serve stage 2.
    WorkBudgetError
        Before stage 1, when the two stages' estimated work exceeds ``max_work``.
    """
    m = check_manifold(manifold)
    eps_center = check_positive(eps_center, "eps_center")
    eps_p = check_positive(eps_p, "eps_p")
    eps_v = check_positive(eps_v, "eps_v")
    tau = check_positive(tau, "tau")
    covariate_range = check_interval(covariate_range, "covariate_range")
    footpoint_radius = check_positive(footpoint_radius, "footpoint_radius")
    center_mechanism = check_choice(center_mechanism, "center_mechanism", CENTER_MECHANISMS)
    sampler = check_choice(sampler, "sampler", SAMPLERS)
    center_sampler = check_choice(center_sampler, "center_sampler", SAMPLERS)
    n_footpoints = check_int(n_footpoints, "n_footpoints")
    n_vectors = check_int(n_vectors, "n_vectors")
    check_int(chain_length, "chain_length")
    check_int(burn_in, "burn_in", minimum=0)
    if max_speed is not None:
        max_speed = check_positive(max_speed, "max_speed")
    budget = resolve_budget(max_work)
    y = _check_responses(m, y)
    x = _check_covariates(x, y.shape[0])
    ball_center, ball_radius = _center_ball(m, center_ball, center_mechanism)
    needs_ball = m.curvature_bounds[0] < 0 or not m.is_compact
    if needs_ball:
        if tau_m is None:
            raise ValueError(
                f"Stage 2 on {m!r} needs `tau_m`, the public radius of the ball about the "
                "private centre onto which the responses are projected.")
        tau_m = check_positive(tau_m, "tau_m")
        if footpoint_radius > tau_m + tau:
            raise ValueError(
                f"`footpoint_radius` = {footpoint_radius:g} exceeds tau_m + tau = "
                f"{tau_m + tau:g}: on {m!r} the sensitivity proof covers footpoints within "
                "tau_m + tau of the centre only (paper 002 app. C).")
    n = int(y.shape[0])
    draws = n_footpoints * n_vectors
    if sampler == "exact":
        plan = plan_regression_sampler(
            m, n, eps_p=eps_p, eps_v=eps_v, tau=tau, tau_m=tau_m if needs_ball else None,
            max_speed=max_speed, draws=draws, scheme="joint", sampler="exact",
            footpoint_radius=footpoint_radius)
        if not plan["exact_possible"]:
            raise ExactSamplingUnavailable(
                f"No exact sampler for stage 2 (joint KNG) on {m!r}; pass sampler='auto' or "
                "'mcmc' (approximately private).")
        if plan.get("refusal"):
            raise ExactSamplingUnavailable(f"Stage 2: {plan['refusal']}")

    # --- work of both stages, from public inputs, before anything runs -------------------
    weights = [1.0, 9.0]
    if progress is not None or np.isfinite(budget):
        first = estimate_frechet_release_work(
            m, n, mechanism=center_mechanism, epsilon=eps_center, radius=ball_radius,
            center=ball_center, chain_length=chain_length, burn_in=burn_in,
            sampler=center_sampler)
        second = estimate_regression_work(
            m, n, eps_p=eps_p, eps_v=eps_v, tau=tau, tau_m=tau_m if needs_ball else None,
            max_speed=max_speed, n_vectors=n_vectors, n_footpoints=n_footpoints,
            chain_length=chain_length, burn_in=burn_in, scheme="joint", sampler=sampler,
            footpoint_radius=footpoint_radius)
        check_work(estimate_work(*first.parts, *second.parts), max_work)
        weights = [first.worst_case_seconds, second.worst_case_seconds]
    part1, part2 = stages(progress, weights)

    # --- stage 1: the private centre ------------------------------------------------------
    gen = None if rng is None else np.random.default_rng(rng)
    stage1 = private_frechet_mean(
        m, y, epsilon=eps_center, mechanism=center_mechanism, radius=ball_radius,
        center=ball_center, rng=gen, sampler=center_sampler, chain_length=chain_length,
        burn_in=burn_in, max_work=max_work, progress=part1)
    center = np.asarray(stage1.values["mean"], dtype=float)[0]

    # --- stage 2: joint KNG with footpoints in B_rho(center) -------------------------------
    stage2 = private_geodesic_regression(
        m, x, y, eps_p=eps_p, eps_v=eps_v, tau=tau, covariate_range=covariate_range,
        tau_m=tau_m if needs_ball else None, n_vectors=n_vectors, n_footpoints=n_footpoints,
        mode="strict", rng=gen, center=center, max_speed=max_speed,
        chain_length=chain_length, burn_in=burn_in, scheme="joint", sampler=sampler,
        max_work=max_work, progress=part2, footpoint_radius=footpoint_radius)
    report(progress, 1.0)
    return combine_stages(stage1, stage2, footpoint_radius=footpoint_radius)


def two_stage_footpoint_radius(manifold, n, *, eps_center, center_ball, tau, max_speed,
                               center_mechanism="laplace", quantile="q95", rng=0):
    r"""A public footpoint radius for the two-stage design, from public inputs only:
    :math:`\rho = V + \tau + q`, with ``q`` the predicted ``quantile`` of the stage-1
    centre's distance to the responses' mean (:func:`~dpcore.release.accuracy.
    predict_frechet_error`).

    The footpoint is the geodesic at the low end of the covariate range and the responses lie
    within about :math:`\tau` of a geodesic of speed at most :math:`V`, so their mean lies
    within about :math:`V + \tau` of the footpoint; the centre adds its own error. A wrong
    guess costs accuracy only (the footpoint ball is a public region either way).

    Parameters
    ----------
    manifold : Manifold
    n : int
        Number of observations (public: the release states it).
    eps_center, center_ball, center_mechanism
        As for :func:`private_geodesic_regression_two_stage` (``center_ball`` required;
        Laplace or KNG).
    tau, max_speed : float
        The public residual and speed bounds of stage 2.
    quantile : {"median", "q95"}
    rng : int
        Seed of the model release whose record gives stage 1's σ (public data only).

    Returns
    -------
    float
    """
    from .accuracy import predict_frechet_error

    m = check_manifold(manifold)
    mechanism = check_choice(center_mechanism, "center_mechanism", ("laplace", "kng"))
    quantile = check_choice(quantile, "quantile", ("median", "q95"))
    if center_ball is None:
        raise ValueError("`center_ball=(center, radius)` is needed to predict the centre's "
                         "error.")
    center, radius = _center_ball(m, center_ball, mechanism)
    error = predict_frechet_error(m, check_int(n, "n", minimum=2), epsilon=eps_center,
                                  radius=radius, center=center, mechanism=mechanism, rng=rng)
    return (check_positive(max_speed, "max_speed") + check_positive(tau, "tau")
            + float(error[quantile]))


def _center_ball(m, center_ball, mechanism):
    """The public stage-1 ball ``(center, radius)``, checked (module docstring)."""
    if frechet_mechanism(mechanism).needs_embedding:
        try:
            m.ambient_dim  # noqa: B018 - raises where there is no embedding
        except (NotImplementedError, AttributeError, TypeError) as exc:
            others = [k for k, v in FRECHET_RELEASES.items() if not v.needs_embedding]
            raise ValueError(
                f"`center_mechanism`={mechanism!r} needs an ambient embedding, which "
                f"{m!r} does not have; use one of {others} with a public `center_ball`."
            ) from exc
    if center_ball is None:
        if not m.is_compact:
            raise ValueError(
                f"Pass a public `center_ball=(center, radius)` holding the responses: {m!r} is "
                "not compact, so the whole space cannot serve as the stage-1 ball.")
        center, radius = np.asarray(m.origin, dtype=float), float(m.diameter)
    else:
        if (isinstance(center_ball, (str, bytes)) or not hasattr(center_ball, "__len__")
                or len(center_ball) != 2):
            raise TypeError("`center_ball` must be a pair (center, radius) or None, got "
                            f"{center_ball!r}.")
        center = check_point(m, center_ball[0], "center_ball[0]")
        radius = check_positive(center_ball[1], "center_ball[1]")
    if frechet_mechanism(mechanism).radius_limited:
        limit = frechet_radius_limit(m.curvature_bounds[1], m.injectivity_radius)
        if not radius < limit:
            whole = " (None means the whole space)" if center_ball is None else ""
            raise ValueError(
                f"The stage-1 ball's radius {radius:g}{whole} is not below r* = {limit:.4g} "
                f"on {m!r}, which the {mechanism} mechanism's sensitivity needs (paper 001 "
                "Thm 2). Pass a smaller public `center_ball`, or center_mechanism="
                "'ambient_laplace' on a space with an embedding.")
    return center, radius


def combine_stages(stage1, stage2, *, footpoint_radius):
    """The :class:`Release` of a two-stage design from its two stage releases.

    Parameters
    ----------
    stage1 : Release
        The private centre (:func:`~dpcore.release.private_frechet_mean`, one draw).
    stage2 : Release
        The strict joint KNG release whose footpoint ball was centred on stage 1's value.
    footpoint_radius : float
        Stage 2's public footpoint radius.

    Returns
    -------
    Release
        See :func:`private_geodesic_regression_two_stage`.

    Raises
    ------
    ValueError
        Unless both stages are strict pure-ε releases, stage 1 one private mean and stage 2
        a joint-scheme release whose footpoint ball is centred exactly on it.
    """
    _check_stages(stage1, stage2)
    center = np.asarray(stage1.values["mean"], dtype=float)
    eps1, eps2 = float(stage1.epsilon), float(stage2.epsilon)
    coverage = weaker_coverage(stage1.coverage, stage2.coverage)
    delta = (None if stage1.delta is None or stage2.delta is None or coverage != "proven"
             else float(stage1.delta) + float(stage2.delta))
    assumptions = dict(stage2.assumptions)
    assumptions["center"] = {
        "value": center[0], "source": CENTER_SOURCE,
        "note": (f"the footpoint ball's centre is the stage-1 release (a private "
                 f"{stage1.mechanism} Fréchet mean at epsilon = {eps1:g}), public once "
                 "released: stage 2 is post-processing of it"),
    }
    if "footpoint_support" in assumptions:
        assumptions["footpoint_support"] = {
            **assumptions["footpoint_support"],
            "note": "footpoints restricted to B_rho(stage-1 centre), a public radius"}
    for key, value in stage1.assumptions.items():
        assumptions[f"center_ball_{key}"] = value
    draws = int(stage2.details.get("n_footpoints", 1)) * int(stage2.details.get("n_vectors", 1))
    caveats = [_composition_caveat(stage1, stage2, eps1, eps2, draws, footpoint_radius)]
    caveats += [f"Stage 1 (private centre): {c}" for c in stage1.caveats if c != SEEDED_CAVEAT]
    caveats += [f"Stage 2 (joint KNG): {c}" for c in stage2.caveats if c != SEEDED_CAVEAT]
    if stage1.seeded or stage2.seeded:
        caveats.append(SEEDED_CAVEAT)
    details = {**stage2.details, "two_stage": True, "epsilon_center": eps1,
               "epsilon_stage2": eps2, "footpoint_radius": float(footpoint_radius),
               "stage1": stage1.to_dict()}
    return Release(
        values={**stage2.values, "center": center},
        mechanism=f"two_stage({stage1.mechanism} centre + {stage2.mechanism})",
        epsilon=eps1 + eps2,
        delta=delta,
        mu=None,
        sensitivity={**stage2.sensitivity,
                     **{f"center_{k}": v for k, v in stage1.sensitivity.items()}},
        sigma={**stage2.sigma, **{f"center_{k}": v for k, v in stage1.sigma.items()}},
        assumptions=assumptions,
        diagnostics={**stage2.diagnostics, "center": dict(stage1.diagnostics)},
        mode="strict",
        seeded=bool(stage1.seeded or stage2.seeded),
        caveats=caveats,
        details=details,
        coverage=coverage,
    )


def weaker_coverage(first, second):
    """The coverage (:attr:`Release.coverage`) of two composed stages: the weaker one, and
    stage 2's where both are as weak (its label names the sampler that ran there)."""
    if _WEAKNESS.get(second, 3) >= _WEAKNESS.get(first, 3):
        return second
    return first


def _check_stages(stage1, stage2):
    """What :func:`combine_stages` may combine (so that its label claims no more than proven)."""
    for name, rel in (("stage1", stage1), ("stage2", stage2)):
        if not isinstance(rel, Release):
            raise TypeError(f"`{name}` must be a Release, got {type(rel).__name__}.")
        if rel.mode != "strict" or rel.epsilon is None or rel.mu is not None:
            raise ValueError(f"`{name}` must be a strict-mode pure epsilon-DP release "
                             "(a two-stage design composes epsilons).")
    mean = np.asarray(stage1.values.get("mean", np.empty(0)), dtype=float)
    if mean.ndim < 1 or mean.shape[0] != 1:
        raise ValueError("`stage1` must hold exactly one private mean (n_draws=1).")
    if stage2.details.get("scheme") != "joint" or "footpoint_support" not in stage2.assumptions:
        raise ValueError("`stage2` must be a joint-scheme release with a footpoint ball.")
    used = np.asarray(stage2.assumptions.get("center", {}).get("value", np.nan), dtype=float)
    if used.shape != mean[0].shape or not np.array_equal(used, mean[0]):
        raise ValueError("`stage2`'s footpoint ball is not centred on `stage1`'s released "
                         "mean: the two releases are not one two-stage design.")


def _composition_caveat(stage1, stage2, eps1, eps2, draws, radius):
    """The caveat stating the two stages, their budgets and how they compose."""
    per = float(stage2.details.get("epsilon_per_geodesic", eps2 / max(draws, 1)))
    weaker = ("both stages are exact: the total is pure epsilon-DP with delta = 0"
              if stage1.coverage == "proven" and stage2.coverage == "proven" else
              f"stage 1 is {stage1.guarantee} and stage 2 {stage2.guarantee}: the total is "
              "only as strong as the weaker stage (no delta is certified)")
    return (
        f"Two-stage design (DESIGN §12): stage 1 released a private Fréchet mean c of the "
        f"responses ({stage1.mechanism}, epsilon_1 = {eps1:g}); stage 2 drew {draws} "
        f"(footpoint, vector) pair(s) by the joint KNG with footpoints restricted to the "
        f"public-radius ball B_{radius:g}(c), at epsilon_2 = "
        f"{per:g} per geodesic. For any fixed centre the joint KNG is epsilon_2-DP per pair, and "
        "c enters stage 2 only as a released value (post-processing), so the stages compose: "
        f"total epsilon = epsilon_1 + {draws} x epsilon_2 = {eps1:g} + {eps2:g} = "
        f"{eps1 + eps2:g}. The label follows the weaker stage: {weaker}.")
