"""Symmetric positive definite matrices with the affine-invariant metric."""

from __future__ import annotations

import math

import numpy as np

from .._validation import check_int
from ._functions import sinhc
from .base import Manifold

_TINY = np.finfo(float).tiny


def _eigvals_2x2_scalar(p, q, r):
    """Ascending eigenvalues of [[p, r], [r, q]] (see :func:`eigh` for the accuracy trick)."""
    mid = 0.5 * (p + q)
    big = mid + math.copysign(math.hypot(0.5 * (p - q), r), mid)
    other = (p * q - r * r) / big if big != 0 else 0.0
    return min(big, other), max(big, other)


def eigh(a):
    """Symmetric eigendecomposition ``(vals ascending, vecs)`` reading the lower triangle.

    2 x 2 matrices use the closed form (Jacobi rotation angle), vectorized for batches and in
    scalar arithmetic for a single matrix: LAPACK's per-call overhead dominates at that size.
    """
    a = np.asarray(a, dtype=float)
    if a.shape[-2:] != (2, 2):
        return np.linalg.eigh(a)
    # The rotation angle is taken in [-pi/4, pi/4] (diagonal input gives exact unit vectors):
    # for p >= q, (cos t, sin t) with t = atan2(2r, p - q) / 2 belongs to the larger eigenvalue;
    # for p < q the same formula applied to -A gives the eigenvector of the smaller one.
    if a.ndim == 2:
        p, q, r = float(a[0, 0]), float(a[1, 1]), float(a[1, 0])
        vals = np.array(_eigvals_2x2_scalar(p, q, r))
        if p >= q:
            t = 0.5 * math.atan2(2.0 * r, p - q)
            c, s = math.cos(t), math.sin(t)
            return vals, np.array([[-s, c], [c, s]])
        t = 0.5 * math.atan2(-2.0 * r, q - p)
        c, s = math.cos(t), math.sin(t)
        return vals, np.array([[c, -s], [s, c]])
    p, q, r = a[..., 0, 0], a[..., 1, 1], a[..., 1, 0]
    mid, half = 0.5 * (p + q), np.hypot(0.5 * (p - q), r)
    # The eigenvalue of larger modulus is mid + sign(mid) half; the other one is det / it,
    # which keeps full relative accuracy when the two differ by orders of magnitude.
    big = mid + np.copysign(half, mid)
    other = np.divide(p * q - r * r, big, out=np.zeros_like(big), where=big != 0)
    low, high = np.minimum(big, other), np.maximum(big, other)
    first = p >= q
    t = 0.5 * np.where(first, np.arctan2(2.0 * r, p - q), np.arctan2(-2.0 * r, q - p))
    c, s = np.cos(t), np.sin(t)
    # Columns: eigenvector of the smaller eigenvalue, then of the larger.
    small = np.where(first[..., None], np.stack([-s, c], axis=-1), np.stack([c, s], axis=-1))
    large = np.where(first[..., None], np.stack([c, s], axis=-1), np.stack([-s, c], axis=-1))
    return np.stack([low, high], axis=-1), np.stack([small, large], axis=-1)


def sym(a):
    """Symmetric part of a batch of square matrices."""
    a = np.asarray(a, dtype=float)
    return 0.5 * (a + a.mT)


def eig_apply(vecs, fn_vals):
    """Rebuild ``Q diag(f) Q^T`` from eigenvectors ``Q`` and transformed eigenvalues ``f``."""
    return (vecs * fn_vals[..., None, :]) @ vecs.mT


