r"""A certified squeeze for the uniform exact joint sampler on SPD(2) (issue 28 point 1).

The uniform sampler (:func:`~dpcore.sampling.rejection.sample_kng_exact`) proposes
:math:`z = (p, v)` uniformly on the public support
:math:`K = B_R(C) \times \{\|v\|_p \le V\}` (Sasaki volume) and accepts with probability
:math:`e^{-g(z)/\sigma}`. At large :math:`n\epsilon` almost every proposal is far from the
fit, where :math:`g \gg \sigma`, and each still costs a full gradient over the :math:`n`
terms. A *squeeze* decides most of them without that gradient.

The support is the ball about the chart's centre :math:`SS^\top` (a public float function of
the public centre :math:`C`, equal to it within rounding) times the speed ball; the release
states :math:`C`.

**Exactness.** For any :math:`0 \le \ell(z) \le g(z)`,

.. math:: \mathrm{Bernoulli}(e^{-g/\sigma}) = \mathrm{Bernoulli}(e^{-\ell/\sigma})
          \wedge \mathrm{Bernoulli}(e^{-(g-\ell)/\sigma})

for independent draws (the product of the probabilities). The sampler draws the first factor
from :math:`\ell` alone and computes :math:`g` only where it passes, so the accepted
proposals have exactly the uniform sampler's law, the target's. Both factors are drawn by
:func:`~dpcore.sampling.floatsafe.bernoulli_exp` (positive probability for every finite
argument), so whether a proposal can be accepted still never depends on the data
(float safety, DESIGN §12). A proposal with :math:`g < \ell` would break the identity: it
raises, it is never only counted.

**The lower bound.** Proposals are drawn in the chart :math:`z = (a, b)` of
:mod:`dpcore.sampling.spd2_chart`, where :math:`|a| = d(SS^\top, p)`, :math:`|b| = \|v\|_p`
and the Sasaki volume has density :math:`J(a) = \sinh\delta_a/\delta_a`: uniform points of
the two balls, kept with probability :math:`J(a)/J_{\max}` (data independent). The support's
box :math:`[-R, R]^3 \times [-V, V]^3` is cut into axis-parallel leaves; on each leaf
:func:`~dpcore.sampling.spd2_affine.enclose_spd2_gradient` proves
:math:`G = G_0 + L\varepsilon + \xi`, :math:`|\xi_k| \le E_k`, for the exact real gradient,
so

.. math:: g(z) \ge |G_0 + L\varepsilon(z)| - |E| - \eta, \qquad
          \varepsilon(z) = (z - z_c)/h,

with :math:`\eta` = :data:`FLOAT_MARGIN` covering the rounding of the float gradient that
defines the released target (:func:`~dpcore.mechanisms.kng_exact.joint_gradient_norms`;
it agrees with the real one to about 1e-13). Leaves are split where the squeeze lets the
most proposal mass through (estimated from points of the leaf; the estimate only steers the
refinement and the work, never the law).

**Cost.** The proposals per draw are the uniform sampler's, :math:`\mathrm{vol}(K)/Z_K`;
each costs a leaf lookup and a 6 x 6 product instead of :math:`n` gradient terms, and only
the share that passes the squeeze (:attr:`SPD2Squeeze.pass_share`) costs a gradient. The
cost depends on the data (a timing side channel, as for every exact sampler here); the law
does not.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .._progress import report
from ..exceptions import EnvelopeViolation
from .floatsafe import bernoulli_exp
from .rejection import take_accepted
from .spd2_affine import enclose_spd2_gradient, response_enclosure
from .spd2_chart import SPD2Chart

__all__ = ["FLOAT_MARGIN", "SPD2Squeeze", "sample_squeezed", "squeeze_available"]

#: Allowance (in units of g) for the rounding of the float gradient norm against the real one.
FLOAT_MARGIN = 1e-9
#: Points per leaf that estimate the mass the squeeze lets through (steering only).
PROBE_POINTS = 96
#: A leaf's enclosure costs about as much as this many gradients over the same n terms
#: (with the compiled series of :mod:`dpcore.sampling._series_numba`: 455, 601 and 613 at
#: n = 30, 100 and 250, e.g. 0.86 ms against 1.43 us at n = 100; 1,250-1,800 before them,
#: 2026-12-02).
LEAF_GRADIENTS = 600.0
#: Leaves before a round that does not pay for itself stops the refinement.
FUTILE_AFTER = 600
#: Each refinement round splits the leaves that hold this share of the estimated passing mass.
SPLIT_SHARE = 0.8


def squeeze_available(manifold):
    """Whether a squeeze exists for ``manifold``'s uniform exact joint sampler (SPD(2))."""
    return type(manifold).__name__ == "SPD" and getattr(manifold, "k", None) == 2


