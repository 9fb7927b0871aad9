"""AppTest tests of the "Gaussian DP" page, driven through app.py as a user would.

The page has no file upload (its data are synthetic by design), so there is no upload test;
its one release (a Gaussian-DP mean of synthetic S² data) is tested through the ledger.
"""


import pytest

from dpcore.manifolds import Sphere
from dpcore.mechanisms import RiemannianGaussian
from dpcore.privacy import delta_mu, eps_to_mu, gdp_mu_circle, mu_to_eps
from ui.logic import gaussian_dp as L

from .pages import click_release, open_app_page

TIMEOUT = 180
LEDGER = "privacy_ledger"
#: The page's stateful tabs under the rate (pages/gaussian_dp.py EXPLORE_TABS), key gd_explore.
EXPLORE = ("ε ↔ µ converter", "Gaussian vs Laplace at equal µ on S² (simulation)",
           "What µ means: trade-off curve and privacy profile")


def open_page(**query):
    return open_app_page("gaussian_dp.py", timeout=TIMEOUT, **query)


def metric(at, label):
    return next(m.value for m in at.metric if m.label == label)


def ledger(at):
    return at.session_state[LEDGER] if LEDGER in at.session_state else []


def test_default_run_shows_all_sections():
    at = open_page()
    assert [t.value for t in at.title] == ["Gaussian DP"]
    assert not at.error
    # µ vs σ on opening; the converter's tab is the open one (issue 29: one chart in the
    # first render) ...
    assert [c.key for c in at.get("plotly_chart")] == ["gd_mu_sigma"]
    assert at.number_input(key="gd_conv_eps").value == 1.0
    # ... and each other tab draws its charts once opened: Gaussian vs Laplace, then the
    # trade-off curves and the privacy profile
    at.session_state["gd_explore"] = EXPLORE[1]
    at.run()
    assert not at.exception, at.exception
    assert [c.key for c in at.get("plotly_chart")] == ["gd_mu_sigma", "gd_utility"]
    assert not [n for n in at.number_input if n.key == "gd_conv_eps"]
    at.session_state["gd_explore"] = EXPLORE[2]
    at.run()
    assert not at.exception, at.exception
    assert [c.key for c in at.get("plotly_chart")] == ["gd_mu_sigma", "gd_tradeoff",
                                                       "gd_profile"]
    # The teaching notes are typeset only once their expander is opened.
    assert len(at.latex) == 0
    at.session_state["gd_notes"] = True
    at.run()
    assert len(at.latex) >= 4
    text = "\n".join(m.value for m in at.markdown)
    assert "Assumptions in force" in text
    assert float(metric(at, "µ on S¹ (exact)")) == pytest.approx(gdp_mu_circle(1.0, 1.0),
                                                                 abs=1e-3)
    assert float(metric(at, "µ on R (Δ/σ)")) == pytest.approx(1.0)
    assert ledger(at) == []
    assert at.query_params["gd_mode"] == "sigma"


def test_sigma_and_mu_modes():
    at = open_page()
    at.slider(key="gd_sigma").set_value(2.0).run()
    assert not at.exception, at.exception
    assert float(metric(at, "µ on R (Δ/σ)")) == pytest.approx(0.5)
    assert float(metric(at, "µ on S¹ (exact)")) < 0.5  # the circle is compact
    at.radio(key="gd_mode").set_value("mu").run()
    at.slider(key="gd_mu").set_value(1.5).run()
    assert not at.exception, at.exception
    assert float(metric(at, "µ on S¹ (exact)")) == pytest.approx(1.5, abs=1e-3)
    assert at.query_params["gd_mu"] == "1.5"


def test_settings_are_read_from_the_url():
    at = open_page(gd_sigma="0.5", gd_delta="0.5")
    assert at.slider(key="gd_sigma").value == 0.5
    assert float(metric(at, "µ on R (Δ/σ)")) == pytest.approx(1.0)


