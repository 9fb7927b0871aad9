"""Work estimates of releases and the work budget that refuses them (dpcore.release.work)."""

from __future__ import annotations

import contextlib
import math

import numpy as np
import pytest

from dpcore.data import make_regression_data
from dpcore.exceptions import WorkBudgetError
from dpcore.manifolds import Sphere
from dpcore.release import private_frechet_mean, private_geodesic_regression, work
from dpcore.release.work import (
    DEFAULT_WORK_BUDGET,
    WorkCosts,
    calibrated_costs,
    check_work,
    estimate_frechet_work,
    estimate_monte_carlo_work,
    estimate_regression_work,
    estimate_work,
    exact_part,
    mcmc_part,
    monte_carlo_part,
)

COSTS = WorkCosts(per_step=1e-4, per_term=3e-8, per_sample=1e-5)
SPHERE = Sphere(2)
NORTH = np.array([0.0, 0.0, 1.0])


@pytest.fixture
def known_costs(monkeypatch):
    """Fixed per-unit costs for every calibration kind of Sphere(2) (no timing noise)."""
    for kind in work.KINDS:
        monkeypatch.setitem(work._CACHE, (repr(SPHERE), kind), COSTS)
    return COSTS


@pytest.fixture(scope="module")
def data():
    return make_regression_data(SPHERE, 60, rng=0)


# ---------------------------------------------------------------------- the model
@pytest.mark.parametrize("factor", ["chains", "steps", "n"])
def test_mcmc_operations_are_linear_in_each_factor(factor):
    base = {"chains": 3, "steps": 500, "n": 40}
    ops = [mcmc_part(COSTS, **{**base, factor: k * base[factor]}).operations for k in (1, 2, 5)]
    assert ops == [3 * 500 * 40 * k for k in (1, 2, 5)]


def test_mcmc_time_is_linear_in_steps_and_affine_in_chains_and_n():
    def seconds(**kw):
        return mcmc_part(COSTS, **{"chains": 3, "steps": 500, "n": 40, **kw}).seconds

    assert seconds(steps=1000) == pytest.approx(2 * seconds(steps=500), rel=1e-12)
    assert seconds() == pytest.approx(500 * (1e-4 + 3e-8 * 3 * 40), rel=1e-12)
    for factor in ("chains", "n"):
        s1, s2, s3 = (seconds(**{factor: k * {"chains": 3, "n": 40}[factor]}) for k in (1, 2, 3))
        assert s2 - s1 == pytest.approx(s3 - s2, rel=1e-9)
        assert s2 > s1


@pytest.mark.parametrize("factor", ["draws", "proposals_per_draw", "n"])
def test_exact_work_is_linear_in_each_factor(factor):
    base = {"draws": 4, "proposals_per_draw": 2.5, "n": 30}
    parts = [exact_part(COSTS, **{**base, factor: k * base[factor]}) for k in (1, 3)]
    assert parts[1].operations == pytest.approx(3 * parts[0].operations, rel=1e-12)
    assert parts[1].seconds == pytest.approx(3 * parts[0].seconds, rel=1e-12)


def test_monte_carlo_work_and_totals():
    mc = monte_carlo_part(COSTS, n_samples=5000, repeats=50)
    # repeats x (fixed cost of a repeat + samples x cost of a sample)
    assert mc.operations == 250_000 and mc.seconds == pytest.approx(50 * (1e-4 + 5000 * 1e-5))
    mh = mcmc_part(COSTS, chains=10, steps=3000, n=100)
    est = estimate_work(mh, mc)
    assert est.operations == mh.operations and est.mc_samples == 250_000
    assert est.seconds == pytest.approx(mh.seconds + mc.seconds)
    assert est.dominant is mc
    assert "Monte Carlo" in est.describe() and "gradient terms" in est.describe()
    assert est.to_dict()["parts"][0]["factors"] == {"chains": 10, "steps": 3000, "n": 100}


