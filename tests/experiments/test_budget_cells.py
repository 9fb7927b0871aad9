"""Strict budget sweeps without Markov chains (budget_sweep(cells_from="exact_or_law"),
dpcore.experiments.budget_cells): exact where the public worst case is within reach, else the
asymptotic law, decided from public inputs only; the joint scheme beside the splits."""

import numpy as np
import pandas as pd
import pytest

from dpcore.data import make_regression_data
from dpcore.experiments import budget_cells as C
from dpcore.experiments import budget_sweep
from dpcore.experiments.budget import LAW_COLUMNS
from dpcore.manifolds import Sphere
from dpcore.release.work import WorkCosts

POLE = np.array([0.0, 0.0, 1.0])
BOUNDS = dict(tau=0.2, covariate_range=(0.0, 1.0), max_speed=0.8, footpoint_radius=0.2,
              center=POLE)
SWEEP = dict(mode="strict", noise=0.003, data_kwargs={"footpoint_region": (POLE, 0.2)},
             n_footpoints=2, n_vectors=2, replicates=2, rng=5, cells_from="exact_or_law",
             **BOUNDS)


def test_small_budgets_are_exact_large_ones_predicted_and_the_joint_scheme_is_added():
    df = budget_sweep(Sphere(2), sample_sizes=[20, 100], split="equal", totals=[0.5, 6.0],
                      joint_reference=True, diagnostics=True, **SWEEP)
    assert list(df.columns[-3:]) == list(LAW_COLUMNS)
    assert df.attrs["cells_from"] == "exact_or_law"
    # n·ε = 10 is drawn exactly (the public worst case is small), n·ε = 600 predicted
    small = df[(df["n"] == 20) & (df["epsilon"] == 0.5)]
    large = df[(df["n"] == 100) & (df["epsilon"] == 6.0)]
    assert set(small["source"]) == {"exact"} and set(large["source"]) == {"law"}
    assert (small["flag"] == "").all() and (large["flag"] == "").all()
    # exact cells carry no flag, no chain diagnostics anywhere
    assert df["rhat"].isna().all() and df["ess"].isna().all()
    # one joint row per (n, total, replicate), at eps_p = eps_v = total / 2
    joint = df[df["scheme"] == "joint"]
    assert len(joint) == 2 * 2 * 2 and np.allclose(joint["eps_p"], joint["epsilon"] / 2)
    assert np.isfinite(df["mse"]).all() and (df["mse"] > 0).all()
    # at n·ε = 600 the private error is close to the fit's
    assert (large["mse"] < 1.5 * large["nonprivate_mse"]).all()


def test_the_cells_partition_gives_the_rows_of_one_call():
    kw = dict(sample_sizes=[20, 40], split="unequal", totals=[3.0],
              eps_p_grid=[0.5, 1.5, 2.5], joint_reference=True, **SWEEP)
    whole = budget_sweep(Sphere(2), **kw)
    parts = pd.concat([budget_sweep(Sphere(2), cells=[(n, r)], **kw)
                       for n in (20, 40) for r in range(2)])
    parts = parts.sort_values(["n", "eps_p", "eps_v", "replicate", "scheme"], kind="stable",
                              ignore_index=True)
    pd.testing.assert_frame_equal(parts, whole)
    pd.testing.assert_frame_equal(budget_sweep(Sphere(2), **kw), whole)  # seeded


def test_the_choice_between_exact_and_law_reads_public_inputs_only():
    """cell_plan takes no data: the same for every data set; strict_cells follows it on two
    different data sets."""
    cells = [(0.2, 0.3, "sequential"), (3.0, 3.0, "sequential"), (0.25, 0.25, "joint")]
    plan = C.cell_plan(Sphere(2), 20, cells, 2, 2, BOUNDS)
    assert [ok for ok, _ in plan] == [True, False, True]
    assert plan[0][1] == C.sequential_exact_terms(Sphere(2), 20, 0.2, 0.3, 2, 2, tau=0.2,
                                                  max_speed=0.8, footpoint_radius=0.2)
    assert plan[0][1] <= C.EXACT_CELL_TERMS < C.sequential_exact_terms(
        Sphere(2), 20, 3.0, 3.0, 2, 2, tau=0.2, max_speed=0.8, footpoint_radius=0.2)
    for seed in (1, 2):
        x, y = make_regression_data(Sphere(2), 20, rng=seed, noise=0.003,
                                    footpoint_region=(POLE, 0.2))
        out = C.strict_cells(Sphere(2), x, y, cells, seed, 2, 2, BOUNDS)
        assert [src for _, src, _ in out] == ["exact", "law", "exact"]


def test_the_exact_worst_case_is_refused_where_there_are_no_uniform_proposals():
    from dpcore.manifolds import SPD

    assert C.sequential_exact_terms(SPD(3), 20, 1.0, 1.0, 1, 1, tau=0.2, tau_m=1.0) == np.inf
    assert np.isfinite(C.sequential_exact_terms(SPD(2), 20, 0.1, 0.1, 1, 1, tau=0.2,
                                                tau_m=1.0))


def test_the_work_estimate_bounds_exact_cells_and_estimates_the_law():
    costs = WorkCosts(per_step=1e-4, per_term=3e-8)
    cells = [(0.2, 0.3, "sequential"), (3.0, 3.0, "sequential"), (3.0, 3.0, "joint")]
    est = C.estimate_strict_sweep_work(Sphere(2), [20], cells, replicates=3, n_footpoints=2,
                                       n_vectors=2, release_kwargs=BOUNDS, costs=costs)
    exact, law = est.parts
    assert exact.upper_bound and not law.upper_bound
    plan = C.cell_plan(Sphere(2), 20, cells, 2, 2, BOUNDS)
    assert exact.operations == pytest.approx(3 * plan[0][1])
    assert law.factors["cells"] == 2 * 3
    assert est.seconds == pytest.approx(law.seconds)  # the worst case is shown as "up to"


@pytest.mark.parametrize("bad, match", [
    (dict(cells_from="chains"), "cells_from"),
    (dict(mode="paper"), "mode='strict'"),
])
def test_validation(bad, match):
    kw = {**SWEEP, **bad}
    if kw["mode"] == "paper":
        kw = {k: v for k, v in kw.items() if k not in BOUNDS}
    with pytest.raises(ValueError, match=match):
        budget_sweep(Sphere(2), sample_sizes=[20], split="equal", totals=[1.0], **kw)
    with pytest.raises(ValueError, match="joint_reference"):
        budget_sweep(Sphere(2), sample_sizes=[20], split="equal", totals=[1.0],
                     joint_reference=True, mode="strict", tau=0.2, covariate_range=(0, 1))