def test_converter_and_monte_carlo_settings():
    at = open_page()
    at.number_input(key="gd_conv_eps").set_value(2.0)
    at.number_input(key="gd_conv_k").set_value(9)
    # The settings sections are built once opened (issue 15: the first plot comes first).
    assert not at.select_slider and not [s for s in at.slider if s.key == "gd_sim_reps"]
    at.session_state["gd_mc_open"] = True
    at.session_state["gd_explore"] = EXPLORE[1]  # the simulation's tab ...
    at.run()
    at.session_state["gd_sim_open"] = True  # ... and its settings
    at.run()
    at.select_slider(key="gd_mc_n").set_value(200)
    at.slider(key="gd_sim_reps").set_value(50).run()
    assert not at.exception, at.exception
    # closed again, the page keeps them (in the URL, as a shared link would), and the
    # converter's values while its tab was closed
    at.session_state["gd_mc_open"] = False
    at.session_state["gd_sim_open"] = False
    at.run()
    assert not at.select_slider
    at.session_state["gd_explore"] = EXPLORE[0]
    at.run()
    assert at.query_params["gd_mc_n"] == "200" and at.query_params["gd_sim_reps"] == "50"
    assert at.query_params["gd_conv_eps"] == "2.0" and at.query_params["gd_conv_k"] == "9"
    assert at.number_input(key="gd_conv_eps").value == 2.0
    at.session_state["gd_mc_open"] = True
    at.run()
    assert at.select_slider(key="gd_mc_n").value == 200
    assert float(metric(at, "Equivalent µ")) == pytest.approx(eps_to_mu(2.0), rel=1e-3)
    assert float(metric(at, "µ of 9 releases")) == pytest.approx(3.0)


def test_release_records_a_gdp_entry():
    at = open_page()
    click_release(at, "gd_release")
    assert not at.exception, at.exception
    entries = ledger(at)
    assert len(entries) == 1
    assert entries[0]["page"] == "Gaussian DP"
    assert entries[0]["mechanism"] == "gaussian"
    assert entries[0]["epsilon"] is None
    # the µ of the top controls' σ = Δ = 1 on S²: Monte Carlo estimate + 3 standard errors
    mech = RiemannianGaussian(manifold=Sphere(2), sensitivity=1.0, sigma=1.0)
    assert entries[0]["mu"] == pytest.approx(mech.mu + 3 * mech.mu_standard_error, rel=1e-6)
    assert "Download release" in [b.label for b in at.get("download_button")]
    at.run()
    assert len(ledger(at)) == 1  # no release on a rerun


def test_release_uses_the_top_sigma_and_delta():
    """Issue 14 §9: the release section used a σ and Δ of its own."""
    at = open_page(gd_sigma="0.5", gd_delta="0.4")
    at.slider(key="gd_rel_n").set_value(40).run()
    click_release(at, "gd_release")
    assert float(metric(at, "σ (from the top)")) == pytest.approx(0.5)
    assert float(metric(at, "Sensitivity Δ")) == pytest.approx(0.4, rel=1e-9)
    assert ledger(at)[0]["mu"] > 0
    # moving the top σ makes the shown release stale (it belongs to the old σ)
    at.slider(key="gd_sigma").set_value(0.6).run()
    assert any("settings changed" in i.value for i in at.info)


def test_equal_mu_is_explained_with_its_delta():
    at = open_page()
    mu = gdp_mu_circle(1.0, 1.0)
    eps = mu_to_eps(mu)
    text = next(c.value for c in at.caption if c.value.startswith("Equal µ"))
    assert "weaker promise than pure ε" in text
    assert f"ε = {eps:.3g}" in text and f"δ = {delta_mu(eps, mu):.2g}" in text


def test_accuracy_before_release_follows_sigma():
    at = open_page()
    pred = L.predicted_release_error(L.release_request(10, 1.0, 1.0))  # the page's defaults
    assert metric(at, "Predicted median error") == f"{pred['median_deg']:.3g}°"
    assert metric(at, "95% of releases within") == f"{pred['q95_deg']:.3g}°"
    assert ledger(at) == []  # predicting spends nothing
    at.slider(key="gd_sigma").set_value(0.25).run()
    pred = L.predicted_release_error(L.release_request(10, 0.25, 1.0))
    assert metric(at, "Predicted median error") == f"{pred['median_deg']:.3g}°"
    # the inverse: the largest σ for a 10° median error
    at.number_input(key="gd_target").set_value(10.0).run()
    best = float(metric(at, "Largest σ for this target"))
    assert L.predicted_release_error(L.release_request(10, best, 1.0))["median_deg"] <= 10.0
    assert L.predicted_release_error(L.release_request(10, best * 1.01, 1.0))["median_deg"] > 10.0


