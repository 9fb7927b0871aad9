"""Abstract Riemannian manifold with the operations every estimator and mechanism uses.

The CSV format of points and the volume laws are default methods kept in their own modules
(:mod:`dpcore.manifolds._csv_format`, :mod:`dpcore.manifolds._volume`) and mixed in here.
"""

from __future__ import annotations

import functools
import math
from abc import ABC, abstractmethod

import numpy as np

from ..exceptions import CutLocusError  # noqa: F401  (defined in dpcore.exceptions)
from ._csv_format import CSVFormatMixin, RowProblems, _failed  # noqa: F401  (re-exported)
from ._functions import jacobi_point_scale, jacobi_vector_scale
from ._volume import VolumeLawsMixin

#: Numbers per block of a large batch (:func:`blockwise`, :meth:`Manifold._basis_gram`): the
#: temporaries of one block stay in the processor's cache.
_BLOCK = 1 << 16


def blockwise(method):
    """Decorator of a method ``(self, *point_arrays)`` whose points are computed each on its
    own (no sum over the batch): a batch of more than :data:`_BLOCK` numbers is done in blocks
    along its first axis, with the same result to the bit, and without temporaries of the
    whole batch's size (fresh memory for each, which costs more than the arithmetic)."""
    @functools.wraps(method)
    def blocked(self, *arrays, **kwargs):
        top = self.point_ndim + 1  # one batch axis and few numbers: no broadcast beyond
        if kwargs or all(a.ndim <= top and a.size <= _BLOCK for a in map(np.asanyarray, arrays)):
            return method(self, *arrays, **kwargs)
        arrays = [np.asarray(a, dtype=float) for a in arrays]
        batch = self._batch_shape(*arrays)
        rows = math.prod(batch[1:]) * math.prod(self.point_shape)
        if not batch or batch[0] * rows <= _BLOCK:
            return method(self, *arrays, **kwargs)
        full = [np.broadcast_to(a, (*batch, *self.point_shape)) for a in arrays]
        step = max(1, _BLOCK // rows)
        return np.concatenate([method(self, *(a[at:at + step] for a in full))
                               for at in range(0, batch[0], step)])
    return blocked


class Manifold(CSVFormatMixin, VolumeLawsMixin, ABC):
    """A Riemannian manifold with closed-form geometry.

    Points are arrays of shape ``[..., *point_shape]``; every operation broadcasts over the
    leading batch axes. Scalars (distances, inner products) have the batch shape.

    Attributes
    ----------
    point_shape : tuple of int
        Shape of one point (and of one tangent vector) in its array representation. In the
        shapes of the method docstrings, ``...`` stands for any batch shape (broadcast between
        arguments) and ``*point_shape`` for the trailing axes of one point.
    dim : int
        Intrinsic dimension.
    curvature_bounds : tuple of float
        Lower and upper bounds ``(kappa_low, kappa_high)`` on sectional curvature.
    injectivity_radius : float
        Radius below which ``exp`` is a diffeomorphism at every point.
    is_homogeneous : bool
        Whether the isometry group acts transitively, so a density that depends only on the
        distance to its centre has a normalizing constant independent of that centre.
    is_compact : bool
        Whether the manifold is compact (then a mechanism's support can be all of it, and a
        uniform law exists on it).
    is_linear : bool
        Whether the manifold is a vector space with its flat metric: ``exp(x, v) = x + v`` and
        ``log(x, y) = y - x`` (R^d). Gradients of least-squares energies are then affine, so
        several mechanisms and estimators have closed forms (an exact K-norm draw, the mean as
        an average); algorithms test this fact instead of the class.
    diameter : float
        Largest distance between two points (``inf`` on non-compact manifolds).
    bundle_base : Manifold or None
        The base manifold M when this space is a tangent-bundle state space ``TM`` of joint
        regression chains (:class:`~dpcore.mechanisms.bundle.TangentBundleWalk`), else None;
        samplers test this fact instead of the class.
    """

    point_shape: tuple[int, ...] = ()
    dim: int = 0
    curvature_bounds: tuple[float, float] = (0.0, 0.0)
    injectivity_radius: float = np.inf
    is_homogeneous: bool = True
    is_compact: bool = False
    is_linear: bool = False
    diameter: float = np.inf
    bundle_base = None

    @property
    def point_ndim(self) -> int:
        """Number of trailing axes that make up one point, ``len(point_shape)`` (int)."""
        return len(self.point_shape)

    @property
    def origin(self):
        """A fixed public point of the manifold: the default centre of synthetic data and of
        the public balls of strict releases.

        Returns
        -------
        ndarray, shape ``point_shape``

        Raises
        ------
        NotImplementedError
            If the space names none (pass a centre explicitly).
        """
        raise NotImplementedError(
            f"{type(self).__name__} has no origin; pass a centre (a point of the manifold).")

    # ------------------------------------------------------------------ embedding
    @property
    def ambient_dim(self) -> int:
        """Dimension D of the linear space the manifold is embedded in (for the ambient
        mechanisms).

        Returns
        -------
        int

        Raises
        ------
        NotImplementedError
            For a space with no embedding here.
        """
        raise NotImplementedError(
            f"No ambient embedding for {self!r}; ambient mechanisms support Sphere, SPD and "
            "Euclidean.")

    def embed(self, x):
        """Ambient coordinates, isometric to the ambient Euclidean (Frobenius) norm.

        Parameters
        ----------
        x : array, shape ``(..., *point_shape)``

        Returns
        -------
        ndarray, shape ``(..., ambient_dim)``
        """
        self.ambient_dim  # noqa: B018 - raises where there is no embedding
        return np.asarray(x, dtype=float).reshape(np.shape(x)[: np.ndim(x) - self.point_ndim]
                                                  + (-1,))

    def unembed(self, z):
        """Inverse of :meth:`embed` (the result may lie off the manifold).

        Parameters
        ----------
        z : array, shape ``(..., ambient_dim)``

        Returns
        -------
        ndarray, shape ``(..., *point_shape)``
        """
        z = np.asarray(z, dtype=float)
        return z.reshape(z.shape[:-1] + tuple(self.point_shape))

    def project(self, z):
        """Nearest point of the manifold to ambient points in the shape of points.

        Parameters
        ----------
        z : array, shape ``(..., *point_shape)``

        Returns
        -------
        ndarray, shape ``(..., *point_shape)``
        """
        return np.asarray(z, dtype=float)

    def on_manifold(self, z, atol=1e-9):
        """Whether ambient points (in the shape of points) lie on the manifold.

        Parameters
        ----------
        z : array, shape ``(..., *point_shape)``
        atol : float
            Tolerance.

        Returns
        -------
        ndarray of bool, shape ``(...)``
        """
        return np.asarray(self.belongs(z, atol=atol), dtype=bool)

    def ambient_radius(self, center, radius):
        """Radius r_E of an ambient Euclidean ball about ``center`` that holds the geodesic
        ball ``B_radius(center)``.

        Parameters
        ----------
        center : array, shape ``point_shape``
        radius : float

        Returns
        -------
        float
            Here ``radius`` itself (the embedding of a flat space is an isometry).
        """
        self.ambient_dim  # noqa: B018 - raises where there is no embedding
        return float(radius)

    # ------------------------------------------------------------------ helpers
    def _sum(self, a):
        """Sum over the point axes, leaving the batch axes."""
        return np.sum(a, axis=tuple(range(-self.point_ndim, 0)))

    def pointwise(self, s):
        """A batch of scalars reshaped to broadcast against points.

        Parameters
        ----------
        s : array-like, shape ``batch``

        Returns
        -------
        ndarray, shape ``batch + (1,) * point_ndim``
            E.g. ``m.exp(p, m.pointwise(t) * v)`` for geodesic times ``t`` of shape ``(n,)``.
        """
        s = np.asarray(s, dtype=float)
        return s.reshape(s.shape + (1,) * self.point_ndim)

    def _batch_shape(self, *arrays):
        shapes = [np.shape(a)[: np.ndim(a) - self.point_ndim] for a in arrays]
        return np.broadcast_shapes(*shapes)

    # ------------------------------------------------------------------ metric
    def inner(self, x, u, w):
        """Riemannian inner product of tangent vectors ``u`` and ``w`` at ``x``.

        Parameters
        ----------
        x : array, shape ``(..., *point_shape)``
        u, w : array, shape ``(..., *point_shape)``
            Tangent vectors at ``x``.

        Returns
        -------
        ndarray, shape ``(...)``
            Here the Euclidean (Frobenius) product of the arrays.
        """
        return self._sum(np.asarray(u, dtype=float) * np.asarray(w, dtype=float))

    def norm(self, x, v):
        """Riemannian norm of the tangent vector ``v`` at ``x``.

        Parameters
        ----------
        x : array, shape ``(..., *point_shape)``
        v : array, shape ``(..., *point_shape)``

        Returns
        -------
        ndarray, shape ``(...)``
        """
        return np.sqrt(np.maximum(self.inner(x, v, v), 0.0))

    def squared_dist(self, x, y):
        """Squared geodesic distance.

        Parameters
        ----------
        x, y : array, shape ``(..., *point_shape)``

        Returns
        -------
        ndarray, shape ``(...)``
        """
        return self.dist(x, y) ** 2

    @abstractmethod
    def exp(self, x, v):
        """Riemannian exponential: the point reached at time 1 along the geodesic with
        initial point ``x`` and velocity ``v``.

        Parameters
        ----------
        x : array, shape ``(..., *point_shape)``
            Base points.
        v : array, shape ``(..., *point_shape)``
            Tangent vectors at ``x``.

        Returns
        -------
        ndarray, shape ``(..., *point_shape)``
        """

    @abstractmethod
    def log(self, x, y):
        """Riemannian logarithm: the tangent vector at ``x`` of the minimizing geodesic to ``y``.

        Parameters
        ----------
        x : array, shape ``(..., *point_shape)``
            Base points.
        y : array, shape ``(..., *point_shape)``

        Returns
        -------
        ndarray, shape ``(..., *point_shape)``
            Tangent vectors at ``x`` with ``exp(x, log(x, y)) = y``.

        Raises
        ------
        CutLocusError
            If ``y`` is in the cut locus of ``x``.
        """

    @abstractmethod
    def dist(self, x, y):
        """Geodesic distance.

        Parameters
        ----------
        x, y : array, shape ``(..., *point_shape)``

        Returns
        -------
        ndarray, shape ``(...)``
            (a float64 scalar for single points).
        """

    @abstractmethod
    def transport(self, x, y, v):
        """Parallel transport of ``v`` in T_x M to T_y M along the minimizing geodesic.

        Parameters
        ----------
        x, y : array, shape ``(..., *point_shape)``
            Start and end points.
        v : array, shape ``(..., *point_shape)``
            Tangent vectors at ``x``.

        Returns
        -------
        ndarray, shape ``(..., *point_shape)``
            Tangent vectors at ``y``.

        Raises
        ------
        CutLocusError
            If ``y`` is in the cut locus of ``x``.
        """

    @abstractmethod
    def proj_tangent(self, x, v):
        """Orthogonal projection of an ambient vector ``v`` onto T_x M.

        Parameters
        ----------
        x : array, shape ``(..., *point_shape)``
        v : array, shape ``(..., *point_shape)``
            Arrays in the shape of points (ambient vectors).

        Returns
        -------
        ndarray, shape ``(..., *point_shape)``
        """

    @abstractmethod
    def random_point(self, size=None, rng=None):
        """Random points.

        Parameters
        ----------
        size : int, tuple of int or None
            Batch shape (``None`` for a single point).
        rng : None, int or numpy.random.Generator

        Returns
        -------
        ndarray, shape ``(*size, *point_shape)``
        """

    def random_tangent(self, x, rng=None):
        """Standard Gaussian tangent vectors at ``x`` (one per point in the batch).

        The coordinates in any orthonormal basis of T_x M are i.i.d. N(0, 1).

        Parameters
        ----------
        x : array, shape ``(..., *point_shape)``
        rng : None, int or numpy.random.Generator

        Returns
        -------
        ndarray, shape ``(..., *point_shape)``
        """
        rng = np.random.default_rng(rng)
        x = np.asarray(x, dtype=float)
        return self.proj_tangent(x, rng.standard_normal(x.shape))

    def orthonormal_basis(self, x):
        """An orthonormal basis of T_x M.

        The projections of the ambient coordinate vectors span T_x M; orthonormalizing them
        through the eigendecomposition of their Gram matrix (in the Riemannian metric) keeps the
        ``dim`` directions with non-zero eigenvalue.

        Parameters
        ----------
        x : array, shape ``(..., *point_shape)``

        Returns
        -------
        ndarray, shape ``(..., dim, *point_shape)``
            ``basis[..., a, :]`` is the a-th basis vector.
        """
        x = np.asarray(x, dtype=float)
        size = int(np.prod(self.point_shape))
        batch = x.shape[: x.ndim - self.point_ndim]
        eye = np.eye(size).reshape((size, *self.point_shape))
        cand = self.proj_tangent(x[..., None, *([slice(None)] * self.point_ndim)], eye)
        cand = np.broadcast_to(cand, (*batch, size, *self.point_shape))
        w, q = np.linalg.eigh(self._basis_gram(x, cand))
        w, q = w[..., -self.dim :], q[..., -self.dim :]
        flat = cand.reshape((*batch, size, size))
        basis = np.einsum("...ja,...jk->...ak", q / np.sqrt(w)[..., None, :], flat)
        return basis.reshape((*batch, self.dim, *self.point_shape))

    def _basis_gram(self, x, cand):
        """The Gram matrices ``(*batch, size, size)`` of the candidates ``cand`` ``(*batch,
        size, *point_shape)`` of :meth:`orthonormal_basis` in the metric at ``x``, for a large
        batch in blocks of :data:`_BLOCK` products: each entry is the same :meth:`inner` of the
        same two arrays, so the result (and the basis) is the same to the bit."""
        sl = [slice(None)] * self.point_ndim
        size = cand.shape[-self.point_ndim - 1]
        batch = cand.shape[: cand.ndim - self.point_ndim - 1]
        points = int(np.prod(batch, dtype=int))
        step = max(1, _BLOCK // (size * size * int(np.prod(self.point_shape, dtype=int))))
        if points <= step:
            return self.inner(np.expand_dims(x, axis=(-self.point_ndim - 1,
                                                      -self.point_ndim - 2)),
                              cand[..., :, None, *sl], cand[..., None, :, *sl])
        x = np.broadcast_to(x, (*batch, *self.point_shape)).reshape(
            (points, 1, 1, *self.point_shape))
        cand = cand.reshape((points, size, *self.point_shape))
        gram = np.empty((points, size, size))
        for at in range(0, points, step):
            gram[at:at + step] = self.inner(x[at:at + step], cand[at:at + step, :, None, *sl],
                                            cand[at:at + step, None, :, *sl])
        return gram.reshape((*batch, size, size))

    def belongs(self, x, atol=1e-8):
        """Whether ``x`` is a point of the manifold.

        Parameters
        ----------
        x : array, shape ``(..., *point_shape)``
        atol : float
            Tolerance.

        Returns
        -------
        ndarray of bool, shape ``(...)``
            Here always True.
        """
        return np.ones(self._batch_shape(x), dtype=bool)

    def is_tangent(self, x, v, atol=1e-8):
        """Whether ``v`` is tangent at ``x``: ``|v - proj_tangent(x, v)| <= atol (1 + |v|)``.

        Parameters
        ----------
        x : array, shape ``(..., *point_shape)``
        v : array, shape ``(..., *point_shape)``
        atol : float
            Relative tolerance.

        Returns
        -------
        ndarray of bool, shape ``(...)``
        """
        v = np.asarray(v, dtype=float)
        diff = self._sum((v - self.proj_tangent(x, v)) ** 2)
        return np.sqrt(diff) <= atol * (1.0 + np.sqrt(self._sum(v**2)))

    def geodesic(self, x, v, t):
        """Points ``exp(x, t v)`` for an array of times ``t`` (batch axis first).

        Parameters
        ----------
        x : array, shape ``point_shape``
        v : array, shape ``point_shape``
            Tangent vector at ``x``.
        t : array, shape ``(n,)``
            Times.

        Returns
        -------
        ndarray, shape ``(n, *point_shape)``
        """
        t = np.asarray(t, dtype=float)
        return self.exp(x, self.pointwise(t) * np.asarray(v, dtype=float))

    # ------------------------------------------------------------------ Jacobi fields
    def _transport_back(self, p, v, w):
        """Parallel transport of ``w`` from ``Exp(p, v)`` back to ``p`` along ``t -> Exp(p, t v)``.

        This is the geodesic the Jacobi fields live on; it is the minimizing one only while
        ``|v|`` is below the injectivity radius, so spaces with a cut locus override this.
        """
        return self.transport(self.exp(p, v), p, w)

    @abstractmethod
    def _scale_by_curvature(self, p, v, w0, scale):
        """Scale ``w0`` in T_p M along the eigen-directions of u -> R(u, v) v.

        ``scale`` maps an array of eigenvalues ``lam = K |v|^2`` to factors; the direction of
        ``v`` itself has ``lam = 0``.
        """

    def adjoint_dexp(self, p, v, w):
        """Both adjoint Jacobi maps at once, sharing one ``exp`` and one transport.

        Parameters
        ----------
        p : array, shape ``(..., *point_shape)``
            Footpoints.
        v : array, shape ``(..., *point_shape)``
            Tangent vectors at ``p``.
        w : array, shape ``(..., *point_shape)``
            Tangent vectors at ``Exp(p, v)``.

        Returns
        -------
        (point_part, vector_part) : tuple of ndarray, each shape ``(..., *point_shape)``
            ``adjoint_dexp_point(p, v, w)`` and ``adjoint_dexp_vector(p, v, w)``, tangent at
            ``p``.
        """
        w0 = self._transport_back(p, v, w)
        return (
            self._scale_by_curvature(p, v, w0, jacobi_point_scale),
            self._scale_by_curvature(p, v, w0, jacobi_vector_scale),
        )

    def adjoint_dexp_point(self, p, v, w):
        r"""Adjoint of the derivative of ``Exp(p, v)`` with respect to the base point.

        The base point moves while ``v`` is parallel transported with it (the convention of
        Fletcher's geodesic regression).

        Parameters
        ----------
        p : array, shape ``(..., *point_shape)``
        v : array, shape ``(..., *point_shape)``
            Tangent vectors at ``p``.
        w : array, shape ``(..., *point_shape)``
            Tangent vectors at ``Exp(p, v)``.

        Returns
        -------
        ndarray, shape ``(..., *point_shape)``
            Tangent vectors at ``p``.
        """
        return self.adjoint_dexp(p, v, w)[0]

    def adjoint_dexp_vector(self, p, v, w):
        r"""Adjoint of the derivative of ``Exp(p, v)`` with respect to ``v``.

        Parameters
        ----------
        p : array, shape ``(..., *point_shape)``
        v : array, shape ``(..., *point_shape)``
            Tangent vectors at ``p``.
        w : array, shape ``(..., *point_shape)``
            Tangent vectors at ``Exp(p, v)``.

        Returns
        -------
        ndarray, shape ``(..., *point_shape)``
            Tangent vectors at ``p``.
        """
        return self.adjoint_dexp(p, v, w)[1]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._repr_args()})"

    def _repr_args(self) -> str:
        return ""


def split_along(manifold, x, v, w):
    """Split ``w`` into its component along ``v`` and the orthogonal rest.

    Returns ``(w_par, w_perp, |v|)``; where ``v = 0`` the parallel part is zero.
    """
    nv = manifold.norm(x, v)
    safe = np.where(nv > 0, nv, 1.0)
    u = v / manifold.pointwise(safe)
    coef = manifold.inner(x, u, w)
    w_par = manifold.pointwise(coef) * u
    return w_par, w - w_par, nv
