"""Timing the samplers on tiny runs: the measurements behind
:func:`dpcore.release.work.calibrated_costs` (which caches them and is the one to call).

Each kind of work is timed at two sizes whose difference separates a fixed cost from a cost
per unit (module :mod:`dpcore.release.work`, "calibration"): the four KNG chains, the batched
sequential releases of a budget sweep (timed through the mechanisms, whose fixed release
costs cancel in the difference), and the Monte Carlo accounting of the Gaussian mechanism.
"""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass

import numpy as np

#: Calibration sizes: (chains, n) of the Metropolis-Hastings runs, each timed at two chain
#: lengths whose difference removes the per-run cost (setup, diagnostics).
_CALIBRATION_RUNS = ((1, 16), (8, 1024))
_CALIBRATION_STEPS = (10, 50)
#: (n_samples, repeats) of the two Monte Carlo calibration runs, whose difference separates the
#: cost of a sample from the fixed cost of a repeat.
_CALIBRATION_MC = ((400, 5), (2000, 5))


@dataclass(frozen=True)
class WorkCosts:
    """Per-unit costs of the work model, in seconds.

    Attributes
    ----------
    per_step : float
        Fixed cost of one Metropolis-Hastings step, whatever the batch.
    per_term : float
        Cost of one gradient term (one observation at one chain, or at one proposal).
    per_sample : float
        Cost of one Monte Carlo sample of the privacy-loss accounting (for the Monte Carlo
        kind, ``per_step`` is the fixed cost of one repeat).
    per_proposal : float
        Cost of drawing one proposal of an exact sampler from its public support (uniform
        proposals on SPD(2) or Kendall's space: a few microseconds, more than the gradient
        terms of one proposal at small n).
    """

    per_step: float
    per_term: float
    per_sample: float = 0.0
    per_proposal: float = 0.0


#: Environment variable with fixed work costs: a JSON object mapping calibration kinds to
#: ``{"per_step": s, "per_term": s, "per_sample": s}`` (omitted entries 0). Where it names a
#: kind, :func:`dpcore.release.work.calibrated_costs` returns those costs for every manifold
#: and times nothing: a server operator who wants work estimates (and refusals) that do not
#: move with the machine's load sets it, and the test suite sets it so that no test's outcome
#: depends on the machine's speed.
WORK_COSTS_ENV = "DPCORE_WORK_COSTS"
_FIXED = {}


def fixed_costs(kind, environ=None):
    """The :class:`WorkCosts` of ``kind`` set in :data:`WORK_COSTS_ENV`, or None.

    Raises
    ------
    ValueError
        If the variable is not a JSON object of kinds to non-negative finite costs (an
        operator's typo must not pass silently as a measured calibration).
    """
    text = (os.environ if environ is None else environ).get(WORK_COSTS_ENV, "").strip()
    if not text:
        return None
    if text not in _FIXED:
        _FIXED.clear()
        _FIXED[text] = _parse_fixed(text)
    return _FIXED[text].get(kind)


def _parse_fixed(text):
    fields = ("per_step", "per_term", "per_sample", "per_proposal")
    try:
        table = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"{WORK_COSTS_ENV} is not valid JSON: {exc}.") from None
    if not isinstance(table, dict):
        raise ValueError(f"{WORK_COSTS_ENV} must be a JSON object of calibration kinds.")
    out = {}
    for kind, costs in table.items():
        if not isinstance(costs, dict) or set(costs) - set(fields):
            raise ValueError(f"{WORK_COSTS_ENV}[{kind!r}] must be an object with keys among "
                             f"{', '.join(fields)}.")
        values = {f: costs.get(f, 0.0) for f in fields}
        for f, value in values.items():
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
            if not ok or not math.isfinite(value) or value < 0:
                raise ValueError(f"{WORK_COSTS_ENV}[{kind!r}][{f!r}] must be a finite "
                                 f"number >= 0, got {value!r}.")
        out[kind] = WorkCosts(**{f: float(v) for f, v in values.items()})
    return out


