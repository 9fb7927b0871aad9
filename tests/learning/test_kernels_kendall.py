"""The closed-form regression and Fréchet gradients on KendallShape(k) against the generic
paths (adjoint Jacobi maps, the log map) and against finite differences of the energies."""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.learning import frechet_mean_gradient, regression_gradient
from dpcore.learning.frechet import frechet_energy
from dpcore.learning.kernels import closed_form_frechet_gradient, closed_form_regression_gradient
from dpcore.learning.kernels.kendall import (
    _GEMM_BLOCK,
    _matmul,
    kendall_frechet_gradient,
    kendall_regression_gradient,
)
from dpcore.learning.regression import generic_regression_gradient
from dpcore.manifolds import CutLocusError, KendallShape


def rotate(m, y, rng):
    """Each preshape turned by a random angle: another representative of the same shape."""
    phase = np.exp(1j * rng.uniform(0.0, 2.0 * np.pi, y.shape[:-2]))[..., None]
    z = (y[..., 0] + 1j * y[..., 1]) * phase
    return np.stack([z.real, z.imag], axis=-1)


def fits(m, rng, batch, speeds):
    """Footpoints and horizontal shooting vectors of the given norms (batch of fits)."""
    p = m.random_point(batch, rng)
    v = m.random_tangent(p, rng)
    v *= np.reshape(speeds, np.shape(speeds) + (1, 1)) / m.norm(p, v)[..., None, None]
    return p, v


def responses(m, rng, p, v, t, kind):
    """``near``: noisy points about the geodesic ``(p, v)``, some exactly on it; ``far``:
    uniformly random shapes (distances up to nearly pi/2). Random representatives."""
    if kind == "far":
        y = m.random_point(t.shape[0], rng)
    else:
        pred = m.geodesic(p, v, t)
        y = m.exp(pred, 0.02 * m.random_tangent(pred, rng))
        y[:3] = pred[:3]
    return rotate(m, y, rng)


def assert_close(fast, slow, rtol=1e-10):
    """Agreement relative to the size of the gradient."""
    assert fast.shape == slow.shape
    np.testing.assert_allclose(fast, slow, rtol=0, atol=rtol * np.max(np.abs(slow)))


@pytest.mark.parametrize("k", [3, 4, 8])
@pytest.mark.parametrize("tau", [None, 0.1])
@pytest.mark.parametrize("kind", ["near", "far"])
def test_matches_generic_path(k, tau, kind, rng):
    m = KendallShape(k)
    # Speeds from small to past the injectivity radius pi/2 (the Jacobi formulas hold along
    # the whole great circle).
    p, v = fits(m, rng, (3, 2), rng.uniform(0.01, 2.5, (3, 2)))
    t = rng.uniform(0.0, 1.0, 50)
    y = responses(m, rng, p[0, 0], v[0, 0], t, kind)
    fast = kendall_regression_gradient(p, v, t, y, tau)
    slow = generic_regression_gradient(m, p, v, t, y, tau=tau)
    for a, b in zip(fast, slow, strict=True):
        assert a.shape == p.shape
        assert_close(a, b)


@pytest.mark.parametrize("tau", [None, 0.2])
def test_broadcast_batches(tau, rng):
    m = KendallShape(5)
    p = m.random_point(rng=rng)
    v = m.random_tangent(np.broadcast_to(p, (4, 5, 2)), rng)
    t = rng.uniform(0.0, 1.0, 30)
    y = responses(m, rng, p, v[0], t, "near")
    fast = kendall_regression_gradient(p, v, t, y, tau)
    slow = generic_regression_gradient(m, p, v, t, y, tau=tau)
    for a, b in zip(fast, slow, strict=True):
        assert a.shape == (4, 5, 2)
        assert_close(a, b)
    # One fit without batch axes.
    single = kendall_regression_gradient(p, v[1], t, y, tau)
    for a, b in zip(single, fast, strict=True):
        assert a.shape == (5, 2)
        np.testing.assert_allclose(a, b[1], rtol=0, atol=1e-14 * np.max(np.abs(b)))


@pytest.mark.parametrize("which", ["footpoint", "vector"])
def test_single_part(which, rng):
    m = KendallShape(6)
    p, v = fits(m, rng, 4, rng.uniform(0.1, 1.0, 4))
    t = rng.uniform(0.0, 1.0, 40)
    y = m.random_point(40, rng)
    both = kendall_regression_gradient(p, v, t, y, 0.3)
    part = kendall_regression_gradient(p, v, t, y, 0.3, which)
    keep = 0 if which == "footpoint" else 1
    assert part[1 - keep] is None
    np.testing.assert_allclose(part[keep], both[keep], rtol=0, atol=1e-15)


def test_rejects_unknown_part(rng):
    m = KendallShape(4)
    p, v = fits(m, rng, None, 0.5)
    with pytest.raises(ValueError, match="which"):
        kendall_regression_gradient(p, v, [0.0, 1.0], m.random_point(2, rng), which="shooting")


