"""Budget sweeps (paper 002 §4) as tidy DataFrames: shape, seeding, parallelism, one known trend."""

import numpy as np
import pandas as pd
import pytest

from dpcore.data import make_regression_data
from dpcore.experiments import (
    COLUMNS,
    budget_pairs,
    budget_sweep,
    default_eps_p_grid,
    parameter_errors,
    release_mse,
)
from dpcore.learning import GeodesicRegression
from dpcore.manifolds import SPD, Euclidean, KendallShape, Sphere
from dpcore.release import private_geodesic_regression

# Tiny chains: these tests check bookkeeping, not mixing.
QUICK = {"n_footpoints": 2, "n_vectors": 2, "chain_length": 5, "burn_in": 5}


@pytest.fixture(scope="module")
def sphere_sweep():
    return budget_sweep(Sphere(2), sample_sizes=[10, 15], split="unequal", totals=[1.0],
                        eps_p_grid=[0.2, 0.5, 0.8], replicates=2, rng=7, **QUICK)


class TestBudgetPairs:
    def test_default_unequal_grid_is_the_papers(self):
        grid = default_eps_p_grid()
        np.testing.assert_allclose(grid[[0, -1]], [0.02, 2.0])
        np.testing.assert_allclose(grid + grid[::-1], 2.02)  # mirror-symmetric splits
        pairs = budget_pairs("unequal")
        np.testing.assert_allclose(pairs.sum(axis=1), 2.02)
        assert np.all(pairs > 0)

    def test_equal_and_grid(self):
        eq = budget_pairs("equal", totals=[0.2, 2.0])
        np.testing.assert_allclose(eq, [[0.1, 0.1], [1.0, 1.0]])
        assert budget_pairs("equal").shape == (10, 2)
        grid = budget_pairs("grid", eps_p_grid=[0.1, 1.0], eps_v_grid=[0.5, 1.0, 2.0])
        assert grid.shape == (6, 2)

    @pytest.mark.parametrize("kwargs", [
        {"split": "unequal", "totals": [1.0], "eps_p_grid": [0.5, 1.0]},  # eps_v = 0
        {"split": "equal", "totals": [0.0]},
        {"split": "sideways"},
    ])
    def test_rejects_bad_budgets(self, kwargs):
        with pytest.raises(ValueError):
            budget_pairs(**kwargs)


