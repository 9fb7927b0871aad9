r"""Compiled (numba) per-leaf term sums of :mod:`dpcore.sampling.bundle_flat`.

:func:`flat_terms` evaluates, leaf by leaf and term by term, the same quantities as the numpy
path of :meth:`~dpcore.sampling.bundle_flat.FlatBundleSampler._terms` (the proofs are in that
module) without its ``(m, n, d, D)`` temporaries: the residual at the leaf's centre, the
term's reach :math:`\alpha_i`, its kind (inside, outside, straddling), its linear part and
remainder, the centre gradient and energy. Sums are accumulated in another order than numpy's
(pairwise) sums, a difference of a few units of :math:`nu` relative, inside the certificate's
float slack (:math:`8(n + 2)u\tau` on :math:`g`); ``tests/sampling/test_bundle_flat.py``
checks that both paths agree to :math:`10^{-12}`. Import fails without numba; the caller
falls back to numpy.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

#: Half the sup of :math:`|D^2(r/|r|)[a, a]|` over unit :math:`a` at :math:`|r| = 1`,
#: :math:`1/\sqrt3` rounded up (:mod:`dpcore.sampling.bundle_flat`).
_HALF_D2 = 0.57735026918963


@njit(cache=True, error_model="numpy")
def flat_terms(zc, basis, zslack, t, yc, tau):
    """``(g0, q, loss, coef_sum, e_c, share)`` of ``m`` leaves (see the module docstring).

    Parameters
    ----------
    zc : array (m, D)
    basis : array (m, D, D)
    zslack : array (m, D)
    t : array (n,)
    yc : array (n, d)
    tau : float
    """
    m, dim = zc.shape
    n, d = yc.shape
    g0 = np.zeros((m, dim))
    q = np.zeros((m, dim, dim))
    loss = np.zeros(m)
    coef_sum = np.zeros(m)
    e_c = np.zeros(m)
    share = np.zeros((m, dim))
    r = np.empty(d)
    ba = np.empty((d, dim))
    lo_in, hi_out = tau * (1 - 1e-12), tau * (1 + 1e-12)
    for leaf in range(m):
        su = 0.0
        sw = 0.0
        for k in range(d):
            su += zslack[leaf, k] ** 2
            sw += zslack[leaf, d + k] ** 2
        su, sw = math.sqrt(su), math.sqrt(sw)
        for i in range(n):
            ti = t[i]
            rr = 0.0
            col2 = 0.0
            for k in range(d):
                r[k] = yc[i, k] - zc[leaf, k] - ti * zc[leaf, d + k]
                rr += r[k] * r[k]
                cs = 0.0
                for j in range(dim):
                    ba[k, j] = basis[leaf, k, j] + ti * basis[leaf, d + k, j]
                    cs += abs(ba[k, j])
                col2 += cs * cs
            rho = math.sqrt(rr)
            alpha = (math.sqrt(col2) + su + abs(ti) * sw) * (1 + 1e-12)
            inside = rho + alpha <= lo_in
            outside = rho - alpha >= hi_out
            curved = outside and d > 1
            fac = math.sqrt(1.0 + ti * ti)
            if inside:
                coef, rem, slope = 1.0, 0.0, 0.0
            elif curved:
                rho_min = rho - alpha
                coef = tau / rho
                rem = _HALF_D2 * tau * alpha * alpha / (rho_min * rho_min) * (1 + 1e-12)
                slope = 2.0 * _HALF_D2 * tau * alpha / (rho_min * rho_min)
            elif outside:
                coef, rem, slope = 0.0, 0.0, 0.0
            else:
                coef, rem, slope = 0.5, 0.5 * alpha * (1 + 1e-12), 0.5
            loss[leaf] += rem * fac
            coef_sum[leaf] += coef * (1.0 + ti * ti)
            scale = min(1.0, tau / rho) if rho > 0 else 1.0
            for k in range(d):
                g0[leaf, k] -= r[k] * scale
                g0[leaf, d + k] -= ti * r[k] * scale
            if rho <= tau:
                e_c[leaf] += 0.5 * rho * rho
            else:
                e_c[leaf] += tau * rho - 0.5 * tau * tau
            if slope != 0.0:
                for j in range(dim):
                    c2 = 0.0
                    for k in range(d):
                        c2 += ba[k, j] * ba[k, j]
                    share[leaf, j] += slope * fac * math.sqrt(c2)
            if coef != 0.0:
                inv = 1.0 / rho if rho > 0 else 1.0
                for j in range(dim):
                    along = 0.0
                    if curved:
                        for k in range(d):
                            along += r[k] * inv * ba[k, j]
                    for k in range(d):
                        pk = ba[k, j] - (r[k] * inv * along if curved else 0.0)
                        q[leaf, k, j] += coef * pk
                        q[leaf, d + k, j] += ti * coef * pk
        loss[leaf] = loss[leaf] / n * (1 + 1e-9)
        coef_sum[leaf] /= n
        e_c[leaf] /= n
        for j in range(dim):
            g0[leaf, j] /= n
            share[leaf, j] /= n
            for k in range(dim):
                q[leaf, k, j] /= n
    return g0, q, loss, coef_sum, e_c, share


@njit(cache=True, error_model="numpy")
def flat_joint_norms(z, t, y, tau):
    r""":math:`g = |G|` (m,) at coordinates ``z = [p, v]`` (m, 2d) about a centre, with ``y``
    the responses about the same centre (the origin for the uniform exact proposals on R^d):
    the clipped joint gradient of :mod:`dpcore.sampling.bundle_flat`, the library's Euclidean
    kernel with each component summed sequentially over the data (agreement to
    :math:`10^{-12}` is tested), in three passes per proposal (residuals, their clip factors,
    the sums) that the compiler vectorizes."""
    m, dim = z.shape
    n, d = y.shape
    out = np.empty(m)
    r = np.empty((d, n))
    rr = np.empty(n)
    acc = np.empty(dim)
    for a in range(m):
        for i in range(n):
            rr[i] = 0.0
        for k in range(d):
            pk, vk = z[a, k], z[a, d + k]
            for i in range(n):
                rk = y[i, k] - pk - t[i] * vk
                r[k, i] = rk
                rr[i] += rk * rk
        for i in range(n):
            rho = math.sqrt(rr[i])
            rr[i] = min(1.0, tau / rho) if rho > 0 else 1.0
        for k in range(d):
            sp, sv = 0.0, 0.0
            for i in range(n):
                rk = r[k, i] * rr[i]
                sp += rk
                sv += t[i] * rk
            acc[k], acc[d + k] = sp, sv
        s = 0.0
        for j in range(dim):
            s += (acc[j] / n) ** 2
        out[a] = math.sqrt(s)
    return out


#: The leaves' name of the same kernel (:mod:`dpcore.sampling.bundle_flat`).
flat_g = flat_joint_norms
