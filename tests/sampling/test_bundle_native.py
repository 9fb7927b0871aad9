"""Exact joint KNG on the whole of TS² in native coordinates (dpcore.sampling.bundle_native,
issue 28): the law against the independent quadrature of the two-chart sampler's test
(chi-square-type test per public cell, false-failure chance below 1e-6), the envelope at
proposals, a planted violation raises, emitted outputs are reachable for a neighbouring data
set, and the progress contracts of every certified bundle sampler."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.exceptions import EnvelopeViolation
from dpcore.sampling.bundle_native import NativeSphereSampler

from ..audit import _oracle as O
from .test_bundle_sphere import _cells, _data, _quadrature_cells, _sigma


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(20261201)
    n, tau = 30, 0.2
    t, y = _data(n, rng)
    return t, y, tau, _sigma(n, 150.0, tau)


def test_law_matches_quadrature():
    rng = np.random.default_rng(77)
    n, tau, speed = 8, 0.5, 2.5
    t, y = _data(n, rng, noise=0.3)
    sigma = _sigma(n, 30.0, tau)                    # spread over both hemispheres
    sampler = NativeSphereSampler(t, y, tau, sigma, speed, draws=3000, max_boxes=3000,
                                  box_cost=2.0)
    size = 3000
    p, v, _ = sampler.sample(size, np.random.default_rng(5))
    counts = np.bincount(_cells(p, v, speed), minlength=8)
    coarse = _quadrature_cells(t, y, tau, sigma, speed, 14).reshape(-1)
    fine = _quadrature_cells(t, y, tau, sigma, speed, 18).reshape(-1)
    err = np.abs(fine - coarse)                      # the rule's error, stated by refining
    assert np.all(err < 0.01)
    # per cell: binomial deviation at z = 5.6 (Bonferroni over 8 cells: < 1e-6 in total)
    sd = np.sqrt(fine * (1 - fine) / size)
    assert np.all(np.abs(counts / size - fine) <= 5.6 * sd + 2 * err), (counts / size, fine)


def test_law_on_a_footpoint_ball_matches_quadrature():
    """The same test on a public footpoint ball of radius 1.2 about the north pole (the
    quadrature's polar bands (0, 0.6) and (0.6, 1.2)), the fit near its edge."""
    rng = np.random.default_rng(78)
    n, tau, speed, radius = 8, 0.5, 2.0, 1.2
    t, y = _data(n, rng, noise=0.3)
    sigma = _sigma(n, 30.0, tau)
    sampler = NativeSphereSampler(t, y, tau, sigma, speed, center=[0.0, 0.0, 1.0],
                                  radius=radius, draws=3000, max_boxes=3000, box_cost=2.0)
    size = 3000
    p, v, _ = sampler.sample(size, np.random.default_rng(5))
    assert np.all(O.dist(p, np.array([0.0, 0.0, 1.0])) <= radius)
    counts = np.bincount(_cells(p, v, speed, split=0.5 * radius), minlength=8)
    bands = [(0.0, 0.5 * radius), (0.5 * radius, radius)]
    coarse = _quadrature_cells(t, y, tau, sigma, speed, 14, bands).reshape(-1)
    fine = _quadrature_cells(t, y, tau, sigma, speed, 18, bands).reshape(-1)
    err = np.abs(fine - coarse)
    assert np.all(err < 0.01)
    sd = np.sqrt(fine * (1 - fine) / size)
    assert np.all(np.abs(counts / size - fine) <= 5.6 * sd + 2 * err), (counts / size, fine)


def test_law_test_has_power():
    """The same test fails for a sampler that forgot the volume density's speed factor (draws
    reweighted by 1/|v| from the exact ones, by importance resampling)."""
    rng = np.random.default_rng(77)
    n, tau, speed = 8, 0.5, 2.5
    t, y = _data(n, rng, noise=0.3)
    sigma = _sigma(n, 30.0, tau)
    sampler = NativeSphereSampler(t, y, tau, sigma, speed, draws=6000, max_boxes=3000,
                                  box_cost=2.0)
    p, v, _ = sampler.sample(6000, np.random.default_rng(5))
    w = 1.0 / np.maximum(np.linalg.norm(v, axis=1), 1e-3)
    keep = np.random.default_rng(6).choice(6000, 3000, p=w / w.sum())
    counts = np.bincount(_cells(p[keep], v[keep], speed), minlength=8)
    fine = _quadrature_cells(t, y, tau, sigma, speed, 14).reshape(-1)
    sd = np.sqrt(fine * (1 - fine) / 3000)
    assert np.any(np.abs(counts / 3000 - fine) > 5.6 * sd + 0.02)


def test_envelope_holds_at_proposals(problem):
    t, y, tau, sigma = problem
    sampler = NativeSphereSampler(t, y, tau, sigma, math.pi, draws=9, max_boxes=4000)
    assert sampler.envelope_check(20_000, 3) <= 1e-9
    assert 0 < sampler.acceptance_estimate <= 1


def test_a_planted_violation_raises(problem):
    t, y, tau, sigma = problem
    sampler = NativeSphereSampler(t, y, tau, sigma, math.pi, max_boxes=300, box_cost=0.0)
    sampler.log_m -= 40.0
    with pytest.raises(EnvelopeViolation):
        sampler.sample_indices(5, np.random.default_rng(0))


def test_emitted_outputs_are_reachable_for_a_neighbour(problem):
    t, y, tau, sigma = problem
    sampler = NativeSphereSampler(t, y, tau, sigma, math.pi, max_boxes=400, box_cost=0.0)
    index, _ = sampler.sample_indices(20, np.random.default_rng(1))
    y2 = y.copy()
    y2[0] = O.normalize(np.array([0.3, -0.5, -0.8]))
    other = NativeSphereSampler(t, y2, tau, sigma, math.pi, max_boxes=400, box_cost=0.0)
    assert np.all(other.reachable(index)) and np.all(sampler.reachable(index))
    outside = sampler.lattice.index_of(np.array([[math.pi - 1e-10, 0.0, 0.0, 1.0]]))
    assert not sampler.reachable(outside)[0]


def test_progress_reports_and_cancels(problem):
    from .test_bundle_sampler import (
        assert_construction_reports_and_cancels,
        assert_progress_reports_and_cancels,
    )

    t, y, tau, _ = problem
    sigma = _sigma(t.size, 80.0, tau)               # a broader target: 200 draws come quickly
    sampler = NativeSphereSampler(t, y, tau, sigma, math.pi, max_boxes=300, box_cost=0.0)
    assert_progress_reports_and_cancels(
        lambda size, progress: sampler.sample(size, np.random.default_rng(6),
                                              progress=progress))
    assert_construction_reports_and_cancels(
        lambda progress: NativeSphereSampler(t, y, tau, sigma, math.pi, max_boxes=2000,
                                             box_cost=0.0, progress=progress))
