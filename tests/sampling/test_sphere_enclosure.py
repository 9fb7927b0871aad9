"""Interval enclosure of the joint-regression gradient norm on S^2
(dpcore.sampling.sphere_enclosure): the chart agrees with the library's geometry, every
library evaluation of g inside a box lies within the box's bounds (cut locus included), the
bounds overestimate to first order in the box size, they reach 0 at the non-private fit, and
the time for a sampler-sized batch is reported."""

from __future__ import annotations

import time

import numpy as np
import pytest

from dpcore.learning import GeodesicRegression
from dpcore.learning.regression import regression_gradient
from dpcore.manifolds import Sphere
from dpcore.sampling.sphere_enclosure import (
    CUT_MARGIN,
    SphereBundleChart,
    enclose_gradient,
    gradient_norm,
)

S2 = Sphere(2)
SLACK = 1e-12
U_MAX, W_MAX = 0.6, 2.0


def geodesic_data(rng, chart, n, *, noise=0.1, outliers=0, antipodal=0, uw=None):
    """Noisy responses along the geodesic with coordinates ``uw`` (u1, u2, w1, w2), plus
    uniformly random outliers and responses near the antipode of their prediction."""
    t = rng.random(n)
    t[:2] = 0.0, 1.0
    uw = np.array([0.15, -0.2, 0.9, 0.4]) if uw is None else np.asarray(uw, dtype=float)
    p, v = chart.to_bundle(uw[:2], uw[2:])
    pred = S2.exp(p, t[:, None] * v)
    y = S2.exp(pred, S2.proj_tangent(pred, noise * rng.standard_normal((n, 3))))
    idx = rng.permutation(np.arange(2, n))
    y[idx[:outliers]] = S2.random_point(outliers, rng=rng)
    near = idx[outliers:outliers + antipodal]
    y[near] = -S2.exp(pred[near], S2.proj_tangent(pred[near],
                                                  1e-3 * rng.standard_normal((near.size, 3))))
    return t, y, uw


def library_g(chart, pts, t, y, tau):
    """g by the library's regression_gradient at coordinates ``pts`` (m, 4)."""
    return gradient_norm(chart, pts[:, :2], pts[:, 2:], t, y, tau)


def random_boxes(rng, m, centers=None):
    """Boxes with sides log-uniform in [1e-4, 0.5] inside |u| <= 0.6, |w| <= 2."""
    side = np.exp(rng.uniform(np.log(1e-4), np.log(0.5), (m, 1))) * rng.uniform(0.3, 1, (m, 4))
    half = side / 2
    if centers is None:
        cu = _in_disc(rng, m, U_MAX - np.linalg.norm(half[:, :2], axis=1))
        cw = _in_disc(rng, m, W_MAX - np.linalg.norm(half[:, 2:], axis=1))
        centers = np.concatenate([cu, cw], axis=1)
    return centers - half, centers + half


def _in_disc(rng, m, radius):
    r = radius * np.sqrt(rng.random(m))
    a = rng.uniform(0, 2 * np.pi, m)
    return np.stack([r * np.cos(a), r * np.sin(a)], axis=1)


def points_in_boxes(rng, lo, hi, k):
    """(m, 16 + k, 4): the 16 corners of each box, then k uniform points."""
    bits = (np.arange(16)[:, None] >> np.arange(4)) & 1
    corners = lo[:, None, :] + bits[None] * (hi - lo)[:, None, :]
    inner = lo[:, None, :] + rng.random((lo.shape[0], k, 4)) * (hi - lo)[:, None, :]
    return np.concatenate([corners, inner], axis=1)


def assert_rigorous(chart, lo, hi, t, y, tau, rng, k=40):
    enc = enclose_gradient(chart, lo, hi, t, y, tau)
    pts = points_in_boxes(rng, lo, hi, k)
    g = library_g(chart, pts.reshape(-1, 4), t, y, tau).reshape(pts.shape[:2])
    assert pts.shape[0] * pts.shape[1] >= 2000
    below = enc.lower[:, None] - SLACK - g
    above = g - enc.upper[:, None] - SLACK
    assert np.all(below <= 0), f"lower bound violated by {below.max():.3g}"
    assert np.all(above <= 0), f"upper bound violated by {above.max():.3g}"
    return enc, g


