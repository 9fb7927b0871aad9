"""Plotly figures of manifold data, private releases and utility studies.

Every builder is a pure function from numpy arrays (and simple options) to a
:class:`plotly.graph_objects.Figure` with a title, labelled axes, a legend and the
``plotly_white`` template. The package needs plotly and nothing of the dashboard: the Streamlit
pages hand these figures to ``st.plotly_chart``, the reproduction report
(:mod:`dpcore.experiments.report`) writes them to HTML, and a notebook can show them directly.
Manifold operations come from :mod:`dpcore.manifolds`; the only geometry done here is what
drawing needs (a sphere mesh, an ellipse outline, (a, b, c) coordinates of 2x2 matrices).

Modules, one per space plus generic charts:

* :mod:`.sphere` -- S²: geodesic regression, clouds of private means;
* :mod:`.spd` -- SPD(2): matrices as ellipses along the covariate, the cone of ``(a, b, c)``;
* :mod:`.kendall` -- planar shapes, one panel per covariate value;
* :mod:`.euclidean` -- linear regression in R^d, one panel per coordinate;
* :mod:`.charts` -- lines with error bands, curves, heatmaps, histograms, ECDFs;
* :mod:`.frechet` -- Fréchet-mean mechanism comparisons and clouds of private means;
* :mod:`.privacy` -- Gaussian DP: µ against σ, trade-off curves, privacy profiles;
* :mod:`.risk` -- disclosure risk: what an attacker can conclude about one person, against ε
  or µ;
* :mod:`.sensitivity` -- sensitivity-ratio histograms, Jacobi-field growth;
* :mod:`.linear` -- linear regression with true, non-private and private lines;
* :mod:`.regression` -- one geodesic regression on any supported space (picks the view);
* :mod:`.budget` -- budget-split studies: unequal and equal splits, the budget grid;
* :mod:`.studies` -- figures of the paper-reproduction studies (sensitivity ratios, Wine);
* :mod:`.geometry` -- points along a geodesic, for drawing it;
* :mod:`.colors` -- the colour-blind-safe Okabe–Ito palette and the role of each colour: data
  grey, the non-private estimate black, the data-generating truth dark blue, private draws
  Okabe–Ito hues (viridis beyond five draws).
"""

from . import colors
from .budget import (
    budget_heatmap_figure,
    equal_split_figure,
    log_mse_summary,
    replicate_note,
    unequal_split_figure,
)
from .charts import (
    band_figure,
    curves_figure,
    ecdf_figure,
    heatmap_figure,
    histogram_figure,
    mean_and_se,
)
from .euclidean import euclidean_regression_figure
from .frechet import (
    MECHANISM_LABELS,
    frechet_error_figure,
    frechet_left_manifold_figure,
    frechet_sensitivity_figure,
    spd_mean_clouds_cone_figure,
    spd_mean_ellipses_figure,
    tangent_clouds_figure,
)
from .geometry import geodesic_curve
from .kendall import kendall_draws_figure, kendall_shapes_figure
from .linear import linear_regression_figure
from .privacy import (
    gaussian_utility_figure,
    mu_sigma_figure,
    privacy_profile_figure,
    tradeoff_figure,
)
from .regression import has_regression_figure, regression_figures
from .risk import disclosure_risk_figure
from .sensitivity import jacobi_figure, jacobi_growth, ratio_histogram
from .spd import ellipse_xy, spd_abc, spd_cone_figure, spd_ellipses_figure
from .sphere import (
    azimuthal_equidistant,
    map_frame,
    sphere_mesh,
    sphere_points_figure,
    sphere_regression_figure,
    sphere_regression_map_figure,
)
from .studies import sensitivity_ratios_figure, wine_fits_figure

__all__ = [
    "MECHANISM_LABELS",
    "band_figure",
    "budget_heatmap_figure",
    "equal_split_figure",
    "has_regression_figure",
    "log_mse_summary",
    "regression_figures",
    "replicate_note",
    "unequal_split_figure",
    "frechet_error_figure",
    "frechet_left_manifold_figure",
    "frechet_sensitivity_figure",
    "gaussian_utility_figure",
    "jacobi_figure",
    "jacobi_growth",
    "linear_regression_figure",
    "mu_sigma_figure",
    "privacy_profile_figure",
    "ratio_histogram",
    "spd_mean_clouds_cone_figure",
    "spd_mean_ellipses_figure",
    "tangent_clouds_figure",
    "tradeoff_figure",
    "disclosure_risk_figure",
    "colors",
    "curves_figure",
    "ecdf_figure",
    "ellipse_xy",
    "euclidean_regression_figure",
    "geodesic_curve",
    "heatmap_figure",
    "histogram_figure",
    "kendall_draws_figure",
    "kendall_shapes_figure",
    "mean_and_se",
    "sensitivity_ratios_figure",
    "spd_abc",
    "spd_cone_figure",
    "spd_ellipses_figure",
    "sphere_mesh",
    "sphere_points_figure",
    "sphere_regression_figure",
    "sphere_regression_map_figure",
    "azimuthal_equidistant",
    "map_frame",
    "wine_fits_figure",
]
