"""AppTest tests of the "Sensitivity" page, driven through app.py as a user would.

The page works on synthetic adjacent data sets only (paper 002 app. G protocol) and releases
nothing, so it has no upload and no Release button: the tests check the default run, widget
changes, the URL round trip and the computations behind the figures.
"""

import math

import pytest

from .pages import open_app_page

TIMEOUT = 180


def open_page(**query):
    return open_app_page("sensitivity.py", timeout=TIMEOUT, **query)


def summary(at):
    """The summary table (a static st.table, no data grid: issue 15's first plot)."""
    assert not at.dataframe
    return at.table[0].value


def test_default_run_shows_histograms_and_jacobi_fields():
    at = open_page()
    assert [t.value for t in at.title] == ["Sensitivity"]
    assert not at.error and not at.warning
    assert len(at.get("plotly_chart")) == 4
    table = summary(at)
    assert list(table["n"]) == [20, 50, 100]
    assert (table["bound holds"] == "yes").all()
    assert (table["smallest ratio Δ_p"] >= 1).all() and (table["smallest ratio Δ_v"] >= 1).all()
    text = "\n".join(m.value for m in at.markdown)
    assert "Assumptions in force" in text and "Jacobi field" in text
    assert at.query_params["se_manifold"] == "sphere"
    assert "privacy_ledger" not in at.session_state or not at.session_state["privacy_ledger"]


@pytest.mark.parametrize("manifold", ["spd", "kendall"])
def test_other_manifolds(manifold):
    at = open_page()
    at.selectbox(key="se_manifold").set_value(manifold)
    at.multiselect(key="se_ns").set_value([20])
    at.slider(key="se_pairs").set_value(5)
    at.toggle(key="se_log").set_value(True).run()
    assert not at.exception, at.exception
    table = summary(at)
    assert list(table["n"]) == [20]
    assert (table["bound holds"] == "yes").all()
    assert at.query_params["se_manifold"] == manifold
    assert at.query_params["se_log"] == "True"


def test_curvature_sliders_update_the_factors():
    at = open_page()
    at.slider(key="se_kappa").set_value(1.0)
    at.slider(key="se_tau_m").set_value(1.0)
    at.slider(key="se_tau").set_value(0.5).run()
    assert not at.exception, at.exception
    c = 1.5  # sqrt(1) * (1.0 + 0.5)
    latex = "\n".join(el.value for el in at.latex)
    assert f"{math.cosh(2 * c):.4g}" in latex
    assert f"{math.sinh(2 * c) / (2 * c):.4g}" in latex


def test_settings_are_read_from_the_url():
    at = open_page(se_manifold="kendall", se_ns="20", se_pairs="5")
    assert at.selectbox(key="se_manifold").value == "kendall"
    assert list(summary(at)["n"]) == [20]


def test_older_spd2_link_opens_spd():
    """Links written before the manifold keys were unified ("spd2") still work."""
    at = open_page(se_manifold="spd2", se_ns="20", se_pairs="5")
    assert not at.exception, at.exception
    assert at.selectbox(key="se_manifold").value == "spd"
    assert at.query_params["se_manifold"] == "spd"
    assert "κ_l = -0.5" in "\n".join(m.value for m in at.markdown)


def test_empty_sample_size_choice_is_handled():
    at = open_page()
    at.multiselect(key="se_ns").set_value([]).run()
    assert not at.exception
    assert any("at least one sample size" in i.value for i in at.info)


def test_a_link_with_more_sample_sizes_than_the_widget_holds_keeps_the_first_four():
    """The multiselect holds at most four sizes (a fifth from a link raised an exception);
    repeated sizes count once."""
    at = open_page(se_ns="10,20,20,50,100,200", se_pairs="5")
    assert not at.exception, at.exception
    assert at.multiselect(key="se_ns").value == [10, 20, 50, 100]
    assert list(summary(at)["n"]) == [10, 20, 50, 100]
    assert at.query_params["se_ns"] == "10,20,50,100"


def test_the_histograms_drawn_before_the_settings_follow_them_in_the_same_run():
    """issue 29: the histograms are drawn before the study's widgets (so the browser draws them
    first), from the values those widgets hold; a change reaches them in the run it causes."""
    at = open_page(se_ns="20", se_pairs="5")
    specs = [c.proto.spec for c in at.get("plotly_chart")]
    at.toggle(key="se_log").set_value(True).run()
    assert not at.exception, at.exception
    logged = [c.proto.spec for c in at.get("plotly_chart")]
    assert logged[:2] != specs[:2] and logged[2:] == specs[2:]
    assert list(summary(at)["n"]) == [20]


def test_teaching_notes_are_typeset_once_opened():
    """The formulas are in a section built only while open (no KaTeX before the first plot)."""
    at = open_page(se_ns="20", se_pairs="5")
    latex = [el.value for el in at.latex]
    assert not any("cosh(2c)" in v and "kappa_l" in v for v in latex)
    at.session_state["se_notes"] = True
    at.run()
    assert not at.exception, at.exception
    text = "\n".join(el.value for el in at.latex)
    assert r"\kappa_l \ge 0" in text and r"\kappa_l < 0" in text
    assert any("Geodesic regression fits" in m.value for m in at.markdown)


def test_the_settings_summary_beside_their_popover_follows_the_widgets():
    """issue 29: the study's widgets sit in a popover (the browser builds them only when it is
    opened); the line beside it says what they hold, in the run a change causes."""
    at = open_page(se_ns="20", se_pairs="5")
    assert any("sample sizes n = 20, 5 adjacent pairs per n, linear" in m.value
               for m in at.markdown)
    at.multiselect(key="se_ns").set_value([20, 50])
    at.toggle(key="se_log").set_value(True).run()
    assert not at.exception, at.exception
    assert any("sample sizes n = 20, 50, 5 adjacent pairs per n, log₁₀" in m.value
               for m in at.markdown)
