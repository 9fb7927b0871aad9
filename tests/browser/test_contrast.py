"""Text contrast (WCAG 2.1 AA, 1.4.3) in the light and the dark theme: caption text and the text
of the charts (titles, axis and tick labels, legends) must reach 4.5:1 against its background.

Captions are checked on :data:`CONTRAST_PAGES`, chart text on :data:`CHART_PAGES`, each time on
the page as it is just after opening (before any release). In the light theme the checks run on
the visit of ``test_page_default_scenario_and_accessibility`` (test_accessibility.py), which
opens every page once in the light theme for all its checks and calls
:func:`text_contrast_problems` there before it runs the page's default scenario. In the dark
theme they run here, on pages opened in the dark theme (one visit per page for both checks):
plotly's SVG text is not re-coloured when an open page is switched to dark (measured: on a page
opened in light and switched live, some chart text keeps the light theme's rgb(38, 39, 48) on
the dark background; opened in dark, it is drawn in the dark theme's colours), so the dark chart
text can only be judged on a page opened in dark. (The captions' colours were measured identical
on both, but the light visit reaches the dark theme only after its release, when the captions
are no longer those of the page just opened: they are checked here, as the light ones are, on
the page just opened.)
"""

import pytest

from ui.registry import HOME, PAGES

from .test_pages_in_browser import open_page, wait_for_plots

#: Computed colour of every caption (main area and sidebar) and of its nearest opaque background.
CAPTION_COLORS = """() => {
  const opaque = c => c && c !== "transparent" && !/rgba\\(.*,\\s*0\\)$/.test(c);
  const background = e => {
    for (let n = e; n; n = n.parentElement) {
      const c = getComputedStyle(n).backgroundColor;
      if (opaque(c)) return c;
    }
    return "rgb(255, 255, 255)";
  };
  // Streamlit fades captions with CSS opacity (0.6), not with the colour's alpha: fold the
  // opacity of the element and of its ancestors into the colour's alpha.
  const withOpacity = e => {
    let alpha = 1;
    for (let n = e; n; n = n.parentElement) alpha *= Number(getComputedStyle(n).opacity);
    const [r, g, b, a = 1] = getComputedStyle(e).color.match(/[\\d.]+/g).map(Number);
    return `rgba(${r}, ${g}, ${b}, ${a * alpha})`;
  };
  const sel = "[data-testid='stCaptionContainer']";
  return Array.from(document.querySelectorAll(sel))
    .map(e => [withOpacity(e), background(e)]);
}"""


#: Colour of the text of every chart (titles, ticks, axis titles, legend entries) and of the
#: app's background, which the charts show through (Streamlit's chart theme paints it).
CHART_TEXT_COLORS = """() => {
  const bg = getComputedStyle(document.querySelector('[data-testid="stApp"]')).backgroundColor;
  const sel = ['.xtick text', '.ytick text', '.legendtext', '.gtitle', '.g-gtitle text',
               '.g-xtitle text', '.g-ytitle text']
    .map((s) => `[data-testid="stMain"] .js-plotly-plot ${s}`).join(', ');
  return Array.from(document.querySelectorAll(sel))
    .filter((e) => e.textContent.trim())
    .map((e) => [getComputedStyle(e).fill, bg, e.textContent.trim().slice(0, 40)]);
}"""


def _rgba(text):
    parts = [float(v) for v in text[text.index("(") + 1:text.index(")")].split(",")]
    return parts + [1.0] * (4 - len(parts))


def _luminance(rgb):
    def channel(c):
        c /= 255.0
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (channel(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(fg, bg):
    """WCAG contrast ratio of CSS colour ``fg`` (alpha composited) on opaque ``bg``."""
    f, b = _rgba(fg), _rgba(bg)
    mixed = [f[3] * f[i] + (1 - f[3]) * b[i] for i in range(3)]
    hi, lo = sorted((_luminance(mixed), _luminance(b[:3])), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_contrast_formula():
    assert contrast("rgb(0, 0, 0)", "rgb(255, 255, 255)") == pytest.approx(21.0)
    assert contrast("rgba(0, 0, 0, 0)", "rgb(255, 255, 255)") == pytest.approx(1.0)


#: Pages whose captions are checked: the landing page (sidebar captions) and two pages.
CONTRAST_PAGES = [HOME, *[p for p in PAGES if p.url_path in ("frechet_mean", "gaussian_dp")]]
#: Pages whose chart text is checked: two pages that draw several 2D charts before any release.
CHART_PAGES = [p for p in PAGES if p.url_path in ("gaussian_dp", "sensitivity")]
#: The pages opened in the dark theme here: those of either list, each visited once.
DARK_PAGES = [p for p in PAGES if p in CONTRAST_PAGES or p in CHART_PAGES]


def caption_problems(page):
    """What is wrong with the contrast of the captions (main area and sidebar) of ``page`` as it
    is drawn now, in ``page.theme``: [] when every caption reaches 4.5:1."""
    pairs = page.evaluate(CAPTION_COLORS)
    if not pairs:
        return [f"{page.theme} theme: the page has no captions"]
    rated = [(fg, bg, round(contrast(fg, bg), 2)) for fg, bg in pairs]
    worst = min(contrast(fg, bg) for fg, bg in pairs)
    print(f"\n{page.theme}: caption contrast {worst:.2f}:1 ({pairs[0][0]} on {pairs[0][1]})")
    low = [pair for pair in rated if contrast(pair[0], pair[1]) < 4.5]
    if low:
        return [f"caption text below 4.5:1 in the {page.theme} theme: {low[:10]}"]
    return []


def chart_text_problems(page):
    """What is wrong with the contrast of the chart text of ``page`` (once a chart is drawn), in
    ``page.theme``: [] when at least 10 texts are found and every one reaches 4.5:1."""
    wait_for_plots(page, 1)
    texts = page.evaluate(CHART_TEXT_COLORS)
    if len(texts) < 10:
        return [f"{page.theme} theme: too few chart texts found: {texts}"]
    low = [(text, fg, round(contrast(fg, bg), 2)) for fg, bg, text in texts
           if contrast(fg, bg) < 4.5]
    worst = min(contrast(fg, bg) for fg, bg, _ in texts)
    print(f"\n{page.theme}: chart text contrast >= {worst:.2f}:1 over {len(texts)} labels")
    if low:
        return [f"chart text below 4.5:1 in the {page.theme} theme: {low[:10]}"]
    return []


def text_contrast_problems(page, spec):
    """The caption check on :data:`CONTRAST_PAGES` and the chart text check on
    :data:`CHART_PAGES`, on ``page`` just opened at ``spec``."""
    problems = []
    if spec in CONTRAST_PAGES:
        problems += caption_problems(page)
    if spec in CHART_PAGES:
        problems += chart_text_problems(page)
    return problems


@pytest.mark.browser
@pytest.mark.parametrize("themed_page", ["dark"], indirect=True)
@pytest.mark.parametrize("spec", DARK_PAGES, ids=lambda p: p.url_path)
def test_text_reaches_aa_contrast(themed_page, spec):
    """Captions and chart text on a page opened in the dark theme (the light theme's are checked
    in test_accessibility.py, on the page's one light visit)."""
    page = themed_page
    open_page(page, spec)
    problems = text_contrast_problems(page, spec)
    assert not problems, "\n".join(problems)