def sym_funm(a, fn):
    """Apply a scalar function to a symmetric matrix through its eigendecomposition."""
    vals, vecs = eigh(sym(a))
    return eig_apply(vecs, fn(vals))


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
    # Everything is computed through a square root A = Q diag(sqrt(s)) of P = Q diag(s) Q^T
    # (P = A A^T, not symmetric). X -> A X A^T is an isometry taking I to P, so every formula
    # is the one at the identity conjugated by A; one eigendecomposition of P serves them all.
    @staticmethod
    def _factor(p):
        """``(A, A^{-T})`` with ``A = Q diag(sqrt(s))`` from ``P = Q diag(s) Q^T``."""
        # eigh reads only the lower triangle, so a symmetric input needs no symmetrization.
        vals, vecs = eigh(np.asarray(p, dtype=float))
        root = np.sqrt(np.maximum(vals, _TINY))[..., None, :]
        return vecs * root, vecs / root

    @staticmethod
    def _whiten(a_inv_t, x):
        """``A^{-1} X A^{-T}``."""
        return a_inv_t.mT @ np.asarray(x, dtype=float) @ a_inv_t

    def belongs(self, x, atol=1e-8):
        x = np.asarray(x, dtype=float)
        symmetric = np.max(np.abs(x - np.swapaxes(x, -1, -2)), axis=(-2, -1)) <= atol * (
            1 + np.max(np.abs(x), axis=(-2, -1))
        )
        return symmetric & (np.linalg.eigvalsh(sym(x))[..., 0] > 0)

    def inner(self, x, u, w):
        _, a_inv_t = self._factor(x)
        return np.sum(self._whiten(a_inv_t, u) * self._whiten(a_inv_t, w), axis=(-2, -1))

    def _apply_at(self, x, y, fn):
        """``A f(A^{-1} Y A^{-T}) A^T``."""
        a_mat, a_inv_t = self._factor(x)
        vals, u = eigh(self._whiten(a_inv_t, y))
        b = a_mat @ u
        return sym((b * fn(vals)[..., None, :]) @ b.mT)

    def exp(self, x, v):
        return self._apply_at(x, v, np.exp)

    def log(self, x, y):
        return self._apply_at(x, y, np.log)

    def dist(self, x, y):
        _, a_inv_t = self._factor(x)
        vals = eigh(self._whiten(a_inv_t, y))[0]  # faster than eigvalsh here
        return np.sqrt(np.sum(np.log(vals) ** 2, axis=-1))

    def transport(self, x, y, v):
        # Gamma_{x->y} V = E V E^T with E = A S^{1/2} A^{-1}, S = A^{-1} Y A^{-T}: the transport
        # W -> S^{1/2} W S^{1/2} from I to S, conjugated by the isometry A.
        a_mat, a_inv_t = self._factor(x)
        vals, u = eigh(self._whiten(a_inv_t, y))
        e = a_mat @ eig_apply(u, np.sqrt(vals)) @ a_inv_t.mT
        return sym(e @ np.asarray(v, dtype=float) @ e.mT)

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
        a_mat, _ = self._factor(x)
        return sym(a_mat @ a @ a_mat.mT)

    def _curvature_frame(self, p, v):
        """Eigen-frame of the curvature operator of ``v`` at ``p``.

        Returns ``(b, c, lam)``: with ``A^{-1} V A^{-T} = U diag(lam) U^T``, ``b = A U`` and
        ``c = A^{-T} U`` (so ``c^T X c`` reads a tangent vector in the frame and ``b Y b^T``
        writes it back).
        """
        a_mat, a_inv_t = self._factor(p)
        lam, u = eigh(self._whiten(a_inv_t, v))
        b = a_mat @ u
        c = a_inv_t @ u
        return b, c, lam

    def _scale_by_curvature(self, p, v, w0, scale):
        # In the frame, the (i, j) direction of the curvature operator of v has eigenvalue
        # -(lam_i - lam_j)^2 / 4 (DESIGN section 3).
        b, c, lam = self._curvature_frame(p, v)
        w_hat = c.mT @ np.asarray(w0, dtype=float) @ c
        gap = lam[..., :, None] - lam[..., None, :]
        return sym(b @ (w_hat * scale(-(gap**2) / 4.0)) @ b.mT)

    def _adjoint_parts(self, p, v, w):
        # In the frame, Exp(p, v) is diag(e^lam); transporting w back along the geodesic
        # e^{t diag(lam)} multiplies entry (i, j) by e^{-(lam_i + lam_j) / 2}; the Jacobi
        # scalings cosh(|lam_i - lam_j| / 2) and sinh(.)/(.) then apply entrywise.
        b, c, lam = self._curvature_frame(p, v)
        w_hat = (c.mT @ np.asarray(w, dtype=float) @ c) * np.exp(
            -(lam[..., :, None] + lam[..., None, :]) / 2.0
        )
        return b, w_hat, np.abs(lam[..., :, None] - lam[..., None, :]) / 2.0

    def adjoint_dexp(self, p, v, w):
        b, w_hat, half = self._adjoint_parts(p, v, w)
        return sym(b @ (w_hat * np.cosh(half)) @ b.mT), sym(b @ (w_hat * sinhc(half)) @ b.mT)

    def adjoint_dexp_point(self, p, v, w):
        b, w_hat, half = self._adjoint_parts(p, v, w)
        return sym(b @ (w_hat * np.cosh(half)) @ b.mT)

    def adjoint_dexp_vector(self, p, v, w):
        b, w_hat, half = self._adjoint_parts(p, v, w)
        return sym(b @ (w_hat * sinhc(half)) @ b.mT)

    def _transport_back(self, p, v, w):
        b, c, lam = self._curvature_frame(p, v)
        w_hat = c.mT @ np.asarray(w, dtype=float) @ c
        w_hat = w_hat * np.exp(-(lam[..., :, None] + lam[..., None, :]) / 2.0)
        return sym(b @ w_hat @ b.mT)
