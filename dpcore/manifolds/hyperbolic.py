"""Hyperbolic space H^d in the hyperboloid model."""

from __future__ import annotations

import math

import numpy as np

from .._validation import check_int
from ._functions import sinhc
from .base import Manifold, split_along


def minkowski(u, w):
    """Minkowski bilinear form -u_0 w_0 + sum_i u_i w_i over the last axis."""
    u = np.asarray(u, dtype=float)
    w = np.asarray(w, dtype=float)
    return np.sum(u[..., 1:] * w[..., 1:], axis=-1) - u[..., 0] * w[..., 0]


class Hyperbolic(Manifold):
    """Hyperbolic space of curvature -1: {x in R^{d+1} : <x, x>_L = -1, x_0 > 0}.

    Parameters
    ----------
    d : int
        Intrinsic dimension.
    """

    curvature_bounds = (-1.0, -1.0)
    injectivity_radius = np.inf
    is_homogeneous = True

    def __init__(self, d: int):
        self.d = check_int(d, "d")
        self.dim = self.d
        self.point_shape = (self.d + 1,)

    def _repr_args(self):
        return str(self.d)

    @property
    def origin(self):
        """The point (1, 0, ..., 0)."""
        o = np.zeros(self.point_shape)
        o[0] = 1.0
        return o

    def belongs(self, x, atol=1e-8):
        x = np.asarray(x, dtype=float)
        return (np.abs(minkowski(x, x) + 1.0) <= atol * (1 + x[..., 0] ** 2)) & (x[..., 0] > 0)

    def inner(self, x, u, w):
        return minkowski(u, w)

    # Single points take a scalar path (math module), where numpy's call overhead dominates.
    def exp(self, x, v):
        x = np.asarray(x, dtype=float)
        v = np.asarray(v, dtype=float)
        if x.ndim == 1 and v.ndim == 1:
            nv = math.sqrt(max(v[1:] @ v[1:] - v[0] * v[0], 0.0))
            return math.cosh(nv) * x + (math.sinh(nv) / nv if nv > 0 else 1.0) * v
        nv = np.sqrt(np.maximum(minkowski(v, v), 0.0))[..., None]
        return np.cosh(nv) * x + sinhc(nv) * v

    def _parts(self, x, y):
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        c = np.maximum(-minkowski(x, y), 1.0)[..., None]
        u = y - c * x
        s = np.sqrt(np.maximum(minkowski(u, u), 0.0))[..., None]
        return c, u, s

    def _scalar_parts(self, x, y):
        c = max(x[0] * y[0] - x[1:] @ y[1:], 1.0)
        u = y - c * x
        return u, math.sqrt(max(u[1:] @ u[1:] - u[0] * u[0], 0.0))

    def log(self, x, y):
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        if x.ndim == 1 and y.ndim == 1:
            u, s = self._scalar_parts(x, y)
            return (math.asinh(s) / s if s > 0 else 1.0) * u
        _, u, s = self._parts(x, y)
        # s = sinh(d(x, y)), so the log is (arcsinh(s) / s) u.
        return u / sinhc(np.arcsinh(s))

    def dist(self, x, y):
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        if x.ndim == 1 and y.ndim == 1:
            xs, ys = x.tolist(), y.tolist()
            c = max(xs[0] * ys[0] - sum(a * b for a, b in zip(xs[1:], ys[1:], strict=True)), 1.0)
            u = [b - c * a for a, b in zip(xs, ys, strict=True)]
            s2 = sum(ui * ui for ui in u[1:]) - u[0] * u[0]
            return np.float64(math.asinh(math.sqrt(max(s2, 0.0))))
        _, _, s = self._parts(x, y)
        return np.arcsinh(s)[..., 0]

    def transport(self, x, y, v):
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        v = np.asarray(v, dtype=float)
        c = np.maximum(-minkowski(x, y), 1.0)[..., None]
        return v + minkowski(y, v)[..., None] / (1.0 + c) * (x + y)

    def proj_tangent(self, x, v):
        x = np.asarray(x, dtype=float)
        v = np.asarray(v, dtype=float)
        return v + minkowski(x, v)[..., None] * x

    def random_point(self, size=None, rng=None):
        """Points ``(sqrt(1 + |z|^2), z)`` with ``z`` standard Gaussian in R^d."""
        rng = np.random.default_rng(rng)
        size = () if size is None else tuple(np.atleast_1d(size).tolist())
        z = rng.standard_normal(size + (self.d,))
        x0 = np.sqrt(1.0 + np.sum(z * z, axis=-1, keepdims=True))
        return np.concatenate([x0, z], axis=-1)

    def random_tangent(self, x, rng=None):
        rng = np.random.default_rng(rng)
        x = np.asarray(x, dtype=float)
        # A standard Gaussian at the origin, moved to x by parallel transport (an isometry).
        z = np.concatenate(
            [np.zeros(x.shape[:-1] + (1,)), rng.standard_normal(x.shape[:-1] + (self.d,))], axis=-1
        )
        return self.transport(np.broadcast_to(self.origin, x.shape), x, z)

    def adjoint_dexp(self, p, v, w):
        # One pass, as on the sphere: w = a e + w_perp with e = gamma'(|v|)/|v|
        # = sinh|v| p + cosh|v| u; e maps back to u, and w_perp is scaled by cosh|v| (point)
        # or sinh|v|/|v| (vector).
        p = np.asarray(p, dtype=float)
        v = np.asarray(v, dtype=float)
        w = np.asarray(w, dtype=float)
        nv = np.sqrt(np.maximum(minkowski(v, v), 0.0))[..., None]
        u = np.divide(v, nv, out=np.zeros(np.broadcast_shapes(v.shape, nv.shape)), where=nv > 0)
        end_dir = np.sinh(nv) * p + np.cosh(nv) * u
        a = minkowski(end_dir, w)[..., None]
        w_perp = w - a * end_dir
        par = a * u
        return par + np.cosh(nv) * w_perp, par + sinhc(nv) * w_perp

    def _scale_by_curvature(self, p, v, w0, scale):
        w_par, w_perp, nv = split_along(self, p, v, w0)
        return w_par * scale(0.0) + self.pointwise(scale(-(nv**2))) * w_perp
