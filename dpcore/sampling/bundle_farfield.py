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
points :math:`z` in the public support :math:`D = \{|u| \le R, |w| \le V\}` (a proposal whose
lattice cell is in :math:`D_L` lies in :math:`D`: the cell's centre is at least two spacings
inside, so the bound is needed, and claimed, only there), along the segment from :math:`z_c`
to :math:`z` (:mod:`dpcore.sampling.sphere_jacobian_bounds`, where the bounds are proven):

.. math:: g(z) \ge g(z_c) - \frac1n\sum_i \min\Big(\int_0^1\big|\tfrac{D}{ds}(a_i, b_i)\big|
          ds,\ (m_i(z) + m_i(z_c))\sqrt{1 + t_i^2}\Big),

each term's covariant-derivative bound in closed form from the range of its residual angle
:math:`\theta_i` over the segment, from the speed :math:`\eta_i(s) \le \eta_{0,i} +
s\eta_{1,i}` of the prediction :math:`\hat y_i` (below, :func:`prediction_speed`), from
:math:`P \ge |\dot p|`, :math:`N \ge |Dv/ds|` and :math:`\rho \le t_iW`; terms whose angle may
reach the cut locus get only the crude second bound. :math:`g(z_c)` is the library's float
gradient at the float centre, less an absolute :math:`10^{-10}` (the scope of rigour of
:mod:`~dpcore.sampling.sphere_enclosure`: exact arithmetic on the float data, float-vs-exact
differences ~1e-15). :func:`leaf_losses` evaluates the sum (numba,
:mod:`~dpcore.sampling._farfield_numba`, or numpy: the same formulas).

Prediction speed (issue 28)
---------------------------
Chart (:class:`~dpcore.sampling.sphere_enclosure.SphereBundleChart`): :math:`p =
\mathrm{Exp}_{m_0}(u)`, :math:`v = \sum_a w_af_a(p)` with the radially parallel frame
:math:`f`, so in :math:`f`-components :math:`v \equiv w`, :math:`e = w/|w|`,
:math:`\rho = t|w|`. Along :math:`z(s) = z_c + s\delta`, with :math:`r = |u|`,
:math:`\chi = u \times \delta_u = u_c \times \delta_u` (constant: :math:`u_s - u_c \parallel
\delta_u`), :math:`J` the rotation by :math:`\pi/2`, :math:`h(r) = (1 - \mathrm{sinc}\,r)/r^2
\in [0, 1/6]`, :math:`k(r) = (1 - \cos r)/r^2 \in [0, 1/2]`:

* :math:`\pi = \dot p \equiv \delta_u - h(r)\chi Ju` (:math:`d\exp_{m_0}` keeps the radial
  part and multiplies the angular one by :math:`\mathrm{sinc}\,r`;
  :math:`r^2\delta_u - (u\cdot\delta_u)u = \chi Ju`);
* :math:`\nu = Dv/ds \equiv \delta_w - k(r)\chi Jw` (the frame's connection form is
  :math:`(1 - \cos r)\,d\varphi`, :math:`\dot\varphi = \chi/r^2`; the sign is checked against
  finite differences by the tests);
* :math:`\dot{\hat y} = J(1)` for the Jacobi field with :math:`J(0) = \pi`, :math:`J'(0) =
  t\nu` (paper 002, eqs. 7-8): transported back to :math:`p`, :math:`L = Q_a\pi + tQ_b\nu`,
  :math:`Q_a = I - (1 - \cos\rho)nn^\top`, :math:`Q_b = I - (1 - \mathrm{sinc}\,\rho)nn^\top`,
  :math:`n = Jw/|w|`: a function of :math:`(u_s, w_s)` and :math:`\delta` alone, linear in
  :math:`\delta`, so :math:`\eta(s) = |L(s)|`.

