r"""How much work a release will do, estimated before it runs, and the budget it must fit.

A release's cost is counted in elementary operations, from public inputs only:

- Metropolis-Hastings: ``chains x steps x n`` gradient terms (every step evaluates the energy's
  gradient, a sum over the n observations, at every chain), ``steps = burn_in + chain_length``;
- exact rejection samplers: ``expected proposals x n`` gradient terms, the expected number of
  proposals being the one the sampler's envelope predicts (the refined envelope's acceptance
  bound, or the public worst case ``draws x exp(g_max / sigma)`` of uniform proposals);
- Monte Carlo privacy accounting (the Gaussian mechanism's µ): ``n_samples x repeats`` samples;
- a budget sweep (:func:`~dpcore.experiments.budget_sweep`): the Metropolis-Hastings stages of
  all its batched releases, one per data set and chunk of budget pairs.

Time is estimated as ``steps x (per_step + per_term x chains x n)`` for a Metropolis-Hastings
run (a step also pays a fixed cost, independent of the batch: Python and numpy call overhead,
which dominates at small ``chains x n``), ``terms x per_term`` for an exact sampler and
``repeats x (per_step + n_samples x per_sample)`` for Monte Carlo (a repeat also pays a fixed
cost: its grid of ε values). The constants (:class:`WorkCosts`) are measured per process and
per manifold on a tiny calibration run of the same code (:func:`calibrated_costs`, about 0.1 s
on the sphere), then cached for :data:`CALIBRATION_TTL` seconds: a calibration taken while the
machine was busy would otherwise overstate every estimate, and refuse requests that fit, for
the life of a dashboard server.

A request whose estimated time exceeds the budget (:data:`DEFAULT_WORK_BUDGET` seconds, or the
release's ``max_work=`` argument) is refused before any sampling with a
:class:`~dpcore.exceptions.WorkBudgetError` that says the estimate and what to reduce.
"""

from __future__ import annotations

import contextvars
import functools
import time
from dataclasses import astuple, dataclass, field, replace

import numpy as np

from ..exceptions import WorkBudgetError
from ._format import count as _fmt
from ._format import duration as _fmt_seconds
from ._timing import (  # noqa: F401 - WorkCosts and WORK_COSTS_ENV are this module's API
    WORK_COSTS_ENV,
    WorkCosts,
    _calibrate,
    fixed_costs,
)
from .batching import MAX_BATCH_CHAINS, budget_pair_batches  # noqa: F401 (also API here)

#: Default work budget of one release, in seconds of estimated run time: a request estimated
#: above it is refused (pass ``max_work=float("inf")`` to a release to run it anyway). One
#: minute keeps an interactive request, on the 2-core machine the dashboard is measured on,
#: below the time a user waits for a page.
DEFAULT_WORK_BUDGET = 60.0

#: What an estimate with a :attr:`WorkPart.data_dependent` stage adds to its first line.
DATA_DEPENDENT_NOTE = ("For data that fit inside the public bounds: the exact sampler's run time "
                       "depends on the data.")

#: Seconds after which a calibration is measured again.
CALIBRATION_TTL = 600.0
_CACHE = {}
#: When each calibration of ``_CACHE`` was measured: key -> (``_now()``, the costs measured).
#: An entry of ``_CACHE`` put there by hand (tests) is not the one measured and does not expire.
_MEASURED = {}
#: The manifold each measured calibration was timed on (to measure it again).
_SUBJECTS = {}
#: A calibration at least this old (seconds) is measured again before an estimate built on it
#: refuses a request (:func:`_remeasured_before_refusing`).
REMEASURE_AFTER = 5.0
#: Calibration keys read by :func:`calibrated_costs` during the estimate being made (per
#: thread: the dashboard's sessions run in threads).
_USED = contextvars.ContextVar("dpcore_work_calibrations_used", default=None)
_now = time.monotonic


