"""The papers' qualitative facts (issue 5, point 4) on the quick studies, plus bookkeeping.

Sizes and budgets follow the quick configuration of the report (``report.QUICK``) and were
chosen so that each fact holds by a wide margin, not just on average:

* budget facts (sphere, n = 20 and 100, total 1.0, 2 replicates of 5 x 5 draws): the log MSE
  drops by about 0.9 or more from n = 20 to n = 100 at every budget, the ends of the unequal
  split sit about 2 above the equal split, and the gap to the non-private level shrinks by a
  factor of about 2 or more from one equal-split total to the next. The paper's own total 2.02
  is not used here because at ε_p = ε_v ≈ 1 the private MSE of n = 50 and 100 both sit at the
  non-private level (their order then depends on the data), and at ε_v = 0.02 all sample sizes
  give random geodesics; the full report shows both effects;
  (Observed over three seed sets: drops with n at least 0.58, ends at least 1.3 above the
  equal split, gap drops at least 0.40; the tests require 0.4, 0.5 and 0.1.)
* Fréchet means: mechanisms are compared by z-scores of the difference of mean errors over
  150-2000 datasets; the tests require 3 standard errors (4 for Gaussian vs Laplace), observed
  4.9-12 (8 for Gaussian vs Laplace, 5.5-6.5 for the small cap);
* sensitivity ratios are at least 1 by construction of the bounds (observed minima about 1.5 on
  S² and 3 on SPD(2) for regression, 1.1 and 1.9 for Fréchet means);
* µ on S¹ is exact (no Monte Carlo): |µσ − 1| < 1e-6 at σ ≤ 0.5, µσ < 0.73 at σ ≥ 2.
"""

import numpy as np
import pandas as pd
import pytest

from dpcore.experiments import COLUMNS, budget_sweep
from dpcore.experiments import facts as F
from dpcore.experiments.report import QUICK
from dpcore.experiments.studies import (
    frechet_mean_study,
    frechet_sensitivity_study,
    gdp_mu_curve,
    linear_regression_comparison,
    load_wine,
    real_data_budget_sweep,
    sensitivity_ratios,
    summarize_linear_regression,
)
from dpcore.learning import GeodesicRegression
from dpcore.manifolds import SPD, Euclidean, Sphere
from dpcore.privacy import eps_to_mu

SEED = 2024


# ------------------------------------------------------------------------ paper 002, fig. 1
@pytest.fixture(scope="module")
def sphere_budget():
    c = QUICK["fig1"]
    kw = {"replicates": c["replicates"], "n_footpoints": c["draws"][0],
          "n_vectors": c["draws"][1], "chain_length": c["chain"][0], "burn_in": c["chain"][1],
          "mode": "paper", "n_jobs": 2, "data_rng": SEED + 3}
    unequal = budget_sweep(Sphere(2), sample_sizes=c["sizes"], split="unequal",
                           totals=[c["total"]], eps_p_grid=c["eps_p_grid"], rng=SEED + 1, **kw)
    equal = budget_sweep(Sphere(2), sample_sizes=c["sizes"], split="equal",
                         totals=c["equal_totals"], rng=SEED + 2, **kw)
    return unequal, equal


@pytest.mark.slow
class TestBudgetFacts:
    def test_log_mse_falls_as_n_grows_at_every_budget(self, sphere_budget):
        for df in sphere_budget:
            fact = F.log_mse_falls_with_n(df)
            assert fact.holds, fact.detail
            assert fact.margin > 0.4, fact.detail

    def test_unequal_split_highest_at_both_ends(self, sphere_budget):
        fact = F.unequal_ends_highest(sphere_budget[0])
        assert fact.holds, fact.detail
        assert fact.margin > 0.5, fact.detail

    def test_private_above_nonprivate_and_approaching(self, sphere_budget):
        equal = sphere_budget[1]
        assert np.all(equal["mse"] > equal["nonprivate_mse"])
        fact = F.private_approaches_nonprivate(equal)
        assert fact.holds, fact.detail
        assert fact.margin > 0.1, fact.detail
        gap = np.log(equal["mse"] / equal["nonprivate_mse"])
        means = equal.assign(gap=gap).groupby(["n", "epsilon"])["gap"].mean()
        for _, g in means.groupby(level="n"):
            assert g.iloc[-1] < 0.5 * g.iloc[0]


