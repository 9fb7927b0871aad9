r"""The audit's own geometry of the hyperbolic plane H² (hyperboloid model, curvature −1).

Closed forms, independent of ``dpcore`` (checked against finite differences in
tests/audit/test_hyperbolic.py): d(x, y) = 2 asinh(‖x − y‖_L/2), Exp, Log, an orthonormal
frame by the Lorentz boost of the axes at o = (1, 0, 0), parallel transport along geodesics,
the volume density sinh ρ/ρ of normal coordinates and Fréchet means.
"""

import numpy as np

from . import _manifold_oracle as M


def mink(u, w):
    u, w = np.asarray(u), np.asarray(w)
    if u.shape[-1] == 3 and w.shape[-1] == 3:
        # written out: the same sum as below bit for bit, without a reduction over 2 entries
        return u[..., 1] * w[..., 1] + u[..., 2] * w[..., 2] - u[..., 0] * w[..., 0]
    return np.sum(u[..., 1:] * w[..., 1:], axis=-1) - u[..., 0] * w[..., 0]


def dist(x, y):
    d = np.asarray(x, float) - np.asarray(y, float)
    return 2.0 * np.arcsinh(0.5 * np.sqrt(np.maximum(mink(d, d), 0.0)))


def exp(x, v):
    x, v = np.broadcast_arrays(np.asarray(x, float), np.asarray(v, float))
    nv = np.sqrt(np.maximum(mink(v, v), 0.0))[..., None]
    return np.cosh(nv) * x + M.sinhc(nv) * v


def _log_parts(x, y):
    """The three components of :func:`log` (x, y (..., 3), broadcasting): :func:`dist`,
    :func:`mink` and the division written out on components, the same operations in the same
    order (so the same numbers), broadcast only as far as each operation needs."""
    x0, x1, x2 = x[..., 0], x[..., 1], x[..., 2]
    y0, y1, y2 = y[..., 0], y[..., 1], y[..., 2]
    d0, d1, d2 = x0 - y0, x1 - y1, x2 - y2
    d = 2.0 * np.arcsinh(0.5 * np.sqrt(np.maximum(d1 * d1 + d2 * d2 - d0 * d0, 0.0)))
    m = x1 * y1 + x2 * y2 - x0 * y0
    sh = M.sinhc(d)
    return (y0 + m * x0) / sh, (y1 + m * x1) / sh, (y2 + m * x2) / sh


def log(x, y):
    x, y = np.asarray(x, float), np.asarray(y, float)
    if x.shape[-1] == 3 and y.shape[-1] == 3:
        out = np.empty(np.broadcast_shapes(x.shape, y.shape))
        for k, part in enumerate(_log_parts(x, y)):
            out[..., k] = part
        return out
    x, y = np.broadcast_arrays(x, y)
    d = dist(x, y)[..., None]
    u = y + mink(x, y)[..., None] * x
    return u / M.sinhc(d)  # ‖u‖_L = sinh d


def boost(b):
    """Lorentz boost (..., 3, 3) taking o = (1, 0, 0) to b (an isometry of H²)."""
    b = np.asarray(b, float)
    s = b[..., 1:]
    out = np.empty(b.shape + (3,))
    out[..., 0, 0] = b[..., 0]
    out[..., 0, 1:] = s
    out[..., 1:, 0] = s
    out[..., 1:, 1:] = np.eye(2) + s[..., :, None] * s[..., None, :] / (1.0 + b[..., 0, None,
                                                                                   None])
    return out


def frame(z):
    """Orthonormal frame (e₁, e₂) of T_z H², each (..., 3): the boost of the axes at o."""
    bz = boost(z)
    return bz[..., :, 1], bz[..., :, 2]


