r"""Exact joint KNG for geodesic regression certified over leaves of *whitened* coordinates
(issue 28 point 1): the base class of :class:`~dpcore.sampling.bundle_flat.FlatBundleSampler`
(:math:`\mathbb{R}^2` and :math:`\mathbb{R}^3`, in the releases) and of the SPD(2) prototype
:mod:`dpcore.sampling.bundle_spd2`. A subclass gives the space's part: the fit and the Jacobian
of the gradient there (``_fit``), the volume density (``_log_volume``), :math:`g` at proposals
(``_g``) and the leaves' bounds (``_bounds``).

Same target, public support, output lattice and release rule as the other bundle samplers
(:mod:`dpcore.sampling.bundle_sampler`; read its docstring first): draws of :math:`z = (u, w)`,
the :math:`D` coordinates of a :class:`~dpcore.sampling.bundle_lattice.ProductBallLattice`, with
density :math:`f(z)J(u)`, :math:`f = e^{-g/\sigma}`, on the public support :math:`D_L`, released
as the public lattice cell of the accepted :math:`z`. What is particular is the geometry of the
certificate. (The class's own mode on :math:`S^2`, in the normal coordinates of a public
centre with affine and Taylor enclosures of the gradient, was replaced by the native sampler in
session 35 and removed.)

Why whitening
-------------
Near the fit :math:`z^*` the target is :math:`\approx e^{-\|H(z - z^*)\|/\sigma}` with
:math:`H` from the Jacobian of the gradient there (on :math:`S^2` at n = 250 its singular values
were about (1.2, 0.9, 0.08, 0.07)): the mode is a thin valley *tilted* against the chart's axes
(the intercept / slope correlation of any regression design, not a curvature effect).
Axis-aligned boxes of the chart tile a tilted thin valley badly; boxes of :math:`x = T(z -
z^*)`, :math:`T = SV^\top` from :math:`H = USV^\top`, are parallelepipeds aligned with it, in
which the target is nearly isotropic (:math:`\|x\| = \|H(z - z^*)\|`).

Coordinates and density
-----------------------
:math:`z = z^* + Ax`, :math:`A = T^{-1} = VS^{-1}` (floats, taken as exact; :math:`x` is the
exact preimage :math:`A^{-1}(z - z^*)`). In :math:`x` the target's density w.r.t. Lebesgue
measure is :math:`t(x) = f(z)J(u)|\det A|`. The x-box :math:`[-X, X]` (per-axis :math:`X_k`,
public given :math:`z^*, A`: it contains :math:`T(\text{lattice box} - z^*)`) is cut into a
dyadic lattice of :math:`2^{32}` cells per axis, and the leaves of a k-d partition of it are
dyadic boxes of that lattice (:class:`~dpcore.sampling.bundle_lattice.LeafIndex`).

Proposal
--------
:math:`q = \beta q_1 + \beta_e q_e + \alpha q_0` (probabilities exact dyadic rationals):

* :math:`q_1(x) = \frac1S\sum_s c_s e^{-\|x\|/\sigma_s}`,
  :math:`c_s = 1/(|S^{D-1}|\Gamma(D)\sigma_s^D)`: :math:`x = r\xi`,
  :math:`r \sim \mathrm{Gamma}(D, \sigma_s)`, :math:`\xi` uniform on :math:`S^{D-1}` (in
  four dimensions :math:`c_s = 1/(12\pi^2\sigma_s^4)`);
* :math:`q_e(x) = W_B/(W\,\mathrm{vol}(B))` on leaf :math:`B` (integer weights
  :math:`W_B \ge 1`, :class:`~dpcore.sampling.floatsafe.IntegerWeights`), uniform in it;
* :math:`q_0`: a lattice cell of the whole output lattice box uniformly, then a point
  uniformly in it (:math:`z_K + \gamma(U - \tfrac12)`); its density in :math:`x` is
  :math:`|\det A|/\mathrm{vol}_z`. It only serves float safety (below); the certificate
  ignores it (:math:`q \ge \beta q_1` and :math:`q \ge \beta_e q_e`).

Certificate :math:`t \le Mq` on :math:`T(D_L - z^*)`
-----------------------------------------------------
For each leaf :math:`B` (padded by one x-lattice spacing plus :math:`10^{-12}X_k`, which
covers the float error of :math:`\hat x = \mathrm{fl}(T(z - z^*))` by which a proposal is
looked up; :math:`\|T\|\,\|z - z^*\|\,4u` is far below it), :math:`x = c + h\varepsilon`,
the region :math:`\{z^* + A(c + h\varepsilon)\}` is a parallelepiped of :math:`z` with centre
:math:`\mathrm{fl}(z^* + Ac)` and basis :math:`\mathrm{fl}(A\,\mathrm{diag}\,h)`; their
rounding (at most :math:`4u` times the magnitudes that entered, doubled) is the coordinate
slack :math:`\zeta` of :meth:`WhitenedBundleSampler._parallelepipeds`. Over it the subclass's
``_bounds`` proves :math:`g \ge g_B`, :math:`J \le J_B` and :math:`\|P'G - x\| \le e_B`, with
:math:`P = Q^\top` from the thin QR decomposition of the Jacobian at the fit, :math:`P' =
U^\top P` (so that :math:`P'G \approx T(z - z^*) = x` near the fit; rows orthonormal up to
rounding, :math:`\kappa \ge \|P'\|_2` from :math:`\|P'P'^\top - I\|_F`). Then

1. :math:`t \le e^{b_e}`, :math:`b_e = -g_B/\sigma + \log J_B + \log|\det A|`;
2. :math:`g \ge \|P'G\|/\kappa` and :math:`\|P'G\| \ge \|x\| - e_B`, so
   :math:`-g/\sigma + \|x\|/\sigma_s \le -\delta_s m_B + e_B/(\kappa\sigma)`
   (:math:`\delta_s = 1/(\kappa\sigma) - 1/\sigma_s > 0`, :math:`m_B = \min_B\|x\|`) and
   :math:`\le -g_B/\sigma + \max_B\|x\|/\sigma_s`; :math:`t/q_1 \le e^{b_1}`,
   :math:`b_1 = \min_s(\dots - \log c_s) + \log J_B + \log|\det A| + \log S`.

So :math:`t/q \le \min(e^{b_1}/\beta,\ e^{b_e}W\mathrm{vol}(B)/(W_B\beta_e))` on :math:`B`,
and :math:`M` is the largest over the leaves (each bound with a relative margin of
:math:`10^{-10}` for the float evaluation of these formulas). Leaves that surely miss the
support (their parallelepiped's hull misses it) are dropped; a leaf without a bound yet
(``inf``) is split before any draw.

When the fit lies outside the support, the refinement is steered by an estimate of the
target's mass on the support instead of the mode's Laplace mass, and :math:`q_1` covers only
leaves below the support's level (:mod:`~dpcore.sampling.bundle_support`; steering only, no
bound depends on it).

Sampling, exactness, float safety
---------------------------------
A proposal :math:`z` (from any component) gets the output cell :math:`K` of
:math:`z` (released if accepted), :math:`\hat x = \mathrm{fl}(T(z - z^*))` and the leaf
holding :math:`\hat x`. Outside :math:`D_L`: rejected. Inside, no leaf (the partition would
be broken) or a ratio :math:`t/(Mq)` above :math:`1 + 10^{-9}` raises
:class:`~dpcore.exceptions.EnvelopeViolation` and nothing is released; else accept with
probability :math:`t/(Mq)` by :func:`~dpcore.sampling.floatsafe.bernoulli_exp`. The accepted
:math:`z` has density :math:`\propto fJ` on :math:`D_L` (rejection sampling, in exact
arithmetic). Every cell :math:`K \in D_L` is released with positive probability for every data
set: :math:`q_0` proposes the float :math:`z_K` itself (at :math:`U = \tfrac12`, a value of
``rng.random()``) with positive probability, and its acceptance probability is positive because
:math:`t` and :math:`q` are finite and positive there (:meth:`WhitenedBundleSampler.reachable`).
The run time depends on the data (a timing side channel, as for every exact sampler here).
"""

