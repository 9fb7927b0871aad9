"""The Gaussian DP page's µ-vs-σ table is the library study's (dpcore.experiments.gdp_mu_curve)."""

import numpy as np
import pytest

from dpcore import visualization as V
from dpcore.experiments import gdp_mu_curve
from dpcore.privacy import tradeoff_gdp
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


def test_mu_sigma_table_matches_closed_forms():
    table = L.mu_sigma_table(1.0, [0.25, 1.0, 3.0], mc_sigmas=[1.0], mc_samples=300,
                             mc_repeats=5)
    assert np.allclose(table["mu_line"], [4.0, 1.0, 1 / 3])
    assert table["mu_circle"][0] == pytest.approx(4.0, rel=0.01)  # locally Euclidean
    assert table["mu_circle"][2] < table["mu_line"][2]
    assert abs(table["mu_mc"][0] - table["mu_circle"][1]) < 0.1
    fig = V.mu_sigma_figure(table, current=(1.0, table["mu_circle"][1]))
    assert fig.layout.title.text and fig.layout.yaxis.title.text


def test_gaussian_beats_laplace_at_equal_mu():
    frame = L.gaussian_laplace_utility([0.1, 0.3], replicates=300, mc_samples=300,
                                       mc_repeats=5)
    means = frame.groupby(["sigma", "mechanism"])["distance"].mean().unstack()
    assert (means["Riemannian Gaussian"] < means["Riemannian Laplace"]).all()
    assert V.gaussian_utility_figure(frame).layout.title.text


def test_tradeoff_and_profile_figures():
    fig = V.tradeoff_figure({"µ = 1": 1.0})
    curve = fig.data[1]
    assert np.allclose(curve.y, tradeoff_gdp(np.asarray(curve.x), 1.0))
    assert fig.layout.xaxis.title.text and fig.layout.yaxis.title.text
    fig = V.privacy_profile_figure(1.0, sigma=1.0, sensitivity=1.0)
    assert len(fig.data) == 2 and fig.layout.showlegend




@pytest.mark.parametrize(("n", "delta"), [(10, 1.0), (40, 0.4), (500, 0.01), (10, 50.0)])
def test_release_radius_gives_the_top_sensitivity(n, delta):
    """The release's data ball makes the mean's proven sensitivity (paper 001 Thm 2) equal
    the Δ of the top controls (never above it)."""
    from dpcore.manifolds import Sphere
    from dpcore.sensitivity import frechet_mean_sensitivity, frechet_radius_limit

    m = Sphere(2)
    r = L.release_radius(n, delta)
    assert 0 < r < frechet_radius_limit(1.0, m.injectivity_radius)
    got = frechet_mean_sensitivity(n, r, 1.0, m.injectivity_radius)
    assert got <= delta
    assert got == pytest.approx(delta, rel=1e-9)


def test_equal_mu_reading_states_the_delta_at_the_matched_epsilon():
    from dpcore.privacy import delta_mu, mu_to_eps

    text = L.equal_mu_reading(1.0)
    eps = mu_to_eps(1.0)
    assert f"ε = {eps:.3g}" in text and f"δ = {delta_mu(eps, 1.0):.2g}" in text
    assert "not ε-DP" in text
    assert delta_mu(eps, 1.0) > 0.05  # the δ really is not negligible at the matched ε


def test_predicted_release_error_is_the_library_law_in_degrees():
    from dpcore.manifolds import Sphere
    from dpcore.release.accuracy import predict_gaussian_error

    pred = L.predicted_release_error(L.release_request(10, 0.3, 1.0))
    lib = predict_gaussian_error(Sphere(2), 0.3)
    assert pred["median_deg"] == pytest.approx(np.degrees(lib["median"]), rel=1e-12)
    assert pred["q95_deg"] == pytest.approx(np.degrees(lib["q95"]), rel=1e-12)
    best = L.largest_sigma_for_error(5.0)
    assert L.predicted_release_error(L.release_request(10, best, 1.0))["median_deg"] <= 5.0
    assert L.largest_sigma_for_error(1e-5) is None


def test_table_work_is_one_monte_carlo_run_per_rate(monkeypatch):
    """The µ-σ figure's Monte Carlo column: one estimate per rate at the sizes the study gets
    (capped as mc_study_kwargs caps them); its time is repeats x (per-repeat cost + samples x
    per-sample cost) per rate."""
    from dpcore.manifolds import Sphere
    from dpcore.release import work

    costs = work.WorkCosts(per_step=1e-3, per_term=0.0, per_sample=1e-6)
    monkeypatch.setitem(work._CACHE, (repr(Sphere(1)), "monte_carlo"), costs)
    est, ok = L.table_work(8, 500, 10)
    assert est.mc_samples == 8 * 500 * 10
    assert est.seconds == pytest.approx(8 * 10 * (1e-3 + 500 * 1e-6))
    assert ok
    monkeypatch.setattr(work, "DEFAULT_WORK_BUDGET", 0.5 * est.seconds)
    est, ok = L.table_work(8, 500, 10)
    assert not ok and "Monte Carlo samples or repeats" in L.work_refusal(est)
