"""Figures of Gaussian differential privacy: µ against σ, trade-off curves, privacy profiles,
and the utility of the Gaussian against the Laplace mechanism.
"""

from __future__ import annotations

import numpy as np

from dpcore.privacy import delta_mu, privacy_profile_circle, tradeoff_gdp

from . import colors
from ._base import HEIGHT_2D, legend_below
from .charts import band_figure, curves_figure, mean_and_se

__all__ = [
    "gaussian_utility_figure",
    "mu_sigma_figure",
    "privacy_profile_figure",
    "tradeoff_figure",
]

def mu_sigma_figure(table, *, current=None):
    """µ against σ: S¹ exact, S¹ Monte Carlo (± 2 SE) and R, with the current setting marked.

    Parameters
    ----------
    table : dict
        Output of :func:`mu_sigma_table`.
    current : tuple (sigma, mu), optional
        The page's current rate and its exact µ on S¹.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    curves = {
        "S¹ exact (paper 004 Algorithm 1)": (table["sigma"], table["mu_circle"]),
        "R: µ = Δ/σ": (table["sigma"], table["mu_line"]),
    }
    styles = {
        "S¹ exact (paper 004 Algorithm 1)": {"color": colors.VERMILLION, "mode": "lines+markers"},
        "R: µ = Δ/σ": {"color": colors.BLUE, "dash": "dash", "mode": "lines+markers"},
    }
    if len(table["mc_sigma"]):
        label = "S¹ Monte Carlo ± 2 SE (Algorithm 2)"
        curves[label] = (table["mc_sigma"], table["mu_mc"], 2 * table["mu_mc_se"])
        styles[label] = {"color": colors.GREY, "mode": "markers"}
    if current is not None:
        curves["Current setting"] = ([current[0]], [current[1]])
        styles["Current setting"] = {"color": colors.BLACK, "mode": "markers"}
    fig = curves_figure(
        curves, styles=styles, x_title="rate σ (radians)", y_title="privacy parameter µ",
        title="Gaussian DP parameter µ against the rate σ", log_y=True,
        subtitle="The circle's µ falls below R's Δ/σ once σ is large: S¹ is compact",
        height=HEIGHT_2D + 80, legend_below=True,
    )
    if current is not None:
        fig.data[-1].marker.size = 13
        fig.data[-1].marker.symbol = "star"
    return fig


def gaussian_utility_figure(frame):
    """Mean distance ± 2 SE against µ for the Gaussian and Laplace mechanisms (a simulation).

    Parameters
    ----------
    frame : pandas.DataFrame
        Output of :func:`gaussian_laplace_utility`.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    series = {}
    for mech in ("Riemannian Gaussian", "Riemannian Laplace"):
        sub = frame[frame["mechanism"] == mech]
        series[mech] = mean_and_se(sub["mu"].to_numpy(float),
                                           sub["distance"].to_numpy(float))
    fig = band_figure(
        series, x_title="privacy parameter µ (Monte Carlo estimate for the Gaussian)",
        y_title="mean geodesic distance to x̄",
        title="Simulation on S²: Gaussian vs Laplace at equal µ",
        subtitle="Mean ± 2 standard errors over draws; Laplace at ε = log(Φ(µ/2)/Φ(−µ/2))",
        log_x=True, log_y=True,
    )
    return fig


def tradeoff_figure(mus):
    """GDP trade-off curves :math:`G_\\mu(\\alpha) = \\Phi(\\Phi^{-1}(1-\\alpha) - \\mu)`.

    Parameters
    ----------
    mus : mapping of str to float
        Labelled values of µ (the first one is drawn thickest).

    Returns
    -------
    plotly.graph_objects.Figure
    """
    alpha = np.concatenate([np.linspace(0.0, 0.02, 41), np.linspace(0.02, 1.0, 300)[1:]])
    curves = {"µ = 0: no test beats guessing": (alpha, 1 - alpha)}
    styles = {"µ = 0: no test beats guessing": {"color": colors.GREY, "dash": "dot"}}
    for i, (label, mu) in enumerate(mus.items()):
        curves[label] = (alpha, tradeoff_gdp(alpha, float(mu)))
        if i == 0:
            styles[label] = {"color": colors.BLACK, "width": 4}
    fig = curves_figure(
        curves, styles=styles, x_title="type I error α (false alarm)",
        y_title="type II error β (miss)", title="Trade-off curves of µ-GDP",
        subtitle="Lower curves: an attacker can tell adjacent data sets apart more easily",
        square=True, x_range=(0, 1), y_range=(0, 1), height=600,
    )
    return legend_below(fig)


def privacy_profile_figure(mu, *, sigma=None, sensitivity=None, eps_max=None):
    """Privacy profile :math:`\\delta_\\mu(\\varepsilon)`, and the exact S¹ profile at a rate.

    Parameters
    ----------
    mu : float
        GDP parameter.
    sigma, sensitivity : float, optional
        Rate and sensitivity of a Gaussian mechanism on S¹ whose exact profile
        (:func:`dpcore.privacy.privacy_profile_circle`) is drawn too; it lies on or below
        :math:`\\delta_\\mu` when µ is that mechanism's GDP parameter.
    eps_max : float, optional
        Right end of the ε axis (default: where δ_µ drops below 1e-8, at most 20).

    Returns
    -------
    plotly.graph_objects.Figure
    """
    if eps_max is None:
        grid = np.linspace(0.0, 40.0, 4001)
        below = grid[delta_mu(grid, mu) < 1e-8]
        eps_max = float(min(below[0] if below.size else 20.0, 20.0))
        eps_max = max(eps_max, 0.5)
    eps = np.linspace(0.0, eps_max, 300)
    curves = {f"δ_µ(ε) of µ-GDP, µ = {mu:.3g}": (eps, delta_mu(eps, mu))}
    styles = {f"δ_µ(ε) of µ-GDP, µ = {mu:.3g}": {"color": colors.BLACK, "width": 3}}
    if sigma is not None and sensitivity is not None:
        prof = privacy_profile_circle(eps, sigma, sensitivity)
        label = f"Exact profile on S¹ (σ = {sigma:.3g}, Δ = {sensitivity:.3g})"
        curves[label] = (eps, np.where(prof > 0, prof, np.nan))
        styles[label] = {"color": colors.VERMILLION, "dash": "dash"}
    fig = curves_figure(
        curves, styles=styles, x_title="ε", y_title="δ(ε)",
        title="Privacy profile: (ε, δ(ε))-DP for every ε ≥ 0", log_y=True, height=600,
        subtitle="The smallest δ for which the mechanism is (ε, δ)-DP",
    )
    return legend_below(fig)
