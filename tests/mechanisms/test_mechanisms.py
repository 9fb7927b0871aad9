"""Mechanisms: one contract for every mechanism, plus exactness and privacy checks."""

import json

import numpy as np
import pytest
from scipy import stats

from dpcore.manifolds import SPD, Euclidean, KendallShape, Sphere
from dpcore.mechanisms import (
    AmbientLaplace,
    KNormGradient,
    RiemannianGaussian,
    RiemannianLaplace,
    embed,
)
from dpcore.mechanisms.laplace import unembed

#: Reject a distributional null hypothesis only below this p-value (false failure < 1e-6).
P_FAIL = 1e-6
NORTH = np.array([0.0, 0.0, 1.0])


def make_laplace(manifold, **kw):
    return RiemannianLaplace(manifold=manifold, epsilon=kw.get("epsilon", 1.0),
                             sensitivity=kw.get("sensitivity", 0.1))


def make_gaussian(manifold, **kw):
    return RiemannianGaussian(manifold=manifold, sensitivity=kw.get("sensitivity", 0.1),
                              sigma=kw.get("sigma", 0.2), mc_samples=500, mc_repeats=5)


def make_ambient(manifold, **kw):
    return AmbientLaplace(manifold=manifold, epsilon=kw.get("epsilon", 1.0),
                          sensitivity=kw.get("sensitivity", 0.1))


class MechanismContract:
    """Shared checks: keyword-only construction, validation, shapes, seeding, JSON guarantee."""

    factory = None
    manifolds = ()

    @pytest.fixture(params=range(3))
    def manifold(self, request):
        if request.param >= len(self.manifolds):
            pytest.skip("this mechanism is defined on fewer manifolds")
        return self.manifolds[request.param]

    def statistic(self, manifold, rng):
        return manifold.random_point(rng=rng)

    def test_keyword_only(self, manifold):
        cls = type(type(self).factory(manifold))
        with pytest.raises(TypeError):
            cls(manifold, 1.0, 0.1)

    def test_bad_parameters_rejected(self, manifold):
        for bad in (-1.0, 0.0, np.inf, np.nan):
            with pytest.raises(ValueError):
                type(self).factory(manifold, sensitivity=bad)
        with pytest.raises(TypeError):
            type(self).factory(manifold, sensitivity="0.1")

    def test_release_shapes_and_seed(self, manifold, rng):
        mech = type(self).factory(manifold)
        s = self.statistic(manifold, rng)
        one = mech.release(s, rng=1)
        assert one.values.shape == manifold.point_shape
        many = mech.release(s, size=(4, 3), rng=1)
        assert many.values.shape == (4, 3, *manifold.point_shape)
        again = mech.release(s, size=(4, 3), rng=1)
        np.testing.assert_array_equal(many.values, again.values)
        assert not np.array_equal(mech.release(s, size=3).values, mech.release(s, size=3).values)

    def test_guarantee_is_json(self, manifold):
        g = type(self).factory(manifold).guarantee()
        json.dumps(g.as_dict())
        assert g.sensitivity > 0 and g.sigma > 0