def _calibrate(manifold, kind):
    if kind == "monte_carlo":
        (n1, r1), (n2, r2) = _CALIBRATION_MC
        _time_monte_carlo(manifold, 50, 2)  # warm-up: lazy imports and first-call costs
        t1, t2 = (min(_time_monte_carlo(manifold, n, r) for _ in range(3))
                  for n, r in _CALIBRATION_MC)
        # floored as the chains' costs are: a busy machine can time the larger run faster
        per_sample = max((t2 / r2 - t1 / r1) / (n2 - n1), 1e-10)
        per_repeat = max(t1 / r1 - per_sample * n1, 0.0)
        return WorkCosts(per_step=per_repeat, per_term=0.0, per_sample=per_sample)
    if kind == "exact":
        return _calibrate_exact(manifold)
    if kind == "bundle":
        return _calibrate_bundle(manifold)
    short, long = _CALIBRATION_STEPS
    per_step_time = []  # seconds per step at each calibration size, per-run cost removed
    for chains, n in _CALIBRATION_RUNS:
        t_short = min(_time_chain(manifold, kind, chains, n, short) for _ in range(2))
        t_long = min(_time_chain(manifold, kind, chains, n, long) for _ in range(2))
        per_step_time.append(max(t_long - t_short, 0.0) / (long - short))
    (c1, n1), (c2, n2) = _CALIBRATION_RUNS
    per_term = max((per_step_time[1] - per_step_time[0]) / (c2 * n2 - c1 * n1), 1e-10)
    per_step = max(per_step_time[0] - per_term * c1 * n1, 1e-7)
    return WorkCosts(per_step=per_step, per_term=per_term)


#: (proposals, n) of the two batched gradient evaluations timing an exact sampler's term.
_CALIBRATION_EXACT = ((256, 16), (256, 1024))


def _proposal_costs(batch):
    """:class:`WorkCosts` of one gradient term of proposals from ``batch(m, n)``, which
    returns a function evaluating ``m`` proposals against ``n`` observations: the best of three
    timings at each size of :data:`_CALIBRATION_EXACT`, whose difference removes the per-batch
    cost."""
    times = []
    for m, n in _CALIBRATION_EXACT:
        run = batch(m, n)
        best = math.inf
        for _ in range(3):
            start = time.perf_counter()
            run()
            best = min(best, time.perf_counter() - start)
        times.append(best)
    (m1, n1), (m2, n2) = _CALIBRATION_EXACT
    per_term = max((times[1] - times[0]) / (m2 * n2 - m1 * n1), 1e-10)
    return WorkCosts(per_step=max(times[0] - per_term * m1 * n1, 0.0) / m1, per_term=per_term)


def _calibrate_exact(manifold, compiled=True):
    """Cost of one gradient term of an exact sampler's proposals: the joint regression
    gradient norm of a batch of public proposals, evaluated as the uniform-proposal sampler
    does (batched, by the compiled kernel where one exists; ``compiled=False``: the library's
    numpy gradient, in which the certified bundle sampler's leaves are priced), at two n whose
    difference removes the per-batch cost; and the cost of drawing one uniform proposal
    (:func:`_proposal_draw_cost`)."""
    from ..data import make_regression_data
    from ..mechanisms.kng_exact import joint_gradient_norms

    def batch(m, n):
        data = make_regression_data(manifold, n, rng=0)
        y = np.asarray(data.y, dtype=float)
        p = np.broadcast_to(np.asarray(data.footpoint, dtype=float),
                            (m, *manifold.point_shape))
        v = np.broadcast_to(np.asarray(manifold.proj_tangent(data.footpoint,
                                                             data.shooting_vector)), p.shape)

        def run():
            with np.errstate(all="ignore"):
                joint_gradient_norms(manifold, p, v, data.x, y, _CALIBRATION_TAU,
                                     compiled=compiled)
        run()  # first call: compiled code loaded
        return run

    costs = _proposal_costs(batch)
    # a proposal costs its draw and the evaluation's fixed part (per_step) besides its terms
    return WorkCosts(per_step=costs.per_step, per_term=costs.per_term,
                     per_proposal=_proposal_draw_cost(manifold) + costs.per_step)


