"""A classroom at once (issue 30 point 6): time to first plot and to release, errors and
memory when 30 sessions open Geodesic regression within 60 s and each releases once, and the
first visitor's time to first plot with the server's warm-up bounded or not.

Every visit is made against a fresh server started as ``make run`` does
(``benchmarks/_classroom.py`` documents how a session is driven and timed). Rows:

* ``1st visitor at T s, warm-up W``: one visitor in Chromium opening the page ``T`` s after
  the server answered (0: at once; 3: while a warm-up left alone would still run),
  :data:`REPEATS` visits, interleaved over the rows; ``W`` is ``bounded`` (the default,
  ``ui.serve.WarmUpBudget``: at most 3 CPU s, and it stops when a visitor connects),
  ``unbounded`` (as before the bound: ``DASHBOARD_WARM_UP_CPU_S=inf
  DASHBOARD_WARM_UP_YIELD=0``, every page run to its end, about 6.6 CPU s, beside the
  visitor) or ``off`` (``DASHBOARD_WARM_UP=0``). The first row is the baseline.
* ``30 sessions in 60 s``: the classroom (the warm-up bounded), once, as the test runs it:
  the first student in Chromium, the 29 others websocket clients that behave like browsers
  (``benchmarks/_ws_client.py``: they load the page's HTML and static files, open
  ``/_stcore/stream``, send the ``BackMsg`` messages a browser sends, with every widget state held,
  keep the element tree and the message cache as the frontend does, fire the page's fragment
  timer, press Release and Release now as triggers; they render nothing and run no
  JavaScript). Thirty Chromium renderers took about ten times the server's CPU on the
  machine's two cores (``docs/measurements.md``), so their times were mostly renderers
  waiting for a core; the websocket clients leave the cores to the server, as students on
  their own machines would.

Columns: visits (sessions) and how many in Chromium; the time to the first plot (median, 95th
percentile, over every session; Chromium: the page's clock from the navigation's start to the
chart drawn; a websocket client: from its navigation to the chart's delta received, so without
the browser's rendering of the page, about 0.3-1 s); the time from pressing Release to the
release shown (the confirmation included); the Chromium session's own first plot and release;
releases made; errors (none allowed); the server's peak RSS, and CPU seconds per server run;
the browser's peak PSS and CPU seconds per run; the CPU seconds of this process (the websocket
clients and Playwright's client); the machine's 1-minute load average before the row's first
visit (other work on the machine moves every figure); the ratios of the medians to the
baseline's. The first-visitor rows need Debian's ``chromium`` and Playwright (skipped with a
message otherwise); without them the classroom runs with websocket clients only.
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
#: Students of the classroom row in Chromium (the first ones), as in the test.
BROWSERS = 1
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
    browser = [s for s in sessions if s.client == "chromium"]
    return {
        "run": name,
        "visits": len(sessions),
        "chromium": len(browser),
        "first_plot_median_s": round(median(plots), 2),
        "first_plot_p95_s": round(percentile(plots, 95), 2),
        "release_median_s": round(median(releases), 2),
        "release_p95_s": round(percentile(releases, 95), 2),
        "chromium_first_plot_s": round(median(
            [s.first_plot_s for s in browser if s.first_plot_s is not None]), 2),
        "chromium_release_s": round(median(
            [s.release_s for s in browser if s.release_s is not None]), 2),
        "released": sum(s.released for s in sessions),
        "errors": sum(len(room.errors) for room in rooms),
        "peak_server_rss_mb": round(max(room.peak_server_rss_mb for room in rooms)),
        "server_cpu_s": round(statistics.mean(room.server_cpu_s for room in rooms), 1),
        "peak_browser_pss_mb": round(max(room.peak_browser_pss_mb for room in rooms)),
        "browser_cpu_s": round(statistics.mean(room.browser_cpu_s for room in rooms), 1),
        "client_cpu_s": round(statistics.mean(room.client_cpu_s for room in rooms), 1),
        "load_1min": round(load, 1),
    }


def main():
    missing = chromium_missing()
    rooms = {key: [] for key in FIRST_VISITOR}
    loads = {}
    warm_lines = []
    if missing:
        print(f"first-visitor rows skipped, and the classroom without Chromium: {missing}")
    for _ in range(0 if missing else REPEATS):
        for at, warm in FIRST_VISITOR:
            loads.setdefault((at, warm), os.getloadavg()[0])
            room = run_classroom(1, 0.0, env=WARM_UP[warm], first_s=at)
            rooms[at, warm].append(room)
            warm_lines.append((f"1st visitor at {at:g} s, warm-up {warm}",
                               room.warm_up.partition("Warm-up done: ")[2] or "-"))
    rows = [summarise(f"1st visitor at {at:g} s, warm-up {warm}", rooms[at, warm],
                      loads[at, warm]) for at, warm in FIRST_VISITOR if rooms[at, warm]]
    load = os.getloadavg()[0]
    room = run_classroom(STUDENTS, WINDOW_S, browsers=0 if missing else BROWSERS)
    name = f"{STUDENTS} sessions in {WINDOW_S:g} s"
    rows.append(summarise(name, [room], load))
    warm_lines.append((name, room.warm_up.partition("Warm-up done: ")[2] or "-"))
    for index, error in room.errors:
        print(f"  {name}: session {index}: {error}")
    unknown = sorted({w for s in room.sessions for w in s.unknown_widgets})
    if unknown:
        print(f"  {name}: widget kinds the websocket clients left to the server: {unknown}")
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
