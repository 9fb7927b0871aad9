"""Page logic of the budget split page (ui.logic.budget_split)."""

import numpy as np
import pandas as pd
import pytest

from dpcore import visualization as V
from ui.logic import budget_split as B


def assert_chunks_are_the_sweep(config, view):
    """The page's chunks of ``view``, run cell by cell and sorted, equal one budget_sweep call
    of that view (:func:`ui.logic.budget_split.view_sweep`); returns that call's frame."""
    whole = B.view_sweep(config, view)
    parts = pd.concat([B.run_chunk(config, v, n, rep)
                       for v, n, rep in B.sweep_chunks(config) if v == view])
    order = ["n", "eps_p", "eps_v", "replicate", "scheme"] if "scheme" in whole else [
        "n", "eps_p", "eps_v", "replicate"]
    parts = parts.sort_values(order, kind="stable", ignore_index=True)
    pd.testing.assert_frame_equal(parts, whole)
    return whole

def test_chunks_share_data_across_views_and_are_deterministic():
    config = B.SweepConfig(sample_sizes=(10,), replicates=1, n_footpoints=1, n_vectors=1,
                            chain_length=5, burn_in=5, n_unequal=3, n_equal=2, n_grid=2,
                            grid_n=10)
    a = B.run_chunk(config, "unequal", 10, 0)
    b = B.run_chunk(config, "equal", 10, 0)
    np.testing.assert_allclose(a["nonprivate_mse"].iloc[0], b["nonprivate_mse"].iloc[0])
    pd.testing.assert_frame_equal(a, B.run_chunk(config, "unequal", 10, 0))
    assert B.n_releases(config) == 3 + 2 + 4
    fig, best = V.budget_heatmap_figure(B.run_chunk(config, "grid", 10, 0), 100.0, n=config.grid_n,
                                        replicates=config.replicates)
    assert best is not None and fig.data
    _, none = V.budget_heatmap_figure(B.run_chunk(config, "grid", 10, 0), 0.01, n=config.grid_n,
                                      replicates=config.replicates)
    assert none is None


def test_the_page_chunks_are_the_one_call_sweep_seed_for_seed():
    """The page runs a view cell by cell (progress, stop); concatenated, its rows are exactly
    the rows of one budget_sweep call of that view with the same seed (issue 12: a study is
    computed in one place), in paper and strict mode."""
    for mode, tau in (("paper", None), ("strict", 0.2)):
        config = B.SweepConfig(sample_sizes=(10, 12), replicates=2, n_footpoints=1,
                               n_vectors=2, chain_length=5, burn_in=5, n_unequal=3, n_equal=2,
                               n_grid=2, grid_n=10, mode=mode, tau=tau, seed=7)
        for view in config.views:
            whole = assert_chunks_are_the_sweep(config, view)
            splits = whole[whole["scheme"] == "sequential"] if "scheme" in whole else whole
            assert len(splits) == B.n_releases(B.SweepConfig(**{**config.as_dict(),
                                                                "views": (view,)}))


def test_unequal_grid_keeps_the_ratio_bound_and_the_paper_grid():
    from dpcore.experiments import default_eps_p_grid

    paper = B.SweepConfig(mode="paper", total=2.02, n_unequal=7, max_ratio=100.0)
    np.testing.assert_array_equal(paper.unequal_grid(), default_eps_p_grid(2.02, 7))
    strict = B.SweepConfig(total=10.0, n_unequal=5)
    ep = strict.unequal_grid()
    ratio = ep / (10.0 - ep)
    np.testing.assert_allclose(ratio, np.geomspace(0.1, 10.0, 5), rtol=1e-12)


def test_errors_in_units_flags_and_table():
    """Paper mode (Markov chains): the table is in degrees with the replicates' range, and
    20-step chains that have not mixed are flagged in it and in the sentences."""
    config = B.SweepConfig(mode="paper", tau=None, sample_sizes=(10,), n_unequal=3,
                           views=("unequal",), chain_length=20, burn_in=20, n_footpoints=2,
                           n_vectors=2, max_ratio=100.0)
    df = B.view_sweep(config, "unequal")
    assert {"rhat", "ess"} <= set(df.columns)
    deg, unit = B.error_in_units("sphere", df["mse"])
    assert unit == "degrees"
    np.testing.assert_allclose(deg, np.degrees(np.sqrt(df["mse"])), rtol=1e-12)
    table = B.sweep_table(df, "sphere")
    assert len(table) == 3
    per_cell = np.asarray(deg).reshape(3, 3)  # rows: cells, columns: replicates
    np.testing.assert_allclose(table["RMS error (degrees)"], per_cell.mean(axis=1), rtol=1e-12)
    np.testing.assert_allclose(table["lowest replicate"], per_cell.min(axis=1), rtol=1e-12)
    np.testing.assert_allclose(table["highest replicate"], per_cell.max(axis=1), rtol=1e-12)
    assert {"RMS error (degrees)", "lowest replicate", "highest replicate", "mean log MSE",
            "source", "flagged: why not trusted"} <= set(table.columns)
    assert set(table["source"]) == {"Markov chains"}
    # 20-step chains do not mix: every flagged cell is one whose R-hat or ESS is off
    flags = B.mixing_flags(df)
    bad = df[(df["rhat"] > B.RHAT_MAX) | (df["ess"] < B.ESS_MIN)]
    assert len(flags) == bad.groupby(["eps_p", "eps_v"]).ngroups > 0  # one sentence a cell
    summary, unit = B.summary_of(df.assign(view="unequal"), "sphere")
    sentences = B.flag_sentences(summary)
    assert len(sentences) == bad.groupby(["eps_p", "eps_v"]).ngroups
    assert all("chains have not mixed" in f for f in sentences)
    good = df.assign(rhat=1.0, ess=500.0)
    assert B.mixing_flags(good) == []
    assert B.mixing_flags(df.drop(columns=["rhat", "ess"])) == []


