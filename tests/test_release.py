"""End-to-end releases: guarantees stated honestly, strict/paper modes, JSON records."""

import json
import warnings

import numpy as np
import pytest

from dpcore.data import make_mean_data, make_regression_data
from dpcore.exceptions import PrivacyLeakWarning
from dpcore.learning import GeodesicRegression
from dpcore.manifolds import SPD, Euclidean, KendallShape, Sphere
from dpcore.release import Release, private_frechet_mean, private_geodesic_regression
from dpcore.release.record import FAR_BASIN_CAVEAT

REQUIRED_KEYS = {"values", "mechanism", "epsilon", "delta", "mu", "sensitivity", "sigma",
                 "assumptions", "diagnostics", "mode", "seeded", "version"}
FAST = {"chain_length": 200, "burn_in": 200}
NORTH = np.array([0.0, 0.0, 1.0])


@pytest.fixture(scope="module")
def sphere_data():
    return make_regression_data(Sphere(2), 50, rng=3)


def check_record(release):
    assert isinstance(release, Release)
    d = release.to_dict()
    assert REQUIRED_KEYS <= set(d)
    text = json.dumps(d)  # JSON-safe
    assert "NaN" not in text
    return d


class TestGeodesicRegression:
    def test_strict_sphere(self, sphere_data):
        x, y = sphere_data
        rel = private_geodesic_regression(Sphere(2), x, y, eps_p=1.0, eps_v=1.0, tau=0.2,
                                          covariate_range=(0, 1), n_vectors=3, rng=0,
                                          scheme="sequential", **FAST)
        d = check_record(rel)
        assert d["mode"] == "strict" and d["seeded"] is True
        assert rel.values["footpoint"].shape == (1, 3)
        assert rel.values["shooting_vector"].shape == (1, 3, 3)
        assert rel.epsilon == pytest.approx(1.0 + 3 * 1.0)
        assert rel.sensitivity["footpoint"] == pytest.approx(2 * 0.2 / 50)
        assert rel.sigma["footpoint"] == pytest.approx(2 * rel.sensitivity["footpoint"] / 1.0)
        assert rel.delta is None  # MCMC: no delta is certified
        assert any("MCMC" in c for c in rel.caveats)
        assert any("Not covered by the sensitivity proof" in c for c in rel.caveats)
        assert any("not for publication" in c for c in rel.caveats)
        assert all(a["source"] != "data" for a in rel.assumptions.values())
        # The papers' sequential scheme is outside the sensitivity proof (DESIGN §12).
        assert not rel.private and rel.guarantee == "not covered"
        assert rel.label.startswith("NOT PRIVATE (sequential scheme")
        assert np.all(Sphere(2).is_tangent(rel.values["footpoint"][:, None],
                                           rel.values["shooting_vector"]))

    def test_far_basin_caveat_without_a_footpoint_region(self, sphere_data):
        x, y = sphere_data
        kw = dict(eps_p=1.0, eps_v=1.0, tau=0.2, covariate_range=(0, 1), rng=0, **FAST)
        whole = private_geodesic_regression(Sphere(2), x, y, **kw)
        assert FAR_BASIN_CAVEAT in whole.caveats and whole.private
        ball = private_geodesic_regression(Sphere(2), x, y, footpoint_radius=1.0,
                                           center=NORTH, **kw)
        assert FAR_BASIN_CAVEAT not in ball.caveats
        xs, ys = make_regression_data(SPD(2), 20, rng=1)
        spd = private_geodesic_regression(SPD(2), xs, ys, tau_m=1.0, sampler="mcmc", **kw)
        assert FAR_BASIN_CAVEAT not in spd.caveats           # not compact: a ball is required

    def test_strict_requires_public_bounds(self, sphere_data):
        x, y = sphere_data
        with pytest.raises(ValueError, match="tau"):
            private_geodesic_regression(Sphere(2), x, y, eps_p=1, eps_v=1, covariate_range=(0, 1))
        with pytest.raises(ValueError, match="covariate_range"):
            private_geodesic_regression(Sphere(2), x, y, eps_p=1, eps_v=1, tau=0.1)
        xs, ys = make_regression_data(SPD(2), 20, rng=1)
        with pytest.raises(ValueError, match="tau_m"):
            private_geodesic_regression(SPD(2), xs, ys, eps_p=1, eps_v=1, tau=0.1,
                                        covariate_range=(0, 1))

    def test_paper_mode_warns_and_is_labelled(self, sphere_data):
        x, y = sphere_data
        with pytest.warns(PrivacyLeakWarning):
            rel = private_geodesic_regression(Sphere(2), x, y, eps_p=1.0, eps_v=1.0,
                                              mode="paper", rng=0, **FAST)
        assert not rel.private and "NOT PRIVATE" in rel.label
        assert rel.assumptions["tau"]["source"] == "data"
        assert rel.sigma["footpoint"] == pytest.approx(rel.sensitivity["footpoint"] / 1.0)

    def test_os_entropy_by_default(self, sphere_data):
        x, y = sphere_data
        kw = dict(eps_p=1.0, eps_v=1.0, tau=0.2, covariate_range=(0, 1), **FAST)
        a = private_geodesic_regression(Sphere(2), x, y, **kw)
        b = private_geodesic_regression(Sphere(2), x, y, **kw)
        assert not a.seeded and "not for publication" not in a.label
        assert not np.allclose(a.values["footpoint"], b.values["footpoint"])
        c = private_geodesic_regression(Sphere(2), x, y, rng=5, **kw)
        e = private_geodesic_regression(Sphere(2), x, y, rng=5, **kw)
        np.testing.assert_array_equal(c.values["footpoint"], e.values["footpoint"])

    def test_large_budget_recovers_the_fit(self, sphere_data):
        x, y = sphere_data
        m = Sphere(2)
        fit = GeodesicRegression(m, covariate_range=(0, 1)).fit(x, y)
        rel = private_geodesic_regression(m, x, y, eps_p=1e4, eps_v=1e4, tau=0.2,
                                          covariate_range=(0, 1), rng=1, scheme="sequential",
                                          **FAST)
        assert m.dist(rel.values["footpoint"][0], fit.footpoint_) < 1e-2
        assert np.linalg.norm(rel.values["shooting_vector"][0, 0] - fit.shooting_vector_) < 2e-2

    def test_original_units(self, sphere_data):
        x, y = sphere_data
        m = Sphere(2)
        xs = 10 + 5 * x  # covariate in [10, 15]
        rel = private_geodesic_regression(m, xs, y, eps_p=1e4, eps_v=1e4, tau=0.2,
                                          covariate_range=(10, 15), rng=1, scheme="sequential",
                                          **FAST)
        fit = GeodesicRegression(m, covariate_range=(10, 15)).fit(xs, y)
        assert m.dist(rel.values["intercept"][0, 0], fit.intercept_) < 5e-2
        pred = m.exp(rel.values["intercept"][0, 0], 12.0 * rel.values["coef"][0, 0])
        assert m.dist(pred, fit.predict(np.array([12.0]))[0]) < 2e-2

    def test_euclidean_paper_mode_is_exact(self):
        x, y = make_regression_data(Euclidean(2), 40, rng=2)
        with pytest.warns(PrivacyLeakWarning):
            rel = private_geodesic_regression(Euclidean(2), x, y, eps_p=1.0, eps_v=1.0,
                                              mode="paper", n_vectors=4, rng=0)
        assert rel.diagnostics["footpoint"]["exact"] and rel.diagnostics["shooting_vector"]["exact"]
        assert rel.delta == 0.0

    @pytest.mark.parametrize("manifold", [SPD(2), KendallShape(5), Euclidean(2)])
    def test_strict_other_manifolds(self, manifold):
        x, y = make_regression_data(manifold, 30, rng=4)
        kw = {}
        if not isinstance(manifold, KendallShape):
            kw["tau_m"] = 3.0
        rel = private_geodesic_regression(manifold, x, y, eps_p=2.0, eps_v=2.0, tau=0.5,
                                          covariate_range=(0, 1), n_footpoints=2, n_vectors=2,
                                          rng=0, scheme="sequential", **kw, **FAST)
        check_record(rel)
        fp = rel.values["footpoint"]
        assert fp.shape == (2, *manifold.point_shape) and np.all(manifold.belongs(fp))
        assert rel.epsilon == pytest.approx(2 * 2.0 + 4 * 2.0)
        if "tau_m" in kw:
            assert np.all(manifold.dist(fp, rel.assumptions["center"]["value"]) <= 3.5 + 1e-9)

    def test_bad_inputs(self, sphere_data):
        x, y = sphere_data
        kw = dict(tau=0.2, covariate_range=(0, 1))
        with pytest.raises(ValueError):
            private_geodesic_regression(Sphere(2), x, y, eps_p=-1, eps_v=1, **kw)
        with pytest.raises(ValueError):
            private_geodesic_regression(Sphere(2), x[:-1], y, eps_p=1, eps_v=1, **kw)
        with pytest.raises(ValueError):
            private_geodesic_regression(Sphere(2), x, y, eps_p=1, eps_v=1, mode="lax", **kw)
        with pytest.raises(TypeError):
            private_geodesic_regression("sphere", x, y, eps_p=1, eps_v=1, **kw)


