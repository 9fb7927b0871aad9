"""Page logic of the Geodesic regression page (ui.logic.geodesic_regression)."""

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from dpcore.manifolds import Euclidean, KendallShape
from ui.logic import geodesic_regression as G
from ui.logic import rat_preset as R


def test_length_error_text_fits_a_metric_card():
    assert G.length_error_text(0.023) == "+2.3%"
    assert G.length_error_text(-0.5) == "-50%"
    assert G.length_error_text(2.3) == "+230%"
    assert G.length_error_text(6e17) == "6e+17× |v̂|"
    assert G.length_error_text(float("nan")) == "n/a"
    assert all(len(G.length_error_text(r)) <= 11 for r in (1e-4, 0.5, 9.99, 1e3, 1e20))


def test_assumption_rows_state_the_sampler_the_release_will_use():
    """The assumptions box never claims a δ for MCMC ("assuming the chain mixed" was gone from
    the labels but had stayed here); it follows the plan."""
    s = G.ReleaseSettings(kind="sphere", param=None, eps_p=1.0, eps_v=2.0, tau=0.2,
                          covariate_range=(0.0, 1.0))
    exact = "\n".join(G.assumption_rows(s, plan=G.sampler_plan(s, 20)))
    assert "exact rejection sampling (δ = 0)" in exact and "sequential" not in exact
    mcmc = "\n".join(G.assumption_rows(s, plan=G.sampler_plan(s, 400)))
    assert "no δ is certified" in mcmc
    assert "assuming the chain mixed" not in exact + mcmc
    seq = G.ReleaseSettings(kind="sphere", param=None, eps_p=1.0, eps_v=2.0, tau=0.2,
                            covariate_range=(0.0, 1.0), scheme="sequential")
    assert "NOT PRIVATE" in "\n".join(G.assumption_rows(seq, plan=G.sampler_plan(seq, 20)))


def test_unmixed_chains_are_flagged_with_the_fix():
    from types import SimpleNamespace

    rel = SimpleNamespace(diagnostics={
        "joint": {"exact": False, "rhat": 1.31, "ess": 12.0},
        "other": {"exact": False, "rhat": 1.01, "ess": 900.0},
        "exact_stage": {"exact": True}})
    flags = G.diagnostic_flags(rel)
    assert len(flags) == 1
    assert "R-hat = 1.31 > 1.05" in flags[0] and "ESS = 12 < 100" in flags[0]
    assert "chain length" in flags[0]
    assert G.diagnostic_flags(SimpleNamespace(diagnostics={"joint": {"exact": True}})) == []


# --------------------------------------------------------------------------- issue 14
SHARED_RATS = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "rat_skulls.npy"


def test_shipped_rat_skulls_are_the_shared_copy():
    """assets/data/rat_skulls.csv holds the same 144 x 8 x 2 landmarks as the shared .npy, in
    the same order, with the ages of the study design (8 rows per rat)."""
    if not SHARED_RATS.exists():
        pytest.skip(f"{SHARED_RATS} is absent (the shared data sit beside the project)")
    ref = np.load(SHARED_RATS)
    raw = np.loadtxt(R.RAT_SKULLS_FILE, delimiter=",", skiprows=1)
    assert raw.shape == (144, 17)
    np.testing.assert_array_equal(raw[:, 1:].reshape(144, 8, 2), ref)
    np.testing.assert_array_equal(raw[:, 0], np.tile(R.RAT_AGES, 18))
    # The page's reader gives the preshapes of those landmarks.
    ds = R.rat_skulls_dataset()
    m = KendallShape(8)
    np.testing.assert_allclose(ds.y, m.from_landmarks(ref), atol=1e-12)
    assert ds.n == 144 and ds.source == "preset"


def test_rat_preset_bounds_hold_the_data_and_count_rats():
    """The preset's public bounds clip nothing of the rats (checked here, after the fact: the
    bounds come from the study design), and it counts 8 rows per rat."""
    p = R.RAT_PRESET
    ds = R.rat_skulls_dataset()
    s = G.ReleaseSettings(kind=p["kind"], param=p["param"], eps_p=p["eps_p"], eps_v=p["eps_v"],
                          tau=p["tau"], covariate_range=p["covariate_range"],
                          max_speed=p["max_speed"])
    fit = G.fit_nonprivate(p["kind"], p["param"], ds.x, ds.y, p["covariate_range"])
    rows = G.clipping_preview(s, ds, fit)
    assert [r["count"] for r in rows] == [0, 0]
    assert p["rows_per_person"] == 144 // 18
    assert s.release_kwargs()["max_speed"] == p["max_speed"]
    assert G.sampler_plan(s, ds.n)["guarantee"] == "approximately private"


