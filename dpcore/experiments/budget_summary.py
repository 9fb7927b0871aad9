r"""Summaries of a budget sweep a stakeholder can decide with: errors in the data's units with
the replicates' range, where each cell's numbers come from, and which splits are good.

:func:`cell_summary` turns the rows of :func:`~dpcore.experiments.budget_sweep` (one per
replicate) into one row per cell: the root-mean-square geodesic distance of the private
geodesics to the responses, :math:`\sqrt{\bar{\mathcal E}}` times a unit ``scale`` (degrees
on the sphere), averaged over replicates with their minimum and maximum (the band), beside the
non-private fit's, with the cell's source (exact draws, the asymptotic law, Markov chains) and
flag. :func:`recommend_split` reads off the splits of one total within a tolerance of the best
unflagged split, and those to avoid; a flagged cell is never called best.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["AVOID_RATIO", "RHAT_MAX", "ESS_MIN", "TOLERANCE", "cell_summary",
           "recommend_split"]

#: Default tolerance: splits whose error is within this share of the best are "good".
TOLERANCE = 0.10
#: Splits whose error exceeds the best by this factor or more are to be avoided.
AVOID_RATIO = 1.25
#: Mixing thresholds of Markov-chain cells (paper mode): R-hat above or ESS below flags a cell.
RHAT_MAX = 1.05
ESS_MIN = 100


def _chain_flag(part):
    """The flag of a cell drawn by Markov chains: its worst R-hat and smallest ESS when they
    miss the thresholds, else ``""``."""
    if "rhat" not in part or not np.any(np.isfinite(part["rhat"])):
        return ""
    rhat, ess = float(np.nanmax(part["rhat"])), float(np.nanmin(part["ess"]))
    if rhat > RHAT_MAX or ess < ESS_MIN:
        return f"chains have not mixed (R-hat {rhat:.3g}, ESS {ess:.0f})"
    return ""


def cell_summary(df, scale=1.0):
    """One row per cell of a budget sweep: error in the data's unit over the replicates.

    Parameters
    ----------
    df : pandas.DataFrame
        Rows of :func:`~dpcore.experiments.budget_sweep` (any of its ``cells_from``), with an
        optional ``view`` column.
    scale : float
        Unit of the distance (e.g. ``180 / pi`` for degrees on the sphere).

    Returns
    -------
    pandas.DataFrame
        Columns ``view`` (if given), ``n``, ``scheme``, ``eps_p``, ``eps_v``, ``epsilon``,
        ``share`` (ε_p / ε, in %), ``rms`` (mean over replicates of each replicate's RMS
        error), ``rms_lo`` and ``rms_hi`` (their minimum and maximum: the band),
        ``nonprivate_rms`` (the non-private fit's, mean over replicates), ``replicates``,
        ``source`` (``"exact"``, ``"law"``, ``"mcmc"`` or ``"mixed"``) and ``flag`` (``""``,
        or why the cell's numbers are not trusted: the first replicate's reason).
    """
    d = df.copy()
    if "scheme" not in d:
        d["scheme"] = "sequential"
    if "source" not in d:
        d["source"] = "mcmc"
    if "flag" not in d:
        d["flag"] = ""
    d["rms"] = float(scale) * np.sqrt(d["mse"].to_numpy(dtype=float))
    d["np_rms"] = float(scale) * np.sqrt(d["nonprivate_mse"].to_numpy(dtype=float))
    by = [c for c in ("view", "n", "scheme", "eps_p", "eps_v") if c in d]
    rows = []
    for key, part in d.groupby(by, sort=True):
        sources = set(part["source"])
        flags = [f for f in part["flag"] if isinstance(f, str) and f]
        flag = flags[0] if flags else _chain_flag(part)
        if not flag and part["rms"].isna().any():
            flag = "no prediction in some replicate"
        values = part["rms"].to_numpy(dtype=float)
        finite = values[np.isfinite(values)]
        rows.append((*key, float(part["epsilon"].iloc[0]),
                     100.0 * float(part["eps_p"].iloc[0] / part["epsilon"].iloc[0]),
                     float(finite.mean()) if finite.size else np.nan,
                     float(finite.min()) if finite.size else np.nan,
                     float(finite.max()) if finite.size else np.nan,
                     float(part["np_rms"].mean()), len(part),
                     sources.pop() if len(sources) == 1 else "mixed", flag))
    return pd.DataFrame(rows, columns=[*by, "epsilon", "share", "rms", "rms_lo", "rms_hi",
                                       "nonprivate_rms", "replicates", "source", "flag"])


def recommend_split(summary, *, tolerance=TOLERANCE, avoid_ratio=AVOID_RATIO):
    """Which splits of one total are good, from :func:`cell_summary` rows of one sample size.

    Parameters
    ----------
    summary : pandas.DataFrame
        Rows of :func:`cell_summary` for one ``n`` (and view); only the sequential rows are
        splits, a joint row (one ε over (p, v), no split) is returned as ``joint``.
    tolerance : float
        A split is *good* when its error is at most ``(1 + tolerance)`` times the best.
    avoid_ratio : float
        A split is *to avoid* when its error is at least ``avoid_ratio`` times the best.

    Returns
    -------
    dict or None
        ``best`` (the row of the smallest error among unflagged splits), ``good``, ``avoid``
        and ``flagged`` (DataFrames of rows; flagged rows are in neither ``good`` nor
        ``avoid`` nor ``best``), ``joint`` (the joint row or None), ``tolerance`` and
        ``avoid_ratio``; None when no split is unflagged.
    """
    if not 0 <= tolerance < avoid_ratio - 1:
        raise ValueError(f"`tolerance` must lie in [0, avoid_ratio - 1), got {tolerance!r}.")
    seq = summary[summary["scheme"] == "sequential"]
    joint = summary[summary["scheme"] == "joint"]
    flagged = seq[(seq["flag"] != "") | ~np.isfinite(seq["rms"])]
    ok = seq.drop(flagged.index)
    if ok.empty:
        return None
    best = ok.loc[ok["rms"].idxmin()]
    return {
        "best": best,
        "good": ok[ok["rms"] <= (1.0 + tolerance) * best["rms"]],
        "avoid": ok[ok["rms"] >= avoid_ratio * best["rms"]],
        "flagged": flagged,
        "joint": joint.iloc[0] if len(joint) else None,
        "tolerance": float(tolerance),
        "avoid_ratio": float(avoid_ratio),
    }
