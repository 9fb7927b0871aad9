"""The generic orthonormal basis computes the Gram matrices of a large batch block by block
(``Manifold._basis_gram``): the same Gram matrices to the bit as in one piece, hence the same
eigendecomposition and the same basis, on every built-in manifold."""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.manifolds import SPD, Euclidean, Hyperbolic, KendallShape, Sphere
from dpcore.manifolds import base as manifold_base

MANIFOLDS = [Euclidean(3), Sphere(2), Sphere(4), Hyperbolic(2), SPD(3), KendallShape(5)]


def _basis_in_one_piece(m, x):
    """The generic basis as it was written before the blocks (the reference)."""
    sl = [slice(None)] * m.point_ndim
    size = int(np.prod(m.point_shape))
    batch = x.shape[: x.ndim - m.point_ndim]
    eye = np.eye(size).reshape((size, *m.point_shape))
    cand = np.broadcast_to(m.proj_tangent(x[..., None, *sl], eye),
                           (*batch, size, *m.point_shape))
    gram = m.inner(np.expand_dims(x, axis=(-m.point_ndim - 1, -m.point_ndim - 2)),
                   cand[..., :, None, *sl], cand[..., None, :, *sl])
    w, q = np.linalg.eigh(gram)
    w, q = w[..., -m.dim:], q[..., -m.dim:]
    basis = np.einsum("...ja,...jk->...ak", q / np.sqrt(w)[..., None, :],
                      cand.reshape((*batch, size, size)))
    return basis.reshape((*batch, m.dim, *m.point_shape))


@pytest.mark.parametrize("m", MANIFOLDS, ids=repr)
@pytest.mark.parametrize("block", [1, 7, None])
def test_blocked_basis_is_bit_identical(m, block, monkeypatch):
    x = m.random_point((5, 9), rng=3)
    want = _basis_in_one_piece(m, x)
    if block is not None:
        size = int(np.prod(m.point_shape))
        monkeypatch.setattr(manifold_base, "_BLOCK", block * size**3)  # block points
    np.testing.assert_array_equal(m.orthonormal_basis(x), want)
    np.testing.assert_array_equal(m.orthonormal_basis(x[2, 3]), want[2, 3])
    np.testing.assert_array_equal(m.orthonormal_basis(x[1]), want[1])


def test_large_batch_default_blocks():
    m = KendallShape(8)
    x = m.random_point(3000, rng=4)
    np.testing.assert_array_equal(m.orthonormal_basis(x), _basis_in_one_piece(m, x))


@pytest.mark.parametrize("block", [16, 1000])
def test_kendall_geometry_in_blocks_is_bit_identical(block, monkeypatch):
    """Kendall's exp, log, dist and transport of a large batch (``base.blockwise``): the same
    numbers to the bit as in one piece, with broadcasting between the arguments (the
    regression energy's predictions against the data), and the same cut-locus error."""
    from dpcore.manifolds import CutLocusError

    m = KendallShape(6)
    p = m.random_point((9, 1), rng=5)
    y = m.random_point(13, rng=6)
    v = 0.4 * m.random_tangent(np.broadcast_to(p, (9, 13, 6, 2)), rng=7)
    pred = m.exp(p, v)
    w = m.random_tangent(pred, rng=8)
    calls = [(m.exp, (p, v)), (m.log, (pred, y)), (m.dist, (pred, y)), (m.dist, (y[0], pred)),
             (m.transport, (pred, y, w)), (m.log, (p, y)), (m.dist, (p[:, 0], p[0, 0]))]
    monkeypatch.setattr(manifold_base, "_BLOCK", 1 << 40)
    whole = [f(*args) for f, args in calls]
    monkeypatch.setattr(manifold_base, "_BLOCK", block)
    for (f, args), want in zip(calls, whole, strict=True):
        got = f(*args)
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    far = m.random_point(40, rng=9)
    far[17] = m.proj_tangent(far[0], far[17])  # orthogonal to far[0]: on the cut locus
    far[17] /= np.linalg.norm(far[17])
    with pytest.raises(CutLocusError):
        m.log(far[0], far)
