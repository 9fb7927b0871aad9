"""Figure of the linear-regression page: data with true, non-private and private lines."""

from __future__ import annotations

import numpy as np

from .euclidean import euclidean_regression_figure

__all__ = [
    "linear_regression_figure",
]

def linear_regression_figure(x, y, names, lines, *, x_name="covariate", title=None):
    """Data with the fitted lines of several methods, one panel per response.

    Parameters
    ----------
    x : array-like, shape (n,)
    y : array-like, shape (n, d)
    names : sequence of str
    lines : mapping of str to tuple (intercept, slope)
        The first entry is the non-private fit (black); the others are private fits.
    x_name : str
    title : str, optional

    Returns
    -------
    plotly.graph_objects.Figure
    """
    x = np.asarray(x, dtype=float)
    grid = np.linspace(x.min(), x.max(), 50)
    items = list(lines.items())
    true_label, (a0, b0) = items[0]
    true_lines = a0[None, :] + grid[:, None] * b0[None, :]
    private = [a[None, :] + grid[:, None] * b[None, :] for _, (a, b) in items[1:]]
    prefix = "Private fit"
    fig = euclidean_regression_figure(
        x, y, true_lines, private or None, x_grid=grid, coordinate_names=list(names),
        x_title=x_name, true_label=true_label, private_label=prefix,
        title=title or "Linear regression per response",
    )
    # Name each private method (the shared builder numbers the draws of one method).
    labels = [label for label, _ in items[1:]]
    rename = {(f"{prefix} {k + 1}" if len(labels) > 1 else prefix): label
              for k, label in enumerate(labels)}
    for tr in fig.data:
        if tr.name in rename:
            tr.name = rename[tr.name]
    return fig
