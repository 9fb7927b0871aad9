"""The sensitivity page's ratios are the report's study (dpcore.experiments.sensitivity_ratios)."""

import numpy as np
import pandas as pd

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
