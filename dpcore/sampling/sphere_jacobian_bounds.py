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
gradient term is :math:`G_i = -\frac1n(a, b)` with (ambient 3-vectors in :math:`T_pS^2`)

.. math:: a = M_a\varepsilon,\ M_a = CI - \hat y p^\top, \qquad
          b = tM_b\varepsilon,\ M_b = S(I - pp^\top) + R(\rho)\,V(CV - \rho^2 Sp)^\top,

:math:`R(\rho) = (1 - \mathrm{sinc}\,2\rho)/\rho^2`. On :math:`T_{\hat y}S^2` these are the
adjoint Jacobi maps :math:`(d_p\mathrm{Exp})^\dagger` and :math:`(d_v\mathrm{Exp})^\dagger`
(singular values :math:`1, \cos\rho` and :math:`1, \mathrm{sinc}\,\rho`), so
:math:`|M_a x|, |M_b x| \le |x|` there; also :math:`M_a\hat y = 0`,
:math:`M_b\hat y = S^2V`, :math:`\langle p, \varepsilon\rangle = -\alpha\sin\rho` and
:math:`C\langle V,\varepsilon\rangle - \rho^2S\langle p,\varepsilon\rangle = \rho\alpha` with
:math:`|\alpha| \le m`.

The mean-value bound (intrinsic)
--------------------------------
Let :math:`z(s) = c + s(z - c)`, :math:`s \in [0, 1]`, be a segment of chart coordinates and
:math:`P_s` parallel transport along :math:`p(s)` back to :math:`p(0)` (applied to both
components; an isometry of the Sasaki norm). Then
:math:`\frac{d}{ds}P_sG(s) = P_s\frac{DG}{ds}`, so

.. math:: g(z) = |P_1G(1)| \ge g(c) - \sum_i \sup_s \Big|\frac{DG_i}{ds}\Big| ,

