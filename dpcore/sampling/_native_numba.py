r"""Compiled (numba) box bound of :mod:`dpcore.sampling.sphere_native`.

:func:`native_cap_bound` evaluates, box by box and term by term, the formulas of
:func:`~dpcore.sampling.sphere_native.cap_lower_bound` (the proof is in that module) without
its ``(m, n)`` temporaries. Sums are accumulated in another order than numpy's pairwise sums, a
difference of a few units of :math:`nu` relative, far inside the certificate's slack;
``tests/sampling/test_sphere_native.py`` checks that both paths agree to :math:`10^{-12}`.
Import fails without numba; the caller falls back to numpy.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

_SINC1 = 0.4362
_G_SLACK = 1e-10
_CUT_MARGIN = 1e-4


@njit(cache=True, error_model="numpy")
def _rotation(w0, w1, w2, out):
    r2 = w0 * w0 + w1 * w1 + w2 * w2
    r = math.sqrt(r2)
    if r < 1e-4:
        a = 1.0 - r2 / 6.0 + r2 * r2 / 120.0
        b = 0.5 - r2 / 24.0 + r2 * r2 / 720.0
    else:
        a = math.sin(r) / r
        b = (1.0 - math.cos(r)) / (r * r)
    # I + a K + b K^2, K = [w]_x, K^2 = w w^T - |w|^2 I
    out[0, 0] = 1.0 + b * (w0 * w0 - r2)
    out[1, 1] = 1.0 + b * (w1 * w1 - r2)
    out[2, 2] = 1.0 + b * (w2 * w2 - r2)
    out[0, 1] = -a * w2 + b * w0 * w1
    out[1, 0] = a * w2 + b * w0 * w1
    out[0, 2] = a * w1 + b * w0 * w2
    out[2, 0] = -a * w1 + b * w0 * w2
    out[1, 2] = -a * w0 + b * w1 * w2
    out[2, 1] = a * w0 + b * w1 * w2


@njit(cache=True, error_model="numpy")
def native_cap_bound(zc, h, t, y, tau):
    """``(lower, g_c)`` of ``m`` boxes (centres ``zc`` (m, 4), half-widths ``h`` (m, 4));
    see :func:`~dpcore.sampling.sphere_native.cap_lower_bound`."""
    m = zc.shape[0]
    n = t.shape[0]
    lower = np.empty(m)
    g_out = np.empty(m)
    rot = np.empty((3, 3))
    x1 = np.empty(n)
    x2 = np.empty(n)
    perp_ = np.empty(n)
    theta = np.empty(n)
    cps = np.empty(n)
    sps = np.empty(n)
    crs = np.empty(n)
    sincs = np.empty(n)
    for box in range(m):
        _rotation(zc[box, 0], zc[box, 1], zc[box, 2], rot)
        s = zc[box, 3]
        g0 = 0.0
        g1 = 0.0
        g2 = 0.0
        g3 = 0.0
        for i in range(n):
            yp = y[i, 0] * rot[0, 0] + y[i, 1] * rot[1, 0] + y[i, 2] * rot[2, 0]
            ye = y[i, 0] * rot[0, 1] + y[i, 1] * rot[1, 1] + y[i, 2] * rot[2, 1]
            yn = y[i, 0] * rot[0, 2] + y[i, 1] * rot[1, 2] + y[i, 2] * rot[2, 2]
            rh = s * t[i]
            cr = math.cos(rh)
            sr = math.sin(rh)
            a1 = cr * yp + sr * ye
            a2 = -sr * yp + cr * ye
            perp = math.sqrt(a2 * a2 + yn * yn)
            th = math.atan2(perp, a1)
            if perp > 0:
                cp = a2 / perp
                sp = yn / perp
            else:
                cp = 1.0
                sp = 0.0
            sc = 1.0 if abs(rh) < 1e-8 else sr / rh
            x1[i] = a1
            x2[i] = a2
            perp_[i] = perp
            theta[i] = th
            cps[i] = cp
            sps[i] = sp
            crs[i] = cr
            sincs[i] = sc
            r = min(th, tau)
            g0 += r * cp
            g1 += r * cr * sp
            g2 += r * t[i] * cp
            g3 += r * t[i] * sc * sp
        g0 /= n
        g1 /= n
        g2 /= n
        g3 /= n
        gc = math.sqrt(g0 * g0 + g1 * g1 + g2 * g2 + g3 * g3)
        g_out[box] = gc
        if gc > 0:
            den = gc * (1 + 1e-15)
            u0, u1, u2, u3 = g0 / den, g1 / den, g2 / den, g3 / den
        else:
            u0, u1, u2, u3 = 1.0, 0.0, 0.0, 0.0
        phi = math.sqrt(h[box, 0] ** 2 + h[box, 1] ** 2 + h[box, 2] ** 2)
        hs = abs(h[box, 3])
        total = 0.0
        mags = 0.0
        for i in range(n):
            ti = t[i]
            at = abs(ti)
            kappa = (phi + at * hs * math.sqrt(x1[i] * x1[i] + x2[i] * x2[i])) * (1 + 1e-12)
            kappa += 1e-12
            th_lo = theta[i] - kappa
            th_hi = theta[i] + kappa
            a = u0 + ti * u2
            bc = u1 * crs[i] + u3 * ti * sincs[i]
            b1 = at * hs * (abs(u1) + abs(u3) * at * _SINC1) * (1 + 1e-12)
            hyp = math.sqrt(a * a + bc * bc)
            c_min = -1.0
            if th_lo > 0 and th_hi < math.pi - _CUT_MARGIN and hyp > 0:
                # sine and cosine of the azimuth range's half-width (widened)
                sh = kappa / perp_[i]  # sin(kappa) <= kappa: a wider range
                sh = min(sh * (1 + 1e-12) + 1e-12, 1.0)
                ch = math.sqrt(1.0 - sh * sh)
                cd = (cps[i] * a + sps[i] * bc) / hyp
                sd = abs(sps[i] * a - cps[i] * bc) / hyp
                if cd > -ch:
                    c_min = max(cd * ch - sd * sh - 1e-15, -1.0)
            f_min = hyp * c_min - b1
            r_lo = min(max(th_lo, 0.0), tau)
            r_hi = min(th_hi, tau)
            term = r_lo * f_min if f_min >= 0 else r_hi * f_min
            total += term
            mags += abs(term)
        lower[box] = total / n - 1e-12 * mags / n - _G_SLACK
    return lower, g_out
