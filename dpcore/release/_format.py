"""How the work estimates (:mod:`dpcore.release.work`) write counts and durations."""

from __future__ import annotations

import math

__all__ = ["count", "duration"]


def count(value):
    """A count for a sentence: ``1,234,567`` when whole, else three significant digits."""
    value = float(value)
    if value == int(value) and abs(value) < 1e15:
        return f"{int(value):,}"
    return f"{value:.3g}"


def duration(seconds):
    """A duration for a sentence: ``under 1 ms``, ``350 ms``, ``12.5 s``, ``3.2 min``, ``1.5 h``."""
    seconds = float(seconds)
    if not math.isfinite(seconds):
        return "an unbounded time"
    if seconds < 1e-3:
        return "under 1 ms"
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 120:
        return f"{seconds:.1f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"
