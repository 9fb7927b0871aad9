"""A classroom at once (issue 30 point 6): 30 sessions open Geodesic regression within 60 s of
the server's start and each makes one release. The test packs the 30 arrivals into the first
30 s (one every second), twice the rate the issue asks for: a harder load on the server, and
half the wait (the benchmark, ``benchmarks/bench_classroom.py``, keeps the 60 s window).

The run (``benchmarks/_classroom.py``) starts its own server exactly as ``make run`` does, the
warm-up on and bounded as by default (``ui.serve.WarmUpBudget``), and opens one Streamlit
session per student, the ``i``-th opening the page ``2 i`` s after the server answered. The
first student uses a real headless Chromium; the 29 others are websocket clients that behave
like browsers (``benchmarks/_ws_client.py``): each loads the page's HTML and static files,
opens ``/_stcore/stream``, sends the ``rerun_script`` a browser sends for the page (its name,
query string, widget states and context), reads the ForwardMsgs into an element tree as the
frontend does (stale elements removed, the message cache, fragment timers), presses Release
and Release now as trigger values sent with every widget state held, and sees the release as the
browser does (the release panel's download button, a
ledger table in the sidebar). What they do not do: run JavaScript or render (their time to
first plot is the chart's delta received, not drawn), fetch the chunks a browser imports on
demand, send heartbeats or reconnect; the Chromium session keeps that path covered under the
same load.

Every session must get its first plot, press Release, confirm its cost and see its release
and its ledger entry, and no session may see an error element, an exception, an uncaught page
error, a compile error or a closed websocket. The limits inside the run are generous (10
minutes a step): nothing here depends on how fast the machine is; the times and memory go to
``benchmarks/bench_classroom.py``.

About 3 minutes on the shared 2-core machine (1-minute load 10 to 16 from other work): the
server's own work bounds it now, about 100 to 120 CPU s for the 30 sessions (3 to 4 s each:
five runs of the page and the release) in one process that mostly holds one core, against 25
CPU s of Chromium and 10 of the websocket clients. Thirty Chromium sessions took 4.5 to 6
minutes (358 s in CI; on this machine at load 35, 17 minutes, 27 sessions timed out). Marked
``slow`` and ``browser``; skipped, with the reason, without Debian's Chromium or Playwright.
"""

from __future__ import annotations

import pytest

from benchmarks._classroom import chromium_missing, run_classroom

STUDENTS = 30
#: Arrival window: half the issue's 60 s (the same sessions arrive twice as fast).
WINDOW_S = 30.0
#: Students in a real Chromium (the first ones); the others are websocket clients.
BROWSERS = 1


@pytest.mark.slow
@pytest.mark.slow_first(35)
@pytest.mark.browser
def test_thirty_sessions_open_geodesic_regression_and_each_release_once(tmp_path):
    missing = chromium_missing()
    if missing:
        pytest.skip(f"the classroom's Chromium session cannot run: {missing}")
    room = run_classroom(STUDENTS, WINDOW_S, log_path=tmp_path / "server.log",
                         browsers=BROWSERS)
    figures = room.summary()
    print("classroom:", figures)  # shown with -s; the benchmark reports them
    context = f"{figures}\nserver log:\n{room.log_tail}"
    assert len(room.sessions) == STUDENTS
    assert [s.client for s in room.sessions] == (
        ["chromium"] * BROWSERS + ["websocket"] * (STUDENTS - BROWSERS))
    # Every session opened within the window (each waits for its slot, nothing else).
    assert room.last_opened_s >= (STUDENTS - 1) * WINDOW_S / STUDENTS
    assert room.errors == [], context
    no_plot = [s.index for s in room.sessions if s.first_plot_s is None]
    assert no_plot == [], f"sessions without a first plot: {no_plot}\n{context}"
    not_released = [s.index for s in room.sessions if not (s.released and s.ledger)]
    assert not_released == [], f"sessions without their release: {not_released}\n{context}"
    assert all(s.release_s is not None and s.release_s > 0 for s in room.sessions)
    # The clients committed the state of every widget on the page (no kind they do not know).
    assert [s.unknown_widgets for s in room.sessions if s.unknown_widgets] == [], context
