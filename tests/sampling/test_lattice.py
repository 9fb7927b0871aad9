"""Float-safe distance laws on a public lattice (dpcore.sampling.lattice): the draws follow the
exact radial laws (two-sample KS against the audited radial samplers, threshold 1e-6), the
truncation slack bounds the true tail, and every draw is reachable from a neighbouring centre
(the float audit of DESIGN §12)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special, stats

from dpcore.manifolds import SPD, Euclidean, KendallShape, Sphere
from dpcore.mechanisms.gaussian import RiemannianGaussian
from dpcore.mechanisms.laplace import RiemannianLaplace
from dpcore.sampling import sample_gaussian, sample_laplace
from dpcore.sampling.lattice import (
    distance_envelope,
    lattice_available,
    truncation_radius,
    truncation_slack,
)

from .reference import P_THRESHOLD

NORTH = np.array([0.0, 0.0, 1.0])


def _eta(m):
    if isinstance(m, Sphere):
        return np.array([0.0, 0.6, 0.8])
    if isinstance(m, SPD):
        return np.diag([1.3, 0.8])
    if isinstance(m, Euclidean):
        return np.array([0.3, -0.2])
    return m.exp(m.origin, 0.2 * m.random_tangent(m.origin, np.random.default_rng(0)))


CASES = [  # manifold, kind, sigma, support, public ball
    (Sphere(2), "laplace", 0.05, None, None),
    (Sphere(2), "laplace", 1.5, None, None),  # spread over the whole sphere
    (Sphere(2), "gaussian", 0.1, None, None),
    (KendallShape(4), "laplace", 0.05, None, None),
    (SPD(2), "laplace", 0.1, None, (np.eye(2), 1.0)),  # truncated whole space
    (SPD(2), "laplace", 0.2, (np.eye(2), 0.8), None),  # public support ball
    (Euclidean(2), "laplace", 0.1, None, (np.zeros(2), 1.0)),
]


@pytest.mark.statistical
@pytest.mark.parametrize("m, kind, sigma, support, ball", CASES,
                         ids=[f"{c[0]!r}-{c[1]}-{c[2]}" for c in CASES])
def test_lattice_draws_follow_the_radial_law(m, kind, sigma, support, ball):
    eta = _eta(m)
    if kind == "laplace":
        mech = RiemannianLaplace(manifold=m, epsilon=1.0, sensitivity=sigma, support=support,
                                 public_ball=ball)
        sigma = mech.sigma
        res = mech.release(eta, size=4000, rng=1)
        ref = sample_laplace(m, eta, sigma, size=4000, rng=2, support=support)
    else:
        mech = RiemannianGaussian(manifold=m, sensitivity=0.1, sigma=sigma, mc_samples=200,
                                  mc_repeats=5)
        res = mech.release(eta, size=4000, rng=1)
        ref = sample_gaussian(m, eta, sigma, size=4000, rng=2)
    assert res.exact and "lattice" in res.sampler
    assert "lattice cell" in res.diagnostics["float_safety"]
    assert stats.ks_2samp(m.dist(res.values, eta), m.dist(ref, eta)).pvalue > P_THRESHOLD


def test_truncation_slack_bounds_the_euclidean_tail():
    """On R^2 the Laplace radius is Gamma(2, sigma): the true -log(1 - P(R > s)) is at most the
    bound, and the bound is not absurdly loose."""
    m, sigma = Euclidean(2), 0.1
    for s in (0.5, 1.0, 2.0, 4.0):
        true = -math.log1p(-special.gammaincc(2, s / sigma))
        bound = truncation_slack(m, sigma, s)
        assert bound >= true
        assert bound <= 1e4 * true + 1e-300
    s, slack = truncation_radius(m, sigma, 1.0)
    assert slack <= 1e-9 and truncation_slack(m, sigma, s) == slack


def test_truncation_slack_on_spd_decreases_and_is_finite():
    m = SPD(2)
    vals = [truncation_slack(m, 0.1, s) for s in (1.0, 2.0, 4.0, 8.0)]
    assert all(np.isfinite(vals)) and vals == sorted(vals, reverse=True) and vals[-1] < 1e-12


def test_availability_is_public_and_bounded_in_dimension():
    assert lattice_available(Sphere(2), "laplace")
    assert lattice_available(SPD(2), "laplace", public_ball=(np.eye(2), 1.0))
    assert not lattice_available(SPD(2), "gaussian", public_ball=(np.eye(2), 1.0))
    assert not lattice_available(SPD(2), "laplace")  # no public ball: no truncation
    assert not lattice_available(KendallShape(5), "laplace")  # dimension 6 > 4


@pytest.mark.parametrize("m, ball", [(Sphere(2), None), (SPD(2), (np.eye(2), 1.0))],
                         ids=["sphere", "spd2"])
def test_every_draw_is_reachable_from_a_neighbouring_centre(m, ball):
    """The statistics of two neighbouring data sets differ by at most Delta; every lattice
    cell one emits, the other emits with positive probability (and as the same floats)."""
    sigma = 0.02
    eta = _eta(m)
    rng = np.random.default_rng(3)
    eta2 = m.exp(eta, 0.05 * m.random_tangent(eta, rng) / 1.0)
    trunc = None if ball is None else truncation_radius(m, sigma, 1.0)[0]
    envs = [distance_envelope(m, c, sigma, "laplace", 2000, public_ball=ball, truncation=trunc)
            for c in (eta, eta2)]
    assert envs[0].lattice == envs[1].lattice
    for src, dst in (envs, envs[::-1]):
        index, _ = src.sample_indices(2000, np.random.default_rng(4))
        np.testing.assert_array_equal(dst.point(index).view(np.int64),
                                      src.point(index).view(np.int64))
        assert np.all(dst.reachable(index))
