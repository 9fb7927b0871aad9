"""Brute-force checks of the Gauss-Newton split lower bound (dpcore.sampling.sphere_gn_bounds,
evaluated in dpcore.sampling._farfield_numba): the series bound of 1 - x cot x, the centre
gradient computed in the kernel against the library, and the leaf lower bound against the
library's g at random points of random leaves (near the fit and far from it, thin whitened
directions, near-antipodal responses, negative covariates, residuals clipped, unclipped and
crossing tau, small and large tau)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.manifolds import Sphere
from dpcore.sampling.bundle_farfield import (
    FarFieldBundleSampler,
    centre_gradient,
    leaf_geometry,
    leaf_losses,
)
from dpcore.sampling.bundle_lattice import BundleLattice
from dpcore.sampling.bundle_sampler import _g_library

from .test_bundle_sampler import CENTER, joint_sigma, regression_data

pytest.importorskip("numba")

S2 = Sphere(2)


def test_lambda_series_bound():
    # above 0.01 the float cancellation (~1e-16) is far below the bound's slack x^4/360
    x = np.linspace(0.01, 1.0, 20001)
    exact = 1.0 - x / np.tan(x)
    assert np.all(exact <= x * x / 3 + x**4 / 40)
    assert np.all(np.diff(exact) > 0)             # increasing: the piece's top angle bounds it
    # below, the series 2 sum zeta(2k) (x/pi)^(2k), summed exactly enough
    x = np.geomspace(1e-4, 0.01, 200)
    zeta = [math.pi**2 / 6, math.pi**4 / 90, math.pi**6 / 945, math.pi**8 / 9450]
    series = sum(2 * z * (x / math.pi) ** (2 * k + 2) for k, z in enumerate(zeta))
    assert np.all(series * (1 + 1e-15) <= x * x / 3 + x**4 / 40)


def _problem(rng, n, tau, flip=0, negative=False):
    lat = BundleLattice(CENTER, 0.6, 2.0)
    t, y = regression_data(lat, n, rng, noise=0.12)
    y = y.copy()
    if flip:
        y[:flip] = -y[:flip]                       # near-antipodal responses
    if negative:
        t = t.copy()
        t[1::5] = -t[1::5]
    return lat, t, y


@pytest.mark.parametrize("tau, flip, negative", [(0.2, 0, False), (0.2, 3, False),
                                                 (0.5, 2, True), (0.12, 0, True)])
def test_split_bound_is_pointwise(rng, tau, flip, negative):
    lat, t, y = _problem(rng, 60, tau, flip, negative)
    sigma = joint_sigma(60, 1000.0, tau)
    sampler = FarFieldBundleSampler(t, y, tau, sigma, lat, max_boxes=3000)
    informative = wins = 0
    for trial in range(60):
        xc = rng.normal(size=4)
        xc *= rng.uniform(0, 60) * sigma / np.linalg.norm(xc)
        h = 10 ** rng.uniform(-1, 1, 4) * sigma
        zc = sampler.fit + sampler.A @ xc
        basis = sampler.A[None] * h[None, None, :]
        slack = rng.uniform(0, 1e-9, (1, 4))
        geo = leaf_geometry(zc[None], basis, slack, lat.radius, lat.max_speed)
        loss, _, g_c, lower = leaf_losses(lat.chart, zc[None], geo, t, y, tau,
                                          with_gradient=True, split=True)
        eps = rng.uniform(-1, 1, (300, 4))
        eps[:16] = np.sign(rng.uniform(-1, 1, (16, 4)))
        z = zc + eps @ basis[0].T + rng.uniform(-1, 1, (300, 4)) * slack
        z = z[(np.hypot(z[:, 0], z[:, 1]) <= lat.radius)
              & (np.hypot(z[:, 2], z[:, 3]) <= lat.max_speed)]
        if z.shape[0] == 0:
            continue
        g = _g_library(lat.chart, z, t, y, tau)
        assert lower[0] <= g.min() + 1e-12, (trial, lower[0], g.min())
        informative += lower[0] > 0
        wins += lower[0] > g_c[0] - loss[0]
    assert informative >= 3 and wins >= 5


def test_kernel_centre_gradient_matches_the_library(rng):
    lat, t, y = _problem(rng, 80, 0.2, flip=4, negative=True)
    z = np.concatenate([rng.uniform(-0.5, 0.5, (300, 2)), rng.uniform(-1.8, 1.8, (300, 2))], 1)
    basis = np.broadcast_to(np.eye(4) * 1e-3, (300, 4, 4)).copy()
    geo = leaf_geometry(z, basis, np.zeros((300, 4)), lat.radius, lat.max_speed)
    for tau in (0.2, 3.0):
        _, _, g = leaf_losses(lat.chart, z, geo, t, y, tau, with_gradient=True)
        ref = centre_gradient(lat.chart, z, t, y, tau, compiled=False)
        assert np.max(np.abs(g - ref)) < 1e-12
        assert np.max(np.abs(centre_gradient(lat.chart, z, t, y, tau) - ref)) < 1e-12


def test_sampler_uses_the_split_bound(rng):
    lat, t, y = _problem(rng, 60, 0.2)
    sigma = joint_sigma(60, 200.0)
    on = FarFieldBundleSampler(t, y, 0.2, sigma, lat, max_boxes=400, box_cost=0.0,
                               acceptance_goal=0.5)
    off = FarFieldBundleSampler(t, y, 0.2, sigma, lat, max_boxes=400, box_cost=0.0,
                                acceptance_goal=0.5, gn_split=False)
    assert on.diagnostics["gn_wins"] > 0 and off.diagnostics["gn_wins"] == 0
    assert on.acceptance_estimate >= off.acceptance_estimate * (1 - 1e-9) or math.isclose(
        on.acceptance_estimate, off.acceptance_estimate, rel_tol=0.5)
