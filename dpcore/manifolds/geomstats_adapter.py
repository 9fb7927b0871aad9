"""Adapter exposing any geomstats space through the :class:`Manifold` interface."""

from __future__ import annotations

import numpy as np

from .base import Manifold


class GeomstatsManifold(Manifold):
    """Wrap an equipped geomstats space for the distance-based operations.

    The distance-based mechanisms (Riemannian Laplace and Gaussian, Fréchet means) need only
    ``exp``, ``log``, ``dist``, ``inner`` and random points and tangent vectors, which every
    equipped geomstats space provides. Geodesic regression also needs the adjoint Jacobi maps;
    they are available only when the space is symmetric and the caller supplies them, so they
    raise :class:`NotImplementedError` here, as do the volume laws (``log_volume_density``,
    ``radial_log_volume``, ``volume_growth_rate``) that the exact samplers need.

    Parameters
    ----------
    space : geomstats.geometry.manifold.Manifold
        An equipped geomstats space (with ``space.metric``).
    curvature_bounds : tuple of float, optional
        Public bounds on sectional curvature, needed by the sensitivity results; ``None``
        means unknown.
    injectivity_radius : float, optional
        Lower bound on the injectivity radius; if omitted, geomstats' value at a random point
        is used when the metric provides it, else ``nan``.
    is_homogeneous : bool
        Whether the isometry group acts transitively (default False, the safe choice: the
        Laplace mechanism then doubles its scale).
    """

    def __init__(
        self, space, *, curvature_bounds=None, injectivity_radius=None, is_homogeneous=False
    ):
        if not hasattr(space, "metric"):
            raise TypeError("`space` must be an equipped geomstats space with a `metric`.")
        self.space = space
        self.point_shape = tuple(space.shape)
        self.dim = int(space.dim)
        self.curvature_bounds = (
            (np.nan, np.nan) if curvature_bounds is None else tuple(map(float, curvature_bounds))
        )
        if injectivity_radius is None:
            try:
                injectivity_radius = float(
                    np.min(space.metric.injectivity_radius(space.random_point()))
                )
            except (NotImplementedError, AttributeError):
                injectivity_radius = np.nan
        self.injectivity_radius = float(injectivity_radius)
        self.is_homogeneous = bool(is_homogeneous)

    def _repr_args(self):
        return type(self.space).__name__

    def belongs(self, x, atol=1e-8):
        """geomstats' ``space.belongs``.

        Parameters
        ----------
        x : array, shape ``(..., *point_shape)``
        atol : float

        Returns
        -------
        ndarray of bool, shape ``(...)``
        """
        return np.asarray(self.space.belongs(np.asarray(x, dtype=float), atol=atol))

    def inner(self, x, u, w):
        """geomstats' ``metric.inner_product(u, w, x)``.

        Parameters
        ----------
        x, u, w : array, shape ``(..., *point_shape)``

        Returns
        -------
        ndarray, shape ``(...)``
        """
        return np.asarray(self.space.metric.inner_product(u, w, x), dtype=float)

    def exp(self, x, v):
        """geomstats' ``metric.exp(v, x)``.

        Parameters
        ----------
        x, v : array, shape ``(..., *point_shape)``

        Returns
        -------
        ndarray, shape ``(..., *point_shape)``
        """
        return np.asarray(self.space.metric.exp(np.asarray(v, dtype=float), x), dtype=float)

    def log(self, x, y):
        """geomstats' ``metric.log(y, x)`` (no cut-locus check).

        Parameters
        ----------
        x, y : array, shape ``(..., *point_shape)``

        Returns
        -------
        ndarray, shape ``(..., *point_shape)``
        """
        return np.asarray(self.space.metric.log(np.asarray(y, dtype=float), x), dtype=float)

    def dist(self, x, y):
        """geomstats' ``metric.dist(x, y)``.

        Parameters
        ----------
        x, y : array, shape ``(..., *point_shape)``

        Returns
        -------
        ndarray, shape ``(...)``
        """
        return np.asarray(self.space.metric.dist(np.asarray(x, dtype=float), y), dtype=float)

    def transport(self, x, y, v):
        """geomstats' ``metric.parallel_transport(v, x, end_point=y)``.

        Parameters
        ----------
        x, y, v : array, shape ``(..., *point_shape)``

        Returns
        -------
        ndarray, shape ``(..., *point_shape)``
        """
        return np.asarray(
            self.space.metric.parallel_transport(np.asarray(v, dtype=float), x, end_point=y),
            dtype=float,
        )

    def proj_tangent(self, x, v):
        """geomstats' ``space.to_tangent(v, x)``.

        Parameters
        ----------
        x, v : array, shape ``(..., *point_shape)``

        Returns
        -------
        ndarray, shape ``(..., *point_shape)``
        """
        return np.asarray(self.space.to_tangent(np.asarray(v, dtype=float), x), dtype=float)

    def random_point(self, size=None, rng=None):
        """Random points drawn from ``rng`` alone (numpy's global state is never touched).

        Standard Gaussian ambient arrays are mapped onto the space by its ``projection``
        (normalization on a hypersphere, eigenvalue flooring on SPD matrices, ...); geomstats'
        own ``random_point`` is not used because it draws from numpy's global random state.

        Parameters
        ----------
        size : int, tuple of int or None
        rng : None, int or numpy.random.Generator

        Returns
        -------
        ndarray, shape ``(*size, *point_shape)``

        Raises
        ------
        NotImplementedError
            If the wrapped space has no ``projection``.
        """
        rng = np.random.default_rng(rng)
        n = 1 if size is None else int(np.prod(size))
        project = getattr(self.space, "projection", None)
        if project is None:
            raise NotImplementedError(
                f"{type(self.space).__name__} has no `projection`; pass points of your own "
                "instead of asking GeomstatsManifold for random ones."
            )
        raw = rng.standard_normal((n,) + self.point_shape)
        if len(self.point_shape) == 2 and self.point_shape[0] == self.point_shape[1]:
            raw = 0.5 * (raw + np.swapaxes(raw, -1, -2))
            raw = raw + self.point_shape[0] * np.eye(self.point_shape[0])
        pts = np.asarray(project(raw), dtype=float).reshape((n,) + self.point_shape)
        if size is None:
            return pts[0]
        return pts.reshape(tuple(np.atleast_1d(size).tolist()) + self.point_shape)

    def _scale_by_curvature(self, p, v, w0, scale):
        raise NotImplementedError(
            "GeomstatsManifold has no closed-form Jacobi fields; geodesic regression needs a "
            "built-in manifold (Euclidean, Sphere, SPD, KendallShape, Hyperbolic)."
        )
