"""A visit's first run ends at the page's first chart and the page runs again, whole
(``ui.first_paint``): once per visit, on every page that draws a chart on opening, with the
settings of the URL kept across the cut."""

from __future__ import annotations

import types

import pytest
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

import ui.first_paint
from tests.app.pages import open_app_page
from ui.registry import PAGES

#: Pages that end a visit's first run at their chart: every page that draws one on opening.
CUT_PAGES = [p for p in PAGES if p.chart_on_open]


@pytest.fixture
def pauses(monkeypatch):
    """The pauses :func:`ui.first_paint.chart_first` made (no wall time spent)."""
    made = []
    monkeypatch.setattr(ui.first_paint, "time", types.SimpleNamespace(sleep=made.append))
    return made


def last_element_sent():
    """Type of the last element the running script has sent this run (AppTest's runner)."""
    runner = get_script_run_ctx()._enqueue.__self__
    kinds = [m.delta.new_element.WhichOneof("type") for m in runner.forward_msgs()
             if m.WhichOneof("type") == "delta" and m.delta.WhichOneof("type") == "new_element"]
    return kinds[-1] if kinds else None


@pytest.mark.parametrize("spec", CUT_PAGES, ids=lambda p: p.url_path)
def test_the_cut_comes_right_after_the_chart(spec, monkeypatch):
    # Any element sent between the chart and the cut is drawn by the browser in the same
    # batch as the chart, and one whose code is not loaded yet (a slider, a table) delays it
    # (docs/measurements.md, sessions 43-44).
    sent = []
    monkeypatch.setattr(ui.first_paint, "time",
                        types.SimpleNamespace(sleep=lambda s: sent.append(last_element_sent())))
    at = open_app_page(spec.file)
    assert not at.exception, at.exception
    assert sent == ["plotly_chart"]


@pytest.mark.parametrize("spec", CUT_PAGES, ids=lambda p: p.url_path)
def test_a_visit_is_cut_once_at_its_chart_then_drawn_whole(spec, pauses):
    at = open_app_page(spec.file)
    assert pauses == [ui.first_paint.PAUSE_S]
    # The run after the cut is the whole page: its chart and its settings widgets.
    assert at.get("plotly_chart"), "no chart"
    widgets = len(at.slider) + len(at.select_slider) + len(at.number_input) + len(at.selectbox)
    assert widgets > 0, "the settings were not drawn after the cut"
    assert at.session_state[ui.first_paint.FIRST_RUN_KEY] is False
    at.run()  # a later run of the same visit (as after a widget change) is not cut
    assert not at.exception, at.exception
    assert pauses == [ui.first_paint.PAUSE_S]


def test_switching_away_and_back_is_a_new_visit(pauses):
    at = open_app_page("frechet_mean.py")
    at.switch_page("pages/home.py").run()
    assert pauses == [ui.first_paint.PAUSE_S]  # Home draws no chart: no cut
    at.switch_page("pages/frechet_mean.py").run()
    assert not at.exception, at.exception
    assert pauses == [ui.first_paint.PAUSE_S] * 2


def test_the_url_settings_survive_the_cut(pauses):
    # The first run reads the URL's settings before the chart; the run after the cut must
    # show the same values in the widgets and keep them in the URL.
    at = open_app_page("geodesic_regression.py", gr_n="100", gr_ep="2.0")
    assert pauses == [ui.first_paint.PAUSE_S]
    assert at.slider(key="gr_n").value == 100
    assert at.select_slider(key="gr_eps_p").value == 2.0
    assert at.query_params["gr_n"] == "100"
    at = open_app_page("frechet_mean.py", fm_eps="5.0", fm_n="200")
    assert at.session_state["fm_eps"] == 5.0 and at.session_state["fm_n"] == 200
    assert at.query_params["fm_eps"] == "5.0"


def test_outside_the_app_nothing_is_cut(pauses):
    # A page run without app.py's visit() (a bare script run) never ends early.
    from streamlit.testing.v1 import AppTest

    page = next(p for p in PAGES if p.url_path == "frechet_mean")
    at = AppTest.from_file(str(page.path), default_timeout=120).run()
    assert not at.exception, at.exception
    assert pauses == []