# ---------------------------------------------------------------------- request estimates
@pytest.mark.parametrize("mode", ["strict", "paper"])
def test_regression_estimate_scales_with_the_request(known_costs, mode):
    def ops(**kw):
        args = {"eps_p": 1.0, "eps_v": 1.0, "tau": 0.2, "n_vectors": 10, "mode": mode,
                "sampler": "mcmc", **kw}
        n = args.pop("n", 100)
        return estimate_regression_work(SPHERE, n, **args).operations

    base = ops()
    assert ops(n=300) == pytest.approx(3 * base)
    assert ops(chain_length=4000, burn_in=2000) == pytest.approx(2 * base)
    if mode == "strict":  # joint: one chain per (footpoint, vector) pair
        assert base == 10 * 3000 * 100
        assert ops(n_vectors=30) == pytest.approx(3 * base)
    else:  # sequential: 1 footpoint chain + 10 vector chains
        assert base == (1 + 10) * 3000 * 100


def test_regression_estimate_of_an_exact_release_uses_the_envelope_prediction(known_costs):
    # R^1 strict joint: the refined envelope's predicted proposals, not MCMC steps.
    from dpcore.manifolds import Euclidean
    from dpcore.release import plan_regression_sampler

    line = Euclidean(1)
    kw = {"eps_p": 2.0, "eps_v": 2.0, "tau": 1.0, "tau_m": 2.0}
    plan = plan_regression_sampler(line, 100, **kw)
    est = estimate_regression_work(line, 100, costs=COSTS, **kw)
    if plan["exact"]:
        assert "exact" in est.parts[0].what
        assert est.operations == pytest.approx(plan.get("predicted_work", plan["work"]))
    else:
        assert "MCMC" in est.parts[0].what


def test_frechet_estimate_mcmc_and_exact(known_costs):
    mcmc = estimate_frechet_work(SPHERE, 500, epsilon=1.0, radius=0.5, center=NORTH,
                                 n_draws=4, sampler="mcmc", costs=COSTS)
    assert mcmc.operations == 4 * 3000 * 500
    exact = estimate_frechet_work(SPHERE, 500, epsilon=1.0, radius=0.5, center=NORTH,
                                  n_draws=4, sampler="exact", costs=COSTS)
    assert "exact" in exact.parts[0].what and exact.operations > 0


# ---------------------------------------------------------------------- the budget
def test_check_work_refuses_above_the_budget_and_names_the_reduction():
    est = estimate_work(mcmc_part(COSTS, chains=10, steps=3000, n=1000,
                                  reduce="n_vectors, chain_length, or n"))
    assert check_work(est, max_work=2 * est.seconds) is est  # below: no refusal
    assert check_work(est, max_work=math.inf) is est
    with pytest.raises(WorkBudgetError) as err:
        check_work(est, max_work=0.5 * est.seconds)
    assert isinstance(err.value, ValueError)
    message = str(err.value)
    assert "Reduce n_vectors, chain_length, or n" in message
    assert f"{est.seconds:.1f} s" in message  # the estimated time
    assert "max_work=float('inf')" in message
    assert err.value.seconds == est.seconds and err.value.estimate is est


def test_default_budget_and_bad_budgets():
    over = estimate_work(mcmc_part(COSTS, chains=400, steps=30_000, n=10_000))
    assert over.seconds > DEFAULT_WORK_BUDGET
    with pytest.raises(WorkBudgetError, match="work budget of 60.0 s"):
        check_work(over)
    for bad in (0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="max_work"):
            check_work(over, max_work=bad)


