"""The dashboard exactly as ``python -m ui.serve`` starts it, with the work calibration pinned.

The pages estimate a request's time from per-unit costs measured on the machine
(:func:`dpcore.release.work.calibrated_costs`) and refuse a request estimated above the work
budget. Measured on a loaded machine, the same long release was estimated at 80 s and refused
(and passes on a quiet one): the browser tests would depend on the machine's load. Their server
therefore uses fixed costs, of the order measured on the 2-core machine with the compiled
chains, for every manifold and kind; everything else is the product as shipped. (The classroom
benchmark measures the real server: it does not use this module.)
"""

from __future__ import annotations

import sys

from dpcore.release import work as W

#: Fixed costs per calibration kind (seconds per step, per gradient term, per sample).
PINNED = {
    "joint": W.WorkCosts(per_step=1e-6, per_term=2e-8),
    "footpoint": W.WorkCosts(per_step=1e-6, per_term=2e-8),
    "vector": W.WorkCosts(per_step=1e-6, per_term=2e-8),
    "frechet": W.WorkCosts(per_step=1e-4, per_term=5e-8),
    "sweep": W.WorkCosts(per_step=1e-6, per_term=2e-8),
    "monte_carlo": W.WorkCosts(per_step=1e-3, per_term=0.0, per_sample=1.5e-6),
    "exact": W.WorkCosts(per_step=1e-6, per_term=5e-8),
    "bundle": W.WorkCosts(per_step=1e-6, per_term=2e-8),
}


def pinned_costs(manifold, kind):
    """The calibration of ``kind``, whatever the manifold and the machine's load."""
    return PINNED[kind]


if __name__ == "__main__":
    W._calibrate = pinned_costs
    import ui.serve

    sys.exit(ui.serve.main(sys.argv[1:]))
