r"""The effect of the data spread δ on private geodesic regression on the sphere (paper 002
app. E).

* :func:`noise_spread_study` -- log MSE over equal-split budgets per noise level (fig. 6);
* :func:`noise_spread_geodesics` -- data, non-private and private geodesics per noise level
  (fig. 5);
* :data:`PAPER_NOISES` -- the paper's noise levels.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..._validation import check_int, check_manifold, check_positive_array
from ...data import make_regression_data
from ...manifolds import Sphere
from ...release import private_geodesic_regression
from ..budget import budget_sweep
from ..metrics import geodesic_predictions, release_covariate_range, release_mse
from ._common import (
    _nonprivate_fit,
    _parallel,
    _quiet_release,
    _root_seed,
)

__all__ = [
    "PAPER_NOISES",
    "noise_spread_geodesics",
    "noise_spread_study",
]


#: Noise levels δ of paper 002 app. E (variance of the ambient Gaussian on the sphere).
PAPER_NOISES = (0.001, 0.01, 0.1)


def noise_spread_study(manifold=None, *, noises=PAPER_NOISES, n=50, totals=None, replicates=3,
                       rng=None, n_jobs=None, mode="paper", n_footpoints=10, n_vectors=10,
                       chain_length=1000, burn_in=500, **release_kwargs):
    r"""Log MSE of private geodesic regression for several data spreads δ (paper 002 fig. 6).

    Runs :func:`~dpcore.experiments.budget_sweep` with the equal split ε_p = ε_v = total/2 once
    per noise level, on ``n`` points, and stacks the results.

    Parameters
    ----------
    manifold : dpcore.manifolds.Manifold, optional
        Default ``Sphere(2)`` (the paper's).
    noises : sequence of float
        Noise levels δ (on the sphere the variance of the ambient Gaussian; the paper:
        0.001, 0.01, 0.1).
    n : int
        Sample size (the paper: 50).
    totals : sequence of float, optional
        Total budgets; default ten from 0.2 to 2.0 (the paper's).
    replicates, rng, n_jobs, mode, n_footpoints, n_vectors, chain_length, burn_in
        As in :func:`~dpcore.experiments.budget_sweep`; ``rng`` seeds the whole study, one
        child per noise level.
    **release_kwargs
        Passed on (public bounds in strict mode).

    Returns
    -------
    pandas.DataFrame
        The columns of :func:`~dpcore.experiments.budget_sweep` plus ``noise``.
    """
    m = Sphere(2) if manifold is None else check_manifold(manifold)
    noises = [float(d) for d in check_positive_array(noises, "noises")]
    children = _root_seed(rng).spawn(len(noises))
    frames = []
    for delta, child in zip(noises, children, strict=True):
        df = budget_sweep(m, sample_sizes=[n], split="equal", totals=totals,
                          replicates=replicates, rng=child, n_jobs=n_jobs, mode=mode,
                          noise=delta, n_footpoints=n_footpoints, n_vectors=n_vectors,
                          chain_length=chain_length, burn_in=burn_in, **release_kwargs)
        df.insert(0, "noise", delta)
        frames.append(df)
    out = pd.concat(frames, ignore_index=True)
    out.attrs.update({"manifold": repr(m), "mode": mode, "n": n})
    return out


def _spread_cell(manifold, x, y, t_grid, eps_p, eps_v, mode, chain_length, burn_in, seed):
    rel = _quiet_release(private_geodesic_regression, manifold, x, y, eps_p=eps_p, eps_v=eps_v,
                         mode=mode, rng=np.random.default_rng(seed), chain_length=chain_length,
                         burn_in=burn_in)
    low, high = release_covariate_range(rel)
    pts = geodesic_predictions(manifold, rel.values["footpoint"], rel.values["shooting_vector"],
                               (t_grid - low) / (high - low))
    return pts[0, 0], float(np.mean(release_mse(manifold, rel, x, y)))


def noise_spread_geodesics(manifold=None, *, noises=(0.01, 0.1), n=50, totals=None,
                           n_points=60, rng=None, n_jobs=None, mode="paper", chain_length=1000,
                           burn_in=500):
    r"""Data, non-private and private geodesics for several data spreads (paper 002 fig. 5).

    For every noise level one dataset of ``n`` points is drawn, fitted without privacy, and
    released once (one footpoint, one shooting vector) at each equal split ε_p = ε_v = total/2.

    Parameters
    ----------
    manifold : dpcore.manifolds.Manifold, optional
        Default ``Sphere(2)``.
    noises : sequence of float
        Noise levels δ (the paper's figure: 0.01 and 0.1).
    n : int
        Sample size (the paper: 50).
    totals : sequence of float, optional
        Total budgets; default ten from 0.2 to 2.0.
    n_points : int
        Points along each drawn geodesic (covariate from 0 to 1).
    rng, n_jobs, mode, chain_length, burn_in
        As elsewhere; one child seed per (noise, total).

    Returns
    -------
    pandas.DataFrame
        Long format, one row per point: ``noise``, ``kind`` (``"data"``, ``"nonprivate"`` or
        ``"private"``), ``epsilon`` (total budget; NaN for data and the non-private fit),
        ``mse`` (of that geodesic on the data; NaN for data rows), ``x`` (covariate), and the
        point's coordinates ``c0``, ``c1``, ... (flattened point).
    """
    m = Sphere(2) if manifold is None else check_manifold(manifold)
    noises = [float(d) for d in check_positive_array(noises, "noises")]
    tot = (np.round(np.linspace(0.2, 2.0, 10), 10) if totals is None
           else check_positive_array(totals, "totals"))
    n = check_int(n, "n", minimum=3)
    n_points = check_int(n_points, "n_points", minimum=2)
    t_grid = np.linspace(0.0, 1.0, n_points)
    root = _root_seed(rng)
    data_seeds = root.spawn(len(noises))
    cell_seeds = root.spawn(len(noises) * len(tot))
    frames, jobs, keys = [], [], []
    for i, (delta, ds) in enumerate(zip(noises, data_seeds, strict=True)):
        x, y = make_regression_data(m, n, noise=delta, rng=ds)
        fit = _nonprivate_fit(m, x, y)
        curve = fit.predict(t_grid * (x.max() - x.min()) + x.min())

        def block(kind, xs, pts, eps=np.nan, mse=np.nan, delta=delta):
            flat = np.asarray(pts).reshape(len(xs), -1)
            cols = {f"c{j}": flat[:, j] for j in range(flat.shape[1])}
            return pd.DataFrame({"noise": delta, "kind": kind, "epsilon": eps, "mse": mse,
                                 "x": xs, **cols})

        frames.append(block("data", x, y))
        frames.append(block("nonprivate", t_grid * (x.max() - x.min()) + x.min(), curve,
                            mse=fit.mse(x, y)))
        for j, total in enumerate(tot):
            jobs.append((m, x, y, t_grid * (x.max() - x.min()) + x.min(), total / 2, total / 2,
                         mode, chain_length, burn_in, cell_seeds[i * len(tot) + j]))
            keys.append((i, total, block, x))
    results = _parallel(_spread_cell, jobs, n_jobs)
    for (_, total, block, x), (pts, mse) in zip(keys, results, strict=True):
        frames.append(block("private", t_grid * (x.max() - x.min()) + x.min(), pts,
                            eps=float(total), mse=mse))
    out = pd.concat(frames, ignore_index=True)
    out.attrs.update({"manifold": repr(m), "mode": mode, "n": n})
    return out
