r"""How the split of a privacy budget between footpoint and shooting vector affects utility.

Paper 002 (§4, figs. 1, 2 and 7) draws, for each budget pair :math:`(\epsilon_p, \epsilon_v)`,
``m`` private footpoints and ``m`` private shooting vectors at each (``m = 10``), computes the mean
squared error :math:`E_{ij}` of every one of the ``m^2`` private geodesics on the data and plots
the log of their average :math:`\ln \bar{\mathcal E}` against the budget, for ``n`` = 20, 50
and 100 points, in two views:

* an *unequal* split of a fixed total: :math:`\epsilon_p` from 0.02 to 2.0 and
  :math:`\epsilon_v = 2.02 - \epsilon_p` (total 2.02);
* an *equal* split :math:`\epsilon_p = \epsilon_v` across totals from 0.2 to 2.0.

:func:`budget_sweep` regenerates those experiments (and a full :math:`(\epsilon_p, \epsilon_v)`
grid) as a tidy :class:`pandas.DataFrame`, with *replicates*: each replicate is a fresh synthetic
data set (paper protocol, :func:`dpcore.data.make_regression_data`) and a fresh release of
``n_footpoints x n_vectors`` private geodesics, so the spread over replicates gives standard
errors. Cells (one release each) are independent and can run in parallel with joblib.
"""

from __future__ import annotations

import inspect
import numbers
import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd

from .._validation import check_int, check_manifold, check_positive, check_positive_array
from ..data import make_regression_data
from ..exceptions import PrivacyLeakWarning
from ..learning import GeodesicRegression
from ..release import MODES, private_geodesic_regression_budgets
from ..release.batching import MAX_BATCH_CHAINS, budget_pair_batches
from ..settings import check_limit
from ._parallel import parallel_map
from .metrics import release_mse

__all__ = [
    "CELLS_FROM",
    "COLUMNS",
    "LAW_COLUMNS",
    "PAPER_TOTAL",
    "SPLITS",
    "budget_pairs",
    "budget_sweep",
    "default_eps_p_grid",
]

#: Columns of the DataFrame returned by :func:`budget_sweep`, in order.
COLUMNS = ("n", "eps_p", "eps_v", "epsilon", "replicate", "mse", "log_mse", "nonprivate_mse")
#: Columns added with ``cells_from="exact_or_law"``.
LAW_COLUMNS = ("scheme", "source", "flag")
#: Where :func:`budget_sweep`'s cells come from.
CELLS_FROM = ("release", "exact_or_law")
SPLITS = ("unequal", "equal", "grid")
#: Total of paper 002's unequal splits (eps_p in [0.02, 2.0], eps_v = 2.02 - eps_p).
PAPER_TOTAL = 2.02
#: Totals of paper 002's equal-split experiments (ten steps from 0.2 to 2.0).
PAPER_EQUAL_TOTALS = tuple(np.round(np.linspace(0.2, 2.0, 10), 10))
#: Default grid of each budget for ``split="grid"``.
DEFAULT_GRID = tuple(np.round(np.geomspace(0.02, 2.0, 7), 6))


# ---------------------------------------------------------------------------- budget grids
def default_eps_p_grid(total=PAPER_TOTAL, size=9):
    r"""Footpoint budgets of an unequal split of ``total``, symmetric on a log scale.

    The ratio :math:`\epsilon_p / \epsilon_v` runs over ``size`` log-spaced values from 1/100 to
    100, so every split has its mirror image and the middle one is the equal split. For the
    paper's total 2.02 this gives :math:`\epsilon_p` from 0.02 to 2.0 (paper 002 §4).

    Parameters
    ----------
    total : float
        Total budget :math:`\epsilon_p + \epsilon_v`.
    size : int
        Number of splits (at least 2).

    Returns
    -------
    ndarray, shape (size,)
        Increasing :math:`\epsilon_p` values, all strictly between 0 and ``total``.
    """
    total = check_positive(total, "total")
    size = check_int(size, "size", minimum=2)
    ratio = np.geomspace(0.01, 100.0, size)
    return total * ratio / (1.0 + ratio)


