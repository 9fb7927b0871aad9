"""Validation of user arguments, shared by the whole package (one place, like diffprivlib's
``validation.py``).

Every checker takes the value and the argument's ``name``, returns the value converted
(``float``, ``int``, an array, ...) and raises ``TypeError`` for a value of the wrong kind and
``ValueError`` for one out of range, with a message that names the argument in backticks,
says what it must be and shows what it got (e.g. ``"`epsilon` must be positive and finite,
got -1.0."``).

* scalars: :func:`check_positive`, :func:`check_nonnegative`, :func:`check_real`,
  :func:`check_int`, :func:`check_probability`, :func:`check_choice`;
* intervals and levels: :func:`check_interval` (a finite ``(low, high)`` with low < high),
  :func:`check_quantile_levels` (levels in [0, 1]);
* arrays: :func:`as_float_array`, :func:`check_positive_array` (a positive number or a
  sequence of them), :func:`check_nonnegative_array`, :func:`check_nonnegative_values`;
* objects: :func:`check_manifold`;
* where supplied bounds came from: :func:`check_bound_sources` (``"public"`` or ``"data"``,
  DESIGN §12).

Checks tied to one module's concept (the points of a manifold, a mechanism's support, the
bounds of a sampler, the CSV formats) stay in their modules and call these. Resource limits
are checked by :func:`dpcore.settings.check_limit`. This module imports nothing from dpcore
at import time (the manifolds import it).
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = [
    "BOUND_SOURCES",
    "as_float_array",
    "check_bound_sources",
    "check_choice",
    "check_int",
    "check_interval",
    "check_manifold",
    "check_nonnegative",
    "check_nonnegative_array",
    "check_nonnegative_values",
    "check_positive",
    "check_positive_array",
    "check_probability",
    "check_quantile_levels",
    "check_real",
]


def _require_real(value, name: str) -> float:
    """``value`` as a float; ``TypeError`` unless it is a real number (``bool`` is not)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"`{name}` must be a real number, got {type(value).__name__}.")
    return float(value)


# --------------------------------------------------------------------------- scalars
def check_positive(value, name: str, *, allow_inf: bool = False) -> float:
    """Return ``value`` as a float after checking it is a positive real number.

    Raises
    ------
    TypeError
        If ``value`` is not a real number.
    ValueError
        If ``value`` is not strictly positive (or is infinite when ``allow_inf`` is False).
    """
    value = _require_real(value, name)
    if not value > 0 or (not allow_inf and not np.isfinite(value)):
        raise ValueError(f"`{name}` must be positive and finite, got {value!r}.")
    return value


def check_nonnegative(value, name: str, *, allow_inf: bool = False) -> float:
    """Return ``value`` as a float after checking it is a real number ``>= 0``.

    Raises
    ------
    TypeError
        If ``value`` is not a real number.
    ValueError
        If ``value`` is negative or NaN (or infinite when ``allow_inf`` is False).
    """
    value = _require_real(value, name)
    if allow_inf:
        if not value >= 0:
            raise ValueError(f"`{name}` must be non-negative, got {value!r}.")
    elif not (np.isfinite(value) and value >= 0):
        raise ValueError(f"`{name}` must be non-negative and finite, got {value!r}.")
    return value


def check_real(value, name: str) -> float:
    """Return ``value`` as a float after checking it is a finite real number.

    Raises
    ------
    TypeError
        If ``value`` is not a real number.
    ValueError
        If ``value`` is NaN or infinite.
    """
    value = _require_real(value, name)
    if not np.isfinite(value):
        raise ValueError(f"`{name}` must be finite, got {value!r}.")
    return value


def check_int(value, name: str, *, minimum: int = 1) -> int:
    """Return ``value`` as an int after checking it is an integer ``>= minimum``.

    Raises
    ------
    TypeError
        If ``value`` is not an integer (``bool`` and floats such as ``2.0`` are not).
    ValueError
        If ``value < minimum``.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`{name}` must be an integer, got {type(value).__name__}.")
    if value < minimum:
        raise ValueError(f"`{name}` must be at least {minimum}, got {value}.")
    return int(value)


def check_probability(value, name: str) -> float:
    """Return ``value`` as a float after checking it lies in the open interval (0, 1).

    Raises
    ------
    TypeError
        If ``value`` is not a real number.
    ValueError
        If ``value`` is not strictly between 0 and 1.
    """
    _require_real(value, name)
    if not 0.0 < value < 1.0:
        raise ValueError(f"`{name}` must lie in (0, 1), got {value!r}.")
    return float(value)


def check_choice(value, name: str, choices: tuple) -> object:
    """Return ``value`` after checking it is one of ``choices``.

    Raises
    ------
    ValueError
        If ``value`` is not in ``choices`` (the message lists them: ``'a' or 'b'``).
    """
    if value not in choices:
        listed = " or ".join(repr(c) for c in choices)
        raise ValueError(f"`{name}` must be {listed}, got {value!r}.")
    return value


# --------------------------------------------------------------------------- intervals
def check_interval(value, name: str) -> tuple[float, float]:
    """Return ``value`` as ``(low, high)`` floats after checking it is a pair of finite real
    numbers with ``low < high``.

    Raises
    ------
    TypeError
        If ``value`` is not a pair of real numbers.
    ValueError
        If an end is NaN or infinite, or ``low >= high``.
    """
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") or len(value) != 2:
        raise TypeError(f"`{name}` must be a pair (low, high) of real numbers, got {value!r}.")
    low = check_real(value[0], f"{name}[0]")
    high = check_real(value[1], f"{name}[1]")
    if not low < high:
        raise ValueError(f"`{name}` must satisfy low < high, got ({low!r}, {high!r}).")
    return low, high


def check_quantile_levels(values, name: str) -> np.ndarray:
    """A level in [0, 1] or a non-empty sequence of them, as a 1-D float array.

    Raises
    ------
    TypeError
        If ``values`` is not numeric (``bool`` is not).
    ValueError
        If ``values`` is empty, not one-dimensional, or holds a level outside [0, 1] or NaN.
    """
    if values is None or isinstance(values, (bool, str, bytes)):
        raise TypeError(f"`{name}` must be a level in [0, 1] or a sequence of them, got "
                        f"{type(values).__name__}.")
    arr = np.atleast_1d(as_float_array(values, name))
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"`{name}` must be a level in [0, 1] or a non-empty sequence of them, "
                         f"got {values!r}.")
    bad = ~((arr >= 0.0) & (arr <= 1.0))
    if np.any(bad):
        raise ValueError(f"`{name}` must lie in [0, 1], got {float(arr[bad][0])!r}.")
    return arr


# --------------------------------------------------------------------------- arrays
def as_float_array(value, name: str) -> np.ndarray:
    """Convert to a float64 array, raising a clear error for non-numeric input."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"`{name}` must be array-like of real numbers.") from exc
    return arr


