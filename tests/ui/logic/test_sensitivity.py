"""The sensitivity page's ratios are the report's study (dpcore.experiments.sensitivity_ratios)."""

import numpy as np
import pandas as pd
import pytest

from dpcore import visualization as V
from dpcore.experiments import sensitivity_ratios
from ui.logic import sensitivity as L
from ui.manifolds import make_manifold


def test_ratios_are_the_report_study_for_the_same_seed():
    page = L.regression_sensitivity_ratios("sphere", [12, 5], 3, seed=5)
    study = sensitivity_ratios(make_manifold("sphere"), sample_sizes=[5, 12], pairs=3, rng=5)
    pd.testing.assert_frame_equal(page, L.wide_ratios(study))
    assert len(page) == 6 and set(page["n"]) == {5, 12}
    assert np.all(page["ratio_p"] >= 1) and np.all(page["ratio_v"] >= 1)
    # the long and wide tables hold the same numbers
    foot = study[study["parameter"] == "footpoint"]
    np.testing.assert_array_equal(np.sort(page["ratio_p"]), np.sort(foot["ratio"]))


def test_negative_curvature_records_the_ball():
    page = L.regression_sensitivity_ratios("spd", [6], 2, seed=1)
    assert np.all(np.isfinite(page["tau_m"])) and np.all(page["ratio_v"] >= 1)


@pytest.mark.parametrize("key", list(L.REGRESSION_MANIFOLDS))
def test_ratios_are_at_least_one(key):
    frame = L.regression_sensitivity_ratios(key, [15], 4, seed=1)
    assert len(frame) == 4
    assert (frame["ratio_p"] >= 1).all() and (frame["ratio_v"] >= 1).all()
    assert frame["tau_m"].notna().all() == (key == "spd")
    fig = V.ratio_histogram(frame, "v", log_scale=True)
    assert fig.layout.title.text and fig.layout.xaxis.title.text
    assert fig.data[0].name == "n = 15 (4 pairs)"


def test_jacobi_growth_is_cos_one_cosh_and_sin_over_s():
    s = np.linspace(0.1, 2.0, 7)
    point_pos, vector_pos = V.jacobi_growth(s, 1.0)
    point_neg, vector_neg = V.jacobi_growth(s, -1.0)
    point_flat, vector_flat = V.jacobi_growth(s, 0.0)
    assert np.allclose(point_pos, np.abs(np.cos(s)))
    assert np.allclose(point_neg, np.cosh(s))
    assert np.allclose(vector_pos, np.sin(s) / s)
    assert np.allclose(vector_neg, np.sinh(s) / s)
    assert np.allclose(point_flat, 1.0) and np.allclose(vector_flat, 1.0)
    fig = V.jacobi_figure(0.5, 3.0, which="vector", mark=2.0)
    assert len(fig.data) == 3 and fig.layout.title.text
