"""The public designs of the Budget split page's strict simulations on S², SPD(2) and Kendall
shapes (issues 14, 28): taken from the Geodesic regression page's demonstrations, passed to the
library, the same cell by cell as in one call."""

import numpy as np
import pandas as pd
import pytest

from dpcore.data import kendall_template, make_regression_data
from dpcore.experiments import budget_sweep
from dpcore.learning import GeodesicRegression
from dpcore.manifolds import SPD, KendallShape
from ui.logic import budget_split as B
from ui.logic import geodesic_regression as G
from ui.logic.regression_data import SPHERE_DEMO_REGION

from .test_budget_split import assert_chunks_are_the_sweep

#: A small simulation with the design (tiny chains: bookkeeping, not mixing).
TINY = dict(sample_sizes=(10, 12), replicates=2, n_footpoints=1, n_vectors=2, chain_length=5,
            burn_in=5, n_unequal=3, n_equal=2, n_grid=2, grid_n=10, seed=7)


def test_the_design_is_the_geodesic_regression_demonstrations():
    demo = G.DEMO_DEFAULTS["spd"]
    design = B.strict_design("spd")
    assert design == {"noise": demo["noise"], "footpoint_region": G.SPD_DEMO_REGION,
                      "footpoint_radius": demo["footpoint_radius"],
                      "max_speed": demo["max_speed"], "tau": demo["tau"],
                      "tau_m": demo["tau_m"]}
    # its region is the one the release states: within footpoint_radius of I
    assert design["footpoint_region"][1] == design["footpoint_radius"]
    # paper mode keeps the papers' protocol; manifolds without a design have none
    assert B.design_fields("spd", "paper") == {}
    assert B.strict_design("euclidean") == {} and B.design_fields("euclidean", "strict") == {}
    # S²: the demonstration's cap about the north pole, speed bound and noise; τ the page's
    sphere = G.DEMO_DEFAULTS["sphere"]
    assert B.strict_design("sphere") == {
        "noise": sphere["noise"], "footpoint_region": ((0.0, 0.0, 1.0), SPHERE_DEMO_REGION[1]),
        "footpoint_radius": sphere["footpoint_radius"], "max_speed": sphere["max_speed"],
        "tau": 0.2}
    assert set(B.design_fields("spd", "strict")) == {"noise", "footpoint_region",
                                                     "footpoint_radius", "max_speed"}
    # Kendall: the protocol's footpoint is the template (no region to pass to the generator)
    kendall = G.DEMO_DEFAULTS["kendall"]
    assert B.strict_design("kendall") == {
        "noise": kendall["noise"], "footpoint_radius": kendall["footpoint_radius"],
        "max_speed": kendall["max_speed"], "tau": kendall["tau"]}
    assert B.design_config("kendall").param == kendall["param"]


def test_scenario_defaults():
    base = B.scenario_defaults("sphere", "strict")
    config = B.SweepConfig()
    assert base == {f: getattr(config, f) for f in B.DESIGN_WIDGET_FIELDS}
    assert B.scenario_defaults("spd", "paper") == base
    spd = B.scenario_defaults("spd", "strict")
    assert spd == {**base, **B.STRICT_SETTINGS["spd"]}
    assert B.scenario_defaults("kendall", "paper")["param"] == 8  # the page's paper default
    assert B.scenario_defaults("kendall", "strict") == {
        **base, **B.STRICT_SETTINGS["kendall"], "param": G.DEMO_DEFAULTS["kendall"]["param"]}
    full = B.design_config("spd")
    assert (full.mode, full.kind, full.tau, full.tau_m) == ("strict", "spd", 0.175, 0.8)
    assert full.sample_sizes == B.STRICT_SETTINGS["spd"]["sample_sizes"]


def test_the_page_chunks_are_the_one_call_sweep_with_the_design():
    """Cell by cell (the page) equals one budget_sweep call per view (a script) with the SPD
    design, and that call is the library's with the design's arguments spelt out."""
    config = B.design_config("spd", **TINY)
    m = SPD(2)
    for view in config.views:
        whole = assert_chunks_are_the_sweep(config, view)
        budgets = {"unequal": dict(totals=[config.total], eps_p_grid=config.unequal_grid()),
                   "equal": dict(totals=config.equal_totals()),
                   "grid": dict(eps_p_grid=config.grid_values(),
                                eps_v_grid=config.grid_values())}[view]
        direct = budget_sweep(
            m, sample_sizes=[10] if view == "grid" else [10, 12], split=view, replicates=2,
            mode="strict", noise=0.05, rng=np.random.SeedSequence([7, B.VIEW_IDS[view]]),
            data_rng=np.random.SeedSequence([7]), n_footpoints=1, n_vectors=2,
            chain_length=5, burn_in=5, diagnostics=True, tau=0.175, tau_m=0.8,
            covariate_range=(0.0, 1.0), footpoint_radius=0.1, center=np.eye(2),
            max_speed=0.55, data_kwargs={"footpoint_region": (None, 0.1)},
            cells_from="exact_or_law", joint_reference=view != "grid", **budgets)
        pd.testing.assert_frame_equal(whole.drop(columns="view"), direct)
        assert whole.attrs["data_kwargs"] == {"footpoint_region": (None, 0.1)}
        assert whole.attrs["release_kwargs"]["max_speed"] == 0.55
        assert whole.attrs["release_kwargs"]["footpoint_radius"] == 0.1


