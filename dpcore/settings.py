"""Resource limits of the library, in one place.

Every entry point that takes a size from a user is bounded, so that one request cannot exhaust
the machine: the size of a data file read, its rows, the private draws per request, the length
of MCMC chains, the Monte Carlo samples of a privacy estimate, the cells of a budget sweep and
the work of an exact sampler. The defaults are in :class:`Limits`; an operator overrides any of
them with an environment variable read by :func:`get_limits` each time it is called:

=====================  =======================================  ===========
field                  environment variable                     default
=====================  =======================================  ===========
``max_upload_mb``      ``DPCORE_MAX_UPLOAD_MB``                 200
``max_rows``           ``DPCORE_MAX_ROWS``                    1 000 000
``max_replicates``     ``DPCORE_MAX_REPLICATES``                400
``max_chain_length``   ``DPCORE_MAX_CHAIN_LENGTH``              20 000
``max_burn_in``        ``DPCORE_MAX_BURN_IN``                   10 000
``max_mc_samples``     ``DPCORE_MAX_MC_SAMPLES``                200 000
``max_sweep_cells``    ``DPCORE_MAX_SWEEP_CELLS``               2 000
``max_exact_work``     ``DPCORE_MAX_EXACT_WORK``              1 000 000 000
=====================  =======================================  ===========

The library reads only these ``DPCORE_*`` variables, never the settings of an application
that uses it. ``max_upload_mb`` is the default size cap (in MiB) of the files
:func:`dpcore.data.read_table`, :func:`dpcore.data.scan_table` and
:func:`dpcore.data.load_csv` read: a generous 200 MiB, against files that would not fit in
memory, not a policy. An application with a smaller cap of its own passes it to those
functions as ``max_bytes=`` (the dashboard of this repository passes its own upload limit).

Code that accepts a size from a user calls :func:`check_limit`, which raises
:class:`~dpcore.exceptions.LimitExceededError` with a message naming the limit, its value and
the variable to set.
"""

from __future__ import annotations

import dataclasses
import numbers
import os
from dataclasses import dataclass

from ._validation import check_int
from .exceptions import LimitExceededError

__all__ = [
    "ENV_VARS",
    "LimitExceededError",
    "Limits",
    "check_limit",
    "get_limits",
]


@dataclass(frozen=True)
class Limits:
    """Upper bounds on the work one request may ask for.

    Parameters
    ----------
    max_upload_mb : int
        Largest file the data readers read by default, in MiB (their ``max_bytes`` is
        ``max_upload_mb * 2**20`` unless given).
    max_rows : int
        Largest number of data rows in a CSV file (the default of
        :func:`dpcore.data.load_csv`'s ``max_rows``).
    max_replicates : int
        Largest number of private draws (replicates) per request.
    max_chain_length : int
        Largest number of Metropolis-Hastings steps per chain.
    max_burn_in : int
        Largest number of burn-in steps per chain.
    max_mc_samples : int
        Largest Monte Carlo budget of a GDP estimate, ``n_samples * repeats``.
    max_sweep_cells : int
        Largest number of cells (sample size x budget x replicate) of a budget sweep.
    max_exact_work : int
        Largest public worst-case expected work (gradient terms: draws x n x exp(g_max/sigma))
        of an exact KNG release chosen by ``sampler="auto"`` (beyond it, MCMC is used and the
        release is labelled approximately private). A forced ``sampler="exact"`` release whose
        public work bound is above it is refused before any sampling
        (:mod:`dpcore.release.planning`).

    Raises
    ------
    TypeError
        If a field is not an integer.
    ValueError
        If a field is not positive.
    """

    max_upload_mb: int = 200
    max_rows: int = 1_000_000
    max_replicates: int = 400
    max_chain_length: int = 20_000
    max_burn_in: int = 10_000
    max_mc_samples: int = 200_000
    max_sweep_cells: int = 2_000
    max_exact_work: int = 1_000_000_000

    def __post_init__(self):
        for field in dataclasses.fields(self):
            check_int(getattr(self, field.name), field.name, minimum=1)