class TestBudgetSweep:
    def test_columns_shape_and_attrs(self, sphere_sweep):
        df = sphere_sweep
        assert isinstance(df, pd.DataFrame)
        assert list(df.columns) == list(COLUMNS)
        assert len(df) == 2 * 3 * 2  # sizes x budget pairs x replicates
        assert sorted(df["n"].unique()) == [10, 15]
        assert sorted(df["replicate"].unique()) == [0, 1]
        np.testing.assert_allclose(df["eps_p"] + df["eps_v"], 1.0)
        np.testing.assert_allclose(df["epsilon"], 1.0)
        np.testing.assert_allclose(df["log_mse"], np.log(df["mse"]))
        assert np.all(df["mse"] > 0) and np.all(df["nonprivate_mse"] > 0)
        # The non-private error belongs to the data set: one value per (n, replicate).
        assert (df.groupby(["n", "replicate"])["nonprivate_mse"].nunique() == 1).all()
        assert df.attrs["mode"] == "paper" and df.attrs["private"] is False
        assert df.attrs["split"] == "unequal"
        assert df.attrs["n_footpoints"] == 2 and df.attrs["n_vectors"] == 2

    def test_paper_mode_does_not_warn(self, recwarn):
        budget_sweep(Sphere(2), sample_sizes=[10], split="equal", totals=[1.0], replicates=1,
                     rng=0, **QUICK)
        assert not [w for w in recwarn if "Paper mode" in str(w.message)]

    def test_reproducible_with_a_seed(self, sphere_sweep):
        again = budget_sweep(Sphere(2), sample_sizes=[10, 15], split="unequal", totals=[1.0],
                             eps_p_grid=[0.2, 0.5, 0.8], replicates=2, rng=7, **QUICK)
        pd.testing.assert_frame_equal(sphere_sweep, again)
        other = budget_sweep(Sphere(2), sample_sizes=[10, 15], split="unequal", totals=[1.0],
                             eps_p_grid=[0.2, 0.5, 0.8], replicates=2, rng=8, **QUICK)
        assert not np.allclose(other["mse"], sphere_sweep["mse"])

    def test_parallel_equals_serial(self, sphere_sweep):
        fractions = []
        par = budget_sweep(Sphere(2), sample_sizes=[10, 15], split="unequal", totals=[1.0],
                           eps_p_grid=[0.2, 0.5, 0.8], replicates=2, rng=7, n_jobs=2,
                           progress=fractions.append, **QUICK)
        pd.testing.assert_frame_equal(sphere_sweep, par)
        # one call per batched job: 2 sample sizes x 2 replicates, all budgets in one batch
        assert fractions[-1] == 1.0 and len(fractions) == 4

    def test_progress_callback(self):
        fractions = []
        df = budget_sweep(Euclidean(1), sample_sizes=[10], split="equal", totals=[0.5, 1.0],
                          replicates=3, rng=0, progress=fractions.append, **QUICK)
        assert len(df) == 6
        assert len(fractions) == 3  # one call per data set (its 2 budgets run as one batch)
        assert np.all(np.diff(fractions) > 0) and fractions[-1] == 1.0

    def test_shared_data_rng_gives_the_same_data_across_views(self):
        kw = {"sample_sizes": [10], "replicates": 2, "data_rng": 3, **QUICK}
        a = budget_sweep(Euclidean(2), split="equal", totals=[1.0], rng=1, **kw)
        b = budget_sweep(Euclidean(2), split="grid", eps_p_grid=[0.3], eps_v_grid=[0.3],
                         rng=2, **kw)
        np.testing.assert_allclose(a["nonprivate_mse"], b["nonprivate_mse"])

    def test_grid_split(self):
        df = budget_sweep(SPD(2), sample_sizes=[8], split="grid", eps_p_grid=[0.5, 2.0],
                          eps_v_grid=[0.5, 1.0, 2.0], replicates=1, rng=0, **QUICK)
        assert len(df) == 6
        assert set(zip(df["eps_p"], df["eps_v"], strict=True)) == {
            (p, v) for p in (0.5, 2.0) for v in (0.5, 1.0, 2.0)}

    def test_strict_mode_needs_public_bounds(self):
        with pytest.raises(ValueError, match="tau"):
            budget_sweep(Sphere(2), sample_sizes=[10], split="equal", totals=[1.0],
                         replicates=1, rng=0, mode="strict", **QUICK)

    def test_strict_mode_passes_bounds_through(self):
        df = budget_sweep(Sphere(2), sample_sizes=[10], split="equal", totals=[1.0],
                          replicates=1, rng=0, mode="strict", tau=0.3, covariate_range=(0, 1),
                          **QUICK)
        assert df.attrs["mode"] == "strict" and df.attrs["private"] is True
        assert df.attrs["release_kwargs"] == {"tau": 0.3, "covariate_range": (0, 1)}

    def test_log_mse_falls_as_n_grows(self):
        # Euclidean KNG is sampled exactly (cheap); with 20 seeded replicates the privacy excess,
        # of order (tau / (n eps))^2, dominates the noise floor at n = 10 and fades by n = 160.
        df = budget_sweep(Euclidean(2), sample_sizes=[10, 40, 160], split="equal",
                          totals=[0.5], replicates=20, rng=2026, n_footpoints=3, n_vectors=3)
        means = df.groupby("n")["log_mse"].mean().to_numpy()
        ses = df.groupby("n")["log_mse"].sem().to_numpy()
        assert np.all(np.diff(means) < -2 * np.hypot(ses[1:], ses[:-1]))
        # ... and stays above the non-private level.
        assert np.all(df.groupby("n")["mse"].mean() > df.groupby("n")["nonprivate_mse"].mean())

    @pytest.mark.parametrize("bad", [
        {"replicates": 0}, {"sample_sizes": [2]}, {"mode": "loose"}, {"progress": 3},
    ])
    def test_validation(self, bad):
        kwargs = {"sample_sizes": [10], "split": "equal", "totals": [1.0], "replicates": 1,
                  "rng": 0, **QUICK, **bad}
        with pytest.raises((TypeError, ValueError)):
            budget_sweep(Euclidean(1), **kwargs)


