r"""Exact joint KNG for geodesic regression on :math:`S^2` with a mean-value certificate far
from the fit (issue 28 point 1; prototype, not wired into the releases).

Same target, public support, output lattice, proposal, whitened leaves, sampling loop and
release rule as :mod:`dpcore.sampling.bundle_whitened` (read it and
:mod:`dpcore.sampling.bundle_sampler` first); :class:`FarFieldBundleSampler` subclasses
:class:`~dpcore.sampling.bundle_whitened.WhitenedBundleSampler` and changes only how a leaf's
lower bound :math:`g_B` of :math:`g` is certified.

Why (measured, ``benchmarks/bench_bundle_whitened.py``)
-------------------------------------------------------
At :math:`n\epsilon = 1000` more than 99% of the whitened sampler's envelope mass sits in
leaves beyond :math:`64\sigma` of the fit, where the true :math:`g` exceeds :math:`30\sigma`
but affine (and Taylor) enclosures of leaves large enough to be few certify about 0: their
per-term second-order remainders are overestimated 11-21 times, and near the cut locus the
clipped residual turns at rate :math:`1/\sin\theta`, which no polynomial follows.

The far-field bound
-------------------
For a leaf (the parallelepiped :math:`\{z_c + \sum_j\varepsilon_j b_j + \zeta\}` of
:mod:`~dpcore.sampling.bundle_whitened`, rounding slack :math:`\zeta` included) and any of its
points :math:`z`, along the segment from :math:`z_c` to :math:`z`
(:mod:`dpcore.sampling.sphere_jacobian_bounds`, where the bounds are proven):

.. math:: g(z) \ge g(z_c) - \frac1n\sum_i \min\Big(\sup_s\big|\tfrac{D}{ds}(a_i, b_i)\big|,
          \ (m_i(z) + m_i(z_c))\sqrt{1 + t_i^2}\Big),

each term's covariant-derivative bound in closed form from the range of its residual angle
:math:`\theta_i` over the leaf (:math:`\theta_i(z_c) \pm \eta_i`, :math:`\eta_i` the speed
bound of the prediction :math:`\hat y_i`, :func:`prediction_speed`), from
:math:`P \ge |\delta_u|`, :math:`N \ge |Dv/ds|` (the chart's speeds, from the leaf's basis
and hull) and :math:`\rho \le t_iW`; terms whose angle may reach the cut locus get only the
crude second bound. Unlike an enclosure of the formulas, this loses only first order in the
leaf's size with constants that *shrink* where residuals are clipped
(:math:`\tau|\cot\theta|` instead of 1), so large leaves far from the fit certify most of the
true :math:`g`. :math:`g(z_c)` is the library's float gradient at the float centre, less an
absolute :math:`10^{-10}` (the scope of rigour of :mod:`~dpcore.sampling.sphere_enclosure`:
exact arithmetic on the float data, float-vs-exact differences ~1e-15).

Leaves whose box comes within ``near_sigmas`` :math:`\sigma` of the fit (in whitened
coordinates) also get the affine certificate of the parent class, and each of
:math:`b_e, b_1` is the smaller (both are upper bounds, so is their minimum). For the others
:math:`b_1 = \min_s(-g_B/\sigma + \max_B|x|/\sigma_s - \log c_s) + \log J_B + \log|\det A| +
\log S` (the second form of the parent class). Every bound carries the relative margin
:math:`10^{-10}` of the parent class.

Partition: the parent's k-d refinement of the whitened box (first the leaf holding the fit
is split until :math:`q_1` certifies it, which leaves dyadic shells of leaves whose size grows
with their distance to the fit; then the leaves with the largest excess mass are split) with
the split axis chosen by each axis's share of the mean-value loss.

Exactness and float safety are those of the parent class: the envelope holds by proof on
every leaf, a proposal whose ratio exceeds :math:`1 + 10^{-9}` raises
:class:`~dpcore.exceptions.EnvelopeViolation`, and the released value is the public lattice
cell of :mod:`~dpcore.sampling.bundle_lattice`, every support cell reachable through the
:math:`q_0` witness.

Cost (measured, ``benchmarks/bench_bundle_farfield.py``, n = 250, tau = 0.2, R = 0.5,
V = 1.5; shared machine, CPU seconds): at :math:`n\epsilon = 250`, 40,000 leaves give a
certified acceptance of :math:`3.0\cdot10^{-6}` in 61 s against :math:`4.4\cdot10^{-7}` for
the whitened affine sampler with 6000 leaves (21 s); at :math:`n\epsilon = 1000` (an earlier
version of the speed bounds) :math:`9.3\cdot10^{-9}` with 40,000 leaves (19 s) against
:math:`1.7\cdot10^{-9}`. Far leaves are still too large for the bound (per-term bound about
4-5 times the true per-term change on leaves of whitened half-widths
:math:`(66, 80, 5, 5)\sigma`; summing terms in absolute value costs only 1.2 times): the
Jacobi-map terms :math:`m\sin\rho\,(\cdot)` and the range-widened turn rate dominate.
"""

