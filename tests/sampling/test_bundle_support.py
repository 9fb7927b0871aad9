"""A whitened bundle sampler whose data's fit lies outside the public footpoint ball
(dpcore.sampling.bundle_support), on R² (FlatBundleSampler): the support's point nearest the
fit is the nearest (against random support points) and the estimate of the target's mass on
the support agrees with plain Monte Carlo over the support. (These tests ran on S² with the
far-field sampler, replaced by the native sampler in session 35 and removed; that the draws stay
exact with the fit outside the ball is tested on R² in test_bundle_flat.py.)"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special

from dpcore.learning.regression import regression_gradient
from dpcore.manifolds import Euclidean
from dpcore.sampling.bundle_flat import FlatBundleSampler
from dpcore.sampling.bundle_lattice import FlatLattice
from dpcore.sampling.bundle_support import closest_support_point, support_log_mass

CENTER = np.array([0.5, -1.0])
TAU = 0.2
#: The data's footpoint 0.15 outside the ball of radius 0.6 (offset from the centre, then the
#: shooting vector).
OUTSIDE = (0.75, 0.0, 0.8, 0.5)


def _data(n, rng, uw=OUTSIDE, noise=0.1):
    """Responses about the line with footpoint ``CENTER + uw[:2]`` and slope ``uw[2:]``,
    covariates on [0, 1]."""
    t = rng.random(n)
    t[:2] = 0.0, 1.0
    uw = np.asarray(uw, dtype=float)
    return t, CENTER + uw[:2] + t[:, None] * uw[2:] + noise * rng.standard_normal((n, 2))


def _sigma(n, n_eps):
    """sigma = 2 Delta / eps with Delta = hypot(2 tau / n, 2 tau / n) (joint scheme)."""
    return 2.0 * math.hypot(2 * TAU / n, 2 * TAU / n) / (n_eps / n)


@pytest.fixture(scope="module")
def off_ball():
    lat = FlatLattice(CENTER, 0.6, 2.0)
    t, y = _data(40, np.random.default_rng(20261129))
    sampler = FlatBundleSampler(t, y, TAU, _sigma(40, 40.0), lat, max_boxes=200, box_cost=0.0)
    return lat, t, y, sampler


def _uniform_support(lat, m, rng):
    """``m`` points uniform on |u| <= R, |w| <= V (coordinates about the centre)."""
    def disc(radius):
        r = radius * np.sqrt(rng.random(m))
        a = rng.uniform(0, 2 * math.pi, m)
        return np.stack([r * np.cos(a), r * np.sin(a)], axis=1)
    return np.concatenate([disc(lat.radius), disc(lat.max_speed)], axis=1)


def test_the_fit_lies_outside_and_the_nearest_point_is_nearest(off_ball):
    lat, _, _, sampler = off_ball
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


def _library_log_f(z, t, y, sigma, chunk=50_000):
    """:math:`-g/\\sigma` at coordinates ``z`` (m, 4) by the library's regression gradient."""
    out = np.empty(z.shape[0])
    for s in range(0, z.shape[0], chunk):
        zz = z[s:s + chunk]
        gp, gv = regression_gradient(Euclidean(2), CENTER + zz[:, :2], zz[:, 2:], t, y, tau=TAU)
        out[s:s + chunk] = -np.sqrt(np.sum(gp**2, axis=-1) + np.sum(gv**2, axis=-1)) / sigma
    return out


def test_support_mass_estimate_agrees_with_plain_monte_carlo():
    """n = 40 at n eps = 150 (the fit about 2.9 sigma outside the support, in whitened units):
    plain Monte Carlo over the support (500,000 uniform points, fixed seed; effective sample
    size about 360) estimates the log of the integral of exp(-g/sigma) over the support
    (coordinates about the centre; the whitened density carries |det A|, which the change of
    variables cancels). The estimate only steers the refinement: agreement within a factor
    e^0.5 is asked (a deterministic test)."""
    lat = FlatLattice(CENTER, 0.6, 2.0)
    t, y = _data(40, np.random.default_rng(20261129))
    sigma = _sigma(40, 150.0)
    sampler = FlatBundleSampler(t, y, TAU, sigma, lat, max_boxes=200, box_cost=0.0)
    assert sampler.x_near is not None
    log_f = _library_log_f(_uniform_support(lat, 500_000, np.random.default_rng(5)), t, y, sigma)
    volume = (math.pi * lat.radius**2) * (math.pi * lat.max_speed**2)
    log_mc = float(special.logsumexp(log_f)) - math.log(log_f.size) + math.log(volume)
    estimate = support_log_mass(sampler, sampler.x_near)
    print(f"log mass: estimate {estimate:.3f}, Monte Carlo {log_mc:.3f}")
    assert sampler.log_mode_mass == estimate
    assert abs(estimate - log_mc) < 0.5
