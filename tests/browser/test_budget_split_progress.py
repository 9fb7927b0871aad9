"""The Budget split simulation shows its estimate, its progress per cell with the time left,
and can be cancelled (issues 13 point 3 and 14 point 7), in a real browser.

A fresh seed keeps the server's cache of earlier runs out of the way, so the simulation really
runs: paper mode (Markov chains, which run on the button only, never on opening) with one view
and one sample size, three replicates. The running state is saved to
``build/screenshots/budget_split_progress.png``.
"""

from __future__ import annotations

import re

import pytest

from ui import registry

from .conftest import SCREENSHOTS
from .test_pages_in_browser import (
    LOAD_TIMEOUT,
    RUN_TIMEOUT,
    assert_no_errors,
    keyed_button,
    wait_until_complete,
    wait_until_idle,
)

SPEC = registry.page("budget_split.py")
BAR = "[data-testid='stMain'] [data-testid='stProgress']"


def open_with(page, seed, extra=""):
    page.goto(f"/{SPEC.url_path}?bs_seed={seed}{extra}", wait_until="domcontentloaded")
    page.locator("h1").filter(has_text=SPEC.page_title).first.wait_for(timeout=LOAD_TIMEOUT)
    wait_until_complete(page, LOAD_TIMEOUT)


def start(page):
    run = keyed_button(page, "bs_run")
    run.wait_for(state="visible")
    assert run.is_enabled()
    run.click()
    page.locator(BAR).first.wait_for(timeout=60_000)
    return run


@pytest.mark.browser
def test_the_simulation_shows_its_progress_and_can_be_cancelled(app_page):
    page = app_page
    # Chains at the page's cap (2000 + 2000): each of the 3 cells takes long enough that the
    # Cancel below lands before the last one finishes, even on a loaded CI machine (with the
    # default 1000 + 1000 the run once finished first and its figures were shown).
    open_with(page, 90_001, "&bs_mode=paper&bs_chain=2000&bs_burn=2000&bs_views=unequal"
                            "&bs_n=100")
    assert_no_errors(page)
    estimate = re.compile(r"^Estimated work: (about [\d.]+ (ms|s|min)|under 1 ms)")
    page.locator("[data-testid='stMain']").get_by_text(estimate).first.wait_for(timeout=30_000)
    run = start(page)
    page.wait_for_function(
        """(sel) => { const el = document.querySelector(sel);
                      return el && /cells done/.test(el.innerText)
                             && /left/.test(el.innerText); }""",
        arg=BAR, timeout=RUN_TIMEOUT)
    text = page.locator(BAR).first.inner_text()
    assert re.match(r"Simulating: [1-2] of 3 cells done: \d+%", text), text
    assert "elapsed" in text and "left" in text, text
    assert not run.is_enabled()  # no second run while this one runs
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.mouse.move(700, 10)
    page.screenshot(path=str(SCREENSHOTS / "budget_split_progress.png"), animations="disabled")

    keyed_button(page, "bs_sim_cancel").click()
    page.locator("[data-testid='stMain']").get_by_text(
        re.compile("^The simulation was cancelled")).wait_for(timeout=60_000)
    wait_until_idle(page, RUN_TIMEOUT)
    assert page.locator(BAR).count() == 0
    assert keyed_button(page, "bs_run").is_enabled()
    charts = page.locator("[data-testid='stMain'] [data-testid='stPlotlyChart']")
    assert charts.count() == 0  # nothing stored: no figures
    assert_no_errors(page)


@pytest.mark.browser
def test_a_finished_simulation_enables_the_button_again(app_page):
    page = app_page
    # Paper mode (chains): the strict default now draws in a second or two, which can end
    # before its progress bar is ever seen.
    open_with(page, 90_002, "&bs_mode=paper&bs_views=unequal&bs_n=100")
    start(page)
    charts = page.locator("[data-testid='stMain'] [data-testid='stPlotlyChart']")
    charts.first.wait_for(timeout=RUN_TIMEOUT)
    wait_until_idle(page, RUN_TIMEOUT)
    assert page.locator(BAR).count() == 0
    assert keyed_button(page, "bs_run").is_enabled()