def test_regression_release_is_refused_before_sampling(known_costs, data):
    # MCMC chosen explicitly: at n eps = 120 'auto' draws the whole sphere exactly
    # (dpcore.mechanisms.kng_bundle.SPHERE_MAX_N_EPS); this test is about the chains' work.
    kw = {"eps_p": 1.0, "eps_v": 1.0, "tau": 0.3, "covariate_range": (0.0, 1.0),
          "n_vectors": 10, "rng": 0, "sampler": "mcmc"}
    est = estimate_regression_work(SPHERE, 60, eps_p=1.0, eps_v=1.0, tau=0.3, n_vectors=10,
                                   sampler="mcmc")
    with pytest.raises(WorkBudgetError, match="Reduce the number of draws") as err:
        private_geodesic_regression(SPHERE, data.x, data.y, max_work=0.5 * est.seconds, **kw)
    assert err.value.seconds == pytest.approx(est.seconds)
    # The default budget refuses a request estimated far above it: 400 chains x 30,000
    # steps at 1 ms + 1 us per chain and observation is 750 s.
    for kind in work.KINDS:
        work._CACHE[(repr(SPHERE), kind)] = WorkCosts(per_step=1e-3, per_term=1e-6)
    with pytest.raises(WorkBudgetError, match="n_footpoints x n_vectors"):
        private_geodesic_regression(SPHERE, data.x, data.y, chain_length=20_000,
                                    burn_in=10_000, **{**kw, "n_vectors": 400})
    with pytest.raises(ValueError, match="max_work"):
        private_geodesic_regression(SPHERE, data.x, data.y, max_work=-1, **kw)


def test_regression_release_runs_within_the_budget(known_costs, data):
    kw = {"eps_p": 1.0, "eps_v": 1.0, "tau": 0.3, "covariate_range": (0.0, 1.0),
          "n_vectors": 2, "rng": 0, "chain_length": 20, "burn_in": 10, "sampler": "mcmc"}
    # joint (strict): 2 (footpoint, vector) pairs; sequential (paper): 1 footpoint x 2 vectors
    for mode, shape in (("strict", (2, 1, 3)), ("paper", (1, 2, 3))):
        # MCMC by explicit choice warns nothing; paper mode warns that it is not private
        said = pytest.warns(UserWarning) if mode == "paper" else contextlib.nullcontext()
        with said:
            rel = private_geodesic_regression(SPHERE, data.x, data.y, mode=mode,
                                              max_work=math.inf, **kw)
        assert rel.values["shooting_vector"].shape == shape


def test_frechet_kng_release_is_refused_above_the_budget(known_costs, data):
    with pytest.raises(WorkBudgetError, match="n_draws"):
        private_frechet_mean(SPHERE, data.y, epsilon=1.0, mechanism="kng", radius=0.7,
                             center=NORTH, sampler="mcmc", max_work=1e-6, rng=0)


def test_calibrated_costs_are_positive_and_cached(measured_work_costs):
    costs = calibrated_costs(SPHERE, "joint")
    assert costs.per_step > 0 and costs.per_term > 0 and costs.per_sample >= 0
    assert calibrated_costs(SPHERE, "joint") is costs
    with pytest.raises(ValueError, match="kind"):
        calibrated_costs(SPHERE, "nope")
    mc = calibrated_costs(SPHERE, "monte_carlo")
    assert mc.per_sample > 0 and mc.per_step >= 0 and mc.per_term == 0


def test_monte_carlo_calibration_separates_samples_from_repeats(monkeypatch):
    """The two timed sizes give the cost per sample and per repeat (an injected clock: a run
    of r repeats of n samples takes r (2e-3 + 5e-7 n) s); a larger run timed faster, as on a
    busy machine, still gives a positive cost per sample."""
    from dpcore.release import _timing

    monkeypatch.setattr(_timing, "_time_monte_carlo", lambda m, n, r: r * (2e-3 + 5e-7 * n))
    costs = _timing._calibrate(SPHERE, "monte_carlo")
    assert costs.per_sample == pytest.approx(5e-7) and costs.per_step == pytest.approx(2e-3)
    monkeypatch.setattr(_timing, "_time_monte_carlo", lambda m, n, r: r * (1e-2 - 1e-6 * n))
    assert _timing._calibrate(SPHERE, "monte_carlo").per_sample > 0


