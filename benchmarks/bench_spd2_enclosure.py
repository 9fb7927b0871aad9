"""How tight the affine enclosure of the SPD(2) joint-regression gradient is (issue 28,
research measurement for an exact SPD(2) sampler at large n·ε): over parallelepipeds of the
chart of ``dpcore.sampling.spd2_chart`` about the clipped fit, the enclosure's remainder bound
|E| against the remainder actually met, max |G(z) − G(z_c) − DG(z_c)(z − z_c)| over sampled
points of the leaf (DG by central differences), and the seconds per leaf.

Data: the Geodesic regression page's SPD(2) demonstration (``make_regression_data`` with the
page's footpoint region about I, speed 0.5, noise 0.05), n = 250, τ = 0.175; leaves are cubes of
half-width h in each chart coordinate, centred at the fit plus a random offset of 0-4 h.
σ at n·ε = 500 (the issue's target) is printed for scale: a leaf near the fit is useful when
its remainder bound is below about σ.

A second table asks whether the energy E is convex along straight chart lines from uniform
points of the support to the fit (what the flat sampler's convexity bound needs, sampled, not
proven): the smallest slope ratio −(E∘c)'(0) / (E(z) − E(z*)) (at least 1 where E is convex
along the line c) and the share of lines with a negative second difference, on the page's
support (footpoints within 0.1 of I, speeds up to 0.55) and on wider ones; and, between random
pairs of support points, how many (line, term) pairs have a distance r_i concave somewhere
(a proof of the energy's convexity cannot go term by term where there are any).

``python -m benchmarks.bench_spd2_enclosure [leaves] [lines]`` (about a minute).
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pandas as pd

from dpcore.data import make_regression_data
from dpcore.manifolds import SPD
from dpcore.release.asymptotic import joint_sigma
from dpcore.sampling.spd2_affine import enclose_spd2_gradient, response_enclosure
from dpcore.sampling.spd2_chart import (
    SPD2Chart,
    clipped_fit,
    energy,
    frame_gradient,
    gradient_jacobian,
    residual_norms,
)

SPD2 = SPD(2)
N, TAU, TAU_M = 250, 0.175, 0.8
HALF_WIDTHS = (1e-3, 3e-3, 1e-2, 3e-2)
SAMPLES = 24


def page_data(seed=0):
    data = make_regression_data(SPD2, N, noise=0.05, rng=seed,
                                footpoint_region=(np.eye(2), 0.1))
    return np.asarray(data.x, float), np.asarray(data.y, float)


#: (footpoint radius, speed bound) of the supports of the convexity table.
SUPPORTS = ((0.1, 0.55), (0.5, 1.0), (1.0, 2.0))
PATH = np.linspace(0.0, 1.0, 201)


def uniform_support(rng, m, radius, speed):
    """``m`` uniform points of the product of the two balls (chart coordinates)."""
    u = rng.normal(size=(m, 6))
    for cols, r in ((slice(0, 3), radius), (slice(3, 6), speed)):
        u[:, cols] *= (r * rng.uniform(0, 1, m) ** (1 / 3)
                       / np.linalg.norm(u[:, cols], axis=1))[:, None]
    return u


def convexity_rows(t, ytil, logdet, z_fit, lines, rng):
    rows = []
    e_fit = float(energy(z_fit, t, ytil, logdet, TAU)[0])
    step = PATH[1] - PATH[0]
    for radius, speed in SUPPORTS:
        ratios, concave = [], 0
        for z in uniform_support(rng, lines, radius, speed):
            e = energy(z[None] + PATH[:, None] * (z_fit - z)[None], t, ytil, logdet, TAU)
            gap = e[0] - e_fit
            if gap <= 1e-12:
                continue
            ratios.append(-(e[1] - e[0]) / step / gap)
            concave += bool(np.any(np.diff(e, 2) < -1e-12 * np.abs(e[1:-1])))
        pairs, worst = 0, 0.0
        ends = uniform_support(rng, 2 * lines, radius, speed)
        for a, b in zip(ends[:lines], ends[lines:], strict=True):
            r = residual_norms(a[None] + PATH[:, None] * (b - a)[None], t, ytil, logdet)
            d2 = np.diff(r, 2, axis=0) / step**2 / np.maximum(r[1:-1], 1e-12)
            pairs += int(np.sum(np.any(d2 < -1e-9, axis=0)))
            worst = min(worst, float(np.min(d2)))
        rows.append({"footpoint radius": radius, "speed bound": speed, "lines": len(ratios),
                     "slope / gap (min)": float(np.min(ratios)),
                     "slope / gap (median)": float(np.median(ratios)),
                     "lines with a concave stretch": concave,
                     "concave (line, term) pairs": f"{pairs} of {lines * t.size}",
                     "worst r''/r": worst})
    return rows


def main(leaves=40, lines=300):
    rng = np.random.default_rng(0)
    t, y = page_data()
    chart = SPD2Chart(np.eye(2))
    ytil, logdet = chart.responses(y)
    ys = response_enclosure(chart.T, y)
    z_fit = clipped_fit(t, ytil, logdet, TAU)
    sigma = joint_sigma(SPD2, N, 500.0 / N, TAU, TAU_M)
    rows = []
    for h in HALF_WIDTHS:
        zc = z_fit + rng.uniform(-4, 4, (leaves, 6)) * h
        basis = np.broadcast_to(np.eye(6) * h, (leaves, 6, 6)).copy()
        slack = np.full((leaves, 6), 1e-15)
        start = time.process_time()
        enc = enclose_spd2_gradient(zc, basis, slack, t, ys, TAU)
        cpu = (time.process_time() - start) / leaves
        bound = np.linalg.norm(enc.error, axis=1)
        met = np.zeros(leaves)
        for i in range(leaves):
            g0 = frame_gradient(zc[i][None], t, ytil, logdet, TAU)[0]
            jac = gradient_jacobian(zc[i], t, ytil, logdet, TAU)
            eps = rng.uniform(-1, 1, (SAMPLES, 6))
            eps[: SAMPLES // 2] = np.sign(eps[: SAMPLES // 2])  # vertices
            g = frame_gradient(zc[i] + eps * h, t, ytil, logdet, TAU)
            met[i] = np.max(np.linalg.norm(g - g0 - (eps * h) @ jac.T, axis=1))
        finite = np.isfinite(bound)
        ratio = bound[finite] / met[finite]
        rows.append({"half-width h": h, "leaves without a bound": int(np.sum(~finite)),
                     "bound |E| (median)": float(np.median(bound[finite])) if finite.any()
                     else np.nan,
                     "met (median)": float(np.median(met)),
                     "bound / met (median)": float(np.median(ratio)) if finite.any()
                     else np.nan,
                     "bound / met (q90)": float(np.quantile(ratio, 0.9)) if finite.any()
                     else np.nan,
                     "bound / sigma": float(np.median(bound[finite]) / sigma) if finite.any()
                     else np.nan,
                     "ms per leaf": 1e3 * cpu})
    print(f"SPD(2), n = {N}, tau = {TAU}, fit at {np.round(z_fit, 3)}; sigma at n eps = 500: "
          f"{sigma:.3g}; {leaves} leaves per row")
    print(pd.DataFrame(rows).to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    print(f"\nConvexity of E along chart lines to the fit ({lines} uniform support points each, "
          f"{PATH.size} points per line):")
    print(pd.DataFrame(convexity_rows(t, ytil, logdet, z_fit, lines, rng)).to_string(
        index=False, float_format=lambda v: f"{v:.3g}"))


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
