r"""Riemannian Gaussian mechanism under Gaussian differential privacy (paper 004 Def 3.3)."""

from __future__ import annotations

import numpy as np

from .._validation import check_manifold, check_positive
from .base import Ball, MechanismResult, check_point, check_sensitivity
from .protocol import Guarantee


class RiemannianGaussian:
    r"""Riemannian Gaussian mechanism: density :math:`\propto \exp(-d(\eta, y)^2 / (2\sigma^2))`.

    Give either a target ``mu`` (σ is calibrated by :func:`dpcore.privacy.calibrate_sigma`) or
    ``sigma`` (µ is computed: exactly Δ/σ on R^d, by exact quadrature on the circle (paper 004
    Algorithm 1), by Monte Carlo elsewhere (Algorithm 2), whose standard error is reported).

    Parameters
    ----------
    manifold : Manifold
        Must be homogeneous (the normalizing constant must not depend on the centre).
    sensitivity : float
    mu : float, optional
    sigma : float, optional
    mc_samples, mc_repeats : int
        Monte Carlo sizes when µ has to be estimated.
    rng : seed for the Monte Carlo estimate of µ (the accounting, not the release).
    """

    name = "gaussian"

    def __init__(self, *, manifold, sensitivity, mu=None, sigma=None, mc_samples=2000,
                 mc_repeats=50, rng=0):
        from ..privacy import (
            calibrate_sigma,
            exact_gdp_accounting,
            gdp_mu_circle,
            gdp_mu_monte_carlo,
        )

        self.manifold = check_manifold(manifold)
        if not manifold.is_homogeneous:
            raise ValueError(
                f"The Riemannian Gaussian needs a homogeneous manifold, got {manifold!r}."
            )
        self.sensitivity = check_sensitivity(sensitivity)
        if (mu is None) == (sigma is None):
            raise ValueError("Give exactly one of `mu` and `sigma`.")
        self.mu_standard_error = 0.0
        if mu is not None:
            self.mu = check_positive(mu, "mu")
            self.sigma = float(calibrate_sigma(self.mu, self.sensitivity, manifold))
            self.accounting = "calibrated"
        else:
            self.sigma = check_positive(sigma, "sigma")
            exact = exact_gdp_accounting(manifold)
            if exact == "euclidean":
                self.mu, self.accounting = self.sensitivity / self.sigma, "exact (R^d)"
            elif exact == "circle":
                self.mu = float(gdp_mu_circle(self.sigma, self.sensitivity))
                self.accounting = "exact quadrature (paper 004 Algorithm 1)"
            else:
                mu_hat, se = gdp_mu_monte_carlo(
                    manifold, self.sigma, self.sensitivity, n_samples=mc_samples,
                    n_eps=1000, repeats=mc_repeats, rng=rng,
                )
                self.mu, self.mu_standard_error = float(mu_hat), float(se)
                self.accounting = "Monte Carlo (paper 004 Algorithm 2)"

    def guarantee(self):
        """One draw is µ-GDP (paper 004); ``accounting`` says how µ was obtained."""
        return Guarantee(epsilon=None, delta=None, mu=self.mu, sensitivity=self.sensitivity,
                         sigma=self.sigma, sigma_rule=f"sigma {self.accounting}",
                         mu_standard_error=self.mu_standard_error,
                         accounting=self.accounting)

    def release(self, statistic, size=None, rng=None, *, support=None, float_safe=True):
        """Draw private versions of ``statistic``; ``float_safe=False`` uses the radial
        sampler even where the lattice sampler applies (studies only)."""
        from ..sampling import exact_sampler_available, sample_gaussian
        from .laplace import RADIAL_NOTE, lattice_release

        statistic = check_point(self.manifold, statistic, "statistic")
        if support is not None:
            support = Ball.make(self.manifold, *support).as_tuple()
        found = None if not float_safe else lattice_release(
            self.manifold, statistic, self.sigma, "gaussian", size, rng, support=support)
        if found is not None:
            return found
        values = sample_gaussian(
            self.manifold, statistic, self.sigma, size=size, rng=rng, support=support
        )
        exact = bool(exact_sampler_available(self.manifold, "gaussian"))
        return MechanismResult(
            values=np.asarray(values), exact=exact,
            sampler="exact radial" if exact else "radial part by MCMC",
            diagnostics={"float_safety": RADIAL_NOTE},
        )