def test_calibration_is_measured_again_after_its_lifetime(monkeypatch, measured_work_costs):
    """A calibration taken while the machine was busy must not price every request of a
    long-lived server: after CALIBRATION_TTL it is measured again; costs set by hand stay."""
    clock = [1000.0]
    monkeypatch.setattr(work, "_now", lambda: clock[0])
    key = (repr(SPHERE), "frechet")
    monkeypatch.delitem(work._CACHE, key, raising=False)
    monkeypatch.delitem(work._MEASURED, key, raising=False)
    first = calibrated_costs(SPHERE, "frechet")
    clock[0] += work.CALIBRATION_TTL / 2
    assert calibrated_costs(SPHERE, "frechet") is first
    clock[0] += work.CALIBRATION_TTL
    second = calibrated_costs(SPHERE, "frechet")
    assert second is not first and second.per_term > 0
    # costs put in the cache by hand (not the ones measured) never expire
    monkeypatch.setitem(work._CACHE, key, COSTS)
    clock[0] += 10 * work.CALIBRATION_TTL
    assert calibrated_costs(SPHERE, "frechet") is COSTS


@pytest.fixture
def busy_then_quiet(monkeypatch, measured_work_costs):
    """Calibrations of Sphere(2) timed first on a busy machine (every cost 50 times too
    high), then on a quiet one; a clock for their age."""
    clock = [1000.0]
    monkeypatch.setattr(work, "_now", lambda: clock[0])
    timings = []

    def calibrate(manifold, kind):
        timings.append(kind)
        slow = 50.0 if timings.count(kind) == 1 else 1.0
        return WorkCosts(per_step=slow * 1e-3, per_term=slow * 1e-6, per_sample=slow * 1e-5)

    monkeypatch.setattr(work, "_calibrate", calibrate)
    for kind in work.KINDS:
        monkeypatch.delitem(work._CACHE, (repr(SPHERE), kind), raising=False)
        monkeypatch.delitem(work._MEASURED, (repr(SPHERE), kind), raising=False)
    return clock, timings


def _mcmc_request(**kw):
    return estimate_regression_work(SPHERE, 400, eps_p=1.0, eps_v=1.0, tau=0.3, n_vectors=10,
                                    chain_length=3000, burn_in=2000, sampler="mcmc", **kw)


def test_a_calibration_from_a_busy_moment_is_measured_again_before_refusing(busy_then_quiet):
    clock, timings = busy_then_quiet
    first = _mcmc_request()  # times the joint chain, on the busy machine
    assert timings == ["joint"] and first.seconds > DEFAULT_WORK_BUDGET
    assert _mcmc_request() is not None and timings == ["joint"]  # too recent to measure again
    clock[0] += work.REMEASURE_AFTER
    second = _mcmc_request()  # would refuse: measured again, the smaller costs kept
    assert timings == ["joint", "joint"]
    assert second.seconds == pytest.approx(first.seconds / 50)
    assert second.seconds <= DEFAULT_WORK_BUDGET
    assert calibrated_costs(SPHERE, "joint") == WorkCosts(1e-3, 1e-6, 1e-5)
    clock[0] += work.REMEASURE_AFTER
    _mcmc_request()  # within the budget now: nothing measured
    assert timings == ["joint", "joint"]


def test_a_request_above_the_budget_on_a_quiet_machine_is_still_refused(busy_then_quiet,
                                                                         data):
    clock, timings = busy_then_quiet
    big = dict(n_vectors=400, chain_length=20_000, burn_in=10_000)
    clock[0] += work.REMEASURE_AFTER
    assert estimate_regression_work(SPHERE, 60, eps_p=1.0, eps_v=1.0, tau=0.3, sampler="mcmc",
                                    **big).seconds > DEFAULT_WORK_BUDGET
    clock[0] += work.REMEASURE_AFTER
    with pytest.raises(WorkBudgetError, match="n_footpoints x n_vectors"):
        private_geodesic_regression(SPHERE, data.x, data.y, eps_p=1.0, eps_v=1.0, tau=0.3,
                                    covariate_range=(0.0, 1.0), rng=0, sampler="mcmc", **big)
    # Measured again once each time it would refuse, never more; given costs are used as given.
    assert timings.count("joint") == 2
    with_costs = _mcmc_request(costs=WorkCosts(1.0, 1.0))
    assert with_costs.seconds > DEFAULT_WORK_BUDGET and timings.count("joint") == 2


