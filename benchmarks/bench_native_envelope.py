r"""An envelope for the whole sphere's joint KNG in the geodesic's own coordinates (issue 28,
research measurement: no sampler is built, nothing is drawn).

The speed-bounded tangent bundle of :math:`S^2` is parametrized by the frame :math:`R =
\exp([\omega]) = (p, e, p \times e)` (rotation vectors, :math:`|\omega| \le \pi`) and the speed
:math:`s = |v| \in [0, V]`; the Sasaki volume is :math:`s\,ds` times Haar measure, whose density
in rotation vectors is :math:`(2 - 2\cos|\omega|)/|\omega|^2` (up to a constant). Boxes in
:math:`(\omega, s)` are refined by their excess mass (the releases' rule: envelope mass less the
target's estimate, half the total excess per round) and each box's lower bound of g is the larger
of ``bench_projected_bound.rotation_core`` and ``cap_projected`` with the frame rotation bounded
by the box's half-diagonal in :math:`\omega` (``exp`` is 1-Lipschitz into the rotation angle);
boxes touching s = 0 get no bound. The estimated acceptance is the target's Riemann estimate
(g at the box centres) over the envelope's mass, as the releases estimate theirs.

Data, τ, n and σ as in ``bench_bundle_sphere.py`` (n = 250, τ = 0.2, V = π). Baseline in the
same run: the releases' whole-sphere sampler (two charts, the cap of 60,000 leaves each) at the
same n·ε: its leaves and estimated acceptance.
``python -m benchmarks.bench_native_envelope [n·ε ...] [--leaves K]`` (default 250 and 1000,
K = 200,000; about 3 minutes).
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np
import pandas as pd
from scipy.spatial.transform import Rotation
from scipy.special import logsumexp

from dpcore.sampling.bundle_lattice import BundleLattice
from dpcore.sampling.bundle_sphere import WholeSphereBundleSampler

try:
    from bench_bundle_sampler import CENTER, TAU, _data
    from bench_projected_bound import _sigma, cap_projected, g_at, rotation_core
except ImportError:  # run as a module from the repository root
    from benchmarks.bench_bundle_sampler import CENTER, TAU, _data
    from benchmarks.bench_projected_bound import _sigma, cap_projected, g_at, rotation_core

V = math.pi
_SPAN_LO = np.array([-math.pi] * 3 + [0.0])
_SPAN = np.array([2 * math.pi] * 3 + [V])


def _haar(r):
    r = np.asarray(r, dtype=float)
    safe = np.where(r > 1e-8, r, 1.0)
    return np.where(r > 1e-8, (2 - 2 * np.cos(r)) / safe**2, 1.0)


def box_masses(lo, hi, t, y, sigma):
    """(log envelope mass, log target estimate) of boxes [lo, hi] in (omega, s)."""
    c, h = 0.5 * (lo + hi), 0.5 * (hi - lo)
    frame = Rotation.from_rotvec(c[:, :3]).as_matrix()
    p, v = frame[:, :, 0], c[:, 3, None] * frame[:, :, 1]
    g_c = g_at(p, v, t, y, TAU)
    g_lb = np.zeros(c.shape[0])
    ok = lo[:, 3] > 1e-6
    if np.any(ok):
        ranges = (np.sqrt(np.sum(h[ok, :3] ** 2, -1)) * (1 + 1e-12), lo[ok, 3], hi[ok, 3])
        g_lb[ok] = np.maximum(np.maximum(rotation_core(p[ok], v[ok], *ranges, t, y, TAU)[0],
                                         cap_projected(p[ok], v[ok], *ranges, t, y, TAU)), 0.0)
    gap = np.linalg.norm(np.maximum(np.maximum(lo[:, :3], -hi[:, :3]), 0.0), axis=-1)
    log_vol = np.sum(np.log(hi - lo), -1)
    env = -g_lb / sigma + np.log(hi[:, 3] * _haar(gap)) + log_vol
    est = -g_c / sigma + np.log(np.maximum(c[:, 3] * _haar(np.linalg.norm(c[:, :3], axis=-1)),
                                           1e-300)) + log_vol
    env[gap > math.pi] = -np.inf
    return env, np.minimum(est, env)


def refine(t, y, n_eps, max_leaves, start=4):
    """Leaves and estimated acceptance along the refinement (a list of dicts)."""
    sigma = _sigma(n_eps)
    idx = np.stack(np.meshgrid(*[np.arange(start)] * 4, indexing="ij"), -1).reshape(-1, 4)
    lo, hi = _SPAN_LO + idx / start * _SPAN, _SPAN_LO + (idx + 1) / start * _SPAN
    env, est = box_masses(lo, hi, t, y, sigma)
    cpu, rows, next_report = time.process_time(), [], 1_000
    while True:
        keep = np.isfinite(env)
        lo, hi, env, est = lo[keep], hi[keep], env[keep], est[keep]
        log_m = logsumexp(env)
        acceptance = math.exp(logsumexp(est) - log_m)
        if lo.shape[0] >= next_report or lo.shape[0] >= max_leaves:
            rows.append({"n·ε": n_eps, "sampler": "native boxes", "leaves": lo.shape[0],
                         "est. acceptance": acceptance,
                         "CPU s (numpy)": round(time.process_time() - cpu, 1)})
            next_report = 2 * lo.shape[0]
        if lo.shape[0] >= max_leaves:
            return rows
        excess = np.exp(env - log_m) - np.exp(est - log_m)
        order = np.argsort(excess)[::-1]
        k = int(min(max(1, np.searchsorted(np.cumsum(excess[order]),
                                           0.5 * np.sum(excess)) + 1),
                    max_leaves - lo.shape[0], 20_000))
        split = order[:k]
        axis = np.argmax((hi[split] - lo[split]) / _SPAN, axis=-1)
        mid = 0.5 * (lo[split, axis] + hi[split, axis])
        upper_lo, lower_hi = lo[split].copy(), hi[split].copy()
        upper_lo[np.arange(k), axis] = mid
        lower_hi[np.arange(k), axis] = mid
        new_lo = np.concatenate([lo[split], upper_lo])
        new_hi = np.concatenate([lower_hi, hi[split]])
        new_env, new_est = box_masses(new_lo, new_hi, t, y, sigma)
        rest = np.setdiff1d(np.arange(lo.shape[0]), split)
        lo, hi = np.concatenate([lo[rest], new_lo]), np.concatenate([hi[rest], new_hi])
        env, est = np.concatenate([env[rest], new_env]), np.concatenate([est[rest], new_est])


def releases(t, y, n_eps):
    cpu = time.process_time()
    s = WholeSphereBundleSampler(t, y, TAU, _sigma(n_eps), V, draws=9, acceptance_goal=1.0,
                                 box_cost=0.0)
    return {"n·ε": n_eps, "sampler": "releases' charts (cap)", "leaves": s.diagnostics["boxes"],
            "est. acceptance": s.acceptance_estimate,
            "CPU s (numpy)": round(time.process_time() - cpu, 1)}


def main(levels=(250.0, 1000.0), max_leaves=200_000):
    t, y = _data(BundleLattice(CENTER, 0.5, 1.5), np.random.default_rng(250))
    rows = []
    for n_eps in levels:
        base = releases(t, y, n_eps)
        native = refine(t, y, n_eps, max_leaves)
        for row in native:
            row["acceptance ÷ releases'"] = row["est. acceptance"] / base["est. acceptance"]
        rows += [base] + native
    table = pd.DataFrame(rows)
    table["est. acceptance"] = table["est. acceptance"].map(lambda a: f"{a:.2g}")
    return table


if __name__ == "__main__":
    args = sys.argv[1:]
    leaves = 200_000
    if "--leaves" in args:
        k = args.index("--leaves")
        leaves = int(args[k + 1])
        del args[k:k + 2]
    with pd.option_context("display.width", 200, "display.float_format", "{:.3g}".format):
        print(main(tuple(float(a) for a in args) or (250.0, 1000.0), leaves).to_string(index=False))
