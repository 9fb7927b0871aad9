r"""numba kernels of the fused Metropolis-Hastings chain for geodesic regression on SPD(2).

Imported only by :mod:`dpcore.sampling._compiled_regression` when the compiled path runs.
Every function follows the numpy code it replaces formula for formula, so that both paths give
the same chains up to floating-point rounding:

- the regression gradients: :func:`dpcore.learning.kernels.spd.spd_regression_gradient` for
  k = 2 (Cholesky frame of the curvature operator, closed-form 2 x 2 logarithm of the whitened
  responses, :func:`~dpcore.learning.kernels.spd._frame_sums_2x2`); the gradient's norm at
  ``p`` is the Frobenius norm of its frame matrix (the frame is orthonormal at ``p``);
- the proposals of ``_Stepper.propose`` (:mod:`dpcore.sampling.mcmc`) on ``SPD(2)``:
  :meth:`SPD.random_tangent <dpcore.manifolds.SPD.random_tangent>` builds the tangent
  Gaussian with the eigen square root ``A = Q diag(sqrt s)`` of the state (the same root, so
  the same vector), and ``exp`` is ``A expm(scale a) A^T``; on the tangent bundle the vector is
  transported by ``E w E^T``, ``E = A expm(scale a / 2) A^{-1}``;
- the footpoint stage's transport of ``v_hat`` from ``p_hat``
  (``E = L S^{1/2} L^{-1}``, ``S = L^{-1} p L^{-T}``, ``L`` the Cholesky factor of ``p_hat``),
  and the public support ball (affine-invariant distance to its centre).

A 2 x 2 symmetric matrix is handled as its entries ``(m00, m01, m11)``; states are stored flat,
``(m00, m01, m10, m11)`` (row-major, ``m10 = m01``). The random numbers are not drawn here.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ._chain_numba import accept, finish_step, start_step

#: Kinds of target (as :mod:`dpcore.sampling._sphere_numba`).
FOOTPOINT, VECTOR, JOINT = 0, 1, 2
_LOG2 = math.log(2.0)
_TINY = np.finfo(np.float64).tiny


@njit(cache=True, error_model="numpy")
def _cholesky(p00, p10, p11):
    l00 = math.sqrt(p00)
    l10 = p10 / l00
    return l00, l10, math.sqrt(p11 - l10 * l10)


@njit(cache=True, error_model="numpy")
def frame_norms(p00, p10, p11, v00, v10, v11, t, resp, tau, want_p, want_v, hint):
    """Frobenius norms of the footpoint and vector gradients' frame matrices (the gradients'
    norms at ``p``), as ``spd_regression_gradient`` (``tau < 0``: no clipping).

    ``hint[0]`` (read and updated) says whether the last call had large residuals: then
    :func:`_fast_sums` takes its wide loop at once, else it tries the narrow one first.

    ``resp`` holds the rows ``[y00, y01, y11, log det y]`` of the responses normalised to
    determinant 1 (``_unit_responses_2x2``). Parts not wanted are returned as 0.
    """
    l00, l10, l11 = _cholesky(p00, p10, p11)
    # W = L^{-1} v L^{-T} and its eigenvectors (cos th, sin th), (-sin th, cos th)
    w00 = v00 / (l00 * l00)
    w10 = (v10 / l00 - l10 * w00) / l11
    w11 = ((v11 - l10 * v10 / l00) / l11 - l10 * w10) / l11
    dw = 0.5 * (w00 - w11)
    half = math.hypot(dw, w10)
    mid = 0.5 * (w00 + w11)
    theta = 0.5 * math.atan2(w10, dw)
    cs = math.cos(theta)
    sn = math.sin(theta)
    lam0 = mid + half
    lam1 = mid - half
    logdet_p = 2.0 * math.log(l00 * l11)
    scale = math.exp(0.25 * logdet_p - 0.25 * _LOG2)
    x0 = (cs - l10 * sn / l11) / l00 * scale
    z0 = -(sn + l10 * cs / l11) / l00 * scale
    x1 = sn / l11 * scale
    z1 = cs / l11 * scale
    # whitening rows: y -> [z00, 2 z01, z11] of sqrt(det p / 2) C^T y C
    r00, r01, r02 = x0 * x0, 2.0 * x0 * x1, x1 * x1
    r10, r11, r12 = 2.0 * x0 * z0, 2.0 * (x0 * z1 + x1 * z0), 2.0 * x1 * z1
    r20, r21, r22 = z0 * z0, 2.0 * z0 * z1, z1 * z1
    half_gap = 0.5 * (lam0 - lam1)
    lam_sum = lam0 + lam1
    two_tau2 = 2.0 * tau * tau
    y0 = resp[0]
    y1 = resp[1]
    y2 = resp[2]
    ld = resp[3]
    clip = two_tau2 if tau >= 0.0 else np.inf
    wide = hint[0] != 0.0
    bad, wide_terms, sp_off, sp_a, sp_d, sv_off, sv_a, sv_d, sv_flat = _fast_sums(
        r00, r01, r02, r10, r11, r12, r20, r21, r22, half_gap, lam_sum, logdet_p, t, y0, y1,
        y2, ld, clip, wide)
    if bad and not wide:
        bad, wide_terms, sp_off, sp_a, sp_d, sv_off, sv_a, sv_d, sv_flat = _fast_sums(
            r00, r01, r02, r10, r11, r12, r20, r21, r22, half_gap, lam_sum, logdet_p, t, y0,
            y1, y2, ld, clip, True)
    hint[0] = 1.0 if wide_terms else 0.0
    if bad:
        sp_off, sp_a, sp_d, sv_off, sv_a, sv_d, sv_flat = _scalar_sums(
            r00, r01, r02, r10, r11, r12, r20, r21, r22, half_gap, lam_sum, logdet_p, t, y0,
            y1, y2, ld, tau, want_p, want_v)
    inv_n = 1.0 / t.shape[0]
    norm_p = norm_v = 0.0
    if want_p:
        norm_p = _sym_norm(0.5 * sp_a, 0.5 * sp_d, 0.25 * sp_off) * inv_n
    if want_v:
        if abs(half_gap) < 1e-150:
            s_off = 0.5 * sv_flat
        else:
            s_off = -0.25 * sv_off / half_gap
        norm_v = _sym_norm(0.5 * sv_a, 0.5 * sv_d, s_off) * inv_n
    return norm_p, norm_v


#: Taylor coefficients of expm1(x) / x (1 / (j + 1)!, j = 0 .. 14): remainder below 5e-17
#: (relative) for |x| <= 1/2.
_EXPM1 = tuple(1.0 / math.factorial(j + 1) for j in range(15))
#: Taylor coefficients of asinh(h) / h in h^2, (-1)^k binom(2k, k) / (4^k (2k + 1)),
#: k = 0 .. 13: remainder below 2e-18 for h <= 1/4.
_ASINH_RATIO = tuple((-1) ** k * math.comb(2 * k, k) / 4**k / (2 * k + 1) for k in range(14))
#: Taylor coefficients of atanh(z) / z in z^2, 1 / (2k + 1), k = 0 .. 13: remainder below
#: 3e-18 for z^2 <= 0.06.
_ATANH_RATIO = tuple(1.0 / (2 * k + 1) for k in range(14))
_SQRT2 = math.sqrt(2.0)


@njit(cache=True, fastmath={"reassoc", "contract"}, error_model="numpy")
def _fast_sums(r00, r01, r02, r10, r11, r12, r20, r21, r22, half_gap, lam_sum, logdet_p, t,
               y0, y1, y2, ld, two_tau2, wide):
    """The sums of :func:`frame_norms` as one loop without branches or library calls, which
    the compiler vectorizes; returns ``(bad, footpoint sums (3), vector sums (4))``.

    ``q = exp(-t delta)`` comes from a Taylor polynomial of ``expm1`` at a sixteenth of the
    argument and four doublings (``expm1(2x) = e (2 + e)``), and the logarithm of the
    whitened response from ``l = log(mu_+ / mu_-) = 2 asinh(h)`` (its determinant is 1,
    eigenvalues ``m +- h``, ``m^2 - h^2 = 1``) with a polynomial of ``asinh(h) / h`` up to
    ``h = 1/4``, beyond it ``2 log(h + sqrt(h^2 + 1))`` with the logarithm reduced by five
    square roots to an ``atanh`` polynomial. ``bad`` is True when some term is outside the
    polynomials' ranges (``t delta > 8``, ``l > 31``, or ``h > 1/4`` unless ``wide``), and
    the caller then uses the wide or the scalar loop; ``wide_terms`` whether some ``h`` was
    above 1/4. ``two_tau2`` is ``2 tau^2``
    (``inf``: no clipping).
    """
    sp_off = sp_a = sp_d = sv_off = sv_a = sv_d = sv_flat = 0.0
    bad = False
    wide_terms = False
    scaled_gap = -half_gap * 0.0625
    for i in range(t.shape[0]):
        ti = t[i]
        a0 = y0[i]
        a1 = y1[i]
        a2_ = y2[i]
        z00 = r00 * a0 + r01 * a1 + r02 * a2_
        z01x2 = r10 * a0 + r11 * a1 + r12 * a2_
        z11 = r20 * a0 + r21 * a1 + r22 * a2_
        x = scaled_gap * ti
        e = _EXPM1[14]
        for j in range(13, -1, -1):
            e = e * x + _EXPM1[j]
        e *= x
        e = e * (2.0 + e)
        e = e * (2.0 + e)
        e = e * (2.0 + e)
        e = e * (2.0 + e)
        a2 = -lam_sum * ti + ld[i] - logdet_p
        q = e + 1.0
        q_inv = 1.0 / q
        z00 *= q
        z11 *= q_inv
        dd2 = z00 - z11
        h2 = math.sqrt(dd2 * dd2 + z01x2 * z01x2)
        hh = h2 * (1.0 / _SQRT2)
        hh2 = hh * hh
        ratio = _ASINH_RATIO[13]
        for j in range(12, -1, -1):
            ratio = ratio * hh2 + _ASINH_RATIO[j]
        large = hh2 > 0.0625
        wide_terms |= large
        bad |= abs(x) > 0.5
        if wide:
            # beyond h = 1/4: l = 2 log(mu_+), log(mu) = 64 atanh(z), z = (y - 1) / (y + 1),
            # y = mu^(1/32) (five square roots)
            y = hh + math.sqrt(hh2 + 1.0)
            y = math.sqrt(math.sqrt(math.sqrt(math.sqrt(math.sqrt(y)))))
            z = (y - 1.0) / (y + 1.0)
            z2 = z * z
            atanh = _ATANH_RATIO[13]
            for j in range(12, -1, -1):
                atanh = atanh * z2 + _ATANH_RATIO[j]
            bad |= z2 > 0.06
            l = 128.0 * z * atanh if large else _SQRT2 * h2 * ratio
            b = l / h2 if large else _SQRT2 * ratio
        else:
            bad |= large
            l = _SQRT2 * h2 * ratio
            b = _SQRT2 * ratio
        f = math.sqrt(min(1.0, two_tau2 / (l * l + a2 * a2)))
        b *= f
        b_dd = b * dd2
        b_off = b * z01x2
        sv_off += b_off * ((q_inv + 1.0) * e)
        sv_flat += b_off * ti
        sv_a += a2 * f * ti
        sv_d += b_dd * ti
        sp_off += b_off * (q + q_inv)
        sp_a += a2 * f
        sp_d += b_dd
    return bad, wide_terms, sp_off, sp_a, sp_d, sv_off, sv_a, sv_d, sv_flat


@njit(cache=True, error_model="numpy")
def _scalar_sums(r00, r01, r02, r10, r11, r12, r20, r21, r22, half_gap, lam_sum, logdet_p, t,
                 y0, y1, y2, ld, tau, want_p, want_v):
    """The sums of :func:`frame_norms`, one term at a time with the library's ``expm1`` and
    ``log1p``, as the numpy kernel computes them."""
    two_tau2 = 2.0 * tau * tau
    sp_off = sp_a = sp_d = 0.0
    sv_off = sv_a = sv_d = sv_flat = 0.0
    for i in range(t.shape[0]):
        ti = t[i]
        a0 = y0[i]
        a1 = y1[i]
        a2_ = y2[i]
        z00 = r00 * a0 + r01 * a1 + r02 * a2_
        z01x2 = r10 * a0 + r11 * a1 + r12 * a2_
        z11 = r20 * a0 + r21 * a1 + r22 * a2_
        e = math.expm1(-half_gap * ti)
        a2 = -lam_sum * ti + ld[i] - logdet_p
        q = e + 1.0
        q_inv = 1.0 / q
        z00 *= q
        z11 *= q_inv
        dd2 = z00 - z11
        h2 = math.sqrt(dd2 * dd2 + z01x2 * z01x2)
        l = math.log1p((z00 + z11 + h2) * h2)
        b = l / max(h2, _TINY)
        f = 1.0
        if tau >= 0.0:
            f = math.sqrt(two_tau2 / max(l * l + a2 * a2, two_tau2))
            b *= f
        b_dd = b * dd2
        b_off = b * z01x2
        if want_v:
            sv_off += b_off * ((q_inv + 1.0) * e)
            sv_flat += b_off * ti
            sv_a += a2 * f * ti
            sv_d += b_dd * ti
        if want_p:
            sp_off += b_off * (q + q_inv)
            sp_a += a2 * f
            sp_d += b_dd
    return sp_off, sp_a, sp_d, sv_off, sv_a, sv_d, sv_flat


@njit(cache=True, error_model="numpy")
def _sym_norm(s_a, s_d, s_off):
    """Frobenius norm of ``[[s_a + s_d, s_off], [s_off, s_a - s_d]]``."""
    m00 = s_a + s_d
    m11 = s_a - s_d
    return math.sqrt(m00 * m00 + 2.0 * s_off * s_off + m11 * m11)


@njit(cache=True, error_model="numpy")
def _eigen_root(p00, p10, p11):
    """``A = Q diag(sqrt s)`` of ``dpcore.manifolds.SPD._factor`` (``_eigh_2x2``'s vectors)."""
    mid = 0.5 * (p00 + p11)
    big = mid + math.copysign(math.hypot(0.5 * (p00 - p11), p10), mid)
    other = (p00 * p11 - p10 * p10) / big if big != 0.0 else 0.0
    low = min(big, other)
    high = max(big, other)
    r2 = 2.0 * p10
    diff = p00 - p11
    if p00 >= p11:
        th = 0.5 * math.atan2(r2, diff)
        c = math.cos(th)
        s = math.sin(th)
        q00, q10, q01, q11 = -s, c, c, s
    else:
        th = 0.5 * math.atan2(-r2, -diff)
        c = math.cos(th)
        s = math.sin(th)
        q00, q10, q01, q11 = c, s, -s, c
    rl = math.sqrt(max(low, _TINY))
    rh = math.sqrt(max(high, _TINY))
    return q00 * rl, q01 * rh, q10 * rl, q11 * rh


@njit(cache=True, error_model="numpy")
def _expm_sym(w00, w01, w11, factor):
    """Entries of ``expm(factor * W)`` for symmetric ``W``."""
    w00 *= factor
    w01 *= factor
    w11 *= factor
    mid = 0.5 * (w00 + w11)
    dw = 0.5 * (w00 - w11)
    half = math.hypot(dw, w01)
    em = math.exp(mid)
    ch = math.cosh(half)
    sh = math.sinh(half) / half if half > 0.0 else 1.0
    return em * (ch + sh * dw), em * sh * w01, em * (ch - sh * dw)


@njit(cache=True, error_model="numpy")
def _congruence(a00, a01, a10, a11, m00, m01, m11):
    """Entries ``(00, 01, 11)`` of ``A M A^T`` for symmetric ``M``."""
    b00 = a00 * m00 + a01 * m01
    b01 = a00 * m01 + a01 * m11
    b10 = a10 * m00 + a11 * m01
    b11 = a10 * m01 + a11 * m11
    return (b00 * a00 + b01 * a01, b00 * a10 + b01 * a11, b10 * a10 + b11 * a11)


@njit(cache=True, error_model="numpy")
def _transport_by(e00, e01, e10, e11, w00, w01, w11):
    """``E W E^T`` for a general ``E`` (entries 00, 01, 11)."""
    return _congruence(e00, e01, e10, e11, w00, w01, w11)


@njit(cache=True, error_model="numpy")
def _whiten_chol(l00, l10, l11, m00, m01, m11):
    """Entries of ``L^{-1} M L^{-T}`` for the lower-triangular Cholesky factor ``L``."""
    w00 = m00 / (l00 * l00)
    w10 = (m01 / l00 - l10 * w00) / l11
    w11 = ((m11 - l10 * m01 / l00) / l11 - l10 * w10) / l11
    return w00, w10, w11


@njit(cache=True, error_model="numpy")
def _dist(c00, c10, c11, p00, p10, p11):
    """Affine-invariant distance between ``c`` and ``p`` (log-eigenvalues of
    ``L^{-1} p L^{-T}``, ``L L^T = c``)."""
    l00, l10, l11 = _cholesky(c00, c10, c11)
    w00, w10, w11 = _whiten_chol(l00, l10, l11, p00, p10, p11)
    mid = 0.5 * (w00 + w11)
    big = mid + math.copysign(math.hypot(0.5 * (w00 - w11), w10), mid)
    other = (w00 * w11 - w10 * w10) / big if big != 0.0 else 0.0
    if not (big > 0.0 and other > 0.0):
        return np.inf
    return math.hypot(math.log(big), math.log(other))


@njit(cache=True, error_model="numpy")
def _sqrtm_sym(s00, s01, s11):
    """Entries of the square root of a symmetric positive definite 2 x 2 matrix."""
    r = math.sqrt(max(s00 * s11 - s01 * s01, 0.0))
    d = math.sqrt(s00 + s11 + 2.0 * r)
    return (s00 + r) / d, s01 / d, (s11 + r) / d


@njit(cache=True, error_model="numpy")
def _transport_from(p_hat, z, v_hat):
    """Transport of ``v_hat`` from ``p_hat`` to ``z`` (flat matrices); returns entries."""
    l00, l10, l11 = _cholesky(p_hat[0], p_hat[2], p_hat[3])
    s00, s01, s11 = _whiten_chol(l00, l10, l11, z[0], z[2], z[3])
    h00, h01, h11 = _sqrtm_sym(s00, s01, s11)
    # E = L S^{1/2} L^{-1}; L^{-1} = [[1/l00, 0], [-l10/(l00 l11), 1/l11]]
    i00 = 1.0 / l00
    i10 = -l10 / (l00 * l11)
    i11 = 1.0 / l11
    m00 = l00 * h00
    m01 = l00 * h01
    m10 = l10 * h00 + l11 * h01
    m11 = l10 * h01 + l11 * h11
    e00 = m00 * i00 + m01 * i10
    e01 = m01 * i11
    e10 = m10 * i00 + m11 * i10
    e11 = m11 * i11
    return _transport_by(e00, e01, e10, e11, v_hat[0], v_hat[2], v_hat[3])


@njit(cache=True, error_model="numpy")
def _metric_norm(p00, p10, p11, v00, v10, v11):
    """``|v|_p = |L^{-1} v L^{-T}|_F``."""
    l00, l10, l11 = _cholesky(p00, p10, p11)
    w00, w10, w11 = _whiten_chol(l00, l10, l11, v00, v10, v11)
    return math.sqrt(w00 * w00 + 2.0 * w10 * w10 + w11 * w11)


@njit(cache=True, error_model="numpy")
def _finite(z):
    for j in range(z.shape[0]):
        if not np.isfinite(z[j]):
            return False
    return True


@njit(cache=True, error_model="numpy")
def log_density(kind, z, chain, t, resp, tau, sigma, max_norm, p_hat, v_hat, chains_p,
                chains_b, center, radius, hint):
    """The target log density at the state ``z`` (flat) of chain ``chain``.

    ``max_norm < 0``: no bound on the shooting vector; ``radius < 0``: no support ball (the
    footpoint's public ball, of the footpoint stage or of the joint target). ``hint`` is
    :func:`frame_norms`'.
    """
    if not _finite(z):
        return -np.inf
    if kind == FOOTPOINT:
        v00, v01, v11 = _transport_from(p_hat, z, v_hat)
        value = -frame_norms(z[0], z[2], z[3], v00, v01, v11, t, resp, tau, True,
                             False, hint)[0] / sigma
        if radius >= 0.0 and not _dist(z[0], z[2], z[3], center[0], center[2],
                                       center[3]) <= radius:
            return -np.inf
    elif kind == VECTOR:
        p = chains_p[chain]
        v00 = v01 = v11 = 0.0
        for a in range(z.shape[0]):
            v00 += z[a] * chains_b[chain, a, 0]
            v01 += z[a] * chains_b[chain, a, 2]
            v11 += z[a] * chains_b[chain, a, 3]
        value = -frame_norms(p[0], p[2], p[3], v00, v01, v11, t, resp, tau, False,
                             True, hint)[1] / sigma
        if max_norm >= 0.0 and not math.sqrt(_dot(z, z)) <= max_norm:
            return -np.inf
    else:
        # proj_tangent is the symmetric part
        v01 = 0.5 * (z[5] + z[6])
        norm_p, norm_v = frame_norms(z[0], z[2], z[3], z[4], v01, z[7], t, resp, tau, True,
                                     True, hint)
        norm = math.sqrt(norm_p ** 2 + norm_v ** 2)
        if radius >= 0.0 and not _dist(z[0], z[2], z[3], center[0], center[2],
                                       center[3]) <= radius:
            norm = np.inf
        if max_norm >= 0.0 and not _metric_norm(z[0], z[2], z[3], z[4], v01,
                                                z[7]) <= max_norm:
            norm = np.inf
        value = -norm / sigma
    if not np.isfinite(value):
        return -np.inf
    return value


@njit(cache=True, error_model="numpy")
def _dot(a, b):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * b[i]
    return s


@njit(cache=True, error_model="numpy")
def _symmetrized(g, part):
    """``(g00, (g01 + g10) / 2, g11)`` of one part of the Gaussians (``random_tangent``)."""
    return g[part, 0], 0.5 * (g[part, 1] + g[part, 2]), g[part, 3]


@njit(cache=True, error_model="numpy")
def propose(kind, x, g, radius, vector_scale, out, scratch):
    """The proposal from state ``x`` with Gaussians ``g`` (``(n_parts, 4)`` or ``(1, 3)``) and
    ball radius ``radius``, written into ``out``."""
    if kind == VECTOR:
        nv = math.sqrt(_dot(g[0], g[0]))
        scale = radius / nv if nv > 0.0 else 0.0
        for j in range(x.shape[0]):
            out[j] = x[j] + g[0, j] * scale
        return
    r00, r01, r10, r11 = _eigen_root(x[0], x[2], x[3])
    a00, a01, a11 = _symmetrized(g, 0)
    na2 = a00 * a00 + 2.0 * a01 * a01 + a11 * a11
    if kind == FOOTPOINT:
        nv = math.sqrt(na2)
        scale = radius / nv if nv > 0.0 else 0.0
        e00, e01, e11 = _expm_sym(a00, a01, a11, scale)
        y00, y01, y11 = _congruence(r00, r01, r10, r11, e00, e01, e11)
        out[0] = y00
        out[1] = y01
        out[2] = y01
        out[3] = y11
        return
    b00, b01, b11 = _symmetrized(g, 1)
    nv = math.sqrt(na2 + b00 * b00 + 2.0 * b01 * b01 + b11 * b11)
    scale = radius / nv if nv > 0.0 else 0.0
    e00, e01, e11 = _expm_sym(a00, a01, a11, scale)
    y00, y01, y11 = _congruence(r00, r01, r10, r11, e00, e01, e11)
    # tangent increment of the vector: A b A^T, then w = v + s scale A b A^T
    c00, c01, c11 = _congruence(r00, r01, r10, r11, b00, b01, b11)
    s = vector_scale * scale
    w00 = x[4] + s * c00
    w01 = 0.5 * (x[5] + x[6]) + s * c01
    w11 = x[7] + s * c11
    # E = A expm(scale a / 2) A^{-1}
    h00, h01, h11 = _expm_sym(a00, a01, a11, 0.5 * scale)
    det = r00 * r11 - r01 * r10
    i00 = r11 / det
    i01 = -r01 / det
    i10 = -r10 / det
    i11 = r00 / det
    m00 = r00 * h00 + r01 * h01
    m01 = r00 * h01 + r01 * h11
    m10 = r10 * h00 + r11 * h01
    m11 = r10 * h01 + r11 * h11
    v00, v01, v11 = _transport_by(m00 * i00 + m01 * i10, m00 * i01 + m01 * i11,
                                  m10 * i00 + m11 * i10, m10 * i01 + m11 * i11,
                                  w00, w01, w11)
    out[0] = y00
    out[1] = y01
    out[2] = y01
    out[3] = y11
    out[4] = v00
    out[5] = v01
    out[6] = v01
    out[7] = v11


@njit(cache=True, error_model="numpy")
def run_steps(kind, x, logp, uniforms, gaussians, j0, j1, step0, phase, labels, eta_state,
              adapt, target, log_cap, half, inv_dim, thin, burn_in, samples, log_values,
              accepted_total, t, resp, tau, sigma, max_norm, p_hat, v_hat, chains_p, chains_b,
              center, radius, vector_scale):
    """Steps ``j0 .. j1 - 1`` of the current block (see
    :func:`dpcore.sampling._sphere_numba.run_steps`, same loop and arguments up to the
    target's own)."""
    n, dim_state = x.shape
    proposal = np.empty(dim_state)
    g = np.empty((gaussians.shape[1], gaussians.shape[3]))
    scratch = np.empty(1)
    hint = np.zeros(1)
    stats = np.empty((3, eta_state.shape[1]))
    for j in range(j0, j1):
        start_step(eta_state, phase, adapt, stats)
        for c in range(n):
            radius_c = stats[0, labels[c]] * uniforms[j, 0, c] ** inv_dim
            for a in range(g.shape[0]):
                for b in range(g.shape[1]):
                    g[a, b] = gaussians[j - j0, a, c, b]
            propose(kind, x[c], g, radius_c, vector_scale, proposal, scratch)
            logq = log_density(kind, proposal, c, t, resp, tau, sigma[c], max_norm, p_hat,
                               v_hat, chains_p, chains_b, center, radius, hint)
            accept(c, x, logp, proposal, logq, uniforms[j, 1, c], labels[c], stats, phase,
                    accepted_total)
        finish_step(step0 + (j - j0), phase, adapt, eta_state, stats, n, target, log_cap,
                     half, thin, burn_in, x, logp, samples, log_values)


@njit(cache=True, error_model="numpy")
def evaluate(kind, x, t, resp, tau, sigma, max_norm, p_hat, v_hat, chains_p, chains_b, center,
             radius, out):
    """The log density of every chain's state (``sigma`` one per chain)."""
    hint = np.zeros(1)
    for c in range(x.shape[0]):
        out[c] = log_density(kind, x[c], c, t, resp, tau, sigma[c], max_norm, p_hat, v_hat,
                             chains_p, chains_b, center, radius, hint)