@pytest.mark.slow
@pytest.mark.slow_first(24)
def test_rat_useful_n_eps_is_the_asymptotic_prediction():
    """The number the preset states is what dpcore.release.asymptotic predicts on the rats (a
    lower bound: the far mass found, bounded below with probability 0.999), the far points
    found are far worse than useful, and the basin alone would be useful near RAT_BASIN_N_EPS."""
    out = R.rat_asymptotic(bounds=(1e5, 1e7))
    assert out["n_eps"] == pytest.approx(R.RAT_USEFUL_N_EPS, rel=0.1)
    model = out["model"]
    assert model.valid and model.clipped == 0
    p, v, g = model.far_points()[0]
    assert g < 1e-3 and model.mse(p[None], v[None])[0] > 100 * model.mse_nonprivate
    at_page = model.predict(1440.0)  # the preset's budget: the basin is useful, its share nil
    assert at_page["median_ratio"] < 2 and at_page["share"] < 1e-10
    basin = model.local(2 * R.RAT_BASIN_N_EPS)
    assert basin["p_within"] > 0.5


def test_futile_release_note_only_on_the_rat_preset_below_the_number():
    p = R.RAT_PRESET
    s = G.ReleaseSettings(kind=p["kind"], param=p["param"], eps_p=p["eps_p"], eps_v=p["eps_v"],
                          tau=p["tau"], covariate_range=p["covariate_range"],
                          max_speed=p["max_speed"])
    note = R.futile_release_note("rats", s, 144)
    assert note and "n·ε = 1,440" in note and "930,000 or more" in note
    assert R.futile_release_note("synthetic", s, 144) is None
    big = G.ReleaseSettings(**{**s.__dict__, "eps_p": 3e3, "eps_v": 7e3})
    assert R.futile_release_note("rats", big, 144) is None
    region = G.ReleaseSettings(**{**s.__dict__, "footpoint_radius": 0.2})
    assert R.futile_release_note("rats", region, 144) is None


def test_clipping_preview_counts_and_warns_above_five_percent():
    from ui.logic import regression_data as D

    ds = D.synthetic_dataset("euclidean", 2, 40, 0.05, 3)
    fit = G.fit_nonprivate("euclidean", 2, ds.x, ds.y, (0.0, 1.0))
    res = G.residual_norms(Euclidean(2), ds.x, ds.y, fit)
    dist = np.linalg.norm(ds.y, axis=-1)
    tau, tau_m = float(np.quantile(res, 0.9)), float(np.quantile(dist, 0.99))
    s = G.ReleaseSettings(kind="euclidean", param=2, eps_p=1.0, eps_v=2.0, tau=tau,
                          covariate_range=(0.0, 0.5), tau_m=tau_m)
    rows = G.clipping_preview(s, ds, fit)
    expected = [int(np.sum(ds.x > 0.5)), int(np.sum(dist > tau_m)), int(np.sum(res > tau))]
    assert [r["count"] for r in rows] == expected
    assert expected[1] == 1  # one response of 40 (2.5%) outside the ball: no warning
    assert [r["warn"] for r in rows] == [c / 40 > 0.05 for c in expected] == [True, False, True]
    assert all("outside" in r["what"] or "above" in r["what"] for r in rows)
    paper = G.ReleaseSettings(kind="euclidean", param=2, eps_p=1.0, eps_v=2.0, mode="paper")
    assert G.clipping_preview(paper, ds, fit) == []


def test_usefulness_is_the_ratio_of_the_errors():
    ok = G.usefulness({"mse_nonprivate": 0.01, "mse_private": 0.03}, 100, 3.0)
    assert ok["useful"] and ok["ratio"] == pytest.approx(3.0)
    bad = G.usefulness({"mse_nonprivate": 0.01, "mse_private": 0.2}, 20, 3.0)
    assert not bad["useful"] and "Not useful at n·ε = 60" in bad["text"] and "20×" in bad["text"]
    zero = G.usefulness({"mse_nonprivate": 0.0, "mse_private": 0.2}, 20, 3.0)
    assert not zero["useful"] and zero["ratio"] is None and "nan" not in zero["text"]


def test_usefulness_judges_the_median_draw_not_the_mean():
    """One far draw of nine dominates the mean; the typical (median) draw decides, and the
    text counts the draws within the ratio."""
    draws = [0.02, 0.025, 0.03, 0.03, 0.035, 0.04, 0.045, 0.06, 1.0]
    met = {"mse_nonprivate": 0.01, "mse_private": float(np.mean(draws)),
           "mse_private_draws": draws}
    verdict = G.usefulness(met, 20, 3.0)
    assert met["mse_private"] / 0.01 > 5.0
    assert verdict["useful"] and verdict["ratio"] == pytest.approx(3.5)
    assert verdict["within"] == 7 and "7 of 9 draws are within 5×" in verdict["text"]
    worse = G.usefulness({**met, "mse_private_draws": [0.06] * 5 + [0.01] * 4}, 20, 3.0)
    assert not worse["useful"] and "4 of 9 draws within 5×" in worse["text"]


