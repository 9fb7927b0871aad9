"""Text contrast (WCAG 2.1 AA, 1.4.3): caption text must reach 4.5:1 against its background."""

import pytest

from ui.registry import HOME, PAGES

from .test_pages_in_browser import open_page

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
  const sel = "[data-testid='stCaptionContainer']";
  return Array.from(document.querySelectorAll(sel))
    .map(e => [getComputedStyle(e).color, background(e)]);
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


@pytest.mark.browser
@pytest.mark.parametrize("spec", [HOME, *[p for p in PAGES if p.url_path == "frechet_mean"]],
                         ids=lambda p: p.url_path or "home")
def test_captions_reach_aa_contrast(app_page, spec):
    open_page(app_page, spec)
    pairs = app_page.evaluate(CAPTION_COLORS)
    assert pairs, "the page has captions"
    ratios = [contrast(fg, bg) for fg, bg in pairs]
    print(f"\ncaption contrast: {min(ratios):.2f}:1 ({pairs[0][0]} on {pairs[0][1]})")
    assert min(ratios) >= 4.5
