"""Every page of the dashboard in a real browser (Debian's Chromium driven by Playwright).

The helpers here drive a page: open it, wait until Streamlit has finished, switch its theme,
save a screenshot, download a result. :func:`check_default_scenario` is the check of a page's
default scenario: run it (press its Release / Run button when it has one), wait until Streamlit
has finished, check that the plotly figures were drawn and that no error element or exception is
shown, save a full-page screenshot to ``build/screenshots/<page>.png`` (the README shows them)
and download the result (the release as JSON, or the simulation as CSV) where there is one.
It runs on every page in ``tests/browser/test_accessibility.py``, on the same visit as that
page's accessibility and contrast checks (each page is opened and its scenario run once for all
of them). The tests of this module: on the geodesic regression page a CSV is uploaded through
the file input, and a closed section shows its settings again when reopened.

The server and the browser come from ``conftest.py``. Selectors are Streamlit 1.67's
``data-testid`` attributes (streamlit is pinned in requirements.txt).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpcore.data import make_regression_data, to_csv
from dpcore.manifolds import Sphere
from ui import registry
from ui.registry import HOME, PAGES, PageSpec
from ui.session import LEDGER_TITLE

from .conftest import SCREENSHOTS, VIEWPORT

# The script-run state Streamlit puts on its root element: "initial" before the first run,
# "running" during a run and "notRunning" once the run has finished.
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
# Idle, and no element drawn by an earlier run still waiting to be replaced (Streamlit marks
# those data-stale="true" and greys them out until the current run redraws or drops them).
SETTLED = f"""() => document.querySelector('{IDLE}') !== null
  && document.querySelector('[data-stale="true"]') === null"""
SETTLE_MS = 500
# st.error / an alert of kind error, and an uncaught exception's traceback box.
ERRORS = ('[data-testid="stException"], [data-testid="stAlertContentError"], '
          '[data-testid="stErrorElementStack"]')
# The main area's uploader (the sidebar has one too: loading a ledger).
UPLOAD_INPUT = '[data-testid="stMain"] [data-testid="stFileUploaderDropzoneInput"]'
FILE_CHIP = '[data-testid="stFileChipName"]'
# The sidebar's privacy ledger, drawn by app.py after the page: the mark of a complete run.
LEDGER_HEADING = f'[data-testid="stSidebar"] h2:has-text("{LEDGER_TITLE}")'
LOAD_TIMEOUT = 120_000  # ms: a cold server imports and fills its caches on the first visit
RUN_TIMEOUT = 180_000  # ms: the budget-split simulation draws 104 MCMC releases
PROGRESS = "[data-testid='stMain'] [data-testid='stProgress']"
RELEASE_KEYS = {"values", "mechanism", "epsilon", "delta", "mu", "sensitivity", "sigma",
                "assumptions", "diagnostics", "mode", "seeded", "version"}

# True when every visible plotly chart of the main area is drawn (an SVG layer or a WebGL
# canvas inside plotly's root element) and there are at least `min` of them.
PLOTS_DRAWN = """(min) => {
  const charts = [...document.querySelectorAll(
      '[data-testid="stMain"] [data-testid="stPlotlyChart"]')]
    .filter((el) => el.offsetParent !== null);
  const drawn = charts.filter((el) =>
    el.querySelector('.js-plotly-plot .main-svg, .js-plotly-plot canvas'));
  return charts.length >= min && drawn.length === charts.length;
}"""
# Streamlit loads some element types lazily (code blocks, data frames ...) and shows a
# skeleton placeholder until their script chunk has arrived.
NO_SKELETONS = """() => !document.querySelector(
  '[data-testid="stSkeletonElement"], [data-testid="stAppSkeleton"]')"""
COUNT_DRAWN = """() => document.querySelectorAll(
  '[data-testid="stMain"] .js-plotly-plot .main-svg:first-of-type').length"""
CONTENT_HEIGHT = """() => {
  const heights = ['stMain', 'stSidebarContent'].map((id) => {
    const el = document.querySelector(`[data-testid="${id}"]`);
    return el ? el.scrollHeight : 0;
  });
  return Math.max(...heights);
}"""


# The pages come from ui.registry: each is opened at its URL, its run button (if any) is pressed
# and its download button waited for, both found by widget key (Streamlit gives an element with
# key k the CSS class `st-key-k`). Every page but the landing page draws at least one plotly
# figure after its default scenario (every visible one must be drawn; the exact counts depend
# on the pages' defaults and are tested with AppTest).
def min_plots(spec: PageSpec) -> int:
    return 0 if spec is HOME else 1


# --------------------------------------------------------------------------- helpers
def open_page(page, spec: PageSpec):
    page.goto("/" if spec is HOME else f"/{spec.url_path}", wait_until="domcontentloaded")
    page.locator("h1").filter(has_text=spec.page_title).first.wait_for(timeout=LOAD_TIMEOUT)
    wait_until_complete(page, LOAD_TIMEOUT)


def wait_until_idle(page, timeout=RUN_TIMEOUT):
    """Wait until the app is settled: no run in progress and no element left stale by one.

    A page that ends its run with ``st.rerun()`` (the Budget split does, to redraw its button
    enabled) goes through a short idle moment before the next run starts; and the state attribute
    may still read "notRunning" just after a click, before the run it asks for has begun. So the
    condition must hold twice, ``SETTLE_MS`` apart, with no element marked stale in between.
    """
    for _ in range(50):
        page.wait_for_function(SETTLED, timeout=timeout)
        page.wait_for_timeout(SETTLE_MS)
        if page.evaluate(SETTLED):
            return
    raise AssertionError("the app never stayed idle for 0.5 s in 50 tries")


def wait_until_complete(page, timeout=LOAD_TIMEOUT):
    """Wait until the whole page is drawn and its run has finished.

    Only a run that reaches its end draws the sidebar's ledger (``app.py``).
    """
    page.locator(LEDGER_HEADING).first.wait_for(timeout=timeout)
    wait_until_idle(page, timeout)


def wait_for_plots(page, minimum: int, timeout=60_000):
    page.wait_for_function(PLOTS_DRAWN, arg=minimum, timeout=timeout)


def assert_no_errors(page):
    errors = page.locator(ERRORS)
    texts = [errors.nth(i).inner_text() for i in range(errors.count())]
    assert not texts, f"error elements on the page: {texts}"


def button(page, name: str):
    return page.locator("[data-testid='stMain']").get_by_role("button", name=name, exact=True)


def keyed_button(page, key: str):
    """The button of the widget with key ``key`` in the main area (by role: Streamlit may keep
    an aria-hidden copy of a button with a tooltip in the same container)."""
    return page.locator(f"[data-testid='stMain'] .st-key-{key}").get_by_role("button")


def opt_into_mcmc(page, run):
    """Tick the page's explicit MCMC opt-in if it asks for one (the Release button ``run`` is
    disabled until then) and wait for the rerun that enables the button."""
    opt_in = page.get_by_text("Draw by MCMC anyway (approximately private)")
    if not opt_in.count():
        return
    assert not run.is_enabled()
    opt_in.click()
    wait_until_idle(page)
    for _ in range(120):
        if run.is_enabled():
            break
        page.wait_for_timeout(250)


def run_default_scenario(page, spec: PageSpec):
    """Press the page's run button and wait until the run has finished."""
    run = keyed_button(page, spec.run_button)
    run.wait_for(state="visible")
    opt_into_mcmc(page, run)  # a release beyond the exact sampler's reach: MCMC is opt-in
    assert run.is_enabled(), f"{spec.run_button!r} is disabled with the default settings"
    run.click()
    if spec.done_button.endswith("download_release"):
        # A release spends budget: it runs only after the confirmation dialog (its cost).
        confirm = page.locator(f".st-key-{spec.run_button}_confirm").get_by_role("button")
        confirm.wait_for(state="visible", timeout=60_000)
        confirm.click()
    keyed_button(page, spec.done_button).wait_for(state="visible", timeout=RUN_TIMEOUT)
    wait_until_idle(page)
    # The run has ended: no progress bar is left and the button is enabled again; a release
    # is in the sidebar's ledger (drawn at the end of the run that follows the release, after
    # the page's own elements, which the idle check may see first on a loaded machine).
    assert page.locator(PROGRESS).count() == 0, "a progress bar is left after the run"
    # a page that redraws its button by st.rerun() may, on a loaded machine, be idle for longer
    # than the settle time between its runs: wait for the button (it must come back enabled)
    from playwright.sync_api import expect

    expect(run, f"{spec.run_button!r} is still disabled after the run").to_be_enabled(
        timeout=60_000)
    if spec.done_button.endswith("download_release"):
        ledger = page.locator("[data-testid='stSidebar'] [data-testid='stDataFrame']")
        ledger.wait_for(state="visible", timeout=RUN_TIMEOUT)
        assert ledger.count() == 1
        assert page.locator("[data-testid='stSidebar']").get_by_text(
            "No releases yet.").count() == 0


