"""Figures of SPD(2) matrices (:mod:`dpcore.visualization.spd`)."""

import numpy as np
import plotly.graph_objects as go
import pytest

from dpcore.manifolds import SPD
from dpcore.visualization.spd import ellipse_xy, spd_abc, spd_cone_figure, spd_ellipses_figure

from .helpers import T, check_axis_titles, check_common, check_scene_titles, traces_of


@pytest.mark.parametrize("center", [(0.0, 0.0), (2.5, -1.0)])
def test_ellipse_xy_is_the_unit_level_set(rng, center):
    S = SPD(2).random_point(rng=rng)
    pts = ellipse_xy(S, center, n=77)
    assert pts.shape == (77, 2)
    d = pts - np.asarray(center)
    q = np.einsum("ni,ij,nj->n", d, np.linalg.inv(S), d)
    np.testing.assert_allclose(q, 1.0, atol=1e-10)
    np.testing.assert_allclose(pts[0], pts[-1], atol=1e-12)  # closed outline


def test_ellipse_xy_axes_match_eigenvalues():
    pts = ellipse_xy(np.diag([4.0, 1.0]), n=401)
    assert np.isclose(np.abs(pts[:, 0]).max(), 2.0, atol=1e-3)
    assert np.isclose(np.abs(pts[:, 1]).max(), 1.0, atol=1e-3)


@pytest.mark.parametrize("bad", [[[1.0, 2.0], [2.0, 1.0]], [[1.0, 0.5], [0.0, 1.0]],
                                 np.eye(3)])
def test_ellipse_xy_rejects_non_spd(bad):
    with pytest.raises(ValueError):
        ellipse_xy(bad)


def test_spd_abc():
    mats = np.array([[[1.0, 0.3], [0.3, 2.0]], [[4.0, -1.0], [-1.0, 0.5]]])
    np.testing.assert_allclose(spd_abc(mats), [[1.0, 0.3, 2.0], [4.0, -1.0, 0.5]])


def test_spd_ellipses_figure(spd_case):
    m, data, draws = spd_case
    xs = np.linspace(0.0, 1.0, 5)
    true = m.geodesic(data.footpoint, data.shooting_vector, xs)
    private = [m.geodesic(p, v, xs) for p, v in draws]
    fig = spd_ellipses_figure(xs, true, private, generating_mats=data.true_points(xs))
    check_common(fig)
    check_axis_titles(fig)
    scatters = traces_of(fig, go.Scatter)
    assert len(scatters) == 1 + 1 + len(draws)
    for t in scatters:
        pieces = np.isnan(np.asarray(t.x, dtype=float)).sum() + 1
        assert pieces == xs.size  # one ellipse per covariate value in each trace
    assert fig.layout.yaxis.scaleanchor == "x" and fig.layout.yaxis.scaleratio == 1
    assert [float(v) for v in fig.layout.xaxis.ticktext] == pytest.approx(xs)
    # each drawn outline is the unit level set of its matrix around its centre
    t = scatters[0]
    x = np.asarray(t.x, dtype=float)
    y = np.asarray(t.y, dtype=float)
    first = slice(0, int(np.argmax(np.isnan(x))))
    d = np.stack([x[first] - fig.layout.xaxis.tickvals[0], y[first]], axis=-1)
    q = np.einsum("ni,ij,nj->n", d, np.linalg.inv(true[0]), d)
    np.testing.assert_allclose(q, 1.0, atol=1e-9)


def test_spd_ellipses_figure_validates(spd_case):
    m, data, _ = spd_case
    xs = np.array([0.0, 0.5])
    true = m.geodesic(data.footpoint, data.shooting_vector, xs)
    with pytest.raises(ValueError, match="distinct"):
        spd_ellipses_figure(np.array([0.5, 0.5]), true)
    with pytest.raises(ValueError):
        spd_ellipses_figure(xs, true[:1])
    with pytest.raises(ValueError):
        spd_ellipses_figure(xs, true, [true[:1]])


def test_spd_cone_figure(spd_case):
    m, data, draws = spd_case
    true = m.geodesic(data.footpoint, data.shooting_vector, T)
    private = np.stack([m.geodesic(p, v, T) for p, v in draws])
    fig = spd_cone_figure(data.y, true, private, generating_curve=data.true_points(T))
    check_common(fig)
    check_scene_titles(fig)
    surfaces = traces_of(fig, go.Surface)
    assert len(surfaces) == 1
    a, b, c = (np.asarray(getattr(surfaces[0], k)) for k in "xyz")
    np.testing.assert_allclose(a * c, b**2, atol=1e-12)  # the boundary ac = b^2
    assert np.all(a >= 0) and np.all(c >= 0)
    # wireframe, data, data-generating, non-private, two private
    assert len(traces_of(fig, go.Scatter3d)) == 6
    curve = next(t for t in fig.data if t.name == "Non-private geodesic")
    np.testing.assert_allclose(curve.x, true[:, 0, 0])
    np.testing.assert_allclose(curve.y, true[:, 0, 1])
    np.testing.assert_allclose(curve.z, true[:, 1, 1])
    # every point drawn is inside the cone: a > 0 and ac > b^2
    for t in traces_of(fig, go.Scatter3d)[1:]:
        x, y, z = (np.asarray(v, dtype=float) for v in (t.x, t.y, t.z))
        assert np.all(x > 0) and np.all(x * z > y**2)
    with pytest.raises(ValueError, match="Nothing to draw"):
        spd_cone_figure()


def test_spd_ellipses_figure_wraps_into_a_grid(spd_case):
    """per_row wraps the ellipses into rows, each labelled with its covariate value; the
    outlines stay to scale (unit level sets of their matrices)."""
    m, data, draws = spd_case
    xs = np.linspace(0.0, 1.0, 6)
    true = m.geodesic(data.footpoint, data.shooting_vector, xs)
    fig = spd_ellipses_figure(xs, true, [m.geodesic(p, v, xs) for p, v in draws], per_row=3,
                              x_title="x")
    check_common(fig)
    assert [a.text for a in fig.layout.annotations if a.text.startswith("x =")] == \
        [f"x = {v:.3g}" for v in xs]
    assert fig.layout.yaxis.scaleanchor == "x" and fig.layout.yaxis.scaleratio == 1
    t = traces_of(fig, go.Scatter)[0]
    x = np.asarray(t.x, dtype=float)
    y = np.asarray(t.y, dtype=float)
    pieces = np.split(np.stack([x, y], axis=-1), np.flatnonzero(np.isnan(x)))
    pieces = [p[~np.isnan(p[:, 0])] for p in pieces]
    assert len(pieces) == 6
    centres = np.array([p.mean(axis=0) for p in pieces])
    assert np.unique(np.round(centres[:, 1], 1)).size == 2  # two rows of three
    for S, piece, c in zip(true, pieces, centres, strict=True):
        # The centre is the midpoint of the outline's extremes (an ellipse is symmetric).
        c = 0.5 * (piece.min(axis=0) + piece.max(axis=0))
        d = piece - c
        q = np.einsum("ni,ij,nj->n", d, np.linalg.inv(S), d)
        np.testing.assert_allclose(q, 1.0, atol=1e-2)
