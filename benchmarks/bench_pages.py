"""Wall time of each dashboard page's default scenario, measured with Streamlit's AppTest.

For every page, in a fresh ``AppTest`` of ``app.py`` (a new session, as a new visitor): the
landing page is run first (not timed), then the page is opened (``switch_page(...).run()``,
"open") and its Release / Run button is pressed ("button"), which is the page's default
scenario. Each figure is the best of 3 after one warm-up round:

* ``open_cold_s``: ``st.cache_data`` and dpcore's in-process caches cleared before each round,
  so the page computes everything (the first visitor after a server start, imports done);
* ``open_warm_s``: caches left filled by the earlier rounds (a later visitor);
* ``button_cold_s`` / ``button_warm_s``: the button press after that open (release draws are
  never cached, but dpcore caches deterministic set-up such as a calibrated σ, and the
  budget-split simulation is cached per configuration);
* ``scenario_cold_s`` / ``scenario_warm_s`` = open + button: what a visitor waits for.

Baseline, measured in the same run the same way: opening the Home page (text only), i.e. the
fixed cost of AppTest + Streamlit + ``app.py`` (navigation, sidebar ledger). ``ratio_cold`` is
``scenario_cold_s`` / baseline. Issue 4's target: a page's default scenario in at most 2 s on
the 2-core machine (``target_cold`` / ``target_warm``).

Breakdown: during one more cold round per page a thread samples the stack of AppTest's script
thread every 2 ms. Each sample counts for dpcore if any frame is in dpcore/, else for ui/
(figures, tables, page helpers) if any frame is there, else for the rest (Streamlit, plotly
serialization, page code); the shares are exclusive, and the main entry points (outermost
dpcore / ui function on the stack) are printed with their estimated seconds.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pandas as pd

from ui.registry import HOME
from ui.registry import PAGES as REGISTRY

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
REPEATS = 3
TARGET_S = 2.0
TIMEOUT_S = 600
TOP = 3  # entry points listed per page and area
SAMPLE_INTERVAL_S = 0.002
SCRIPT_THREAD = "ScriptRunner.scriptThread"  # the name streamlit gives AppTest's script thread

# (page file, label, key of the button that runs the default scenario or None), from the
# registry; the first page (Home) is the baseline.
PAGES = [(spec.file, spec.title, spec.run_button) for spec in REGISTRY]


@contextlib.contextmanager
def navigation_mode():
    """Keep Streamlit out of its legacy ``pages/`` mode inside AppTest (see
    tests/app/conftest.py for why; a running server does the same after its first run)."""
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.testing.v1 import app_test

    class _NavigationPagesManager(PagesManager):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            PagesManager.uses_pages_directory = False

    original = app_test.PagesManager
    app_test.PagesManager = _NavigationPagesManager
    try:
        yield
    finally:
        app_test.PagesManager = original
        PagesManager.uses_pages_directory = None


def _check(at, what):
    if at.exception:
        raise RuntimeError(f"{what} raised: {at.exception[0].message}")
    return at


def one_round(filename, button_key, *, cold):
    """(open seconds, button seconds or None) for one fresh session."""
    from streamlit.testing.v1 import AppTest

    if cold:
        clear_caches()
    at = _check(AppTest.from_file(str(APP), default_timeout=TIMEOUT_S).run(), "app.py")
    at.switch_page(f"pages/{filename}")
    start = time.perf_counter()
    at.run()
    opened = time.perf_counter() - start
    _check(at, filename)
    pressed = None
    if button_key is not None:
        at.button(key=button_key).click()
        start = time.perf_counter()
        at.run()
        pressed = time.perf_counter() - start
        _check(at, f"{filename}: {button_key}")
        if at.error:
            raise RuntimeError(f"{filename}: {button_key} showed {at.error[0].value!r}")
    return opened, pressed


def _area(filename):
    for name in ("dpcore", "ui"):
        if filename.startswith(str(ROOT / name) + "/"):
            return name
    return None


def _qualname(code):
    path = Path(code.co_filename).resolve().relative_to(ROOT).with_suffix("")
    return ".".join(path.parts) + "." + code.co_qualname


class StackSampler(threading.Thread):
    """Samples the stack of AppTest's script thread every ``interval`` seconds.

    Each sample goes to one area: dpcore if any frame is in dpcore/, else ui if any frame is in
    ui/, else the rest (Streamlit, plotly serialization, page code). Within an area the sample
    is credited to the outermost frame of that area (its entry point), so nested calls and
    callbacks (dpcore -> scipy -> dpcore) are never counted twice.
    """

    def __init__(self, interval=SAMPLE_INTERVAL_S):
        super().__init__(daemon=True)
        self.interval = interval
        self.areas = Counter()
        self.entries = {"dpcore": Counter(), "ui": Counter()}
        self._stop_event = threading.Event()

    def run(self):
        while not self._stop_event.wait(self.interval):
            frames = sys._current_frames()
            for thread in threading.enumerate():
                if thread.name == SCRIPT_THREAD and thread.ident in frames:
                    self._record(frames[thread.ident])

    def _record(self, frame):
        outermost = {}
        while frame is not None:
            area = _area(frame.f_code.co_filename)
            if area is not None:
                outermost[area] = frame.f_code  # walking outwards: the last one wins
            frame = frame.f_back
        area = "dpcore" if "dpcore" in outermost else ("ui" if "ui" in outermost else "rest")
        self.areas[area] += 1
        if area != "rest":
            self.entries[area][_qualname(outermost[area])] += 1

    def stop(self):
        self._stop_event.set()
        self.join()


def breakdown(filename, button_key):
    """One more cold round with the stack sampler: (script seconds, shares per area, the main
    entry points per area with their estimated seconds)."""
    sampler = StackSampler()
    sampler.start()
    try:
        opened, pressed = one_round(filename, button_key, cold=True)
    finally:
        sampler.stop()
    seconds = opened + (pressed or 0.0)
    count = sum(sampler.areas.values()) or 1
    shares = {area: sampler.areas[area] / count for area in ("dpcore", "ui", "rest")}
    top = {area: [(name, seconds * n / count) for name, n in entries.most_common(TOP)]
           for area, entries in sampler.entries.items()}
    return seconds, shares, top


def clear_caches():
    """Empty ``st.cache_data`` and dpcore's in-process caches: ``functools`` caches (e.g. the
    radial samplers) and module-level ``*CACHE*`` dicts (e.g. calibrated Gaussian σ's)."""
    import streamlit as st

    st.cache_data.clear()
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] != "dpcore" or module is None:
            continue
        for attr, value in list(vars(module).items()):
            if callable(getattr(value, "cache_clear", None)) and hasattr(value, "cache_info"):
                value.cache_clear()
            elif "CACHE" in attr and isinstance(value, dict):
                value.clear()