@dataclass(frozen=True)
class WorkPart:
    """One stage of a request: what runs, its operations and its estimated time.

    Attributes
    ----------
    what : str
        The stage, e.g. ``"joint KNG by MCMC"``.
    operations : float
        Elementary operations (``unit``).
    unit : str
        ``"gradient terms"`` or ``"Monte Carlo samples"``.
    seconds : float
        Estimated time.
    factors : dict
        The factors of ``operations`` (e.g. ``{"chains": 10, "steps": 3000, "n": 100}``).
    reduce : str
        What to lower to shrink this stage.
    upper_bound : bool
        The operations are a worst case over data sets, not an expectation (the
        uniform-proposal exact samplers): shown as "up to", never a reason to refuse.
    data_dependent : bool
        The operations are a public prediction for data that fit inside the public bounds
        (an exact sampler's envelope): other data take longer, by orders of magnitude when
        their fit lies far outside (docs/measurements.md, session 31).
    """

    what: str
    operations: float
    unit: str
    seconds: float
    factors: dict = field(default_factory=dict)
    reduce: str = ""
    upper_bound: bool = False
    data_dependent: bool = False

    def describe(self) -> str:
        """One line: the stage, its factors, operations and time."""
        shown = " x ".join(f"{k} {_fmt(v)}" for k, v in self.factors.items())
        about = "up to" if self.upper_bound else "about"
        return (f"{self.what}: {shown} = {about} {_fmt(self.operations)} {self.unit}, "
                f"{about} {_fmt_seconds(self.seconds)}")


@dataclass(frozen=True)
class WorkEstimate:
    """The estimated work of one request (see the module docstring).

    Attributes
    ----------
    parts : tuple of WorkPart
        The stages, in the order they run.
    """

    parts: tuple

    @property
    def operations(self) -> float:
        """Total gradient terms (Monte Carlo samples are counted in :attr:`mc_samples`)."""
        return float(sum(p.operations for p in self.parts if p.unit == "gradient terms"))

    @property
    def mc_samples(self) -> float:
        return float(sum(p.operations for p in self.parts if p.unit == "Monte Carlo samples"))

    @property
    def seconds(self) -> float:
        """Estimated run time of the request: the stages with an expected cost (a
        worst-case stage is in :attr:`worst_case_seconds`)."""
        return float(sum(p.seconds for p in self.parts if not p.upper_bound))

    @property
    def worst_case_seconds(self) -> float:
        """Run time with every worst-case stage at its bound."""
        return float(sum(p.seconds for p in self.parts))

    @property
    def data_dependent(self) -> bool:
        """Whether a stage's cost is predicted for data that fit the public bounds."""
        return any(p.data_dependent for p in self.parts)

    @property
    def dominant(self):
        """The expected-cost stage with the largest estimated time (None if there is none)."""
        parts = [p for p in self.parts if not p.upper_bound]
        return max(parts, key=lambda p: p.seconds) if parts else None

    def describe(self) -> str:
        """Sentences for a page: the total, then one line per stage."""
        bound = self.worst_case_seconds > self.seconds
        counts = [f"{_fmt(self.operations)} gradient terms"] if (
            self.operations or not self.mc_samples) else []
        if self.mc_samples:
            counts.append(f"{_fmt(self.mc_samples)} Monte Carlo samples")
        lines = [f"Estimated work: {'' if self.seconds < 1e-3 else 'about '}"
                 f"{_fmt_seconds(self.seconds)}"
                 + (f" (up to {_fmt_seconds(self.worst_case_seconds)} for the worst-case data "
                    "set)" if bound else "") + f" ({', '.join(counts)})."
                 + (f" {DATA_DEPENDENT_NOTE}" if self.data_dependent else "")]
        lines += [f"- {p.describe()}" for p in self.parts]
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """JSON-safe summary (for a release's record or a page)."""
        return {
            "seconds": self.seconds,
            "worst_case_seconds": self.worst_case_seconds,
            "operations": self.operations,
            "mc_samples": self.mc_samples,
            "parts": [{"what": p.what, "operations": p.operations, "unit": p.unit,
                       "seconds": p.seconds, "factors": dict(p.factors),
                       "upper_bound": p.upper_bound, "data_dependent": p.data_dependent}
                      for p in self.parts],
        }


