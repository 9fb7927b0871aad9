r"""Exact joint KNG for geodesic regression on :math:`S^2` at large :math:`n\epsilon`
(prototype, not wired into the releases).

The target
----------
Joint KNG draws :math:`(p, v)` from :math:`f(p, v) = \exp(-g(p, v)/\sigma)`,
:math:`g = \|\nabla E(p, v)\|` (Sasaki norm, residuals clipped to :math:`\tau`;
:func:`~dpcore.learning.regression.regression_gradient` is the definition), w.r.t. the Sasaki
volume on a public support. In the coordinates :math:`z = (u, w)` of
:class:`~dpcore.sampling.sphere_enclosure.SphereBundleChart` (public centre :math:`m_0`) its
density w.r.t. Lebesgue measure is :math:`f(z)\,J(u)`, :math:`J(u) = \sin|u|/|u|`.

**Support and lattice (public)**, :class:`~dpcore.sampling.bundle_lattice.BundleLattice`: the
support :math:`D_L` is a union of cells of a public lattice of :math:`[-R, R]^2\times[-V, V]^2`
(spacing :math:`2^{-32}` of the sides) inside :math:`|u| \le R`, :math:`|w| \le V`; membership
is a public function of the cell index :math:`K`. On :math:`S^2` the bound
:math:`\Delta = \sqrt{\Delta_p^2 + \Delta_v^2}` holds at every :math:`(p, v)` (curvature
:math:`\ge 0`, DESIGN §5), so KNG restricted to any public support is :math:`\epsilon`-DP with
:math:`\sigma = 2\Delta/\epsilon` (DESIGN §6); releasing the lattice cell of an exact draw is
post-processing.

The proposal
------------
:math:`q = \beta q_1 + (1 - \beta) q_e`:

* :math:`q_1 = \frac1S\sum_s q_{1,s}`, K-norm laws about the clipped fit :math:`z^*`
  (Gauss-Newton on :math:`G`, from the unclipped fit), at scales
  :math:`\sigma_s = ` ``sigma_ratios[s]`` :math:`\times\,\sigma`:
  :math:`q_{1,s}(z) = c_s \exp(-\|H(z - z^*)\|/\sigma_s)`,
  :math:`c_s = |\det H|/(12\pi^2\sigma_s^4)`, the law of :math:`z^* + H^{-1}(r\xi)` with
  :math:`r \sim \mathrm{Gamma}(4, \sigma_s)` and :math:`\xi` uniform on :math:`S^3` (in polar
  coordinates of :math:`\mathbb{R}^4` Lebesgue measure is :math:`r^3 dr\,d\xi`, and
  :math:`\int e^{-|x|/\sigma_s}dx = 2\pi^2\cdot 3!\,\sigma_s^4`). :math:`\tilde H = DG(z^*)`
  (:math:`6\times4`, from the dual enclosure of a point box), :math:`P = Q^\top` from its thin
  QR decomposition, :math:`H = P\tilde H`. Any :math:`z^*, H` keep the sampler exact; these make
  it efficient. Several scales because the target's mode is a thin curved valley (two
  singular values of :math:`\tilde H` are ~20 times smaller than the others at n = 250):
  the narrow scales carry the acceptance, the wide ones can be certified over the valley.
* :math:`q_e`: piecewise uniform on the leaves :math:`B` of a k-d partition of the lattice box
  into dyadic boxes of lattice cells: a leaf with probability :math:`W_B/W` (integer weights
  :math:`W_B \ge 1`, :class:`~dpcore.sampling.floatsafe.IntegerWeights`), a lattice cell of it
  uniformly (exact integer draws), a point uniformly in that cell
  (:math:`z_K + \gamma(U - \tfrac12)`). Leaves that surely miss the support are dropped.

The certificate :math:`fJ \le Mq` on :math:`D_L`
------------------------------------------------
Every leaf :math:`B` (padded by one lattice spacing, which covers the rounding of every float
proposed in it) gets the affine enclosure
(:func:`~dpcore.sampling.sphere_affine.enclose_gradient_affine`)
:math:`G(c + h\varepsilon) = G_0 + L\varepsilon + \xi`, :math:`|\xi_k| \le E_k`, valid pointwise,
and from it a rigorous lower bound :math:`g_B` of :math:`g`; :math:`J \le J_B =
\mathrm{sinc}(\min_B|u|)`. Then

1. :math:`fJ \le e^{b_e(B)}`, :math:`b_e = -g_B/\sigma + \log J_B`;
2. with :math:`\kappa \ge \|P\|_2` (:math:`\|P\|_2^2 \le 1 + \|PP^\top - I\|_F`),
   :math:`g(z) \ge \|PG(z)\|/\kappa` and, for :math:`z = c + h\varepsilon`,
   :math:`PG(z) = H(z - z^*) + e(z)` with
   :math:`e = PG_0 - H(c - z^*) + (PL - H\,\mathrm{diag}\,h)\varepsilon + P\xi`, whose norm is at
   most :math:`e_B` (interval arithmetic over :math:`\varepsilon \in [-1, 1]^4`). So
   :math:`-g/\sigma + \|H(z - z^*)\|/\sigma_s \le -\delta_s m_B + e_B/(\kappa\sigma)` with
   :math:`\delta_s = 1/(\kappa\sigma) - 1/\sigma_s > 0` and :math:`m_B \le \min_B\|H(z - z^*)\|`
   (the supremum of :math:`-\delta_s x` over :math:`x \ge m_B`); also
   :math:`\le -g_B/\sigma + \max_B\|H(z - z^*)\|/\sigma_s`. With :math:`q_1 \ge q_{1,s}/S`:
   :math:`fJ/q_1 \le e^{b_1(B)}`, :math:`b_1 = \min_s(\min(\dots) - \log c_s) + \log J_B +
   \log S`.

Since :math:`q \ge \beta q_1` and :math:`q \ge (1-\beta) q_e`, on :math:`B`:
:math:`fJ/q \le \min(e^{b_1}/\beta,\ e^{b_e}\mathrm{vol}(B)\,W/(W_B(1 - \beta)))`, and
:math:`M` is the largest of these over the leaves (plus :math:`10^{-12}` in the log; every
:math:`b` carries a relative margin of :math:`10^{-10}` for the float evaluation of these
few formulas). Leaves with :math:`b_1 \le \log M_1^\circ` (:math:`q_1` at the fit, times
``exp(slack)``) get weight 1, the others :math:`e^{b_e}\mathrm{vol}(B)`;
:math:`\beta = M_1/(M_1 + T)` rounded to a dyadic rational, :math:`M_1` the largest
:math:`e^{b_1}` of the former, :math:`T` the total weight of the latter.

**Refinement** (reads the data: a timing side channel, as for every exact sampler here): first
split the leaf holding the fit until :math:`q_1` certifies it; then split
the leaves with the largest excess (envelope mass minus an estimate of the target's mass)
along their longest side, until the estimated acceptance reaches ``acceptance_goal``, or more
boxes would cost more than the proposals they save (``box_cost`` proposals a box), or
``max_boxes``.

Sampling (exact)
----------------
Propose :math:`z \sim q` (:math:`q_1` with probability exactly :math:`\beta`, a dyadic rational,
then a scale uniformly by an exact integer draw), reject if the lattice cell of :math:`z` is not
in :math:`D_L`, else accept with probability :math:`f(z)J(z)/(M q(z)) \le 1`
(:func:`~dpcore.sampling.floatsafe.bernoulli_exp`, positive for every finite argument) and
release the index :math:`K` (for a :math:`q_e` proposal, the cell it was drawn in). The
accepted :math:`z` has density :math:`\propto fJ` on :math:`D_L` (rejection sampling; the
continuous law, in exact arithmetic). A ratio above :math:`1 + 10^{-9}` (a failed premise)
raises :class:`~dpcore.exceptions.EnvelopeViolation`; nothing is released.

Float safety (DESIGN §12)
-------------------------
The set of releasable indices is :math:`D_L` for every data set. (i) Nothing outside
:math:`D_L` is released (public test on :math:`K`). (ii) Every :math:`K \in D_L` is released
with positive probability: its leaf is kept (only leaves that surely miss the support are
dropped, and the leaves partition the lattice box), has weight :math:`W_B \ge 1`, the cell is
drawn with positive probability, and the in-cell offset :math:`\gamma(U - \tfrac12)` is exactly
0 at :math:`U = \tfrac12` (a value of ``rng.random()``), so the float :math:`z_K` is proposed
with positive probability, whatever :math:`z^*, H, M` are; its acceptance probability is
positive because :math:`g(z_K)` and :math:`q(z_K)` are finite.
:meth:`BundleKNGSampler.reachable` checks (ii) with that witness. The released point is a fixed
public float function of :math:`K` (:meth:`~dpcore.sampling.bundle_lattice.BundleLattice.point`).

Cost and limits
---------------
The certificate must cover the whole support, where :math:`g` has to be shown above about
:math:`\sigma\log(\mathrm{vol}/Z)`; near the data the clipped gradient has a kink surface per
residual at :math:`\theta_i = \tau`, so its enclosures are loose to first order there and the
boxes must be small. Measured (``benchmarks/bench_bundle_sampler.py``): far from the 10 s goal
at :math:`n\epsilon = 1000` on large supports; see the benchmark for figures.
:func:`~dpcore.sampling.bundle_cost.predict_bundle_cost` gives a public prediction.
Footpoint radius :math:`R \le 2.2` (the lattice box must stay inside the chart's domain
:math:`|u| < \pi`; the whole sphere needs a second chart), :math:`V \le \pi`, covariates in
:math:`[-1, 1]`.
"""