@pytest.mark.filterwarnings("ignore::dpcore.exceptions.PrivacyLeakWarning")
class TestReleaseMetrics:
    @pytest.mark.parametrize("manifold", [Sphere(2), SPD(2), KendallShape(5), Euclidean(2)],
                             ids=repr)
    def test_mse_and_parameter_errors(self, manifold):
        data = make_regression_data(manifold, 20, rng=1)
        rel = private_geodesic_regression(manifold, data.x, data.y, eps_p=5.0, eps_v=5.0,
                                          mode="paper", rng=0, n_footpoints=2, n_vectors=3,
                                          chain_length=20, burn_in=20)
        mse = release_mse(manifold, rel, data.x, data.y)
        assert mse.shape == (2, 3) and np.all(mse >= 0)
        # MSE of a geodesic by hand, first draw.
        lo, hi = rel.assumptions["covariate_range"]["value"]
        t = (data.x - lo) / (hi - lo)
        p, v = rel.values["footpoint"][0], rel.values["shooting_vector"][0, 0]
        pred = manifold.exp(np.broadcast_to(p, data.y.shape), manifold.pointwise(t) * v)
        assert mse[0, 0] == pytest.approx(np.mean(manifold.squared_dist(pred, data.y)))

        fit = GeodesicRegression(manifold, covariate_range=(lo, hi)).fit(data.x, data.y)
        err = parameter_errors(manifold, rel, fit.footpoint_, fit.shooting_vector_)
        assert err["footpoint_distance"].shape == (2,)
        assert err["angle"].shape == err["length_error"].shape == (2, 3)
        assert np.all((err["angle"] >= 0) & (err["angle"] <= np.pi))

    def test_identical_parameters_have_zero_error(self):
        m = Sphere(2)
        data = make_regression_data(m, 20, rng=1)
        rel = private_geodesic_regression(m, data.x, data.y, eps_p=1.0, eps_v=1.0, mode="paper",
                                          rng=0, chain_length=5, burn_in=5)
        p, v = rel.values["footpoint"][0], rel.values["shooting_vector"][0, 0]
        err = parameter_errors(m, rel, p, v)
        assert err["footpoint_distance"][0] == pytest.approx(0.0, abs=1e-7)
        assert err["angle"][0, 0] == pytest.approx(0.0, abs=1e-6)
        assert err["length_error"][0, 0] == pytest.approx(0.0, abs=1e-12)


def test_release_mse_stays_finite_for_covariates_beyond_the_public_range():
    """Issue 14 §3: on SPD a covariate far outside the public range used to extend the private
    geodesic until exp overflowed ("MSE, private nan"); the MSE clips covariates as the release
    did, and extending stays available on request."""
    m = SPD(2)
    data = make_regression_data(m, 20, rng=2)
    x = 1.0 + 40.0 * data.x  # covariates in [1, 41], public range [0, 1]
    rel = private_geodesic_regression(m, x, data.y, eps_p=1.0, eps_v=1.0, tau=0.5, tau_m=2.0,
                                      covariate_range=(0.0, 1.0), rng=0, sampler="mcmc",
                                      chain_length=20, burn_in=20)
    mse = release_mse(m, rel, x, data.y)
    assert np.all(np.isfinite(mse))
    clipped = release_mse(m, rel, np.clip(x, 0.0, 1.0), data.y)
    np.testing.assert_allclose(mse, clipped)
    with np.errstate(all="ignore"):
        extended = release_mse(m, rel, x, data.y, clip_covariates=False)
    assert not np.allclose(extended, mse)


