r"""Utility measures of a private geodesic-regression release.

The papers judge a private geodesic by its mean squared error on the data (paper 002 §4):
:math:`E_{ij} = \frac1n \sum_k d(\mathrm{Exp}(\tilde p_i, t_k \tilde v_{ij}), y_k)^2` for the
:math:`i`-th private footpoint and its :math:`j`-th private shooting vector. Next to it this module
measures how far the private parameters are from the non-private ones: the distance between
footpoints and, after parallel transport of the private shooting vector to the non-private
footpoint, the angle and the difference in length of the two shooting vectors.

Both use the parametrization of :func:`dpcore.release.private_geodesic_regression`: the covariate
is rescaled to ``t = (x - low) / (high - low)`` with the covariate range recorded in the release,
the footpoint sits at ``t = 0`` and the shooting vector is the velocity per unit ``t``.
"""

from __future__ import annotations

import numpy as np

from .._validation import as_float_array

__all__ = [
    "geodesic_predictions",
    "parameter_errors",
    "release_covariate_range",
    "release_mse",
]


def release_covariate_range(release):
    """The covariate range ``(low, high)`` a regression release was computed with.

    Parameters
    ----------
    release : dpcore.release.Release
        A release of :func:`~dpcore.release.private_geodesic_regression`.

    Returns
    -------
    (float, float)
    """
    try:
        low, high = release.assumptions["covariate_range"]["value"]
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError("`release` does not record a covariate range; is it a geodesic "
                         "regression release?") from exc
    return float(low), float(high)


def _release_parameters(manifold, release):
    try:
        foot = as_float_array(release.values["footpoint"], "footpoint")
        vec = as_float_array(release.values["shooting_vector"], "shooting_vector")
    except (KeyError, AttributeError) as exc:
        raise ValueError("`release` must hold a `footpoint` and a `shooting_vector`.") from exc
    ps = tuple(manifold.point_shape)
    if foot.shape[1:] != ps or vec.shape[:1] != foot.shape[:1] or vec.shape[2:] != ps:
        raise ValueError(
            f"release values do not match {manifold!r}: footpoint {foot.shape}, "
            f"shooting_vector {vec.shape}."
        )
    return foot, vec


def geodesic_predictions(manifold, footpoints, vectors, t):
    """Points ``Exp(p_i, t_k v_ij)`` of every private geodesic at every rescaled covariate.

    Parameters
    ----------
    manifold : dpcore.manifolds.Manifold
    footpoints : array-like, shape (m, *point_shape)
    vectors : array-like, shape (m, r, *point_shape)
        ``r`` shooting vectors tangent at each footpoint.
    t : array-like, shape (n,)
        Rescaled covariates.

    Returns
    -------
    ndarray, shape (m, r, n, *point_shape)
    """
    foot = as_float_array(footpoints, "footpoints")
    vec = as_float_array(vectors, "vectors")
    t = as_float_array(t, "t").ravel()
    ps = tuple(manifold.point_shape)
    m, r = vec.shape[:2]
    full = (m, r, t.size, *ps)
    base = np.broadcast_to(foot[:, None, None], full).reshape((-1, *ps))
    tb = t.reshape((1, 1, -1) + (1,) * len(ps))
    tangent = (tb * vec[:, :, None]).reshape((-1, *ps))
    return np.asarray(manifold.exp(base, tangent)).reshape(full)