from __future__ import annotations

import math

import numpy as np

from .._progress import RefinementProgress, report
from ..exceptions import EnvelopeViolation
from .bundle_lattice import MAX_RADIUS, LeafIndex
from .floatsafe import IntegerWeights, bernoulli_exp
from .intervals import Interval, sinc_at
from .sphere_affine import enclose_gradient_affine
from .sphere_enclosure import gradient_norm
from .sphere_mean_value import enclose_gradient_mv

__all__ = ["BundleKNGSampler", "accept_batch", "clipped_fit", "excess_split"]

_MARGIN = 1e-10


def _logsumexp(x):
    x = np.asarray(x, dtype=float)
    if x.size == 0 or not np.any(np.isfinite(x)):
        return -np.inf
    top = float(np.max(x))
    return top + math.log(float(np.sum(np.exp(x - top))))


def _g_library(chart, z, t, y, tau):
    return gradient_norm(chart, z[:, :2], z[:, 2:], t, y, tau)


def _gradient6(chart, z, t, y, tau):
    from ..learning.regression import regression_gradient
    from ..manifolds import Sphere

    p, v = chart.to_bundle(z[:, :2], z[:, 2:])
    gp, gv = regression_gradient(Sphere(2), p, v, t, y, tau=tau)
    return np.concatenate([gp @ chart.frame.T, gv @ chart.frame.T], axis=-1)