@pytest.fixture(scope="module")
def data():
    return make_mean_data(Sphere(2), 40, radius=np.pi / 8, rng=0)


class TestFrechetMean:
    @pytest.mark.parametrize("mechanism", ["laplace", "kng", "gaussian", "ambient_laplace"])
    def test_each_mechanism(self, data, mechanism):
        kw = {"mu": 1.0} if mechanism == "gaussian" else {"epsilon": 1.0}
        rel = private_frechet_mean(Sphere(2), data, mechanism=mechanism, radius=np.pi / 8,
                                   center=NORTH, rng=0, n_draws=5, **kw, **FAST)
        d = check_record(rel)
        assert rel.values["mean"].shape == (5, 3)
        assert d["mechanism"] == mechanism
        if mechanism == "gaussian":
            assert rel.mu == pytest.approx(np.sqrt(5)) and rel.epsilon is None
        else:
            assert rel.epsilon == pytest.approx(5.0)
        if mechanism == "ambient_laplace":
            assert np.all(rel.values["left_manifold"])

    def test_strict_needs_ball(self, data):
        with pytest.raises(ValueError, match="center"):
            private_frechet_mean(Sphere(2), data, epsilon=1.0, radius=0.4)
        with pytest.raises(ValueError, match="radius"):
            private_frechet_mean(Sphere(2), data, epsilon=1.0, center=NORTH)
        with pytest.raises(ValueError, match="r\\*"):
            private_frechet_mean(Sphere(2), data, epsilon=1.0, center=NORTH, radius=1.0)

    def test_paper_mode(self, data):
        with pytest.warns(PrivacyLeakWarning):
            rel = private_frechet_mean(Sphere(2), data, epsilon=1.0, mode="paper", rng=0)
        assert rel.assumptions["radius"]["source"] == "data" and not rel.private

    def test_outliers_are_projected(self, data, rng):
        m = Sphere(2)
        bad = np.concatenate([data, -NORTH[None]])  # an antipodal outlier
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            rel = private_frechet_mean(m, bad, epsilon=1e6, radius=np.pi / 8, center=NORTH,
                                       rng=rng)
        assert m.dist(rel.values["mean"][0], NORTH) < np.pi / 8

    def test_spd_small_epsilon_restricts_support(self):
        y = make_mean_data(SPD(2), 20, radius=1.5, rng=0)
        rel = private_frechet_mean(SPD(2), y, epsilon=0.01, radius=1.5, center=np.eye(2),
                                   rng=0, n_draws=50)
        assert np.all(SPD(2).dist(rel.values["mean"], np.eye(2)) <= 1.5 + 1e-9)
        assert any("Support restricted" in c for c in rel.caveats)


