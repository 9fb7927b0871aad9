"""Exact joint KNG on S^2 certified over whitened boxes (dpcore.sampling.bundle_whitened), and
the parallelepiped enclosure it uses (dpcore.sampling.sphere_affine): the enclosure holds
pointwise on tilted parallelepipeds, the sampler agrees with the audited uniform exact sampler
(two-sample KS), a planted envelope violation raises, and every emitted index is reachable for
a neighbouring data set."""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.exceptions import EnvelopeViolation
from dpcore.manifolds import Sphere
from dpcore.sampling.bundle_lattice import BundleLattice
from dpcore.sampling.bundle_whitened import WhitenedBundleSampler
from dpcore.sampling.sphere_affine import enclose_gradient_parallelepiped

from .test_bundle_sampler import (
    CENTER,
    TAU,
    assert_agrees_with_uniform_exact,
    joint_sigma,
    neighbour_rows,
    regression_data,
)
from .test_interval_ad import _frame_gradient, _setup

S2 = Sphere(2)
SLACK = 1e-12


@pytest.mark.parametrize("tau", [0.2, 1.0])
def test_parallelepiped_enclosure_is_pointwise(rng, tau):
    chart, t, y, uw = _setup(rng, n=40, outliers=4, antipodal=1)
    m = 30
    center = uw + rng.normal(0, 0.1, (m, 4))
    center[:, :2] *= 0.5
    scale = np.exp(rng.uniform(np.log(1e-4), np.log(0.1), (m, 1, 1)))
    basis = rng.normal(0, 1, (m, 4, 4)) * scale                 # tilted, any shape
    slack = rng.uniform(0, 1e-6, (m, 4))
    enc = enclose_gradient_parallelepiped(chart, center, basis, slack, t, y, tau)
    bits = (np.arange(16)[:, None] >> np.arange(4)) & 1
    eps = np.concatenate([2.0 * bits - 1.0, rng.uniform(-1, 1, (40, 4))])[None].repeat(m, 0)
    zeta = rng.uniform(-1, 1, eps.shape) * slack[:, None, :]
    pts = center[:, None] + np.einsum("mjk,mpk->mpj", basis, eps) + zeta
    g = _frame_gradient(chart, pts, t, y, tau)
    pred = enc.value[:, None] + np.einsum("mik,mpk->mpi", enc.linear, eps)
    assert np.all(np.abs(g - pred) <= enc.error[:, None] + SLACK)


def test_parallelepiped_outside_the_chart_is_refused():
    chart, t, y, _ = _setup(np.random.default_rng(1), n=10)
    with pytest.raises(ValueError):
        enclose_gradient_parallelepiped(chart, np.array([[3.0, 0, 0, 0]]),
                                        np.eye(4)[None] * 0.2, np.zeros((1, 4)), t, y, 0.2)


@pytest.fixture(scope="module")
def small_problem():
    rng = np.random.default_rng(20240528)
    lat = BundleLattice(CENTER, 0.6, 2.0)
    t, y = regression_data(lat, 40, rng)
    return lat, t, y, joint_sigma(40, 40.0)


def test_agrees_with_the_uniform_exact_sampler(small_problem):
    """n = 40, n eps = 40: both exact samplers, 1500 draws each (fixed seeds). Three KS tests
    (footpoint distance to the centre, |v|, g) at p > 3e-7 each: a false failure has chance
    below 1e-6 when both laws agree. The refinement is forced (box_cost 0) so that the
    K-norm and the piecewise-uniform components both carry weight."""
    lat, t, y, sigma = small_problem
    sampler = WhitenedBundleSampler(t, y, TAU, sigma, lat, draws=1500, box_cost=0.0,
                                    acceptance_goal=0.99, max_boxes=2500, slack=4.0)
    diag = sampler.diagnostics
    assert 0.01 < diag["beta"] < 0.99 and diag["q1_boxes"] >= 1
    tried = assert_agrees_with_uniform_exact(sampler, lat, t, y, sigma, 3e-7)
    print(f"acceptance {1500 / tried:.3g}, diagnostics {diag}")


def test_a_planted_violation_raises(small_problem):
    lat, t, y, sigma = small_problem
    sampler = WhitenedBundleSampler(t, y, TAU, sigma, lat, draws=50, max_boxes=300)
    sampler.log_m -= 4.0  # M below the certified one: some proposal must exceed it
    with pytest.raises(EnvelopeViolation):
        sampler.sample_indices(200, np.random.default_rng(3))


def test_emitted_indices_are_reachable_for_a_neighbour(small_problem):
    lat, t, y, sigma = small_problem
    rng = np.random.default_rng(4)
    sampler = WhitenedBundleSampler(t, y, TAU, sigma, lat, draws=200, box_cost=0.0,
                                    max_boxes=200)
    index, _ = sampler.sample_indices(200, rng)
    t2, y2 = neighbour_rows(t, y, rng)             # one row replaced
    neighbour = WhitenedBundleSampler(t2, y2, TAU, sigma, lat, draws=200, box_cost=0.0,
                                      max_boxes=150, sigma_ratios=(2.0, 5.0))
    assert neighbour.reachable(index).all()
    assert sampler.reachable(index).all()
    # random support cells too (the q_0 witness), and nothing outside the support
    cells = np.random.default_rng(5).integers(0, 2**32, (400, 4), dtype=np.int64)
    inside = lat.in_support(cells)
    assert np.array_equal(neighbour.reachable(cells), inside) and inside.any()
    outside = index.copy()
    outside[:, 2] = 0
    assert not neighbour.reachable(outside).any()
