"""How many leaves a heavy-tailed envelope about the fit needs on SPD(2) (issue 28: a
measurement for the next sampler, nothing here is wired into a release).

``python -m benchmarks.bench_spd2_heavy [n·ε ...] [--n N] [--seed S] [--s S] [--cap LEAVES]``

The uniform proposals (with or without the squeeze) need about vol(K)/Z proposals a draw,
which grows like a power of n·ε; per-leaf envelopes need every leaf's bound within a few σ of
g and fail in 6-8 dimensions. This measures a third design, where the bounds may be loose far
from the fit. The proposal is heavy-tailed about the fit z* in the whitened chart coordinates
x = W(z - z*), W = DG(z*)/σ:

    q(z) ∝ (1 + |W(z - z*)|/s)^(-p),   p = d + 2 = 8,

and an envelope f <= M q holds with M = max over the leaves L of a k-d partition of the
support's chart box of

    M_L = J_max(L) exp(-ℓ_L/σ) (1 + R_L/s)^p,

ℓ_L <= min g over L from the affine enclosure of :mod:`dpcore.sampling.spd2_affine`
(⟨u, G₀⟩ - Σ_j |⟨u, L_j⟩| - |ξ| with u = G₀/|G₀|, valid for any unit u), R_L the largest
|W(z - z*)| over L's vertices, J_max(L) from :func:`~dpcore.sampling.spd2_affine.
log_volume_bound`. Far leaves pass with loose bounds (the factor grows only like a power of
R_L), so the partition need only be fine near the fit. Leaves with the largest M_L are split
(along the side of largest width x |W column|) until M <= e^m J(z*).

Columns: leaves built, log(M / J(z*)) reached, the acceptance it implies against a Laplace
estimate of the target's mass (Z_f ≈ J(z*) π³ 5! / |det W|, Z_q = π³ s⁶ B(6, p - 6) /
|det W|, acceptance = Z_f / (M Z_q)), the uniform proposals' acceptance (vol(K) against the
same Z_f, the baseline), their ``ratio``, and the CPU seconds of the enclosures.
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np
import pandas as pd

from dpcore.data import make_regression_data
from dpcore.manifolds import SPD
from dpcore.sampling.spd2_affine import enclose_spd2_gradient, log_volume_bound, response_enclosure
from dpcore.sampling.spd2_chart import SPD2Chart, clipped_fit, gradient_jacobian
from dpcore.sampling.spd2_squeeze import _shrink
from dpcore.sensitivity import geodesic_regression_sensitivity

RADIUS, SPEED, TAU, TAU_M = 0.1, 0.55, 0.175, 0.8
P = 8.0
VERTICES = np.array(np.meshgrid(*[[0.0, 1.0]] * 6, indexing="ij")).reshape(6, -1).T


def _sigma(n, n_eps):
    dp, dv = geodesic_regression_sensitivity(n, TAU, SPD(2).curvature_bounds[0], TAU_M)
    return 2.0 * float(np.hypot(dp, dv)) / (n_eps / n)


def _leaf_log_m(lo, hi, t, ys, w, z_star, sigma, s):
    lo, hi, empty = _shrink(lo, hi, RADIUS, SPEED)
    half = 0.5 * (hi - lo)
    basis = np.zeros((lo.shape[0], 6, 6))
    basis[:, np.arange(6), np.arange(6)] = half
    enc = enclose_spd2_gradient(0.5 * (hi + lo), basis, np.zeros_like(half), t, ys, TAU)
    g0 = np.linalg.norm(enc.value, axis=1)
    u = enc.value / np.maximum(g0, 1e-300)[:, None]
    reach = np.abs(np.einsum("lr,lrj->lj", u, enc.linear)).sum(axis=1)
    ell = np.maximum(g0 - reach - np.linalg.norm(enc.error, axis=1), 0.0)
    ell[~np.isfinite(ell)] = 0.0
    verts = lo[:, None, :] + (hi - lo)[:, None, :] * VERTICES[None]
    r = np.linalg.norm(np.einsum("ij,lvj->lvi", w, verts - z_star), axis=2).max(axis=1)
    log_m = log_volume_bound(lo, hi) - ell / sigma + P * np.log1p(r / s)
    log_m[empty] = -np.inf
    return log_m, ell / sigma, r


def run(n_eps, n=100, seed=1, s=5.0, margin=3.0, cap=60000):
    m = SPD(2)
    data = make_regression_data(m, n, noise=0.05, rng=seed, footpoint_region=(np.eye(2), RADIUS))
    chart = SPD2Chart(np.eye(2))
    t = np.asarray(data.x, dtype=float)
    ytil, logdet = chart.responses(data.y)
    ys = response_enclosure(chart.T, data.y)
    sigma = _sigma(n, n_eps)
    z_star = clipped_fit(t, ytil, logdet, TAU)
    w = gradient_jacobian(z_star, t, ytil, logdet, TAU) / sigma
    log_j_star = float(np.log(SPD2Chart.volume_density(z_star[None])[0]))
    lo = np.array([[-RADIUS] * 3 + [-SPEED] * 3])
    hi = -lo
    start = time.process_time()
    log_m, _, _ = _leaf_log_m(lo, hi, t, ys, w, z_star, sigma, s)
    target = log_j_star + margin
    col = np.linalg.norm(w, axis=0)
    while True:
        bad = np.isfinite(log_m) & (log_m > target)
        if not bad.any() or lo.shape[0] + bad.sum() > cap:
            break
        d = np.argmax((hi[bad] - lo[bad]) * col, axis=1)
        blo, bhi = lo[bad], hi[bad]
        rows = np.arange(d.size)
        mid = 0.5 * (blo[rows, d] + bhi[rows, d])
        left_hi, right_lo = bhi.copy(), blo.copy()
        left_hi[rows, d] = mid
        right_lo[rows, d] = mid
        new_lo = np.concatenate([blo, right_lo])
        new_hi = np.concatenate([left_hi, bhi])
        new_m, _, _ = _leaf_log_m(new_lo, new_hi, t, ys, w, z_star, sigma, s)
        keep = ~bad
        lo = np.concatenate([lo[keep], new_lo])
        hi = np.concatenate([hi[keep], new_hi])
        log_m = np.concatenate([log_m[keep], new_m])
        live = np.isfinite(log_m)
        lo, hi, log_m = lo[live], hi[live], log_m[live]
    seconds = time.process_time() - start
    log_big_m = float(log_m.max())
    beta = math.gamma(6) * math.gamma(P - 6) / math.gamma(P)
    # acceptance = Z_f / (M Z_q) with the Laplace Z_f and the proposal's mass (docstring)
    log_acc = (log_j_star + math.log(120.0)) - (log_big_m + 6 * math.log(s) + math.log(beta))
    det_w = abs(float(np.linalg.det(w)))
    log_zf = log_j_star + 3 * math.log(math.pi) + math.log(120.0) - math.log(det_w)
    vol_k = (4 / 3 * math.pi * RADIUS**3) * (4 / 3 * math.pi * SPEED**3)
    return {"n·ε": n_eps, "n": n, "seed": seed, "s": s, "leaves": int(lo.shape[0]),
            "log(M/J*)": round(log_big_m - log_j_star, 2),
            "acceptance": float(f"{min(1.0, math.exp(log_acc)):.3g}"),
            "uniform acceptance": float(f"{math.exp(log_zf) / vol_k:.3g}"),
            "ratio": float(f"{min(1.0, math.exp(log_acc)) / (math.exp(log_zf) / vol_k):.3g}"),
            "capped": bool((log_m > target).any()), "CPU s": round(seconds, 1)}


def main(argv=None):
    args = list(sys.argv[1:] if argv is None else argv)
    opts = {"--n": 100, "--seed": 1, "--s": 5.0, "--cap": 60000}
    values = []
    while args:
        a = args.pop(0)
        if a in opts:
            opts[a] = type(opts[a])(args.pop(0))
        else:
            values.append(float(a))
    rows = [run(v, n=opts["--n"], seed=opts["--seed"], s=opts["--s"], cap=opts["--cap"])
            for v in (values or [500.0])]
    print(pd.DataFrame(rows).to_string(index=False))


if __name__ == "__main__":
    main()
