r"""One chart of the whole-sphere exact joint-KNG sampler (:mod:`dpcore.sampling.bundle_sphere`):
far-field certificates on axis-aligned dyadic boxes of the chart's public output lattice.

What it is
----------
:class:`SphereChartSampler` is :class:`~dpcore.sampling.bundle_sampler.BundleKNGSampler`
(same target :math:`fJ`, :math:`f = e^{-g/\sigma}`, same public lattice and support
:math:`D_L`, same proposal :math:`q = \beta q_1 + (1 - \beta)q_e`, same exact rejection step
and float-safety argument: read its docstring) with two changes:

1. **The leaf lower bound** :math:`g_B` of :math:`g` on a leaf (a padded dyadic box
   :math:`[lo, hi]` of lattice cells, which contains every float proposed in it) is the
   far-field certificate of :class:`~dpcore.sampling.bundle_farfield.FarFieldBundleSampler`
   (the larger of the mean-value bound of :mod:`~dpcore.sampling.sphere_jacobian_bounds` and
   the Gauss-Newton split bound of :mod:`~dpcore.sampling.sphere_gn_bounds`, both proven
   there, less :data:`~dpcore.sampling.bundle_farfield.G_SLACK`) on the parallelepiped
   :math:`\{c + \mathrm{diag}(h)\varepsilon + \zeta\}`, :math:`c = \mathrm{fl}((lo + hi)/2)`,
   :math:`h = \mathrm{fl}((hi - lo)/2)(1 + 4u)`, :math:`|\zeta_k| \le 16u(|c_k| + h_k)`
   (which contains the box: the float centre and half-width are within a few ulps), claimed
   on the box's intersection with :math:`\{|u| \le R, |w| \le V\}` (the chart's public ball
   pair, which contains :math:`D_L`). Then :math:`fJ \le e^{b_e}`,
   :math:`b_e = -g_B/\sigma + \log\mathrm{sinc}(\min_B|u|)`, and for the K-norm component
   (second form of the parent's certificate: :math:`\|H(z - z^*)\| \le u_B`, the largest
   value over the box's 16 vertices, :math:`\|\cdot\|` being convex)
   :math:`fJ/q_1 \le e^{b_1}`, :math:`b_1 = \min_s(-g_B/\sigma + u_B/\sigma_s - \log c_s) +
   \log\mathrm{sinc}(\min_B|u|) + \log S`. Each bound gets the relative margin
   :math:`10^{-10}` of the parent. Boxes whose hull leaves :math:`|u| < \pi - 10^{-3}` get no
   bound and are split before any draw.

   Why axis-aligned boxes and not the whitened leaves of
   :mod:`~dpcore.sampling.bundle_whitened` (measured, issue 28): the far-field loss grows with
   a leaf's reach (its largest displacement from the centre), and whitened leaves are
   parallelepipeds skewed by the fit's Jacobian (condition number about 17 at n = 250); in
   the far field, which is most of the whole bundle, they reached 2.7 times as far as cubes
   of the same volume. The valley about the fit costs a few thousand axis-aligned boxes
   instead (its q_1 certificate needs boxes about as large as their distance from the fit).

2. **No mode** (``fit=None``): a chart whose region does not hold the fit gets :math:`z^* =
   0`, :math:`H = I` and no leaf certified for :math:`q_1` (:math:`\beta = 2^{-53}`); its
   refinement aims at the acceptance relative to ``log_mode_mass`` passed in (the mode
   chart's Laplace estimate). Any :math:`z^*, H` keep the certificate valid.

3. **Excluded region** (``exclude``): a public function of a float point saying whether it
   belongs to another chart's region; such proposals are rejected (the target of this chart
   is :math:`fJ` on :math:`D_L` minus that region). The envelope holds on all of :math:`D_L`,
   so it holds there.

Splits are along the axis with the largest share of the leaf's mean-value loss (the score of
:func:`~dpcore.sampling.bundle_farfield.leaf_losses`).
"""

from __future__ import annotations

import math

import numpy as np

