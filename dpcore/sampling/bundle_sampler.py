r"""What the exact joint-KNG bundle samplers share (issue 28): the target, why a release is
private and float-safe, the certified rejection loop and the refinement's stop rule.

Used by :class:`~dpcore.sampling.bundle_native.NativeSphereSampler` (:math:`S^2`, the releases),
:class:`~dpcore.sampling.bundle_whitened.WhitenedBundleSampler` and its subclasses
(:class:`~dpcore.sampling.bundle_flat.FlatBundleSampler` on :math:`\mathbb{R}^2` and
:math:`\mathbb{R}^3`, the releases; the SPD(2) prototype of :mod:`dpcore.sampling.bundle_spd2`).
The first :math:`S^2` sampler of this module (a certified mixture on one chart about a public
centre) and its chart-based successors were replaced by the native sampler in session 35 and
removed.

The target
----------
Joint KNG draws :math:`(p, v)` from :math:`f(p, v) = \exp(-g(p, v)/\sigma)`,
:math:`g = \|\nabla E(p, v)\|` (Sasaki norm, residuals clipped to :math:`\tau`;
:func:`~dpcore.learning.regression.regression_gradient` is the definition), w.r.t. the Sasaki
volume on a public support :math:`D_L`. Each sampler works in coordinates :math:`z` of its own
with a public output lattice (cells :math:`K`, each released as a fixed float point
:math:`z_K`, :class:`~dpcore.sampling.bundle_lattice.DyadicGrid`); there the target's density
w.r.t. Lebesgue measure is :math:`f(z)J(z)` with the coordinates' volume density :math:`J`.
The support :math:`D_L` is a union of lattice cells, a public function of the cell index
:math:`K`. On :math:`S^2` the bound :math:`\Delta = \sqrt{\Delta_p^2 + \Delta_v^2}` holds at
every :math:`(p, v)` (curvature :math:`\ge 0`, DESIGN §5), so KNG restricted to any public
support is :math:`\epsilon`-DP with :math:`\sigma = 2\Delta/\epsilon` (DESIGN §6); releasing the
lattice cell of an exact draw is post-processing.

Sampling (exact)
----------------
A sampler certifies :math:`fJ \le Mq` on :math:`D_L` for a proposal :math:`q` of its own (its
module docstring): piecewise uniform on the leaves of a k-d partition into dyadic boxes (a leaf
with probability :math:`W_B/W`, integer weights :math:`W_B \ge 1`,
:class:`~dpcore.sampling.floatsafe.IntegerWeights`), possibly mixed with other components. The
rejection loop (:meth:`LatticeDraws._draw`, or a sampler's own around :func:`accept_batch`):
propose :math:`z \sim q`, reject unless the cell :math:`K` of :math:`z` is in :math:`D_L`, else
accept with probability :math:`f(z)J(z)/(Mq(z)) \le 1`
(:func:`~dpcore.sampling.floatsafe.bernoulli_exp`, positive for every finite argument) and
release :math:`K`. The accepted :math:`z` has density :math:`\propto fJ` on :math:`D_L`
(rejection sampling; the continuous law, in exact arithmetic). A ratio above :math:`1 +
10^{-9}` (a failed premise) raises :class:`~dpcore.exceptions.EnvelopeViolation`
(:func:`accept_batch`); nothing is released.

Float safety (DESIGN §12)
-------------------------
The set of releasable indices is :math:`D_L` for every data set. (i) Nothing outside
:math:`D_L` is released (public test on :math:`K`). (ii) Every :math:`K \in D_L` is released
with positive probability: a component of :math:`q` draws a lattice cell with positive
probability and a point uniformly in it, :math:`z_K + \gamma(U - \tfrac12)`, whose offset is
exactly 0 at :math:`U = \tfrac12` (a value of ``rng.random()``), so the float :math:`z_K` is
proposed with positive probability whatever the envelope is (each module docstring names that
component); its acceptance probability is positive because :math:`g(z_K)` and :math:`q(z_K)`
are finite. :meth:`LatticeDraws.reachable` (or a sampler's own) checks (ii) with that
witness. The released point is a fixed public float function of :math:`K`.

Refinement
----------
The envelopes are refined by the data (a timing side channel, as for every exact sampler
here): :func:`excess_split` picks the leaves whose envelope mass most exceeds an estimate of the
target's mass, and :meth:`LatticeDraws._refined_enough` stops once the estimated acceptance
reaches ``acceptance_goal``, the leaves run out, or a leaf would cost more than the proposals it
saves.
"""

from __future__ import annotations

import math

import numpy as np

from .._progress import RefinementProgress, report
from ..exceptions import EnvelopeViolation
from .floatsafe import bernoulli_exp

__all__ = ["LatticeDraws", "accept_batch", "at_depth", "excess_split"]


def _logsumexp(x):
    x = np.asarray(x, dtype=float)
    if x.size == 0 or not np.any(np.isfinite(x)):
        return -np.inf
    top = float(np.max(x))
    return top + math.log(float(np.sum(np.exp(x - top))))


