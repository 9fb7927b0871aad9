r"""Compiled (numba) box bound of :mod:`dpcore.sampling.sphere_native`.

:func:`native_cap_bound` evaluates, box by box and term by term, the formulas of
:func:`~dpcore.sampling.sphere_native.cap_lower_bound` (the proof is in that module) without
its ``(m, n)`` temporaries, as two loops per box without branches or library calls other than
``sqrt``, which the compiler vectorizes (``fastmath={"reassoc", "contract"}``).

Floats. The proof needs each term's formula evaluated to within the widenings that module
adds: :math:`10^{-12}` on every :math:`\kappa_i` (absolute and relative), :math:`10^{-12}
\sum_i |\mathrm{term}_i|` on the sum and ``G_SLACK`` :math:`= 10^{-10}` on the bound.

- cos and sin of :math:`\rho/2` (:math:`\rho = s\,t_i`) come from the Taylor polynomials
  ``_SIN``, ``_COS`` of :mod:`~dpcore.sampling._sphere_numba` (remainder below
  :math:`3\cdot10^{-18}` on :math:`|x| \le 1.6`) after the reduction :math:`x = x_r + k\pi`,
  :math:`|x_r| \le \pi/2 < 1.6`; the sign :math:`(-1)^k` cancels in :math:`\sin\rho = 2\sin
  x\cos x`, :math:`\cos\rho = \cos^2 x - \sin^2 x` and :math:`\operatorname{sinc}\rho = (\sin
  x/x)\cos x`. The reduction's own error, :math:`k` ulp of :math:`\pi`, is below
  :math:`10^{-15}` for the :math:`|\rho| \le 2\pi |t|_\infty` the lattice allows with
  :math:`|t| \le 1` (:math:`10^{-14}` at :math:`|t| = 10`).
- :math:`\theta = \operatorname{atan2}(\perp, a_1) \in [0, \pi]` reduces
  :math:`q = \min/\max \in [0, 1]` twice by :math:`q \mapsto q/(1 + \sqrt{1 + q^2})` (half the
  angle) to :math:`q \le \tan(\pi/16)`, sums 12 terms of the arctangent series (remainder below
  :math:`4\cdot10^{-18}`) and undoes the reductions, :math:`\pi/2 - a` and :math:`\pi - a`:
  within a few ulp of ``math.atan2`` (tested against numpy's to :math:`10^{-15}`).
- Summation order is left to the compiler: a difference of a few units of
  :math:`n\,u` relative to :math:`\sum_i |\mathrm{term}_i|`, inside the :math:`10^{-12}`
  relative slack.

All of these are far inside the widenings (:math:`10^{-15}` against :math:`10^{-12}`);
``tests/sampling/test_sphere_native.py`` checks that this kernel and the numpy reference agree
to :math:`10^{-12}`, over speeds that need the reduction. Import fails without numba; the
caller falls back to numpy.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ._sphere_numba import _COS, _SIN

_SINC1 = 0.4362
_G_SLACK = 1e-10
_CUT_MARGIN = 1e-4
#: arctan(q) = sum_k (-1)^k q^(2k+1) / (2k+1), k = 0 .. 11: remainder q^25/25 < 4e-18 for
#: q <= tan(pi/16) < 0.2.
_ATAN = tuple((-1) ** k / (2 * k + 1) for k in range(12))
_FAST = {"reassoc", "contract"}


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


@njit(cache=True, fastmath=_FAST, error_model="numpy")
def _atan2_pos(y, x):
    """``atan2(y, x)`` for ``y >= 0`` (module docstring, "Floats"), branch-free."""
    ax = abs(x)
    mn = min(y, ax)
    mx = max(max(y, ax), 1e-300)
    q = mn / mx
    q = q / (1.0 + math.sqrt(1.0 + q * q))
    q = q / (1.0 + math.sqrt(1.0 + q * q))
    q2 = q * q
    a = _ATAN[11]
    for j in range(10, -1, -1):
        a = a * q2 + _ATAN[j]
    a = 4.0 * a * q
    a = 0.5 * math.pi - a if y > ax else a
    return math.pi - a if x < 0.0 else a


@njit(cache=True, fastmath=_FAST, error_model="numpy")
def _half_angle(x):
    """``(sin x, cos x, sin(x) / x)`` up to a common sign, which the callers' products cancel
    (module docstring, "Floats")."""
    k = math.floor(x * (1.0 / math.pi) + 0.5)
    xr = x - k * math.pi
    x2 = xr * xr
    sx = _SIN[10]
    for j in range(9, -1, -1):
        sx = sx * x2 + _SIN[j]
    cx = _COS[11]
    for j in range(10, -1, -1):
        cx = cx * x2 + _COS[j]
    ratio = sx * xr / x if k != 0.0 else sx
    return sx * xr, cx, ratio


@njit(cache=True, fastmath=_FAST, error_model="numpy")
def _centre_terms(rot, s, t, y0, y1, y2, tau, x1, x2, perp_, theta, cps, sps, crs, sincs):
    """First loop of :func:`native_cap_bound`: the terms at a box centre; returns the
    unnormalized sums of ``G``."""
    g0 = g1 = g2 = g3 = 0.0
    for i in range(t.shape[0]):
        yp = y0[i] * rot[0, 0] + y1[i] * rot[1, 0] + y2[i] * rot[2, 0]
        ye = y0[i] * rot[0, 1] + y1[i] * rot[1, 1] + y2[i] * rot[2, 1]
        yn = y0[i] * rot[0, 2] + y1[i] * rot[1, 2] + y2[i] * rot[2, 2]
        ti = t[i]
        sx, cx, ratio = _half_angle(0.5 * s * ti)
        sr = 2.0 * sx * cx
        cr = cx * cx - sx * sx
        a1 = cr * yp + sr * ye
        a2 = -sr * yp + cr * ye
        perp = math.sqrt(a2 * a2 + yn * yn)
        th = _atan2_pos(perp, a1)
        pos = perp > 0.0
        safe = perp if pos else 1.0
        cp = a2 / safe if pos else 1.0
        sp = yn / safe if pos else 0.0
        x1[i] = a1
        x2[i] = a2
        perp_[i] = perp
        theta[i] = th
        cps[i] = cp
        sps[i] = sp
        crs[i] = cr
        sincs[i] = ratio * cx
        r = min(th, tau)
        g0 += r * cp
        g1 += r * cr * sp
        g2 += r * ti * cp
        g3 += r * ti * ratio * cx * sp
    return g0, g1, g2, g3


@njit(cache=True, fastmath=_FAST, error_model="numpy")
def _box_terms(u0, u1, u2, u3, phi, hs, t, tau, x1, x2, perp_, theta, cps, sps, crs, sincs):
    """Second loop of :func:`native_cap_bound`: ``(sum of terms, sum of |terms|)``."""
    total = 0.0
    mags = 0.0
    lim = math.pi - _CUT_MARGIN
    for i in range(t.shape[0]):
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
        inside = (th_lo > 0.0) & (th_hi < lim) & (hyp > 0.0)
        # sine and cosine of the azimuth range's half-width (widened): sin(kappa) <= kappa
        sh = kappa / (perp_[i] if inside else 1.0)
        sh = min(sh * (1 + 1e-12) + 1e-12, 1.0)
        ch = math.sqrt(1.0 - sh * sh)
        sf = hyp if hyp > 0.0 else 1.0
        cd = (cps[i] * a + sps[i] * bc) / sf
        sd = abs(sps[i] * a - cps[i] * bc) / sf
        c_min = max(cd * ch - sd * sh - 1e-15, -1.0) if inside & (cd > -ch) else -1.0
        f_min = hyp * c_min - b1
        r_lo = min(max(th_lo, 0.0), tau)
        r_hi = min(th_hi, tau)
        term = (r_lo if f_min >= 0.0 else r_hi) * f_min
        total += term
        mags += abs(term)
    return total, mags


@njit(cache=True, error_model="numpy")
def native_cap_bound(zc, h, t, y, tau):
    """``(lower, g_c)`` of ``m`` boxes (centres ``zc`` (m, 4), half-widths ``h`` (m, 4));
    see :func:`~dpcore.sampling.sphere_native.cap_lower_bound`."""
    m = zc.shape[0]
    n = t.shape[0]
    lower = np.empty(m)
    g_out = np.empty(m)
    rot = np.empty((3, 3))
    y0 = np.ascontiguousarray(y[:, 0])
    y1 = np.ascontiguousarray(y[:, 1])
    y2 = np.ascontiguousarray(y[:, 2])
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
        g0, g1, g2, g3 = _centre_terms(rot, zc[box, 3], t, y0, y1, y2, tau, x1, x2, perp_,
                                       theta, cps, sps, crs, sincs)
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
        total, mags = _box_terms(u0, u1, u2, u3, phi, abs(h[box, 3]), t, tau, x1, x2, perp_,
                                 theta, cps, sps, crs, sincs)
        lower[box] = total / n - 1e-12 * mags / n - _G_SLACK
    return lower, g_out