def test_strict_mode_draws_no_chains_and_adds_the_joint_scheme():
    """The page's strict simulation: exact cells or predictions, never chains, and the joint
    scheme at each total of the unequal and equal views (not on the grid)."""
    config = B.design_config("sphere", sample_sizes=(20,), n_unequal=3, n_equal=2, n_grid=2,
                             grid_n=20, n_footpoints=2, n_vectors=2)
    for view in ("unequal", "equal", "grid"):
        kw = B._view_kwargs(config, view)
        assert kw["cells_from"] == "exact_or_law" and kw["joint_reference"] == (view != "grid")
    df = B.view_sweep(config, "unequal")
    assert set(df["source"]) <= {"exact", "law"} and df["rhat"].isna().all()
    assert len(df[df["scheme"] == "joint"]) == config.replicates
    assert B.mixing_flags(df) == []
    table = B.sweep_table(df, "sphere")
    assert set(table["source"]) <= {"exact draws", "asymptotic law (prediction)"}
    assert set(table["scheme"]) == {"sequential", "joint"}


def test_sweep_work_counts_every_view_and_weights_the_cells(monkeypatch):
    """The simulation's estimate is the library's estimate of each view (strict: exact cells'
    worst case and the law's work; paper: the chains); the per-cell weights of the progress
    bar sum to its worst case (replicates are cells of their own)."""
    from dpcore.experiments.budget_cells import estimate_strict_sweep_work
    from dpcore.manifolds import Sphere
    from dpcore.release import work

    costs = work.WorkCosts(per_step=1e-4, per_term=3e-8)
    for kind in ("joint", "sweep"):
        monkeypatch.setitem(work._CACHE, (repr(Sphere(2)), kind), costs)
    config = B.design_config("sphere", replicates=3, views=("unequal", "equal", "grid"))
    est, ok, cells = B.sweep_work(config)
    assert len(cells) == len(B.sweep_chunks(config)) == 3 * (2 + 2 + 1)
    assert sum(cells) == pytest.approx(est.worst_case_seconds, rel=1e-12)
    bounds = {k: B._view_kwargs(config, "unequal").get(k)
              for k in ("tau", "tau_m", "max_speed", "footpoint_radius")}
    direct = sum(estimate_strict_sweep_work(
        Sphere(2), sizes, B._view_cells(config, view), replicates=3, n_footpoints=3,
        n_vectors=3, release_kwargs=bounds, costs=costs).seconds
        for sizes, view in (((50, 100), "unequal"), ((50, 100), "equal"), ((50,), "grid")))
    assert est.seconds == pytest.approx(direct, rel=1e-12)
    assert ok and B.work_refusal(est) is None
    paper = B.SweepConfig(mode="paper", tau=None, replicates=3, views=("unequal",),
                          max_ratio=100.0)
    est_p, _, _ = B.sweep_work(paper)
    assert est_p.seconds == pytest.approx(work.estimate_budget_sweep_work(
        Sphere(2), (50, 100), n_pairs=5, replicates=3, n_footpoints=3, n_vectors=3,
        chain_length=1000, burn_in=1000, mode="paper").seconds, rel=1e-12)
    monkeypatch.setattr(work, "DEFAULT_WORK_BUDGET", 0.5 * est.seconds)
    est2, ok2, _ = B.sweep_work(config)
    assert not ok2 and "above the work budget" in B.work_refusal(est2)


def test_the_best_split_is_never_a_cell_whose_chains_did_not_mix():
    """A flagged (unmixed) cell is passed over even when its error is the lowest; when every
    affordable cell is flagged there is no best split."""
    rows = []
    for ep, ev, mse, rhat in ((1.0, 1.0, 0.01, 9.8), (1.0, 2.0, 0.5, 1.0), (2.0, 1.0, 0.2, 1.0),
                              (2.0, 2.0, 0.1, 1.0)):
        rows.append({"view": "grid", "n": 10, "eps_p": ep, "eps_v": ev, "epsilon": ep + ev,
                     "replicate": 0, "mse": mse, "log_mse": float(np.log(mse)),
                     "nonprivate_mse": 0.001, "rhat": rhat, "ess": 100.0})
    df = pd.DataFrame(rows)
    assert B.unmixed_cells(df) == {(1.0, 1.0)}
    _, plain = V.budget_heatmap_figure(df, 4.0, n=10, replicates=1)
    assert (plain["eps_p"], plain["eps_v"]) == (1.0, 1.0)  # lowest error, but unmixed
    _, best = V.budget_heatmap_figure(df, 4.0, n=10, replicates=1,
                                      excluded=B.unmixed_cells(df))
    assert (best["eps_p"], best["eps_v"]) == (2.0, 2.0) and best["excluded"] == 1
    _, none = V.budget_heatmap_figure(df, 2.0, n=10, replicates=1,
                                      excluded=B.unmixed_cells(df))
    assert none is None