#: Cells per side of the grid that starts each point's descent of the k-d tree (footpoint
#: and vector coordinates): a few thousand cells, so that most descents take a few steps.
GRID_SIDES = (2, 2, 2, 16, 16, 16)


@njit(cache=True)
def _descend(point_lo, point_hi, split_dim, split_at, child):
    """Deepest node whose box holds the whole box [point_lo, point_hi)."""
    node = 0
    while split_dim[node] >= 0:
        d, s = split_dim[node], split_at[node]
        if point_hi[d] <= s:
            node = child[node, 0]
        elif point_lo[d] >= s:
            node = child[node, 1]
        else:
            break
    return node


@njit(cache=True)
def _grid_starts(origin, width, sides, split_dim, split_at, child):
    total = 1
    for j in range(6):
        total *= sides[j]
    out = np.empty(total, dtype=np.int64)
    lo, hi = np.empty(6), np.empty(6)
    for c in range(total):
        r = c
        for j in range(5, -1, -1):
            q = r % sides[j]
            r //= sides[j]
            lo[j] = origin[j] + width[j] * q
            hi[j] = origin[j] + width[j] * (q + 1)
        out[c] = _descend(lo, hi, split_dim, split_at, child)
    return out


@njit(cache=True)
def _lower_bounds(z, split_dim, split_at, child, leaf_of, node_lo, node_hi, origin, width,
                  sides, starts, centre, inv_half, value, linear, slack):
    """Per chart point: the certified lower bound max(0, |G0 + L eps| - slack) of its leaf
    there (0 outside the leaf's enclosed box; module docstring). The leaf is found by
    descending the k-d tree from the node of the point's grid cell, or from the root where
    that node's box does not hold the point (rounding at a cell's face)."""
    m = z.shape[0]
    out = np.empty(m)
    eps = np.empty(6)
    for i in range(m):
        c = 0
        for j in range(6):
            q = int(math.floor((z[i, j] - origin[j]) / width[j]))
            q = min(max(q, 0), sides[j] - 1)
            c = c * sides[j] + q
        node = starts[c]
        for j in range(6):
            if not (node_lo[node, j] <= z[i, j] < node_hi[node, j]):
                node = 0
                break
        while split_dim[node] >= 0:
            node = child[node, 0] if z[i, split_dim[node]] < split_at[node] else child[node, 1]
        k = leaf_of[node]
        inside = True
        for j in range(6):
            eps[j] = (z[i, j] - centre[k, j]) * inv_half[k, j]
            # the enclosure holds on its box only: a point outside it (or within rounding of
            # its faces; a leaf that misses K) gets no bound, and its gradient decides
            if not abs(eps[j]) <= 1.0 - 1e-12:
                inside = False
        if not inside:
            out[i] = 0.0
            continue
        s = 0.0
        for r in range(6):
            acc = value[k, r]
            for j in range(6):
                acc += linear[k, r, j] * eps[j]
            s += acc * acc
        g = math.sqrt(s) - slack[k]
        out[i] = g if g > 0.0 else 0.0
    return out


