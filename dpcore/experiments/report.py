r"""Regenerate the papers' figures and write a self-contained HTML report.

Run from the repository root::

    python -m dpcore.experiments.report [--quick] [--out reports] [--n-jobs 2] [--seed 2024]

(``make reproduce`` and ``make reproduce QUICK=1`` do this). The report goes to
``<out>/index.html``: every figure as an embedded plotly chart (plotly.js is included once, so the
file opens offline), the numbers behind each figure as CSV files beside it, a table of our numbers
next to the papers' with a sentence on each difference, the qualitative facts of the papers with
the margins by which they hold, and the time each figure took (also printed to stdout).

Two configurations: :data:`FULL` follows the papers' protocols with fewer replicates, shorter
chains and, for the slow manifolds (SPD(2), Kendall), fewer private draws per budget, so that the
whole run takes under 15 minutes on two cores; :data:`QUICK` (under 2 minutes, run in CI) shrinks
every study further and chooses sizes and budgets so that each qualitative fact holds by a wide
margin (see the report's "Qualitative facts" section).

The figures are drawn by :mod:`dpcore.visualization` (plotly only), the builders the dashboard
uses too; the report needs plotly but not the dashboard.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import html
import os
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .. import __version__
from ..manifolds import SPD, KendallShape, Sphere
from ..privacy import mu_to_eps
from ..sensitivity import frechet_mean_sensitivity
from ..visualization import (
    band_figure,
    curves_figure,
    equal_split_figure,
    kendall_shapes_figure,
    spd_ellipses_figure,
    sphere_regression_figure,
    unequal_split_figure,
)
from ..visualization.studies import sensitivity_ratios_figure, wine_fits_figure
from . import facts as F
from .budget import PAPER_TOTAL, budget_sweep, default_eps_p_grid
from .studies import (
    WINE_RESPONSES,
    frechet_mean_study,
    frechet_sensitivity_study,
    gdp_mu_curve,
    linear_regression_comparison,
    load_wine,
    noise_spread_geodesics,
    noise_spread_study,
    rat_skull_budget_study,
    rat_skull_shapes,
    recorded_budget_sweep,
    sensitivity_ratios,
    spd_ellipses_study,
    summarize_linear_regression,
)

__all__ = ["FULL", "QUICK", "Section", "build_report", "main"]


def _ratio_grid(total, low_ratio, size):
    """ε_p values splitting ``total`` with ε_p/ε_v log-spaced from ``low_ratio`` to its inverse."""
    r = np.geomspace(low_ratio, 1.0 / low_ratio, size)
    return tuple(float(v) for v in total * r / (1.0 + r))


#: A trend step (over n or over ε) the wrong way counts against a qualitative fact only when it
#: exceeds this many standard errors of the difference of replicate means.
NOISE_Z = 2.0

#: Settings of the full reproduction (paper protocols, reduced where noted in the report).
FULL = {
    "name": "full",
    "fig1": {"sizes": (20, 50, 100), "total": PAPER_TOTAL,
             "eps_p_grid": tuple(default_eps_p_grid(PAPER_TOTAL, 9)),
             "equal_totals": tuple(np.round(np.linspace(0.2, 2.0, 10), 10)), "replicates": 8,
             "draws": (10, 10), "chain": (300, 200)},
    "fig2": {"total": PAPER_TOTAL, "eps_p_grid": tuple(default_eps_p_grid(PAPER_TOTAL, 5)),
             "equal_totals": (0.2, 0.8, 1.4, 2.0), "replicates": 2, "draws": (4, 4),
             "chain": (300, 200)},
    "fig3": {"ages": (14, 30, 60, 90, 150), "eps": 0.3, "n_draws": 3, "chain": (1000, 500)},
    "fig5": {"noises": (0.01, 0.1), "n": 50, "totals": None, "chain": (500, 300)},
    "fig6": {"noises": (0.001, 0.01, 0.1), "n": 50, "totals": None, "replicates": 4,
             "draws": (5, 5), "chain": (300, 200)},
    "fig7": {"sizes": (20, 50, 100), "total": PAPER_TOTAL,
             "eps_p_grid": tuple(default_eps_p_grid(PAPER_TOTAL, 5)),
             "equal_totals": (0.2, 0.8, 1.4, 2.0), "replicates": 3, "draws": (4, 4),
             "chain": (300, 200)},
    "fig8": {"n": 50, "eps": 0.2, "n_covariates": 6, "n_draws": 3, "chain": (2000, 1000)},
    "fig9": {"sizes": (20, 50, 100), "pairs": 20},
    "p001": {"sizes": (10, 20, 40, 70, 100), "sens_replicates": 30, "replicates": 200,
             "kng_replicates": 10, "kng_chain": (300, 200), "epsilon": 1.0,
             "mechanisms": {"spd": ("laplace", "ambient_laplace"),
                            "sphere": ("laplace", "ambient_laplace", "gaussian")}},
    "p004": {"sigmas": tuple(k / 4 for k in range(1, 17)), "mc_replicates": 4,
             "tails_replicates": 2, "n_samples": 1000, "n_eps": 1000, "repeats": 100,
             "panel3_n": 10, "panel3_sigmas": (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0),
             "panel3_replicates": 300},
    "wine": {"replicates": 200},
}

#: Settings of the quick run (CI): smaller everything; budgets and sizes chosen so that each
#: qualitative fact holds by a wide margin.
QUICK = {
    "name": "quick",
    "fig1": {"sizes": (20, 100), "total": 1.0, "eps_p_grid": _ratio_grid(1.0, 1 / 30, 5),
             "equal_totals": (0.2, 0.45, 1.0), "replicates": 2, "draws": (5, 5),
             "chain": (300, 200)},
    "fig2": {"total": PAPER_TOTAL, "eps_p_grid": _ratio_grid(PAPER_TOTAL, 1 / 30, 3),
             "equal_totals": (0.4, 2.0), "replicates": 1, "draws": (2, 2), "chain": (100, 100)},
    "fig3": {"ages": (14, 30, 60, 90, 150), "eps": 0.3, "n_draws": 1, "chain": (300, 200)},
    "fig5": {"noises": (0.01, 0.1), "n": 50, "totals": (0.2, 1.0, 2.0), "chain": (300, 200)},
    "fig6": {"noises": (0.001, 0.01, 0.1), "n": 50, "totals": (0.2, 0.6, 2.0), "replicates": 1,
             "draws": (3, 3), "chain": (300, 200)},
    "fig7": {"sizes": (20, 100), "total": PAPER_TOTAL,
             "eps_p_grid": _ratio_grid(PAPER_TOTAL, 1 / 30, 3), "equal_totals": (0.4, 2.0),
             "replicates": 1, "draws": (2, 2), "chain": (100, 100)},
    "fig8": {"n": 50, "eps": 0.2, "n_covariates": 6, "n_draws": 1, "chain": (300, 200)},
    "fig9": {"sizes": (20, 100), "pairs": 5},
    "p001": {"sizes": (10, 100), "sens_replicates": 20, "replicates": 150,
             "kng_replicates": 5, "kng_chain": (200, 100), "epsilon": 1.0,
             "mechanisms": {"spd": ("laplace", "ambient_laplace"),
                            "sphere": ("laplace", "ambient_laplace", "gaussian")}},
    "p004": {"sigmas": (0.25, 0.5, 1.0, 2.0, 4.0), "mc_replicates": 2, "tails_replicates": 1,
             "n_samples": 500, "n_eps": 500, "repeats": 20, "panel3_n": 10,
             "panel3_sigmas": (0.25, 1.0, 3.0), "panel3_replicates": 150},
    "wine": {"replicates": 50},
}


@dataclass
class Section:
    """One figure of a paper, regenerated.

    Attributes
    ----------
    key : str
        Identifier, also the prefix of the section's CSV files (e.g. ``"p002_fig1"``).
    title : str
    protocol : str
        HTML: what was run, with which settings, and how it differs from the paper's protocol.
    figures : list of plotly.graph_objects.Figure
    tables : dict of str to pandas.DataFrame
        Written as ``<key>_<name>.csv``.
    comparison : list of dict
        Rows ``figure``, ``paper``, ``ours``, ``difference`` of the summary table.
    facts : list of Fact
    seconds : float
        Wall time of the section.
    """

    key: str
    title: str
    protocol: str = ""
    figures: list = field(default_factory=list)
    tables: dict = field(default_factory=dict)
    comparison: list = field(default_factory=list)
    facts: list = field(default_factory=list)
    seconds: float = 0.0


def _seed(seed, key):
    """Child seed of a section: independent of which other sections run."""
    return np.random.SeedSequence([int(seed), sum(ord(c) * 131**i for i, c in enumerate(key))
                                   % (2**32)])


def _row(figure, paper, ours, difference):
    return {"figure": figure, "paper": paper, "ours": ours, "difference": difference}


# ------------------------------------------------------------------------ budget figures
def _budget_figures(unequal, equal, name, total):
    """The Budget split page's two figures (one builder each), with the report's titles."""
    f1 = unequal_split_figure(
        unequal, total, x_title="ε_p (footpoint budget); ε_v = total − ε_p", log_x=True,
        title=f"{name}: unequal split of ε = {total:g}",
        subtitle="Mean log MSE ln Ē over replicates ± 2 SE; dashed: non-private")
    f2 = equal_split_figure(equal, x_title="total budget ε = ε_p + ε_v (ε_p = ε_v)",
                            title=f"{name}: equal split",
                            subtitle="Mean log MSE ± 2 SE; dashed: non-private")
    return [f1, f2]


def _budget_summary(unequal, equal):
    """Short numeric description: mean log MSE at the ends and middle, and at eps min/max."""
    parts = []
    for n, part in unequal.groupby("n"):
        c = part.groupby("eps_p")["log_mse"].mean()
        npv = np.mean(np.log(part.groupby("replicate")["nonprivate_mse"].first()))
        mid = c.iloc[len(c) // 2]
        parts.append(f"n={n}: ends {c.iloc[0]:.2f} / {c.iloc[-1]:.2f}, middle {mid:.2f}, "
                     f"non-private {npv:.2f}")
    eq = []
    for n, part in equal.groupby("n"):
        c = part.groupby("epsilon")["log_mse"].mean()
        eq.append(f"n={n}: {c.iloc[0]:.2f} at ε={c.index[0]:g} → {c.iloc[-1]:.2f} at "
                  f"ε={c.index[-1]:g}")
    return "Unequal: " + "; ".join(parts) + ". Equal: " + "; ".join(eq) + "."


def _falls_exceptions(df):
    """A sentence on the budgets where mean log MSE does not fall with n, with the reason."""
    means = df.groupby(["eps_p", "eps_v", "n"])["log_mse"].mean().unstack("n")
    sizes = list(means.columns)
    bad = [(ep, ev, a, b, means.loc[(ep, ev), a] - means.loc[(ep, ev), b])
           for (ep, ev) in means.index for a, b in zip(sizes[:-1], sizes[1:], strict=True)
           if not means.loc[(ep, ev), a] > means.loc[(ep, ev), b]]
    if not bad:
        return "Log MSE falls with n at every budget pair, as in the paper. "
    text = ("Unlike the paper, log MSE does not fall with n at "
            + "; ".join(f"(ε_p, ε_v) = ({ep:.3g}, {ev:.3g}), n {a} → {b} ({d:+.2f})"
                        for ep, ev, a, b, d in bad) + ". ")
    saturated = [x for x in bad if means.loc[(x[0], x[1])].min() > 0]
    if saturated:
        text += ("Where every n gives log MSE near +1 the private geodesics are random: in paper "
                 "mode the shooting-vector KNG is improper on the sphere (its gradient norm is "
                 "at most π·mean(t) while T_pM is unbounded), so at tiny ε_v the chains wander "
                 "as far as their length allows, whatever n. ")
    if len(saturated) < len(bad):
        text += ("Elsewhere the private MSE has reached the non-private in-sample MSE, which is "
                 "lower for small n (the fit adapts to the noise) and differs between datasets "
                 "by about ±0.1 in log. ")
    return text


def _sweep_kwargs(cfg, rng, n_jobs):
    nf, nv = cfg["draws"]
    cl, bi = cfg["chain"]
    return {"replicates": cfg["replicates"], "rng": rng, "n_jobs": n_jobs, "mode": "paper",
            "n_footpoints": nf, "n_vectors": nv, "chain_length": cl, "burn_in": bi}


def sec_p002_fig1(cfg, seed, n_jobs):
    c = cfg["fig1"]
    rng_u, rng_e = _seed(seed, "p002_fig1").spawn(2)
    data_rng = int(_seed(seed, "p002_fig1_data").generate_state(1)[0])
    kw = _sweep_kwargs(c, None, n_jobs)
    unequal = budget_sweep(Sphere(2), sample_sizes=c["sizes"], split="unequal",
                           totals=[c["total"]], eps_p_grid=c["eps_p_grid"],
                           **{**kw, "rng": rng_u}, data_rng=data_rng)
    equal = budget_sweep(Sphere(2), sample_sizes=c["sizes"], split="equal",
                         totals=c["equal_totals"], **{**kw, "rng": rng_e}, data_rng=data_rng)
    facts = [F.log_mse_falls_with_n(unequal, tolerance=NOISE_Z),
             F.log_mse_falls_with_n(equal, tolerance=NOISE_Z),
             F.unequal_ends_highest(unequal),
             F.private_approaches_nonprivate(equal, tolerance=NOISE_Z)]
    facts = [F.Fact(f.name + (" (unequal split)" if i == 0 else " (equal split)"
                              if i == 1 else ""), f.holds, f.margin, f.unit, f.detail)
             for i, f in enumerate(facts)]
    sizes = "/".join(map(str, c["sizes"]))
    ours = _budget_summary(unequal, equal)
    diff = ("Same qualitative picture: a U-shaped unequal split, log MSE falling with the total "
            "budget and with n, private above the dashed non-private level. ")
    diff += _falls_exceptions(pd.concat([unequal, equal], ignore_index=True))
    diff += ("The curve is also asymmetric: starving ε_v costs more than starving ε_p, since the "
             "vector noise is divided by the mean of t² ≈ 1/3.")
    comparison = [_row("002 fig. 1 (S², n = 20/50/100)",
                       "ln Ē parabolic in the unequal split, decreasing in ε; 20 > 50 > 100 at "
                       "every budget pair; private never reaches the non-private level",
                       ours, diff)]
    protocol = (
        f"Sphere S², paper protocol (§4.1: random geodesic of length π/4, x ~ U[0, 1], ambient "
        f"noise δ = 0.001). Paper mode (τ = largest residual, σ = Δ/ε). n = {sizes}; unequal "
        f"split of ε = {c['total']:g} with ε_p ∈ "
        f"{{{', '.join(f'{v:.3g}' for v in c['eps_p_grid'])}}}; equal split ε ∈ "
        f"{{{', '.join(f'{v:g}' for v in c['equal_totals'])}}}. "
        f"{c['draws'][0]} footpoints × {c['draws'][1]} vectors per budget pair (paper: 10 × 10), "
        f"Metropolis–Hastings {c['chain'][1]} burn-in + {c['chain'][0]} steps, "
        f"{c['replicates']} replicate dataset(s) per n (the same datasets for both views).")
    return Section("p002_fig1", "Paper 002, fig. 1: budget splits on the sphere", protocol,
                   _budget_figures(unequal, equal, "S²", c["total"]),
                   {"unequal": unequal, "equal": equal}, comparison, facts)


def sec_p002_fig2(cfg, seed, n_jobs):
    c = cfg["fig2"]
    rng_u, rng_e = _seed(seed, "p002_fig2").spawn(2)
    kw = _sweep_kwargs(c, None, n_jobs)
    unequal = rat_skull_budget_study(split="unequal", totals=[c["total"]],
                                     eps_p_grid=c["eps_p_grid"], **{**kw, "rng": rng_u})
    equal = rat_skull_budget_study(split="equal", totals=c["equal_totals"],
                                   **{**kw, "rng": rng_e})
    ends = F.unequal_ends_highest(unequal)
    approach = F.private_approaches_nonprivate(equal, tolerance=NOISE_Z)
    ours = _budget_summary(unequal, equal)
    comparison = [_row(
        "002 fig. 2 (Kendall shapes, n = 100)",
        "Corpus-callosum shapes (ADNI, 50 landmarks, not public): same parabola in the unequal "
        "split, error decreasing in the total budget",
        ours,
        "Real rat skulls (Vilmann, 144 outlines of 8 landmarks, age in days) instead of the "
        "non-public corpus callosum data; "
        + ("the same U shape and decrease in ε appear" if ends.holds and approach.holds
           else f"U shape: {ends.holds}, approach to the non-private level: {approach.holds}")
        + f"; fewer draws per budget ({c['draws'][0]} × {c['draws'][1]}) and shorter chains "
          "to fit the time budget.")]
    protocol = (
        "Kendall shape space of 8 planar landmarks (CP⁶, curvature in [1, 4]), the 144 rat-skull "
        "outlines of ../shared/data regressed on age (7–150 days, rescaled to [0, 1]). Paper "
        f"mode. Unequal split of ε = {c['total']:g} with ε_p ∈ "
        f"{{{', '.join(f'{v:.3g}' for v in c['eps_p_grid'])}}}; equal split ε ∈ "
        f"{{{', '.join(f'{v:g}' for v in c['equal_totals'])}}}. {c['draws'][0]} × "
        f"{c['draws'][1]} private geodesics per budget pair, chains {c['chain'][1]} + "
        f"{c['chain'][0]} steps, {c['replicates']} release(s) per pair.")
    return Section("p002_fig2", "Paper 002, fig. 2: budget splits on Kendall shape space "
                   "(rat skulls)", protocol, _budget_figures(unequal, equal, "Rat skulls",
                                                             c["total"]),
                   {"unequal": unequal, "equal": equal}, comparison, [ends, approach])


def sec_p002_fig3(cfg, seed, n_jobs):
    c = cfg["fig3"]
    cl, bi = c["chain"]
    shapes = rat_skull_shapes(ages=c["ages"], eps_p=c["eps"], eps_v=c["eps"],
                              n_draws=c["n_draws"], rng=_seed(seed, "p002_fig3"),
                              chain_length=cl, burn_in=bi)
    ages = np.asarray(c["ages"], dtype=float)

    def stack(kind, draw):
        part = shapes[(shapes.kind == kind) & (shapes.draw == draw)]
        return np.stack([part[part.age == a][["x", "y"]].to_numpy() for a in ages])

    true = stack("nonprivate", 0)
    priv = [stack("private", d) for d in range(c["n_draws"])]
    fig = kendall_shapes_figure(ages, true, np.stack(priv), x_name="age (days)",
                                title="Predicted rat-skull shapes, non-private vs private "
                                      f"(ε_p = ε_v = {c['eps']:g})")
    k = true.shape[1]
    space = KendallShape(k)
    pre_t = space.from_landmarks(true)
    dists = np.array([space.dist(pre_t, space.from_landmarks(p)) for p in priv])
    per_age = ", ".join(f"{a:g} d: {v:.3f}" for a, v in zip(ages, dists.mean(axis=0),
                                                            strict=True))
    spread = np.mean(space.dist(pre_t[1:], pre_t[:-1]))
    trend = bool(dists.mean(axis=0)[-1] > dists.mean(axis=0)[0])
    ours = (f"Kendall distance private ↔ non-private prediction (mean over {c['n_draws']} "
            f"draw(s)): {per_age}; for scale, consecutive non-private predictions are "
            f"{spread:.3f} apart.")
    comparison = [_row("002 fig. 3 (shapes at five ages)",
                       "Corpus-callosum shapes at ages 60–80: private (0.3, 0.3) predictions "
                       "align closely with the non-private ones",
                       ours,
                       "Rat skulls at 14, 30, 60, 90, 150 days instead of corpus callosa at 60–80 "
                       "years. The private predictions stay close to the non-private ones, "
                       + ("increasingly less so with age: the footpoint sits at the youngest "
                          "age (7 days) and the shooting-vector noise grows with the distance "
                          "from it." if trend else "as in the paper."))]
    protocol = (f"Non-private geodesic regression of the 144 rat skulls on age and "
                f"{c['n_draws']} private geodesic(s) at ε_p = ε_v = {c['eps']:g} (paper mode, "
                f"chains {bi} + {cl} steps), evaluated at ages "
                f"{', '.join(f'{a:g}' for a in ages)} days; shapes Procrustes-rotated to the "
                "non-private prediction at the first age.")
    return Section("p002_fig3", "Paper 002, fig. 3: predicted shapes", protocol, [fig],
                   {"shapes": shapes}, comparison, [])


def sec_p002_fig5(cfg, seed, n_jobs):
    c = cfg["fig5"]
    cl, bi = c["chain"]
    df = noise_spread_geodesics(noises=c["noises"], n=c["n"], totals=c["totals"],
                                rng=_seed(seed, "p002_fig5"), n_jobs=n_jobs, chain_length=cl,
                                burn_in=bi)
    coords = ["c0", "c1", "c2"]
    figs, notes = [], []
    for delta, part in df.groupby("noise"):
        data = part[part.kind == "data"]
        npv = part[part.kind == "nonprivate"]
        priv = part[part.kind == "private"]
        curves = [g[coords].to_numpy() for _, g in priv.groupby("epsilon")]
        figs.append(sphere_regression_figure(
            data[coords].to_numpy(), npv[coords].to_numpy(), curves,
            data_x=data["x"].to_numpy(), curve_x=npv["x"].to_numpy(),
            private_label="Private, ε", title=f"δ = {delta:g}: data, non-private and private "
            "geodesics (equal split)",
            subtitle="Private geodesics coloured by total budget, darkest = smallest ε"))
        m = priv.groupby("epsilon")["mse"].first()
        notes.append(f"δ={delta:g}: log MSE of the private geodesic {np.log(m.iloc[0]):.2f} at "
                     f"ε={m.index[0]:g} vs {np.log(m.iloc[-1]):.2f} at ε={m.index[-1]:g} "
                     f"(non-private {np.log(npv['mse'].iloc[0]):.2f})")
    comparison = [_row("002 fig. 5 (data spread, geodesics)",
                       "Low-budget private geodesics deviate further from the data, more so "
                       "for δ = 0.1 than δ = 0.01",
                       "; ".join(notes) + ".",
                       "One private geodesic per budget, as in the paper; with a single draw "
                       "per budget the ordering by ε is noisy, the trend is the same.")]
    protocol = (f"Sphere, n = {c['n']}, δ ∈ {{{', '.join(map(str, c['noises']))}}}; for each "
                "total budget of the equal split one private footpoint and one private vector "
                f"(paper mode, chains {bi} + {cl} steps).")
    return Section("p002_fig5", "Paper 002, fig. 5: data spread on the sphere (geodesics)",
                   protocol, figs, {"geodesics": df}, comparison, [])


def sec_p002_fig6(cfg, seed, n_jobs):
    c = cfg["fig6"]
    df = noise_spread_study(noises=c["noises"], n=c["n"], totals=c["totals"],
                            **_sweep_kwargs(c, _seed(seed, "p002_fig6"), n_jobs))
    series, refs, notes = {}, {}, []
    for delta, part in df.groupby("noise"):
        g = part.groupby("epsilon")["log_mse"]
        label = f"δ = {delta:g}"
        series[label] = (g.mean().index.to_numpy(), g.mean().to_numpy(),
                         g.sem().fillna(0).to_numpy())
        refs[label] = float(np.mean(np.log(part.groupby("replicate")["nonprivate_mse"].first())))
        notes.append(f"δ={delta:g}: {g.mean().iloc[0]:.2f} → {g.mean().iloc[-1]:.2f} "
                     f"(non-private {refs[label]:.2f})")
    fig = band_figure(series, reference=refs, reference_label="non-private",
                      x_title="total budget ε (ε_p = ε_v)",
                      title=f"Log MSE on the sphere, n = {c['n']}, by data spread δ")
    levels = [refs[k] for k in series]
    rising = all(a < b for a, b in zip(levels[:-1], levels[1:], strict=True))
    comparison = [_row("002 fig. 6 (data spread, log MSE)",
                       "Non-private log energy rises with δ; for each δ the private log MSE is "
                       "higher at smaller budgets",
                       "; ".join(notes) + ".",
                       ("Same trends: the non-private level rises with δ and each private curve "
                        "falls with ε." if rising else "The non-private level does not rise "
                        "monotonically with δ here.") + " Since τ (the largest residual) grows "
                       "with δ, so does the noise scale of both KNG steps; for δ ≥ 0.01 the "
                       "smallest budgets give log MSE ≈ 1.1, the error of random geodesics on "
                       "S² (in paper mode the shooting-vector density is improper on the sphere, "
                       "see fig. 1), so those curves start flat.")]
    protocol = (f"Sphere, n = {c['n']}, δ ∈ {{{', '.join(map(str, c['noises']))}}}, equal split; "
                f"{c['draws'][0]} × {c['draws'][1]} draws per budget, chains {c['chain'][1]} + "
                f"{c['chain'][0]}, {c['replicates']} replicate(s); paper mode.")
    return Section("p002_fig6", "Paper 002, fig. 6: data spread on the sphere (log MSE)",
                   protocol, [fig], {"sweep": df}, comparison, [])


def sec_p002_fig7(cfg, seed, n_jobs):
    c = cfg["fig7"]
    rng_u, rng_e = _seed(seed, "p002_fig7").spawn(2)
    data_rng = int(_seed(seed, "p002_fig7_data").generate_state(1)[0])
    kw = _sweep_kwargs(c, None, n_jobs)
    # Paper mode on SPD(2) lets footpoint chains drift to numerically singular matrices at
    # small eps_p; those releases are recorded as failures instead of stopping the report.
    unequal = recorded_budget_sweep(SPD(2), sample_sizes=c["sizes"], split="unequal",
                                    totals=[c["total"]], eps_p_grid=c["eps_p_grid"],
                                    **{**kw, "rng": rng_u}, data_rng=data_rng, nested=True)
    equal = recorded_budget_sweep(SPD(2), sample_sizes=c["sizes"], split="equal",
                                  totals=c["equal_totals"], **{**kw, "rng": rng_e},
                                  data_rng=data_rng, nested=True)
    n_failed = int(unequal["failed"].sum() + equal["failed"].sum())
    where = sorted({(float(r.eps_p), int(r.n)) for r in pd.concat([unequal, equal]).itertuples()
                    if r.failed})
    falls_u = F.log_mse_falls_with_n(unequal, tolerance=NOISE_Z)
    falls_e = F.log_mse_falls_with_n(equal, tolerance=NOISE_Z)
    approach = F.private_approaches_nonprivate(equal, tolerance=NOISE_Z)
    ours = _budget_summary(unequal, equal)
    diff = ("Private above non-private and improving with ε as in the paper. ")
    if not (falls_u.holds and falls_e.holds):
        diff += ("Unlike the paper, log MSE does not fall with n at every budget ("
                 + "; ".join(f.detail for f in (falls_u, falls_e) if not f.holds) + "): at "
                 "small budgets the κ_l < 0 sensitivity (2τ/n) cosh(2√½ (τ_m + τ)) is so large "
                 "that the chains wander as far as their length allows whatever n. ")
    if n_failed:
        diff += (f"{n_failed} of {len(unequal) + len(equal)} releases broke down numerically "
                 "(left out of the means; at (ε_p, n) = "
                 + ", ".join(f"({e:.3g}, {n})" for e, n in where) + "): in paper mode the "
                 "footpoint KNG on SPD(2) has no support restriction, so at small ε_p its "
                 "chains drift to matrices with eigenvalues near 0 and 1e10, where parallel "
                 "transport returns NaN (strict mode restricts the footpoint to "
                 "B_{τ_m + τ}(m0)). ")
    diff += (f"Fewer draws ({c['draws'][0]} × {c['draws'][1]}) and shorter chains than the "
             "paper's 10 × 10 to fit the time budget.")
    comparison = [_row("002 fig. 7 (SPD(2), n = 20/50/100)",
                       "Same parabola and decrease in ε as on the sphere; 20 > 50 > 100 at every "
                       "budget pair", ours, diff)]
    protocol = (
        "SPD(2) with the affine-invariant metric, paper protocol (app. F: random p, q, v = "
        "Log(p, q), tangent noise σ = 0.01), paper mode (τ, τ_m from the data; κ_l = −½ "
        f"sensitivities). n = {'/'.join(map(str, c['sizes']))}; unequal split of "
        f"ε = {c['total']:g} with ε_p ∈ {{{', '.join(f'{v:.3g}' for v in c['eps_p_grid'])}}}; "
        f"equal split ε ∈ {{{', '.join(f'{v:g}' for v in c['equal_totals'])}}}; "
        f"{c['draws'][0]} × {c['draws'][1]} draws, chains {c['chain'][1]} + {c['chain'][0]}, "
        f"{c['replicates']} replicate(s). The sizes are nested (the first n points of one "
        "dataset of the largest size), so they share the data geodesic: the κ_l < 0 "
        "sensitivity grows like cosh of the data's distance from I, which would otherwise "
        "differ more between datasets than between sizes.")
    return Section("p002_fig7", "Paper 002, fig. 7: budget splits on SPD(2)", protocol,
                   _budget_figures(unequal, equal, "SPD(2)", c["total"]),
                   {"unequal": unequal, "equal": equal}, comparison,
                   [F.Fact(falls_u.name + " (SPD, unequal)", falls_u.holds, falls_u.margin,
                           falls_u.unit, falls_u.detail),
                    F.Fact(approach.name + " (SPD)", approach.holds, approach.margin,
                           approach.unit, approach.detail)])


def sec_p002_fig8(cfg, seed, n_jobs):
    c = cfg["fig8"]
    cl, bi = c["chain"]
    df = spd_ellipses_study(n=c["n"], eps_p=c["eps"], eps_v=c["eps"],
                            n_covariates=c["n_covariates"], n_draws=c["n_draws"],
                            rng=_seed(seed, "p002_fig8"), chain_length=cl, burn_in=bi)

    def mats(kind, draw=0):
        p = df[(df.kind == kind) & (df.draw == draw)]
        return np.stack([[[a, b], [b, d]] for a, b, d in p[["s11", "s12", "s22"]].to_numpy()])

    xs = df[df.kind == "nonprivate"]["x"].to_numpy()
    true = mats("nonprivate")
    priv = np.stack([mats("private", d) for d in range(c["n_draws"])])
    fig = spd_ellipses_figure(xs, true, priv, generating_mats=mats("generating"),
                              title=f"SPD(2) predictions as ellipses (ε_p = ε_v = {c['eps']:g})")
    m = SPD(2)
    d = np.array([m.dist(true, p) for p in priv]).mean(axis=0)
    ours = ("Affine-invariant distance private ↔ non-private prediction at x = "
            + ", ".join(f"{x:.2g}: {v:.3f}" for x, v in zip(xs, d, strict=True)) + ".")
    comparison = [_row("002 fig. 8 (SPD(2) ellipses)",
                       "Private (0.2, 0.2) ellipses close to the non-private ones; the ellipse "
                       "view can mislead about Riemannian distances",
                       ours, "Same picture; we also draw the data-generating geodesic and give "
                             "the Riemannian distances, which the ellipse picture cannot show"
                             + ("; they grow along the covariate, away from the footpoint at "
                                "x = 0, as the shooting-vector noise accumulates."
                                if d[-1] > d[0] else "."))]
    protocol = (f"SPD(2), n = {c['n']}, appendix-F data; non-private fit and {c['n_draws']} "
                f"private geodesic(s) at ε_p = ε_v = {c['eps']:g} (paper mode, chains {bi} + "
                f"{cl}) at {c['n_covariates']} equally spaced covariates.")
    return Section("p002_fig8", "Paper 002, fig. 8: SPD(2) predictions as ellipses", protocol,
                   [fig], {"ellipses": df}, comparison, [])


def sec_p002_fig9_10(cfg, seed, n_jobs):
    c = cfg["fig9"]
    r1, r2 = _seed(seed, "p002_fig9").spawn(2)
    sphere = sensitivity_ratios(Sphere(2), sample_sizes=c["sizes"], pairs=c["pairs"], rng=r1,
                                n_jobs=n_jobs)
    spd = sensitivity_ratios(SPD(2), sample_sizes=c["sizes"], pairs=c["pairs"], rng=r2,
                             n_jobs=n_jobs)
    f_s, f_p = F.ratios_at_least_one(sphere, "S²"), F.ratios_at_least_one(spd, "SPD(2)")

    def desc(df):
        g = df.groupby(["parameter", "n"])["ratio"]
        return "; ".join(f"{p[0]} n={p[1]}: median {v:.2f}, min {m:.2f}"
                         for (p, v), m in zip(g.median().items(), g.min(), strict=True))

    comparison = [
        _row("002 fig. 9 (ratios, S²)", "All ratios ≥ 1, concentrated near 1 (20 pairs per n)",
             desc(sphere),
             "All ratios ≥ 1 as the theory demands, but typically 2–10 rather than near 1: the "
             "bound 2τ/n takes τ as the largest residual of all n + 1 points, while the "
             "empirical difference involves only the two swapped points, which rarely both "
             "carry the largest residual and point in opposite directions."),
        _row("002 fig. 10 (ratios, SPD(2))", "All ratios ≥ 1, close to 1",
             desc(spd),
             "All ratios ≥ 1, but far from 1 (tens to hundreds): the κ_l = −½ bound multiplies "
             "by cosh(2√½ (τ_m + τ)), with τ_m the radius of a ball about the footpoint holding "
             "the data (≈ the length of the data geodesic); the paper does not say which τ_m it "
             "used, and ratios near 1 are not possible with this bound."),
    ]
    protocol = (f"Paper 002 app. G: n + 1 points by the paper protocols (δ = 0.001 on S², "
                f"σ = 0.01 on SPD(2)), D drops the first, D' the last; gradients at the "
                f"non-private fit of D; τ = the largest residual over D ∪ D'; on SPD(2) "
                f"τ_m = max distance from the fitted footpoint to the data. "
                f"n = {'/'.join(map(str, c['sizes']))}, {c['pairs']} pairs each.")
    return Section("p002_fig9_10", "Paper 002, figs. 9–10: sensitivity ratios", protocol,
                   [sensitivity_ratios_figure(sphere, "Sensitivity ratios on S² (fig. 9)"),
                    sensitivity_ratios_figure(spd, "Sensitivity ratios on SPD(2) (fig. 10)")],
                   {"sphere": sphere, "spd": spd}, comparison, [f_s, f_p])


# ------------------------------------------------------------------------ paper 001
def _sensitivity_figure(df, title):
    g = df.groupby("n")
    return curves_figure(
        {"ρ(x̄, x̄') per pair": (df["n"].to_numpy(), df["empirical"].to_numpy()),
         "average": (g["empirical"].mean().index.to_numpy(), g["empirical"].mean().to_numpy()),
         "bound (Thm 2)": (g["bound"].first().index.to_numpy(), g["bound"].first().to_numpy())},
        styles={"ρ(x̄, x̄') per pair": {"mode": "markers"}, "bound (Thm 2)": {"dash": "dash"}},
        x_title="sample size n", y_title="distance between adjacent means", log_y=True,
        title=title)


def _utility_figure(df, title, error="euclidean_error", sd_mult=1.0,
                    x_col="n", x_title="sample size n"):
    names = {"laplace": "manifold Laplace", "ambient_laplace": "ambient Laplace",
             "gaussian": "Riemannian Gaussian (equal µ)", "kng": "KNG"}
    series = {}
    for mech, part in df.groupby("mechanism"):
        g = part.groupby(x_col)[error]
        series[names.get(mech, mech)] = (g.mean().index.to_numpy(), g.mean().to_numpy(),
                                         sd_mult * g.sem().to_numpy())
    return band_figure(series, x_title=x_title,
                       y_title=error.replace("_", " ").replace("error", "distance to x̄"),
                       title=title, subtitle=f"Mean ± {2 * sd_mult:g} SE over replicates",
                       log_y=True)


def sec_p001_fig1(cfg, seed, n_jobs):
    c = cfg["p001"]
    seeds = _seed(seed, "p001_fig1").spawn(6)
    eps = c["epsilon"]
    kc, kb = c["kng_chain"]
    setups = [("SPD(2)", SPD(2), 1.5), ("S²", Sphere(2), np.pi / 8)]
    figs, tables, facts, rows = [], {}, [], []
    for i, (label, m, radius) in enumerate(setups):
        key = "spd" if i == 0 else "sphere"
        sens = frechet_sensitivity_study(m, sample_sizes=c["sizes"], radius=radius,
                                         replicates=c["sens_replicates"], rng=seeds[3 * i],
                                         n_jobs=n_jobs)
        util = frechet_mean_study(m, sample_sizes=c["sizes"], epsilon=eps, radius=radius,
                                  replicates=c["replicates"],
                                  mechanisms=c["mechanisms"][key], rng=seeds[3 * i + 1],
                                  n_jobs=n_jobs)
        kng = frechet_mean_study(m, sample_sizes=c["sizes"], epsilon=eps, radius=radius,
                                 replicates=c["kng_replicates"], mechanisms=("kng",),
                                 rng=seeds[3 * i + 2], n_jobs=n_jobs, chain_length=kc,
                                 burn_in=kb)
        both = pd.concat([util, kng], ignore_index=True)
        tables[f"{key}_sensitivity"] = sens
        tables[f"{key}_utility"] = both
        figs.append(_sensitivity_figure(sens, f"{label}: Fréchet means of adjacent datasets "
                                              "vs the bound (panel {})".format(2 * i + 1)))
        figs.append(_utility_figure(both, f"{label}: private means at ε = {eps:g}, Euclidean "
                                          f"distance to x̄ (panel {2 * i + 2})"))
        figs.append(_utility_figure(both, f"{label}: geodesic distance to x̄ (ambient release "
                                          "projected back)", error="geodesic_error"))
        facts.append(F.ratios_at_least_one(sens, f"Fréchet mean, {label}"))
        big_n = [n for n in c["sizes"] if n >= 50]
        if i == 0:
            facts.append(F.mechanism_beats(util, "laplace", "ambient_laplace",
                                           error="euclidean_error", label="on SPD(2)"))
            facts.append(F.mechanism_beats(util, "laplace", "ambient_laplace",
                                           error="geodesic_error", label="on SPD(2)"))
        else:
            facts.append(F.mechanism_beats(util[util.n.isin(big_n)], "laplace",
                                           "ambient_laplace", error="euclidean_error",
                                           label="on S², n ≥ 50"))
            facts.append(F.mechanism_beats(util, "gaussian", "laplace", error="geodesic_error",
                                           label="on S² at equal µ"))
        g = util.groupby(["n", "mechanism"])
        eu = g["euclidean_error"].mean().unstack()
        ge = g["geodesic_error"].mean().unstack()
        geo_text = ", ".join(f"n={n}: {a:.3g} vs {b:.3g}" for n, a, b in
                             zip(ge.index, ge["laplace"], ge["ambient_laplace"], strict=True))
        left = g["left_manifold"].mean().unstack()["ambient_laplace"]
        red = 100 * (1 - eu["laplace"] / eu["ambient_laplace"])
        ours = ("Euclidean error manifold vs ambient Laplace: "
                + ", ".join(f"n={n}: {a:.3g} vs {b:.3g} ({r:+.0f}%)" for n, a, b, r in
                            zip(eu.index, eu["laplace"], eu["ambient_laplace"], red,
                                strict=True))
                + "; ambient off the manifold: "
                + ", ".join(f"n={n}: {100 * v:.0f}%" for n, v in left.items())
                + f"; empirical sensitivity / bound at most {1 / sens['ratio'].min():.2f}.")
        if i == 0:
            rows.append(_row(
                "001 fig. 1 panels 1–2 (P(2))",
                "Adjacent-mean distances below the Thm 2 bound; manifold Laplace much better "
                "than ambient (Euclidean distance); about 25% of ambient releases not positive "
                "definite at n = 20–40",
                ours,
                "Same conclusions. Our ambient baseline adds K-norm noise to the extrinsic mean "
                "with sensitivity 2 r_E/n, r_E = e^r − 1 (suppl. Prop. 1), in the Frobenius-"
                "isometric coordinates (off-diagonal × √2), and measures the distance to the "
                "Fréchet mean; the fraction leaving P(2) depends on n as shown."))
        else:
            rows.append(_row(
                "001 fig. 1 panels 3–4 (S², r = π/8)",
                "Adjacent-mean distances below the bound; manifold Laplace about 15% less "
                "noise than ambient (16.8% at small n, 12% at large n); ambient never on S²",
                ours,
                "The bound holds. The manifold advantage is not constant in n here: the "
                "Theorem 2 curvature factor (2 − h)/h = 1.55 at r = π/8 makes the manifold "
                "sensitivity 1.215/n against the ambient 0.78/n, so at n = 10 the two noise "
                "levels are equal (2σ vs 3σ_E), and the manifold wins at larger n only because "
                "the ambient release is centred on the extrinsic mean, which sits inside the "
                "sphere. After projecting the ambient release back onto S² (geodesic error: "
                f"manifold vs projected ambient {geo_text}) the ambient baseline is better at "
                "r = π/8. The paper's 15% matches h = 1, "
                "i.e. small radii (at r = π/32 the manifold wins by about 13% even after "
                "projection)."))
    protocol = (
        "Paper 001 §5: P(2) data Wishart(I/2, 2) kept within affine-invariant distance 1.5 of I; "
        "S² data with polar angle U(0, π/8) about the north pole. Panels 1 and 3: "
        f"{c['sens_replicates']} adjacent pairs per n (n + 1 points, drop first / last). "
        f"Panels 2 and 4: {c['replicates']} datasets per n, each mean released once by the "
        "manifold Laplace and the ambient Laplace (and on S² by the Riemannian Gaussian at "
        f"µ = eps_to_mu(ε); on P(2): {', '.join(c['mechanisms']['spd'])}), "
        f"and {c['kng_replicates']} by KNG (chains {kb} + {kc}); ε = {eps:g} (the paper does not "
        "state its ε); strict mode (the data lie in the public ball by construction). The extra "
        "figures show the geodesic error, where the ambient release is projected back.")
    return Section("p001_fig1", "Paper 001, fig. 1: Fréchet means on P(2) and S²", protocol,
                   figs, tables, rows, facts)


# ------------------------------------------------------------------------ paper 004
def sec_p004_fig1(cfg, seed, n_jobs):
    c = cfg["p004"]
    s1, s2, s3 = _seed(seed, "p004_fig1").spawn(3)
    mis = gdp_mu_curve(c["sigmas"], replicates=c["mc_replicates"], estimators=("mis",),
                       n_samples=c["n_samples"], n_eps=c["n_eps"], repeats=c["repeats"], rng=s1,
                       n_jobs=n_jobs)
    tails = gdp_mu_curve(c["sigmas"], replicates=c["tails_replicates"], estimators=("tails",),
                         n_samples=c["n_samples"], n_eps=c["n_eps"], repeats=c["repeats"],
                         rng=s2, n_jobs=n_jobs)
    mu_df = pd.concat([mis, tails[tails.method != "exact"]], ignore_index=True)

    def curve(space, method):
        p = mu_df[(mu_df.space == space) & (mu_df.method == method)]
        g = p.groupby("sigma")["mu"]
        mean = g.mean()
        err = (g.max() - g.min()).to_numpy() / 2 if p.replicate.max() > 0 else None
        return (mean.index.to_numpy(), mean.to_numpy(), err)

    figs = []
    for space, name in (("S1", "circle S¹"), ("R", "line R")):
        curves = {
            "Euclidean µ = Δ/σ": curve("R", "exact")[:2],
            "Monte Carlo, library estimator": curve(space, "monte_carlo_mis"),
            "Monte Carlo, paper's estimator": curve(space, "monte_carlo_tails"),
        }
        if space == "S1":
            curves = {"S¹ exact (Algorithm 1)": curve("S1", "exact")[:2], **curves}
        figs.append(curves_figure(curves, styles={"Euclidean µ = Δ/σ": {"dash": "dash"}},
                                  x_title="rate σ", y_title="µ", log_y=True,
                                  title=f"µ against σ on the {name} (Δ = 1)",
                                  subtitle="Error bars: half the range over Monte Carlo "
                                           "replicates"))
    # Panel 3: S², n = 10, Laplace vs Gaussian at equal µ over the paper's range of µ.
    n3 = c["panel3_n"]
    delta = frechet_mean_sensitivity(n3, np.pi / 8, 1.0, np.pi)
    mus = [delta / s for s in c["panel3_sigmas"]]
    epsilons = [float(mu_to_eps(mu)) for mu in mus]
    util = frechet_mean_study(Sphere(2), sample_sizes=[n3], epsilon=epsilons, radius=np.pi / 8,
                              replicates=c["panel3_replicates"],
                              mechanisms=("laplace", "gaussian"), rng=s3, n_jobs=n_jobs)
    series = {}
    for mech, part in util.groupby("mechanism"):
        g = part.groupby("mu")["geodesic_error"]
        series[{"laplace": "Riemannian Laplace", "gaussian": "Riemannian Gaussian"}[mech]] = (
            g.mean().index.to_numpy(), g.mean().to_numpy(), 2 * g.sem().to_numpy())
    figs.append(band_figure(series, x_title="privacy budget µ (GDP)",
                            y_title="geodesic distance d(x̄, private)",
                            title=f"S², n = {n3}: Gaussian vs Laplace at equal µ",
                            subtitle="Mean ± 4 SE over replicates (as in the paper)"))
    fact_mu = F.mu_circle_matches_inverse_sigma(mis)
    ex = mis[(mis.space == "S1") & (mis.method == "exact")].set_index("sigma")["mu"]
    mc = mu_df[mu_df.method.str.startswith("monte")].groupby(["space", "method", "sigma"])[
        "mu"].mean()
    small = min(c["sigmas"])
    over = {k: 100 * (mc[(sp, k, small)] / (1 / small if sp == "R" else ex[small]) - 1)
            for sp in ("S1", "R") for k in ("monte_carlo_mis", "monte_carlo_tails")
            if (sp, k, small) in mc.index}
    over_r = {k: 100 * (mc[("R", k, small)] * small - 1)
              for k in ("monte_carlo_tails", "monte_carlo_mis") if ("R", k, small) in mc.index}
    gm = util.groupby(["mu", "mechanism"])["geodesic_error"].mean().unstack()
    red = 100 * (1 - gm["gaussian"] / gm["laplace"])
    rows = [
        _row("004 fig. 1 panel 1 (µ on S¹)",
             "µ on S¹ equals 1/σ for small σ and falls below it for large σ; Algorithm 2 "
             "overestimates µ at small σ",
             f"µσ on S¹: {ex.iloc[0] * ex.index[0]:.4f} at σ={ex.index[0]:g}, "
             f"{ex.iloc[-1] * ex.index[-1]:.3f} at σ={ex.index[-1]:g}; Monte Carlo at "
             f"σ={small:g}: paper's estimator "
             f"{over.get('monte_carlo_tails', np.nan):+.1f}%, library's "
             f"{over.get('monte_carlo_mis', np.nan):+.1f}% vs exact",
             "Same shape. The paper's estimator (difference of tails on its ε grid) "
             "reproduces the overestimation at small σ; the library's importance-sampling "
             "estimator with its own ε grid removes most of it."),
        _row("004 fig. 1 panel 2 (µ on R)",
             "Monte Carlo close to 1/σ for larger σ, overestimating at small σ",
             f"Monte Carlo at σ={small:g} vs 1/σ: "
             + ", ".join(f"{'paper' if k.endswith('tails') else 'library'}'s estimator "
                         f"{v:+.1f}%" for k, v in over_r.items()),
             "Same as on S¹: the overestimation comes from the estimator, not the mechanism."),
        _row("004 fig. 1 panel 3 (S², Gaussian vs Laplace)",
             "Gaussian has smaller distance than Laplace at every µ, most at small µ",
             "Reduction of the mean distance by the Gaussian: "
             + ", ".join(f"µ={mu:.3g}: {r:.0f}%" for mu, r in red.items()),
             "We take µ = Δ/σ on the paper's σ grid, run the Laplace at ε = mu_to_eps(µ) and "
             "calibrate the Gaussian σ to µ with 3 Monte Carlo standard errors of margin (the "
             "paper estimates µ from σ instead). The Gaussian wins clearly at moderate µ; at "
             "the smallest µ both mechanisms are close to uniform on S² (mean distance → π/2 "
             "≈ 1.57) and the curves meet"
             + (", the conservatively calibrated Gaussian even marginally worse"
                if (red < 0).any() else f" (gain {red.iloc[0]:.0f}% at µ = {red.index[0]:.3g})")
             + ", whereas the paper shows the largest gain there."),
    ]
    protocol = (
        f"Panels 1–2: σ ∈ {{{', '.join(f'{s:g}' for s in c['sigmas'])}}}, Δ = 1; exact µ "
        f"(Algorithm 1 on S¹, Δ/σ on R); Monte Carlo (Algorithm 2, n = {c['n_samples']}, "
        f"n_ε = {c['n_eps']}, m = {c['repeats']}) {c['mc_replicates']}× with the library's "
        f"estimator and {c['tails_replicates']}× with the paper's (paper: 20×). Panel 3: S², "
        f"n = {n3} points in B(north pole, π/8), Δ = {delta:.4f}; µ = Δ/σ for σ ∈ "
        f"{{{', '.join(f'{s:g}' for s in c['panel3_sigmas'])}}}, ε = mu_to_eps(µ); "
        f"{c['panel3_replicates']} datasets per µ (paper: 1000).")
    return Section("p004_fig1", "Paper 004, fig. 1: Gaussian differential privacy", protocol,
                   figs, {"mu": mu_df, "sphere_utility": util}, rows, [fact_mu])


# ------------------------------------------------------------------------ Wine Quality
def sec_wine(cfg, seed, n_jobs):
    c = cfg["wine"]
    df = linear_regression_comparison(replicates=c["replicates"], rng=_seed(seed, "wine"),
                                      n_jobs=n_jobs)
    summary = summarize_linear_regression(df)
    x, y, _ = load_wine()
    fig = wine_fits_figure(df, x, y, list(WINE_RESPONSES))
    s = summary.set_index("method")

    def fmt(method):
        if method not in s.index or not np.isfinite(s.loc[method, "mse_mean"]):
            return "skipped"
        r = s.loc[method]
        if r["fits"] == 1:
            return f"{r['mse_mean']:.3f}"
        return f"mean {r['mse_mean']:.3f}, median {r['mse_median']:.3f}"

    ratio_paper = 7.856 / 0.954
    rows = [
        _row("000/003 table 1: non-DP LR", "0.873 (scikit-learn OLS)", fmt("ols"),
             "Not reproducible from the stated protocol: with quality as covariate and the four "
             "responses, OLS gives 0.744 in raw units (mean over all coordinates), 0.995 "
             "standardised with the analysed rows and 0.671 standardised with the other rows "
             "(our choice, see the protocol); the papers do not state their scaling."),
        _row("000/003 table 1: DPGR (ε = 2)", "0.954", f"strict: {fmt('dpgr_strict')}; paper "
             f"mode: {fmt('dpgr_paper')}",
             "Relative to its non-private level the paper's DPGR costs 9% (0.954 / 0.873); our "
             "strict-mode DPGR with public bounds costs about the same "
             f"({100 * (s.loc['dpgr_strict', 'mse_mean'] / s.loc['ols', 'mse_mean'] - 1):.0f}%"
             " on average), paper mode more because τ is taken from the data, which include a "
             "residual-sugar outlier."),
        _row("000/003 table 1: IBM diffprivlib (ε = 2)", "7.856", fmt("diffprivlib"),
             "Same order of magnitude and heavy tails (the mean is dominated by a few fits with "
             "huge noise on the slope); the paper's text says DPGR beats diffprivlib by "
             f"'approximately 85 times' while its own numbers give {ratio_paper:.1f} times."),
        _row("000/003 table 1: Opacus DP-SGD (ε = 2)", "0.982", fmt("opacus"),
             "Not run: Opacus needs PyTorch, which is not installed in this environment "
             "(optional extra in the issue)."),
    ]
    attrs = df.attrs
    protocol = (
        "First 100 rows of winequality-red.csv; responses fixed acidity, density, pH, residual "
        "sugar, each standardised with the mean and SD of rows 101–1599 (public reference data "
        "disjoint from the analysed rows; raw density varies by 10⁻³ and residual sugar by "
        "units, so unscaled MSE would only measure sugar); covariate: quality (column class). "
        "MSE = mean over the four responses of the mean squared residual (scikit-learn's "
        "convention). DPGR: Euclidean(4) geodesic regression, ε_p = ε_v = 1, exact K-norm "
        f"sampler, {c['replicates']} independent releases. Strict mode: public quality range "
        f"{tuple(attrs['covariate_range'])}, residuals clipped to τ = {attrs['tau']:g}, responses "
        f"projected onto the ball of radius τ_m = {attrs['tau_m']:g} (holds the cube "
        f"[−{attrs['response_bound']:g}, {attrs['response_bound']:g}]⁴), σ = 2Δ/ε. Paper mode: "
        "bounds from the data, σ = Δ/ε. diffprivlib LinearRegression(epsilon=2, bounds_X = "
        f"{tuple(attrs['covariate_range'])}, bounds_y = ±{attrs['response_bound']:g} per "
        "response), all four responses in one fit; "
        f"{c['replicates']} fits.")
    return Section("wine", "Papers 000 / 003, table 1: Wine Quality linear regression",
                   protocol, [fig], {"fits": df, "summary": summary}, rows, [])


SECTIONS = (
    ("p002_fig1", sec_p002_fig1),
    ("p002_fig2", sec_p002_fig2),
    ("p002_fig3", sec_p002_fig3),
    ("p002_fig5", sec_p002_fig5),
    ("p002_fig6", sec_p002_fig6),
    ("p002_fig7", sec_p002_fig7),
    ("p002_fig8", sec_p002_fig8),
    ("p002_fig9_10", sec_p002_fig9_10),
    ("p001_fig1", sec_p001_fig1),
    ("p004_fig1", sec_p004_fig1),
    ("wine", sec_wine),
)


# ------------------------------------------------------------------------ HTML
_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1150px;
margin:2em auto;padding:0 1em;color:#222;line-height:1.45}
h1{font-size:1.8em}h2{margin-top:2.2em;border-bottom:1px solid #ddd;padding-bottom:.2em}
table{border-collapse:collapse;margin:1em 0;font-size:.92em;width:100%}
th,td{border:1px solid #ccc;padding:.35em .5em;vertical-align:top;text-align:left}
th{background:#f3f3f3}.ok{color:#0a7a2f;font-weight:600}.no{color:#b00020;font-weight:600}
.protocol{background:#f8f8f8;border-left:3px solid #999;padding:.5em .8em}
.small{font-size:.85em;color:#555}
"""


