"""Page logic of the Budget split page: the simulation's settings, its units of work (run
cell by cell so the page can show progress; each cell is a call of
:func:`dpcore.experiments.budget_sweep` with ``cells=``, and the cells of a view together equal
one call, :func:`view_sweep`), and its table and CSV."""

from __future__ import annotations

import io
from dataclasses import asdict, dataclass

import numpy as np

from dpcore.experiments import budget_sweep, default_eps_p_grid
from dpcore.visualization.budget import log_mse_summary as summarize
from ui.manifolds import make_manifold

from .regression_data import needs_ball

__all__ = [
    "n_releases",
    "run_chunk",
    "summarize",
    "sweep_chunks",
    "view_sweep",
    "sweep_csv",
    "sweep_table",
    "SweepConfig",
    "VIEW_IDS",
]

VIEW_IDS = {"unequal": 1, "equal": 2, "grid": 3}


@dataclass(frozen=True)
class SweepConfig:
    """A budget-split simulation (all settings; with ``seed`` it is deterministic).

    ``unequal``: ``n_unequal`` splits of ``total`` (log-symmetric, :func:`default_eps_p_grid`);
    ``equal``: ``n_equal`` log-spaced totals from ``equal_range[0]`` to ``equal_range[1]``;
    ``grid``: ``n_grid`` x ``n_grid`` log-spaced budgets over ``grid_range`` at sample size
    ``grid_n``. ``tau`` (strict mode only) is the public residual bound, with covariate range
    [0, 1] and ``tau_m`` where the manifold needs it.
    """

    kind: str = "sphere"
    param: int | None = None
    mode: str = "paper"
    sample_sizes: tuple = (20, 50, 100)
    total: float = 2.02
    n_unequal: int = 7
    equal_range: tuple = (0.2, 2.0)
    n_equal: int = 5
    grid_range: tuple = (0.05, 2.0)
    n_grid: int = 4
    grid_n: int = 50
    replicates: int = 2
    n_footpoints: int = 3
    n_vectors: int = 3
    chain_length: int = 80
    burn_in: int = 80
    noise: float | None = None
    tau: float | None = None
    tau_m: float | None = None
    views: tuple = ("unequal", "equal", "grid")
    seed: int = 0

    def as_dict(self):
        return asdict(self)

    def unequal_grid(self):
        return default_eps_p_grid(self.total, self.n_unequal)

    def equal_totals(self):
        return np.geomspace(*self.equal_range, self.n_equal)

    def grid_values(self):
        return np.geomspace(*self.grid_range, self.n_grid)


def sweep_chunks(config):
    """The units of work of a simulation: ``(view, n, replicate)`` triples, in order."""
    out = []
    for view in config.views:
        sizes = (config.grid_n,) if view == "grid" else config.sample_sizes
        for n in sizes:
            for rep in range(config.replicates):
                out.append((view, int(n), rep))
    return out


def n_releases(config):
    """How many releases (cells) the simulation makes."""
    per = {"unequal": config.n_unequal, "equal": config.n_equal, "grid": config.n_grid ** 2}
    return sum(per[v] for v, _, _ in sweep_chunks(config))


def _view_kwargs(config, view):
    """Keyword arguments of :func:`dpcore.experiments.budget_sweep` for one view: the whole
    view as one sweep (seed ``(config.seed, view)``; data seed ``config.seed``, shared by the
    views with the same sample sizes, so the unequal and equal splits see the same data)."""
    kw = {}
    if config.mode == "strict":
        kw = {"tau": config.tau, "covariate_range": (0.0, 1.0)}
        if needs_ball(config.kind):
            kw["tau_m"] = config.tau_m
    if view == "unequal":
        kw.update(totals=[config.total], eps_p_grid=config.unequal_grid())
    elif view == "equal":
        kw.update(totals=config.equal_totals())
    else:
        kw.update(eps_p_grid=config.grid_values(), eps_v_grid=config.grid_values())
    sizes = [config.grid_n] if view == "grid" else [int(n) for n in config.sample_sizes]
    return dict(
        sample_sizes=sizes, split=view, replicates=config.replicates, mode=config.mode,
        noise=config.noise, rng=np.random.SeedSequence([config.seed, VIEW_IDS[view]]),
        data_rng=np.random.SeedSequence([config.seed]), n_footpoints=config.n_footpoints,
        n_vectors=config.n_vectors, chain_length=config.chain_length, burn_in=config.burn_in,
        **kw)


def view_sweep(config, view):
    """The whole sweep of one view in one call of :func:`dpcore.experiments.budget_sweep`
    (what a script or the report computes); :func:`run_chunk` computes the same rows one cell
    at a time."""
    df = budget_sweep(make_manifold(config.kind, config.param), **_view_kwargs(config, view))
    df["view"] = view
    return df


def run_chunk(config, view, n, rep):
    """One replicate of one view at one sample size: the cell ``(n, rep)`` of
    :func:`view_sweep`, with the seeds it has there (deterministic given ``config.seed``).

    Returns
    -------
    pandas.DataFrame
        The rows of :func:`view_sweep` with ``n`` and ``replicate = rep``, and a column
        ``view``.
    """
    df = budget_sweep(make_manifold(config.kind, config.param), **_view_kwargs(config, view),
                      cells=[(n, rep)])
    df["view"] = view
    return df


def sweep_table(df):
    """A compact table of the simulation results (means over replicates)."""
    s = summarize(df, ["view", "n", "eps_p", "eps_v"])
    s = s.rename(columns={"mean": "mean log MSE", "se": "SE", "nonprivate":
                          "non-private log MSE", "count": "replicates"})
    return s


def sweep_csv(df):
    """CSV text of the simulation rows (synthetic data only; no user data involved)."""
    buf = io.StringIO()
    df.to_csv(buf, index=False)
    return buf.getvalue()
