"""Closed-form kernels of the estimators on particular spaces.

:func:`dpcore.learning.regression_gradient` computes the gradient of the geodesic regression
energy on every manifold from its geometry (exponential map, transport, adjoint Jacobi maps);
where a space admits a much faster closed form, the kernel lives in a module of this package,
registers itself with :func:`closed_form_regression_gradient` (and
:func:`closed_form_frechet_gradient` for the Fréchet energy) and the dispatchers call it. These
are estimator code, not geometry: the manifold classes hold geometry only.
"""

from __future__ import annotations

from ._dispatch import closed_form_frechet_gradient, closed_form_regression_gradient
from .euclidean import euclidean_regression_gradient
from .kendall import kendall_regression_gradient
from .spd import spd_frechet_gradient, spd_regression_gradient
from .sphere import sphere_regression_gradient

__all__ = [
    "closed_form_frechet_gradient",
    "closed_form_regression_gradient",
    "euclidean_regression_gradient",
    "kendall_regression_gradient",
    "spd_frechet_gradient",
    "spd_regression_gradient",
    "sphere_regression_gradient",
]
