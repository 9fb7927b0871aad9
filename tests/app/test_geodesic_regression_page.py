"""AppTest tests of the "Geodesic regression" page (driven through app.py, as a user would):
its basics (the default run, releases on each manifold, the budget, the URL, the cost and the
session cap, the exports, long work, the order of the first paint).

Elsewhere: uploads in test_geodesic_regression_uploads.py; whether a release is useful and
how it is drawn (issue 14) in test_geodesic_regression_usefulness.py; the two-stage design and
"Estimate privately" in test_geodesic_regression_two_stage.py and
test_geodesic_regression_bounds_estimate.py.
"""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ui.logic import geodesic_regression as G
from ui.logic import gr_request as R

from .pages import gr_open_sampler, gr_quick_sampler, gr_release, open_app_page

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "pages" / "geodesic_regression.py"
TIMEOUT = 120
LEDGER = "privacy_ledger"


def open_page():
    return open_app_page("geodesic_regression.py", timeout=TIMEOUT)


quick_sampler = gr_quick_sampler


release = gr_release


def metric_labels(at):
    return [m.label for m in at.metric]


def plotly_charts(at):
    return at.get("plotly_chart")


# --------------------------------------------------------------------------- default
def test_default_run_shows_data_and_fit_without_releasing():
    at = open_page()
    assert [t.value for t in at.title] == ["Geodesic regression"]
    assert not at.error
    assert len(plotly_charts(at)) == 1  # the sphere with data and the non-private geodesic
    assert metric_labels(at) == ["MSE of the non-private fit"]
    assert at.session_state[LEDGER] == []  # nothing released on load
    # Teaching notes (typeset once their expander is opened) and the assumptions box.
    assert len(at.latex) == 0
    at.session_state["gr_notes"] = True
    at.run()
    assert len(at.latex) >= 4
    assert any("Assumptions in force" in m.value for m in at.markdown)
    # Settings (never data) are mirrored in the URL.
    assert at.query_params["gr_m"] in ("sphere", ["sphere"])


def test_release_records_ledger_and_shows_metrics():
    at = open_page()
    at.number_input(key="gr_nf").set_value(3)
    at.number_input(key="gr_nv").set_value(3)
    at = release(at)
    ledger = at.session_state[LEDGER]
    assert len(ledger) == 1
    entry = ledger[0]
    assert entry["page"] == "Geodesic regression"
    # Joint scheme (the default), eps_p = 1, eps_v = 2, 3 x 3 = 9 (footpoint, vector) pairs
    # -> 9 * (1 + 2); n = 20 keeps the exact sampler within reach: labelled private.
    assert entry["epsilon"] == pytest.approx(27.0)
    assert entry["label"] == "private" and entry["guarantee"] == "private"
    labels = metric_labels(at)
    for name in ("MSE, non-private", "MSE, private (mean)", "Footpoint shift",
                 "Vector angle", "Length error"):
        assert name in labels
    assert any("sensitivity Δ" in m.value for m in at.markdown)
    assert len(at.dataframe) >= 1  # sampler diagnostics
    keys = [b.key for b in at.get("download_button")]
    assert "gr_download_release" in keys and "gr_download_data" in keys
    # The shared sidebar lists the release.
    assert at.sidebar.dataframe and len(at.sidebar.dataframe[0].value) == 1
    # A rerun does not release again (only the button does).
    at.run()
    assert len(at.session_state[LEDGER]) == 1


def test_joint_scheme_release():
    at = quick_sampler(open_page())
    at.number_input(key="gr_nf").set_value(3)
    at.number_input(key="gr_nv").set_value(3)
    at.radio(key="gr_scheme").set_value("joint").run()
    assert any("independent (footpoint, vector) pairs" in c.value for c in at.caption)
    release(at)
    entry = at.session_state[LEDGER][0]
    assert entry["epsilon"] == pytest.approx(9 * 3.0)  # 9 pairs x (eps_p + eps_v)
    assert any("joint (p, v)" in m.value for m in at.markdown)
    stages = at.dataframe[0].value["stage"].tolist()
    assert stages == ["joint (p̃, ṽ)"]
    assert "gr_scheme=joint" in str(at.query_params) or at.query_params.get("gr_scheme") in (
        "joint", ["joint"])


def test_changed_settings_hide_the_old_release():
    at = release(quick_sampler(open_page()))
    at.select_slider(key="gr_eps_p").set_value(0.5).run()
    assert not at.exception
    assert any("Settings changed" in i.value for i in at.info)
    assert metric_labels(at) == ["MSE of the non-private fit"]
    assert len(at.session_state[LEDGER]) == 1


