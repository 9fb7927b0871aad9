"""The dashboard's figure builders: a re-export of :mod:`dpcore.visualization`.

The builders live in the library (``dpcore.visualization``, plotly only) so that the library's
reproduction report can draw them without importing the dashboard. This module keeps the
dashboard's import path ``ui.figures`` working; new code may import from
``dpcore.visualization`` directly.
"""

from __future__ import annotations

from dpcore.visualization import (
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
)

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
