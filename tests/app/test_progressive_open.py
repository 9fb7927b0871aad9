"""Progressive opening (``ui.session.after_first_chart``): a page's first run in a session ends
at its first chart, the next run draws the whole page, and nothing else changes.

The browser's side (the fragment timer that asks for the next run once the chart is drawn) is
covered by ``tests/browser/test_pages_in_browser.py``; here AppTest stands in for the browser:
its next ``run()`` is the run the timer asks for (``st.rerun`` of the whole app).
"""

from __future__ import annotations

import pytest

from ui.session import (
    CAP_KEY,
    CONTINUATION_KEY,
    OPENING_RUN_KEY,
    PROGRESSIVE_ENV,
    RESTORE_KEY,
    RESTORE_NEXT_KEY,
    progressive_open_enabled,
)

from .pages import open_app_page

TIMEOUT = 120
#: Pages that draw a chart on their first run, with a heading drawn only below that chart.
BELOW_THE_CHART = {
    "frechet_mean.py": "Release one private mean",
    "gaussian_dp.py": "ε ↔ µ converter",
    "sensitivity.py": "Why curvature matters: Jacobi fields",
    "linear_regression.py": "Private release",
}
WIDGETS = ("number_input", "slider", "select_slider", "selectbox", "radio", "checkbox",
           "text_input", "multiselect", "button")


def headings(at):
    return [e.value for e in (*at.main.title, *at.main.header, *at.main.subheader)]


def in_order(part, whole):
    """``part`` is ``whole`` with some items left out."""
    rest = iter(whole)
    return all(any(x == y for y in rest) for x in part)


def widget_keys(at):
    return sorted(str(w.key) for kind in WIDGETS for w in at.get(kind))


def ledger_drawn(at):
    """The sidebar's privacy ledger (drawn by app.py after the page) is there."""
    return CAP_KEY in [w.key for w in at.sidebar.number_input]


@pytest.fixture
def progressive(monkeypatch):
    monkeypatch.setenv(PROGRESSIVE_ENV, "1")


def test_the_switch_reads_the_environment(monkeypatch):
    monkeypatch.delenv(PROGRESSIVE_ENV, raising=False)
    assert not progressive_open_enabled()  # AppTest and `streamlit run`: whole pages
    monkeypatch.setenv(PROGRESSIVE_ENV, "1")
    assert progressive_open_enabled()
    monkeypatch.setenv(PROGRESSIVE_ENV, "0")
    assert not progressive_open_enabled()


@pytest.mark.parametrize("filename", sorted(BELOW_THE_CHART))
def test_first_run_ends_at_the_first_chart_and_the_next_draws_the_whole_page(
        filename, monkeypatch):
    monkeypatch.setenv(PROGRESSIVE_ENV, "0")
    reference = open_app_page(filename, timeout=TIMEOUT)
    assert BELOW_THE_CHART[filename] in headings(reference)

    monkeypatch.setenv(PROGRESSIVE_ENV, "1")
    at = open_app_page(filename, timeout=TIMEOUT)
    # Opening run: up to and including the first chart, nothing after it (the sidebar's
    # ledger, drawn after the page, included).
    assert len(at.get("plotly_chart")) == 1
    assert BELOW_THE_CHART[filename] not in headings(at)
    assert in_order(headings(at), headings(reference))
    assert not ledger_drawn(at)
    assert at.session_state[OPENING_RUN_KEY] is False  # acted once
    assert at.session_state[CONTINUATION_KEY] is True  # one more run asked for

    # The run the browser asks for: the whole page, as drawn without progressive opening.
    at.run()
    assert not at.exception
    assert headings(at) == headings(reference)
    assert widget_keys(at) == widget_keys(reference)
    assert len(at.get("plotly_chart")) == len(reference.get("plotly_chart"))
    assert ledger_drawn(at)
    assert at.session_state[CONTINUATION_KEY] is False  # a late timer tick does nothing

    # Every later run draws the whole page at once.
    at.run()
    assert headings(at) == headings(reference)


def test_a_page_without_a_chart_on_open_is_drawn_whole(progressive):
    at = open_app_page("home.py", timeout=TIMEOUT)
    assert not at.get("plotly_chart")
    assert ledger_drawn(at)


def test_each_page_opens_progressively_once_per_session(progressive):
    at = open_app_page("sensitivity.py", timeout=TIMEOUT)
    assert len(at.get("plotly_chart")) == 1
    at.run()
    full = len(at.get("plotly_chart"))
    assert full > 1
    # Another page's first run in the same session ends at its chart too ...
    at.switch_page("pages/gaussian_dp.py").run()
    assert len(at.get("plotly_chart")) == 1
    # ... and coming back draws the first page whole at once.
    at.switch_page("pages/sensitivity.py").run()
    assert len(at.get("plotly_chart")) == full


def test_widget_values_set_in_the_opening_run_survive_it(progressive):
    """A value from the URL reaches the page's first run and stays in the next."""
    at = open_app_page("frechet_mean.py", timeout=TIMEOUT, fm_eps="2.0")
    assert len(at.get("plotly_chart")) == 1
    at.run()
    assert at.select_slider(key="fm_eps").value == pytest.approx(2.0)


def main_widget_keys(at):
    return sorted(str(w.key) for kind in WIDGETS for w in at.main.get(kind))


def chart_specs(at):
    return [c.proto.spec for c in at.get("plotly_chart")]


