"""Privacy mechanisms on manifolds.

* :class:`RiemannianLaplace` — density ∝ exp(-d(η, y)/σ) (paper 001);
* :class:`RiemannianGaussian` — density ∝ exp(-d²/(2σ²)), accounted in Gaussian DP (paper 004);
* :class:`KNormGradient` — density ∝ exp(-‖∇E‖/σ) for Fréchet means and geodesic regression
  (paper 002);
* :class:`AmbientLaplace` — Euclidean K-norm noise in an embedding space (baseline of paper 001);
* :class:`ExponentialQuantile` — quantiles of a real column on a public interval by the
  exponential mechanism (Smith 2011), for bounds estimated under DP.

Every class implements a protocol of :mod:`dpcore.mechanisms.protocol` (:class:`Mechanism`):
its :class:`Guarantee`, stated from public inputs, and its own draws.
"""

from .base import Ball, MechanismResult
from .gaussian import RiemannianGaussian
from .kng import KNormGradient
from .laplace import AmbientLaplace, RiemannianLaplace, ambient_radius, embed, project_to_manifold
from .protocol import (
    DataMechanism,
    GradientMechanism,
    Guarantee,
    Mechanism,
    StatisticMechanism,
)
from .quantile import ExponentialQuantile, sample_exponential_quantiles


def mechanism_classes():
    """Every mechanism class of :mod:`dpcore.mechanisms` with the protocol it implements."""
    return {RiemannianLaplace: StatisticMechanism, AmbientLaplace: StatisticMechanism,
            RiemannianGaussian: StatisticMechanism, ExponentialQuantile: DataMechanism,
            KNormGradient: GradientMechanism}


__all__ = [
    "AmbientLaplace",
    "Ball",
    "DataMechanism",
    "GradientMechanism",
    "Guarantee",
    "Mechanism",
    "StatisticMechanism",
    "ExponentialQuantile",
    "KNormGradient",
    "MechanismResult",
    "RiemannianGaussian",
    "RiemannianLaplace",
    "ambient_radius",
    "embed",
    "mechanism_classes",
    "project_to_manifold",
    "sample_exponential_quantiles",
]
