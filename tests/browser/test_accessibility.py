"""Every page, opened once: its default scenario, its accessibility in the light and the dark
theme (axe-core in Chromium) and the contrast of its text in the light theme.

For each page of ``ui.registry`` one test opens the page in the light theme and makes every check
on that one visit, in this order:

1. the theme drawn is the light one; the contrast of captions and chart text in the light theme,
   on the page just opened, for the pages of ``test_contrast.CONTRAST_PAGES`` and
   ``CHART_PAGES`` (:func:`test_contrast.text_contrast_problems`);
2. the default scenario (:func:`test_pages_in_browser.check_default_scenario`): the run, no
   error shown, the figures drawn, the screenshot ``build/screenshots/<page>.png``, the download
   and its JSON keys; it ends idle after the download, whose click may rerun the page;
3. in each theme in turn (the light one the page was opened in, then the dark one, switched to
   as the system setting would switch it: Streamlit follows ``prefers-color-scheme`` while a
   page is open; each switch waits until the app is idle and the document has stopped
   changing), check that the theme is the one asked for, that every plotly chart has a text
   alternative (``st.plotly_chart(alt=...)``: Streamlit renders it as ``role="figure"`` with an
   ``aria-label``), and run axe-core; then, for :data:`DARK_SCREENSHOTS`, save the dark
   screenshot ``build/screenshots/<page>-dark.png``.

A failed step of the scenario fails at once (the later steps need it); the contrast, axe and
chart-name problems are collected and reported together at the end, so that none hides another:
a serious or critical axe violation in either theme is printed with the elements it concerns.
(One page load and one release per page, not one per check or per theme: axe's violations and
incomplete results on a page switched to dark were measured identical, rule by rule and node by
node, to those of the page opened in dark, on every page. Plotly's SVG text, which axe does not
audit, is not re-coloured by a live switch: tests/browser/test_contrast.py checks the dark
theme's text contrast on pages opened in dark.)

axe-core comes from the npm registry, pinned in ``tests/browser/package-lock.json``; install it
with ``npm ci --prefix tests/browser`` (``make test`` and ``.ci/run`` do). Without it the tests
fail and say so: an accessibility check that silently does not run would look like a pass.

Violations inside Streamlit's own widgets that the app cannot change are listed in
:data:`STREAMLIT_OWNED` with the rule, the element and the reason; every other node of every
rule is checked (no rule is disabled).
"""

from __future__ import annotations

import pytest

from ui.registry import PAGES

from .conftest import ROOT, THEMES
from .test_contrast import text_contrast_problems
from .test_pages_in_browser import (
    check_default_scenario,
    open_page,
    save_screenshot,
    switch_theme,
)

AXE = ROOT / "tests" / "browser" / "node_modules" / "axe-core" / "axe.min.js"
FAILING_IMPACTS = ("serious", "critical")
#: Pages whose dark-theme screenshot is saved as ``build/screenshots/<page>-dark.png``.
DARK_SCREENSHOTS = ("geodesic_regression", "gaussian_dp")

#: (rule id, CSS selector, theme, reason) of violations that come from Streamlit's own markup and
#: cannot be fixed from the app. A violating node is excused only if it matches the selector
#: (``Element.matches``) and the rule and theme agree; any other node fails the test.
STREAMLIT_OWNED: tuple[tuple[str, str, str, str], ...] = (
    ("color-contrast", '[data-testid="stSliderThumbValue"] p', "dark",
     "The value above a slider's thumb is drawn in the theme's primary colour, #cf4250 on "
     "#171614 in the dark theme: 3.91:1. Streamlit offers no option for that label alone, and a "
     "primary colour light enough for 4.5:1 on #171614 (luminance >= 0.21) leaves the white "
     "label of a primary button below 4.5:1 (<= 4.0:1): one of the two always fails. The value "
     "is also in the slider's aria-valuetext, which screen readers announce."),
)

