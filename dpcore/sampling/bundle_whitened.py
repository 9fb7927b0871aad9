r"""Exact joint KNG for geodesic regression on :math:`S^2`, certified over boxes of *whitened*
coordinates (issue 28 point 1; prototype, not wired into the releases).

Same target, public support, output lattice and release rule as
:mod:`dpcore.sampling.bundle_sampler` (read its docstring first): draws of :math:`z = (u, w)`
with density :math:`f(z)J(u)`, :math:`f = e^{-g/\sigma}`, on the public support :math:`D_L`,
released as the public lattice cell of the accepted :math:`z`. What changes is the geometry of
the certificate.

Why (measured, ``benchmarks/bench_bundle_whitened.py``)
------------------------------------------------------
Near the fit :math:`z^*` the target is :math:`\approx e^{-\|H(z - z^*)\|/\sigma}` with
:math:`H` of singular values about (1.2, 0.9, 0.08, 0.07) at n = 250: the mode is a thin valley
*tilted* against the chart's axes (the intercept / slope correlation of any regression
design, not a curvature effect). Axis-aligned boxes of the chart tile a tilted thin valley
badly; boxes of :math:`x = T(z - z^*)`, :math:`T = SV^\top` from :math:`H = USV^\top`, are
parallelepipeds aligned with it, in which the target is nearly isotropic
(:math:`\|x\| = \|H(z - z^*)\|`).

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

* :math:`q_1(x) = \frac1S\sum_s c_s e^{-\|x\|/\sigma_s}`, :math:`c_s = 1/(12\pi^2\sigma_s^4)`:
  :math:`x = r\xi`, :math:`r \sim \mathrm{Gamma}(4, \sigma_s)`, :math:`\xi` uniform on
  :math:`S^3` (in D dimensions, as for :math:`T\mathbb{R}^d` in
  :mod:`~dpcore.sampling.bundle_flat`: :math:`c_s = 1/(|S^{D-1}|\Gamma(D)\sigma_s^D)`,
  :math:`r \sim \mathrm{Gamma}(D, \sigma_s)`, :math:`\xi` uniform on :math:`S^{D-1}`);
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
slack of :func:`~dpcore.sampling.sphere_affine.enclose_gradient_parallelepiped`, which returns
:math:`G = G_0 + L\varepsilon + \xi`, :math:`|\xi| \le E`, valid pointwise. Then, exactly as in
:mod:`~dpcore.sampling.bundle_sampler` with :math:`H(z - z^*)` replaced by
:math:`Ux = H(z - z^*)` and :math:`P` by :math:`P' = U^\top P` (rows orthonormal up to
rounding; :math:`\kappa \ge \|P'\|_2` from :math:`\|P'P'^\top - I\|_F`):

1. :math:`g \ge g_B` (the larger of the box bound and the bound along
   :math:`G_0/|G_0|`, :func:`~dpcore.sampling.sphere_affine.lower_bound_along`), so
   :math:`t \le e^{b_e}`, :math:`b_e = -g_B/\sigma + \log J_B + \log|\det A|`,
   :math:`J_B = \mathrm{sinc}(\min|u|)` over the parallelepiped's hull;
2. :math:`g \ge \|P'G\|/\kappa` and :math:`P'G = x + e`,
   :math:`e = (P'G_0 - c) + (P'L - \mathrm{diag}\,h)\varepsilon + P'\xi`, :math:`\|e\| \le e_B`
   (interval arithmetic), so
   :math:`-g/\sigma + \|x\|/\sigma_s \le -\delta_s m_B + e_B/(\kappa\sigma)`
   (:math:`\delta_s = 1/(\kappa\sigma) - 1/\sigma_s > 0`, :math:`m_B = \min_B\|x\|`) and
   :math:`\le -g_B/\sigma + \max_B\|x\|/\sigma_s`; :math:`t/q_1 \le e^{b_1}`,
   :math:`b_1 = \min_s(\dots - \log c_s) + \log J_B + \log|\det A| + \log S`.

So :math:`t/q \le \min(e^{b_1}/\beta,\ e^{b_e}W\mathrm{vol}(B)/(W_B\beta_e))` on :math:`B`,
and :math:`M` is the largest over the leaves (each bound with a relative margin of
:math:`10^{-10}` for the float evaluation of these formulas). Leaves that surely miss the
support (their parallelepiped's hull misses it) are dropped; a leaf whose hull leaves the
chart's domain :math:`|u| < \pi` has no bound yet and is split before any draw.

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

Cost: the affine enclosures alone leave 99.9% of the envelope's mass far from the fit
(docs/measurements.md, "The whitened sampler's cost"); the far-field and flat certificates
(:mod:`~dpcore.sampling.bundle_farfield`, :mod:`~dpcore.sampling.bundle_flat`) cover it.
"""