from __future__ import annotations

import math

import numpy as np

from .._progress import report
from ..exceptions import EnvelopeViolation
from .bundle_lattice import LeafIndex
from .bundle_sampler import LatticeDraws, _logsumexp, accept_batch, at_depth, excess_split
from .bundle_support import closest_support_point, support_log_mass
from .floatsafe import IntegerWeights
from .radial import log_kfnorm_mass

__all__ = ["WhitenedBundleSampler"]

_MARGIN = 1e-10
_U = 2.0**-53
_LEVELS = 32
#: Deepest leaf, in splits summed over the axes, per axis (64 in the four dimensions of
#: :math:`T\mathbb{R}^2`; 96 in the six of :math:`T\mathbb{R}^3`, whose leaves near the fit at
#: n eps = 1e5 needed more than 64).
_DEPTH_PER_AXIS = 16
_ALPHA_BITS = 24


class WhitenedBundleSampler(LatticeDraws):
    r"""Exact joint-regression KNG certified over whitened leaves (module docstring); a base
    class: subclasses give ``_fit``, ``_log_volume``, ``_g`` and ``_bounds``.

    Parameters
    ----------
    t : array (n,)
        Covariates in [-1, 1].
    y : array (n, ...)
        Responses.
    tau : float
        Residual clipping bound.
    sigma : float
        KNG scale.
    lattice : ProductBallLattice
        Public support and output lattice (e.g. :class:`~dpcore.sampling.bundle_lattice.
        FlatLattice`).
    draws : int
        Draws the sampler will serve (refinement stops once more boxes would cost more than
        the proposals they save).
    start : array (D,), optional
        Start of the fit (default: the subclass's).
    sigma_ratios : sequence of float
        Scales of the K-norm components relative to :math:`\sigma` (each > 1).
    slack : float
        Log-factor by which :math:`q_1`'s bound may exceed its value at the fit.
    acceptance_goal : float
        Stop refining once the estimated acceptance reaches this.
    box_cost : float
        Cost of certifying one box, in proposals.
    max_boxes : int
        Largest number of leaves.
    progress : callable, optional
        ``progress(fraction)`` of the envelope's construction, after every round.
    """

    def __init__(self, t, y, tau, sigma, lattice, *, draws=1, start=None,
                 sigma_ratios=(1.25, 2.0, 4.0, 16.0), slack=1.0, acceptance_goal=0.2,
                 box_cost=40.0, max_boxes=20_000, progress=None):
        self.t = np.asarray(t, dtype=float).reshape(-1)
        self.y = np.asarray(y, dtype=float)
        if np.any(np.abs(self.t) > 1):
            raise ValueError("Covariates must lie in [-1, 1].")
        self.tau, self.sigma = float(tau), float(sigma)
        self.lattice = lat = lattice
        self.dim = int(lat.dim)
        self._max_depth = _DEPTH_PER_AXIS * self.dim
        self.draws, self.box_cost = int(draws), float(box_cost)
        self.acceptance_goal, self.max_boxes = float(acceptance_goal), int(max_boxes)
        self.slack = float(slack)
        self.fit, jac = self._fit(start)
        self._whiten(jac)
        self.scales = np.asarray(sigma_ratios, dtype=float).reshape(-1) * self.sigma
        if not np.all(self.scales > self.kappa * self.sigma * (1 + 1e-9)):
            raise ValueError("Every entry of `sigma_ratios` must exceed 1.")
        # q_{1,s}(x) = c_s e^{-|x|/sigma_s}, 1/c_s = |S^{D-1}| Gamma(D) sigma_s^D
        self.log_c1 = -log_kfnorm_mass(self.dim, self.scales)
        self.log_k = math.log(self.scales.size)
        log_j_fit = float(self._log_volume(self.fit[None])[0])
        self.log_m1_target = (log_j_fit + self.log_det_a
                              - float(np.max(self.log_c1)) + self.log_k + self.slack)
        # Laplace (K-norm) estimate of the target's mass: steers the refinement only.
        self.log_mode_mass = (float(log_kfnorm_mass(self.dim, self.sigma)) + log_j_fit
                              + self.log_det_a)
        self.laplace_log_mass = self.log_mode_mass      # kept for reports
        self.x_near = closest_support_point(self.lattice, self.fit, self.x_of)
        self.log_support_mass = None
        if self.x_near is not None:
            # The fit lies outside the support (bundle_support): steer by the support's own
            # mass, and let q1 (centred at the fit) cover only leaves where the target is below
            # its largest value on the support, about e^{-|x_near|/sigma} times its value at
            # the fit (g ~ |x|). Any threshold gives a valid certificate (M is the largest
            # bound over the leaves).
            self.log_support_mass = support_log_mass(self, self.x_near)
            self.log_mode_mass = self.log_support_mass
            self.log_m1_target -= float(np.linalg.norm(self.x_near)) / self.sigma
        self._x_lattice()
        self.evaluations = 0
        self._watch_build(progress)
        self._refine()
        self._finalize()

    # ------------------------------------------------------------------ the space's part
    def _fit(self, start):
        """Coordinates of the clipped fit (from ``start``, or the subclass's default) and the
        Jacobian of the gradient there, ``(rows, D)`` (any fit keeps the sampler exact)."""
        raise NotImplementedError

    def _log_volume(self, z):
        """Log of the volume density :math:`J` at coordinates ``(m, D)``."""
        raise NotImplementedError

    def _g(self, z):
        """:math:`g = |G|` at coordinates ``(m, D)`` (the library's definition)."""
        raise NotImplementedError

    def _parallelepipeds(self, lo, hi):
        """Centres, bases, slacks and hulls of padded leaves (module docstring)."""
        c = 0.5 * lo + 0.5 * hi
        h = (0.5 * hi - 0.5 * lo) * (1 + 4 * _U) + self.pad
        zc = self.fit + c @ self.A.T
        basis = self.A[None, :, :] * h[:, None, :]
        mag = np.abs(self.fit) + np.abs(c) @ np.abs(self.A).T + h @ np.abs(self.A).T
        zslack = 16 * _U * mag + 1e-300
        reach = np.sum(np.abs(basis), axis=-1) + zslack
        return c, h, zc, basis, zslack, zc - reach, zc + reach

    @staticmethod
    def _x_extent(c, h):
        """Smallest and largest :math:`|x|` over whitened boxes ``c +- h`` (rounded outward)."""
        lo, hi = c - h, c + h
        gap = np.maximum(np.maximum(lo, -hi), 0.0)
        x_min = np.sqrt(np.sum(gap * gap, axis=-1)) * (1 - 1e-12)
        x_max = np.sqrt(np.sum(np.maximum(np.abs(lo), np.abs(hi)) ** 2, axis=-1)) * (1 + 1e-12)
        return x_min, x_max

    # ------------------------------------------------------------------ set-up
    def _whiten(self, jac):
        q, _ = np.linalg.qr(jac)
        p = q.T
        h = p @ jac
        u, s, vt = np.linalg.svd(h)
        s = np.maximum(s, 1e-6 * max(s[0], 1e-300))
        self.P = u.T @ p                                    # P' (D x rows of DG)
        self.T = s[:, None] * vt                            # x = T (z - z*)
        self.A = vt.T / s[None, :]                          # z = z* + A x
        if np.max(np.abs(self.A @ self.T - np.eye(self.dim))) > 1e-12:
            raise ValueError("The linearisation at the fit is too ill-conditioned.")
        self.log_det_a = -float(np.sum(np.log(s)))
        gram = self.P @ self.P.T - np.eye(self.dim)
        self.kappa = math.sqrt(1.0 + float(np.sqrt(np.sum(gram * gram))) + 1e-12) + 1e-12

    def _x_lattice(self):
        lat = self.lattice
        corners = np.array(np.meshgrid(*[[-1.0, 1.0]] * self.dim, indexing="ij")).reshape(
            self.dim, -1).T
        z = corners * lat.half
        x = (z - self.fit) @ self.T.T
        self.x_half = np.max(np.abs(x), axis=0) * 1.01 + 1e-9
        self.x_origin = -self.x_half
        self.x_spacing = 2.0 * self.x_half / 2.0**_LEVELS
        self.pad = self.x_spacing + 1e-12 * self.x_half

    def x_of(self, z):
        """Whitened coordinates ``fl(T (z - z*))`` of ``(m, D)`` chart coordinates."""
        return (np.asarray(z, dtype=float) - self.fit) @ self.T.T

    def x_index(self, x):
        """x-lattice cells of whitened coordinates (clipped to just outside the box)."""
        with np.errstate(invalid="ignore", over="ignore"):
            k = np.floor((np.asarray(x, dtype=float) - self.x_origin) / self.x_spacing)
        k = np.nan_to_num(k, nan=-1.0, posinf=2.0**_LEVELS, neginf=-1.0)
        return np.clip(k, -1, 2**_LEVELS).astype(np.int64)

    def _x_box(self, lo_idx, lev):
        size = np.left_shift(np.int64(1), _LEVELS - np.asarray(lev, dtype=np.int64))
        lo = self.x_origin + self.x_spacing * lo_idx
        hi = self.x_origin + self.x_spacing * (lo_idx + size)
        return lo, hi

    # ------------------------------------------------------------------ bounds
    def _bounds(self, lo_idx, lev):
        r"""(keep, b_e, b_1, log volume, b_est, score (m, D)) of the leaves with corners
        ``lo_idx`` and levels ``lev`` in the x-lattice (module docstring, "Certificate"):
        ``keep`` drops leaves whose parallelepiped surely misses the support, ``b_* = inf``
        marks a leaf without a bound yet (it is split before any draw), ``b_est`` estimates
        :math:`\log t` on the leaf (steering only) and ``score`` ranks the axes to split."""
        raise NotImplementedError

    # ------------------------------------------------------------------ refinement
    _FIELDS = ("lo_idx", "lev", "b_e", "b_1", "log_vol", "b_est", "score")

    def _leaf_values(self, lo_idx, lev):
        keep, *vals = self._bounds(lo_idx, lev)
        return keep, tuple(val[keep] for val in (lo_idx, lev, *vals))

    def _state(self):
        env = self.b_1 > self.log_m1_target
        log_mass = np.where(env, self.b_e + self.log_vol, -np.inf)
        log_t = _logsumexp(log_mass)
        log_m1 = float(np.max(self.b_1[~env])) if np.any(~env) else -np.inf
        log_m = np.logaddexp(log_m1, log_t)
        return log_m, self.log_mode_mass, env, log_mass

    def _refine(self):
        d = self.dim
        self._reset_leaves(lo_idx=np.zeros((0, d), dtype=np.int64),
                           lev=np.zeros((0, d), dtype=np.int64), b_e=np.zeros(0),
                           b_1=np.zeros(0), log_vol=np.zeros(0), b_est=np.zeros(0),
                           score=np.zeros((0, d)))
        self._add(np.zeros((1, d), dtype=np.int64), np.zeros((1, d), dtype=np.int64))
        self.rounds = 0
        self._descending = True
        while True:
            boxes = self.lo_idx.shape[0]
            room = self.max_boxes - boxes
            open_ = ~np.isfinite(self.b_e)
            if np.any(open_):
                if room < 1:
                    raise RuntimeError("max_boxes reached before the support was covered.")
                self._split(np.flatnonzero(open_)[:room])
                continue
            if self._descending and self.x_near is None:
                hold = self.leaf_of_x(np.zeros((1, self.dim)))[0]
                if (hold >= 0 and self.b_1[hold] > self.log_m1_target and room >= 1
                        and self.lev[hold].sum() < self._max_depth and self.rounds < 200):
                    self._split(np.array([hold]))
                    self.rounds += 1
                    continue
                self._descending = False
            log_m, log_z, env, log_mass = self._state()
            if self._refined_enough(log_m, log_z, boxes):
                break
            split = excess_split(env, log_mass, np.minimum(self.b_est, self.b_e) + self.log_vol,
                                 log_m, at_depth(self.lev, _LEVELS)
                                 | (self.lev.sum(axis=1) >= self._max_depth), room)
            if split.size == 0:
                break
            self._split(split)
            self.rounds += 1

    def leaf_of_x(self, x):
        """Leaf holding each whitened point ``(m, D)`` (-1 where none; during refinement)."""
        k = self.x_index(x)
        size = np.left_shift(np.int64(1), _LEVELS - self.lev)
        out = np.full(k.shape[0], -1, dtype=np.int64)
        for i in range(k.shape[0]):
            hit = np.flatnonzero(np.all((self.lo_idx <= k[i]) & (k[i] < self.lo_idx + size),
                                        axis=1))
            if hit.size:
                out[i] = hit[0]
        return out

    def _split(self, split):
        lev = self.lev[split]
        score = np.where(lev >= _LEVELS, -1.0, self.score[split])
        axis = np.argmax(score, axis=1)
        self._halve(split, axis, _LEVELS)

    def _finalize(self):
        self._seal_leaves()
        env = self.b_1 > self.log_m1_target
        log_mass = np.where(env, self.b_e + self.log_vol, -np.inf)
        log_m1 = float(np.max(self.b_1[~env])) if np.any(~env) else -np.inf
        if np.any(env):
            log_t = _logsumexp(log_mass)
        else:
            log_t = -np.inf
            log_mass = np.zeros_like(log_mass)
        self.alpha = 2.0**-_ALPHA_BITS
        share = 1.0 / (1.0 + math.exp(min(log_t - log_m1, 700.0))) if np.isfinite(log_m1) else 0.0
        beta = min(max(math.floor(share * 2.0**53), 1), 2**53 - 2**(53 - _ALPHA_BITS) - 1)
        self.beta_units = beta                               # out of 2^53
        self.beta = beta / 2.0**53
        self.beta_e = 1.0 - self.beta - self.alpha
        self.weights = IntegerWeights(log_mass)
        w = self.weights.weights.astype(float)
        log_ratio_env = (self.b_e + self.log_vol + math.log(float(self.weights.total))
                         - np.log(w) - math.log(self.beta_e))
        log_ratio_q1 = self.b_1 - math.log(self.beta)
        self.log_m = float(np.max(np.minimum(log_ratio_env, log_ratio_q1))) + 1e-12
        self.size = np.left_shift(np.int64(1), _LEVELS - self.lev)
        self.leaves = LeafIndex(self.lo_idx, self.lev, _LEVELS)
        self.log_vol_cells = np.sum(np.log(self.x_spacing * self.size), axis=-1)
        lat = self.lattice
        self.log_q0 = self.log_det_a - float(np.sum(np.log(2.0 * lat.half)))

    # ------------------------------------------------------------------ densities
    def log_target(self, z):
        """:math:`\\log t = -g/\\sigma + \\log J + \\log|\\det A|` at chart coordinates."""
        return -self._g(z) / self.sigma + self._log_volume(z) + self.log_det_a

    def log_proposal(self, x, leaf):
        """:math:`\\log q` at whitened points in the given leaves."""
        r = np.sqrt(np.sum(x * x, axis=-1))
        log_q1 = np.logaddexp.reduce(self.log_c1[:, None] - r[None, :] / self.scales[:, None],
                                     axis=0) - self.log_k
        w = self.weights.weights[leaf].astype(float)
        log_qe = np.log(w) - math.log(float(self.weights.total)) - self.log_vol_cells[leaf]
        out = np.logaddexp(math.log(self.beta) + log_q1, math.log(self.beta_e) + log_qe)
        return np.logaddexp(out, math.log(self.alpha) + self.log_q0)

    def log_acceptance(self, z, x, leaf):
        """:math:`\\log(t/(Mq))` (<= 0 where the certificate holds)."""
        return self.log_target(z) - self.log_m - self.log_proposal(x, leaf)

    # ------------------------------------------------------------------ sampling
    def _propose(self, m, rng):
        lat = self.lattice
        units = rng.integers(0, 2**53, m, dtype=np.int64)
        comp = np.where(units < self.beta_units, 0,
                        np.where(units >= 2**53 - 2**(53 - _ALPHA_BITS), 2, 1))
        d = self.dim
        z, hint = np.empty((m, d)), np.full(m, -1, dtype=np.int64)
        index = np.empty((m, d), dtype=np.int64)
        one = comp == 0
        if one.any():
            k1 = int(one.sum())
            xi = rng.standard_normal((k1, d))
            xi /= np.linalg.norm(xi, axis=1, keepdims=True)
            s = rng.integers(0, self.scales.size, k1)
            r = rng.gamma(float(d), self.scales[s])
            z[one] = self.fit + (r[:, None] * xi) @ self.A.T
        env = comp == 1
        if env.any():
            leaf = self.weights.draw(int(env.sum()), rng)
            hint[env] = leaf
            lo, hi = self._x_box(self.lo_idx[leaf], self.lev[leaf])
            x = lo + (hi - lo) * rng.random(lo.shape)
            z[env] = self.fit + x @ self.A.T
        zero = comp == 2
        rest = ~zero
        index[rest] = lat.index_of(z[rest])
        if zero.any():
            k0 = int(zero.sum())
            kk = rng.integers(0, 2**lat.levels, (k0, d), dtype=np.int64)
            index[zero] = kk
            z[zero] = lat.coordinates(kk) + lat.spacing * (rng.random((k0, d)) - 0.5)
        return z, index, hint

    def _ratios(self, z, index, hint=None):
        """(support mask, leaf, log acceptance) of proposals (``hint``: the leaves they were
        drawn in, to try first); raises on a broken certificate."""
        ok = self.lattice.in_support(index)
        leaf = np.full(z.shape[0], -1, dtype=np.int64)
        log_acc = np.full(z.shape[0], -np.inf)
        if np.any(ok):
            x = self.x_of(z[ok])
            leaf[ok] = self.leaves.lookup(self.x_index(x), None if hint is None else hint[ok])
            if np.any(leaf[ok] < 0):
                raise EnvelopeViolation("A support point has no leaf: the partition is broken.")
            log_acc[ok] = self.log_acceptance(z[ok], x, leaf[ok])
        return ok, leaf, log_acc

    def sample_indices(self, size, rng, progress=None):
        """``size`` exact draws as output-lattice indices ``(size, D)``; returns
        ``(indices, proposals)``. ``progress(have / size)`` after every batch.

        Raises
        ------
        EnvelopeViolation
            If a proposal's acceptance ratio exceeds ``1 + 1e-9``.
        """
        out, have, tried = [], 0, 0
        batch = int(min(20_000, max(16, 3 * size / max(self.acceptance_estimate, 1e-4))))
        batch = min(batch, max(16, 8_000_000 // max(self.t.size, 1)))   # memory: (batch, n) arrays
        while have < size:
            z, index, hint = self._propose(batch, rng)
            ok, _, log_acc = self._ratios(z, index, hint)
            hits, used = accept_batch(log_acc, rng, size - have)   # -inf outside the support
            tried += used
            out.append(index[hits])
            have += hits.size
            report(progress, have / size)
        return np.concatenate(out)[:size], tried

    def reachable(self, index):
        """Whether each output index is released with positive probability (module docstring:
        :math:`q_0` proposes the lattice point itself)."""
        index = np.asarray(index, dtype=np.int64)
        z = self.lattice.coordinates(index)
        ok, _, log_acc = self._ratios(z, index)
        return ok & np.isfinite(log_acc)
