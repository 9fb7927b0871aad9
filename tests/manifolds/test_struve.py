"""The modified Struve functions of SPD(2)'s radial law (``dpcore.manifolds._functions``)
against mpmath at 50 digits: the power series below the switch, the Bessel form above it, and
the log-derivative through ``L_0' = L_1 + 2/pi``."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from dpcore.manifolds._functions import (
    STRUVE_SWITCH,
    dlog_struve_l0,
    log_struve_l0,
    struve_l_series,
)

POINTS = np.concatenate([[1e-12, 1e-6, 1e-3, 0.1, 0.5], np.linspace(1.0, 29.5, 58),
                         [STRUVE_SWITCH - 1e-9, STRUVE_SWITCH, 31.0, 45.0, 80.0, 300.0]])


def reference(nu, x):
    with mpmath.workdps(50):
        return mpmath.struvel(nu, mpmath.mpf(float(x)))


@pytest.mark.parametrize("nu", [0, 1])
def test_series_matches_mpmath_below_the_switch(nu):
    x = POINTS[POINTS < STRUVE_SWITCH]
    got = struve_l_series(nu, x)
    want = np.array([float(reference(nu, v)) for v in x])
    np.testing.assert_allclose(got, want, rtol=4e-15, atol=0)
    assert struve_l_series(nu, 0.0) == 0.0
    assert struve_l_series(nu, np.zeros(0)).shape == (0,)


def test_log_and_its_derivative_match_mpmath():
    got, dgot = log_struve_l0(POINTS), dlog_struve_l0(POINTS)
    with mpmath.workdps(50):
        want = [float(mpmath.log(reference(0, v))) for v in POINTS]
        dwant = [float((reference(1, v) + 2 / mpmath.pi) / reference(0, v)) for v in POINTS]
    # log L_0 to 1e-13 relative (the Bessel form above the switch: I_0 for L_0, 1e-13)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(dgot, dwant, rtol=1e-13, atol=0)


def test_zero_and_nan_are_kept():
    with np.errstate(divide="ignore"):
        assert log_struve_l0(0.0) == -math.inf
    assert dlog_struve_l0(0.0) == math.inf
    assert np.isnan(log_struve_l0(np.nan)) and np.isnan(dlog_struve_l0(np.nan))