#: The app's background is drawn in the theme asked for: light (luminance above 0.5) or dark.
BACKGROUND_IN_THEME = """(theme) => {
  const c = getComputedStyle(document.querySelector('[data-testid="stApp"]')).backgroundColor;
  const [r, g, b] = c.match(/[\\d.]+/g).slice(0, 3).map((v) => {
    const s = Number(v) / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  });
  return (0.2126 * r + 0.7152 * g + 0.0722 * b > 0.5) === (theme === "light");
}"""
# Resolves once the document has not changed for `ms` milliseconds (no node, attribute or text
# mutated: every element, the plotly charts included, has been drawn again).
DOM_QUIET = """(ms) => new Promise((resolve) => {
  let timer;
  const observer = new MutationObserver(() => {
    clearTimeout(timer);
    timer = setTimeout(done, ms);
  });
  function done() { observer.disconnect(); resolve(true); }
  observer.observe(document, {subtree: true, childList: true, attributes: true,
                              characterData: true});
  timer = setTimeout(done, ms);
  setTimeout(done, 60000);  // a document that never stops changing: go on after a minute
})"""


def switch_theme(page, theme: str):
    """Switch an open page to ``theme`` as the visitor's system setting would: the app has no
    ``[theme] base`` and follows ``prefers-color-scheme``, also while a page is open. Waits
    until the app's background is drawn in it, the app is idle and the document has stopped
    changing (the charts are drawn again in the new theme)."""
    page.emulate_media(color_scheme=theme)
    page.theme = theme
    page.wait_for_function(BACKGROUND_IN_THEME, arg=theme, timeout=LOAD_TIMEOUT)
    wait_until_idle(page)
    page.evaluate(DOM_QUIET, SETTLE_MS)


