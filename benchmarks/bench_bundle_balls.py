"""The far-field bundle sampler on larger public footpoint balls (issue 28 point 4: the
two-stage design's ball on S², radius ρ = V + τ + the centre's predicted error).

``python -m benchmarks.bench_bundle_balls`` prints one table: one exact release per row at
n·ε = 1,000 (ε_p = ε_v = 2 at n = 250; n·ε per geodesic), 9 draws, through the sampler the
release runs (:class:`~dpcore.sampling.bundle_farfield.FarFieldBundleSampler` with the public
cap of :data:`~dpcore.mechanisms.kng_bundle.MAX_LEAVES` leaves and
:data:`~dpcore.mechanisms.kng_bundle.LEAF_TERMS`), for each public support (footpoint radius
R about the north pole, speed bound V) in :data:`~dpcore.mechanisms.kng_bundle.
MEASURED_BALLS` and for data whose fit's footpoint lies at the stated distance from the ball's
centre (beyond R: outside the ball). Columns: leaves, build and total CPU seconds (process
time), proposals, and ``ratio`` = total over the first row's (the ball of session 25's
measurement with its fit at the centre, measured in the same run). The exact sampler's time
depends on the data (a timing side channel stated on the page); ``auto`` reads only the public
support and n·ε (:func:`~dpcore.mechanisms.kng_bundle.bundle_reach`). A first table builds,
without drawing, the envelope for data whose release would not finish (:data:`BUILD_ONLY`: the
fit 0.35 outside the two-stage ball) and states the acceptance it certifies at its cap.

Data and σ as in ``bench_bundle_offball.py`` (n responses about a geodesic with the stated
footpoint, shooting vector ``speed x (0.8, 0.5) / 0.94`` in the chart, noise 0.1 per tangent
component, covariates uniform on [0, 1], τ = 0.2).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpcore.sampling.bundle_lattice import BundleLattice

try:
    from bench_bundle_offball import CENTER, built_sampler, data, timed_release
except ImportError:  # run as a module from the repository root
    from benchmarks.bench_bundle_offball import CENTER, built_sampler, data, timed_release

DRAWS = 9
#: (R, V, footpoint distance, speed of the data's geodesic, n)
ROWS = ((0.5, 1.5, 0.0, 0.94, 250),
        (1.25, 0.8, 0.0, 0.7, 250), (1.25, 0.8, 0.6, 0.7, 250), (1.25, 0.8, 1.15, 0.7, 250),
        (1.25, 0.8, 1.35, 0.7, 250), (1.25, 0.8, 0.3, 0.8, 250), (1.0, 0.8, 1.2, 0.7, 250),
        (1.25, 0.8, 0.6, 0.7, 100), (1.25, 0.8, 0.6, 0.7, 1000))


def run(radius, speed_bound, distance, speed, n):
    """One release's figures (a dict of the table's columns)."""
    lattice = BundleLattice(CENTER, radius, speed_bound)
    t, y = data(lattice, distance, np.random.default_rng(1), speed=speed, n=n)
    sampler, build, tried, total = timed_release(lattice, t, y, DRAWS)
    return {"R": radius, "V": speed_bound, "n": n, "footpoint distance": distance,
            "data speed": speed, "leaves": sampler.diagnostics["boxes"],
            "build CPU s": round(build, 1), "proposals": int(tried),
            "total CPU s": round(total, 1)}


#: Supports and data whose exact release would not finish: built only (no draw), to state the
#: acceptance the envelope certifies at its cap (R, V, footpoint distance, data speed, n).
BUILD_ONLY = ((1.25, 0.8, 1.6, 0.7, 250),)


def build_only(radius, speed_bound, distance, speed, n):
    """The envelope's leaves and certified acceptance, without drawing."""
    lattice = BundleLattice(CENTER, radius, speed_bound)
    t, y = data(lattice, distance, np.random.default_rng(1), speed=speed, n=n)
    s, build = built_sampler(lattice, t, y, DRAWS)
    return {"R": radius, "V": speed_bound, "n": n, "footpoint distance": distance,
            "leaves": s.diagnostics["boxes"], "build CPU s": round(build, 1),
            "certified acceptance": f"{s.acceptance_estimate:.2g}",
            "proposals for the draws": f"{DRAWS / s.acceptance_estimate:.2g}"}


def main():
    print(pd.DataFrame([build_only(*row) for row in BUILD_ONLY]).to_string(index=False))
    rows = [run(*row) for row in ROWS]
    base = rows[0]["total CPU s"]
    for row in rows:
        row["ratio"] = round(row["total CPU s"] / base, 2)
    return pd.DataFrame(rows)


if __name__ == "__main__":
    with pd.option_context("display.width", 160):
        print(main().to_string(index=False))
