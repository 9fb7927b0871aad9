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
    APPROXIMATE_LABELS,
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
        # n eps = 15 x 80 = 1,200: beyond the whole sphere's exact reach (1,000)
        with pytest.warns(ApproximatePrivacyWarning, match="max_exact_work") as record:
            rel = regression(small, eps_p=40.0, eps_v=40.0)
        assert rel.label == MCMC_LABEL
        # without a footpoint ball the warning names the two-stage design; with one, not
        assert any("private_geodesic_regression_two_stage" in str(w.message) for w in record)
        with pytest.warns(ApproximatePrivacyWarning, match="max_exact_work") as record:
            regression(small, eps_p=40.0, eps_v=40.0, center=NORTH, footpoint_radius=1.5,
                       max_speed=3.0)
        assert not any("two_stage" in str(w.message) for w in record)

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


@pytest.fixture(scope="module")
def pts():
    """TestFrechetMean's data (a module fixture: pytest deprecates class-scoped fixtures
    defined as instance methods)."""
    return make_mean_data(Sphere(2), 12, radius=0.4, rng=2)


class TestFrechetMean:

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

    def test_gaussian_with_proven_mu_is_private(self):
        """On S¹ µ is exact (paper 004 Algorithm 1) and the draw is float-safe (lattice)."""
        y = make_mean_data(Sphere(1), 12, radius=0.4, rng=3)
        rel = private_frechet_mean(Sphere(1), y, mu=1.0, mechanism="gaussian", radius=0.4,
                                   center=np.array([1.0, 0.0]))
        assert rel.private and rel.label == "private"

    def test_gaussian_on_the_plane_is_not_float_safe(self):
        """µ = Δ/σ is exact on R², but the radial sampler's floats depend on the data (DESIGN
        §12): never "private", no δ, and the caveat says why."""
        y = make_mean_data(Euclidean(2), 12, radius=0.4, rng=3)
        rel = private_frechet_mean(Euclidean(2), y, mu=1.0, mechanism="gaussian", radius=0.4,
                                   center=np.zeros(2))
        assert not rel.private and rel.guarantee == "approximately private"
        assert rel.label == APPROXIMATE_LABELS["float"] and rel.delta is None
        assert any("Not float-safe" in c for c in rel.caveats)

    def test_spd3_laplace_eigen_radii_by_mcmc_are_approximate(self):
        y = make_mean_data(SPD(3), 10, radius=0.5, rng=4)
        rel = private_frechet_mean(SPD(3), y, epsilon=1.0, radius=0.5, center=np.eye(3))
        assert rel.label == MCMC_LABEL and rel.delta is None


@pytest.fixture(scope="module")
def line():
    rng = np.random.default_rng(11)
    x = rng.uniform(0.0, 10.0, 40)
    return x, (2.0 + 0.8 * x + rng.normal(0.0, 1.0, 40))[:, None]