def test_tiny_sigma_shows_no_inf_or_nan():
    """Issue 14 §3: at σ = 0.05 the Monte Carlo µ on S² is not resolvable; the page says so
    instead of showing inf."""
    at = open_page(gd_sigma="0.05")
    assert not at.exception
    values = [str(m.value).strip().lower() for m in at.metric]
    assert values and not any(v in ("inf", "nan", "-inf") for v in values)
    assert metric(at, "µ on S² (Monte Carlo)") == "too large"
    # the release (at the top's σ) states why it cannot be made instead of showing inf
    assert any("cannot resolve µ on S²" in w.value for w in at.warning)
    assert not at.get("button") or not any(b.key == "gd_release" for b in at.button)


def test_monte_carlo_settings_fit_the_library_limit():
    """Issue 13: the largest samples x repeats the page offers fits max_mc_samples (5000 x 50
    used to reach the library and fail with a traceback)."""
    from dpcore.settings import get_limits

    at = open_page(gd_mc_n="5000", gd_mc_r="50")
    assert not at.exception
    assert int(at.query_params["gd_mc_r"]) * 5000 <= get_limits().max_mc_samples  # closed
    at.session_state["gd_mc_open"] = True
    at.run()
    repeats = at.slider(key="gd_mc_r")
    assert at.select_slider(key="gd_mc_n").value == 5000
    assert repeats.max * 5000 <= get_limits().max_mc_samples
    assert repeats.value * 5000 <= get_limits().max_mc_samples


# --------------------------------------------------------------------------- work (issue 13/14)
def test_estimated_work_of_the_monte_carlo_and_the_release_is_shown():
    at = open_page()
    lines = [c.value for c in at.caption if c.value.startswith("Estimated work:")]
    table = L.table_work(8, 500, 10)[0].describe().splitlines()[0]
    release = L.release_work(L.release_request(10, 1.0, 1.0))[0]
    assert table in lines and release.describe().splitlines()[0] in lines
    assert "Monte Carlo samples" in table


def test_monte_carlo_settings_above_the_work_budget_are_refused(monkeypatch):
    """A budget between the estimates of the default and the largest Monte Carlo settings:
    at the largest the page refuses the Monte Carlo column (the library's reason) and still
    draws the exact curves."""
    from dpcore.release import work

    low = L.table_work(8, 500, 10)[0].seconds
    high = L.table_work(8, 5000, 40)[0].seconds
    monkeypatch.setattr(work, "DEFAULT_WORK_BUDGET", (low * high) ** 0.5)
    def refusals(at):  # of the Monte Carlo column (the release has an estimate of its own)
        return [e.value for e in at.error
                if "above the work budget" in e.value and "rates" in e.value]

    assert not refusals(open_page())
    at = open_page(gd_mc_n="5000", gd_mc_r="40")
    assert at.query_params["gd_mc_r"] == "40"
    refusal = refusals(at)
    assert refusal and "Monte Carlo samples or repeats" in refusal[0]
    assert [c.key for c in at.get("plotly_chart")] == ["gd_mu_sigma"]  # with its exact curves


def test_a_release_above_the_work_budget_is_refused(monkeypatch):
    """Above the work budget the button is disabled with the library's reason. The per-unit
    costs are pinned: a calibration measured on the machine is measured again before a
    refusal and could fall below the one this test read (it did, in a CI run)."""
    from dpcore.manifolds import Sphere
    from dpcore.release import work

    costs = work.WorkCosts(per_step=1e-4, per_term=3e-8, per_sample=1e-6)
    for manifold in (Sphere(1), Sphere(2)):
        for kind in work.KINDS:  # set by hand: never measured again
            monkeypatch.setitem(work._CACHE, (repr(manifold), kind), costs)
    est = L.release_work(L.release_request(10, 1.0, 1.0))[0]
    monkeypatch.setattr(work, "DEFAULT_WORK_BUDGET", 0.5 * est.seconds)
    at = open_page()
    assert at.button(key="gd_release").disabled
    assert any("above the work budget" in e.value for e in at.error)
    assert ledger(at) == []
