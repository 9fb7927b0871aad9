r"""Checks of the papers' qualitative claims on the studies' DataFrames.

Each function takes the output of one study and returns a :class:`Fact`: whether the claim
holds, the smallest margin by which it holds (negative when it fails), and a short description
of where that margin is attained. The report prints them and the tests assert them, so both use
the same definitions:

* :func:`log_mse_falls_with_n` -- log MSE falls as n grows at every budget (paper 002 §4.1);
* :func:`unequal_ends_highest` -- the unequal-split curve is highest at its two ends (paper 002:
  "largest when either budget is extremely small, producing a parabolic trend");
* :func:`private_approaches_nonprivate` -- private energy above the non-private level and
  approaching it as ε grows;
* :func:`ratios_at_least_one` -- every theoretical / empirical sensitivity ratio is at least 1;
* :func:`mechanism_beats` -- one Fréchet-mean mechanism has smaller mean error than another
  (manifold vs ambient Laplace, Gaussian vs Laplace at equal µ);
* :func:`mu_circle_matches_inverse_sigma` -- µ on S¹ equals 1/σ for small σ and is below it for
  large σ (paper 004 fig. 1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = [
    "Fact",
    "log_mse_falls_with_n",
    "mechanism_beats",
    "mu_circle_matches_inverse_sigma",
    "private_approaches_nonprivate",
    "ratios_at_least_one",
    "unequal_ends_highest",
]


@dataclass(frozen=True)
class Fact:
    """Outcome of one qualitative check.

    Attributes
    ----------
    name : str
        The claim.
    holds : bool
    margin : float
        Smallest margin by which the claim holds (its unit is given in ``unit``); negative when it
        fails.
    unit : str
    detail : str
        Where the smallest margin is attained, and any exceptions.
    """

    name: str
    holds: bool
    margin: float
    unit: str
    detail: str

    def as_row(self):
        """A dict for a results table."""
        return {"fact": self.name, "holds": self.holds, "margin": self.margin,
                "unit": self.unit, "detail": self.detail}


def _noise_note(z_scores, tolerance):
    return (f"; rises within noise (|z| <= {tolerance:g}) are not counted"
            if tolerance and np.isfinite(z_scores).any() else "")


def log_mse_falls_with_n(df, *, tolerance=0.0):
    """Log MSE (mean over replicates) falls from each sample size to the next at every budget.

    Parameters
    ----------
    df : pandas.DataFrame
        From :func:`~dpcore.experiments.budget_sweep` (columns ``n``, ``eps_p``, ``eps_v``,
        ``log_mse``), with at least two sample sizes.
    tolerance : float, optional
        With several replicates, a rise smaller than ``tolerance`` standard errors of the
        difference of the two means is attributed to Monte Carlo noise and does not make the
        claim fail (it is still listed in ``detail``). The default 0 counts every rise.

    Returns
    -------
    Fact
        ``margin``: the smallest drop in mean log MSE between consecutive sizes over all budget
        pairs; ``detail`` lists the budgets where it does not fall.
    """
    groups = df.groupby(["eps_p", "eps_v", "n"])["log_mse"]
    means = groups.mean().unstack("n")
    # standard error of each mean (NaN with one replicate: then every rise counts)
    ses = (groups.std() / np.sqrt(groups.count())).unstack("n")
    sizes = list(means.columns)
    if len(sizes) < 2:
        raise ValueError("Need at least two sample sizes.")
    pairs = list(zip(sizes[:-1], sizes[1:], strict=True))
    drops = pd.DataFrame({f"{a}->{b}": means[a] - means[b] for a, b in pairs})
    z = pd.DataFrame({f"{a}->{b}": (means[a] - means[b]) / np.hypot(ses[a], ses[b])
                      for a, b in pairs})
    significant = (drops <= 0) & ~(z.abs() <= tolerance)
    worst = drops.stack().idxmin()
    margin = float(drops.to_numpy().min())
    bad = drops[(drops <= 0).any(axis=1)]
    exceptions = "; ".join(
        f"(eps_p, eps_v) = ({ep:.3g}, {ev:.3g}): "
        + ", ".join(f"{c} {v:+.2f}" + (f" (z = {z.loc[(ep, ev), c]:+.1f})"
                                       if np.isfinite(z.loc[(ep, ev), c]) else "")
                    for c, v in row.items() if v <= 0)
        for (ep, ev), row in bad.iterrows())
    detail = (f"smallest drop {margin:+.2f} at (eps_p, eps_v) = ({worst[0]:.3g}, "
              f"{worst[1]:.3g}), n {worst[2]}")
    if exceptions:
        detail += f"; does not fall at {exceptions}" + _noise_note(z.to_numpy(), tolerance)
    holds = not significant.to_numpy().any()
    return Fact("log MSE falls as n grows at every budget", holds, margin, "log MSE", detail)


def unequal_ends_highest(df):
    """The unequal-split curve (mean log MSE against ε_p at fixed total) is U-shaped.

    For every sample size: the largest value of the curve is at one of its two ends, and each
    end lies above the value at the equal split (the ε_p closest to ε_v).

    Parameters
    ----------
    df : pandas.DataFrame
        From :func:`~dpcore.experiments.budget_sweep` with ``split="unequal"`` and one total.

    Returns
    -------
    Fact
        ``margin``: the smallest, over sizes, of (each end minus the middle) and (the higher end
        minus the highest interior point).
    """
    margins, notes = [], []
    for n, part in df.groupby("n"):
        curve = part.groupby("eps_p").agg(log_mse=("log_mse", "mean"), eps_v=("eps_v", "first"))
        values = curve["log_mse"].to_numpy()
        if values.size < 3:
            raise ValueError("Need at least three budget splits.")
        mid = int(np.argmin(np.abs(np.log(curve.index.to_numpy() / curve["eps_v"].to_numpy()))))
        end_over_mid = min(values[0], values[-1]) - values[mid]
        top_over_interior = max(values[0], values[-1]) - values[1:-1].max()
        m = min(end_over_mid, top_over_interior)
        margins.append(m)
        notes.append(f"n={n}: ends {values[0]:.2f} / {values[-1]:.2f}, equal split "
                     f"{values[mid]:.2f}, interior max {values[1:-1].max():.2f}")
    margin = float(min(margins))
    return Fact("unequal-split curve highest at its two ends", margin > 0, margin, "log MSE",
                "; ".join(notes))


def private_approaches_nonprivate(df, *, tolerance=0.0):
    """Private MSE above the non-private one, with the gap shrinking as ε grows.

    The gap is the mean over replicates of ``log(mse / nonprivate_mse)`` (both on the same
    data). It must be positive everywhere and fall from each total budget to the next, for every
    sample size.

    Parameters
    ----------
    df : pandas.DataFrame
        From :func:`~dpcore.experiments.budget_sweep` with ``split="equal"`` (several totals).
    tolerance : float, optional
        As in :func:`log_mse_falls_with_n`: a rise of the gap smaller than ``tolerance``
        standard errors is attributed to noise (default 0: every rise counts).

    Returns
    -------
    Fact
        ``holds`` when every gap is positive and every drop is; ``margin``: the smallest drop
        of the gap between consecutive budgets (the gap itself is positive by construction, the
        non-private fit minimizes the MSE, and is meant to become small).
    """
    gap = np.log(df["mse"] / df["nonprivate_mse"])
    groups = df.assign(gap=gap).groupby(["n", "epsilon"])["gap"]
    means, ses = groups.mean(), groups.std() / np.sqrt(groups.count())
    drops_all, positive, notes, significant, z_all = [], True, [], False, []
    for n, g in means.groupby(level="n"):
        values = g.to_numpy()
        se = ses.loc[n].to_numpy()
        positive &= bool(np.all(values > 0))
        steps = values[:-1] - values[1:]
        z = steps / np.hypot(se[:-1], se[1:])
        z_all.extend(z)
        significant |= bool(np.any((steps <= 0) & ~(np.abs(z) <= tolerance)))
        drops_all.append(steps.min() if values.size > 1 else np.inf)
        rises = [f"{g.index[i][1]:.3g}->{g.index[i + 1][1]:.3g} {-steps[i]:+.3f}"
                 + (f" (z = {z[i]:+.1f})" if np.isfinite(z[i]) else "")
                 for i in np.flatnonzero(steps <= 0)]
        notes.append(f"n={n}: gap {values[0]:.2f} at eps={g.index[0][1]:.3g} -> "
                     f"{values[-1]:.2f} at eps={g.index[-1][1]:.3g} (log ratio to non-private)"
                     + (f", rises {', '.join(rises)}" if rises else ""))
    margin = float(min(drops_all))
    detail = "; ".join(notes)
    if margin <= 0:
        detail += _noise_note(np.asarray(z_all), tolerance)
    return Fact("private energy above the non-private level, approaching it as eps grows",
                positive and not significant, margin, "log ratio", detail)


def ratios_at_least_one(df, label=""):
    """Every theoretical / empirical sensitivity ratio is at least 1.

    Parameters
    ----------
    df : pandas.DataFrame
        With a ``ratio`` column (:func:`~dpcore.experiments.sensitivity_ratios` or
        :func:`~dpcore.experiments.frechet_sensitivity_study`).
    label : str
        Appended to the claim (e.g. the manifold).

    Returns
    -------
    Fact
        ``margin``: the smallest ratio minus 1.
    """
    r = df["ratio"].to_numpy(dtype=float)
    i = int(np.argmin(r))
    row = df.iloc[i]
    where = ", ".join(f"{k}={int(row[k]) if k == 'n' else row[k]}" for k in ("n", "parameter")
                      if k in df.columns)
    name = "every sensitivity ratio >= 1" + (f" ({label})" if label else "")
    return Fact(name, bool(r.min() >= 1), float(r.min() - 1), "ratio - 1",
                f"smallest ratio {r.min():.3g} ({where}); median {np.median(r):.3g}")


def mechanism_beats(df, winner, loser, *, error="geodesic_error", label=""):
    """Mean error of ``winner`` below that of ``loser`` at every (n, ε).

    Parameters
    ----------
    df : pandas.DataFrame
        From :func:`~dpcore.experiments.frechet_mean_study`.
    winner, loser : str
        Mechanism names.
    error : {"geodesic_error", "euclidean_error"}
    label : str
        Appended to the claim.

    Returns
    -------
    Fact
        ``margin``: the smallest difference of the means divided by its standard error
        (a z-score; positive when ``winner`` is better); ``detail`` gives the relative
        reduction at each n.
    """
    g = df.groupby(["n", "epsilon", "mechanism"])[error].agg(["mean", "sem"])
    zs, notes = [], []
    for (n, eps), part in g.groupby(level=["n", "epsilon"]):
        w = part.xs(winner, level="mechanism")
        lo = part.xs(loser, level="mechanism")
        diff = float(lo["mean"].iloc[0] - w["mean"].iloc[0])
        se = float(np.hypot(lo["sem"].iloc[0], w["sem"].iloc[0]))
        zs.append(diff / se if se > 0 else np.inf * np.sign(diff))
        notes.append(f"n={n}, eps={eps:.3g}: {w['mean'].iloc[0]:.4g} vs "
                     f"{lo['mean'].iloc[0]:.4g} ({100 * diff / lo['mean'].iloc[0]:+.0f}%)")
    margin = float(min(zs))
    name = f"{winner} beats {loser} ({error.replace('_', ' ')})" + (f" {label}" if label else "")
    return Fact(name, margin > 0, margin, "standard errors", "; ".join(notes))


def mu_circle_matches_inverse_sigma(df, *, small=0.5, large=2.0, rtol=1e-3):
    """Exact µ on S¹ equals Δ/σ (to ``rtol``) for σ ≤ ``small`` and is below it for σ ≥ ``large``.

    Parameters
    ----------
    df : pandas.DataFrame
        From :func:`~dpcore.experiments.gdp_mu_curve`.
    small, large : float
        Thresholds on σ.
    rtol : float
        Relative tolerance for "equals".

    Returns
    -------
    Fact
        ``margin``: the smaller of ``rtol`` minus the largest relative deviation at small σ and
        the smallest relative shortfall ``1 - µσ/Δ`` at large σ.
    """
    exact = df[(df["space"] == "S1") & (df["method"] == "exact")]
    rel = exact["mu"] / exact["inverse_sigma"]
    small_dev = float(np.max(np.abs(rel[exact["sigma"] <= small] - 1.0)))
    large_short = float(np.min(1.0 - rel[exact["sigma"] >= large]))
    margin = min(rtol - small_dev, large_short)
    detail = (f"largest |mu sigma / Delta - 1| for sigma <= {small}: {small_dev:.2e}; "
              f"smallest 1 - mu sigma / Delta for sigma >= {large}: {large_short:.3f}")
    return Fact("mu on S1 = 1/sigma for small sigma, below it for large sigma", margin > 0,
                margin, "relative", detail)
