"""Running a coroutine to completion from a test, whatever event loop the test's thread has.

The browser tests keep one Playwright instance per worker (``tests/browser/conftest.py``,
session scope); Playwright's sync API leaves an event loop running in the worker's main thread
for the rest of the session, so ``asyncio.run`` in a later test of that worker raises
"cannot be called from a running event loop" (which tests share a worker depends on the
scheduling). :func:`run` therefore runs the coroutine in a thread of its own."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor


def run(coroutine):
    """``asyncio.run(coroutine)`` in a fresh thread; returns its result or raises its error."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()