def test_cells_partition_gives_the_rows_of_one_call():
    """budget_sweep(cells=...) keeps every cell's seeds: the cells run one by one, concatenated
    and sorted, equal one call; a cell outside the sweep is refused."""
    kw = dict(sample_sizes=[8, 10], split="equal", totals=[0.5, 1.0], replicates=2, rng=3,
              n_footpoints=1, n_vectors=1, chain_length=5, burn_in=5)
    whole = budget_sweep(Sphere(2), **kw)
    parts = pd.concat([budget_sweep(Sphere(2), cells=[(n, r)], **kw)
                       for n in (8, 10) for r in (0, 1)])
    parts = parts.sort_values(["n", "eps_p", "eps_v", "replicate"], kind="stable",
                              ignore_index=True)
    pd.testing.assert_frame_equal(parts, whole)
    two = budget_sweep(Sphere(2), cells=[(10, 1), (8, 0)], **kw)
    pd.testing.assert_frame_equal(
        two, whole[((whole.n == 10) & (whole.replicate == 1))
                   | ((whole.n == 8) & (whole.replicate == 0))].reset_index(drop=True))
    with pytest.raises(ValueError, match="not a cell"):
        budget_sweep(Sphere(2), cells=[(9, 0)], **kw)


class TestProgress:
    """Issue 13/14: progress per finished batch, results unchanged by the callback, a raising
    callback (a cancel) stops the sweep."""

    KW = {"sample_sizes": [10, 15], "split": "unequal", "totals": [1.0],
          "eps_p_grid": [0.2, 0.5, 0.8], "replicates": 2, "rng": 7, **QUICK}

    @pytest.mark.parametrize("n_jobs", [1, 2])
    def test_results_identical_with_and_without_a_callback(self, sphere_sweep, n_jobs):
        fractions = []
        df = budget_sweep(Sphere(2), n_jobs=n_jobs, progress=fractions.append, **self.KW)
        pd.testing.assert_frame_equal(sphere_sweep, df)
        assert np.all(np.diff(fractions) >= 0) and fractions[-1] == 1.0
        assert all(0 < f <= 1 for f in fractions)

    def test_parallel_progress_comes_as_waves_complete(self, monkeypatch):
        """With n_jobs = 2 the four batches run as two waves of two; a callback raising at its
        first call (after the first wave) stops the sweep before the second wave starts."""
        from dpcore.experiments import budget as module

        waves = []
        real = module.parallel_map

        def counting(func, jobs, n_jobs):
            waves.append(len(jobs))
            return real(func, jobs, n_jobs)

        monkeypatch.setattr(module, "parallel_map", counting)

        class Stop(Exception):
            pass

        def cancel(fraction):
            raise Stop(fraction)

        with pytest.raises(Stop):
            budget_sweep(Sphere(2), n_jobs=2, progress=cancel, **self.KW)
        assert waves == [2]
        waves.clear()
        budget_sweep(Sphere(2), n_jobs=2, **self.KW)  # no callback: one parallel map
        assert waves == [4]

    def test_exception_of_the_callback_propagates_in_process(self):
        calls = []

        def cancel(fraction):
            calls.append(fraction)
            raise KeyboardInterrupt  # not an Exception: nothing may swallow it

        with pytest.raises(KeyboardInterrupt):
            budget_sweep(Sphere(2), progress=cancel, **self.KW)
        assert len(calls) == 1