# ------------------------------------------------------------------------------ the chart
def test_chart_agrees_with_the_library_geometry(rng):
    chart = SphereBundleChart(S2.random_point(rng=rng))
    u = rng.uniform(-0.6, 0.6, (200, 2))
    w = rng.uniform(-2, 2, (200, 2))
    p, v = chart.to_bundle(u, w)
    m0, basis = chart.center, chart.frame[1:]
    np.testing.assert_allclose(chart.frame @ chart.frame.T, np.eye(3), atol=1e-15)
    np.testing.assert_allclose(p, S2.exp(m0, u @ basis), atol=1e-14)
    np.testing.assert_allclose(v, S2.transport(m0, p, w @ basis), atol=1e-14)
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), np.linalg.norm(w, axis=1), atol=1e-14)
    u2, w2 = chart.from_bundle(p, v)
    np.testing.assert_allclose(u2, u, atol=1e-13)
    np.testing.assert_allclose(w2, w, atol=1e-13)
    r = np.linalg.norm(u, axis=1)
    np.testing.assert_allclose(chart.volume_density(u), np.sin(r) / r, rtol=1e-14)
    assert chart.volume_density(np.zeros(2)) == 1.0
    with pytest.raises(ValueError):
        SphereBundleChart(m0, e1=m0)


@pytest.mark.parametrize("tau", [0.3, 5.0])
def test_point_boxes_reproduce_the_library(rng, tau):
    chart = SphereBundleChart(S2.random_point(rng=rng))
    t, y, _ = geodesic_data(rng, chart, 30, outliers=4)
    pts = np.concatenate([_in_disc(rng, 100, U_MAX), _in_disc(rng, 100, W_MAX)], axis=1)
    pts[0, 2:] = 0.0  # |v| = 0 (library: generic path)
    enc = enclose_gradient(chart, pts, pts, t, y, tau)
    g = library_g(chart, pts, t, y, tau)
    assert np.all(enc.lower <= g + SLACK) and np.all(g <= enc.upper + SLACK)
    assert np.max(enc.upper - enc.lower) < 1e-12
    p, v = chart.to_bundle(pts[:, :2], pts[:, 2:])
    gp, gv = regression_gradient(S2, p, v, t, y, tau=tau)
    for box, lib in ((enc.grad_p, gp @ chart.frame.T), (enc.grad_v, gv @ chart.frame.T)):
        assert np.all(box.lo - SLACK <= lib) and np.all(lib <= box.hi + SLACK)


# ------------------------------------------------------------------------------ rigor
@pytest.mark.parametrize("n, outliers, antipodal, tau", [
    (20, 2, 2, 0.3), (40, 5, 3, 0.5), (60, 6, 6, 1.0), (40, 4, 4, 4.0)])
def test_bounds_hold_at_library_evaluations(rng, n, outliers, antipodal, tau):
    chart = SphereBundleChart(S2.random_point(rng=rng))
    t, y, uw = geodesic_data(rng, chart, n, outliers=outliers, antipodal=antipodal)
    lo, hi = random_boxes(rng, 60)
    enc, _ = assert_rigorous(chart, lo, hi, t, y, tau, rng)
    assert np.mean(enc.lower > 0) > 0.3  # not vacuous
    # boxes about the generating geodesic, where the antipodal responses sit at the cut locus
    lo, hi = random_boxes(rng, 60, centers=uw + rng.normal(0, 0.02, (60, 4)))
    enc, _ = assert_rigorous(chart, lo, hi, t, y, tau, rng)
    assert enc.cut.any()  # the fall-back was exercised


@pytest.mark.parametrize("offset", [0.0, 3e-9])
def test_response_antipodal_to_a_prediction(rng, offset):
    """At the box centre the library sees a residual within CUT_TOL of the cut locus (counted
    as 0); a hair away it is a full clipped residual of norm tau: both must be inside the
    bounds, also for tiny boxes whose theta stays a few 1e-9 below pi."""
    chart = SphereBundleChart(S2.random_point(rng=rng))
    t, y, uw = geodesic_data(rng, chart, 30, outliers=2)
    p, v = chart.to_bundle(uw[:2], uw[2:])
    pred = S2.exp(p, t[5] * v)
    y[5] = -S2.exp(pred, offset * S2.proj_tangent(pred, rng.standard_normal(3)) / np.sqrt(2))
    tau = 0.4
    jumps = []
    for h in (1e-12, 1e-9, 1e-6, 1e-3):
        lo, hi = (uw - h)[None], (uw + h)[None]
        enc = enclose_gradient(chart, lo, hi, t, y, tau)
        assert enc.cut[0]
        pts = np.concatenate([uw[None], points_in_boxes(rng, lo, hi, 2000)[0]])
        g = library_g(chart, pts, t, y, tau)
        assert np.all(enc.lower[0] - SLACK <= g) and np.all(g <= enc.upper[0] + SLACK)
        jumps.append(np.ptp(g))
    assert max(jumps) > 1e-3  # the library's g jumps at the cut locus


