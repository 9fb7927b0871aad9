"""Accuracy before release (dpcore.release.accuracy): the predicted error of a strict joint
geodesic-regression release against observed exact releases.

Error budget: the coverage tests compare a binomial count of n_obs observed releases with the
predicted quantile; the count's standard deviation is sqrt(q(1-q)/n_obs) and the prediction's
own weighted-quantile error is of order sqrt(q(1-q)/ESS). The tolerance is 5.5 combined
standard deviations (two-sided normal tail < 4e-8 each; four such comparisons, < 1e-6 together).
"""

import warnings

import numpy as np
import pytest

from dpcore.data import make_regression_data
from dpcore.learning import GeodesicRegression
from dpcore.manifolds import Euclidean, Sphere
from dpcore.release import private_geodesic_regression
from dpcore.release.accuracy import predict_regression_error

S2 = Sphere(2)
NORTH = S2.origin


def _exact_footpoints(x, y, total, eps, seed, **kw):
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # seeded: "not for publication"
        for k in range(int(np.ceil(total / 400))):
            rel = private_geodesic_regression(
                S2, x, y, eps_p=eps / 2, eps_v=eps / 2, tau=0.2, covariate_range=(0.0, 1.0),
                n_footpoints=min(400, total - 400 * k), sampler="exact", rng=seed + k, **kw)
            assert rel.guarantee == "private"
            out.append(np.asarray(rel.values["footpoint"]))
    return np.concatenate(out)


def _tolerance(q, n_obs, ess):
    return 5.5 * np.sqrt(q * (1 - q) * (1 / n_obs + 1 / ess))


@pytest.mark.statistical
def test_prediction_covers_exact_releases_of_the_model_data():
    """On the model data itself (responses at the centre, covariates evenly spread), the
    predicted median and 95% radius of the footpoint error hold for 1200 exact releases."""
    n, eps = 20, 2.0
    pred = predict_regression_error(S2, n, eps_p=eps / 2, eps_v=eps / 2, tau=0.2)
    assert pred["available"] and pred["ess"] > 5000
    t = (np.arange(n) + 0.5) / n
    y = np.broadcast_to(NORTH, (n, 3)).copy()
    feet = _exact_footpoints(t, y, 1200, eps, seed=100)
    d = S2.dist(feet, NORTH)
    for q, key in ((0.5, "median"), (0.95, "q95")):
        cover = np.mean(d <= pred["footpoint"][key])
        print(f"\nmodel data: P(d <= predicted {key} {pred['footpoint'][key]:.3f}) = {cover:.3f}")
        assert abs(cover - q) <= _tolerance(q, d.size, pred["ess"])


@pytest.mark.statistical
def test_prediction_covers_exact_releases_of_noisy_data():
    """On synthetic data around a geodesic of speed pi/4 (paper protocol, not the model), the
    footpoint's distance to the non-private fit's footpoint is covered as predicted. The model
    is exact only on its own data: a tolerance of 0.05 on top of the Monte Carlo one allows
    for the difference."""
    n, eps = 20, 2.0
    data = make_regression_data(S2, n, rng=5)
    fit = GeodesicRegression(S2, covariate_range=(0.0, 1.0)).fit(data.x, data.y)
    pred = predict_regression_error(S2, n, eps_p=eps / 2, eps_v=eps / 2, tau=0.2)
    feet = _exact_footpoints(data.x, data.y, 1200, eps, seed=200)
    d = S2.dist(feet, fit.footpoint_)
    for q, key in ((0.5, "median"), (0.95, "q95")):
        cover = np.mean(d <= pred["footpoint"][key])
        print(f"\nnoisy data: P(d <= predicted {key}) = {cover:.3f}")
        assert abs(cover - q) <= _tolerance(q, d.size, pred["ess"]) + 0.05


def test_concentrated_target_is_not_guessed():
    """Where the target has concentrated (S², n = 100, eps = 10) the uniform proposals' ESS is
    too small: the prediction says so and gives no numbers."""
    pred = predict_regression_error(S2, 100, eps_p=5.0, eps_v=5.0, tau=0.2, proposals=20_000)
    assert not pred["available"]
    assert "footpoint" not in pred and "concentrated" in pred["reason"]


def test_prediction_is_deterministic_and_reads_the_release_record():
    a = predict_regression_error(Euclidean(1), 30, eps_p=1.0, eps_v=1.0, tau=0.5, tau_m=2.0,
                                 proposals=5000)
    b = predict_regression_error(Euclidean(1), 30, eps_p=1.0, eps_v=1.0, tau=0.5, tau_m=2.0,
                                 proposals=5000)
    assert a == b
    # sigma = 2 sqrt(Dp^2 + Dv^2) / eps with Dp = Dv = 2 tau / n (curvature 0)
    assert a["sigma"] == pytest.approx(2 * np.hypot(2 * 0.5 / 30, 2 * 0.5 / 30) / 2.0)
    # a smaller budget never predicts a smaller error (same proposals, flatter weights)
    c = predict_regression_error(Euclidean(1), 30, eps_p=0.1, eps_v=0.1, tau=0.5, tau_m=2.0,
                                 proposals=5000)
    assert c["curve"]["median"] >= a["curve"]["median"]
