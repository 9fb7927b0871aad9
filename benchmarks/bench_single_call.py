"""One default private regression call, and the Metropolis-Hastings step it spends its time in.

Issue 13 point 2: one ``private_geodesic_regression`` call (1 footpoint x 10 shooting vectors,
n = 100, Sphere(2), eps_p = eps_v = 1, tau = 0.2, covariate range (0, 1)) in both modes, ten
such calls against one batched call for the same 100 draws, and the per-step cost of the
sampler. Every row is measured three ways in the same run: with dpcore's sampler as it is
(the compiled numba chain of :mod:`dpcore.sampling._compiled_sphere` on these targets), with
its numpy path (``numpy_sampler`` below turns the compiled chain off), and with the sampler
step as it was before the fused numpy step (``ReferenceStepper`` / ``reference_burn_in``
below, the earlier code of ``dpcore.sampling.mcmc`` kept as the baseline). The step table adds
a floor: a hand-written numpy random-walk step on S^2 with no abstraction at all.

Issue 13 point 3: the compiled footpoint chain against a compiled floor, a minimal hand-written
numba random-walk Metropolis on S^2 for the same target (``floor_kernel``), at 1 to 1000
chains; and the JIT compile time and cached-load time of the kernels, in fresh processes.
Wall times are the best of a few runs; on a shared machine the CPU-time column of the call
table is the steadier figure.

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
                      n_groups, tick=None):
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


@contextlib.contextmanager
def numpy_sampler():
    """Run dpcore's numpy sampler path (the compiled chain turned off)."""
    saved = mcmc.compiled_chain
    mcmc.compiled_chain = lambda *args, **kwargs: None
    try:
        yield
    finally:
        mcmc.compiled_chain = saved


def _cpu(fn):
    start = time.process_time()
    fn()
    return time.process_time() - start


def _three(fn, repeats=3):
    """(baseline s, numpy path s, compiled s, compiled CPU s), interleaved so that load
    affects all alike."""
    base = plain = cur = cpu = math.inf
    for _ in range(repeats):
        with reference_sampler(), numpy_sampler():
            base = min(base, _best(fn, 1))
        with numpy_sampler():
            plain = min(plain, _best(fn, 1))
        cur = min(cur, _best(fn, 1))
        cpu = min(cpu, _cpu(fn))
    return base, plain, cur, cpu


def _both(fn, repeats=3):
    """(baseline seconds, numpy path seconds), interleaved so that load affects both alike."""
    base = cur = math.inf
    for _ in range(repeats):
        with reference_sampler(), numpy_sampler():
            base = min(base, _best(fn, 1))
        with numpy_sampler():
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
        _call(data, mode)  # warm-up: imports, the work-estimate calibration, JIT cache load
        single = _three(lambda mode=mode: _call(data, mode), repeats=5)
        ten = _three(lambda mode=mode: [_call(data, mode, rng=k) for k in range(10)],
                     repeats=1)
        batched = _three(lambda mode=mode: _call(data, mode, n_footpoints=10), repeats=2)
        for what, (base, plain, cur, cpu) in (
                ("one default call (1 x 10 draws)", single),
                ("ten separate calls (100 draws)", ten),
                ("one batched call, 10 footpoints x 10 (100 draws)", batched)):
            rows.append({"mode": mode, "request": what, "baseline step s": base,
                         "numpy path s": plain, "compiled s": cur, "compiled CPU s": cpu,
                         "numpy / compiled": plain / cur, "baseline / compiled": base / cur,
                         "vs one call (compiled)": cur / single[2]})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------- the compiled floor
