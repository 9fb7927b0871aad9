"""The dashboard's colour palette: a re-export of :mod:`dpcore.visualization.colors`.

The Okabe–Ito palette and the role of each colour are documented there; this module keeps the
import path ``ui.colors`` working.
"""

from __future__ import annotations

from dpcore.visualization.colors import *  # noqa: F403 - the whole palette, re-exported
from dpcore.visualization.colors import __all__  # noqa: F401
