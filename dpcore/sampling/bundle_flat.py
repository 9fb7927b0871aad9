r"""Exact joint KNG for linear regression on :math:`\mathbb{R}^d` at large :math:`n\epsilon`:
whitened leaves certified by the piecewise-affine structure of the clipped gradient
(issue 28 point 1; :math:`d \ge 2`, where the refined Lipschitz envelope of
:mod:`dpcore.sampling.envelope` needs too many cells).

Target, support, lattice, proposal, refinement, sampling loop and release rule are those of
:class:`~dpcore.sampling.bundle_whitened.WhitenedBundleSampler` in :math:`D = 2d`
coordinates :math:`z = (u, w)`, :math:`p = c + u`, :math:`v = w` with the public centre
:math:`c` (:class:`~dpcore.sampling.bundle_lattice.FlatLattice`; read that module first). The
chart is affine, so the volume density is :math:`J = 1`, and only the leaves' lower bound of
:math:`g` changes.

The gradient
------------
With residuals :math:`r_i(z) = y_i - c - u - t_iw` and :math:`\psi(r) = r\min(1, \tau/|r|)`
(the projection onto the closed ball of radius :math:`\tau`), the clipped gradient of
geodesic regression on :math:`\mathbb{R}^d` (:func:`~dpcore.learning.regression.
regression_gradient`, paper 002 eq. 9) is

.. math:: G(z) = -\frac1n\sum_i \big(\psi(r_i),\ t_i\psi(r_i)\big), \qquad g = |G|.

Along any displacement :math:`\delta = (\delta_u, \delta_w)` the residual moves by
:math:`-a_i(\delta)`, :math:`a_i = \delta_u + t_i\delta_w`, linear in :math:`\delta`.

The leaf certificate
--------------------
A leaf is the parallelepiped :math:`\{z_c + B\varepsilon + \zeta\}` of the parent class
(:math:`\varepsilon \in [-1, 1]^D`, rounding slack :math:`|\zeta_k| \le s_k`). Over it
:math:`|a_i| \le \alpha_i = |(\sum_j |(B_u + t_iB_w)_{kj}|)_k| + |\zeta_u| + |t_i||\zeta_w|`
(triangle inequality per coordinate), and along the segment from :math:`z_c` the residual
stays within :math:`\alpha_i` of :math:`r_i(z_c)`, so :math:`|r_i| \in [\rho_i - \alpha_i,
\rho_i + \alpha_i]`, :math:`\rho_i = |r_i(z_c)|`. Three kinds of terms:

* **inside** (:math:`\rho_i + \alpha_i \le \tau`): :math:`\psi` is the identity on the whole
  leaf, so the term's change :math:`-\frac1n(\Delta\psi_i, t_i\Delta\psi_i)` is exactly
  :math:`\frac1n(a_i, t_ia_i)`: linear coefficient :math:`c_i = 1`, no remainder;
* **outside** (:math:`\rho_i - \alpha_i \ge \tau`): :math:`\psi(r) = \tau r/|r|`, whose
  derivative is :math:`\tau\Pi_r/|r|` (:math:`\Pi_r = I - \hat r\hat r^\top`) and whose second
  derivative is :math:`D^2(r/|r|)[a, b] = -|r|^{-2}((\hat r\cdot b)\Pi a + (\hat r\cdot
  a)\Pi b + (a\cdot\Pi b)\hat r)`; on the diagonal, with :math:`c = \hat r\cdot a`,
  :math:`s = |\Pi a|` (:math:`c^2 + s^2 = 1`), :math:`|D^2(r/|r|)[a, a]|^2 = |r|^{-4}(4c^2s^2
  + s^4) = |r|^{-4}s^2(4 - 3s^2) \le \frac43|r|^{-4}` (at :math:`s^2 = 2/3`). Taylor's
  theorem with integral remainder along the segment needs only that quadratic form:
  :math:`\Delta\psi_i = -\frac{\tau}{\rho_i}\Pi_i a_i + R_i`, :math:`|R_i| \le
  \frac{\tau\alpha_i^2}{\sqrt3(\rho_i - \alpha_i)^2}` (session 24 used the bilinear bound
  :math:`3\tau/|r|^2`, 2.6 times larger): coefficient
  :math:`c_i = \tau/\rho_i` with :math:`\Pi_i`; on :math:`\mathbb{R}^1` the sign of :math:`r`
  cannot change, so the term is constant (:math:`c_i = 0`, no remainder);
* **straddling** (the rest): :math:`\psi` is the projection onto a convex set; it is
  Lipschitz, so along the segment :math:`\Delta\psi_i = -M_ia_i` with :math:`M_i` the mean of
  its Jacobians over the segment (defined but at the at most two points where the segment
  meets :math:`|r| = \tau`). Each Jacobian is symmetric with eigenvalues in :math:`[0, 1]`
  (:math:`I` inside, :math:`\frac{\tau}{|r|}\Pi_r` outside), hence so is :math:`M_i`, and
  :math:`\|M_i - \tfrac12 I\| \le \tfrac12`: coefficient :math:`c_i = \tfrac12` with
  :math:`M_i = I`, :math:`|R_i| \le \alpha_i/2` (session 24 used :math:`c_i = 0`,
  :math:`|R_i| \le \alpha_i`, the 1-Lipschitz bound).

Hence :math:`G(z) = G(z_c) + H_B\delta + e(z)` with :math:`H_B = \frac1n\sum_i c_i
\begin{pmatrix}1 & t_i\\ t_i & t_i^2\end{pmatrix}\otimes M_i` (:math:`M_i = I` inside and
straddling, :math:`\Pi_i` outside) and :math:`|e| \le \ell_B = \frac1n\sum_i\sqrt{1 +
t_i^2}\,|R_i|`. Each summand of :math:`H_B` is positive semi-definite with norm at most
:math:`c_i(1 + t_i^2)`, which bounds :math:`|H_B\zeta|`. With :math:`P` the parent's whitening
rotation (:math:`\kappa \ge \|P\|`) and :math:`Q = H_BB`:

1. **Affine bound.** :math:`g \ge |PG|/\kappa \ge |\mathrm{mig}(PG(z_c) \pm
   \sum_j|(PQ)_{kj}|)|/\kappa - |H_B\zeta| - \ell_B` (the box of :math:`PG(z_c) +
   PQ\varepsilon`, rotated so that near the fit, where every term is inside, :math:`PQ \approx
   \mathrm{diag}(h)` and the box is tight), and :math:`g \ge \langle G, d\rangle \ge
   |G(z_c)| - \sum_j|d^\top Q_{\cdot j}| - |H_B\zeta| - \ell_B` with
   :math:`d = G(z_c)/|G(z_c)|`.
2. **Convexity bound** (far from the fit, where most residuals are clipped and the affine
   bound needs small leaves). The energy :math:`E = \frac1n\sum_i\rho_\tau(|r_i|)` is convex
   in :math:`z` (a convex function of an affine map) with gradient :math:`G`, so for any
   reference :math:`z'` (the fit) :math:`\langle G(z), z - z'\rangle \ge E(z) - E(z')`, i.e.
   :math:`g(z) \ge (E(z) - E(z'))/|z - z'|`; on the leaf :math:`E(z) \ge E(z_c) +
   \langle G(z_c), \delta\rangle \ge E(z_c) - \sum_j|\langle G(z_c), B_j\rangle| -
   |G(z_c)||\zeta|` (the supporting hyperplane at the centre) and :math:`|z - z'| \le
   |z_c - z'| + \sum_j|B_j| + |\zeta|`. This bound is a region's at once: it loses only the
   leaf's size relative to its distance from the fit, not the terms' changes.

:math:`g_B` is the largest of the three, less the absolute float slack :math:`\gamma` below,
floored at 0. For :math:`q_1`: :math:`PG(z) - x = (PG(z_c) - c_x) + (PQ -
\mathrm{diag}\,h)\varepsilon + P(H_B\zeta + e)` (:math:`x = c_x + h\varepsilon`, :math:`PH = T`
at the fit), whose norm is at most :math:`e_B`; the parent's two forms of :math:`b_1` follow.

Measured (``benchmarks/bench_bundle_flat.py``, n = 100, :math:`\tau_m/\tau = 5`,
:math:`n\epsilon = 1{,}000`): without the convexity bound the envelope reached 60,000 leaves
with a certified acceptance of 3e-7 (the straddling and outside terms of leaves 64-1024
:math:`\sigma` from the fit summed to 100-200 :math:`\sigma` where :math:`g` changes by
10-30); with it, minimized over the leaf's vertices, 1,443 leaves and 9 draws in 0.8 CPU s
(0.16 s with the compiled term sums).
The ratio's minimum over the leaf is at a vertex: with :math:`N(\delta) = E(z_c) - E(z') +
\langle G(z_c), \delta\rangle > 0` affine and :math:`D(\delta) = |z_c + \delta - z'|`
convex, each superlevel set :math:`\{N - cD \ge 0\}` is convex, so :math:`N/D` is
quasi-concave and its minimum over a parallelepiped is attained at a vertex; the slack
:math:`\zeta` lowers :math:`N` by at most :math:`|G(z_c)||\zeta|` and raises :math:`D` by at
most :math:`|\zeta|`. Where :math:`N \le 0` at some vertex the bound is 0.

Floats. :math:`G(z_c)` is evaluated in floats here and :math:`g` by the library at the
proposals; both differ from exact arithmetic on the float inputs by at most a few units of
:math:`u = 2^{-53}` times the residuals' magnitudes, :math:`S = \max|y_i - c| + R + V`, plus
:math:`nu\tau` for the sums. The certificate subtracts :math:`\gamma = 128uS + 8(n + 2)u\tau`
plus :math:`10^{-12}` times the magnitudes that entered the bound, and every log-bound keeps
the parent's relative margin.
"""

