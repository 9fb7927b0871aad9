r"""The public output lattice of the exact joint-KNG sampler on :math:`TS^2`, and a k-d
partition of it into dyadic boxes (:mod:`dpcore.sampling.bundle_sampler`).

Coordinates :math:`z = (u, w) \in \mathbb{R}^4` of
:class:`~dpcore.sampling.sphere_enclosure.SphereBundleChart` at a public centre. The lattice
box is :math:`[-R, R]^2 \times [-V, V]^2`; cell :math:`K \in \{0, \dots, 2^{32} - 1\}^4` is
:math:`[o + \gamma K, o + \gamma(K + 1))`, :math:`o = -(R, R, V, V)`,
:math:`\gamma = 2(R, R, V, V)/2^{32}`, and it is released as the fixed float point
:math:`z_K = o + \gamma(K + \tfrac12)` mapped to :math:`(p, v)`. The public support
:math:`D_L` is the set of cells with :math:`|u_K| \le R - 2\gamma_u` and
:math:`|w_K| \le V - 2\gamma_w` (so each such cell lies in :math:`|u| \le R`,
:math:`|w| \le V`). Everything here is a function of public inputs only.
"""

from __future__ import annotations

import math

import numpy as np

from .sphere_enclosure import SphereBundleChart

__all__ = ["LATTICE_LEVELS", "MAX_RADIUS", "BundleLattice", "LeafIndex"]

#: Halvings of each side of the lattice box down to the lattice spacing.
LATTICE_LEVELS = 32
#: Largest footpoint radius (the padded lattice box must stay inside |u| < pi).
MAX_RADIUS = 2.2


class BundleLattice:
    r"""Public lattice and support (module docstring).

    Parameters
    ----------
    center : array (3,)
        Public centre :math:`m_0` of the footpoint ball.
    radius : float
        Footpoint ball radius :math:`R \le 2.2`.
    max_speed : float
        Shooting-vector bound :math:`V \le \pi`.
    e1 : array (3,), optional
        Tangent basis vector at the centre (default: the chart's).
    """

    def __init__(self, center, radius, max_speed, e1=None):
        self.chart = SphereBundleChart(center, e1)
        self.radius, self.max_speed = float(radius), float(max_speed)
        if not 0 < self.radius <= MAX_RADIUS:
            raise ValueError(f"`radius` must be in (0, {MAX_RADIUS}], got {radius!r}.")
        if not 0 < self.max_speed <= math.pi:
            raise ValueError(f"`max_speed` must be in (0, pi], got {max_speed!r}.")
        self.levels = LATTICE_LEVELS
        self.half = np.array([self.radius] * 2 + [self.max_speed] * 2)
        self.origin = -self.half
        self.spacing = 2.0 * self.half / 2.0**self.levels

    def coordinates(self, index):
        """Lattice points :math:`z_K = o + \\gamma (K + 1/2)` of indices ``(m, 4)``."""
        return self.origin + self.spacing * (np.asarray(index, dtype=np.int64) + 0.5)

    def index_of(self, z):
        """Cell indices of coordinates ``(m, 4)`` (clipped to just outside the box)."""
        with np.errstate(invalid="ignore", over="ignore"):
            k = np.floor((np.asarray(z, dtype=float) - self.origin) / self.spacing)
        k = np.nan_to_num(k, nan=-1.0, posinf=2.0**self.levels, neginf=-1.0)
        return np.clip(k, -1, 2**self.levels).astype(np.int64)

    def in_support(self, index):
        """Whether each index's cell belongs to the public support :math:`D_L`."""
        index = np.asarray(index, dtype=np.int64)
        z = self.coordinates(index)
        ok = np.all((index >= 0) & (index < 2**self.levels), axis=-1)
        ok &= np.hypot(z[:, 0], z[:, 1]) <= self.radius - 2 * self.spacing[0]
        ok &= np.hypot(z[:, 2], z[:, 3]) <= self.max_speed - 2 * self.spacing[2]
        return ok

    def point(self, index):
        """The released ``(p, v)`` of indices ``(m, 4)``, each ``(m, 3)`` (public function)."""
        z = self.coordinates(index)
        return self.chart.to_bundle(z[:, :2], z[:, 2:])

    def box(self, lo_index, level, pad=True):
        """Coordinates ``(lo, hi)`` of dyadic boxes (integer corner, per-axis level), padded by
        one spacing (which covers the rounding of every float proposed inside)."""
        size = np.left_shift(np.int64(1), self.levels - np.asarray(level, dtype=np.int64))
        lo = self.origin + self.spacing * lo_index
        hi = self.origin + self.spacing * (lo_index + size)
        if pad:
            lo, hi = lo - self.spacing, hi + self.spacing
        return lo, hi

    def misses(self, lo, hi):
        """Boxes that surely miss :math:`|u| \\le R` or :math:`|w| \\le V`."""
        gap = np.maximum(np.maximum(lo, -hi), 0.0)
        return ((np.hypot(gap[:, 0], gap[:, 1]) > self.radius)
                | (np.hypot(gap[:, 2], gap[:, 3]) > self.max_speed))

    @property
    def record(self):
        """Public description of the lattice for a release record."""
        return {"lattice_spacing": self.spacing.tolist(), "lattice_origin": self.origin.tolist(),
                "lattice_levels": self.levels,
                "lattice_coordinates": "normal coordinates of the footpoint at the public "
                                       "centre, shooting vector in the radially transported "
                                       "frame"}


class LeafIndex:
    """Which leaf of a k-d partition into dyadic boxes holds a lattice index.

    Leaves with the same per-axis levels form a group; within a group a leaf is identified by
    its corner shifted right by ``levels - level`` on each axis, packed into one 64-bit
    integer (mixed radix; at most 64 levels in total) and looked up by binary search.

    Parameters
    ----------
    lo_index, level : int arrays (m, 4)
        Corners and per-axis levels of the leaves.
    levels : int
        Lattice depth.
    """

    def __init__(self, lo_index, level, levels):
        self.levels = int(levels)
        lo_index = np.asarray(lo_index, dtype=np.int64)
        level = np.asarray(level, dtype=np.int64)
        self.groups = []
        uniq, inverse = np.unique(level, axis=0, return_inverse=True)
        if np.any(uniq.sum(axis=1) > 64):
            raise ValueError("Leaves deeper than 64 levels in total cannot be indexed.")
        for g, lev in enumerate(uniq):
            members = np.flatnonzero(inverse.reshape(-1) == g)
            keys = self._pack(lo_index[members], lev)
            order = np.argsort(keys)
            self.groups.append((lev, keys[order], members[order]))

    def _pack(self, index, lev):
        shift = self.levels - lev
        key = np.zeros(index.shape[0], dtype=np.uint64)
        for j in range(index.shape[1]):
            key = (key << np.uint64(lev[j])) | (index[:, j] >> shift[j]).astype(np.uint64)
        return key

    def lookup(self, index):
        """Leaf of each lattice index ``(m, 4)`` (-1 where none)."""
        index = np.asarray(index, dtype=np.int64)
        out = np.full(index.shape[0], -1, dtype=np.int64)
        valid = np.all((index >= 0) & (index < 2**self.levels), axis=-1)
        for lev, keys, members in self.groups:
            todo = np.flatnonzero(valid & (out < 0))
            if todo.size == 0:
                break
            q = self._pack(index[todo], lev)
            pos = np.minimum(np.searchsorted(keys, q), keys.size - 1)
            hit = keys[pos] == q
            out[todo[hit]] = members[pos[hit]]
        return out
