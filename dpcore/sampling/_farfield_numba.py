r"""Compiled (numba) per-leaf certification of :mod:`dpcore.sampling.bundle_farfield`.

:func:`farfield_loss` fuses, for every leaf and term, the residual angle at the leaf's centre
(:func:`~dpcore.sampling.bundle_farfield.residual_angles`), the prediction speed
(:func:`~dpcore.sampling.bundle_farfield.prediction_speed`) and the per-term bound
(:func:`~dpcore.sampling.sphere_jacobian_bounds.term_change_bounds`), and sums them: the same
bounds without the ``(m, n, 8)`` and ``(m, n)`` temporaries (the parts of a term's rate that do
not depend on the piece of the segment are computed once; the turn rate takes a closed fast
path on :math:`[0, \pi/2]`, where its value is 1 below :math:`\tau` and
:math:`\tau\cot\theta_{lo}` above). The proofs are in those modules; the float slack of this
path (reassociated sums, libm ``sin``/``cos``/``atan2`` that may differ from numpy's by an
ulp) is far inside their margins (:math:`10^{-9}` relative on every bound, :math:`10^{-9}` on
angles).
``tests/sampling/test_sphere_jacobian_bounds.py`` checks that both paths agree to
:math:`10^{-10}` relative. The same loop evaluates the library's gradient at the centre
(:func:`centre_gradient_norm`'s formulas, sharing the angle's trigonometry; checked against
the library to :math:`10^{-12}`) and, with ``split``, the Gauss-Newton split lower bound of
:mod:`~dpcore.sampling.sphere_gn_bounds` (:func:`gn_term`, ``_gn_columns``, ``_gn_lower``;
checked by brute force in ``tests/sampling/test_sphere_gn_bounds.py``). Import fails without
numba; the caller falls back to numpy (without the split bound).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .sphere_jacobian_bounds import K_CS, K_SC

_HALF_PI = 0.5 * math.pi


@njit(cache=True, error_model="numpy")
def _turn_rate(lo, hi, tau):
    """Scalar :func:`~dpcore.sampling.sphere_jacobian_bounds.residual_turn_rate`."""
    lo = max(lo, 0.0)
    if hi <= _HALF_PI and tau <= _HALF_PI:
        # fast paths (same value): on [0, pi/2] theta|cot| <= 1, tau|cot| decreasing and
        # tau cot(max(lo, tau)) <= tau cot(tau) <= 1
        if lo < tau:
            return 1.0
        return tau / math.tan(lo)
    out = 0.0
    if lo < tau:
        out = 1.0
        b_low = min(hi, tau)
        if b_low > _HALF_PI:
            out = max(out, b_low * abs(1.0 / math.tan(b_low)))
    if hi > tau:
        a_up = max(lo, tau)
        ends = max(abs(1.0 / math.tan(a_up)), abs(1.0 / math.tan(hi)))
        out = max(out, tau * ends)
    return out


@njit(cache=True, error_model="numpy")
def _rate(kappa, m, eta, s, al_a, al_b, be_a, be_b, t, sin_env, pp_tn2, beta_b):
    """Scalar ``sphere_jacobian_bounds._rate`` with its piece-independent parts hoisted:
    ``A_T = ke + m al_a``, ``B_T/t = ke + m al_b``, ``A_D = ke + m (be_a + s eta)``,
    ``B_D/t = ke + m (eta s + be_b)``, ``A_R = ke + m sin_env sqrt(P^2 + t^2N^2 + eta^2)``
    (``pp_tn2 = P^2 + t^2N^2``), ``B_R/t = ke + m beta_b``, ``ke = kappa eta``."""
    ke = kappa * eta
    beta_a = sin_env * math.sqrt(pp_tn2 + eta * eta)
    a_b = ke + m * min(min(al_a, be_a + s * eta), beta_a)
    b_b = t * (ke + m * min(min(al_b, eta * s + be_b), beta_b))
    return math.sqrt(a_b * a_b + b_b * b_b)


@njit(cache=True, error_model="numpy")
def _rotating(rho, P, tn):
    """``(sin_env, P^2 + t^2N^2, beta_b)`` of ``sphere_jacobian_bounds.rotating_factors``."""
    sin_env = math.sin(min(rho, _HALF_PI))
    k_cs = min(rho / 3.0, K_CS)
    k_sc = min(2.0 * rho / 3.0, K_SC)
    x = P * sin_env + tn * k_cs
    z = tn * k_sc + sin_env * P
    w = k_cs * tn
    return sin_env, P * P + tn * tn, math.sqrt(x * x + z * z + w * w)


@njit(cache=True, error_model="numpy")
def _sinc(x):
    return math.sin(x) / x if x != 0.0 else 1.0


@njit(cache=True, error_model="numpy")
def _jac(a1, a2, b1, b2, t, c, sn):
    par = a1 + t * b1
    perp = c * a2 + sn * t * b2
    return math.sqrt(par * par + perp * perp)


@njit(cache=True, error_model="numpy")
def _term(theta, at, P, N, W, eta0, eta1, tau, pieces, cut, pad, margin):
    """(bound, smooth) of one term: ``term_change_bounds`` for one entry."""
    cap = P + at * N
    eta0 = min(eta0, cap)
    reach = min(eta0 + 0.5 * eta1, cap)
    th_hi = theta + reach + pad
    smooth = th_hi < math.pi - cut
    crude = (min(theta + pad, tau) + min(th_hi, tau)) * math.sqrt(1.0 + at * at)
    if not smooth:
        return crude * (1.0 + margin), False
    rho = at * W
    s = min(rho, 1.0)
    c1 = s if rho <= _HALF_PI else rho
    tn = at * N
    rho2 = rho * rho
    al_a = P * (c1 + min(0.5 * rho2, 2.0) * s) + tn * (s + rho)
    al_b = P * (c1 + rho2 * s / 6.0) + tn * rho
    be_a = s * (tn + P)
    be_b = (rho / 3.0 * tn + s * P + 4.0 / 15.0 * rho**3 * tn + 2.0 / 3.0 * rho2 * s * tn
            + 2.0 / 3.0 * rho * (tn + at * W * P * s) + 2.0 / 3.0 * rho * (s + rho) * s * tn
            + 2.0 / 3.0 * rho2 * s * P + 2.0 / 3.0 * rho * tn)
    sin_env, pp_tn2, beta_b = _rotating(rho, P, tn)
    mv = 0.0
    for k in range(pieces):
        frac = (k + 1.0) / pieces
        speed = min(eta0 + frac * eta1, cap)
        half = min(frac * (eta0 + 0.5 * frac * eta1), frac * cap)
        lo = max(theta - half - pad, 0.0)
        hi = theta + half + pad
        mv += _rate(_turn_rate(lo, hi, tau), min(hi, tau), speed, s, al_a, al_b, be_a, be_b,
                    at, sin_env, pp_tn2, beta_b) / pieces
    return min(mv, crude) * (1.0 + margin), True


@njit(cache=True, error_model="numpy")
def farfield_loss(geo_s, geo_v, geo_c, p, v, y, t, tau, pieces, cut, pad, margin,
                  cut_tol=1e-8, split=False):
    """Mean-value loss (m,) and split scores (m, 4) of leaves.

    Parameters
    ----------
    geo_s : array (m, 11)
        Columns P, N, Dw, W, r_max, wc, s0, s1, r0, r1, X (``leaf_geometry``).
    geo_v : array (m, 4, 8)
        a1, a2, b1, b2 at the vertices.
    geo_c : array (m, 4, 4)
        a1, a2, b1, b2 of the columns.
    p, v : array (m, 3)
        Footpoints and shooting vectors at the centres.
    y : array (n, 3)
    t : array (n,)
    tau : float
    pieces : int
    cut, pad, margin : float
        ``CUT_MARGIN``, ``THETA_PAD`` and ``MARGIN`` of the bounds.
    cut_tol : float
        The library's cut-locus tolerance (``dpcore.manifolds.sphere.CUT_TOL``).
    split : bool
        Also evaluate the Gauss-Newton split bound
        (:mod:`~dpcore.sampling.sphere_gn_bounds`).

    Returns
    -------
    loss : ndarray (m,)
    score : ndarray (m, 4)
    g : ndarray (m,)
        :math:`|G|` at the centres by the library's formulas (as
        :func:`centre_gradient_norm`, sharing this loop's trigonometry; NaN where
        :math:`|v| \\le 10^{-12}`).
    lower : ndarray (m,)
        With ``split``, the Gauss-Newton split lower bound of :math:`g` on each leaf before
        the absolute slack of the float centre (-inf where unavailable; else all -inf).
    """
    m, n = p.shape[0], t.shape[0]
    loss = np.zeros(m)
    score = np.zeros((m, 4))
    g_out = np.empty(m)
    lower = np.full(m, -np.inf)
    kmat = np.zeros((4, 4))
    for i in range(m):
        P, N, d_w, W = geo_s[i, 0], geo_s[i, 1], geo_s[i, 2], geo_s[i, 3]
        s0, s1, r0, r1 = geo_s[i, 6], geo_s[i, 7], geo_s[i, 8], geo_s[i, 9]
        speed_v = math.sqrt(v[i, 0] ** 2 + v[i, 1] ** 2 + v[i, 2] ** 2)
        grad_ok = speed_v > 1e-12
        inv_v = 1.0 / speed_v if grad_ok else 0.0
        u0, u1, u2 = v[i, 0] * inv_v, v[i, 1] * inv_v, v[i, 2] * inv_v
        wp0 = wp1 = wp2 = wv0 = wv1 = wv2 = par_p = par_v = 0.0
        kmat[:, :] = 0.0
        rem, kabs = 0.0, 0.0
        for j in range(n):
            at = abs(t[j])
            # |v| = |w| (the chart's frame is orthonormal): the centre's rho, shared by the
            # Jacobian and the prediction (float difference ~1e-16, inside the 1e-12 factors)
            rc = at * speed_v
            c, sn = math.cos(rc), _sinc(rc)
            lin2 = 0.0
            for k in range(8):
                par = geo_v[i, 0, k] + at * geo_v[i, 2, k]
                perp = c * geo_v[i, 1, k] + sn * at * geo_v[i, 3, k]
                lin2 = max(lin2, par * par + perp * perp)
            lin = math.sqrt(lin2)
            rho = at * W
            q_a = math.hypot(min(rho, 1.0), min(0.5 * rho, 0.7247))
            eta0 = (lin * (1.0 + 1e-12) + s0 + at * s1) * (1.0 + 1e-12) + 1e-12 * (P + at * N)
            eta1 = (r0 + at * r1 + at * d_w * (q_a * P + at * 0.3727 * rho * N)) * (1.0 + 1e-12)
            # residual angle at the centre (as residual_angles)
            cr, sr = c, sn * t[j]
            h0 = cr * p[i, 0] + sr * v[i, 0]
            h1 = cr * p[i, 1] + sr * v[i, 1]
            h2 = cr * p[i, 2] + sr * v[i, 2]
            x0 = h1 * y[j, 2] - h2 * y[j, 1]
            x1 = h2 * y[j, 0] - h0 * y[j, 2]
            x2 = h0 * y[j, 1] - h1 * y[j, 0]
            cross = math.sqrt(x0 * x0 + x1 * x1 + x2 * x2)
            dot = h0 * y[j, 0] + h1 * y[j, 1] + h2 * y[j, 2]
            theta = math.atan2(cross, dot)
            if grad_ok:
                # the library's gradient term (centre_gradient_norm); near the antipode its
                # own angle formula, which decides the cut convention
                s_th, th_g = cross, theta
                if dot < -0.99:
                    s_th = math.sqrt(max(1.0 - dot * dot, 0.0))
                    th_g = math.atan2(s_th, dot)
                if th_g <= math.pi - cut_tol:
                    f = min(th_g, tau) / max(s_th, 1e-300)
                    sin_r = sr * speed_v
                    big_p = p[i, 0] * y[j, 0] + p[i, 1] * y[j, 1] + p[i, 2] * y[j, 2]
                    big_u = u0 * y[j, 0] + u1 * y[j, 1] + u2 * y[j, 2]
                    ye = f * (cr * big_u - sin_r * big_p)
                    fp, fv = f * cr, f * sr
                    wp0 += fp * y[j, 0]
                    wp1 += fp * y[j, 1]
                    wp2 += fp * y[j, 2]
                    wv0 += fv * y[j, 0]
                    wv1 += fv * y[j, 1]
                    wv2 += fv * y[j, 2]
                    par_p += ye
                    par_v += t[j] * ye
            bound, smooth = _term(theta, at, P, N, W, eta0, eta1, tau, pieces, cut, pad, margin)
            loss[i] += bound
            if split:
                r_j = -1.0
                if smooth and t[j] >= 0.0:
                    r_j = gn_term(theta, at, P, N, W, eta0, eta1, tau, pieces, pad, margin,
                                  geo_s[i, 10], d_w, s0, s1)
                if r_j < 0.0:
                    rem += bound
                else:
                    rem += r_j
                    kabs += _gn_columns(kmat, geo_c[i], at, c, sn)
            if smooth:
                rate = bound / max(min(eta0, P + at * N), 1e-300)
                for k in range(4):
                    score[i, k] += rate * _jac(geo_c[i, 0, k], geo_c[i, 1, k], geo_c[i, 2, k],
                                               geo_c[i, 3, k], at, c, sn)
        g_out[i] = _assemble(p[i], u0, u1, u2, wp0, wp1, wp2, par_p, wv0, wv1, wv2, par_v,
                             n) if grad_ok else np.nan
        if split and grad_ok:
            lower[i] = _gn_lower(p[i], u0, u1, u2, wp0, wp1, wp2, par_p, wv0, wv1, wv2, par_v,
                                 kmat, rem, kabs, n)
    for i in range(m):
        loss[i] = loss[i] / n * (1.0 + 1e-9)
        for k in range(4):
            score[i, k] /= n
    return loss, score, g_out, lower


@njit(cache=True, error_model="numpy")
def _assemble(p, u0, u1, u2, wp0, wp1, wp2, par_p, wv0, wv1, wv2, par_v, n):
    """|G| from the weighted sums (the library's ``_assemble_gradient`` for both parts)."""
    g2 = 0.0
    for w0, w1, w2, wpar in ((wp0, wp1, wp2, par_p), (wv0, wv1, wv2, par_v)):
        ap = p[0] * w0 + p[1] * w1 + p[2] * w2
        au = u0 * w0 + u1 * w1 + u2 * w2 - wpar
        e0 = ap * p[0] + au * u0 - w0
        e1 = ap * p[1] + au * u1 - w1
        e2 = ap * p[2] + au * u2 - w2
        g2 += e0 * e0 + e1 * e1 + e2 * e2
    return math.sqrt(g2) / n


@njit(cache=True, error_model="numpy")
def centre_gradient_norm(p, v, y, t, tau, cut_tol):
    """:math:`g = |G|` (m,) at footpoints and shooting vectors ``p, v`` (m, 3): the formulas of
    :func:`dpcore.learning.kernels.sphere.sphere_regression_gradient` (clipped, a residual
    within ``cut_tol`` of the antipode counts as 0) summed in one pass per point. NaN where
    :math:`|v| \\le 10^{-12}` (the library's generic path; the caller uses the library there).
    ``tests/sampling/test_sphere_jacobian_bounds.py`` checks agreement with the library to
    :math:`10^{-12}` (the certificate subtracts an absolute :math:`10^{-10}`)."""
    m, n = p.shape[0], t.shape[0]
    out = np.empty(m)
    for i in range(m):
        nv = math.sqrt(v[i, 0] ** 2 + v[i, 1] ** 2 + v[i, 2] ** 2)
        if not nv > 1e-12:
            out[i] = np.nan
            continue
        u0, u1, u2 = v[i, 0] / nv, v[i, 1] / nv, v[i, 2] / nv
        wp0 = wp1 = wp2 = 0.0
        wv0 = wv1 = wv2 = 0.0
        par_p = par_v = 0.0
        for j in range(n):
            rho = t[j] * nv
            cr, sr = math.cos(rho), math.sin(rho)
            big_p = p[i, 0] * y[j, 0] + p[i, 1] * y[j, 1] + p[i, 2] * y[j, 2]
            big_u = u0 * y[j, 0] + u1 * y[j, 1] + u2 * y[j, 2]
            c = cr * big_p + sr * big_u
            ye = cr * big_u - sr * big_p
            s = math.sqrt(max(1.0 - c * c, 0.0))
            theta = math.atan2(s, c)
            if theta > math.pi - cut_tol:
                continue
            f = min(theta, tau) / max(s, 1e-300)
            fp, fv = f * cr, f * sr / nv
            wp0 += fp * y[j, 0]
            wp1 += fp * y[j, 1]
            wp2 += fp * y[j, 2]
            wv0 += fv * y[j, 0]
            wv1 += fv * y[j, 1]
            wv2 += fv * y[j, 2]
            par_p += f * ye
            par_v += t[j] * f * ye
        g2 = 0.0
        for w0, w1, w2, wpar in ((wp0, wp1, wp2, par_p), (wv0, wv1, wv2, par_v)):
            ap = p[i, 0] * w0 + p[i, 1] * w1 + p[i, 2] * w2
            au = u0 * w0 + u1 * w1 + u2 * w2 - wpar
            g0 = ap * p[i, 0] + au * u0 - w0
            g1 = ap * p[i, 1] + au * u1 - w1
            g2_ = ap * p[i, 2] + au * u2 - w2
            g2 += g0 * g0 + g1 * g1 + g2_ * g2_
        out[i] = math.sqrt(g2) / n
    return out


@njit(cache=True, error_model="numpy")
def gn_term(theta, at, P, N, W, eta0, eta1, tau, pieces, pad, margin, X, d_w, s0, s1):
    """n times the bound of :math:`\\int|P_sDG_i/ds - GN_i(0)|` of one term that stays
    unclipped on the segment (:mod:`~dpcore.sampling.sphere_gn_bounds`), or -1 where the
    term's angle may reach :math:`\\tau`."""
    cap = P + at * N
    eta0 = min(eta0, cap)
    reach = min(eta0 + 0.5 * eta1, cap)
    if theta + reach + pad >= tau:
        return -1.0
    rho = at * W
    s = min(rho, 1.0)
    c1 = s if rho <= _HALF_PI else rho
    tn = at * N
    rho2 = rho * rho
    al_a = P * (c1 + min(0.5 * rho2, 2.0) * s) + tn * (s + rho)
    al_b = P * (c1 + rho2 * s / 6.0) + tn * rho
    sin_env, pp_tn2, beta_b = _rotating(rho, P, tn)
    al_b = min(al_b, beta_b)
    gn = 0.0
    for k in range(pieces):
        frac = (k + 1.0) / pieces
        speed = min(eta0 + frac * eta1, cap)
        half = min(frac * (eta0 + 0.5 * frac * eta1), frac * cap)
        hi = theta + half + pad
        lam = hi * hi / 3.0 + hi**4 / 40.0 if hi <= 1.0 else 1.0 - hi / math.tan(hi)
        a = lam * speed + hi * min(al_a, sin_env * math.sqrt(pp_tn2 + speed * speed))
        b = at * (lam * speed + hi * al_b)
        gn += math.sqrt(a * a + b * b) / pieces
    eta_max = min(eta0 + eta1, cap)
    q_a = math.hypot(min(rho, 1.0), min(0.5 * rho, 0.7247))
    root = math.sqrt(1.0 + at * at)
    dev = 0.5 * ((0.5 * X * root + at * d_w * (q_a + 0.3727 * at * rho)) * eta_max
                 + (1.0 + at) * eta1)
    return (gn + dev + root * (s0 + at * s1)) * (1.0 + margin)


@njit(cache=True, error_model="numpy")
def _gn_columns(kmat, gc, at, c, sn):
    """Add one term's Gauss-Newton columns (a_e, a_n, b_e, b_n) x noise symbol to ``kmat``;
    returns their absolute size (for the float margin)."""
    out = 0.0
    for k in range(4):
        l1 = gc[0, k] + at * gc[2, k]
        l2 = c * gc[1, k] + sn * at * gc[3, k]
        kmat[0, k] += l1
        kmat[1, k] += c * l2
        kmat[2, k] += at * l1
        kmat[3, k] += at * sn * l2
        out += (abs(l1) + abs(l2)) * (1.0 + at)
    return out


@njit(cache=True, error_model="numpy")
def _gn_lower(p, u0, u1, u2, wp0, wp1, wp2, par_p, wv0, wv1, wv2, par_v, kmat, rem, kabs, n):
    """:math:`d\\cdot G_c - \\sum_j|d\\cdot K_j| - \\mathrm{rem}` with :math:`G_c` in the
    :math:`(e, n)` frame of the centre (``p x u``), :math:`d = G_c/|G_c|`."""
    n0 = p[1] * u2 - p[2] * u1
    n1 = p[2] * u0 - p[0] * u2
    n2 = p[0] * u1 - p[1] * u0
    gv = np.empty(4)
    gv[0] = -par_p / n
    gv[1] = -(wp0 * n0 + wp1 * n1 + wp2 * n2) / n
    gv[2] = -par_v / n
    gv[3] = -(wv0 * n0 + wv1 * n1 + wv2 * n2) / n
    norm = math.sqrt(gv[0] ** 2 + gv[1] ** 2 + gv[2] ** 2 + gv[3] ** 2)
    if not norm > 0.0:
        return -np.inf
    scale = 1.0 / (norm * (1.0 + 1e-12))
    along = 0.0
    for a in range(4):
        along += gv[a] * gv[a] * scale
    lin = 0.0
    for k in range(4):
        col = 0.0
        for a in range(4):
            col += gv[a] * scale * kmat[a, k]
        lin += abs(col)
    return along - (lin / n + rem / n) * (1.0 + 1e-9) - 1e-9 * kabs / n
