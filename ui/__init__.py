"""Shared building blocks of the dashboard pages: plotly figure builders and colours.

``ui.figures`` and ``ui.colors`` re-export the library's :mod:`dpcore.visualization` (pure
functions from numpy arrays to ``plotly.graph_objects.Figure``) and its colour-blind-safe
palette. Importing ``ui``, ``ui.figures`` or ``ui.colors`` does not import Streamlit, so
figures can be built and tested without a running app.
"""

from .figures import *  # noqa: F403 - the figure builders, re-exported
from .figures import __all__  # noqa: F401
