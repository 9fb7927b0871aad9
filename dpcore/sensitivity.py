r"""Sensitivity bounds and their empirical counterparts on adjacent datasets.

Closed forms (DESIGN §5):

* geodesic regression, paper 002 Thm 3.3 and Thm D.1 (appendix form, which keeps the 1/n):
  with :math:`c = \sqrt{-\kappa_l}(\tau_m + \tau)`,
  :math:`\Delta_p = \Delta_v = 2\tau / n` if :math:`\kappa_l \ge 0`, else
  :math:`\Delta_p = (2\tau/n)\cosh(2c)` and :math:`\Delta_v = (\tau/n)\sinh(2c)/c`;
* Fréchet mean, paper 001 Thm 2: data in :math:`B_r(m_0)` with
  :math:`r < r^* = \tfrac12 \min\{\mathrm{inj}\, M, \pi / (2\sqrt{\kappa})\}`,
  :math:`h = 2r\sqrt\kappa \cot(2r\sqrt\kappa)` (:math:`h = 1` if :math:`\kappa \le 0`),
  :math:`\Delta = 2r(2 - h) / (n h)`; KNG on the Fréchet energy has gradient sensitivity
  :math:`2r(2 - h)/n`.

Adjacent datasets follow paper 002 app. G / paper 001 fig. 1: draw ``n + 1`` observations, ``D``
drops the first and ``D'`` the last (same size, one observation replaced).
"""

from __future__ import annotations

import numpy as np

from ._validation import check_int, check_positive, check_real

__all__ = [
    "adjacent_pair",
    "empirical_frechet_sensitivity",
    "empirical_regression_sensitivity",
    "frechet_gradient_sensitivity",
    "frechet_mean_sensitivity",
    "frechet_radius_limit",
    "default_max_speed",
    "geodesic_regression_sensitivity",
]


def geodesic_regression_sensitivity(n, tau, kappa_low, tau_m=None):
    r"""Sensitivities :math:`(\Delta_p, \Delta_v)` of the regression gradients (paper 002).

    Parameters
    ----------
    n : int
        Number of observations (adjacent datasets replace one of them).
    tau : float
        Bound on every residual norm :math:`d(\mathrm{Exp}(p, x_i v), y_i)` (enforced by clipping
        in strict mode).
    kappa_low : float
        Lower bound on the sectional curvature.
    tau_m : float, optional
        Radius of a ball holding the responses; required when ``kappa_low < 0``.

    Returns
    -------
    (delta_p, delta_v) : tuple of float
        Sensitivity of the footpoint gradient and of the shooting-vector gradient, for
        covariates rescaled to [0, 1].
    """
    n = check_int(n, "n")
    tau = check_positive(tau, "tau")
    kappa_low = check_real(kappa_low, "kappa_low")
    if kappa_low >= 0:
        delta = 2.0 * tau / n
        return delta, delta
    if tau_m is None:
        raise ValueError(
            "`tau_m` (radius of a public ball holding the responses) is required when "
            f"`kappa_low` < 0, got kappa_low={kappa_low!r}."
        )
    tau_m = check_positive(tau_m, "tau_m")
    # Geodesic reach rho <= 2 (tau_m + tau) (paper 002 app. C); Jacobi fields grow like
    # cosh (footpoint, eq. 18) and sinh(s)/s (shooting vector, eq. 43) along it.
    c = np.sqrt(-kappa_low) * (tau_m + tau)
    delta_p = 2.0 * tau / n * np.cosh(2.0 * c)
    delta_v = tau / n * np.sinh(2.0 * c) / c
    return float(delta_p), float(delta_v)


def default_max_speed(manifold, tau_m, tau):
    r"""The public shooting-vector bound regression releases take when none is given: the
    diameter on compact spaces, else :math:`2(\tau_m + \tau)` (paper 002 app. C: responses
    within :math:`\tau_m` of the centre and residuals at most :math:`\tau` keep the fitted
    geodesic's change over the covariate range below it). ``tau_m`` is read only on
    non-compact spaces."""
    return manifold.diameter if manifold.is_compact else 2.0 * (tau_m + tau)


def frechet_radius_limit(kappa_high, injectivity_radius=np.inf):
    r"""Largest admissible data radius, :math:`r^* = \tfrac12\min\{inj, \pi/(2\sqrt\kappa)\}`.

    Data must lie in an open ball of radius below this for paper 001 Thm 2 to apply.
    """
    kappa_high = check_real(kappa_high, "kappa_high")
    inj = float(injectivity_radius)
    if not inj > 0:
        raise ValueError(f"`injectivity_radius` must be positive, got {inj!r}.")
    limit = inj
    if kappa_high > 0:
        limit = min(limit, np.pi / (2.0 * np.sqrt(kappa_high)))
    return 0.5 * limit