from __future__ import annotations

import math

import numpy as np

from .bundle_sampler import _gradient6
from .bundle_whitened import _DOMAIN, _MARGIN, _U, WhitenedBundleSampler
from .intervals import sinc_at
from .sphere_jacobian_bounds import term_change_bounds

__all__ = ["FarFieldBundleSampler", "leaf_geometry", "prediction_speed", "residual_angles"]

#: Absolute slack subtracted from the float g at a leaf's centre.
G_SLACK = 1e-10
#: Leaves evaluated at once (memory: a few (chunk, n) float arrays).
CHUNK = 2048


def residual_angles(chart, z, t, y):
    """Residual angles ``theta`` (m, n) at chart coordinates ``z`` (m, 4), by
    ``atan2(|y x yhat|, <y, yhat>)`` (accurate near 0 and pi)."""
    p, v = chart.to_bundle(z[:, :2], z[:, 2:])
    t = np.asarray(t, dtype=float)
    speed = np.sqrt(np.sum(v * v, axis=-1))
    rho = np.abs(t)[None, :] * speed[:, None]
    sinc = np.where(rho > 0, np.sin(rho) / np.where(rho > 0, rho, 1.0), 1.0)
    yhat = (np.cos(rho)[..., None] * p[:, None, :]
            + (sinc * t[None, :])[..., None] * v[:, None, :])
    cross = np.cross(yhat, np.asarray(y, dtype=float)[None, :, :])
    dot = np.sum(yhat * y[None, :, :], axis=-1)
    return np.arctan2(np.sqrt(np.sum(cross * cross, axis=-1)), dot)


def leaf_geometry(center, basis, slack):
    r"""Chart speeds of parallelepipeds :math:`\{c + B\varepsilon + \zeta\}`.

    :math:`|\delta_u|` over the region is at most the largest of :math:`|B_u\varepsilon|`
    over the 16 vertices :math:`\varepsilon \in \{\pm1\}^4` (a convex function of
    :math:`\varepsilon` attains its maximum over the cube at a vertex) plus :math:`|\zeta_u|`;
    likewise :math:`|\delta_w| + k|\delta_u|` with :math:`k = W r_{max}/2` (the bound of
    :math:`|Dv/ds|`, :mod:`~dpcore.sampling.sphere_jacobian_bounds`).

    Parameters
    ----------
    center : array (m, 4)
    basis : array (m, 4, 4)
        Row: coordinate, column: noise symbol.
    slack : array (m, 4)
        :math:`|\zeta_k| \le` slack.

    Returns
    -------
    P, N, W, r_max : ndarray (m,)
        Bounds of :math:`|\delta_u|` and :math:`|Dv/ds|` (for :math:`\delta` = any point
        minus the centre) and of :math:`|w|` and :math:`|u|` over the region.
    du, dw : ndarray (m, 16, 2)
        :math:`B_u\varepsilon` and :math:`B_w\varepsilon` at the vertices (without
        :math:`\zeta`).
    axis_p, axis_n : ndarray (m, 4)
        Each noise symbol's share of ``P`` and ``N`` (to choose split axes).
    """
    reach = np.sum(np.abs(basis), axis=-1) + slack
    lo, hi = center - reach, center + reach
    far = np.maximum(np.abs(lo), np.abs(hi))
    r_max = np.hypot(far[:, 0], far[:, 1])
    w_max = np.hypot(far[:, 2], far[:, 3])
    signs = 2.0 * ((np.arange(16)[:, None] >> np.arange(4)) & 1) - 1.0       # (16, 4)
    delta = np.einsum("mkj,vj->mvk", basis, signs)                          # (m, 16, 4)
    up = 1.0 + 1e-12
    du = (np.hypot(delta[..., 0], delta[..., 1]) + np.hypot(slack[:, 0], slack[:, 1])[:, None])
    turn = w_max * 0.5 * r_max
    dw = (np.hypot(delta[..., 2], delta[..., 3]) + np.hypot(slack[:, 2], slack[:, 3])[:, None]
          + turn[:, None] * du)
    du, dw = du * up, dw * up
    du_v, dw_v = delta[..., :2], delta[..., 2:]
    col_u = np.hypot(basis[:, 0, :], basis[:, 1, :])            # (m, 4)
    col_w = np.hypot(basis[:, 2, :], basis[:, 3, :])
    return (np.max(du, axis=1), np.max(dw, axis=1), w_max * up, r_max * up, du_v, dw_v,
            col_u, col_w + turn[:, None] * col_u)