def test_worst_case_stages_are_shown_but_never_refused():
    # Uniform-proposal exact samplers only have a bound over all data sets.
    bound = exact_part(COSTS, draws=10, proposals_per_draw=1e12, n=100, worst_case=True)
    est = estimate_work(bound)
    assert est.seconds == 0 and est.worst_case_seconds == pytest.approx(3e7)
    assert check_work(est, max_work=1.0) is est
    assert "up to" in est.describe() and "worst case over data sets" in bound.what
    mixed = estimate_work(bound, mcmc_part(COSTS, chains=10, steps=3000, n=1000))
    with pytest.raises(WorkBudgetError, match="MCMC|Metropolis"):
        check_work(mixed, max_work=1.0)


def test_paper_mode_on_a_vector_space_is_closed_form():
    from dpcore.manifolds import Euclidean

    est = estimate_regression_work(Euclidean(2), 200, eps_p=1.0, eps_v=1.0, tau=0.5,
                                   n_vectors=3, mode="paper", costs=COSTS)
    assert "exact K-norm" in est.parts[0].what
    assert est.operations == 3 * 200  # one draw per vector, each O(n)


def test_monte_carlo_estimate_is_linear_in_samples_and_repeats():
    one = estimate_monte_carlo_work(SPHERE, 1000, 10, costs=COSTS)
    assert one.mc_samples == 10_000 and one.seconds == pytest.approx(0.1 + 10 * 1e-4)
    assert estimate_monte_carlo_work(SPHERE, 2000, 30, costs=COSTS).seconds == pytest.approx(
        0.6 + 30 * 1e-4)
    with pytest.raises(WorkBudgetError, match="Monte Carlo samples or repeats"):
        check_work(estimate_monte_carlo_work(SPHERE, 5000, 50, costs=COSTS), max_work=1.0)


# ---------------------------------------------------------------------- every mechanism, sweeps
def test_frechet_release_estimate_covers_every_mechanism(known_costs):
    from dpcore.manifolds import Euclidean
    from dpcore.release.frechet_mechanisms import estimate_frechet_release_work

    kw = {"epsilon": 1.0, "radius": 0.5, "center": NORTH}
    kng = estimate_frechet_release_work(SPHERE, 500, mechanism="kng", sampler="mcmc", **kw)
    assert kng == estimate_frechet_work(SPHERE, 500, sampler="mcmc", **kw)
    # Gaussian on S^2: mu has no closed form; calibrating sigma costs four Monte Carlo runs of
    # 1000 x 100 samples, estimating mu at a given sigma one run of 2000 x 50.
    cal = estimate_frechet_release_work(SPHERE, 500, mechanism="gaussian", **kw)
    assert cal.mc_samples == 4 * 1000 * 100
    assert cal.seconds == pytest.approx(100 * (1e-4 + 4000 * 1e-5))
    at = estimate_frechet_release_work(SPHERE, 500, mechanism="gaussian", sigma=0.3, **kw)
    assert at.mc_samples == 2000 * 50
    # Closed forms: n_draws draws about the mean, O(n) each; R^d's Gaussian has exact mu.
    for mech in ("laplace", "ambient_laplace"):
        est = estimate_frechet_release_work(SPHERE, 500, mechanism=mech, n_draws=3, **kw)
        assert est.operations == 3 * 500 and est.mc_samples == 0
    flat = estimate_frechet_release_work(Euclidean(2), 50, mechanism="gaussian", epsilon=1.0,
                                         radius=1.0, center=np.zeros(2), costs=COSTS)
    assert flat.mc_samples == 0 and flat.operations == 50


