"""Figures on the sphere (:mod:`dpcore.visualization.sphere`)."""

import numpy as np
import plotly.graph_objects as go
import pytest

from dpcore.data import make_mean_data
from dpcore.manifolds import Sphere
from dpcore.visualization.sphere import sphere_mesh, sphere_points_figure, sphere_regression_figure

from .helpers import T, check_common, check_scene_titles, legend_names, traces_of


def test_sphere_mesh_lies_on_unit_sphere():
    X, Y, Z = sphere_mesh(10, 20)
    assert X.shape == Y.shape == Z.shape == (10, 20)
    np.testing.assert_allclose(X**2 + Y**2 + Z**2, 1.0, atol=1e-12)


def test_sphere_regression_figure(sphere_case):
    data, true, private = sphere_case
    fig = sphere_regression_figure(data.y, true, private, generating_curve=true,
                                      data_x=data.x, curve_x=T)
    check_common(fig)
    check_scene_titles(fig)
    assert len(traces_of(fig, go.Surface)) == 1
    # graticule, data, non-private, data-generating, three private
    assert len(traces_of(fig, go.Scatter3d)) == 7
    scene = fig.layout.scene
    assert scene.aspectmode == "cube"
    for name in ("xaxis", "yaxis", "zaxis"):
        assert tuple(scene[name].range) == (-1.1, 1.1)
    curves = [t for t in fig.data if t.name and "Private" in t.name]
    assert len(curves) == 3
    for t in curves:
        r = np.sqrt(np.asarray(t.x) ** 2 + np.asarray(t.y) ** 2 + np.asarray(t.z) ** 2)
        # a dense polyline just above the surface
        assert len(t.x) == T.size and np.all((r > 1.0) & (r < 1.05))
    names = legend_names(fig)
    assert "Non-private geodesic" in names and any(n.startswith("Data") for n in names)


def test_sphere_regression_many_draws_share_one_legend_entry(sphere_case):
    data, true, private = sphere_case
    fig = sphere_regression_figure(data.y, true, np.stack(private * 3))
    private_traces = [t for t in fig.data if t.legendgroup == "private"]
    assert len(private_traces) == 9
    assert sum(t.showlegend is not False for t in private_traces) == 1
    assert len({t.line.color for t in private_traces}) == 9


def test_sphere_regression_figure_accepts_no_data_and_single_curve(sphere_case):
    _, true, private = sphere_case
    fig = sphere_regression_figure(None, true, private[0])
    check_common(fig)
    assert len(traces_of(fig, go.Scatter3d)) == 3  # graticule, non-private, one private


def test_sphere_regression_figure_rejects_bad_shapes(sphere_case):
    data, true, _ = sphere_case
    with pytest.raises(ValueError):
        sphere_regression_figure(data.y, true[:, :2])
    with pytest.raises(ValueError):
        sphere_regression_figure(data.y, true, [np.zeros((5, 2))])


def test_sphere_points_figure(rng):
    m = Sphere(2)
    ball = make_mean_data(m, 40, radius=np.pi / 8, rng=rng)
    north = np.array([0.0, 0.0, 1.0])
    clouds = {"Laplace": ball[:10], "KNG": ball[10:25]}
    fig = sphere_points_figure(clouds, data=ball, true_point=north, nonprivate_point=north)
    check_common(fig)
    check_scene_titles(fig)
    assert len(traces_of(fig, go.Surface)) == 1
    # graticule, data, two clouds, true mean, non-private mean
    assert len(traces_of(fig, go.Scatter3d)) == 6
    assert fig.layout.scene.aspectmode == "cube"
    names = legend_names(fig)
    assert "True mean" in names and "Laplace (10)" in names
    single = sphere_points_figure(ball)
    assert len(traces_of(single, go.Scatter3d)) == 2
