"""Exact joint KNG on S^2 with the far-field mean-value certificate
(dpcore.sampling.bundle_farfield; the per-term bounds are checked by brute force in
test_sphere_jacobian_bounds.py): the leaf lower bound of g holds pointwise on the support (far
field, thin directions and near-antipodal responses included), the sampler agrees with the
audited uniform exact sampler (two-sample KS), a planted violation raises, and emitted indices
are reachable for a neighbouring data set."""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.exceptions import EnvelopeViolation
from dpcore.manifolds import Sphere
from dpcore.sampling.bundle_farfield import FarFieldBundleSampler
from dpcore.sampling.bundle_lattice import BundleLattice
from dpcore.sampling.bundle_sampler import _g_library

from .test_bundle_sampler import (
    CENTER,
    TAU,
    assert_agrees_with_uniform_exact,
    assert_reports_and_cancels,
    joint_sigma,
    neighbour_rows,
    regression_data,
)

S2 = Sphere(2)


@pytest.fixture(scope="module")
def small_problem():
    rng = np.random.default_rng(20240528)
    lat = BundleLattice(CENTER, 0.6, 2.0)
    t, y = regression_data(lat, 40, rng)
    return lat, t, y, joint_sigma(40, 40.0)


@pytest.fixture(scope="module")
def two_stage_ball():
    """The second measured support of the releases (kng_bundle.MEASURED_BALLS: R = 1.25,
    V = 0.8, the two-stage design's ball)."""
    rng = np.random.default_rng(20261201)
    lat = BundleLattice(CENTER, 1.25, 0.8)
    t, y = regression_data(lat, 40, rng)
    return lat, t, y, joint_sigma(40, 40.0)


@pytest.mark.parametrize("problem", ["small_problem", "two_stage_ball"])
def test_leaf_lower_bound_is_pointwise(problem, request):
    lat, t, y, sigma = request.getfixturevalue(problem)
    y = y.copy()
    y[3] = -y[3]                                     # an outlier near the cut locus
    sampler = FarFieldBundleSampler(t, y, TAU, sigma, lat, max_boxes=200, box_cost=0.0)
    rng = np.random.default_rng(7)
    used = 0
    for trial in range(25):
        zc = np.concatenate([rng.uniform(-1, 1, 2) * 0.7 * lat.radius,
                             rng.uniform(-1, 1, 2) * 0.65 * lat.max_speed])
        h = 10 ** rng.uniform(-3, -0.7, 4) * np.array([1.0, 1.0, 0.1, 0.1])
        basis = sampler.A[None] * h[None, None, :]
        slack = rng.uniform(0, 1e-7, (1, 4))
        g_lb, _, _ = sampler._mean_value(zc[None], basis, slack)
        eps = np.sign(rng.uniform(-1, 1, (200, 4))) * rng.uniform(0.3, 1, (200, 4))
        z = zc + eps @ basis[0].T + rng.uniform(-1, 1, (200, 4)) * slack
        # the bound is claimed on the public support |u| <= R, |w| <= V only
        z = z[(np.hypot(z[:, 0], z[:, 1]) <= lat.radius)
              & (np.hypot(z[:, 2], z[:, 3]) <= lat.max_speed)]
        assert z.shape[0] > 20
        g = _g_library(lat.chart, z, t, y, TAU)
        assert g_lb[0] <= g.min() + 1e-12, trial
        used += g_lb[0] > 0
    assert used >= 10          # the bound is informative, not only valid


def test_agrees_with_the_uniform_exact_sampler(small_problem):
    """n = 40, n eps = 40: both exact samplers, 1500 draws each (fixed seeds). Three KS tests
    (footpoint distance to the centre, |v|, g) at p > 3e-7 each: a false failure has chance
    below 1e-6 when both laws agree. Refinement forced (box_cost 0) so that the K-norm and the
    piecewise-uniform components both carry weight; near_sigmas = 4 so that most leaves are
    certified by the mean-value bound alone."""
    lat, t, y, sigma = small_problem
    sampler = FarFieldBundleSampler(t, y, TAU, sigma, lat, draws=1500, box_cost=0.0,
                                    acceptance_goal=0.99, max_boxes=800, slack=4.0,
                                    near_sigmas=4.0)
    diag = sampler.diagnostics
    assert 0.01 < diag["beta"] < 0.99 and diag["q1_boxes"] >= 1
    assert diag["mv_evaluations"] > 4 * diag["evaluations"]
    tried = assert_agrees_with_uniform_exact(sampler, lat, t, y, sigma, 3e-7)
    print(f"acceptance {1500 / tried:.3g}, diagnostics {diag}")


def test_a_planted_violation_raises(small_problem):
    lat, t, y, sigma = small_problem
    sampler = FarFieldBundleSampler(t, y, TAU, sigma, lat, draws=50, max_boxes=300)
    sampler.log_m -= 4.0  # M below the certified one: some proposal must exceed it
    with pytest.raises(EnvelopeViolation):
        sampler.sample_indices(200, np.random.default_rng(3))


def test_emitted_indices_are_reachable_for_a_neighbour(small_problem):
    lat, t, y, sigma = small_problem
    rng = np.random.default_rng(4)
    sampler = FarFieldBundleSampler(t, y, TAU, sigma, lat, draws=200, box_cost=0.0,
                                    max_boxes=200)
    index, _ = sampler.sample_indices(200, rng)
    t2, y2 = neighbour_rows(t, y, rng)             # one row replaced
    neighbour = FarFieldBundleSampler(t2, y2, TAU, sigma, lat, draws=200, box_cost=0.0,
                                      max_boxes=150, sigma_ratios=(2.0, 5.0))
    assert neighbour.reachable(index).all()
    cells = np.random.default_rng(5).integers(0, 2**32, (400, 4), dtype=np.int64)
    inside = lat.in_support(cells)
    assert np.array_equal(neighbour.reachable(cells), inside) and inside.any()


def test_progress_reports_and_cancels(small_problem):
    lat, t, y, sigma = small_problem
    assert_reports_and_cancels(
        lambda **options: FarFieldBundleSampler(t, y, TAU, sigma, lat, **options), 200,
        draw_boxes=200)
