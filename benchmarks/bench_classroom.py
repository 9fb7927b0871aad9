"""A classroom at once (issue 30 point 6): time to first plot and to release, errors and
memory when 30 Chromium sessions open Geodesic regression within 60 s and each releases once,
and the first visitor's time to first plot with the server's warm-up bounded or not.

Every visit is made against a fresh server started as ``make run`` does
(``benchmarks/_classroom.py`` documents how a session is driven and timed). Rows:

* ``1st visitor at T s, warm-up W``: one visitor opening the page ``T`` s after the server
  answered (0: at once; 3: while a warm-up left alone would still run), :data:`REPEATS`
  visits, interleaved over the rows; ``W`` is ``bounded`` (the default,
  ``ui.serve.WarmUpBudget``: at most 3 CPU s, and it stops when a visitor connects),
  ``unbounded`` (as before the bound: ``DASHBOARD_WARM_UP_CPU_S=inf
  DASHBOARD_WARM_UP_YIELD=0``, every page run to its end, about 6.6 CPU s, beside the
  visitor) or ``off`` (``DASHBOARD_WARM_UP=0``). The first row is the baseline.
* ``30 sessions in 60 s``: the classroom (the warm-up bounded), once.

Columns: visits (sessions); the time to the first plot (median, 95th percentile; the page's
clock from the navigation's start); the time from pressing Release to the release shown (the
confirmation included); releases made; errors (none allowed); the server's peak RSS, and CPU
seconds per server run; the browser's peak PSS and CPU seconds per run (its renderers share the
server's two cores); the machine's 1-minute load average before the row's first visit (other
work on the machine moves every figure); the ratios of the medians to the baseline's.
Needs Debian's ``chromium`` and Playwright; skipped with a message otherwise.
"""

from __future__ import annotations

import os
import statistics

import pandas as pd

from benchmarks._classroom import (
    chromium_missing,
    median,
    percentile,
    run_classroom,
)

STUDENTS = 30
WINDOW_S = 60.0
#: Visits of each first-visitor row (one visit varies by about ±0.3 s on the 2-core machine).
REPEATS = 3
WARM_UP = {
    "bounded": {},
    "unbounded": {"DASHBOARD_WARM_UP_CPU_S": "inf", "DASHBOARD_WARM_UP_YIELD": "0"},
    "off": {"DASHBOARD_WARM_UP": "0"},
}
FIRST_VISITOR = [(at, warm) for at in (0.0, 3.0) for warm in WARM_UP]


def summarise(name, rooms, load):
    """One row of the table from the runs ``rooms`` (see the module's docstring)."""
    sessions = [s for room in rooms for s in room.sessions]
    plots = [s.first_plot_s for s in sessions if s.first_plot_s is not None]
    releases = [s.release_s for s in sessions if s.release_s is not None]
    return {
        "run": name,
        "visits": len(sessions),
        "first_plot_median_s": round(median(plots), 2),
        "first_plot_p95_s": round(percentile(plots, 95), 2),
        "release_median_s": round(median(releases), 2),
        "release_p95_s": round(percentile(releases, 95), 2),
        "released": sum(s.released for s in sessions),
        "errors": sum(len(room.errors) for room in rooms),
        "peak_server_rss_mb": round(max(room.peak_server_rss_mb for room in rooms)),
        "server_cpu_s": round(statistics.mean(room.server_cpu_s for room in rooms), 1),
        "peak_browser_pss_mb": round(max(room.peak_browser_pss_mb for room in rooms)),
        "browser_cpu_s": round(statistics.mean(room.browser_cpu_s for room in rooms), 1),
        "load_1min": round(load, 1),
    }


def main():
    missing = chromium_missing()
    if missing:
        print(f"skipped: {missing}")
        return None
    rooms = {key: [] for key in FIRST_VISITOR}
    loads = {}
    warm_lines = []
    for _ in range(REPEATS):
        for at, warm in FIRST_VISITOR:
            loads.setdefault((at, warm), os.getloadavg()[0])
            room = run_classroom(1, 0.0, env=WARM_UP[warm], first_s=at)
            rooms[at, warm].append(room)
            warm_lines.append((f"1st visitor at {at:g} s, warm-up {warm}",
                               room.warm_up.partition("Warm-up done: ")[2] or "-"))
    rows = [summarise(f"1st visitor at {at:g} s, warm-up {warm}", rooms[at, warm],
                      loads[at, warm]) for at, warm in FIRST_VISITOR]
    load = os.getloadavg()[0]
    room = run_classroom(STUDENTS, WINDOW_S)
    name = f"{STUDENTS} sessions in {WINDOW_S:g} s"
    rows.append(summarise(name, [room], load))
    warm_lines.append((name, room.warm_up.partition("Warm-up done: ")[2] or "-"))
    for index, error in room.errors:
        print(f"  {name}: session {index}: {error}")
    df = pd.DataFrame(rows)
    base = df.iloc[0]
    for column in ("first_plot_median_s", "first_plot_p95_s", "release_median_s"):
        df[f"ratio_{column.removesuffix('_s')}"] = (df[column] / base[column]).round(2)
    with pd.option_context("display.max_columns", None, "display.width", 250,
                           "display.max_colwidth", 100):
        print(df.to_string(index=False))
        print("Warm-up log (\"-\": none logged before the server stopped):")
        print(pd.DataFrame(warm_lines, columns=["run", "warm_up"]).to_string(index=False))
    return None


if __name__ == "__main__":
    main()
