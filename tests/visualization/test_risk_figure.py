"""The disclosure-risk figure (dpcore.visualization.risk): its traces hold the bounds of
dpcore.privacy.risk, recomputed here from their closed forms."""

import math

import numpy as np
import plotly.graph_objects as go
import pytest

import dpcore.visualization as vis
from dpcore.privacy import average_posterior
from dpcore.visualization.risk import disclosure_risk_figure, risk_grid

from .helpers import check_axis_titles, check_common, legend_names


def test_pure_dp_figure_shows_the_worst_case_belief_per_prior():
    fig = disclosure_risk_figure(2.0, priors=(0.01, 0.1, 0.5))
    check_common(fig)
    check_axis_titles(fig)
    assert vis.disclosure_risk_figure is disclosure_risk_figure
    assert legend_names(fig) == ["prior 1%", "prior 10%", "prior 50%",
                                 "before the release (the prior)", "this release (ε = 2)"]
    assert "largest belief" in fig.layout.yaxis.title.text
    assert fig.layout.xaxis.type == "log" and "ε" in fig.layout.xaxis.title.text
    for trace, p in zip(fig.data[:3], (0.01, 0.1, 0.5), strict=True):
        x, y = np.asarray(trace.x), np.asarray(trace.y)
        np.testing.assert_allclose(y, p * np.exp(x) / (p * np.exp(x) + 1 - p), rtol=1e-12)
        assert x.min() <= 0.01 and x.max() >= 10
    # The "before the release" levels are the priors; the stars sit on the curves at ε = 2.
    levels = [v for v in fig.data[3].y if v is not None]
    assert sorted(set(levels)) == [0.01, 0.1, 0.5]
    star = fig.data[4]
    assert list(star.x) == [2.0] * 3
    np.testing.assert_allclose(star.y, [p * math.e ** 2 / (p * math.e ** 2 + 1 - p)
                                        for p in (0.01, 0.1, 0.5)], rtol=1e-12)
    colors = {t.line.color for t in fig.data[:3]}
    assert len(colors) == 3


def test_gdp_figure_shows_the_average_belief_and_moves_with_mu():
    a = disclosure_risk_figure(0.5, scale="mu", priors=(0.1,), per_person=True)
    b = disclosure_risk_figure(2.0, scale="mu", priors=(0.1,), per_person=True)
    check_common(a)
    assert "average belief" in a.layout.yaxis.title.text
    assert "per person" in a.layout.xaxis.title.text and "µ" in a.layout.xaxis.title.text
    assert a.data[-1].y[0] == pytest.approx(average_posterior(0.1, mu=0.5))
    assert b.data[-1].y[0] == pytest.approx(average_posterior(0.1, mu=2.0))
    assert b.data[-1].y[0] > a.data[-1].y[0] > 0.1
    assert a.data[-1].name == "this release (µ = 0.5)"


def test_delta_switches_to_the_average_and_a_large_budget_widens_the_axis():
    fig = disclosure_risk_figure(40.0, delta=1e-5, priors=(0.5,))
    assert "average belief" in fig.layout.yaxis.title.text
    assert max(fig.data[0].x) == pytest.approx(120.0) and 40.0 in list(fig.data[0].x)
    assert risk_grid(0.001)[0] <= 0.001 / 3 + 1e-15


@pytest.mark.parametrize("bad", [{"current": 0.0}, {"current": math.inf},
                                 {"current": 1.0, "scale": "delta"},
                                 {"current": 1.0, "priors": ()}])
def test_invalid_inputs_are_refused(bad):
    current = bad.pop("current")
    with pytest.raises(ValueError):
        disclosure_risk_figure(current, **bad)


def test_traces_are_plain_scatter_lines():
    fig = disclosure_risk_figure(1.0)
    assert all(isinstance(t, go.Scatter) for t in fig.data)
    assert fig.data[3].line.dash == "dot"