def main():
    from streamlit.testing.v1 import AppTest  # noqa: F401  (import cost outside the timings)

    with quiet_bare_mode_warnings():
        return _run()


@contextlib.contextmanager
def quiet_bare_mode_warnings():
    """Clearing the caches outside a script run logs "missing ScriptRunContext" and "No
    runtime found" warnings (harmless here); drop them while the benchmark runs."""
    import logging

    names = ("streamlit.runtime.scriptrunner_utils.script_run_context",
             "streamlit.runtime.caching.cache_data_api")
    drop = logging.Filter("dropped")  # matches no record name: filter() returns False
    for name in names:
        logging.getLogger(name).addFilter(drop)
    try:
        yield
    finally:
        for name in names:
            logging.getLogger(name).removeFilter(drop)


def _best(values):
    values = [v for v in values if v is not None]
    return min(values) if values else float("nan")


def _selected_pages():
    """All pages, or those named by one of the comma-separated words of the ``BENCH_PAGES``
    environment variable: a word selects a page if it is the page's short name in
    :mod:`ui.registry` (e.g. ``gd``) or occurs in its title (e.g.
    ``BENCH_PAGES=gaussian,budget make bench``)."""
    words = [w.strip().lower() for w in os.environ.get("BENCH_PAGES", "").split(",") if w.strip()]
    if not words:
        return PAGES
    # Home stays: it is the baseline of the ratios.
    return [(spec.file, spec.title, spec.run_button) for spec in REGISTRY
            if spec is HOME or any(w == spec.name or w in spec.title.lower() for w in words)]


def _run():
    rows, details = [], []
    with navigation_mode():
        for filename, label, button_key in _selected_pages():
            one_round(filename, button_key, cold=True)  # warm-up: imports, lazy state
            cold = [one_round(filename, button_key, cold=True) for _ in range(REPEATS)]
            warm = [one_round(filename, button_key, cold=False) for _ in range(REPEATS)]
            total, shares, top = breakdown(filename, button_key)
            row = {"page": label}
            for name, rounds in (("cold", cold), ("warm", warm)):
                row[f"open_{name}_s"] = _best(r[0] for r in rounds)
                row[f"button_{name}_s"] = _best(r[1] for r in rounds)
                row[f"scenario_{name}_s"] = row[f"open_{name}_s"] + (
                    0.0 if button_key is None else row[f"button_{name}_s"])
            row.update({"dpcore_%": 100 * shares["dpcore"], "ui_%": 100 * shares["ui"],
                        "streamlit_other_%": 100 * shares["rest"]})
            rows.append(row)
            details.append((label, total, top))
    table = pd.DataFrame(rows).set_index("page")
    baseline = table.loc[HOME.title, "open_cold_s"]
    table["ratio_cold"] = table["scenario_cold_s"] / baseline
    table["target_cold"] = table["scenario_cold_s"] <= TARGET_S
    table["target_warm"] = table["scenario_warm_s"] <= TARGET_S

    print(f"Baseline (same run): opening Home takes {baseline:.4f} s (AppTest + Streamlit + "
          "app.py, no computation); ratio_cold = scenario_cold_s / baseline.")
    print(f"Where the time goes (one more cold round, the script thread's stack sampled every "
          f"{1000 * SAMPLE_INTERVAL_S:g} ms; seconds estimated from the share of samples, "
          "credited to the outermost dpcore / ui function on the stack):")
    for label, total, top in details:
        print(f"  {label} (open + button {total:.2f} s)")
        for area, calls in top.items():
            if calls:
                print(f"    {area}: " + "; ".join(f"{name} {sec:.2f}" for name, sec in calls))
    pages = [label for label in table.index if label != HOME.title]
    for name, what in (("cold", "first visitor, caches empty"), ("warm", "caches filled")):
        met = [p for p in pages if table.loc[p, f"target_{name}"]]
        missed = [p for p in pages if p not in met]
        print(f"Target <= {TARGET_S:g} s per page's default scenario, open + button ({what}): "
              f"met by {', '.join(met) or 'none'}; missed by {', '.join(missed) or 'none'}.")
    seconds = [c for c in table.columns if c.endswith("_s")]
    shares_ = [c for c in table.columns if c.endswith("_%")]
    return table.round({**dict.fromkeys(seconds, 3), **dict.fromkeys(shares_, 1),
                        "ratio_cold": 0})


if __name__ == "__main__":
    print(main().to_string())