def test_time_estimate_text_says_when_the_data_set_the_time():
    """An exact stage priced by an envelope's prediction (the S² footpoint ball's far-field
    sampler) holds for data that fit the public bounds: the Geodesic regression page's own
    sentence says so, as the estimate's first line does; an MCMC estimate does not."""
    from dpcore.release.work import (
        DATA_DEPENDENT_NOTE,
        WorkCosts,
        estimate_work,
        exact_part,
        mcmc_part,
    )

    costs = WorkCosts(per_step=1e-3, per_term=1e-6)
    exact = estimate_work(exact_part(costs, draws=9, proposals_per_draw=3, n=20))
    assert DATA_DEPENDENT_NOTE in G.time_estimate_text(exact)
    assert G.time_estimate_text(exact).endswith("shows while it runs.")
    mcmc = estimate_work(mcmc_part(costs, chains=9, steps=500, n=100))
    assert DATA_DEPENDENT_NOTE not in G.time_estimate_text(mcmc)


def test_time_estimate_text_states_the_time_and_the_worst_case():
    from dpcore.release.work import WorkCosts, estimate_work, exact_part, mcmc_part

    costs = WorkCosts(per_step=1e-3, per_term=1e-6)
    mcmc = estimate_work(mcmc_part(costs, chains=9, steps=500, n=10_000))  # 0.5 + 45 s
    assert G.time_estimate_text(mcmc).startswith("Estimated time: about 46 s, 45,000,000 "
                                                 "gradient terms.")
    long = estimate_work(mcmc_part(costs, chains=1, steps=3_000, n=100_000))  # 303 s
    assert G.time_estimate_text(long).startswith("Estimated time: about 5 min 03 s")
    quick = estimate_work(exact_part(costs, draws=9, proposals_per_draw=3, n=20))
    assert G.time_estimate_text(quick).startswith("Estimated time: under a second,")
    bound = estimate_work(exact_part(costs, draws=9, proposals_per_draw=3, n=20),
                          exact_part(costs, draws=9, proposals_per_draw=1e6, n=20,
                                     worst_case=True))  # 180 s at worst
    assert "(up to 3 min 00 s for the worst-case data set)" in G.time_estimate_text(bound)


# ------------------------------------------------- issue 14 point 1: the default scenarios
@pytest.mark.parametrize("kind", ["sphere", "spd", "kendall", "euclidean"])
def test_default_scenarios_are_planned_exact_and_private(kind):
    """Every default (public inputs only, so deterministic) will be drawn by the exact sampler
    and labelled private, within the work budget; SPD's footpoint region stays inside the
    sensitivity proof's support (τ_m + τ)."""
    s = G.demo_settings(kind)
    plan = G.sampler_plan(s, G.default_n(kind))
    assert plan["exact"] and plan["guarantee"] == "private"
    # R^1's refined envelope is judged on its predicted work, the others on the worst case.
    assert min(plan["work"], plan.get("predicted_work", np.inf)) <= plan["limit"]
    _, within = G.work_estimate(s, G.default_n(kind))
    assert within
    if kind == "spd":
        assert s.footpoint_radius <= s.tau_m + s.tau
        assert s.footpoint_radius == G.SPD_DEMO_REGION[1]


def test_spd_demo_data_hold_the_stated_design():
    """The SPD(2) demonstration's data: footpoint within the public region about I, speed 0.5
    under the public bound, responses inside the public ball (nothing projected on the page's
    default seeds), and the release's footpoint support is that region."""
    from dpcore.manifolds import SPD

    m, s = SPD(2), G.demo_settings("spd")
    for seed in range(20):
        ds = G.synthetic_dataset("spd", None, G.default_n("spd"), G.default_noise("spd", 0.0),
                                 seed)
        p, v, _ = ds.truth
        assert m.dist(np.eye(2), p) <= G.SPD_DEMO_REGION[1]
        assert m.norm(p, v) == pytest.approx(0.5) and 0.5 < s.max_speed
        assert np.all(m.dist(np.eye(2), ds.y) <= s.tau_m)
    assert "within 0.1 of I" in ds.description
    kw = s.release_kwargs()
    assert kw["footpoint_radius"] == 0.1 and np.array_equal(kw["center"], np.eye(2))
    # The other manifolds keep the paper protocol's data (the sphere with its own region).
    from ui.logic import regression_data as D

    a = G.synthetic_dataset("kendall", 4, 20, 0.05, 3)
    b = D.synthetic_dataset("kendall", 4, 20, 0.05, 3)
    np.testing.assert_array_equal(a.y, b.y)


