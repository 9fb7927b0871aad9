r"""numba kernels of the fused Metropolis-Hastings chain for geodesic regression on S^d.

Imported only by :mod:`dpcore.sampling._compiled_sphere` when the compiled path runs (numba is
heavy to import). Every function mirrors, operation for operation, the numpy code it replaces,
so that both paths give the same chains up to floating-point rounding:

- the regression gradients: :func:`dpcore.learning.kernels.sphere.sphere_regression_gradient`
  (paper 002 eqs. 5-8, 15, 40);
- the proposals: ``_Stepper.propose`` of :mod:`dpcore.sampling.mcmc` on ``Sphere``
  (``exp_x`` of a tangent Gaussian rescaled into the ball of radius eta), on ``Euclidean``
  (the linear proposal) and on :class:`~dpcore.mechanisms.bundle.TangentBundleWalk`
  (footpoint move plus parallel transport of the shifted vector);
- the Metropolis acceptance and the single-group Robbins-Monro burn-in of
  ``_Stepper.step`` and ``_burn_in``.

The random numbers are not drawn here: the caller passes the uniforms and Gaussians it drew
from the run's numpy Generator in the order the numpy path draws them.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

#: Kinds of target (see :class:`dpcore.sampling._compiled_sphere.SphereRegressionTarget`).
FOOTPOINT, VECTOR, JOINT = 0, 1, 2
#: Angle beyond which a response is treated as antipodal to its prediction (sphere.CUT_TOL).
_CUT_ANGLE = math.pi - 1e-8
#: Robbins-Monro gain, as ``mcmc._GAIN``.
_GAIN = 3.0


@njit(cache=True)
def _dot(a, b):
    s = a[0] * b[0]
    for i in range(1, a.shape[0]):
        s += a[i] * b[i]
    return s


@njit(cache=True)
def regression_gradients(p, v, t, y, yt, tau, gp, gv, work):
    """Clipped regression gradients at ``(p, v)`` written into ``gp``, ``gv``.

    ``tau < 0`` means no clipping; then a response antipodal to its prediction makes the
    gradient undefined and the function returns False (the numpy path's CutLocusError).
    ``yt`` is ``y`` transposed (contiguous rows per coordinate); ``work`` is a ``(3, k)``
    work array. On S^2 the vectorized :func:`_weighted_sums_s2` does the work unless it hands
    a case over to the loop below.
    """
    k = p.shape[0]
    n = t.shape[0]
    nv = math.sqrt(_dot(v, v))
    if k == 3 and nv > 0.0:
        u = work[0]
        for j in range(3):
            u[j] = v[j] / nv
        bad, wp0, wp1, wp2, wv0, wv1, wv2, par_p, par_v = _weighted_sums_s2(
            p, u[0], u[1], u[2], nv, t, yt[0], yt[1], yt[2], tau)
        if not bad:
            wp = work[1]
            wv = work[2]
            wp[0], wp[1], wp[2] = wp0, wp1, wp2
            wv[0], wv[1], wv[2] = wv0 / nv, wv1 / nv, wv2 / nv
            _assemble(p, u, wp, par_p, n, gp)
            _assemble(p, u, wv, par_v, n, gv)
            return True
    u = work[0]
    u[:] = 0.0
    if nv > 0.0:
        for j in range(k):
            u[j] = v[j] / nv
    wp = work[1]
    wv = work[2]
    wp[:] = 0.0
    wv[:] = 0.0
    par_p = 0.0
    par_v = 0.0
    # theta >= tau iff c <= cos(tau): a clipped residual needs no arctan2 (f = tau / s), unless
    # s is tiny and the response may sit at the cut locus (decided by arctan2 as in numpy)
    cos_tau = math.cos(tau) if 0.0 <= tau < math.pi else -2.0
    for i in range(n):
        yi = y[i]
        big_p = _dot(p, yi)
        big_u = _dot(u, yi)
        if nv > 0.0:
            # cos and sin of rho = t |v| from h = tan(rho / 2), as the numpy kernel does
            h = math.tan(0.5 * nv * t[i])
            cr = 2.0 / (h * h + 1.0)
            sr = h * cr
            cr -= 1.0
        else:
            cr = 1.0
            sr = 0.0
        c = cr * big_p + sr * big_u
        ye = cr * big_u - sr * big_p
        s = math.sqrt(max(1.0 - c * c, 0.0))
        if c < cos_tau and s > 2e-8:
            f = tau / s
        elif c >= cos_tau and c > 0.0 and 0.0 < s < 0.25:  # unclipped, theta < 0.26
            f = _asin_ratio(s * s)
        else:
            f = _weight(s, c, tau)
            if f < 0.0:
                return False
        par_p += f * ye
        par_v += f * ye * t[i]
        # footpoint weight f cos(rho); vector weight f sin(rho) / |v| (t f as |v| -> 0)
        a = cr * f
        b = sr * f if nv > 0.0 else t[i] * f
        for j in range(k):
            wp[j] += a * yi[j]
            wv[j] += b * yi[j]
    if nv > 0.0:
        for j in range(k):
            wv[j] /= nv
    _assemble(p, u, wp, par_p, n, gp)
    _assemble(p, u, wv, par_v, n, gv)
    return True


#: Taylor coefficients of asin(s) / s in s^2: binom(2k, k) / (4^k (2k + 1)), k = 0 .. 13; the
#: remainder is below 2e-18 (relative) for s < 0.25.
_ASIN_RATIO = tuple(math.comb(2 * k, k) / 4**k / (2 * k + 1) for k in range(14))


#: Taylor coefficients of sin(x) (x^1 .. x^21) and cos(x) (x^0 .. x^22): remainders below
#: 3e-18 for |x| <= 1.6.
_SIN = tuple((-1) ** k / math.factorial(2 * k + 1) for k in range(11))
_COS = tuple((-1) ** k / math.factorial(2 * k) for k in range(12))


@njit(cache=True, fastmath={"reassoc", "contract"})
def _weighted_sums_s2(p, u0, u1, u2, nv, t, y0, y1, y2, tau):
    """The weighted sums of :func:`regression_gradients` on S^2 (``|v| > 0``), as one loop
    without branches or library calls, which the compiler vectorizes.

    cos and sin of rho = t|v| come from Taylor polynomials of rho / 2 and the double-angle
    formulas, theta / sin(theta) from :data:`_ASIN_RATIO`. Returns ``(bad, W_p (3),
    W_v * |v| (3), w_par_p, w_par_v)``; ``bad`` is 1 when some term is outside the
    polynomials' ranges (rho > 3.2, or an unclipped residual of angle above 0.25 rad), and the
    caller then uses the scalar loop. Summation order is left to the compiler (``reassoc``):
    the sums agree with the scalar loop up to rounding.
    """
    cos_tau = math.cos(tau) if 0.0 <= tau < math.pi else -2.0
    p0 = p[0]
    p1 = p[1]
    p2 = p[2]
    wp0 = wp1 = wp2 = wv0 = wv1 = wv2 = par_p = par_v = 0.0
    bad = False
    half = 0.5 * nv
    for i in range(t.shape[0]):
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
        yi0 = y0[i]
        yi1 = y1[i]
        yi2 = y2[i]
        big_p = p0 * yi0 + p1 * yi1 + p2 * yi2
        big_u = u0 * yi0 + u1 * yi1 + u2 * yi2
        c = cr * big_p + sr * big_u
        ye = cr * big_u - sr * big_p
        s = math.sqrt(max(1.0 - c * c, 0.0))
        s2 = s * s
        ratio = _ASIN_RATIO[13]
        for j in range(12, -1, -1):
            ratio = ratio * s2 + _ASIN_RATIO[j]
        clipped = (c < cos_tau) & (s > 2e-8)
        small = (c >= cos_tau) & (c > 0.0) & (s < 0.25) & (s > 0.0)
        bad |= x > 1.6
        bad |= not (clipped or small)
        f = tau / s if clipped else ratio
        fy = f * ye
        par_p += fy
        par_v += fy * ti
        a = cr * f
        b = sr * f
        wp0 += a * yi0
        wp1 += a * yi1
        wp2 += a * yi2
        wv0 += b * yi0
        wv1 += b * yi1
        wv2 += b * yi2
    return bad, wp0, wp1, wp2, wv0, wv1, wv2, par_p, par_v


@njit(cache=True)
def _asin_ratio(s2):
    """``theta / sin(theta)`` for ``sin(theta)^2 = s2 < 1/16`` and ``cos(theta) > 0``."""
    out = _ASIN_RATIO[13]
    for j in range(12, -1, -1):
        out = out * s2 + _ASIN_RATIO[j]
    return out


@njit(cache=True)
def _weight(s, c, tau):
    """``min(theta, tau) / sin(theta)`` with ``theta = arctan2(s, c)``: 0 at the cut locus
    when clipping (``tau >= 0``), -1 there without clipping (the gradient is undefined)."""
    theta = math.atan2(s, c)
    if theta > _CUT_ANGLE:
        return 0.0 if tau >= 0.0 else -1.0
    if tau >= 0.0:
        theta = min(theta, tau)
    return theta / max(s, 1e-300)


@njit(cache=True)
def _assemble(p, u, w, w_par, n, out):
    """``(<p, W> p + (<u, W> - w_par) u - W) / n``."""
    along_p = _dot(p, w)
    along_u = _dot(u, w) - w_par
    for j in range(p.shape[0]):
        out[j] = (along_p * p[j] + along_u * u[j] - w[j]) / n


@njit(cache=True)
def _norm(a):
    return math.sqrt(max(_dot(a, a), 0.0))


@njit(cache=True)
def _transport(x, y, v, out, u):
    """Parallel transport of ``v`` from ``x`` to ``y`` along the great circle; False at the
    cut locus. ``u`` is a work array."""
    k = x.shape[0]
    c = _dot(x, y)
    for j in range(k):
        u[j] = y[j] - c * x[j]
    s = math.sqrt(_dot(u, u))
    theta = math.atan2(s, c)
    if math.pi - theta < 1e-8:
        return False
    d = s if s > 0.0 else 1.0
    for j in range(k):
        u[j] /= d
    st = math.sin(theta)
    ct = math.cos(theta)
    along = _dot(u, v)
    for j in range(k):
        out[j] = v[j] + along * ((-st * x[j] + ct * u[j]) - u[j])
    return True


@njit(cache=True)
def _finite(z):
    for j in range(z.shape[0]):
        if not np.isfinite(z[j]):
            return False
    return True


@njit(cache=True)
def log_density(kind, z, chain, t, y, yt, tau, sigma, max_norm, p_hat, v_hat, chains_p,
                chains_b, scratch):
    """The target log density at the state ``z`` of chain ``chain`` (flat coordinates).

    ``max_norm < 0`` means no bound on the shooting vector. ``scratch`` is a work array of
    shape ``(7, k)``.
    """
    if not _finite(z):
        return -np.inf
    k = y.shape[1]
    gp = scratch[0]
    gv = scratch[1]
    if kind == FOOTPOINT:
        v = scratch[2]
        if not _transport(p_hat, z, v_hat, v, scratch[3]):
            return -np.inf
        if not regression_gradients(z, v, t, y, yt, tau, gp, gv, scratch[4:]):
            return -np.inf
        value = -_norm(gp) / sigma
    elif kind == VECTOR:
        p = chains_p[chain]
        v = scratch[2]
        for j in range(k):
            v[j] = z[0] * chains_b[chain, 0, j]
            for a in range(1, z.shape[0]):
                v[j] += z[a] * chains_b[chain, a, j]
        if not regression_gradients(p, v, t, y, yt, tau, gp, gv, scratch[4:]):
            return -np.inf
        value = -_norm(gv) / sigma
        if max_norm >= 0.0 and not math.sqrt(_dot(z, z)) <= max_norm:
            return -np.inf
    else:
        p = z[:k]
        v = scratch[2]
        along = _dot(p, z[k:])
        for j in range(k):
            v[j] = z[k + j] - along * p[j]
        if not regression_gradients(p, v, t, y, yt, tau, gp, gv, scratch[4:]):
            return -np.inf
        norm_p = _norm(gp)
        norm_v = _norm(gv)
        norm = math.sqrt(norm_p ** 2 + norm_v ** 2)
        if max_norm >= 0.0 and not _norm(v) <= max_norm:
            norm = np.inf
        value = -norm / sigma
    if not np.isfinite(value):
        return -np.inf
    return value


@njit(cache=True)
def _sphere_exp(x, v, out):
    nv = math.sqrt(_dot(v, v))
    c = math.cos(nv)
    s = math.sin(nv) / nv if nv != 0.0 else 1.0
    for j in range(x.shape[0]):
        out[j] = c * x[j] + s * v[j]


@njit(cache=True)
def _propose(kind, x, g, radius, vector_scale, out, scratch):
    """The proposal from state ``x`` with Gaussian draws ``g`` (shape ``(n_parts, k)``) and
    ball radius ``radius``, written into ``out``."""
    if kind == VECTOR:  # linear: the Gaussian in the ambient (orthonormal) coordinates
        nv = math.sqrt(_dot(g[0], g[0]))
        scale = radius / nv if nv > 0.0 else 0.0
        for j in range(x.shape[0]):
            out[j] = x[j] + g[0, j] * scale
        return
    k = g.shape[1]
    a = scratch[0]
    p = x[:k]
    along = _dot(p, g[0])
    for j in range(k):
        a[j] = g[0, j] - along * p[j]
    if kind == FOOTPOINT:
        nv = math.sqrt(max(_dot(a, a), 0.0))
        scale = radius / nv if nv > 0.0 else 0.0
        for j in range(k):
            a[j] = a[j] * scale
        _sphere_exp(p, a, out)
        return
    b = scratch[1]
    along = _dot(p, g[1])
    for j in range(k):
        b[j] = g[1, j] - along * p[j]
    nv = math.sqrt(max(_dot(a, a) + _dot(b, b), 0.0))
    scale = radius / nv if nv > 0.0 else 0.0
    w = scratch[2]
    for j in range(k):
        a[j] = a[j] * scale
        w[j] = x[k + j] + vector_scale * (b[j] * scale)
    p_new = out[:k]
    _sphere_exp(p, a, p_new)
    v_new = scratch[3]
    if not _transport(p, p_new, w, v_new, scratch[4]):
        for j in range(k):
            v_new[j] = np.nan
    for j in range(k):
        out[k + j] = v_new[j]


@njit(cache=True)
def run_steps(kind, x, logp, uniforms, gaussians, j0, j1, step0, phase, labels, eta_state,
              adapt, target, log_cap, half, inv_dim, thin, burn_in, samples, log_values,
              accepted_total, t, y, yt, tau, sigma, max_norm, p_hat, v_hat, chains_p, chains_b,
              vector_scale):
    """Run steps ``j0 .. j1 - 1`` of the current block of random numbers, in place.

    ``uniforms[j]`` holds the radius and acceptance uniforms ``(2, n_chains)`` of step ``j``
    of the block, ``gaussians[j - j0]`` its tangent Gaussians ``(n_parts, n_chains, k)``;
    ``step0`` is the run's index of step ``j0``. ``labels`` gives every chain's step-size
    group, ``sigma`` every chain's K-norm scale. ``phase`` 0 is the burn-in, where
    ``eta_state[:, g] = [log_eta, sum of log_eta over the second half, fixed eta]`` of group g
    is tuned when ``adapt``; phase 1 samples with the fixed ``eta_state[2]``, storing every
    ``thin``-th state. One group follows the scalar rule of ``mcmc._burn_in``, several its
    per-group rule (both give the same rates up to rounding).
    """
    n, dim_state = x.shape
    n_groups = eta_state.shape[1]
    k = y.shape[1]
    scratch = np.empty((7, k))
    prop_scratch = np.empty((5, k))
    proposal = np.empty(dim_state)
    n_parts = gaussians.shape[1]
    g = np.empty((n_parts, gaussians.shape[3]))
    eta = np.empty(n_groups)
    rate_sum = np.empty(n_groups)
    n_live = np.empty(n_groups)
    for j in range(j0, j1):
        step = step0 + (j - j0)
        for grp in range(n_groups):
            eta[grp] = math.exp(eta_state[0, grp]) if phase == 0 and adapt else eta_state[2, grp]
            rate_sum[grp] = 0.0
            n_live[grp] = 0.0
        for c in range(n):
            grp = labels[c]
            live = logp[c] > -np.inf
            if live:
                n_live[grp] += 1.0
            radius = eta[grp] * uniforms[j, 0, c] ** inv_dim
            for a in range(n_parts):
                for b in range(g.shape[1]):
                    g[a, b] = gaussians[j - j0, a, c, b]
            _propose(kind, x[c], g, radius, vector_scale, proposal, prop_scratch)
            logq = log_density(kind, proposal, c, t, y, yt, tau, sigma[c], max_norm, p_hat,
                               v_hat, chains_p, chains_b, scratch)
            diff = logq - logp[c]
            if diff != diff:
                prob = 0.0
            else:
                prob = math.exp(min(diff, 0.0))
            if live:
                rate_sum[grp] += prob
            if uniforms[j, 1, c] < prob:
                for b in range(dim_state):
                    x[c, b] = proposal[b]
                logp[c] = logq
                if phase == 1:
                    accepted_total[c] += 1.0
        if phase == 0:
            if adapt:
                gain = _GAIN / (1.0 + step / 10.0) ** 0.6
                for grp in range(n_groups):
                    if n_groups == 1 and n_live[0] == n:
                        rate = rate_sum[0] * (1.0 / n)
                    elif n_live[grp] > 0:
                        rate = rate_sum[grp] / n_live[grp]
                    else:
                        rate = target
                    eta_state[0, grp] = min(eta_state[0, grp] + gain * (rate - target),
                                            log_cap)
                    if step >= half:
                        eta_state[1, grp] += eta_state[0, grp]
        else:
            i = step - burn_in
            if (i + 1) % thin == 0:
                for c in range(n):
                    for b in range(dim_state):
                        samples[c, i // thin, b] = x[c, b]
                    log_values[c, i // thin] = logp[c]


@njit(cache=True)
def evaluate(kind, x, t, y, yt, tau, sigma, max_norm, p_hat, v_hat, chains_p, chains_b, out):
    """The log density of every chain's state (``sigma`` one per chain)."""
    scratch = np.empty((7, y.shape[1]))
    for c in range(x.shape[0]):
        out[c] = log_density(kind, x[c], c, t, y, yt, tau, sigma[c], max_norm, p_hat, v_hat,
                             chains_p, chains_b, scratch)