def test_strict_record_withholds_data_dependent_diagnostics(sphere_data):
    x, y = sphere_data
    rel = private_geodesic_regression(Sphere(2), x, y, eps_p=1.0, eps_v=1.0, tau=0.2,
                                      covariate_range=(0, 1), rng=0, scheme="sequential",
                                      **FAST)
    assert "acceptance_rate_mean" in rel.diagnostics["footpoint"]  # available locally
    d = rel.to_dict()["diagnostics"]
    for part in ("footpoint", "shooting_vector"):
        assert not {"acceptance_rate_mean", "step_size", "ess", "rhat"} & set(d[part])
        assert d[part]["exact"] is False
    assert any("not covered by epsilon" in c for c in rel.to_dict()["caveats"])
    with pytest.warns(PrivacyLeakWarning):
        paper = private_geodesic_regression(Sphere(2), x, y, eps_p=1.0, eps_v=1.0,
                                            mode="paper", rng=0, **FAST)
    assert "rhat" in paper.to_dict()["diagnostics"]["footpoint"]


# ------------------------------------------------------------------ several budgets at once
class TestBudgetBatch:
    KW = dict(tau=0.3, covariate_range=(0.0, 1.0), chain_length=30, burn_in=30,
              scheme="sequential")

    def test_one_budget_is_the_single_release(self, sphere_data):
        from dpcore.release import private_geodesic_regression_budgets

        x, y = sphere_data
        single = private_geodesic_regression(Sphere(2), x, y, eps_p=0.7, eps_v=1.3, rng=5,
                                             n_footpoints=2, n_vectors=3, **self.KW)
        (batch,) = private_geodesic_regression_budgets(
            Sphere(2), x, y, budgets=[(0.7, 1.3)], rng=5, n_footpoints=2, n_vectors=3,
            **self.KW)
        for key in ("footpoint", "shooting_vector", "intercept", "coef"):
            np.testing.assert_array_equal(single.values[key], batch.values[key])
        a, b = single.to_dict(), batch.to_dict()
        for key in ("epsilon", "delta", "sensitivity", "sigma", "assumptions", "diagnostics",
                    "caveats", "details"):
            assert a[key] == b[key]

    def test_each_release_carries_its_own_budget_and_diagnostics(self, sphere_data):
        from dpcore.release import private_geodesic_regression_budgets

        x, y = sphere_data
        budgets = [(0.05, 0.05), (0.5, 1.0), (4.0, 4.0)]
        releases = private_geodesic_regression_budgets(
            Sphere(2), x, y, budgets=budgets, rng=1, n_footpoints=3, n_vectors=2, **self.KW)
        assert len(releases) == 3
        steps = []
        for rel, (ep, ev) in zip(releases, budgets, strict=True):
            check_record(rel)
            assert rel.details["epsilon_p"] == ep and rel.details["epsilon_v"] == ev
            assert rel.epsilon == pytest.approx(3 * ep + 6 * ev)
            assert rel.values["shooting_vector"].shape == (3, 2, 3)
            d = rel.diagnostics["footpoint"]
            assert d["n_chains"] == 3 and np.ndim(d["step_size"]) == 0
            steps.append(d["step_size"])
            assert rel.diagnostics["shooting_vector"]["n_chains"] == 6
        # smaller budgets -> larger sigma -> larger tuned steps, per budget
        assert steps[0] > steps[1] > steps[2]
        assert releases[0].sigma["footpoint"] == pytest.approx(80 * releases[2].sigma["footpoint"])

    @pytest.mark.statistical
    def test_batched_draws_are_distributed_as_separate_ones(self, sphere_data):
        """Footpoint distances to the non-private fit: a budget's draws from a batched run and
        from its own run agree (two-sample KS), and differ from another budget's."""
        from dpcore.release import private_geodesic_regression_budgets

        from .sampling.reference import P_THRESHOLD, ks2_pvalue

        x, y = sphere_data
        kw = dict(self.KW, n_footpoints=400, n_vectors=1, chain_length=60, burn_in=60)
        fit = GeodesicRegression(Sphere(2), covariate_range=(0.0, 1.0)).fit(x, y)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            batch = private_geodesic_regression_budgets(
                Sphere(2), x, y, budgets=[(5.0, 1.0), (20.0, 1.0)], rng=11, **kw)
            alone = private_geodesic_regression(Sphere(2), x, y, eps_p=5.0, eps_v=1.0, rng=12,
                                                **kw)

        def dist(rel):
            return Sphere(2).dist(fit.footpoint_, rel.values["footpoint"])

        assert ks2_pvalue(dist(batch[0]), dist(alone)) > P_THRESHOLD
        assert ks2_pvalue(dist(batch[1]), dist(alone)) < P_THRESHOLD

    def test_exact_euclidean_path_and_validation(self):
        from dpcore.release import private_geodesic_regression_budgets

        x, y = make_regression_data(Euclidean(2), 30, rng=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            releases = private_geodesic_regression_budgets(
                Euclidean(2), x, y, budgets=[(0.5, 0.5), (2.0, 2.0)], mode="paper", rng=0)
        assert all(r.diagnostics["footpoint"]["exact"] for r in releases)
        with pytest.raises(ValueError, match="at least one"):
            private_geodesic_regression_budgets(Euclidean(2), x, y, budgets=[])
        with pytest.raises(ValueError, match="eps_v"):
            private_geodesic_regression_budgets(Euclidean(2), x, y, budgets=[(1.0, -1.0)])


# ------------------------------------------------------------------ joint scheme (DESIGN §8)
class TestJointScheme:
    def test_record(self, sphere_data):
        x, y = sphere_data
        rel = private_geodesic_regression(Sphere(2), x, y, eps_p=0.4, eps_v=0.6, tau=0.3,
                                          covariate_range=(0.0, 1.0), rng=2, n_footpoints=2,
                                          n_vectors=3, chain_length=40, burn_in=40,
                                          scheme="joint", sampler="mcmc")
        check_record(rel)
        assert rel.mechanism == "kng_joint" and rel.details["scheme"] == "joint"
        assert rel.values["footpoint"].shape == (6, 3)
        assert rel.values["shooting_vector"].shape == (6, 1, 3)
        assert rel.epsilon == pytest.approx(6 * 1.0)
        dp, dv = rel.sensitivity["footpoint"], rel.sensitivity["shooting_vector"]
        assert rel.sensitivity["joint"] == pytest.approx(np.hypot(dp, dv))
        assert rel.sigma["joint"] == pytest.approx(2 * rel.sensitivity["joint"] / 1.0)
        assert not any("Sequential scheme" in c for c in rel.caveats)
        assert any("MCMC" in c for c in rel.caveats)
        assert set(rel.diagnostics) == {"joint"}
        assert rel.guarantee == "approximately private" and rel.delta is None

    def test_exact_release_is_private(self, sphere_data):
        x, y = sphere_data
        rel = private_geodesic_regression(Sphere(2), x[:20], y[:20], eps_p=0.5, eps_v=0.5,
                                          tau=0.3, covariate_range=(0.0, 1.0), n_footpoints=3)
        check_record(rel)
        assert rel.details["scheme"] == "joint" and rel.diagnostics["joint"]["exact"]
        assert rel.private and rel.label == "private" and rel.delta == 0.0
        assert not any("MCMC" in c for c in rel.caveats)
        # the acceptance rate depends on the data: kept out of the public record
        assert "acceptance" in rel.diagnostics["joint"]
        assert "acceptance" not in rel.to_dict()["diagnostics"]["joint"]

    def test_strict_spd_respects_the_supports(self):
        m = SPD(2)
        x, y = make_regression_data(m, 30, rng=5)
        rel = private_geodesic_regression(m, x, y, eps_p=0.01, eps_v=0.01, tau=0.5, tau_m=2.0,
                                          covariate_range=(0.0, 1.0), rng=5, n_footpoints=8,
                                          chain_length=60, burn_in=60, scheme="joint")
        assert np.all(m.dist(np.eye(2), rel.values["footpoint"]) <= 2.5 * (1 + 1e-9))
        speeds = m.norm(rel.values["footpoint"][:, None], rel.values["shooting_vector"])
        assert np.all(speeds <= rel.assumptions["max_speed"]["value"] * (1 + 1e-9))

    def test_unknown_scheme(self, sphere_data):
        x, y = sphere_data
        with pytest.raises(ValueError, match="scheme"):
            private_geodesic_regression(Sphere(2), x, y, eps_p=1.0, eps_v=1.0, tau=0.3,
                                        covariate_range=(0.0, 1.0), scheme="parallel")

    def test_budgets_batch_supports_joint(self, sphere_data):
        from dpcore.release import private_geodesic_regression_budgets

        x, y = sphere_data
        rels = private_geodesic_regression_budgets(
            Sphere(2), x, y, budgets=[(0.2, 0.2), (2.0, 2.0)], tau=0.3,
            covariate_range=(0.0, 1.0), rng=0, n_footpoints=2, chain_length=30, burn_in=30,
            scheme="joint")
        assert [r.mechanism for r in rels] == ["kng_joint"] * 2
        assert rels[0].sigma["joint"] == pytest.approx(10 * rels[1].sigma["joint"])
