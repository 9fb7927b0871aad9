"""The whole sphere's far field at large n·ε (issue 28, research measurement): how small g gets
away from the fit, how much of the target's mass lies there, and how much of it a rotation-path
bound would certify, sampled (not proven) at uniform points of the whole-sphere support.

Data: ``bench_bundle_native.pole_data`` (n = 250, τ = 0.2, noise 0.1, covariates in [0, 1]);
the support is every footpoint of S² and shooting vectors up to π (the whole-sphere release's);
σ = 2Δ/ε with Δ = 2τ/n per component (the joint scheme).

The rotation-path bound at a point z = (p, v): the rotation R taking the frame (p, v̂, p × v̂)
to the fit's, R(s) = exp(s log R), and the speed scaled linearly, give a path c(s) from z to the
fit z*. Along it the predicted points move by isometries and along their own great circle, and
if the energy E were convex along it, −(E∘c)'(0) ≥ E(z) − E(z*), so g(z) ≥ (E(z) − E(z*)) / |c'(0)|
(the flat sampler's convexity bound, ``dpcore.sampling.bundle_flat``, along another path). On
S² E is not convex along such paths: the table reports the bound with the non-convexity
measured along the path, ∫(1 − s) max(0, −(E∘c)'') ds, subtracted (what a proof would have to
bound), and how often it reaches 16 σ. The far field's mass is estimated by uniform importance
sampling and compared with the mode's Laplace mass 12π²σ⁴ / |det DG(z*)|.

``python -m benchmarks.bench_sphere_far_field [n·ε] [points]`` (about a minute).
"""

from __future__ import annotations

import math
import sys

import numpy as np
import pandas as pd
from scipy.spatial.transform import Rotation

from dpcore.learning.regression import GeodesicRegression, regression_gradient
from dpcore.manifolds import Sphere

try:
    from bench_bundle_native import TAU, N, pole_data
except ImportError:  # run as a module from the repository root
    from benchmarks.bench_bundle_native import TAU, N, pole_data

S2 = Sphere(2)
#: Points of the path at which the energy is evaluated.
PATH_POINTS = 401


def huber_energy(t, y, p, v):
    """Clipped regression energy (1/n) Σ ρ_τ(d(Exp(p, t_i v), y_i)) at (m, 3) footpoints and
    shooting vectors."""
    speed = np.linalg.norm(v, axis=-1, keepdims=True)
    unit = v / np.where(speed > 0, speed, 1.0)
    angle = t[None, :, None] * speed[:, None, :]
    pred = np.cos(angle) * p[:, None, :] + np.sin(angle) * unit[:, None, :]
    d = np.arccos(np.clip(np.sum(pred * y[None], axis=-1), -1.0, 1.0))
    return np.mean(np.where(d <= TAU, 0.5 * d * d, TAU * d - 0.5 * TAU * TAU), axis=-1)


def g_norm(t, y, p, v):
    gp, gv = regression_gradient(S2, p, v, t, y, tau=TAU)
    return np.sqrt(np.sum(gp**2, axis=-1) + np.sum(gv**2, axis=-1))


def clipped_fit(t, y):
    """Least squares, then Riemannian gradient steps on the clipped energy."""
    fit = GeodesicRegression(S2, covariate_range=(0.0, 1.0)).fit(t, y)
    p, v = np.asarray(fit.footpoint_), np.asarray(fit.shooting_vector_)
    for _ in range(200):
        gp, gv = regression_gradient(S2, p, v, t, y, tau=TAU)
        p_new = S2.exp(p, -0.5 * gp)
        p, v = p_new, S2.proj_tangent(p_new, v - 0.5 * gv)
    return p, v


def _frame(p, v):
    unit = v / np.linalg.norm(v)
    return np.stack([p, unit, np.cross(p, unit)], axis=1)