# ---------------------------------------------------------------------- stages
def mcmc_part(costs, *, chains, steps, n, what="Metropolis-Hastings",
              reduce="the number of draws (chains), the chain length and burn-in, or n"):
    """A Metropolis-Hastings stage: ``chains x steps x n`` gradient terms.

    Its time is ``steps x (per_step + per_term x chains x n)``: linear in ``steps``, affine in
    ``chains`` and in ``n``.
    """
    chains, steps, n = int(chains), int(steps), int(n)
    seconds = steps * (costs.per_step + costs.per_term * chains * n)
    return WorkPart(what=what, operations=float(chains) * steps * n, unit="gradient terms",
                    seconds=float(seconds),
                    factors={"chains": chains, "steps": steps, "n": n}, reduce=reduce)


def exact_part(costs, *, draws, proposals_per_draw, n, what="exact rejection sampling",
               reduce="the number of draws, n x epsilon, or use sampler='mcmc'",
               worst_case=False, data_dependent=None):
    """An exact rejection sampler: ``draws x proposals per draw x n`` gradient terms (the
    proposals per draw are the expected number the sampler's envelope predicts, or with
    ``worst_case`` the public bound over all data sets of the uniform proposals), each
    proposal also costing its draw (``costs.per_proposal``). Its time depends on the data
    unless ``worst_case`` or ``data_dependent=False`` (closed-form draws)."""
    proposals = float(draws) * float(proposals_per_draw)
    terms = proposals * float(n)
    if worst_case:
        what = f"{what} (worst case over data sets)"
    return WorkPart(what=what, operations=terms, unit="gradient terms",
                    seconds=terms * costs.per_term + proposals * costs.per_proposal,
                    factors={"draws": int(draws), "proposals per draw": float(proposals_per_draw),
                             "n": int(n)}, reduce=reduce, upper_bound=bool(worst_case),
                    data_dependent=(not worst_case) if data_dependent is None
                    else bool(data_dependent))


def monte_carlo_part(costs, *, n_samples, repeats, what="Monte Carlo estimate of mu",
                     reduce="the Monte Carlo samples or repeats"):
    """Monte Carlo privacy accounting: ``n_samples x repeats`` samples, in
    ``repeats x (per_step + n_samples x per_sample)`` seconds."""
    total = float(n_samples) * float(repeats)
    return WorkPart(what=what, operations=total, unit="Monte Carlo samples",
                    seconds=total * costs.per_sample + float(repeats) * costs.per_step,
                    factors={"samples": int(n_samples), "repeats": int(repeats)}, reduce=reduce)


def estimate_work(*parts):
    """The :class:`WorkEstimate` of a request made of the given stages (:func:`mcmc_part`,
    :func:`exact_part`, :func:`monte_carlo_part`)."""
    return WorkEstimate(parts=tuple(parts))


def check_work(estimate, max_work=None):
    """Refuse a request whose estimated time exceeds the budget.

    Parameters
    ----------
    estimate : WorkEstimate
    max_work : float, optional
        Budget in seconds of estimated run time; None uses :data:`DEFAULT_WORK_BUDGET`,
        ``float("inf")`` never refuses.

    Returns
    -------
    WorkEstimate
        ``estimate``, when within the budget.

    Raises
    ------
    WorkBudgetError
        Naming the estimate, the budget and what to reduce.
    """
    budget = resolve_budget(max_work)
    if estimate.seconds <= budget:  # worst-case stages are bounds, not expectations
        return estimate
    top = estimate.dominant
    raise WorkBudgetError(
        f"This request would take about {_fmt_seconds(estimate.seconds)} (estimated before "
        f"running: {top.describe()}), above the work budget of {_fmt_seconds(budget)}. "
        f"Reduce {top.reduce}; or pass max_work=float('inf') to run it anyway.",
        seconds=estimate.seconds, budget=budget, estimate=estimate)


def refusal_message(estimate, max_work=None):
    """The message :func:`check_work` refuses ``estimate`` with, or None within the budget
    (for a user interface that disables a request instead of running it)."""
    try:
        check_work(estimate, max_work)
    except WorkBudgetError as exc:
        return str(exc)
    return None