@pytest.mark.parametrize("mode", ["paper", "strict"])
def test_budget_sweep_estimate_counts_every_chain(known_costs, mode):
    """Sequential scheme, by MCMC: per data set and budget pair, n_footpoints footpoint chains
    and n_footpoints x n_vectors vector chains, each of burn_in + chain_length steps over n
    terms; budget pairs run in chunks of at most 2000 vector chains, each chunk paying the
    per-step cost once."""
    from dpcore.release.work import estimate_budget_sweep_work

    sizes, pairs, reps, nf, nv, steps = (20, 50), 30, 3, 10, 10, 300 + 200
    est = estimate_budget_sweep_work(SPHERE, sizes, n_pairs=pairs, replicates=reps,
                                     n_footpoints=nf, n_vectors=nv, chain_length=300,
                                     burn_in=200, mode=mode)
    terms = sum(reps * pairs * (nf + nf * nv) * steps * n for n in sizes)
    assert est.operations == terms
    chunks = 2  # 30 pairs x 100 vector chains: 20 pairs (2000 chains) per chunk
    fixed = 1e-4 * steps * chunks * reps * len(sizes)
    assert est.seconds == pytest.approx(terms * 3e-8 + fixed, rel=1e-12)
    assert [p.factors["n"] for p in est.parts] == [20, 50]
    assert all(p.factors["chains"] == nf + nf * nv for p in est.parts)
    double = estimate_budget_sweep_work(SPHERE, sizes, n_pairs=pairs, replicates=2 * reps,
                                        n_footpoints=nf, n_vectors=nv, chain_length=300,
                                        burn_in=200, mode=mode)
    assert double.seconds == pytest.approx(2 * est.seconds, rel=1e-12)


def test_sweep_calibration_times_the_sweep_code_path(measured_work_costs):
    """The "sweep" kind times batched sequential releases (strict mode, as the page runs
    them): positive, cached costs."""
    costs = calibrated_costs(SPHERE, "sweep")
    assert costs.per_term > 0 and costs.per_step > 0 and costs.per_sample == 0
    assert calibrated_costs(SPHERE, "sweep") is costs


def test_budget_sweep_estimate_on_a_vector_space_in_paper_mode_is_closed_form():
    from dpcore.manifolds import Euclidean
    from dpcore.release.work import estimate_budget_sweep_work

    est = estimate_budget_sweep_work(Euclidean(2), [40], n_pairs=5, n_footpoints=2,
                                     n_vectors=3, mode="paper", costs=COSTS)
    assert est.operations == 5 * 2 * 3 * 40 and "exact K-norm" in est.parts[0].what


def test_refusal_message_is_the_budget_error_or_none():
    from dpcore.release.work import refusal_message

    est = estimate_work(mcmc_part(COSTS, chains=10, steps=3000, n=1000))
    assert refusal_message(est, max_work=1e6) is None
    message = refusal_message(est, max_work=1.0)
    with pytest.raises(WorkBudgetError) as excinfo:
        check_work(est, max_work=1.0)
    assert message == str(excinfo.value) and "work budget of 1.0 s" in message


def test_flat_bundle_releases_are_priced_by_their_own_kernel(monkeypatch):
    """On R^2 the bundle sampler's prediction is priced with the "bundle" calibration (its
    compiled proposal kernel), not the library's batched gradient: with the two kinds set by
    hand (1.5e-7 and 1.4e-8 s per term, about what this machine measured), a release of two
    responses at n = 1,000 (n·ε = 2,000) is estimated at the prediction times the bundle
    cost, within the default budget (it used to be refused at about 84 s while it ran in
    0.4 s), and the estimate matches the release's own check."""
    from dpcore.manifolds import Euclidean

    plane = Euclidean(2)
    slow, fast = WorkCosts(0.0, 1.5e-7), WorkCosts(0.0, 1.4e-8)
    for kind in work.KINDS:
        monkeypatch.setitem(work._CACHE, (repr(plane), kind), slow)
    monkeypatch.setitem(work._CACHE, (repr(plane), "bundle"), fast)
    kw = {"eps_p": 1.0, "eps_v": 1.0, "tau": 2.0, "tau_m": 10.0, "n_footpoints": 3,
          "n_vectors": 3}
    from dpcore.release import plan_regression_sampler

    plan = plan_regression_sampler(plane, 1000, eps_p=1.0, eps_v=1.0, tau=2.0, tau_m=10.0,
                                   draws=9)
    assert plan["exact"] and plan["exact_sampler"] == "certified bundle"
    est = estimate_regression_work(plane, 1000, **kw)
    assert est.seconds == pytest.approx(plan["predicted_work"] * fast.per_term)
    assert est.seconds < work.DEFAULT_WORK_BUDGET
    rng = np.random.default_rng(3)
    t = rng.uniform(0, 1, 1000)
    y = np.stack([2 + 3 * t, 1 - 2 * t], axis=1) + rng.normal(0, 0.5, (1000, 2))
    rel = private_geodesic_regression(plane, t, y, covariate_range=(0.0, 1.0),
                                      center=np.zeros(2), rng=0, **kw)
    assert rel.diagnostics["joint"]["exact"] and rel.delta == 0.0