def accept_batch(log_acc, rng, need):
    """One batch of a certified rejection loop: the accepted proposals (at most ``need``, in
    order) and the proposals used, from log acceptance ratios ``log_acc`` (``-inf`` where a
    proposal is outside the support). Raises :class:`EnvelopeViolation` when a ratio exceeds
    ``1 + 1e-9``: the envelope would not bound the target there."""
    worst = float(np.max(log_acc)) if log_acc.size else -np.inf
    if worst > 1e-9:
        raise EnvelopeViolation(
            f"The certified bound is below the target by a factor e^{worst:.3g} at a "
            "proposal: the draws would not be exact. Nothing was released.")
    hits = np.flatnonzero(bernoulli_exp(-np.minimum(log_acc, 0.0), rng))[:need]
    return hits, (log_acc.size if hits.size < need else int(hits[-1]) + 1)


def at_depth(lev, levels):
    """Leaves ``lev`` (m, D) split to the lattice's depth ``levels`` along some axis (never
    split again). Column by column: ``np.any`` over the last axis is several times slower, and
    this runs once a refinement round."""
    out = lev[:, 0] >= levels
    for j in range(1, lev.shape[1]):
        out |= lev[:, j] >= levels
    return out


def excess_split(env, log_mass, log_low, log_m, blocked, room):
    """The leaves one round of refinement splits: those whose envelope mass (``log_mass``,
    leaves ``env`` of the envelope) most exceeds their target estimate (``log_low``), together
    half the total excess, at most ``room``; ``blocked`` leaves are never split. Empty when no
    leaf has any excess (the refinement stops)."""
    excess = np.where(env, np.exp(log_mass - log_m) - np.exp(log_low - log_m), 0.0)
    excess[blocked] = 0.0
    if not np.any(excess > 0):
        return np.zeros(0, dtype=np.int64)
    half = 0.5 * float(np.sum(excess))
    n = excess.size
    k = min(n, 4096)
    while True:
        # the k largest, in decreasing order (a partial sort: most rounds split few leaves)
        top = np.argpartition(excess, n - k)[n - k:] if k < n else np.arange(n)
        order = top[np.argsort(excess[top])[::-1]]
        cum = np.cumsum(excess[order])
        if k == n or cum[-1] >= half:
            break
        k = min(n, 4 * k)
    split = order[:int(min(room, max(1, np.searchsorted(cum, half) + 1)))]
    return split[excess[split] > 0]


