r"""Closed-form bounds of how fast each term of the joint-regression gradient on :math:`S^2`
can change along a segment of chart coordinates (a first-order, mean-value lower bound of
:math:`g` over a region; :mod:`dpcore.sampling.bundle_farfield` uses it far from the fit).

Notation (paper 002, eqs. 5-8; :mod:`~dpcore.sampling.sphere_enclosure`)
------------------------------------------------------------------------
Term :math:`i` (drop the index): covariate :math:`t \in [0, 1]`, response :math:`y`,
:math:`V = tv`, :math:`\rho = t|v|`, :math:`C = \cos\rho`, :math:`S = \mathrm{sinc}\,\rho`,
:math:`\hat y = Cp + SV = \mathrm{Exp}_p(V)`, :math:`\theta = d(\hat y, y)`, clipped residual
:math:`\varepsilon = \psi(\theta)\,u`, :math:`\psi = \min(\theta, \tau)`, :math:`u` the unit
vector at :math:`\hat y` towards :math:`y`, :math:`m = |\varepsilon| = \psi(\theta)`. Its
gradient term is :math:`G_i = -\frac1n(a, b)`, :math:`a = (d_p\mathrm{Exp})^\dagger\varepsilon`,
:math:`b = t(d_v\mathrm{Exp})^\dagger\varepsilon` (paper 002, eqs. 5-6). By eqs. 7-8 these
are Jacobi fields along :math:`\gamma(\lambda) = \mathrm{Exp}_p(\lambda V)`; on :math:`S^2`,
with :math:`e` the unit direction of :math:`\gamma`, :math:`N` the unit normal (both parallel
along :math:`\gamma`) and :math:`\Pi` parallel transport from :math:`p` to :math:`\hat y`
along :math:`\gamma`:

.. math:: a = \Pi^{-1}Q_a\varepsilon,\ Q_a = I - (1 - C)NN^\top, \qquad
          b = t\,\Pi^{-1}Q_b\varepsilon,\ Q_b = I - (1 - S)NN^\top

(:math:`d_p\mathrm{Exp}` keeps the component along :math:`e` and multiplies the one along
:math:`N` by :math:`C`; :math:`d_v\mathrm{Exp}` by :math:`S`; :math:`|Q_a|, |Q_b| \le 1`). In
ambient form (the direct form below) :math:`a = M_a\varepsilon`, :math:`M_a = CI - \hat y
p^\top`, :math:`b = tM_b\varepsilon`, :math:`M_b = S(I - pp^\top) + R(\rho)V(CV -
\rho^2Sp)^\top`, :math:`R(\rho) = (1 - \mathrm{sinc}\,2\rho)/\rho^2`, with
:math:`\langle p, \varepsilon\rangle = -\alpha\sin\rho`, :math:`|\alpha| \le m`.

The mean-value bound (intrinsic)
--------------------------------
Let :math:`z(s) = c + s(z - c)`, :math:`s \in [0, 1]`, be a segment of chart coordinates and
:math:`P_s` parallel transport along :math:`p(s)` back to :math:`p(0)` (applied to both
components; an isometry of the Sasaki norm). Then
:math:`\frac{d}{ds}P_sG(s) = P_s\frac{DG}{ds}`, so

.. math:: g(z) = |P_1G(1)| \ge g(c) - \sum_i \int_0^1\Big|\frac{DG_i}{ds}\Big|\,ds ,

and per term also :math:`|P_1G_i(1) - G_i(0)| \le (m(z) + m(c))\sqrt{1 + t^2}/n` (the crude
bound, the only one used where :math:`\theta` may reach the cut locus, where the library's
residual jumps to 0). :math:`G_i` is Lipschitz along the segment (:math:`\psi` has a kink at
:math:`\tau`, the formulas below are smooth where :math:`\rho > 0`, and :math:`G_i` is smooth
in :math:`(p, v)`), so the integral form holds with the bounds below at almost every
:math:`s`.

Speeds along the segment
------------------------
:math:`\pi = \dot p`, :math:`\nu = Dv/ds` (:math:`|\pi| \le P`, :math:`|\nu| \le N`,
:math:`|v| \le W`; from the chart, :mod:`~dpcore.sampling.bundle_farfield`, function
``leaf_geometry``), :math:`|\dot\rho| = t|\langle\nu, e\rangle| \le tN`. The speed
:math:`\eta` of :math:`\hat y` is :math:`|J(1)|` for the Jacobi field with
:math:`J(0) = \pi`, :math:`J'(0) = t\nu` (eqs. 7-8): :math:`J_\parallel(\lambda) = \pi_\parallel
+ \lambda t\nu_\parallel`, :math:`J_\perp(\lambda) = \pi_\perp\cos\lambda\rho +
t\nu_\perp\sin(\lambda\rho)/\rho`; :mod:`~dpcore.sampling.bundle_farfield` bounds it by
:math:`\eta(s) \le \eta_0 + s\eta_1` (the exact Jacobian at the centre plus a remainder) and
always :math:`\eta \le P + tN` (Minkowski, :math:`|C|, |S| \le 1`). :math:`\theta` is
1-Lipschitz in :math:`\hat y`, so at parameter :math:`s`, :math:`|\theta(s) - \theta(c)| \le
s\eta_0 + s^2\eta_1/2`.

The residual's covariant derivative. :math:`u = -\nabla\theta` and
:math:`\mathrm{Hess}\,\theta = \cot\theta\,(I - uu^\top)` on :math:`S^2`, so for
:math:`\delta = \delta_\parallel u + \delta_\perp`:
:math:`D_\delta\varepsilon = -\psi'\delta_\parallel u - \psi\cot\theta\,\delta_\perp`
(orthogonal parts), hence :math:`|D\varepsilon/ds| \le \kappa_\varepsilon\eta` with
:math:`\kappa_\varepsilon = \sup_\theta\max(\psi'(\theta), \psi(\theta)|\cot\theta|)` over the
range. In closed form (:func:`residual_turn_rate`): 1 if the range meets :math:`[0, \tau)`,
:math:`\theta|\cot\theta| \le 1` below :math:`\pi/2` and increasing above, and
:math:`\tau|\cot\theta|` (decreasing then increasing) on :math:`[\max(\theta_{lo},\tau),
\theta_{hi}]`: endpoint values.

Term bounds, transport form (issue 28)
--------------------------------------
Let :math:`Z(\lambda, s)` be parallel along :math:`\gamma_s` with :math:`Z(1, s) = X(s)`, a
field along :math:`\hat y(s)`. Then :math:`D_\lambda D_sZ = R(\partial_\lambda\gamma,
\partial_s\gamma)Z = R(\gamma', J)Z`, and on :math:`S^2` (curvature 1)
:math:`|R(\gamma', J)Z| = \rho|J_\perp||Z|`, so (holonomy of the thin quadrilateral swept by
:math:`\gamma_s`)

.. math:: \Big|\frac{D}{ds}\Pi^{-1}X - \Pi^{-1}\frac{DX}{ds}\Big| \le |X|\,\Omega, \quad
          \Omega = \int_0^\rho|J_\perp|\,dr \le P\,c_1 + tN\frac{1 - \cos\rho}{\rho}
          \le P\,c_1 + tN\frac{\rho}2

:math:`c_1 = \int_0^\rho|\cos r|\,dr \le \min(\rho, 1)` if :math:`\rho \le \pi/2`, else
:math:`\le \rho` (and :math:`\int_0^\rho|\sin r|\,dr \le \rho^2/2` for every :math:`\rho`, so
the last form holds beyond :math:`\pi` too). With :math:`X = Q_a\varepsilon` (:math:`|X| \le m`):
:math:`D(Q_a\varepsilon) = Q_aD\varepsilon - \sin\rho\,\dot\rho\,\varepsilon_NN - (1 - C)
(\langle\varepsilon, DN\rangle N + \varepsilon_NDN)`. :math:`DN \perp N`, so the last bracket
has norm :math:`|DN||\varepsilon|`; :math:`|DN| = |J'_\perp(1)|/\rho \le P|\sin\rho| +
tN|C|/\rho` (the end direction :math:`\gamma'(1)/\rho` turns at :math:`J'_\perp(1)/\rho`).
With :math:`1 - C \le \min(\rho^2/2, 2)`, :math:`(1 - C)/\rho \le \rho/2`, :math:`|\sin\rho|
\le s := \min(\rho, 1)`:

.. math:: |Da/ds| \le A_T := \kappa_\varepsilon\eta + m\big(P(c_1 + \min(\tfrac{\rho^2}2, 2)s)
          + tN(s + \rho)\big).

Likewise with :math:`Q_b` (:math:`|\dot S| \le \frac\rho3|\dot\rho|`, :math:`0 \le 1 - S \le
\rho^2/6`, :math:`(1 - S)/\rho \le \rho/6`):

.. math:: |Db/ds| \le B_T := t\big(\kappa_\varepsilon\eta + m(P(c_1 + \tfrac{\rho^2}6s)
          + tN\rho)\big).

All with :math:`\rho = \rho_{max} = tW` (each bound increases with :math:`\rho`). Where
:math:`\rho = 0` on the segment (:math:`t = 0` or :math:`v = 0`) :math:`e` is undefined but
:math:`a, b` are smooth, so the bound (continuous in :math:`\rho`) holds in the limit.
Compared with the direct form below, the frame's rotation and the holonomy cost
:math:`m\rho\cdot\text{speed}/2` instead of :math:`m\sin\rho` times the sum of three speeds.

Term bounds, rotating form (issue 28, whole sphere)
--------------------------------------------------
The transport form pays the holonomy :math:`P c_1` and the frame's rotation separately; at
large :math:`\rho` (speeds up to :math:`\pi`) both are first order with constants 2-5 while
the rotation they describe is much smaller (measured on far-field leaves of the whole
sphere: about 60% of the summed bound). Exact instead: let :math:`e_p = v/|v|`,
:math:`N_p = Je_p` at :math:`p` and :math:`(e, N)` their parallel transports along
:math:`\gamma` (at :math:`\hat y`: :math:`e = \gamma'(1)/\rho`). The scalars
:math:`\varepsilon_e = \langle\varepsilon, e\rangle`, :math:`\varepsilon_N = \langle
\varepsilon, N\rangle` and :math:`a = \varepsilon_ee_p + C\varepsilon_NN_p`,
:math:`b = t(\varepsilon_ee_p + S\varepsilon_NN_p)` (the adjoints of :math:`d\mathrm{Exp}`
on :math:`S^2`). Along :math:`s`: :math:`De/ds = \omega N` with
:math:`\omega = J'_\perp(1)/\rho = -\pi_\perp\sin\rho + \nu_\perp C/|v|`
(:math:`D_s\gamma'(1) = J'(1)`, :math:`J'_\parallel(1) = \dot\rho`), so
:math:`\dot\varepsilon_e = D\varepsilon_e + \omega\varepsilon_N`,
:math:`\dot\varepsilon_N = D\varepsilon_N - \omega\varepsilon_e`; and :math:`De_p/ds =
\varphi'N_p`, :math:`\varphi' = \nu_\perp/|v|`. In a frame parallel along :math:`p(s)` the
components of :math:`a` are :math:`R(\varphi)x`, :math:`x = (\varepsilon_e,
C\varepsilon_N)`, whose derivative is :math:`R(\varphi)(\dot x + \varphi'Jx)`:

.. math:: \frac{Da}{ds} \equiv R(\varphi)\Big[(D\varepsilon_e, CD\varepsilon_N) + \sin\rho
          \big(-\pi_\perp\varepsilon_N,\ J_\perp(1)\varepsilon_e - \dot\rho\varepsilon_N
          \big)\Big],

using :math:`\omega - C\varphi' = -\pi_\perp\sin\rho`, :math:`\varphi' - C\omega =
\sin\rho\,(C\pi_\perp + tS\nu_\perp) = \sin\rho\,J_\perp(1)`, :math:`\dot C =
-\sin\rho\,\dot\rho` (the :math:`1/|v|` parts cancel). The first part is
:math:`\Pi^{-1}Q_aD\varepsilon/ds` (norm :math:`\le \kappa_\varepsilon\eta`); the second is a
matrix with entries :math:`\pi_\perp, J_\perp(1), \dot\rho` (Frobenius norm
:math:`\le \sqrt{P^2 + \eta^2 + t^2N^2}`) times :math:`(\varepsilon_e, \varepsilon_N)`
(norm :math:`m`). Likewise :math:`b`, with :math:`\omega - S\varphi' = -\pi_\perp\sin\rho +
t\nu_\perp(C - S)/\rho`, :math:`\varphi' - S\omega = t\nu_\perp(1 - SC)/\rho +
S\sin\rho\,\pi_\perp`, :math:`\dot S = S'\dot\rho`. With the envelopes (nondecreasing in
:math:`\rho_{max}`, valid for every :math:`\rho \ge 0`) :math:`|\sin\rho| \le
\sin\min(\rho, \pi/2)`, :math:`|C - S|/\rho = |S'| \le \min(\rho/3, 0.4362)` (alternating
series :math:`C - S = \sum_{k\ge1}(-1)^k2k\rho^{2k}/(2k+1)!`, terms decreasing for
:math:`\rho < \sqrt{10}`, and beyond that :math:`(1 + 1/\rho)/\rho < 0.42`; the supremum
0.43618 at :math:`\rho \approx 2.08` is checked on a grid by the tests),
:math:`(1 - SC)/\rho = (1 - \mathrm{sinc}\,2\rho)/\rho \le \min(2\rho/3, 0.6367)` (supremum
:math:`2/\pi` at :math:`\pi/2`; :math:`1.2173/\rho < 0.39` beyond :math:`\pi`) and
:math:`S|\sin\rho| \le \sin\min(\rho, \pi/2)`:

.. math:: A_R = \kappa_\varepsilon\eta + m\beta_a,\quad \beta_a = \sin\min(\rho, \tfrac\pi2)
          \sqrt{P^2 + \eta^2 + t^2N^2}, \qquad B_R = t(\kappa_\varepsilon\eta + m\beta_b),

:math:`\beta_b = \sqrt{(P\sin_\rho + tNk_{cs})^2 + (tNk_{sc} + P\sin_\rho)^2 +
(tNk_{cs})^2}` (:func:`rotating_factors`). The frame is undefined where :math:`v = 0`, but
:math:`a, b` are smooth there and the bound has no :math:`1/|v|`, so it holds in the limit
(a segment meets :math:`v = 0` at most at one :math:`s`). The same :math:`m\beta_a, tm\beta_b`
bound the residual-dependent rest :math:`R_a, R_b` of
:mod:`~dpcore.sampling.sphere_gn_bounds` (it is exactly the second part above).

Term bounds, direct form (kept; the smallest of the three is used)
---------------------------------------------------------------
:math:`\rho \le \rho_{max} = tW`, :math:`|\mathrm{sinc}'| \le \rho/3`, :math:`0 \le R \le
2/3`, :math:`|R'| \le 4\rho/15` (:mod:`~dpcore.sampling.sphere_mean_value`).
Differentiating :math:`a = M_a\varepsilon` and projecting (:math:`M_a\dot\varepsilon =
M_aD\varepsilon`, :math:`|(I - pp^\top)\hat y| = \sin\rho`):
:math:`|Da/ds| \le \kappa_\varepsilon\eta + m\,s\,(tN + \eta + P)`. For :math:`b/t =
M_b\varepsilon`: :math:`|M_bD\varepsilon| \le \kappa_\varepsilon\eta + m\eta s`, and
:math:`(I - pp^\top)\dot M_b\varepsilon` has the terms :math:`\dot S(I-pp^\top)\varepsilon`
(:math:`\le \frac{\rho}{3}tNm`), :math:`S\pi\langle p,\varepsilon\rangle` (:math:`\le sPm`),
:math:`\dot R\rho\alpha V` (:math:`\le \frac{4}{15}\rho^3tNm`), :math:`RV\dot C\langle V,
\varepsilon\rangle` (:math:`\le \frac23\rho^2stNm`), :math:`RVC\langle\dot V,\varepsilon
\rangle` (:math:`\le \frac23\rho(tN + tWPs)m`), :math:`RV(\rho\sin\rho)^\cdot\langle
p,\varepsilon\rangle` (:math:`\le \frac23\rho(s + \rho)s\,tNm`), :math:`RV\rho^2S\langle\pi,
\varepsilon\rangle` (:math:`\le \frac23\rho^2sPm`) and :math:`R\rho\alpha\,Dv/ds\cdot t`
(:math:`\le \frac23\rho m tN`); their sum times :math:`t` bounds :math:`|Db/ds|`.

Per term :math:`|DG_i/ds| \le \sqrt{A^2 + B^2}/n` with :math:`A = \min(A_T, A_R, A_D)`,
:math:`B = \min(B_T, B_R, B_D)`.

Integration along the segment: on :math:`[\frac{k-1}K, \frac kK]` the speed is at most
:math:`\eta_k = \min(\eta_0 + \frac kK\eta_1, P + tN)` and the angle lies within
:math:`\theta(c) \pm \min(\frac kK(\eta_0 + \frac k{2K}\eta_1), \frac kK(P + tN))`, so
:math:`\int_0^1|DG_i/ds|\,ds \le \frac1K\sum_{k=1}^K\sqrt{A_k^2 + B_k^2}/n` with
:math:`A_k, B_k` taken with :math:`\eta_k` over that range (:data:`PIECES` = K): near
:math:`\theta = \tau` or the antipode the rate grows fast, and most of the segment sees a
narrower range.

Scope of rigour: exact real arithmetic on the float data; the few dozen float operations per
term are covered by a relative margin of :math:`10^{-9}` on the result, and :math:`\theta(c)`
(computed as ``atan2(|y x yhat|, <y, yhat>)``, error ~1e-15) is padded by :math:`10^{-9}`.
"""

