r"""Budget sweeps that record numerical breakdowns: on a fixed (real) dataset and on synthetic
data.

* :func:`real_data_budget_sweep` -- :func:`~dpcore.experiments.budget_sweep` on one fixed
  dataset, every replicate a fresh release (paper 002 fig. 2 on real shapes);
* :func:`recorded_budget_sweep` -- a synthetic-data budget sweep that records releases which
  break down numerically instead of raising (paper 002 fig. 7 on SPD(2) in paper mode);
* :data:`NUMERICAL_ERRORS` -- the errors they record.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..._validation import check_int, check_manifold
from ...data import make_regression_data
from ...release import private_geodesic_regression
from ..budget import COLUMNS, budget_pairs
from ..metrics import release_mse
from ._common import _nonprivate_fit, _parallel, _quiet_release, _root_seed, _sizes

__all__ = [
    "NUMERICAL_ERRORS",
    "real_data_budget_sweep",
    "recorded_budget_sweep",
]


#: Errors of a single release that a sweep with ``on_error="record"`` records instead of raising:
#: numerical breakdowns of the samplers (e.g. chains drifting to matrices that are no longer
#: numerically positive definite), not programming errors.
NUMERICAL_ERRORS = (ValueError, FloatingPointError, np.linalg.LinAlgError)


def _real_cell(manifold, x, y, eps_p, eps_v, seed, mode, n_footpoints, n_vectors, chain_length,
               burn_in, on_error, release_kwargs):
    try:
        with np.errstate(all="ignore"):
            rel = _quiet_release(private_geodesic_regression, manifold, x, y,
                                 eps_p=float(eps_p), eps_v=float(eps_v), mode=mode,
                                 rng=np.random.default_rng(seed), n_footpoints=n_footpoints,
                                 n_vectors=n_vectors, chain_length=chain_length,
                                 burn_in=burn_in, **release_kwargs)
            mse = float(np.mean(release_mse(manifold, rel, x, y)))
    except NUMERICAL_ERRORS:
        if on_error == "raise":
            raise
        return np.nan, True
    if not np.isfinite(mse):
        if on_error == "raise":
            raise FloatingPointError("A private geodesic gave a non-finite MSE.")
        return np.nan, True
    return mse, False


def _sweep_datasets(manifold, datasets, pairs, root, n_jobs, mode, n_footpoints, n_vectors,
                    chain_length, burn_in, on_error, release_kwargs):
    """Every budget pair on every dataset ``(n, replicate, x, y, nonprivate_mse)``."""
    if on_error not in ("raise", "record"):
        raise ValueError(f"`on_error` must be 'raise' or 'record', got {on_error!r}.")
    keys = [(d, k) for d in range(len(datasets)) for k in range(len(pairs))]
    seeds = root.spawn(len(keys))
    settings = (mode, n_footpoints, n_vectors, chain_length, burn_in, on_error,
                dict(release_kwargs))
    jobs = [(manifold, datasets[d][2], datasets[d][3], pairs[k, 0], pairs[k, 1], s, *settings)
            for (d, k), s in zip(keys, seeds, strict=True)]
    results = _parallel(_real_cell, jobs, n_jobs)
    rows = []
    for (d, k), (mse, failed) in zip(keys, results, strict=True):
        n, rep, _, _, nonprivate = datasets[d]
        ep, ev = pairs[k]
        log = float(np.log(mse)) if mse > 0 else (np.nan if failed else -np.inf)
        rows.append((n, ep, ev, ep + ev, rep, mse, log, nonprivate, failed))
    df = pd.DataFrame(rows, columns=[*COLUMNS, "failed"])
    df = df.astype({"n": int, "replicate": int})
    return df.sort_values(["n", "eps_p", "eps_v", "replicate"], kind="stable",
                          ignore_index=True)


def real_data_budget_sweep(manifold, x, y, *, split="unequal", totals=None, eps_p_grid=None,
                           eps_v_grid=None, replicates=1, rng=None, n_jobs=None, mode="paper",
                           n_footpoints=10, n_vectors=10, chain_length=1000, burn_in=500,
                           on_error="raise", **release_kwargs):
    r""":func:`~dpcore.experiments.budget_sweep` on a fixed (real) dataset.

    The data do not change between replicates; each replicate is a fresh release of
    ``n_footpoints x n_vectors`` private geodesics for every budget pair.

    Parameters
    ----------
    manifold : dpcore.manifolds.Manifold
    x : array-like, shape (n,)
        Covariates in original units.
    y : array-like, shape (n, *point_shape)
        Responses.
    split, totals, eps_p_grid, eps_v_grid
        The budget view, see :func:`~dpcore.experiments.budget_pairs`.
    replicates, rng, n_jobs, mode, n_footpoints, n_vectors, chain_length, burn_in
        As in :func:`~dpcore.experiments.budget_sweep`.
    on_error : {"raise", "record"}
        What to do when a release breaks down numerically (:data:`NUMERICAL_ERRORS` or a
        non-finite MSE): raise, or record the cell with ``mse`` NaN and ``failed`` True.
    **release_kwargs
        Public bounds for strict mode (``tau``, ``covariate_range``, ``tau_m``, ...).

    Returns
    -------
    pandas.DataFrame
        The columns of :func:`~dpcore.experiments.budget_sweep` (``nonprivate_mse`` is the same
        on every row) plus ``failed``.
    """
    m = check_manifold(manifold)
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    replicates = check_int(replicates, "replicates")
    pairs = budget_pairs(split, totals=totals, eps_p_grid=eps_p_grid, eps_v_grid=eps_v_grid)
    nonprivate = _nonprivate_fit(m, x, y).mse(x, y)
    datasets = [(len(x), r, x, y, nonprivate) for r in range(replicates)]
    df = _sweep_datasets(m, datasets, pairs, _root_seed(rng), n_jobs, mode, n_footpoints,
                         n_vectors, chain_length, burn_in, on_error, release_kwargs)
    df.attrs.update({"manifold": repr(m), "mode": mode, "split": split,
                     "n_footpoints": n_footpoints, "n_vectors": n_vectors,
                     "chain_length": chain_length, "burn_in": burn_in})
    return df


def recorded_budget_sweep(manifold, *, sample_sizes=(20, 50, 100), split="unequal", totals=None,
                          eps_p_grid=None, eps_v_grid=None, replicates=10, rng=None,
                          data_rng=None, nested=False, n_jobs=None, noise=None, mode="paper",
                          n_footpoints=10, n_vectors=10, chain_length=1000, burn_in=500,
                          **release_kwargs):
    r"""A synthetic-data budget sweep that records numerical breakdowns instead of raising.

    Same protocol and columns as :func:`~dpcore.experiments.budget_sweep` (one dataset per
    sample size and replicate, shared by all budget pairs), plus a ``failed`` column: a release
    that breaks down numerically gets ``mse`` NaN and ``failed`` True (see
    :func:`real_data_budget_sweep`). Use it where paper mode lets the chains leave the
    numerically representable part of the manifold, e.g. footpoints on SPD(2) at very small
    ε_p, where paper mode drops the support restriction.

    Parameters
    ----------
    manifold : dpcore.manifolds.Manifold
    sample_sizes, split, totals, eps_p_grid, eps_v_grid, replicates, n_jobs, noise, mode,
    n_footpoints, n_vectors, chain_length, burn_in, **release_kwargs
        As in :func:`~dpcore.experiments.budget_sweep`.
    rng : None, int, SeedSequence or Generator
        Seed; its first child draws the datasets, its second the releases.
    data_rng : None, int, SeedSequence or Generator, optional
        Separate seed of the datasets, so that sweeps of different views can share them.
    nested : bool
        If True, each replicate draws one dataset of the largest size and the smaller sizes use
        its first ``n`` points (the covariates are i.i.d., so each prefix is a sample of its
        own): the sizes then share the data-generating geodesic, which on SPD(2) fixes the
        data-dependent radius τ_m that otherwise dominates the differences between sizes.

    Returns
    -------
    pandas.DataFrame
    """
    m = check_manifold(manifold)
    sizes = _sizes(sample_sizes, minimum=3)
    replicates = check_int(replicates, "replicates")
    pairs = budget_pairs(split, totals=totals, eps_p_grid=eps_p_grid, eps_v_grid=eps_v_grid)
    data_root, cell_root = _root_seed(rng).spawn(2)
    if data_rng is not None:
        data_root = _root_seed(data_rng, "data_rng")
    data_seeds = data_root.spawn(len(sizes) * replicates)
    datasets = []
    if nested:
        full = [make_regression_data(m, max(sizes), noise=noise, rng=data_seeds[r])
                for r in range(replicates)]
    for i, n in enumerate(sizes):
        for r in range(replicates):
            if nested:
                x, y = full[r].x[:n], full[r].y[:n]
            else:
                x, y = make_regression_data(m, n, noise=noise,
                                            rng=data_seeds[i * replicates + r])
            datasets.append((n, r, x, y, _nonprivate_fit(m, x, y).mse(x, y)))
    df = _sweep_datasets(m, datasets, pairs, cell_root, n_jobs, mode, n_footpoints, n_vectors,
                         chain_length, burn_in, "record", release_kwargs)
    df.attrs.update({"manifold": repr(m), "mode": mode, "split": split, "noise": noise,
                     "nested": nested, "n_footpoints": n_footpoints, "n_vectors": n_vectors,
                     "chain_length": chain_length, "burn_in": burn_in,
                     "failed": int(df["failed"].sum())})
    return df
