"""The closed-form SPD kernels against the generic path, finite differences and 40-digit
arithmetic."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from dpcore.learning import frechet_mean_gradient, regression_energy, regression_gradient
from dpcore.learning.frechet import frechet_energy
from dpcore.learning.kernels import spd as spd_kernels
from dpcore.learning.kernels.spd import MAX_COND, spd_frechet_gradient, spd_regression_gradient
from dpcore.learning.regression import generic_regression_gradient
from dpcore.manifolds import SPD

RTOL = 1e-10


def relative_error(a, b):
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def tame_point(m, size, rng):
    """expm of half a standard Gaussian symmetric matrix (``random_point`` without the 1/2
    reaches condition numbers of 1e9 at k = 4)."""
    eye = np.broadcast_to(np.eye(m.k), tuple(size) + (m.k, m.k))
    return m.exp(eye, 0.5 * m.random_tangent(eye, rng))


def regression_problem(m, rng, batch, n=40, spread=0.3):
    """Fits (p, v) with batch shape ``batch`` and n responses scattered (``spread`` times a
    standard Gaussian tangent vector) about a geodesic; condition numbers stay below about
    1e4, within ``MAX_COND``."""
    p = tame_point(m, batch, rng)
    v = m.random_tangent(p, rng) * rng.uniform(0.05, 1.0, size=batch + (1, 1))
    t = rng.uniform(-0.2, 1.2, n)
    p0, v0 = tame_point(m, (), rng), 0.5 * m.random_tangent(np.eye(m.k), rng)
    pred = m.exp(np.broadcast_to(p0, (n, m.k, m.k)), t[:, None, None] * v0)
    y = m.exp(pred, spread * m.random_tangent(pred, rng))
    assert np.linalg.cond(np.concatenate([p.reshape(-1, m.k, m.k), y])).max() < MAX_COND
    return p, v, t, y


@pytest.mark.parametrize("k", [2, 3, 4])
@pytest.mark.parametrize("batch", [(), (5,), (2, 3)])
@pytest.mark.parametrize("tau", [None, 0.3])
def test_agrees_with_generic_path(k, batch, tau, rng):
    m = SPD(k)
    p, v, t, y = regression_problem(m, rng, batch)
    fast = spd_regression_gradient(p, v, t, y, tau)
    slow = generic_regression_gradient(m, p, v, t, y, tau=tau)
    for a, b in zip(fast, slow, strict=True):
        assert a.shape == b.shape == p.shape
        assert relative_error(a, b) < RTOL


@pytest.mark.parametrize("seed", range(6))
def test_agrees_with_generic_path_on_clipped_and_far_data(seed):
    """Residuals far beyond tau (most clipped) and steep geodesics."""
    rng = np.random.default_rng(seed)
    for k in (2, 3):
        m = SPD(k)
        p, v, t, y = regression_problem(m, rng, (4,), spread=1.0)
        for tau in (None, 0.05, 1.0):
            fast = spd_regression_gradient(p, 3.0 * v, t, y, tau)
            slow = generic_regression_gradient(m, p, 3.0 * v, t, y, tau=tau)
            for a, b in zip(fast, slow, strict=True):
                assert relative_error(a, b) < RTOL


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.sampled_from([2, 3]),
       tau=st.sampled_from([None, 0.01, 0.2, 5.0]), speed=st.floats(0.0, 4.0))
@example(seed=1, k=3, tau=None, speed=5e-324)  # a subnormal speed lost 2.5% (found by hypothesis)
def test_agrees_with_generic_path_hypothesis(seed, k, tau, speed):
    rng = np.random.default_rng(seed)
    m = SPD(k)
    p, v, t, y = regression_problem(m, rng, (3,))
    v = v / m.norm(p, v)[:, None, None] * speed
    fast = spd_regression_gradient(p, v, t, y, tau)
    slow = generic_regression_gradient(m, p, v, t, y, tau=tau)
    for a, b in zip(fast, slow, strict=True):
        assert relative_error(a, b) < RTOL


@pytest.mark.parametrize("k", [2, 3])
def test_flat_directions(k, rng):
    """v = 0 and v proportional to p: every eigen-gap of the curvature operator is 0."""
    m = SPD(k)
    p, v, t, y = regression_problem(m, rng, (4,))
    for w in (0.0 * v, 0.7 * p, np.concatenate([0.0 * v[:2], v[2:]])):
        for tau in (None, 0.1):
            fast = spd_regression_gradient(p, w, t, y, tau)
            slow = generic_regression_gradient(m, p, w, t, y, tau=tau)
            for a, b in zip(fast, slow, strict=True):
                assert relative_error(a, b) < RTOL


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("which", ["footpoint", "vector"])
def test_which_returns_only_the_part_asked_for(k, which, rng):
    m = SPD(k)
    p, v, t, y = regression_problem(m, rng, (3,))
    both = spd_regression_gradient(p, v, t, y, 0.2)
    part = spd_regression_gradient(p, v, t, y, 0.2, which)
    keep = 0 if which == "footpoint" else 1
    assert part[1 - keep] is None
    np.testing.assert_allclose(part[keep], both[keep], rtol=0,
                               atol=1e-15 * np.abs(both[keep]).max())


def test_unknown_which_is_rejected(rng):
    m = SPD(2)
    p, v, t, y = regression_problem(m, rng, ())
    with pytest.raises(ValueError, match="which"):
        spd_regression_gradient(p, v, t, y, which="shooting")


def test_regression_gradient_dispatches_to_the_kernel(rng, monkeypatch):
    """SPD goes through the kernel: the generic path's adjoint Jacobi maps are never called."""
    m = SPD(2)
    p, v, t, y = regression_problem(m, rng, (3,))

    def fail(*args, **kwargs):
        raise AssertionError("the generic path ran")

    monkeypatch.setattr(SPD, "adjoint_dexp", fail)
    gp, gv = regression_gradient(m, p, v, t, y, tau=0.2)
    assert gp.shape == gv.shape == p.shape
    monkeypatch.setattr(SPD, "log", fail)
    assert frechet_mean_gradient(m, p, y).shape == p.shape


