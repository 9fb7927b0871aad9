"""``ui.figures.show_figure``: theme placeholders, text alternatives, and the figure untouched."""

import numpy as np
import plotly.graph_objects as go
import pytest
from streamlit.elements.lib import streamlit_plotly_theme as theme

from dpcore import visualization as V
from dpcore.visualization import colors
from dpcore.visualization._base import TEXT_COLOR, describe_figure
from ui import figures


class Recorder:
    """Stands in for ``st`` or a container: records what ``plotly_chart`` was given."""

    def plotly_chart(self, figure, **kwargs):
        self.figure, self.kwargs = figure, kwargs
        return "element"


def _strings(node):
    if isinstance(node, dict):
        for v in node.values():
            yield from _strings(v)
    elif isinstance(node, (list, tuple)):
        for v in node:
            yield from _strings(v)
    elif isinstance(node, str):
        yield node


def test_placeholders_are_streamlits():
    # Streamlit's chart theme swaps these for the active theme's text and background colours.
    assert figures.THEME_TEXT == theme.GRAY_90
    assert figures.THEME_BACKGROUND == theme.BG_COLOR


def test_themed_replaces_text_and_black_only():
    fig = V.jacobi_figure(1.0, 2.0, which="point", mark=0.5)
    before = fig.to_plotly_json()
    out = figures.themed(fig)
    strings = {s.lower() for s in _strings(before)}
    assert TEXT_COLOR.lower() in strings and colors.BLACK.lower() in strings
    new = {s.lower() for s in _strings(out)}
    assert TEXT_COLOR.lower() not in new and colors.BLACK.lower() not in new
    assert figures.THEME_TEXT in new
    assert colors.VERMILLION.lower() in new  # the palette's hues are kept
    assert fig.to_plotly_json()["layout"] == before["layout"]  # the figure is not changed
    for a, b in zip(before["data"], out["data"], strict=True):
        np.testing.assert_array_equal(a["x"], b["x"])
        np.testing.assert_array_equal(a["y"], b["y"])
    assert go.Figure(out).layout.font.color == figures.THEME_TEXT


def test_show_figure_gives_a_text_alternative():
    fig = V.jacobi_figure(1.0, 2.0, which="point")
    where = Recorder()
    assert figures.show_figure(where, fig, width="stretch", key="k") == "element"
    assert where.kwargs == {"alt": describe_figure(fig), "width": "stretch", "key": "k"}
    figures.show_figure(where, fig, alt="Jacobi field norms")
    assert where.kwargs["alt"] == "Jacobi field norms"


@pytest.mark.parametrize("build", [
    lambda: V.jacobi_figure(1.0, 2.0, which="point", mark=0.5),
    lambda: V.sphere_points_figure(np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0]])),
    lambda: V.ecdf_figure({"a": np.linspace(0, 1, 20), "b": np.linspace(0.5, 2, 30)},
                          log_x=True),
], ids=["jacobi", "sphere-3d", "ecdf-log"])
def test_show_figure_hands_over_what_validation_would_build(build):
    """The figure reaches Streamlit unvalidated (already validated when built; theming swaps
    colours for colours): the JSON Streamlit sends equals that of the validated figure."""
    import json

    import plotly.io as pio

    fig = build()
    where = Recorder()
    figures.show_figure(where, fig)
    assert isinstance(where.figure, go.Figure)
    validated = go.Figure(figures.themed(fig))  # what Streamlit builds from a dict
    # Same content; the key order may differ.
    sent = json.loads(pio.to_json(where.figure, validate=False))
    assert sent == json.loads(pio.to_json(validated, validate=False))
    assert where.figure.layout.font.color == figures.THEME_TEXT


def test_describe_figure_reads_title_axes_and_series():
    fig = go.Figure([go.Scatter(x=[0, 1], y=[1, 2], name="Laplace"),
                     go.Scatter(x=[0, 1], y=[2, 3], name="KNG"),
                     go.Scatter(x=[0], y=[1], name="hidden", showlegend=False)])
    fig.update_layout(title={"text": "Error <i>against</i> n<br>for two mechanisms",
                             "subtitle": {"text": "mean of 50 draws."}},
                      xaxis_title="n", yaxis_title="error")
    assert describe_figure(fig) == ("Chart: Error against n for two mechanisms. mean of 50 draws."
                                    " Horizontal axis: n; vertical axis: error. "
                                    "Series: Laplace, KNG.")


@pytest.mark.parametrize("n, shown", [(3, "a0, a1, a2."), (8, "a0, a1, a2 and 5 more.")])
def test_describe_figure_lists_few_series(n, shown):
    fig = go.Figure([go.Scatter3d(x=[0], y=[0], z=[0], name=f"a{i}") for i in range(n)])
    assert describe_figure(fig, max_series=3) == f"3D chart: Untitled figure. Series: {shown}"


def test_pages_draw_figures_through_show_figure():
    # A direct plotly_chart call would skip the theme colours and the text alternative.
    from ui.registry import PAGES

    direct = [spec.file for spec in PAGES if ".plotly_chart(" in spec.path.read_text()]
    assert not direct, f"pages calling plotly_chart directly (use ui.figures.show_figure): {direct}"
