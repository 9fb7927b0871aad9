"""Subsampling large data for drawing (issue 14: 50,000 points hide the fit and stall a browser).

A figure of tens of thousands of markers takes seconds to serialize and draw, and the points
hide what the figure is about. Drawing a uniform random subset keeps the shape of the cloud.
The subset is seeded (the same data give the same picture on every rerun) and only ever used for
drawing: estimators and releases always see the full data.
"""

from __future__ import annotations

import numpy as np

__all__ = ["DRAW_MAX_POINTS", "subsample_for_drawing", "subsample_note"]

#: Largest number of data points a figure draws.
DRAW_MAX_POINTS = 2000


def subsample_for_drawing(points, max_points=DRAW_MAX_POINTS, seed=0):
    """A uniform random subset of the rows of ``points``, without replacement, kept in order.

    Parameters
    ----------
    points : array-like, shape (n, ...)
        Rows are data points (any point shape).
    max_points : int
        At most this many rows are returned; ``points`` itself when ``n <= max_points``.
    seed : int or numpy.random.Generator
        Seed of the choice (the same seed and data give the same subset).

    Returns
    -------
    subset : ndarray, shape (min(n, max_points), ...)
    n_total : int
        ``n``, for the note under the figure (:func:`subsample_note`).
    """
    points = np.asarray(points)
    n = points.shape[0]
    max_points = int(max_points)
    if max_points < 1:
        raise ValueError(f"`max_points` must be at least 1, got {max_points!r}.")
    if n <= max_points:
        return points, n
    rows = np.sort(np.random.default_rng(seed).choice(n, size=max_points, replace=False))
    return points[rows], n


def subsample_note(n_drawn, n_total):
    """A sentence saying that a figure draws a subset, or None when it draws every point."""
    if n_drawn >= n_total:
        return None
    return (f"The figure draws a random subset of {n_drawn:,} of the {n_total:,} data points "
            "(seeded, for readability and speed); every computation uses all of them.")
