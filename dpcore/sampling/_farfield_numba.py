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
:math:`10^{-10}` relative. Import fails without numba; the caller falls back to numpy.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

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
def _rate(kappa, m, eta, s, al_a, al_b, be_a, be_b, t):
    """Scalar ``sphere_jacobian_bounds._rate`` with its piece-independent parts hoisted:
    ``A_T = ke + m al_a``, ``B_T/t = ke + m al_b``, ``A_D = ke + m (be_a + s eta)``,
    ``B_D/t = ke + m (eta s + be_b)``, ``ke = kappa eta``."""
    ke = kappa * eta
    a_b = ke + m * min(al_a, be_a + s * eta)
    b_b = t * (ke + m * min(al_b, eta * s + be_b))
    return math.sqrt(a_b * a_b + b_b * b_b)


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
    mv = 0.0
    for k in range(pieces):
        frac = (k + 1.0) / pieces
        speed = min(eta0 + frac * eta1, cap)
        half = min(frac * (eta0 + 0.5 * frac * eta1), frac * cap)
        lo = max(theta - half - pad, 0.0)
        hi = theta + half + pad
        mv += _rate(_turn_rate(lo, hi, tau), min(hi, tau), speed, s, al_a, al_b, be_a, be_b,
                    at) / pieces
    return min(mv, crude) * (1.0 + margin), True


@njit(cache=True, error_model="numpy")
def farfield_loss(geo_s, geo_v, geo_c, p, v, y, t, tau, pieces, cut, pad, margin):
    """Mean-value loss (m,) and split scores (m, 4) of leaves.

    Parameters
    ----------
    geo_s : array (m, 11)
        Columns P, N, Dw, W, r_max, wc, s0, s1, r0, r1, unused (``leaf_geometry``).
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
    """
    m, n = p.shape[0], t.shape[0]
    loss = np.zeros(m)
    score = np.zeros((m, 4))
    for i in range(m):
        P, N, d_w, W = geo_s[i, 0], geo_s[i, 1], geo_s[i, 2], geo_s[i, 3]
        wc, s0, s1, r0, r1 = geo_s[i, 5], geo_s[i, 6], geo_s[i, 7], geo_s[i, 8], geo_s[i, 9]
        speed_v = math.sqrt(v[i, 0] ** 2 + v[i, 1] ** 2 + v[i, 2] ** 2)
        for j in range(n):
            at = abs(t[j])
            rc = at * wc
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
            rp = at * speed_v
            cr, sr = math.cos(rp), _sinc(rp) * t[j]
            h0 = cr * p[i, 0] + sr * v[i, 0]
            h1 = cr * p[i, 1] + sr * v[i, 1]
            h2 = cr * p[i, 2] + sr * v[i, 2]
            x0 = h1 * y[j, 2] - h2 * y[j, 1]
            x1 = h2 * y[j, 0] - h0 * y[j, 2]
            x2 = h0 * y[j, 1] - h1 * y[j, 0]
            theta = math.atan2(math.sqrt(x0 * x0 + x1 * x1 + x2 * x2),
                               h0 * y[j, 0] + h1 * y[j, 1] + h2 * y[j, 2])
            bound, smooth = _term(theta, at, P, N, W, eta0, eta1, tau, pieces, cut, pad, margin)
            loss[i] += bound
            if smooth:
                rate = bound / max(min(eta0, P + at * N), 1e-300)
                for k in range(4):
                    score[i, k] += rate * _jac(geo_c[i, 0, k], geo_c[i, 1, k], geo_c[i, 2, k],
                                               geo_c[i, 3, k], at, c, sn)
    for i in range(m):
        loss[i] = loss[i] / n * (1.0 + 1e-9)
        for k in range(4):
            score[i, k] /= n
    return loss, score
