"""AppTest tests of what the Geodesic regression page says about whether a release is useful,
and how it will be drawn (issue 14): the error predicted before the release, the verdict after
it and the smallest useful budget, the rat skulls preset's asymptotic prediction; MCMC only as
an explicit choice, and "exact only" refused above the public work bound before any sampling.
"""

import numpy as np
import pytest

from ui.logic import geodesic_regression as G
from ui.logic import regression_data as D

from .pages import gr_open_sampler, gr_quick_sampler, gr_release, open_app_page

TIMEOUT = 120
LEDGER = "privacy_ledger"


def open_page():
    return open_app_page("geodesic_regression.py", timeout=TIMEOUT)


quick_sampler = gr_quick_sampler


release = gr_release


# --------------------------------------------------------------------------- before release
def test_predicted_error_before_release_states_the_truth():
    """The prediction, from public inputs only: at the default scenario (S², n = 20, ε = 3,
    a useful release) the geodesic's error is well below a uniform draw's; at ε = 0.02 it is
    close to a uniform draw, and the page says so. Nothing is released or spent."""
    at = open_page()
    at.toggle(key="gr_predict").set_value(True).run()
    assert not at.exception
    text = " ".join(i.value for i in at.info)
    assert "Footpoint error" in text and "Geodesic error" in text
    assert "close to a uniform draw" not in text
    at.select_slider(key="gr_eps_p").set_value(0.01).run()
    at.select_slider(key="gr_eps_v").set_value(0.01).run()
    assert "close to a uniform draw" in " ".join(i.value for i in at.info)
    assert len(at.session_state[LEDGER]) == 0


def test_mcmc_is_an_explicit_choice():
    """Where the exact sampler is out of reach, 'auto' does not fall back to MCMC silently:
    the Release button waits for the opt-in box."""
    at = open_page()
    at.slider(key="gr_n").set_value(200).run()
    at.select_slider(key="gr_eps_p").set_value(10.0).run()
    at.select_slider(key="gr_eps_v").set_value(10.0).run()
    assert any("MCMC" in w.value for w in at.warning)
    assert at.button(key="gr_release_button").disabled
    at.checkbox(key="gr_mcmc_ok").check().run()
    assert not at.button(key="gr_release_button").disabled
    quick_sampler(at)
    release(at)
    assert "approximately private" in at.session_state[LEDGER][0]["label"]


def test_exact_only_above_the_public_work_bound_is_refused_before_release():
    """'exact only' where the exact sampler's public worst-case work is above the library's
    limit: the page shows the library's refusal (the same message the release would raise,
    made before any sampling from public inputs only) and disables the Release button. At
    n = 100 and ε = 10 + 10 (n·ε = 2,000 per geodesic) neither uniform proposals nor the
    certified bundle sampler (n·ε at most 1,000) draw exactly."""
    at = open_page()
    gr_open_sampler(at)
    at.radio(key="gr_sampler").set_value("exact").run()
    at.slider(key="gr_n").set_value(100)
    at.select_slider(key="gr_eps_p").set_value(10.0)
    at.select_slider(key="gr_eps_v").set_value(10.0).run()
    assert not at.exception, at.exception
    refusals = [e.value for e in at.error if "(sampler='exact') could need up to" in e.value]
    assert len(refusals) == 1, [e.value for e in at.error]
    assert "above the limit max_exact_work" in refusals[0]
    assert "On this page: lower ε, n or the number of draws" in refusals[0]
    assert at.button(key="gr_release_button").disabled
    assert at.session_state[LEDGER] == []


# --------------------------------------------------------------------------- issue 14
def shown_ratio(at):
    """The private / non-private MSE ratio as the page shows it (the private metric's delta)."""
    (m,) = [m for m in at.metric if m.label == "MSE, private (mean)"]
    priv = float(m.value)
    (npriv,) = [float(x.value) for x in at.metric if x.label == "MSE, non-private"]
    assert np.isfinite(priv) and np.isfinite(npriv)
    return priv / npriv


def median_draw_ratio(at, kind):
    """The median private draw's MSE over the non-private MSE, recomputed from the release in
    session state and the page's synthetic data (independently of the page's verdict)."""
    from dpcore.experiments.metrics import release_mse
    from ui.manifolds import make_manifold

    release = at.session_state["gr_last"]["release"]
    param = at.session_state[f"gr_param_{kind}"] if kind in D.PARAM_KINDS else None
    data = G.synthetic_dataset(kind, param, at.slider(key="gr_n").value,
                               at.session_state[f"gr_noise_{kind}"], at.session_state["gr_seed"])
    (npriv,) = [float(x.value) for x in at.metric if x.label == "MSE, non-private"]
    mse = release_mse(make_manifold(kind, param), release, data.x, data.y)
    return float(np.median(mse)) / npriv


