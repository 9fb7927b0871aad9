"""Text contrast (WCAG 2.1 AA, 1.4.3) in the light and the dark theme: caption text and the text
of the charts (titles, axis and tick labels, legends) must reach 4.5:1 against its background."""

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


@pytest.mark.browser
@pytest.mark.parametrize("spec", CONTRAST_PAGES, ids=lambda p: p.url_path)
def test_captions_reach_aa_contrast(themed_page, spec):
    page = themed_page
    open_page(page, spec)
    pairs = page.evaluate(CAPTION_COLORS)
    assert pairs, "the page has captions"
    ratios = [contrast(fg, bg) for fg, bg in pairs]
    print(f"\n{page.theme}: caption contrast {min(ratios):.2f}:1 ({pairs[0][0]} on {pairs[0][1]})")
    assert min(ratios) >= 4.5


@pytest.mark.browser
@pytest.mark.parametrize("spec", CHART_PAGES, ids=lambda p: p.url_path)
def test_chart_text_reaches_aa_contrast(themed_page, spec):
    page = themed_page
    open_page(page, spec)
    wait_for_plots(page, 1)
    texts = page.evaluate(CHART_TEXT_COLORS)
    assert len(texts) >= 10, f"too few chart texts found: {texts}"
    low = [(text, fg, round(contrast(fg, bg), 2)) for fg, bg, text in texts
           if contrast(fg, bg) < 4.5]
    worst = min(contrast(fg, bg) for fg, bg, _ in texts)
    print(f"\n{page.theme}: chart text contrast >= {worst:.2f}:1 over {len(texts)} labels")
    assert not low, f"chart text below 4.5:1 in the {page.theme} theme: {low[:10]}"
