"""Exact joint KNG on S² at n = 250 (issue 28 point 1): the second-order Taylor-model
enclosure (dpcore.sampling.sphere_taylor) against the affine one (dpcore.sampling.sphere_affine)
that the whitened sampler (dpcore.sampling.bundle_whitened) used so far.

Data and σ as in bench_bundle_sampler.py (τ = 0.2, footpoint ball R = 0.5, |v| <= 1.5,
σ = 2Δ/ε, 9 draws). Times are process CPU seconds (the machine is shared).

Part 1, ``tightness``: 30 random boxes of the support (half-widths h, h, 3h, 3h), median of
the largest error radius over the six gradient components in units of σ at n·ε = 1000, the
per-term ideal (the true per-term second-order remainder, measured by sampling: no method that
bounds each term separately can beat it) and the CPU cost per box.

Part 2, ``samplers``: WhitenedBundleSampler with ``enclosure="affine"`` (before) and
``"taylor"`` (after), refinement capped at ``MAX_BOXES`` leaves, at n·ε = 250, 500, 1000:
leaves, build CPU s, certified acceptance (Laplace mass of the mode over the certified M: an
estimate), and when that predicts at most ``DRAW_LIMIT`` proposals for the 9 draws, their CPU
time and the measured acceptance. Run: ``python benchmarks/bench_bundle_taylor.py [part]``.
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np
import pandas as pd
from bench_bundle_sampler import CENTER, DRAWS, TAU, N, _data

from dpcore.sampling.bundle_lattice import BundleLattice
from dpcore.sampling.bundle_sampler import _gradient6
from dpcore.sampling.bundle_whitened import WhitenedBundleSampler
from dpcore.sampling.sphere_affine import enclose_gradient_parallelepiped
from dpcore.sampling.sphere_taylor import enclose_gradient_taylor, fold_quadratic

MAX_BOXES = 6000
DRAW_LIMIT = 3e6


def _sigma(n_eps):
    return 2.0 * math.hypot(2 * TAU / N, 2 * TAU / N) / (n_eps / N)


def _ideal_per_term(chart, t, y, c, hh, rng, samples=100):
    """Mean over terms of the largest per-term second-order remainder (sampled)."""
    def terms(z):
        return np.stack([_gradient6(chart, z, t[i:i + 1], y[i:i + 1], TAU)
                         for i in range(t.size)], axis=1)
    d = 1e-6
    g0 = terms(c)
    jac = np.stack([(terms(c + d * np.eye(4)[j]) - terms(c - d * np.eye(4)[j])) / (2 * d)
                    for j in range(4)], axis=-1)
    dev = np.zeros(g0.shape)
    for eps in rng.uniform(-1, 1, (samples, 4)):
        r = terms(c + eps * hh) - g0 - np.einsum("mnij,j->mni", jac, eps * hh)
        dev = np.maximum(dev, np.abs(r))
    return dev.mean(axis=1).max(axis=1)


def tightness(halves=(0.0125, 0.025, 0.05, 0.1), boxes=30, ideal_boxes=4):
    lattice = BundleLattice(CENTER, 0.5, 1.5)
    t, y = _data(lattice, np.random.default_rng(250))
    sigma = _sigma(1000.0)
    rng = np.random.default_rng(0)
    c = rng.uniform(-1, 1, (boxes, 4)) * np.array([0.4, 0.4, 1.3, 1.3])
    rows = []
    for h in halves:
        hh = np.array([h, h, 3 * h, 3 * h])
        basis = np.broadcast_to(np.diag(hh), (boxes, 4, 4)).copy()
        slack = np.zeros((boxes, 4))
        cpu = time.process_time()
        aff = enclose_gradient_parallelepiped(lattice.chart, c, basis, slack, t, y, TAU)
        t_aff = (time.process_time() - cpu) / boxes
        cpu = time.process_time()
        tay = enclose_gradient_taylor(lattice.chart, c, basis, slack, t, y, TAU)
        t_tay = (time.process_time() - cpu) / boxes
        _, _, err = fold_quadratic(tay)
        ideal = _ideal_per_term(lattice.chart, t, y, c[:ideal_boxes], hh, rng)
        rows.append({"h": h, "affine E/σ": round(np.median(aff.error.max(1)) / sigma, 1),
                     "taylor E/σ": round(np.median(err.max(1)) / sigma, 1),
                     "per-term ideal/σ": round(float(np.median(ideal)) / sigma, 1),
                     "affine ms/box": round(1e3 * t_aff, 2),
                     "taylor ms/box": round(1e3 * t_tay, 2)})
        print(rows[-1], flush=True)
    return pd.DataFrame(rows)


def run(enclosure, n_eps, lattice, t, y):
    sigma = _sigma(n_eps)
    cpu = time.process_time()
    sampler = WhitenedBundleSampler(t, y, TAU, sigma, lattice, draws=DRAWS,
                                    max_boxes=MAX_BOXES, enclosure=enclosure)
    row = {"enclosure": enclosure, "n·ε": n_eps, "boxes": sampler.diagnostics["boxes"],
           "build CPU s": round(time.process_time() - cpu, 1),
           "acceptance certified": f"{sampler.acceptance_estimate:.2g}"}
    if DRAWS / max(sampler.acceptance_estimate, 1e-300) <= DRAW_LIMIT:
        cpu = time.process_time()
        _, tried = sampler.sample_indices(DRAWS, np.random.default_rng(1))
        row.update({"draws CPU s": round(time.process_time() - cpu, 1),
                    "acceptance measured": f"{DRAWS / tried:.2g}"})
    else:
        row.update({"draws CPU s": "skipped", "acceptance measured": "-"})
    return row


def samplers(levels=(250.0, 500.0, 1000.0)):
    lattice = BundleLattice(CENTER, 0.5, 1.5)
    t, y = _data(lattice, np.random.default_rng(250))
    rows = []
    for n_eps in levels:
        for enclosure in ("affine", "taylor"):
            rows.append(run(enclosure, n_eps, lattice, t, y))
            print(rows[-1], flush=True)
    return pd.DataFrame(rows)


if __name__ == "__main__":
    parts = sys.argv[1:] or ["tightness", "samplers"]
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        for part in parts:
            print(globals()[part]().to_string(index=False))
