"""Geodesic regression page: is each manifold's default release useful (issue 14, point 1)?

For every manifold the page's default scenario (:func:`ui.logic.geodesic_regression.
demo_settings`, its synthetic data :func:`~ui.logic.geodesic_regression.synthetic_dataset` at
:func:`~ui.logic.geodesic_regression.default_n` and ``default_noise``) is released on
``SEEDS`` data seeds, each with its own release seed, exactly as the page does (strict joint
KNG, 3 x 3 draws, sampler "auto"). Per seed the page's verdict
(:func:`~ui.logic.geodesic_regression.usefulness`) takes the median draw's MSE over the
non-private MSE; the table gives, over the data seeds:

* ``median ratio`` and ``useful`` (seeds whose median draw is within 5x), ``min`` / ``max``;
* ``support only``: the same ratio for a release at ε = 1e-9, i.e. a uniform draw on the
  public support (footpoint region x speed ball): what the public design alone gives, with no
  use of the data. A default demonstrates something true when ``median ratio`` is useful and
  ``support only`` is not (the data, not the design, make the release useful);
* ``label`` (all seeds' labels: "private" for the exact sampler), ``s/release`` (mean wall
  time of one release; the machine may be shared) and ``warned`` (seeds where the page's
  preview of the data against the public bounds shows a warning).

``python -m benchmarks.bench_defaults --before`` adds the defaults before issue 14's
measurement (SPD(2) at n = 20, noise 0.01, τ = 0.1, τ_m = 1.5 without region or speed bound;
Kendall with k = 8 landmarks); ``--seeds N`` changes the number of data seeds.

``--budget-split`` prints instead the Budget split page's strict default simulation
(:class:`ui.logic.budget_split.SweepConfig` with the page's per-manifold τ, τ_m and
parameter; unequal and equal views) on S², SPD(2) and Kendall: over its cells, the private
RMS error over the non-private one (median and largest) and the cells whose chains did not
mix. A flat ratio far above 1 is the "flat noise" the page explains for SPD(2).
"""

from __future__ import annotations

import argparse
import time
import warnings
from dataclasses import replace

import numpy as np
import pandas as pd

SEEDS = 12
KINDS = ("euclidean", "sphere", "spd", "kendall")


def _scenarios(before=False):
    """``name -> (settings, n, noise, dataset(seed))`` for the page's defaults (and, with
    ``before``, the defaults before this measurement)."""
    from ui.logic import geodesic_regression as G
    from ui.logic import regression_data as D

    out = {}
    for kind in KINDS:
        st = G.demo_settings(kind)
        n, noise = G.default_n(kind), G.default_noise(kind, D.default_noise(kind))
        out[f"{kind} (default)"] = (st, n, noise,
                                    lambda seed, k=kind, p=st.param, n=n, z=noise:
                                    G.synthetic_dataset(k, p, n, z, seed))
    if before:
        spd = replace(G.demo_settings("spd"), tau=0.1, tau_m=1.5, max_speed=None,
                      footpoint_radius=None)
        out["spd (before)"] = (spd, 20, 0.01, lambda seed: D.synthetic_dataset(
            "spd", None, 20, 0.01, seed))
        kendall = replace(G.demo_settings("kendall"), param=8)
        out["kendall k=8 (before)"] = (kendall, 20, 0.05, lambda seed: D.synthetic_dataset(
            "kendall", 8, 20, 0.05, seed))
    return out


def _ratio(settings, dataset, fit):
    """The page's verdict ratio (median draw / non-private MSE) of one release, its label and
    its wall time."""
    from ui.logic import geodesic_regression as G

    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        release, _ = G.run_release(settings, dataset)
    seconds = time.perf_counter() - start
    metrics = G.release_metrics(settings.manifold, dataset, release, fit)
    verdict = G.usefulness(metrics, dataset.n, settings.eps_p + settings.eps_v)
    return verdict["ratio"], release.label.split(" ")[0], seconds


def measure(settings, n, make_data, seeds=SEEDS):
    """One row of the table: the scenario over ``seeds`` data seeds (release seed
    ``1000 + seed``)."""
    from ui.logic import geodesic_regression as G

    ratios, support, labels, seconds, warned = [], [], set(), [], 0
    for seed in range(int(seeds)):
        data = make_data(seed)
        fit = G.fit_nonprivate(settings.kind, settings.param, data.x, data.y, (0.0, 1.0))
        st = replace(settings, seed=1000 + seed)
        ratio, label, secs = _ratio(st, data, fit)
        ratios.append(ratio)
        labels.add(label)
        seconds.append(secs)
        uniform = replace(st, eps_p=1e-9 * st.eps_p, eps_v=1e-9 * st.eps_v, sampler="exact")
        support.append(_ratio(uniform, data, fit)[0])
        warned += any(row["warn"] for row in G.clipping_preview(st, data, fit))
    ratios = np.asarray(ratios, dtype=float)
    return {"n": n, "n·ε": n * (settings.eps_p + settings.eps_v),
            "median ratio": float(np.median(ratios)),
            "useful": f"{int(np.sum(ratios <= G.USEFUL_RATIO))}/{ratios.size}",
            "min": float(ratios.min()), "max": float(ratios.max()),
            "support only": float(np.median(support)), "label": "/".join(sorted(labels)),
            "s/release": float(np.mean(seconds)), "warned": f"{warned}/{ratios.size}"}


def budget_split_table():
    """The Budget split page's strict default simulation per manifold (see the module
    docstring)."""
    from ui import manifolds as M
    from ui.logic import budget_split as B
    from ui.logic import regression_data as D

    rows = []
    for kind in ("sphere", "spd", "kendall"):
        param = D.PARAM_RANGE[kind][2] if kind in D.PARAM_RANGE else None
        config = B.SweepConfig(kind=kind, param=param, tau=M.spec(kind).tau,
                               tau_m=M.spec(kind).tau_m, views=("unequal", "equal"))
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            df = pd.concat([B.view_sweep(config, view) for view in config.views])
        ratio = np.sqrt(df["mse"] / df["nonprivate_mse"])
        rows.append({"manifold": kind if param is None else f"{kind} k={param}",
                     "cells": len(df), "median RMS ratio": float(np.median(ratio)),
                     "largest RMS ratio": float(ratio.max()),
                     "unmixed cells": len(B.mixing_flags(df)),
                     "seconds": time.perf_counter() - start})
    return pd.DataFrame(rows).set_index("manifold").round(3)


def main(before=False, seeds=SEEDS):
    rows = []
    for name, (settings, n, _noise, make_data) in _scenarios(before).items():
        rows.append({"scenario": name, **measure(settings, n, make_data, seeds)})
    return pd.DataFrame(rows).set_index("scenario").round(3)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", action="store_true",
                        help="also measure the defaults before issue 14's measurement")
    parser.add_argument("--seeds", type=int, default=SEEDS, help="data seeds per scenario")
    parser.add_argument("--budget-split", action="store_true",
                        help="measure the Budget split page's strict defaults instead")
    args = parser.parse_args()
    if args.budget_split:
        print(budget_split_table().to_string())
    else:
        print(main(before=args.before, seeds=args.seeds).to_string())