class LatticeDraws:
    """What the certified bundle samplers share: draws as lattice points, the estimated
    acceptance and the refinement's stop rule (subclasses give ``sample_indices``, ``lattice``,
    ``_state`` and ``log_m``)."""

    _build = RefinementProgress(None, 0.0, 1, 1.0)    # replaced when a constructor gets one

    def _watch_build(self, progress):
        """Report the envelope's construction to ``progress(fraction)`` (it may raise: a Cancel
        stops the construction at its next round)."""
        self._build = RefinementProgress(progress, math.log(self.acceptance_goal),
                                         self.max_boxes, self.box_cost)

    def _refined_enough(self, log_m, log_z, boxes):
        """The refinement's stop rule: the certified acceptance reaches ``acceptance_goal``,
        the leaves run out, or a leaf would cost more than the proposals it saves. Reports the
        construction's progress first."""
        proposals = self.draws * math.exp(min(log_m - log_z, 700.0))
        self._build(log_z - log_m, boxes, proposals)
        return (log_z - log_m >= math.log(self.acceptance_goal) or boxes >= self.max_boxes
                or proposals < self.box_cost * boxes)

    def sample(self, size, rng, progress=None):
        """``size`` exact draws ``(p, v)`` (lattice points), and the number of proposals.
        ``progress(fraction)`` is called after every batch of proposals (it may raise: a user
        interface cancels a long run that way)."""
        index, tried = self.sample_indices(size, np.random.default_rng(rng), progress=progress)
        p, v = self.lattice.point(index)
        return p, v, tried

    # ------------------------------------------------------------------ leaves
    # The per-leaf arrays of ``_FIELDS`` are views of buffers with spare room, so that a round
    # of refinement costs time in the leaves it splits, not in all leaves (a footpoint ball's
    # edge can take hundreds of rounds of a few leaves each).

    def _reset_leaves(self, **empty):
        """Start with no leaves; ``empty`` gives each of ``_FIELDS`` as an empty array of its
        dtype and trailing shape."""
        self._buf = {name: empty[name] for name in self._FIELDS}
        self._n = 0
        self._views()

    def _views(self):
        for name in self._FIELDS:
            setattr(self, name, self._buf[name][:self._n])

    def _seal_leaves(self):
        """End the refinement: the per-leaf arrays become compact copies and the buffers (up
        to twice the leaves) are released."""
        for name in self._FIELDS:
            setattr(self, name, self._buf[name][:self._n].copy())
        del self._buf

    def _leaf_values(self, lo_idx, lev):
        """``(keep, values)``: which of the boxes ``lo_idx``, ``lev`` (m, D) are leaves (the
        others surely miss the support) and the per-leaf values of ``_FIELDS`` of the kept
        ones, in order (subclasses)."""
        raise NotImplementedError

    def _append(self, values):
        m = values[0].shape[0]
        need = self._n + m
        if need > self._buf[self._FIELDS[0]].shape[0]:
            cap = max(need, 2 * self._buf[self._FIELDS[0]].shape[0], 1024)
            for name in self._FIELDS:
                old = self._buf[name]
                grown = np.empty((cap,) + old.shape[1:], dtype=old.dtype)
                grown[:self._n] = old[:self._n]
                self._buf[name] = grown
        for name, val in zip(self._FIELDS, values, strict=True):
            self._buf[name][self._n:need] = val
        self._n = need
        self._views()

    def _add(self, lo_idx, lev):
        """Add the boxes ``lo_idx``, ``lev`` that do not surely miss the support as leaves."""
        self._append(self._leaf_values(lo_idx, lev)[1])

    def _halve(self, split, axis, levels):
        """Replace the leaves ``split`` by their two halves along ``axis`` (one per leaf) in
        the dyadic partition of ``levels`` levels per axis: a kept lower half takes its
        parent's row (else a kept upper half does), other kept halves are appended, and a leaf
        with no kept half is removed."""
        rows = np.arange(split.size)
        child = self.lev[split].copy()
        child[rows, axis] += 1
        lo = self.lo_idx[split]
        upper = lo.copy()
        upper[rows, axis] += np.left_shift(np.int64(1), levels - child[rows, axis])
        keep, values = self._leaf_values(np.concatenate([lo, upper]),
                                         np.concatenate([child, child]))
        k = split.size
        at = np.cumsum(keep) - 1                      # row of each kept half in ``values``
        in_place = np.where(keep[:k], at[:k], np.where(keep[k:], at[k:], -1))
        held = in_place >= 0
        for name, val in zip(self._FIELDS, values, strict=True):
            self._buf[name][split[held]] = val[in_place[held]]
        extra = at[k:][keep[:k] & keep[k:]]
        self._append(tuple(val[extra] for val in values))
        if not np.all(held):
            # the last live rows fill the removed rows' places
            dead = np.zeros(self._n, dtype=bool)
            dead[split[~held]] = True
            n = self._n - int(np.count_nonzero(dead))
            holes = np.flatnonzero(dead[:n])
            fill = n + np.flatnonzero(~dead[n:])
            for name in self._FIELDS:
                self._buf[name][holes] = self._buf[name][fill]
            self._n = n
            self._views()

    def _draw(self, size, rng, progress, scored_batch):
        """The rejection loop of every certified bundle sampler: ``scored_batch(m, rng)``
        returns ``m`` proposals' lattice indices and log acceptance ratios (``-inf`` outside
        the support); batches sized by the estimated acceptance, ``progress(have / size)``
        after each. Returns ``(indices, proposals)``; a ratio above ``1 + 1e-9`` raises
        :class:`~dpcore.exceptions.EnvelopeViolation` (:func:`accept_batch`)."""
        out, have, tried = [], 0, 0
        batch = max(16, int(3 * size / max(self.acceptance_estimate, 1e-3)))
        batch = min(batch, 20_000)
        while have < size:
            index, log_acc = scored_batch(batch, rng)
            hits, used = accept_batch(log_acc, rng, size - have)
            tried += used
            out.append(index[hits])
            have += hits.size
            report(progress, have / size)
        return np.concatenate(out)[:size], tried

    def reachable(self, index):
        """Whether each lattice index is released with positive probability (the module
        docstrings' float-safety argument, with the lattice point itself as the proposed
        witness: its cell is in the support, has a leaf, and its acceptance is positive)."""
        index = np.asarray(index, dtype=np.int64)
        ok = self.lattice.in_support(index)
        leaf = np.full(index.shape[0], -1, dtype=np.int64)
        leaf[ok] = self.leaf_of(index[ok])
        ok &= leaf >= 0
        if np.any(ok):
            z = self.lattice.coordinates(index[ok])
            ok[ok] = np.isfinite(self.log_acceptance(z, leaf[ok]))
        return ok

    @property
    def acceptance_estimate(self):
        """Estimated acceptance (steers batch sizes and the public cost prediction)."""
        return float(math.exp(min(0.0, self._state()[1] - self.log_m)))

    @property
    def diagnostics(self):
        r"""Leaves, leaves certified for :math:`q_1`, box evaluations, refinement rounds,
        :math:`\beta`, :math:`\log M` and :math:`\log M_1^\circ` (data dependent: keep them
        private)."""
        env = self.b_1 > self.log_m1_target
        return {"boxes": int(self.lo_idx.shape[0]), "q1_boxes": int((~env).sum()),
                "evaluations": int(self.evaluations), "rounds": int(self.rounds),
                "beta": float(self.beta), "log_m": float(self.log_m),
                "log_m1_target": float(self.log_m1_target)}
