"""Small validation helpers shared by the package (messages name the argument)."""

from __future__ import annotations

import numbers

import numpy as np


def check_positive(value, name: str, *, allow_inf: bool = False) -> float:
    """Return ``value`` as a float after checking it is a positive real number.

    Raises
    ------
    TypeError
        If ``value`` is not a real number.
    ValueError
        If ``value`` is not strictly positive (or is infinite when ``allow_inf`` is False).
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"`{name}` must be a real number, got {type(value).__name__}.")
    value = float(value)
    if not value > 0 or (not allow_inf and not np.isfinite(value)):
        raise ValueError(f"`{name}` must be positive and finite, got {value!r}.")
    return value


def check_int(value, name: str, *, minimum: int = 1) -> int:
    """Return ``value`` as an int after checking it is an integer ``>= minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`{name}` must be an integer, got {type(value).__name__}.")
    if value < minimum:
        raise ValueError(f"`{name}` must be at least {minimum}, got {value}.")
    return int(value)


def as_float_array(value, name: str) -> np.ndarray:
    """Convert to a float64 array, raising a clear error for non-numeric input."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"`{name}` must be array-like of real numbers.") from exc
    return arr
