"""Symmetric positive definite matrices with the affine-invariant metric.

The CSV format and the closed-form volume laws live in :mod:`dpcore.manifolds._spd_csv` and
:mod:`dpcore.manifolds._spd_volume` (mixed into :class:`SPD`); the matrix kernels in
:mod:`dpcore.manifolds._spd_kernels`.
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import check_int
from ._functions import sinhc
from ._spd_csv import PD_MIN_EIGENVALUE, PD_RTOL, SPDCSVMixin  # noqa: F401  (re-exported)
from ._spd_kernels import (  # noqa: F401  (eigh, sym, sym_funm: public kernels)
    _TINY,
    _apply_at_2x2_scalar,
    _apply_at_3x3_scalar,
    _eigh_2x2_scalar,
    _eigh_3x3_scalar,
    _whiten_2x2_scalar,
    _whiten_3x3_scalar,
    eig_apply,
    eigh,
    sym,
    sym_funm,
)
from ._spd_volume import SPDVolumeMixin
from .base import Manifold


class SPD(SPDCSVMixin, SPDVolumeMixin, Manifold):
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

    @property
    def origin(self):
        """The identity matrix, shape ``(k, k)``."""
        return np.eye(self.k)

    # Ambient space: symmetric matrices as their upper triangle, off-diagonal entries times
    # sqrt(2), so the Euclidean norm of the coordinates is the Frobenius norm.
    @property
    def ambient_dim(self):
        """k (k + 1) / 2, the dimension of the symmetric matrices."""
        return self.k * (self.k + 1) // 2

    def _triu_scale(self):
        iu = np.triu_indices(self.k)
        return iu, np.where(iu[0] == iu[1], 1.0, np.sqrt(2.0))

    def embed(self, x):
        """Upper triangle, off-diagonal entries times sqrt(2) (an isometry for Frobenius).

        Parameters
        ----------
        x : array, shape ``(..., k, k)``

        Returns
        -------
        ndarray, shape ``(..., k (k + 1) / 2)``
        """
        x = np.asarray(x, dtype=float)
        iu, scale = self._triu_scale()
        return x[..., iu[0], iu[1]] * scale

    def unembed(self, z):
        """The symmetric matrix of :meth:`embed` coordinates (possibly not positive definite).

        Parameters
        ----------
        z : array, shape ``(..., k (k + 1) / 2)``

        Returns
        -------
        ndarray, shape ``(..., k, k)``
        """
        z = np.asarray(z, dtype=float)
        iu, scale = self._triu_scale()
        out = np.zeros(z.shape[:-1] + (self.k, self.k))
        out[..., iu[0], iu[1]] = z / scale
        out[..., iu[1], iu[0]] = z / scale
        return out

    def project(self, z, floor=1e-8):
        """Eigenvalues floored at ``floor`` × max(1, |largest|).

        Parameters
        ----------
        z : array, shape ``(..., k, k)``
            Symmetric matrices.
        floor : float

        Returns
        -------
        ndarray, shape ``(..., k, k)``
        """
        w, v = np.linalg.eigh(np.asarray(z, dtype=float))
        w = np.maximum(w, floor * np.maximum(1.0, np.abs(w).max(axis=-1, keepdims=True)))
        return np.einsum("...ij,...j,...kj->...ik", v, w, v)

    def on_manifold(self, z, atol=1e-9):
        """Whether the smallest eigenvalue is positive.

        Parameters
        ----------
        z : array, shape ``(..., k, k)``
            Symmetric matrices.
        atol : float
            Unused.

        Returns
        -------
        ndarray of bool, shape ``(...)``
        """
        return np.linalg.eigvalsh(np.asarray(z, dtype=float))[..., 0] > 0

    def ambient_radius(self, center, radius):
        """``||center||_op (e^r − 1)`` (paper 001 suppl. Prop 1 at the identity; in general from
        ``center^{1/2} (e^S − I) center^{1/2}``).

        Parameters
        ----------
        center : array, shape ``(k, k)``
        radius : float

        Returns
        -------
        float
        """
        return float(np.linalg.eigvalsh(np.asarray(center, dtype=float))[-1]
                     * np.expm1(float(radius)))

    def _repr_args(self):
        return str(self.k)

    # ------------------------------------------------------------ helpers
    # Everything is computed through a square root A = Q diag(sqrt(s)) of P = Q diag(s) Q^T
    # (P = A A^T, not symmetric). X -> A X A^T is an isometry taking I to P, so every formula
    # is the one at the identity conjugated by A; one eigendecomposition of P serves them all.
    # (exp, log and dist of single 3 x 3 points use the Cholesky factor instead, see above.)
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
        """Whether ``x`` is symmetric (relative tolerance ``atol``) and positive definite.

        Parameters
        ----------
        x : array, shape ``(..., k, k)``
        atol : float

        Returns
        -------
        ndarray of bool, shape ``(...)``
        """
        x = np.asarray(x, dtype=float)
        symmetric = np.max(np.abs(x - np.swapaxes(x, -1, -2)), axis=(-2, -1)) <= atol * (
            1 + np.max(np.abs(x), axis=(-2, -1))
        )
        return symmetric & (np.linalg.eigvalsh(sym(x))[..., 0] > 0)

    def inner(self, x, u, w):
        """The affine-invariant metric ``tr(x^{-1} u x^{-1} w)``.

        Parameters
        ----------
        x, u, w : array, shape ``(..., k, k)``

        Returns
        -------
        ndarray, shape ``(...)``
        """
        _, a_inv_t = self._factor(x)
        return np.sum(self._whiten(a_inv_t, u) * self._whiten(a_inv_t, w), axis=(-2, -1))

    def _apply_at(self, x, y, fn, fn_scalar):
        """``A f(A^{-1} Y A^{-T}) A^T`` (``fn`` on arrays, ``fn_scalar`` on floats)."""
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        if x.shape == y.shape == (3, 3):
            out = _apply_at_3x3_scalar(x.tolist(), y.tolist(), fn_scalar)
            if out is not None:
                return np.array(out).reshape(3, 3)
        elif x.shape == y.shape == (2, 2):
            out = _apply_at_2x2_scalar(x.tolist(), y.tolist(), fn_scalar)
            if out is not None:
                return np.array(out).reshape(2, 2)
        a_mat, a_inv_t = self._factor(x)
        vals, u = eigh(self._whiten(a_inv_t, y))
        b = a_mat @ u
        return sym((b * fn(vals)[..., None, :]) @ b.mT)

    def exp(self, x, v):
        """``x^{1/2} expm(x^{-1/2} v x^{-1/2}) x^{1/2}`` (through any square root of ``x``).

        Parameters
        ----------
        x, v : array, shape ``(..., k, k)``

        Returns
        -------
        ndarray, shape ``(..., k, k)``
        """
        return self._apply_at(x, v, np.exp, math.exp)

    def log(self, x, y):
        """``x^{1/2} logm(x^{-1/2} y x^{-1/2}) x^{1/2}`` (no cut locus).

        Parameters
        ----------
        x, y : array, shape ``(..., k, k)``

        Returns
        -------
        ndarray, shape ``(..., k, k)``
        """
        return self._apply_at(x, y, np.log, math.log)

    def dist(self, x, y):
        """``|log eig(x^{-1} y)|``, the norm of the log-eigenvalues.

        Parameters
        ----------
        x, y : array, shape ``(..., k, k)``

        Returns
        -------
        ndarray, shape ``(...)``
        """
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        if x.shape == y.shape == (3, 3):
            _, white = _whiten_3x3_scalar(x.tolist(), y.tolist())
            vals = None if white is None else _eigh_3x3_scalar(*white)[0]
            if vals is not None and vals[0] > 0.0:
                return np.float64(math.sqrt(sum(math.log(val) ** 2 for val in vals)))
        elif x.shape == y.shape == (2, 2):
            _, white = _whiten_2x2_scalar(x.tolist(), y.tolist())
            if white is not None and all(math.isfinite(w) for w in white):
                low, high = _eigh_2x2_scalar(*white)[:2]
                if low > 0.0:
                    return np.float64(math.hypot(math.log(low), math.log(high)))
        _, a_inv_t = self._factor(x)
        vals = eigh(self._whiten(a_inv_t, y))[0]  # faster than eigvalsh here
        return np.sqrt(np.sum(np.log(vals) ** 2, axis=-1))

    def transport(self, x, y, v):
        """``E v E^T`` with ``E = x^{1/2} (x^{-1/2} y x^{-1/2})^{1/2} x^{-1/2}``.

        Parameters
        ----------
        x, y, v : array, shape ``(..., k, k)``

        Returns
        -------
        ndarray, shape ``(..., k, k)``
        """
        # Gamma_{x->y} V = E V E^T with E = A S^{1/2} A^{-1}, S = A^{-1} Y A^{-T}: the transport
        # W -> S^{1/2} W S^{1/2} from I to S, conjugated by the isometry A.
        a_mat, a_inv_t = self._factor(x)
        vals, u = eigh(self._whiten(a_inv_t, y))
        e = a_mat @ eig_apply(u, np.sqrt(vals)) @ a_inv_t.mT
        return sym(e @ np.asarray(v, dtype=float) @ e.mT)

    def proj_tangent(self, x, v):
        """The symmetric part of ``v`` (broadcast against ``x``).

        Parameters
        ----------
        x, v : array, shape ``(..., k, k)``

        Returns
        -------
        ndarray, shape ``(..., k, k)``
        """
        v = sym(v)
        return np.broadcast_to(v, np.broadcast_shapes(np.shape(x), v.shape)).copy()

    def random_point(self, size=None, rng=None):
        """``expm(A)`` with ``A`` a standard Gaussian symmetric matrix (spread around I).

        Parameters
        ----------
        size : int, tuple of int or None
        rng : None, int or numpy.random.Generator

        Returns
        -------
        ndarray, shape ``(*size, k, k)``
        """
        rng = np.random.default_rng(rng)
        size = () if size is None else tuple(np.atleast_1d(size).tolist())
        eye = np.broadcast_to(np.eye(self.k), size + self.point_shape)
        return self.exp(eye, self.random_tangent(eye, rng))

    def random_tangent(self, x, rng=None):
        """Standard Gaussian in the metric at ``x``: built at the identity and moved by the
        isometry ``A -> x^{1/2} A x^{1/2}``.

        Parameters
        ----------
        x : array, shape ``(..., k, k)``
        rng : None, int or numpy.random.Generator

        Returns
        -------
        ndarray, shape ``(..., k, k)``
        """
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
        """Both adjoint Jacobi maps from one eigen-frame of ``v`` (closed form).

        Parameters
        ----------
        p, v, w : array, shape ``(..., k, k)``
            Footpoints, tangent vectors at ``p``, tangent vectors at ``Exp(p, v)``.

        Returns
        -------
        (point_part, vector_part) : tuple of ndarray, each shape ``(..., k, k)``
        """
        b, w_hat, half = self._adjoint_parts(p, v, w)
        return sym(b @ (w_hat * np.cosh(half)) @ b.mT), sym(b @ (w_hat * sinhc(half)) @ b.mT)

    def adjoint_dexp_point(self, p, v, w):
        """Closed form: entry (i, j) of the frame scaled by ``cosh(|lam_i − lam_j| / 2)``.

        Parameters
        ----------
        p, v, w : array, shape ``(..., k, k)``

        Returns
        -------
        ndarray, shape ``(..., k, k)``
        """
        b, w_hat, half = self._adjoint_parts(p, v, w)
        return sym(b @ (w_hat * np.cosh(half)) @ b.mT)

    def adjoint_dexp_vector(self, p, v, w):
        """Closed form: entry (i, j) of the frame scaled by ``sinhc(|lam_i − lam_j| / 2)``.

        Parameters
        ----------
        p, v, w : array, shape ``(..., k, k)``

        Returns
        -------
        ndarray, shape ``(..., k, k)``
        """
        b, w_hat, half = self._adjoint_parts(p, v, w)
        return sym(b @ (w_hat * sinhc(half)) @ b.mT)

    def _transport_back(self, p, v, w):
        b, c, lam = self._curvature_frame(p, v)
        w_hat = c.mT @ np.asarray(w, dtype=float) @ c
        w_hat = w_hat * np.exp(-(lam[..., :, None] + lam[..., None, :]) / 2.0)
        return sym(b @ w_hat @ b.mT)
