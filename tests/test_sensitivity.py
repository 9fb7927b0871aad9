"""Sensitivity bounds: closed forms, validation, and theory >= empirical on adjacent datasets."""

import numpy as np
import pytest

from dpcore.data import make_mean_data, make_regression_data
from dpcore.learning import GeodesicRegression, frechet_mean
from dpcore.manifolds import SPD, Euclidean, KendallShape, Sphere
from dpcore.release import project_to_ball
from dpcore.sensitivity import (
    adjacent_pair,
    empirical_frechet_sensitivity,
    empirical_regression_sensitivity,
    frechet_gradient_sensitivity,
    frechet_mean_sensitivity,
    frechet_radius_limit,
    geodesic_regression_sensitivity,
)


class TestClosedForms:
    def test_nonnegative_curvature(self):
        assert geodesic_regression_sensitivity(50, 0.3, 1.0) == (0.012, 0.012)
        assert geodesic_regression_sensitivity(10, 1.0, 0.0) == (0.2, 0.2)

    def test_negative_curvature(self):
        n, tau, tau_m, kappa = 20, 0.2, 1.0, -0.5
        c = np.sqrt(0.5) * 1.2
        dp, dv = geodesic_regression_sensitivity(n, tau, kappa, tau_m)
        assert dp == pytest.approx(2 * tau / n * np.cosh(2 * c), rel=1e-14)
        assert dv == pytest.approx(tau / n * np.sinh(2 * c) / c, rel=1e-14)
        # Both exceed the flat value 2 tau / n and tend to it as the curvature vanishes.
        assert dp > 2 * tau / n and dv > 2 * tau / n
        near_flat = geodesic_regression_sensitivity(n, tau, -1e-12, tau_m)
        np.testing.assert_allclose(near_flat, (2 * tau / n, 2 * tau / n), rtol=1e-9)

    def test_negative_curvature_needs_tau_m(self):
        with pytest.raises(ValueError, match="tau_m"):
            geodesic_regression_sensitivity(20, 0.2, -0.5)

    @pytest.mark.parametrize(
        "args, exc",
        [((0, 1.0, 0.0), ValueError), ((10, -1.0, 0.0), ValueError), ((10.5, 1.0, 0.0), TypeError),
         ((10, 1.0, np.nan), ValueError), ((10, "1", 0.0), TypeError)],
    )
    def test_validation(self, args, exc):
        with pytest.raises(exc):
            geodesic_regression_sensitivity(*args)

    def test_frechet_flat_space(self):
        # h = 1 when kappa <= 0: Delta = 2 r / n, the sensitivity of a Euclidean mean.
        assert frechet_mean_sensitivity(10, 1.5, 0.0) == pytest.approx(0.3)
        assert frechet_mean_sensitivity(10, 1.5, -0.5) == pytest.approx(0.3)
        assert frechet_gradient_sensitivity(10, 1.5, 0.0) == pytest.approx(0.3)

    def test_frechet_sphere_value(self):
        r, n = np.pi / 8, 20
        h = 2 * r / np.tan(2 * r)
        assert frechet_mean_sensitivity(n, r, 1.0, np.pi) == pytest.approx(
            2 * r * (2 - h) / (n * h), rel=1e-14)
        assert frechet_gradient_sensitivity(n, r, 1.0, np.pi) == pytest.approx(
            2 * r * (2 - h) / n, rel=1e-14)

    def test_frechet_radius_limit(self):
        assert frechet_radius_limit(1.0, np.pi) == pytest.approx(np.pi / 4)
        assert frechet_radius_limit(4.0, np.pi / 2) == pytest.approx(np.pi / 8)
        assert frechet_radius_limit(0.0) == np.inf
        with pytest.raises(ValueError, match="r\\*"):
            frechet_mean_sensitivity(10, np.pi / 4, 1.0, np.pi)

    def test_adjacent_pair(self):
        d, e = adjacent_pair(np.arange(5))
        np.testing.assert_array_equal(d, [1, 2, 3, 4])
        np.testing.assert_array_equal(e, [0, 1, 2, 3])
        (xd, yd), (xe, ye) = adjacent_pair((np.arange(3), np.arange(6).reshape(3, 2)))
        assert xd.shape == (2,) and ye.shape == (2, 2)
        with pytest.raises(ValueError):
            adjacent_pair(np.arange(1))