# axe over the whole document; every result node is reduced to what a reader of the failure
# needs: the rule, its impact, the node's selector and axe's summary of what is wrong, and
# whether it is one of the excused Streamlit-owned nodes ([rule, selector] pairs given).
RUN_AXE = """async (owned) => {
  const result = await axe.run(document, {resultTypes: ["violations"]});
  const excused = (rule, target) => {
    const el = target.length === 1 ? document.querySelector(target[0]) : null;
    return owned.some(([r, sel]) => r === rule && el !== null && el.matches(sel));
  };
  return result.violations.flatMap((v) => v.nodes.map((n) => ({
    rule: v.id, impact: n.impact || v.impact, help: v.help,
    target: n.target.map(String).join(" "), summary: n.failureSummary,
    html: n.html.slice(0, 200), owned: excused(v.id, n.target),
  })));
}"""
# The accessible name of every plotly chart in the main area ("" when it has none).
CHART_NAMES = """() => [...document.querySelectorAll(
    '[data-testid="stMain"] [data-testid="stPlotlyChart"]')]
  .map((el) => el.getAttribute("role") === "figure" ? (el.getAttribute("aria-label") || "") : "")
"""
# Relative luminance of the app's background (sRGB, WCAG 2.1 definition).
BACKGROUND_LUMINANCE = """() => {
  const c = getComputedStyle(document.querySelector('[data-testid="stApp"]')).backgroundColor;
  const [r, g, b] = c.match(/[\\d.]+/g).slice(0, 3).map((v) => {
    const s = Number(v) / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}"""


def axe_script():
    """Path of axe-core's browser build; fails (never skips) with the install command."""
    if not AXE.is_file():
        pytest.fail(f"axe-core is not installed ({AXE.relative_to(ROOT)} is missing): run "
                    "`npm ci --prefix tests/browser` (`make test` and .ci/run do this)")
    return str(AXE)


def assert_theme(page, theme):
    """The page is drawn in ``theme``: a light background in "light", a dark one in "dark"."""
    luminance = page.evaluate(BACKGROUND_LUMINANCE)
    assert (luminance > 0.5) == (theme == "light"), \
        f"asked for the {theme} theme, the app background has luminance {luminance:.3f}"


def format_violations(violations):
    return "\n".join(f"- [{v['impact']}] {v['rule']}: {v['help']}\n    at {v['target']}\n"
                     f"    {v['html']}\n    {(v['summary'] or '').replace(chr(10), ' ')}"
                     for v in violations)


def audit(page, theme):
    """axe-core's serious and critical violations on the page, minus :data:`STREAMLIT_OWNED`."""
    if not page.evaluate("() => typeof axe !== 'undefined'"):
        page.add_script_tag(path=axe_script())
    owned = [[rule, selector] for rule, selector, in_theme, _ in STREAMLIT_OWNED
             if in_theme == theme]
    every = page.evaluate(RUN_AXE, owned)
    found = [v for v in every if v["impact"] in FAILING_IMPACTS]
    others = sorted({f"{v['rule']} ({v['impact']})" for v in every if v not in found})
    print(f"\naxe in the {theme} theme: {len(found)} serious or critical "
          f"({sum(v['owned'] for v in found)} excused as Streamlit's own); "
          f"{len(every) - len(found)} moderate or minor: {', '.join(others) or 'none'}")
    if found:
        print(format_violations(found))
    return [v for v in found if not v["owned"]]


@pytest.mark.browser
def test_axe_is_installed():
    assert axe_script().endswith("axe.min.js")


def accessibility_problems(page, spec):
    """In each theme of :data:`THEMES`, switched to live on the open ``page``: the theme drawn,
    axe's serious and critical violations and the charts without a text alternative (the
    dark screenshot of :data:`DARK_SCREENSHOTS` is saved too). Returns the problems found."""
    problems = []
    for theme in THEMES:
        switch_theme(page, theme)
        assert_theme(page, theme)
        violations = audit(page, theme)
        names = page.evaluate(CHART_NAMES)
        missing = [i for i, name in enumerate(names) if not name.strip()]
        if violations:
            problems.append(f"{len(violations)} serious or critical accessibility violations "
                            f"in the {theme} theme:\n{format_violations(violations)}")
        if missing:
            problems.append(f"{theme} theme: charts {missing} of {len(names)} have no text "
                            "alternative (alt)")
        if theme == "dark" and spec.url_path in DARK_SCREENSHOTS:
            save_screenshot(page, f"{spec.url_path}-dark", 1)
    return problems


@pytest.mark.browser
@pytest.mark.parametrize("spec", PAGES, ids=[spec.url_path for spec in PAGES])
def test_page_default_scenario_and_accessibility(app_page, spec):
    """Every page on one visit in the light theme (see the module docstring): light text
    contrast on the page just opened, the default scenario with its screenshot and download,
    then the theme, axe and chart names in the light theme and, switched live, the dark one."""
    page = app_page
    axe_script()  # fail before the slow part when axe-core is missing
    open_page(page, spec)
    assert_theme(page, page.theme)
    problems = text_contrast_problems(page, spec)
    for problem in problems:  # shown even if a step of the scenario fails below
        print(f"problem: {problem}")
    check_default_scenario(page, spec)
    problems += accessibility_problems(page, spec)
    assert not problems, "\n".join(problems)