def log_coords(z, y):
    """Coordinates of Log_z y in the frame at z, (..., 2).

    The frame is built at ``z`` as given and broadcast afterwards (it depends on z alone):
    on a grid z (G, 1, 3) against data y (1, n, 3) that is G boosts instead of G·n, with the
    same numbers (the boost is elementwise in z)."""
    z, y = np.asarray(z, float), np.asarray(y, float)
    e1, e2 = frame(z)
    if z.shape[-1] == 3 and y.shape[-1] == 3:  # log and mink on components: the same numbers
        v0, v1, v2 = _log_parts(z, y)
        parts = [v1 * e[..., 1] + v2 * e[..., 2] - v0 * e[..., 0] for e in (e1, e2)]
        out = np.empty(np.broadcast_shapes(z.shape, y.shape)[:-1] + (2,))
        out[..., 0], out[..., 1] = parts
        return out
    z, y = np.broadcast_arrays(z, y)
    v = log(z, y)
    return np.stack([mink(v, e1), mink(v, e2)], axis=-1)


def transport(x, y, v):
    """Parallel transport of v ∈ T_x along the geodesic to y:
    v + ⟨y, v⟩_L/(1 − ⟨x, y⟩_L) (x + y) (tangent at y since ⟨x + y, y⟩_L = ⟨x, y⟩_L − 1)."""
    x, y, v = np.broadcast_arrays(np.asarray(x, float), np.asarray(y, float),
                                  np.asarray(v, float))
    return v + (mink(y, v) / (1.0 - mink(x, y)))[..., None] * (x + y)


def volume_density(c):
    return M.sinhc(M.norm_last(c))


def frechet_mean_batch(y, iters=200):
    """Fréchet means of data sets y (..., n, 3) by the fixed point m ← Exp_m(mean Log_m y)
    (a gradient step of unit length; contractive on H², where F is strictly convex).

    The body is :func:`log`, :func:`exp` and :func:`mink` written out (the same floating-point
    operations in the same order, so bit for bit the same means) without their broadcasting
    and reduction wrappers: the audit's mean-shift searches call it hundreds of times.

    Each data set's iteration is a fixed map of its mean alone (every operation is elementwise
    or a sum over that data set's points). In floating point it ends, within a few dozen
    steps, on a cycle of last-bit values (often a fixed point); once a data set's mean repeats,
    its mean after ``iters`` steps is read off the cycle and the set leaves the batch, so the
    result is bit for bit that of all ``iters`` steps."""
    y = np.asarray(y, float)
    batch_shape = y.shape[:-2]
    y = y.reshape((-1,) + y.shape[-2:])
    m = y[:, 0, :].copy()
    out = np.empty_like(m)
    active = np.arange(y.shape[0])
    seen = [{} for _ in active]
    states = [[] for _ in active]
    for k in range(iters):
        done = np.zeros(active.size, bool)
        for i, r in enumerate(active):
            key = m[i].tobytes()
            if key in seen[r]:  # mean k equals mean j: period k − j from j on
                j = seen[r][key]
                out[r] = states[r][j + (iters - j) % (k - j)]
                done[i] = True
            else:
                seen[r][key] = k
                states[r].append(m[i].copy())
        if done.any():
            active, m, y = active[~done], m[~done], y[~done]
            if not active.size:
                break
        x = m[..., None, :]
        d = x - y
        d2 = d[..., 1] * d[..., 1] + d[..., 2] * d[..., 2] - d[..., 0] * d[..., 0]  # mink(d, d)
        dist_xy = 2.0 * np.arcsinh(0.5 * np.sqrt(np.maximum(d2, 0.0)))[..., None]
        xy = x[..., 1] * y[..., 1] + x[..., 2] * y[..., 2] - x[..., 0] * y[..., 0]
        step = ((y + xy[..., None] * x) / M.sinhc(dist_xy)).mean(axis=-2)  # mean Log_m y
        v2 = step[..., 1] * step[..., 1] + step[..., 2] * step[..., 2] - step[..., 0] * step[..., 0]
        nv = np.sqrt(np.maximum(v2, 0.0))[..., None]
        m = np.cosh(nv) * m + M.sinhc(nv) * step  # Exp_m(step)
        m2 = m[..., 1] * m[..., 1] + m[..., 2] * m[..., 2] - m[..., 0] * m[..., 0]
        m = m / np.sqrt(-m2)[..., None]  # stay on the hyperboloid
    else:
        out[active] = m
    return out.reshape(batch_shape + (3,))
