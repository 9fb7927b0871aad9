"""Figures of the reproduction studies (:mod:`dpcore.visualization.studies`)."""

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dpcore.visualization import colors
from dpcore.visualization.studies import sensitivity_ratios_figure, wine_fits_figure

from .helpers import PLOTLY_WHITE, traces_of


def test_sensitivity_ratios_figure(rng):
    rows = [{"n": n, "pair": k, "parameter": p, "ratio": 1.0 + rng.gamma(2.0)}
            for n in (20, 100) for k in range(4) for p in ("footpoint", "shooting_vector")]
    fig = sensitivity_ratios_figure(pd.DataFrame(rows), "Ratios")
    boxes = traces_of(fig, go.Box)
    assert len(boxes) == 4  # two sizes in each of the two panels
    assert [b.name for b in boxes] == ["n = 20", "n = 100"] * 2
    assert [b.showlegend for b in boxes] == [True, True, False, False]
    assert all(len(b.y) == 4 for b in boxes)
    assert [a.text for a in fig.layout.annotations[:2]] == ["r_p = Δ_p^thy / Δ_p^exp",
                                                           "r_v = Δ_v^thy / Δ_v^exp"]
    assert [s.y0 for s in fig.layout.shapes] == [1.0, 1.0]  # one line per panel
    assert fig.layout.yaxis.type == "log" and fig.layout.title.text == "Ratios"
    assert fig.layout.template == PLOTLY_WHITE
    fig.to_json()


def test_wine_fits_figure(rng):
    responses = ["a", "b", "c", "d"]
    x = rng.integers(3, 9, 30).astype(float)
    y = rng.standard_normal((30, 4))
    rows = [{"method": m, "replicate": r, "response": resp, "intercept": 0.1 * r,
             "slope": 0.01 * j, "mse": 1.0 + r}
            for m, reps in (("ols", 1), ("dpgr_strict", 3)) for r in range(reps)
            for j, resp in enumerate(responses)]
    fig = wine_fits_figure(pd.DataFrame(rows), x, y, responses)
    scatters = traces_of(fig, go.Scatter)
    assert len(scatters) == 4 * (1 + 2)  # per panel: data, OLS, strict DPGR
    assert [a.text for a in fig.layout.annotations] == responses
    strict = [t for t in scatters if t.legendgroup == "dpgr_strict"]
    assert {t.line.color for t in strict} == {colors.VERMILLION}
    # the median-MSE replicate (1) is drawn: intercept 0.1 at the smallest covariate
    assert np.isclose(strict[0].y[0], 0.1)
    np.testing.assert_allclose(strict[0].x, [x.min(), x.max()])
    assert fig.layout.height == 720
    fig.to_json()