def resolve_budget(max_work):
    """The budget in seconds: ``max_work`` checked, or the default when None."""
    if max_work is None:
        return DEFAULT_WORK_BUDGET
    budget = float(max_work)
    if not budget > 0:  # also NaN
        raise ValueError(f"`max_work` must be a positive number of seconds (or inf), got "
                         f"{max_work!r}.")
    return budget


def _remeasure(key):
    """Measure the calibration ``key`` again and keep, per cost, the smaller of the two
    measurements (another process's load only ever makes a timing longer). Only a measured
    calibration (not one set by hand) at least :data:`REMEASURE_AFTER` seconds old is measured
    again (never costs fixed in the environment). Returns whether the kept costs changed."""
    at, measured = _MEASURED.get(key, (None, None))
    if measured is None or _CACHE.get(key) is not measured or _now() - at < REMEASURE_AFTER \
            or fixed_costs(key[1]) is not None:
        return False
    again = _calibrate(_SUBJECTS[key], key[1])
    kept = WorkCosts(*map(min, astuple(measured), astuple(again)))
    _CACHE[key] = kept
    _MEASURED[key] = (_now(), kept)
    return kept != measured


def _remeasured_before_refusing(estimator):
    """Wrap a public work estimator: when its estimate is above :data:`DEFAULT_WORK_BUDGET`
    (the request would be refused), the calibrations it used are measured again
    (:func:`_remeasure`) and the estimate made anew from them.

    A calibration timed while the machine was busy (the dashboard's warm-up, other sessions,
    other programs) overstates every estimate made from it for :data:`CALIBRATION_TTL`
    seconds; under a loaded test suite one came out 9 times too slow and refused a release of
    a few seconds. Estimates within the budget are returned as they are, and so are
    estimates from given ``costs`` (they read no calibration)."""
    @functools.wraps(estimator)
    def estimate(*args, **kwargs):
        outer = _USED.get()
        token = _USED.set([])
        try:
            est = estimator(*args, **kwargs)
            used = list(dict.fromkeys(_USED.get()))
        finally:
            _USED.reset(token)
        if outer is not None:
            outer.extend(used)
        if est.seconds <= DEFAULT_WORK_BUDGET:
            return est
        changed = [_remeasure(key) for key in used]
        return estimator(*args, **kwargs) if any(changed) else est

    return estimate


# ---------------------------------------------------------------------- requests
@_remeasured_before_refusing
def estimate_regression_work(manifold, n, *, eps_p, eps_v, tau=None, tau_m=None,
                             max_speed=None, n_vectors=1, n_footpoints=1, chain_length=2000,
                             burn_in=1000, mode="strict", scheme=None, sampler="auto",
                             n_budgets=1, costs=None, footpoint_radius=None):
    """Estimated work of :func:`~dpcore.release.private_geodesic_regression` from its public
    inputs (the arguments have the release's meaning, ``footpoint_radius`` included: the
    exact sampler that runs depends on the public footpoint ball; ``n_budgets`` budget pairs
    sampled together as :func:`~dpcore.release.private_geodesic_regression_budgets` does).

    Returns
    -------
    WorkEstimate
    """
    from .planning import plan_regression_sampler

    m = manifold
    mode_strict = mode == "strict"
    scheme = ("joint" if mode_strict else "sequential") if scheme is None else scheme
    draws = int(n_footpoints) * int(n_vectors)
    exact_terms, worst_case, exact_kind = None, False, "exact"
    if scheme == "joint" and mode_strict and tau is not None:
        plan = plan_regression_sampler(m, n, eps_p=eps_p, eps_v=eps_v, tau=tau, tau_m=tau_m,
                                       max_speed=max_speed, draws=draws, mode=mode,
                                       scheme=scheme, sampler=sampler,
                                       footpoint_radius=footpoint_radius)
        if plan["exact"]:
            worst_case = "predicted_work" not in plan
            exact_terms = int(n_budgets) * plan.get("predicted_work", plan["work"])
            # priced as the release prices it (planning.exact_cost_kind; a worst case over
            # the uniform proposals keeps the library's gradient)
            exact_kind = plan["cost_kind"]
    # Paper mode on R^d does not clip: its sequential stages are closed-form K-norm draws.
    linear_exact = bool(m.is_linear and not mode_strict and scheme == "sequential")
    return regression_work(m, n, draws=draws, n_footpoints=n_footpoints,
                           chain_length=chain_length, burn_in=burn_in, scheme=scheme,
                           linear_exact=linear_exact, exact_terms=exact_terms,
                           exact_worst_case=worst_case, n_budgets=n_budgets, costs=costs,
                           exact_kind=exact_kind)