# ---------------------------------------------------------------------- paper 002 app. G
REGRESSION_CASES = {
    "sphere": (Sphere(2), 1e-3),
    "spd2": (SPD(2), 1e-2),
    "kendall": (KendallShape(8), 2e-2),
}


def regression_ratios(manifold, noise, n, pairs, rng):
    """Theory/empirical ratios as in paper 002 app. G (tau = largest residual of D and D')."""
    rp, rv = [], []
    for _ in range(pairs):
        x, y = make_regression_data(manifold, n + 1, noise=noise, rng=rng)
        fit = GeodesicRegression(manifold, covariate_range=(0.0, 1.0)).fit(x, y)
        p, v = fit.footpoint_, fit.shooting_vector_
        resid = manifold.dist(manifold.exp(p, manifold.pointwise(x) * v), y)
        tau = float(resid.max())
        tau_m = float(np.max(manifold.dist(y, p))) if manifold.curvature_bounds[0] < 0 else None
        dp, dv = geodesic_regression_sensitivity(n, tau, manifold.curvature_bounds[0], tau_m)
        ep, ev = empirical_regression_sensitivity(manifold, x, y, p, v)
        rp.append(dp / ep)
        rv.append(dv / ev)
    return np.array(rp), np.array(rv)


@pytest.mark.statistical
@pytest.mark.parametrize("name", sorted(REGRESSION_CASES))
@pytest.mark.parametrize("n", [20, 50, 100])
def test_regression_ratios_at_least_one(name, n, rng):
    manifold, noise = REGRESSION_CASES[name]
    rp, rv = regression_ratios(manifold, noise, n, 100, rng)
    assert rp.min() >= 1.0, rp.min()
    assert rv.min() >= 1.0, rv.min()
    # The bound is not vacuous: like paper 002 figs. 9-10, typical ratios are of order one.
    assert np.median(rp) < 50 and np.median(rv) < 50


# ---------------------------------------------------------------------- strict mode, adversarial
def adversarial_dataset(manifold, n, rng, center):
    """Responses anywhere (outliers far beyond tau), covariates at the ends of [0, 1]."""
    y = manifold.random_point(n + 1, rng)
    if center is not None:
        # far outliers on non-compact spaces, up to 15 units away from the centre
        v = manifold.random_tangent(np.broadcast_to(center, y.shape), rng)
        scale = rng.uniform(0, 15, size=n + 1) / manifold.norm(center, v)
        y = manifold.exp(np.broadcast_to(center, y.shape), v * manifold.pointwise(scale))
    x = rng.choice([0.0, 1.0], size=n + 1)
    return x, y


STRICT_CASES = {
    "sphere": (Sphere(2), None, np.pi),
    "kendall": (KendallShape(6), None, np.pi / 2),
    "spd2": (SPD(2), np.eye(2), None),
    "euclidean": (Euclidean(2), np.zeros(2), None),
}


