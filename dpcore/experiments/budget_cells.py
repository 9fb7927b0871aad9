r"""Budget-split cells without Markov chains: exact draws where exact sampling is within
reach, else the mechanism's asymptotic law, a **prediction** (:mod:`.budget_law`; DESIGN §12).

A strict budget sweep (:func:`~dpcore.experiments.budget_sweep` with
``cells_from="exact_or_law"``) scores each budget pair on one synthetic data set by
``n_footpoints x n_vectors`` private geodesics of the strict **sequential** scheme (the papers'
split: footpoints by KNG with budget :math:`\epsilon_p`, then vectors by KNG with budget
:math:`\epsilon_v`), and optionally of the strict **joint** scheme at each total (one KNG over
:math:`(p, v)` with budget :math:`\epsilon_p + \epsilon_v`: there the split does not matter).

**Exact or law, decided from public inputs.** A sequential cell is drawn exactly (rejection
from uniform proposals on each stage's support, :func:`~dpcore.sampling.rejection.
sample_kng_exact`: the stage densities are bounded by 1) when the public worst case of both
stages, ``n x (m e^{g_p/σ_p} + m r e^{g_v/σ_v})`` gradient terms with the public gradient
bounds :math:`g_p, g_v` (:func:`~dpcore.mechanisms.kng.regression_gradient_bounds`), is within
:data:`EXACT_CELL_TERMS`; a joint cell when the library's planner
(:func:`~dpcore.release.planning.plan_regression_sampler`) draws it exactly and its public work
is within the same limit (:func:`~dpcore.release.private_geodesic_regression_budgets`). Every
other cell is drawn from the asymptotic law and checked against its exact target; a cell whose
law fails its check, or has none, is *flagged* with the reason.
"""

from __future__ import annotations

import math

import numpy as np

from ..mechanisms.kng import exact_support_available, regression_gradient_bounds
from ..sampling.rejection import UniformBall, WholeSpace, sample_kng_exact, worst_case_proposals
from ..sensitivity import default_max_speed, geodesic_regression_sensitivity
from .budget_law import BudgetLaws, LawOutsideSupport, StrictProblem, TangentBall

__all__ = [
    "EXACT_CELL_TERMS",
    "LAW_SETUP_TERMS",
    "SOURCES",
    "cell_plan",
    "estimate_strict_sweep_work",
    "exact_sequential",
    "sequential_exact_terms",
    "strict_cells",
]

#: Where a cell's draws come from: exact rejection sampling, or the asymptotic law.
SOURCES = ("exact", "law")
#: Public worst-case work (gradient terms) up to which a cell is drawn exactly.
EXACT_CELL_TERMS = 2e7


# ---------------------------------------------------------------------- exact draws
def sequential_exact_terms(manifold, n, eps_p, eps_v, n_footpoints, n_vectors, *, tau,
                           tau_m=None, max_speed=None, footpoint_radius=None):
    """Public worst-case gradient terms of an exact sequential cell (module docstring), from
    public inputs only; ``inf`` where no uniform proposals exist.

    Parameters
    ----------
    manifold : Manifold
    n : int
    eps_p, eps_v : float
    n_footpoints, n_vectors : int
    tau, tau_m, max_speed, footpoint_radius : float or None
        The release's public bounds (``max_speed`` None: the release's default).

    Returns
    -------
    float
    """
    m = manifold
    bounded = m.is_compact or footpoint_radius is not None or tau_m is not None
    if not exact_support_available(m) or not bounded:
        return math.inf
    kappa_low = m.curvature_bounds[0]
    delta_p, delta_v = geodesic_regression_sensitivity(int(n), float(tau), kappa_low,
                                                       tau_m if kappa_low < 0 else None)
    if max_speed is None:
        max_speed = default_max_speed(m, tau_m, tau)
    g_p, g_v = regression_gradient_bounds(m, tau, max_speed)
    per = (n_footpoints * worst_case_proposals(g_p, 2.0 * delta_p / float(eps_p))
           + n_footpoints * n_vectors * worst_case_proposals(g_v, 2.0 * delta_v / float(eps_v)))
    return float(int(n) * per)


def _exact_joint_plan(manifold, n, eps_p, eps_v, draws, kw):
    """Whether a joint cell is drawn exactly (the library's planner, public inputs), and its
    public work in gradient terms. Not by the certified bundle sampler: it builds an envelope
    of up to 60,000 leaves per release, seconds each, too slow for a sweep's many cells (its
    cells come from the law)."""
    from ..release import plan_regression_sampler

    plan = plan_regression_sampler(
        manifold, int(n), eps_p=eps_p, eps_v=eps_v, tau=kw["tau"], tau_m=kw.get("tau_m"),
        max_speed=kw.get("max_speed"), draws=draws, scheme="joint",
        footpoint_radius=kw.get("footpoint_radius"))
    work = plan.get("predicted_work", plan["work"])
    exact = bool(plan["exact"] and plan.get("exact_sampler") != "certified bundle"
                 and work is not None and work <= EXACT_CELL_TERMS)
    return exact, (float(work) if exact else 0.0)