@pytest.mark.parametrize("kind,charts", [("spd", 2), ("kendall", 1), ("euclidean", 1)])
def test_each_manifold_releases(kind, charts):
    at = open_page()
    at.radio(key="gr_manifold").set_value(kind).run()
    assert not at.exception and not at.error
    quick_sampler(at)
    at.number_input(key="gr_nf").set_value(2)
    at.number_input(key="gr_nv").set_value(2)
    release(at)
    assert not at.error
    assert len(plotly_charts(at)) == charts
    assert "MSE, private (mean)" in metric_labels(at)
    assert len(at.session_state[LEDGER]) == 1
    if kind == "kendall":
        # The covariate slider of the shape panels redraws without a new release.
        at.slider(key="gr_kx").set_value((0.2, 0.6)).run()
        assert not at.exception
        assert len(at.session_state[LEDGER]) == 1


def test_kendall_landmarks_and_euclidean_dimension():
    at = open_page()
    at.radio(key="gr_manifold").set_value("kendall").run()
    at.number_input(key="gr_param_kendall").set_value(5).run()
    assert not at.exception
    at.radio(key="gr_manifold").set_value("euclidean").run()
    at.number_input(key="gr_param_euclidean").set_value(3).run()
    assert not at.exception and not at.error
    assert at.query_params["gr_d"] in ("3", ["3"])


def test_paper_mode_is_flagged_not_private():
    at = open_page()
    at.radio(key="gr_mode").set_value("paper").run()
    assert any("NOT private" in w.value for w in at.warning)
    release(quick_sampler(at))
    entry = at.session_state[LEDGER][0]
    assert entry["label"].startswith("NOT PRIVATE")
    assert any("Paper mode" in w.value for w in at.warning)
    assert any("data" in m.value and "not private" in m.value for m in at.markdown)


def test_total_budget_with_a_split():
    at = open_page()
    at.radio(key="gr_budget_input").set_value("total").run()
    at.select_slider(key="gr_total").set_value(2.0)
    at.slider(key="gr_share").set_value(25)
    at.number_input(key="gr_nf").set_value(1)
    at.number_input(key="gr_nv").set_value(2)
    release(quick_sampler(at))
    # eps_p = 0.5, eps_v = 1.5, joint scheme: two (footpoint, vector) pairs cost 2 * 2.
    assert at.session_state[LEDGER][0]["epsilon"] == pytest.approx(4.0)


def test_generated_example_has_its_covariate_range():
    at = open_page()
    at.radio(key="gr_source").set_value("example").run()
    assert not at.exception and not at.error
    assert at.number_input(key="gr_lo_example").value == 20.0
    assert at.number_input(key="gr_hi_example").value == 80.0
    release(quick_sampler(at))
    assert "MSE, private (mean)" in metric_labels(at)


def test_bad_covariate_range_is_an_error_not_an_exception():
    at = open_page()
    at.number_input(key="gr_lo_synthetic").set_value(2.0).run()
    assert not at.exception
    assert any("low < high" in e.value for e in at.error)
    assert at.button(key="gr_release_button").disabled


def test_clipping_preview_warns_above_five_percent():
    at = open_page()
    at.number_input(key="gr_hi_synthetic").set_value(0.5).run()
    assert not at.exception
    warnings = [w.value for w in at.warning if "covariates outside the public range" in w.value]
    assert len(warnings) == 1 and "more than 5%" in warnings[0]
    assert any("not released" in m.value for m in at.markdown)


# --------------------------------------------------------------------------- URL
def test_scenario_is_read_from_the_url():
    at = AppTest.from_file(str(PAGE), default_timeout=TIMEOUT)
    at.query_params.update({"gr_m": "spd", "gr_mode": "paper", "gr_ep": "0.5", "gr_n": "80",
                            "gr_tau": "-3"})
    at.run()
    assert not at.exception
    assert at.radio(key="gr_manifold").value == "spd"
    assert at.radio(key="gr_mode").value == "paper"
    assert at.select_slider(key="gr_eps_p").value == 0.5
    assert at.slider(key="gr_n").value == 80


