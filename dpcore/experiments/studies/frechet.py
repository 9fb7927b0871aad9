r"""Private Fréchet means by several mechanisms at equal privacy (paper 001 fig. 1, panels 2 and
4; paper 004 fig. 1, panel 3).

* :func:`frechet_mean_study` -- the manifold Laplace, ambient Laplace, KNG and Gaussian
  mechanisms, the last at the µ equivalent to ε;
* :data:`FRECHET_STUDY_MECHANISMS` -- the mechanisms it knows.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..._validation import check_int, check_manifold, check_positive, check_positive_array
from ...data import make_mean_data
from ...data.synthetic import default_center
from ...learning import frechet_mean
from ...mechanisms.laplace import ambient_dimension, embed
from ...privacy import calibrate_sigma, eps_to_mu
from ...release import private_frechet_mean
from ...sensitivity import frechet_mean_sensitivity
from .._parallel import Map, run_plan
from ._common import _quiet_release, _root_seed, _sizes

__all__ = [
    "FRECHET_STUDY_MECHANISMS",
    "frechet_mean_study",
]


FRECHET_STUDY_MECHANISMS = ("laplace", "kng", "gaussian", "ambient_laplace")

#: Rough seconds of one σ calibration (a few Monte Carlo runs), of one closed-form release and of
#: one KNG chain step: scheduling hints only (the order in which parallel tasks are dispatched,
#: longest first), never a result.
_CALIBRATION_COST = 0.2
_RELEASE_COST = 0.002
_KNG_STEP_COST = 2e-5


def _euclidean_coords(manifold, points):
    try:
        ambient_dimension(manifold)
    except NotImplementedError:
        return None
    return embed(manifold, points)


def _frechet_replicate(manifold, n, radius, center, eps_list, mechanisms, sigmas, mode,
                       chain_length, burn_in, seed):
    from ...sampling import sample_gaussian

    data_seed, *mech_seeds = seed.spawn(1 + len(eps_list) * len(mechanisms))
    y = make_mean_data(manifold, n, radius=radius, center=center, rng=data_seed)
    mean = frechet_mean(manifold, y)
    mean_e = _euclidean_coords(manifold, mean)
    rows = []
    k = 0
    for eps in eps_list:
        for mech in mechanisms:
            s = mech_seeds[k]
            k += 1
            left = False
            if mech == "gaussian":
                # Same sigma as private_frechet_mean(mechanism="gaussian", epsilon=eps): the
                # Riemannian Gaussian calibrated to mu = eps_to_mu(eps) (paper 004 §5.2),
                # computed once per (mu, Delta) by the caller.
                sigma = sigmas[(n, eps)]
                point = np.asarray(sample_gaussian(manifold, mean, sigma, size=1,
                                                   rng=np.random.default_rng(s)))[0]
                raw = point
            else:
                rel = _quiet_release(
                    private_frechet_mean, manifold, y, epsilon=float(eps), mechanism=mech,
                    radius=radius, center=center, mode=mode, rng=np.random.default_rng(s),
                    chain_length=chain_length, burn_in=burn_in, float_safe=False)
                point = np.asarray(rel.values["mean"])[0]
                sigma = float(next(iter(rel.sigma.values())))
                raw = point
                if mech == "ambient_laplace":
                    raw = np.asarray(rel.values["ambient"])[0]
                    left = bool(np.asarray(rel.values["left_manifold"])[0])
            geo = float(manifold.dist(mean, point))
            if mean_e is None:
                eucl = np.nan
            else:
                eucl = float(np.linalg.norm(_euclidean_coords(manifold, raw) - mean_e))
            rows.append((eps, mech, geo, eucl, left, sigma))
    return rows


def frechet_mean_study(manifold, *, sample_sizes, epsilon=1.0, radius, replicates=200,
                       mechanisms=FRECHET_STUDY_MECHANISMS, center=None, mode="strict",
                       chain_length=1000, burn_in=500, rng=None, n_jobs=None):
    r"""Private Fréchet means by several mechanisms at equal privacy (papers 001 and 004).

    For each sample size and replicate a dataset is drawn in the public ball
    :math:`B_r(m_0)` (:func:`dpcore.data.make_mean_data`) and its Fréchet mean :math:`\bar x`
    is released once by each mechanism at each ε:

    ``"laplace"``
        Riemannian Laplace, σ = Δ/ε with Δ of paper 001 Thm 2.
    ``"ambient_laplace"``
        Euclidean K-norm noise added to the extrinsic mean in the embedding (R³ for S², the
        symmetric 2x2 matrices for SPD(2)), sensitivity :math:`2 r_E / n`; the result is
        projected back onto the manifold for the geodesic error, while the Euclidean error uses
        the unprojected point, as paper 001 does.
    ``"kng"``
        K-norm gradient mechanism on the Fréchet energy (MCMC; σ = 2Δ_g/ε in strict mode).
    ``"gaussian"``
        Riemannian Gaussian at µ = :func:`~dpcore.privacy.eps_to_mu` (ε), the GDP guarantee an
        ε-DP mechanism also has (paper 004 §5.2), so it is compared with the Laplace mechanism at
        equal µ. σ is calibrated once per (µ, Δ) with :func:`~dpcore.privacy.calibrate_sigma`,
        exactly as :func:`~dpcore.release.private_frechet_mean` does.

    Parameters
    ----------
    manifold : dpcore.manifolds.Manifold
    sample_sizes : sequence of int
    epsilon : float or sequence of float
        Budget(s) ε of every release.
    radius : float
        Public radius r of the ball holding the data (paper 001: π/8 on S², 1.5 on SPD(2)).
    replicates : int
        Datasets per sample size (each released once per mechanism and ε).
    mechanisms : sequence of str
        Any of ``"laplace"``, ``"kng"``, ``"gaussian"``, ``"ambient_laplace"``.
    center : array-like, optional
        Public centre of the ball (default :func:`dpcore.data.default_center`).
    mode : {"strict", "paper"}
        Passed to :func:`~dpcore.release.private_frechet_mean`. The data are generated inside the
        public ball, so strict mode states a guarantee that really holds.
    chain_length, burn_in : int
        Metropolis-Hastings settings of KNG.
    rng, n_jobs
        See :mod:`dpcore.experiments.studies`.

    Returns
    -------
    pandas.DataFrame
        One row per (n, ε, replicate, mechanism): ``n``, ``epsilon``, ``mu`` (= eps_to_mu(ε),
        the µ at which the mechanisms are compared), ``replicate``, ``mechanism``,
        ``geodesic_error`` (distance from :math:`\bar x` to the release on the manifold),
        ``euclidean_error`` (distance in the embedding; NaN where there is none),
        ``left_manifold`` (the ambient release before projection is off the manifold),
        ``sigma``, ``sensitivity`` (Δ of paper 001 Thm 2, the Laplace / Gaussian sensitivity).
    """
    return run_plan(_frechet_mean_plan(
        manifold, sample_sizes=sample_sizes, epsilon=epsilon, radius=radius,
        replicates=replicates, mechanisms=mechanisms, center=center, mode=mode,
        chain_length=chain_length, burn_in=burn_in, rng=rng), n_jobs)


def _frechet_mean_plan(manifold, *, sample_sizes, epsilon=1.0, radius, replicates=200,
                       mechanisms=FRECHET_STUDY_MECHANISMS, center=None, mode="strict",
                       chain_length=1000, burn_in=500, rng=None):
    """:func:`frechet_mean_study` as a plan (:func:`dpcore.experiments._parallel.run_plans`):
    the calibration of the Gaussian σ, then the replicates."""
    m = check_manifold(manifold)
    sizes = _sizes(sample_sizes)
    eps_list = [float(e) for e in check_positive_array(epsilon, "epsilon")]
    replicates = check_int(replicates, "replicates")
    radius = check_positive(radius, "radius")
    mechanisms = tuple(mechanisms)
    unknown = [mech for mech in mechanisms if mech not in FRECHET_STUDY_MECHANISMS]
    if unknown or not mechanisms:
        raise ValueError(f"`mechanisms` must be a non-empty subset of {FRECHET_STUDY_MECHANISMS}"
                         f", got {mechanisms!r}.")
    if center is None:
        center = default_center(m)
    center = np.asarray(center, dtype=float)
    kappa_high = m.curvature_bounds[1]
    delta = {n: frechet_mean_sensitivity(n, radius, kappa_high, m.injectivity_radius)
             for n in sizes}
    sigmas = {}
    if "gaussian" in mechanisms:
        cells = [(n, e) for n in sizes for e in eps_list]
        values = yield Map(calibrate_sigma, [(eps_to_mu(e), delta[n], m) for n, e in cells],
                           cost=_CALIBRATION_COST)
        sigmas = {cell: float(s) for cell, s in zip(cells, values, strict=True)}
    seeds = _root_seed(rng).spawn(len(sizes) * replicates)
    keys = [(n, r) for n in sizes for r in range(replicates)]
    jobs = [(m, n, radius, center, eps_list, mechanisms, sigmas, mode, chain_length, burn_in, s)
            for (n, _), s in zip(keys, seeds, strict=True)]
    cost = len(eps_list) * sum(_KNG_STEP_COST * (chain_length + burn_in) if mech == "kng"
                               else _RELEASE_COST for mech in mechanisms)
    results = yield Map(_frechet_replicate, jobs, cost=cost)
    rows = []
    for (n, rep), res in zip(keys, results, strict=True):
        for eps, mech, geo, eucl, left, sigma in res:
            rows.append((n, eps, float(eps_to_mu(eps)), rep, mech, geo, eucl, left, sigma,
                         delta[n]))
    df = pd.DataFrame(rows, columns=["n", "epsilon", "mu", "replicate", "mechanism",
                                     "geodesic_error", "euclidean_error", "left_manifold",
                                     "sigma", "sensitivity"])
    df = df.sort_values(["n", "epsilon", "mechanism", "replicate"], kind="stable",
                        ignore_index=True)
    df.attrs.update({"manifold": repr(m), "radius": radius, "mode": mode,
                     "center": center.tolist()})
    return df