# ------------------------------------------------------------------------ sensitivity ratios
class TestSensitivityRatios:
    @pytest.mark.parametrize("manifold", [Sphere(2), SPD(2)], ids=["sphere", "spd"])
    def test_every_ratio_at_least_one(self, manifold):
        c = QUICK["fig9"]
        df = sensitivity_ratios(manifold, sample_sizes=c["sizes"], pairs=c["pairs"], rng=SEED)
        assert len(df) == 2 * len(c["sizes"]) * c["pairs"]
        assert set(df["parameter"]) == {"footpoint", "shooting_vector"}
        fact = F.ratios_at_least_one(df)
        assert fact.holds, fact.detail
        np.testing.assert_allclose(df["ratio"], df["theoretical"] / df["empirical"])
        assert np.isnan(df["tau_m"]).all() == isinstance(manifold, Sphere)

    def test_results_do_not_depend_on_n_jobs(self):
        a = sensitivity_ratios(Sphere(2), sample_sizes=[10, 15], pairs=3, rng=1, n_jobs=1)
        b = sensitivity_ratios(Sphere(2), sample_sizes=[10, 15], pairs=3, rng=1, n_jobs=2)
        pd.testing.assert_frame_equal(a, b)

    @pytest.mark.parametrize("manifold,radius", [(Sphere(2), np.pi / 8), (SPD(2), 1.5)],
                             ids=["sphere", "spd"])
    def test_frechet_sensitivity_below_bound(self, manifold, radius):
        df = frechet_sensitivity_study(manifold, sample_sizes=(10, 100), radius=radius,
                                       replicates=20, rng=SEED)
        fact = F.ratios_at_least_one(df)
        assert fact.holds, fact.detail
        # The bound scales as 1/n.
        b = df.groupby("n")["bound"].first()
        assert b[10] == pytest.approx(10 * b[100])


# ------------------------------------------------------------------------ Fréchet means
@pytest.fixture(scope="module")
def sphere_means():
    return frechet_mean_study(Sphere(2), sample_sizes=(10, 100), epsilon=1.0,
                              radius=np.pi / 8, replicates=150,
                              mechanisms=("laplace", "ambient_laplace", "gaussian"),
                              rng=SEED, n_jobs=2)


@pytest.fixture(scope="module")
def spd_means():
    return frechet_mean_study(SPD(2), sample_sizes=(10, 100), epsilon=1.0, radius=1.5,
                              replicates=150, mechanisms=("laplace", "ambient_laplace"),
                              rng=SEED, n_jobs=2)


