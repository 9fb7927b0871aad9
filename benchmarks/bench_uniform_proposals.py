"""What one proposal of the uniform exact joint sampler costs on each space, against S²
(issue 28: the public term weights of ``dpcore.release.planning._UNIFORM_TERM_COST``).

``python -m benchmarks.bench_uniform_proposals`` prints one table. For each space with uniform
proposals and n in (30, 100, 300): the microseconds to draw a proposal from the public support
(a footpoint ball of radius 0.5 about the base point x a speed ball of radius 0.55,
:class:`~dpcore.sampling.rejection.BundleBall`) plus evaluating its clipped joint gradient norm
as :func:`~dpcore.mechanisms.kng_exact.regression_joint_exact` does (the compiled kernel where
one exists), best of three batches of 20,000, and ``ratio_to_S2``, that time over S²'s at the
same n in the same run (batches of fewer proposals where one would hold over 10^8 terms,
10^7 on a space whose gradient runs in numpy). ``auto`` counts a term of a space as about this
many sphere terms at that n when it decides from the uniform proposals' predicted work
(:func:`dpcore.release.planning.uniform_term_weight`, :mod:`dpcore.release.uniform_cost`).
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from dpcore.data import make_regression_data
from dpcore.manifolds import SPD, Euclidean, Hyperbolic, KendallShape, Sphere
from dpcore.mechanisms.kng_exact import joint_gradient_norms
from dpcore.sampling.rejection import BundleBall, UniformBall

SPACES = (Sphere(2), SPD(2), KendallShape(4), Hyperbolic(2), Euclidean(4))
SIZES = (30, 100, 300, 1000, 3000)
#: Proposals per timed batch: 20,000, fewer where a batch would hold over 10^8 terms.
BATCH = 20_000
TAU = 0.2


def _norms(m, z, t, y):
    return joint_gradient_norms(m, z[:, 0], z[:, 1], t, y, TAU)


def per_proposal(m, n, rng):
    """(microseconds per proposal, the gradient's path) at n observations."""
    data = make_regression_data(m, n, rng=0)
    t, y = np.asarray(data.x, dtype=float), np.asarray(data.y, dtype=float)
    support = BundleBall(UniformBall(m, np.asarray(m.origin, dtype=float), 0.5), 0.55)
    _norms(m, support.sample(64, rng), t, y)              # compiled code loaded
    best, path = np.inf, None
    batch = min(BATCH, 10**8 // n // (10 if path_is_numpy(m, t, y) else 1))
    for _ in range(3):
        start = time.perf_counter()
        _, path = _norms(m, support.sample(batch, rng), t, y)
        best = min(best, time.perf_counter() - start)
    return 1e6 * best / batch, path


def path_is_numpy(m, t, y):
    """Whether the space's gradient runs in numpy (slow: smaller batches)."""
    z = np.stack([np.broadcast_to(m.origin, (1, *m.point_shape))] * 2, axis=1).astype(float)
    z[:, 1] = 0.0
    return _norms(m, z, t, y)[1] == "numpy"


def main():
    rng = np.random.default_rng(0)
    rows = []
    for n in SIZES:
        base = None
        for m in SPACES:
            us, path = per_proposal(m, n, rng)
            base = us if base is None else base
            rows.append({"space": repr(m), "n": n, "µs per proposal": round(us, 2),
                         "gradient": path, "ratio_to_S2": round(us / base, 2)})
    return pd.DataFrame(rows)


if __name__ == "__main__":
    with pd.option_context("display.width", 160):
        print(main().to_string(index=False))