def test_the_browser_tests_pin_every_calibration_kind():
    """The suite (and the browser tests' server) fixes a cost for each kind
    (tests/_work_costs.py): a kind added without one would be timed on the machine."""
    from tests._work_costs import PINNED

    assert set(PINNED) == set(work.KINDS)


def test_costs_fixed_in_the_environment_are_used_untimed(monkeypatch):
    """DPCORE_WORK_COSTS (set by the suite, tests/conftest.py) fixes the costs of the kinds it
    names for every manifold: nothing is timed, nothing is measured again before refusing,
    costs set by hand still win, and a kind it does not name is measured."""
    timed = []
    monkeypatch.setattr(work, "_calibrate", lambda m, kind: timed.append(kind) or COSTS)
    monkeypatch.setattr(work, "_now", lambda: 1e9)  # any measurement would be old enough
    monkeypatch.setenv(work.WORK_COSTS_ENV, '{"joint": {"per_step": 2e-6, "per_term": 3e-7}}')
    for kind in ("joint", "frechet"):
        monkeypatch.delitem(work._CACHE, (repr(SPHERE), kind), raising=False)
        monkeypatch.delitem(work._MEASURED, (repr(SPHERE), kind), raising=False)
    assert calibrated_costs(SPHERE, "joint") == WorkCosts(2e-6, 3e-7, 0.0)
    big = estimate_regression_work(SPHERE, 400, eps_p=1.0, eps_v=1.0, tau=0.3, n_vectors=400,
                                   chain_length=3000, burn_in=2000, sampler="mcmc")
    assert big.seconds > DEFAULT_WORK_BUDGET and timed == []
    assert calibrated_costs(SPHERE, "frechet") is COSTS and timed == ["frechet"]
    monkeypatch.setitem(work._CACHE, (repr(SPHERE), "joint"), COSTS)
    assert calibrated_costs(SPHERE, "joint") is COSTS


@pytest.mark.parametrize("value, message", [
    ("{joint", "not valid JSON"),
    ("[1, 2]", "JSON object of calibration kinds"),
    ('{"joint": {"per_stp": 1e-6}}', "keys among per_step, per_term, per_sample"),
    ('{"joint": {"per_step": -1}}', "finite number >= 0"),
    ('{"joint": {"per_term": "fast"}}', "finite number >= 0"),
    ('{"joint": {"per_term": true}}', "finite number >= 0"),
])
def test_a_malformed_cost_setting_is_refused_by_name(value, message):
    with pytest.raises(ValueError, match=message) as err:
        work.fixed_costs("joint", environ={work.WORK_COSTS_ENV: value})
    assert work.WORK_COSTS_ENV in str(err.value)
    assert work.fixed_costs("joint", environ={}) is None


def test_a_predicted_exact_cost_says_the_data_can_make_it_longer():
    """A predicted exact cost (not a bound over data sets) assumes data that fit inside the
    public bounds; the estimate says that data fitting outside take longer. A worst-case bound
    needs no such words."""
    kw = dict(draws=9, n_footpoints=3, chain_length=10, burn_in=10, scheme="joint",
              exact_terms=2.4e8, costs=COSTS)
    predicted = work.regression_work(Sphere(2), 250, **kw)
    bounded = work.regression_work(Sphere(2), 250, exact_worst_case=True, **kw)
    first = predicted.describe().splitlines()[0]   # the line a page shows
    assert first.endswith("For data that fit inside the public bounds: the exact sampler's run "
                          "time depends on the data.")
    assert "depends on the data" not in bounded.describe()
    assert predicted.to_dict()["parts"][0]["data_dependent"] is True
    assert predicted.seconds == pytest.approx(bounded.worst_case_seconds)


