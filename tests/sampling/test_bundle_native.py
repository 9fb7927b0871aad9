"""Exact joint KNG on the whole of TS² in native coordinates (dpcore.sampling.bundle_native,
issue 28): the law against an independent quadrature (chi-square-type test per public cell,
false-failure chance below 1e-6), the envelope at proposals, a planted violation raises, emitted
outputs are reachable for a neighbouring data set, and the progress contracts of every
certified bundle sampler."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.exceptions import EnvelopeViolation
from dpcore.manifolds import Sphere
from dpcore.sampling.bundle_native import NativeSphereSampler
from dpcore.sampling.sphere_native import frame_gradient

from ..audit import _oracle as O
from ..audit import _oracle_regression as RG
from ._chart import NormalChart

S2 = Sphere(2)
NORTH = np.array([0.0, 0.0, 1.0])
CHART = NormalChart(NORTH)
#: The polar angle splitting the quadrature's cells (the hemispheres).
SPLIT_RADIUS = 0.5 * math.pi


def _data(n, rng, foot=(0.3, 0.8), speed=(0.9, 0.3), noise=0.1):
    """Responses along a geodesic from a footpoint at chart coordinates ``foot`` (near the
    equator by default, so the mode may straddle the hemispheres)."""
    t = rng.random(n)
    t[:2] = 0.0, 1.0
    p, v = CHART.to_bundle(np.array([foot[0], foot[1]]) * 1.6, np.array(speed))
    pred = S2.exp(p, t[:, None] * v)
    return t, S2.exp(pred, S2.proj_tangent(pred, noise * rng.standard_normal((n, 3))))


def _sigma(n, n_eps, tau):
    return 2.0 * math.hypot(2 * tau / n, 2 * tau / n) / (n_eps / n)


# --------------------------------------------------------------------- the law
def _quadrature_cells(t, y, tau, sigma, speed, k, bands=None):
    """Cell probabilities of the target by a product Gauss-Legendre rule in (polar angle,
    azimuth, |v|, direction) on each of the 8 cells (hemisphere) x (sign p_x) x (|v| < V/2)
    (independent of the library: the oracle's gradient, this parameterisation); ``bands``:
    other two polar-angle bands than the hemispheres (a footpoint ball: (0, R/2), (R/2, R))."""
    x, w = np.polynomial.legendre.leggauss(k)

    def rule(lo, hi):
        return 0.5 * (hi - lo) * (x + 1) + lo, 0.5 * (hi - lo) * w

    mass = np.zeros((2, 2, 2))
    bands = [(0.0, SPLIT_RADIUS), (SPLIT_RADIUS, math.pi)] if bands is None else bands
    for hemi, (a0, a1) in enumerate(bands):
        for sx, (f0, f1) in enumerate([(-0.5 * math.pi, 0.5 * math.pi),
                                       (0.5 * math.pi, 1.5 * math.pi)]):
            for sv, (r0, r1) in enumerate([(0.0, 0.5 * speed), (0.5 * speed, speed)]):
                al, wa = rule(a0, a1)
                ph, wp = rule(f0, f1)
                rr, wr = rule(r0, r1)
                be, wb = rule(0.0, 2 * math.pi)
                A, P_, R, B = np.meshgrid(al, ph, rr, be, indexing="ij")
                W = (wa[:, None, None, None] * wp[None, :, None, None]
                     * wr[None, None, :, None] * wb[None, None, None, :])
                A, P_, R, B, W = (z.reshape(-1) for z in (A, P_, R, B, W))
                p = np.stack([np.sin(A) * np.cos(P_), np.sin(A) * np.sin(P_), np.cos(A)], -1)
                ea = np.stack([np.cos(A) * np.cos(P_), np.cos(A) * np.sin(P_), -np.sin(A)], -1)
                ep = np.stack([-np.sin(P_), np.cos(P_), np.zeros_like(P_)], -1)
                v = R[:, None] * (np.cos(B)[:, None] * ea + np.sin(B)[:, None] * ep)
                g = RG.joint_gradient_norm(p, v, t, y, tau)
                mass[hemi, sx, sv] = np.sum(W * np.sin(A) * R * np.exp(-g / sigma))
    return mass / mass.sum()


def _cells(p, v, speed, split=SPLIT_RADIUS):
    hemi = (O.dist(p, NORTH) >= split).astype(int)
    sx = (p[:, 0] < 0).astype(int)
    sv = (np.sqrt(np.sum(v * v, axis=-1)) >= 0.5 * speed).astype(int)
    return hemi * 4 + sx * 2 + sv


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


def test_the_stop_rule_estimates_the_basin_by_its_laplace_mass():
    """The refinement's target-mass estimate (steering only) is the Laplace mass at the mode
    once Newton finds it inside the support: checked against a Monte Carlo integral of the
    target (importance sampling from the linearized law, 100,000 draws, fixed seed): below it
    and within a factor of 5; absent when the ball leaves the fit out."""
    rng, tau = np.random.default_rng(28), 0.2
    t, y = _data(100, rng)
    sigma = _sigma(100, 1000.0, tau)
    sampler = NativeSphereSampler(t, y, tau, sigma, math.pi, draws=1, box_cost=0.0,
                                  max_boxes=21_000)
    assert sampler._basin is not None
    z = sampler.mode
    assert np.linalg.norm(frame_gradient(z[None], t, y, tau)) < 1e-3 * sigma
    step = np.eye(4) * 1e-6
    jac = (frame_gradient(z + step, t, y, tau) - frame_gradient(z - step, t, y, tau)).T / 2e-6
    # importance sampling from the linearized law e^{-|DG (z - z*)|/sigma}: w = DG (z - z*)
    # has |w| ~ sigma Gamma(4) with a uniform direction
    _, s_vals, vt = np.linalg.svd(jac)
    xi = rng.standard_normal((100_000, 4))
    r = rng.gamma(4.0, 1.0, 100_000)
    w = sigma * r[:, None] * xi / np.linalg.norm(xi, axis=1)[:, None]
    points = z + (w / s_vals) @ vt
    log_q = -r - math.log(12 * math.pi**2 * sigma**4 / np.prod(s_vals))
    with np.errstate(invalid="ignore", divide="ignore"):
        log_t = np.where(points[:, 3] > 0, sampler.log_target(points), -np.inf)
    ratio = log_t - log_q
    log_is = math.log(np.mean(np.exp(ratio - ratio.max()))) + float(ratio.max())
    # the Laplace mass ignores the clip's heavier tails, so it is low (3.1 times here, at
    # n = 100); a wrong power of sigma or a wrong determinant would miss by orders
    assert -math.log(5.0) < sampler._basin - log_is < 0.05
    far = NativeSphereSampler(t, y, tau, sigma, 1.0, center=np.array([0.0, 0.0, -1.0]),
                              radius=0.5, draws=1, box_cost=0.0, max_boxes=21_000)
    assert far._basin is None


class _Recording(NativeSphereSampler):
    """Counts the split leaves whose two halves both surely miss the support (their rows are
    removed and refilled from the end of the leaf buffers)."""

    removed = 0

    def _leaf_values(self, lo_idx, lev):
        keep, values = super()._leaf_values(lo_idx, lev)
        if lo_idx.shape[0] % 2 == 0 and self.lo_idx.shape[0] > 0:
            k = lo_idx.shape[0] // 2
            self.removed += int(np.count_nonzero(~keep[:k] & ~keep[k:]))
        return keep, values


def test_leaves_partition_the_support_after_rows_are_removed():
    """The leaves kept in place, appended and refilled during the refinement are disjoint
    and hold every support cell: each of 4,000 random support cells lies in exactly one leaf
    (brute force over the leaves), and the leaf index finds it."""
    rng = np.random.default_rng(79)
    t, y = _data(8, rng, noise=0.3)
    sampler = _Recording(t, y, 0.5, _sigma(8, 60.0, 0.5), 2.0, center=[0.0, 0.0, 1.0],
                         radius=0.8, draws=100, max_boxes=4000, box_cost=1.0)
    assert sampler.removed > 0                       # the removal path ran
    lat = sampler.lattice
    index = rng.integers(0, 2**lat.levels, (100_000, 4), dtype=np.int64)
    index = index[lat.in_support(index)][:4000]
    assert index.shape[0] == 4000
    size = np.left_shift(np.int64(1), lat.levels - sampler.lev)
    inside = np.all((sampler.lo_idx[None] <= index[:, None])
                    & (index[:, None] < (sampler.lo_idx + size)[None]), axis=-1)
    assert np.all(inside.sum(axis=1) == 1)
    assert np.array_equal(sampler.leaf_of(index), np.argmax(inside, axis=1))