@pytest.mark.parametrize("kind", ["sphere", "spd", "kendall", "euclidean"])
def test_default_strict_release_states_whether_it_is_useful(kind):
    """The default scenario of each manifold, released as a user would (fixed release seed),
    is exact and private and shows a verdict that agrees with the ratio it shows. Its settings
    are G.demo_settings, the scenario benchmarks/bench_defaults.py measures over data seeds
    (useful on most of them on every manifold: R^1 at n = 200; S², SPD(2) at n = 30 and Kendall
    with 4 landmarks through their public design). Usefulness of one draw is asserted only
    where the measured margin is wide (R^1, S²)."""

    at = open_page()
    if kind != "sphere":
        at.radio(key="gr_manifold").set_value(kind).run()
    assert not at.exception
    gr_open_sampler(at)
    at.checkbox(key="gr_fix_seed").check().run()
    at.number_input(key="gr_release_seed").set_value(7).run()
    release(at)
    entry = at.session_state[LEDGER][0]
    assert entry["guarantee"] == "private"  # exact sampler on every default
    assert at.session_state["gr_last"]["signature"][0] == G.demo_settings(kind, seed=7)
    assert at.slider(key="gr_n").value == G.default_n(kind)
    assert at.session_state[f"gr_noise_{kind}"] == G.default_noise(kind, D.default_noise(kind))
    shown_ratio(at)  # the mean's metric is finite
    ratio = median_draw_ratio(at, kind)
    useful = [s.value for s in at.success if "Useful:" in s.value]
    not_useful = [w.value for w in at.warning if "Not useful at n·ε" in w.value]
    assert bool(useful) == (ratio <= 5.0) and bool(not_useful) == (ratio > 5.0)
    assert f"{ratio:.3g}×" in (useful or not_useful)[0]
    if kind == "euclidean":
        assert at.number_input(key="gr_param_euclidean").value == 1
        assert at.slider(key="gr_n").value == 200
        assert ratio <= 5.0, ratio
    elif kind == "sphere":
        assert at.slider(key="gr_n").value == 20
        assert at.number_input(key="gr_fr_sphere_synthetic").value == 0.2
        assert ratio <= 5.0, ratio
    elif kind == "spd":
        assert at.slider(key="gr_n").value == 30
        assert at.number_input(key="gr_fr_spd_synthetic").value == 0.1
        assert "within 0.1 of I" in " ".join(c.value for c in at.caption)
    else:
        assert at.slider(key="gr_n").value == 20
        assert at.number_input(key="gr_param_kendall").value == 4


def test_rat_skulls_preset_in_one_click():
    at = open_page()
    # One place offers the preset: the data source (choosing it sets the scenario).
    assert "gr_preset_rats" not in [b.key for b in at.button]
    at.radio(key="gr_source").set_value("rats").run()
    assert not at.exception and not at.error
    assert at.radio(key="gr_manifold").value == "kendall"
    assert at.number_input(key="gr_param_kendall").value == 8
    assert at.radio(key="gr_source").value == "rats"
    assert (at.number_input(key="gr_lo_rats").value, at.number_input(key="gr_hi_rats").value) \
        == (0.0, 150.0)
    assert at.session_state["rows_per_person"] == 8
    info = " ".join(i.value for i in at.info)
    assert "Bookstein" in info and "MIT" in info and "geomstats" in info
    # Issue 14: the asymptotic prediction's number, and no MCMC release offered below it.
    assert "smallest useful n·ε is at least **930,000**" in info
    assert "Asymptotic prediction" in info and "Not useful at n·ε = 1,440" in info
    # Issue 28 point 4: today's design and the two-stage design side by side, in one box.
    box = " ".join(m.value for m in at.markdown)
    assert "**Today: one stage, all 18 rats**" in box and "#### 713× the non-private MSE" in box
    assert "**Two-stage: private centre, then KNG in a ball**" in box
    assert "#### 2.3× predicted, 3.5× by MCMC" in box
    assert any("total ε = 30" in c.value and "do not mix" in c.value for c in at.caption)
    assert not any(box.key == "gr_mcmc_ok" for box in at.checkbox)
    assert at.button(key="gr_release_button").disabled
    assert any("n = 144" in c.value for c in at.caption)
    # Preview of the public bounds against the data: counted, labelled as not released.
    preview = " ".join(m.value for m in at.markdown)
    assert "not released" in preview and "0 of 144 (0%) covariates outside" in preview
    # The cost is stated per rat (8 rows each).
    assert any("per person (8 rows each)" in m.value for m in at.markdown)
    # A release anyway, by choosing MCMC: its cost per rat, and a verdict.
    gr_open_sampler(at)
    at.radio(key="gr_sampler").set_value("mcmc").run()
    release(quick_sampler(at))
    entry = at.session_state[LEDGER][0]
    assert entry["epsilon"] == pytest.approx(3 * 10.0)  # 1 x 3 draws x (3 + 7), per row
    assert entry["guarantee"] == "approximately private"
    verdicts = [w.value for w in at.warning if "useful at n·ε = 1.44e+03" in w.value] + \
        [s.value for s in at.success if "Useful:" in s.value]
    assert len(verdicts) == 1
    # Choosing another manifold with the preset says what it needs (no exception).
    at.number_input(key="gr_param_kendall").set_value(5).run()
    assert not at.exception
    assert any("8 landmarks" in e.value for e in at.error)


def test_not_useful_release_offers_the_smallest_useful_budget():
    """SPD(2) at ε = 0.02 per geodesic (n·ε = 0.6) draws uniformly on the public support, far
    from useful (the support alone gives ~20x); the search simulates larger budgets on the same
    data (nothing recorded) and states the first useful one with what it tried."""
    at = open_page()
    at.radio(key="gr_manifold").set_value("spd").run()
    at.select_slider(key="gr_eps_p").set_value(0.01).run()
    at.select_slider(key="gr_eps_v").set_value(0.01).run()
    gr_open_sampler(at)
    at.checkbox(key="gr_fix_seed").check().run()
    at.number_input(key="gr_release_seed").set_value(7).run()
    release(at)
    assert any("Not useful at n·ε" in w.value for w in at.warning)
    ledger_before = len(at.session_state[LEDGER])
    at.button(key="gr_useful_button").click().run()
    assert not at.exception
    (text,) = [i.value for i in at.info if "useful" in i.value and "Tried" in i.value]
    assert "Smallest useful budget found" in text or "No useful release up to" in text
    assert "×2:" in text
    assert len(at.session_state[LEDGER]) == ledger_before  # a preview: nothing recorded