class TestRiemannianLaplace(MechanismContract):
    factory = staticmethod(make_laplace)
    manifolds = (Sphere(2), SPD(2), KendallShape(5))

    def test_sigma_rule(self):
        mech = RiemannianLaplace(manifold=Sphere(2), epsilon=0.5, sensitivity=0.1)
        assert mech.sigma == pytest.approx(0.2)
        restricted = RiemannianLaplace(manifold=Sphere(2), epsilon=0.5, sensitivity=0.1,
                                       support=(NORTH, 1.0))
        assert restricted.sigma == pytest.approx(0.4)  # normalizer depends on the centre

    def test_non_integrable_needs_support(self):
        with pytest.raises(ValueError, match="infinite mass"):
            RiemannianLaplace(manifold=SPD(2), epsilon=0.01, sensitivity=1.0)
        mech = RiemannianLaplace(manifold=SPD(2), epsilon=0.01, sensitivity=1.0,
                                 support=(np.eye(2), 1.5))
        draws = mech.release(np.eye(2), size=200, rng=0).values
        assert np.all(SPD(2).dist(draws, np.eye(2)) <= 1.5 + 1e-9)

    @pytest.mark.statistical
    def test_neighbouring_probabilities_within_e_eps(self):
        """For adjacent datasets the statistic moves by at most Delta; the probability of any
        region may then change by at most e^eps. The region beyond m away from m' is where the
        ratio is largest (it tends to e^eps), so the check is tight, and a mechanism with 1.5x
        too little noise fails it."""
        m = Sphere(2)
        eps, delta = 1.0, 0.2
        m1 = NORTH
        m2 = m.exp(m1, np.array([delta, 0.0, 0.0]))
        # region: points whose distance to m2 exceeds their distance to m1 by > 0.95 Delta
        def region(y):
            return m.dist(y, m2) - m.dist(y, m1) > 0.95 * delta

        n = 400_000

        def ratio_bound(mech):
            p1 = region(mech.release(m1, size=n, rng=11).values).mean()
            p2 = region(mech.release(m2, size=n, rng=12).values).mean()
            se = np.sqrt(p1 * (1 - p1) / n + np.exp(2 * eps) * p2 * (1 - p2) / n)
            return p1 - np.exp(eps) * p2, se

        excess, se = ratio_bound(RiemannianLaplace(manifold=m, epsilon=eps, sensitivity=delta))
        assert excess <= 5.3 * se  # one-sided normal tail 5.8e-8
        too_little_noise = RiemannianLaplace(manifold=m, epsilon=1.5 * eps, sensitivity=delta)
        excess_bad, se_bad = ratio_bound(too_little_noise)
        assert excess_bad > 5.3 * se_bad


class TestRiemannianGaussian(MechanismContract):
    factory = staticmethod(make_gaussian)
    manifolds = (Sphere(2), Euclidean(2), Sphere(1))

    def test_mu_exact_in_flat_space(self):
        mech = RiemannianGaussian(manifold=Euclidean(3), sensitivity=0.5, sigma=2.0)
        assert mech.mu == pytest.approx(0.25)
        assert mech.guarantee().mu_standard_error == 0.0

    def test_calibration_round_trip(self):
        mech = RiemannianGaussian(manifold=Sphere(1), sensitivity=1.0, mu=1.0)
        back = RiemannianGaussian(manifold=Sphere(1), sensitivity=1.0, sigma=mech.sigma)
        assert back.mu == pytest.approx(1.0, rel=1e-3)

    def test_needs_exactly_one_of_mu_sigma(self):
        with pytest.raises(ValueError):
            RiemannianGaussian(manifold=Sphere(2), sensitivity=0.1)
        with pytest.raises(ValueError):
            RiemannianGaussian(manifold=Sphere(2), sensitivity=0.1, mu=1.0, sigma=1.0)


