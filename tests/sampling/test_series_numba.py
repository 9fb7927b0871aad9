"""The compiled series of dpcore.sampling._series_numba give the same floats as the interval
arithmetic they replace (dpcore.sampling.spd2_parts, interval_ad.alternating_series), so the
SPD(2) enclosures, and the squeeze built on them, are unchanged bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.sampling import spd2_parts as P
from dpcore.sampling.interval_ad import alternating_series
from dpcore.sampling.intervals import Interval
from dpcore.sampling.spd2_affine import enclose_spd2_gradient, response_enclosure
from dpcore.sampling.spd2_chart import SPD2Chart

pytest.importorskip("numba", reason="the compiled series need numba (the `fast` extra)")

POWER_SERIES = ["_CH", "_SH", "_PHI1", "_PHI2", "_DSH", "_DPHI1", "_DPHI2", "_D2SH", "_D2PHI1",
                "_D2PHI2"]
ALTERNATING = ["_ASINHC", "_DASINHC", "_D2ASINHC"]


def _points(top, seed):
    """Floats in [0, top]: zeros (a third of the points in the squeeze), subnormals, tiny and
    round values, the threshold itself, and uniform ones, shuffled."""
    rng = np.random.default_rng(seed)
    special = [0.0, 5e-324, 1e-310, 1e-300, 1e-20, 1e-8, 0.125, top / 2, top]
    x = np.concatenate([special, np.zeros(50), rng.random(3000) * top,
                        rng.random(500) * 1e-6 * top])
    rng.shuffle(x)
    return x


def _same(a, b):
    return np.array_equal(a.lo, b.lo) and np.array_equal(a.hi, b.hi)


@pytest.mark.parametrize("name", POWER_SERIES)
def test_power_series_are_the_interval_floats(name):
    series = getattr(P, name)
    top = P._X2_SERIES if name.startswith("_D2") else P._X_SERIES
    x = _points(top, 1)
    assert _same(P._series_at(x, series, 0.25), P._series_at_intervals(x, series, 0.25))
    grid = x[:600].reshape(20, 30)  # any shape
    assert _same(P._series_at(grid, series, 0.25), P._series_at_intervals(grid, series, 0.25))
    zeros = np.zeros(4)
    assert _same(P._series_at(zeros, series, 0.25), P._series_at_intervals(zeros, series, 0.25))


@pytest.mark.parametrize("name", ALTERNATING)
def test_alternating_series_are_the_interval_floats(name):
    coefs = getattr(P, name)
    q = _points(P._R_SERIES, 2)
    assert _same(P._alternating_at(q, coefs), alternating_series(Interval.point(q), coefs))
    ones = np.full(3, P._R_SERIES)
    assert _same(P._alternating_at(ones, coefs), alternating_series(Interval.point(ones), coefs))


def test_the_compiled_series_are_the_ones_used():
    assert P._series_kernel is not None and P._alternating_kernel is not None


def test_spd2_enclosures_are_unchanged_bit_for_bit(monkeypatch):
    """Leaves of the squeeze's kind (boxes about the page's design, some touching a = 0)
    enclosed with the compiled series and with the intervals: identical arrays."""
    from dpcore.data import make_regression_data
    from dpcore.manifolds import SPD

    m = SPD(2)
    data = make_regression_data(m, 40, noise=0.05, rng=3, footpoint_region=(np.eye(2), 0.1))
    ys = response_enclosure(SPD2Chart(np.eye(2)).T, data.y)
    rng = np.random.default_rng(4)
    zc = np.concatenate([rng.uniform(-0.1, 0.1, (30, 6)), np.zeros((2, 6))])
    half = rng.uniform(1e-3, 0.05, zc.shape)
    basis = np.zeros((zc.shape[0], 6, 6))
    basis[:, np.arange(6), np.arange(6)] = half
    args = (zc, basis, np.zeros_like(half), np.asarray(data.x, float), ys, 0.175)
    fast = enclose_spd2_gradient(*args)
    monkeypatch.setattr(P, "_series_kernel", None)
    monkeypatch.setattr(P, "_alternating_kernel", None)
    slow = enclose_spd2_gradient(*args)
    for a, b in zip(fast, slow, strict=True):
        assert np.array_equal(a, b)
    assert np.all(np.isfinite(fast.error))