#: The environment variable read by :func:`get_limits` for each field (a one-element tuple).
ENV_VARS: dict[str, tuple[str, ...]] = {
    "max_upload_mb": ("DPCORE_MAX_UPLOAD_MB",),
    "max_rows": ("DPCORE_MAX_ROWS",),
    "max_replicates": ("DPCORE_MAX_REPLICATES",),
    "max_chain_length": ("DPCORE_MAX_CHAIN_LENGTH",),
    "max_burn_in": ("DPCORE_MAX_BURN_IN",),
    "max_mc_samples": ("DPCORE_MAX_MC_SAMPLES",),
    "max_sweep_cells": ("DPCORE_MAX_SWEEP_CELLS",),
    "max_exact_work": ("DPCORE_MAX_EXACT_WORK",),
}

_WHAT = {
    "max_upload_mb": "MiB per file read",
    "max_rows": "data rows per file",
    "max_replicates": "private draws per request",
    "max_chain_length": "MCMC steps per chain",
    "max_burn_in": "MCMC burn-in steps per chain",
    "max_mc_samples": "Monte Carlo samples (n_samples x repeats) per privacy estimate",
    "max_sweep_cells": "cells per budget sweep",
    "max_exact_work": "worst-case gradient terms of an exact KNG release",
}


def _env_int(var: str) -> int | None:
    raw = os.environ.get(var)
    if raw is None or not raw.strip():
        return None
    text = raw.strip()
    try:
        value = int(text)
    except ValueError:
        raise ValueError(
            f"The environment variable {var} must be a positive integer, got {raw!r}."
        ) from None
    if value < 1:
        raise ValueError(
            f"The environment variable {var} must be a positive integer, got {raw!r}."
        )
    return value


def get_limits() -> Limits:
    """The limits in force: the defaults of :class:`Limits` overridden by the environment.

    Each field is read from its variable in :data:`ENV_VARS` (``DPCORE_`` and the field's
    name in capitals; unset or blank means the default). The environment is read at every
    call.

    Returns
    -------
    Limits

    Raises
    ------
    ValueError
        If a variable is set to anything but a positive integer (the message names it).
    """
    overrides = {}
    for name, names in ENV_VARS.items():
        for var in names:
            value = _env_int(var)
            if value is not None:
                overrides[name] = value
                break
    return Limits(**overrides)


def check_limit(name: str, value, limits: Limits | None = None):
    """Check a requested size against a limit and return it unchanged.

    Parameters
    ----------
    name : str
        A field of :class:`Limits`, e.g. ``"max_replicates"``.
    value : int or float
        The requested size (e.g. the number of replicates, or ``n_samples * repeats``).
    limits : Limits, optional
        The limits to check against; by default :func:`get_limits`.

    Returns
    -------
    int or float
        ``value``.

    Raises
    ------
    LimitExceededError
        If ``value`` is above the limit; the message names the limit, its value and the
        environment variable that changes it.
    TypeError
        If ``value`` is not a real number or ``limits`` is not a :class:`Limits`.
    ValueError
        If ``name`` is not a limit, or ``value`` is NaN.
    """
    if name not in ENV_VARS:
        raise ValueError(
            f"`name` must be one of {', '.join(sorted(ENV_VARS))}, got {name!r}."
        )
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"`value` must be a real number, got {type(value).__name__}.")
    if value != value:
        raise ValueError("`value` must be a number, got nan.")
    if limits is None:
        limits = get_limits()
    elif not isinstance(limits, Limits):
        raise TypeError(f"`limits` must be a Limits instance, got {type(limits).__name__}.")
    limit = getattr(limits, name)
    if value > limit:
        raise LimitExceededError(name, value, limit, env_var=ENV_VARS[name][0],
                                 what=_WHAT[name])
    return value