#: Pages whose settings come before their figure in the script: the heading of their settings,
#: a setting (widget kind, key) and URL queries to open them with.
SETTINGS = {"geodesic_regression.py": ("1 · Manifold and data", ("select_slider", "gr_eps_p")),
            "frechet_mean.py": ("Data and budget", ("select_slider", "fm_eps")),
            "gaussian_dp.py": ("Rate and sensitivity", ("slider", "gd_delta"))}
SETTINGS_FIRST = [
    ("geodesic_regression.py", {}),
    ("geodesic_regression.py", {"gr_m": "spd", "gr_n": "35", "gr_ep": "2.0"}),
    ("geodesic_regression.py", {"gr_m": "kendall", "gr_src": "example"}),
    ("frechet_mean.py", {}),
    ("frechet_mean.py", {"fm_manifold": "spd", "fm_n": "80", "fm_eps": "2.0"}),
    ("frechet_mean.py", {"fm_source": "cities"}),
    ("gaussian_dp.py", {}),
    ("gaussian_dp.py", {"gd_mode": "mu", "gd_mu": "2.0", "gd_delta": "0.5", "gd_target": "20"}),
]


@pytest.mark.parametrize(("filename", "query"), SETTINGS_FIRST)
def test_a_page_draws_its_figure_before_its_settings(filename, query, monkeypatch):
    """Its settings come before its figure in the script: the opening run reads them from the
    session without drawing them (``ui.session.ValuesOnly``) and draws the figure the whole
    page would draw, from the same values; the next run draws the whole page."""
    heading, (kind, key) = SETTINGS[filename]
    monkeypatch.setenv(PROGRESSIVE_ENV, "0")
    reference = open_app_page(filename, timeout=TIMEOUT, **query)
    assert heading in headings(reference)

    monkeypatch.setenv(PROGRESSIVE_ENV, "1")
    at = open_app_page(filename, timeout=TIMEOUT, **query)
    assert not at.exception
    assert len(at.get("plotly_chart")) == 1
    assert chart_specs(at) == chart_specs(reference)[:1]
    assert heading not in headings(at)  # no settings drawn
    # Before the chart only what belongs to the figure: the Kendall panels' covariate range,
    # the number of private means of Fréchet mean's preview.
    assert set(main_widget_keys(at)) <= {"gr_kx", "gr_kpanels", "fm_draws"}
    assert not ledger_drawn(at)
    assert at.session_state[CONTINUATION_KEY] is True

    at.session_state[RESTORE_NEXT_KEY] = True  # what the continuation sets before its rerun
    at.run()  # the run the browser asks for
    assert not at.exception
    assert headings(at) == headings(reference)
    assert widget_keys(at) == widget_keys(reference)
    assert chart_specs(at) == chart_specs(reference)
    assert ledger_drawn(at)
    for name in ("gr_n", "gr_eps_p", "gr_manifold", "fm_n", "fm_eps", "fm_manifold", "gd_mode",
                 "gd_delta", "gd_sigma", "gd_mu", "gd_target", "gd_target_q"):
        if name in reference.session_state:
            assert at.session_state[name] == reference.session_state[name]
    # The widgets the browser builds in this run come with the values held (set_value), not
    # at their defaults.
    assert getattr(at, kind)(key=key).proto.set_value
    at.run()  # no later run sends them again
    assert not (RESTORE_KEY in at.session_state and at.session_state[RESTORE_KEY])
    assert widget_keys(at) == widget_keys(reference)


@pytest.mark.parametrize("query", [{"gr_src": "upload"}, {"gr_src": "rats"},
                                   {"gr_lo": "1", "gr_hi": "0"}])
def test_geodesic_regression_without_a_figure_opens_whole(query, progressive):
    """No file yet, the rat skulls on the wrong manifold, a range with low > high: no figure to
    draw first, so the opening run hands over to a whole run at once (``open_whole``)."""
    at = open_app_page("geodesic_regression.py", timeout=TIMEOUT, **query)
    assert not at.exception
    assert not at.get("plotly_chart")
    assert "1 · Manifold and data" in headings(at)
    assert ledger_drawn(at)
    assert at.session_state[CONTINUATION_KEY] is False
    assert at.session_state[OPENING_RUN_KEY] is False


def test_the_run_asked_for_sends_the_settings_as_set_by_the_session(progressive):
    """The continuation marks its run (``RESTORE_KEY``): every page setting is then sent with
    its value set through the session state, which the browser applies even to a widget it
    built anew (under load it built them at their defaults, a number field's minimum; the
    browser test ``test_progressive_pages_keep_their_settings_and_release_under_load``). The
    mark lasts one run."""
    at = open_app_page("geodesic_regression.py", timeout=TIMEOUT, gr_n="35")
    at.session_state[RESTORE_NEXT_KEY] = True  # what the continuation sets before its rerun
    at.run()
    assert not at.exception
    n = at.slider(key="gr_n")
    assert n.value == 35 and n.proto.set_value
    assert at.number_input(key="gr_seed").proto.set_value
    assert at.select_slider(key="gr_eps_p").proto.set_value
    assert not at.session_state[RESTORE_KEY]  # cleared at the end of the run (end_page_run)
    at.run()  # a later run: values as the browser holds them, nothing re-sent
    assert at.slider(key="gr_n").value == 35 and not at.slider(key="gr_n").proto.set_value
