"""Kendall's planar shape space: landmark configurations modulo translation, scale, rotation."""

from __future__ import annotations

import math

import numpy as np

from .._validation import check_int
from ._csv_format import _mean_rows
from ._functions import log_sinc, sinc, stable_norm
from .base import CutLocusError, Manifold, RowProblems, _failed, blockwise

#: Shapes whose Hermitian product has modulus below this (distance within about this much of
#: pi/2) are treated as orthogonal: the cut locus, where log and transport are undefined.
CUT_TOL = 1e-8


def _to_complex(x):
    x = np.asarray(x, dtype=float)
    return x[..., 0] + 1j * x[..., 1]


def _to_real(z):
    return np.stack([z.real, z.imag], axis=-1)


def _herm(a, b):
    """Hermitian product sum_j conj(a_j) b_j over landmarks."""
    return np.sum(np.conj(a) * b, axis=-1)


#: Rows of a block of :meth:`KendallShape.csv_read`.
_CSV_BLOCK = 4096


def _csv_belong(points, atol) -> bool:
    """Whether every preshape (n, k, 2) surely :meth:`KendallShape.belongs` with ``atol``
    (False: maybe not, and the reader asks ``belongs``). Centred: the same numbers as there
    (:func:`_mean_rows` is ``mean`` bit for bit). Unit size: the sums of squares in another
    order, within a few 1e-16 of those of ``belongs``, must be within ``atol`` of 1 by a
    margin of 1e-13 (1 + atol) that this rounding cannot cross."""
    mean = _mean_rows(points)[:, 0, :]
    if not (np.maximum(np.abs(mean[:, 0]), np.abs(mean[:, 1])) <= atol).all():
        return False
    flat = points.reshape(points.shape[0], -1)
    norm = np.sqrt(np.einsum("ij,ij->i", flat, flat))
    return bool((np.abs(norm - 1.0) <= atol - 1e-13 * (1 + atol)).all())


def _csv_norm(v):
    """:func:`~dpcore.manifolds._functions.stable_norm` of the rows of ``v`` (n, c), bit for
    bit, with one temporary array instead of three."""
    buf = np.abs(v)
    big = buf[:, 0].copy()  # the largest of each row, column by column (exact in any order)
    for j in range(1, buf.shape[1]):
        np.maximum(big, buf[:, j], out=big)
    safe = np.where(big > 0, big, 1.0)
    np.divide(v, safe[..., None], out=buf)
    np.square(buf, out=buf)
    return big * np.sqrt(np.sum(buf, axis=-1))