from __future__ import annotations

import math

import numpy as np

from .sphere_enclosure import CUT_MARGIN

__all__ = ["K_CS", "K_SC", "mean_value_loss", "residual_turn_rate", "rotating_factors",
           "term_change_bounds"]

_HALF_PI = 0.5 * math.pi
#: Pad of theta(c) (covers its float evaluation by far).
THETA_PAD = 1e-9
#: Relative margin on the float evaluation of the bounds.
MARGIN = 1e-9
#: Pieces of the segment on which the rate is bounded separately.
PIECES = 8
#: :math:`\sup_{\rho \in (0, \pi]}|\cos\rho - \mathrm{sinc}\,\rho|/\rho` (0.43615 at
#: :math:`\rho \approx 2.08`), rounded up (module docstring, rotating form).
K_CS = 0.4362
#: :math:`\sup_{\rho \in (0, \pi]}(1 - \mathrm{sinc}\,2\rho)/\rho` (:math:`2/\pi` at
#: :math:`\rho = \pi/2`), rounded up.
K_SC = 0.6367
def residual_turn_rate(theta_lo, theta_hi, tau):
    r""":math:`\kappa_\varepsilon`: the largest :math:`\max(\psi', \psi|\cot\theta|)` over
    :math:`[\theta_{lo}, \theta_{hi}] \subset [0, \pi)` (module docstring).

    Parameters
    ----------
    theta_lo, theta_hi : array
        Range of the residual angle (``theta_hi < pi``).
    tau : float
        Clipping bound.

    Returns
    -------
    ndarray
        The turn rate (same shape).
    """
    lo = np.maximum(np.asarray(theta_lo, dtype=float), 0.0)
    hi = np.asarray(theta_hi, dtype=float)
    out = np.zeros(np.broadcast(lo, hi).shape)
    below = lo < tau                       # the range meets [0, tau): psi' = 1 there
    out = np.where(below, 1.0, out)
    b_low = np.minimum(hi, tau)
    steep = below & (b_low > _HALF_PI)     # theta |cot theta| increasing above pi/2
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(steep, np.maximum(out, b_low * np.abs(1.0 / np.tan(b_low))), out)
        above = hi > tau
        a_up = np.maximum(lo, tau)
        ends = np.maximum(np.abs(1.0 / np.tan(a_up)), np.abs(1.0 / np.tan(hi)))
        out = np.where(above, np.maximum(out, tau * ends), out)
    return out


