"""Exact joint KNG on the whole of TS² (dpcore.sampling.bundle_sphere,
dpcore.sampling.bundle_sphere_chart; issue 28): the rotating-frame term bound and its constants
against brute force, the chart's leaf lower bound of g pointwise on axis-aligned boxes (far
field, speeds up to pi, a near-antipodal outlier), the public partition covers the bundle
exactly once (up to the public seam and speed shells), the law against an independent
quadrature on public cells (chi-square-type test per cell, false-failure chance below 1e-6), a
planted violation raises, and emitted outputs are reachable for a neighbouring data set."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.exceptions import EnvelopeViolation
from dpcore.learning.regression import regression_gradient
from dpcore.manifolds import Sphere
from dpcore.sampling.bundle_farfield import leaf_geometry, prediction_speed, residual_angles
from dpcore.sampling.bundle_lattice import BundleLattice
from dpcore.sampling.bundle_sampler import _g_library
from dpcore.sampling.bundle_sphere import OVERLAP, SPLIT_RADIUS, WholeSphereBundleSampler
from dpcore.sampling.bundle_sphere_chart import SphereChartSampler
from dpcore.sampling.sphere_enclosure import SphereBundleChart
from dpcore.sampling.sphere_jacobian_bounds import K_CS, K_SC, term_change_bounds

from ..audit import _oracle as O

S2 = Sphere(2)
NORTH = np.array([0.0, 0.0, 1.0])
CHART = SphereBundleChart(NORTH)


def _data(n, rng, foot=(0.3, 0.8), speed=(0.9, 0.3), noise=0.1):
    """Responses along a geodesic from a footpoint at chart coordinates ``foot`` (near the
    equator by default, so the mode may straddle the two charts)."""
    t = rng.random(n)
    t[:2] = 0.0, 1.0
    p, v = CHART.to_bundle(np.array([foot[0], foot[1]]) * 1.6, np.array(speed))
    pred = S2.exp(p, t[:, None] * v)
    return t, S2.exp(pred, S2.proj_tangent(pred, noise * rng.standard_normal((n, 3))))


def _sigma(n, n_eps, tau):
    return 2.0 * math.hypot(2 * tau / n, 2 * tau / n) / (n_eps / n)


# --------------------------------------------------------------------- the rotating bound
def test_rotating_constants_are_suprema():
    r = np.linspace(1e-9, 2 * math.pi, 2_000_001)
    cs = np.abs(np.cos(r) - np.sinc(r / math.pi)) / r
    sc = (1 - np.sinc(2 * r / math.pi)) / r
    # grid spacing 3.1e-6, both derivatives below 1 in absolute value
    assert cs.max() + 4e-6 <= K_CS and sc.max() + 4e-6 <= K_SC
    big = r > 1e-2              # below, cancellation in the float formulas (the series hold)
    assert np.all(cs[big] <= r[big] / 3) and np.all(sc[big] <= 2 * r[big] / 3)


def _transport_back(ps, *xs):
    """Rotate each of ``xs`` (tangent at ps[-1]) back along the polygon ps[-1] -> ps[0], one
    minimal rotation per edge: R_0 R_1 ... R_{K-1} x with R_k the rotation about
    ps[k+1] x ps[k] taking ps[k+1] to ps[k] (Rodrigues; the identity on a degenerate edge).
    The K matrices are built at once and multiplied in a pairwise tree (log2 K batched
    products, in order); the result is the edge-by-edge rotation's to rounding (~1e-15, far
    below the 1e-6 margin of the bounds tested). Returns one array per ``xs``."""
    axes = np.cross(ps[1:], ps[:-1])
    sn = np.sqrt(np.vecdot(axes, axes))
    ok = sn >= 1e-300
    a = np.where(ok[:, None], axes, 0.0) / np.where(ok, sn, 1.0)[:, None]
    ang = np.arctan2(sn, np.vecdot(ps[1:], ps[:-1]))
    co, si = np.where(ok, np.cos(ang), 1.0), np.where(ok, np.sin(ang), 0.0)
    cross = np.zeros((len(a), 3, 3))                 # [a]_x, so [a]_x x = a x x
    cross[:, 0, 1], cross[:, 0, 2], cross[:, 1, 2] = -a[:, 2], a[:, 1], -a[:, 0]
    cross -= cross.transpose(0, 2, 1)
    m = (co[:, None, None] * np.eye(3) + si[:, None, None] * cross
         + (1 - co)[:, None, None] * a[:, :, None] * a[:, None, :])
    while len(m) > 1:
        if len(m) % 2:
            m = np.concatenate([m, np.eye(3)[None]])
        m = m[0::2] @ m[1::2]
    return list(np.array(xs, dtype=float) @ m[0].T)


def test_rotating_form_bounds_each_term_change(rng):
    """Each term's transported change along random segments (speeds up to pi, residual
    angles near pi/2, near the antipode and near the clipping kink, thin directions) stays
    below the rotating-form bound alone."""
    tight, used = [], 0
    for trial in range(240):
        tau = float(rng.choice([0.2, 0.5, 1.0]))
        zc = np.concatenate([rng.uniform(-1.5, 1.5, 2), rng.uniform(-3.0, 3.0, 2)])
        if np.hypot(*zc[2:]) > 3.1:
            zc[2:] *= 3.1 / np.hypot(*zc[2:])
        basis = rng.normal(size=(4, 4)) * 10 ** rng.uniform(-2.5, -0.7)
        if trial % 2:
            t0 = rng.uniform(0.2, 1.0)
            basis[:2] = -t0 * basis[2:] + 1e-3 * np.abs(basis).max() * rng.normal(size=(2, 4))
        t = rng.uniform(0.3, 1, 1) if trial % 4 else np.ones(1)
        p, v = CHART.to_bundle(zc[None, :2], zc[None, 2:])
        yhat = S2.exp(p, t[:, None] * v)
        kind = trial % 3
        d = np.cross(yhat, rng.normal(size=(1, 3)))
        d /= np.linalg.norm(d)
        angle = (math.pi - rng.uniform(0.02, 0.3), rng.uniform(0.8, 2.3),
                 tau + rng.normal(0, 0.01))[kind]
        y = S2.exp(yhat, d * angle)
        geo = leaf_geometry(zc[None], basis[None], np.zeros((1, 4)), math.inf, math.pi)
        eta0, eta1 = prediction_speed(geo, t)
        theta = residual_angles(CHART, zc[None], t, y)
        bound, _ = term_change_bounds(theta, t, geo["P"], geo["N"], geo["W"], tau, eta=eta0,
                                      eta1=eta1, form="rotating")
        for _ in range(4):
            eps = rng.uniform(-1, 1, 4)
            eps[rng.integers(4)] = rng.choice([-1.0, 1.0])
            end = zc + basis @ eps
            if np.hypot(*end[2:]) > math.pi:
                continue
            s = np.linspace(0, 1, 161)
            zs = zc + s[:, None] * (end - zc)
            ps, vs = CHART.to_bundle(zs[:, :2], zs[:, 2:])
            gp, gv = regression_gradient(S2, ps, vs, t, y, tau=tau)
            moved = np.concatenate(_transport_back(ps, gp[-1], gv[-1]))
            change = np.linalg.norm(moved - np.concatenate([gp[0], gv[0]]))
            assert change <= bound[0, 0] * (1 + 1e-6) + 1e-9, trial
            tight.append(change / bound[0, 0])
            used += 1
    assert used > 600
    assert np.max(tight) > 0.3                      # informative, not only valid


# --------------------------------------------------------------------- the chart's certificate
@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(20261129)
    n, tau = 30, 0.2
    t, y = _data(n, rng)
    y[3] = -y[3]                                    # an outlier near the cut locus
    return t, y, tau, _sigma(n, 60.0, tau)


def test_chart_leaf_bound_is_pointwise(problem):
    t, y, tau, sigma = problem
    lat = BundleLattice(-NORTH, SPLIT_RADIUS + OVERLAP, math.pi)
    sampler = SphereChartSampler(t, y, tau, sigma, lat, fit=None, log_mode_mass=-20.0,
                                 max_boxes=64, box_cost=0.0)
    rng = np.random.default_rng(3)
    used = 0
    for trial in range(60):
        c = np.concatenate([rng.uniform(-1.5, 1.5, 2), rng.uniform(-3.1, 3.1, 2)])
        h = 10 ** rng.uniform(-2.5, -0.8, 4)
        lo, hi = c - h, c + h
        g_lb, _, _ = sampler._certify(lo[None], hi[None])
        z = lo + (hi - lo) * rng.random((400, 4))
        z[:32] = lo + (hi - lo) * (rng.random((32, 4)) < 0.5)          # corners
        z = z[(np.hypot(z[:, 0], z[:, 1]) <= lat.radius)
              & (np.hypot(z[:, 2], z[:, 3]) <= lat.max_speed)]
        if z.shape[0] < 20:
            continue
        g = _g_library(lat.chart, z, t, y, tau)
        assert g_lb[0] <= g.min() + 1e-12, trial
        used += g_lb[0] > 0
    assert used > 10                                 # the bound certifies, not only holds


def test_a_leaf_without_a_mean_value_score_splits_its_widest_axis(problem):
    """The mean-value score leaves out the terms that took their crude bound: where the
    certificate is void (or the score 0 on every axis) the leaf is split along its widest axis
    (the geometric score). Such leaves used to be split along the first axis only, which cut
    full-speed boxes into slivers of u1 until the cap of leaves was reached."""
    t, y, tau, sigma = problem
    lat = BundleLattice(-NORTH, SPLIT_RADIUS + OVERLAP, math.pi)
    sampler = SphereChartSampler(t, y, tau, sigma, lat, fit=None, log_mode_mass=-20.0,
                                 max_boxes=64, box_cost=0.0)
    # a thin slab in u1 across all of u2 and of the speeds (such leaves got score 0)
    lo = np.array([[1.1609, -1.5808, -3.1416, -3.1416]])
    hi = np.array([[1.1671, 1.5808, 3.1416, 3.1416]])
    g_lb, _, raw = sampler._certify(lo, hi)
    *_, score = sampler._bounds(lo, hi)
    assert g_lb[0] == 0.0 and raw[0, 0] < 1e-2 * raw[0, 1]   # the case under test
    assert np.argmax(score[0]) != 0
    assert np.allclose(score[0], (hi - lo)[0] * np.array([1.0, 1.0, 0.5, 0.5]))


# --------------------------------------------------------------------- the partition
def test_partition_covers_the_bundle_once(problem):
    t, y, tau, sigma = problem
    ws = WholeSphereBundleSampler(t, y, tau, sigma, math.pi, max_boxes=200, box_cost=0.0,
                                  acceptance_goal=1e-9)
    rng = np.random.default_rng(11)
    m = 40_000
    p = O.uniform_sphere(m, rng)
    e1, e2 = O.tangent_frame(p)
    r = math.pi * np.sqrt(rng.random(m))
    a = 2 * math.pi * rng.random(m)
    v = (r * np.cos(a))[:, None] * e1 + (r * np.sin(a))[:, None] * e2
    region = ws.region(p, v)
    seam = np.abs(O.dist(p, NORTH) - SPLIT_RADIUS) < 1e-7
    shell = r > math.pi * (1 - 1e-7)
    assert np.all(region[~(seam | shell)] >= 0)      # covered ...
    top = O.dist(p, NORTH) < SPLIT_RADIUS
    assert np.all((region == 0)[~(seam | shell)] == top[~(seam | shell)])   # ... exactly once
    # near the seam: points on both sides, each in one region
    q = O.exp(np.broadcast_to(NORTH, (2000, 3)), np.zeros((2000, 3)))
    phi = 2 * math.pi * rng.random(2000)
    side = rng.uniform(-1e-3, 1e-3, 2000)
    q = np.stack([np.sin(SPLIT_RADIUS + side) * np.cos(phi),
                  np.sin(SPLIT_RADIUS + side) * np.sin(phi), np.cos(SPLIT_RADIUS + side)], -1)
    f1, _ = O.tangent_frame(q)
    reg = ws.region(q, 0.5 * f1)
    far = np.abs(side) > 1e-7
    assert np.all(reg[far] == np.where(side[far] < 0, 0, 1))
    # the released points of B's cells lie in region B (their own witness)
    outer = ws.lattices[1]
    k = outer.index_of(np.concatenate(outer.chart.from_bundle(q, 0.5 * f1), axis=-1))
    ok = outer.in_support(k)
    pb, vb = outer.point(k[ok])
    assert np.all(ws.region(pb, vb) == 1)


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
                g = O.joint_gradient_norm(p, v, t, y, tau)
                mass[hemi, sx, sv] = np.sum(W * np.sin(A) * R * np.exp(-g / sigma))
    return mass / mass.sum()


def _cells(p, v, speed, split=SPLIT_RADIUS):
    hemi = (O.dist(p, NORTH) >= split).astype(int)
    sx = (p[:, 0] < 0).astype(int)
    sv = (np.sqrt(np.sum(v * v, axis=-1)) >= 0.5 * speed).astype(int)
    return hemi * 4 + sx * 2 + sv


def test_law_matches_quadrature():
    rng = np.random.default_rng(77)
    n, tau, speed = 8, 0.5, 2.5
    t, y = _data(n, rng, noise=0.3)
    sigma = _sigma(n, 30.0, tau)                    # spread over both hemispheres
    ws = WholeSphereBundleSampler(t, y, tau, sigma, speed, draws=3000, max_boxes=3000,
                                  box_cost=2.0, acceptance_goal=0.05)
    size = 3000
    p, v, _ = ws.sample(size, np.random.default_rng(5))
    counts = np.bincount(_cells(p, v, speed), minlength=8)
    coarse = _quadrature_cells(t, y, tau, sigma, speed, 14).reshape(-1)
    fine = _quadrature_cells(t, y, tau, sigma, speed, 18).reshape(-1)
    err = np.abs(fine - coarse)                      # the rule's error, stated by refining
    assert np.all(err < 0.01)
    # per cell: binomial deviation at z = 5.6 (Bonferroni over 8 cells: < 1e-6 in total)
    sd = np.sqrt(fine * (1 - fine) / size)
    assert np.all(np.abs(counts / size - fine) <= 5.6 * sd + 2 * err), (counts / size, fine)
    assert min(counts[:4].sum(), counts[4:].sum()) > 300          # both charts were used


def test_law_test_has_power():
    """The same test with the partition's second region dropped (a sampler that ignored
    chart B) fails: the hemisphere cells are far off."""
    rng = np.random.default_rng(77)
    n, tau, speed = 8, 0.5, 2.5
    t, y = _data(n, rng, noise=0.3)
    sigma = _sigma(n, 30.0, tau)
    fine = _quadrature_cells(t, y, tau, sigma, speed, 12).reshape(-1)
    wrong = np.concatenate([fine[:4] / fine[:4].sum(), np.zeros(4)])
    sd = np.sqrt(fine * (1 - fine) / 3000)
    assert np.any(np.abs(wrong - fine) > 5.6 * sd + 0.02)


# --------------------------------------------------------------------- exactness guards
def test_a_planted_violation_raises(problem):
    t, y, tau, sigma = problem
    ws = WholeSphereBundleSampler(t, y, tau, sigma, math.pi, max_boxes=300, box_cost=0.0,
                                  acceptance_goal=1e-9)
    for chart in ws.charts:
        chart.log_m -= 40.0
    with pytest.raises(EnvelopeViolation):
        ws.sample_indices(5, np.random.default_rng(0))


def test_emitted_outputs_are_reachable_for_a_neighbour(problem):
    t, y, tau, sigma = problem
    ws = WholeSphereBundleSampler(t, y, tau, sigma, math.pi, max_boxes=400, box_cost=0.0,
                                  acceptance_goal=1e-9)
    ids, index, _ = ws.sample_indices(20, np.random.default_rng(1))
    y2 = y.copy()
    y2[0] = O.normalize(np.array([0.3, -0.5, -0.8]))
    other = WholeSphereBundleSampler(t, y2, tau, sigma, math.pi, max_boxes=400, box_cost=0.0,
                                     acceptance_goal=1e-9)
    assert np.all(other.reachable(ids, index))
    assert np.all(ws.reachable(ids, index))
    # a point outside every region is not releasable by either
    outer = ws.lattices[1]
    z = np.array([[0.0, 0.0, 0.1, 0.1]])            # B's centre: the south pole
    k = outer.index_of(z)
    assert ws.reachable(np.array([1]), k)[0]
    inner = ws.lattices[0]
    k_in = inner.index_of(np.array([[0.0, 0.0, 0.1, 0.1]]))
    p_in, v_in = inner.point(k_in)
    zb = np.concatenate(outer.chart.from_bundle(p_in, v_in), axis=-1)
    assert not ws.reachable(np.array([1]), outer.index_of(zb))[0]


def test_progress_reports_and_cancels(problem):
    """The whole sphere's two charts draw through one loop (bundle_sphere_draw): the same
    contract as every certified bundle sampler."""
    from .test_bundle_sampler import assert_progress_reports_and_cancels

    t, y, tau, sigma = problem
    ws = WholeSphereBundleSampler(t, y, tau, sigma, math.pi, max_boxes=200, box_cost=0.0)
    assert_progress_reports_and_cancels(
        lambda size, progress: ws.sample(size, np.random.default_rng(6), progress=progress))


def test_construction_reports_and_cancels(problem):
    """Both charts' envelopes report their rounds (each half of the construction)."""
    from .test_bundle_sampler import assert_construction_reports_and_cancels

    t, y, tau, sigma = problem
    seen = []
    assert_construction_reports_and_cancels(
        lambda progress: WholeSphereBundleSampler(
            t, y, tau, sigma, math.pi, max_boxes=200, box_cost=0.0,
            progress=lambda f: (seen.append(f), progress(f))))
    assert min(seen) < 0.5 < max(seen)
