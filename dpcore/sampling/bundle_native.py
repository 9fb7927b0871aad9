r"""Exact joint KNG for geodesic regression on the whole of :math:`TS^2` in the geodesic's own
coordinates (issue 28): boxes in (frame rotation vector, speed) certified by per-datum caps,
optionally within a public footpoint ball.

The target
----------
:math:`f = e^{-g/\sigma}` w.r.t. the Sasaki volume on the speed-bounded bundle :math:`\{(p, v):
|v| \le V\}`, :math:`V \le \pi` (the target of :mod:`dpcore.sampling.bundle_sampler`, whose
docstring states why KNG on a public support is :math:`\epsilon`-DP with :math:`\sigma =
2\Delta/\epsilon`), restricted to the public support :math:`D_L` of
:class:`~dpcore.sampling.sphere_native.NativeLattice`. In native coordinates :math:`z = (\omega,
s)` its density w.r.t. Lebesgue measure is :math:`f(z)J(z)`
(:func:`~dpcore.sampling.sphere_native.log_volume_density`).

The proposal and the certificate
--------------------------------
:math:`q` is piecewise uniform on the leaves :math:`B` of a k-d partition of the lattice box
into dyadic boxes of lattice cells: a leaf with probability :math:`W_B/W` (integer weights
:math:`W_B \ge 1`, :class:`~dpcore.sampling.floatsafe.IntegerWeights`), a lattice cell of it
uniformly (exact integer draws), a point uniformly in that cell (:math:`z_K + \gamma(U -
\tfrac12)`). Leaves that surely miss :math:`|\omega| \le \pi` (or the public footpoint
ball) are dropped. On every leaf
(padded by one lattice spacing) :math:`g \ge g_B`
(:func:`~dpcore.sampling.sphere_native.cap_lower_bound`, proven there) and :math:`J \le J_B`
(:func:`~dpcore.sampling.sphere_native.log_volume_bound`), so :math:`fJ \le e^{b_B}`,
:math:`b_B = -\max(g_B, 0)/\sigma + \log J_B`, and :math:`fJ/q \le e^{b_B}\mathrm{vol}_B
W/W_B` on :math:`B` (:math:`\mathrm{vol}_B` the volume of its cells); :math:`M` is the largest
of these (each :math:`b_B` with a relative margin of :math:`10^{-10}`, plus :math:`10^{-12}` in
the log).

**Refinement** (reads the data: a timing side channel, as for every exact sampler here): from
a grid of :math:`4^4` boxes, split the leaves with the largest excess (envelope mass minus the
target's estimate at the box's centre, half the total excess per round) across their widest
side relative to the lattice box, until the stop rule of
:class:`~dpcore.sampling.bundle_sampler.LatticeDraws` holds (the estimated acceptance reaches
``acceptance_goal``, the leaves run out, or a leaf would cost more than the proposals it
saves). The estimated acceptance divides an estimate of the target's mass by the envelope's:
the sum over leaves of the target at their centres, until (at :data:`MODE_LEAVES` leaves)
Newton's method finds the target's mode inside the support, then the Laplace mass of the
basin there, :math:`J(z^*)\,12\pi^2\sigma^4/|\det DG(z^*)|` (leaves larger than the basin
overestimate it 1.3-4.6 times, and stopped the refinement early: over nine data sets of the
issue's request this cut the cost from 14.0 s to 12.1 s on average; the vectorized box kernel
of :mod:`~dpcore.sampling._native_numba`, rounds that cost time in the leaves they split
and a box cost of 5 proposals then brought it to 3.8 s, 4.8 s at worst,
``docs/measurements.md``). Either is steering only: the certificate and
the law do not depend on it.

Sampling (exact)
----------------
Propose :math:`z \sim q`; reject unless the cell :math:`K` of :math:`z` is in :math:`D_L`; else
accept with probability :math:`f(z)J(z)/(Mq(z)) \le 1`
(:func:`~dpcore.sampling.floatsafe.bernoulli_exp`), :math:`g` the library's at the float
:math:`(p, v)` of :math:`z` (the compiled sphere kernel where numba is present, within
:math:`10^{-14}` relative of numpy), and release :math:`K`. The accepted :math:`z` has density
:math:`\propto fJ` on :math:`D_L` (rejection sampling, in exact arithmetic). A ratio above
:math:`1 + 10^{-9}` raises :class:`~dpcore.exceptions.EnvelopeViolation`; nothing is released.

Float safety (DESIGN §12)
-------------------------
The release is the cell index :math:`K`, i.e. the fixed float point :math:`z_K` mapped by
:func:`~dpcore.sampling.sphere_native.bundle_points`: a public function of :math:`K`. The set
of released indices is :math:`D_L` for every data set: nothing outside :math:`D_L` is released
(public test on :math:`K`); every :math:`K \in D_L` is released with positive probability (its
leaf is kept, since only leaves that surely miss the support are dropped, and has
weight :math:`W_B \ge 1`; the cell is drawn with positive probability; the offset is exactly 0
at :math:`U = \tfrac12`; and :math:`f(z_K)J(z_K) > 0` because :math:`s_K > 0`,
:math:`|\omega_K| < \pi` and :math:`g` is finite). :meth:`NativeSphereSampler.reachable`
checks this with that witness.
"""