At the centre :math:`L_c(\delta) = Q_a(w_c)A + tQ_b(w_c)B`, :math:`A = \delta_u -
h(r_c)\chi Ju_c`, :math:`B = \delta_w - k(r_c)\chi Jw_c`, is linear in :math:`\varepsilon`, so
its norm (convex) is largest at a vertex of the cube (8 up to sign; the slack :math:`\zeta`
adds at most :math:`s_0 + ts_1 = |\zeta_u|(1 + r_c^2/6) + t(|\zeta_w| + r_c|w_c||\zeta_u|/2)`).
The remainder :math:`|L(s) - L_c| \le s\,\eta_1` with (:math:`X \ge |\chi|`, :math:`|h'| \le
r/60`, :math:`|k'| \le r/12` for :math:`r < 3.8` (alternating series), :math:`r \le r_{max}`,
:math:`|w| \le W`, :math:`|\delta_w| \le D_w`)

.. math:: \eta_1 = XP\big(\tfrac{r_{max}^2}{60} + \tfrac16\big) + tX\big(\tfrac{r_{max}}{12}PW
          + \tfrac{D_w}2\big) + tD_w\big(q_aP + 0.3727\,t\rho N\big),

the first two from :math:`|h(r_s)u_s - h(r_c)u_c|` and :math:`|k(r_s)w_s - k(r_c)w_c|`, the
last from :math:`\|Q(w_s) - Q(w_c)\| \le s\sup\|dQ/ds\|`: :math:`dQ_a/ds` has the part
:math:`\sin\rho\,\dot\rho\,nn^\top` and the part :math:`(1 - \cos\rho)(\dot nn^\top +
n\dot n^\top)`, :math:`|\dot n| = |\delta_{w\perp}|/|w|`; in the basis :math:`(e, n)` this is
:math:`\begin{pmatrix}0 & c\\ c & a\end{pmatrix}` of norm :math:`\le |a| + |c| \le
t(|\sin\rho||\delta_{w\parallel}| + \frac{1 - \cos\rho}{\rho}|\delta_{w\perp}|) \le
tD_wq_a`, :math:`q_a = \sqrt{\min(\rho, 1)^2 + \min(\rho/2, 0.7247)^2}`
(:math:`\max_x(1 - \cos x)/x < 0.7247`); for :math:`Q_b`, :math:`|\mathrm{sinc}'| \le \rho/3`
and :math:`(1 - \mathrm{sinc}\,\rho)/\rho \le \rho/6` give :math:`tD_w\rho\sqrt{1/9 + 1/36}
\le 0.3727\,tD_w\rho`. So :math:`\eta(s) \le \eta_0 + s\eta_1`, :math:`\eta_0 =
\max_\varepsilon|L_c| + s_0 + ts_1`, and :math:`|\theta(s) - \theta(c)| \le s\eta_0 +
s^2\eta_1/2`. Also :math:`|\pi| \le P = \max|\delta_u|`, :math:`|\nu| \le N = \min(D_w +
XW/2, \max_\varepsilon|B| + s_1 + \ldots)`. :math:`|u|` and :math:`|w|` are convex along a
segment, so with its end in :math:`D`: :math:`r \le \max(r_c, \min(R, r_{hull}))`,
:math:`|w| \le W = \max(|w_c|, \min(V, w_{hull}))`. This keeps the cancellation between
moving the footpoint and the shooting vector that makes the valley's thin directions thin,
and the cosine/sinc factors of the Jacobi field exactly at the centre (the previous bound
added :math:`t\rho^2N/3` and :math:`(r^2/6 + tWr/2)P`, first order in the leaf's size).

The Gauss-Newton split bound (:mod:`~dpcore.sampling.sphere_gn_bounds`, where it is proven)
keeps the terms' Gauss-Newton parts at the centre with their signs (they cancel in the
valley's thin directions) and bounds only their change along the segment and the
residual-dependent rest term by term; the compiled path evaluates it in the same loop
(``gn_split``), and a leaf's :math:`g_B` is the larger of the two lower bounds. The same loop
also evaluates the library's :math:`g(z_c)` (its formulas, sharing the loop's trigonometry;
:func:`centre_gradient`).

