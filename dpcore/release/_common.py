"""Checks and helpers shared by the release pipelines.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..exceptions import (
    PrivacyLeakWarning,
)
from .record import MODES


# ---------------------------------------------------------------------- shared helpers
def _check_mode(mode):
    if mode not in MODES:
        raise ValueError(f"`mode` must be one of {MODES}, got {mode!r}.")
    return mode


def _resolve_rng(rng):
    """OS entropy when ``rng`` is None; anything else is a fixed seed or caller's generator."""
    return np.random.default_rng(rng), rng is not None


def _check_responses(manifold, y, name="y"):
    y = np.asarray(y, dtype=float)
    if y.ndim != manifold.point_ndim + 1 or y.shape[1:] != manifold.point_shape:
        raise ValueError(
            f"`{name}` must have shape (n, {', '.join(map(str, manifold.point_shape))}), "
            f"got {y.shape}."
        )
    if y.shape[0] < 2:
        raise ValueError(f"`{name}` must hold at least 2 observations, got {y.shape[0]}.")
    if not np.all(np.isfinite(y)):
        raise ValueError(f"`{name}` contains NaN or infinite values.")
    return y


def _check_covariates(x, n):
    """``x`` as a float array of shape (n,), finite; ValueError otherwise."""
    x = np.asarray(x, dtype=float)
    if x.shape != (n,):
        raise ValueError(f"`x` must have shape ({n},) to match `y`, got {x.shape}.")
    if not np.all(np.isfinite(x)):
        raise ValueError("`x` contains NaN or infinite values.")
    return x


def project_to_ball(manifold, points, center, radius):
    """Geodesic projection onto ``B_radius(center)``: pull far points back along the geodesic.

    Points in the cut locus of ``center`` (e.g. antipodal on the sphere), where that geodesic is
    not unique, go to the boundary point in a fixed direction (the first vector of
    :meth:`~dpcore.manifolds.Manifold.orthonormal_basis` at ``center``): the map stays a
    deterministic function of each point, which is all the privacy argument needs.
    """
    points = np.asarray(points, dtype=float)
    center = np.asarray(center, dtype=float)
    d = manifold.dist(points, center)
    outside = d > radius
    if not np.any(outside):
        return points
    cut = d >= manifold.injectivity_radius - 1e-6
    safe = np.where(manifold.pointwise(cut), np.broadcast_to(center, points.shape), points)
    v = manifold.log(np.broadcast_to(center, points.shape), safe)
    scale = np.where(outside & ~cut, radius / np.where(d > 0, d, 1.0), 1.0)
    pulled = manifold.exp(center, v * manifold.pointwise(scale))
    fixed = manifold.exp(center, radius * manifold.orthonormal_basis(center)[0])
    pulled = np.where(manifold.pointwise(cut), fixed, pulled)
    return np.where(manifold.pointwise(outside), pulled, points)


def _assumption(value, source, note=None):
    out = {"value": value, "source": source}
    if note:
        out["note"] = note
    return out



def _warn_paper_mode(mode, leaks, stacklevel):
    if mode == "paper":
        warnings.warn(
            "Paper mode: " + (f"bounds taken from the data ({', '.join(leaks)}); " if leaks else "")
            + "KNG uses sigma = Delta/epsilon. The release is not differentially private.",
            PrivacyLeakWarning, stacklevel=stacklevel,
        )

