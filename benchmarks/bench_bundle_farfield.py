"""Exact joint KNG on S² at n = 250 (issue 28 point 1): the far-field mean-value certificate
(dpcore.sampling.bundle_farfield) against the whitened affine sampler
(dpcore.sampling.bundle_whitened), measured in the same run.

Data and σ as in bench_bundle_sampler.py (τ = 0.2, covariates on (0, 1), footpoint ball
R = 0.5, |v| <= 1.5, σ = 2Δ/ε, 9 draws). Per row: leaves, build CPU seconds (process time; the
machine may be shared), certified acceptance (Laplace mass of the mode over the certified M:
an estimate of the acceptance the certificate allows), its ratio to the whitened sampler's at
the same n·ε (measured in the same run), and the share of the certified envelope mass by
whitened distance |x|/σ of the leaf's centre. The far-field sampler refines until its
certified acceptance reaches ``GOAL`` or it has ``FARFIELD_BOXES`` leaves (defaults:
``near_sigmas`` = 0, no affine certificate; the Gauss-Newton split bound on). When the estimate
allows 9 draws in at most ``DRAW_LIMIT`` proposals they are drawn and timed (an envelope
violation would raise). One command measures n·ε = 250, 500 and 1000:
``python -m benchmarks.bench_bundle_farfield [n·ε ...] [--no-reference]``.
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np
import pandas as pd

from dpcore.sampling.bundle_farfield import FarFieldBundleSampler, leaf_geometry, leaf_losses
from dpcore.sampling.bundle_lattice import BundleLattice
from dpcore.sampling.bundle_whitened import WhitenedBundleSampler

try:
    from bench_bundle_sampler import CENTER, DRAWS, TAU, N, _data
except ImportError:  # run as a module from the repository root
    from benchmarks.bench_bundle_sampler import CENTER, DRAWS, TAU, N, _data

#: Leaves of the whitened (reference) sampler, as in bench_bundle_whitened.py.
WHITENED_BOXES = 6000
#: Largest number of leaves of the far-field sampler (each is much cheaper to certify).
FARFIELD_BOXES = 300_000
#: Certified acceptance at which the far-field refinement stops (chosen for the total of the
#: build and the 9 draws: each tenfold of acceptance costs about a fifth more leaves here,
#: while 9 draws at 2e-4 take about 1-2 CPU s).
GOAL = 2e-4
DRAW_LIMIT = 3e6
SHELLS = ((0, 16), (16, 64), (64, 256), (256, 1024), (1024, math.inf))


def _shares(sampler, sigma):
    env = sampler.b_1 > sampler.log_m1_target
    log_mass = np.where(env, sampler.b_e + sampler.log_vol, -np.inf)
    lo, hi = sampler._x_box(sampler.lo_idx, sampler.lev)
    r = np.linalg.norm(0.5 * (lo + hi), axis=1) / sigma
    mass = np.exp(log_mass - np.max(log_mass)) if np.any(env) else np.zeros_like(r)
    total = max(float(mass.sum()), 1e-300)
    return {f"{a}-{b}σ": f"{mass[(r >= a) & (r < b)].sum() / total:.2g}" for a, b in SHELLS}


def run(kind, n_eps, lattice, t, y):
    """One sampler at one n·ε: a dict of the table's columns."""
    sigma = 2.0 * math.hypot(2 * TAU / N, 2 * TAU / N) / (n_eps / N)
    cpu = time.process_time()
    if kind == "whitened":
        sampler = WhitenedBundleSampler(t, y, TAU, sigma, lattice, draws=DRAWS,
                                        max_boxes=WHITENED_BOXES)
    else:
        sampler = FarFieldBundleSampler(t, y, TAU, sigma, lattice, draws=DRAWS,
                                        max_boxes=FARFIELD_BOXES, box_cost=0.0,
                                        acceptance_goal=GOAL)
    row = {"sampler": kind, "n·ε": n_eps, "boxes": sampler.diagnostics["boxes"],
           "build CPU s": round(time.process_time() - cpu, 1),
           "acceptance": sampler.acceptance_estimate}
    row.update(_shares(sampler, sigma))
    if DRAWS / max(sampler.acceptance_estimate, 1e-300) <= DRAW_LIMIT:
        cpu = time.process_time()
        _, tried = sampler.sample_indices(DRAWS, np.random.default_rng(1))
        row.update({"draws CPU s": round(time.process_time() - cpu, 1),
                    "measured acc.": f"{DRAWS / tried:.2g}",
                    "total CPU s": round(row["build CPU s"] + time.process_time() - cpu, 1)})
    return row


def _warm_up(lattice, t, y):
    """Load (or compile, on a fresh install) the numba kernels outside the timings."""
    zc = np.array([[0.1, -0.1, 0.8, 0.5]])
    geo = leaf_geometry(zc, 1e-3 * np.eye(4)[None], np.zeros((1, 4)))
    leaf_losses(lattice.chart, zc, geo, t, y, TAU, with_gradient=True, split=True)


def main(levels=(250.0, 500.0, 1000.0), reference=True):
    lattice = BundleLattice(CENTER, 0.5, 1.5)
    t, y = _data(lattice, np.random.default_rng(250))
    _warm_up(lattice, t, y)
    rows = []
    for n_eps in levels:
        ref = run("whitened", n_eps, lattice, t, y) if reference else None
        new = run("farfield", n_eps, lattice, t, y)
        if ref is not None:
            new["vs whitened"] = f"{new['acceptance'] / max(ref['acceptance'], 1e-300):.3g}x"
        for row in (ref, new) if ref is not None else (new,):
            row["acceptance"] = f"{row['acceptance']:.2g}"
            rows.append(row)
            print(row, flush=True)
    return pd.DataFrame(rows)


if __name__ == "__main__":
    # ``--no-reference``: skip the whitened sampler (about 15 CPU s per level)
    args = tuple(float(a) for a in sys.argv[1:] if not a.startswith("--")) or (
        250.0, 500.0, 1000.0)
    with pd.option_context("display.width", 220, "display.max_columns", 20):
        print(main(args, "--no-reference" not in sys.argv).to_string(index=False))
