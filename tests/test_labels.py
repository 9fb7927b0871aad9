"""A release's label follows from what is proven for it (DESIGN §12, issue 11): one test per
combination of mechanism, sampler, scheme and source of the bounds."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpcore.data import make_mean_data, make_regression_data
from dpcore.exceptions import (
    ApproximatePrivacyWarning,
    ExactSamplingUnavailable,
    PrivacyLeakWarning,
)
from dpcore.manifolds import SPD, Euclidean, Sphere
from dpcore.release import (
    plan_regression_sampler,
    private_frechet_mean,
    private_geodesic_regression,
)

NORTH = np.array([0.0, 0.0, 1.0])
QUICK = {"chain_length": 40, "burn_in": 40}
MCMC_LABEL = "approximately private (MCMC; δ not certified)"


@pytest.fixture(scope="module")
def small():
    return make_regression_data(Sphere(2), 15, noise=0.01, rng=0)


def regression(data, **kw):
    x, y = data
    args = dict(eps_p=0.5, eps_v=0.5, tau=0.3, covariate_range=(0.0, 1.0), **QUICK)
    args.update(kw)
    return private_geodesic_regression(Sphere(2), x, y, **args)


class TestRegression:
    def test_strict_joint_exact_is_private(self, small):
        rel = regression(small)
        assert rel.guarantee == "private" and rel.private and rel.label == "private"
        assert rel.delta == 0.0 and rel.diagnostics["joint"]["exact"]
        assert rel.to_dict()["label"] == "private" and rel.to_dict()["private"] is True

    def test_seeded_exact(self, small):
        rel = regression(small, rng=3)
        assert rel.private and rel.label == "private mechanism, seeded: not for publication"

    def test_strict_joint_mcmc_is_approximate(self, small):
        rel = regression(small, sampler="mcmc")
        assert not rel.private and rel.guarantee == "approximately private"
        assert rel.label == MCMC_LABEL and rel.delta is None
        seeded = regression(small, sampler="mcmc", rng=1)
        assert seeded.label == MCMC_LABEL + ", seeded: not for publication"

    def test_auto_falls_back_to_mcmc_beyond_the_public_budget(self, small):
        with pytest.warns(ApproximatePrivacyWarning, match="max_exact_work"):
            rel = regression(small, eps_p=20.0, eps_v=20.0)
        assert rel.label == MCMC_LABEL

    def test_strict_sequential_is_not_covered(self, small):
        rel = regression(small, scheme="sequential")
        assert rel.guarantee == "not covered" and not rel.private
        assert rel.label.startswith("NOT PRIVATE (sequential scheme")
        with pytest.raises(ExactSamplingUnavailable):
            regression(small, scheme="sequential", sampler="exact")

    def test_paper_mode_is_not_private(self, small):
        x, y = small
        with pytest.warns(PrivacyLeakWarning):
            rel = private_geodesic_regression(Sphere(2), x, y, eps_p=1.0, eps_v=1.0,
                                              mode="paper", **QUICK)
        assert rel.guarantee == "not private" and rel.label.startswith("NOT PRIVATE (paper")
        assert rel.details["scheme"] == "sequential"  # the papers' scheme

    def test_no_exact_sampler_on_spd3(self):
        x, y = make_regression_data(SPD(3), 12, rng=1)
        with pytest.raises(ExactSamplingUnavailable, match="sampler='mcmc'"):
            private_geodesic_regression(SPD(3), x, y, eps_p=1, eps_v=1, tau=0.3, tau_m=2.0,
                                        covariate_range=(0, 1), sampler="exact", **QUICK)

    @pytest.mark.parametrize("eps", [0.5, 20.0])
    def test_plan_matches_the_release(self, small, eps):
        x, _ = small
        plan = plan_regression_sampler(Sphere(2), len(x), eps_p=eps, eps_v=eps, tau=0.3,
                                       draws=1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ApproximatePrivacyWarning)
            rel = regression(small, eps_p=eps, eps_v=eps)
        assert plan["guarantee"] == rel.guarantee
        assert plan["exact"] == rel.diagnostics["joint"]["exact"]


class TestFrechetMean:
    @pytest.fixture(scope="class")
    def pts(self):
        return make_mean_data(Sphere(2), 12, radius=0.4, rng=2)

    def release(self, pts, **kw):
        args = dict(radius=0.4, center=NORTH, **QUICK)
        args.update(kw)
        return private_frechet_mean(Sphere(2), pts, **args)

    @pytest.mark.parametrize("mechanism", ["laplace", "ambient_laplace"])
    def test_closed_form_samplers_are_private(self, pts, mechanism):
        rel = self.release(pts, epsilon=1.0, mechanism=mechanism)
        assert rel.private and rel.label == "private" and rel.delta == 0.0

    def test_kng_exact_is_private_and_mcmc_approximate(self, pts):
        rel = self.release(pts, epsilon=1.0, mechanism="kng")
        assert rel.private and rel.diagnostics["exact"] and rel.delta == 0.0
        rel = self.release(pts, epsilon=1.0, mechanism="kng", sampler="mcmc")
        assert rel.label == MCMC_LABEL and rel.delta is None

    def test_gaussian_calibrated_by_monte_carlo_is_approximate(self, pts):
        rel = self.release(pts, mu=1.0, mechanism="gaussian")
        assert rel.guarantee == "approximately private"
        assert "Monte Carlo" in rel.label and any("not a proof" in c for c in rel.caveats)

    @pytest.mark.parametrize("manifold", [Euclidean(2), Sphere(1)])
    def test_gaussian_with_proven_mu_is_private(self, manifold):
        y = make_mean_data(manifold, 12, radius=0.4, rng=3)
        center = np.zeros(2) if isinstance(manifold, Euclidean) else np.array([1.0, 0.0])
        rel = private_frechet_mean(manifold, y, mu=1.0, mechanism="gaussian", radius=0.4,
                                   center=center)
        assert rel.private and rel.label == "private"

    def test_spd3_laplace_eigen_radii_by_mcmc_are_approximate(self):
        y = make_mean_data(SPD(3), 10, radius=0.5, rng=4)
        rel = private_frechet_mean(SPD(3), y, epsilon=1.0, radius=0.5, center=np.eye(3))
        assert rel.label == MCMC_LABEL and rel.delta is None