def rotation_bound(t, y, p, v, fit, e_fit):
    """(−(E∘c)'(0)/|c'(0)|, E(z) − E(z*), measured non-convexity, |c'(0)|) along the
    rotation path from (p, v) to the fit."""
    ps, vs = fit
    rotvec = Rotation.from_matrix(_frame(ps, vs) @ _frame(p, v).T).as_rotvec()
    stretch = np.linalg.norm(vs) / np.linalg.norm(v) - 1.0
    s = np.linspace(0.0, 1.0, PATH_POINTS)
    rot = Rotation.from_rotvec(s[:, None] * rotvec[None]).as_matrix()
    e = huber_energy(t, y, rot @ p, (1.0 + s * stretch)[:, None] * (rot @ v))
    h = s[1] - s[0]
    slope = -(-3 * e[0] + 4 * e[1] - e[2]) / (2 * h)
    dv = np.cross(rotvec, v) + stretch * v
    dv = dv - np.dot(p, dv) * p                                  # covariant derivative of v
    speed = math.sqrt(float(np.sum(np.cross(rotvec, p) ** 2) + np.sum(dv**2)))
    second = (e[2:] - 2 * e[1:-1] + e[:-2]) / h**2
    nonconvex = float(np.sum((1 - s[1:-1]) * np.maximum(0.0, -second)) * h)
    return slope / speed, e[0] - e_fit, nonconvex, speed


def main(n_eps=1000.0, points=2000):
    t, y = pole_data(np.random.default_rng(250))
    sigma = 2.0 * math.hypot(2 * TAU / N, 2 * TAU / N) / (n_eps / N)
    fit = clipped_fit(t, y)
    e_fit = float(huber_energy(t, y, fit[0][None], fit[1][None])[0])
    rng = np.random.default_rng(1)
    p = np.asarray(S2.random_point(size=points, rng=rng))
    w = rng.standard_normal((points, 3))
    w -= np.sum(w * p, axis=-1, keepdims=True) * p
    speed = math.pi * np.sqrt(rng.random(points))          # uniform in the disc of radius pi
    v = w / np.linalg.norm(w, axis=-1, keepdims=True) * speed[:, None]
    g = g_norm(t, y, p, v) / sigma
    rows = np.array([rotation_bound(t, y, p[k], v[k], fit, e_fit) for k in range(points)])
    captured, gap, nonconvex, speed = rows.T
    bound = (gap - nonconvex) / speed / sigma
    table = []
    for lo, hi in ((0, 64), (64, 128), (128, 256), (256, math.inf)):
        sel = (g >= lo) & (g < hi)
        if not np.any(sel):
            continue
        table.append({"g/σ": f"{lo}-{hi}", "points": int(sel.sum()),
                      "captured slope / g (median)": round(float(np.median(
                          captured[sel] / sigma / g[sel])), 2),
                      "gap/σ (median)": round(float(np.median(gap[sel] / sigma))),
                      "non-convexity/σ (median)": round(float(np.median(
                          nonconvex[sel] / sigma))),
                      "bound/σ q10, q50, q90": np.round(np.quantile(bound[sel], [.1, .5, .9]),
                                                        1).tolist(),
                      "share with bound ≥ 16σ": round(float(np.mean(bound[sel] >= 16)), 2)})
    print(pd.DataFrame(table).to_string(index=False))
    # the far field's mass (uniform importance sampling) against the mode's Laplace mass
    volume = 4 * math.pi * math.pi**3
    far = volume * float(np.mean(np.exp(-g)))
    e1 = np.cross(fit[0], [1.0, 0.0, 0.0])
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(fit[0], e1)

    def grad_at(x):
        pn = S2.exp(fit[0], x[0] * e1 + x[1] * e2)
        vn = S2.transport(fit[0], pn, fit[1] + x[2] * e1 + x[3] * e2)
        gp, gv = regression_gradient(S2, pn[None], vn[None], t, y, tau=TAU)
        f1, f2 = S2.transport(fit[0], pn, e1), S2.transport(fit[0], pn, e2)
        return np.array([gp[0] @ f1, gp[0] @ f2, gv[0] @ f1, gv[0] @ f2])

    step = 1e-5
    jac = np.stack([(grad_at(step * e) - grad_at(-step * e)) / (2 * step) for e in np.eye(4)],
                   axis=1)
    mode = 12 * math.pi**2 * sigma**4 / abs(float(np.linalg.det(jac)))
    print(f"n·ε = {n_eps:g}, σ = {sigma:.3g}: smallest g/σ at {points} uniform points "
          f"{g.min():.1f}; far-field mass (uniform IS) {far:.3g}, mode's Laplace mass "
          f"{mode:.3g} (ratio {far / mode:.2g}); an envelope constant in the far field needs "
          f"g ≥ {math.log(volume / mode):.1f} σ there to stay below the mode's mass")


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 1000.0,
         int(sys.argv[2]) if len(sys.argv) > 2 else 2000)