def clipped_fit(chart, t, y, tau, start, steps=30):
    """Gauss-Newton on the clipped gradient in coordinates from ``start`` (4,); returns the
    fit and the Jacobian ``DG`` (6 x 4) there (from the dual enclosure of a point box)."""
    z = np.asarray(start, dtype=float).copy()
    for _ in range(steps):
        jac = enclose_gradient_mv(chart, z[None], z[None], t, y, tau).jacobian.mid()[0]
        g = _gradient6(chart, z[None], t, y, tau)[0]
        step = np.linalg.lstsq(jac, g, rcond=None)[0]
        z = z - step
        if np.linalg.norm(z[:2]) > MAX_RADIUS:
            z[:2] *= MAX_RADIUS / np.linalg.norm(z[:2])
        if np.linalg.norm(step) < 1e-13:
            break
    jac = enclose_gradient_mv(chart, z[None], z[None], t, y, tau).jacobian.mid()[0]
    return z, jac


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


def excess_split(env, log_mass, log_low, log_m, blocked, room):
    """The leaves one round of refinement splits: those whose envelope mass (``log_mass``,
    leaves ``env`` of the envelope) most exceeds their target estimate (``log_low``), together
    half the total excess, at most ``room``; ``blocked`` leaves are never split. Empty when no
    leaf has any excess (the refinement stops)."""
    excess = np.where(env, np.exp(log_mass - log_m) - np.exp(log_low - log_m), 0.0)
    excess[blocked] = 0.0
    if not np.any(excess > 0):
        return np.zeros(0, dtype=np.int64)
    order = np.argsort(excess)[::-1]
    cum = np.cumsum(excess[order])
    split = order[:int(min(room, max(1, np.searchsorted(cum, 0.5 * cum[-1]) + 1)))]
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

    def _halve(self, split, axis, levels):
        """Replace the leaves ``split`` by their two halves along ``axis`` (one per leaf) in
        the dyadic partition of ``levels`` levels per axis: the per-leaf arrays of
        ``_FIELDS`` lose them and the halves are bounded by ``_add``."""
        rows = np.arange(split.size)
        child = self.lev[split].copy()
        child[rows, axis] += 1
        lo = self.lo_idx[split]
        upper = lo.copy()
        upper[rows, axis] += np.left_shift(np.int64(1), levels - child[rows, axis])
        rest = np.setdiff1d(np.arange(self.lo_idx.shape[0]), split)
        for name in self._FIELDS:
            setattr(self, name, getattr(self, name)[rest])
        self._add(np.concatenate([lo, upper]), np.concatenate([child, child]))

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