def save_screenshot(page, name: str, minimum_plots: int = 0) -> Path:
    """Full-page screenshot. Streamlit scrolls its main area, not the document, so the viewport
    is stretched to the content's height for the shot and restored afterwards."""
    page.mouse.move(700, 10)  # over the empty header: no tooltip or hover effect in the picture
    page.wait_for_function(NO_SKELETONS, timeout=60_000)
    height = int(page.evaluate(CONTENT_HEIGHT))
    page.set_viewport_size({"width": VIEWPORT["width"], "height": max(height,
                                                                      VIEWPORT["height"])})
    page.wait_for_timeout(400)  # let plotly and the layout settle at the new size
    wait_for_plots(page, minimum_plots)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True, animations="disabled")
    page.set_viewport_size(VIEWPORT)
    return path


def download(page, key: str):
    """Click the download button with widget key ``key``: (file name, file text)."""
    with page.expect_download(timeout=30_000) as info:
        keyed_button(page, key).click()
    done = info.value
    return done.suggested_filename, Path(done.path()).read_text(encoding="utf-8")


def check_default_scenario(page, spec: PageSpec):
    """On ``page``, just opened at ``spec``: run the default scenario and check it. No error is
    shown before or after; the figures are drawn (at least :func:`min_plots`; the landing page
    lists every other page instead); the screenshot ``build/screenshots/<page>.png`` is saved;
    the download (if any) is not empty and a release record has every key of
    :data:`RELEASE_KEYS` and was not seeded; after the download (whose click may rerun the page)
    the app is idle again and shows no error."""
    assert_no_errors(page)
    if spec.run_button:
        run_default_scenario(page, spec)
    plots = min_plots(spec)
    if plots:
        wait_for_plots(page, plots)
        assert page.evaluate(COUNT_DRAWN) >= 1, "no plotly figure was drawn"
    else:  # the landing page: a table of the pages, no figure
        for other in PAGES:
            if other is not HOME:
                assert page.locator("[data-testid='stMain'] td").filter(
                    has_text=other.title).count() >= 1, f"the table lacks {other.title!r}"
    assert_no_errors(page)
    save_screenshot(page, spec.url_path, plots)
    if spec.done_button:
        name, text = download(page, spec.done_button)
        assert text.strip(), f"{name} is empty"
        if name.endswith(".json"):  # a release record
            record = json.loads(text)
            missing = RELEASE_KEYS - record.keys()
            assert not missing, f"release JSON lacks {sorted(missing)}"
            assert record["seeded"] is False  # the Release buttons draw from OS entropy
        wait_until_idle(page)
        assert_no_errors(page)


