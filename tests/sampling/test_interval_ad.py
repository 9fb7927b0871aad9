"""Forward differentiation in interval arithmetic (dpcore.sampling.interval_ad) and affine
arithmetic (dpcore.sampling.affine): derivatives match exact ones at points, enclosures over
boxes contain the values and the (finite-difference) derivatives at random points, clipping
covers both branches, and the special-function enclosures hold against mpmath. (The S²
gradient enclosures built on them, tested here too, were replaced by the native sampler in
session 35 and removed.)"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from dpcore.sampling.affine import AffineForm, box_variables
from dpcore.sampling.interval_ad import (
    DualInterval,
    a_at,
    cos_of_sqrt,
    sinc_of_sqrt,
    variables,
)
from dpcore.sampling.intervals import Interval

U_MAX, W_MAX = 0.6, 2.0


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
    mpmath.mp.prec = 400
    xs = np.array([0.0, 1e-9, 0.01, 0.3, 0.4999, 0.5, 1.0, 2.0, 3.0, np.pi])
    a = a_at(xs)
    for i, x in enumerate(xs):
        xm = mpmath.mpf(float(x))
        if x == 0:
            exact_a = mpmath.mpf(1) / 3
        else:
            exact_a = (mpmath.sin(xm) - xm * mpmath.cos(xm)) / xm**3
        assert a.lo[i] <= exact_a <= a.hi[i]
        assert a.hi[i] - a.lo[i] < 1e-8


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
