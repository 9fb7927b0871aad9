"""Uniform proposals on a tangent bundle ball (``dpcore.sampling.rejection.BundleBall``, the
proposals of the uniform exact joint-regression sampler and of the asymptotic law's search for
far points): CPU microseconds per proposal with the shooting vector drawn as a normalized
``random_tangent`` (now) against the previous construction (an orthonormal basis of T_p per
proposal, kept here as the baseline), measured in the same run, per manifold; then the same
for whole exact draws of ``sample_kng_exact`` (joint regression, n = 20, one fixed σ per
manifold chosen for an acceptance of about 1%, the same proposals' seeds for both).

Run: ``python -m benchmarks.bench_bundle_ball``.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from dpcore.data import make_regression_data
from dpcore.learning.regression import regression_gradient
from dpcore.manifolds import SPD, KendallShape, Sphere
from dpcore.sampling.rejection import BundleBall, UniformBall, WholeSpace, sample_kng_exact

PROPOSALS = 20_000


class BasisBundleBall(BundleBall):
    """The previous construction: coefficients uniform in the d-ball times an orthonormal
    basis of T_p computed per proposal."""

    def sample(self, m, rng):
        man = self.manifold
        p = self.base.sample(m, rng)
        d = man.dim
        xi = rng.standard_normal((m, d))
        xi /= np.linalg.norm(xi, axis=-1, keepdims=True)
        xi *= (self.max_norm * rng.random(m) ** (1.0 / d))[:, None]
        v = np.einsum("ma,ma...->m...", xi, man.orthonormal_basis(p))
        return np.stack([p, v], axis=1)


def _cases():
    return [("Sphere(2)", Sphere(2), lambda m: WholeSpace(m), 30.0),
            ("SPD(2)", SPD(2), lambda m: UniformBall(m, np.eye(2), 1.0), 30.0),
            ("KendallShape(4)", KendallShape(4), lambda m: WholeSpace(m), 30.0),
            ("KendallShape(8)", KendallShape(8), lambda m: WholeSpace(m), 30.0)]


def _cpu(fn):
    start = time.process_time()
    out = fn()
    return time.process_time() - start, out


def proposal_table():
    rows = []
    for name, m, base, _ in _cases():
        now = BundleBall(base(m), 1.0)
        before = BasisBundleBall(base(m), 1.0)
        for b in (now, before):  # first calls build the base's caches (radial tables)
            b.sample(100, np.random.default_rng(0))
        t_now, _ = _cpu(lambda b=now: b.sample(PROPOSALS, np.random.default_rng(1)))
        t_before, _ = _cpu(lambda b=before: b.sample(PROPOSALS, np.random.default_rng(1)))
        rows.append({"manifold": name, "µs/proposal (basis per point)": 1e6 * t_before / PROPOSALS,
                     "µs/proposal (now)": 1e6 * t_now / PROPOSALS,
                     "speed-up": f"{t_before / t_now:.1f}x"})
    return pd.DataFrame(rows).round(2)


def exact_table(draws=20):
    rows = []
    for name, m, base, n_eps in _cases():
        x, y = make_regression_data(m, 20, rng=3)
        t = (x - x.min()) / (x.max() - x.min())

        def g(z, m=m, t=t, y=y):
            gp, gv = regression_gradient(m, z[:, 0], z[:, 1], t, y, tau=0.3)
            return np.sqrt(np.asarray(m.norm(z[:, 0], gp)) ** 2
                           + np.asarray(m.norm(z[:, 0], gv)) ** 2)

        sigma = 2 * 0.6 / n_eps
        row = {"manifold": name}
        BundleBall(base(m), 1.0).sample(100, np.random.default_rng(0))   # the base's caches
        for label, cls in (("basis per point", BasisBundleBall), ("now", BundleBall)):
            support = cls(base(m), 1.0)
            sec, (_, tried) = _cpu(lambda s=support: sample_kng_exact(
                g, sigma, s, draws, np.random.default_rng(5), n_terms=20))
            row[f"CPU s ({label})"] = round(sec, 2)
            row[f"proposals ({label})"] = int(np.sum(tried))
        row["speed-up"] = f"{row['CPU s (basis per point)'] / row['CPU s (now)']:.1f}x"
        rows.append(row)
    return pd.DataFrame(rows)


def main():
    with pd.option_context("display.width", 200, "display.max_columns", 12):
        print(f"Proposals ({PROPOSALS:,} per manifold):")
        print(proposal_table().to_string(index=False))
        print("\nExact joint-regression draws (uniform proposals, n = 20, 20 draws):")
        print(exact_table().to_string(index=False))


if __name__ == "__main__":
    main()
