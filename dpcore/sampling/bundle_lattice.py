r"""The public output lattices of the exact joint-KNG samplers and a k-d partition of them into
dyadic boxes (:mod:`dpcore.sampling.bundle_sampler`, :mod:`dpcore.sampling.bundle_flat`,
:mod:`dpcore.sampling.sphere_native`).

:class:`DyadicGrid` holds what every lattice shares: cells :math:`[o + \gamma K, o + \gamma(K +
1))`, :math:`K \in \{0, \dots, 2^{32} - 1\}^D`, each released as the fixed float point
:math:`z_K = o + \gamma(K + \tfrac12)`, and the dyadic boxes of cells the envelopes are made of.
:class:`ProductBallLattice` adds coordinates :math:`z = (u, w) \in \mathbb{R}^{2k}` (:math:`k`
footpoint and :math:`k` shooting-vector coordinates), the lattice box :math:`[-R, R]^k \times
[-V, V]^k`, :math:`o = -(R, \dots, V, \dots)`, :math:`\gamma = 2(R, \dots, V, \dots)/2^{32}`,
and the public support :math:`D_L`: the cells with :math:`|u_K| \le R - 2\gamma_u` and
:math:`|w_K| \le V - 2\gamma_w` (so each such cell lies in :math:`|u| \le R`, :math:`|w| \le
V`). :class:`FlatLattice` (:math:`\mathbb{R}^d`, :math:`k = d`) adds the public centre, so that
:math:`p = c + u`, :math:`v = w`. (The :math:`S^2` lattice in the normal coordinates of a public
centre went with its samplers, replaced by the native sampler in session 35; the native lattice
of :math:`S^2` is :class:`~dpcore.sampling.sphere_native.NativeLattice`.) Everything here is a
function of public inputs only.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["LATTICE_LEVELS", "DyadicGrid", "FlatLattice", "LeafIndex", "ProductBallLattice"]

#: Halvings of each side of the lattice box down to the lattice spacing.
LATTICE_LEVELS = 32


def _half_norm(z):
    """Euclidean norm of the last axis (``hypot`` for two coordinates, as the lattices have
    always computed it, so their supports are unchanged)."""
    if z.shape[-1] == 2:
        return np.hypot(z[..., 0], z[..., 1])
    return np.sqrt(np.sum(z * z, axis=-1))


class DyadicGrid:
    r"""What every public output lattice here shares: cells :math:`[o + \gamma K, o +
    \gamma(K + 1))` of a box split :attr:`levels` times per axis (subclasses set ``origin``,
    ``spacing`` and ``levels``), their points, and the dyadic boxes of cells the envelopes
    are made of."""

    def coordinates(self, index):
        """Lattice points :math:`z_K = o + \\gamma (K + 1/2)` of indices ``(m, dim)``."""
        return self.origin + self.spacing * (np.asarray(index, dtype=np.int64) + 0.5)

    def index_of(self, z):
        """Cell indices of coordinates ``(m, dim)`` (clipped to just outside the box)."""
        with np.errstate(invalid="ignore", over="ignore"):
            k = np.floor((np.asarray(z, dtype=float) - self.origin) / self.spacing)
        k = np.nan_to_num(k, nan=-1.0, posinf=2.0**self.levels, neginf=-1.0)
        return np.clip(k, -1, 2**self.levels).astype(np.int64)

    def box(self, lo_index, level, pad=True):
        """Coordinates ``(lo, hi)`` of dyadic boxes (integer corner, per-axis level), padded by
        one spacing (which covers the rounding of every float proposed inside)."""
        size = np.left_shift(np.int64(1), self.levels - np.asarray(level, dtype=np.int64))
        lo = self.origin + self.spacing * lo_index
        hi = self.origin + self.spacing * (lo_index + size)
        if pad:
            lo, hi = lo - self.spacing, hi + self.spacing
        return lo, hi


class ProductBallLattice(DyadicGrid):
    r"""Public lattice of :math:`[-R, R]^k \times [-V, V]^k` and its support (module
    docstring): cells with :math:`|u_K| \le R - 2\gamma_u`, :math:`|w_K| \le V - 2\gamma_w`.

    Parameters
    ----------
    radius : float
        Footpoint radius :math:`R > 0`.
    max_speed : float
        Shooting-vector bound :math:`V > 0`.
    foot_dim : int
        :math:`k`, the coordinates of each half.
    """

    def __init__(self, radius, max_speed, foot_dim):
        self.radius, self.max_speed = float(radius), float(max_speed)
        if not (self.radius > 0 and self.max_speed > 0 and math.isfinite(self.radius)
                and math.isfinite(self.max_speed)):
            raise ValueError("`radius` and `max_speed` must be positive and finite.")
        self.foot_dim = int(foot_dim)
        self.dim = 2 * self.foot_dim
        self.levels = LATTICE_LEVELS
        self.half = np.array([self.radius] * self.foot_dim + [self.max_speed] * self.foot_dim)
        self.origin = -self.half
        self.spacing = 2.0 * self.half / 2.0**self.levels

    def in_support(self, index):
        """Whether each index's cell belongs to the public support :math:`D_L`."""
        index = np.asarray(index, dtype=np.int64)
        z = self.coordinates(index)
        k = self.foot_dim
        ok = np.all((index >= 0) & (index < 2**self.levels), axis=-1)
        ok &= _half_norm(z[:, :k]) <= self.radius - 2 * self.spacing[0]
        ok &= _half_norm(z[:, k:]) <= self.max_speed - 2 * self.spacing[k]
        return ok

    def misses(self, lo, hi):
        """Boxes that surely miss :math:`|u| \\le R` or :math:`|w| \\le V`."""
        gap = np.maximum(np.maximum(lo, -hi), 0.0)
        k = self.foot_dim
        return (_half_norm(gap[:, :k]) > self.radius) | (_half_norm(gap[:, k:]) > self.max_speed)