def _table_html(rows, columns):
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = []
    for r in rows:
        cells = []
        for c in columns:
            v = r[c]
            if isinstance(v, bool | np.bool_):
                cells.append(f"<td class='{'ok' if v else 'no'}'>{'yes' if v else 'NO'}</td>")
            elif isinstance(v, float):
                cells.append(f"<td>{v:.3g}</td>")
            else:
                cells.append(f"<td>{html.escape(str(v))}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"


def _write_html(path, sections, config, seed, n_jobs, total_seconds):
    parts = []
    plotly_included = False
    comparison = [r for s in sections for r in s.comparison]
    facts = [f.as_row() for s in sections for f in s.facts]
    now = _dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    flag = " --quick" if config["name"] == "quick" else ""
    parts.append(f"<h1>Reproducing the papers with dpcore</h1><p class='small'>Generated {now} "
                 f"by <code>python -m dpcore.experiments.report{flag}</code>; configuration "
                 f"<b>{config['name']}</b>, seed {seed}, "
                 f"{n_jobs} job(s), dpcore {__version__}, total {total_seconds:.0f} s. "
                 "Every figure's numbers are in the CSV files beside this page.</p>")
    parts.append("<h2 id='summary'>Our numbers beside the papers'</h2>")
    parts.append(_table_html(comparison, ["figure", "paper", "ours", "difference"]))
    parts.append("<h2 id='facts'>Qualitative facts</h2><p>The papers' qualitative claims, "
                 "checked on this run (margins: the smallest amount by which the claim holds, "
                 "negative when it fails; see <code>dpcore.experiments.facts</code>). Trends "
                 f"over n and over ε count a step the wrong way as a failure only when it "
                 f"exceeds {NOISE_Z:g} standard errors of the replicates (smaller ones are "
                 "Monte Carlo noise and are listed in the detail); with one replicate every "
                 "step counts.</p>")
    parts.append(_table_html(facts, ["fact", "holds", "margin", "unit", "detail"]))
    parts.append("<h2 id='timings'>Timings</h2>")
    parts.append(_table_html([{"figure": s.key, "title": s.title, "seconds": s.seconds}
                              for s in sections], ["figure", "title", "seconds"]))
    for s in sections:
        parts.append(f"<h2 id='{s.key}'>{html.escape(s.title)}</h2>")
        parts.append(f"<p class='protocol'>{html.escape(s.protocol)}</p>")
        for fig in s.figures:
            parts.append(fig.to_html(full_html=False, include_plotlyjs=not plotly_included,
                                     config={"displaylogo": False}))
            plotly_included = True
        links = " · ".join(f"<a href='{s.key}_{name}.csv'>{s.key}_{name}.csv</a>"
                           for name in s.tables)
        parts.append(f"<p class='small'>Data: {links}. Time: {s.seconds:.1f} s.</p>")
        for r in s.comparison:
            parts.append(f"<p><b>Difference from the paper ({html.escape(r['figure'])}).</b> "
                         f"{html.escape(r['difference'])}</p>")
    doc = ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
           "<meta name='viewport' content='width=device-width, initial-scale=1'>"
           f"<title>dpcore: reproducing the papers</title><style>{_CSS}</style></head><body>"
           + "\n".join(parts) + "</body></html>")
    Path(path).write_text(doc, encoding="utf-8")