@pytest.mark.parametrize("kind", ["spd", "kendall"])
def test_default_release_is_private_exact_and_judged(kind):
    """A seeded release of the default SPD(2) and Kendall scenarios is exact and labelled
    private (no δ), and the page's verdict is computed from its draws (whether it is useful is
    measured over data seeds by benchmarks/bench_defaults.py, not asserted on one draw)."""
    # 3 x 3 draws (the page's default is one geodesic): the verdict over several draws.
    s = dataclasses.replace(G.demo_settings(kind, seed=3), n_footpoints=3, n_vectors=3)
    n = G.default_n(kind)
    ds = G.synthetic_dataset(kind, s.param, n, G.default_noise(kind, 0.0), 0)
    fit = G.fit_nonprivate(kind, s.param, ds.x, ds.y, s.covariate_range)
    release, notes = G.run_release(s, ds)
    assert notes == []
    assert release.private and release.delta == 0.0
    assert all(d.get("exact") for d in release.diagnostics.values())
    assert release.assumptions["footpoint_support"]["value"] == pytest.approx(
        s.footpoint_radius)
    met = G.release_metrics(s.manifold, ds, release, fit)
    verdict = G.usefulness(met, n, met["eps_per_geodesic"])
    assert verdict["draws"] == 9 and np.isfinite(verdict["ratio"])
    assert verdict["useful"] == (verdict["ratio"] <= G.USEFUL_RATIO)
    assert f"n·ε = {n * 3:g}" in verdict["text"]


def test_kendall_default_has_four_landmarks():
    assert G.demo_settings("kendall").param == 4 == G.default_param("kendall", 8)
    assert G.default_n("spd") == 30 and G.default_n("kendall") == 20


def test_accuracy_lines_judge_the_whole_curve():
    """In a small public footpoint region every footpoint is about as far from the fit as a
    uniform one: the 'close to a uniform draw' warning follows the geodesic's error, not the
    footpoint's."""
    pred = {"available": True, "epsilon": 3.0, "model": "model",
            "footpoint": {"median": 0.08, "q95": 0.1, "uniform_median": 0.08},
            "curve": {"median": 0.07, "q95": 0.25, "uniform_median": 0.26}}
    assert "close to a uniform draw" not in " ".join(G.accuracy_lines("spd", pred))
    pred["curve"]["median"] = 0.22
    assert "close to a uniform draw" in " ".join(G.accuracy_lines("spd", pred))


# ------------------------------------------------------------- issue "The first hour"
def test_the_default_release_is_one_geodesic():
    """A first release costs what the page teaches, one geodesic at ε = ε_p + ε_v = 3 (not
    3 x 3 draws at 27); more draws stay a choice whose cost the page states."""
    assert G.DEFAULT_DRAWS == (1, 1)
    for kind in ("sphere", "spd", "kendall", "euclidean"):
        s = G.demo_settings(kind)
        assert (s.n_footpoints, s.n_vectors) == (1, 1)
        assert G.planned_epsilon(s) == pytest.approx(sum(G.DEFAULT_EPS)) == pytest.approx(3.0)
    bare = G.ReleaseSettings(kind="sphere", param=None, eps_p=1.0, eps_v=2.0)
    assert (bare.n_footpoints, bare.n_vectors) == (1, 1)
    more = dataclasses.replace(G.demo_settings("sphere"), n_footpoints=3, n_vectors=3)
    assert G.planned_epsilon(more) == pytest.approx(27.0)


def test_the_exact_plan_states_the_figure_that_applies():
    """On R¹ the refined envelope runs: the plan's sentence states its predicted work, not
    the uniform proposals' worst case (1.39e+65 proposals per draw at the default, next to an
    estimated time under a second). Elsewhere the uniform worst case is the figure."""
    s = G.demo_settings("euclidean")
    plan = G.sampler_plan(s, G.default_n("euclidean"))
    assert plan["exact"] and plan["worst_case_proposals"] > 1e60
    text = G.exact_plan_text(plan)
    assert "refined envelope" in text
    assert f"{plan['worst_case_proposals']:.3g}" not in text and "e+65" not in text
    assert f"{plan['predicted_work']:,.0f}" in text
    sphere = G.demo_settings("sphere")
    plan = G.sampler_plan(sphere, G.default_n("sphere"))
    assert "predicted_work" not in plan
    text = G.exact_plan_text(plan)
    assert f"{plan['worst_case_proposals']:.3g} proposals per draw" in text
    assert "Worst case over all data sets" in text
