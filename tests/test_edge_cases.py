"""Numerical edge cases end to end (issue 6, point 3): clear errors or correct results.

Antipodal points on the sphere, nearly singular SPD matrices, very small and very large ε,
n = 2 and constant covariates, through the geometry, the estimators and the releases.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import linalg, stats

from dpcore.data import make_mean_data, make_regression_data
from dpcore.exceptions import PrivacyLeakWarning
from dpcore.learning import GeodesicRegression, frechet_mean
from dpcore.learning.frechet import ConvergenceWarning
from dpcore.manifolds import SPD, CutLocusError, Sphere
from dpcore.release import private_frechet_mean, private_geodesic_regression
from dpcore.sensitivity import frechet_mean_sensitivity, geodesic_regression_sensitivity

from .sampling.reference import P_THRESHOLD

S2 = Sphere(2)
NORTH = np.array([0.0, 0.0, 1.0])
EAST = np.array([1.0, 0.0, 0.0])
QUICK = {"chain_length": 60, "burn_in": 60}


@pytest.fixture(scope="module")
def sphere_regression():
    return make_regression_data(S2, 30, rng=8)


# ============================================================================ antipodal points
class TestAntipodal:
    def test_log_is_a_clear_error_and_distance_is_pi(self):
        with pytest.raises(CutLocusError, match="antipodal"):
            S2.log(NORTH, -NORTH)
        assert issubclass(CutLocusError, ValueError)  # pages report ValueErrors with st.error
        assert S2.dist(NORTH, -NORTH) == pytest.approx(np.pi, abs=1e-12)

    def test_frechet_mean_of_an_antipodal_pair_is_not_unique(self):
        with pytest.raises(ValueError, match="not unique"):
            frechet_mean(S2, np.array([NORTH, -NORTH]))

    def test_frechet_mean_steps_around_an_antipodal_start(self):
        # The first data point is antipodal to the second; the mean (by symmetry EAST) is
        # still found, starting from the third point.
        mean = frechet_mean(S2, np.array([NORTH, -NORTH, EAST]))
        np.testing.assert_allclose(mean, EAST, atol=1e-9)

    def test_frechet_mean_rejects_an_antipodal_init(self):
        with pytest.raises(ValueError, match="init"):
            frechet_mean(S2, np.array([NORTH, EAST]), init=-NORTH)

    def test_regression_on_antipodal_responses_is_a_clear_error(self):
        y = np.array([NORTH, -NORTH, NORTH])
        with pytest.raises(ValueError, match="Geodesic regression cannot start") as info:
            GeodesicRegression(S2).fit([0.0, 1.0, 2.0], y)
        assert not isinstance(info.value, CutLocusError)

    def test_strict_release_projects_antipodal_outliers_into_the_ball(self, rng):
        y = make_mean_data(S2, 20, radius=0.3, rng=rng)
        y[:3] = -y[:3]  # three points antipodal to data points, far outside the public ball
        rel = private_frechet_mean(S2, y, epsilon=1.0, radius=0.3, center=NORTH, rng=rng)
        value = np.asarray(rel.values["mean"])[0]
        assert np.isfinite(value).all() and np.linalg.norm(value) == pytest.approx(1.0)
        assert rel.sensitivity["mean"] == pytest.approx(frechet_mean_sensitivity(20, 0.3, 1.0))

    def test_paper_mode_with_antipodal_data_names_the_radius_condition(self):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            with pytest.raises(ValueError, match="radius"):
                private_frechet_mean(S2, np.array([NORTH, -NORTH, EAST]), epsilon=1.0,
                                     mode="paper", rng=0)


# ======================================================================= nearly singular SPD
class TestNearlySingularSPD:
    @pytest.mark.parametrize("cond", [1e6, 1e10, 1e13])
    def test_geometry_matches_generalized_eigenvalues(self, cond, rng):
        m = SPD(2)
        q, _ = np.linalg.qr(rng.standard_normal((2, 2)))
        a = q @ np.diag([1.0, 1.0 / cond]) @ q.T
        b = m.random_point(rng=rng)
        # closed form: d(A, B)^2 = sum log^2 of the generalized eigenvalues of (B, A). Storing
        # A rounds its entries by eps, which moves its small eigenvalue by a relative
        # cond * eps: that is the accuracy any method can reach, so it sets the tolerance.
        expected = np.sqrt(np.sum(np.log(linalg.eigh(b, a, eigvals_only=True)) ** 2))
        noise = 10 * cond * np.finfo(float).eps
        assert m.dist(a, b) == pytest.approx(expected, rel=1e-9, abs=noise)
        back = m.exp(a, m.log(a, b))
        np.testing.assert_allclose(back, b, rtol=max(1e-8, noise), atol=1e-12)
        assert np.all(np.linalg.eigvalsh(m.exp(a, 0.5 * m.log(a, b))) > 0)

    def test_frechet_mean_of_nearly_singular_matrices(self):
        m = SPD(2)
        eps = 1e-9
        y = np.array([[[1.0, 1.0 - eps], [1.0 - eps, 1.0]], [[1.0, 1.0 - 2 * eps],
                                                              [1.0 - 2 * eps, 1.0]]])
        # The logs of matrices with condition number 1e9 carry rounding errors of about
        # 1e-7, so the default gradient tolerance 1e-10 cannot be met (ConvergenceWarning);
        # the mean is still accurate to that level.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            mean = frechet_mean(m, y)
        assert np.all(np.linalg.eigvalsh(mean) > 0)
        # both matrices share the eigenvector (1, 1); the mean is the geometric mean of the
        # eigenvalues: 2 - eps * 1.5 roughly and sqrt(eps * 2 eps)
        small = np.linalg.eigvalsh(mean)[0]
        assert small == pytest.approx(np.sqrt(eps * 2 * eps), rel=1e-4)

    def test_strict_release_on_nearly_singular_data(self, rng):
        m = SPD(2)
        y = make_mean_data(m, 20, radius=0.5, rng=rng)
        y[0] = np.array([[1.0, 1.0 - 1e-12], [1.0 - 1e-12, 1.0]])  # condition number ~ 2e12
        rel = private_frechet_mean(m, y, epsilon=1.0, radius=0.5, center=np.eye(2), rng=rng,
                                   n_draws=20)
        values = np.asarray(rel.values["mean"])
        assert np.all(np.linalg.eigvalsh(values) > 0)


# =========================================================================== very small epsilon
class TestTinyEpsilon:
    @pytest.mark.statistical
    def test_sphere_laplace_covers_the_whole_sphere(self, rng, monkeypatch):
        """σ = Δ/ε ≈ 1e8: the release is uniform on S², whose distance to any fixed point has
        CDF (1 - cos r)/2 on [0, π] (antipodes included)."""
        monkeypatch.setenv("DPCORE_MAX_REPLICATES", "20000")  # many draws for the KS test
        y = make_mean_data(S2, 20, radius=0.3, rng=rng)
        rel = private_frechet_mean(S2, y, epsilon=1e-9, radius=0.3, center=NORTH, rng=rng,
                                   n_draws=20_000)
        d = S2.dist(frechet_mean(S2, y), np.asarray(rel.values["mean"]))
        assert d.max() > np.pi - 0.1
        assert stats.kstest(d, lambda r: (1 - np.cos(r)) / 2).pvalue > P_THRESHOLD

    def test_spd_laplace_is_restricted_to_the_public_ball(self, rng, monkeypatch):
        monkeypatch.setenv("DPCORE_MAX_REPLICATES", "2000")
        m = SPD(2)
        y = make_mean_data(m, 20, radius=0.5, rng=rng)
        rel = private_frechet_mean(m, y, epsilon=1e-9, radius=0.5, center=np.eye(2), rng=rng,
                                   n_draws=2000)
        d = m.dist(np.eye(2), np.asarray(rel.values["mean"]))
        assert d.max() <= 0.5 * (1 + 1e-9)
        assert d.max() > 0.45  # and it fills the ball
        assert any("public ball" in c for c in rel.caveats)

    def test_sphere_regression_stays_finite_and_within_the_speed_cap(self, sphere_regression):
        x, y = sphere_regression
        rel = private_geodesic_regression(S2, x, y, eps_p=1e-9, eps_v=1e-9, tau=0.3,
                                          covariate_range=(0.0, 1.0), rng=1, n_footpoints=4,
                                          n_vectors=4, **QUICK)
        assert np.isfinite(rel.values["footpoint"]).all()
        speeds = np.linalg.norm(rel.values["shooting_vector"], axis=-1)
        assert np.all(speeds <= rel.assumptions["max_speed"]["value"] * (1 + 1e-9))

    def test_spd_regression_footpoints_stay_in_the_public_ball(self):
        m = SPD(2)
        x, y = make_regression_data(m, 30, rng=2)
        rel = private_geodesic_regression(m, x, y, eps_p=1e-9, eps_v=1e-9, tau=0.5, tau_m=2.0,
                                          covariate_range=(0.0, 1.0), rng=2, n_footpoints=6,
                                          n_vectors=2, **QUICK)
        d = m.dist(np.eye(2), rel.values["footpoint"])
        assert np.all(d <= (2.0 + 0.5) * (1 + 1e-9))
        assert np.all(np.linalg.eigvalsh(rel.values["footpoint"]) > 0)


# =========================================================================== very large epsilon
class TestHugeEpsilon:
    def test_sphere_mean_release_is_the_mean(self, rng):
        y = make_mean_data(S2, 20, radius=0.3, rng=rng)
        rel = private_frechet_mean(S2, y, epsilon=1e9, radius=0.3, center=NORTH, rng=rng,
                                   n_draws=10)
        assert np.all(S2.dist(frechet_mean(S2, y), np.asarray(rel.values["mean"])) < 1e-8)

    def test_spd_mean_release_is_the_mean(self, rng):
        m = SPD(2)
        y = make_mean_data(m, 20, radius=0.5, rng=rng)
        rel = private_frechet_mean(m, y, epsilon=1e9, radius=0.5, center=np.eye(2), rng=rng,
                                   n_draws=10)
        assert np.all(m.dist(frechet_mean(m, y), np.asarray(rel.values["mean"])) < 1e-8)

    def test_regression_release_approaches_the_fit(self, sphere_regression):
        x, y = sphere_regression
        fit = GeodesicRegression(S2, covariate_range=(0.0, 1.0)).fit(x, y)
        # Numerical behaviour of the chains at a huge budget: the sequential scheme's chains
        # start at the fit (the strict joint scheme's MCMC starts at a public point instead).
        rel = private_geodesic_regression(S2, x, y, eps_p=1e7, eps_v=1e7, tau=0.3,
                                          covariate_range=(0.0, 1.0), rng=3, n_footpoints=3,
                                          n_vectors=3, chain_length=300, burn_in=300,
                                          scheme="sequential")
        assert np.all(S2.dist(fit.footpoint_, rel.values["footpoint"]) < 1e-3)
        v_fit = S2.transport(fit.footpoint_, rel.values["footpoint"][:, None],
                             fit.shooting_vector_)
        assert np.all(np.linalg.norm(rel.values["shooting_vector"] - v_fit, axis=-1) < 1e-2)


# ============================================================================ tiny samples
class TestTwoObservations:
    def test_regression_with_two_points(self, sphere_regression):
        x, y = sphere_regression
        rel = private_geodesic_regression(S2, x[:2], y[:2], eps_p=1.0, eps_v=1.0, tau=0.3,
                                          covariate_range=(0.0, 1.0), rng=4, **QUICK)
        dp, dv = geodesic_regression_sensitivity(2, 0.3, 1.0)
        assert rel.sensitivity == {"footpoint": dp, "shooting_vector": dv,
                                   "joint": pytest.approx(np.hypot(dp, dv))}
        assert np.isfinite(rel.values["shooting_vector"]).all()

    def test_mean_with_two_points(self, rng):
        y = make_mean_data(S2, 2, radius=0.3, rng=rng)
        rel = private_frechet_mean(S2, y, epsilon=1.0, radius=0.3, center=NORTH, rng=rng)
        assert rel.sensitivity["mean"] == pytest.approx(frechet_mean_sensitivity(2, 0.3, 1.0))

    @pytest.mark.parametrize("release", ["regression", "mean"])
    def test_one_point_is_refused(self, release, sphere_regression):
        x, y = sphere_regression
        with pytest.raises(ValueError, match="at least 2 observations"):
            if release == "regression":
                private_geodesic_regression(S2, x[:1], y[:1], eps_p=1.0, eps_v=1.0, tau=0.3,
                                            covariate_range=(0.0, 1.0), rng=0, **QUICK)
            else:
                private_frechet_mean(S2, y[:1], epsilon=1.0, radius=0.3, center=NORTH, rng=0)


# ======================================================================== constant covariates
class TestConstantCovariates:
    def test_fit_refuses(self, sphere_regression):
        _, y = sphere_regression
        with pytest.raises(ValueError, match="constant"):
            GeodesicRegression(S2).fit(np.full(len(y), 0.5), y)

    def test_strict_release_does_not_refuse(self, sphere_regression):
        # The mechanism is defined whatever the data (issue 11, point 4): a strict release of
        # constant covariates succeeds, exactly as for any other data set of its size.
        _, y = sphere_regression
        rel = private_geodesic_regression(S2, np.full(len(y), 0.5), y, eps_p=1.0, eps_v=1.0,
                                          tau=0.3, covariate_range=(0.0, 1.0), rng=0, **QUICK)
        assert np.all(np.isfinite(rel.values["shooting_vector"]))

    def test_paper_release_refuses(self, sphere_regression):
        _, y = sphere_regression
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            with pytest.raises(ValueError, match="covariate_range"):
                private_geodesic_regression(S2, np.full(len(y), 0.5), y, eps_p=1.0, eps_v=1.0,
                                            mode="paper", rng=0, **QUICK)

    def test_covariates_clipped_to_one_end_of_the_public_range(self, sphere_regression):
        # Covariates that differ, but all fall beyond the public range, become constant after
        # clipping: the strict release is still defined and succeeds (no data-dependent refusal).
        x, y = sphere_regression
        rel = private_geodesic_regression(S2, x + 5.0, y, eps_p=1.0, eps_v=1.0, tau=0.3,
                                          covariate_range=(0.0, 1.0), rng=0, **QUICK)
        assert np.all(np.isfinite(rel.values["footpoint"]))