from __future__ import annotations

import numpy as np

from ..learning.kernels.euclidean import euclidean_regression_gradient
from .bundle_whitened import _MARGIN, _U, WhitenedBundleSampler

try:
    from ._flat_numba import flat_g as _flat_g
    from ._flat_numba import flat_terms as _flat_terms
except ImportError:  # numba missing: the numpy path
    _flat_terms = _flat_g = None

__all__ = ["FlatBundleSampler", "flat_gradient", "flat_norm"]

#: Floats of one (leaves, n, d, 2d) array evaluated at once (a few such arrays live at once:
#: about 50 MB each).
CHUNK_FLOATS = 6_000_000
#: :math:`\tfrac12\sup_{|a| = 1}|D^2(r/|r|)[a, a]|` at :math:`|r| = 1`: :math:`1/\sqrt3`,
#: rounded up (module docstring).
HALF_D2 = 0.57735026918963
#: Newton steps of the clipped fit.
FIT_STEPS = 60


def flat_gradient(z, t, yc, tau):
    r""":math:`G` (m, 2d) at coordinates ``z`` (m, 2d), with ``yc`` the responses minus the
    public centre: the library's Euclidean kernel
    (:func:`~dpcore.learning.kernels.euclidean.euclidean_regression_gradient`) in these
    coordinates."""
    d = yc.shape[1]
    gp, gv = euclidean_regression_gradient(z[:, :d], z[:, d:], t, yc, tau)
    return np.concatenate([gp, gv], axis=-1)