# --------------------------------------------------------------------------- tests
@pytest.mark.browser
def test_geodesic_regression_accepts_uploaded_csv(app_page):
    page = app_page
    open_page(page, registry.page("geodesic_regression.py"))
    page.locator("[data-testid='stMain']").get_by_text("Upload a CSV", exact=True).click()
    page.wait_for_selector(UPLOAD_INPUT, state="attached")
    wait_until_idle(page)

    sphere = Sphere(2)
    data = make_regression_data(sphere, 40, noise=0.01, rng=3)
    csv = to_csv(sphere, data.y, data.x)
    page.set_input_files(UPLOAD_INPUT, files=[{"name": "sphere_regression.csv",
                                               "mimeType": "text/csv",
                                               "buffer": csv.encode("utf-8")}])
    page.get_by_text("Uploaded CSV: n = 40 rows, covariate 'x'.").wait_for(timeout=LOAD_TIMEOUT)
    # The uploader lists the file (a "chip"; a long name is shortened in the middle, the full
    # name is its title) ...
    page.locator(f'{FILE_CHIP}[title="sphere_regression.csv"]').wait_for()
    wait_until_idle(page)
    # ... and the page accepts it: no error, the non-private fit is drawn, Release is enabled.
    assert_no_errors(page)
    wait_for_plots(page, 1)
    # n = 40 at ε = 3 is beyond the exact sampler's reach: the page asks for an explicit MCMC
    # opt-in before Release is enabled.
    opt_into_mcmc(page, button(page, "Release"))
    assert button(page, "Release").is_enabled()
    save_screenshot(page, "geodesic_regression_upload", 1)


# Records, from the page's first instant, when the first plotly chart is drawn, when the
# sidebar's ledger (drawn at the end of a complete run) appears, and every start of a run.
@pytest.mark.browser
def test_a_closed_section_shows_its_settings_again_when_reopened(app_page):
    """A lazy section (``ui.session.lazy_expander``) keeps its settings while closed; opened
    again, the browser builds its widgets anew and must show those settings, not the widgets'
    defaults (before session 12 it showed a number field's minimum and unticked boxes, and the
    next click sent those). Geodesic regression's "Advanced: sampler", opened by a shared
    link that sets the chain length."""
    page = app_page
    spec = registry.page("geodesic_regression.py")
    page.goto(f"/{spec.url_path}?gr_chain=800&gr_burn=300", wait_until="domcontentloaded")
    wait_until_complete(page)
    from playwright.sync_api import expect

    chain = page.locator("[data-testid='stMain'] .st-key-gr_chain input")
    burn = page.locator("[data-testid='stMain'] .st-key-gr_burn input")
    expect(chain).to_have_value("800", timeout=LOAD_TIMEOUT)
    expect(burn).to_have_value("300", timeout=LOAD_TIMEOUT)
    header = page.locator("[data-testid='stMain'] [data-testid='stExpander'] summary").filter(
        has_text="Advanced: sampler")
    header.click()
    chain.wait_for(state="detached", timeout=LOAD_TIMEOUT)
    wait_until_idle(page)
    header.click()
    chain.wait_for(timeout=LOAD_TIMEOUT)
    wait_until_idle(page)
    # Without the fix the fields show 50 and 0 (their minimum) and stay so.
    expect(chain).to_have_value("800", timeout=10_000)
    expect(burn).to_have_value("300", timeout=10_000)
    assert "gr_chain=800" in page.url
    assert_no_errors(page)
