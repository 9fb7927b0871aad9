"""Plumbing shared by the studies: seeding, parallel map, argument checks, the data directory
and quiet releases.

* :func:`_root_seed` -- a :class:`numpy.random.SeedSequence` from any accepted ``rng``;
* :func:`_parallel` -- an ordered map, with joblib when ``n_jobs`` asks for it;
* :func:`_sizes` -- the sample sizes argument (the generic checks are in
  :mod:`dpcore._validation`);
* :func:`data_dir` -- where the real data sets live;
* :func:`_quiet_release`, :func:`_nonprivate_fit` -- a release with the paper-mode warning
  silenced (and the papers' sequential scheme), and the non-private fit the studies compare to.
"""

from __future__ import annotations

import numbers
import os
import warnings
from pathlib import Path

import numpy as np

from ..._validation import check_int
from ...exceptions import PrivacyLeakWarning
from ...learning import GeodesicRegression
from ...release import private_geodesic_regression
from .._parallel import parallel_map as _parallel  # noqa: F401  (the studies' ordered map)

__all__ = ["data_dir"]


def _root_seed(rng, name="rng"):
    """A SeedSequence from None (OS entropy), an int or ints, a SeedSequence or a Generator."""
    if isinstance(rng, np.random.SeedSequence):
        return rng
    if isinstance(rng, np.random.Generator):
        return np.random.SeedSequence(rng.integers(0, 2**63, size=4).tolist())
    if rng is None or (isinstance(rng, numbers.Integral) and not isinstance(rng, bool)):
        return np.random.SeedSequence(rng)
    try:
        return np.random.SeedSequence([int(s) for s in rng])
    except (TypeError, ValueError) as exc:
        raise TypeError(f"`{name}` must be None, an int, a SeedSequence or a Generator, "
                        f"got {type(rng).__name__}.") from exc


def _sizes(sample_sizes, minimum=2):
    if isinstance(sample_sizes, numbers.Integral):
        sample_sizes = [sample_sizes]
    sizes = [check_int(n, "sample_sizes", minimum=minimum) for n in sample_sizes]
    if not sizes:
        raise ValueError("`sample_sizes` must not be empty.")
    return sizes


def data_dir():
    """Directory of the real data sets (``rat_skulls.npy``, ``winequality-red.csv``).

    ``$DPCORE_DATA_DIR`` if set, else ``../shared/data`` beside the repository (where the
    project's CI keeps them).

    Returns
    -------
    pathlib.Path
    """
    env = os.environ.get("DPCORE_DATA_DIR")
    if env:
        return Path(env)
    # dpcore/experiments/studies/_common.py -> parents[3] is the repository.
    return Path(__file__).resolve().parents[3].parent / "shared" / "data"


def _quiet_release(func, *args, **kwargs):
    """Call a release function with the paper-mode PrivacyLeakWarning silenced (the studies
    record the mode in their output).

    Geodesic-regression studies reproduce the papers, whose scheme is the sequential one (an
    ε_p / ε_v split); it is passed explicitly since the library's strict default is the joint
    scheme. A strict sequential release is labelled "not covered" by its record.
    """
    if func is private_geodesic_regression:
        kwargs.setdefault("scheme", "sequential")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        return func(*args, **kwargs)


def _nonprivate_fit(manifold, x, y, covariate_range=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return GeodesicRegression(manifold, covariate_range=covariate_range, tol=1e-8).fit(x, y)