def floor_kernel():
    """The compiled floor: random-walk Metropolis on S^2 for the KNG footpoint target
    exp(-|grad_p E(p, transport of v_hat)| / sigma) with clipped residuals, written as one
    plain numba function (its own random numbers, a fixed step size, scalar math per term, no
    validation, adaptation or diagnostics)."""
    from numba import njit

    @njit(cache=True)
    def log_target(q, p_hat, v_hat, t, y, tau, sigma):
        c = p_hat[0] * q[0] + p_hat[1] * q[1] + p_hat[2] * q[2]
        w = q - c * p_hat
        s = math.sqrt(w[0] ** 2 + w[1] ** 2 + w[2] ** 2)
        th = math.atan2(s, c)
        unit = w / s if s > 0 else w
        end = -math.sin(th) * p_hat + math.cos(th) * unit
        v = v_hat + (unit[0] * v_hat[0] + unit[1] * v_hat[1] + unit[2] * v_hat[2]) * (end - unit)
        nv = math.sqrt(v[0] ** 2 + v[1] ** 2 + v[2] ** 2)
        u = v / nv
        g0 = g1 = g2 = 0.0
        for i in range(t.shape[0]):
            rho = t[i] * nv
            cr, sr = math.cos(rho), math.sin(rho)
            yh0, yh1, yh2 = cr * q[0] + sr * u[0], cr * q[1] + sr * u[1], cr * q[2] + sr * u[2]
            ct = yh0 * y[i, 0] + yh1 * y[i, 1] + yh2 * y[i, 2]
            st = math.sqrt(max(1.0 - ct * ct, 0.0))
            theta = math.atan2(st, ct)
            f = min(theta, tau) / st if st > 0 else 0.0
            r0 = f * (y[i, 0] - ct * yh0)
            r1 = f * (y[i, 1] - ct * yh1)
            r2 = f * (y[i, 2] - ct * yh2)
            e0, e1, e2 = -sr * q[0] + cr * u[0], -sr * q[1] + cr * u[1], -sr * q[2] + cr * u[2]
            a = r0 * e0 + r1 * e1 + r2 * e2
            g0 += a * u[0] + cr * (r0 - a * e0)
            g1 += a * u[1] + cr * (r1 - a * e1)
            g2 += a * u[2] + cr * (r2 - a * e2)
        n = t.shape[0]
        return -math.sqrt(g0 * g0 + g1 * g1 + g2 * g2) / n / sigma

    @njit(cache=True)
    def walk(p0, p_hat, v_hat, t, y, tau, sigma, eta, n_chains, n_steps, seed):
        np.random.seed(seed)  # noqa: NPY002 (numba's in-kernel generator)
        x = np.empty((n_chains, 3))
        logp = np.empty(n_chains)
        for c in range(n_chains):
            x[c] = p0
            logp[c] = log_target(p0, p_hat, v_hat, t, y, tau, sigma)
        for _ in range(n_steps):
            for c in range(n_chains):
                g = np.random.standard_normal(3)  # noqa: NPY002
                g -= (g[0] * x[c, 0] + g[1] * x[c, 1] + g[2] * x[c, 2]) * x[c]
                r = eta * math.sqrt(np.random.random())  # noqa: NPY002
                g *= 1.0 / math.sqrt(g[0] ** 2 + g[1] ** 2 + g[2] ** 2)
                q = math.cos(r) * x[c] + math.sin(r) * g
                lq = log_target(q, p_hat, v_hat, t, y, tau, sigma)
                if np.random.random() < math.exp(min(lq - logp[c], 0.0)):  # noqa: NPY002
                    x[c] = q
                    logp[c] = lq
        return x

    return log_target, walk


#: Steps per chain in the floor table (burn-in + kept), chains per row.
FLOOR_STEPS = (100, 200)
FLOOR_BATCHES = (1, 10, 100, 1000)