# ------------------------------------------------- the Fréchet KNG's predicted terms
def test_frechet_estimate_prices_the_spaces_own_terms():
    """The time estimate of an exact Fréchet KNG release on SPD(2) counts the envelope's
    predicted gradient terms once (they are priced by SPD's own calibration), while "auto"
    compares them to the limit in sphere-equivalent terms (ten per SPD term)."""
    from dpcore.manifolds import SPD
    from dpcore.release.planning import frechet_prediction, predicted_frechet_kng_work
    from dpcore.sensitivity import frechet_gradient_sensitivity
    from dpcore.settings import get_limits

    m, c = SPD(2), np.eye(2)

    def sigma(n, radius, eps):
        return 2.0 * frechet_gradient_sensitivity(n, radius, m.curvature_bounds[1],
                                                  m.injectivity_radius) / eps

    est = estimate_frechet_work(m, 200, epsilon=2.0, radius=0.5, center=c, costs=COSTS)
    own = predicted_frechet_kng_work(m, c, 0.5, sigma(200, 0.5, 2.0), 200, 1)
    assert "exact" in est.parts[0].what
    assert est.operations == pytest.approx(own, rel=1e-12)
    # own terms within the limit, ten times them not: no prediction, so MCMC
    limit = get_limits().max_exact_work
    own = predicted_frechet_kng_work(m, c, 1.0, sigma(50_000, 1.0, 1.0), 50_000, 20)
    assert limit / 10 < own <= limit
    assert frechet_prediction(m, c, 1.0, sigma(50_000, 1.0, 1.0), 50_000, 20) is None
    est = estimate_frechet_work(m, 50_000, epsilon=1.0, radius=1.0, center=c, n_draws=20,
                                costs=COSTS)
    assert "MCMC" in est.parts[0].what


def test_closed_form_draws_do_not_say_their_time_depends_on_the_data(known_costs):
    """Only a rejection sampler's time depends on the data: the closed-form draws of the
    Laplace mechanism (and the affine K-norm draws on R^d in paper mode) carry no such note."""
    from dpcore.release.frechet_mechanisms import estimate_frechet_release_work

    kw = dict(epsilon=1.0, radius=0.5, center=NORTH, costs=COSTS)
    laplace = estimate_frechet_release_work(SPHERE, 50, mechanism="laplace", **kw)
    kng = estimate_frechet_release_work(SPHERE, 50, mechanism="kng", **kw)
    assert not laplace.data_dependent and work.DATA_DEPENDENT_NOTE not in laplace.describe()
    assert kng.data_dependent and work.DATA_DEPENDENT_NOTE in kng.describe()


def test_an_exact_spd2_release_is_priced_as_its_estimate(monkeypatch):
    """The release's own work check and the request's estimate price the same terms with the
    same calibration: the uniform proposals' (with their squeeze), not the bundle kernel's,
    on the Geodesic regression page's SPD(2) design at n·ε = 500 (each kind timed apart, so a
    mismatch shows)."""
    from dpcore.manifolds import SPD

    spd = SPD(2)
    for i, kind in enumerate(work.KINDS):
        monkeypatch.setitem(work._CACHE, (repr(spd), kind),
                            WorkCosts(per_step=1e-4, per_term=(i + 1) * 1e-8, per_sample=1e-5))
    design = {"tau": 0.175, "tau_m": 0.8, "max_speed": 0.55, "footpoint_radius": 0.1,
              "n_vectors": 3, "n_footpoints": 3}
    est = estimate_regression_work(spd, 100, eps_p=2.5, eps_v=2.5, **design)
    assert 0 < est.seconds < work.DEFAULT_WORK_BUDGET
    d = make_regression_data(spd, 100, noise=0.05, rng=1, footpoint_region=(np.eye(2), 0.1))
    with pytest.raises(WorkBudgetError) as err:  # refused before any sampling
        private_geodesic_regression(spd, d.x, d.y, eps_p=2.5, eps_v=2.5, center=np.eye(2),
                                    covariate_range=(0.0, 1.0), max_work=0.5 * est.seconds,
                                    rng=0, **design)
    assert err.value.seconds == pytest.approx(est.seconds)