class TestAmbientLaplace(MechanismContract):
    factory = staticmethod(make_ambient)
    manifolds = (Sphere(2), SPD(2), Euclidean(3))

    def test_embedding_is_isometric(self, rng):
        a, b = SPD(3).random_point(2, rng)
        assert np.linalg.norm(embed(SPD(3), a) - embed(SPD(3), b)) == pytest.approx(
            np.linalg.norm(a - b))
        np.testing.assert_allclose(unembed(SPD(3), embed(SPD(3), a)), a)

    def test_sphere_releases_always_leave(self, rng):
        res = AmbientLaplace(manifold=Sphere(2), epsilon=1.0, sensitivity=0.1).release(
            NORTH, size=100, rng=rng)
        assert res.diagnostics["fraction_left_manifold"] == 1.0
        np.testing.assert_allclose(np.linalg.norm(res.values, axis=-1), 1.0)

    def test_spd_leaves_when_noise_is_large(self, rng):
        res = AmbientLaplace(manifold=SPD(2), epsilon=0.1, sensitivity=1.0, project=False).release(
            np.eye(2), size=2000, rng=rng)
        frac = res.diagnostics["fraction_left_manifold"]
        assert 0.05 < frac < 1.0
        left = res.diagnostics["left_manifold"]
        assert np.all(np.linalg.eigvalsh(res.values[left])[:, 0] <= 0)

    @pytest.mark.statistical
    def test_noise_radius_is_gamma(self):
        """||noise|| / sigma ~ Gamma(D, 1): KS against the exact CDF."""
        mech = AmbientLaplace(manifold=Euclidean(3), epsilon=2.0, sensitivity=1.0)
        r = np.linalg.norm(mech.release(np.zeros(3), size=20000, rng=5).values, axis=-1)
        assert stats.kstest(r / mech.sigma, stats.gamma(3).cdf).pvalue > P_FAIL
        assert stats.kstest(r / mech.sigma, stats.gamma(3, scale=1.1).cdf).pvalue < P_FAIL


class TestKNormGradient:
    def test_sigma_rules(self):
        rig = KNormGradient(manifold=Sphere(2), epsilon=0.5, sensitivity=0.1)
        pap = KNormGradient(manifold=Sphere(2), epsilon=0.5, sensitivity=0.1, sigma_rule="paper")
        assert rig.sigma == pytest.approx(2 * pap.sigma) and pap.sigma == pytest.approx(0.2)
        assert rig.guarantee(exact=False).delta == pytest.approx(1 / rig.chain_length)
        assert rig.guarantee(exact=True).delta == 0.0
        with pytest.raises(ValueError):
            KNormGradient(manifold=Sphere(2), epsilon=0.5, sensitivity=0.1, sigma_rule="loose")
        with pytest.raises(TypeError):
            KNormGradient(Sphere(2), 0.5, 0.1)

    @pytest.mark.statistical
    def test_mcmc_matches_exact_on_euclidean_frechet(self):
        """On R^2 the Fréchet-energy KNG is a K-norm Laplace at the mean: the generic MCMC path
        and the exact sampler agree (two-sample KS on the distance to the mean)."""
        m = Euclidean(2)
        pts = np.random.default_rng(0).normal(size=(30, 2))
        mean = pts.mean(axis=0)
        mech = KNormGradient(manifold=m, epsilon=1.0, sensitivity=0.5, chain_length=400,
                             burn_in=300)
        exact = mech.frechet_mean(pts, mean, size=3000, rng=1)
        assert exact.exact
        mcmc = mech.sample(lambda z: np.linalg.norm(z - mean, axis=-1), mean, size=3000, rng=2)
        assert not mcmc.exact
        d_exact = np.linalg.norm(exact.values - mean, axis=-1)
        d_mcmc = np.linalg.norm(mcmc.values - mean, axis=-1)
        assert stats.ks_2samp(d_exact, d_mcmc).pvalue > P_FAIL
        # power: a 15% wider exact sample is detected
        assert stats.ks_2samp(1.15 * d_exact, d_mcmc).pvalue < P_FAIL

    def test_sphere_frechet_kng_concentrates(self, rng):
        m = Sphere(2)
        pts = m.exp(NORTH, 0.2 * m.random_tangent(np.broadcast_to(NORTH, (40, 3)), rng))
        mean = pts.mean(axis=0) / np.linalg.norm(pts.mean(axis=0))
        mech = KNormGradient(manifold=m, epsilon=50.0, sensitivity=0.05, chain_length=300,
                             burn_in=300)
        res = mech.frechet_mean(pts, mean, size=20, rng=rng, support=(NORTH, 1.0))
        assert res.values.shape == (20, 3)
        assert np.all(m.dist(res.values, mean) < 0.05)
        assert 0.1 < res.diagnostics["acceptance_rate_mean"] < 0.8