@_remeasured_before_refusing
def regression_work(manifold, n, *, draws, n_footpoints, chain_length, burn_in, scheme,
                    linear_exact=False, exact_terms=None, exact_worst_case=False, n_budgets=1,
                    costs=None, exact_kind="exact"):
    """The :class:`WorkEstimate` of a regression release whose sampler is decided:
    ``exact_terms`` (expected gradient terms of an exact sampler, all budgets; with
    ``exact_worst_case`` the public bound over data sets) or None for MCMC; ``linear_exact``
    for the closed-form K-norm draws of R^d without clipping. ``exact_kind`` is the calibration
    that prices the exact terms: ``"exact"`` (the library's batched gradient, as the uniform
    proposals and the refined envelope evaluate it) or ``"bundle"`` (the bundle sampler's own
    proposal kernel, :func:`~dpcore.mechanisms.kng_bundle.bundle_proposal_norm`) or
    ``"squeeze"`` (the ``"exact"`` terms, whose count includes the squeeze's own work per
    proposal, :data:`~dpcore.release.uniform_cost.SQUEEZE_PROPOSAL_TERMS`, so no proposal is
    charged its draw again)."""
    n, steps, k = int(n), int(chain_length) + int(burn_in), int(n_budgets)
    if costs is None:  # each stage is timed on its own code path
        sampled = scheme == "joint" or linear_exact or exact_terms is not None
        kind = "exact" if exact_kind == "squeeze" else exact_kind
        costs = calibrated_costs(manifold, kind if exact_terms is not None
                                 else "joint" if sampled else "vector")
        if exact_terms is not None and exact_kind == "squeeze":
            costs = replace(costs, per_proposal=0.0)
        foot_costs = None if sampled else calibrated_costs(manifold, "footpoint")
    else:
        foot_costs = costs
    if linear_exact:
        return estimate_work(exact_part(costs, draws=k * draws, proposals_per_draw=1, n=n,
                                        what="exact K-norm draws (affine gradient)",
                                        data_dependent=False))
    if exact_terms is not None:
        per_draw = float(exact_terms) / (max(k * draws, 1) * max(n, 1))
        return estimate_work(exact_part(costs, draws=k * draws, proposals_per_draw=per_draw,
                                        n=n, what="exact joint KNG (rejection sampling)",
                                        worst_case=exact_worst_case))
    reduce = ("the number of draws (n_footpoints x n_vectors), chain_length and burn_in, "
              "or n")
    if scheme == "joint":
        return estimate_work(mcmc_part(costs, chains=k * draws, steps=steps, n=n,
                                       what="joint KNG by MCMC", reduce=reduce))
    return estimate_work(
        mcmc_part(foot_costs, chains=k * int(n_footpoints), steps=steps, n=n,
                  what="footpoint KNG by MCMC", reduce=reduce),
        mcmc_part(costs, chains=k * draws, steps=steps, n=n,
                  what="shooting-vector KNG by MCMC", reduce=reduce),
    )


