"""Second-order Taylor models (dpcore.sampling.taylor2, used by the SPD(2) prototype's
enclosure): pointwise validity of the arithmetic with special functions against dense sampling,
the series curvature enclosures, and a constant interval form. (The S² gradient enclosure built
on them, tested here too, was replaced by the native sampler in session 35 and removed.)"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.sampling.interval_ad import cos_sqrt_parts, sinc_sqrt_parts
from dpcore.sampling.intervals import Interval
from dpcore.sampling.taylor2 import (
    COS_SQRT,
    K_SQRT,
    R_SQRT,
    SINC_SQRT,
    TaylorForm2,
    parallelepiped_variables,
    series_curvature,
)


def _entire(parts1, series):
    """``parts(x, order)`` of an entire function of a squared argument for
    :meth:`TaylorForm2.apply`: the value and slope enclosures of ``parts1`` and the series'
    curvature enclosure."""
    def parts(x, order=2):
        value, slope = parts1(x)
        return value, slope, (series_curvature(series, x) if order >= 2 else None)
    return parts


_PARTS = {"cos": _entire(cos_sqrt_parts, COS_SQRT), "sinc": _entire(sinc_sqrt_parts, SINC_SQRT)}


# ---------------------------------------------------------------------- arithmetic
def test_taylor_arithmetic_is_pointwise(rng):
    """A formula with products, squares, sums, an Interval constant and special functions
    (cos, sinc of sqrt) on random boxes: the Taylor model contains the float value at every
    sampled point (margin far above float error)."""
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


def test_constant_interval_form():
    f = TaylorForm2.constant(Interval(np.array([1.0]), np.array([1.5])), 2)
    r = f.range()
    assert r.lo[0] <= 1.0 and r.hi[0] >= 1.5 and math.isclose(f.c[0], 1.25)
