r"""Section of paper 001 (the Riemannian Laplace mechanism for Fréchet means): fig. 1, the
sensitivity bound and the utility of the mechanisms on P(2) and S².
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...manifolds import SPD, Sphere
from ...visualization import band_figure, curves_figure
from .. import facts as F
from .._parallel import run_plans
from ..studies.frechet import _frechet_mean_plan
from ..studies.sensitivity import _frechet_sensitivity_plan
from ._common import Section, _row, _seed

__all__ = ["sec_p001_fig1"]


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
    # The six studies (two manifolds x sensitivity, utility, KNG) run as plans advanced
    # together: their jobs share each parallel call (no barrier between studies, the long σ
    # calibrations dispatched first); every job keeps its own seed, so the tables are those of
    # running the studies one after the other.
    plans = []
    for i, (_, m, radius) in enumerate(setups):
        key = "spd" if i == 0 else "sphere"
        plans += [
            _frechet_sensitivity_plan(m, sample_sizes=c["sizes"], radius=radius,
                                      replicates=c["sens_replicates"], rng=seeds[3 * i]),
            _frechet_mean_plan(m, sample_sizes=c["sizes"], epsilon=eps, radius=radius,
                               replicates=c["replicates"], mechanisms=c["mechanisms"][key],
                               rng=seeds[3 * i + 1]),
            _frechet_mean_plan(m, sample_sizes=c["sizes"], epsilon=eps, radius=radius,
                               replicates=c["kng_replicates"], mechanisms=("kng",),
                               rng=seeds[3 * i + 2], chain_length=kc, burn_in=kb),
        ]
    studies = run_plans(plans, n_jobs)
    for i, (label, _, _) in enumerate(setups):
        key = "spd" if i == 0 else "sphere"
        sens, util, kng = studies[3 * i:3 * i + 3]
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
