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


# ------------------------------------------------------------------------------ flat map
from dpcore.visualization.regression import regression_figures  # noqa: E402
from dpcore.visualization.sphere import (  # noqa: E402
    azimuthal_equidistant,
    map_frame,
    sphere_regression_map_figure,
)

from .helpers import check_axis_titles  # noqa: E402


@pytest.mark.parametrize("center", [[0.3, -0.2, 0.9], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0],
                                    [0.0, 0.0, -2.0], [1e-3, 0.0, -1.0]])
def test_map_frame_is_orthonormal_and_north_up(center):
    c, east, north = map_frame(center)
    basis = np.stack([c, east, north])
    np.testing.assert_allclose(basis @ basis.T, np.eye(3), atol=1e-12)
    np.testing.assert_allclose(c, np.asarray(center) / np.linalg.norm(center), atol=1e-12)
    # Seen from outside the sphere at c, (east, north) is a right-handed pair.
    np.testing.assert_allclose(np.cross(east, north), c, atol=1e-12)
    if abs(c[2]) < 0.99:
        assert north[2] > 0


def test_map_frame_rejects_zero():
    with pytest.raises(ValueError, match="non-zero"):
        map_frame([0.0, 0.0, 0.0])


def test_azimuthal_equidistant_matches_normal_coordinates(rng):
    """Oracle: the manifold's log at the centre, written in the frame, and its distance."""
    m = Sphere(2)
    center = np.array([0.2, 0.5, -0.6])
    frame = map_frame(center)
    c = frame[0]
    y = rng.normal(size=(500, 3))
    y /= np.linalg.norm(y, axis=1, keepdims=True)
    y = y[y @ c > -0.999]  # away from the antipode, where log is defined
    xy = azimuthal_equidistant(y, frame)
    v = m.log(np.broadcast_to(c, y.shape), y)
    np.testing.assert_allclose(xy[:, 0], v @ frame[1], atol=1e-10)
    np.testing.assert_allclose(xy[:, 1], v @ frame[2], atol=1e-10)
    np.testing.assert_allclose(np.linalg.norm(xy, axis=1), m.dist(c, y), atol=1e-10)


def test_azimuthal_equidistant_known_points():
    frame = map_frame([1.0, 0.0, 0.0])  # centre on the equator at longitude 0
    pts = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [0.0, -1.0, 0.0],
                    [-1.0, 0.0, 0.0]])
    xy = azimuthal_equidistant(pts, frame)
    np.testing.assert_allclose(xy[:4], [[0, 0], [0, np.pi / 2], [np.pi / 2, 0],
                                        [-np.pi / 2, 0]], atol=1e-12)
    # The antipode lands on the rim of radius pi (its direction is arbitrary).
    assert np.isclose(np.linalg.norm(xy[4]), np.pi)


def test_sphere_regression_map_figure(sphere_case):
    data, true, private = sphere_case
    fig = sphere_regression_map_figure(data.y, true, private, generating_curve=true,
                                       data_x=data.x, curve_x=T)
    check_common(fig)
    check_axis_titles(fig)
    assert not any(t.type in ("scatter3d", "surface") for t in fig.data)
    assert fig.layout.yaxis.scaleanchor == "x" and fig.layout.yaxis.scaleratio == 1
    # graticule, rim, data, non-private, data-generating, three private
    assert len(fig.data) == 8
    names = legend_names(fig)
    assert "Non-private geodesic" in names and any(n.startswith("Data") for n in names)
    # The view holds the data and the non-private geodesic.
    data_trace = next(t for t in fig.data if t.name.startswith("Data"))
    for trace in (data_trace, next(t for t in fig.data if t.name == "Non-private geodesic")):
        x, y = np.asarray(trace.x, float), np.asarray(trace.y, float)
        (x0, x1), (y0, y1) = fig.layout.xaxis.range, fig.layout.yaxis.range
        assert x0 <= np.nanmin(x) <= np.nanmax(x) <= x1
        assert y0 <= np.nanmin(y) <= np.nanmax(y) <= y1
    assert "Map centred at" in fig.layout.title.subtitle.text


def test_map_curve_crossing_the_rim_is_cut():
    """A great circle through the centre passes the antipode: drawn in two pieces, not with
    a chord across the disc."""
    frame = map_frame([0.0, 0.0, 1.0])
    s = np.linspace(0.0, 2 * np.pi, 400)
    circle = np.stack([np.sin(s), np.zeros_like(s), np.cos(s)], axis=-1)
    fig = sphere_regression_map_figure(None, circle[:50], [circle], center=frame[0])
    trace = fig.data[-1]
    x, y = np.asarray(trace.x, float), np.asarray(trace.y, float)
    assert np.isnan(x).sum() >= 1
    seg = np.hypot(np.diff(x), np.diff(y))
    assert np.nanmax(seg) < 0.2


def test_regression_figures_sphere_views(sphere_case):
    data, _, _ = sphere_case
    m = Sphere(2)
    args = (m, data.x, data.y, data.footpoint, data.shooting_vector, (0.0, 1.0))
    (_, globe), = regression_figures(*args)
    (_, flat), = regression_figures(*args, sphere_view="map")
    assert any(t.type == "scatter3d" for t in globe.data)
    assert all(t.type == "scatter" for t in flat.data)
    with pytest.raises(ValueError, match="sphere_view"):
        regression_figures(*args, sphere_view="cube")


def test_map_guide_lines_are_rounded_and_the_figure_stays_small(sphere_case):
    """The graticule and the rim are guides: rounded to 1e-4 rad (below a pixel) they stay
    within that of the exact projection, and the figure sent on every rerun stays small (it was
    about 340 kB with full floats)."""
    from dpcore.visualization.sphere import _map_graticule

    data, true, private = sphere_case
    fig = sphere_regression_map_figure(data.y, true, private, generating_curve=true,
                                       data_x=data.x, curve_x=T)
    grat = next(t for t in fig.data if t.name == "Graticule (30°)")
    exact = _map_graticule(map_frame(np.mean(np.concatenate([true, data.y]), axis=0)))
    x = np.asarray(grat.x, float)
    assert np.array_equal(np.isnan(x), np.isnan(exact[:, 0]))
    assert np.nanmax(np.abs(x - exact[:, 0])) <= 5e-5 + 1e-12
    assert np.nanmax(np.abs(np.asarray(grat.y, float) - exact[:, 1])) <= 5e-5 + 1e-12
    rim = next(t for t in fig.data if t.name == "90° from the centre")
    assert np.allclose(np.hypot(np.asarray(rim.x, float), np.asarray(rim.y, float)), np.pi / 2,
                       atol=1e-4)
    assert len(fig.to_json()) < 150_000
