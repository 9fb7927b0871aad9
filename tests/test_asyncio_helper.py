"""The tests' coroutine runner (``tests/_asyncio.py``) works where ``asyncio.run`` does not: in a
thread whose event loop is already running (as the browser tests' Playwright leaves it)."""

from __future__ import annotations

import asyncio

import pytest

from tests._asyncio import run


async def _answer():
    await asyncio.sleep(0)
    return 42


def test_run_inside_a_running_loop():
    async def outer():
        pending = _answer()
        with pytest.raises(RuntimeError, match="running event loop"):
            asyncio.run(pending)            # what the tests hit before
        pending.close()
        return run(_answer())

    assert asyncio.run(outer()) == 42


def test_run_raises_the_coroutines_error():
    async def boom():
        raise ValueError("inside")

    with pytest.raises(ValueError, match="inside"):
        run(boom())