def test_the_designs_data_lie_in_its_region():
    """The non-private fit the page reports is the fit on the design's data (footpoint within
    0.1 of I), not on the paper protocol's."""
    config = B.design_config("spd", **{**TINY, "views": ("equal",)})
    df = B.view_sweep(config, "equal")
    seeds = np.random.SeedSequence([7]).spawn(4)
    m = SPD(2)
    for k, (n, rep) in enumerate([(10, 0), (10, 1), (12, 0), (12, 1)]):
        data = make_regression_data(m, n, noise=0.05, rng=seeds[k], footpoint_region=(None, 0.1))
        assert m.dist(data.footpoint, np.eye(2)) <= 0.1
        paper = make_regression_data(m, n, noise=0.05, rng=seeds[k])
        row = df[(df["n"] == n) & (df["replicate"] == rep)]["nonprivate_mse"]
        fit = GeodesicRegression(m, tol=1e-8).fit(data.x, data.y)
        np.testing.assert_allclose(row, fit.mse(data.x, data.y), rtol=1e-12)
        other = GeodesicRegression(m, tol=1e-8).fit(paper.x, paper.y)
        assert not np.allclose(row, other.mse(paper.x, paper.y), rtol=1e-6)


def test_paper_mode_is_unchanged_by_the_design():
    """Paper mode on SPD(2): the papers' protocol, no design arguments."""
    config = B.SweepConfig(kind="spd", mode="paper", **{**TINY, "views": ("equal",)},
                           max_ratio=100.0, **B.design_fields("spd", "paper"))
    kw = B._view_kwargs(config, "equal")
    assert not {"data_kwargs", "footpoint_radius", "max_speed", "center"} & set(kw)
    assert kw["noise"] is None


def test_design_note_and_problem():
    note = B.design_note("spd", 0.175, 0.8)
    assert "within 0.1 of I" in note and "0.1 + 0.5 + 4 × 0.05 = 0.8" in note
    assert "speed at most 0.55" in note and "τ_m = 0.8" in note and "τ = 0.175" in note
    assert "the design's" not in note
    assert "the design's: τ_m = 0.8, τ = 0.175" in B.design_note("spd", 0.2, 0.8)
    sphere = B.design_note("sphere", 0.2)
    assert "within 0.2 rad of the north pole" in sphere and "speed at most 0.8" in sphere
    assert B.design_note("euclidean", 0.2) is None
    assert B.design_problem(B.design_config("spd")) is None
    assert B.design_problem(B.SweepConfig()) is None
    problem = B.design_problem(B.design_config("spd", tau=0.02, tau_m=0.05))
    assert "τ_m + τ = 0.07" in problem and "raise τ_m" in problem
    # the library refuses the same request (its proof's support)
    with pytest.raises(ValueError, match="exceeds tau_m"):
        B.view_sweep(B.design_config("spd", tau=0.02, tau_m=0.05,
                                     **{**TINY, "views": ("equal",), "replicates": 1,
                                        "sample_sizes": (10,)}), "equal")


def test_no_flat_noise_note_where_the_design_applies():
    assert B.flat_noise_note("spd", "strict") is None
    assert B.flat_noise_note("spd", "paper") is None


def test_the_kendall_design_reaches_the_library():
    """Kendall strict: the page's cells are the one-call sweep, which is the library's call with
    the design spelt out (template centre, footpoint radius 0.15, speed 0.55, τ 0.25, noise
    0.05, 4 landmarks)."""
    config = B.design_config("kendall", **{**TINY, "views": ("equal",)})
    whole = B.view_sweep(config, "equal")
    parts = pd.concat([B.run_chunk(config, v, n, rep) for v, n, rep in B.sweep_chunks(config)
                       if v == "equal"])
    parts = parts.sort_values(["n", "eps_p", "eps_v", "replicate", "scheme"], kind="stable",
                              ignore_index=True)
    pd.testing.assert_frame_equal(parts, whole)
    direct = budget_sweep(
        KendallShape(4), sample_sizes=[10, 12], split="equal", totals=config.equal_totals(),
        replicates=2, mode="strict", noise=0.05, rng=np.random.SeedSequence([7, 2]),
        data_rng=np.random.SeedSequence([7]), n_footpoints=1, n_vectors=2, chain_length=5,
        burn_in=5, diagnostics=True, tau=0.25, covariate_range=(0.0, 1.0),
        footpoint_radius=0.15, center=kendall_template(4), max_speed=0.55,
        cells_from="exact_or_law", joint_reference=True)
    pd.testing.assert_frame_equal(whole.drop(columns="view"), direct)
    assert whole.attrs["data_kwargs"] == {}