def build_report(out="reports", *, quick=False, seed=2024, n_jobs=None, only=None,
                 stream=None):
    """Run the studies and write ``<out>/index.html`` with CSVs beside it.

    Parameters
    ----------
    out : str or pathlib.Path
        Output directory (created if missing).
    quick : bool
        Use :data:`QUICK` instead of :data:`FULL`.
    seed : int
        Seed of the whole report; each section derives its own child from it and its key.
    n_jobs : int, optional
        joblib workers (default: the number of CPUs, at most 2).
    only : sequence of str, optional
        Keys of the sections to run (default all, see :data:`SECTIONS`).
    stream : file-like, optional
        Where per-figure timings are printed (default: standard output).

    Returns
    -------
    list of Section
    """
    config = QUICK if quick else FULL
    if stream is None:
        stream = sys.stdout
    if n_jobs is None:
        n_jobs = max(1, min(2, os.cpu_count() or 1))
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    chosen = [(k, f) for k, f in SECTIONS if only is None or k in set(only)]
    if only is not None and len(chosen) != len(set(only)):
        unknown = sorted(set(only) - {k for k, _ in SECTIONS})
        raise ValueError(f"Unknown section(s) {unknown}; choose from {[k for k, _ in SECTIONS]}.")
    sections = []
    start = time.perf_counter()
    print(f"[reproduce] configuration {config['name']}, seed {seed}, {n_jobs} job(s)",
          file=stream, flush=True)
    for key, func in chosen:
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            sec = func(config, seed, n_jobs)
        sec.seconds = time.perf_counter() - t0
        for name, table in sec.tables.items():
            table.to_csv(out / f"{key}_{name}.csv", index=False)
        sections.append(sec)
        print(f"[reproduce] {key:<13} {sec.seconds:7.1f} s  {sec.title}", file=stream,
              flush=True)
    total = time.perf_counter() - start
    pd.DataFrame([r for s in sections for r in s.comparison]).to_csv(out / "comparison.csv",
                                                                      index=False)
    pd.DataFrame([f.as_row() for s in sections for f in s.facts]).to_csv(out / "facts.csv",
                                                                         index=False)
    pd.DataFrame([{"figure": s.key, "seconds": round(s.seconds, 2)} for s in sections]).to_csv(
        out / "timings.csv", index=False)
    _write_html(out / "index.html", sections, config, seed, n_jobs, total)
    print(f"[reproduce] total         {total:7.1f} s  -> {out / 'index.html'}", file=stream,
          flush=True)
    failed = [f for s in sections for f in s.facts if not f.holds]
    for f in failed:
        print(f"[reproduce] fact does not hold: {f.name} ({f.detail})", file=stream, flush=True)
    return sections