def budget_pairs(split="unequal", *, totals=None, eps_p_grid=None, eps_v_grid=None):
    r"""The :math:`(\epsilon_p, \epsilon_v)` pairs of one budget view.

    Parameters
    ----------
    split : {"unequal", "equal", "grid"}
        ``"unequal"``: for each total, :math:`\epsilon_p` from ``eps_p_grid`` (default
        :func:`default_eps_p_grid` of that total) and :math:`\epsilon_v = \text{total} -
        \epsilon_p`; ``"equal"``: :math:`\epsilon_p = \epsilon_v = \text{total}/2` for each
        total; ``"grid"``: every pair of ``eps_p_grid`` x ``eps_v_grid``.
    totals : sequence of float, optional
        Totals :math:`\epsilon_p + \epsilon_v` per geodesic. Defaults: ``(2.02,)`` for
        ``"unequal"``, ten totals from 0.2 to 2.0 for ``"equal"``; ignored for ``"grid"``.
    eps_p_grid, eps_v_grid : sequence of float, optional
        Budgets for ``"unequal"`` (``eps_p_grid`` only; each must be below every total) and
        ``"grid"`` (default seven log-spaced values from 0.02 to 2 each).

    Returns
    -------
    ndarray, shape (k, 2)
        Rows :math:`(\epsilon_p, \epsilon_v)`.

    Raises
    ------
    ValueError
        For an unknown ``split``, non-positive budgets, or an unequal split whose
        :math:`\epsilon_v` would not be positive.
    """
    if split not in SPLITS:
        raise ValueError(f"`split` must be one of {SPLITS}, got {split!r}.")
    if split == "grid":
        ep = check_positive_array(DEFAULT_GRID if eps_p_grid is None else eps_p_grid, "eps_p_grid")
        ev = check_positive_array(DEFAULT_GRID if eps_v_grid is None else eps_v_grid, "eps_v_grid")
        return np.array([(p, v) for p in ep for v in ev], dtype=float)
    if split == "equal":
        tot = check_positive_array(PAPER_EQUAL_TOTALS if totals is None else totals, "totals")
        return np.column_stack([tot / 2.0, tot / 2.0])
    tot = check_positive_array((PAPER_TOTAL,) if totals is None else totals, "totals")
    pairs = []
    for total in tot:
        ep = (default_eps_p_grid(total) if eps_p_grid is None
              else check_positive_array(eps_p_grid, "eps_p_grid"))
        if np.any(ep >= total):
            raise ValueError(
                f"`eps_p_grid` must stay below the total {total:g} so that eps_v = total - "
                f"eps_p is positive, got {ep.tolist()}."
            )
        pairs.extend((p, total - p) for p in ep)
    return np.array(pairs, dtype=float)


# ---------------------------------------------------------------------------- randomness
def _seed_sequence(rng, name="rng"):
    """A SeedSequence from None (OS entropy), an int/sequence of ints, a SeedSequence or a
    Generator (whose stream is advanced once to draw the entropy)."""
    if isinstance(rng, np.random.SeedSequence):
        return rng
    if isinstance(rng, np.random.Generator):
        return np.random.SeedSequence(rng.integers(0, 2**63, size=4).tolist())
    if rng is None or isinstance(rng, numbers.Integral) and not isinstance(rng, bool):
        return np.random.SeedSequence(rng)
    try:
        return np.random.SeedSequence([int(s) for s in rng])
    except (TypeError, ValueError) as exc:
        raise TypeError(f"`{name}` must be None, an int, a SeedSequence or a Generator, "
                        f"got {type(rng).__name__}.") from exc


# ---------------------------------------------------------------------------- cells
# Batches of budget pairs: defined beside the work estimate that prices them
# (dpcore.release.work), so that the release package never imports the experiments.
_MAX_BATCH_CHAINS = MAX_BATCH_CHAINS
_chunks = budget_pair_batches


