"""Experiments that regenerate the papers' figures as tidy DataFrames.

* :func:`budget_sweep` -- utility of private geodesic regression across splits of the privacy
  budget between footpoint and shooting vector and across sample sizes (paper 002 §4).
* :func:`release_mse`, :func:`parameter_errors` -- utility measures of one release.
"""

from .budget import (
    COLUMNS,
    PAPER_TOTAL,
    SPLITS,
    budget_pairs,
    budget_sweep,
    default_eps_p_grid,
)
from .metrics import geodesic_predictions, parameter_errors, release_covariate_range, release_mse
from .studies import (
    frechet_mean_study,
    gdp_mu_curve,
    linear_regression_comparison,
    noise_spread_study,
    sensitivity_ratios,
)

__all__ = [
    "COLUMNS",
    "PAPER_TOTAL",
    "SPLITS",
    "budget_pairs",
    "budget_sweep",
    "default_eps_p_grid",
    "frechet_mean_study",
    "gdp_mu_curve",
    "linear_regression_comparison",
    "noise_spread_study",
    "sensitivity_ratios",
    "geodesic_predictions",
    "parameter_errors",
    "release_covariate_range",
    "release_mse",
]
