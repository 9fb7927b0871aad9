r"""Section of papers 000 / 003 (private linear regression): table 1 on the Wine Quality data,
DP geodesic regression against diffprivlib and Opacus.
"""

from __future__ import annotations

import numpy as np

from ...visualization.studies import wine_fits_figure
from ..studies.wine import (
    OPACUS_DELTA,
    OPACUS_SETTINGS,
    WINE_RESPONSES,
    linear_regression_comparison,
    load_wine,
    summarize_linear_regression,
)
from ._common import Section, _row, _seed

__all__ = ["sec_wine"]


def _opacus_difference(summary):
    """The sentence on the Opacus row: why ours differs from the paper's 0.982, or why not run."""
    if "opacus" not in summary.index or not np.isfinite(summary.loc["opacus", "mse_mean"]):
        note = summary.loc["opacus", "note"] if "opacus" in summary.index else "not requested"
        return f"Not run ({note})."
    ratio = summary.loc["opacus", "mse_mean"] / summary.loc["ols", "mse_mean"]
    return (f"DP-SGD costs {100 * (ratio - 1):.0f}% over OLS on average here. It is not the "
            f"same guarantee: (ε, δ) = (2, {OPACUS_DELTA:g}) approximate DP from Opacus's "
            "accountant, against pure ε = 2 for DPGR and diffprivlib; the papers state neither "
            "δ nor the DP-SGD settings, so ours (fixed in advance, not tuned on the data) may "
            "differ from theirs, and their 0.982 sits on a non-private level (0.873) that our "
            "scaling does not reproduce.")


def sec_wine(cfg, seed, n_jobs):
    c = cfg["wine"]
    df = linear_regression_comparison(replicates=c["replicates"], rng=_seed(seed, "wine"),
                                      opacus_replicates=c.get("opacus_replicates"),
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
             _opacus_difference(s)),
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
        f"{c['replicates']} fits. Opacus: DP-SGD at (ε, δ) = (2, {OPACUS_DELTA:g}), "
        f"{OPACUS_SETTINGS}; {c.get('opacus_replicates') or c['replicates']} fits (needs the "
        "optional extra `make opacus`).")
    return Section("wine", "Papers 000 / 003, table 1: Wine Quality linear regression",
                   protocol, [fig], {"fits": df, "summary": summary}, rows, [])
