"""The dashboard's colour palette: a re-export of :mod:`dpcore.visualization.colors`.

The Okabe–Ito palette and the role of each colour are documented there; this module keeps the
import path ``ui.colors`` working.
"""

from __future__ import annotations

from dpcore.visualization.colors import (
    BLACK,
    BLUE,
    DATA,
    GREEN,
    GREY,
    HIGHLIGHT,
    NONPRIVATE,
    OKABE_ITO,
    ORANGE,
    PRIVATE,
    PURPLE,
    SEQUENTIAL,
    SKY_BLUE,
    TRUTH,
    VERMILLION,
    YELLOW,
    private_colors,
    qualitative_colors,
    with_alpha,
)

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
