"""What every section of the report shares: the :class:`Section` record, the per-section seed
:func:`_seed`, the comparison row :func:`_row` and the noise allowance :data:`NOISE_Z` of the
trend facts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["NOISE_Z", "Section"]


#: A trend step (over n or over ε) the wrong way counts against a qualitative fact only when it
#: exceeds this many standard errors of the difference of replicate means.
NOISE_Z = 2.0


@dataclass
class Section:
    """One figure of a paper, regenerated.

    Attributes
    ----------
    key : str
        Identifier, also the prefix of the section's CSV files (e.g. ``"p002_fig1"``).
    title : str
    protocol : str
        HTML: what was run, with which settings, and how it differs from the paper's protocol.
    figures : list of plotly.graph_objects.Figure
    tables : dict of str to pandas.DataFrame
        Written as ``<key>_<name>.csv``.
    comparison : list of dict
        Rows ``figure``, ``paper``, ``ours``, ``difference`` of the summary table.
    facts : list of Fact
    seconds : float
        Wall time of the section.
    """

    key: str
    title: str
    protocol: str = ""
    figures: list = field(default_factory=list)
    tables: dict = field(default_factory=dict)
    comparison: list = field(default_factory=list)
    facts: list = field(default_factory=list)
    seconds: float = 0.0


def _seed(seed, key):
    """Child seed of a section: independent of which other sections run."""
    return np.random.SeedSequence([int(seed), sum(ord(c) * 131**i for i, c in enumerate(key))
                                   % (2**32)])


def _row(figure, paper, ours, difference):
    return {"figure": figure, "paper": paper, "ours": ours, "difference": difference}
