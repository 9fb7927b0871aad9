"""A classroom at once (issue 30 point 6): 30 Chromium sessions open Geodesic regression within
60 s of the server's start and each makes one release.

The run (``benchmarks/_classroom.py``) starts its own server exactly as ``make run`` does, the
warm-up on and bounded as by default (``ui.serve.WarmUpBudget``), and drives one headless
Chromium with one context (one Streamlit session) per student, the ``i``-th opening the page
``2 i`` s after the server answered. Each session must draw its first plot, press Release,
confirm its cost and see its release (the release panel's download button and a ledger table
in the sidebar), and no session may see an error element, an exception or an uncaught page
error. The limits inside the run are generous (10 minutes a step): nothing here depends on
how fast the machine is; the times and memory go to ``benchmarks/bench_classroom.py``.

About 4.5 minutes on the 2-core machine (most of it the thirty renderers' CPU: about 400 s of
Chromium against 43 s of the server); marked ``slow`` and ``browser``, skipped (with the
reason) without Debian's Chromium or Playwright.
"""

from __future__ import annotations

import pytest

from benchmarks._classroom import chromium_missing, run_classroom

STUDENTS = 30
WINDOW_S = 60.0


@pytest.mark.slow
@pytest.mark.browser
def test_thirty_sessions_open_geodesic_regression_and_each_release_once(tmp_path):
    missing = chromium_missing()
    if missing:
        pytest.skip(missing)
    room = run_classroom(STUDENTS, WINDOW_S, log_path=tmp_path / "server.log")
    figures = room.summary()
    print("classroom:", figures)  # shown with -s; the benchmark reports them
    context = f"{figures}\nserver log:\n{room.log_tail}"
    assert len(room.sessions) == STUDENTS
    # Every session opened within the window (each waits for its slot, nothing else).
    assert room.last_opened_s >= (STUDENTS - 1) * WINDOW_S / STUDENTS
    assert room.errors == [], context
    no_plot = [s.index for s in room.sessions if s.first_plot_s is None]
    assert no_plot == [], f"sessions without a first plot: {no_plot}\n{context}"
    not_released = [s.index for s in room.sessions if not (s.released and s.ledger)]
    assert not_released == [], f"sessions without their release: {not_released}\n{context}"
    assert all(s.release_s is not None and s.release_s > 0 for s in room.sessions)