def check_positive_array(values, name: str) -> np.ndarray:
    """A positive number or a non-empty sequence of them, as a 1-D float array.

    Raises
    ------
    ValueError
        If ``values`` is empty, not one-dimensional, or holds a value that is not positive
        and finite.
    """
    arr = np.atleast_1d(np.asarray(values, dtype=float))
    if arr.ndim != 1 or arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"`{name}` must be a positive number or a non-empty sequence of them, "
                         f"got {values!r}.")
    return arr


def check_nonnegative_array(value, name: str, *, allow_inf: bool = True) -> np.ndarray:
    """``value`` as a float array after checking every entry is a non-negative number.

    Raises
    ------
    TypeError
        If ``value`` is None, a string, a bool or not numeric.
    ValueError
        If an entry is negative or NaN (or infinite when ``allow_inf`` is False); the message
        shows the first one.
    """
    if value is None or isinstance(value, (bool, str, bytes)):
        raise TypeError(
            f"`{name}` must be a real number or an array of them, got {type(value).__name__}."
        )
    arr = as_float_array(value, name)
    bad = np.isnan(arr) | (arr < 0)
    if not allow_inf:
        bad |= np.isinf(arr)
    if np.any(bad):
        first = float(arr[bad].flat[0])
        kind = "non-negative" if allow_inf else "non-negative and finite"
        raise ValueError(f"`{name}` must be {kind}, got {first!r}.")
    return arr


def check_nonnegative_values(values, name: str) -> np.ndarray:
    """A flat float array from a scalar, an array or any iterable of non-negative numbers
    (see :func:`check_nonnegative_array`)."""
    if not isinstance(values, (list, tuple, np.ndarray, str, bytes)) and hasattr(
        values, "__iter__"
    ):
        values = list(values)
    return check_nonnegative_array(values, name).ravel()


# --------------------------------------------------------------------------- objects
def check_manifold(manifold):
    """Return ``manifold`` after checking it is a :class:`dpcore.manifolds.Manifold`.

    Raises
    ------
    TypeError
        If it is not.
    """
    from .manifolds.base import Manifold  # the manifolds import this module

    if not isinstance(manifold, Manifold):
        raise TypeError(f"`manifold` must be a dpcore Manifold, got {type(manifold).__name__}.")
    return manifold


# --------------------------------------------------------------------------- bound sources
#: Where a bound supplied to a release came from (DESIGN §12): public knowledge, or the
#: private data (which makes the release not private).
BOUND_SOURCES = ("public", "data")


def check_bound_sources(value, name: str, bounds: tuple) -> dict:
    """Return ``value`` as a dict mapping bound names to their source, after checking it.

    Parameters
    ----------
    value : mapping or None
        Bound name -> ``"public"`` or ``"data"`` (:data:`BOUND_SOURCES`); None: no entry
        (every supplied bound is public).
    name : str
        The argument's name, for messages.
    bounds : tuple of str
        The bound names the caller accepts.

    Returns
    -------
    dict

    Raises
    ------
    TypeError
        If ``value`` is not a mapping.
    ValueError
        If a key is not one of ``bounds`` or a source not one of :data:`BOUND_SOURCES`.
    """
    if value is None:
        return {}
    if not hasattr(value, "items"):
        raise TypeError(f"`{name}` must be a mapping of bound names to sources, got "
                        f"{type(value).__name__}.")
    out = {}
    for key, source in value.items():
        if key not in bounds:
            listed = ", ".join(repr(b) for b in bounds)
            raise ValueError(f"`{name}` names an unknown bound {key!r}; the bounds are "
                             f"{listed}.")
        out[key] = check_choice(source, f"{name}[{key!r}]", BOUND_SOURCES)
    return out
