"""How much of the energy-gap bound on SPD(2) survives its proof (issue 28 point 1).

The flat sampler's convexity bound g(z) >= (E(z) - E(z_fit)) / |z - z_fit| needs a convex
energy; on SPD(2) it is not (session 26 sampled it, unproven). :mod:`dpcore.sampling.
spd2_convexity` proves g(z) >= (E(z) - E(z_fit) - Delta) / rho along a path whose convexity
defect Delta depends only on the path. For uniform points of three supports (footpoint radius,
speed bound) and the Geodesic regression page's SPD(2) demonstration data (the data of
``bench_spd2_enclosure``, n = 250, tau = 0.175), this prints

* ``Delta / gap``: the defect against the energy gap (quantiles);
* ``proven / g`` and ``unproven / g``: the proven bound and the unproven (E(z) - E(z_fit)) /
  rho against the gradient norm g at the point (medians; the unproven one is the baseline);
* ``proven / unproven``: their ratio (median, q10), what the proof costs;
* ``proven / sigma``: the proven bound in units of the KNG scale at n eps = 500 (q10,
  median): a far-field leaf needs about 16 (docs/measurements.md, session 20);
* ``mus per point``: the cost of the bound (path and defect, numpy, batched).

A second table puts the leaf version (:func:`~dpcore.sampling.spd2_convexity.
leaf_gradient_bound`, over axis-aligned cubes of half-width h about uniform points of the page's
support) against the pointwise bound at the cube's centre: what a leaf of that size keeps.

``python -m benchmarks.bench_spd2_convexity [points]`` (about ten seconds).
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pandas as pd

from benchmarks.bench_spd2_enclosure import (
    SUPPORTS,
    TAU,
    TAU_M,
    N,
    page_data,
    uniform_support,
)
from dpcore.manifolds import SPD
from dpcore.release.asymptotic import joint_sigma
from dpcore.sampling.spd2_affine import residual_norm_range, response_enclosure
from dpcore.sampling.spd2_chart import SPD2Chart, clipped_fit, energy, frame_gradient, huber
from dpcore.sampling.spd2_convexity import (
    convexity_path,
    gradient_lower_bound,
    leaf_gradient_bound,
)

#: Half-widths of the cubes of the leaf table (chart coordinates).
LEAF_HALF_WIDTHS = (0.002, 0.02, 0.05, 0.1)


def rows(points, rng):
    t, y = page_data()
    chart = SPD2Chart(np.eye(2))
    ytil, logdet = chart.responses(y)
    fit = clipped_fit(t, ytil, logdet, TAU)
    e_fit = float(energy(fit[None], t, ytil, logdet, TAU)[0])
    pf, vf = (x[0] for x in chart.to_bundle(fit[None]))
    sigma = joint_sigma(SPD(2), N, 500.0 / N, TAU, TAU_M)
    out = []
    for radius, speed in SUPPORTS:
        z = uniform_support(rng, points, radius, speed)
        p, v = chart.to_bundle(z)
        start = time.process_time()
        path = convexity_path(p, v, np.broadcast_to(pf, p.shape), np.broadcast_to(vf, v.shape))
        defect, rho = path.defect(t, TAU), path.length
        cpu = (time.process_time() - start) / points
        gap = energy(z, t, ytil, logdet, TAU) - e_fit
        g = np.linalg.norm(frame_gradient(z, t, ytil, logdet, TAU), axis=1)
        proven = np.maximum(gap - defect, 0.0) / rho
        unproven = np.maximum(gap, 0.0) / rho
        keep = gap > 0
        ratio = proven[keep] / unproven[keep]
        out.append({
            "footpoint radius": radius, "speed bound": speed, "points": points,
            "bound <= g": f"{int(np.sum(proven <= g * (1 + 1e-9)))} of {points}",
            "Delta / gap (median)": float(np.median(defect[keep] / gap[keep])),
            "Delta / gap (q90)": float(np.quantile(defect[keep] / gap[keep], 0.9)),
            "unproven / g (median)": float(np.median(unproven / g)),
            "proven / g (median)": float(np.median(proven / g)),
            "proven / unproven (median)": float(np.median(ratio)),
            "proven / unproven (q10)": float(np.quantile(ratio, 0.1)),
            "proven / sigma (q10)": float(np.quantile(proven / sigma, 0.1)),
            "proven / sigma (median)": float(np.median(proven / sigma)),
            "mus per point": 1e6 * cpu,
        })
    return out, sigma


def leaf_rows(points, rng):
    t, y = page_data()
    chart = SPD2Chart(np.eye(2))
    ytil, logdet = chart.responses(y)
    ys = response_enclosure(chart.T, y)
    fit = clipped_fit(t, ytil, logdet, TAU)
    e_fit = float(energy(fit[None], t, ytil, logdet, TAU)[0])
    pf, vf = (x[0] for x in chart.to_bundle(fit[None]))
    zc = uniform_support(rng, points, *SUPPORTS[0])
    p, v = chart.to_bundle(zc)
    e_c = energy(zc, t, ytil, logdet, TAU)
    g_c = np.linalg.norm(frame_gradient(zc, t, ytil, logdet, TAU), axis=1)
    point = gradient_lower_bound(p, v, np.broadcast_to(pf, p.shape),
                                 np.broadcast_to(vf, v.shape), t, TAU, e_c, e_fit)
    keep = point > 0
    out = []
    for h in LEAF_HALF_WIDTHS:
        basis = np.broadcast_to(np.eye(6) * h, (points, 6, 6)).copy()
        slack = np.full((points, 6), 1e-15)
        start = time.process_time()
        lo, _ = residual_norm_range(zc, basis, slack, t, ys)
        e_lo = np.mean(huber(lo, TAU), axis=1)
        leaf = leaf_gradient_bound(chart, zc, basis, slack, fit, t, TAU, e_lo, e_fit,
                                   energy_center=e_c, gradient_center=g_c)
        cpu = (time.process_time() - start) / points
        out.append({"half-width h": h, "leaves": points,
                    "leaf / pointwise (median)": float(np.median(leaf[keep] / point[keep])),
                    "leaf / g (median)": float(np.median(leaf / g_c)),
                    "leaves with bound 0": f"{int(np.sum(leaf == 0))} of {points}",
                    "ms per leaf": 1e3 * cpu})
    return out


def main(points=2000):
    table, sigma = rows(int(points), np.random.default_rng(0))
    print(f"SPD(2), n = {N}, tau = {TAU}, page data; sigma at n eps = 500: {sigma:.3g}")
    print(pd.DataFrame(table).to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    print("Leaf version on cubes about uniform points of the page's support "
          f"{SUPPORTS[0]} (baseline: the pointwise bound at the centre)")
    print(pd.DataFrame(leaf_rows(int(points) // 4, np.random.default_rng(1))).to_string(
        index=False, float_format=lambda v: f"{v:.3g}"))


if __name__ == "__main__":
    main(*sys.argv[1:])
