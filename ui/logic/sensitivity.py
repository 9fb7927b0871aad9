"""Page logic of the sensitivity page: empirical regression sensitivity ratios."""

from __future__ import annotations

import pandas as pd

from dpcore.experiments.studies import sensitivity_ratios
from ui.caps import CAPS
from ui.manifolds import make_manifold

__all__ = [
    "REGRESSION_MANIFOLDS",
    "regression_sensitivity_ratios",
    "wide_ratios",
]

#: Manifolds of the sensitivity page: tokens of :mod:`ui.manifolds` (Kendall with its default
#: 8 landmarks).
REGRESSION_MANIFOLDS = ("sphere", "spd", "kendall")


def regression_sensitivity_ratios(manifold_key, n_values, pairs, *, noise=None, seed=0):
    r"""Theory / empirical sensitivity ratios of geodesic regression (paper 002 app. G).

    The study is the library's (:func:`dpcore.experiments.sensitivity_ratios`, the report's
    figures 9-10), seed for seed: for each n, ``pairs`` times, ``n + 1`` observations, D drops
    the first and D' the last, the gradients are compared at the non-private fit of D, τ is the
    largest residual over D and D' and, for negative curvature, τ_m the radius of the ball
    about the footpoint holding all responses. This function only caps the sizes and lays the
    table out one row per pair.

    Parameters
    ----------
    manifold_key : str
        Token of :data:`REGRESSION_MANIFOLDS` (any key or token of :mod:`ui.manifolds` works).
    n_values : sequence of int
        Sample sizes (each clipped to ``3 .. CAPS["sens_max_n"]``).
    pairs : int
        Adjacent pairs per n (capped by ``CAPS["sens_pairs"]``).
    noise : float, optional
        Noise level of the generator (its default per manifold if omitted).
    seed : int

    Returns
    -------
    pandas.DataFrame
        Columns ``n``, ``pair``, ``tau``, ``tau_m``, ``theory_p``, ``theory_v``,
        ``empirical_p``, ``empirical_v``, ``ratio_p``, ``ratio_v``.
    """
    m = make_manifold(manifold_key)
    pairs = int(min(max(int(pairs), 1), CAPS["sens_pairs"]))
    sizes = sorted({int(min(max(int(v), 3), CAPS["sens_max_n"])) for v in n_values})
    long = sensitivity_ratios(m, sample_sizes=sizes, pairs=pairs, noise=noise, rng=seed)
    return wide_ratios(long)


def wide_ratios(long):
    """The study's rows (one per n, pair and parameter) as one row per pair."""
    key = ["n", "pair"]
    foot = long[long["parameter"] == "footpoint"].set_index(key)
    vec = long[long["parameter"] == "shooting_vector"].set_index(key)
    out = pd.DataFrame({
        "tau": foot["tau"], "tau_m": foot["tau_m"],
        "theory_p": foot["theoretical"], "theory_v": vec["theoretical"],
        "empirical_p": foot["empirical"], "empirical_v": vec["empirical"],
        "ratio_p": foot["ratio"], "ratio_v": vec["ratio"],
    })
    return out.reset_index()
