"""Accuracy before release for the Riemannian Gaussian (dpcore.release.accuracy): the predicted
median and 95% radius against quadrature and closed-form oracles, and against observed
releases.

Coverage tests: with N observed releases, the count below a predicted quantile q is
Binomial(N, q) when the prediction is exact; each test accepts the central region of that
binomial with both tails below 2.5e-7 (four counts: false-failure chance < 1e-6).
"""

import warnings

import numpy as np
import pytest
from scipy import integrate, stats

from dpcore.data import make_mean_data
from dpcore.data.synthetic import default_center
from dpcore.learning import frechet_mean
from dpcore.manifolds import Euclidean, Hyperbolic, Sphere
from dpcore.release import private_frechet_mean
from dpcore.release.accuracy import largest_gaussian_sigma, predict_gaussian_error

TAIL = 2.5e-7


def _quad_cdf(log_j, sigma, top, r):
    def f(x):
        return np.exp(-x * x / (2 * sigma * sigma) + log_j(x))

    return (integrate.quad(f, 0, r, limit=200)[0] / integrate.quad(f, 0, top, limit=200)[0])


@pytest.mark.parametrize("sigma", [0.05, 0.4, 1.0, 3.0])
def test_sphere_quantiles_match_quadrature(sigma):
    pred = predict_gaussian_error(Sphere(2), sigma)
    log_sin = lambda x: np.log(np.maximum(np.sin(x), 1e-300))  # noqa: E731
    assert _quad_cdf(log_sin, sigma, np.pi, pred["median"]) == pytest.approx(0.5, abs=1e-5)
    assert _quad_cdf(log_sin, sigma, np.pi, pred["q95"]) == pytest.approx(0.95, abs=1e-5)


def test_euclidean_radius_is_sigma_times_chi():
    pred = predict_gaussian_error(Euclidean(3), 0.7)
    assert pred["median"] == pytest.approx(0.7 * stats.chi.ppf(0.5, 3), rel=1e-5)
    assert pred["q95"] == pytest.approx(0.7 * stats.chi.ppf(0.95, 3), rel=1e-5)


def test_hyperbolic_matches_quadrature():
    pred = predict_gaussian_error(Hyperbolic(2), 1.0)
    log_sinh = lambda x: np.log(np.maximum(np.sinh(x), 1e-300))  # noqa: E731
    assert _quad_cdf(log_sinh, 1.0, 40.0, pred["median"]) == pytest.approx(0.5, abs=1e-5)
    assert _quad_cdf(log_sinh, 1.0, 40.0, pred["q95"]) == pytest.approx(0.95, abs=1e-5)


def _accept(count, n, q):
    lo = stats.binom.ppf(TAIL, n, q)
    hi = stats.binom.isf(TAIL, n, q)
    return lo <= count <= hi


@pytest.mark.parametrize("sigma", [0.1, 0.8])
def test_prediction_covers_observed_releases(sigma):
    """The page's release (a Gaussian private Fréchet mean on S² at a given σ): the share of
    2,000 observed releases within the predicted median and 95% radius is binomial."""
    m = Sphere(2)
    y = make_mean_data(m, 20, radius=0.5, rng=3)
    rels = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # seeded: not for publication
        for seed in range(11, 16):  # five requests of 400 draws (the per-request cap)
            rels.append(private_frechet_mean(m, y, sigma=sigma, mechanism="gaussian",
                                             radius=0.5, center=default_center(m),
                                             n_draws=400, rng=seed))
    from dpcore.release import project_to_ball

    mean = frechet_mean(m, project_to_ball(m, y, default_center(m), 0.5))
    d = np.concatenate([np.asarray(m.dist(np.asarray(r.values["mean"]), mean)) for r in rels])
    rel = rels[0]
    pred = predict_gaussian_error(m, sigma)
    assert rel.sigma["mean"] == sigma
    assert _accept(int(np.sum(d <= pred["median"])), d.size, 0.5)
    assert _accept(int(np.sum(d <= pred["q95"])), d.size, 0.95)
    # the prediction is not vacuous: a 30% larger sigma's median is rejected by these draws
    wrong = predict_gaussian_error(m, 1.3 * sigma)
    assert not _accept(int(np.sum(d <= wrong["median"])), d.size, 0.5)


def test_largest_sigma_meets_the_target_and_is_tight():
    for q in ("median", "q95"):
        s = largest_gaussian_sigma(Sphere(2), 0.2, quantile=q)
        assert predict_gaussian_error(Sphere(2), s)[q] <= 0.2
        assert predict_gaussian_error(Sphere(2), s * 1.01)[q] > 0.2
    assert largest_gaussian_sigma(Sphere(2), 1e-6) is None
    with pytest.raises(ValueError, match="quantile"):
        largest_gaussian_sigma(Sphere(2), 0.2, quantile="mean")


def test_release_at_a_given_sigma_records_a_conservative_mu():
    m = Sphere(2)
    y = make_mean_data(m, 10, radius=0.5, rng=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rel = private_frechet_mean(m, y, sigma=1.0, mechanism="gaussian", radius=0.5,
                                   center=default_center(m), rng=0)
    from dpcore.mechanisms import RiemannianGaussian

    mech = RiemannianGaussian(manifold=m, sensitivity=rel.sensitivity["mean"], sigma=1.0)
    assert rel.mu == pytest.approx(mech.mu + 3 * mech.mu_standard_error)
    assert rel.mu > mech.mu
    with pytest.raises(ValueError, match="one of"):
        private_frechet_mean(m, y, sigma=1.0, mu=1.0, mechanism="gaussian", radius=0.5,
                             center=default_center(m))
    with pytest.raises(ValueError, match="Gaussian mechanism only"):
        private_frechet_mean(m, y, sigma=1.0, epsilon=1.0, radius=0.5,
                             center=default_center(m))
