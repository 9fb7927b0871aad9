"""Page logic of the sensitivity page: empirical regression sensitivity ratios."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpcore.data import make_regression_data
from dpcore.learning import GeodesicRegression
from dpcore.sensitivity import (
    empirical_regression_sensitivity,
    geodesic_regression_sensitivity,
)
from ui.manifolds import make_manifold

from .common import CAPS, _seed_for

__all__ = [
    "REGRESSION_MANIFOLDS",
    "regression_sensitivity_ratios",
]

#: Manifolds of the sensitivity page: tokens of :mod:`ui.manifolds` (Kendall with its default
#: 8 landmarks).
REGRESSION_MANIFOLDS = ("sphere", "spd", "kendall")


def regression_sensitivity_ratios(manifold_key, n_values, pairs, *, noise=None, seed=0):
    r"""Theory / empirical sensitivity ratios of geodesic regression (paper 002 app. G).

    For each n, ``pairs`` times: draw ``n + 1`` observations with
    :func:`dpcore.data.make_regression_data`, fit the non-private geodesic
    :math:`(\hat p, \hat v)` to all of them, let D drop the first and D' the last observation,
    and compare :math:`\|\nabla_p E(D) - \nabla_p E(D')\|` (and the same for v) at
    :math:`(\hat p, \hat v)` with the bounds of :func:`dpcore.sensitivity.
    geodesic_regression_sensitivity`, where τ is the largest residual of the ``n + 1`` points
    and, for negative curvature, :math:`\tau_m` the radius of the smallest ball about
    :math:`\hat p` holding the responses.

    Parameters
    ----------
    manifold_key : str
        Token of :data:`REGRESSION_MANIFOLDS` (any key or token of :mod:`ui.manifolds` works).
    n_values : sequence of int
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
    kappa_low = float(m.curvature_bounds[0])
    rows = []
    for n in sorted({int(v) for v in n_values}):
        n = int(min(max(n, 3), CAPS["sens_max_n"]))
        rng = _seed_for(seed, n, 2)
        for j in range(pairs):
            data = make_regression_data(m, n + 1, noise=noise, rng=rng)
            fit = GeodesicRegression(m, covariate_range=(0.0, 1.0), tol=1e-8).fit(data.x,
                                                                                   data.y)
            p, v = fit.footpoint_, fit.shooting_vector_
            pred = m.exp(np.broadcast_to(p, data.y.shape), m._pw(data.x) * v)
            tau = max(float(np.max(m.dist(pred, data.y))), 1e-12)
            tau_m = float(np.max(m.dist(p, data.y))) if kappa_low < 0 else None
            th_p, th_v = geodesic_regression_sensitivity(n, tau, kappa_low, tau_m)
            em_p, em_v = empirical_regression_sensitivity(m, data.x, data.y, p, v)
            rows.append({
                "n": n, "pair": j, "tau": tau, "tau_m": np.nan if tau_m is None else tau_m,
                "theory_p": th_p, "theory_v": th_v, "empirical_p": em_p, "empirical_v": em_v,
                "ratio_p": th_p / em_p if em_p > 0 else np.inf,
                "ratio_v": th_v / em_v if em_v > 0 else np.inf,
            })
    return pd.DataFrame(rows)
