r"""Non-private and private SPD(2) geodesics at equally spaced covariates, drawn as ellipses.

* :func:`spd_ellipses_study` -- paper 002 fig. 8.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..._validation import check_int
from ...data import make_regression_data
from ...manifolds import SPD
from ...release import private_geodesic_regression
from ..metrics import geodesic_predictions, release_covariate_range
from ._common import _nonprivate_fit, _quiet_release, _root_seed

__all__ = ["spd_ellipses_study"]


def spd_ellipses_study(*, n=50, eps_p=0.2, eps_v=0.2, n_covariates=6, n_draws=1, noise=None,
                       rng=None, mode="paper", chain_length=2000, burn_in=1000,
                       **release_kwargs):
    r"""Non-private and private SPD(2) geodesics at equally spaced covariates (paper 002 fig. 8).

    Parameters
    ----------
    n : int
        Sample size of the synthetic data (appendix F protocol).
    eps_p, eps_v : float
        Budgets of each private geodesic (the paper: 0.2 and 0.2).
    n_covariates : int
        Equally spaced covariates in [0, 1] at which the geodesics are evaluated.
    n_draws : int
        Private geodesics.
    noise : float, optional
        Tangent noise standard deviation (default 0.01, the paper's).
    rng, mode, chain_length, burn_in, **release_kwargs
        As in :func:`~dpcore.release.private_geodesic_regression`; ``rng`` seeds the data and
        the releases.

    Returns
    -------
    pandas.DataFrame
        One row per matrix: ``kind`` (``"generating"``, ``"nonprivate"`` or ``"private"``),
        ``draw``, ``x``, ``s11``, ``s12``, ``s22``.
    """
    m = SPD(2)
    n_draws = check_int(n_draws, "n_draws")
    data_seed, release_seed = _root_seed(rng).spawn(2)
    data = make_regression_data(m, check_int(n, "n", minimum=3), noise=noise, rng=data_seed)
    x, y = data
    xs = np.linspace(0.0, 1.0, check_int(n_covariates, "n_covariates"))
    fit = _nonprivate_fit(m, x, y, covariate_range=(0.0, 1.0))

    def frame(kind, draw, mats):
        mats = np.asarray(mats)
        return pd.DataFrame({"kind": kind, "draw": draw, "x": xs, "s11": mats[:, 0, 0],
                             "s12": mats[:, 0, 1], "s22": mats[:, 1, 1]})

    frames = [frame("generating", 0, data.true_points(xs)),
              frame("nonprivate", 0, fit.predict(xs))]
    # One release with n_draws footpoints and one vector each: independent chains, batched.
    rel = _quiet_release(private_geodesic_regression, m, x, y, eps_p=eps_p, eps_v=eps_v,
                         mode=mode, rng=np.random.default_rng(release_seed),
                         n_footpoints=n_draws, n_vectors=1, chain_length=chain_length,
                         burn_in=burn_in, **release_kwargs)
    low, high = release_covariate_range(rel)
    pts = geodesic_predictions(m, rel.values["footpoint"], rel.values["shooting_vector"],
                               (xs - low) / (high - low))
    for d in range(n_draws):
        frames.append(frame("private", d, pts[d, 0]))
    out = pd.concat(frames, ignore_index=True)
    out.attrs.update({"mode": mode, "eps_p": eps_p, "eps_v": eps_v, "n": n,
                      "nonprivate_mse": fit.mse(x, y)})
    return out
