r"""Section of paper 004 (Gaussian differential privacy on manifolds): fig. 1, µ against σ on
S¹ and R, and the Gaussian against the Laplace mechanism at equal µ on S².
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...manifolds import Sphere
from ...privacy import mu_to_eps
from ...sensitivity import frechet_mean_sensitivity
from ...visualization import band_figure, curves_figure
from .. import facts as F
from ..studies.frechet import frechet_mean_study
from ..studies.gdp import gdp_mu_curve
from ._common import Section, _row, _seed

__all__ = ["sec_p004_fig1"]


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