from ..exceptions import EnvelopeViolation
from .bundle_farfield import G_SLACK, leaf_geometry, leaf_losses
from .bundle_sampler import BundleKNGSampler, clipped_fit
from .intervals import sinc_at

__all__ = ["SphereChartSampler"]

_MARGIN = 1e-10
_U = 2.0**-53
_DOMAIN = 1e-3
_CHUNK = 2048
#: The 16 vertices of [-1, 1]^4.
_VERTICES = 2.0 * ((np.arange(16)[:, None] >> np.arange(4)) & 1) - 1.0


class SphereChartSampler(BundleKNGSampler):
    r"""Exact joint-regression KNG on one chart's public support, far-field certificates on
    axis-aligned lattice boxes (module docstring).

    Parameters
    ----------
    t, y, tau, sigma, lattice
        As for :class:`~dpcore.sampling.bundle_sampler.BundleKNGSampler`.
    fit : tuple (z, jac) or None
        The fit's chart coordinates and the gradient's Jacobian there (6 x 4), or None when
        the chart holds no mode.
    log_mode_mass : float, optional
        The target's estimated mass the refinement aims at (default: the Laplace mass of the
        mode, which needs ``fit``).
    exclude : callable, optional
        ``exclude(z)`` (bool per row of chart coordinates): points of another chart's region,
        rejected here.
    draws, sigma_ratios, slack, acceptance_goal, box_cost, max_boxes, compiled
        As for the parent (``compiled``: numba kernels when importable).
    """

    def __init__(self, t, y, tau, sigma, lattice, *, fit=None, log_mode_mass=None,
                 exclude=None, draws=1, sigma_ratios=(1.5, 3.0, 6.0, 12.0), slack=0.3,
                 acceptance_goal=2e-3, box_cost=8.0, max_boxes=60_000, compiled=True,
                 progress=None):
        self.t = np.asarray(t, dtype=float).reshape(-1)
        self.y = np.asarray(y, dtype=float)
        if np.any(np.abs(self.t) > 1):
            raise ValueError("Covariates must lie in [-1, 1].")
        self.tau, self.sigma = float(tau), float(sigma)
        self.lattice = lattice
        self.chart = lattice.chart
        self.scales = np.asarray(sigma_ratios, dtype=float).reshape(-1) * self.sigma
        self.slack, self.max_boxes = float(slack), int(max_boxes)
        self.draws, self.box_cost = int(draws), float(box_cost)
        self.acceptance_goal = float(acceptance_goal)
        self.compiled = bool(compiled)
        self.exclude = exclude
        self.has_mode = fit is not None
        if self.has_mode:
            self.fit = np.asarray(fit[0], dtype=float).copy()
            jac = np.asarray(fit[1], dtype=float)
            q, _ = np.linalg.qr(jac)
            self.P = q.T
            self.H = self.P @ jac
            sv = np.linalg.svd(self.H, compute_uv=False)
            if sv[-1] < 1e-6 * max(sv[0], 1e-300):
                self.H = self.H + 1e-6 * max(sv[0], 1.0) * np.eye(4)
        else:
            self.fit = np.zeros(4)
            self.P = np.eye(4, 6)
            self.H = np.eye(4)
        self.Hinv = np.linalg.inv(self.H)
        self.kappa = 1.0
        if not np.all(self.scales > self.sigma * (1 + 1e-9)):
            raise ValueError("Every entry of `sigma_ratios` must exceed 1.")
        self.log_c1 = (math.log(abs(np.linalg.det(self.H))) - math.log(12 * math.pi**2)
                       - 4 * np.log(self.scales))
        self.log_k = math.log(self.scales.size)
        if self.has_mode:
            u_fit = self.fit[:2] * min(1.0, lattice.radius / max(np.linalg.norm(self.fit[:2]),
                                                                  1e-300))
            self.log_m1_target = (math.log(float(self.chart.volume_density(u_fit)))
                                  - float(np.max(self.log_c1)) + self.log_k + self.slack)
            own = (self.log_m1_target - self.slack - self.log_k
                   + 4 * math.log(self.sigma / float(np.min(self.scales))))
        else:
            self.log_m1_target = -math.inf
            own = -math.inf
        self.log_mode_mass = own if log_mode_mass is None else float(log_mode_mass)
        if not math.isfinite(self.log_mode_mass):
            raise ValueError("A chart without the mode needs `log_mode_mass`.")
        self.evaluations = 0
        self.gn_wins = 0
        self._watch_build(progress)
        self._refine()
        self._finalize()

    # ------------------------------------------------------------------ bounds
    def _certify(self, lo, hi):
        """(g lower bound, g at the centre, per-axis score) of padded boxes."""
        c = 0.5 * lo + 0.5 * hi
        h = (0.5 * hi - 0.5 * lo) * (1 + 4 * _U)
        slack = 16 * _U * (np.abs(c) + h) + 1e-300
        basis = h[:, :, None] * np.eye(4)[None]
        geo = leaf_geometry(c, basis, slack, self.lattice.radius, self.lattice.max_speed)
        loss, score, g_c, lower = leaf_losses(self.chart, c, geo, self.t, self.y, self.tau,
                                              compiled=self.compiled, with_gradient=True,
                                              split=True)
        self.gn_wins += int(np.sum(lower > g_c - loss))
        g_lb = np.maximum(np.maximum(g_c - loss, lower) - G_SLACK, 0.0)
        return g_lb, g_c, score

    def _bounds(self, lo, hi):
        """(b_e, b_1, log volume, b_est, score) of padded boxes (module docstring); ``b_est``
        estimates log(f J) (steers the refinement only)."""
        m = lo.shape[0]
        b_e, b_1 = np.full(m, np.inf), np.full(m, np.inf)
        b_est = np.zeros(m)
        score = np.tile(hi - lo, 1) * np.array([1.0, 1.0, 0.5, 0.5])
        log_vol = np.sum(np.log(hi - lo), axis=-1)
        far_u = np.hypot(np.maximum(np.abs(lo[:, 0]), np.abs(hi[:, 0])),
                         np.maximum(np.abs(lo[:, 1]), np.abs(hi[:, 1])))
        ok = far_u < math.pi - _DOMAIN
        gap = np.maximum(np.maximum(lo[:, :2], -hi[:, :2]), 0.0)
        for start in range(0, m, _CHUNK):
            self._build.pulse()
            sl = np.arange(start, min(m, start + _CHUNK))
            idx = sl[ok[sl]]
            if idx.size == 0:
                continue
            g_lb, g_c, sc = self._certify(lo[idx], hi[idx])
            self.evaluations += idx.size
            u_min = np.hypot(gap[idx, 0], gap[idx, 1]) * (1 - 1e-15)
            log_j = np.log(sinc_at(u_min).hi) + 1e-15
            be = -g_lb / self.sigma + log_j
            # u_B: the largest |H (z - z*)| over the box's vertices (a convex function)
            mid, half = 0.5 * (lo[idx] + hi[idx]), 0.5 * (hi[idx] - lo[idx])
            corners = (mid - self.fit)[:, None, :] + half[:, None, :] * _VERTICES[None]
            hz = np.einsum("mvk,jk->mvj", corners, self.H)
            u_b = np.max(np.sqrt(np.sum(hz * hz, axis=-1)), axis=1)
            u_b = u_b * (1 + 1e-12) + 1e-12 * np.sum(np.abs(self.H)) * (
                np.max(np.abs(corners), axis=(1, 2)) + np.max(np.abs(self.fit)))
            b1 = np.full(idx.size, np.inf)
            for scale, log_c in zip(self.scales, self.log_c1, strict=True):
                b1 = np.minimum(b1, -g_lb / self.sigma + u_b / scale - log_c)
            b1 = b1 + log_j + self.log_k
            b_e[idx] = be + _MARGIN * (1 + np.abs(be))
            b_1[idx] = b1 + _MARGIN * (1 + np.abs(b1))
            b_est[idx] = -g_c / self.sigma + np.log(self.chart.volume_density(mid[:, :2]))
            # the mean-value score leaves out the terms that took their crude bound: where the
            # certificate is void (g_lb = 0) or the score is 0 on every axis, split the leaf
            # along its widest axis (the default above), not always along the first one
            informative = (np.all(np.isfinite(sc), axis=1) & (np.sum(sc, axis=1) > 0)
                           & (g_lb > 0))
            score[idx] = np.where(informative[:, None], sc, score[idx])
        return b_e, b_1, log_vol, b_est, score

    # ------------------------------------------------------------------ refinement
    _FIELDS = ("lo_idx", "lev", "b_e", "b_1", "log_vol", "b_est", "score")
    _MODE_MASS_ALWAYS = True   # a chart without the mode is given the mode chart's mass

    def _refine(self):
        self.lo_idx = np.zeros((0, 4), dtype=np.int64)
        self.lev = np.zeros((0, 4), dtype=np.int64)
        self.b_e = self.b_1 = self.log_vol = self.b_est = np.zeros(0)
        self.score = np.zeros((0, 4))
        self._add(np.zeros((1, 4), dtype=np.int64), np.zeros((1, 4), dtype=np.int64))
        self.rounds = 0
        while True:
            open_ = ~np.isfinite(self.b_e)
            room = self.max_boxes - self.lo_idx.shape[0]
            if np.any(open_):
                if room < 1:
                    raise RuntimeError("max_boxes reached before the support was covered.")
                self._split(np.flatnonzero(open_)[:room])
                continue
            break
        if self.has_mode:
            self._descend()
        self._refine_by_excess()

    def _split(self, split):
        lat = self.lattice
        lev = self.lev[split]
        score = np.where(lev >= lat.levels, -1.0, self.score[split])
        axis = np.argmax(score, axis=1)
        self._halve(split, axis, lat.levels)

    # ------------------------------------------------------------------ sampling
    def ratios(self, z, index):
        """(support mask, log acceptance) of proposals ``z`` with output indices ``index``:
        outside this chart's support or in the excluded region: rejected (-inf)."""
        ok = self.lattice.in_support(index)
        if self.exclude is not None and np.any(ok):
            ok[ok] = ~self.exclude(z[ok])
        log_acc = np.full(z.shape[0], -np.inf)
        if np.any(ok):
            leaf = self.leaf_of(index[ok])
            if np.any(leaf < 0):
                raise EnvelopeViolation("A support cell has no leaf: the partition is broken.")
            log_acc[ok] = self.log_acceptance(z[ok], leaf)
        return ok, log_acc

    def sample_indices(self, size, rng, progress=None):
        """``size`` exact draws of this chart alone (its support minus the excluded region) as
        output indices; returns ``(indices, proposals)`` (:func:`~dpcore.sampling.
        bundle_sphere_draw.draw_from_charts`)."""
        from .bundle_sphere_draw import draw_from_charts

        _, index, tried = draw_from_charts([self], size, rng, progress)
        return index, tried

    def reachable(self, index):
        """Whether each output index is released with positive probability: in the support,
        outside the excluded region (its lattice point, the witness proposed by
        :math:`q_e`) and with a finite acceptance there."""
        index = np.asarray(index, dtype=np.int64)
        ok, log_acc = self.ratios(self.lattice.coordinates(index), index)
        return ok & np.isfinite(log_acc)

    @property
    def diagnostics(self):
        """The parent's diagnostics plus the leaves where the Gauss-Newton split bound won
        (data dependent: keep them private)."""
        out = dict(super().diagnostics)
        out["gn_wins"] = int(self.gn_wins)
        out["has_mode"] = bool(self.has_mode)
        return out


def chart_fit(chart, t, y, tau, start):
    """The clipped fit in a chart from ``start`` (4,) and the gradient's Jacobian there
    (:func:`~dpcore.sampling.bundle_sampler.clipped_fit`)."""
    return clipped_fit(chart, t, y, tau, start)