class TestDataKwargs:
    """budget_sweep(data_kwargs=...): a stated design of the synthetic data (issue 14)."""

    KW = dict(sample_sizes=[8, 10], split="equal", totals=[1.0], replicates=2, rng=4,
              data_rng=11, noise=0.05, **QUICK)
    REGION = (None, 0.1)

    def test_data_sets_are_make_regression_data_with_the_sweeps_seeds(self, monkeypatch):
        import dpcore.experiments.budget as budget_module

        drawn = []
        real = budget_module.make_regression_data

        def recording(*args, **kwargs):
            data = real(*args, **kwargs)
            drawn.append(data)
            return data

        monkeypatch.setattr(budget_module, "make_regression_data", recording)
        m = SPD(2)
        df = budget_sweep(m, data_kwargs={"footpoint_region": self.REGION}, **self.KW)
        # one data set per (n, replicate), seeded by SeedSequence(data_rng).spawn in that order
        seeds = np.random.SeedSequence(11).spawn(4)
        cells = [(8, 0), (8, 1), (10, 0), (10, 1)]
        assert len(drawn) == len(cells)
        for (n, rep), seed, got in zip(cells, seeds, drawn, strict=True):
            want = make_regression_data(m, n, noise=0.05, rng=seed,
                                        footpoint_region=self.REGION)
            np.testing.assert_array_equal(got.x, want.x)
            np.testing.assert_array_equal(got.y, want.y)
            # the design holds: footpoint within 0.1 of I
            assert m.dist(want.footpoint, np.eye(2)) <= 0.1
            # ... and these are the data the sweep scored (its non-private fit)
            fit = GeodesicRegression(m, tol=1e-8).fit(want.x, want.y)
            row = df[(df["n"] == n) & (df["replicate"] == rep)]
            np.testing.assert_allclose(row["nonprivate_mse"], fit.mse(want.x, want.y),
                                       rtol=1e-12)
        assert df.attrs["data_kwargs"] == {"footpoint_region": (None, 0.1)}

    def test_without_it_nothing_changes(self):
        plain = budget_sweep(SPD(2), **self.KW)
        pd.testing.assert_frame_equal(plain, budget_sweep(SPD(2), data_kwargs={}, **self.KW))
        pd.testing.assert_frame_equal(plain, budget_sweep(SPD(2), data_kwargs=None, **self.KW))
        assert plain.attrs["data_kwargs"] == {}
        designed = budget_sweep(SPD(2), data_kwargs={"footpoint_region": self.REGION},
                                **self.KW)
        assert not np.allclose(designed["nonprivate_mse"], plain["nonprivate_mse"])

    def test_cells_partition_holds_with_a_design(self):
        kw = {**self.KW, "data_kwargs": {"footpoint_region": (np.eye(2), 0.1)}}
        whole = budget_sweep(SPD(2), **kw)
        parts = pd.concat([budget_sweep(SPD(2), cells=[(n, r)], **kw)
                           for n in (8, 10) for r in (0, 1)])
        parts = parts.sort_values(["n", "eps_p", "eps_v", "replicate"], kind="stable",
                                  ignore_index=True)
        pd.testing.assert_frame_equal(parts, whole)
        # arrays are recorded as lists
        assert whole.attrs["data_kwargs"] == {"footpoint_region": ([[1.0, 0.0], [0.0, 1.0]],
                                                                   0.1)}

    @pytest.mark.parametrize(("data_kwargs", "error", "match"), [
        ({"noise": 0.1}, ValueError, "sets them itself"),
        ({"rng": 0}, ValueError, "data_rng"),
        ({"radius": 0.1}, ValueError, "footpoint_region"),
        ([("footpoint_region", (None, 0.1))], TypeError, "mapping"),
    ])
    def test_validation(self, data_kwargs, error, match):
        with pytest.raises(error, match=match):
            budget_sweep(SPD(2), data_kwargs=data_kwargs, **self.KW)

    def test_the_generator_refuses_a_region_it_does_not_support(self):
        with pytest.raises(ValueError, match="only available"):
            budget_sweep(Euclidean(2), data_kwargs={"footpoint_region": (None, 0.1)},
                         **self.KW)
