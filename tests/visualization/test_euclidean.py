"""Figures of linear regression in R^d (:mod:`dpcore.visualization.euclidean`)."""

import numpy as np
import plotly.graph_objects as go
import pytest

from dpcore.data import make_regression_data
from dpcore.manifolds import Euclidean
from dpcore.visualization.euclidean import euclidean_regression_figure

from .helpers import check_axis_titles, check_common, fake_draws, legend_names, traces_of


def test_euclidean_regression_figure(rng):
    m = Euclidean(3)
    data = make_regression_data(m, 25, rng=rng)
    grid = np.linspace(0.0, 1.0, 20)
    true = m.geodesic(data.footpoint, data.shooting_vector, grid)
    private = np.stack([m.geodesic(p, v, grid)
                        for p, v in fake_draws(m, data.footpoint, data.shooting_vector, 2, rng)])
    fig = euclidean_regression_figure(data.x, data.y, true, private, x_grid=grid,
                                         generating_lines=data.true_points(grid))
    check_common(fig)
    check_axis_titles(fig)
    assert len(traces_of(fig, go.Scatter)) == 3 * (1 + 1 + 1 + 2)
    assert [a.text for a in fig.layout.annotations] == ["y1", "y2", "y3"]
    assert [fig.layout[f"yaxis{'' if j == 0 else j + 1}"].title.text for j in range(3)] == [
        "y1", "y2", "y3"]
    names = legend_names(fig)
    assert len(names) == len(set(names)) == 5
    one = euclidean_regression_figure(data.x, data.y[:, 0], true[:, 0])
    check_common(one)
    assert len(one.data) == 2
    np.testing.assert_allclose(one.data[1].x, np.linspace(data.x.min(), data.x.max(), 20))
    with pytest.raises(ValueError):
        euclidean_regression_figure(data.x, data.y, true[:, :2])