def _run_cells(manifold, x, y, pairs, seed, mode, n_footpoints, n_vectors, chain_length,
               burn_in, release_kwargs, diagnostics=False):
    """Releases of ``n_footpoints x n_vectors`` private geodesics for several budget pairs on
    one data set, sampled in one batched run; the mean MSE of each (with ``diagnostics``,
    ``(mse, rhat, ess)``: :func:`_chain_diagnostics`).

    Inputs are first copied into fresh, aligned, C-ordered arrays: a distributed backend (Dask)
    may hand over buffers that are not 8-byte aligned, on which numpy's SIMD loops round
    differently, and a chain that differs in the last bit diverges: results would then depend on
    the backend.
    """
    x = np.require(x, dtype=float, requirements=("C", "A", "O"))
    y = np.require(y, dtype=float, requirements=("C", "A", "O"))
    pairs = np.require(pairs, dtype=float, requirements=("C", "A", "O"))
    with warnings.catch_warnings():
        if mode == "paper":
            # The sweep reproduces the papers on synthetic data; the mode is in df.attrs.
            warnings.simplefilter("ignore", PrivacyLeakWarning)
        releases = private_geodesic_regression_budgets(
            manifold, x, y, budgets=[(float(p), float(v)) for p, v in pairs], mode=mode,
            rng=np.random.default_rng(seed), n_footpoints=n_footpoints, n_vectors=n_vectors,
            chain_length=chain_length, burn_in=burn_in,
            # A budget split is the papers' sequential scheme (ε_p for the footpoint, ε_v for
            # the vector); the library's strict default is the joint scheme.
            **{"scheme": "sequential", **release_kwargs},
        )
    mses = [float(np.mean(release_mse(manifold, r, x, y))) for r in releases]
    if not diagnostics:
        return mses
    return [(mse, *_chain_diagnostics(r)) for mse, r in zip(mses, releases, strict=True)]


def _in_waves(run, jobs, n_jobs, wave):
    """Results of ``run`` over ``jobs`` in order, computed ``wave`` jobs at a time."""
    for start in range(0, len(jobs), max(1, int(wave))):
        yield from parallel_map(run, jobs[start:start + wave], n_jobs)


def _law_cells(manifold, x, y, cells, seed, n_footpoints, n_vectors, release_kwargs):
    """:func:`~dpcore.experiments.budget_cells.strict_cells` of one data set, on fresh aligned
    copies of the inputs (as :func:`_run_cells`)."""
    from .budget_cells import strict_cells

    x = np.require(x, dtype=float, requirements=("C", "A", "O"))
    y = np.require(y, dtype=float, requirements=("C", "A", "O"))
    return strict_cells(manifold, x, y, cells, seed, n_footpoints, n_vectors, release_kwargs)


def _chain_diagnostics(release):
    """Worst split R-hat and smallest ESS over the MCMC stages of a release (NaN where every
    stage is exact: no chains to diagnose)."""
    stages = [d for d in release.diagnostics.values()
              if isinstance(d, dict) and not d.get("exact")]
    rhat = [d["rhat"] for d in stages if d.get("rhat") is not None]
    ess = [d["ess"] for d in stages if d.get("ess") is not None]
    return (float(max(rhat)) if rhat else np.nan, float(min(ess)) if ess else np.nan)


#: Keyword arguments of :func:`~dpcore.data.make_regression_data` that ``data_kwargs`` may set
#: (the manifold, ``n``, ``noise`` and ``rng`` are the sweep's own).
_DATA_KWARGS = tuple(name for name in inspect.signature(make_regression_data).parameters
                     if name not in ("manifold", "n", "noise", "rng"))