def test_ill_conditioned_input_falls_back_to_generic_path(rng):
    m = SPD(2)
    p, v, t, y = regression_problem(m, rng, (3,))
    bad = np.diag([1.0, 0.5 / MAX_COND])
    assert spd_regression_gradient(np.concatenate([p, bad[None]]), np.concatenate(
        [v, 0.0 * bad[None]]), t, y) is None
    assert spd_regression_gradient(p, v, t, np.concatenate([y, bad[None]]), 0.1) is None
    assert spd_frechet_gradient(bad, y) is None
    # ... and regression_gradient then still answers, through the generic path.
    yb = np.concatenate([y, bad[None]])
    tb = np.append(t, 0.5)
    fast = regression_gradient(m, p, v, tb, yb, tau=0.1)
    slow = generic_regression_gradient(m, p, v, tb, yb, tau=0.1)
    for a, b in zip(fast, slow, strict=True):
        np.testing.assert_array_equal(a, b)


# ---------------------------------------------------------------------- independent oracles
def _directional_fd(f, h=1e-3):
    """Central differences with one Richardson step (error O(h^4))."""
    def central(step):
        return (f(step) - f(-step)) / (2 * step)

    return (4.0 * central(h / 2) - central(h)) / 3.0


def problem_about_footpoint(m, rng, n=25, residual=0.2):
    """(p, v, t, y): responses at geodesic distance about ``residual`` from Exp(p, t v)."""
    p = tame_point(m, (), rng)
    v = 0.8 * m.random_tangent(p, rng)
    t = rng.uniform(0, 1, n)
    pred = m.exp(np.broadcast_to(p, (n, m.k, m.k)), t[:, None, None] * v)
    return p, v, t, m.exp(pred, residual / np.sqrt(m.dim) * m.random_tangent(pred, rng))


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("seed", range(3))
def test_gradients_match_finite_differences_of_the_energy(k, seed):
    r"""<grad_v E, xi>_p = d/ds E(p, v + s xi) and <grad_p E, xi>_p = d/ds E(Exp_p(s xi),
    Gamma_{p -> Exp_p(s xi)} v) (the footpoint moves with v parallel: J'(0) = 0, eq. 7)."""
    rng = np.random.default_rng(100 + seed)
    m = SPD(k)
    p, v, t, y = problem_about_footpoint(m, rng)
    gp, gv = spd_regression_gradient(p, v, t, y)
    for _ in range(3):
        xi = m.random_tangent(p, rng)
        fd_v = _directional_fd(lambda s, xi=xi: regression_energy(m, p, v + s * xi, t, y))
        assert abs(fd_v - m.inner(p, gv, xi)) < 1e-8 * (1 + abs(fd_v))

        def moved(s, xi=xi):
            q = m.exp(p, s * xi)
            return regression_energy(m, q, m.transport(p, q, v), t, y)

        fd_p = _directional_fd(moved)
        assert abs(fd_p - m.inner(p, gp, xi)) < 1e-8 * (1 + abs(fd_p))


@pytest.mark.parametrize("k", [2, 3])
def test_frechet_gradient_matches_finite_differences(k, rng):
    m = SPD(k)
    z, y = tame_point(m, (), rng), tame_point(m, (30,), rng)
    g = spd_frechet_gradient(z, y)
    for _ in range(3):
        xi = m.random_tangent(z, rng)
        fd = _directional_fd(lambda s, xi=xi: frechet_energy(m, m.exp(z, s * xi), y))
        assert abs(fd - m.inner(z, g, xi)) < 1e-8 * (1 + abs(fd))