def cell_plan(manifold, n, cells, n_footpoints, n_vectors, release_kwargs):
    """Exact or law for each cell ``(eps_p, eps_v, scheme)`` at sample size ``n``, decided
    from public inputs only, with each exact cell's public worst-case work.

    Returns
    -------
    list of (bool, float)
        ``(exact, gradient terms)`` per cell (terms 0 for a law cell).
    """
    kw = {k: release_kwargs.get(k) for k in ("tau", "tau_m", "max_speed", "footpoint_radius")}
    out = []
    for eps_p, eps_v, scheme in cells:
        if scheme == "joint":
            out.append(_exact_joint_plan(manifold, n, eps_p, eps_v,
                                         n_footpoints * n_vectors, kw))
            continue
        terms = sequential_exact_terms(manifold, n, eps_p, eps_v, n_footpoints, n_vectors,
                                       **kw)
        out.append((terms <= EXACT_CELL_TERMS, terms if terms <= EXACT_CELL_TERMS else 0.0))
    return out


#: Gradient terms per observation of a data set's asymptotic law (descent to the zero of the
#: clipped gradient and its Jacobian: about 60 Levenberg-Marquardt steps of 1 + 8d gradients),
#: for the work estimate.
LAW_SETUP_TERMS = 2000
#: Cost of one term of the law's work against one term of a batched chain (the calibrated
#: unit): small arrays and chart maps. Measured on S² with the page's default cells (6 per data
#: set): 0.10, 0.17 and 0.78 s at n = 50, 100 and 200, against 0.27, 0.55 and 1.1 s estimated.
LAW_TERM_COST = 10.0


def estimate_strict_sweep_work(manifold, sample_sizes, cells, *, replicates, n_footpoints,
                               n_vectors, release_kwargs, costs=None):
    """Estimated work of a strict sweep with ``cells_from="exact_or_law"``, from public
    inputs: per sample size, the exact cells' public worst case (an upper bound, shown as "up
    to") and the law cells' expected work (the law's setup once per data set, one check per
    distinct scale and stage of :data:`~dpcore.experiments.budget_law.CHECK_DRAWS` draws, the
    draws themselves).

    Parameters
    ----------
    manifold : Manifold
    sample_sizes : sequence of int
    cells : sequence of (eps_p, eps_v, scheme)
        The cells of one data set (the budget pairs, and joint totals if any).
    replicates, n_footpoints, n_vectors : int
    release_kwargs : dict
        The public bounds (``tau``, ``tau_m``, ``max_speed``, ``footpoint_radius``).
    costs : WorkCosts, optional
        Default: :func:`~dpcore.release.work.calibrated_costs` of the joint kind.

    Returns
    -------
    WorkEstimate
    """
    from ..release.work import WorkPart, calibrated_costs, estimate_work
    from .budget_law import CHECK_DRAWS

    costs = calibrated_costs(manifold, "joint") if costs is None else costs
    draws = n_footpoints * n_vectors
    parts = []
    for n in sample_sizes:
        plan = cell_plan(manifold, n, cells, n_footpoints, n_vectors, release_kwargs)
        exact_terms = sum(t for ok, t in plan if ok) * replicates
        law = [c for c, (ok, _) in zip(cells, plan, strict=True) if not ok]
        if exact_terms:
            parts.append(WorkPart(
                what=f"n = {int(n)}: exact draws (worst case over data sets)",
                operations=float(exact_terms), unit="gradient terms",
                seconds=float(exact_terms) * costs.per_term,
                factors={"exact cells": (len(cells) - len(law)) * replicates, "n": int(n)},
                reduce="n x epsilon (exact cells), the draws per release or the replicates",
                upper_bound=True))
        if law:
            scales = len({(s, p) for p, _, s in law}) + len({v for _, v, _ in law})
            terms = (LAW_SETUP_TERMS + scales * CHECK_DRAWS + len(law) * draws) * n \
                * replicates
            parts.append(WorkPart(
                what=f"n = {int(n)}: predictions from the asymptotic law",
                operations=float(terms), unit="gradient terms",
                seconds=float(terms) * costs.per_term * LAW_TERM_COST,
                factors={"cells": len(law) * replicates, "n": int(n)},
                reduce="the sample sizes, replicates or budget pairs"))
    return estimate_work(*parts)


def _footpoint_support(problem):
    m, ball = problem.manifold, problem.foot_ball
    if ball is None or ball.radius >= m.diameter:
        return WholeSpace(m)
    return UniformBall(m, ball.center, ball.radius)


