"""The work costs every test runs with (``DPCORE_WORK_COSTS``, set by ``tests/conftest.py``).

The library estimates a request's time from per-unit costs measured on the machine
(:func:`dpcore.release.work.calibrated_costs`) and refuses a request estimated above the work
budget. Measured on a loaded machine, the same long release was estimated at 80 s and refused
(and passed on a quiet one): an outcome that depends on the machine's load. The suite therefore
fixes the costs, of the order measured on the 2-core machine with the compiled chains, for every
manifold and kind, through the library's own setting (:data:`dpcore.release.work.WORK_COSTS_ENV`),
which the processes the tests start (servers, parallel workers) inherit. Tests of the
calibration itself remove the setting (the ``measured_work_costs`` fixture).
"""

from __future__ import annotations

import dataclasses
import json

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


def pinned_setting():
    """The value of :data:`~dpcore.release.work.WORK_COSTS_ENV` that fixes :data:`PINNED`."""
    return json.dumps({kind: dataclasses.asdict(c) for kind, c in PINNED.items()})