def release_mse(manifold, release, x, y, *, clip_covariates=True):
    r"""Mean squared geodesic error of every private geodesic of a release on data ``(x, y)``.

    Parameters
    ----------
    manifold : dpcore.manifolds.Manifold
        The manifold the release was computed on.
    release : dpcore.release.Release
        From :func:`~dpcore.release.private_geodesic_regression`.
    x : array-like, shape (n,)
        Covariates in original units.
    clip_covariates : bool
        Clip the covariates to the release's covariate range first, as the release itself did
        (default). Otherwise a covariate outside the range is predicted by extending the
        geodesic, which on SPD overflows for far covariates (exp of a long tangent vector).
    y : array-like, shape (n, *point_shape)
        Responses.

    Returns
    -------
    ndarray, shape (n_footpoints, n_vectors)
        :math:`E_{ij} = \frac1n \sum_k d(\mathrm{Exp}(\tilde p_i, t_k \tilde v_{ij}), y_k)^2`
        (paper 002 §4; no factor 1/2). The papers report the log of the mean over all entries.
    """
    foot, vec = _release_parameters(manifold, release)
    low, high = release_covariate_range(release)
    x = as_float_array(x, "x").ravel()
    y = as_float_array(y, "y")
    ps = tuple(manifold.point_shape)
    if y.shape != (x.size, *ps):
        raise ValueError(f"`y` must have shape ({x.size}, {', '.join(map(str, ps))}), "
                         f"got {y.shape}.")
    if clip_covariates:
        x = np.clip(x, low, high)
    pred = geodesic_predictions(manifold, foot, vec, (x - low) / (high - low))
    target = np.broadcast_to(y, pred.shape)
    sq = np.asarray(manifold.squared_dist(pred.reshape((-1, *ps)), target.reshape((-1, *ps))))
    return sq.reshape(pred.shape[:3]).mean(axis=-1)


def parameter_errors(manifold, release, footpoint, shooting_vector):
    """How far the private parameters of a release are from the non-private ones.

    Parameters
    ----------
    manifold : dpcore.manifolds.Manifold
    release : dpcore.release.Release
        From :func:`~dpcore.release.private_geodesic_regression`.
    footpoint : array-like, shape point_shape
        Non-private footpoint, fitted with the release's covariate range
        (``GeodesicRegression(manifold, covariate_range=...)``).
    shooting_vector : array-like, shape point_shape
        Non-private shooting vector, tangent at ``footpoint`` (per unit rescaled covariate).

    Returns
    -------
    dict of ndarray
        ``footpoint_distance`` (m,): geodesic distance of each private footpoint to
        ``footpoint``; ``angle`` (m, r): angle in radians between ``shooting_vector`` and each
        private shooting vector parallel transported to ``footpoint`` (NaN if either is zero);
        ``length_error`` (m, r): private length minus non-private length;
        ``relative_length_error`` (m, r): ``length_error`` over the non-private length (NaN if
        that is zero).
    """
    foot, vec = _release_parameters(manifold, release)
    p_hat = as_float_array(footpoint, "footpoint")
    v_hat = as_float_array(shooting_vector, "shooting_vector")
    ps = tuple(manifold.point_shape)
    if p_hat.shape != ps or v_hat.shape != ps:
        raise ValueError(f"`footpoint` and `shooting_vector` must have shape {ps}.")
    m, r = vec.shape[:2]
    dist = np.asarray(manifold.dist(foot, np.broadcast_to(p_hat, foot.shape)), dtype=float)
    src = np.broadcast_to(foot[:, None], vec.shape).reshape((-1, *ps))
    dst = np.broadcast_to(p_hat, src.shape)
    moved = np.asarray(manifold.transport(src, dst, vec.reshape((-1, *ps))))
    len_priv = np.asarray(manifold.norm(src, vec.reshape((-1, *ps))), dtype=float)
    len_hat = float(manifold.norm(p_hat, v_hat))
    inner = np.asarray(manifold.inner(dst, moved, np.broadcast_to(v_hat, moved.shape)),
                       dtype=float)
    denom = len_priv * len_hat
    with np.errstate(invalid="ignore", divide="ignore"):
        cos = np.where(denom > 0, inner / np.where(denom > 0, denom, 1.0), np.nan)
        angle = np.arccos(np.clip(cos, -1.0, 1.0))
        length_error = len_priv - len_hat
        relative = length_error / len_hat if len_hat > 0 else np.full_like(length_error, np.nan)
    return {
        "footpoint_distance": dist.reshape(m),
        "angle": angle.reshape(m, r),
        "length_error": length_error.reshape(m, r),
        "relative_length_error": relative.reshape(m, r),
    }