def flat_norm(z, t, yc, tau):
    """:math:`g = |G|` at coordinates ``z`` (m, 2d): the compiled sums when numba is
    importable (as :meth:`FlatBundleSampler._g` evaluates proposals), else
    :func:`flat_gradient`'s norm."""
    z = np.ascontiguousarray(z, dtype=float)
    if _flat_g is not None:
        return _flat_g(z, np.asarray(t, dtype=float), np.asarray(yc, dtype=float), float(tau))
    return np.sqrt(np.sum(flat_gradient(z, t, yc, tau) ** 2, axis=-1))


class FlatBundleSampler(WhitenedBundleSampler):
    r"""Exact joint-regression KNG on :math:`\mathbb{R}^d` over whitened leaves (module
    docstring).

    Parameters
    ----------
    t : array (n,)
        Covariates in [-1, 1].
    y : array (n, d)
        Responses.
    tau : float
        Residual clipping bound.
    sigma : float
        KNG scale.
    lattice : FlatLattice
        Public support (footpoint ball about the public centre, speed ball) and output lattice.
    compiled : bool
        Sum the terms with the numba kernel when numba is importable (same bounds).
    **options
        Those of :class:`~dpcore.sampling.bundle_whitened.WhitenedBundleSampler` (``draws``,
        ``start``, ``sigma_ratios``, ``slack``, ``acceptance_goal``, ``box_cost``,
        ``max_boxes``).
    """

    def __init__(self, t, y, tau, sigma, lattice, *, compiled=True, **options):
        self.compiled = bool(compiled)
        y = np.asarray(y, dtype=float)
        if y.ndim != 2 or y.shape[1] != lattice.foot_dim:
            raise ValueError("`y` must be (n, d) with d the lattice's footpoint dimension.")
        self.yc = y - lattice.center
        self.d = lattice.foot_dim
        scale = (float(np.max(np.sqrt(np.sum(self.yc * self.yc, axis=-1)), initial=0.0))
                 + lattice.radius + lattice.max_speed)
        self.g_slack = 128 * _U * scale + 8 * (y.shape[0] + 2) * _U * float(tau)
        self.e_slack = (128 + 8 * (y.shape[0] + 2)) * _U * float(tau) * (scale + float(tau))
        dim = 2 * self.d
        self._signs = 2.0 * ((np.arange(2**dim)[:, None] >> np.arange(dim)) & 1) - 1.0
        super().__init__(t, y, tau, sigma, lattice, **options)

    # ------------------------------------------------------------------ the space's part
    def _energy(self, z):
        r = self.yc[None] - z[:, None, :self.d] - self.t[None, :, None] * z[:, None, self.d:]
        rn = np.sqrt(np.sum(r * r, axis=-1))
        tau = self.tau
        return np.mean(np.where(rn <= tau, 0.5 * rn * rn, tau * rn - 0.5 * tau * tau), axis=1)

    def _jacobian(self, z):
        """:math:`DG` (2d, 2d) at one point: :math:`\\frac1n\\sum_i (1, t_i)^\\top(1, t_i)
        \\otimes D\\psi(r_i)`, :math:`D\\psi = I` inside the ball, :math:`\\frac{\\tau}{|r|}(I -
        \\hat r\\hat r^\\top)` outside."""
        d, t = self.d, self.t
        r = self.yc - z[:d] - t[:, None] * z[d:]
        rn = np.sqrt(np.sum(r * r, axis=-1))
        out = rn > self.tau
        unit = r / np.where(rn > 0, rn, 1.0)[:, None]
        jpsi = np.broadcast_to(np.eye(d), (t.size, d, d)).copy()
        fac = self.tau / np.where(out, rn, 1.0)
        jpsi[out] = fac[out, None, None] * (np.eye(d) - unit[out, :, None] * unit[out, None, :])
        w = np.stack([np.ones_like(t), t], axis=1)                           # (n, 2)
        outer = w[:, :, None] * w[:, None, :]                                # (n, 2, 2)
        return np.einsum("nab,nij->aibj", outer, jpsi).reshape(2 * d, 2 * d) / t.size

    def _fit(self, start):
        """Damped Newton on the (convex) clipped energy from ``start`` (default: least
        squares); returns the fit and :math:`DG` there (any fit keeps the sampler exact)."""
        if start is None:
            design = np.stack([np.ones_like(self.t), self.t], axis=1)
            coef = np.linalg.lstsq(design, self.yc, rcond=None)[0]
            start = np.concatenate([coef[0], coef[1]])
        z = np.asarray(start, dtype=float).copy()
        for _ in range(FIT_STEPS):
            grad = flat_gradient(z[None], self.t, self.yc, self.tau)[0]
            step = np.linalg.lstsq(self._jacobian(z), grad, rcond=None)[0]
            e0, lam = float(self._energy(z[None])[0]), 1.0
            while lam > 1e-10 and float(self._energy((z - lam * step)[None])[0]) > e0:
                lam *= 0.5
            z = z - lam * step
            if lam * np.linalg.norm(step) <= 1e-15 * (1.0 + np.linalg.norm(z)):
                break
        self.e_ref = float(self._energy(z[None])[0])
        return z, self._jacobian(z)

    def _log_volume(self, z):
        return np.zeros(np.asarray(z).shape[0])

    def _log_volume_bound(self, zlo, zhi):
        """Upper bound of :math:`\\log J` over boxes (the affine chart: 0)."""
        return np.zeros(zlo.shape[0])

    def _g(self, z):
        r""":math:`g` at coordinates ``(m, 2d)``: the library's definition, or the same sums
        compiled (:func:`~dpcore.sampling._flat_numba.flat_g`) when ``compiled``; the two
        differ by the order of summation, inside the float slack :math:`\gamma`."""
        if self.compiled and _flat_g is not None:
            return flat_norm(z, self.t, self.yc, self.tau)
        from ..learning.regression import regression_gradient
        from ..manifolds import Euclidean

        p, v = self.lattice.center + z[:, :self.d], z[:, self.d:]
        gp, gv = regression_gradient(Euclidean(self.d), p, v, self.t, self.y, tau=self.tau)
        return np.sqrt(np.sum(gp * gp, axis=-1) + np.sum(gv * gv, axis=-1))

    # ------------------------------------------------------------------ bounds
    def _terms(self, zc, basis, zslack):
        """Per-leaf sums over the terms (module docstring, "The leaf certificate"): centre
        gradient ``g0`` (m, D), linear part ``q`` = H_B B (m, D, D), remainder bound ``loss``,
        the coefficient sum bounding ``|H_B|`` (m,), the energy at the centre (m,) and each
        axis's share of the remainders (m, D). Compiled (:mod:`~dpcore.sampling._flat_numba`,
        the same formulas) when numba is importable and ``compiled``."""
        if self.compiled and _flat_terms is not None:
            # One memory layout for the kernel: numba compiles a specialisation per layout
            # (the leaves' bases arrive Fortran-ordered or strided), each a compile of several
            # seconds in a fresh process; the values are the same in any layout.
            zc, basis, zslack = (np.ascontiguousarray(a, dtype=float)
                                 for a in (zc, basis, zslack))
            return _flat_terms(zc, basis, zslack, self.t, self.yc, self.tau)
        d, t, tau, n = self.d, self.t, self.tau, self.t.size
        r = self.yc[None] - zc[:, None, :d] - t[None, :, None] * zc[:, None, d:]   # (m, n, d)
        rho = np.sqrt(np.sum(r * r, axis=-1))
        bu, bw = basis[:, :d, :], basis[:, d:, :]                                  # (m, d, D)
        ba = bu[:, None] + t[None, :, None, None] * bw[:, None]                   # (m, n, d, D)
        col = np.abs(ba)
        su = np.sqrt(np.sum(zslack[:, :d] ** 2, axis=-1))
        sw = np.sqrt(np.sum(zslack[:, d:] ** 2, axis=-1))
        alpha = ((np.sqrt(np.sum(np.sum(col, axis=-1) ** 2, axis=-1))
                  + su[:, None] + np.abs(t)[None, :] * sw[:, None]) * (1 + 1e-12))
        inside = rho + alpha <= tau * (1 - 1e-12)
        outside = rho - alpha >= tau * (1 + 1e-12)
        straddle = ~inside & ~outside
        rho_min = np.where(outside, rho - alpha, 1.0)
        # linear coefficient of each term's change: 1 inside, tau/rho (times the projection
        # across r) outside, 1/2 straddling; remainder: 0, tau alpha^2 / (sqrt3 rho_min^2),
        # alpha / 2
        curved = outside & (d > 1)
        coef = np.where(inside, 1.0, np.where(curved, tau / np.where(curved, rho, 1.0),
                                               np.where(straddle, 0.5, 0.0)))
        rem = np.where(straddle, 0.5 * alpha, np.where(
            curved, HALF_D2 * tau * alpha * alpha / (rho_min * rho_min), 0.0)) * (1 + 1e-12)
        slope = np.where(straddle, 0.5, np.where(
            curved, 2 * HALF_D2 * tau * alpha / (rho_min * rho_min), 0.0))
        fac = np.sqrt(1.0 + t * t)[None, :]
        loss = np.sum(rem * fac, axis=1) / n * (1 + 1e-9)
        psi = r * np.minimum(1.0, tau / np.where(rho > 0, rho, 1.0))[..., None]
        g0 = -np.concatenate([np.mean(psi, axis=1), np.mean(t[None, :, None] * psi, axis=1)],
                             axis=-1)                                              # (m, D)
        unit = r / np.where(rho > 0, rho, 1.0)[..., None]
        along_r = np.einsum("mnk,mnkj->mnj", unit, ba)
        proj = ba - (curved[..., None] * unit)[..., None] * along_r[:, :, None, :]
        part = coef[..., None, None] * proj
        q = np.concatenate([np.sum(part, axis=1), np.einsum("n,mnkj->mkj", t, part)],
                           axis=1) / n                                             # (m, D, D)
        coef_sum = np.sum(coef * (1.0 + t * t)[None, :], axis=1) / n
        e_c = np.mean(np.where(rho <= tau, 0.5 * rho * rho, tau * rho - 0.5 * tau * tau), axis=1)
        per_axis = np.sqrt(np.sum(col * col, axis=2))                             # (m, n, D)
        share = np.einsum("mn,mnj->mj", slope * fac, per_axis) / n
        return g0, q, loss, coef_sum, e_c, share

    def _affine_bounds(self, g0, q):
        """For :math:`G = G_0 + Q\varepsilon` (before the remainder): :math:`PG_0`, :math:`PQ`,
        the row radii of :math:`PQ`, the box bound :math:`|\\mathrm{mig}|/\\kappa`, the bound
        along :math:`G_0/|G_0|` and :math:`|G_0|` (module docstring, "Affine bound")."""
        pg = g0 @ self.P.T
        pq = np.einsum("kl,mlj->mkj", self.P, q)
        rad = np.sum(np.abs(pq), axis=-1)
        mig = np.maximum(np.abs(pg) - rad, 0.0)
        box = np.sqrt(np.sum(mig * mig, axis=-1)) / self.kappa
        g_c = np.sqrt(np.sum(g0 * g0, axis=-1))
        direction = g0 / np.where(g_c > 0, g_c * (1 + 1e-12), 1.0)[:, None]
        along = g_c - np.sum(np.abs(np.einsum("mk,mkj->mj", direction, q)), axis=-1)
        return pg, pq, rad, box, along, g_c

    def _certify(self, zc, basis, zslack):
        """(g lower bound, e_B parts, g at the centre, per-axis score) of parallelepipeds
        (module docstring, "The leaf certificate")."""
        g0, q, loss, coef_sum, e_c, share = self._terms(zc, basis, zslack)
        zeta = np.sqrt(np.sum(zslack * zslack, axis=-1))
        h_zeta = coef_sum * zeta * (1 + 1e-12)
        pg, pq, rad, box, along, g_c = self._affine_bounds(g0, q)
        size = g_c + np.sum(rad, axis=-1) + loss + h_zeta
        g_lb = np.maximum(box, along) - h_zeta - loss - self.g_slack - 1e-12 * size
        # convexity: g(z) >= (E(z) - E(z_ref)) / |z - z_ref| with E(z) >= E(z_c) + <G(z_c), d>;
        # the ratio of that affine numerator to the convex distance is quasi-concave on the
        # leaf, so its minimum is at a vertex (module docstring)
        vert = np.einsum("mkj,vj->mvk", basis, self._signs)                      # (m, V, D)
        rise = ((e_c[:, None] + np.einsum("mk,mvk->mv", g0, vert)) * (1 - 1e-12)
                - np.abs(e_c)[:, None] * 1e-12 - (g_c * zeta)[:, None]
                - self.e_ref - self.e_slack)
        dist = (np.sqrt(np.sum(((zc - self.fit)[:, None, :] + vert) ** 2, axis=-1))
                + zeta[:, None]) * (1 + 1e-12)
        conv = np.where(np.all(rise > 0, axis=1),
                        np.min(rise / dist, axis=1), 0.0) * (1 - 1e-12) - self.g_slack
        g_lb = np.maximum(np.maximum(g_lb, conv), 0.0)
        return g_lb, (loss, h_zeta, pg, pq, size), g_c, share

    def _bounds(self, lo_idx, lev):
        """(keep, b_e, b_1, log volume, b_est, score) of leaves (module docstring)."""
        lo, hi = self._x_box(lo_idx, lev)
        m = lo.shape[0]
        c, h, zc, basis, zslack, zlo, zhi = self._parallelepipeds(lo, hi)
        keep = ~self.lattice.misses(zlo, zhi)
        b_e, b_1 = np.full(m, np.inf), np.full(m, np.inf)
        b_est = np.zeros(m)
        score = np.sum(np.abs(basis), axis=1)
        log_vol = np.sum(np.log(hi - lo), axis=-1)
        x_min, x_max = self._x_extent(c, h)
        eye = np.eye(self.dim)
        chunk = max(1, CHUNK_FLOATS // (self.t.size * self.d * self.dim))
        for start in range(0, m, chunk):
            self._build.pulse()
            sl = np.arange(start, min(m, start + chunk))
            idx = sl[keep[sl]]
            if idx.size == 0:
                continue
            g_lb, (loss, h_zeta, pg, pq, size), g_c, share = self._certify(
                zc[idx], basis[idx], zslack[idx])
            self.evaluations += idx.size
            # e = (PG0 - c_x) + (PQ - diag h) eps + P(H zeta + e), |.| <= e_b
            lin = pq - eye[None] * h[idx][:, None, :]
            e_rad = np.sum(np.abs(lin), axis=-1)
            e_mag = np.abs(pg - c[idx]) + e_rad
            e_b = (np.sqrt(np.sum(e_mag * e_mag, axis=-1)) * (1 + 1e-12)
                   + self.kappa * (h_zeta + loss + self.g_slack + 1e-12 * size))
            log_j = self._log_volume_bound(zlo[idx], zhi[idx])
            be = -g_lb / self.sigma + self.log_det_a + log_j
            b1 = np.full(idx.size, np.inf)
            for scale, log_c in zip(self.scales, self.log_c1, strict=True):
                delta = 1.0 / (self.kappa * self.sigma) - 1.0 / scale
                first = -delta * x_min[idx] + e_b / (self.kappa * self.sigma)
                second = -g_lb / self.sigma + x_max[idx] / scale
                b1 = np.minimum(b1, np.minimum(first, second) - log_c)
            b1 = b1 + self.log_det_a + self.log_k + log_j
            b_e[idx] = be + _MARGIN * (1 + np.abs(be))
            b_1[idx] = b1 + _MARGIN * (1 + np.abs(b1))
            # steering only: a leaf whose centre lies outside the support is estimated empty,
            # so that leaves straddling its boundary are split until their outer parts drop
            lat, k = self.lattice, self.d
            out = ((np.sqrt(np.sum(zc[idx, :k] ** 2, axis=-1)) > lat.radius)
                   | (np.sqrt(np.sum(zc[idx, k:] ** 2, axis=-1)) > lat.max_speed))
            b_est[idx] = np.where(out, -np.inf, -g_c / self.sigma + self.log_det_a)
            # split where the linear part's error or the terms' losses grow fastest
            score[idx] = np.sum(np.abs(lin), axis=1) + share
        return keep, b_e, b_1, log_vol, b_est, score
