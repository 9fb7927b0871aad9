"""Non-private estimators: Fréchet means and geodesic regression."""

from .frechet import ConvergenceWarning, frechet_mean, frechet_mean_gradient
from .regression import GeodesicRegression, regression_energy, regression_gradient

__all__ = [
    "ConvergenceWarning",
    "GeodesicRegression",
    "frechet_mean",
    "frechet_mean_gradient",
    "regression_energy",
    "regression_gradient",
]