def test_spd_alias_in_the_url_opens_spd():
    """"spd2" (the value the Fréchet-mean and sensitivity pages used to write) names SPD(2)
    here too; the page writes the one value "spd" back."""
    at = AppTest.from_file(str(PAGE), default_timeout=TIMEOUT)
    at.query_params.update({"gr_m": "spd2"})
    at.run()
    assert not at.exception
    assert at.radio(key="gr_manifold").value == "spd"
    assert at.query_params["gr_m"] in ("spd", ["spd"])
    # The page's SPD(2) demonstration (issue 14): footpoint within 0.1 of I, speed 0.5, noise
    # 0.05, so the responses lie within 0.8 of I; τ is 3.5 noise standard deviations.
    assert at.number_input(key="gr_tau_spd").value == pytest.approx(0.175)
    assert at.number_input(key="gr_taum_spd").value == pytest.approx(0.8)
    assert at.slider(key="gr_n").value == 30


def test_junk_in_the_url_falls_back_to_defaults():
    at = AppTest.from_file(str(PAGE), default_timeout=TIMEOUT)
    at.query_params.update({"gr_m": "torus", "gr_ep": "0.123", "gr_tau": "-3", "gr_n": "x"})
    at.run()
    assert not at.exception
    assert at.radio(key="gr_manifold").value == "sphere"
    assert at.select_slider(key="gr_eps_p").value == 1.0
    assert at.number_input(key="gr_tau_sphere").value == pytest.approx(0.001)  # clamped
    assert at.slider(key="gr_n").value == 20


# --------------------------------------------------------------------------- before release
def test_spd_footpoint_region_stays_within_the_proof():
    """SPD(2) offers the public footpoint region about the ball's centre c·I (the
    demonstration's 0.1 by default); a radius beyond τ_m + τ is refused with the reason and the
    release keeps the proof's support."""

    at = open_page()
    at.radio(key="gr_manifold").set_value("spd").run()
    assert not at.exception and not at.error
    assert at.number_input(key="gr_fr_spd_synthetic").value == 0.1
    assert at.number_input(key="gr_center_spd").value == 1.0
    at.number_input(key="gr_fr_spd_synthetic").set_value(2.0).run()
    (err,) = [e.value for e in at.error]
    assert "exceeds τ_m + τ = 0.975" in err
    gr_open_sampler(at)
    at.checkbox(key="gr_fix_seed").check().run()
    release(at)
    settings = at.session_state["gr_last"]["signature"][0]
    assert settings.footpoint_radius is None
    assert at.session_state["gr_last"]["release"].assumptions["footpoint_support"][
        "value"] == pytest.approx(G.default_tau_m("spd", 3.0) + G.default_tau("spd", 0.1))


def test_cost_is_stated_and_a_session_cap_refuses_overspend():
    """Above the Release button the page states what the ledger will record (3 x 3 joint draws
    at ε = 1 + 2 cost ε = 27). A session cap below that refuses the release before anything is
    drawn, with the accountant's explanation; raising the cap allows it."""
    at = open_page()
    at.number_input(key="gr_nf").set_value(3)
    at.number_input(key="gr_nv").set_value(3).run()
    assert any("Cost of this release: ε = 27" in md.value for md in at.markdown)
    at.sidebar.number_input(key="ledger_cap").set_value(20.0).run()
    assert any("above the cap" in e.value for e in at.error)
    assert at.button(key="gr_release_button").disabled
    at.sidebar.number_input(key="ledger_cap").set_value(30.0).run()
    assert not at.button(key="gr_release_button").disabled
    release(at)
    assert len(at.session_state[LEDGER]) == 1
    # A second release would bring the total to 54 > 30: refused.
    at.number_input(key="gr_nf").set_value(2).run()
    assert at.button(key="gr_release_button").disabled


def test_scenario_exports_as_script_and_notebook():
    at = open_page()
    # made once their section is opened (issue 29: not with the first plot)
    assert not [b for b in at.get("download_button") if "export" in b.key]
    at.session_state["gr_export_open"] = True
    at.run()
    assert not at.exception, at.exception
    keys = [b.key for b in at.get("download_button")]
    assert "gr_export_script" in keys and "gr_export_notebook" in keys