from __future__ import annotations

import math

import numpy as np

from .._progress import report
from ..exceptions import EnvelopeViolation
from .bundle_lattice import LeafIndex
from .bundle_sampler import (
    LatticeDraws,
    _g_library,
    _logsumexp,
    accept_batch,
    clipped_fit,
    excess_split,
)
from .bundle_support import closest_support_point, support_log_mass
from .floatsafe import IntegerWeights
from .intervals import Interval, sinc_at
from .radial import log_kfnorm_mass
from .sphere_affine import enclose_gradient_parallelepiped, lower_bound_along
from .sphere_taylor import enclose_gradient_taylor, fold_quadratic, lower_bound_along_quadratic

__all__ = ["WhitenedBundleSampler"]

_MARGIN = 1e-10
_U = 2.0**-53
_LEVELS = 32
#: Deepest leaf, in splits summed over the axes, per axis (64 in the four dimensions of
#: :math:`TS^2` and :math:`T\mathbb{R}^2`; 96 in the six of :math:`T\mathbb{R}^3`, whose
#: leaves near the fit at n eps = 1e5 needed more than 64).
_DEPTH_PER_AXIS = 16
#: Domain margin: parallelepipeds must stay inside |u| <= pi - this.
_DOMAIN = 1e-3
_ALPHA_BITS = 24


