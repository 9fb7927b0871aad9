"""What the analysis pages share: the assumptions box and seeding of simulations (their size
caps are in :mod:`ui.caps`)."""

from __future__ import annotations

import numpy as np

__all__ = [
    "assumptions_markdown",
]


def assumptions_markdown(items):
    """A Markdown bullet list for an "Assumptions in force" box.

    Parameters
    ----------
    items : sequence of (str, str)
        ``(name, statement)`` pairs.

    Returns
    -------
    str
    """
    return "\n".join(f"- **{name}:** {text}" for name, text in items)


def _seed_for(*parts):
    """A generator seeded deterministically from integers (e.g. a seed and a sample size)."""
    return np.random.default_rng(np.random.SeedSequence([int(p) for p in parts]))
