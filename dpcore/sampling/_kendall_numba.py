r"""numba kernels of the fused Metropolis-Hastings chain for geodesic regression on
``KendallShape(k)`` (planar shapes, CP^{k-2}).

Imported only by :mod:`dpcore.sampling._compiled_regression` when the compiled path runs.
Every function follows the numpy code it replaces formula for formula, so that both paths give
the same chains up to floating-point rounding:

- the regression gradients: :func:`dpcore.learning.kernels.kendall.kendall_regression_gradient`
  (Hermitian products ``P_i = <p, y_i>`` and ``U_i = <u, y_i>``, Procrustes alignment by the
  phase of ``c_i``, transport back along the horizontal great circle, Jacobi factors of
  curvature 4 on ``i u`` and 1 on the rest); at ``|v| = 0``, where the numpy kernel hands over
  to the generic path, the same sums with their ``|v| -> 0`` limits (``u`` drops out);
- the manifold's maps (:class:`~dpcore.manifolds.KendallShape`): the horizontal projection
  of ``random_tangent``, ``exp`` on the preshape sphere and the closed-form ``transport``
  (alignment of the end point by the phase of the Hermitian product);
- the proposals of ``_Stepper.propose`` (:mod:`dpcore.sampling.mcmc`) on the shape space, its
  tangent bundle walk and the vector stage's coordinates.

A preshape ``(k, 2)`` is stored flat, ``(x_0, y_0, x_1, y_1, ...)``; landmark j is the complex
number ``x_j + i y_j``. The random numbers are not drawn here.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ._chain_numba import accept, finish_step, start_step

#: Kinds of target (as :mod:`dpcore.sampling._sphere_numba`).
FOOTPOINT, VECTOR, JOINT = 0, 1, 2
#: ``dpcore.manifolds.kendall.CUT_TOL`` and the kernel's ``_CUT_DIST``.
_CUT_TOL = 1e-8
_CUT_DIST = math.pi / 2 - 1e-7


@njit(cache=True, error_model="numpy")
def _herm(a, b):
    """Hermitian product ``sum_j conj(a_j) b_j`` as ``(re, im)``."""
    re = 0.0
    im = 0.0
    for j in range(0, a.shape[0], 2):
        re += a[j] * b[j] + a[j + 1] * b[j + 1]
        im += a[j] * b[j + 1] - a[j + 1] * b[j]
    return re, im


@njit(cache=True, error_model="numpy")
def _dot(a, b):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * b[i]
    return s


@njit(cache=True, error_model="numpy")
def _sums(p, u, nv, t, y, ysq, tau, zero_cut, acc):
    """One pass over the data: ``acc`` (8, 2k) receives the footpoint weights' sums
    ``W_re, W_im`` (rows 0, 1) and the vector's (rows 2, 3); returns ``(A_p, B_p, A_v, B_v,
    cut)`` with ``cut`` whether some response is orthogonal to its prediction. Residuals at
    the cut locus count as 0 when ``zero_cut`` (the clipped convention)."""
    k2 = p.shape[0]
    for r in range(4):
        for j in range(k2):
            acc[r, j] = 0.0
    a_p = b_p = a_v = b_v = 0.0
    cut = False
    flat = not nv > 1e-12
    for i in range(t.shape[0]):
        yi = y[i]
        p_re = p_im = u_re = u_im = 0.0
        for j in range(0, k2, 2):
            y0 = yi[j]
            y1 = yi[j + 1]
            p_re += p[j] * y0 + p[j + 1] * y1
            p_im += p[j] * y1 - p[j + 1] * y0
            u_re += u[j] * y0 + u[j + 1] * y1
            u_im += u[j] * y1 - u[j + 1] * y0
        if flat:
            cr = 1.0
            sr = 0.0
            sv = t[i]
        else:
            h = math.tan(0.5 * nv * t[i])
            cr = 2.0 / (h * h + 1.0)
            sr = h * cr
            cr -= 1.0
            sv = sr / nv
        c_re = cr * p_re + sr * u_re
        c_im = cr * p_im + sr * u_im
        e_re = cr * u_re - sr * p_re
        e_im = cr * u_im - sr * p_im
        mod2 = c_re * c_re + c_im * c_im
        sm = math.sqrt(max(ysq[i] - mod2, 0.0) * mod2)
        sm = max(sm, 1e-300)
        theta = math.atan2(sm, mod2)
        if mod2 < _CUT_TOL * _CUT_TOL:
            cut = True
        if tau >= 0.0:
            theta = min(theta, tau)
        g = theta / sm
        if zero_cut and math.atan2(sm, mod2) >= _CUT_DIST:
            g = 0.0
        c_re *= g
        c_im *= g
        a = c_re * e_re + c_im * e_im
        b = c_re * e_im - c_im * e_re
        a_p += a
        b_p += (2.0 * cr * cr - 1.0) * b
        a_v += t[i] * a
        b_v += cr * sv * b
        wp_re = cr * c_re
        wp_im = cr * c_im
        wv_re = sv * c_re
        wv_im = sv * c_im
        for j in range(k2):
            yj = yi[j]
            acc[0, j] += wp_re * yj
            acc[1, j] += wp_im * yj
            acc[2, j] += wv_re * yj
            acc[3, j] += wv_im * yj
    return a_p, b_p, a_v, b_v, cut


#: Taylor coefficients of sin(x) (x^1 .. x^21) and cos(x) (x^0 .. x^22), remainders below
#: 3e-18 for |x| <= 1.6, and of asin(s) / s in s^2 (remainder below 2e-18 for s < 1/4), as
#: :mod:`dpcore.sampling._sphere_numba`.
_SIN = tuple((-1) ** k / math.factorial(2 * k + 1) for k in range(11))
_COS = tuple((-1) ** k / math.factorial(2 * k) for k in range(12))
_ASIN_RATIO = tuple(math.comb(2 * k, k) / 4**k / (2 * k + 1) for k in range(14))


@njit(cache=True, fastmath={"reassoc", "contract"}, error_model="numpy")
def _fast_sums(p, u, nv, t, yt, ysq, tau, rows, acc):
    """:func:`_sums` for ``|v| > 0`` as loops without branches or library calls, which the
    compiler vectorizes: the Hermitian products and the weighted sums run over the data one
    coordinate at a time (``yt`` is ``y`` transposed, ``rows`` a ``(4, n)`` work array); cos
    and sin of ``rho`` come from Taylor polynomials of ``rho / 2`` and the double-angle
    formulas, ``theta / s`` from the series of ``asin(s) / s``. Returns ``(bad, A_p, B_p,
    A_v, B_v)``; ``bad`` is True when some term is outside the polynomials' ranges
    (``rho > 3.2``, an unclipped residual of angle above 0.25 rad, or a response at the cut
    locus), and the caller then uses :func:`_sums`.
    """
    n = t.shape[0]
    k2 = p.shape[0]
    p_re = rows[0]
    p_im = rows[1]
    u_re = rows[2]
    u_im = rows[3]
    for i in range(n):
        p_re[i] = 0.0
        p_im[i] = 0.0
        u_re[i] = 0.0
        u_im[i] = 0.0
    for j in range(0, k2, 2):
        px = p[j]
        py = p[j + 1]
        ux = u[j]
        uy = u[j + 1]
        y0 = yt[j]
        y1 = yt[j + 1]
        for i in range(n):
            p_re[i] += px * y0[i] + py * y1[i]
            p_im[i] += px * y1[i] - py * y0[i]
            u_re[i] += ux * y0[i] + uy * y1[i]
            u_im[i] += ux * y1[i] - uy * y0[i]
    cos2_tau = math.cos(tau) ** 2 if 0.0 <= tau < 0.5 * math.pi else -2.0
    half = 0.5 * nv
    inv_nv = 1.0 / nv
    a_p = b_p = a_v = b_v = 0.0
    bad = False
    for i in range(n):
        ti = t[i]
        x = half * ti
        x2 = x * x
        sh = _SIN[10]
        for j in range(9, -1, -1):
            sh = sh * x2 + _SIN[j]
        sh *= x
        ch = _COS[11]
        for j in range(10, -1, -1):
            ch = ch * x2 + _COS[j]
        sr = 2.0 * sh * ch
        cr = ch * ch - sh * sh
        c_re = cr * p_re[i] + sr * u_re[i]
        c_im = cr * p_im[i] + sr * u_im[i]
        e_re = cr * u_re[i] - sr * p_re[i]
        e_im = cr * u_im[i] - sr * p_im[i]
        mod2 = c_re * c_re + c_im * c_im
        r2 = ysq[i]
        s2 = max(r2 - mod2, 0.0)
        sm = math.sqrt(s2 * mod2)
        rel2 = s2 / r2
        ratio = _ASIN_RATIO[13]
        for j in range(12, -1, -1):
            ratio = ratio * rel2 + _ASIN_RATIO[j]
        clipped = mod2 < cos2_tau * r2
        small = (not clipped) & (rel2 < 0.0625)
        bad |= x > 1.6
        bad |= not (clipped or small)
        bad |= mod2 < 1e-16
        # theta = asin(s / r): theta / (s |c|) = ratio / (r |c|)
        g = tau / sm if clipped else ratio / math.sqrt(r2 * mod2)
        c_re *= g
        c_im *= g
        a = c_re * e_re + c_im * e_im
        b = c_re * e_im - c_im * e_re
        a_p += a
        b_p += (2.0 * cr * cr - 1.0) * b
        a_v += ti * a
        b_v += cr * sr * b
        p_re[i] = cr * c_re
        p_im[i] = cr * c_im
        u_re[i] = sr * c_re * inv_nv
        u_im[i] = sr * c_im * inv_nv
    for j in range(k2):
        yj = yt[j]
        s0 = s1 = s2_ = s3 = 0.0
        for i in range(n):
            s0 += p_re[i] * yj[i]
            s1 += p_im[i] * yj[i]
            s2_ += u_re[i] * yj[i]
            s3 += u_im[i] * yj[i]
        acc[0, j] = s0
        acc[1, j] = s1
        acc[2, j] = s2_
        acc[3, j] = s3
    return bad, a_p, b_p, a_v, b_v * inv_nv


@njit(cache=True, error_model="numpy")
def _assembled_norm(p, u, w_re, w_im, along_u, along_iu, n, big_w):
    """Norm of ``(<p, W> p + <ip, W> ip + (<u, W> - A) u + (<iu, W> - B) iu - W) / n`` with
    ``W = w_re - i w_im``."""
    k2 = p.shape[0]
    for j in range(0, k2, 2):
        big_w[j] = w_re[j] + w_im[j + 1]
        big_w[j + 1] = w_re[j + 1] - w_im[j]
    cp, cip = _herm(p, big_w)
    cu, ciu = _herm(u, big_w)
    cu -= along_u
    ciu -= along_iu
    total = 0.0
    for j in range(0, k2, 2):
        # i q = (-q_y, q_x)
        o0 = cp * p[j] - cip * p[j + 1] + cu * u[j] - ciu * u[j + 1] - big_w[j]
        o1 = cp * p[j + 1] + cip * p[j] + cu * u[j + 1] + ciu * u[j] - big_w[j + 1]
        total += o0 * o0 + o1 * o1
    return math.sqrt(total) / n


@njit(cache=True, error_model="numpy")
def gradient_norms(p, v, t, y, yt, ysq, tau, work, rows):
    """Norms of the footpoint and vector gradients at ``(p, v)``; ``(-1, -1)`` when a
    response is orthogonal to its prediction and ``tau < 0`` (the numpy kernel's
    CutLocusError). ``work`` is a ``(6, 2k)`` work array, ``rows`` a ``(4, n)`` one."""
    nv = math.sqrt(_dot(v, v))
    u = work[4]
    for j in range(p.shape[0]):
        u[j] = v[j] / nv if nv > 1e-12 else 0.0
    acc = work[:4]
    bad = True
    if nv > 1e-12:
        bad, a_p, b_p, a_v, b_v = _fast_sums(p, u, nv, t, yt, ysq, tau, rows, acc)
    if bad:
        a_p, b_p, a_v, b_v, cut = _sums(p, u, nv, t, y, ysq, tau, False, acc)
        if cut:
            if tau < 0.0:
                return -1.0, -1.0
            a_p, b_p, a_v, b_v, cut = _sums(p, u, nv, t, y, ysq, tau, True, acc)
    n = t.shape[0]
    norm_p = _assembled_norm(p, u, acc[0], acc[1], a_p, b_p, n, work[5])
    norm_v = _assembled_norm(p, u, acc[2], acc[3], a_v, b_v, n, work[5])
    return norm_p, norm_v


@njit(cache=True, error_model="numpy")
def _project(x, g, out):
    """``proj_tangent(x, g)``: centre ``g``, then remove ``<x, g>_C x``."""
    k2 = x.shape[0]
    m0 = 0.0
    m1 = 0.0
    for j in range(0, k2, 2):
        m0 += g[j]
        m1 += g[j + 1]
    m0 /= k2 // 2
    m1 /= k2 // 2
    for j in range(0, k2, 2):
        out[j] = g[j] - m0
        out[j + 1] = g[j + 1] - m1
    re, im = _herm(x, out)
    for j in range(0, k2, 2):
        x0 = x[j]
        x1 = x[j + 1]
        out[j] -= re * x0 - im * x1
        out[j + 1] -= re * x1 + im * x0


@njit(cache=True, error_model="numpy")
def _exp(x, v, out):
    """``cos|v| x + sinc|v| v``."""
    nv = math.sqrt(_dot(v, v))
    c = math.cos(nv)
    s = math.sin(nv) / nv if nv != 0.0 else 1.0
    for j in range(x.shape[0]):
        out[j] = c * x[j] + s * v[j]


@njit(cache=True, error_model="numpy")
def _transport(x, y, v, out, unit):
    """Transport of ``v`` from ``x`` to the representative ``y``; False at the cut locus.
    ``unit`` is a work array."""
    k2 = x.shape[0]
    c_re, c_im = _herm(x, y)
    mod = math.hypot(c_re, c_im)
    if mod < _CUT_TOL:
        return False
    ph_re = c_re / mod if mod > 0 else 1.0
    ph_im = c_im / mod if mod > 0 else 0.0
    for j in range(0, k2, 2):
        # y conj(phase) - mod x
        unit[j] = y[j] * ph_re + y[j + 1] * ph_im - mod * x[j]
        unit[j + 1] = y[j + 1] * ph_re - y[j] * ph_im - mod * x[j + 1]
    s = math.sqrt(_dot(unit, unit))
    safe = s if s > 0 else 1.0
    for j in range(k2):
        unit[j] /= safe
    theta = math.atan2(s, mod)
    st = math.sin(theta)
    ct = math.cos(theta)
    a = _dot(unit, v)
    b = 0.0
    for j in range(0, k2, 2):  # Re <i unit, v>
        b += -unit[j + 1] * v[j] + unit[j] * v[j + 1]
    for j in range(0, k2, 2):
        e0 = -st * x[j] + ct * unit[j]
        e1 = -st * x[j + 1] + ct * unit[j + 1]
        # a e + b i e + (v - a unit - b i unit)
        o0 = a * e0 - b * e1 + v[j] - a * unit[j] + b * unit[j + 1]
        o1 = a * e1 + b * e0 + v[j + 1] - a * unit[j + 1] - b * unit[j]
        out[j] = o0 * ph_re - o1 * ph_im
        out[j + 1] = o0 * ph_im + o1 * ph_re
    return True


@njit(cache=True, error_model="numpy")
def _finite(z):
    for j in range(z.shape[0]):
        if not np.isfinite(z[j]):
            return False
    return True


@njit(cache=True, error_model="numpy")
def log_density(kind, z, chain, t, y, yt, ysq, tau, sigma, max_norm, p_hat, v_hat, chains_p,
                chains_b, center, radius, scratch, rows):
    """The target log density at the state ``z`` (flat) of chain ``chain``; ``scratch`` is a
    ``(9, 2k)`` work array, ``rows`` a ``(4, n)`` one (``center`` and ``radius`` are unused:
    no ball here)."""
    if not _finite(z):
        return -np.inf
    k2 = y.shape[1]
    v = scratch[6]
    work = scratch[:6]
    if kind == FOOTPOINT:
        if not _transport(p_hat, z, v_hat, v, scratch[7]):
            return -np.inf
        norm_p, _ = gradient_norms(z, v, t, y, yt, ysq, tau, work, rows)
        if norm_p < 0.0:
            return -np.inf
        value = -norm_p / sigma
    elif kind == VECTOR:
        p = chains_p[chain]
        for j in range(k2):
            v[j] = 0.0
        for a in range(z.shape[0]):
            for j in range(k2):
                v[j] += z[a] * chains_b[chain, a, j]
        _, norm_v = gradient_norms(p, v, t, y, yt, ysq, tau, work, rows)
        if norm_v < 0.0:
            return -np.inf
        value = -norm_v / sigma
        if max_norm >= 0.0 and not math.sqrt(_dot(z, z)) <= max_norm:
            return -np.inf
    else:
        p = z[:k2]
        _project(p, z[k2:], v)
        norm_p, norm_v = gradient_norms(p, v, t, y, yt, ysq, tau, work, rows)
        if norm_p < 0.0:
            return -np.inf
        norm = math.sqrt(norm_p ** 2 + norm_v ** 2)
        if max_norm >= 0.0 and not math.sqrt(max(_dot(v, v), 0.0)) <= max_norm:
            norm = np.inf
        value = -norm / sigma
    if not np.isfinite(value):
        return -np.inf
    return value


@njit(cache=True, error_model="numpy")
def propose(kind, x, g, radius, vector_scale, out, scratch):
    """The proposal from state ``x`` with Gaussians ``g`` (``(n_parts, 2k)`` or ``(1, dim)``)
    and ball radius ``radius``, written into ``out``; ``scratch`` is a ``(5, 2k)`` array."""
    if kind == VECTOR:
        nv = math.sqrt(_dot(g[0], g[0]))
        scale = radius / nv if nv > 0.0 else 0.0
        for j in range(x.shape[0]):
            out[j] = x[j] + g[0, j] * scale
        return
    k2 = g.shape[1]
    p = x[:k2]
    a = scratch[0]
    _project(p, g[0], a)
    if kind == FOOTPOINT:
        nv = math.sqrt(max(_dot(a, a), 0.0))
        scale = radius / nv if nv > 0.0 else 0.0
        for j in range(k2):
            a[j] *= scale
        _exp(p, a, out)
        return
    b = scratch[1]
    _project(p, g[1], b)
    nv = math.sqrt(max(_dot(a, a) + _dot(b, b), 0.0))
    scale = radius / nv if nv > 0.0 else 0.0
    w = scratch[2]
    for j in range(k2):
        a[j] *= scale
        w[j] = x[k2 + j] + vector_scale * (b[j] * scale)
    p_new = out[:k2]
    _exp(p, a, p_new)
    v_new = scratch[3]
    if not _transport(p, p_new, w, v_new, scratch[4]):
        for j in range(k2):
            v_new[j] = np.nan
    for j in range(k2):
        out[k2 + j] = v_new[j]


@njit(cache=True, error_model="numpy")
def run_steps(kind, x, logp, uniforms, gaussians, j0, j1, step0, phase, labels, eta_state,
              adapt, target, log_cap, half, inv_dim, thin, burn_in, samples, log_values,
              accepted_total, t, y, yt, ysq, tau, sigma, max_norm, p_hat, v_hat, chains_p,
              chains_b, center, radius, vector_scale):
    """Steps ``j0 .. j1 - 1`` of the current block (see
    :func:`dpcore.sampling._sphere_numba.run_steps`, same loop and arguments up to the
    target's own)."""
    n, dim_state = x.shape
    k2 = y.shape[1]
    proposal = np.empty(dim_state)
    g = np.empty((gaussians.shape[1], gaussians.shape[3]))
    scratch = np.empty((9, k2))
    rows = np.empty((4, t.shape[0]))
    prop_scratch = np.empty((5, k2))
    stats = np.empty((3, eta_state.shape[1]))
    for j in range(j0, j1):
        start_step(eta_state, phase, adapt, stats)
        for c in range(n):
            radius_c = stats[0, labels[c]] * uniforms[j, 0, c] ** inv_dim
            for a in range(g.shape[0]):
                for b in range(g.shape[1]):
                    g[a, b] = gaussians[j - j0, a, c, b]
            propose(kind, x[c], g, radius_c, vector_scale, proposal, prop_scratch)
            logq = log_density(kind, proposal, c, t, y, yt, ysq, tau, sigma[c], max_norm, p_hat,
                               v_hat, chains_p, chains_b, center, radius, scratch, rows)
            accept(c, x, logp, proposal, logq, uniforms[j, 1, c], labels[c], stats, phase,
                   accepted_total)
        finish_step(step0 + (j - j0), phase, adapt, eta_state, stats, n, target, log_cap,
                    half, thin, burn_in, x, logp, samples, log_values)


@njit(cache=True, error_model="numpy")
def evaluate(kind, x, t, y, yt, ysq, tau, sigma, max_norm, p_hat, v_hat, chains_p, chains_b,
             center, radius, out):
    """The log density of every chain's state (``sigma`` one per chain)."""
    scratch = np.empty((9, y.shape[1]))
    rows = np.empty((4, t.shape[0]))
    for c in range(x.shape[0]):
        out[c] = log_density(kind, x[c], c, t, y, yt, ysq, tau, sigma[c], max_norm, p_hat,
                             v_hat, chains_p, chains_b, center, radius, scratch, rows)


@njit(cache=True, error_model="numpy")
def mean_squared_distances(p, v, t, y, out):
    """Mean over the data of :math:`d(\\mathrm{Exp}_p(t_i v), y_i)^2` for each row of ``p``
    and ``v`` (flat preshapes ``(m, 2k)``): the library's ``exp`` (``cos|tv| p + sinc|tv| tv``)
    and ``dist`` (``atan2(s, |c|)`` of the aligned response) written out per landmark, as
    :meth:`~dpcore.manifolds.KendallShape._scalar_parts`."""
    m, k2 = p.shape
    n = t.shape[0]
    pred = np.empty(k2)
    for a in range(m):
        nv = math.sqrt(_dot(v[a], v[a]))
        total = 0.0
        for i in range(n):
            length = abs(t[i]) * nv
            c = math.cos(length)
            s = math.sin(length) / length if length > 0.0 else 1.0
            for j in range(k2):
                pred[j] = c * p[a, j] + s * t[i] * v[a, j]
            re, im = _herm(pred, y[i])
            mod = math.hypot(re, im)
            ca, cb = (re / mod, im / mod) if mod > 0.0 else (1.0, 0.0)
            ss = 0.0
            for j in range(0, k2, 2):
                u0 = ca * y[i, j] + cb * y[i, j + 1] - mod * pred[j]
                u1 = ca * y[i, j + 1] - cb * y[i, j] - mod * pred[j + 1]
                ss += u0 * u0 + u1 * u1
            d = math.atan2(math.sqrt(ss), mod)
            total += d * d
        out[a] = total / n