@_remeasured_before_refusing
def estimate_frechet_work(manifold, n, *, epsilon, radius, center, n_draws=1,
                          chain_length=2000, burn_in=1000, mode="strict", sampler="auto",
                          costs=None):
    """Estimated work of a KNG :func:`~dpcore.release.private_frechet_mean` from its public
    inputs (the arguments have the release's meaning; the other mechanisms draw in closed
    form or by one-dimensional radial samplers, whose work is negligible).

    Returns
    -------
    WorkEstimate
    """
    from ..sensitivity import frechet_gradient_sensitivity
    from .planning import _choose_exact, frechet_prediction

    m = manifold
    n, radius = int(n), float(radius)
    delta_g = frechet_gradient_sensitivity(n, radius, m.curvature_bounds[1],
                                           m.injectivity_radius)
    sigma = (2.0 if mode == "strict" else 1.0) * delta_g / float(epsilon)
    predicted = None
    if mode == "strict" and sampler == "auto":
        from ..mechanisms.kng import refined_chart_available

        if refined_chart_available(m):
            predicted = frechet_prediction(m, np.asarray(center, dtype=float), radius, sigma,
                                           n, n_draws)
    exact = _choose_exact(m, sampler, mode, clip=True, speed_cap=True, g_max=2.0 * radius,
                          sigma=sigma, n=n, draws=n_draws, what="work estimate",
                          stacklevel=2, support_ok=mode == "strict" or sampler == "exact",
                          predicted_work=predicted, refined=predicted is not None,
                          warn=False)
    exact_terms = None
    if exact:
        from .planning import exact_work

        exact_terms = predicted if predicted is not None else exact_work(
            2.0 * radius, sigma, n, n_draws)
    return frechet_kng_work(m, n, draws=n_draws, chain_length=chain_length, burn_in=burn_in,
                            exact_terms=exact_terms, exact_worst_case=predicted is None,
                            costs=costs)


@_remeasured_before_refusing
def frechet_kng_work(manifold, n, *, draws, chain_length, burn_in, exact_terms=None,
                     exact_worst_case=False, costs=None):
    """The :class:`WorkEstimate` of a KNG Fréchet-mean release: MCMC with ``draws`` chains, or
    an exact sampler of ``exact_terms`` expected gradient terms."""
    costs = calibrated_costs(manifold, "frechet") if costs is None else costs
    if exact_terms is not None:
        per_draw = float(exact_terms) / (max(int(draws), 1) * max(int(n), 1))
        return estimate_work(exact_part(costs, draws=draws, proposals_per_draw=per_draw, n=n,
                                        what="exact Fréchet KNG (rejection sampling)",
                                        worst_case=exact_worst_case))
    return estimate_work(mcmc_part(
        costs, chains=draws, steps=int(chain_length) + int(burn_in), n=n,
        what="Fréchet KNG by MCMC", reduce="n_draws, chain_length and burn_in, or n"))


@_remeasured_before_refusing
def estimate_monte_carlo_work(manifold, n_samples, repeats, costs=None):
    """Estimated work of a Monte Carlo µ estimate (:func:`~dpcore.privacy.gdp_mu_monte_carlo`
    with ``n_samples`` and ``repeats``, e.g. the Gaussian DP page's sliders).

    Returns
    -------
    WorkEstimate
    """
    costs = calibrated_costs(manifold, "monte_carlo") if costs is None else costs
    return estimate_work(monte_carlo_part(costs, n_samples=n_samples, repeats=repeats))


@_remeasured_before_refusing
def estimate_budget_sweep_work(manifold, sample_sizes, *, n_pairs, replicates=1,
                               n_footpoints=10, n_vectors=10, chain_length=1000, burn_in=500,
                               mode="paper", costs=None):
    """Estimated work of :func:`~dpcore.experiments.budget_sweep` from its settings.

    Every (sample size, replicate) data set runs its ``n_pairs`` budget pairs as batched
    releases of the sequential scheme (chunks of at most 2000 vector chains, as the sweep
    does); each chunk runs ``n_footpoints`` footpoint chains and ``n_footpoints x n_vectors``
    vector chains per pair for ``burn_in + chain_length`` steps (timed on the release's own
    code path, calibration kind ``"sweep"``), or closed-form K-norm draws on a vector space in
    paper mode. Data generation and the non-private fits are not counted (they are small next
    to the chains).

    Returns
    -------
    WorkEstimate
        One stage per sample size and sampler stage, summed over replicates and chunks.
    """
    m = manifold
    draws = int(n_footpoints) * int(n_vectors)
    chains_per_pair = int(n_footpoints) + draws  # footpoint chains, then vector chains
    steps = int(chain_length) + int(burn_in)
    linear_exact = bool(m.is_linear and mode != "strict")
    if costs is None:
        costs = calibrated_costs(m, "joint" if linear_exact else "sweep")
    what = ("exact K-norm draws (affine gradient)" if linear_exact else
            "sequential KNG by MCMC (footpoint and shooting-vector chains)")
    parts = []
    for n in sample_sizes:
        ops = sec = 0.0
        for chunk in budget_pair_batches(int(n_pairs), draws):
            if linear_exact:
                part = exact_part(costs, draws=len(chunk) * draws, proposals_per_draw=1, n=n,
                                  data_dependent=False)
            else:
                part = mcmc_part(costs, chains=len(chunk) * chains_per_pair, steps=steps, n=n)
            ops, sec = ops + part.operations, sec + part.seconds
        factors = {"releases": int(n_pairs) * int(replicates), "chains": chains_per_pair,
                   "steps": steps, "n": int(n)}
        if linear_exact:
            factors = {"releases": int(n_pairs) * int(replicates), "draws": draws, "n": int(n)}
        parts.append(WorkPart(
            what=f"n = {int(n)}: {what}", operations=ops * int(replicates),
            unit="gradient terms", seconds=sec * int(replicates), factors=factors,
            reduce="the sample sizes, replicates, budget pairs, draws per release, or "
                   "the chain length and burn-in"))
    return estimate_work(*parts)