Leaves whose box comes within ``near_sigmas`` :math:`\sigma` of the fit (in whitened
coordinates; default 0) also get the affine certificate of the parent class, and each of
:math:`b_e, b_1` is the smaller (both are upper bounds, so is their minimum). For the others
:math:`b_1 = \min_s(-g_B/\sigma + \max_B|x|/\sigma_s - \log c_s) + \log J_B + \log|\det A| +
\log S` (the second form of the parent class). Every bound carries the relative margin
:math:`10^{-10}` of the parent class.

Partition: the parent's k-d refinement of the whitened box (first the leaf holding the fit
is split until :math:`q_1` certifies it, which leaves dyadic shells of leaves whose size grows
with their distance to the fit; then the leaves with the largest excess mass are split) with
the split axis chosen by each axis's share of the mean-value loss (each term's bound per unit
of prediction speed times the axis's column of :math:`L_c`).

Exactness and float safety are those of the parent class: the envelope holds by proof on
every leaf (on :math:`D`), a proposal whose ratio exceeds :math:`1 + 10^{-9}` raises
:class:`~dpcore.exceptions.EnvelopeViolation`, and the released value is the public lattice
cell of :mod:`~dpcore.sampling.bundle_lattice`, every support cell reachable through the
:math:`q_0` witness.

With the rotating-form term bound of :mod:`~dpcore.sampling.sphere_jacobian_bounds`
(issue 28, whole sphere; the smallest of three term bounds) the same benchmark, measured in
one run against the previous kernel: 31,000 leaves and 4.8-4.9 CPU s in total at
:math:`n\epsilon` = 250 and 1000, against 46,000-48,000 leaves and 6.3-6.6 s (the figures
below are the earlier, more loaded measurement).

