"""Checks shared by the tests of the figure builders in :mod:`dpcore.visualization`."""

from pathlib import Path

import numpy as np
import plotly.graph_objects as go

ROOT = Path(__file__).resolve().parents[2]
PLOTLY_WHITE = go.Figure(layout_template="plotly_white").layout.template


def traces_of(fig, kind):
    return [t for t in fig.data if isinstance(t, kind)]


def legend_names(fig):
    return [t.name for t in fig.data if t.showlegend is not False]


def check_common(fig):
    """Properties every builder promises: title, template, fonts, height, a legend."""
    assert isinstance(fig, go.Figure)
    assert fig.layout.title.text and fig.layout.title.text.strip()
    assert fig.layout.template == PLOTLY_WHITE
    assert fig.layout.font.size >= 12
    assert fig.layout.title.font.size >= 16
    assert 250 <= fig.layout.height <= 1200
    assert fig.layout.showlegend is True
    assert legend_names(fig), "no trace appears in the legend"
    fig.to_json()  # every property validates and serializes


def check_axis_titles(fig):
    """Every 2-D axis that carries data or ticks has a title, or (subplots) some of them do."""
    xs = [ax.title.text for ax in fig.select_xaxes()]
    ys = [ax.title.text for ax in fig.select_yaxes()]
    assert any(xs) and any(ys)


def check_scene_titles(fig):
    for name in ("xaxis", "yaxis", "zaxis"):
        assert fig.layout.scene[name].title.text


def fake_draws(manifold, p, v, n, rng, scale=0.1):
    """Perturbed (p, v) pairs standing in for private releases."""
    out = []
    for _ in range(n):
        q = manifold.exp(p, scale * manifold.random_tangent(p, rng))
        w = manifold.proj_tangent(q, manifold.transport(p, q, v))
        out.append((q, w))
    return out


T = np.linspace(0.0, 1.0, 60)