def _reference_gradients(p, v, t, y):
    """The module docstring's formulas in 40-digit arithmetic (mpmath eigensolvers)."""
    mpmath.mp.dps = 40

    def funm(a, fn):
        vals, vecs = mpmath.eigsy(a)
        return vecs * mpmath.diag([fn(x) for x in vals]) * vecs.T

    root = funm(mpmath.matrix(p.tolist()), mpmath.sqrt)
    inv = root**-1
    white = inv * mpmath.matrix(v.tolist()) * inv
    lam, u = mpmath.eigsy((white + white.T) / 2)
    b, c = root * u, inv * u
    k = p.shape[-1]
    sums = [mpmath.zeros(k, k), mpmath.zeros(k, k)]
    for ti, yi in zip(t, y, strict=True):
        z = c.T * mpmath.matrix(yi.tolist()) * c
        for i in range(k):
            for j in range(k):
                z[i, j] *= mpmath.exp(-ti * (lam[i] + lam[j]) / 2)
        logm = funm((z + z.T) / 2, mpmath.log)
        for i in range(k):
            for j in range(k):
                g = abs(lam[i] - lam[j]) / 2
                sums[0][i, j] += logm[i, j] * mpmath.cosh(ti * g)
                sums[1][i, j] += logm[i, j] * (mpmath.sinh(ti * g) / g if g else ti)
    return [np.array((-(b * s * b.T) / len(t)).tolist(), dtype=float) for s in sums]


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("cond", [1.0, 1e2, 1e4])
def test_accuracy_against_forty_digit_arithmetic(k, cond, rng):
    """Ill-conditioned footpoint, data on and about its geodesic (residual 0.1): the kernel's
    relative error stays within 1e-11 up to condition number 1e4."""
    m = SPD(k)
    q = np.linalg.qr(rng.standard_normal((k, k)))[0]
    p = (q * np.geomspace(cond**0.5, cond**-0.5, k)) @ q.T
    v = 0.3 * m.random_tangent(p, rng)
    t = rng.uniform(0, 1, 12)
    pred = m.exp(np.broadcast_to(p, (12, k, k)), t[:, None, None] * v)
    y = m.exp(pred, 0.1 * m.random_tangent(pred, rng))
    ref = _reference_gradients(p, v, t, y)
    for a, b in zip(spd_regression_gradient(p, v, t, y), ref, strict=True):
        assert relative_error(a, b) < 1e-11


# ---------------------------------------------------------------------- Fréchet gradient
@pytest.mark.parametrize("k", [2, 3, 4])
@pytest.mark.parametrize("batch", [(), (4,), (2, 3)])
def test_frechet_gradient_agrees_with_mean_log(k, batch, rng):
    m = SPD(k)
    z, y = tame_point(m, batch, rng), tame_point(m, (50,), rng)
    axis = -(m.point_ndim + 1)
    slow = -np.mean(m.log(np.expand_dims(z, axis), y), axis=axis)
    fast = spd_frechet_gradient(z, y)
    assert fast.shape == z.shape
    assert relative_error(fast, slow) < RTOL
    np.testing.assert_array_equal(frechet_mean_gradient(m, z, y), fast)


def test_general_path_agrees_with_the_two_by_two_closed_form(rng, monkeypatch):
    """The eigendecomposition path (k >= 3) run on k = 2 gives the closed form's answer."""
    m = SPD(2)
    p, v, t, y = regression_problem(m, rng, (3,))
    closed = spd_regression_gradient(p, v, t, y, 0.2)
    monkeypatch.setattr(spd_kernels, "_frame_sums_2x2", lambda c, lam, ld, t, _, tau, which:
                        spd_kernels._frame_sums(lam, spd_kernels._congruence_matrix(c)
                                                @ spd_kernels._upper(y).T, t, tau, which))
    general = spd_regression_gradient(p, v, t, y, 0.2)
    for a, b in zip(closed, general, strict=True):
        assert relative_error(a, b) < 1e-12


def test_memo_of_the_responses_follows_their_content(rng):
    """The kernels reuse what they derived from the last responses only while the content is
    the same: data changed in place between calls give fresh results."""
    m = SPD(2)
    p, v, t, y = regression_problem(m, rng, (3,))
    first = spd_regression_gradient(p, v, t, y, 0.2)
    y[5] = m.exp(y[5], 0.5 * m.random_tangent(y[5], rng))
    again = spd_regression_gradient(p, v, t, y, 0.2)
    slow = generic_regression_gradient(m, p, v, t, y, tau=0.2)
    for a, b, old in zip(again, slow, first, strict=True):
        assert relative_error(a, b) < RTOL
        assert relative_error(old, b) > 1e-6
    z = tame_point(m, (2,), rng)
    before = spd_frechet_gradient(z, y)
    y[7] = 2.0 * y[7]
    after = spd_frechet_gradient(z, y)
    slow = -np.mean(m.log(z[:, None], y), axis=1)
    assert relative_error(after, slow) < RTOL and relative_error(before, slow) > 1e-6