class TestFrechetMeans:
    def test_columns_and_bookkeeping(self, sphere_means):
        df = sphere_means
        assert list(df.columns) == ["n", "epsilon", "mu", "replicate", "mechanism",
                                    "geodesic_error", "euclidean_error", "left_manifold",
                                    "sigma", "sensitivity"]
        assert len(df) == 2 * 150 * 3
        amb = df[df.mechanism == "ambient_laplace"]
        assert amb["left_manifold"].all()  # never on S² before projection (paper 001)
        assert not df[df.mechanism != "ambient_laplace"]["left_manifold"].any()
        lap = df[df.mechanism == "laplace"]
        np.testing.assert_allclose(lap["sigma"], lap["sensitivity"] / 1.0)  # σ = Δ/ε

    def test_manifold_laplace_beats_ambient_on_spd(self, spd_means):
        for error in ("euclidean_error", "geodesic_error"):
            fact = F.mechanism_beats(spd_means, "laplace", "ambient_laplace", error=error)
            assert fact.margin > 3, fact.detail

    def test_manifold_laplace_beats_ambient_on_sphere(self, sphere_means):
        # Paper 001's measure: Euclidean distance from the Fréchet mean to the release, the
        # ambient one before projection. At n = 10 the two are level (see the report).
        fact = F.mechanism_beats(sphere_means[sphere_means.n == 100], "laplace",
                                 "ambient_laplace", error="euclidean_error")
        assert fact.margin > 3, fact.detail

    def test_manifold_laplace_beats_projected_ambient_on_a_small_cap(self):
        # With little curvature inside the data ball (r = π/32, h ≈ 0.99) the manifold Laplace
        # also beats the ambient release projected back onto S², by about 13% (paper 001's
        # 15%); see the next test for the paper's radius.
        df = frechet_mean_study(Sphere(2), sample_sizes=[100], radius=np.pi / 32,
                                replicates=2000, mechanisms=("laplace", "ambient_laplace"),
                                rng=SEED)
        fact = F.mechanism_beats(df, "laplace", "ambient_laplace", error="geodesic_error")
        assert fact.margin > 3, fact.detail

    @pytest.mark.xfail(strict=True, reason="At r = π/8 the Theorem 2 curvature factor "
                       "(2 - h)/h = 1.55 inflates the manifold sensitivity beyond the ambient "
                       "one's dimension penalty: the projected ambient release is closer.")
    def test_manifold_laplace_beats_projected_ambient_at_the_papers_radius(self, sphere_means):
        fact = F.mechanism_beats(sphere_means, "laplace", "ambient_laplace",
                                 error="geodesic_error")
        assert fact.holds

    def test_gaussian_beats_laplace_at_equal_mu_on_sphere(self, sphere_means):
        fact = F.mechanism_beats(sphere_means, "gaussian", "laplace", error="geodesic_error")
        assert fact.margin > 4, fact.detail
        gauss = sphere_means[sphere_means.mechanism == "gaussian"]
        np.testing.assert_allclose(gauss["mu"], eps_to_mu(1.0))

    def test_results_do_not_depend_on_n_jobs(self):
        kw = {"sample_sizes": [5, 8], "radius": np.pi / 8, "replicates": 3,
              "mechanisms": ("laplace", "ambient_laplace", "kng"), "chain_length": 20,
              "burn_in": 10, "rng": 3}
        a = frechet_mean_study(Sphere(2), n_jobs=1, **kw)
        b = frechet_mean_study(Sphere(2), n_jobs=2, **kw)
        pd.testing.assert_frame_equal(a, b)

    def test_rejects_unknown_mechanism(self):
        with pytest.raises(ValueError, match="mechanisms"):
            frechet_mean_study(Sphere(2), sample_sizes=[5], radius=0.3, mechanisms=("magic",))


# ------------------------------------------------------------------------ GDP on the circle
class TestGdpCurve:
    def test_mu_on_circle_is_inverse_sigma_then_below(self):
        df = gdp_mu_curve([0.25, 0.5, 1.0, 2.0, 4.0], monte_carlo=False)
        fact = F.mu_circle_matches_inverse_sigma(df)
        assert fact.holds, fact.detail
        ex = df[(df.space == "S1") & (df.method == "exact")].set_index("sigma")["mu"]
        assert ex[0.5] * 0.5 == pytest.approx(1.0, abs=1e-6)
        assert ex[2.0] * 2.0 < 0.73
        r = df[(df.space == "R")].set_index("sigma")["mu"]
        np.testing.assert_allclose(r.to_numpy(), 1 / r.index.to_numpy())

    def test_monte_carlo_rows(self):
        df = gdp_mu_curve([1.0], replicates=2, estimators=("mis", "tails"), n_samples=200,
                          n_eps=100, repeats=5, rng=0)
        mc = df[df.method.str.startswith("monte_carlo")]
        assert len(mc) == 2 * 2 * 2  # spaces x estimators x replicates
        assert np.all(mc["standard_error"] >= 0)
        # The library's estimator is within 15% of the truth even at this tiny size; the
        # paper's overestimates (paper 004 fig. 1), so only its sign is checked.
        truth = {"S1": float(df[(df.space == "S1") & (df.method == "exact")]["mu"].iloc[0]),
                 "R": 1.0}
        for _, row in mc.iterrows():
            if row["method"] == "monte_carlo_mis":
                assert row["mu"] == pytest.approx(truth[row["space"]], rel=0.15)
            else:
                assert np.isfinite(row["mu"]) and row["mu"] > 0