@njit(cache=True)
def _fill_proposals(ua, ub, uj, radius, max_norm, j_max, out):
    """Chart points uniform on K from raw uniforms: points of the cube kept inside each ball
    (each ball reads its own stream), paired in order, kept with probability J(a) / j_max.
    Returns how many rows of ``out`` were filled."""
    na, nb, nj = ua.shape[0], ub.shape[0], uj.shape[0]
    ia = ib = ij = 0
    k = 0
    r2, v2 = radius * radius, max_norm * max_norm
    a = np.empty(3)
    while ij < nj:
        # next footpoint coordinates inside the ball
        found = False
        while ia < na:
            s = 0.0
            for j in range(3):
                a[j] = (2.0 * ua[ia, j] - 1.0) * radius
                s += a[j] * a[j]
            ia += 1
            if s <= r2:
                found = True
                break
        if not found:
            break
        found = False
        while ib < nb:
            s = 0.0
            for j in range(3):
                out[k, 3 + j] = (2.0 * ub[ib, j] - 1.0) * max_norm
                s += out[k, 3 + j] * out[k, 3 + j]
            ib += 1
            if s <= v2:
                found = True
                break
        if not found:
            break
        # the chart's volume density (spd2_chart.SPD2Chart.volume_density)
        h = 0.5 * (a[0] - a[2])
        x = h * h + 0.5 * a[1] * a[1]
        dens = math.sinh(math.sqrt(x)) / math.sqrt(x) if x > 1e-16 else 1.0 + x / 6.0
        keep = uj[ij] * j_max < dens
        ij += 1
        if keep:
            for j in range(3):
                out[k, j] = a[j]
            k += 1
    return k


def _shrink(lo, hi, radius, max_norm, rounds=2):
    """The bounding boxes of each box ``[lo, hi]`` (m, 6) met with K, padded outward by a
    relative 1e-12 (the floats of proposals inside K lie in them), and a mask of the boxes
    that miss K."""
    lo, hi = lo.copy(), hi.copy()
    empty = np.zeros(lo.shape[0], dtype=bool)
    for part, r in ((slice(0, 3), radius), (slice(3, 6), max_norm)):
        a, b = lo[:, part], hi[:, part]
        for _ in range(rounds):
            for i in range(3):
                near = np.clip(0.0, a, b)
                near[:, i] = 0.0
                rest = r * r - np.sum(near * near, axis=1)
                empty |= rest < 0.0
                s = np.sqrt(np.maximum(rest, 0.0)) * (1.0 + 1e-12)
                a[:, i] = np.maximum(a[:, i], -s)
                b[:, i] = np.minimum(b[:, i], s)
                empty |= a[:, i] > b[:, i]
        lo[:, part], hi[:, part] = a, b
    pad = 1e-12 * (np.abs(lo) + np.abs(hi)) + 1e-300
    lo, hi = lo - pad, hi + pad
    hi[empty] = lo[empty] + 1e-300 + np.abs(lo[empty]) * 1e-12
    return lo, hi, empty