#: Proposals drawn to time one (best of three).
_CALIBRATION_DRAWS = 2000


def _proposal_draw_cost(manifold):
    """Seconds to draw one proposal ``(p, v)`` uniformly on a public support of
    ``manifold`` (a footpoint ball of radius 0.5 about its base point x a speed ball of
    radius 0.5, as :func:`~dpcore.mechanisms.kng_exact.regression_joint_exact` draws them), or 0
    where the space has no uniform proposals."""
    from ..mechanisms.kng import exact_support_available
    from ..sampling.rejection import BundleBall, UniformBall

    if not exact_support_available(manifold):
        return 0.0
    support = BundleBall(UniformBall(manifold, manifold.origin, 0.5), 0.5)
    rng = np.random.default_rng(0)
    support.sample(16, rng)  # first call: lazy imports
    best = math.inf
    for _ in range(3):
        start = time.perf_counter()
        support.sample(_CALIBRATION_DRAWS, rng)
        best = min(best, time.perf_counter() - start)
    return best / _CALIBRATION_DRAWS


def _calibrate_bundle(manifold):
    """Cost of one term of a bundle release, timed on its own kernel
    (:func:`~dpcore.mechanisms.kng_bundle.bundle_proposal_norm`: on R^2 and R^3 the compiled
    clipped-gradient norm, 10-15 times faster per term than the library's batched gradient
    that :func:`_calibrate_exact` times, its leaves priced in these proposals,
    :data:`~dpcore.mechanisms.kng_bundle.LEAF_TERMS`; on S^2 the native leaf bound, its
    leaves priced in box evaluations), at two n as there. Spaces without their own kernel
    use :func:`_calibrate_exact`."""
    from ..mechanisms.kng_bundle import bundle_proposal_norm

    kernel = bundle_proposal_norm(manifold)
    if kernel is None:
        return _calibrate_exact(manifold, compiled=False)
    rng = np.random.default_rng(0)

    def batch(m, n):
        t = (np.arange(n) + 0.5) / n
        y = rng.normal(size=(n, int(manifold.dim)))
        z = rng.normal(size=(m, 2 * int(manifold.dim))) * 0.1
        z[:, -1] = np.abs(z[:, -1])   # on S^2 the last native coordinate is a speed
        kernel(z, t, y, _CALIBRATION_TAU)  # first call: compiled code loaded
        return lambda: kernel(z, t, y, _CALIBRATION_TAU)

    return _proposal_costs(batch)


#: Residual bound of the calibration chains (the dashboard's S² default).
_CALIBRATION_TAU = 0.2


def _time_chain(manifold, kind, chains, n, steps):
    from ..data import make_regression_data
    from ..mechanisms.kng import (
        KNormGradient,
        regression_footpoints_many,
        regression_joint_many,
        regression_vectors_many,
    )

    data = make_regression_data(manifold, n, rng=0)
    if kind == "sweep":
        return _time_sweep(manifold, data, chains, steps)
    mech = KNormGradient(manifold=manifold, epsilon=1.0, sensitivity=1.0 / n,
                         chain_length=steps, burn_in=0)
    y = np.asarray(data.y, dtype=float)
    start = time.perf_counter()
    with np.errstate(all="ignore"):
        # Chains start at the generating geodesic with residuals clipped at a typical public
        # bound, and a strict release always bounds the speed: the calibration then runs the
        # same code path as the releases it prices (on S² the compiled chain and its
        # vectorised sum over the data, not the slow branch far from any fit).
        p0 = np.asarray(data.footpoint, dtype=float)
        v0 = np.asarray(manifold.proj_tangent(p0, data.shooting_vector), dtype=float)
        speed = float(manifold.diameter) if manifold.is_compact else 2.0
        tau = _CALIBRATION_TAU
        if kind == "joint":
            regression_joint_many([mech], data.x, y, p0, v0, size=chains, rng=0, tau=tau,
                                  max_norm=speed)
        elif kind == "footpoint":
            regression_footpoints_many([mech], data.x, y, p0, v0, size=chains, rng=0, tau=tau)
        elif kind == "vector":
            regression_vectors_many([mech], data.x, y, p0[None], v0, chains, rng=0, tau=tau,
                                    max_norm=speed)
        else:
            mech.frechet_mean(y, y[0], size=chains, rng=0)
    return time.perf_counter() - start


