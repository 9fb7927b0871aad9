"""Flat Euclidean space R^d."""

from __future__ import annotations

import math

import numpy as np

from .._validation import check_int
from .base import Manifold


class Euclidean(Manifold):
    """Euclidean space R^d with the standard inner product.

    Parameters
    ----------
    d : int
        Dimension.
    """

    curvature_bounds = (0.0, 0.0)
    injectivity_radius = np.inf
    is_homogeneous = True

    def __init__(self, d: int):
        self.d = check_int(d, "d")
        self.dim = self.d
        self.point_shape = (self.d,)

    @property
    def origin(self):
        """The zero vector, shape ``(d,)``."""
        return np.zeros(self.point_shape)

    @property
    def ambient_dim(self):
        """d: R^d is its own ambient space."""
        return self.d

    def on_manifold(self, z, atol=1e-9):
        """Always True, shape ``batch``."""
        return np.ones(np.shape(z)[:-1], dtype=bool)

    def _repr_args(self):
        return str(self.d)

    def exp(self, x, v):
        return np.add(x, v)

    def log(self, x, y):
        return np.subtract(y, x)

    def dist(self, x, y):
        d = np.subtract(y, x, dtype=float)
        if d.ndim == 1:
            return np.float64(math.sqrt(d @ d))
        return np.sqrt(np.sum(d * d, axis=-1))

    def transport(self, x, y, v):
        v = np.asarray(v, dtype=float)
        shape = np.broadcast_shapes(np.shape(y), v.shape)
        return v if shape == v.shape else np.broadcast_to(v, shape).copy()

    def proj_tangent(self, x, v):
        v = np.asarray(v, dtype=float)
        return np.broadcast_to(v, np.broadcast_shapes(np.shape(x), v.shape)).copy()

    def random_point(self, size=None, rng=None):
        rng = np.random.default_rng(rng)
        size = () if size is None else np.atleast_1d(size).tolist()
        return rng.standard_normal(tuple(size) + self.point_shape)

    def _scale_by_curvature(self, p, v, w0, scale):
        return w0 * scale(0.0)

    def adjoint_dexp(self, p, v, w):
        # Both adjoints are the identity; the two results share memory.
        w = self.transport(p, p, w)
        return w, w

    def adjoint_dexp_point(self, p, v, w):
        return self.transport(p, p, w)

    def adjoint_dexp_vector(self, p, v, w):
        return self.transport(p, p, w)
