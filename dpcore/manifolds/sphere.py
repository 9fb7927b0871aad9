"""Unit sphere S^d embedded in R^{d+1}."""

from __future__ import annotations

import math

import numpy as np

from .._validation import check_int
from ._functions import log_sinc, rowdot, sinc, sinc_scalar, stable_norm
from .base import CutLocusError, Manifold, RowProblems, _failed, split_along

#: Points closer than this angle (radians) to each other's antipode are treated as antipodal.
CUT_TOL = 1e-8


class Sphere(Manifold):
    """The unit sphere S^d in R^{d+1} with the round metric (curvature 1).

    Parameters
    ----------
    d : int
        Intrinsic dimension (``Sphere(2)`` is the usual 2-sphere in R^3).
    """

    curvature_bounds = (1.0, 1.0)
    injectivity_radius = np.pi
    isotropic_volume = True
    is_compact = True
    diameter = np.pi
    is_homogeneous = True

    def __init__(self, d: int):
        self.d = check_int(d, "d")
        self.dim = self.d
        self.point_shape = (self.d + 1,)

    def _repr_args(self):
        return str(self.d)

    @property
    def origin(self):
        """The north pole ``e_{d+1}``, shape ``(d + 1,)``."""
        o = np.zeros(self.point_shape)
        o[-1] = 1.0
        return o

    @property
    def ambient_dim(self):
        """d + 1: the sphere lies in R^{d+1}."""
        return self.d + 1

    def project(self, z):
        """Radial projection ``z / |z|``.

        Parameters
        ----------
        z : array, shape ``(..., d + 1)``

        Returns
        -------
        ndarray, shape ``(..., d + 1)``

        Raises
        ------
        ValueError
            For the origin, which has no projection.
        """
        z = np.asarray(z, dtype=float)
        norms = np.linalg.norm(z, axis=-1, keepdims=True)
        if np.any(norms == 0):
            raise ValueError("Cannot project the origin onto the sphere.")
        return z / norms

    def on_manifold(self, z, atol=1e-9):
        """Whether ``| |z| − 1 | ≤ atol``.

        Parameters
        ----------
        z : array, shape ``(..., d + 1)``
        atol : float

        Returns
        -------
        ndarray of bool, shape ``(...)``
        """
        return np.abs(np.linalg.norm(np.asarray(z, dtype=float), axis=-1) - 1.0) <= atol

    def ambient_radius(self, center, radius):
        """The chord ``2 sin(r/2)`` (paper 001 suppl. A.3.2), ``r`` capped at pi.

        Parameters
        ----------
        center : array, shape ``(d + 1,)``
            Unused (the sphere is homogeneous).
        radius : float

        Returns
        -------
        float
        """
        return float(2.0 * np.sin(min(float(radius), np.pi) / 2.0))

    # ------------------------------------------------------------ CSV format
    def from_csv_rows(self, values, *, renormalize=False):
        """The rows ``y1..y{d+1}`` as points; with ``renormalize``, divided by their norm.

        Parameters
        ----------
        values : array, shape ``(..., d + 1)``
        renormalize : bool
            Divide every row by its norm (a zero row stays zero).

        Returns
        -------
        ndarray, shape ``(..., d + 1)``
            The values themselves unless ``renormalize``.
        """
        values = self._csv_values(values)
        if not renormalize:
            return values
        norms = stable_norm(values)
        # Scaled first so that tiny coordinates (1e-160) do not underflow when squared.
        big = np.max(np.abs(values), axis=-1, keepdims=True)
        unit = values / np.where(big > 0, big, 1.0)
        return unit / np.where(norms > 0, stable_norm(unit), 1.0)[..., None]

    def csv_problems(self, values, *, atol=1e-6, renormalize=False):
        """Zero rows (never on the sphere) and, unless ``renormalize``, rows whose norm differs
        from 1 by more than ``atol``.

        Parameters
        ----------
        values : array, shape ``(n, d + 1)``
        atol : float
        renormalize : bool

        Returns
        -------
        list of RowProblems
        """
        y = self._csv_values(values)
        span = self._csv_span()
        norms = stable_norm(y)
        zero = norms == 0
        checks = [RowProblems(zero, None, lambda i: (
            f"the point in columns {span} is the zero vector, which is not on the sphere and "
            "cannot be renormalised."))]
        if not renormalize:
            off = ~zero & (np.abs(norms - 1.0) > atol)
            checks.append(RowProblems(off, None, lambda i: (
                f"the point in columns {span} has norm {norms[i]:.6g}, not 1 (tolerance "
                f"atol={atol:g}), so it is not on the unit sphere. Pass renormalize=True to "
                "project every point onto the sphere.")))
        return _failed(checks)

    def inner(self, x, u, w):
        """Euclidean inner product of R^{d+1} (the round metric).

        Parameters
        ----------
        x : array, shape ``(..., d + 1)``
            Unused.
        u, w : array, shape ``(..., d + 1)``

        Returns
        -------
        ndarray, shape ``(...)``
        """
        return rowdot(u, w)

    def belongs(self, x, atol=1e-8):
        """Whether ``| |x| − 1 | ≤ atol``.

        Parameters
        ----------
        x : array, shape ``(..., d + 1)``
        atol : float

        Returns
        -------
        ndarray of bool, shape ``(...)``
        """
        x = np.asarray(x, dtype=float)
        return np.abs(np.linalg.norm(x, axis=-1) - 1.0) <= atol

    # Single points take a scalar path (math module): numpy's per-call overhead dominates
    # there; the batch = loop contract test checks both paths agree.
    def exp(self, x, v):
        """``cos|v| x + sin|v| v / |v|``.

        Parameters
        ----------
        x : array, shape ``(..., d + 1)``
        v : array, shape ``(..., d + 1)``
            Tangent vectors at ``x`` (orthogonal to ``x``).

        Returns
        -------
        ndarray, shape ``(..., d + 1)``
        """
        x = np.asarray(x, dtype=float)
        v = np.asarray(v, dtype=float)
        if x.ndim == 1 and v.ndim == 1:
            nv = math.sqrt(v @ v)
            return math.cos(nv) * x + sinc_scalar(nv) * v
        nv = np.sqrt(rowdot(v, v, keepdims=True))
        return np.cos(nv) * x + sinc(nv) * v

    def _angle_parts(self, x, y):
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        c = rowdot(x, y, keepdims=True)
        u = y - c * x
        s = np.sqrt(rowdot(u, u, keepdims=True))
        return c, u, s

    def log(self, x, y):
        """``theta / sin(theta) (y − cos(theta) x)`` with ``theta`` the angle between them.

        Parameters
        ----------
        x, y : array, shape ``(..., d + 1)``

        Returns
        -------
        ndarray, shape ``(..., d + 1)``

        Raises
        ------
        CutLocusError
            For antipodal points.
        """
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        if x.ndim == 1 and y.ndim == 1:
            c = x @ y
            u = y - c * x
            s = math.sqrt(u @ u)
            theta = math.atan2(s, c)
            if math.pi - theta < CUT_TOL:
                raise CutLocusError("log is undefined for antipodal points on the sphere.")
            return (theta / s if s > 0 else 1.0) * u
        c, u, s = self._angle_parts(x, y)
        theta = np.arctan2(s, c)
        if np.any(np.pi - theta < CUT_TOL):
            raise CutLocusError("log is undefined for antipodal points on the sphere.")
        # theta / sin(theta) with sin(theta) = s; stable as s -> 0 when c > 0.
        return np.divide(theta, s, out=np.ones_like(s), where=s > 0) * u

    def dist(self, x, y):
        """The angle between ``x`` and ``y`` (computed with ``atan2``, accurate everywhere).

        Parameters
        ----------
        x, y : array, shape ``(..., d + 1)``

        Returns
        -------
        ndarray, shape ``(...)``
        """
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        if x.ndim == 1 and y.ndim == 1:
            c = x @ y
            u = y - c * x
            return np.float64(math.atan2(math.sqrt(u @ u), c))
        c, _, s = self._angle_parts(x, y)
        return np.arctan2(s, c)[..., 0]

    def transport(self, x, y, v):
        """Closed form along the great circle; raises :class:`CutLocusError` for antipodal
        points.

        Parameters
        ----------
        x, y : array, shape ``(..., d + 1)``
        v : array, shape ``(..., d + 1)``
            Tangent vectors at ``x``.

        Returns
        -------
        ndarray, shape ``(..., d + 1)``
        """
        # The component along the unit direction u of log_x y turns into the geodesic's end
        # velocity -sin(theta) x + cos(theta) u; the orthogonal rest is unchanged.
        x = np.asarray(x, dtype=float)
        v = np.asarray(v, dtype=float)
        c, u, s = self._angle_parts(x, y)
        theta = np.arctan2(s, c)
        if np.any(np.pi - theta < CUT_TOL):
            raise CutLocusError("transport is undefined between antipodal points on the sphere.")
        unit = u / np.where(s > 0, s, 1.0)
        end_dir = -np.sin(theta) * x + np.cos(theta) * unit
        return v + rowdot(unit, v, keepdims=True) * (end_dir - unit)

    def proj_tangent(self, x, v):
        """``v − <x, v> x``.

        Parameters
        ----------
        x : array, shape ``(..., d + 1)``
        v : array, shape ``(..., d + 1)``

        Returns
        -------
        ndarray, shape ``(..., d + 1)``
        """
        x = np.asarray(x, dtype=float)
        v = np.asarray(v, dtype=float)
        return v - rowdot(x, v, keepdims=True) * x

    def random_point(self, size=None, rng=None):
        """Uniformly distributed points (normalized standard Gaussian vectors).

        Parameters
        ----------
        size : int, tuple of int or None
        rng : None, int or numpy.random.Generator

        Returns
        -------
        ndarray, shape ``(*size, d + 1)``
        """
        rng = np.random.default_rng(rng)
        size = () if size is None else tuple(np.atleast_1d(size).tolist())
        z = rng.standard_normal(size + self.point_shape)
        return z / np.linalg.norm(z, axis=-1, keepdims=True)

    # ------------------------------------------------------------ volume
    def log_volume_density(self, x, v, *, rho=None):
        """``(d − 1) log |sin rho / rho|``, ``rho = |v|`` (every direction orthogonal to ``v``
        has curvature 1).

        Parameters
        ----------
        x : array, shape ``(..., d + 1)``
        v : array, shape ``(..., d + 1)``
        rho : array, shape ``(...)``, optional
            ``|v|``, used as given.

        Returns
        -------
        ndarray, shape ``(...)``
        """
        rho = self.norm(x, v) if rho is None else rho
        return (self.dim - 1) * log_sinc(rho)

    def log_volume_density_max(self, rho_lo, rho_hi):
        """``(d − 1) log(sin rho_lo / rho_lo)``: ``sin(rho) / rho`` decreases on [0, pi].

        Parameters
        ----------
        rho_lo, rho_hi : array, shape ``(...)``
            Radii in [0, pi] (``rho_hi`` is not needed).

        Returns
        -------
        ndarray, shape of ``rho_lo``
        """
        return (self.dim - 1) * log_sinc(rho_lo)

    def radial_log_volume(self, r):
        """``(d − 1) log sin r`` on [0, pi].

        Parameters
        ----------
        r : array, shape ``(...)``

        Returns
        -------
        ndarray, shape ``(...)``
        """
        return self._times_dim_minus_one(r, lambda r, a: a * np.log(np.sin(r)))

    def radial_dlog_volume(self, r):
        """``(d − 1) cot r``.

        Parameters
        ----------
        r : array, shape ``(...)``

        Returns
        -------
        ndarray, shape ``(...)``
        """
        return self._times_dim_minus_one(r, lambda r, a: a * np.cos(r) / np.sin(r))

    @property
    def volume_growth_rate(self):
        """0.0 (compact)."""
        return 0.0

    def _transport_back(self, p, v, w):
        # Along the great circle: gamma'(|v|) = -sin|v| p + cos|v| u maps back to u; the part of
        # w orthogonal to the circle's plane is kept. Valid for any |v|, also past the cut locus.
        p = np.asarray(p, dtype=float)
        v = np.asarray(v, dtype=float)
        w = np.asarray(w, dtype=float)
        nv = np.sqrt(rowdot(v, v, keepdims=True))
        u = v / np.where(nv > 0, nv, 1.0)
        end_dir = -np.sin(nv) * p + np.cos(nv) * u
        a = rowdot(end_dir, w, keepdims=True)
        return w - a * end_dir + a * u

    def adjoint_dexp(self, p, v, w):
        """Both adjoint Jacobi maps in one pass (closed form, valid past the cut locus).

        Parameters
        ----------
        p, v, w : array, shape ``(..., d + 1)``
            Footpoints, tangent vectors at ``p``, tangent vectors at ``Exp(p, v)``.

        Returns
        -------
        (point_part, vector_part) : tuple of ndarray, each shape ``(..., d + 1)``
        """
        # One pass: with u = v/|v| and e = gamma'(|v|)/|v|, w = a e + w_perp where w_perp is
        # orthogonal to the plane of the great circle; it maps back to a u + w_perp, and the
        # Jacobi scalings are 1 on u and cos|v| (point) or sin|v|/|v| (vector) on w_perp.
        p = np.asarray(p, dtype=float)
        v = np.asarray(v, dtype=float)
        w = np.asarray(w, dtype=float)
        nv = np.sqrt(rowdot(v, v, keepdims=True))
        u = np.divide(v, nv, out=np.zeros(np.broadcast_shapes(v.shape, nv.shape)), where=nv > 0)
        end_dir = np.cos(nv) * u - np.sin(nv) * p
        a = rowdot(end_dir, w, keepdims=True)
        w_perp = w - a * end_dir
        par = a * u
        return par + np.cos(nv) * w_perp, par + sinc(nv) * w_perp

    def _scale_by_curvature(self, p, v, w0, scale):
        w_par, w_perp, nv = split_along(self, p, v, w0)
        return w_par * scale(0.0) + self.pointwise(scale(nv**2)) * w_perp