class KendallShape(Manifold):
    r"""Kendall's shape space of ``k`` planar landmarks, the complex projective space CP^{k-2}.

    A point is represented by a *preshape*: a real array of shape ``(k, 2)`` whose landmarks
    have centroid zero and unit Frobenius norm. Two preshapes that differ by a rotation are the
    same shape; every operation accepts any representative and answers for the shape. Tangent
    vectors at a preshape ``x`` are *horizontal*: centred and orthogonal to ``x`` and to its
    infinitesimal rotation ``i x`` (identifying the plane with C). Geodesics are horizontal great
    circles of the preshape sphere, the distance is ``arccos |<x, y>_C|``, sectional curvature
    lies in [1, 4] and the injectivity radius is pi/2 (Fubini-Study metric).

    Parameters
    ----------
    k_landmarks : int
        Number of landmarks (at least 3).
    """

    curvature_bounds = (1.0, 4.0)
    injectivity_radius = np.pi / 2
    isotropic_volume = True
    is_compact = True
    diameter = np.pi / 2
    is_homogeneous = True

    def __init__(self, k_landmarks: int):
        self.k_landmarks = check_int(k_landmarks, "k_landmarks", minimum=3)
        self.dim = 2 * self.k_landmarks - 4
        self.point_shape = (self.k_landmarks, 2)

    def _repr_args(self):
        return str(self.k_landmarks)

    @property
    def origin(self):
        r"""A fixed asymmetric template shape, shape ``(k_landmarks, 2)`` (a preshape).

        Landmark ``j`` sits at ``(cos t_j, 0.6 sin t_j + 0.15 sin 3t_j + 0.1 cos 2t_j)`` with
        ``t_j = 2 pi j / k + 0.3``: an ellipse with small harmonic bumps, so the shape has no
        symmetry; centred and scaled to unit Frobenius norm.
        """
        t = 2 * np.pi * np.arange(self.k_landmarks) / self.k_landmarks + 0.3
        landmarks = np.stack([np.cos(t), 0.6 * np.sin(t) + 0.15 * np.sin(3 * t)
                              + 0.1 * np.cos(2 * t)], axis=-1)
        return self.from_landmarks(landmarks)

    # ------------------------------------------------------------ landmarks
    def from_landmarks(self, landmarks, atol=1e-12):
        """Preshapes of raw landmark configurations: centre and scale to norm 1.

        Parameters
        ----------
        landmarks : array, shape ``(..., k_landmarks, 2)``
        atol : float
            Configurations whose centred size is below ``atol`` times their scale are
            degenerate.

        Returns
        -------
        ndarray, shape ``(..., k_landmarks, 2)``

        Raises
        ------
        ValueError
            If the array has the wrong shape or a configuration is degenerate (all landmarks
            at one place), which has no shape.
        """
        arr = np.asarray(landmarks, dtype=float)
        if arr.shape[-2:] != self.point_shape:
            raise ValueError(
                f"`landmarks` must have shape [..., {self.k_landmarks}, 2], got {arr.shape}."
            )
        centred = arr - arr.mean(axis=-2, keepdims=True)
        size = np.sqrt(np.sum(centred**2, axis=(-2, -1), keepdims=True))
        scale = np.sqrt(np.sum(arr**2, axis=(-2, -1), keepdims=True))
        if np.any(size <= atol * np.maximum(scale, 1.0)):
            raise ValueError("a landmark configuration is degenerate (all landmarks coincide).")
        return centred / size

    def to_landmarks(self, points, reference=None):
        """Landmark coordinates ``[..., k, 2]`` of preshapes, optionally rotated to ``reference``.

        Rotating to a reference preshape (optimal rotation, Procrustes) makes plots of several
        shapes comparable.

        Parameters
        ----------
        points : array, shape ``(..., k_landmarks, 2)``
            Preshapes.
        reference : array, shape ``(..., k_landmarks, 2)``, optional
            Preshapes to rotate ``points`` to.

        Returns
        -------
        ndarray, shape ``(..., k_landmarks, 2)``
            A copy.
        """
        points = np.asarray(points, dtype=float)
        if reference is not None:
            points = self.align(reference, points)
        return points.copy()

    def align(self, x, y):
        """Rotate preshape ``y`` so that ``<x, y>_C`` is real and non-negative.

        Parameters
        ----------
        x, y : array, shape ``(..., k_landmarks, 2)``

        Returns
        -------
        ndarray, shape ``(..., k_landmarks, 2)``
            The representative of ``y``'s shape closest to ``x``.
        """
        zx, zy = _to_complex(x), _to_complex(y)
        c = _herm(zx, zy)
        mod = np.abs(c)
        phase = np.where(mod > 0, c / np.where(mod > 0, mod, 1.0), 1.0)
        return _to_real(zy * np.conj(phase)[..., None])

    # ------------------------------------------------------------ CSV format
    def csv_columns(self):
        """Raw landmark coordinates ``lx1, ly1, ..., lxk, lyk``.

        Returns
        -------
        list of str
            ``2 k`` names.
        """
        return [f"l{c}{j}" for j in range(1, self.k_landmarks + 1) for c in ("x", "y")]

    def to_csv_rows(self, points):
        """The landmark coordinates of preshapes (:meth:`to_landmarks`), flattened.

        Parameters
        ----------
        points : array, shape ``(..., k_landmarks, 2)``

        Returns
        -------
        ndarray, shape ``(..., 2 k_landmarks)``
        """
        landmarks = self.to_landmarks(points)
        return landmarks.reshape(landmarks.shape[:-2] + (-1,))

    def _csv_landmarks(self, values):
        """``(centred, size, degenerate)`` of raw landmark rows."""
        values = self._csv_values(values)
        land = values.reshape(values.shape[:-1] + self.point_shape)
        # Centred twice: landmarks far from the origin relative to their spread leave a
        # rounding-size mean after one pass, which scaling to unit size would magnify.
        centred = land - land.mean(axis=-2, keepdims=True)
        centred -= centred.mean(axis=-2, keepdims=True)
        size = stable_norm(centred.reshape(values.shape))
        scale = stable_norm(values)
        return centred, size, size <= 1e-12 * np.maximum(scale, 1.0)

    def from_csv_rows(self, values, *, renormalize=False):
        """Preshapes of raw landmark rows, as :meth:`from_landmarks` computes them (centre,
        scale to norm 1); degenerate rows (all landmarks at one place) give zeros.

        Parameters
        ----------
        values : array, shape ``(..., 2 k_landmarks)``
        renormalize : bool
            Ignored (landmarks are always centred and scaled).

        Returns
        -------
        ndarray, shape ``(..., k_landmarks, 2)``
        """
        return self._csv_preshapes(*self._csv_landmarks(values))

    @staticmethod
    def _csv_preshapes(centred, size, degenerate):
        out = np.zeros(centred.shape)
        good = ~degenerate
        out[good] = centred[good] / size[good, None, None]
        return out

    def csv_read(self, values, ok, *, atol=1e-6, renormalize=False):
        """:meth:`from_csv_rows` and :meth:`csv_problems` from one centring pass
        (:meth:`~dpcore.manifolds.Manifold.csv_read`).

        The same numbers as :meth:`_csv_landmarks` and :meth:`_csv_preshapes`, bit for bit,
        with less work: a block of rows at a time (which stays in the processor's cache),
        and the size of the raw landmarks (which only decides whether a configuration is
        degenerate) only for the rows whose centred size is not clear of the threshold for
        any raw size the file's largest value allows. ``on_manifold`` is True when every
        point surely :meth:`belongs` (:func:`_csv_belong`), so that the reader need not ask.
        """
        values = self._csv_values(values)
        ok = np.asarray(ok, dtype=bool)
        n = values.shape[0]
        points = np.empty((n, *self.point_shape))
        degenerate = np.zeros(n, dtype=bool)
        belong = True
        for at in range(0, n, _CSV_BLOCK):
            rows = slice(at, at + _CSV_BLOCK)
            out = points[rows]
            degenerate[rows] = self._csv_block(values[rows], out)
            belong = belong and _csv_belong(out, atol)
        # (With a problem the reader checks no point.)
        belong = belong and bool(ok.all() and not degenerate.any())
        return (points, self._degenerate_problems(degenerate[ok]) if ok.any() else [],
                belong)

    def _csv_block(self, values, out):
        """The preshapes of a block of raw rows written to ``out`` (m, k, 2); returns the
        degenerate rows (see :meth:`csv_read`)."""
        k = self.k_landmarks
        # stable_norm(row) <= sqrt(c) max|value| (1 + 1e-15) <= 2 sqrt(c) top: a centred size
        # above 1e-12 max(2 sqrt(c) top, 1) is not degenerate, whatever the row's raw size.
        top = max(float(values.max()), -float(values.min()))
        clear_of = 1e-12 * max(2.0 * math.sqrt(values.shape[1]) * top, 1.0)
        # Centred twice, as there; the means repeated along the rows (the same differences,
        # numpy's broadcasting over a last axis of 2 is slow).
        flat = out.reshape(values.shape)
        np.subtract(values, np.tile(_mean_rows(values.reshape(-1, k, 2))[:, 0, :], k),
                    out=flat)
        flat -= np.tile(_mean_rows(out)[:, 0, :], k)
        size = _csv_norm(flat)
        degenerate = np.zeros(size.shape, dtype=bool)
        unclear = np.flatnonzero(~(size > clear_of))
        if unclear.size:
            degenerate[unclear] = size[unclear] <= 1e-12 * np.maximum(
                stable_norm(values[unclear]), 1.0)
            size[degenerate] = 1.0
        np.divide(out, size[:, None, None], out=out)
        if unclear.size:
            out[degenerate] = 0.0
        return degenerate

    def csv_problems(self, values, *, atol=1e-6, renormalize=False):
        """Degenerate configurations: all landmarks at one place, so no shape.

        Parameters
        ----------
        values : array, shape ``(n, 2 k_landmarks)``
        atol, renormalize
            Unused.

        Returns
        -------
        list of RowProblems
        """
        _, _, degenerate = self._csv_landmarks(values)
        return self._degenerate_problems(degenerate)

    def _degenerate_problems(self, degenerate):
        span = self._csv_span()
        return _failed([RowProblems(degenerate, None, lambda i: (
            f"all {self.k_landmarks} landmarks (columns {span}) are at the same place, so the "
            "configuration has no shape."))])

    # ------------------------------------------------------------ geometry
    def belongs(self, x, atol=1e-8):
        """Whether ``x`` is a preshape: centred and of unit Frobenius norm (up to ``atol``).

        Parameters
        ----------
        x : array, shape ``(..., k_landmarks, 2)``
        atol : float

        Returns
        -------
        ndarray of bool, shape ``(...)``
        """
        x = np.asarray(x, dtype=float)
        centred = np.max(np.abs(x.mean(axis=-2)), axis=-1) <= atol
        unit = np.abs(np.sqrt(np.sum(x**2, axis=(-2, -1))) - 1.0) <= atol
        return centred & unit

    def proj_tangent(self, x, v):
        """Horizontal projection: centre ``v`` and remove its components along ``x`` and
        ``i x``.

        Parameters
        ----------
        x, v : array, shape ``(..., k_landmarks, 2)``

        Returns
        -------
        ndarray, shape ``(..., k_landmarks, 2)``
        """
        zx = _to_complex(x)
        zv = _to_complex(v)
        zv = zv - zv.mean(axis=-1, keepdims=True)
        # Removing the components along x and i x at once: v - <x, v>_C x.
        return _to_real(zv - _herm(zx, zv)[..., None] * zx)

    @blockwise
    def exp(self, x, v):
        """``cos|v| x + sin|v| v / |v|`` on the preshape sphere (``v`` horizontal).

        Parameters
        ----------
        x, v : array, shape ``(..., k_landmarks, 2)``

        Returns
        -------
        ndarray, shape ``(..., k_landmarks, 2)``
            A preshape of the shape reached.
        """
        x = np.asarray(x, dtype=float)
        v = np.asarray(v, dtype=float)
        nv = np.sqrt(np.sum(v**2, axis=(-2, -1)))[..., None, None]
        return np.cos(nv) * x + sinc(nv) * v

    def _aligned_parts(self, x, y):
        """``(phase, |c|, u, s)``: ``y = phase * y_aligned`` and ``u = y_aligned - |c| x``."""
        zx, zy = _to_complex(x), _to_complex(y)
        c = _herm(zx, zy)
        mod = np.abs(c)
        phase = np.where(mod > 0, c / np.where(mod > 0, mod, 1.0), 1.0)
        zy_al = zy * np.conj(phase)[..., None]
        u = zy_al - mod[..., None] * zx
        s = np.sqrt(np.sum(np.abs(u) ** 2, axis=-1))
        return phase, mod, u, s

    @staticmethod
    def _scalar_parts(x, y):
        """Single-point ``(mod, u, s)`` in real arithmetic (numpy overhead dominates there)."""
        a = float(np.sum(x * y))
        b = float(x[:, 0] @ y[:, 1] - x[:, 1] @ y[:, 0])
        mod = math.hypot(a, b)
        if mod > 0:
            ca, cb = a / mod, b / mod
            y = np.stack([ca * y[:, 0] + cb * y[:, 1], ca * y[:, 1] - cb * y[:, 0]], axis=-1)
        u = y - mod * x
        return mod, u, math.sqrt(float(np.sum(u * u)))

    @blockwise
    def log(self, x, y):
        """The sphere's log toward the representative of ``y`` aligned with ``x``.

        Parameters
        ----------
        x, y : array, shape ``(..., k_landmarks, 2)``

        Returns
        -------
        ndarray, shape ``(..., k_landmarks, 2)``
            Horizontal tangent vectors at ``x``.

        Raises
        ------
        CutLocusError
            For orthogonal shapes (distance pi/2).
        """
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        if x.ndim == 2 and y.ndim == 2:
            mod, u, s = self._scalar_parts(x, y)
            if mod < CUT_TOL:
                raise CutLocusError("log is undefined between orthogonal shapes (distance pi/2).")
            return (math.atan2(s, mod) / s if s > 0 else 1.0) * u
        _, mod, u, s = self._aligned_parts(x, y)
        if np.any(mod < CUT_TOL):
            raise CutLocusError("log is undefined between orthogonal shapes (distance pi/2).")
        theta = np.arctan2(s, mod)
        factor = np.where(s > 0, theta / np.where(s > 0, s, 1.0), 1.0)
        return _to_real(factor[..., None] * u)

    @blockwise
    def dist(self, x, y):
        """``arccos |<x, y>_C|`` (computed with ``atan2``), the same for every representative.

        Parameters
        ----------
        x, y : array, shape ``(..., k_landmarks, 2)``

        Returns
        -------
        ndarray, shape ``(...)``
        """
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        if x.ndim == 2 and y.ndim == 2:
            mod, _, s = self._scalar_parts(x, y)
            return np.float64(math.atan2(s, mod))
        _, mod, _, s = self._aligned_parts(x, y)
        return np.arctan2(s, mod)

    @blockwise
    def transport(self, x, y, v):
        """Closed form along the horizontal geodesic; raises :class:`CutLocusError` for
        orthogonal shapes.

        Parameters
        ----------
        x, y : array, shape ``(..., k_landmarks, 2)``
        v : array, shape ``(..., k_landmarks, 2)``
            Horizontal tangent vectors at ``x``.

        Returns
        -------
        ndarray, shape ``(..., k_landmarks, 2)``
            Horizontal at the representative ``y`` passed in.
        """
        # Along the horizontal geodesic x -> y_aligned with unit direction u and length theta:
        # u -> gamma'(theta), i u -> i gamma'(theta), the rest is kept; then rotate by the phase
        # taking y_aligned to the representative y that was passed in.
        phase, mod, u, s = self._aligned_parts(x, y)
        if np.any(mod < CUT_TOL):
            raise CutLocusError("transport is undefined between orthogonal shapes.")
        zx = _to_complex(x)
        zv = _to_complex(v)
        safe = np.where(s > 0, s, 1.0)
        unit = u / safe[..., None]
        theta = np.arctan2(s, mod)[..., None]
        a = np.real(_herm(unit, zv))[..., None]
        b = np.real(_herm(1j * unit, zv))[..., None]
        rest = zv - a * unit - b * 1j * unit
        end_dir = -np.sin(theta) * zx + np.cos(theta) * unit
        out = a * end_dir + b * 1j * end_dir + rest
        return _to_real(out * phase[..., None])

    def random_point(self, size=None, rng=None):
        """Preshapes of i.i.d. standard Gaussian landmarks (the uniform measure on CP^{k-2}).

        Parameters
        ----------
        size : int, tuple of int or None
        rng : None, int or numpy.random.Generator

        Returns
        -------
        ndarray, shape ``(*size, k_landmarks, 2)``
        """
        rng = np.random.default_rng(rng)
        size = () if size is None else tuple(np.atleast_1d(size).tolist())
        return self.from_landmarks(rng.standard_normal(size + self.point_shape))

    # ------------------------------------------------------------ volume
    def log_volume_density(self, x, v, *, rho=None):
        """``(2m − 2) log |sin rho / rho| + log |sin 2rho / (2 rho)|``, ``rho = |v|``,
        ``m = k − 2`` (curvature 4 along ``i v``, 1 on the other ``2m − 2`` directions).

        Parameters
        ----------
        x, v : array, shape ``(..., k_landmarks, 2)``
        rho : array, shape ``(...)``, optional
            ``|v|``, used as given.

        Returns
        -------
        ndarray, shape ``(...)``
        """
        rho = self.norm(x, v) if rho is None else rho
        return (self.dim - 2) * log_sinc(rho) + log_sinc(2 * rho)

    def log_volume_density_max(self, rho_lo, rho_hi):
        """The density at ``rho_lo``: both factors decrease on [0, pi/2].

        Parameters
        ----------
        rho_lo, rho_hi : array, shape ``(...)``
            Radii in [0, pi/2] (``rho_hi`` is not needed).

        Returns
        -------
        ndarray, shape of ``rho_lo``
        """
        return (self.dim - 2) * log_sinc(rho_lo) + log_sinc(2 * np.asarray(rho_lo))

    def radial_log_volume(self, r):
        """``(2m − 2) log sin r + log sin 2r`` on [0, pi/2], ``m = k − 2``.

        Parameters
        ----------
        r : array, shape ``(...)``

        Returns
        -------
        ndarray, shape ``(...)``
        """
        r = np.asarray(r, dtype=float)
        a = self.dim - 2
        with np.errstate(divide="ignore", invalid="ignore"):
            base = np.log(np.sin(2.0 * r))
            return base + (a * np.log(np.sin(r)) if a else 0.0)

    def radial_dlog_volume(self, r):
        """``(2m − 2) cot r + 2 cot 2r``.

        Parameters
        ----------
        r : array, shape ``(...)``

        Returns
        -------
        ndarray, shape ``(...)``
        """
        r = np.asarray(r, dtype=float)
        a = self.dim - 2
        with np.errstate(divide="ignore", invalid="ignore"):
            base = 2.0 * np.cos(2.0 * r) / np.sin(2.0 * r)
            return base + (a * np.cos(r) / np.sin(r) if a else 0.0)

    @property
    def volume_growth_rate(self):
        """0.0 (compact)."""
        return 0.0

    def _transport_back(self, p, v, w):
        # Along the horizontal great circle t -> Exp(p, t v): gamma' maps back to u, i gamma' to
        # i u, and the rest is kept (valid for any |v|, also past the cut locus).
        zp, zv, zw = _to_complex(p), _to_complex(v), _to_complex(w)
        nv = np.sqrt(np.sum(np.abs(zv) ** 2, axis=-1))[..., None]
        unit = zv / np.where(nv > 0, nv, 1.0)
        end_dir = -np.sin(nv) * zp + np.cos(nv) * unit
        a = np.real(_herm(end_dir, zw))[..., None]
        b = np.real(_herm(1j * end_dir, zw))[..., None]
        rest = zw - a * end_dir - b * 1j * end_dir
        return _to_real(a * unit + b * 1j * unit + rest)

    def _scale_by_curvature(self, p, v, w0, scale):
        zv, zw = _to_complex(v), _to_complex(w0)
        nv = np.sqrt(np.sum(np.abs(zv) ** 2, axis=-1))
        unit = zv / np.where(nv > 0, nv, 1.0)[..., None]
        a = np.real(_herm(unit, zw))[..., None]
        b = np.real(_herm(1j * unit, zw))[..., None]
        rest = zw - a * unit - b * 1j * unit
        # Curvature-operator eigenvalues: 0 along v, 4|v|^2 along i v, |v|^2 on the rest.
        out = (
            scale(0.0) * a * unit
            + scale(4.0 * nv**2)[..., None] * b * 1j * unit
            + scale(nv**2)[..., None] * rest
        )
        return _to_real(out)
