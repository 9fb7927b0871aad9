"""Generic charts (:mod:`dpcore.visualization.charts`)."""

import numpy as np
import plotly.graph_objects as go
import pytest

from dpcore.visualization.charts import (
    band_figure,
    curves_figure,
    ecdf_figure,
    heatmap_figure,
    histogram_figure,
    mean_and_se,
)

from .helpers import check_axis_titles, check_common, traces_of


def test_mean_and_se_matches_numpy(rng):
    x = np.repeat([0.1, 0.5, 2.0], [4, 1, 6])
    values = rng.standard_normal(x.size)
    keys, mean, se = mean_and_se(x, values)
    np.testing.assert_array_equal(keys, [0.1, 0.5, 2.0])
    for k, mu, s in zip(keys, mean, se, strict=True):
        group = values[x == k]
        assert np.isclose(mu, group.mean())
        expected = group.std(ddof=1) / np.sqrt(group.size) if group.size > 1 else 0.0
        assert np.isclose(s, expected)


def test_band_figure():
    x = np.array([0.1, 0.5, 1.0])
    series = {"n = 20": (x, np.array([3.0, 2.0, 1.0]), np.array([0.1, 0.2, 0.3])),
              "n = 50": (x, np.array([2.0, 1.0, 0.5]), np.array([0.1, 0.1, 0.1]))}
    fig = band_figure(series, reference={"n = 20": 0.2, "n = 50": 0.1}, log_x=True)
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
    single = band_figure(series["n = 20"], reference=0.3)
    assert len(single.data) == 3 and single.data[-1].name == "Non-private level"


def test_heatmap_marks_the_argmin_cell(rng):
    xv = np.array([0.1, 0.2, 0.5, 1.0])
    yv = np.array([0.1, 0.3, 1.0])
    z = rng.standard_normal((3, 4))
    z[0, 1] = np.nan
    i, j = np.unravel_index(np.nanargmin(z), z.shape)
    fig = heatmap_figure(z, xv, yv, log_axes=True, total=0.6)
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
    fig = heatmap_figure(z, [1, 2, 3], [1, 2], mark="max")
    i, j = np.unravel_index(np.argmax(z), z.shape)
    star = fig.data[1]
    assert (star.x[0], star.y[0]) == (j + 1, i + 1)
    fig = heatmap_figure(z, [1, 2, 3], [1, 2], best=(1, 0))
    assert (fig.data[1].x[0], fig.data[1].y[0]) == (1, 2)
    assert len(heatmap_figure(z, [1, 2, 3], [1, 2], mark=None).data) == 1
    with pytest.raises(ValueError):
        heatmap_figure(z, [1, 2], [1, 2])
    with pytest.raises(ValueError):
        heatmap_figure(z, [1, 2, 3], [1, 2], mark="median")


def test_histogram_figure(rng):
    ratios = {"sphere": 1 + rng.gamma(2.0, 0.5, 200), "SPD": 1 + rng.gamma(2.0, 1.0, 100)}
    fig = histogram_figure(ratios)
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
    single = histogram_figure(rng.normal(size=50), reference=None)
    assert len(single.data) == 1 and not single.layout.shapes


def test_curves_figure():
    s = np.geomspace(0.2, 5, 10)
    fig = curves_figure(
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
    square = curves_figure({"G": (a, 1 - a)}, square=True, x_range=(0, 1), y_range=(0, 1))
    assert square.layout.yaxis.scaleanchor == "x"
    assert tuple(square.layout.xaxis.range) == (0, 1)
    with pytest.raises(TypeError):
        curves_figure((a, a))
    with pytest.raises(ValueError):
        curves_figure({"bad": (a, a[:-1])})


def test_long_log_axis_uses_powers_of_ten():
    e = np.linspace(0.1, 5, 20)
    fig = curves_figure({"d": (e, 10.0 ** (-2 * e))}, log_y=True)
    assert fig.layout.yaxis.dtick == 1 and fig.layout.yaxis.exponentformat == "power"
    short = curves_figure({"d": (e, e)}, log_y=True)
    assert list(short.layout.yaxis.ticktext) == ["0.1", "0.2", "0.5", "1", "2", "5"]


def test_ecdf_figure(rng):
    a, b = rng.exponential(1.0, 200), rng.exponential(2.0, 50)
    fig = ecdf_figure({"fast": a, "slow": b}, x_title="error", title="Errors")
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
        ecdf_figure({"empty": [np.nan]})