class BundleKNGSampler(LatticeDraws):
    r"""Exact joint-regression KNG on :math:`S^2` with a certified mixture proposal (module
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
    start : array (4,), optional
        Starting coordinates of the fit (default: the unclipped least-squares fit's).
    sigma_ratios : sequence of float
        Scales of the K-norm components relative to :math:`\sigma` (each > 1).
    slack : float
        Log-factor by which :math:`q_1`'s bound may exceed its value at the fit.
    draws : int
        Draws the sampler will serve (the refinement stops once more boxes would cost more
        than the proposals they save).
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
                 sigma_ratios=(1.5, 3.0, 6.0, 12.0), slack=0.3, acceptance_goal=0.25,
                 box_cost=200.0, max_boxes=100_000, progress=None):
        self.t = np.asarray(t, dtype=float).reshape(-1)
        self.y = np.asarray(y, dtype=float)
        if np.any(np.abs(self.t) > 1):
            raise ValueError("Covariates must lie in [-1, 1].")
        self.tau, self.sigma = float(tau), float(sigma)
        self.lattice = lat = lattice
        self.chart = lat.chart
        self.scales = np.asarray(sigma_ratios, dtype=float).reshape(-1) * self.sigma
        self.slack, self.max_boxes = float(slack), int(max_boxes)
        self.draws, self.box_cost = int(draws), float(box_cost)
        self.acceptance_goal = float(acceptance_goal)
        if start is None:
            start = self._unclipped_start()
        self.fit, jac = clipped_fit(self.chart, self.t, self.y, self.tau, start)
        q, r = np.linalg.qr(jac)
        self.P = q.T
        self.H = self.P @ jac
        sv = np.linalg.svd(self.H, compute_uv=False)
        if sv[-1] < 1e-6 * max(sv[0], 1e-300):
            self.H = self.H + 1e-6 * max(sv[0], 1.0) * np.eye(4)
        self.Hinv = np.linalg.inv(self.H)
        gram = self.P @ self.P.T - np.eye(4)
        self.kappa = math.sqrt(1.0 + float(np.sqrt(np.sum(gram * gram))) + 1e-12) + 1e-12
        self.p_norm = self.kappa
        if not np.all(self.scales > self.kappa * self.sigma * (1 + 1e-9)):
            raise ValueError("Every entry of `sigma_ratios` must exceed 1.")
        self.log_c1 = (math.log(abs(np.linalg.det(self.H))) - math.log(12 * math.pi**2)
                       - 4 * np.log(self.scales))
        self.log_k = math.log(self.scales.size)
        u_fit = self.fit[:2] * min(1.0, lat.radius / max(np.linalg.norm(self.fit[:2]), 1e-300))
        self.log_m1_target = (math.log(float(self.chart.volume_density(u_fit)))
                              - float(np.max(self.log_c1)) + self.log_k + self.slack)
        self.log_mode_mass = (self.log_m1_target - self.slack - self.log_k
                              + 4 * math.log(self.sigma / float(np.min(self.scales))))
        self.evaluations = 0
        self._watch_build(progress)
        self._refine()
        self._finalize()

    # ------------------------------------------------------------------ set-up
    def _unclipped_start(self):
        from ..learning import GeodesicRegression
        from ..manifolds import Sphere

        fit = GeodesicRegression(Sphere(2), covariate_range=(0.0, 1.0)).fit(self.t, self.y)
        u, w = self.chart.from_bundle(fit.footpoint_, fit.shooting_vector_)
        return np.concatenate([u, w])

    def _bounds(self, lo, hi):
        """(b_e, b_1, log volume, b_est) of padded boxes (module docstring); ``b_est``
        estimates log(f J) on the box (used only to steer the refinement)."""
        enc = enclose_gradient_affine(self.chart, lo, hi, self.t, self.y, self.tau)
        self.evaluations += lo.shape[0]
        gap = np.maximum(np.maximum(lo[:, :2], -hi[:, :2]), 0.0)
        u_min = np.hypot(gap[:, 0], gap[:, 1]) * (1 - 1e-15)
        log_j = np.log(sinc_at(u_min).hi) + 1e-15
        b_e = -enc.lower / self.sigma + log_j
        # An estimate (not a bound) of log(f J) on the box, to steer the refinement: the
        # centre value of the affine form.
        j_c = self.chart.volume_density(enc.center[:, :2])
        b_est = -np.sqrt(np.sum(enc.value**2, axis=-1)) / self.sigma + np.log(j_c)
        # e(z) = P G0 - H (c - z*) + (P L - H diag h) eps + P xi, |xi| <= E
        P, H = self.P, self.H
        off = Interval(enc.center) - self.fit                       # c - z*, (m, 4)
        g0 = Interval(enc.value)
        base = [(g0 * P[i]).sum(axis=-1) - (off * H[i]).sum(axis=-1) for i in range(4)]
        lin = [(Interval(enc.linear) * P[i][None, :, None]).sum(axis=1)
               - Interval(enc.half) * H[i] for i in range(4)]        # (m, 4) each
        e_vec = Interval.stack([b + Interval._make(-l.mag().sum(-1) * (1 + 1e-15),
                                                   l.mag().sum(-1) * (1 + 1e-15))
                                for b, l in zip(base, lin, strict=True)], axis=-1)
        xi = Interval(enc.error).square().sum(axis=-1).sqrt().hi * self.p_norm
        e_norm = Interval(e_vec.mag()).square().sum().sqrt().hi + xi
        x = Interval(lo, hi) - self.fit
        hx = Interval.stack([(x * H[i]).sum(axis=-1) for i in range(4)], axis=-1)
        m_b = Interval(hx.mig()).square().sum().sqrt().lo
        u_b = Interval(hx.mag()).square().sum().sqrt().hi
        b_1 = np.full(lo.shape[0], np.inf)
        for scale, log_c1 in zip(self.scales, self.log_c1, strict=True):
            delta = 1.0 / (self.kappa * self.sigma) - 1.0 / scale
            first = -delta * m_b + e_norm / (self.kappa * self.sigma)
            second = -enc.lower / self.sigma + u_b / scale
            b_1 = np.minimum(b_1, np.minimum(first, second) - log_c1)
        b_1 = b_1 + log_j + self.log_k
        log_vol = np.sum(np.log(hi - lo), axis=-1)
        pad = _MARGIN * (1 + np.abs(b_e)), _MARGIN * (1 + np.abs(b_1))
        return b_e + pad[0], b_1 + pad[1], log_vol, b_est

    # ------------------------------------------------------------------ refinement
    #: The per-leaf arrays, in the order :meth:`_add` stores them (``_bounds`` returns the
    #: fields after ``lev``).
    _FIELDS = ("lo_idx", "lev", "b_e", "b_1", "log_vol", "b_est")
    #: Whether the target estimate is always at least ``log_mode_mass`` (a chart given the
    #: mode chart's mass), not only once the mode is certified by the K-norm component.
    _MODE_MASS_ALWAYS = False

    def _add(self, lo_idx, lev):
        lo, hi = self.lattice.box(lo_idx, lev)
        keep = ~self.lattice.misses(lo, hi)
        lo_idx, lev, lo, hi = lo_idx[keep], lev[keep], lo[keep], hi[keep]
        vals = self._bounds(lo, hi)
        for name, val in zip(self._FIELDS, (lo_idx, lev, *vals), strict=True):
            setattr(self, name, np.concatenate([getattr(self, name), val]))

    def _state(self):
        """(log M estimate, log Z estimate, env mask, env log masses) of the current leaves."""
        env = self.b_1 > self.log_m1_target
        log_mass = np.where(env, self.b_e + self.log_vol, -np.inf)
        log_t = _logsumexp(log_mass)
        log_m1 = float(np.max(self.b_1[~env])) if np.any(~env) else -np.inf
        log_m = np.logaddexp(log_m1, log_t)
        log_z = _logsumexp(np.minimum(self.b_est, self.b_e) + self.log_vol)
        # once the mode is certified its Laplace mass is a fair estimate
        if self._MODE_MASS_ALWAYS or np.any(~env):
            log_z = max(log_z, self.log_mode_mass)
        return log_m, log_z, env, log_mass

    def _refine(self):
        self.lo_idx = np.zeros((0, 4), dtype=np.int64)
        self.lev = np.zeros((0, 4), dtype=np.int64)
        self.b_e = self.b_1 = self.log_vol = self.b_est = np.zeros(0)
        self._add(np.zeros((1, 4), dtype=np.int64), np.zeros((1, 4), dtype=np.int64))
        self.rounds = 0
        self._descend()
        self._refine_by_excess()

    def _refine_by_excess(self):
        """Split the leaves whose envelope mass most exceeds their target estimate, half the
        total excess per round, until the stop rule holds (the certified acceptance reaches
        ``acceptance_goal``, the leaves run out, or a leaf would cost more than the proposals
        it saves)."""
        while True:
            log_m, log_z, env, log_mass = self._state()
            boxes = self.lo_idx.shape[0]
            if self._refined_enough(log_m, log_z, boxes):
                break
            split = excess_split(env, log_mass, np.minimum(self.b_est, self.b_e) + self.log_vol,
                                 log_m, np.all(self.lev >= self.lattice.levels, axis=-1)
                                 | (self.lev.sum(axis=1) >= 64), self.max_boxes - boxes)
            if split.size == 0:
                break
            self._split(split)
            self.rounds += 1

    def _descend(self, steps=160):
        """Split the leaf holding the fit until q_1's bound certifies it (a foothold for q_1
        where the excess rule would not go: a target flat at the leaves' scale)."""
        fit_index = self.lattice.index_of(self.fit[None])
        for _ in range(steps):
            if self.lo_idx.shape[0] >= self.max_boxes:
                return
            size = np.left_shift(np.int64(1), self.lattice.levels - self.lev)
            hold = np.flatnonzero(np.all((self.lo_idx <= fit_index)
                                         & (fit_index < self.lo_idx + size), axis=1))
            if (hold.size != 1 or self.b_1[hold[0]] <= self.log_m1_target
                    or self.lev[hold[0]].sum() >= 64):
                return
            self._split(hold)

    def _split(self, split):
        lat = self.lattice
        lev = self.lev[split]
        width = lat.spacing * np.left_shift(np.int64(1), lat.levels - lev)
        width[lev >= lat.levels] = -1.0
        axis = np.argmax(width, axis=1)
        self._halve(split, axis, lat.levels)

    def _finalize(self):
        env = self.b_1 > self.log_m1_target
        log_mass = np.where(env, self.b_e + self.log_vol, -np.inf)
        q1_boxes = ~env
        log_m1 = float(np.max(self.b_1[q1_boxes])) if np.any(q1_boxes) else -np.inf
        if np.any(env):
            top = float(np.max(log_mass))
            log_t = top + math.log(np.sum(np.exp(log_mass - top)))
        else:
            log_t = -np.inf
            log_mass = np.zeros_like(log_mass)  # weights only keep every leaf reachable
        # beta = M1 / (M1 + T) as a dyadic rational in [2^-53, 1 - 2^-53]
        share = 1.0 / (1.0 + math.exp(min(log_t - log_m1, 700.0))) if np.isfinite(log_m1) else 0.0
        self.beta = min(max(math.floor(share * 2.0**53), 1), 2**53 - 1) / 2.0**53
        self.weights = IntegerWeights(log_mass)
        w = self.weights.weights.astype(float)
        log_ratio_env = (self.b_e + self.log_vol + math.log(float(self.weights.total)) - np.log(w)
                         - math.log1p(-self.beta))
        log_ratio_q1 = self.b_1 - math.log(self.beta)
        self.log_m = float(np.max(np.minimum(log_ratio_env, log_ratio_q1))) + 1e-12
        self.size = np.left_shift(np.int64(1), self.lattice.levels - self.lev)
        self.leaves = LeafIndex(self.lo_idx, self.lev, self.lattice.levels)
        self.log_vol_cells = np.sum(np.log(self.lattice.spacing * self.size), axis=-1)

    def leaf_of(self, index):
        """The leaf holding each lattice index ``(m, 4)`` (-1 where none)."""
        return self.leaves.lookup(index)

    # ------------------------------------------------------------------ densities
    def log_target(self, z):
        """:math:`-g/\\sigma + \\log J` at coordinates ``(m, 4)``."""
        g = _g_library(self.chart, z, self.t, self.y, self.tau)
        return -g / self.sigma + np.log(self.chart.volume_density(z[:, :2]))

    def log_proposal(self, z, leaf):
        """:math:`\\log q(z)` for coordinates in the given leaves."""
        x = (z - self.fit) @ self.H.T
        hx = np.sqrt(np.sum(x * x, axis=-1))
        log_q1 = np.logaddexp.reduce(self.log_c1[:, None] - hx[None, :] / self.scales[:, None],
                                     axis=0) - self.log_k
        w = self.weights.weights[leaf].astype(float)
        log_qe = (np.log(w) - math.log(float(self.weights.total)) - self.log_vol_cells[leaf])
        return np.logaddexp(math.log(self.beta) + log_q1, math.log1p(-self.beta) + log_qe)

    def log_acceptance(self, z, leaf):
        r""":math:`\log(fJ/(Mq))` at coordinates ``(m, 4)`` in the given leaves (<= 0 where
        the certificate holds)."""
        return self.log_target(z) - self.log_m - self.log_proposal(z, leaf)

    # ------------------------------------------------------------------ sampling
    def _propose(self, m, rng):
        lat = self.lattice
        from_q1 = rng.random(m) < self.beta
        z = np.empty((m, 4))
        index = np.empty((m, 4), dtype=np.int64)
        k1 = int(from_q1.sum())
        if k1:
            xi = rng.standard_normal((k1, 4))
            xi /= np.linalg.norm(xi, axis=1, keepdims=True)
            comp = rng.integers(0, self.scales.size, k1)
            r = rng.gamma(4.0, self.scales[comp])
            z[from_q1] = self.fit + (r[:, None] * xi) @ self.Hinv.T
            index[from_q1] = lat.index_of(z[from_q1])
        ke = m - k1
        if ke:
            leaf = self.weights.draw(ke, rng)
            kk = self.lo_idx[leaf] + rng.integers(0, self.size[leaf], dtype=np.int64)
            index[~from_q1] = kk
            z[~from_q1] = lat.coordinates(kk) + lat.spacing * (rng.random((ke, 4)) - 0.5)
        return z, index

    def sample_indices(self, size, rng, progress=None):
        """``size`` exact draws as lattice indices ``(size, 4)``; returns
        ``(indices, proposals)``. ``progress(have / size)`` after every batch.

        Raises
        ------
        EnvelopeViolation
            If a proposal's acceptance ratio exceeds ``1 + 1e-9``.
        """
        def scored(batch, rng):
            z, index = self._propose(batch, rng)
            ok = self.lattice.in_support(index)
            leaf = np.full(batch, -1, dtype=np.int64)
            leaf[ok] = self.leaf_of(index[ok])
            if np.any(ok & (leaf < 0)):
                raise EnvelopeViolation("A support cell has no leaf: the partition is broken.")
            log_acc = np.full(batch, -np.inf)
            if np.any(ok):
                log_acc[ok] = self.log_acceptance(z[ok], leaf[ok])
            return index, log_acc

        return self._draw(size, rng, progress, scored)

