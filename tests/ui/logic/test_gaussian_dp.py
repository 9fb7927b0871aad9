"""The Gaussian DP page's µ-vs-σ table is the library study's (dpcore.experiments.gdp_mu_curve)."""

import numpy as np

from dpcore.experiments import gdp_mu_curve
from ui.logic import gaussian_dp as L


def test_mu_sigma_table_is_the_report_study_for_the_same_seed():
    sigmas, mc_sigmas = [0.25, 0.5, 1.0, 2.0], [0.5, 1.5]
    table = L.mu_sigma_table(0.8, sigmas, mc_sigmas=mc_sigmas, mc_samples=200, mc_repeats=4,
                             seed=11)
    exact = gdp_mu_curve(sigmas, sensitivity=0.8, monte_carlo=False)
    np.testing.assert_array_equal(table["mu_circle"],
                                  exact.loc[exact["space"] == "S1", "mu"].to_numpy())
    np.testing.assert_array_equal(table["mu_line"],
                                  exact.loc[exact["space"] == "R", "mu"].to_numpy())
    study = gdp_mu_curve(mc_sigmas, sensitivity=0.8, rng=11, replicates=1, estimators=("mis",),
                         n_samples=200, n_eps=300, repeats=4, spaces=("S1",))
    mc = study[study["method"] == "monte_carlo_mis"]
    np.testing.assert_array_equal(table["mc_sigma"], mc["sigma"].to_numpy())
    np.testing.assert_array_equal(table["mu_mc"], mc["mu"].to_numpy())
    np.testing.assert_array_equal(table["mu_mc_se"], mc["standard_error"].to_numpy())
    # another seed gives other Monte Carlo estimates (the seed is used, not ignored)
    other = L.mu_sigma_table(0.8, sigmas, mc_sigmas=mc_sigmas, mc_samples=200, mc_repeats=4,
                             seed=12)
    assert not np.array_equal(other["mu_mc"], table["mu_mc"])