from __future__ import annotations

import math

import numpy as np

from .bundle_lattice import LeafIndex
from .bundle_sampler import LatticeDraws, _logsumexp, at_depth, excess_split
from .floatsafe import IntegerWeights
from .radial import log_kfnorm_mass
from .sphere_native import (
    NativeLattice,
    bundle_points,
    cap_lower_bound,
    frame_gradient,
    log_volume_bound,
    log_volume_density,
)

try:
    from ._native_numba import native_cap_bound as _compiled_bound
except ImportError:  # numba missing: the numpy path
    _compiled_bound = None

__all__ = ["NativeSphereSampler"]

_MARGIN = 1e-10
#: Levels per axis of the starting grid (4 boxes per axis).
START_LEVEL = 2
#: Leaves evaluated at once.
CHUNK = 4096
#: Leaf counts at which the refinement looks for the target's mode (module docstring,
#: "Refinement").
MODE_LEAVES = (20_000, 60_000, 150_000)


class NativeSphereSampler(LatticeDraws):
    r"""Exact joint-regression KNG on the whole of :math:`TS^2` (module docstring).

    Parameters
    ----------
    t : array (n,)
        Covariates (the releases pass them rescaled to [0, 1]).
    y : array (n, 3)
        Unit responses.
    tau : float
        Residual clipping bound.
    sigma : float
        KNG scale.
    max_speed : float
        The speed bound :math:`V \in (0, \pi]`.
    center, radius : optional
        A public footpoint ball (unit centre, radius in :math:`(0, \pi]`) to restrict the
        support to (:class:`~dpcore.sampling.sphere_native.NativeLattice`); default the whole
        sphere.
    draws : int
        Draws the sampler will serve (the refinement stops once more leaves would cost more
        than the proposals they save).
    acceptance_goal : float
        Stop refining once the estimated acceptance reaches this.
    box_cost : float
        Cost of certifying one leaf, in proposals.
    max_boxes : int
        Largest number of leaves.
    compiled : bool
        Bound the leaves and evaluate proposals with the numba kernels when numba is
        importable (the same formulas).
    progress : callable, optional
        ``progress(fraction)`` of the envelope's construction, after every round.
    """

    def __init__(self, t, y, tau, sigma, max_speed, *, center=None, radius=None, draws=1,
                 acceptance_goal=1.0, box_cost=8.0, max_boxes=250_000, compiled=True,
                 progress=None):
        self.t = np.ascontiguousarray(np.asarray(t, dtype=float).reshape(-1))
        self.y = np.ascontiguousarray(np.asarray(y, dtype=float))
        if self.y.shape != (self.t.size, 3):
            raise ValueError("`y` must be (n, 3) unit vectors with one covariate each.")
        self.tau, self.sigma = float(tau), float(sigma)
        if not (self.tau > 0 and self.sigma > 0):
            raise ValueError("`tau` and `sigma` must be positive.")
        self.lattice = NativeLattice(max_speed, center, radius)
        self.draws, self.box_cost = int(draws), float(box_cost)
        self.acceptance_goal, self.max_boxes = float(acceptance_goal), int(max_boxes)
        self.compiled = bool(compiled) and _compiled_bound is not None
        self.evaluations = 0
        self.rounds = 0
        self._watch_build(progress)
        self._refine()
        self._finalize()

    # ------------------------------------------------------------------ bounds
    def _box_bounds(self, zc, h):
        if self.compiled:
            return _compiled_bound(np.ascontiguousarray(zc), np.ascontiguousarray(h), self.t,
                                   self.y, self.tau)
        return cap_lower_bound(zc, h, self.t, self.y, self.tau)

    def _bounds(self, lo, hi):
        """(b_B, log volume, b_est) of padded boxes; ``b_est`` estimates log(f J) at the
        centre (it steers the refinement only)."""
        b, log_vol, b_est = (np.empty(lo.shape[0]) for _ in range(3))
        for start in range(0, lo.shape[0], CHUNK):
            self._build.pulse()
            sl = slice(start, start + CHUNK)
            zc, h = 0.5 * (lo[sl] + hi[sl]), 0.5 * (hi[sl] - lo[sl])
            lower, g_c = self._box_bounds(zc, h)
            be = -np.maximum(lower, 0.0) / self.sigma + log_volume_bound(lo[sl], hi[sl])
            b[sl] = be + _MARGIN * (1 + np.abs(be))
            log_vol[sl] = np.sum(np.log(hi[sl] - lo[sl]), axis=-1)
            with np.errstate(divide="ignore", invalid="ignore"):
                est = -g_c / self.sigma + log_volume_density(zc)
            # steering only: a leaf whose centre's footpoint lies outside the ball is estimated
            # empty, so that leaves straddling its boundary are split until their outer parts
            # drop
            b_est[sl] = np.where(self.lattice.outside(zc), -np.inf, est)
        self.evaluations += lo.shape[0]
        return b, log_vol, b_est

    # ------------------------------------------------------------------ refinement
    _FIELDS = ("lo_idx", "lev", "b", "log_vol", "b_est")

    def _leaf_values(self, lo_idx, lev):
        lo, hi = self.lattice.box(lo_idx, lev)
        keep = ~self.lattice.misses(lo, hi)
        return keep, (lo_idx[keep], lev[keep], *self._bounds(lo[keep], hi[keep]))

    def _state(self):
        """(log envelope mass, log target estimate, leaves, their log masses)."""
        log_mass = self.b + self.log_vol
        if self._basin is None and self._mode_tries < len(MODE_LEAVES) and (
                self.b.size >= MODE_LEAVES[self._mode_tries]):
            self._mode_tries += 1
            self._basin = self._basin_log_mass()
        log_z = self._basin
        if log_z is None:
            log_z = _logsumexp(np.minimum(self.b_est, self.b) + self.log_vol)
        return _logsumexp(log_mass), log_z, np.ones(log_mass.size, dtype=bool), log_mass

    def _basin_log_mass(self):
        r"""Log of the Laplace mass :math:`J(z^*)\,12\pi^2\sigma^4/|\det DG(z^*)|` of the
        target's basin about its mode :math:`z^*` (where :math:`G = 0`), found by damped
        Newton steps from the centre of the leaf of largest estimated target (central
        differences for :math:`DG`); None unless :math:`|G| < 10^{-3}\sigma` there, inside the
        support (module docstring, "Refinement": steering only)."""
        best = int(np.argmax(self.b_est))
        lo, hi = self.lattice.box(self.lo_idx[best:best + 1], self.lev[best:best + 1])
        z = 0.5 * (lo[0] + hi[0])
        step = np.eye(4) * 1e-7

        def gradient(points):
            return frame_gradient(points, self.t, self.y, self.tau)

        g = gradient(z[None])[0]
        for _ in range(40):
            jac = (gradient(z + step) - gradient(z - step)).T / 2e-7
            try:
                move = np.linalg.solve(jac, g)
            except np.linalg.LinAlgError:
                return None
            # damped: the clip's kinks make plain Newton cycle
            for _ in range(30):
                trial = z - move
                g_trial = gradient(trial[None])[0]
                if np.linalg.norm(g_trial) < np.linalg.norm(g):
                    break
                move = 0.5 * move
            else:
                break
            z, g = trial, g_trial
            if np.linalg.norm(g) < 1e-6 * self.sigma:
                break
        det = abs(np.linalg.det(jac))
        inside = (np.linalg.norm(z[:3]) < math.pi and 0.0 < z[3] < self.lattice.max_speed
                  and not self.lattice.outside(z[None])[0])
        if not (inside and det > 0 and np.linalg.norm(g) < 1e-3 * self.sigma):
            return None
        self.mode = z
        return (float(log_kfnorm_mass(4, self.sigma)) - math.log(det)
                + float(log_volume_density(z[None])[0]))

    def _refine(self):
        levels = self.lattice.levels
        self._basin, self._mode_tries = None, 0
        self._reset_leaves(lo_idx=np.zeros((0, 4), dtype=np.int64),
                           lev=np.zeros((0, 4), dtype=np.int64), b=np.zeros(0),
                           log_vol=np.zeros(0), b_est=np.zeros(0))
        k = 2**START_LEVEL
        grid = np.stack(np.meshgrid(*[np.arange(k)] * 4, indexing="ij"), -1).reshape(-1, 4)
        self._add(grid.astype(np.int64) << (levels - START_LEVEL),
                  np.full(grid.shape, START_LEVEL, dtype=np.int64))
        while True:
            log_m, log_z, env, log_mass = self._state()
            boxes = self.lo_idx.shape[0]
            if self._refined_enough(log_m, log_z, boxes):
                break
            split = excess_split(env, log_mass, np.minimum(self.b_est, self.b) + self.log_vol,
                                 log_m, at_depth(self.lev, levels),
                                 self.max_boxes - boxes)
            if split.size == 0:
                break
            self._split(split)
            self.rounds += 1

    def _split(self, split):
        levels = self.lattice.levels
        lev = self.lev[split]
        # the widest side relative to the lattice box: the lowest level (ties: first axis)
        axis = np.argmin(lev, axis=1)
        self._halve(split, axis, levels)

    def _finalize(self):
        self._seal_leaves()
        log_mass = self.b + self.log_vol
        self.weights = IntegerWeights(log_mass)
        w = self.weights.weights.astype(float)
        self.size = np.left_shift(np.int64(1), self.lattice.levels - self.lev)
        self.log_vol_cells = np.sum(np.log(self.lattice.spacing * self.size), axis=-1)
        ratio = self.b + self.log_vol_cells + math.log(float(self.weights.total)) - np.log(w)
        self.log_m = float(np.max(ratio)) + 1e-12
        self.leaves = LeafIndex(self.lo_idx, self.lev, self.lattice.levels)

    # ------------------------------------------------------------------ densities
    def _g(self, p, v):
        if self.compiled:
            from ..manifolds import Sphere
            from ._compiled_sphere import compiled_gradient_norms

            g = compiled_gradient_norms(Sphere(2), p, v, self.t, self.y, self.tau)
            if g is not None:
                return g
        from ..learning.regression import regression_gradient
        from ..manifolds import Sphere

        gp, gv = regression_gradient(Sphere(2), p, v, self.t, self.y, tau=self.tau)
        return np.sqrt(np.sum(gp * gp, axis=-1) + np.sum(gv * gv, axis=-1))

    def log_target(self, z):
        r""":math:`-g/\sigma + \log J` at native coordinates ``(m, 4)``."""
        p, v = bundle_points(z)
        return -self._g(p, v) / self.sigma + log_volume_density(z)

    def log_acceptance(self, z, leaf):
        r""":math:`\log(fJ/(Mq))` at coordinates ``(m, 4)`` in the given leaves (<= 0 where
        the certificate holds)."""
        w = self.weights.weights[leaf].astype(float)
        log_q = np.log(w) - math.log(float(self.weights.total)) - self.log_vol_cells[leaf]
        return self.log_target(z) - self.log_m - log_q

    # ------------------------------------------------------------------ sampling
    def leaf_of(self, index):
        """The leaf holding each lattice index ``(m, 4)`` (-1 where none)."""
        return self.leaves.lookup(index)

    def _propose(self, m, rng):
        leaf = self.weights.draw(m, rng)
        index = self.lo_idx[leaf] + rng.integers(0, self.size[leaf], dtype=np.int64)
        z = self.lattice.coordinates(index) + self.lattice.spacing * (rng.random((m, 4)) - 0.5)
        return z, index, leaf

    def sample_indices(self, size, rng, progress=None):
        """``size`` exact draws as lattice indices ``(size, 4)``; returns ``(indices,
        proposals)``. ``progress(have / size)`` after every batch.

        Raises
        ------
        EnvelopeViolation
            If a proposal's acceptance ratio exceeds ``1 + 1e-9``.
        """
        def scored(batch, rng):
            z, index, leaf = self._propose(batch, rng)
            ok = self.lattice.in_support(index)
            log_acc = np.full(batch, -np.inf)
            if np.any(ok):
                log_acc[ok] = self.log_acceptance(z[ok], leaf[ok])
            return index, log_acc

        return self._draw(size, rng, progress, scored)

    @property
    def diagnostics(self):
        """Leaves, leaf evaluations and refinement rounds (data dependent: keep them
        private)."""
        return {"boxes": int(self.lo_idx.shape[0]), "evaluations": int(self.evaluations),
                "rounds": int(self.rounds), "log_m": float(self.log_m)}

    def envelope_check(self, count, rng):
        """Largest :math:`\\log(fJ/(Mq))` at ``count`` proposals (a self-test: at most
        :math:`10^{-9}` where the certificate holds)."""
        z, index, leaf = self._propose(int(count), np.random.default_rng(rng))
        ok = self.lattice.in_support(index)
        return float(np.max(self.log_acceptance(z[ok], leaf[ok]))) if np.any(ok) else -np.inf
