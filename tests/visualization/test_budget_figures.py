"""The budget split's figures in the data's units (dpcore.visualization.budget): bands over
replicates, each cell's source marked, flagged cells crossed and never best."""

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dpcore.experiments.budget_summary import cell_summary
from dpcore.visualization import budget as VB

from .helpers import check_axis_titles, check_common, legend_names


def sweep_rows(view, cells, sizes=(50, 100)):
    out = []
    for n in sizes:
        for scheme, ep, ev, source, flag in cells:
            for rep, mse in enumerate((0.004, 0.005, 0.006)):
                out.append({"view": view, "n": n, "eps_p": ep, "eps_v": ev,
                            "epsilon": ep + ev, "replicate": rep,
                            "mse": mse * (1 + ep) * 50 / n, "log_mse": 0.0,
                            "nonprivate_mse": 0.003, "scheme": scheme, "source": source,
                            "flag": flag})
    return pd.DataFrame(out)


UNEQUAL = [("sequential", 0.3, 2.7, "exact", ""), ("sequential", 1.5, 1.5, "law", ""),
           ("sequential", 2.7, 0.3, "law", "vector stage: not trusted"),
           ("joint", 1.5, 1.5, "law", "")]


def test_split_error_figure_draws_bands_sources_joint_and_the_fit():
    s = cell_summary(sweep_rows("unequal", UNEQUAL), scale=180 / np.pi)
    fig = VB.split_error_figure(s, unit="degrees", x="share", title="Error against the split",
                                x_title="footpoint share (%)", subtitle="band: range")
    check_common(fig)
    check_axis_titles(fig)
    assert fig.layout.yaxis.title.text == "RMS error (degrees)"
    long = VB.split_error_figure(s, unit="affine-invariant distance", x="share", log_y=True,
                                 title="t", x_title="x", subtitle="s")
    # a long unit goes to a second line, so the rotated title fits the half-width chart
    assert long.layout.yaxis.title.text == (
        "RMS error<br>(affine-invariant distance, log scale)")
    names = legend_names(fig)
    for n in (50, 100):
        assert f"n = {n}: split (sequential)" in names
        assert f"n = {n}: joint scheme (one ε, no split)" in names
    assert "non-private fit (dotted)" in names
    assert {"exact draws", "predicted from the asymptotic law",
            "flagged: not trusted (see the list)"} <= set(names)
    line = next(t for t in fig.data if t.name == "n = 50: split (sequential)")
    assert line.mode == "lines"  # the legend shows a line; the cells' markers are apart
    cells = [t for t in fig.data if t.legendgroup == "n50" and t.mode == "markers"]
    assert len(cells) == 1 and list(cells[0].marker.symbol) == [
        "circle", "diamond-open", "x-thin-open"]
    assert "not trusted" in cells[0].text[2] and "exact draws" in cells[0].text[0]
    # the band spans the replicates' range
    band = fig.data[0]
    assert band.fill == "toself"
    row = s[(s["n"] == 50) & (s["scheme"] == "sequential")].sort_values("share")
    np.testing.assert_allclose(band.y[:3], row["rms_hi"])
    np.testing.assert_allclose(band.y[3:], row["rms_lo"].to_numpy()[::-1])


def test_error_heatmap_figure_never_stars_a_flagged_cell():
    cells = [("sequential", ep, ev, "law", "flagged" if (ep, ev) == (0.5, 0.5) else "")
             for ep in (0.5, 1.0) for ev in (0.5, 1.0)]
    df = sweep_rows("grid", cells, sizes=(50,))
    df.loc[df["eps_p"] + df["eps_v"] == 1.0, "mse"] = 1e-5  # the flagged cell is the lowest
    s = cell_summary(df)
    fig, best = VB.error_heatmap_figure(s, 3.0, unit="degrees", n=50, replicates=3)
    check_common(fig)
    assert (best["eps_p"], best["eps_v"]) == (0.5, 1.0) and best["excluded"] == 1
    crosses = [t for t in fig.data if isinstance(t, go.Scatter) and t.name
               == "flagged: not trusted"]
    assert len(crosses) == 1 and list(crosses[0].y) == [0.5]
    _, none = VB.error_heatmap_figure(s, 1.2, unit="degrees", n=50, replicates=3)
    assert none is None  # only the flagged cell is affordable


def test_the_equal_view_marks_the_joint_cells_and_can_use_a_log_scale():
    cells = [("sequential", t / 2, t / 2, "exact" if t < 2 else "law", "")
             for t in (1.0, 3.0, 10.0)]
    cells += [("joint", t / 2, t / 2, "law", "flagged" if t < 2 else "") for t in (1.0, 3.0, 10.0)]
    s = cell_summary(sweep_rows("equal", cells))
    fig = VB.split_error_figure(s, unit="degrees", x="epsilon", log_x=True, log_y=True,
                                title="Error against the total", x_title="total ε")
    check_common(fig)
    assert fig.layout.yaxis.type == "log" and "log scale" in fig.layout.yaxis.title.text
    joint = [t for t in fig.data if t.legendgroup == "n50" and t.mode == "markers"
             and "joint" in t.hovertemplate]
    assert len(joint) == 1 and list(joint[0].marker.symbol)[0] == "x-thin-open"