def main(argv=None):
    """Command-line entry point (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m dpcore.experiments.report",
                                     description="Reproduce the papers' figures as an HTML "
                                                 "report.")
    parser.add_argument("--quick", action="store_true", help="small, fast configuration (CI)")
    parser.add_argument("--out", default="reports", help="output directory (default: reports)")
    parser.add_argument("--n-jobs", type=int, default=None, help="joblib workers (default 2)")
    parser.add_argument("--seed", type=int, default=2024, help="seed of the whole report")
    parser.add_argument("--only", default=None,
                        help="comma-separated section keys, e.g. p002_fig1,wine")
    parser.add_argument("--scheduler", default=os.environ.get("DPCORE_DASK_SCHEDULER"),
                        help="address of a running Dask scheduler (default: the environment "
                             "variable DPCORE_DASK_SCHEDULER); the sweeps' cells then run on "
                             "that cluster, with results identical to one process")
    args = parser.parse_args(argv)
    only = None if args.only is None else [s.strip() for s in args.only.split(",") if s.strip()]
    if not args.scheduler:
        build_report(args.out, quick=args.quick, seed=args.seed, n_jobs=args.n_jobs, only=only)
        return 0
    import joblib
    from dask.distributed import Client

    with Client(args.scheduler) as client, joblib.parallel_config(backend="dask"):
        workers = max(1, sum(client.nthreads().values()))
        print(f"[reproduce] Dask scheduler {args.scheduler}: {workers} worker thread(s)",
              flush=True)
        build_report(args.out, quick=args.quick, seed=args.seed,
                     n_jobs=args.n_jobs or workers, only=only)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