class WhitenedBundleSampler(LatticeDraws):
    r"""Exact joint-regression KNG on :math:`S^2` certified over whitened boxes (module
    docstring).

    Parameters
    ----------
    t : array (n,)
        Covariates in [-1, 1].
    y : array (n, 3)
        Unit responses.
    tau : float
        Residual clipping bound.
    sigma : float
        KNG scale.
    lattice : BundleLattice
        Public support and output lattice.
    draws : int
        Draws the sampler will serve (refinement stops once more boxes would cost more than
        the proposals they save).
    start : array (4,), optional
        Start of the fit (default: the unclipped least-squares fit's coordinates).
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
    enclosure : {"affine", "taylor"}
        Enclosure of the gradient over a leaf: first-order affine arithmetic
        (:func:`~dpcore.sampling.sphere_affine.enclose_gradient_parallelepiped`) or the
        second-order Taylor model (:func:`~dpcore.sampling.sphere_taylor.
        enclose_gradient_taylor`; 3 to 6 times tighter on small leaves, about 2.5 times the
        cost; its quadratic part is folded into the error for the bounds below, and also
        enters the bound along :math:`G_0/|G_0|`,
        :func:`~dpcore.sampling.sphere_taylor.lower_bound_along_quadratic`).
    progress : callable, optional
        ``progress(fraction)`` of the envelope's construction, after every round.
    """

    def __init__(self, t, y, tau, sigma, lattice, *, draws=1, start=None,
                 sigma_ratios=(1.25, 2.0, 4.0, 16.0), slack=1.0, acceptance_goal=0.2,
                 box_cost=40.0, max_boxes=20_000, enclosure="affine", progress=None):
        self.t = np.asarray(t, dtype=float).reshape(-1)
        self.y = np.asarray(y, dtype=float)
        if np.any(np.abs(self.t) > 1):
            raise ValueError("Covariates must lie in [-1, 1].")
        self.tau, self.sigma = float(tau), float(sigma)
        self.lattice = lat = lattice
        self.chart = getattr(lat, "chart", None)
        self.dim = int(getattr(lat, "dim", 4))
        self._max_depth = _DEPTH_PER_AXIS * self.dim
        self.draws, self.box_cost = int(draws), float(box_cost)
        self.acceptance_goal, self.max_boxes = float(acceptance_goal), int(max_boxes)
        self.slack = float(slack)
        if enclosure not in ("affine", "taylor"):
            raise ValueError("`enclosure` must be 'affine' or 'taylor'.")
        self.enclosure = enclosure
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
        """Coordinates of the clipped fit (Gauss-Newton from ``start``, default the unclipped
        fit's) and the Jacobian of the gradient there (any fit keeps the sampler exact)."""
        if start is None:
            from .bundle_sampler import BundleKNGSampler
            start = BundleKNGSampler._unclipped_start(self)
        return clipped_fit(self.chart, self.t, self.y, self.tau, start)

    def _log_volume(self, z):
        """Log of the volume density :math:`J` of the chart at coordinates ``(m, D)``."""
        return np.log(np.maximum(self.chart.volume_density(z[:, :2]), 1e-300))

    def _g(self, z):
        """:math:`g = |G|` at coordinates ``(m, D)`` (the library's definition)."""
        return _g_library(self.chart, z, self.t, self.y, self.tau)

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
        self.P = u.T @ p                                    # P' (4 x 6)
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
        """(keep, b_e, b_1, log volume, b_est, score (m, 4)) of leaves; ``b_* = inf`` where
        the parallelepiped leaves the chart's domain."""
        lo, hi = self._x_box(lo_idx, lev)
        m = lo.shape[0]
        c, h, zc, basis, zslack, zlo, zhi = self._parallelepipeds(lo, hi)
        keep = ~self.lattice.misses(zlo, zhi)
        gap = np.maximum(np.maximum(zlo[:, :2], -zhi[:, :2]), 0.0)
        u_far = np.hypot(np.maximum(np.abs(zlo[:, 0]), np.abs(zhi[:, 0])),
                         np.maximum(np.abs(zlo[:, 1]), np.abs(zhi[:, 1])))
        ok = keep & (u_far < math.pi - _DOMAIN)
        b_e, b_1 = np.full(m, np.inf), np.full(m, np.inf)
        b_est = np.zeros(m)
        score = np.sum(np.abs(basis), axis=1)               # z-reach of each axis
        log_vol = np.sum(np.log(hi - lo), axis=-1)
        idx = np.flatnonzero(ok)
        if idx.size:
            args = (self.chart, zc[idx], basis[idx], zslack[idx], self.t, self.y, self.tau)
            if self.enclosure == "taylor":
                tm = enclose_gradient_taylor(*args)
                value, linear, error = fold_quadratic(tm)
            else:
                enc = enclose_gradient_parallelepiped(*args)
                value, linear, error = enc.value, enc.linear, enc.error
            self.evaluations += idx.size
            spread = np.sum(np.abs(linear), axis=-1) * (1 + 1e-15) + error
            box = Interval(value) + Interval._make(-spread, spread)
            g_box = Interval(box.mig()).square().sum(axis=-1).sqrt().lo
            norm = np.sqrt(np.sum(value * value, axis=-1, keepdims=True))
            direction = np.divide(value, norm * (1 + 1e-12), out=np.zeros_like(value),
                                  where=norm > 0)
            along = lower_bound_along(value, linear, error, direction)
            if self.enclosure == "taylor":
                along = np.maximum(along, lower_bound_along_quadratic(tm, direction))
            g_b = np.maximum(g_box, np.maximum(along, 0.0))
            u_min = np.hypot(gap[idx, 0], gap[idx, 1]) * (1 - 1e-15)
            log_j = np.log(sinc_at(u_min).hi) + 1e-15
            be = -g_b / self.sigma + log_j + self.log_det_a
            # e = (P'G0 - c) + (P'L - diag h) eps + P' xi
            P = self.P
            cc, hh = c[idx], h[idx]
            g0 = Interval(value)
            base = [(g0 * P[i]).sum(axis=-1) - cc[:, i] for i in range(4)]
            lin = [(Interval(linear) * P[i][None, :, None]).sum(axis=1)
                   - Interval(hh * (np.arange(4) == i)) for i in range(4)]
            e_vec = Interval.stack([b + Interval._make(-l.mag().sum(-1) * (1 + 1e-15),
                                                       l.mag().sum(-1) * (1 + 1e-15))
                                    for b, l in zip(base, lin, strict=True)], axis=-1)
            xi = Interval(error).square().sum(axis=-1).sqrt().hi * self.kappa
            e_norm = Interval(e_vec.mag()).square().sum().sqrt().hi + xi
            xb = Interval(cc - hh, cc + hh)
            m_b = Interval(xb.mig()).square().sum().sqrt().lo
            u_b = Interval(xb.mag()).square().sum().sqrt().hi
            b1 = np.full(idx.size, np.inf)
            for scale, log_c in zip(self.scales, self.log_c1, strict=True):
                delta = 1.0 / (self.kappa * self.sigma) - 1.0 / scale
                first = -delta * m_b + e_norm / (self.kappa * self.sigma)
                second = -g_b / self.sigma + u_b / scale
                b1 = np.minimum(b1, np.minimum(first, second) - log_c)
            b1 = b1 + log_j + self.log_det_a + self.log_k
            b_e[idx] = be + _MARGIN * (1 + np.abs(be))
            b_1[idx] = b1 + _MARGIN * (1 + np.abs(b1))
            # an estimate (not a bound) of log t on the leaf, to steer the refinement
            j_c = self.chart.volume_density(zc[idx, :2])
            g_c = _g_library(self.chart, zc[idx], self.t, self.y, self.tau)
            b_est[idx] = -g_c / self.sigma + np.log(j_c) + self.log_det_a
            # split where the gradient varies most and the per-term error grows fastest
            score[idx] = (np.sum(np.abs(linear), axis=1)
                          + np.sum(error, axis=1)[:, None] * score[idx]
                          / np.sum(score[idx], axis=1, keepdims=True))
        return keep, b_e, b_1, log_vol, b_est, score

    # ------------------------------------------------------------------ refinement
    _FIELDS = ("lo_idx", "lev", "b_e", "b_1", "log_vol", "b_est", "score")

    def _add(self, lo_idx, lev):
        keep, *vals = self._bounds(lo_idx, lev)
        for name, val in zip(self._FIELDS, (lo_idx, lev, *vals), strict=True):
            setattr(self, name, np.concatenate([getattr(self, name), val[keep]]))

    def _state(self):
        env = self.b_1 > self.log_m1_target
        log_mass = np.where(env, self.b_e + self.log_vol, -np.inf)
        log_t = _logsumexp(log_mass)
        log_m1 = float(np.max(self.b_1[~env])) if np.any(~env) else -np.inf
        log_m = np.logaddexp(log_m1, log_t)
        return log_m, self.log_mode_mass, env, log_mass

    def _refine(self):
        d = self.dim
        self.lo_idx = np.zeros((0, d), dtype=np.int64)
        self.lev = np.zeros((0, d), dtype=np.int64)
        self.b_e = self.b_1 = self.log_vol = self.b_est = np.zeros(0)
        self.score = np.zeros((0, d))
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
                                 log_m, np.any(self.lev >= _LEVELS, axis=-1)
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