@pytest.mark.parametrize("tau", [None, 0.2])
def test_gradients_are_horizontal(tau, rng):
    m = KendallShape(8)
    p, v = fits(m, rng, (2, 3), rng.uniform(0.1, 1.5, (2, 3)))
    t = rng.uniform(0.0, 1.0, 60)
    y = m.random_point(60, rng)
    for g in kendall_regression_gradient(p, v, t, y, tau):
        scale = np.max(np.abs(g))
        assert scale > 1e-3
        zp, zg = p[..., 0] + 1j * p[..., 1], g[..., 0] + 1j * g[..., 1]
        # Centred, and orthogonal to p and to i p (the complex product vanishes).
        np.testing.assert_allclose(g.sum(axis=-2), 0.0, atol=1e-14 * scale)
        np.testing.assert_allclose(np.sum(np.conj(zp) * zg, axis=-1), 0.0, atol=1e-14 * scale)


def huber_energy(m, p, v, t, y, tau):
    """(1/n) sum H(d_i): H(d) = d^2/2, and tau d - tau^2/2 past tau (clipped residuals are the
    gradient of this energy)."""
    d = m.dist(m.exp(p, t[:, None, None] * v), y)
    if tau is not None:
        d = np.where(d <= tau, d, np.sqrt(np.maximum(2 * tau * d - tau**2, 0.0)))
    return 0.5 * np.mean(d**2)


@pytest.mark.parametrize("k", [3, 8])
@pytest.mark.parametrize("tau", [None, 0.15])
def test_finite_differences_of_the_energy(k, tau, rng):
    """Independent oracle: the energy's derivative along every direction of an orthonormal
    basis of the horizontal space, the footpoint moving along its geodesic with the shooting
    vector parallel transported (the convention of the footpoint gradient)."""
    m = KendallShape(k)
    p, v = fits(m, rng, None, 0.7)
    t = rng.uniform(0.0, 1.0, 30)
    y = responses(m, rng, p, v, t, "far")
    if tau is not None:
        d = m.dist(m.exp(p, t[:, None, None] * v), y)
        assert np.min(np.abs(d - tau)) > 1e-3  # no residual at the kink of the energy
    grad_p, grad_v = kendall_regression_gradient(p, v, t, y, tau)
    basis = m.orthonormal_basis(p)
    h = 1e-5

    def along_footpoint(step):
        q = m.exp(p, step)
        return huber_energy(m, q, m.transport(p, q, v), t, y, tau)

    fd_p = sum((along_footpoint(h * e) - along_footpoint(-h * e)) / (2 * h) * e for e in basis)
    fd_v = sum((huber_energy(m, p, v + h * e, t, y, tau)
                - huber_energy(m, p, v - h * e, t, y, tau)) / (2 * h) * e for e in basis)
    np.testing.assert_allclose(grad_p, fd_p, rtol=0, atol=1e-7 * np.max(np.abs(grad_p)))
    np.testing.assert_allclose(grad_v, fd_v, rtol=0, atol=1e-7 * np.max(np.abs(grad_v)))


def test_dispatch_and_zero_vector(rng):
    m = KendallShape(4)
    p, v = fits(m, rng, 3, [0.5, 0.8, 1.1])
    t = rng.uniform(0.0, 1.0, 20)
    y = m.random_point(20, rng)
    via_dispatch = closed_form_regression_gradient(m, p, v, t, y, 0.3, "both")
    direct = kendall_regression_gradient(p, v, t, y, 0.3)
    for a, b in zip(via_dispatch, direct, strict=True):
        np.testing.assert_array_equal(a, b)
    # |v| = 0 leaves the direction undefined: no kernel, the generic path answers.
    v[1] = 0.0
    assert kendall_regression_gradient(p, v, t, y, 0.3) is None
    for a, b in zip(regression_gradient(m, p, v, t, y, tau=0.3),
                    generic_regression_gradient(m, p, v, t, y, tau=0.3), strict=True):
        np.testing.assert_array_equal(a, b)


def test_cut_locus(rng):
    """A response orthogonal to its prediction (distance pi/2): an error without clipping; with
    clipping it counts as 0, as on the generic path."""
    m = KendallShape(5)
    p, v = fits(m, rng, 2, [0.4, 0.9])
    t = rng.uniform(0.0, 1.0, 12)
    y = m.random_point(12, rng)
    pred = m.exp(p[0], t[4] * v[0])
    w = m.random_tangent(pred, rng)
    y[4] = rotate(m, w / m.norm(pred, w), rng)
    assert m.dist(pred, y[4]) == pytest.approx(np.pi / 2)
    with pytest.raises(CutLocusError):
        kendall_regression_gradient(p, v, t, y)
    fast = kendall_regression_gradient(p, v, t, y, 0.3)
    slow = generic_regression_gradient(m, p, v, t, y, tau=0.3)
    for a, b in zip(fast, slow, strict=True):
        assert_close(a, b)