def _time_sweep(manifold, data, chains, steps):
    """Seconds of one batched sequential release as a budget sweep runs it: ``chains // 2``
    budget pairs of one footpoint and one vector chain each, ``steps`` steps in all (half
    burn-in), with the mechanisms, supports and clip a strict sequential release passes them
    (:func:`~dpcore.release.regression.private_geodesic_regression_budgets`, strict mode,
    τ = 1, the footpoint ball ``B_{τ_m + τ}`` about the first response). The release's fixed
    costs (checks, the non-private fit, the records) are left out: the calibration keeps only
    the difference between a short and a long run, in which they cancel."""
    from ..mechanisms import Ball
    from ..mechanisms.kng import (
        KNormGradient,
        regression_footpoints_many,
        regression_vectors_many,
    )
    from ..sensitivity import default_max_speed, geodesic_regression_sensitivity

    y = np.asarray(data.y, dtype=float)
    x = np.asarray(data.x, dtype=float)
    tau, center = 1.0, y[0]
    tau_m = float(np.max(manifold.dist(y, center))) + 1e-9
    t = (x - x.min()) / max(float(x.max() - x.min()), 1e-300)
    kappa_low = manifold.curvature_bounds[0]
    d_p, d_v = geodesic_regression_sensitivity(y.shape[0], tau, kappa_low,
                                               tau_m if kappa_low < 0 else None)
    speed = float(default_max_speed(manifold, tau_m, tau))
    pairs = max(1, int(chains) // 2)
    length, burn = steps - steps // 2, steps // 2
    kng_p = [KNormGradient(manifold=manifold, epsilon=1.0, sensitivity=d_p, chain_length=length,
                           burn_in=burn) for _ in range(pairs)]
    kng_v = [KNormGradient(manifold=manifold, epsilon=1.0, sensitivity=d_v, chain_length=length,
                           burn_in=burn) for _ in range(pairs)]
    p0 = np.asarray(data.footpoint, dtype=float)
    v0 = np.asarray(manifold.proj_tangent(p0, data.shooting_vector), dtype=float)
    ball = Ball.make(manifold, center, tau_m + tau)
    start = time.perf_counter()
    with np.errstate(all="ignore"):
        feet = regression_footpoints_many(kng_p, t, y, p0, v0, size=1, rng=0, tau=tau,
                                          support=ball)
        points = np.concatenate([np.asarray(f.values).reshape(1, *manifold.point_shape)
                                 for f in feet])
        v_init = manifold.transport(np.broadcast_to(p0, points.shape), points, v0)
        regression_vectors_many(kng_v, t, y, points, v_init, 1, 0, tau=tau, max_norm=speed)
    return time.perf_counter() - start


def _time_monte_carlo(manifold, n_samples, repeats):
    """Seconds of one Monte Carlo µ estimate (0 where the space has none)."""
    from ..privacy import gdp_mu_monte_carlo

    if not manifold.is_homogeneous:
        return 0.0
    inj = float(manifold.injectivity_radius)
    sensitivity = 0.1 if not math.isfinite(inj) else min(0.1, 0.25 * inj)
    start = time.perf_counter()
    try:
        gdp_mu_monte_carlo(manifold, 0.5, sensitivity, n_samples=n_samples, repeats=repeats,
                           rng=0)
    except (ValueError, NotImplementedError):
        return 0.0  # no Monte Carlo accounting on this space: no such stage to estimate
    return time.perf_counter() - start


__all__ = ["WorkCosts"]