def exact_sequential(problem, pairs, n_footpoints, n_vectors, gen):
    """Exact draws of the sequential scheme for several budget pairs on one data set: the
    footpoints of all pairs from one run of uniform proposals, then each footpoint's vectors.

    Returns a list of ``(footpoints (m, *ps), vectors (m, r, *ps))`` per pair."""
    m = problem.manifold
    sig = np.array([problem.sigmas(p, v) for p, v in pairs])
    feet, _ = sample_kng_exact(problem.footpoint_gradient_norm, sig[:, 0],
                               _footpoint_support(problem), n_footpoints, gen,
                               n_terms=problem.n)
    feet = feet.reshape((len(pairs), n_footpoints, *m.point_shape))
    ball = TangentBall(m.dim, problem.max_speed)
    out = []
    for k in range(len(pairs)):
        vectors = []
        for p in feet[k]:
            basis = m.orthonormal_basis(p)

            def gradient_norm(c, p=p, basis=basis):
                v = np.tensordot(c, basis, axes=1)
                return problem.vector_gradient_norm(np.broadcast_to(p, v.shape), v)

            coords, _ = sample_kng_exact(gradient_norm, sig[k, 1], ball, n_vectors, gen,
                                         n_terms=problem.n)
            vectors.append(np.tensordot(coords, basis, axes=1))
        out.append((feet[k], np.stack(vectors)))
    return out


# ---------------------------------------------------------------------- cells
def strict_cells(manifold, x, y, cells, seed, n_footpoints, n_vectors, release_kwargs):
    """The values of the cells ``(eps_p, eps_v, scheme)`` of one data set.

    Parameters
    ----------
    manifold : Manifold
    x, y : arrays
        The synthetic data set.
    cells : sequence of (float, float, str)
        Budget pairs with their scheme: ``"sequential"``, or ``"joint"`` (one KNG over (p, v)
        with budget ``eps_p + eps_v``).
    seed : SeedSequence or int
        The job's seed (all draws of the data set come from it, in the order of ``cells``).
    n_footpoints, n_vectors : int
        Geodesics per cell: footpoints, and vectors at each (the joint scheme draws
        ``n_footpoints * n_vectors`` pairs).
    release_kwargs : dict
        The strict public bounds: ``tau``, ``covariate_range`` and, where given, ``tau_m``,
        ``center``, ``max_speed``, ``footpoint_radius``.

    Returns
    -------
    list of (float, str, str or None)
        Per cell ``(mse, source, flag)``: the mean MSE of its geodesics on the data (NaN where
        the law has no prediction), ``source`` in :data:`SOURCES`, and None or why the cell's
        asymptotic law is not trusted.
    """
    gen = np.random.default_rng(seed)
    kw = {k: release_kwargs.get(k) for k in ("tau", "covariate_range", "tau_m", "center",
                                             "max_speed", "footpoint_radius")}
    problem = StrictProblem.make(manifold, x, y, **kw)
    out = [None] * len(cells)
    plan = cell_plan(manifold, problem.n, cells, n_footpoints, n_vectors, kw)
    exact_seq = [(k, p, v) for k, (p, v, s) in enumerate(cells)
                 if s == "sequential" and plan[k][0]]
    if exact_seq:
        drawn = exact_sequential(problem, [(p, v) for _, p, v in exact_seq], n_footpoints,
                                 n_vectors, gen)
        for (k, _, _), (feet, vecs) in zip(exact_seq, drawn, strict=True):
            out[k] = (float(problem.mse(feet, vecs).mean()), "exact", None)
    for k, (eps_p, eps_v, scheme) in enumerate(cells):
        if scheme == "joint" and plan[k][0]:
            out[k] = _exact_joint(manifold, x, y, eps_p, eps_v, n_footpoints, n_vectors, kw,
                                  gen)
    laws, checks = None, {}
    for k, (eps_p, eps_v, scheme) in enumerate(cells):
        if out[k] is not None:
            continue
        laws = laws or BudgetLaws(problem)
        if not laws.valid:
            out[k] = (math.nan, "law", laws.reason)
            continue
        if scheme == "joint":
            stages = [("joint", laws.kng.sigma(problem.n * (eps_p + eps_v)))]
        else:
            stages = list(zip(("p", "v"), problem.sigmas(eps_p, eps_v), strict=True))
        for key in stages:
            if key not in checks:
                checks[key] = laws.check(*key, gen)
        try:
            feet, vecs = (laws.joint(eps_p + eps_v, n_footpoints * n_vectors, gen)
                          if scheme == "joint" else
                          laws.sequential(eps_p, eps_v, n_footpoints, n_vectors, gen))
        except LawOutsideSupport as exc:
            out[k] = (math.nan, "law", f"{exc}: the law puts almost no mass on the support")
            continue
        flag = next((checks[key] for key in stages if checks[key]), None)
        out[k] = (float(problem.mse(feet, vecs).mean()), "law", flag)
    return out


def _exact_joint(manifold, x, y, eps_p, eps_v, n_footpoints, n_vectors, kw, gen):
    """An exact joint cell by the library's release (its exact sampler, forced)."""
    from ..release import private_geodesic_regression_budgets
    from .metrics import release_mse

    release = private_geodesic_regression_budgets(
        manifold, x, y, budgets=[(eps_p, eps_v)], scheme="joint", sampler="exact", rng=gen,
        n_footpoints=n_footpoints, n_vectors=n_vectors,
        **{a: b for a, b in kw.items() if b is not None})[0]
    return float(np.mean(release_mse(manifold, release, x, y))), "exact", None