def term_change_bounds(theta_c, t, P, N, W, tau, eta=None, eta1=None, form="both"):
    r"""Per-term bounds of :math:`n\,|P_1G_i(z) - G_i(c)|` over a region (module docstring).

    Parameters
    ----------
    theta_c : array (m, n)
        Residual angles at the region's centre.
    t : array (n,)
        Covariates in [0, 1] (absolute values are used).
    P, N : array (m,)
        Bounds of :math:`|\delta_u|` and of :math:`|Dv/ds|` over the segments from the centre.
    W : array (m,)
        Bound of :math:`|w| = |v|` over the region.
    tau : float
    eta, eta1 : array (m, n), optional
        The speed of each term's prediction :math:`\hat y` at parameter :math:`s` of the
        segment is at most ``eta + s * eta1`` (defaults: :math:`P + tN` and 0; the speed is
        also capped by :math:`P + tN`).
    form : {"both", "transport", "direct", "rotating"}
        Which term bounds to use (the smallest of the three by default; one alone for
        tests).

    Returns
    -------
    bound : ndarray (m, n)
        :math:`\min(\int\sqrt{A^2 + B^2}, \text{crude})` (the mean-value bound only where the
        residual angle stays below :math:`\pi - \mathrm{CUT\_MARGIN}`).
    smooth : ndarray of bool (m, n)
        Where the mean-value bound was available.
    """
    t = np.abs(np.asarray(t, dtype=float))[None, :]
    P, N, W = (np.asarray(x, dtype=float)[:, None] for x in (P, N, W))
    theta_c = np.asarray(theta_c, dtype=float)
    cap = P + t * N
    eta0 = cap if eta is None else np.minimum(np.asarray(eta, dtype=float), cap)
    eta1 = np.zeros_like(eta0) if eta1 is None else np.asarray(eta1, dtype=float)
    reach = np.minimum(eta0 + 0.5 * eta1, cap)          # |theta(1) - theta(c)|
    th_hi = theta_c + reach + THETA_PAD
    smooth = th_hi < math.pi - CUT_MARGIN
    crude = (np.minimum(theta_c + THETA_PAD, tau) + np.minimum(th_hi, tau)) * np.sqrt(1.0 + t * t)
    rho = t * W
    s = np.minimum(rho, 1.0)
    c1 = np.where(rho <= _HALF_PI, s, rho)
    tn = t * N
    # On [s_{k-1}, s_k] of the segment the speed is at most eta0 + s_k eta1 and theta lies
    # within theta_c -+ (s_k eta0 + s_k^2 eta1 / 2): integrate the rate piecewise.
    mv = np.zeros(np.broadcast(theta_c, eta0).shape)
    for k in range(PIECES):
        frac = (k + 1.0) / PIECES
        speed = np.minimum(eta0 + frac * eta1, cap)
        half = np.minimum(frac * (eta0 + 0.5 * frac * eta1), frac * cap)
        lo = np.maximum(theta_c - half - THETA_PAD, 0.0)
        hi = np.where(smooth, theta_c + half + THETA_PAD, 0.0)
        mv += _rate(lo, hi, speed, P, tn, t, W, rho, s, c1, tau, form) / PIECES
    bound = np.where(smooth, np.minimum(mv, crude), crude)
    return bound * (1.0 + MARGIN), smooth