# ---------------------------------------------------------------------- calibration
#: The code paths :func:`calibrated_costs` can time: the four KNG chains, the batched
#: sequential releases of a budget sweep, and the Monte Carlo accounting of the Gaussian
#: mechanism (imported and timed only when asked for).
KINDS = ("joint", "footpoint", "vector", "frechet", "sweep", "monte_carlo", "exact", "bundle")


def calibrated_costs(manifold, kind="joint"):
    """:class:`WorkCosts` of ``manifold`` measured on tiny runs of the samplers, cached in the
    process for :data:`CALIBRATION_TTL` seconds (key: the manifold's repr and ``kind``).

    ``kind`` names the chain timed: ``"joint"`` the joint regression KNG
    (:func:`~dpcore.mechanisms.kng.regression_joint_many`), ``"footpoint"`` and ``"vector"``
    the two stages of the sequential scheme, ``"frechet"`` the Fréchet KNG, ``"sweep"`` the
    batched sequential releases of :func:`~dpcore.experiments.budget_sweep`
    (:func:`~dpcore.release.private_geodesic_regression_budgets` in strict mode, chains counted
    over both stages); each at two (chains, n) sizes, which separate the fixed cost of a step
    from the cost of a gradient term. ``"monte_carlo"`` times
    :func:`~dpcore.privacy.gdp_mu_monte_carlo` at two sample sizes (``per_sample``, and the
    fixed cost of a repeat as ``per_step``; the chain kinds leave ``per_sample`` 0). Costs
    fixed in the environment (:data:`WORK_COSTS_ENV`) are returned instead, untimed.
    """
    if kind not in KINDS:
        raise ValueError(f"`kind` must be one of {KINDS}, got {kind!r}.")
    key = (repr(manifold), kind)
    at, measured = _MEASURED.get(key, (None, None))
    # costs fixed by the operator (WORK_COSTS_ENV) time nothing; costs set by hand win
    fixed = None if key in _CACHE and _CACHE[key] is not measured else fixed_costs(kind)
    stale = (measured is not None and _CACHE.get(key) is measured
             and _now() - at > CALIBRATION_TTL)
    if fixed is None and (key not in _CACHE or stale):
        _CACHE[key] = _calibrate(manifold, kind)
        _MEASURED[key] = (_now(), _CACHE[key])
        _SUBJECTS[key] = manifold
    used = _USED.get()
    if used is not None:
        used.append(key)
    return _CACHE[key] if fixed is None else fixed


__all__ = ["DATA_DEPENDENT_NOTE", "DEFAULT_WORK_BUDGET", "KINDS", "WORK_COSTS_ENV", "WorkCosts",
           "WorkEstimate", "WorkPart", "calibrated_costs", "check_work",
           "estimate_budget_sweep_work", "estimate_frechet_work", "estimate_monte_carlo_work",
           "estimate_regression_work", "estimate_work", "exact_part", "frechet_kng_work",
           "mcmc_part", "monte_carlo_part", "refusal_message", "regression_work",
           "resolve_budget"]
