r"""Bounds estimated under DP: the range of real columns spent from a small stated budget.

Strict releases need public bounds (a covariate range, a response box). An analyst who does not
know them can spend a small part of the budget, ε_b, to estimate them privately:
:func:`private_range` releases low and high quantiles of each column by the exponential
mechanism on a public enclosing interval (:class:`~dpcore.mechanisms.ExponentialQuantile`) and
records them as a :class:`~dpcore.release.Release`. A later release that uses these bounds is
``ε_b + ε``-DP in total (sequential composition); the bounds themselves are post-processing of
the ε_b release, so the later release's own guarantee, ε, holds with them as public inputs.
"""

from __future__ import annotations

import numpy as np

from .._validation import (
    as_float_array,
    check_int,
    check_interval,
    check_positive,
    check_quantile_levels,
)
from ..mechanisms import ExponentialQuantile
from ..mechanisms.quantile import SAMPLER
from ..settings import check_limit
from ._common import _assumption, _resolve_rng
from .record import SEEDED_CAVEAT, Release

__all__ = ["DEFAULT_RANGE_QUANTILES", "private_range"]

#: Default levels of :func:`private_range`: 2% of the rows may lie below the low end and 2%
#: above the high end.
DEFAULT_RANGE_QUANTILES = (0.02, 0.98)


def _check_columns(x):
    values = as_float_array(x, "x")
    if values.ndim not in (1, 2):
        raise ValueError(f"`x` must have shape (n,) or (n, k), got {values.shape}.")
    if values.shape[0] < 1 or values.size == 0:
        raise ValueError("`x` must hold at least one row.")
    bad = ~np.isfinite(values)
    if np.any(bad):
        where = np.argwhere(bad)[0]
        at = f"row {where[0]}" + (f", column {where[1]}" if values.ndim == 2 else "")
        raise ValueError(f"`x` contains NaN or infinite values (first at {at}).")
    return values


def _check_bounds(bounds, k):
    """One ``(a, b)`` for every column, or one per column."""
    arr = np.asarray(bounds, dtype=object)
    if arr.ndim == 1:
        return [check_interval(bounds, "bounds")] * k
    if arr.ndim == 2 and arr.shape == (k, 2):
        return [check_interval(tuple(b), f"bounds[{j}]") for j, b in enumerate(bounds)]
    raise ValueError(f"`bounds` must be one pair (a, b) or {k} pairs (one per column), got "
                     f"{bounds!r}.")


def private_range(x, *, epsilon, bounds, quantiles=DEFAULT_RANGE_QUANTILES, rng=None,
                  n_draws=1):
    r"""Private low and high quantiles of real columns, to serve as public bounds later.

    Each column's levels are drawn by the exponential mechanism on its public enclosing
    interval (:class:`~dpcore.mechanisms.ExponentialQuantile`; Smith 2011): ``epsilon`` is split
    equally over the ``k`` columns and the ``m`` levels (sequential composition), so one draw
    is ``epsilon``-DP with δ = 0 for "one row replaced". The draw is exact (no MCMC).

    Parameters
    ----------
    x : array-like, shape (n,) or (n, k)
        One value per row (one column), or ``k`` columns.
    epsilon : float
        Budget of one draw (all columns and levels together).
    bounds : (float, float) or sequence of k of them
        The public enclosing interval ``(a, b)`` of each column (one pair for all): fixed
        before seeing the data, e.g. from the column's units. Values outside are clipped to it,
        and the estimates lie in it.
    quantiles : sequence of float
        Levels in [0, 1]; the default (0.02, 0.98) lets 2% of the rows lie beyond each end.
    rng : None, int or numpy.random.Generator
        None: OS entropy (for publication); a seed or generator makes the release reproducible
        and labels it "seeded: not for publication".
    n_draws : int
        Independent draws (each costs ``epsilon``; the record states the total).

    Returns
    -------
    Release
        ``values["quantiles"]``: shape ``(n_draws, m)`` for one column, ``(n_draws, k, m)``
        for ``k``; ``values["range"]``: the smallest and largest released level of each column
        (post-processing), shape ``(n_draws, 2)`` or ``(n_draws, k, 2)``. ``epsilon`` is
        ``n_draws * epsilon``, ``delta`` 0, ``assumptions["bounds"]`` the public enclosing
        interval(s), ``details`` the levels and the budget of each.
    """
    values = _check_columns(x)
    epsilon = check_positive(epsilon, "epsilon")
    levels = check_quantile_levels(quantiles, "quantiles")
    n_draws = check_int(n_draws, "n_draws")
    check_limit("max_replicates", n_draws)
    one_column = values.ndim == 1
    columns = values[:, None] if one_column else values
    n, k = columns.shape
    intervals = _check_bounds(bounds, k)
    gen, seeded = _resolve_rng(rng)
    per_column = epsilon / k
    draws = np.empty((n_draws, k, levels.size))
    mech = None
    for j in range(k):
        mech = ExponentialQuantile(epsilon=per_column, quantiles=levels, bounds=intervals[j])
        draws[:, j, :] = mech.release(columns[:, j], size=n_draws, rng=gen).values
    ranges = np.stack([draws.min(axis=-1), draws.max(axis=-1)], axis=-1)
    if one_column:
        draws, ranges = draws[:, 0, :], ranges[:, 0, :]
    caveats = []
    if n_draws > 1:
        caveats.append(f"{n_draws} independent draws: the budget is the total over all of them.")
    if seeded:
        caveats.append(SEEDED_CAVEAT)
    shown = intervals[0] if one_column else intervals
    return Release(
        values={"quantiles": draws, "range": ranges},
        mechanism=ExponentialQuantile.name,
        epsilon=float(n_draws * epsilon),
        delta=0.0,
        mu=None,
        sensitivity={"rank": mech.sensitivity},
        sigma={"quantile": mech.sigma},
        assumptions={"bounds": _assumption(
            shown, "public", "enclosing interval fixed before seeing the data; values outside "
            "it are clipped to it")},
        diagnostics={"exact": True, "sampler": SAMPLER},
        mode="strict",
        seeded=seeded,
        caveats=caveats,
        coverage="proven",
        details={"n": int(n), "columns": int(k), "quantiles": levels, "n_draws": n_draws,
                 "epsilon_per_draw": epsilon, "epsilon_per_quantile": mech.epsilon_each,
                 "composition": "sequential: epsilon split equally over the columns and the "
                                "levels"},
    )
