"""Points along geodesics, for drawing them as dense polylines."""

from __future__ import annotations

import numpy as np

from ._base import _array

__all__ = ["geodesic_curve"]


def geodesic_curve(manifold, p, v, t_grid):
    """Points ``Exp(p, t v)`` along a geodesic, for drawing it as a dense polyline.

    Parameters
    ----------
    manifold : dpcore.manifolds.Manifold
    p : array-like, shape point_shape
        Footpoint (the point at ``t = 0``).
    v : array-like, shape point_shape
        Shooting vector, tangent at ``p``.
    t_grid : array-like, shape (m,)
        Times; for a geodesic regression fit with covariates rescaled to [0, 1] use
        e.g. ``np.linspace(0, 1, 200)``.

    Returns
    -------
    ndarray, shape (m, *point_shape)
    """
    t = np.atleast_1d(_array(t_grid, "t_grid"))
    if t.ndim != 1:
        raise ValueError(f"`t_grid` must be one-dimensional, got shape {t.shape}.")
    p = _array(p, "p", trailing=manifold.point_shape, ndim=manifold.point_ndim)
    v = _array(v, "v", trailing=manifold.point_shape, ndim=manifold.point_ndim)
    return manifold.geodesic(p, v, t)