# ------------------------------------------------------------------------ Wine Quality
class TestLinearRegressionComparison:
    @pytest.fixture(scope="class")
    @classmethod
    def wine(cls):
        return linear_regression_comparison(replicates=5, rng=SEED)

    def test_ols_matches_geodesic_regression(self, wine):
        x, y, _ = load_wine()
        fit = GeodesicRegression(Euclidean(4)).fit(x, y)
        ols = wine[wine.method == "ols"]
        np.testing.assert_allclose(ols["intercept"], fit.intercept_, atol=1e-8)
        np.testing.assert_allclose(ols["slope"], fit.coef_, atol=1e-8)

    def test_methods_and_summary(self, wine):
        summary = summarize_linear_regression(wine).set_index("method")
        assert set(summary.index) == {"ols", "dpgr_strict", "dpgr_paper", "diffprivlib",
                                      "opacus"}
        assert summary.loc["dpgr_strict", "fits"] == 5
        ols = summary.loc["ols", "mse_mean"]
        # Nothing beats least squares on its own data.
        for method in ("dpgr_strict", "dpgr_paper", "diffprivlib"):
            assert summary.loc[method, "mse_median"] >= ols
        try:
            import opacus  # noqa: F401
            import torch  # noqa: F401
        except ImportError:
            assert np.isnan(summary.loc["opacus", "mse_mean"])
            assert "not importable" in summary.loc["opacus", "note"]
        else:  # the optional extra (make opacus): DP-SGD fits, labelled approximate DP
            assert summary.loc["opacus", "fits"] == 5
            assert summary.loc["opacus", "mode"] == "approximate DP"
            assert summary.loc["opacus", "mse_median"] >= ols
            assert "δ" in summary.loc["opacus", "note"]

    def test_reference_scaling_uses_other_rows(self):
        _, y, info = load_wine()
        assert y.shape == (100, 4)
        assert info["scaling"] == "reference"
        assert np.all(info["scale"] > 0)
        _, raw, _ = load_wine(scaling="none")
        np.testing.assert_allclose(raw, y * info["scale"] + info["center"])


# ------------------------------------------------------------------------ real-data sweeps
def test_real_data_budget_sweep_bookkeeping():
    from dpcore.data import make_regression_data

    x, y = make_regression_data(Sphere(2), 12, rng=0)
    df = real_data_budget_sweep(Sphere(2), x, y, split="equal", totals=[0.5, 1.0],
                                replicates=2, rng=0, n_footpoints=2, n_vectors=2,
                                chain_length=5, burn_in=5)
    assert len(df) == 4
    assert df["nonprivate_mse"].nunique() == 1
    np.testing.assert_allclose(df["log_mse"], np.log(df["mse"]))
    np.testing.assert_allclose(df["epsilon"], df["eps_p"] + df["eps_v"])


class TestRecordedFailures:
    """Sweeps record releases that fail numerically instead of stopping."""

    KW = {"split": "unequal", "totals": [2.02], "eps_p_grid": [0.02], "replicates": 2,
          "rng": 0, "n_footpoints": 5, "n_vectors": 1, "chain_length": 300, "burn_in": 200}

    def test_paper_mode_spd_small_eps_no_longer_fails(self):
        # Paper mode on SPD(2) at tiny eps_p used to let footpoint chains reach numerically
        # singular matrices; the footpoint support is now restricted there too.
        from dpcore.data import make_regression_data

        x, y = make_regression_data(SPD(2), 20, rng=1)
        df = real_data_budget_sweep(SPD(2), x, y, on_error="record", **self.KW)
        assert not df["failed"].any()

    def test_records_or_raises(self, monkeypatch):
        import dpcore.experiments.budget as budget_module
        from dpcore.data import make_regression_data

        def broken(*args, **kwargs):
            raise ValueError("`init` contains NaN or infinite values.")

        import dpcore.experiments.studies.sweeps as sweeps_module

        monkeypatch.setattr(budget_module, "private_geodesic_regression_budgets", broken)
        # Patched where the sweep's cells look it up.
        monkeypatch.setattr(sweeps_module, "private_geodesic_regression", broken)
        x, y = make_regression_data(SPD(2), 20, rng=1)
        df = real_data_budget_sweep(SPD(2), x, y, on_error="record", **self.KW)
        assert df["failed"].all()
        assert df["mse"].isna().all() and df["log_mse"].isna().all()
        with pytest.raises(ValueError):
            real_data_budget_sweep(SPD(2), x, y, on_error="raise", **self.KW)

    def test_nested_sizes_share_the_data(self):
        from dpcore.experiments.studies import recorded_budget_sweep

        df = recorded_budget_sweep(Sphere(2), sample_sizes=[8, 12], split="equal",
                                   totals=[1.0], replicates=2, rng=4, nested=True,
                                   n_footpoints=2, n_vectors=2, chain_length=5, burn_in=5)
        assert list(df.columns) == [*COLUMNS, "failed"]
        assert not df["failed"].any()
        assert len(df) == 4 and df.attrs["nested"]