def prediction_speed(du, dw, slack, P, N, W, r_max, t):
    r"""Bounds (m, n) of the speed :math:`\eta_i` of each prediction :math:`\hat y_i` along
    the segments from a parallelepiped's centre.

    In the radially parallel frame :math:`\Gamma` at :math:`p`,
    :math:`\pi = \Gamma\delta_u - (1 - \mathrm{sinc}\,r)\Gamma\delta_{u\perp}` and
    :math:`|\nu - \Gamma\delta_w| \le |w|\frac{1 - \cos r}{r}|\delta_u|`
    (:mod:`~dpcore.sampling.sphere_jacobian_bounds`), so
    :math:`|\pi + t\nu| \le |\delta_u + t\delta_w| + (r^2/6 + tWr/2)P`; the Jacobi field
    :math:`J(1)` has parts :math:`\pi_\parallel + t\nu_\parallel` and
    :math:`C(\pi_\perp + t\nu_\perp) + t(S - C)\nu_\perp`, where
    :math:`0 \le S - C = (\sin\rho - \rho\cos\rho)/\rho \le \rho^2/3`
    (the numerator's derivative is :math:`\rho\sin\rho \in [0, \rho^2]`), so
    :math:`\eta \le |\pi + t\nu| + \tfrac13 t\rho^2N`. :math:`|\delta_u + t\delta_w|` is
    convex in :math:`\varepsilon`: its maximum is at a vertex (plus the slack's share). This
    keeps the cancellation between moving the footpoint and the shooting vector that makes the
    valley's thin directions thin.
    """
    at = np.abs(np.asarray(t, dtype=float))
    comb = (du[:, None, :, :] + at[None, :, None, None] * dw[:, None, :, :])   # (m, n, 16, 2)
    lin = np.max(np.hypot(comb[..., 0], comb[..., 1]), axis=-1)
    lin = lin + (np.hypot(slack[:, 0], slack[:, 1])[:, None]
                 + at[None, :] * np.hypot(slack[:, 2], slack[:, 3])[:, None])
    rho = at[None, :] * W[:, None]
    extra = ((r_max**2 / 6.0)[:, None] + at[None, :] * (W * r_max * 0.5)[:, None]) * P[:, None]
    extra = extra + at[None, :] * rho**2 / 3.0 * N[:, None]
    return (lin + extra) * (1.0 + 1e-12)


