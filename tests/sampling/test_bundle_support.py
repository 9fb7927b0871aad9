"""A bundle sampler whose data's fit lies outside the public footpoint ball
(dpcore.sampling.bundle_support): the support's point nearest the fit is the nearest (against
random support points), the estimate of the target's mass on the support agrees with plain
Monte Carlo over the support, and the far-field sampler steered by it stays exact (two-sample
KS against the audited uniform exact sampler)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special

from dpcore.sampling.bundle_farfield import FarFieldBundleSampler
from dpcore.sampling.bundle_lattice import BundleLattice
from dpcore.sampling.bundle_sampler import _g_library
from dpcore.sampling.bundle_support import closest_support_point, support_log_mass

from .test_bundle_sampler import (
    CENTER,
    TAU,
    assert_agrees_with_uniform_exact,
    joint_sigma,
    regression_data,
)

#: The data's footpoint 0.15 outside the ball of radius 0.6.
OUTSIDE = (0.75, 0.0, 0.8, 0.5)


@pytest.fixture(scope="module")
def off_ball():
    lat = BundleLattice(CENTER, 0.6, 2.0)
    t, y = regression_data(lat, 40, np.random.default_rng(20261129), uw=OUTSIDE)
    sigma = joint_sigma(40, 40.0)
    sampler = FarFieldBundleSampler(t, y, TAU, sigma, lat, draws=1500, max_boxes=3000)
    return lat, t, y, sigma, sampler


def _uniform_support(lat, m, rng):
    """``m`` points uniform on |u| <= R, |w| <= V (chart coordinates)."""
    def disc(radius):
        r = radius * np.sqrt(rng.random(m))
        a = rng.uniform(0, 2 * math.pi, m)
        return np.stack([r * np.cos(a), r * np.sin(a)], axis=1)
    return np.concatenate([disc(lat.radius), disc(lat.max_speed)], axis=1)


def test_the_fit_lies_outside_and_the_nearest_point_is_nearest(off_ball):
    lat, _, _, _, sampler = off_ball
    assert np.hypot(*sampler.fit[:2]) > lat.radius + 0.05
    x_near = sampler.x_near
    z = sampler.fit + sampler.A @ x_near
    assert np.hypot(*z[:2]) <= lat.radius * (1 + 1e-9)
    assert np.hypot(*z[2:]) <= lat.max_speed * (1 + 1e-9)
    others = sampler.x_of(_uniform_support(lat, 200_000, np.random.default_rng(3)))
    assert np.linalg.norm(x_near) <= np.min(np.linalg.norm(others, axis=1)) + 1e-9
    # and a fit inside the support has none
    assert closest_support_point(lat, np.array([0.1, 0.0, 0.5, 0.5]), sampler.x_of) is None
    # a fit at the ball's centre with too fast a shooting vector (or the reverse) starts from
    # its radial projection without dividing by a zero norm
    for fit in (np.array([0.0, 0.0, 2.5, 0.0]), np.array([0.9, 0.0, 0.0, 0.0])):
        with np.errstate(divide="raise", invalid="raise"):
            x = closest_support_point(lat, fit, lambda z, f=fit: (z - f) @ sampler.T.T)
        z = fit + sampler.A @ x
        assert np.hypot(*z[:2]) <= lat.radius * (1 + 1e-9)
        assert np.hypot(*z[2:]) <= lat.max_speed * (1 + 1e-9)


def test_support_mass_estimate_agrees_with_plain_monte_carlo():
    """n = 40 at n eps = 150 (the fit 2.6 sigma outside the support, in whitened units): plain
    Monte Carlo over the support (500,000 uniform points, fixed seed; effective sample size
    about 650) estimates the log of the integral of exp(-g/sigma) J over the support (chart
    coordinates; the whitened density carries |det A|, which the change of variables cancels).
    The estimate only steers the refinement: agreement within a factor e^0.5 is asked (a
    deterministic test). At n eps = 1,000 the benchmark checks it against the exact sampler's
    own acceptance (``benchmarks/bench_bundle_offball.py``)."""
    lat = BundleLattice(CENTER, 0.6, 2.0)
    t, y = regression_data(lat, 40, np.random.default_rng(20261129), uw=OUTSIDE)
    sigma = joint_sigma(40, 150.0)
    sampler = FarFieldBundleSampler(t, y, TAU, sigma, lat, max_boxes=200, box_cost=0.0)
    assert sampler.x_near is not None
    z = _uniform_support(lat, 500_000, np.random.default_rng(5))
    log_f = (-_g_library(lat.chart, z, t, y, TAU) / sigma
             + np.log(lat.chart.volume_density(z[:, :2])))
    volume = (math.pi * lat.radius**2) * (math.pi * lat.max_speed**2)
    log_mc = float(special.logsumexp(log_f)) - math.log(z.shape[0]) + math.log(volume)
    estimate = support_log_mass(sampler, sampler.x_near)
    print(f"log mass: estimate {estimate:.3f}, Monte Carlo {log_mc:.3f}")
    assert sampler.log_mode_mass == estimate
    assert abs(estimate - log_mc) < 0.5


def test_draws_with_the_fit_outside_the_ball_are_exact(off_ball):
    """1500 draws each against the audited uniform exact sampler: three KS tests at
    p > 3e-7 each (a false failure has chance below 1e-6 when both laws agree)."""
    lat, t, y, sigma, sampler = off_ball
    tried = assert_agrees_with_uniform_exact(sampler, lat, t, y, sigma, 3e-7)
    print(f"acceptance {1500 / tried:.3g}, diagnostics {sampler.diagnostics}")
