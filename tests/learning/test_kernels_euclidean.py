"""The closed-form Euclidean regression kernel against the generic path (adjoint Jacobi maps)
and finite differences of the energy."""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.learning import regression_energy, regression_gradient
from dpcore.learning.kernels.euclidean import euclidean_regression_gradient
from dpcore.learning.regression import generic_regression_gradient
from dpcore.manifolds import Euclidean


@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize("batch", [(), (5,), (2, 3)])
@pytest.mark.parametrize("tau", [None, 0.7])
def test_agrees_with_generic_path(d, batch, tau):
    rng = np.random.default_rng(d + 10 * len(batch))
    m = Euclidean(d)
    p, v = rng.normal(size=batch + (d,)), rng.normal(size=batch + (d,))
    t = rng.uniform(-0.2, 1.2, 30)
    y = rng.normal(size=(30, d)) * 2.0
    got = regression_gradient(m, p, v, t, y, tau=tau)
    want = generic_regression_gradient(m, p, v, t, y, tau=tau)
    for a, b in zip(got, want, strict=True):
        assert a.shape == b.shape == batch + (d,)
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)
    gp, gv = euclidean_regression_gradient(p, v, t, y, tau, which="vector")
    assert gp is None and np.allclose(gv, want[1], rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("d", [1, 2])
@pytest.mark.parametrize("tau", [None, 0.7])
def test_footpoints_and_vectors_broadcast_and_zero_residuals(d, tau):
    """Footpoints and vectors of different batch shapes broadcast as the generic path does
    (the kernel subtracts in place only when they agree), and a residual of exactly zero is
    not clipped (no 0/0)."""
    rng = np.random.default_rng(5 + d)
    m = Euclidean(d)
    t = rng.uniform(0.0, 1.0, 12)
    y = rng.normal(size=(12, d))
    for p, v in ((rng.normal(size=d), rng.normal(size=(4, d))),
                 (rng.normal(size=(3, 1, d)), rng.normal(size=(5, d)))):
        got = regression_gradient(m, p, v, t, y, tau=tau)
        want = generic_regression_gradient(m, p, v, t, y, tau=tau)
        for a, b in zip(got, want, strict=True):
            assert a.shape == b.shape
            np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)
    y0 = np.vstack([np.zeros((1, d)), y[1:]])  # y_0 = p + t_0 v exactly
    got = regression_gradient(m, np.zeros(d), np.zeros(d), t, y0, tau=tau)
    want = generic_regression_gradient(m, np.zeros(d), np.zeros(d), t, y0, tau=tau)
    assert all(np.all(np.isfinite(a)) for a in got)
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)


def huber_energy(p, v, t, y, tau):
    """(1/n) sum of rho_tau(|y_i - p - t_i v|): r^2/2 within tau, tau r - tau^2/2 beyond."""
    r = np.linalg.norm(y - p - t[:, None] * v, axis=1)
    if tau is None:
        return float(np.mean(0.5 * r * r))
    return float(np.mean(np.where(r <= tau, 0.5 * r * r, tau * r - 0.5 * tau * tau)))


@pytest.mark.parametrize("tau", [None, 0.7])
def test_is_the_gradient_of_the_energy(tau):
    rng = np.random.default_rng(3)
    m = Euclidean(2)
    t = rng.uniform(0.0, 1.0, 25)
    y = rng.normal(size=(25, 2))
    p, v = rng.normal(size=2), rng.normal(size=2)
    gp, gv = regression_gradient(m, p, v, t, y, tau=tau)
    if tau is None:  # the library's energy is the unclipped one
        assert regression_energy(m, p, v, t, y) == pytest.approx(huber_energy(p, v, t, y, None))
    step = 1e-6
    for k in range(2):
        e = np.eye(2)[k]
        fd_p = (huber_energy(p + step * e, v, t, y, tau)
                - huber_energy(p - step * e, v, t, y, tau)) / (2 * step)
        fd_v = (huber_energy(p, v + step * e, t, y, tau)
                - huber_energy(p, v - step * e, t, y, tau)) / (2 * step)
        assert fd_p == pytest.approx(gp[k], abs=1e-7)
        assert fd_v == pytest.approx(gv[k], abs=1e-7)
