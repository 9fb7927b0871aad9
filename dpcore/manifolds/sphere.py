"""Unit sphere S^d embedded in R^{d+1}."""

from __future__ import annotations

import math

import numpy as np

from .._validation import check_int
from ._functions import sinc, sinc_scalar
from .base import CutLocusError, Manifold, split_along

#: Points closer than this angle (radians) to each other's antipode are treated as antipodal.
CUT_TOL = 1e-8


class Sphere(Manifold):
    """The unit sphere S^d in R^{d+1} with the round metric (curvature 1).

    Parameters
    ----------
    d : int
        Intrinsic dimension (``Sphere(2)`` is the usual 2-sphere in R^3).
    """

    curvature_bounds = (1.0, 1.0)
    injectivity_radius = np.pi
    is_homogeneous = True

    def __init__(self, d: int):
        self.d = check_int(d, "d")
        self.dim = self.d
        self.point_shape = (self.d + 1,)

    def _repr_args(self):
        return str(self.d)

    def belongs(self, x, atol=1e-8):
        x = np.asarray(x, dtype=float)
        return np.abs(np.linalg.norm(x, axis=-1) - 1.0) <= atol

    # Single points take a scalar path (math module): numpy's per-call overhead dominates
    # there; the batch = loop contract test checks both paths agree.
    def exp(self, x, v):
        x = np.asarray(x, dtype=float)
        v = np.asarray(v, dtype=float)
        if x.ndim == 1 and v.ndim == 1:
            nv = math.sqrt(v @ v)
            return math.cos(nv) * x + sinc_scalar(nv) * v
        nv = np.sqrt(np.sum(v * v, axis=-1, keepdims=True))
        return np.cos(nv) * x + sinc(nv) * v

    def _angle_parts(self, x, y):
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        c = np.sum(x * y, axis=-1, keepdims=True)
        u = y - c * x
        s = np.sqrt(np.sum(u * u, axis=-1, keepdims=True))
        return c, u, s

    def log(self, x, y):
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        if x.ndim == 1 and y.ndim == 1:
            c = x @ y
            u = y - c * x
            s = math.sqrt(u @ u)
            theta = math.atan2(s, c)
            if math.pi - theta < CUT_TOL:
                raise CutLocusError("log is undefined for antipodal points on the sphere.")
            return (theta / s if s > 0 else 1.0) * u
        c, u, s = self._angle_parts(x, y)
        theta = np.arctan2(s, c)
        if np.any(np.pi - theta < CUT_TOL):
            raise CutLocusError("log is undefined for antipodal points on the sphere.")
        # theta / sin(theta) with sin(theta) = s; stable as s -> 0 when c > 0.
        return np.divide(theta, s, out=np.ones_like(s), where=s > 0) * u

    def dist(self, x, y):
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        if x.ndim == 1 and y.ndim == 1:
            c = x @ y
            u = y - c * x
            return np.float64(math.atan2(math.sqrt(u @ u), c))
        c, _, s = self._angle_parts(x, y)
        return np.arctan2(s, c)[..., 0]

    def transport(self, x, y, v):
        # The component along the unit direction u of log_x y turns into the geodesic's end
        # velocity -sin(theta) x + cos(theta) u; the orthogonal rest is unchanged.
        x = np.asarray(x, dtype=float)
        v = np.asarray(v, dtype=float)
        c, u, s = self._angle_parts(x, y)
        theta = np.arctan2(s, c)
        if np.any(np.pi - theta < CUT_TOL):
            raise CutLocusError("transport is undefined between antipodal points on the sphere.")
        unit = u / np.where(s > 0, s, 1.0)
        end_dir = -np.sin(theta) * x + np.cos(theta) * unit
        return v + np.sum(unit * v, axis=-1, keepdims=True) * (end_dir - unit)

    def proj_tangent(self, x, v):
        x = np.asarray(x, dtype=float)
        v = np.asarray(v, dtype=float)
        return v - np.sum(x * v, axis=-1, keepdims=True) * x

    def random_point(self, size=None, rng=None):
        """Uniformly distributed points."""
        rng = np.random.default_rng(rng)
        size = () if size is None else tuple(np.atleast_1d(size).tolist())
        z = rng.standard_normal(size + self.point_shape)
        return z / np.linalg.norm(z, axis=-1, keepdims=True)

    def _transport_back(self, p, v, w):
        # Along the great circle: gamma'(|v|) = -sin|v| p + cos|v| u maps back to u; the part of
        # w orthogonal to the circle's plane is kept. Valid for any |v|, also past the cut locus.
        p = np.asarray(p, dtype=float)
        v = np.asarray(v, dtype=float)
        w = np.asarray(w, dtype=float)
        nv = np.linalg.norm(v, axis=-1, keepdims=True)
        u = v / np.where(nv > 0, nv, 1.0)
        end_dir = -np.sin(nv) * p + np.cos(nv) * u
        a = np.sum(end_dir * w, axis=-1, keepdims=True)
        return w - a * end_dir + a * u

    def adjoint_dexp(self, p, v, w):
        # One pass: with u = v/|v| and e = gamma'(|v|)/|v|, w = a e + w_perp where w_perp is
        # orthogonal to the plane of the great circle; it maps back to a u + w_perp, and the
        # Jacobi scalings are 1 on u and cos|v| (point) or sin|v|/|v| (vector) on w_perp.
        p = np.asarray(p, dtype=float)
        v = np.asarray(v, dtype=float)
        w = np.asarray(w, dtype=float)
        nv = np.sqrt(np.sum(v * v, axis=-1, keepdims=True))
        u = np.divide(v, nv, out=np.zeros(np.broadcast_shapes(v.shape, nv.shape)), where=nv > 0)
        end_dir = np.cos(nv) * u - np.sin(nv) * p
        a = np.sum(end_dir * w, axis=-1, keepdims=True)
        w_perp = w - a * end_dir
        par = a * u
        return par + np.cos(nv) * w_perp, par + sinc(nv) * w_perp

    def _scale_by_curvature(self, p, v, w0, scale):
        w_par, w_perp, nv = split_along(self, p, v, w0)
        return w_par * scale(0.0) + self._pw(scale(nv**2)) * w_perp
