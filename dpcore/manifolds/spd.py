"""Symmetric positive definite matrices with the affine-invariant metric."""

from __future__ import annotations

import numpy as np

from .._validation import check_int
from .base import Manifold


def sym(a):
    """Symmetric part of a batch of square matrices."""
    a = np.asarray(a, dtype=float)
    return 0.5 * (a + np.swapaxes(a, -1, -2))


def eig_apply(vals, vecs, fn_vals):
    """Rebuild ``Q diag(f) Q^T`` from eigenvectors ``Q`` and transformed eigenvalues ``f``."""
    return (vecs * fn_vals[..., None, :]) @ np.swapaxes(vecs, -1, -2)


def sym_funm(a, fn):
    """Apply a scalar function to a symmetric matrix through its eigendecomposition."""
    vals, vecs = np.linalg.eigh(sym(a))
    return eig_apply(vals, vecs, fn(vals))


class SPD(Manifold):
    r"""SPD(k): k x k symmetric positive definite matrices, affine-invariant metric.

    The metric is :math:`\langle U, V \rangle_P = \operatorname{tr}(P^{-1} U P^{-1} V)`;
    sectional curvature lies in [-1/2, 0] and geodesics are complete (injectivity radius
    infinite).

    Parameters
    ----------
    k : int
        Matrix size.
    """

    curvature_bounds = (-0.5, 0.0)
    injectivity_radius = np.inf
    is_homogeneous = True

    def __init__(self, k: int):
        self.k = check_int(k, "k")
        self.dim = self.k * (self.k + 1) // 2
        self.point_shape = (self.k, self.k)

    def _repr_args(self):
        return str(self.k)

    # ------------------------------------------------------------ helpers
    @staticmethod
    def _roots(p):
        """Return ``(P^{1/2}, P^{-1/2})`` from one eigendecomposition."""
        vals, vecs = np.linalg.eigh(sym(p))
        vals = np.maximum(vals, np.finfo(float).tiny)
        root = np.sqrt(vals)
        return eig_apply(vals, vecs, root), eig_apply(vals, vecs, 1.0 / root)

    def belongs(self, x, atol=1e-8):
        x = np.asarray(x, dtype=float)
        symmetric = np.max(np.abs(x - np.swapaxes(x, -1, -2)), axis=(-2, -1)) <= atol * (
            1 + np.max(np.abs(x), axis=(-2, -1))
        )
        return symmetric & (np.linalg.eigvalsh(sym(x))[..., 0] > 0)

    def inner(self, x, u, w):
        _, mhalf = self._roots(x)
        a = mhalf @ np.asarray(u, dtype=float) @ mhalf
        b = mhalf @ np.asarray(w, dtype=float) @ mhalf
        return np.sum(a * b, axis=(-2, -1))

    def exp(self, x, v):
        half, mhalf = self._roots(x)
        middle = sym_funm(mhalf @ np.asarray(v, dtype=float) @ mhalf, np.exp)
        return sym(half @ middle @ half)

    def log(self, x, y):
        half, mhalf = self._roots(x)
        middle = sym_funm(mhalf @ np.asarray(y, dtype=float) @ mhalf, np.log)
        return sym(half @ middle @ half)

    def dist(self, x, y):
        _, mhalf = self._roots(x)
        vals = np.linalg.eigvalsh(sym(mhalf @ np.asarray(y, dtype=float) @ mhalf))
        return np.sqrt(np.sum(np.log(vals) ** 2, axis=-1))

    def transport(self, x, y, v):
        # Gamma_{x->y} V = E V E^T with E = X^{1/2} (X^{-1/2} Y X^{-1/2})^{1/2} X^{-1/2}.
        half, mhalf = self._roots(x)
        mid = sym_funm(mhalf @ np.asarray(y, dtype=float) @ mhalf, np.sqrt)
        e = half @ mid @ mhalf
        return sym(e @ np.asarray(v, dtype=float) @ np.swapaxes(e, -1, -2))

    def proj_tangent(self, x, v):
        v = sym(v)
        return np.broadcast_to(v, np.broadcast_shapes(np.shape(x), v.shape)).copy()

    def random_point(self, size=None, rng=None):
        """``expm(A)`` with ``A`` a standard Gaussian symmetric matrix (spread around I)."""
        rng = np.random.default_rng(rng)
        size = () if size is None else tuple(np.atleast_1d(size).tolist())
        eye = np.broadcast_to(np.eye(self.k), size + self.point_shape)
        return self.exp(eye, self.random_tangent(eye, rng))

    def random_tangent(self, x, rng=None):
        rng = np.random.default_rng(rng)
        x = np.asarray(x, dtype=float)
        # Coefficients in an orthonormal basis of T_I are N(0, 1): diagonal entries N(0, 1),
        # off-diagonal entries N(0, 1/2); then move to T_x by the isometry A -> X^1/2 A X^1/2.
        g = rng.standard_normal(x.shape)
        a = (g + np.swapaxes(g, -1, -2)) / 2.0
        idx = np.arange(self.k)
        a[..., idx, idx] = g[..., idx, idx]
        half, _ = self._roots(x)
        return sym(half @ a @ half)

    def _scale_by_curvature(self, p, v, w0, scale):
        # Whiten to T_I (an isometry), diagonalize v = U diag(lam) U^T; the (i, j) direction of
        # the curvature operator has eigenvalue -(lam_i - lam_j)^2 / 4 (DESIGN section 3).
        half, mhalf = self._roots(p)
        vals, vecs = np.linalg.eigh(sym(mhalf @ np.asarray(v, dtype=float) @ mhalf))
        vecs_t = np.swapaxes(vecs, -1, -2)
        w_white = vecs_t @ (mhalf @ np.asarray(w0, dtype=float) @ mhalf) @ vecs
        lam = -((vals[..., :, None] - vals[..., None, :]) ** 2) / 4.0
        scaled = vecs @ (w_white * scale(lam)) @ vecs_t
        return sym(half @ scaled @ half)
