"""Tests of the pure plotly figure builders and geometry helpers in ``ui``."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest

from dpcore.data import make_mean_data, make_regression_data
from dpcore.data.synthetic import kendall_template
from dpcore.manifolds import SPD, Euclidean, KendallShape, Sphere
from ui import colors
from ui import figures as uf

ROOT = Path(__file__).resolve().parents[2]
PLOTLY_WHITE = go.Figure(layout_template="plotly_white").layout.template


# ------------------------------------------------------------------------------ helpers
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


@pytest.fixture
def sphere_case(rng):
    m = Sphere(2)
    data = make_regression_data(m, 30, rng=rng)
    true = uf.geodesic_curve(m, data.footpoint, data.shooting_vector, T)
    private = [uf.geodesic_curve(m, p, v, T)
               for p, v in fake_draws(m, data.footpoint, data.shooting_vector, 3, rng)]
    return data, true, private


@pytest.fixture
def spd_case(rng):
    m = SPD(2)
    data = make_regression_data(m, 20, rng=rng)
    draws = fake_draws(m, data.footpoint, data.shooting_vector, 2, rng)
    return m, data, draws


# ------------------------------------------------------------------------------ hygiene
def test_no_streamlit_import():
    for name in ("figures.py", "colors.py", "__init__.py"):
        assert "streamlit" not in (ROOT / "ui" / name).read_text()
    code = "import sys, ui, ui.figures; assert 'streamlit' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


def test_public_names_exported():
    import ui

    for name in uf.__all__:
        assert getattr(ui, name) is getattr(uf, name)


# ------------------------------------------------------------------------------ geometry
def test_geodesic_curve_on_sphere(sphere_case):
    data, true, _ = sphere_case
    assert true.shape == (T.size, 3)
    np.testing.assert_allclose(np.linalg.norm(true, axis=-1), 1.0, atol=1e-12)
    np.testing.assert_allclose(true[0], data.footpoint, atol=1e-12)
    np.testing.assert_allclose(true[-1], Sphere(2).exp(data.footpoint, data.shooting_vector),
                               atol=1e-12)


def test_geodesic_curve_on_spd_is_positive_definite(spd_case):
    m, data, _ = spd_case
    curve = uf.geodesic_curve(m, data.footpoint, data.shooting_vector, np.linspace(-1, 2, 40))
    assert curve.shape == (40, 2, 2)
    np.testing.assert_allclose(curve, np.swapaxes(curve, -1, -2), atol=1e-12)
    assert np.all(np.linalg.eigvalsh(curve) > 0)


def test_geodesic_curve_on_kendall_stays_in_preshape_space(rng):
    m = KendallShape(6)
    data = make_regression_data(m, 10, rng=rng)
    curve = uf.geodesic_curve(m, data.footpoint, data.shooting_vector, T)
    assert np.all(m.belongs(curve))


def test_geodesic_curve_validates_shapes():
    with pytest.raises(ValueError, match="t_grid"):
        uf.geodesic_curve(Sphere(2), [0, 0, 1], [1, 0, 0], np.zeros((2, 2)))
    with pytest.raises(ValueError, match="`p`"):
        uf.geodesic_curve(Sphere(2), [0, 1], [1, 0, 0], T)


def test_sphere_mesh_lies_on_unit_sphere():
    X, Y, Z = uf.sphere_mesh(10, 20)
    assert X.shape == Y.shape == Z.shape == (10, 20)
    np.testing.assert_allclose(X**2 + Y**2 + Z**2, 1.0, atol=1e-12)


@pytest.mark.parametrize("center", [(0.0, 0.0), (2.5, -1.0)])
def test_ellipse_xy_is_the_unit_level_set(rng, center):
    S = SPD(2).random_point(rng=rng)
    pts = uf.ellipse_xy(S, center, n=77)
    assert pts.shape == (77, 2)
    d = pts - np.asarray(center)
    q = np.einsum("ni,ij,nj->n", d, np.linalg.inv(S), d)
    np.testing.assert_allclose(q, 1.0, atol=1e-10)
    np.testing.assert_allclose(pts[0], pts[-1], atol=1e-12)  # closed outline


def test_ellipse_xy_axes_match_eigenvalues():
    pts = uf.ellipse_xy(np.diag([4.0, 1.0]), n=401)
    assert np.isclose(np.abs(pts[:, 0]).max(), 2.0, atol=1e-3)
    assert np.isclose(np.abs(pts[:, 1]).max(), 1.0, atol=1e-3)


@pytest.mark.parametrize("bad", [[[1.0, 2.0], [2.0, 1.0]], [[1.0, 0.5], [0.0, 1.0]],
                                 np.eye(3)])
def test_ellipse_xy_rejects_non_spd(bad):
    with pytest.raises(ValueError):
        uf.ellipse_xy(bad)


def test_spd_abc():
    mats = np.array([[[1.0, 0.3], [0.3, 2.0]], [[4.0, -1.0], [-1.0, 0.5]]])
    np.testing.assert_allclose(uf.spd_abc(mats), [[1.0, 0.3, 2.0], [4.0, -1.0, 0.5]])


def test_mean_and_se_matches_numpy(rng):
    x = np.repeat([0.1, 0.5, 2.0], [4, 1, 6])
    values = rng.standard_normal(x.size)
    keys, mean, se = uf.mean_and_se(x, values)
    np.testing.assert_array_equal(keys, [0.1, 0.5, 2.0])
    for k, mu, s in zip(keys, mean, se, strict=True):
        group = values[x == k]
        assert np.isclose(mu, group.mean())
        expected = group.std(ddof=1) / np.sqrt(group.size) if group.size > 1 else 0.0
        assert np.isclose(s, expected)


# ------------------------------------------------------------------------------ colours
def test_palette_is_okabe_ito_and_roles_are_distinct():
    assert colors.OKABE_ITO[0] == "#000000" and len(set(colors.OKABE_ITO)) == 8
    assert len({colors.DATA, colors.NONPRIVATE, colors.TRUTH, colors.PRIVATE[0]}) == 4
    for n in (1, 3, 5, 6, 20):
        cols = colors.private_colors(n)
        assert len(cols) == n == len(set(cols))
        assert colors.NONPRIVATE not in cols and colors.DATA not in cols
    assert colors.private_colors(0) == []
    assert colors.with_alpha("#D55E00", 0.2) == "rgba(213, 94, 0, 0.2)"
    assert colors.with_alpha("rgb(1, 2, 3)", 0.5) == "rgba(1, 2, 3, 0.5)"


# ------------------------------------------------------------------------------ sphere
def test_sphere_regression_figure(sphere_case):
    data, true, private = sphere_case
    fig = uf.sphere_regression_figure(data.y, true, private, generating_curve=true,
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
    fig = uf.sphere_regression_figure(data.y, true, np.stack(private * 3))
    private_traces = [t for t in fig.data if t.legendgroup == "private"]
    assert len(private_traces) == 9
    assert sum(t.showlegend is not False for t in private_traces) == 1
    assert len({t.line.color for t in private_traces}) == 9


def test_sphere_regression_figure_accepts_no_data_and_single_curve(sphere_case):
    _, true, private = sphere_case
    fig = uf.sphere_regression_figure(None, true, private[0])
    check_common(fig)
    assert len(traces_of(fig, go.Scatter3d)) == 3  # graticule, non-private, one private


def test_sphere_regression_figure_rejects_bad_shapes(sphere_case):
    data, true, _ = sphere_case
    with pytest.raises(ValueError):
        uf.sphere_regression_figure(data.y, true[:, :2])
    with pytest.raises(ValueError):
        uf.sphere_regression_figure(data.y, true, [np.zeros((5, 2))])


def test_sphere_points_figure(rng):
    m = Sphere(2)
    ball = make_mean_data(m, 40, radius=np.pi / 8, rng=rng)
    north = np.array([0.0, 0.0, 1.0])
    clouds = {"Laplace": ball[:10], "KNG": ball[10:25]}
    fig = uf.sphere_points_figure(clouds, data=ball, true_point=north, nonprivate_point=north)
    check_common(fig)
    check_scene_titles(fig)
    assert len(traces_of(fig, go.Surface)) == 1
    # graticule, data, two clouds, true mean, non-private mean
    assert len(traces_of(fig, go.Scatter3d)) == 6
    assert fig.layout.scene.aspectmode == "cube"
    names = legend_names(fig)
    assert "True mean" in names and "Laplace (10)" in names
    single = uf.sphere_points_figure(ball)
    assert len(traces_of(single, go.Scatter3d)) == 2


# ------------------------------------------------------------------------------ SPD(2)
def test_spd_ellipses_figure(spd_case):
    m, data, draws = spd_case
    xs = np.linspace(0.0, 1.0, 5)
    true = m.geodesic(data.footpoint, data.shooting_vector, xs)
    private = [m.geodesic(p, v, xs) for p, v in draws]
    fig = uf.spd_ellipses_figure(xs, true, private, generating_mats=data.true_points(xs))
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
        uf.spd_ellipses_figure(np.array([0.5, 0.5]), true)
    with pytest.raises(ValueError):
        uf.spd_ellipses_figure(xs, true[:1])
    with pytest.raises(ValueError):
        uf.spd_ellipses_figure(xs, true, [true[:1]])


def test_spd_cone_figure(spd_case):
    m, data, draws = spd_case
    true = m.geodesic(data.footpoint, data.shooting_vector, T)
    private = np.stack([m.geodesic(p, v, T) for p, v in draws])
    fig = uf.spd_cone_figure(data.y, true, private, generating_curve=data.true_points(T))
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
        uf.spd_cone_figure()


# ------------------------------------------------------------------------------ Kendall
def test_kendall_shapes_figure(rng):
    m = KendallShape(6)
    data = make_regression_data(m, 20, rng=rng)
    ref = kendall_template(6)
    xs = np.array([0.0, 0.5, 1.0])
    true = m.to_landmarks(m.geodesic(data.footpoint, data.shooting_vector, xs), reference=ref)
    private = [m.to_landmarks(m.geodesic(p, v, xs), reference=ref)
               for p, v in fake_draws(m, data.footpoint, data.shooting_vector, 2, rng, 0.05)]
    fig = uf.kendall_shapes_figure(xs, true, private)
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
    open_fig = uf.kendall_shapes_figure(xs, true, closed=False, n_cols=2)
    assert len(open_fig.data[0].x) == 6
    assert open_fig.layout.height > fig.layout.height  # two rows


# ------------------------------------------------------------------------------ R^d
def test_euclidean_regression_figure(rng):
    m = Euclidean(3)
    data = make_regression_data(m, 25, rng=rng)
    grid = np.linspace(0.0, 1.0, 20)
    true = m.geodesic(data.footpoint, data.shooting_vector, grid)
    private = np.stack([m.geodesic(p, v, grid)
                        for p, v in fake_draws(m, data.footpoint, data.shooting_vector, 2, rng)])
    fig = uf.euclidean_regression_figure(data.x, data.y, true, private, x_grid=grid,
                                         generating_lines=data.true_points(grid))
    check_common(fig)
    check_axis_titles(fig)
    assert len(traces_of(fig, go.Scatter)) == 3 * (1 + 1 + 1 + 2)
    assert [a.text for a in fig.layout.annotations] == ["y1", "y2", "y3"]
    assert [fig.layout[f"yaxis{'' if j == 0 else j + 1}"].title.text for j in range(3)] == [
        "y1", "y2", "y3"]
    names = legend_names(fig)
    assert len(names) == len(set(names)) == 5
    one = uf.euclidean_regression_figure(data.x, data.y[:, 0], true[:, 0])
    check_common(one)
    assert len(one.data) == 2
    np.testing.assert_allclose(one.data[1].x, np.linspace(data.x.min(), data.x.max(), 20))
    with pytest.raises(ValueError):
        uf.euclidean_regression_figure(data.x, data.y, true[:, :2])


# ------------------------------------------------------------------------------ charts
def test_band_figure():
    x = np.array([0.1, 0.5, 1.0])
    series = {"n = 20": (x, np.array([3.0, 2.0, 1.0]), np.array([0.1, 0.2, 0.3])),
              "n = 50": (x, np.array([2.0, 1.0, 0.5]), np.array([0.1, 0.1, 0.1]))}
    fig = uf.band_figure(series, reference={"n = 20": 0.2, "n = 50": 0.1}, log_x=True)
    check_common(fig)
    check_axis_titles(fig)
    bands = [t for t in fig.data if t.fill == "toself"]
    lines = [t for t in fig.data if t.fill != "toself" and t.line.dash != "dash"]
    refs = [t for t in fig.data if t.line.dash == "dash" and t.x[0] is not None]
    assert len(bands) == len(lines) == len(refs) == 2
    # the dashed lines join their series' legend group; one entry explains them
    assert [r.legendgroup for r in refs] == ["n = 20", "n = 50"]
    assert not any(r.showlegend for r in refs)
    assert [t.name for t in fig.data if t.x[0] is None] == ["Non-private level (dashed)"]
    np.testing.assert_allclose(bands[0].y, [3.2, 2.4, 1.6, 0.4, 1.6, 2.8])  # mean ± 2 SE
    assert refs[0].line.color == lines[0].line.color
    assert list(refs[0].y) == [0.2, 0.2] and list(refs[0].x) == [0.1, 1.0]
    assert fig.layout.xaxis.type == "log"
    single = uf.band_figure(series["n = 20"], reference=0.3)
    assert len(single.data) == 3 and single.data[-1].name == "Non-private level"


def test_heatmap_marks_the_argmin_cell(rng):
    xv = np.array([0.1, 0.2, 0.5, 1.0])
    yv = np.array([0.1, 0.3, 1.0])
    z = rng.standard_normal((3, 4))
    z[0, 1] = np.nan
    i, j = np.unravel_index(np.nanargmin(z), z.shape)
    fig = uf.heatmap_figure(z, xv, yv, log_axes=True, total=0.6)
    check_common(fig)
    check_axis_titles(fig)
    assert len(traces_of(fig, go.Heatmap)) == 1
    star = next(t for t in fig.data if isinstance(t, go.Scatter) and t.mode == "markers")
    assert (star.x[0], star.y[0]) == (xv[j], yv[i])
    assert star.name.startswith("Best cell")
    total = [t for t in fig.data if t.legendgroup == "total"]
    assert len(total) == 2
    np.testing.assert_allclose(np.asarray(total[0].x) + np.asarray(total[0].y), 0.6)
    assert fig.layout.xaxis.type == "log" == fig.layout.yaxis.type
    # cells meet at geometric midpoints and each holds its grid value
    edges = np.asarray(fig.data[0].x)
    np.testing.assert_allclose(edges[1:-1], np.sqrt(xv[1:] * xv[:-1]))
    assert np.all((edges[:-1] < xv) & (xv < edges[1:]))


def test_heatmap_max_and_explicit_best(rng):
    z = rng.standard_normal((2, 3))
    fig = uf.heatmap_figure(z, [1, 2, 3], [1, 2], mark="max")
    i, j = np.unravel_index(np.argmax(z), z.shape)
    star = fig.data[1]
    assert (star.x[0], star.y[0]) == (j + 1, i + 1)
    fig = uf.heatmap_figure(z, [1, 2, 3], [1, 2], best=(1, 0))
    assert (fig.data[1].x[0], fig.data[1].y[0]) == (1, 2)
    assert len(uf.heatmap_figure(z, [1, 2, 3], [1, 2], mark=None).data) == 1
    with pytest.raises(ValueError):
        uf.heatmap_figure(z, [1, 2], [1, 2])
    with pytest.raises(ValueError):
        uf.heatmap_figure(z, [1, 2, 3], [1, 2], mark="median")


def test_histogram_figure(rng):
    ratios = {"sphere": 1 + rng.gamma(2.0, 0.5, 200), "SPD": 1 + rng.gamma(2.0, 1.0, 100)}
    fig = uf.histogram_figure(ratios)
    check_common(fig)
    check_axis_titles(fig)
    hists = traces_of(fig, go.Histogram)
    assert len(hists) == 2
    assert [s.x0 for s in fig.layout.shapes] == [1.0]
    assert fig.layout.shapes[0].line.dash == "dash"
    # a bin edge falls on the reference line
    start, size = hists[0].xbins.start, hists[0].xbins.size
    assert np.isclose(((1.0 - start) / size) % 1.0, 0.0, atol=1e-9) or np.isclose(
        ((1.0 - start) / size) % 1.0, 1.0, atol=1e-9)
    single = uf.histogram_figure(rng.normal(size=50), reference=None)
    assert len(single.data) == 1 and not single.layout.shapes


def test_curves_figure():
    s = np.geomspace(0.2, 5, 10)
    fig = uf.curves_figure(
        {"R": (s, 1 / s), "S1 Monte Carlo": (s, 0.9 / s, np.full(10, 0.05))},
        styles={"R": {"dash": "dash"}}, log_x=True, log_y=True, x_title="σ", y_title="µ",
        title="µ against σ",
    )
    check_common(fig)
    check_axis_titles(fig)
    assert len(fig.data) == 2
    assert fig.data[0].line.dash == "dash" and fig.data[0].error_y.array is None
    np.testing.assert_allclose(fig.data[1].error_y.array, 0.05)
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    a = np.linspace(0, 1, 11)
    square = uf.curves_figure({"G": (a, 1 - a)}, square=True, x_range=(0, 1), y_range=(0, 1))
    assert square.layout.yaxis.scaleanchor == "x"
    assert tuple(square.layout.xaxis.range) == (0, 1)
    with pytest.raises(TypeError):
        uf.curves_figure((a, a))
    with pytest.raises(ValueError):
        uf.curves_figure({"bad": (a, a[:-1])})


def test_long_log_axis_uses_powers_of_ten():
    e = np.linspace(0.1, 5, 20)
    fig = uf.curves_figure({"d": (e, 10.0 ** (-2 * e))}, log_y=True)
    assert fig.layout.yaxis.dtick == 1 and fig.layout.yaxis.exponentformat == "power"
    short = uf.curves_figure({"d": (e, e)}, log_y=True)
    assert list(short.layout.yaxis.ticktext) == ["0.1", "0.2", "0.5", "1", "2", "5"]


def test_ecdf_figure(rng):
    a, b = rng.exponential(1.0, 200), rng.exponential(2.0, 50)
    fig = uf.ecdf_figure({"fast": a, "slow": b}, x_title="error", title="Errors")
    check_common(fig)
    check_axis_titles(fig)
    steps = [t for t in fig.data if t.mode == "lines"]
    medians = [t for t in fig.data if t.mode == "markers"]
    assert [t.name for t in steps] == ["fast (n = 200)", "slow (n = 50)"]
    np.testing.assert_allclose(steps[0].x, np.sort(a))
    np.testing.assert_allclose(steps[0].y[[0, -1]], [1 / 200, 1.0])
    assert medians[1].x[0] == pytest.approx(np.median(b))
    assert medians[0].legendgroup == "fast" and not medians[0].showlegend
    with pytest.raises(ValueError, match="finite"):
        uf.ecdf_figure({"empty": [np.nan]})