and per term also :math:`|P_1G_i(1) - G_i(0)| \le |G_i(1)| + |G_i(0)| \le
(m(z) + m(c))\sqrt{1 + t^2}/n` (the crude bound, the only one used where :math:`\theta` may
reach the cut locus, where the library's residual jumps to 0). :math:`D/ds` is the covariant
derivative, i.e. the tangential part :math:`(I - pp^\top)\frac{d}{ds}` of the ambient one:
normal parts (the turning of the tangent plane) never enter.

Speeds along the segment. With :math:`\pi = \dot p` and :math:`\nu = Dv/ds`:
:math:`|\pi| \le |\delta_u| =: P` (:math:`d\exp_{m_0}` has singular values 1 and
:math:`\mathrm{sinc}\,r \le 1`), and :math:`|\nu| \le |\delta_w| + |w|\frac{1-\cos r}{r}
|\delta_u| \le N := |\delta_w| + W\frac{r_{max}}{2}P` (:math:`v = \sum_a w_af_a` with the
radially parallel frame, whose connection form is :math:`(1 - \cos r)\,d\varphi`,
:math:`|\dot\varphi| \le |\dot u|/r`). :math:`|\dot\rho| \le t|\nu|`,
:math:`\dot V = t(\nu - \langle v, \pi\rangle p)`. The speed :math:`\eta` of :math:`\hat y` is
the Jacobi field :math:`J(1)`, :math:`J(0) = \pi`, :math:`J'(0) = t\nu`: its parts along and
across the geodesic are :math:`\pi_\parallel + t\nu_\parallel` and
:math:`\pi_\perp C + t\nu_\perp S`, so :math:`\eta \le P + tN` (Minkowski). :math:`\theta` is
1-Lipschitz in :math:`\hat y`, so on the segment
:math:`\theta \in [\theta(c) - \eta_{max}, \theta(c) + \eta_{max}]`,
:math:`\eta_{max} = P + tN`.

The residual's covariant derivative. :math:`u = -\nabla\theta` and
:math:`\mathrm{Hess}\,\theta = \cot\theta\,(I - uu^\top)` on :math:`S^2`, so for
:math:`\delta = \delta_\parallel u + \delta_\perp`:
:math:`D_\delta\varepsilon = -\psi'\delta_\parallel u - \psi\cot\theta\,\delta_\perp`
(orthogonal parts), hence :math:`|D\varepsilon| \le \kappa_\varepsilon\eta` with
:math:`\kappa_\varepsilon = \sup_\theta\max(\psi'(\theta), \psi(\theta)|\cot\theta|)` over the
range (:math:`\psi` is Lipschitz, the kink at :math:`\tau` is harmless for the mean-value
inequality). In closed form (:func:`residual_turn_rate`): 1 if the range meets
:math:`[0, \tau)`, :math:`\theta|\cot\theta| \le 1` below :math:`\pi/2` and increasing above,
and :math:`\tau|\cot\theta|` (decreasing then increasing) on :math:`[\max(\theta_{lo},\tau),
\theta_{hi}]`: endpoint values. The ambient derivative is
:math:`\dot\varepsilon = D\varepsilon - \langle\varepsilon, \dot{\hat y}\rangle\hat y`.

Term bounds (:math:`\rho \le \rho_{max} = tW`, :math:`\sin\rho \le s := \min(\rho_{max}, 1)`,
:math:`|\mathrm{sinc}'| \le \rho/3`, :math:`0 \le R \le 2/3`,
:math:`|R'| = 2\rho B \le 4\rho/15` (:mod:`~dpcore.sampling.sphere_mean_value`: :math:`B`
decreases from :math:`2/15`)). Differentiating :math:`a = M_a\varepsilon` and projecting:
:math:`M_a\dot\varepsilon = M_aD\varepsilon`, :math:`|(I-pp^\top)\hat y| = \sin\rho`, so

.. math:: |Da/ds| \le A := \kappa_\varepsilon\eta + m\,s\,(tN + \eta + P).

For :math:`b/t = M_b\varepsilon`: :math:`|M_b\dot\varepsilon| \le \kappa_\varepsilon\eta +
m\eta S^2\rho` (:math:`S^2\rho \le s`), and :math:`(I - pp^\top)\dot M_b\varepsilon` has the
terms :math:`\dot S(I-pp^\top)\varepsilon` (:math:`\le \frac{\rho}{3}tNm`),
:math:`S\pi\langle p,\varepsilon\rangle` (:math:`\le sPm`), :math:`\dot R\rho\alpha V`
(:math:`\le \frac{4}{15}\rho^3tNm`), :math:`RV\dot C\langle V,\varepsilon\rangle`
(:math:`\le \frac23\rho^2stNm`), :math:`RVC\langle\dot V,\varepsilon\rangle`
(:math:`\le \frac23\rho(tN + tWPs)m`), :math:`RV(\rho\sin\rho)^\cdot\langle p,\varepsilon
\rangle` (:math:`\le \frac23\rho(s + \rho)s\,tNm`), :math:`RV\rho^2S\langle\pi,\varepsilon
\rangle` (:math:`\le \frac23\rho^2sPm`) and :math:`R\rho\alpha\,Dv/ds\cdot t`
(:math:`\le \frac23\rho m tN`), with :math:`\rho = \rho_{max}`. Their sum times :math:`t` is
:math:`B \ge |Db/ds|`, and :math:`|DG_i/ds| \le \sqrt{A^2 + B^2}/n`.

Integration along the segment: at parameter :math:`s` the angle lies within
:math:`\theta(c) \pm s\eta_{max}`, so :math:`\int_0^1|DG_i/ds|\,ds \le \frac1K\sum_{k=1}^K
\sqrt{A_k^2 + B_k^2}/n` with :math:`A_k, B_k` taken over the range
:math:`\theta(c) \pm \frac kK\eta_{max}` (:data:`PIECES` = K): near :math:`\theta = \tau`
or the antipode the rate grows fast, and most of the segment sees a narrower range.

Scope of rigour: exact real arithmetic on the float data; the few dozen float operations per
term are covered by a relative margin of :math:`10^{-9}` on the result, and :math:`\theta(c)`
(computed as ``atan2(|y x yhat|, <y, yhat>)``, error ~1e-15) is padded by :math:`10^{-9}`.
"""

from __future__ import annotations

import math

import numpy as np

from .sphere_enclosure import CUT_MARGIN

__all__ = ["residual_turn_rate", "term_change_bounds", "mean_value_loss"]

_HALF_PI = 0.5 * math.pi
#: Pad of theta(c) (covers its float evaluation by far).
THETA_PAD = 1e-9
#: Relative margin on the float evaluation of the bounds.
MARGIN = 1e-9
#: Pieces of the segment on which the rate is bounded separately.
PIECES = 4


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


def term_change_bounds(theta_c, t, P, N, W, tau, eta=None):
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
    eta : array (m, n), optional
        Bounds of the speed of each term's prediction :math:`\hat y` (default and largest
        valid value: :math:`P + tN`).

    Returns
    -------
    bound : ndarray (m, n)
        :math:`\min(\sqrt{A^2 + B^2}, \text{crude})` (the mean-value bound only where the
        residual angle stays below :math:`\pi - \mathrm{CUT\_MARGIN}`).
    smooth : ndarray of bool (m, n)
        Where the mean-value bound was available.
    """
    t = np.abs(np.asarray(t, dtype=float))[None, :]
    P, N, W = (np.asarray(x, dtype=float)[:, None] for x in (P, N, W))
    theta_c = np.asarray(theta_c, dtype=float)
    eta = P + t * N if eta is None else np.minimum(np.asarray(eta, dtype=float), P + t * N)
    th_hi = theta_c + eta + THETA_PAD
    smooth = th_hi < math.pi - CUT_MARGIN
    crude = (np.minimum(theta_c + THETA_PAD, tau) + np.minimum(th_hi, tau)) * np.sqrt(1.0 + t * t)
    rho = t * W
    s = np.minimum(rho, 1.0)
    tn = t * N
    # On [s_k, s_{k+1}] of the segment theta lies within theta_c -+ s_{k+1} eta: integrate the
    # rate piecewise (each piece bounded by its own, narrower, range).
    mv = np.zeros(np.broadcast(theta_c, eta).shape)
    for k in range(PIECES):
        frac = (k + 1.0) / PIECES
        lo = np.maximum(theta_c - frac * eta - THETA_PAD, 0.0)
        hi = np.where(smooth, theta_c + frac * eta + THETA_PAD, 0.0)
        mv += _rate(lo, hi, eta, P, tn, t, W, rho, s, tau) / PIECES
    bound = np.where(smooth, np.minimum(mv, crude), crude)
    return bound * (1.0 + MARGIN), smooth


def _rate(lo, hi, eta, P, tn, t, W, rho, s, tau):
    """sqrt(A^2 + B^2) of the module docstring for the angle range [lo, hi]."""
    kappa = residual_turn_rate(lo, hi, tau)
    m = np.minimum(hi, tau)
    a_bound = kappa * eta + m * s * (tn + eta + P)
    b_inner = (kappa * eta + m * eta * s + rho / 3.0 * tn * m + s * P * m
               + 4.0 / 15.0 * rho**3 * tn * m + 2.0 / 3.0 * rho**2 * s * tn * m
               + 2.0 / 3.0 * rho * (tn + t * W * P * s) * m
               + 2.0 / 3.0 * rho * (s + rho) * s * tn * m
               + 2.0 / 3.0 * rho**2 * s * P * m + 2.0 / 3.0 * rho * m * tn)
    b_bound = t * b_inner
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