Cost (measured, ``benchmarks/bench_bundle_farfield.py``, n = 250, tau = 0.2, R = 0.5,
V = 1.5, 9 draws; shared machine, CPU seconds, numba kernels loaded; refinement until the
certified acceptance reaches :math:`2\cdot10^{-4}`, the defaults ``near_sigmas = 0`` and
``gn_split = True``): at :math:`n\epsilon` = 250, 500 and 1000, 46,000, 52,000 and 48,000
leaves give certified acceptances of :math:`2.3, 2.9, 2.7\cdot10^{-4}` (measured
:math:`2.1, 3.2, 4.4\cdot10^{-4}`) in 8.6, 8.8 and 8.8 s including the 9 draws (1.1-1.4 s).
Before the Gauss-Newton split bound, the fused centre gradient and ``near_sigmas = 0`` the
same run took 33, 33 and 27-34 s to :math:`2\cdot10^{-3}` with 96,000, 105,000 and 91,000
leaves, and about 16-19 s at 1000 to :math:`1.7\cdot10^{-4}` with 67,000 leaves (the split
bound alone: 72,000 to 48,000 leaves at 1000; the affine certificate within 8 :math:`\sigma`
cost 2-13 s for no fewer leaves). What limits it now: the numba kernel (about 58 microseconds
per leaf at n = 250, the Gauss-Newton split adding 2-3) is about 80% of the build, and the
envelope mass sits at 16-256 :math:`\sigma` in leaves where about half the residuals are
clipped (their change is still summed term by term) and where the residual-dependent part
of every term (holonomy and frame rotation, :math:`m\alpha_a`, about a quarter of the
mean-value loss there) is summed in absolute value although the residuals' directions
cancel. Measured on such leaves, the true per-term second-order remainder (summed in absolute
value) is about :math:`2\sigma`: a second-order certificate with a tight closed-form
remainder would cover them, but the generic bound of each factor's second derivative is about
100 times that (so that is not done here).
"""

from __future__ import annotations

import math

import numpy as np

from ..manifolds.sphere import CUT_TOL
from .bundle_sampler import _gradient6
from .bundle_whitened import _DOMAIN, _MARGIN, WhitenedBundleSampler
from .intervals import sinc_at
from .sphere_enclosure import CUT_MARGIN
from .sphere_jacobian_bounds import MARGIN, PIECES, THETA_PAD, term_change_bounds

try:
    from ._farfield_numba import centre_gradient_norm as _centre_g
    from ._farfield_numba import farfield_loss as _farfield_loss
except ImportError:  # numba missing: the numpy path
    _farfield_loss = _centre_g = None

__all__ = ["FarFieldBundleSampler", "leaf_geometry", "leaf_losses", "prediction_speed",
           "residual_angles"]

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


def _h_k(r):
    r""":math:`h(r) = (1 - \mathrm{sinc}\,r)/r^2` and :math:`k(r) = (1 - \cos r)/r^2` (series
    below 0.5, error below 1e-13 relative)."""
    r2 = r * r
    small = r < 0.5
    rs = np.where(small, 1.0, r)
    h_dir = (1.0 - np.sin(rs) / rs) / (rs * rs)
    h_ser = 1 / 6 - r2 / 120 + r2**2 / 5040 - r2**3 / 362880 + r2**4 / 39916800
    k = 0.5 * np.where(r > 0, np.sin(0.5 * r) / np.where(r > 0, 0.5 * r, 1.0), 1.0) ** 2
    return np.where(small, h_ser, h_dir), k


#: The 8 sign vectors of {-1, 1}^4 with the last entry +1 (each vertex up to sign).
_SIGNS = 2.0 * ((np.arange(8)[:, None] >> np.arange(4)) & 1) - 1.0
_SIGNS[:, 3] = 1.0


def leaf_geometry(center, basis, slack, r_cap=math.inf, w_cap=math.inf):
    r"""Chart speeds of parallelepipeds :math:`\{c + B\varepsilon + \zeta\}` along the segments
    from :math:`c` to their points in :math:`|u| \le` ``r_cap``, :math:`|w| \le` ``w_cap``
    (module docstring, "Prediction speed").

    Parameters
    ----------
    center : array (m, 4)
    basis : array (m, 4, 4)
        Row: coordinate, column: noise symbol.
    slack : array (m, 4)
        :math:`|\zeta_k| \le` slack.
    r_cap, w_cap : float
        Radii of the convex region (the public support) the segments' ends lie in.

    Returns
    -------
    dict
        ``P, N, Dw, W, r_max`` (m,): bounds of :math:`|\pi|`, :math:`|\nu|`,
        :math:`|\delta_w|`, :math:`|v|` and :math:`|u|` along the segments; ``a1, a2, b1, b2``
        (m, 8): the components of :math:`A_\varepsilon, B_\varepsilon` along :math:`w_c/|w_c|`
        and across at the vertices; ``wc`` (m,): :math:`|w_c|`; ``s0, s1, r0, r1`` (m,): the
        slack's and the remainders' shares; ``col_*`` (m, 4, 2): the same components of each
        noise symbol's column (to choose split axes).
    """
    reach = np.sum(np.abs(basis), axis=-1) + slack
    lo, hi = center - reach, center + reach
    far = np.maximum(np.abs(lo), np.abs(hi))
    up = 1.0 + 1e-12
    uc, wc = center[:, :2], center[:, 2:]
    r_c, w_c = np.hypot(uc[:, 0], uc[:, 1]), np.hypot(wc[:, 0], wc[:, 1])
    # |u|, |w| are convex along a segment: at most their values at the ends
    r_max = np.maximum(np.minimum(np.hypot(far[:, 0], far[:, 1]), r_cap), r_c) * up
    w_max = np.maximum(np.minimum(np.hypot(far[:, 2], far[:, 3]), w_cap), w_c) * up
    h_c, k_c = _h_k(r_c)
    delta = np.einsum("mkj,vj->mvk", basis, _SIGNS)                          # (m, 8, 4)
    du, dw = delta[..., :2], delta[..., 2:]
    chi = uc[:, None, 0] * du[..., 1] - uc[:, None, 1] * du[..., 0]       # u_c x delta_u
    ju = np.stack([-uc[:, 1], uc[:, 0]], axis=-1)[:, None, :]            # J u_c
    jw = np.stack([-wc[:, 1], wc[:, 0]], axis=-1)[:, None, :]
    a_v = du - (h_c[:, None] * chi)[..., None] * ju
    b_v = dw - (k_c[:, None] * chi)[..., None] * jw
    zu, zw = np.hypot(slack[:, 0], slack[:, 1]), np.hypot(slack[:, 2], slack[:, 3])
    P = (np.max(np.hypot(du[..., 0], du[..., 1]), axis=1) + zu) * up
    d_w = (np.max(np.hypot(dw[..., 0], dw[..., 1]), axis=1) + zw) * up
    X = (np.max(np.abs(chi), axis=1) + r_c * zu) * up                       # |u_c x delta_u|
    s1 = zw + 0.5 * r_c * w_c * zu
    r1 = X * (r_max / 12.0 * P * w_max + 0.5 * d_w)
    nb = np.max(np.hypot(b_v[..., 0], b_v[..., 1]), axis=1) + s1 + r1
    N = np.minimum(d_w + 0.5 * X * w_max, nb) * up
    e = np.where(w_c[:, None] > 0, wc / np.where(w_c > 0, w_c, 1.0)[:, None], [1.0, 0.0])
    n_ = np.stack([-e[:, 1], e[:, 0]], axis=-1)

    def comp(x, d):
        return np.einsum("m...k,mk->m...", x, d)

    out = {"P": P, "N": N, "Dw": d_w, "W": w_max, "r_max": r_max, "wc": w_c, "X": X,
           "a1": comp(a_v, e), "a2": comp(a_v, n_), "b1": comp(b_v, e), "b2": comp(b_v, n_),
           "s0": zu * (1.0 + r_c * r_c / 6.0), "s1": s1,
           "r0": X * P * (r_max * r_max / 60.0 + 1.0 / 6.0), "r1": r1}
    # each noise symbol's column of A and B (to choose split axes)
    cx = uc[:, 0, None] * basis[:, 1, :] - uc[:, 1, None] * basis[:, 0, :]   # (m, 4)
    ca = basis[:, :2, :] - (h_c[:, None] * cx)[:, None, :] * ju[:, 0, :, None]
    cb = basis[:, 2:, :] - (k_c[:, None] * cx)[:, None, :] * jw[:, 0, :, None]
    ca, cb = np.swapaxes(ca, 1, 2), np.swapaxes(cb, 1, 2)                    # (m, 4, 2)
    out.update({"col_a1": comp(ca, e), "col_a2": comp(ca, n_), "col_b1": comp(cb, e),
                "col_b2": comp(cb, n_)})
    return out


def _jacobian_norm(a1, a2, b1, b2, t, cos_r, sinc_r):
    """|(a1 + t b1, C a2 + S t b2)| (leading axis m, then n, then the last axis of a1)."""
    tt = t[..., None]
    par = a1[:, None] + tt * b1[:, None]
    perp = cos_r[..., None] * a2[:, None] + (sinc_r * t)[..., None] * b2[:, None]
    return np.sqrt(par * par + perp * perp)


def prediction_speed(geo, t):
    r"""Bounds (m, n) of the speed :math:`\eta_i` of each prediction :math:`\hat y_i` along
    the segments from a parallelepiped's centre (module docstring, "Prediction speed").

    Parameters
    ----------
    geo : dict
        :func:`leaf_geometry` of the parallelepipeds.
    t : array (n,)
        Covariates.

    Returns
    -------
    eta0, eta1 : ndarray (m, n)
        The speed at parameter :math:`s` of the segment is at most ``eta0 + s * eta1``.
    """
    at = np.abs(np.asarray(t, dtype=float))[None, :]
    P, N, W, d_w = (geo[k][:, None] for k in ("P", "N", "W", "Dw"))
    rho_c = at * geo["wc"][:, None]
    lin = np.max(_jacobian_norm(geo["a1"], geo["a2"], geo["b1"], geo["b2"], at,
                                np.cos(rho_c), np.sinc(rho_c / math.pi)), axis=-1)
    rho = at * W
    q_a = np.hypot(np.minimum(rho, 1.0), np.minimum(0.5 * rho, 0.7247))
    eta0 = (lin * (1.0 + 1e-12) + geo["s0"][:, None] + at * geo["s1"][:, None]) * (
        1.0 + 1e-12) + 1e-12 * (P + at * N)
    eta1 = (geo["r0"][:, None] + at * geo["r1"][:, None]
            + at * d_w * (q_a * P + at * 0.3727 * rho * N)) * (1.0 + 1e-12)
    return eta0, eta1


def leaf_losses(chart, zc, geo, t, y, tau, compiled=True, with_gradient=False,
                split=False):
    r"""Mean-value losses :math:`\frac1n\sum_i\int|DG_i/ds|` (m,) and split scores (m, 4) of
    parallelepipeds (module docstring): numba (:mod:`~dpcore.sampling._farfield_numba`) when
    available and ``compiled``, else numpy; both evaluate the same bounds.

    Parameters
    ----------
    chart : SphereBundleChart
    zc : array (m, 4)
        Centres.
    geo : dict
        :func:`leaf_geometry` of the parallelepipeds.
    t, y : arrays (n,), (n, 3)
        The data.
    tau : float
    compiled : bool
    with_gradient : bool
        Also return :math:`g` at the centres (:func:`centre_gradient`; the compiled path
        computes it in the same loop).
    split : bool
        With ``with_gradient``, also return the Gauss-Newton split lower bound of :math:`g`
        on each leaf (:mod:`~dpcore.sampling.sphere_gn_bounds`; compiled path only, -inf
        elsewhere), before the absolute slack :data:`G_SLACK`.

    Returns
    -------
    loss : ndarray (m,)
    score : ndarray (m, 4)
        Each noise symbol's share of the loss (the terms' bounds per unit of prediction
        speed times the symbol's share of each prediction's linear speed).
    g : ndarray (m,)
        Only with ``with_gradient``.
    lower : ndarray (m,)
        Only with ``with_gradient`` and ``split``.
    """
    t = np.asarray(t, dtype=float)
    if compiled and _farfield_loss is not None:
        p, v = chart.to_bundle(zc[:, :2], zc[:, 2:])
        geo_s = np.stack([geo[k] for k in ("P", "N", "Dw", "W", "r_max", "wc", "s0", "s1",
                                           "r0", "r1", "X")], axis=1)
        geo_v = np.stack([geo[k] for k in ("a1", "a2", "b1", "b2")], axis=1)
        geo_c = np.stack([geo[k] for k in ("col_a1", "col_a2", "col_b1", "col_b2")], axis=1)
        loss, score, g, lower = _farfield_loss(
            geo_s, geo_v, geo_c, p, v, np.asarray(y, dtype=float), t, float(tau), PIECES,
            CUT_MARGIN, THETA_PAD, MARGIN, CUT_TOL, bool(split))
        if not with_gradient:
            return loss, score
        bad = ~np.isfinite(g)
        if np.any(bad):
            g[bad] = centre_gradient(chart, zc[bad], t, y, tau, compiled=False)
        return (loss, score, g, lower) if split else (loss, score, g)
    theta = residual_angles(chart, zc, t, y)
    n_leaves = zc.shape[0]
    at = np.abs(t)
    eta, eta1 = prediction_speed(geo, t)
    P, N = geo["P"][:, None], geo["N"][:, None]
    bound, smooth = term_change_bounds(theta, t, geo["P"], geo["N"], geo["W"], tau, eta=eta,
                                       eta1=eta1)
    n = t.size
    loss = np.sum(bound, axis=1) / n * (1.0 + 1e-9)
    rate = np.where(smooth, bound, 0.0) / np.maximum(np.minimum(eta, P + at * N), 1e-300)
    rho_c = at[None, :] * geo["wc"][:, None]
    col = _jacobian_norm(geo["col_a1"], geo["col_a2"], geo["col_b1"], geo["col_b2"],
                         at[None, :], np.cos(rho_c), np.sinc(rho_c / math.pi))
    score = np.einsum("mn,mnj->mj", rate, col) / n
    if with_gradient:
        g = centre_gradient(chart, zc, t, y, tau, compiled=False)
        return (loss, score, g, np.full(n_leaves, -np.inf)) if split else (loss, score, g)
    return loss, score


def centre_gradient(chart, zc, t, y, tau, compiled=True):
    """:math:`g = |G|` (m,) at chart points ``zc`` (m, 4): the library's formulas, in one numba
    pass per point when available and ``compiled`` (agreement to 1e-12 is tested; the
    certificate subtracts :data:`G_SLACK`), else (and where :math:`|v| \\le 10^{-12}`) the
    library itself."""
    if compiled and _centre_g is not None:
        p, v = chart.to_bundle(zc[:, :2], zc[:, 2:])
        g = _centre_g(p, v, np.asarray(y, dtype=float), np.asarray(t, dtype=float),
                      float(tau), CUT_TOL)
        bad = ~np.isfinite(g)
        if np.any(bad):
            g[bad] = np.sqrt(np.sum(_gradient6(chart, zc[bad], t, y, tau) ** 2, axis=-1))
        return g
    return np.sqrt(np.sum(_gradient6(chart, zc, t, y, tau) ** 2, axis=-1))


class FarFieldBundleSampler(WhitenedBundleSampler):
    r"""Exact joint-regression KNG on :math:`S^2` over whitened leaves, certified far from the
    fit by closed-form per-term mean-value bounds (module docstring).

    Parameters are those of :class:`~dpcore.sampling.bundle_whitened.WhitenedBundleSampler`
    (``enclosure`` applies to the near leaves), plus:

    near_sigmas : float
        Leaves within this many :math:`\sigma` of the fit (whitened distance of the leaf's
        box) also get the parent's affine certificate (default 0: none; it was 8 before the
        Gauss-Newton split bound, which made the affine certificate cost more than it saves).
    compiled : bool
        Certify leaves with the numba kernel when numba is importable (same bounds).
    gn_split : bool
        Also certify leaves by the Gauss-Newton split bound
        (:mod:`~dpcore.sampling.sphere_gn_bounds`; compiled path only) and keep the larger
        lower bound.
    """

    def __init__(self, t, y, tau, sigma, lattice, *, near_sigmas=0.0, box_cost=5.0,
                 max_boxes=20_000, compiled=True, gn_split=True, **options):
        self.near_sigmas = float(near_sigmas)
        self.compiled = bool(compiled)
        self.gn_split = bool(gn_split)
        self.mv_evaluations = 0
        self.gn_wins = 0
        super().__init__(t, y, tau, sigma, lattice, box_cost=box_cost, max_boxes=max_boxes,
                         **options)

    # ------------------------------------------------------------------ bounds
    def _mean_value(self, zc, basis, zslack):
        """(g lower bound, g at the centre, per-axis score) of parallelepipeds."""
        geo = leaf_geometry(zc, basis, zslack, self.lattice.radius, self.lattice.max_speed)
        loss, score, g_c, lower = leaf_losses(self.chart, zc, geo, self.t, self.y, self.tau,
                                              compiled=self.compiled, with_gradient=True,
                                              split=True)
        if not self.gn_split:
            lower = np.full_like(g_c, -np.inf)
        g_lb = np.maximum(np.maximum(g_c - loss, lower) - G_SLACK, 0.0)
        self.gn_wins += int(np.sum(lower > g_c - loss))
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
        x_min, x_max = self._x_extent(c, h)
        gap = np.maximum(np.maximum(zlo[:, :2], -zhi[:, :2]), 0.0)
        for start in range(0, m, CHUNK):
            self._build.pulse()
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
            # a leaf whose score is 0 on every axis (every term took its crude bound) keeps the
            # geometric score above (split the widest axis), not always the first axis. (Void
            # certificates keep their mean-value score here, unlike the whole-sphere charts:
            # measured at n eps = 1,000, R = 0.5, V = 1.5, the widest axis took 45.6k leaves
            # and 13.0 s where the score took 27.5k and 8.4 s.)
            informative = np.all(np.isfinite(sc), axis=1) & (np.sum(sc, axis=1) > 0)
            score[idx] = np.where(informative[:, None], sc, score[idx])
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
        out["gn_wins"] = int(self.gn_wins)
        return out
