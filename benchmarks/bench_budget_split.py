"""Budget split page: the default simulation's wall time and whether its chains mixed.

Rows, each the best of ``REPEATS`` cold runs of the page's chunks (``ui.logic.budget_split``,
no Streamlit cache; each chunk is one ``budget_sweep`` cell as the page runs it):

* ``old default (baseline)``: paper mode, n = 20, 50, 100, chains 80 + 80, unequal (7 splits
  of 2.02) and equal (5 totals 0.2 … 2) views — the page's default before issue 14 §6;
* ``default``: :class:`ui.logic.budget_split.SweepConfig` ``()`` with the page's two views
  (strict mode on S², n = 100, 200, chains 1000 + 1000).

``ratio`` is the time over the baseline's; ``flagged`` the cells whose worst split R-hat is above
1.05 or smallest ESS below 100 (``mixing_flags``), out of ``cells``.
"""

from __future__ import annotations

import time

import pandas as pd

REPEATS = 3


def _configs():
    from ui.logic import budget_split as B

    old = B.SweepConfig(mode="paper", tau=None, sample_sizes=(20, 50, 100), total=2.02,
                        n_unequal=7, equal_range=(0.2, 2.0), n_equal=5, chain_length=80,
                        burn_in=80, views=("unequal", "equal"), max_ratio=100.0)
    new = B.SweepConfig(views=("unequal", "equal"))
    return {"old default (baseline)": old, "default": new}


def _run(config):
    from ui.logic import budget_split as B

    start = time.perf_counter()
    df = pd.concat([B.run_chunk(config, v, n, r) for v, n, r in B.sweep_chunks(config)])
    return time.perf_counter() - start, df


def main():
    from ui.logic import budget_split as B

    rows = []
    for name, config in _configs().items():
        best, df = min((_run(config) for _ in range(REPEATS)), key=lambda t: t[0])
        rows.append({"scenario": name, "seconds": best, "cells": len(df),
                     "flagged": len(B.mixing_flags(df))})
    table = pd.DataFrame(rows)
    table["ratio"] = table["seconds"] / table["seconds"].iloc[0]
    return table.round(3)


if __name__ == "__main__":
    print(main().to_string())