def floor_table(data):
    """The compiled footpoint chain (dpcore, whole mechanism call) against the compiled floor
    and dpcore's numpy path, same target and number of steps, at several batch sizes."""
    from dpcore.learning.regression import GeodesicRegression
    from dpcore.mechanisms.kng import KNormGradient, regression_footpoints_many
    from dpcore.sensitivity import geodesic_regression_sensitivity

    log_target, walk = floor_kernel()
    t, y = data.x, data.y
    fit = GeodesicRegression(SPHERE).fit(t, y)
    p_hat, v_hat = fit.footpoint_, fit.shooting_vector_
    delta_p, _ = geodesic_regression_sensitivity(N, 0.2, 1.0)
    mech = KNormGradient(manifold=SPHERE, epsilon=1.0, sensitivity=delta_p,
                         burn_in=FLOOR_STEPS[0], chain_length=FLOOR_STEPS[1])
    steps = sum(FLOOR_STEPS)

    def dpcore_run(chains):
        return regression_footpoints_many([mech], t, y, p_hat, v_hat, size=chains, rng=0,
                                          tau=0.2)[0]

    first = dpcore_run(1)
    # the floor's target is the same density (checked here against dpcore's numpy density)
    probe = SPHERE.exp(p_hat, 0.01 * SPHERE.random_tangent(p_hat, rng=1))
    v_probe = SPHERE.transport(p_hat, probe, v_hat)
    from dpcore.learning.regression import regression_gradient
    g, _ = regression_gradient(SPHERE, probe[None], v_probe[None], t, y, tau=0.2,
                               which="footpoint")
    floor_gap = abs(log_target(probe, p_hat, v_hat, t, y, 0.2, mech.sigma)
                    + float(np.linalg.norm(g)) / mech.sigma)
    eta = float(first.diagnostics["step_size"])
    walk(p_hat, p_hat, v_hat, t, y, 0.2, mech.sigma, eta, 1, 2, 0)  # compile / cache load
    rows = []
    for chains in FLOOR_BATCHES:
        repeats = 2 if chains >= 1000 else 3
        fl = _best(lambda chains=chains: walk(p_hat, p_hat, v_hat, t, y, 0.2, mech.sigma,
                                              eta, chains, steps, 0), repeats)
        cur = _best(lambda chains=chains: dpcore_run(chains), repeats)
        with numpy_sampler():
            plain = _best(lambda chains=chains: dpcore_run(chains), 1 if chains >= 100 else 2)
        per = chains * steps
        rows.append({"chains": chains, "floor us/step/chain": 1e6 * fl / per,
                     "dpcore compiled us/step/chain": 1e6 * cur / per,
                     "dpcore numpy us/step/chain": 1e6 * plain / per,
                     "compiled / floor": cur / fl, "numpy / compiled": plain / cur})
    table = pd.DataFrame(rows)
    return table, floor_gap


# ---------------------------------------------------------------------- JIT cost
_COMPILE_PROBE = """
import time, numpy as np
start = time.perf_counter()
import numba  # noqa: F401
numba_done = time.perf_counter()
from dpcore.sampling import _sphere_numba  # noqa: F401
from dpcore.data import make_regression_data
from dpcore.manifolds import Sphere
from dpcore.mechanisms.kng import KNormGradient, regression_joint_many
imported = time.perf_counter()
data = make_regression_data(Sphere(2), 20, rng=0)
mech = KNormGradient(manifold=Sphere(2), epsilon=1.0, sensitivity=0.01, chain_length=5,
                     burn_in=5)
def run():
    regression_joint_many([mech], data.x, data.y, data.y[0], np.zeros(3), size=2, rng=0,
                          tau=0.2)
t0 = time.perf_counter(); run(); first = time.perf_counter() - t0
t0 = time.perf_counter(); run(); second = time.perf_counter() - t0
print(numba_done - start, imported - numba_done, first - second)
"""


def jit_table():
    """Import time of numba plus the kernels, and the first-call time of the kernels: compiled
    in a fresh cache directory, then loaded from that cache in a second process."""
    import os
    import subprocess
    import sys
    import tempfile

    rows = []
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        for what in ("JIT compile (empty cache)", "cached load (second process)"):
            out = subprocess.run([sys.executable, "-c", _COMPILE_PROBE], env=env, check=True,
                                 capture_output=True, text=True).stdout.split()
            rows.append({"first use": what, "import numba s": float(out[0]),
                         "import dpcore + kernels s": float(out[1]),
                         "first compiled chain, extra s": float(out[2])})
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
    floor, floor_gap = floor_table(data)
    out = ["Default private regression calls (S^2, n = 100, eps_p = eps_v = 1, tau = 0.2):",
           call_table(data).to_string(index=False), "",
           f"Footpoint chain ({sum(FLOOR_STEPS)} steps, n = {N}) against a compiled floor "
           f"(floor density checked: |difference| = {floor_gap:.1e}):",
           floor.to_string(index=False), "",
           "JIT cost of the compiled chain (fresh processes):",
           jit_table().to_string(index=False), "",
           "Metropolis-Hastings step with a trivial target (1500 steps):",
           step_table().to_string(index=False), "",
           "Work estimate (dpcore.release.work) against the measured call:",
           estimate_table().to_string(index=False)]
    return "\n".join(out)


if __name__ == "__main__":
    print(main())