def test_input_checks(rng):
    chart = SphereBundleChart(S2.random_point(rng=rng))
    t, y, _ = geodesic_data(rng, chart, 10)
    box = np.zeros((1, 4))
    with pytest.raises(ValueError):
        enclose_gradient(chart, box + 1, box, t, y, 0.3)
    with pytest.raises(ValueError):
        enclose_gradient(chart, box, box + [3.2, 0, 0, 0], t, y, 0.3)
    with pytest.raises(ValueError):
        enclose_gradient(chart, box, box, t, y, 0.0)


# ------------------------------------------------------------------------------ usefulness
def test_overestimation_is_first_order(rng):
    chart = SphereBundleChart(S2.random_point(rng=rng))
    t, y, uw = geodesic_data(rng, chart, 40, outliers=3)
    tau = 0.5
    center = uw + np.array([0.1, -0.05, 0.3, -0.2])
    g0 = library_g(chart, center[None], t, y, tau)[0]
    assert g0 > 0.05
    # the ideal first-order constant: min over the box of a linear function = g0 - h |grad|_1
    d = 1e-6
    grad = [(library_g(chart, (center + d * e)[None], t, y, tau)[0]
             - library_g(chart, (center - d * e)[None], t, y, tau)[0]) / (2 * d)
            for e in np.eye(4)]
    ideal = np.sum(np.abs(grad))
    consts = {}
    for h in (1e-1, 1e-2, 1e-3, 1e-4):
        enc = enclose_gradient(chart, (center - h)[None], (center + h)[None], t, y, tau)
        consts[h] = ((g0 - enc.lower[0]) / h, (enc.upper[0] - g0) / h)
    print(f"\ng(centre) = {g0:.4f}, ideal |grad g|_1 = {ideal:.3f}; (g - lower)/h, (upper - g)/h:")
    for h, (a, b) in consts.items():
        print(f"  h = {h:.0e}: {a:8.3f} {b:8.3f}")
    small = [consts[h][0] for h in (1e-2, 1e-3, 1e-4)]
    assert max(small) < 50 and max(small) < 1.5 * min(small)
    assert all(c >= ideal * (1 - 1e-3) for c in small)  # a bound can't beat the truth


def test_lower_bound_vanishes_at_the_fit(rng):
    chart0 = SphereBundleChart(S2.random_point(rng=rng))
    t, y, _ = geodesic_data(rng, chart0, 50, noise=0.05)
    fit = GeodesicRegression(S2, covariate_range=(0.0, 1.0)).fit(t, y)
    tau = 1.0
    assert np.max(S2.dist(fit.predict(t), y)) < tau  # clipping inactive: the fit is a zero
    # a public centre near (not at) the fit
    chart = SphereBundleChart(S2.exp(fit.footpoint_, S2.proj_tangent(
        fit.footpoint_, 0.2 * rng.standard_normal(3))))
    u, w = chart.from_bundle(fit.footpoint_, fit.shooting_vector_)
    c = np.concatenate([u, w])
    assert np.linalg.norm(u) < U_MAX and np.linalg.norm(w) < W_MAX
    assert library_g(chart, c[None], t, y, tau)[0] < 1e-9
    hs = np.array([1e-2, 1e-3, 1e-4])
    enc = enclose_gradient(chart, c - hs[:, None], c + hs[:, None], t, y, tau)
    assert np.all(enc.lower == 0.0)
    off = c + np.array([0.05, 0.0, 0.0, 0.0])  # a box away from the fit is bounded away from 0
    enc = enclose_gradient(chart, (off - 1e-4)[None], (off + 1e-4)[None], t, y, tau)
    assert enc.lower[0] > 0.5 * library_g(chart, off[None], t, y, tau)[0] > 0


# ------------------------------------------------------------------------------ speed
@pytest.mark.slow
def test_speed_report(rng):
    chart = SphereBundleChart(S2.random_point(rng=rng))
    t, y, _ = geodesic_data(rng, chart, 250, outliers=10, antipodal=5)
    lo, hi = random_boxes(rng, 10_000)
    start = time.perf_counter()
    enc = enclose_gradient(chart, lo, hi, t, y, 0.5)
    elapsed = time.perf_counter() - start
    print(f"\nenclose_gradient: 10,000 boxes x n = 250 in {elapsed:.2f} s "
          f"({elapsed / 2.5e6 * 1e9:.0f} ns per (box, term))")
    assert enc.lower.shape == (10_000,) and np.all(enc.lower <= enc.upper)
    assert CUT_MARGIN >= 1e-6
