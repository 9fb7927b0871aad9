"""Timing helpers shared by the benchmark modules (wall-clock, best of several repeats)."""

from __future__ import annotations

import time


def per_call(fn, *, min_time=0.05, repeats=5):
    """Best-of-``repeats`` seconds per call of ``fn()``, each repeat lasting about ``min_time``."""
    fn()  # warm up caches and lazy imports
    number = 1
    while True:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= min_time:
            break
        number *= 2
    best = elapsed / number
    for _ in range(repeats - 1):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best
