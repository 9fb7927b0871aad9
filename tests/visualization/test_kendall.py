"""Figures of planar shapes (:mod:`dpcore.visualization.kendall`)."""

import numpy as np
import plotly.graph_objects as go

from dpcore.data import make_regression_data
from dpcore.data.synthetic import kendall_template
from dpcore.manifolds import KendallShape
from dpcore.visualization.kendall import kendall_shapes_figure

from .helpers import check_axis_titles, check_common, fake_draws, legend_names, traces_of


def test_kendall_shapes_figure(rng):
    m = KendallShape(6)
    data = make_regression_data(m, 20, rng=rng)
    ref = kendall_template(6)
    xs = np.array([0.0, 0.5, 1.0])
    true = m.to_landmarks(m.geodesic(data.footpoint, data.shooting_vector, xs), reference=ref)
    private = [m.to_landmarks(m.geodesic(p, v, xs), reference=ref)
               for p, v in fake_draws(m, data.footpoint, data.shooting_vector, 2, rng, 0.05)]
    fig = kendall_shapes_figure(xs, true, private)
    check_common(fig)
    check_axis_titles(fig)
    scatters = traces_of(fig, go.Scatter)
    assert len(scatters) == xs.size * (1 + len(private))
    assert [a.text for a in fig.layout.annotations] == ["x = 0", "x = 0.5", "x = 1"]
    names = legend_names(fig)
    assert len(names) == len(set(names)) == 1 + len(private)
    closed = scatters[0]
    assert len(closed.x) == 7 and closed.x[0] == closed.x[-1]  # outline closed
    # equal aspect in every panel
    for j in range(xs.size):
        axis = fig.layout["yaxis" if j == 0 else f"yaxis{j + 1}"]
        assert axis.scaleanchor == ("x" if j == 0 else f"x{j + 1}")
    open_fig = kendall_shapes_figure(xs, true, closed=False, n_cols=2)
    assert len(open_fig.data[0].x) == 6
    assert open_fig.layout.height > fig.layout.height  # two rows


def test_kendall_draws_figure_one_row_per_draw(rng):
    """Small multiples: each panel holds the non-private shape and one draw, never all draws."""
    from dpcore.visualization.kendall import kendall_draws_figure

    m = KendallShape(6)
    data = make_regression_data(m, 20, rng=rng)
    ref = kendall_template(6)
    xs = np.array([0.0, 0.5, 1.0])
    true = m.to_landmarks(m.geodesic(data.footpoint, data.shooting_vector, xs), reference=ref)
    private = [m.to_landmarks(m.geodesic(p, v, xs), reference=ref)
               for p, v in fake_draws(m, data.footpoint, data.shooting_vector, 5, rng, 0.05)]
    fig = kendall_draws_figure(xs, true, private, max_draws=3)
    check_common(fig)
    scatters = traces_of(fig, go.Scatter)
    assert len(scatters) == 3 * xs.size * 2  # rows x panels x (non-private, one draw)
    names = legend_names(fig)
    assert names == ["Non-private prediction", "Private draw 1", "Private draw 2",
                     "Private draw 3"]
    assert "the first 3 of 5 draws" in fig.layout.title.subtitle.text
    # each panel's private trace is that row's draw at that covariate (closed outline)
    np.testing.assert_allclose(np.asarray(scatters[2 * xs.size + 1].x)[:-1], private[1][0][:, 0])
    for j in range(9):
        axis = fig.layout["yaxis" if j == 0 else f"yaxis{j + 1}"]
        assert axis.scaleanchor == ("x" if j == 0 else f"x{j + 1}")
