"""The dashboard's figure builders (a re-export of :mod:`dpcore.visualization`) and
:func:`show_figure`, the one way a page draws a figure.

The builders live in the library (``dpcore.visualization``, plotly only) so that the library's
reproduction report can draw them without importing the dashboard. This module keeps the
dashboard's import path ``ui.figures`` working; new code may import from
``dpcore.visualization`` directly.

Light and dark theme: the library's figures are drawn for a white page (``plotly_white``, dark
text, the non-private estimate in black). :func:`show_figure` hands them to Streamlit's chart
theme (the default theme of ``st.plotly_chart``), which sets the background, grid and font
colours of the active theme in the browser; the figure's own text colour and its black
lines are replaced by Streamlit's placeholder for the theme's text colour, so they read as dark
on light and light on dark in the theme a chart is drawn in (a theme read on the server through
``st.context.theme`` is unknown on a session's first run and stale after a switch). Not yet
right: after a *live* switch from light to dark, Chromium kept the charts' tick labels and
legend text in the light theme's colour (rgb(38, 39, 48) on the dark background, about 1.3:1;
measured 2026-11-29). The accessibility test checks each theme after such a switch with axe,
which does not read text inside charts.
"""

from __future__ import annotations

from dpcore.visualization import (
    band_figure,
    colors,
    curves_figure,
    ecdf_figure,
    ellipse_xy,
    euclidean_regression_figure,
    geodesic_curve,
    heatmap_figure,
    histogram_figure,
    kendall_shapes_figure,
    mean_and_se,
    spd_abc,
    spd_cone_figure,
    spd_ellipses_figure,
    sphere_mesh,
    sphere_points_figure,
    sphere_regression_figure,
)

# Layout constants and the shared layout helpers, for dashboard code that adds to a figure.
from dpcore.visualization._base import (  # noqa: F401
    EYE_DISTANCE,
    FONT_SIZE,
    HEIGHT_2D,
    HEIGHT_3D,
    MAX_LEGEND_DRAWS,
    SPHERE_LIFT,
    TEXT_COLOR,
    TITLE_SIZE,
    _array,
    _axis_type,
    _draw_styles,
    _finish,
    _polyline,
    describe_figure,
)

#: A colour that Streamlit's chart theme replaces, anywhere in a figure, by the text colour of the
#: active theme in the browser (``GRAY_90`` of Streamlit's plotly template module, the colour of
#: table text there). ``tests/ui/test_figures_theme.py`` checks the constant and
#: ``tests/browser/test_accessibility.py`` the colours drawn in both themes. Outside Streamlit it
#: is a near-black navy.
THEME_TEXT = "#000037"
#: Placeholder that Streamlit replaces by the active theme's background colour (``BG_COLOR``).
THEME_BACKGROUND = "#000038"
#: Figure colours meant as "the text colour on a white page", and their themed replacements.
_THEMED = {TEXT_COLOR.lower(): THEME_TEXT, colors.BLACK.lower(): THEME_TEXT,
           "rgba(255, 255, 255, 0.85)": THEME_BACKGROUND}


def themed(fig):
    """``fig`` as a plotly JSON dict whose text colour and black lines follow the theme.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure

    Returns
    -------
    dict
        The figure's ``to_plotly_json()`` with every colour of :data:`_THEMED` replaced (arrays of
        data are left as they are); ``fig`` is not changed.
    """
    return _replace_colors(fig.to_plotly_json())


def _replace_colors(node):
    if isinstance(node, dict):
        return {k: _replace_colors(v) for k, v in node.items()}
    if isinstance(node, (list, tuple)):
        return [_replace_colors(v) for v in node]
    if isinstance(node, str):
        return _THEMED.get(node.lower(), node)
    return node


def frame_key(frame):
    """What ``st.cache_data`` knows a data frame by (``hash_funcs={pd.DataFrame: frame_key}``):
    its columns, dtypes, index and every value. (Streamlit's own hash of a frame of 100,000
    rows or more reads a sample of its rows.)"""
    import pandas as pd

    return (list(map(str, frame.columns)), list(map(str, frame.dtypes)),
            pd.util.hash_pandas_object(frame, index=True).to_numpy().tobytes())


def show_figure(where, fig, *, alt=None, **kwargs):
    """Draw ``fig`` with ``where.plotly_chart``, readable in both themes and with a text
    alternative.

    Parameters
    ----------
    where : module or DeltaGenerator
        ``st`` or a container (a column, a tab): anything with ``plotly_chart``.
    fig : plotly.graph_objects.Figure
    alt : str, optional
        Description for screen readers (``st.plotly_chart(alt=...)``, rendered as the chart's
        ``aria-label``); by default :func:`describe_figure` (title, axes, series).
    **kwargs
        Passed on to ``plotly_chart`` (``width``, ``key``, ...).

    Returns
    -------
    The value of ``plotly_chart``.
    """
    import plotly.graph_objects as go

    # ``fig`` was validated when it was built and theming swaps colours for colours, so the
    # figure is handed over unvalidated: Streamlit validates a dict again (about 10 ms a figure,
    # on the way to a page's first plot) but takes a Figure as it is.
    ready = go.Figure(themed(fig), _validate=False)
    return where.plotly_chart(ready, alt=alt or describe_figure(fig), **kwargs)


__all__ = [
    "band_figure",
    "curves_figure",
    "ellipse_xy",
    "euclidean_regression_figure",
    "geodesic_curve",
    "heatmap_figure",
    "ecdf_figure",
    "histogram_figure",
    "kendall_shapes_figure",
    "mean_and_se",
    "spd_abc",
    "spd_cone_figure",
    "spd_ellipses_figure",
    "sphere_mesh",
    "sphere_points_figure",
    "sphere_regression_figure",
]
