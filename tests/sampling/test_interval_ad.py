"""Forward differentiation in interval arithmetic (dpcore.sampling.interval_ad), the mean-value
enclosure of the S^2 joint-regression gradient (dpcore.sampling.sphere_mean_value) and the
affine-arithmetic enclosure (dpcore.sampling.affine, sphere_affine): derivatives match exact
ones at points, enclosures over boxes contain the values and the (finite-difference)
Jacobians at random points, clipping switches and the cut locus stay rigorous, and the
overestimation constant of g's lower bound drops from the plain form's to near the ideal."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from dpcore.learning.regression import regression_gradient
from dpcore.manifolds import Sphere
from dpcore.sampling.affine import AffineForm, box_variables
from dpcore.sampling.interval_ad import (
    DualInterval,
    a_at,
    cos_of_sqrt,
    sinc_of_sqrt,
    variables,
)
from dpcore.sampling.intervals import Interval
from dpcore.sampling.sphere_affine import enclose_gradient_affine
from dpcore.sampling.sphere_enclosure import SphereBundleChart, enclose_gradient
from dpcore.sampling.sphere_mean_value import b_at, enclose_gradient_mv

from .test_sphere_enclosure import geodesic_data, points_in_boxes, random_boxes

S2 = Sphere(2)
SLACK = 1e-12


# ------------------------------------------------------------------------------ the dual class
def _f(x, y):
    """A formula using every operation; x, y are duals (or floats for the reference)."""
    if isinstance(x, DualInterval):
        s = sinc_of_sqrt(x.square() + y.square())
        c = cos_of_sqrt(x.square() * 0.25)
        r = (x * x + 1.5).sqrt()
        a = (y * 0.3).arccos()
        return (x * y - y / r + s * c + x.sin() * y.cos() + a * r).exp() + (-x + 2.0) / (y + 3.0)
    s = np.sinc(np.sqrt(x * x + y * y) / np.pi)
    c = np.cos(np.sqrt(x * x * 0.25))
    r = np.sqrt(x * x + 1.5)
    a = np.arccos(y * 0.3)
    return np.exp(x * y - y / r + s * c + np.sin(x) * np.cos(y) + a * r) + (-x + 2.0) / (y + 3.0)


def test_derivatives_match_at_points(rng):
    pts = rng.uniform(-1.5, 1.5, (200, 2))
    x, y = variables(pts, pts)
    out = _f(x, y)
    h = 1e-6
    for j, e in enumerate(np.eye(2)):
        fd = (_f(*(pts + h * e).T) - _f(*(pts - h * e).T)) / (2 * h)
        np.testing.assert_allclose(out.der.mid()[j, :, 0], fd, rtol=1e-7, atol=1e-7)
    np.testing.assert_allclose(out.val.mid()[:, 0], _f(*pts.T), rtol=1e-14)
    # point boxes: thin derivative enclosures (the slope series bracket to ~1e-9 relative)
    assert np.max(out.der.width() / (1 + np.abs(out.der.mid()))) < 1e-9


def test_box_enclosures_contain_values_and_derivatives(rng):
    lo, hi = random_boxes(rng, 40)
    lo, hi = lo[:, :2] * 0.5, hi[:, :2] * 0.5
    x, y = variables(lo, hi)
    out = _f(x, y)
    h = 1e-6
    for _ in range(30):
        pts = lo + rng.random(lo.shape) * (hi - lo)
        val = _f(*pts.T)
        assert np.all(out.val.lo[:, 0] <= val + 1e-12) and np.all(val <= out.val.hi[:, 0] + 1e-12)
        for j, e in enumerate(np.eye(2)):
            fd = (_f(*(pts + h * e).T) - _f(*(pts - h * e).T)) / (2 * h)
            assert np.all(out.der.lo[j, :, 0] - 1e-6 <= fd)
            assert np.all(fd <= out.der.hi[j, :, 0] + 1e-6)


def test_clip_max_covers_both_branches():
    x = variables(np.array([[0.5], [1.5], [0.9]]), np.array([[0.8], [2.0], [1.2]]))[0]
    c = (x * 2.0).clip_max(2.0)
    np.testing.assert_allclose(c.der.lo[0, :, 0], [2.0, 0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(c.der.hi[0, :, 0], [2.0, 0.0, 2.0], atol=1e-12)
    assert c.val.hi[2, 0] == 2.0


def test_operation_checks():
    x = variables(np.array([[-0.1]]), np.array([[0.1]]))[0]
    with pytest.raises(ZeroDivisionError):
        x.sqrt()
    with pytest.raises(ZeroDivisionError):
        (x + 0.95).arccos()
    with pytest.raises(ValueError):
        x.sum(axis=0)


def test_special_function_enclosures_against_mpmath():
    mpmath.mp.prec = 400  # B cancels to O(x^5) against terms of order x
    xs = np.array([0.0, 1e-9, 0.01, 0.3, 0.4999, 0.5, 1.0, 2.0, 3.0, np.pi])
    a = a_at(xs)
    b = b_at(xs)
    for i, x in enumerate(xs):
        xm = mpmath.mpf(float(x))
        if x == 0:
            exact_a, exact_b = mpmath.mpf(1) / 3, mpmath.mpf(2) / 15
        else:
            exact_a = (mpmath.sin(xm) - xm * mpmath.cos(xm)) / xm**3
            z = 2 * xm
            exact_b = 8 * (3 * (z - mpmath.sin(z)) - z * (1 - mpmath.cos(z))) / z**5
        assert a.lo[i] <= exact_a <= a.hi[i]
        assert b.lo[i] <= exact_b <= b.hi[i]
        assert a.hi[i] - a.lo[i] < 1e-8 and b.hi[i] - b.lo[i] < 1e-6


# ------------------------------------------------------------------------------ affine forms
def _g_affine(x, y):
    return (x * y + x.square() * 0.5 - y * 2.0).apply(
        lambda i, slope=True: (i.sin(), i.cos() if slope else None)) * x + 1.0


def test_affine_forms_enclose_pointwise(rng):
    lo = rng.uniform(-1, 1, (50, 2))
    hi = lo + rng.uniform(0, 0.3, (50, 2))
    (x, y), c, h = box_variables(lo, hi)
    out = _g_affine(x, y)
    assert isinstance(out, AffineForm)
    for _ in range(40):
        pts = lo + rng.random(lo.shape) * (hi - lo)
        eps = (pts - c) / np.where(h > 0, h, 1.0)
        exact = (np.sin(pts[:, 0] * pts[:, 1] + 0.5 * pts[:, 0] ** 2 - 2 * pts[:, 1])
                 * pts[:, 0] + 1.0)
        pred = out.c[:, 0] + np.einsum("jm,mj->m", out.a[:, :, 0], eps)
        assert np.all(np.abs(exact - pred) <= out.e[:, 0] + 1e-13)
    # second order: the error of a tiny box is tiny
    (x, y), _, _ = box_variables(lo[:1], lo[:1] + 1e-5)
    assert _g_affine(x, y).e[0, 0] < 1e-8


def test_affine_interval_constants_and_means(rng):
    (x,), c, h = box_variables(np.array([[0.2]]), np.array([[0.4]]))
    k = Interval(np.array([[1.0, 2.0, 3.0]]), np.array([[1.0 + 1e-9, 2.0, 3.0]]))
    out = (x * k).mean()
    for z in np.linspace(0.2, 0.4, 11):
        exact = z * 2.0
        eps = (z - c[0, 0]) / h[0, 0]
        pred = out.c[0] + out.a[0, 0] * eps
        assert abs(exact - pred) <= out.e[0] + 1e-15


# ------------------------------------------------------------------------------ the gradient
def _frame_gradient(chart, pts, t, y, tau):
    p, v = chart.to_bundle(pts[..., :2], pts[..., 2:])
    gp, gv = regression_gradient(S2, p, v, t, y, tau=tau)
    return np.concatenate([gp @ chart.frame.T, gv @ chart.frame.T], axis=-1)


def _setup(rng, n=30, outliers=3, antipodal=0):
    chart = SphereBundleChart(S2.random_point(rng=rng))
    t, y, uw = geodesic_data(rng, chart, n, outliers=outliers, antipodal=antipodal)
    return chart, t, y, uw


@pytest.mark.parametrize("tau", [0.2, 0.5, 4.0])
def test_mean_value_enclosure_contains_values_and_jacobians(rng, tau):
    chart, t, y, uw = _setup(rng)
    lo, hi = random_boxes(rng, 25, centers=uw + rng.normal(0, 0.1, (25, 4)))
    lo, hi = uw + (lo - uw) * 0.05, uw + (hi - uw) * 0.05  # boxes from 5e-6 to 0.05 wide
    enc = enclose_gradient_mv(chart, lo, hi, t, y, tau)
    pts = points_in_boxes(rng, lo, hi, 20)                  # (m, 36, 4)
    g = _frame_gradient(chart, pts, t, y, tau)
    assert np.all(enc.grad.lo[:, None] - SLACK <= g) and np.all(g <= enc.grad.hi[:, None] + SLACK)
    gn = np.linalg.norm(g, axis=-1)
    assert np.all(enc.lower[:, None] - SLACK <= gn) and np.all(gn <= enc.upper[:, None] + SLACK)
    # Jacobians by central differences at interior points (step well inside the box)
    inner = lo[:, None] + (0.2 + 0.6 * rng.random((lo.shape[0], 8, 4))) * (hi - lo)[:, None]
    d = np.maximum(1e-7, 0.1 * np.min(hi - lo, axis=-1))[:, None, None]
    for j, e in enumerate(np.eye(4)):
        step = np.minimum(d, 1e-5) * e
        fd = (_frame_gradient(chart, inner + step, t, y, tau)
              - _frame_gradient(chart, inner - step, t, y, tau)) / (2 * step[..., j:j + 1])
        tol = 1e-5 + 1e-3 * np.abs(fd)  # central-difference error (a kink may sit between)
        box = enc.jacobian[:, None, :, j]
        inside = (box.lo - tol <= fd) & (fd <= box.hi + tol)
        assert inside.mean() > 0.99, f"coordinate {j}: {inside.mean():.3f} inside"


def test_clipping_switch_and_cut_locus_stay_rigorous(rng):
    chart, t, y, uw = _setup(rng, n=25, outliers=2, antipodal=2)
    tau = 0.3
    p, v = chart.to_bundle(uw[:2], uw[2:])
    # a response at distance tau exactly from its prediction: the clip switches in the box
    preds = S2.exp(p, t[:, None] * v)
    i = int(np.argmin(S2.dist(preds, y)))          # not one of the antipodal responses
    direction = S2.proj_tangent(preds[i], rng.standard_normal(3))
    y[i] = S2.exp(preds[i], tau * direction / np.linalg.norm(direction))
    j = int(np.argmax(S2.dist(preds, y)))
    y[j] = -preds[j]  # exactly antipodal at the centre: the library's residual is 0 there
    for h in (1e-6, 1e-4, 1e-2):
        lo, hi = (uw - h)[None], (uw + h)[None]
        for enc in (enclose_gradient_mv(chart, lo, hi, t, y, tau),
                    enclose_gradient_affine(chart, lo, hi, t, y, tau)):
            assert enc.cut[0]
            pts = np.concatenate([uw[None], points_in_boxes(rng, lo, hi, 300)[0]])
            gn = np.linalg.norm(_frame_gradient(chart, pts, t, y, tau), axis=-1)
            assert np.all(enc.lower[0] - SLACK <= gn) and np.all(gn <= enc.upper[0] + SLACK)


@pytest.mark.parametrize("tau", [0.2, 1.0])
def test_affine_enclosure_is_pointwise(rng, tau):
    chart, t, y, uw = _setup(rng, n=40, outliers=4, antipodal=1)
    lo, hi = random_boxes(rng, 40)
    enc = enclose_gradient_affine(chart, lo, hi, t, y, tau)
    pts = points_in_boxes(rng, lo, hi, 30)
    g = _frame_gradient(chart, pts, t, y, tau)
    eps = (pts - enc.center[:, None]) / np.where(enc.half > 0, enc.half, 1.0)[:, None]
    pred = enc.value[:, None] + np.einsum("mkj,mpj->mpk", enc.linear, eps)
    assert np.all(np.abs(g - pred) <= enc.error[:, None] + SLACK)
    gn = np.linalg.norm(g, axis=-1)
    assert np.all(enc.lower[:, None] - SLACK <= gn) and np.all(gn <= enc.upper[:, None] + SLACK)


def _ideal_constant(chart, center, t, y, tau):
    d = 1e-6
    grad = [(np.linalg.norm(_frame_gradient(chart, (center + d * e)[None], t, y, tau))
             - np.linalg.norm(_frame_gradient(chart, (center - d * e)[None], t, y, tau)))
            / (2 * d) for e in np.eye(4)]
    return float(np.sum(np.abs(grad)))


def test_overestimation_constant_drops_to_near_ideal(rng):
    """(g(c) - lower)/h for boxes [c - h, c + h] near a point with g > 0: the plain interval
    enclosure's constant against the mean-value and affine forms' and the ideal |grad g|_1."""
    rows = []
    for _ in range(4):
        chart, t, y, uw = _setup(rng, n=40, outliers=3)
        tau = 0.5
        center = uw + rng.normal(0, 0.15, 4)
        g0 = float(np.linalg.norm(_frame_gradient(chart, center[None], t, y, tau)))
        if g0 < 0.05:
            continue
        ideal = _ideal_constant(chart, center, t, y, tau)
        for h in (1e-2, 1e-3, 1e-4):
            lo, hi = (center - h)[None], (center + h)[None]
            plain = (g0 - enclose_gradient(chart, lo, hi, t, y, tau).lower[0]) / h
            mv = (g0 - enclose_gradient_mv(chart, lo, hi, t, y, tau).lower[0]) / h
            aff = (g0 - enclose_gradient_affine(chart, lo, hi, t, y, tau).lower[0]) / h
            rows.append((g0, ideal, h, plain / ideal, mv / ideal, aff / ideal))
    print("\n g(c)   ideal  h      plain/ideal  mean-value/ideal  affine/ideal")
    for r in rows:
        print(f" {r[0]:.3f}  {r[1]:.3f}  {r[2]:.0e}  {r[3]:10.2f}  {r[4]:14.3f}  {r[5]:12.3f}")
    small = np.array([r for r in rows if r[2] == 1e-4])
    assert small.shape[0] >= 2
    assert np.all(small[:, 4] >= 1 - 1e-3) and np.all(small[:, 5] >= 1 - 1e-3)  # truth
    assert np.all(small[:, 4] < 1.25) and np.all(small[:, 5] < 1.25)           # near ideal
    assert np.median(small[:, 3]) > 2.5 * np.median(small[:, 4])                # the gain