class SPD2Squeeze:
    r"""Leaves and their certified lower bounds of :math:`g` on the chart of ``center``.

    Parameters
    ----------
    center : array (2, 2)
        Public centre of the footpoint ball.
    radius, max_norm : float
        Public footpoint radius :math:`R` and speed bound :math:`V`.
    t : array (n,)
        Covariates on [0, 1].
    y : array (n, 2, 2)
        Responses.
    tau : float
        Residual clip.
    sigma : float
        The smallest KNG scale that will be drawn (steers the refinement).
    max_leaves : int
        Refinement stops at this many leaves (public).
    target_share : float
        Refinement stops once the estimated share of proposals that pass the squeeze is
        below this.
    proposals : float, optional
        The proposals expected in all (public: :func:`~dpcore.release.uniform_cost.
        squeeze_plan`); refinement stops once the gradients they are still expected to need
        cost less than the leaves already built (:data:`LEAF_GRADIENTS` each).
    rng : Generator, optional
        Probe points (steering only).
    progress : callable, optional
        Called with 0.0 after every refinement round (:mod:`dpcore._progress`; it may raise
        to cancel).
    """

    def __init__(self, center, radius, max_norm, t, y, tau, sigma, *, max_leaves=1500,
                 target_share=0.01, proposals=None, rng=None, progress=None):
        self._progress = progress
        self._proposals = None if proposals is None else float(proposals)
        self.chart = SPD2Chart(center)
        self.radius, self.max_norm = float(radius), float(max_norm)
        self.sigma = float(sigma)
        self._t = np.asarray(t, dtype=float)
        self._ys = response_enclosure(self.chart.T, y)
        self._tau = tau
        self._rng = np.random.default_rng(rng)
        # J(a) <= sinh(R / sqrt 2) / (R / sqrt 2): delta_a^2 <= |a|^2 / 2
        x = self.radius / math.sqrt(2.0)
        self.j_max = (math.sinh(x) / x if x > 0 else 1.0) * (1.0 + 1e-12)
        r, v = self.radius, self.max_norm
        self._lo = [np.array([-r] * 3 + [-v] * 3)]
        self._hi = [np.array([r] * 3 + [v] * 3)]
        self._split_dim, self._split_at, self._child = [-1], [0.0], [[-1, -1]]
        self._bounds = {}
        self._mass = {}
        self._enclose([0])
        self._refine(int(max_leaves), float(target_share))
        self._freeze()

    # ------------------------------------------------------------------ leaves
    def _enclose(self, leaves):
        lo, hi, empty = _shrink(np.array([self._lo[k] for k in leaves]),
                                np.array([self._hi[k] for k in leaves]),
                                self.radius, self.max_norm)
        half = 0.5 * (hi - lo)
        basis = np.zeros((len(leaves), 6, 6))
        basis[:, np.arange(6), np.arange(6)] = half
        enc = enclose_spd2_gradient(0.5 * (hi + lo), basis, np.zeros_like(half), self._t,
                                    self._ys, self._tau)
        slack = np.linalg.norm(enc.error, axis=1) + FLOAT_MARGIN
        for i, k in enumerate(leaves):
            self._bounds[k] = (enc.value[i], enc.linear[i], slack[i], lo[i], hi[i])
        # steering: the mass the squeeze lets through, estimated from uniform points
        pts = lo[:, None, :] + (hi - lo)[:, None, :] * self._rng.random(
            (len(leaves), PROBE_POINTS, 6))
        eps = (pts - 0.5 * (hi + lo)[:, None, :]) / half[:, None, :]
        lin = enc.value[:, None, :] + np.einsum("lrj,lpj->lpr", enc.linear, eps)
        low = np.maximum(np.linalg.norm(lin, axis=2) - slack[:, None], 0.0)
        low[~np.isfinite(low)] = 0.0
        inside = ((np.linalg.norm(pts[..., :3], axis=2) <= self.radius)
                  & (np.linalg.norm(pts[..., 3:], axis=2) <= self.max_norm))
        dens = SPD2Chart.volume_density(pts.reshape(-1, 6)).reshape(inside.shape)
        vol = np.prod(hi - lo, axis=1)
        through = (inside * dens * np.exp(-low / self.sigma)).mean(axis=1) * vol
        # a leaf that meets K where no probe fell: count one probe's share as passing
        near_a = np.linalg.norm(np.clip(0.0, lo[:, :3], hi[:, :3]), axis=1) <= self.radius
        near_b = np.linalg.norm(np.clip(0.0, lo[:, 3:], hi[:, 3:]), axis=1) <= self.max_norm
        missed = near_a & near_b & ~inside.any(axis=1)
        through[missed] = vol[missed] * self.j_max / PROBE_POINTS
        through[empty] = 0.0
        for i, k in enumerate(leaves):
            self._mass[k] = float(through[i])

    def _split(self, k):
        """Halve leaf ``k`` (a node index) along its widest side in units of the bound's
        slope there; returns the two new nodes."""
        value, linear, slack = self._bounds[k][:3]
        width = self._hi[k] - self._lo[k]
        if np.all(np.isfinite(linear)) and np.isfinite(slack):
            # the linear part's reach along each side (per unit eps it already holds the
            # half-width) times that side: where the remainder grows fastest
            score = width * (np.linalg.norm(linear, axis=0) + 1e-12 * width.max())
        else:
            score = width
        d = int(np.argmax(score))
        mid = 0.5 * (self._lo[k][d] + self._hi[k][d])
        new = []
        for side in (0, 1):
            lo, hi = self._lo[k].copy(), self._hi[k].copy()
            if side == 0:
                hi[d] = mid
            else:
                lo[d] = mid
            self._lo.append(lo)
            self._hi.append(hi)
            self._split_dim.append(-1)
            self._split_at.append(0.0)
            self._child.append([-1, -1])
            new.append(len(self._lo) - 1)
        self._split_dim[k], self._split_at[k], self._child[k] = d, mid, new
        del self._bounds[k], self._mass[k]
        return new

    def _refine(self, max_leaves, target_share):
        vol_k = self._support_volume()
        rounds = 0
        last = None
        while len(self._mass) < max_leaves:
            total = sum(self._mass.values())
            # stop once the gradients still expected (the passing share of the proposals)
            # cost less than the leaves built so far: within twice the best stopping point
            # in hindsight (the rent-or-buy rule); or at the target share
            if (total <= target_share * vol_k or self._proposals is not None
                    and total / vol_k * self._proposals <= LEAF_GRADIENTS * len(self._mass)):
                break
            # futility: past FUTILE_AFTER leaves, a round whose leaves did not save the
            # gradients they cost ends the refinement (a support too wide for the enclosures)
            if (self._proposals is not None and last is not None
                    and len(self._mass) >= FUTILE_AFTER
                    and (last[1] - total) / vol_k * self._proposals
                    < LEAF_GRADIENTS * (len(self._mass) - last[0])):
                break
            last = (len(self._mass), total)
            keys = list(self._mass)
            mass = np.array([self._mass[k] for k in keys])
            # split the leaves holding SPLIT_SHARE of the passing mass (at most what fits)
            order = np.argsort(mass)[::-1]
            share = np.cumsum(mass[order]) / max(mass.sum(), 1e-300)
            take = int(np.searchsorted(share, SPLIT_SHARE)) + 1
            take = min(take, (max_leaves - len(keys)) // 1, max(1, len(keys)))
            if take <= 0:
                break
            new = []
            for k in (keys[i] for i in order[:take]):
                new += self._split(k)
            self._enclose(new)
            rounds += 1
            report(self._progress, 0.0)
        self.rounds = rounds

    def _support_volume(self):
        """Chart volume of K weighted by J (steering only: a fixed quadrature over radii and
        directions)."""
        if getattr(self, "_vol_k", None) is not None:
            return self._vol_k
        r = np.linspace(0.0, self.radius, 401)[1:]
        u = np.random.default_rng(0).standard_normal((1000, 3))
        u /= np.linalg.norm(u, axis=1, keepdims=True)
        dens = SPD2Chart.volume_density(u[None, :, :] * r[:, None, None]).mean(axis=1)
        base = 4.0 * math.pi * np.trapezoid(dens * r * r, r)
        self._vol_k = base * 4.0 / 3.0 * math.pi * self.max_norm ** 3
        return self._vol_k

    def _freeze(self):
        leaves = sorted(self._bounds)
        index = {k: i for i, k in enumerate(leaves)}
        self.n_leaves = len(leaves)
        self._leaf_of = np.array([index.get(k, -1) for k in range(len(self._lo))], np.int64)
        self._sd = np.array(self._split_dim, dtype=np.int64)
        self._sa = np.array(self._split_at, dtype=float)
        self._ch = np.array(self._child, dtype=np.int64)
        llo = np.array([self._bounds[k][3] for k in leaves])
        lhi = np.array([self._bounds[k][4] for k in leaves])
        self._centre = 0.5 * (llo + lhi)
        with np.errstate(divide="ignore"):
            self._inv_half = 2.0 / (lhi - llo)
        # node boxes as the descent reads them (the root: everything)
        node_lo = np.full((len(self._lo), 6), -np.inf)
        node_hi = np.full((len(self._lo), 6), np.inf)
        for k in range(len(self._lo)):
            if self._split_dim[k] >= 0:
                d, at = self._split_dim[k], self._split_at[k]
                left, right = self._child[k]
                for c in (left, right):
                    node_lo[c], node_hi[c] = node_lo[k], node_hi[k]
                node_hi[left, d] = min(node_hi[k, d], at)
                node_lo[right, d] = max(node_lo[k, d], at)
        self._node_lo, self._node_hi = node_lo, node_hi
        self._origin = self._lo[0].copy()
        self._sides = np.array(GRID_SIDES, dtype=np.int64)
        self._width = (self._hi[0] - self._lo[0]) / self._sides
        self._starts = _grid_starts(self._origin, self._width, self._sides, self._sd, self._sa,
                                    self._ch)
        self._val = np.array([self._bounds[k][0] for k in leaves])
        self._lin = np.array([self._bounds[k][1] for k in leaves])
        self._slack = np.array([self._bounds[k][2] for k in leaves])
        self.pass_share = sum(self._mass.values()) / self._support_volume()

    # ------------------------------------------------------------------ sampling
    def propose(self, m, rng):
        """Up to ``m`` uniform chart points of K (Sasaki volume) and their lower bounds:
        ``(z (k, 6), lower (k,))``."""
        out = np.empty((m, 6))
        k = _fill_proposals(rng.random((2 * m, 3)), rng.random((2 * m, 3)), rng.random(m),
                            self.radius, self.max_norm, self.j_max, out)
        z = out[:k]
        low = _lower_bounds(z, self._sd, self._sa, self._ch, self._leaf_of, self._node_lo,
                            self._node_hi, self._origin, self._width, self._sides,
                            self._starts, self._centre, self._inv_half, self._val, self._lin,
                            self._slack)
        return z, low

    def describe(self):
        return (f"ball of radius {self.radius:g} x (tangent ball of radius {self.max_norm:g}), "
                f"uniform, with a certified squeeze over {self.n_leaves} leaves")

    def points(self, z):
        """Footpoints and vectors stacked ``(k, 2, 2, 2)`` (the uniform sampler's layout)."""
        p, v = self.chart.to_bundle(z)
        return np.stack([p, v], axis=1)


def sample_squeezed(squeeze, gradient_norm, sigmas, size, rng, *, progress=None,
                    batch=1 << 17):
    """Exact draws (``(n_groups, size, 2, 2, 2)``) and proposals tried per group, as
    :func:`~dpcore.sampling.rejection.sample_kng_exact` with a :class:`SPD2Squeeze`
    (module docstring); ``gradient_norm`` maps stacked points to g."""
    sigmas = np.atleast_1d(np.asarray(sigmas, dtype=float))
    n_groups = sigmas.size
    got = [[] for _ in range(n_groups)]
    have = np.zeros(n_groups, dtype=int)
    tried = np.zeros(n_groups, dtype=int)
    evaluated = 0
    while np.any(have < size):
        z, low = squeeze.propose(batch, rng)
        first = bernoulli_exp(low[None, :] / sigmas[:, None], rng)
        need = np.flatnonzero(first.any(axis=0))
        ok = np.zeros_like(first)
        if need.size:
            pts = squeeze.points(z[need])
            g = np.asarray(gradient_norm(pts), dtype=float)
            evaluated += need.size
            if np.any(np.isnan(g)) or np.any(g < low[need]):
                bad = int(np.flatnonzero(~(g >= low[need]))[0])
                raise EnvelopeViolation(
                    f"gradient norm {g[bad]!r} below its certified lower bound "
                    f"{low[need][bad]!r}: the squeeze is not a bound here")
            second = bernoulli_exp(np.maximum(g - low[need], 0.0)[None, :] / sigmas[:, None],
                                   rng)
            ok[:, need] = first[:, need] & second
        take_accepted(ok, z, size, have, tried, got)
        report(progress, np.minimum(have, size).sum() / (n_groups * size))
    values = np.stack([squeeze.points(np.concatenate(c)[:size]) for c in got])
    return values, tried, evaluated
