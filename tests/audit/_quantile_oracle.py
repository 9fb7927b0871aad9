r"""Independent oracle for the audit of the exponential quantile mechanism (bounds under DP).

Written from the definition alone (Smith 2011; McSherry–Talwar), without importing
``dpcore.mechanisms``: for data ``x`` (n rows), a level ``q``, a budget ``ε`` and a public
interval ``[a, b]``, the output ``t ∈ [a, b]`` has density

    f_D(t) = exp(−ε |c_D(t) − q n| / 2) / Z_D,    c_D(t) = #{i : clip(x_i, a, b) < t},
    Z_D = ∫_a^b exp(−ε |c_D(t) − q n| / 2) dt.

Both ``f_D`` and ``f_D′`` of two data sets are constant on every cell between consecutive points
of the union of their (clipped) values and ``a``, ``b``; the oracle evaluates the count at each
cell's midpoint by counting directly, and integrates exactly as a sum of cell lengths times the
constant value. So sup_t |log f_D(t) − log f_D′(t)| is the maximum over cells, exactly.

A release of several levels draws them independently (each with its share of the budget): the
joint density is the product, the joint log-ratio the sum of the levels' log-ratios, and its law
the convolution of the levels' discrete laws over cells (:func:`joint_law`).
"""

from __future__ import annotations

import numpy as np


def cells(d, e, a, b):
    """Cell ends: the sorted union of ``a``, ``b`` and both data sets clipped to [a, b]."""
    d = np.clip(np.asarray(d, float), a, b)
    e = np.clip(np.asarray(e, float), a, b)
    return np.unique(np.concatenate([[a, b], d, e]))


def log_density_on_cells(x, q, eps, a, b, cuts):
    """log f_D on each cell of positive length of ``cuts`` and those cells' lengths."""
    x = np.clip(np.asarray(x, float), a, b)
    n = x.size
    lengths = np.diff(cuts)
    keep = lengths > 0
    mids = 0.5 * (cuts[:-1] + cuts[1:])[keep]
    count = np.sum(x[None, :] < mids[:, None], axis=1)
    log_unnorm = -0.5 * eps * np.abs(count - q * n)
    top = np.max(log_unnorm)
    log_z = top + np.log(np.sum(lengths[keep] * np.exp(log_unnorm - top)))
    return log_unnorm - log_z, lengths[keep]


def sup_log_ratio(d, e, q, eps, a, b):
    """sup_t |log f_D(t) − log f_D′(t)| for one level (exact: the maximum over cells)."""
    cuts = cells(d, e, a, b)
    ld, _ = log_density_on_cells(d, q, eps, a, b, cuts)
    le, _ = log_density_on_cells(e, q, eps, a, b, cuts)
    return float(np.max(np.abs(ld - le)))


def level_law(d, e, q, eps_claimed, eps_drawn, a, b):
    """One level's log-ratio statistic on the cells and the cells' probabilities.

    Returns
    -------
    stat : ndarray
        log f_D − log f_D′ at the claimed budget (the statistic the test computes).
    p_d, p_e : ndarray
        Probability of each cell under D and D′ at the budget the draws are made with
        (``eps_drawn``; equal to the claimed one for the correct mechanism).
    cuts : ndarray
        The cell ends (cells of length zero included; :func:`cell_index` maps draws to the
        cells of positive length).
    """
    cuts = cells(d, e, a, b)
    ld, _ = log_density_on_cells(d, q, eps_claimed, a, b, cuts)
    le, _ = log_density_on_cells(e, q, eps_claimed, a, b, cuts)
    ldt, lengths = log_density_on_cells(d, q, eps_drawn, a, b, cuts)
    let, _ = log_density_on_cells(e, q, eps_drawn, a, b, cuts)
    return ld - le, lengths * np.exp(ldt), lengths * np.exp(let), cuts


def cell_index(t, cuts):
    """Index of the cell of positive length holding each draw ``t`` (draws on a cell end, an
    event of probability zero, go to the cell on their right, or the last one)."""
    pos = np.flatnonzero(np.diff(cuts) > 0)
    lower = cuts[pos]
    return np.clip(np.searchsorted(lower, t, side="right") - 1, 0, pos.size - 1)


def joint_law(d, e, levels, eps_claimed, eps_drawn, a, b):
    """The joint log-ratio statistic of independent levels (each with its budget) as a discrete
    law: its values (one per combination of cells) and their probabilities under D and D′.

    ``eps_claimed`` / ``eps_drawn`` are the budgets of one level.
    """
    stat, p_d, p_e = np.zeros(1), np.ones(1), np.ones(1)
    for q in levels:
        s, pd, pe, _ = level_law(d, e, q, eps_claimed, eps_drawn, a, b)
        stat = np.add.outer(stat, s).ravel()
        p_d = np.outer(p_d, pd).ravel()
        p_e = np.outer(p_e, pe).ravel()
    return stat, p_d, p_e


def draw_statistic(draws, d, e, levels, eps_claimed, a, b):
    """The joint log-ratio statistic at draws of shape (N, m) (one column per level)."""
    total = np.zeros(draws.shape[0])
    for j, q in enumerate(levels):
        s, _, _, cuts = level_law(d, e, q, eps_claimed, eps_claimed, a, b)
        total += s[cell_index(draws[:, j], cuts)]
    return total


def discrete_thresholds(stat, p_d, p_e, n_draws, alpha_total, k=3):
    """Thresholds of the distinguishing events for a statistic with finitely many values,
    chosen from the oracle's law alone (before sampling).

    Candidates are the midpoints between consecutive distinct values of ``stat`` (so each is a
    different event): A_c = {stat > c} tested as P_D vs P_D′ and B_c = {stat < −c} as P_D′ vs
    P_D. Each direction keeps the ``k`` candidates whose events would have the largest
    certified log-ratio if the counts of ``n_draws`` draws were their expectations, at the
    Clopper–Pearson level the test uses (``alpha_total`` over 2k events, both bounds). The
    choice affects power only: the certification is valid for any events fixed in advance.
    """
    from ._oracle import cp_lower, cp_upper

    alpha = alpha_total / (2 * k) / 2.0
    out = []
    for s, pa, pb in ((stat, p_d, p_e), (-stat, p_e, p_d)):
        values = np.unique(s)
        cands = 0.5 * (values[:-1] + values[1:])
        cands = cands[cands >= 0.0]
        scores = []
        for c in cands:
            ka = int(round(n_draws * pa[s > c].sum()))
            kb = int(round(n_draws * pb[s > c].sum()))
            lo, hi = cp_lower(ka, n_draws, alpha), cp_upper(kb, n_draws, alpha)
            scores.append(np.log(lo / hi) if lo > 0 else -np.inf)
        out.append(sorted(float(c) for c in cands[np.argsort(scores)[::-1][:k]]))
    return out[0], out[1]