@pytest.mark.parametrize("shape", [(40, 16, 1000), (3, 16, 40000), (40, 1000, 16),
                                   (2, 30000, 16), (5, 7, 9)])
def test_blocked_products(shape, rng):
    """The blocked matrix product (one BLAS thread per block) is the plain product."""
    m, inner, cols = shape
    a = rng.standard_normal((m, inner))
    b = rng.standard_normal((inner, cols))
    assert (m * inner * cols > _GEMM_BLOCK) == (shape != (5, 7, 9))
    out = _matmul(a, b, np.empty((m, cols)))
    np.testing.assert_allclose(out, a @ b, rtol=0, atol=1e-12 * np.sqrt(inner))
    # Transposed (non-contiguous) operands, as the kernel passes them.
    out = _matmul(a, np.ascontiguousarray(b.T).T, np.empty((m, cols)))
    np.testing.assert_allclose(out, a @ b, rtol=0, atol=1e-12 * np.sqrt(inner))


def test_matches_generic_path_at_sampler_sizes(rng):
    """10 chains x n = 2000 responses: both products run in blocks."""
    m = KendallShape(8)
    p, v = fits(m, rng, 10, rng.uniform(0.05, 1.5, 10))
    t = rng.uniform(0.0, 1.0, 2000)
    y = responses(m, rng, p[0], v[0], t, "near")
    assert 4 * 10 * 16 * 2000 > _GEMM_BLOCK
    fast = kendall_regression_gradient(p, v, t, y, 0.05)
    slow = generic_regression_gradient(m, p, v, t, y, tau=0.05)
    for a, b in zip(fast, slow, strict=True):
        assert_close(a, b)


def generic_frechet_gradient(m, z, y):
    """-(1/n) sum_i log_z y_i from the manifold's log map."""
    return -np.mean(m.log(np.expand_dims(z, -3), y), axis=-3)


@pytest.mark.parametrize("k", [3, 4, 8])
@pytest.mark.parametrize("kind", ["near", "far"])
def test_frechet_matches_log_map(k, kind, rng):
    m = KendallShape(k)
    z = m.random_point((3, 2), rng)
    if kind == "near":
        y = m.exp(z[0, 0], 0.05 * m.random_tangent(np.broadcast_to(z[0, 0], (40, k, 2)), rng))
        y[0] = z[0, 0]
    else:
        y = m.random_point(40, rng)
    y = rotate(m, y, rng)
    fast = kendall_frechet_gradient(z, y)
    assert_close(fast, generic_frechet_gradient(m, z, y))
    single = kendall_frechet_gradient(z[1, 0], y)
    assert single.shape == (k, 2)
    assert_close(single, generic_frechet_gradient(m, z[1, 0], y))
    # Horizontal: centred and complex-orthogonal to z.
    zz, zg = z[..., 0] + 1j * z[..., 1], fast[..., 0] + 1j * fast[..., 1]
    scale = np.max(np.abs(fast))
    np.testing.assert_allclose(fast.sum(axis=-2), 0.0, atol=1e-14 * scale)
    np.testing.assert_allclose(np.sum(np.conj(zz) * zg, axis=-1), 0.0, atol=1e-14 * scale)


def test_frechet_dispatch_blocks_and_cut_locus(rng):
    m = KendallShape(8)
    z = m.random_point(20, rng)
    y = m.random_point(1000, rng)
    assert 2 * 20 * 16 * 1000 > _GEMM_BLOCK                     # both products in blocks
    fast = frechet_mean_gradient(m, z, y)
    np.testing.assert_array_equal(fast, closed_form_frechet_gradient(m, z, y))
    assert_close(fast, generic_frechet_gradient(m, z, y))
    w = m.random_tangent(z[3], rng)
    y[7] = rotate(m, w / m.norm(z[3], w), rng)                   # orthogonal to z[3]
    with pytest.raises(CutLocusError):
        kendall_frechet_gradient(z, y)
    with pytest.raises(CutLocusError):
        generic_frechet_gradient(m, z, y)


@pytest.mark.parametrize("k", [3, 8])
def test_frechet_finite_differences(k, rng):
    m = KendallShape(k)
    z = m.random_point(rng=rng)
    y = m.random_point(25, rng)
    grad = kendall_frechet_gradient(z, y)
    h = 1e-5
    fd = sum((frechet_energy(m, m.exp(z, h * e), y) - frechet_energy(m, m.exp(z, -h * e), y))
             / (2 * h) * e for e in m.orthonormal_basis(z))
    np.testing.assert_allclose(grad, fd, rtol=0, atol=1e-7 * np.max(np.abs(grad)))