class TestBoundSources:
    """``bound_sources``: a supplied bound marked as taken from the data (a dashboard field
    still holding the data's own range) makes the release not private, and in strict mode its
    label says so without claiming paper mode (DESIGN §12)."""

    KW = dict(eps_p=1.0, eps_v=1.0, tau=6.0, covariate_range=(0.0, 10.0), tau_m=9.0,
              center=np.array([6.0]))

    def release(self, line, **kw):
        x, y = line
        return private_geodesic_regression(Euclidean(1), x, y, **{**self.KW, **kw})

    @pytest.mark.parametrize("name", ["covariate_range", "tau", "tau_m", "center"])
    def test_a_data_bound_is_not_private(self, line, name):
        from dpcore.release.record import DATA_BOUNDS_CAVEAT, DATA_BOUNDS_LABEL

        with pytest.warns(PrivacyLeakWarning, match=f"taken from the data \\({name}\\)"):
            rel = self.release(line, bound_sources={name: "data"})
        assert rel.guarantee == "not private" and not rel.private and not rel.bounds_public
        assert rel.label == DATA_BOUNDS_LABEL == "NOT PRIVATE (bounds from the data)"
        assert "paper mode" not in rel.label
        assert rel.assumptions[name]["source"] == "data"
        assert "bound_sources" in rel.assumptions[name]["note"]
        others = {"covariate_range", "tau", "tau_m", "center"} - {name}
        assert all(rel.assumptions[o]["source"] != "data" for o in others)
        assert DATA_BOUNDS_CAVEAT in rel.caveats
        record = rel.to_dict()
        assert record["label"] == DATA_BOUNDS_LABEL and record["private"] is False
        assert record["assumptions"][name]["source"] == "data"
        # the supports derived from a data bound say so
        derived = rel.assumptions["max_speed"]["source"]
        assert derived == ("derived from data bounds" if name in ("tau", "tau_m") else "derived")

    def test_public_sources_change_nothing(self, line):
        with warnings.catch_warnings():
            warnings.simplefilter("error", PrivacyLeakWarning)
            plain = self.release(line, rng=4)
            marked = self.release(line, rng=4, bound_sources={
                "covariate_range": "public", "tau": "public", "tau_m": "public",
                "center": "public"})
        assert plain.private and marked.private
        assert plain.label == marked.label == "private mechanism, seeded: not for publication"
        np.testing.assert_array_equal(plain.values["coef"], marked.values["coef"])
        assert plain.to_dict()["assumptions"] == marked.to_dict()["assumptions"]

    def test_seeded_data_bound_keeps_the_not_private_label(self, line):
        from dpcore.release.record import DATA_BOUNDS_LABEL

        with pytest.warns(PrivacyLeakWarning):
            rel = self.release(line, rng=2, bound_sources={"tau": "data"})
        assert rel.seeded and rel.label == DATA_BOUNDS_LABEL

    def test_strict_sequential_with_a_data_bound(self, line):
        from dpcore.release.record import DATA_BOUNDS_CAVEAT, DATA_BOUNDS_LABEL

        with pytest.warns(PrivacyLeakWarning):
            rel = self.release(line, scheme="sequential", bound_sources={"tau_m": "data"},
                               **QUICK)
        assert rel.guarantee == "not private" and rel.label == DATA_BOUNDS_LABEL
        assert DATA_BOUNDS_CAVEAT in rel.caveats
        assert any(c.startswith("Not covered by the sensitivity proof") for c in rel.caveats)

    def test_paper_mode_keeps_its_label(self, line):
        x, y = line
        with pytest.warns(PrivacyLeakWarning):
            rel = private_geodesic_regression(Euclidean(1), x, y, eps_p=1.0, eps_v=1.0,
                                              mode="paper", covariate_range=(0.0, 10.0),
                                              bound_sources={"covariate_range": "data"},
                                              **QUICK)
        assert rel.label == "NOT PRIVATE (paper mode: bounds from the data)"
        assert rel.assumptions["covariate_range"]["source"] == "data"

    def test_budgets_pass_it_on(self, line):
        from dpcore.release import private_geodesic_regression_budgets
        from dpcore.release.record import DATA_BOUNDS_LABEL

        x, y = line
        kw = {k: v for k, v in self.KW.items() if k not in ("eps_p", "eps_v")}
        with pytest.warns(PrivacyLeakWarning):
            rels = private_geodesic_regression_budgets(
                Euclidean(1), x, y, budgets=[(0.5, 0.5), (1.0, 1.0)],
                bound_sources={"covariate_range": "data"}, **kw)
        assert [r.label for r in rels] == [DATA_BOUNDS_LABEL] * 2

    @pytest.mark.parametrize("value, error, match", [
        ({"radius": "data"}, ValueError, "unknown bound 'radius'"),
        ({"tau": "estimated"}, ValueError, "must be 'public' or 'data'"),
        (["tau"], TypeError, "must be a mapping"),
    ])
    def test_bad_values_are_refused(self, line, value, error, match):
        with pytest.raises(error, match=match):
            self.release(line, bound_sources=value)

    def test_only_a_supplied_bound_can_be_named(self):
        y = make_mean_data(Sphere(2), 12, radius=0.3, rng=5)
        x = np.linspace(0.0, 1.0, 12)
        with pytest.raises(ValueError, match="'tau_m', which was not passed"):
            private_geodesic_regression(Sphere(2), x, y, eps_p=1.0, eps_v=1.0, tau=0.3,
                                        covariate_range=(0.0, 1.0),
                                        bound_sources={"tau_m": "data"})

    def test_the_accountant_lists_it_apart(self, line):
        from dpcore.privacy import PrivacyAccountant

        acc = PrivacyAccountant(epsilon_cap=1.0)
        acc.spend(self.release(line, eps_p=0.25, eps_v=0.25))
        with pytest.warns(PrivacyLeakWarning):
            rel = self.release(line, bound_sources={"covariate_range": "data"})
        acc.spend(rel)  # 2.0 > the cap, yet not refused: it is not private, counted apart
        totals = acc.totals()
        assert totals["epsilon"] == pytest.approx(0.5) and totals["not_private"] == 1
        assert totals["releases"] == 2
