"""Hyperbolic space H^d in the hyperboloid model."""

from __future__ import annotations

import math

import numpy as np

from .._validation import check_int
from ._functions import log_sinh, log_sinhc, sinhc
from .base import Manifold, RowProblems, _failed, split_along


def minkowski(u, w):
    """Minkowski bilinear form -u_0 w_0 + sum_i u_i w_i over the last axis.

    Parameters
    ----------
    u, w : array, shape ``(..., d + 1)``

    Returns
    -------
    ndarray, shape ``(...)``
    """
    u = np.asarray(u, dtype=float)
    w = np.asarray(w, dtype=float)
    return np.sum(u[..., 1:] * w[..., 1:], axis=-1) - u[..., 0] * w[..., 0]


class Hyperbolic(Manifold):
    """Hyperbolic space of curvature -1: {x in R^{d+1} : <x, x>_L = -1, x_0 > 0}.

    Parameters
    ----------
    d : int
        Intrinsic dimension.
    """

    curvature_bounds = (-1.0, -1.0)
    injectivity_radius = np.inf
    isotropic_volume = True
    is_homogeneous = True

    def __init__(self, d: int):
        self.d = check_int(d, "d")
        self.dim = self.d
        self.point_shape = (self.d + 1,)

    def _repr_args(self):
        return str(self.d)

    @property
    def origin(self):
        """The point (1, 0, ..., 0), shape ``(d + 1,)``."""
        o = np.zeros(self.point_shape)
        o[0] = 1.0
        return o

    def belongs(self, x, atol=1e-8):
        """Whether ``<x, x>_L = −1`` (relative tolerance ``atol``) and ``x_0 > 0``.

        Parameters
        ----------
        x : array, shape ``(..., d + 1)``
        atol : float

        Returns
        -------
        ndarray of bool, shape ``(...)``
        """
        x = np.asarray(x, dtype=float)
        return (np.abs(minkowski(x, x) + 1.0) <= atol * (1 + x[..., 0] ** 2)) & (x[..., 0] > 0)

    # ------------------------------------------------------------ CSV format
    def _csv_unit(self, values):
        """``(unit, <unit, unit>_L)``: rows divided by their largest coordinate, so that tiny
        coordinates do not underflow when squared."""
        big = np.max(np.abs(values), axis=-1, keepdims=True)
        unit = values / np.where(big > 0, big, 1.0)
        return unit, minkowski(unit, unit)

    def from_csv_rows(self, values, *, renormalize=False):
        """The rows ``y1..y{d+1}`` (``y1`` time-like) as points; with ``renormalize``, rescaled
        to ``<y, y>_L = -1``.

        Parameters
        ----------
        values : array, shape ``(..., d + 1)``
        renormalize : bool
            Rescale every row with ``<y, y>_L < 0`` onto the hyperboloid (other rows are
            left scaled by their largest coordinate).

        Returns
        -------
        ndarray, shape ``(..., d + 1)``
            The values themselves unless ``renormalize``.
        """
        values = self._csv_values(values)
        if not renormalize:
            return values
        unit, q_unit = self._csv_unit(values)
        return unit / np.sqrt(np.where(q_unit < 0, -q_unit, 1.0))[..., None]

    def csv_problems(self, values, *, atol=1e-6, renormalize=False):
        """Rows with a non-positive time-like coordinate ``y1`` (column ``y1``); with
        ``renormalize``, rows with ``<y, y>_L >= 0`` (no rescaling reaches the hyperboloid);
        without, rows with ``|<y, y>_L + 1| > atol (1 + y1^2)``.

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
        columns = self.csv_columns()
        span = self._csv_span()
        q = minkowski(y, y)
        past = y[:, 0] <= 0
        checks = [RowProblems(past, columns[0], lambda i: (
            f"the first (time-like) coordinate must be positive on the hyperboloid, got "
            f"{y[i, 0]:.6g}."))]
        if renormalize:
            _, q_unit = self._csv_unit(y)
            spacelike = ~past & (q_unit >= 0)
            checks.append(RowProblems(spacelike, None, lambda i: (
                f"the point in columns {span} has <y, y>_L = {q[i]:.6g} >= 0, so it cannot be "
                "rescaled onto the hyperboloid <y, y>_L = -1.")))
        else:
            off = ~past & (np.abs(q + 1.0) > atol * (1.0 + y[:, 0] ** 2))
            checks.append(RowProblems(off, None, lambda i: (
                f"the point in columns {span} has Minkowski square <y, y>_L = {q[i]:.6g}, not "
                f"-1 (tolerance atol={atol:g}), so it is not on the hyperboloid. Pass "
                "renormalize=True to rescale every point onto it.")))
        return _failed(checks)

    def inner(self, x, u, w):
        """The Minkowski form (positive definite on tangent vectors).

        Parameters
        ----------
        x : array, shape ``(..., d + 1)``
            Unused.
        u, w : array, shape ``(..., d + 1)``

        Returns
        -------
        ndarray, shape ``(...)``
        """
        return minkowski(u, w)

    # Single points take a scalar path (math module), where numpy's call overhead dominates.
    def exp(self, x, v):
        """``cosh|v| x + sinh|v| v / |v|``.

        Parameters
        ----------
        x, v : array, shape ``(..., d + 1)``

        Returns
        -------
        ndarray, shape ``(..., d + 1)``
        """
        x = np.asarray(x, dtype=float)
        v = np.asarray(v, dtype=float)
        if x.ndim == 1 and v.ndim == 1:
            nv = math.sqrt(max(v[1:] @ v[1:] - v[0] * v[0], 0.0))
            return math.cosh(nv) * x + (math.sinh(nv) / nv if nv > 0 else 1.0) * v
        nv = np.sqrt(np.maximum(minkowski(v, v), 0.0))[..., None]
        return np.cosh(nv) * x + sinhc(nv) * v

    def _parts(self, x, y):
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        c = np.maximum(-minkowski(x, y), 1.0)[..., None]
        u = y - c * x
        s = np.sqrt(np.maximum(minkowski(u, u), 0.0))[..., None]
        return c, u, s

    def _scalar_parts(self, x, y):
        c = max(x[0] * y[0] - x[1:] @ y[1:], 1.0)
        u = y - c * x
        return u, math.sqrt(max(u[1:] @ u[1:] - u[0] * u[0], 0.0))

    def log(self, x, y):
        """``arcsinh(s) / s (y − c x)`` with ``c = −<x, y>_L`` and ``s = sinh d(x, y)``.

        Parameters
        ----------
        x, y : array, shape ``(..., d + 1)``

        Returns
        -------
        ndarray, shape ``(..., d + 1)``
        """
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        if x.ndim == 1 and y.ndim == 1:
            u, s = self._scalar_parts(x, y)
            return (math.asinh(s) / s if s > 0 else 1.0) * u
        _, u, s = self._parts(x, y)
        # s = sinh(d(x, y)), so the log is (arcsinh(s) / s) u.
        return u / sinhc(np.arcsinh(s))

    def dist(self, x, y):
        """``arcsinh |y − c x|_L`` with ``c = −<x, y>_L`` (accurate for close points).

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
            xs, ys = x.tolist(), y.tolist()
            c = max(xs[0] * ys[0] - sum(a * b for a, b in zip(xs[1:], ys[1:], strict=True)), 1.0)
            u = [b - c * a for a, b in zip(xs, ys, strict=True)]
            s2 = sum(ui * ui for ui in u[1:]) - u[0] * u[0]
            return np.float64(math.asinh(math.sqrt(max(s2, 0.0))))
        _, _, s = self._parts(x, y)
        return np.arcsinh(s)[..., 0]

    def transport(self, x, y, v):
        """``v + <y, v>_L / (1 + c) (x + y)`` with ``c = −<x, y>_L``.

        Parameters
        ----------
        x, y, v : array, shape ``(..., d + 1)``

        Returns
        -------
        ndarray, shape ``(..., d + 1)``
        """
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        v = np.asarray(v, dtype=float)
        c = np.maximum(-minkowski(x, y), 1.0)[..., None]
        return v + minkowski(y, v)[..., None] / (1.0 + c) * (x + y)

    def proj_tangent(self, x, v):
        """``v + <x, v>_L x`` (Minkowski-orthogonal projection).

        Parameters
        ----------
        x, v : array, shape ``(..., d + 1)``

        Returns
        -------
        ndarray, shape ``(..., d + 1)``
        """
        x = np.asarray(x, dtype=float)
        v = np.asarray(v, dtype=float)
        return v + minkowski(x, v)[..., None] * x

    def random_point(self, size=None, rng=None):
        """Points ``(sqrt(1 + |z|^2), z)`` with ``z`` standard Gaussian in R^d.

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
        z = rng.standard_normal(size + (self.d,))
        x0 = np.sqrt(1.0 + np.sum(z * z, axis=-1, keepdims=True))
        return np.concatenate([x0, z], axis=-1)

    def random_tangent(self, x, rng=None):
        """A standard Gaussian at the origin, parallel transported to ``x``.

        Parameters
        ----------
        x : array, shape ``(..., d + 1)``
        rng : None, int or numpy.random.Generator

        Returns
        -------
        ndarray, shape ``(..., d + 1)``
        """
        rng = np.random.default_rng(rng)
        x = np.asarray(x, dtype=float)
        # A standard Gaussian at the origin, moved to x by parallel transport (an isometry).
        z = np.concatenate(
            [np.zeros(x.shape[:-1] + (1,)), rng.standard_normal(x.shape[:-1] + (self.d,))], axis=-1
        )
        return self.transport(np.broadcast_to(self.origin, x.shape), x, z)

    def adjoint_dexp(self, p, v, w):
        """Both adjoint Jacobi maps in one pass (closed form).

        Parameters
        ----------
        p, v, w : array, shape ``(..., d + 1)``
            Footpoints, tangent vectors at ``p``, tangent vectors at ``Exp(p, v)``.

        Returns
        -------
        (point_part, vector_part) : tuple of ndarray, each shape ``(..., d + 1)``
        """
        # One pass, as on the sphere: w = a e + w_perp with e = gamma'(|v|)/|v|
        # = sinh|v| p + cosh|v| u; e maps back to u, and w_perp is scaled by cosh|v| (point)
        # or sinh|v|/|v| (vector).
        p = np.asarray(p, dtype=float)
        v = np.asarray(v, dtype=float)
        w = np.asarray(w, dtype=float)
        nv = np.sqrt(np.maximum(minkowski(v, v), 0.0))[..., None]
        u = np.divide(v, nv, out=np.zeros(np.broadcast_shapes(v.shape, nv.shape)), where=nv > 0)
        end_dir = np.sinh(nv) * p + np.cosh(nv) * u
        a = minkowski(end_dir, w)[..., None]
        w_perp = w - a * end_dir
        par = a * u
        return par + np.cosh(nv) * w_perp, par + sinhc(nv) * w_perp

    # ------------------------------------------------------------ volume
    def log_volume_density(self, x, v, *, rho=None):
        """``(d − 1) log(sinh rho / rho)``, ``rho = |v|`` (curvature −1 in every direction).

        Parameters
        ----------
        x, v : array, shape ``(..., d + 1)``
        rho : array, shape ``(...)``, optional
            ``|v|``, used as given.

        Returns
        -------
        ndarray, shape ``(...)``
        """
        rho = self.norm(x, v) if rho is None else rho
        return (self.dim - 1) * log_sinhc(rho)

    def log_volume_density_max(self, rho_lo, rho_hi):
        """``(d − 1) log(sinh rho_hi / rho_hi)``: ``sinh(rho) / rho`` increases.

        Parameters
        ----------
        rho_lo, rho_hi : array, shape ``(...)``
            (``rho_lo`` is not needed.)

        Returns
        -------
        ndarray, shape of ``rho_hi``
        """
        return (self.dim - 1) * log_sinhc(rho_hi)

    def radial_log_volume(self, r):
        """``(d − 1) log sinh r`` on [0, inf).

        Parameters
        ----------
        r : array, shape ``(...)``

        Returns
        -------
        ndarray, shape ``(...)``
        """
        return self._times_dim_minus_one(r, lambda r, a: a * log_sinh(r))

    def radial_dlog_volume(self, r):
        """``(d − 1) coth r``.

        Parameters
        ----------
        r : array, shape ``(...)``

        Returns
        -------
        ndarray, shape ``(...)``
        """
        return self._times_dim_minus_one(r, lambda r, a: a / np.tanh(r))

    @property
    def volume_growth_rate(self):
        """``d − 1``: ``sinh^{d-1} r`` grows like ``e^{(d-1) r}``."""
        return float(self.d - 1)

    def _scale_by_curvature(self, p, v, w0, scale):
        w_par, w_perp, nv = split_along(self, p, v, w0)
        return w_par * scale(0.0) + self.pointwise(scale(-(nv**2))) * w_perp