class FarFieldBundleSampler(WhitenedBundleSampler):
    r"""Exact joint-regression KNG on :math:`S^2` over whitened leaves, certified far from the
    fit by closed-form per-term mean-value bounds (module docstring).

    Parameters are those of :class:`~dpcore.sampling.bundle_whitened.WhitenedBundleSampler`
    (``enclosure`` applies to the near leaves), plus:

    near_sigmas : float
        Leaves within this many :math:`\sigma` of the fit (whitened distance of the leaf's
        box) also get the parent's affine certificate.
    """

    def __init__(self, t, y, tau, sigma, lattice, *, near_sigmas=32.0, box_cost=5.0,
                 max_boxes=20_000, **options):
        self.near_sigmas = float(near_sigmas)
        self.mv_evaluations = 0
        super().__init__(t, y, tau, sigma, lattice, box_cost=box_cost, max_boxes=max_boxes,
                         **options)

    # ------------------------------------------------------------------ bounds
    def _parallelepipeds(self, lo, hi):
        """Centres, bases, slacks and hulls of padded leaves (as the parent computes them)."""
        c = 0.5 * lo + 0.5 * hi
        h = (0.5 * hi - 0.5 * lo) * (1 + 4 * _U) + self.pad
        zc = self.fit + c @ self.A.T
        basis = self.A[None, :, :] * h[:, None, :]
        mag = np.abs(self.fit) + np.abs(c) @ np.abs(self.A).T + h @ np.abs(self.A).T
        zslack = 16 * _U * mag + 1e-300
        reach = np.sum(np.abs(basis), axis=-1) + zslack
        return c, h, zc, basis, zslack, zc - reach, zc + reach

    def _mean_value(self, zc, basis, zslack):
        """(g lower bound, g at the centre, per-axis score) of parallelepipeds."""
        P, N, W, r_max, du, dw, axis_p, axis_n = leaf_geometry(zc, basis, zslack)
        g_c = np.sqrt(np.sum(_gradient6(self.chart, zc, self.t, self.y, self.tau) ** 2,
                             axis=-1))
        theta = residual_angles(self.chart, zc, self.t, self.y)
        at = np.abs(self.t)
        eta = prediction_speed(du, dw, zslack, P, N, W, r_max, self.t)
        bound, smooth = term_change_bounds(theta, self.t, P, N, W, self.tau, eta=eta)
        n = self.t.size
        loss = np.sum(bound, axis=1) / n * (1.0 + 1e-9)
        g_lb = np.maximum(g_c - loss - G_SLACK, 0.0)
        # each axis's share of the loss: weight P and N by the terms' mean-value rates
        at = at[None, :]
        rate = np.where(smooth, bound, 0.0) / np.maximum(P[:, None] + at * N[:, None], 1e-300)
        lam_p, lam_n = np.sum(rate, axis=1), np.sum(rate * at, axis=1)
        score = (lam_p[:, None] * axis_p + lam_n[:, None] * axis_n) / n
        self.mv_evaluations += zc.shape[0]
        return g_lb, g_c, score

    def _bounds(self, lo_idx, lev):
        """(keep, b_e, b_1, log volume, b_est, score) of leaves (module docstring)."""
        lo, hi = self._x_box(lo_idx, lev)
        m = lo.shape[0]
        c, h, zc, basis, zslack, zlo, zhi = self._parallelepipeds(lo, hi)
        keep = ~self.lattice.misses(zlo, zhi)
        far_u = np.hypot(np.maximum(np.abs(zlo[:, 0]), np.abs(zhi[:, 0])),
                         np.maximum(np.abs(zlo[:, 1]), np.abs(zhi[:, 1])))
        ok = keep & (far_u < math.pi - _DOMAIN)
        b_e, b_1 = np.full(m, np.inf), np.full(m, np.inf)
        b_est = np.zeros(m)
        score = np.sum(np.abs(basis), axis=1)
        log_vol = np.sum(np.log(hi - lo), axis=-1)
        xb_lo, xb_hi = c - h, c + h
        gap_x = np.maximum(np.maximum(xb_lo, -xb_hi), 0.0)
        x_min = np.sqrt(np.sum(gap_x * gap_x, axis=-1)) * (1 - 1e-12)
        x_max = np.sqrt(np.sum(np.maximum(np.abs(xb_lo), np.abs(xb_hi)) ** 2, axis=-1))
        x_max = x_max * (1 + 1e-12)
        gap = np.maximum(np.maximum(zlo[:, :2], -zhi[:, :2]), 0.0)
        for start in range(0, m, CHUNK):
            sl = np.arange(start, min(m, start + CHUNK))
            idx = sl[ok[sl]]
            if idx.size == 0:
                continue
            g_lb, g_c, sc = self._mean_value(zc[idx], basis[idx], zslack[idx])
            u_min = np.hypot(gap[idx, 0], gap[idx, 1]) * (1 - 1e-15)
            log_j = np.log(sinc_at(u_min).hi) + 1e-15
            be = -g_lb / self.sigma + log_j + self.log_det_a
            b1 = np.full(idx.size, np.inf)
            for scale, log_c in zip(self.scales, self.log_c1, strict=True):
                b1 = np.minimum(b1, -g_lb / self.sigma + x_max[idx] / scale - log_c)
            b1 = b1 + log_j + self.log_det_a + self.log_k
            b_e[idx] = be + _MARGIN * (1 + np.abs(be))
            b_1[idx] = b1 + _MARGIN * (1 + np.abs(b1))
            j_c = self.chart.volume_density(zc[idx, :2])
            b_est[idx] = -g_c / self.sigma + np.log(j_c) + self.log_det_a
            score[idx] = sc
        near = np.flatnonzero(ok & (x_min < self.near_sigmas * self.sigma))
        if near.size:
            _, ne, n1, _, _, nsc = WhitenedBundleSampler._bounds(self, lo_idx[near], lev[near])
            better = ne < b_e[near]
            score[near[better]] = nsc[better]
            b_e[near] = np.minimum(b_e[near], ne)
            b_1[near] = np.minimum(b_1[near], n1)
        return keep, b_e, b_1, log_vol, b_est, score

    @property
    def diagnostics(self):
        """The parent's diagnostics plus the leaves certified by the mean-value bound."""
        out = dict(super().diagnostics)
        out["mv_evaluations"] = int(self.mv_evaluations)
        return out
