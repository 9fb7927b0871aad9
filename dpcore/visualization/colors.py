"""One colour-blind-safe palette for every figure of :mod:`dpcore.visualization`.

The colours are the Okabe–Ito palette (Okabe and Ito, "Color Universal Design", 2008), which
stays distinguishable under the common forms of colour-vision deficiency. Roles are fixed so a
reader learns them once:

* data points: :data:`DATA` (grey);
* the non-private estimate: :data:`NONPRIVATE` (black);
* the data-generating truth, a true mean, reference levels: :data:`TRUTH` (dark blue);
* private draws: :data:`PRIVATE` (the remaining Okabe–Ito hues, vermillion first) for up to
  five draws, a sequential viridis ramp (:data:`SEQUENTIAL`) beyond that;
* the highlighted best cell of a heatmap: :data:`HIGHLIGHT`.

Black stands for "the text colour": in the dashboard's dark theme it is drawn light
(``ui.figures.show_figure``). The other hues are kept in both themes: against the dark theme's
background (#171614) each reaches at least 3.5:1 (:data:`BLUE`; the others 4.7:1 or more).
"""

from __future__ import annotations

import plotly.colors

__all__ = [
    "BLACK",
    "BLUE",
    "DATA",
    "GREEN",
    "GREY",
    "HIGHLIGHT",
    "NONPRIVATE",
    "OKABE_ITO",
    "ORANGE",
    "PRIVATE",
    "PURPLE",
    "SEQUENTIAL",
    "SKY_BLUE",
    "TRUTH",
    "VERMILLION",
    "YELLOW",
    "private_colors",
    "qualitative_colors",
    "with_alpha",
]

BLACK = "#000000"
ORANGE = "#E69F00"
SKY_BLUE = "#56B4E9"
GREEN = "#009E73"  # Okabe–Ito "bluish green"
YELLOW = "#F0E442"
BLUE = "#0072B2"
VERMILLION = "#D55E00"
PURPLE = "#CC79A7"  # Okabe–Ito "reddish purple"
GREY = "#999999"

#: The eight Okabe–Ito colours in their usual order.
OKABE_ITO = (BLACK, ORANGE, SKY_BLUE, GREEN, YELLOW, BLUE, VERMILLION, PURPLE)

DATA = GREY
NONPRIVATE = BLACK
TRUTH = BLUE
HIGHLIGHT = VERMILLION

#: Colours of private draws and of series in line charts, most distinct first. Yellow is last:
#: it is hard to see on white and is only used when everything else is taken.
PRIVATE = (VERMILLION, SKY_BLUE, GREEN, PURPLE, ORANGE, YELLOW)

#: Sequential colour scale (perceptually uniform, colour-blind safe) for heatmaps and for
#: many private draws.
SEQUENTIAL = "Viridis"
#: Part of :data:`SEQUENTIAL` used for lines: its near-black start would be confused with the
#: non-private estimate and its pale-yellow end is invisible on white.
_LINE_RANGE = (0.12, 0.88)


def qualitative_colors(n: int) -> list[str]:
    """``n`` colours for distinct series (mechanisms, sample sizes, coordinates).

    Parameters
    ----------
    n : int
        Number of series.

    Returns
    -------
    list of str
        The :data:`PRIVATE` colours in order, then dark blue and black, cycling if ``n`` is
        larger than eight.
    """
    base = (*PRIVATE[:-1], BLUE, BLACK, YELLOW)
    return [base[i % len(base)] for i in range(n)]


def private_colors(n: int) -> list[str]:
    """Colours for ``n`` private draws, coloured by draw index.

    Parameters
    ----------
    n : int
        Number of draws.

    Returns
    -------
    list of str
        Qualitative Okabe–Ito colours for ``n <= 5`` (yellow left out); otherwise ``n``
        colours sampled evenly from the line range of the viridis scale, so neighbouring
        draws get neighbouring colours.
    """
    if n <= 0:
        return []
    if n <= len(PRIVATE) - 1:
        return list(PRIVATE[:n])
    lo, hi = _LINE_RANGE
    positions = [lo + (hi - lo) * i / (n - 1) for i in range(n)]
    return plotly.colors.sample_colorscale(SEQUENTIAL, positions)


def with_alpha(color: str, alpha: float) -> str:
    """The colour as an ``rgba(...)`` string with opacity ``alpha`` (for filled bands).

    Parameters
    ----------
    color : str
        ``"#RRGGBB"`` or ``"rgb(r, g, b)"``.
    alpha : float
        Opacity in [0, 1].

    Returns
    -------
    str
    """
    if color.startswith("#"):
        r, g, b = plotly.colors.hex_to_rgb(color)
    else:
        r, g, b = plotly.colors.unlabel_rgb(color)
    return f"rgba({int(r)}, {int(g)}, {int(b)}, {alpha:g})"
