"""Shared building blocks of the dashboard pages: plotly figure builders and colours.

``ui.figures`` and ``ui.colors`` re-export the library's :mod:`dpcore.visualization` (pure
functions from numpy arrays to ``plotly.graph_objects.Figure``) and its colour-blind-safe
palette. Importing ``ui``, ``ui.figures`` or ``ui.colors`` does not import Streamlit, so
figures can be built and tested without a running app.
"""

from .figures import (
    band_figure,
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

__all__ = [
    "band_figure",
    "curves_figure",
    "ecdf_figure",
    "ellipse_xy",
    "euclidean_regression_figure",
    "geodesic_curve",
    "heatmap_figure",
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
