"""Long work is visible and can be stopped (issue 14 point 7), in a real browser.

On the Geodesic regression page a long release (Kendall shapes, n = 500, 10 x 10 draws, chains
of 5000 + 5000 steps, several seconds) is started: the progress bar appears with the time left, the
Release button is disabled while it runs, and Cancel stops it. The page then says the release
was cancelled, shows no release, and the privacy ledger in the sidebar is still empty. That a
finished release leaves no progress bar, enables the Release button again and is in the ledger
is checked on every page's default scenario (:func:`tests.browser.test_pages_in_browser.
run_default_scenario`, run by tests/browser/test_accessibility.py). The running state is saved
to ``build/screenshots/progress.png``.
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

SPEC = registry.page("geodesic_regression.py")
# Settings from the URL (as a shared link would give them): MCMC chosen explicitly, so the page
# asks for no opt-in.
# Several seconds of chains on Kendall shapes (k = 8, set here: the page's default is 4), the
# page's largest request (n = 500, 10 x 10 draws, chains of 5000 + 5000 steps: 5e8 gradient
# terms, compiled): long enough to watch and cancel. The test server's calibration is pinned
# (_pinned_server.py: 2e-8 s per term, about 10 s), so the request is never refused for a
# machine's load.
LONG = {"gr_m": "kendall", "gr_k": 8, "gr_n": 500, "gr_nf": 10, "gr_nv": 10, "gr_chain": 5000,
        "gr_burn": 5000, "gr_sampler": "mcmc"}
BAR = "[data-testid='stMain'] [data-testid='stProgress']"
LEDGER_EMPTY = "No releases yet."


def open_with(page, settings):
    query = "&".join(f"{k}={v}" for k, v in settings.items())
    page.goto(f"/{SPEC.url_path}" + (f"?{query}" if query else ""),
              wait_until="domcontentloaded")
    page.locator("h1").filter(has_text=SPEC.page_title).first.wait_for(timeout=LOAD_TIMEOUT)
    wait_until_complete(page, LOAD_TIMEOUT)


def start_release(page):
    """Press Release and confirm its cost; returns the Release button."""
    release = keyed_button(page, "gr_release_button")
    release.wait_for(state="visible")
    assert release.is_enabled()
    release.click()
    confirm = page.locator(".st-key-gr_release_button_confirm").get_by_role("button")
    confirm.wait_for(state="visible", timeout=60_000)
    confirm.click()
    return release


def bar_text(page):
    return page.locator(BAR).first.inner_text()


@pytest.mark.browser
def test_a_long_release_shows_its_progress_and_can_be_cancelled(app_page):
    page = app_page
    open_with(page, LONG)
    assert_no_errors(page)
    caption = page.locator("[data-testid='stMain']").get_by_text(
        re.compile(r"^Estimated time: about \d+ s")).first
    caption.wait_for(timeout=30_000)  # the time is stated before anything runs
    sidebar = page.locator("[data-testid='stSidebar']")
    assert sidebar.get_by_text(LEDGER_EMPTY).count() == 1

    release = start_release(page)
    page.locator(BAR).first.wait_for(timeout=60_000)
    # The bar states its share done, the time elapsed and the time left (from the a-priori
    # estimate, then from the run's own rate).
    page.wait_for_function(
        """(sel) => { const el = document.querySelector(sel);
                      return el && /\\d+%/.test(el.innerText) && /left/.test(el.innerText)
                             && !/: 0%/.test(el.innerText); }""",
        arg=BAR, timeout=60_000)
    text = bar_text(page)
    assert text.startswith("Drawing the release: "), text
    assert "elapsed" in text and "left" in text, text
    # No second release while this one runs: the button's place holds a disabled stand-in.
    busy = keyed_button(page, "gr_release_button_busy")
    assert busy.is_visible() and not busy.is_enabled()
    assert release.count() == 0
    cancel = keyed_button(page, "gr_release_cancel")
    assert cancel.is_visible() and cancel.is_enabled()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.mouse.move(700, 10)
    page.screenshot(path=str(SCREENSHOTS / "progress.png"), animations="disabled")

    cancel.click()
    notice = page.locator("[data-testid='stMain']").get_by_text(
        "The release was cancelled: nothing was released or recorded in the ledger.")
    notice.wait_for(timeout=60_000)
    wait_until_idle(page, RUN_TIMEOUT)
    assert page.locator(BAR).count() == 0
    assert keyed_button(page, "gr_release_button").is_enabled()
    assert keyed_button(page, "gr_download_release").count() == 0  # nothing released
    assert sidebar.get_by_text(LEDGER_EMPTY).count() == 1  # nothing recorded
    assert_no_errors(page)
