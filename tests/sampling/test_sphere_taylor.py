"""Second-order Taylor models (dpcore.sampling.taylor2) and the Taylor-model enclosure of the
joint-regression gradient on S^2 (dpcore.sampling.sphere_taylor): pointwise validity against
dense sampling (tilted parallelepipeds, boxes straddling the clipping kink, cut terms), the
directional bound, the series curvature enclosures, tightness against the affine enclosure,
and the whitened sampler run with it (KS against the uniform exact sampler, planted violation,
reachability)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import ks_2samp

from dpcore.exceptions import EnvelopeViolation
from dpcore.manifolds import Sphere
from dpcore.sampling.bundle_lattice import BundleLattice
from dpcore.sampling.bundle_whitened import WhitenedBundleSampler
from dpcore.sampling.intervals import Interval
from dpcore.sampling.sphere_affine import enclose_gradient_parallelepiped
from dpcore.sampling.sphere_taylor import (
    enclose_gradient_taylor,
    fold_quadratic,
    lower_bound_along_quadratic,
)
from dpcore.sampling.taylor2 import (
    COS_SQRT,
    K_SQRT,
    R_SQRT,
    SINC_SQRT,
    TaylorForm2,
    parallelepiped_variables,
    series_curvature,
)

from .test_bundle_sampler import (
    CENTER,
    TAU,
    g_of,
    joint_sigma,
    regression_data,
    uniform_reference,
)
from .test_interval_ad import _frame_gradient, _setup

S2 = Sphere(2)
SLACK = 1e-12


def _corners_and_points(rng, m, extra=40):
    bits = (np.arange(16)[:, None] >> np.arange(4)) & 1
    return np.concatenate([2.0 * bits - 1.0, rng.uniform(-1, 1, (extra, 4))])[None].repeat(m, 0)


def _evaluate(enc, eps):
    return (enc.value[:, None] + np.einsum("mik,mpk->mpi", enc.linear, eps)
            + np.einsum("mpj,mijk,mpk->mpi", eps, enc.quad, eps))


# ---------------------------------------------------------------------- arithmetic
def test_taylor_arithmetic_is_pointwise(rng):
    """A formula with products, squares, sums, an Interval constant and special functions
    (cos, sinc of sqrt) on random boxes: the Taylor model contains the float value at every
    sampled point (margin far above float error)."""
    from dpcore.sampling.sphere_taylor import _PARTS

    m, k = 20, 3
    center = rng.normal(0, 1, (m, k))
    basis = rng.normal(0, 1, (m, k, k)) * np.exp(rng.uniform(-6, -1, (m, 1, 1)))
    x = parallelepiped_variables(center, basis, np.zeros((m, k)))
    const = Interval(np.array(0.3), np.array(0.30001))
    s = x[0].square() + x[1].square()
    f = (x[0] * x[1] - x[2].scale(2.0)) * const + s.apply(_PARTS["cos"], lo=0.0) * x[2]
    f = f + s.apply(_PARTS["sinc"], lo=0.0).square() - x[1]
    eps = rng.uniform(-1, 1, (m, 200, k))
    z = center[:, None] + np.einsum("mjk,mpk->mpj", basis, eps)
    s_true = z[..., 0] ** 2 + z[..., 1] ** 2
    r = np.sqrt(s_true)
    for c3 in (0.3, 0.30001):
        true = ((z[..., 0] * z[..., 1] - 2 * z[..., 2]) * c3 + np.cos(r) * z[..., 2]
                + (np.sin(r) / r) ** 2 - z[..., 1])
        pred = (f.c[:, 0, None] + np.einsum("km,mpk->mp", f.a[:, :, 0], eps)
                + np.einsum("mpj,jkm,mpk->mp", eps, f.B[:, :, :, 0], eps))
        # the Interval constant enters with its radius: both ends are covered
        assert np.all(np.abs(true - pred) <= f.e[:, 0, None] + 1e-12)


@pytest.mark.parametrize("series, fn", [
    (COS_SQRT, lambda s: np.cos(np.sqrt(s))),
    (SINC_SQRT, lambda s: np.sinc(np.sqrt(s) / np.pi)),
    (K_SQRT, lambda s: (1 - np.cos(np.sqrt(s))) / s),
    (R_SQRT, lambda s: (1 - np.sinc(2 * np.sqrt(s) / np.pi)) / s),
])
def test_series_curvature_encloses_the_second_derivative(series, fn):
    lo = np.array([0.0, 0.1, 0.5, 2.0, 6.0, 9.5])
    hi = lo + np.array([0.05, 0.2, 1.0, 0.3, 3.0, 0.3])
    enc = series_curvature(series, Interval(lo, hi))
    for a, b, c_lo, c_hi in zip(lo, hi, enc.lo, enc.hi, strict=True):
        s = np.linspace(max(a, 0.02), b, 41)
        d = 1e-3
        second = (fn(s + d) - 2 * fn(s) + fn(s - d)) / d**2       # O(d^2) accurate
        assert np.all(second >= c_lo - 1e-5) and np.all(second <= c_hi + 1e-5)
        assert c_hi - c_lo < 10 * (np.ptp(second) + 0.05 * (b - a) + 1e-9)


# ---------------------------------------------------------------------- the enclosure
@pytest.mark.parametrize("tau", [0.2, 1.0])
def test_taylor_enclosure_is_pointwise(rng, tau):
    """Tilted parallelepipeds from 1e-4 to 0.1 wide (many straddle the clipping kink
    theta = tau, some reach the cut locus: antipodal outliers)."""
    chart, t, y, uw = _setup(rng, n=40, outliers=4, antipodal=1)
    m = 30
    center = uw + rng.normal(0, 0.1, (m, 4))
    center[:, :2] *= 0.5
    scale = np.exp(rng.uniform(np.log(1e-4), np.log(0.1), (m, 1, 1)))
    basis = rng.normal(0, 1, (m, 4, 4)) * scale
    slack = rng.uniform(0, 1e-6, (m, 4))
    enc = enclose_gradient_taylor(chart, center, basis, slack, t, y, tau)
    eps = _corners_and_points(rng, m)
    zeta = rng.uniform(-1, 1, eps.shape) * slack[:, None, :]
    pts = center[:, None] + np.einsum("mjk,mpk->mpj", basis, eps) + zeta
    g = _frame_gradient(chart, pts, t, y, tau)
    assert np.all(np.abs(g - _evaluate(enc, eps)) <= enc.error[:, None] + SLACK)
    value, linear, error = fold_quadratic(enc)
    pred = value[:, None] + np.einsum("mik,mpk->mpi", linear, eps)
    assert np.all(np.abs(g - pred) <= error[:, None] + SLACK)
    norm = np.linalg.norm(enc.value, axis=1, keepdims=True)
    direction = enc.value / (norm * (1 + 1e-12))
    lower = lower_bound_along_quadratic(enc, direction)
    assert np.all(np.linalg.norm(g, axis=-1) >= lower[:, None] - SLACK)


def test_taylor_enclosure_on_boxes_straddling_the_kink(rng):
    """Boxes centred where some residual angle equals tau exactly (the clipping kink inside
    the box for that term), of half-widths 1e-3 to 3e-2."""
    chart, t, y, uw = _setup(rng, n=30, outliers=0)
    tau = 0.05
    gn = _frame_gradient(chart, uw[None, None], t, y, np.inf)
    assert np.isfinite(gn).all()
    # move the fit along w until some residual crosses tau: a grid of centres along a line
    centres = uw + np.linspace(-0.3, 0.3, 24)[:, None] * np.array([0.3, -0.2, 1.0, 0.5])
    for half in (1e-3, 1e-2, 3e-2):
        basis = np.broadcast_to(np.eye(4) * half, (24, 4, 4)).copy()
        enc = enclose_gradient_taylor(chart, centres, basis, np.zeros((24, 4)), t, y, tau)
        eps = _corners_and_points(rng, 24, extra=60)
        pts = centres[:, None] + half * eps
        g = _frame_gradient(chart, pts, t, y, tau)
        assert np.all(np.abs(g - _evaluate(enc, eps)) <= enc.error[:, None] + SLACK)


def test_taylor_is_tighter_than_affine_on_small_boxes(rng):
    chart, t, y, uw = _setup(rng, n=60, outliers=2)
    m = 12
    center = uw + rng.normal(0, 0.2, (m, 4))
    basis = np.broadcast_to(np.diag([0.01, 0.01, 0.03, 0.03]), (m, 4, 4)).copy()
    aff = enclose_gradient_parallelepiped(chart, center, basis, np.zeros((m, 4)), t, y, 0.2)
    tay = enclose_gradient_taylor(chart, center, basis, np.zeros((m, 4)), t, y, 0.2)
    _, _, error = fold_quadratic(tay)
    assert np.median(error.max(1)) < 0.5 * np.median(aff.error.max(1))


# ---------------------------------------------------------------------- the sampler
@pytest.fixture(scope="module")
def small_problem():
    rng = np.random.default_rng(20240528)
    lat = BundleLattice(CENTER, 0.6, 2.0)
    t, y = regression_data(lat, 40, rng)
    return lat, t, y, joint_sigma(40, 40.0)


def test_taylor_sampler_agrees_with_the_uniform_exact_sampler(small_problem):
    """n = 40, n eps = 40, 1500 draws each (fixed seeds); three KS tests at p > 3e-7 each
    (a false failure has chance below 1e-6 when both laws agree)."""
    lat, t, y, sigma = small_problem
    sampler = WhitenedBundleSampler(t, y, TAU, sigma, lat, draws=1500, box_cost=0.0,
                                    acceptance_goal=0.99, max_boxes=1500, slack=4.0,
                                    enclosure="taylor")
    diag = sampler.diagnostics
    assert 0.01 < diag["beta"] < 0.99 and diag["q1_boxes"] >= 1
    index, _ = sampler.sample_indices(1500, np.random.default_rng(1))
    p, v = lat.point(index)
    ref, g_ref = uniform_reference(t, y, sigma, lat.radius, 1500)  # seed 2, speeds up to 2
    for a, b in ((S2.dist(p, CENTER), S2.dist(ref[:, 0], CENTER)),
                 (np.linalg.norm(v, axis=1), np.linalg.norm(ref[:, 1], axis=1)),
                 (g_of(t, y, p, v), g_ref)):
        assert ks_2samp(a, b).pvalue > 3e-7


def test_taylor_sampler_planted_violation_and_reachability(small_problem):
    lat, t, y, sigma = small_problem
    sampler = WhitenedBundleSampler(t, y, TAU, sigma, lat, draws=50, max_boxes=200,
                                    enclosure="taylor")
    index, _ = sampler.sample_indices(50, np.random.default_rng(4))
    cells = np.random.default_rng(5).integers(0, 2**32, (300, 4), dtype=np.int64)
    inside = lat.in_support(cells)
    assert sampler.reachable(index).all()
    assert np.array_equal(sampler.reachable(cells), inside) and inside.any()
    sampler.log_m -= 4.0
    with pytest.raises(EnvelopeViolation):
        sampler.sample_indices(200, np.random.default_rng(3))


def test_unknown_enclosure_is_refused(small_problem):
    lat, t, y, sigma = small_problem
    with pytest.raises(ValueError):
        WhitenedBundleSampler(t, y, TAU, sigma, lat, enclosure="cubic")


def test_constant_interval_form():
    f = TaylorForm2.constant(Interval(np.array([1.0]), np.array([1.5])), 2)
    r = f.range()
    assert r.lo[0] <= 1.0 and r.hi[0] >= 1.5 and math.isclose(f.c[0], 1.25)