def rotating_factors(rho, P, tn, eta):
    r"""The rotating-frame bounds :math:`\beta_a, \beta_b` of the module docstring ("Term
    bounds, rotating form"): :math:`|Da/ds - \Pi^{-1}Q_aD\varepsilon/ds| \le m\beta_a` and
    :math:`|Db/ds - t\Pi^{-1}Q_bD\varepsilon/ds| \le tm\beta_b` for :math:`\rho \le`
    ``rho`` (all arguments broadcast)."""
    sin_env = np.sin(np.minimum(rho, _HALF_PI))
    k_cs = np.minimum(rho / 3.0, K_CS)
    k_sc = np.minimum(2.0 * rho / 3.0, K_SC)
    beta_a = sin_env * np.sqrt(P * P + eta * eta + tn * tn)
    beta_b = np.sqrt((P * sin_env + tn * k_cs) ** 2 + (tn * k_sc + sin_env * P) ** 2
                     + (k_cs * tn) ** 2)
    return beta_a, beta_b


def _rate(lo, hi, eta, P, tn, t, W, rho, s, c1, tau, form="both"):
    """sqrt(A^2 + B^2) of the module docstring for the angle range [lo, hi] (the smallest of
    the transport, the direct and the rotating form for each of A and B/t)."""
    kappa = residual_turn_rate(lo, hi, tau)
    m = np.minimum(hi, tau)
    ke = kappa * eta
    rho2 = rho * rho
    a_tr = ke + m * (P * (c1 + np.minimum(0.5 * rho2, 2.0) * s) + tn * (s + rho))
    b_tr = ke + m * (P * (c1 + rho2 * s / 6.0) + tn * rho)
    beta_a, beta_b = rotating_factors(rho, P, tn, eta)
    a_rot, b_rot = ke + m * beta_a, ke + m * beta_b
    a_dir = ke + m * s * (tn + eta + P)
    b_dir = (ke + m * eta * s + rho / 3.0 * tn * m + s * P * m
             + 4.0 / 15.0 * rho**3 * tn * m + 2.0 / 3.0 * rho2 * s * tn * m
             + 2.0 / 3.0 * rho * (tn + t * W * P * s) * m
             + 2.0 / 3.0 * rho * (s + rho) * s * tn * m
             + 2.0 / 3.0 * rho2 * s * P * m + 2.0 / 3.0 * rho * m * tn)
    if form == "transport":
        a_dir, b_dir = a_tr, b_tr
        a_rot, b_rot = a_tr, b_tr
    elif form == "direct":
        a_tr, b_tr = a_dir, b_dir
        a_rot, b_rot = a_dir, b_dir
    elif form == "rotating":
        a_tr, b_tr = a_rot, b_rot
        a_dir, b_dir = a_rot, b_rot
    a_bound = np.minimum(np.minimum(a_tr, a_dir), a_rot)
    b_bound = t * np.minimum(np.minimum(b_tr, b_dir), b_rot)
    return np.sqrt(a_bound * a_bound + b_bound * b_bound)


def mean_value_loss(theta_c, t, P, N, W, tau):
    r"""Bound of :math:`|P_1G(z) - G(c)|` over the region: the mean of
    :func:`term_change_bounds` over the terms (so :math:`g \ge g(c) -` this).

    Returns
    -------
    loss : ndarray (m,)
    smooth_share : ndarray (m,)
        Share of the terms that got the mean-value (not the crude) bound.
    """
    bound, smooth = term_change_bounds(theta_c, t, P, N, W, tau)
    n = bound.shape[1]
    return np.sum(bound, axis=1) / n * (1.0 + MARGIN), np.mean(smooth, axis=1)
