"""Pieces of private geodesic regression: public defaults and the record of a release.

:func:`_default_center` (the manifold's origin as the public centre), :func:`_public_start`
(the data-independent chain start of strict-mode MCMC), :func:`_data_note` (the note of a
bound marked as taken from the data) and :func:`_regression_release`, which turns the
footpoints and shooting vectors of one budget pair into its
:class:`~dpcore.release.record.Release` (intercepts and slopes in the original covariate
units, caveats, guarantee). They serve :mod:`dpcore.release.regression`, which re-exports
:data:`DATA_SOURCE_NOTE`.
"""

from __future__ import annotations

import numpy as np

from ..manifolds import Sphere
from .record import MCMC_CAVEAT, PAPER_CAVEAT, SEEDED_CAVEAT, Release

__all__ = ["DATA_SOURCE_NOTE"]

#: The note of a supplied bound marked as taken from the data.
DATA_SOURCE_NOTE = "supplied as taken from the data (bound_sources): not a public bound"


def _data_note(source):
    """The note of a supplied bound marked as taken from the data (``bound_sources``)."""
    return DATA_SOURCE_NOTE if source == "data" else None


def _default_center(m):
    """The default centre of the public ball: the manifold's origin, or None if it has none."""
    from ..data.synthetic import default_center  # lazy: dpcore.data loads the CSV readers
    try:
        return default_center(m)
    except TypeError:
        return None


def _public_start(m, foot_support):
    """A data-independent chain start ``(p, 0)`` for strict-mode MCMC: the public centre."""
    if foot_support is not None:
        p0 = np.asarray(foot_support[0], dtype=float)
    elif isinstance(m, Sphere):  # its origin; other spaces keep their recorded seeded start
        p0 = m.origin
    else:
        p0 = m.random_point(rng=np.random.default_rng(0))
    return p0, np.zeros_like(p0)


def _regression_release(m, footpoints, vectors, *, eps_p, eps_v, mechanism, epsilon, delta,
                        exact, delta_note, sensitivity, sigma, diagnostics, caveats, sigma_rule,
                        draws, lo, hi, mode, seeded, assumptions, n, kappa_low, coverage):
    """The :class:`Release` of one budget pair from its footpoints ``(m, *ps)`` and vectors
    ``(m, r, *ps)`` (rescaled covariate units)."""
    n_footpoints, n_vectors = vectors.shape[:2]
    # --- back to the original covariate units (as GeodesicRegression does) ----------------
    fp_b = np.broadcast_to(footpoints[:, None], vectors.shape)
    intercepts = m.exp(fp_b, (-lo / (hi - lo)) * vectors)
    coefs = m.transport(fp_b, intercepts, vectors) / (hi - lo)
    if not exact:
        caveats.append(MCMC_CAVEAT)
        delta = None
        if coverage == "proven":
            coverage = "mcmc"
    if n_footpoints > 1 or n_vectors > 1:
        caveats.append(
            f"{draws} drawn: each geodesic costs epsilon_p + epsilon_v = {eps_p + eps_v:g}; "
            f"publishing all of them costs epsilon = {epsilon:g}."
        )
    if seeded:
        caveats.append(SEEDED_CAVEAT)
    if mode == "paper":
        caveats.append(PAPER_CAVEAT)
    return Release(
        values={
            "footpoint": footpoints,
            "shooting_vector": vectors,
            "intercept": intercepts,
            "coef": coefs,
        },
        mechanism=mechanism,
        epsilon=float(epsilon),
        delta=None if delta is None else float(delta),
        mu=None,
        sensitivity=sensitivity,
        sigma=sigma,
        assumptions=dict(assumptions),
        diagnostics=diagnostics,
        mode=mode,
        seeded=seeded,
        caveats=caveats,
        coverage=coverage,
        details={
            "scheme": "joint" if mechanism == "kng_joint" else "sequential",
            "epsilon_p": eps_p,
            "epsilon_v": eps_v,
            "epsilon_per_geodesic": eps_p + eps_v,
            "n": n,
            "n_footpoints": n_footpoints,
            "n_vectors": n_vectors,
            "sigma_rule": sigma_rule,
            "kappa_low": kappa_low,
            "manifold": repr(m),
        },
    )
