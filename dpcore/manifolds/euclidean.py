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
    is_linear = True

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
        """Always True.

        Parameters
        ----------
        z : array, shape ``(..., d)``
        atol : float
            Unused.

        Returns
        -------
        ndarray of bool, shape ``(...)``
        """
        return np.ones(np.shape(z)[:-1], dtype=bool)

    def _repr_args(self):
        return str(self.d)

    def exp(self, x, v):
        """``x + v``.

        Parameters
        ----------
        x, v : array, shape ``(..., d)``

        Returns
        -------
        ndarray, shape ``(..., d)``
        """
        return np.add(x, v)

    def log(self, x, y):
        """``y − x`` (no cut locus).

        Parameters
        ----------
        x, y : array, shape ``(..., d)``

        Returns
        -------
        ndarray, shape ``(..., d)``
        """
        return np.subtract(y, x)

    def dist(self, x, y):
        """``|y − x|``.

        Parameters
        ----------
        x, y : array, shape ``(..., d)``

        Returns
        -------
        ndarray, shape ``(...)``
        """
        d = np.subtract(y, x, dtype=float)
        if d.ndim == 1:
            return np.float64(math.sqrt(d @ d))
        return np.sqrt(np.sum(d * d, axis=-1))

    def transport(self, x, y, v):
        """``v`` itself (broadcast to the batch shape of ``y``).

        Parameters
        ----------
        x, y, v : array, shape ``(..., d)``

        Returns
        -------
        ndarray, shape ``(..., d)``
        """
        v = np.asarray(v, dtype=float)
        shape = np.broadcast_shapes(np.shape(y), v.shape)
        return v if shape == v.shape else np.broadcast_to(v, shape).copy()

    def proj_tangent(self, x, v):
        """``v`` itself (every vector is tangent), broadcast against ``x``.

        Parameters
        ----------
        x, v : array, shape ``(..., d)``

        Returns
        -------
        ndarray, shape ``(..., d)``
        """
        v = np.asarray(v, dtype=float)
        return np.broadcast_to(v, np.broadcast_shapes(np.shape(x), v.shape)).copy()

    def random_point(self, size=None, rng=None):
        """Standard Gaussian points.

        Parameters
        ----------
        size : int, tuple of int or None
        rng : None, int or numpy.random.Generator

        Returns
        -------
        ndarray, shape ``(*size, d)``
        """
        rng = np.random.default_rng(rng)
        size = () if size is None else np.atleast_1d(size).tolist()
        return rng.standard_normal(tuple(size) + self.point_shape)

    def _scale_by_curvature(self, p, v, w0, scale):
        return w0 * scale(0.0)

    def adjoint_dexp(self, p, v, w):
        """Both adjoints are the identity: ``(w, w)`` (the two results share memory).

        Parameters
        ----------
        p, v, w : array, shape ``(..., d)``

        Returns
        -------
        (point_part, vector_part) : tuple of ndarray, each shape ``(..., d)``
        """
        w = self.transport(p, p, w)
        return w, w

    def adjoint_dexp_point(self, p, v, w):
        """The identity: ``w`` (broadcast against ``p``).

        Parameters
        ----------
        p, v, w : array, shape ``(..., d)``

        Returns
        -------
        ndarray, shape ``(..., d)``
        """
        return self.transport(p, p, w)

    def adjoint_dexp_vector(self, p, v, w):
        """The identity: ``w`` (broadcast against ``p``).

        Parameters
        ----------
        p, v, w : array, shape ``(..., d)``

        Returns
        -------
        ndarray, shape ``(..., d)``
        """
        return self.transport(p, p, w)

    # ------------------------------------------------------------ volume
    def log_volume_density(self, x, v, *, rho=None):
        """0: ``exp_x`` is a translation.

        Parameters
        ----------
        x, v : array, shape ``(..., d)``
        rho : array, shape ``(...)``, optional
            ``|v|``; only its shape is used.

        Returns
        -------
        ndarray, shape ``(...)``
        """
        shape = self._batch_shape(x, v) if rho is None else np.shape(rho)
        return np.zeros(shape)

    def log_volume_density_max(self, rho_lo, rho_hi):
        """0.

        Parameters
        ----------
        rho_lo, rho_hi : array, shape ``(...)``

        Returns
        -------
        ndarray, shape of ``rho_hi``
        """
        return np.zeros(np.shape(rho_hi))

    def radial_log_volume(self, r):
        """``(d − 1) log r`` on [0, inf).

        Parameters
        ----------
        r : array, shape ``(...)``

        Returns
        -------
        ndarray, shape ``(...)``
        """
        return self._times_dim_minus_one(r, lambda r, a: a * np.log(r))

    def radial_dlog_volume(self, r):
        """``(d − 1) / r``.

        Parameters
        ----------
        r : array, shape ``(...)``

        Returns
        -------
        ndarray, shape ``(...)``
        """
        return self._times_dim_minus_one(r, lambda r, a: a / r)

    @property
    def volume_growth_rate(self):
        """0.0 (polynomial growth)."""
        return 0.0
