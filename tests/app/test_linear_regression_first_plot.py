"""The Linear regression page sends its figure before its settings widgets (issue 29: each
input widget drawn before the chart delays it in the browser): only the file's mapping (the
shared upload widget, which gives the data) comes first. The figure, drawn before the widgets,
follows a change of them in the same rerun, and shows a release once one is kept."""

import json

import pytest

from .pages import click_release, open_app_page

TIMEOUT = 180
INPUTS = {"slider", "select_slider", "number_input", "radio", "checkbox", "selectbox",
          "multiselect", "button", "text_input", "file_uploader", "toggle", "data_editor"}


def figure(at):
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    return [t.get("name") for t in spec["data"]], spec["layout"]["title"]["text"]


def widgets_before_chart(sent):
    """The ids of the input widgets sent before the figure."""
    types = [t for t, _ in sent]
    first = types.index("plotly_chart")
    assert sent[first][1].endswith("lr_figure")
    return [wid for t, wid in sent[:first] if t in INPUTS]


@pytest.mark.parametrize("source", ["example", "wine"])
def test_only_the_mapping_is_sent_before_the_figure(sent, source):
    at = open_app_page("linear_regression.py", timeout=TIMEOUT, lr_src=source)
    sent.clear()
    at.run()
    assert not at.exception, at.exception
    before = widgets_before_chart(sent)
    assert before and all("lr_map_" in wid for wid in before), before
    # ... and the source's widgets are still drawn (at the top of the data box), as before.
    assert at.radio(key="lr_src").value == source
    if source == "example":
        assert at.slider(key="lr_n").value == 100 and at.number_input(key="lr_seed").value == 0


def test_a_changed_setting_reaches_the_figure_in_the_same_rerun():
    at = open_app_page("linear_regression.py", timeout=TIMEOUT)
    names, _ = figure(at)
    assert "Data (n = 100)" in names
    at.slider(key="lr_n").set_value(60).run()
    assert not at.exception, at.exception
    names, title = figure(at)
    assert "Data (n = 60)" in names and title.startswith("Least-squares lines")
    at.radio(key="lr_src").set_value("wine").run()
    assert not at.exception, at.exception
    assert not any(s.key == "lr_n" for s in at.slider)
    assert "Data (n = 1599)" in figure(at)[0]


def test_a_kept_release_is_drawn_and_goes_stale():
    at = open_app_page("linear_regression.py", timeout=TIMEOUT)
    click_release(at, "lr_release")
    names, title = figure(at)
    assert "dpcore private geodesic regression" in names
    assert title.startswith("Least-squares and private lines at ε = 2")
    assert len(at.get("plotly_chart")) == 1
    # another ε: the kept release is not the current one, the figure drops its lines
    at.select_slider(key="lr_eps").set_value(1.0).run()
    assert not at.exception, at.exception
    names, title = figure(at)
    assert "dpcore private geodesic regression" not in names
    assert title.startswith("Least-squares lines")
    # back to its ε: the figure shows it again, in the same rerun
    at.select_slider(key="lr_eps").set_value(2.0).run()
    assert "dpcore private geodesic regression" in figure(at)[0]
