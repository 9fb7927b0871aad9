"""Samplers for the distance-based privacy mechanisms (DESIGN section 6).

Exact samplers come first: :func:`sample_laplace` and :func:`sample_gaussian` draw from
:math:`\\propto e^{-d(\\eta, y)/\\sigma}` and :math:`\\propto e^{-d(\\eta, y)^2/(2\\sigma^2)}` on
Euclidean, Sphere, KendallShape, Hyperbolic and SPD(k <= 2) exactly (radius from its 1-D law by
rejection, uniform direction, then ``exp``), optionally truncated to a geodesic ball. SPD(k >= 3)
draws its eigen-radius vector by MCMC. Everything else goes through the batched multi-chain
:func:`metropolis_hastings`, with diagnostics from :mod:`dpcore.sampling.diagnostics` (the
rank-normalised bulk- and tail-ESS and split-R-hat of Vehtari et al. 2021 are the ones the
sampler reports). Monte Carlo studies may pass ``radial="inversion"`` to the samplers for a
faster, not exact, radius (:mod:`dpcore.sampling.inversion`).
"""

from .diagnostics import effective_sample_size, ess_bulk, ess_tail, rank_rhat, split_rhat
from .exact import exact_sampler_available, sample_gaussian, sample_laplace
from .mcmc import MCMCResult, metropolis_hastings
from .radial import RadialDensity, laplace_growth_rate, radial_density, sample_radius

__all__ = [
    "MCMCResult",
    "RadialDensity",
    "effective_sample_size",
    "ess_bulk",
    "ess_tail",
    "exact_sampler_available",
    "laplace_growth_rate",
    "metropolis_hastings",
    "radial_density",
    "rank_rhat",
    "sample_gaussian",
    "sample_laplace",
    "sample_radius",
    "split_rhat",
]