def test_settings_file_downloads_and_loads_back():
    """The sidebar's settings file holds this page's URL settings (no data); loading one back
    starts the page from them, as a shared link would; another page's file is refused."""
    import json

    at = open_page()
    # Built only once opened (ui.session.lazy_expander: the page's first plot comes first).
    assert "settings_download" not in [b.key for b in at.get("download_button")]
    at.session_state["settings_io_open"] = True
    at.run()
    keys = [b.key for b in at.get("download_button")]
    assert "settings_download" in keys
    data = json.dumps({"dpcore_settings": 1, "page": "geodesic_regression",
                       "settings": {"gr_n": "40", "gr_ep": "0.5", "gr_tau": "0.3"}}).encode()
    at.sidebar.file_uploader(key="settings_upload").set_value(
        ("s.json", data, "application/json")).run()
    at.sidebar.button(key="settings_apply").click().run()
    assert not at.exception, at.exception
    assert at.slider(key="gr_n").value == 40
    assert at.select_slider(key="gr_eps_p").value == 0.5
    other = json.dumps({"dpcore_settings": 1, "page": "frechet_mean",
                        "settings": {"fm_eps": "2.0"}}).encode()
    at.session_state["settings_io_open"] = True
    at.run()
    at.sidebar.file_uploader(key="settings_upload").set_value(
        ("o.json", other, "application/json")).run()
    at.sidebar.button(key="settings_apply").click().run()
    assert any("belong to the page 'frechet_mean'" in e.value for e in at.sidebar.error)
    assert at.slider(key="gr_n").value == 40


# --------------------------------------------------------------------------- long work (issue 14.7)
def test_the_work_estimate_is_shown_and_bounds_the_release(monkeypatch):
    """Issue 13 point 3: the estimated work is shown before the release; above the work budget
    the page says so and the Release button is disabled."""
    at = open_page()
    assert any(c.value.startswith("Estimated time: ") for c in at.caption), [
        c.value for c in at.caption]
    assert not at.button(key="gr_release_button").disabled


    monkeypatch.setattr(G, "DEFAULT_WORK_BUDGET", -1.0)
    at.run()
    errors = [e.value for e in at.error]
    assert any("above the work budget" in e for e in errors), errors
    assert at.button(key="gr_release_button").disabled


def test_release_runs_under_a_progress_bar_and_the_button_comes_back(monkeypatch):
    """The release reports to the page's progress bar (the RunProgress is its callback); after
    it the bar and its Cancel button are gone, the Release button is enabled again and the
    ledger holds the release."""

    real, seen = R.make_release, []

    def spy(request, dataset, progress=None):
        seen.append((type(progress).__name__, []))

        def report(fraction):
            seen[-1][1].append(fraction)
            progress(fraction)

        return real(request, dataset, progress=report)

    monkeypatch.setattr(R, "make_release", spy)
    at = release(quick_sampler(open_page()))
    assert len(seen) == 1 and seen[0][0] == "RunProgress"
    fractions = seen[0][1]
    assert fractions and fractions[-1] == 1.0 and fractions == sorted(fractions)
    assert len(at.session_state[LEDGER]) == 1
    assert not at.button(key="gr_release_button").disabled
    assert "gr_release_cancel" not in [b.key for b in at.button]
    assert "MSE, private (mean)" in metric_labels(at)


def test_a_failed_release_says_why_and_records_nothing(monkeypatch):

    def fail(request, dataset, progress=None):
        progress(0.5)
        raise ValueError("the sampler gave up")

    monkeypatch.setattr(R, "make_release", fail)
    at = release(quick_sampler(open_page()))
    errors = [e.value for e in at.error]
    assert any("The release failed: the sampler gave up" in e for e in errors), errors
    assert at.session_state[LEDGER] == []
    assert not at.button(key="gr_release_button").disabled
    at.run()  # the error is shown once
    assert not any("the sampler gave up" in e.value for e in at.error)


def test_a_cancelled_release_is_announced_once():
    """What the Cancel button leaves for the next run (its click itself is tested in the
    browser: tests/browser/test_progress.py)."""
    at = open_page()
    at.session_state["gr_release__cancelled"] = True
    at.run()
    notes = [i.value for i in at.info if "cancelled" in i.value]
    assert notes == ["The release was cancelled: nothing was released or recorded in the "
                     "ledger."]
    at.run()
    assert not any("cancelled" in i.value for i in at.info)


# --------------------------------------------------------------- issue "The first hour"
def test_the_default_release_is_one_geodesic_at_the_cost_the_page_teaches():
    """The page teaches "one geodesic costs ε_p + ε_v"; its default release is that one
    geodesic (ε = 3), and more draws are a choice whose cost is shown before releasing."""
    at = open_page()
    assert at.number_input(key="gr_nf").value == 1 and at.number_input(key="gr_nv").value == 1
    assert any("Cost of this release: ε = 3." in md.value for md in at.markdown), [
        md.value for md in at.markdown if "Cost" in md.value]
    at.number_input(key="gr_nv").set_value(3).run()
    assert any("Cost of this release: ε = 9." in md.value for md in at.markdown)
    assert any("publishing all costs **9**" in c.value for c in at.caption)