def _curvature_factor(radius, kappa_high):
    if kappa_high <= 0:
        return 1.0
    a = 2.0 * radius * np.sqrt(kappa_high)
    return float(a / np.tan(a))


def _check_frechet_inputs(n, radius, kappa_high, injectivity_radius):
    n = check_int(n, "n")
    radius = check_positive(radius, "radius")
    limit = frechet_radius_limit(kappa_high, injectivity_radius)
    if not radius < limit:
        raise ValueError(
            f"`radius` must be below r* = {limit:.6g} (half the smaller of the injectivity "
            f"radius and pi / (2 sqrt(kappa_high))), got {radius!r}."
        )
    return n, radius, _curvature_factor(radius, float(kappa_high))


def frechet_mean_sensitivity(n, radius, kappa_high, injectivity_radius=np.inf):
    r"""Sensitivity of the Fréchet mean, :math:`\Delta = 2r(2 - h)/(n h)` (paper 001 Thm 2).

    Parameters
    ----------
    n : int
        Sample size.
    radius : float
        Radius r of the ball :math:`B_r(m_0)` holding the data; must be below
        :func:`frechet_radius_limit`.
    kappa_high : float
        Upper bound on the sectional curvature.
    injectivity_radius : float, optional
        Injectivity radius of the manifold (infinite by default).

    Returns
    -------
    float
        Bound on the geodesic distance between the means of adjacent datasets.
    """
    n, radius, h = _check_frechet_inputs(n, radius, kappa_high, injectivity_radius)
    return 2.0 * radius * (2.0 - h) / (n * h)


def frechet_gradient_sensitivity(n, radius, kappa_high, injectivity_radius=np.inf):
    r"""Sensitivity :math:`2r(2 - h)/n` of the Fréchet-energy gradient (for KNG, DESIGN §5)."""
    n, radius, h = _check_frechet_inputs(n, radius, kappa_high, injectivity_radius)
    return 2.0 * radius * (2.0 - h) / n


def adjacent_pair(values):
    """Split ``n + 1`` observations into adjacent datasets ``(D, D')``.

    ``D`` drops the first observation and ``D'`` the last, so both have ``n`` observations and
    differ in exactly one (paper 002 app. G). ``values`` may be one array or a tuple of arrays
    sharing their first axis (e.g. ``(x, y)``); the result has the same structure.
    """
    if isinstance(values, tuple):
        pairs = [adjacent_pair(v) for v in values]
        return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)
    values = np.asarray(values)
    if values.shape[0] < 2:
        raise ValueError("Adjacent datasets need at least two observations.")
    return values[1:], values[:-1]


def empirical_regression_sensitivity(manifold, x, y, p, v, *, tau=None):
    r"""Gradient differences of adjacent datasets at fixed parameters (paper 002 app. G).

    Parameters
    ----------
    manifold : Manifold
    x : array-like, shape (n + 1,)
        Covariates, already on [0, 1].
    y : array-like, shape (n + 1, *point_shape)
    p, v : array-like
        Footpoint and shooting vector at which both gradients are evaluated.
    tau : float, optional
        Clip residuals to this norm first (as the strict-mode mechanism does).

    Returns
    -------
    (delta_p, delta_v) : tuple of float
        :math:`\|\nabla_p E(D) - \nabla_p E(D')\|_p` and the same for the shooting vector.
    """
    from .learning.regression import regression_gradient

    (x_d, y_d), (x_e, y_e) = adjacent_pair((np.asarray(x, float), np.asarray(y, float)))
    gp_d, gv_d = regression_gradient(manifold, p, v, x_d, y_d, tau=tau)
    gp_e, gv_e = regression_gradient(manifold, p, v, x_e, y_e, tau=tau)
    return float(manifold.norm(p, gp_d - gp_e)), float(manifold.norm(p, gv_d - gv_e))


def empirical_frechet_sensitivity(manifold, y, **kwargs):
    """Distance between the Fréchet means of the adjacent datasets built from ``n + 1`` points.

    Keyword arguments go to :func:`dpcore.learning.frechet_mean`.
    """
    from .learning.frechet import frechet_mean

    d, e = adjacent_pair(np.asarray(y, float))
    mean_d = frechet_mean(manifold, d, **kwargs)
    mean_e = frechet_mean(manifold, e, **kwargs)
    return float(manifold.dist(mean_d, mean_e))