def _check_data_kwargs(data_kwargs):
    """``data_kwargs`` as a plain dict of the generator's optional keywords."""
    if data_kwargs is None:
        return {}
    if not isinstance(data_kwargs, Mapping):
        raise TypeError("`data_kwargs` must be a mapping of keyword arguments of "
                        f"make_regression_data or None, got {type(data_kwargs).__name__}.")
    unknown = [k for k in data_kwargs if k not in _DATA_KWARGS]
    if unknown:
        own = [k for k in unknown if k in ("n", "noise", "rng", "manifold")]
        hint = (" (the sweep sets them itself: use `sample_sizes`, `noise` and `data_rng`)"
                if own else "")
        raise ValueError(f"`data_kwargs` holds {unknown}, which make_regression_data does not "
                         f"take from it{hint}; allowed: {list(_DATA_KWARGS)}.")
    return dict(data_kwargs)


def _plain(value):
    """``value`` with arrays (also inside tuples, lists and dicts) as nested lists, for
    ``df.attrs``."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(_plain(v) for v in value)
    return value


def _nonprivate_mse(manifold, x, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        fit = GeodesicRegression(manifold, tol=1e-8).fit(x, y)
    return fit.mse(x, y)


# ---------------------------------------------------------------------------- the sweep
def budget_sweep(
    manifold,
    *,
    sample_sizes=(20, 50, 100),
    split="unequal",
    totals=None,
    eps_p_grid=None,
    eps_v_grid=None,
    replicates=10,
    rng=None,
    data_rng=None,
    mode="paper",
    n_jobs=None,
    noise=None,
    n_footpoints=10,
    n_vectors=10,
    chain_length=1000,
    burn_in=500,
    progress=None,
    cells=None,
    diagnostics=False,
    data_kwargs=None,
    cells_from="release",
    joint_reference=False,
    **release_kwargs,
):
    r"""Utility of private geodesic regression across budget splits and sample sizes.

    For every sample size ``n`` and replicate a synthetic data set is drawn (paper protocol,
    :func:`dpcore.data.make_regression_data`, or a stated design through ``data_kwargs``); it
    is shared by all budget pairs of that replicate, so splits are compared on the same data.
    For every budget pair one release
    of ``n_footpoints x n_vectors`` private geodesics is drawn
    (:func:`dpcore.release.private_geodesic_regression`) and their MSEs on the data are averaged.
    The releases of all budget pairs on one data set are sampled together
    (:func:`dpcore.release.private_geodesic_regression_budgets`: one batched sampler run, one
    step-size group per budget), which is what makes a sweep fast.

    Parameters
    ----------
    manifold : dpcore.manifolds.Manifold
    sample_sizes : sequence of int
        Sample sizes ``n`` (each at least 3).
    split : {"unequal", "equal", "grid"}
        The budget view, see :func:`budget_pairs`.
    totals, eps_p_grid, eps_v_grid : optional
        Budgets, see :func:`budget_pairs`. Defaults follow paper 002: total 2.02 with
        :math:`\epsilon_p` from 0.02 to 2.0 (unequal), totals 0.2 to 2.0 (equal).
    replicates : int
        Data sets (and releases) per sample size and budget pair.
    rng : None, int, SeedSequence or Generator
        Seed of the whole sweep; every cell gets an independent child of
        ``np.random.SeedSequence(rng).spawn``, so results do not depend on ``n_jobs``.
        None draws fresh OS entropy (recorded in ``df.attrs["entropy"]``).
    data_rng : None, int, SeedSequence or Generator, optional
        Separate seed of the synthetic data sets (one child per sample size and replicate).
        Pass the same ``data_rng`` to sweeps of different views to run them on the same data;
        by default it is derived from ``rng``.
    mode : {"paper", "strict"}
        ``"paper"`` (default) reproduces the papers: bounds come from the data and KNG uses
        :math:`\sigma = \Delta/\epsilon`; the :class:`~dpcore.exceptions.PrivacyLeakWarning` of
        every release is suppressed (the mode is recorded in ``df.attrs``). ``"strict"`` needs the
        public bounds in ``release_kwargs`` (``tau``, ``covariate_range`` and, where the
        manifold needs it, ``tau_m``).
    n_jobs : int, optional
        Number of joblib workers; None or 1 runs in this process.
    noise : float, optional
        Noise level of the synthetic data (default per manifold, see
        :func:`~dpcore.data.make_regression_data`).
    n_footpoints, n_vectors : int
        Private footpoints per release and shooting vectors per footpoint (the papers: 10 x 10).
    chain_length, burn_in : int
        Metropolis-Hastings settings of every release.
    progress : callable, optional
        Called as ``progress(fraction)`` (fraction of cells done, in (0, 1]) after each finished
        batch: the budget pairs of one data set run as one batched sampler run (in chunks of at
        most 2000 chains). Meant for a progress bar. With ``n_jobs > 1`` the batches run in
        waves of ``n_jobs`` and the calls come as each wave completes. The callback may raise
        (to cancel): the exception propagates and nothing is returned. Results do not depend
        on it.
    cells : iterable of (n, replicate), optional
        Compute only these cells of the sweep (default: all). Every cell keeps the seeds it
        has in the whole sweep, so the rows of separate calls over a partition of the cells,
        concatenated and sorted, equal the rows of one call (the dashboard runs a sweep cell by
        cell to show progress and to stop between cells).
    diagnostics : bool
        Add the columns ``rhat`` (worst split R-hat over the release's MCMC stages) and
        ``ess`` (smallest effective sample size), NaN where the release is exact.
    data_kwargs : dict, optional
        Further keyword arguments of :func:`~dpcore.data.make_regression_data` for every data
        set, e.g. ``{"footpoint_region": (center, radius)}``: a demonstration's design whose
        facts (footpoint region, speed) may then be stated as public bounds in
        ``release_kwargs`` (``footpoint_radius``, ``center``, ``max_speed``). ``n``, ``noise``
        and ``rng`` are the sweep's own and are refused here. None (default) keeps the
        paper's protocol; the seeds are the same either way.
    cells_from : {"release", "exact_or_law"}
        ``"release"`` (default): every cell is a release of
        :func:`~dpcore.release.private_geodesic_regression_budgets` with the papers'
        sequential scheme (Metropolis-Hastings chains on curved spaces; their diagnostics with
        ``diagnostics``). ``"exact_or_law"`` (strict mode only): no chains; every cell is drawn
        exactly where the public worst case of exact sampling is within reach, else from the
        mechanism's asymptotic law, a prediction checked against its exact target
        (:mod:`dpcore.experiments.budget_cells`); the columns ``scheme``, ``source``
        (``"exact"`` or ``"law"``) and ``flag`` (None, or why the cell's law is not trusted)
        are added.
    joint_reference : bool
        With ``cells_from="exact_or_law"``: also score the strict joint scheme (one KNG over
        (p, v) with budget ε_p + ε_v: the split does not apply) at every total of the view,
        as rows with ``scheme = "joint"`` and ``eps_p = eps_v = total / 2``.
    **release_kwargs
        Passed to :func:`~dpcore.release.private_geodesic_regression` (``tau``,
        ``covariate_range``, ``tau_m``, ``center``, ``max_speed``).

    Returns
    -------
    pandas.DataFrame
        One row per (n, budget pair, replicate) with columns :data:`COLUMNS`:

        ``n``, ``eps_p``, ``eps_v``; ``epsilon`` = ``eps_p + eps_v``, the budget of one private
        geodesic (a release of all ``n_footpoints x n_vectors`` draws costs more);
        ``replicate``; ``mse``, the average over the ``n_footpoints x n_vectors`` private
        geodesics of :math:`\frac1n\sum_k d(\tilde y_k, y_k)^2` (the papers'
        :math:`\bar{\mathcal E}`); ``log_mse`` = ``log(mse)``; ``nonprivate_mse``, the same error
        of the non-private fit on that replicate's data.

        ``df.attrs`` records the settings: ``mode``, ``private`` (False in paper mode),
        ``split``, ``manifold``, ``n_footpoints``, ``n_vectors``, ``chain_length``,
        ``burn_in``, ``noise``, ``entropy`` (of ``rng``), ``data_kwargs`` and
        ``release_kwargs`` (arrays as nested lists).

    Examples
    --------
    >>> from dpcore.manifolds import Euclidean
    >>> df = budget_sweep(Euclidean(2), sample_sizes=[20], split="equal", totals=[1.0],
    ...                   replicates=2, rng=0, n_footpoints=2, n_vectors=2)
    >>> list(df.columns)
    ['n', 'eps_p', 'eps_v', 'epsilon', 'replicate', 'mse', 'log_mse', 'nonprivate_mse']
    """
    check_manifold(manifold)
    if mode not in MODES:
        raise ValueError(f"`mode` must be one of {MODES}, got {mode!r}.")
    if mode == "strict":
        missing = [k for k in ("tau", "covariate_range") if release_kwargs.get(k) is None]
        if missing:
            raise ValueError(f"Strict mode needs the public bounds {missing} (pass them as "
                             "keyword arguments); use mode='paper' to reproduce the papers.")
    if isinstance(sample_sizes, numbers.Integral):
        sample_sizes = [sample_sizes]
    sizes = [check_int(n, "sample_sizes", minimum=3) for n in sample_sizes]
    if not sizes:
        raise ValueError("`sample_sizes` must not be empty.")
    replicates = check_int(replicates, "replicates")
    n_footpoints = check_int(n_footpoints, "n_footpoints")
    n_vectors = check_int(n_vectors, "n_vectors")
    chain_length = check_int(chain_length, "chain_length")
    burn_in = check_int(burn_in, "burn_in", minimum=0)
    if n_jobs is not None:
        n_jobs = int(n_jobs)
    if progress is not None and not callable(progress):
        raise TypeError("`progress` must be callable or None.")
    data_kwargs = _check_data_kwargs(data_kwargs)
    if cells_from not in CELLS_FROM:
        raise ValueError(f"`cells_from` must be one of {CELLS_FROM}, got {cells_from!r}.")
    if cells_from == "exact_or_law" and mode != "strict":
        raise ValueError("`cells_from='exact_or_law'` draws the strict mechanisms: use "
                         "mode='strict'.")
    if joint_reference and cells_from != "exact_or_law":
        raise ValueError("`joint_reference` needs cells_from='exact_or_law'.")
    pairs = budget_pairs(split, totals=totals, eps_p_grid=eps_p_grid, eps_v_grid=eps_v_grid)
    schemes = ["sequential"] * len(pairs)
    if joint_reference:
        joint_totals = sorted({round(float(p + v), 12) for p, v in pairs})
        pairs = np.concatenate([pairs, [(t / 2.0, t / 2.0) for t in joint_totals]])
        schemes += ["joint"] * len(joint_totals)
    check_limit("max_sweep_cells", len(sizes) * replicates * len(pairs))
    check_limit("max_replicates", n_footpoints * n_vectors)
    check_limit("max_chain_length", chain_length)
    check_limit("max_burn_in", burn_in)

    wanted = None
    if cells is not None:
        wanted = set()
        for n, rep in cells:
            if int(n) not in sizes or not 0 <= int(rep) < replicates:
                raise ValueError(f"`cells` holds ({n}, {rep}), which is not a cell of this "
                                 f"sweep (sample sizes {sizes}, {replicates} replicate(s)).")
            wanted.add((sizes.index(int(n)), int(rep)))

    root = _seed_sequence(rng)
    data_root, cell_root = root.spawn(2)
    if data_rng is not None:
        data_root = _seed_sequence(data_rng, "data_rng")
    data_seeds = data_root.spawn(len(sizes) * replicates)

    datasets, nonprivate = {}, {}
    for i, n in enumerate(sizes):
        for rep in range(replicates):
            if wanted is not None and (i, rep) not in wanted:
                continue
            x, y = make_regression_data(manifold, n, noise=noise,
                                        rng=data_seeds[i * replicates + rep], **data_kwargs)
            datasets[i, rep] = (x, y)
            nonprivate[i, rep] = _nonprivate_mse(manifold, x, y)

    # All budget pairs of one data set run as one batched sampler run (in chunks of at most
    # _MAX_BATCH_CHAINS chains); every (n, replicate, chunk) job has its own child seed, so
    # results do not depend on n_jobs.
    chunks = _chunks(len(pairs), n_footpoints * n_vectors)
    groups = [(i, rep, chunk) for i in range(len(sizes)) for rep in range(replicates)
              for chunk in chunks]
    group_seeds = cell_root.spawn(len(groups))
    if wanted is not None:
        keep = [k for k, (i, rep, _) in enumerate(groups) if (i, rep) in wanted]
        groups = [groups[k] for k in keep]
        group_seeds = [group_seeds[k] for k in keep]
    if cells_from == "release":
        run = _run_cells
        settings = (mode, n_footpoints, n_vectors, chain_length, burn_in, dict(release_kwargs),
                    bool(diagnostics))
        jobs = [(manifold, *datasets[i, rep], pairs[list(chunk)], seed, *settings)
                for (i, rep, chunk), seed in zip(groups, group_seeds, strict=True)]
    else:
        run = _law_cells
        jobs = [(manifold, *datasets[i, rep],
                 [(*pairs[k], schemes[k]) for k in chunk], seed, n_footpoints, n_vectors,
                 dict(release_kwargs)) for (i, rep, chunk), seed in zip(groups, group_seeds,
                                                                         strict=True)]

    if n_jobs is None or n_jobs == 1:
        results = (run(*job) for job in jobs)
    else:
        # Plain lists: every joblib backend supports them (multiprocessing, Dask, Ray), unlike
        # return_as="generator"; with a progress callback, in waves of n_jobs batches so that
        # progress is reported as they complete.
        results = _in_waves(run, jobs, n_jobs,
                            n_jobs if progress is not None else len(jobs))
    mse_of = {}
    done = 0
    for (i, rep, chunk), values in zip(groups, results, strict=True):
        for k, value in zip(chunk, values, strict=True):
            mse_of[i, rep, k] = value
        done += len(chunk)
        if progress is not None:
            progress(done / (len(datasets) * len(pairs)))
    keys = sorted(mse_of)
    mses = [mse_of[key] for key in keys]

    law = cells_from == "exact_or_law"
    rows = []
    for (i, rep, k), value in zip(keys, mses, strict=True):
        eps_p, eps_v = pairs[k]
        if law:
            mse, source, flag = value
            diag = (np.nan, np.nan) if diagnostics else ()
            extra = (schemes[k], source, flag or "")
        else:
            mse, *diag = value if diagnostics else (value,)
            extra = ()
        rows.append((sizes[i], eps_p, eps_v, eps_p + eps_v, rep, mse,
                     float(np.log(mse)) if mse > 0 else -np.inf if mse == 0 else np.nan,
                     nonprivate[i, rep], *diag, *extra))
    df = pd.DataFrame(rows, columns=[*COLUMNS, *(("rhat", "ess") if diagnostics else ()),
                                     *(LAW_COLUMNS if law else ())])
    df = df.astype({"n": int, "replicate": int})
    df = df.sort_values(["n", "eps_p", "eps_v", "replicate", *(["scheme"] if law else [])],
                        kind="stable", ignore_index=True)
    df.attrs.update({
        "mode": mode,
        "private": mode == "strict",
        "split": split,
        "manifold": repr(manifold),
        "n_footpoints": n_footpoints,
        "n_vectors": n_vectors,
        "chain_length": chain_length,
        "burn_in": burn_in,
        "noise": noise,
        "entropy": root.entropy,
        "cells_from": cells_from,
        "data_kwargs": _plain(data_kwargs),
        "release_kwargs": {k: (np.asarray(v).tolist() if isinstance(v, np.ndarray) else v)
                           for k, v in release_kwargs.items()},
    })
    return df
