"""Exact joint KNG on S² at n = 250 (issue 28 point 1): where the certified bound of the two
box samplers puts its mass, and what they cost (wall and process CPU time; the machine may be
shared, so CPU time is the comparable figure).

Samplers: ``chart`` = dpcore.sampling.bundle_sampler.BundleKNGSampler (axis-aligned boxes of
the chart), ``whitened`` = dpcore.sampling.bundle_whitened.WhitenedBundleSampler (boxes of
x = T(z - z*), aligned with the mode's valley). Data and σ as in bench_bundle_sampler.py
(τ = 0.2, footpoint ball R = 0.5, |v| <= 1.5, σ = 2Δ/ε). Per row: leaves, build time, the
estimated acceptance (Laplace mass / certified M), the share of the certified envelope mass
by whitened distance |x|/σ of the leaf (near: < 16, mid: 16-64, far: >= 64), and, when the
estimate allows 9 draws in under ``DRAW_LIMIT`` proposals, the draws' time and acceptance.
Run: ``python benchmarks/bench_bundle_whitened.py [n·ε ...]`` (several minutes per row).
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np
import pandas as pd
from bench_bundle_sampler import CENTER, DRAWS, TAU, N, _data

from dpcore.sampling.bundle_lattice import BundleLattice
from dpcore.sampling.bundle_sampler import BundleKNGSampler
from dpcore.sampling.bundle_whitened import WhitenedBundleSampler

MAX_BOXES = 6000
DRAW_LIMIT = 3e6


def _shares(sampler, centres, sigma):
    env = sampler.b_1 > sampler.log_m1_target
    log_mass = np.where(env, sampler.b_e + sampler.log_vol, -np.inf)
    r = np.linalg.norm(centres, axis=1) / sigma
    mass = np.exp(log_mass - np.max(log_mass)) if np.any(env) else np.zeros_like(r)
    total = max(float(mass.sum()), 1e-300)
    return {f"share {name}": f"{mass[sel].sum() / total:.2g}"
            for name, sel in (("<16σ", r < 16), ("16-64σ", (r >= 16) & (r < 64)),
                              (">=64σ", r >= 64))}


def run(kind, n_eps, lattice, t, y):
    sigma = 2.0 * math.hypot(2 * TAU / N, 2 * TAU / N) / (n_eps / N)
    cls = WhitenedBundleSampler if kind == "whitened" else BundleKNGSampler
    wall, cpu = time.perf_counter(), time.process_time()
    sampler = cls(t, y, TAU, sigma, lattice, draws=DRAWS, max_boxes=MAX_BOXES)
    row = {"sampler": kind, "n·ε": n_eps, "boxes": sampler.diagnostics["boxes"],
           "build s": round(time.perf_counter() - wall, 1),
           "build CPU s": round(time.process_time() - cpu, 1),
           "acceptance (est.)": f"{sampler.acceptance_estimate:.2g}"}
    if kind == "whitened":
        lo, hi = sampler._x_box(sampler.lo_idx, sampler.lev)
        centres = 0.5 * (lo + hi)
    else:
        lat = sampler.lattice
        centres = (lat.origin + lat.spacing * (sampler.lo_idx + 0.5 * sampler.size)
                   - sampler.fit) @ sampler.H.T
    row.update(_shares(sampler, centres, sigma))
    if DRAWS / max(sampler.acceptance_estimate, 1e-300) <= DRAW_LIMIT:
        wall, cpu = time.perf_counter(), time.process_time()
        _, tried = sampler.sample_indices(DRAWS, np.random.default_rng(1))
        row.update({"draws s": round(time.perf_counter() - wall, 1),
                    "draws CPU s": round(time.process_time() - cpu, 1),
                    "acceptance": f"{DRAWS / tried:.2g}"})
    return row


def main(levels=(250.0, 500.0, 1000.0)):
    lattice = BundleLattice(CENTER, 0.5, 1.5)
    t, y = _data(lattice, np.random.default_rng(250))
    rows = []
    for n_eps in levels:
        for kind in ("chart", "whitened"):
            rows.append(run(kind, n_eps, lattice, t, y))
            print(rows[-1], flush=True)
    return pd.DataFrame(rows)


if __name__ == "__main__":
    args = tuple(float(a) for a in sys.argv[1:]) or (250.0, 500.0, 1000.0)
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(main(args).to_string(index=False))
