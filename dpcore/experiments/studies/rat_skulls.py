r"""Vilmann's rat skulls on Kendall's shape space, in place of paper 002's non-public
corpus-callosum data.

* :func:`load_rat_skulls` -- ages and landmarks; :data:`RAT_AGES`;
* :func:`rat_skull_budget_study` -- budget sweeps on the skulls (paper 002 fig. 2);
* :func:`rat_skull_shapes` -- non-private and private predicted shapes (paper 002 fig. 3).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..._validation import check_int
from ...manifolds import KendallShape
from ...release import private_geodesic_regression
from ..metrics import geodesic_predictions, release_covariate_range
from ._common import _nonprivate_fit, _quiet_release, _root_seed, data_dir
from .sweeps import real_data_budget_sweep

__all__ = [
    "RAT_AGES",
    "load_rat_skulls",
    "rat_skull_budget_study",
    "rat_skull_shapes",
]


#: Ages in days of the eight observations of each rat (``rat_skulls.npy`` is rat-major).
RAT_AGES = (7, 14, 21, 30, 40, 60, 90, 150)


def load_rat_skulls(path=None):
    """Vilmann's rat skulls: ages and landmarks (18 rats x 8 ages, 8 planar landmarks).

    Parameters
    ----------
    path : str or pathlib.Path, optional
        ``rat_skulls.npy``; default in :func:`data_dir`.

    Returns
    -------
    ages : ndarray, shape (144,)
        Age in days of each observation (:data:`RAT_AGES` repeated for each rat).
    landmarks : ndarray, shape (144, 8, 2)
    """
    path = Path(path) if path is not None else data_dir() / "rat_skulls.npy"
    arr = np.load(path)
    if arr.ndim != 3 or arr.shape[0] % len(RAT_AGES) or arr.shape[2] != 2:
        raise ValueError(f"Expected landmarks of shape (8 * rats, k, 2), got {arr.shape}.")
    ages = np.tile(np.asarray(RAT_AGES, dtype=float), arr.shape[0] // len(RAT_AGES))
    return ages, arr.astype(float)


def rat_skull_budget_study(*, path=None, split="unequal", totals=None, eps_p_grid=None,
                           replicates=1, rng=None, n_jobs=None, mode="paper", n_footpoints=10,
                           n_vectors=10, chain_length=1000, burn_in=500, **release_kwargs):
    r"""Paper 002 fig. 2 on real planar shapes: the rat skulls on Kendall's shape space.

    The 144 skull outlines (8 landmarks) are mapped to preshapes and regressed on age in days
    (rescaled to [0, 1] with the data's range in paper mode, or a public ``covariate_range``
    in strict mode); see :func:`real_data_budget_sweep` for the rest.

    Returns
    -------
    pandas.DataFrame
        As :func:`real_data_budget_sweep`.
    """
    ages, landmarks = load_rat_skulls(path)
    shape_space = KendallShape(landmarks.shape[1])
    y = shape_space.from_landmarks(landmarks)
    return real_data_budget_sweep(
        shape_space, ages, y, split=split, totals=totals, eps_p_grid=eps_p_grid,
        replicates=replicates, rng=rng, n_jobs=n_jobs, mode=mode, n_footpoints=n_footpoints,
        n_vectors=n_vectors, chain_length=chain_length, burn_in=burn_in, **release_kwargs)


def _shapes_frame(kind, draw, ages, landmarks):
    rows = []
    for a, shape in zip(ages, landmarks, strict=True):
        for j, (lx, ly) in enumerate(shape):
            rows.append((kind, draw, float(a), j, float(lx), float(ly)))
    return pd.DataFrame(rows, columns=["kind", "draw", "age", "landmark", "x", "y"])


def rat_skull_shapes(*, path=None, ages=(14, 30, 60, 90, 150), eps_p=0.3, eps_v=0.3, n_draws=1,
                     rng=None, mode="paper", chain_length=2000, burn_in=1000, **release_kwargs):
    r"""Predicted rat-skull shapes, non-private and private (paper 002 fig. 3).

    Parameters
    ----------
    path : optional
        ``rat_skulls.npy``.
    ages : sequence of float
        Ages in days at which to predict (the issue: 14, 30, 60, 90, 150).
    eps_p, eps_v : float
        Budgets of each private geodesic (the paper: 0.3 and 0.3).
    n_draws : int
        Private geodesics (each its own footpoint and shooting vector).
    rng, mode, chain_length, burn_in, **release_kwargs
        As in :func:`~dpcore.release.private_geodesic_regression`.

    Returns
    -------
    pandas.DataFrame
        One row per landmark: ``kind`` (``"nonprivate"`` or ``"private"``), ``draw``, ``age``,
        ``landmark``, ``x``, ``y``. All shapes are rotated to the non-private prediction at the
        first age (optimal rotation), so panels are comparable.
    """
    ages_data, landmarks = load_rat_skulls(path)
    shape_space = KendallShape(landmarks.shape[1])
    y = shape_space.from_landmarks(landmarks)
    ages = np.asarray(ages, dtype=float)
    fit = _nonprivate_fit(shape_space, ages_data, y)
    pred = fit.predict(ages)
    reference = pred[0]
    frames = [_shapes_frame("nonprivate", 0, ages,
                            shape_space.to_landmarks(pred, reference=reference))]
    n_draws = check_int(n_draws, "n_draws")
    # One release with n_draws footpoints and one vector each: independent chains, batched.
    rel = _quiet_release(private_geodesic_regression, shape_space, ages_data, y, eps_p=eps_p,
                         eps_v=eps_v, mode=mode, rng=np.random.default_rng(_root_seed(rng)),
                         n_footpoints=n_draws, n_vectors=1, chain_length=chain_length,
                         burn_in=burn_in, **release_kwargs)
    low, high = release_covariate_range(rel)
    pts = geodesic_predictions(shape_space, rel.values["footpoint"],
                               rel.values["shooting_vector"], (ages - low) / (high - low))
    for d in range(n_draws):
        frames.append(_shapes_frame("private", d, ages,
                                    shape_space.to_landmarks(pts[d, 0], reference=reference)))
    out = pd.concat(frames, ignore_index=True)
    out.attrs.update({"mode": mode, "eps_p": eps_p, "eps_v": eps_v,
                      "nonprivate_mse": fit.mse(ages_data, y)})
    return out