@pytest.mark.parametrize("name", sorted(STRICT_CASES))
def test_clipped_gradients_never_exceed_bound(name, rng):
    """Strict mode: with residuals clipped to tau (and, on non-compact spaces, responses projected
    onto B_{tau_m}(m0), footpoints in B_{tau_m + tau}(m0), |v| <= 2 (tau_m + tau)), the gradient
    difference of adjacent datasets stays below Delta for every dataset and parameter."""
    manifold, center, max_speed = STRICT_CASES[name]
    n, tau, tau_m = 10, 0.2, 1.0
    kappa = manifold.curvature_bounds[0]
    dp, dv = geodesic_regression_sensitivity(n, tau, kappa, tau_m if kappa < 0 else None)
    worst_p = worst_v = 0.0
    for _ in range(300):
        x, y = adversarial_dataset(manifold, n, rng, center)
        if center is not None:
            y = project_to_ball(manifold, y, center, tau_m)
            max_speed = 2 * (tau_m + tau)
            p = manifold.exp(center, manifold.random_tangent(center, rng) * 0.3)
            p = project_to_ball(manifold, p[None], center, tau_m + tau)[0]
        else:
            p = manifold.random_point(rng=rng)
        v = manifold.random_tangent(p, rng)
        v = v * rng.uniform(0, max_speed) / manifold.norm(p, v)
        ep, ev = empirical_regression_sensitivity(manifold, x, y, p, v, tau=tau)
        worst_p, worst_v = max(worst_p, ep / dp), max(worst_v, ev / dv)
    assert worst_p <= 1.0 + 1e-12 and worst_v <= 1.0 + 1e-12
    # The outliers matter: without clipping the bound is violated.
    x, y = adversarial_dataset(manifold, n, rng, center)
    if center is not None:
        p, v = center, manifold.random_tangent(center, rng) * 0.1
        ep, _ = empirical_regression_sensitivity(manifold, x, y, p, v)
        assert ep > dp


# ---------------------------------------------------------------------- paper 001 Thm 2
@pytest.mark.statistical
@pytest.mark.parametrize("manifold, radius", [(Sphere(2), np.pi / 8), (SPD(2), 1.5)])
@pytest.mark.parametrize("n", [10, 20, 50])
def test_frechet_sensitivity_bound(manifold, radius, n, rng):
    bound = frechet_mean_sensitivity(n, radius, manifold.curvature_bounds[1],
                                     manifold.injectivity_radius)
    worst = 0.0
    for _ in range(100):
        y = make_mean_data(manifold, n + 1, radius=radius, rng=rng)
        worst = max(worst, empirical_frechet_sensitivity(manifold, y))
    assert worst <= bound
    assert worst > bound / 20  # the bound is of the right order (paper 001 fig. 1)


def test_frechet_gradient_sensitivity_adversarial(rng):
    """|log_z y - log_z y'| / n <= 2 r (2 - h) / n for z, y, y' anywhere in B_r(m0) on S^2,
    close to the largest admissible radius."""
    m = Sphere(2)
    m0 = np.array([0.0, 0.0, 1.0])
    r = 0.95 * frechet_radius_limit(1.0, np.pi)
    bound = frechet_gradient_sensitivity(1, r, 1.0, np.pi)
    pts = make_mean_data(m, 3 * 20000, radius=r, rng=rng, center=m0).reshape(3, 20000, 3)
    # push the points to the boundary of the ball, the worst case
    pts = project_to_ball(m, m.exp(m0[None], m.log(m0[None], pts) * 10), m0, r)
    z, y1, y2 = pts
    diff = m.norm(z, m.log(z, y1) - m.log(z, y2))
    assert diff.max() <= bound
    assert diff.max() > 0.5 * bound


def test_frechet_mean_of_projected_data_stays_in_ball(rng):
    m = Sphere(2)
    m0 = np.array([0.0, 0.0, 1.0])
    y = project_to_ball(m, m.random_point(50, rng), m0, 0.5)
    assert np.all(m.dist(y, m0) <= 0.5 + 1e-12)
    assert m.dist(frechet_mean(m, y), m0) <= 0.5 + 1e-9


def test_default_max_speed_is_the_diameter_or_twice_the_response_reach():
    """The one place the releases' default speed bound is stated (paper 002 app. C)."""
    import math

    from dpcore.manifolds import SPD, Euclidean, Sphere
    from dpcore.sensitivity import default_max_speed

    assert default_max_speed(Sphere(2), None, 0.2) == math.pi
    assert default_max_speed(Euclidean(3), 1.5, 0.25) == 2.0 * (1.5 + 0.25)
    assert default_max_speed(SPD(2), 0.8, 0.175) == 2.0 * (0.8 + 0.175)
