"""One default private regression call, and the Metropolis-Hastings step it spends its time in.

Issue 13 point 2: one ``private_geodesic_regression`` call (1 footpoint x 10 shooting vectors,
n = 100, Sphere(2), eps_p = eps_v = 1, tau = 0.2, covariate range (0, 1)) in both modes, ten
such calls against one batched call for the same 100 draws, and the per-step cost of the
sampler. Every row is measured twice in the same run: with dpcore's sampler as it is, and with
the sampler step as it was before the fused step (``ReferenceStepper`` / ``reference_burn_in``
below, the earlier code of ``dpcore.sampling.mcmc`` kept as the baseline). The step table adds
a floor: a hand-written numpy random-walk step on S^2 with no abstraction at all.

The last table checks the work estimate of :mod:`dpcore.release.work` against the measured
time of the same requests (ratio estimate / measured).
"""

from __future__ import annotations

import contextlib
import math
import time
import warnings

import numpy as np
import pandas as pd

from dpcore.data import make_regression_data
from dpcore.manifolds import Euclidean, Sphere
from dpcore.manifolds.base import CutLocusError
from dpcore.mechanisms.bundle import TangentBundleWalk
from dpcore.release import estimate_regression_work, private_geodesic_regression
from dpcore.sampling import mcmc, metropolis_hastings

SPHERE = Sphere(2)
N = 100
STEPS = 3000  # default burn_in + chain_length


# ---------------------------------------------------------------------- the baseline step
class ReferenceStepper:
    """The Metropolis step as it was before the fused step (same law, earlier code): two
    generator calls per step, ``pointwise`` reshapes, three-pass NaN handling and
    ``np.where`` selections."""

    def __init__(self, manifold, log_density, n_chains, rng):
        self.manifold, self.log_density, self.n, self.rng = manifold, log_density, n_chains, rng

    def _evaluate(self, points):
        try:
            values = np.asarray(self.log_density(points), dtype=float)
        except CutLocusError:
            values = np.array([-np.inf] * self.n)
        bad = ~(values < np.inf)
        if not np.isfinite(points).all():
            bad |= ~np.isfinite(points.reshape(self.n, -1)).all(axis=1)
        return np.where(bad, -np.inf, values)

    def step(self, x, logp, eta):
        m = self.manifold
        v = m.random_tangent(x, self.rng)
        nv = m.norm(x, v)
        radius = eta * self.rng.random(self.n) ** (1.0 / m.dim)
        scale = np.where(nv > 0, radius / nv, 0.0)
        y = m.exp(x, v * m.pointwise(scale))
        logq = self._evaluate(y)
        accept_prob = np.exp(np.minimum(logq - logp, 0.0))
        accepted = self.rng.random(self.n) < accept_prob
        x = np.where(m.pointwise(accepted), y, x)
        logp = np.where(accepted, logq, logp)
        return x, logp, accepted, accept_prob


def reference_burn_in(stepper, x, logp, eta, eta_max, n_steps, target, adapt, labels,
                      n_groups):
    """The burn-in as it was (one group): ``nan_to_num`` and ``np.mean`` every step."""
    log_eta = np.log(eta)
    log_cap = math.log(eta_max) if math.isfinite(eta_max) else math.inf
    history = []
    for t in range(n_steps):
        x, logp, _, accept_prob = stepper.step(x, logp, math.exp(log_eta[0]))
        gain = mcmc._GAIN / (1.0 + t / 10.0) ** 0.6
        rate = float(np.mean(np.nan_to_num(accept_prob, nan=0.0)))
        log_eta = np.minimum(log_eta + gain * (rate - target), log_cap)
        if t >= n_steps // 2:
            history.append(log_eta)
    if history:
        log_eta = np.mean(history, axis=0)
    return np.minimum(np.exp(log_eta), eta_max), x, logp


@contextlib.contextmanager
def reference_sampler():
    """Run dpcore with the baseline step and burn-in in place of the fused ones."""
    saved = mcmc._Stepper, mcmc._burn_in
    mcmc._Stepper, mcmc._burn_in = ReferenceStepper, reference_burn_in
    try:
        yield
    finally:
        mcmc._Stepper, mcmc._burn_in = saved


def minimal_sphere_walk(n_chains, n_steps, sigma, rng):
    """Floor: random-walk Metropolis on S^2 for exp(-|x - north| / sigma), plain numpy (no
    validation, no manifold objects), with dpcore's proposal law (uniform in a tangent ball)."""
    north = np.array([0.0, 0.0, 1.0])
    x = np.tile(north, (n_chains, 1))
    logp = np.zeros(n_chains)
    eta = sigma
    for _ in range(n_steps):
        g = rng.standard_normal((n_chains, 3))
        g -= np.sum(g * x, axis=1, keepdims=True) * x
        g /= np.linalg.norm(g, axis=1, keepdims=True)
        r = eta * np.sqrt(rng.random(n_chains))[:, None]
        y = np.cos(r) * x + np.sin(r) * g
        logq = -np.linalg.norm(y - north, axis=1) / sigma
        acc = rng.random(n_chains) < np.exp(np.minimum(logq - logp, 0.0))
        x[acc], logp[acc] = y[acc], logq[acc]
    return x