def test_the_euclidean_plan_states_the_refined_envelopes_figure():
    """R¹ releases by the refined envelope: the plan above the button does not quote the
    uniform proposals' worst case (1.39e+65 proposals per draw) next to "under a second"."""
    at = open_page()
    at.radio(key="gr_manifold").set_value("euclidean").run()
    assert not at.exception
    (plan,) = [s.value for s in at.success if "exact" in s.value]
    assert "e+65" not in plan and "refined envelope" in plan
    assert any("Estimated time: under a second" in c.value for c in at.caption)


def test_a_cap_message_on_pure_releases_names_no_delta():
    """Every release of the session is pure ε-DP: the refusal states the total without a δ."""
    at = open_page()
    at.sidebar.number_input(key="ledger_cap").set_value(2.0).run()
    (refusal,) = [e.value for e in at.error if "above the cap" in e.value]
    assert "δ" not in refusal and "ε = 3" in refusal


# --------------------------------------------------------------------------- order (issue 29)
def test_the_chart_is_drawn_before_the_settings_widgets(monkeypatch):
    """The page reads every setting from the session state first and sends its chart to the
    browser before the settings column's input widgets (each costs the browser 10-20 ms to
    mount before the first plot); the widgets are drawn afterwards, with the same keys."""
    import ui.figures
    import ui.gr_settings

    order = []

    def recording(name, draw):
        def wrapper(*args, **kwargs):
            order.append(name)
            return draw(*args, **kwargs)
        return wrapper

    monkeypatch.setattr(ui.figures, "show_figure",
                        recording("figure", ui.figures.show_figure))
    for section in ("data_section", "budget_section", "bounds_section"):
        monkeypatch.setattr(ui.gr_settings, section,
                            recording(section, getattr(ui.gr_settings, section)))
    at = open_page()
    # The visit's first run ends at the figure (ui.first_paint); the run after it is whole.
    assert order == ["figure", "figure", "data_section", "budget_section", "bounds_section"]
    # Every widget is still drawn, with its key.
    keys = {w.key for w in (*at.radio, *at.slider, *at.select_slider, *at.number_input)}
    assert {"gr_manifold", "gr_source", "gr_n", "gr_noise_sphere", "gr_seed",
            "gr_budget_input", "gr_eps_p", "gr_eps_v", "gr_scheme", "gr_nf", "gr_nv",
            "gr_mode", "gr_tau_sphere", "gr_lo_synthetic", "gr_hi_synthetic",
            "gr_ms_sphere_synthetic", "gr_fr_sphere_synthetic", "gr_fc_lat",
            "gr_fc_lon"} <= keys


def test_a_changed_setting_takes_effect_in_the_same_run():
    """Settings are read before their widgets are drawn: a value the user changes is in the
    session state when the rerun starts, so the figure, the cost and the plan drawn before the
    widgets use it in that run (no second run needed)."""
    at = open_page()
    at.slider(key="gr_n").set_value(40).run()
    assert not at.exception
    assert any("n = 40" in c.value for c in at.caption)  # the data's description
    assert "Data (n = 40)" in plotly_charts(at)[0].proto.spec  # the figure drawn first
    at.select_slider(key="gr_eps_p").set_value(0.5).run()
    assert any("Cost of this release: ε = 2.5" in m.value for m in at.markdown)
    at.radio(key="gr_budget_input").set_value("total").run()
    at.select_slider(key="gr_total").set_value(5.0).run()
    at.slider(key="gr_share").set_value(40).run()
    assert any("ε_p = 2, ε_v = 3" in c.value for c in at.caption)
    assert any("Cost of this release: ε = 5" in m.value for m in at.markdown)
    # The sampler section (built only while open) and the two-stage design, read first too.
    gr_open_sampler(at)
    at.radio(key="gr_sampler").set_value("mcmc").run()
    assert any("you chose MCMC" in w.value for w in at.warning)
    at.radio(key="gr_sampler").set_value("auto").run()
    at.checkbox(key="gr_two_stage").check().run()
    assert not at.exception
    assert any("Two-stage release" in m.value for m in (*at.success, *at.warning))
    at.radio(key="gr_mode").set_value("paper").run()
    assert any("Paper mode is NOT private" in w.value for w in at.warning)
    assert not any(w.key == "gr_tau_sphere" for w in at.number_input)