class FlatLattice(ProductBallLattice):
    r"""Public lattice and support on :math:`T\mathbb{R}^d`: :math:`p = c + u`, :math:`v = w`
    with the public centre :math:`c` (module docstring).

    Parameters
    ----------
    center : array (d,)
        Public centre of the footpoint ball.
    radius : float
        Footpoint ball radius.
    max_speed : float
        Shooting-vector bound.
    """

    def __init__(self, center, radius, max_speed):
        self.center = np.array(center, dtype=float).reshape(-1)
        if not np.all(np.isfinite(self.center)):
            raise ValueError("`center` must be finite.")
        super().__init__(radius, max_speed, self.center.size)

    def point(self, index):
        """The released ``(p, v)`` of indices ``(m, 2d)``, each ``(m, d)`` (a public function:
        the same floats for every data set)."""
        z = self.coordinates(index)
        return self.center + z[:, :self.foot_dim], z[:, self.foot_dim:]

    @property
    def record(self):
        """Public description of the lattice for a release record."""
        return {"lattice_spacing": self.spacing.tolist(), "lattice_origin": self.origin.tolist(),
                "lattice_levels": self.levels,
                "lattice_coordinates": "footpoint minus the public centre, shooting vector"}


class LeafIndex:
    """Which leaf of a k-d partition into dyadic boxes holds a lattice index.

    Leaves with the same per-axis levels form a group; within a group a leaf is identified by
    its corner shifted right by ``levels - level`` on each axis, packed into 64-bit words
    (mixed radix, consecutive axes filling a word up to 64 levels; one word where the levels
    sum to at most 64, else a structured key compared word by word) and looked up by binary
    search.

    Parameters
    ----------
    lo_index, level : int arrays (m, D)
        Corners and per-axis levels of the leaves.
    levels : int
        Lattice depth.
    """

    def __init__(self, lo_index, level, levels):
        self.levels = int(levels)
        lo_index = np.asarray(lo_index, dtype=np.int64)
        level = np.asarray(level, dtype=np.int64)
        self.lo, self.size = lo_index, np.left_shift(np.int64(1), self.levels - level)
        self.groups = []
        if np.any(level > self.levels) or np.any(level < 0):
            raise ValueError("Leaves deeper than the lattice cannot be indexed.")
        # the rows of levels as mixed-radix numbers, first axis most significant: np.unique on
        # them orders the distinct rows as np.unique(level, axis=0) does, much faster
        radix = self.levels + 1
        if radix ** level.shape[1] < 2**62:
            code = np.zeros(level.shape[0], dtype=np.int64)
            for j in range(level.shape[1]):
                code = code * radix + level[:, j]
            _, first, inverse = np.unique(code, return_index=True, return_inverse=True)
            uniq = level[first]
        else:
            uniq, inverse = np.unique(level, axis=0, return_inverse=True)
        for g, lev in enumerate(uniq):
            members = np.flatnonzero(inverse.reshape(-1) == g)
            words = self._words(lev)
            keys = self._pack(lo_index[members], lev, words)
            order = np.argsort(keys, kind="stable")
            self.groups.append((lev, words, keys[order], members[order]))

    @staticmethod
    def _words(lev):
        """Axes of each 64-bit word: consecutive axes while their levels fit in 64 bits."""
        words, used = [[]], 0
        for j, bits in enumerate(int(b) for b in lev):
            if used + bits > 64:
                words.append([])
                used = 0
            words[-1].append(j)
            used += bits
        return words

    def _pack(self, index, lev, words):
        shift = self.levels - lev
        parts = []
        for axes in words:
            key = np.zeros(index.shape[0], dtype=np.uint64)
            for j in axes:
                key = (key << np.uint64(lev[j])) | (index[:, j] >> shift[j]).astype(np.uint64)
            parts.append(key)
        if len(parts) == 1:
            return parts[0]
        out = np.zeros(index.shape[0], dtype=[(f"w{k}", ">u8") for k in range(len(parts))])
        for k, part in enumerate(parts):
            out[f"w{k}"] = part
        return out

    def lookup(self, index, hint=None):
        """Leaf of each lattice index ``(m, D)`` (-1 where none). ``hint`` (m,), optional: a
        leaf to try first for each index (-1: none), e.g. the leaf a proposal was drawn in;
        an index inside its hinted leaf needs no search, since the leaves are disjoint."""
        index = np.asarray(index, dtype=np.int64)
        out = np.full(index.shape[0], -1, dtype=np.int64)
        if hint is not None:
            hint = np.asarray(hint, dtype=np.int64)
            lo, size = self.lo[hint], self.size[hint]
            inside = (hint >= 0) & np.all((lo <= index) & (index < lo + size), axis=-1)
            out[inside] = hint[inside]
        valid = np.all((index >= 0) & (index < 2**self.levels), axis=-1)
        for lev, words, keys, members in self.groups:
            todo = np.flatnonzero(valid & (out < 0))
            if todo.size == 0:
                break
            q = self._pack(index[todo], lev, words)
            pos = np.minimum(np.searchsorted(keys, q), keys.size - 1)
            hit = keys[pos] == q
            out[todo[hit]] = members[pos[hit]]
        return out