# ---------------------------------------------------------------------- timing
def _best(fn, repeats=3):
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _both(fn, repeats=3):
    """(baseline seconds, current seconds), interleaved so that load affects both alike."""
    base = cur = math.inf
    for _ in range(repeats):
        with reference_sampler():
            base = min(base, _best(fn, 1))
        cur = min(cur, _best(fn, 1))
    return base, cur


def _call(data, mode, n_footpoints=1, n_vectors=10, rng=1):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return private_geodesic_regression(
            SPHERE, data.x, data.y, eps_p=1.0, eps_v=1.0, tau=0.2, covariate_range=(0.0, 1.0),
            n_footpoints=n_footpoints, n_vectors=n_vectors, mode=mode, rng=rng)


def call_table(data):
    rows = []
    for mode in ("strict", "paper"):
        _call(data, mode)  # warm-up: imports, the work-estimate calibration
        single = _both(lambda mode=mode: _call(data, mode))
        ten = _both(lambda mode=mode: [_call(data, mode, rng=k) for k in range(10)], repeats=1)
        batched = _both(lambda mode=mode: _call(data, mode, n_footpoints=10), repeats=2)
        for what, (base, cur) in (("one default call (1 x 10 draws)", single),
                                  ("ten separate calls (100 draws)", ten),
                                  ("one batched call, 10 footpoints x 10 (100 draws)", batched)):
            rows.append({"mode": mode, "request": what, "baseline step s": base,
                         "fused step s": cur, "speed-up": base / cur,
                         "vs one call (fused)": cur / single[1]})
    return pd.DataFrame(rows)


def step_table():
    rows = []

    def trivial(z):
        return -np.sqrt(np.add.reduce((z * z).reshape(z.shape[0], -1), axis=1))

    cases = [("Sphere(2)", SPHERE, np.array([0.0, 0.0, 1.0])),
             ("R^2 (vector-stage coordinates)", Euclidean(2), np.zeros(2)),
             ("tangent bundle of S^2 (joint)", TangentBundleWalk(SPHERE, 3.0),
              np.array([[0.0, 0.0, 1.0], [0.1, 0.0, 0.0]]))]
    for name, m, x0 in cases:
        for chains in (1, 10):
            def run(m=m, x0=x0, chains=chains):
                metropolis_hastings(m, trivial, x0, n_samples=1000, burn_in=500,
                                    n_chains=chains, rng=0)
            base, cur = _both(run)
            row = {"state space": name, "chains": chains,
                   "baseline us/step": 1e6 * base / 1500, "fused us/step": 1e6 * cur / 1500,
                   "speed-up": base / cur}
            if name == "Sphere(2)":
                floor = _best(lambda chains=chains: minimal_sphere_walk(
                    chains, 1500, 0.3, np.random.default_rng(0)))
                row["plain-numpy floor us/step"] = 1e6 * floor / 1500
                row["fused / floor"] = cur / floor
            rows.append(row)
    return pd.DataFrame(rows)


def estimate_table():
    rows = []
    for n in (100, 1000):
        data = make_regression_data(SPHERE, n, rng=0)
        for mode in ("strict", "paper"):
            est = estimate_regression_work(SPHERE, n, eps_p=1.0, eps_v=1.0, tau=0.2,
                                           n_vectors=10, mode=mode)
            measured = _best(lambda data=data, mode=mode: _call(data, mode), repeats=2)
            rows.append({"n": n, "mode": mode, "gradient terms": est.operations,
                         "estimated s": est.seconds, "measured s": measured,
                         "estimate / measured": est.seconds / measured})
    return pd.DataFrame(rows)


def main():
    data = make_regression_data(SPHERE, N, rng=0)
    pd.set_option("display.width", 200)
    pd.set_option("display.float_format", lambda v: f"{v:.3g}")
    out = ["Default private regression calls (S^2, n = 100, eps_p = eps_v = 1, tau = 0.2):",
           call_table(data).to_string(index=False), "",
           "Metropolis-Hastings step with a trivial target (1500 steps):",
           step_table().to_string(index=False), "",
           "Work estimate (dpcore.release.work) against the measured call:",
           estimate_table().to_string(index=False)]
    return "\n".join(out)


if __name__ == "__main__":
    print(main())
