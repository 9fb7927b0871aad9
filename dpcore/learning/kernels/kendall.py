"""Closed-form regression and Fréchet gradients on ``KendallShape(k)`` (planar shapes,
CP^{k-2})."""

from __future__ import annotations

import numpy as np

from ...manifolds import CutLocusError, KendallShape
from ...manifolds.kendall import CUT_TOL
from ._dispatch import closed_form_frechet_gradient, closed_form_regression_gradient

__all__ = ["kendall_frechet_gradient", "kendall_regression_gradient"]

#: Residuals at least this close to pi/2 (the cut locus) count as 0 when clipping, the
#: threshold of the generic path's convention (``dist >= injectivity_radius - 1e-7``).
_CUT_DIST = np.pi / 2 - 1e-7


#: Largest m * n * k of one matrix product in these kernels. OpenBLAS runs a product on one
#: thread up to 65536 * GEMM_MULTITHREAD_THRESHOLD (4 by default) = 2**18 and splits larger
#: ones over threads; at the kernels' shapes (a few rows, n columns, 2k inner) the product is
#: memory-bound, so a second thread gains nothing and, on a busy machine, its hand-offs cost
#: milliseconds per call (measured: median 60 ms instead of 27 us for 40 x 16 @ 16 x 1000
#: on the 2-core machine under load). Blocks below the threshold keep every call on one thread.
_GEMM_BLOCK = 1 << 18


def _matmul(a, b, out):
    """``a @ b`` into ``out`` (2-D arrays) by blocks of at most ``_GEMM_BLOCK`` m * n * k."""
    m, inner = a.shape
    cols = b.shape[1]
    if m * inner * cols <= _GEMM_BLOCK:
        return np.matmul(a, b, out=out)
    if cols <= inner:
        # A short, long-inner product (weights @ responses): block the rows and the inner
        # axis, and add the partial products.
        rows = max(1, _GEMM_BLOCK // (inner * cols))
        step = max(1, _GEMM_BLOCK // (min(rows, m) * cols))
        out[...] = 0.0
        part = np.empty((min(rows, m), cols))
        for r in range(0, m, rows):
            block = out[r:r + rows]
            for s in range(0, inner, step):
                block += np.matmul(a[r:r + rows, s:s + step], b[s:s + step],
                                   out=part[:block.shape[0]])
        return out
    # A short, wide product (rows @ responses^T): block the rows and the columns.
    rows = max(1, _GEMM_BLOCK // (inner * cols))
    step = max(1, _GEMM_BLOCK // (min(rows, m) * inner))
    for r in range(0, m, rows):
        for s in range(0, cols, step):
            np.matmul(a[r:r + rows], b[:, s:s + step], out=out[r:r + rows, s:s + step])
    return out


def kendall_regression_gradient(p, v, t, y, tau=None, which="both"):
    r"""Closed-form regression gradients on ``KendallShape(k)``: O(batch x n) scalars plus two
    matrix products.

    A preshape is a centred unit vector of C^k and ``<a, b> = sum_j conj(a_j) b_j`` the
    Hermitian product; its real part is the Euclidean product of the (k, 2) arrays and its
    imaginary part is ``<i a, b>_R``. With u = v/|v| (horizontal: ``<p, u> = 0``),
    rho_i = t_i |v|, P_i = <p, y_i> and U_i = <u, y_i> (complex), the prediction is
    yhat_i = cos(rho_i) p + sin(rho_i) u and the end velocity e_i = -sin(rho_i) p +
    cos(rho_i) u, so c_i = <yhat_i, y_i> = cos(rho_i) P_i + sin(rho_i) U_i and
    E_i = <e_i, y_i> = -sin(rho_i) P_i + cos(rho_i) U_i. The log map aligns y_i by the phase
    phi_i = c_i/|c_i| (Procrustes) and gives eps_i = f_i (conj(phi_i) y_i - |c_i| yhat_i) with
    theta_i = atan2(s_i, |c_i|), s_i^2 = |y_i|^2 - |c_i|^2 and f_i = theta_i/s_i (times
    min(1, tau/theta_i) when clipping); eps_i is complex-orthogonal to yhat_i.

    Transport back to p along the horizontal great circle (DESIGN.md, table of spaces: u <->
    e_i, i u <-> i e_i, the rest kept) splits eps_i into a_i e_i + b_i i e_i with
    a_i + i b_i = <e_i, eps_i> = f_i conj(phi_i) E_i, and a rest complex-orthogonal to p and
    u, which is f_i conj(phi_i) (y_i - P_i p - U_i u) (y_i with its part in span_C(p, u)
    removed). The Jacobi operator of the geodesic has eigenvalue 0 on u, 4 on i u and 1 on the
    rest, so the adjoint Jacobi maps (paper 002 eqs. 5-8 and 15 with curvature 4 and 1) keep
    a_i u, scale b_i i u by cos(2 rho_i) (footpoint) or sin(2 rho_i)/(2 rho_i) (vector) and
    the rest by cos(rho_i) or sin(rho_i)/rho_i.

    Summing with complex weights w_i (cos(rho_i) f_i conj(phi_i) for the footpoint,
    sin(rho_i) f_i conj(phi_i)/|v| for the vector, which absorbs the factor t_i of eq. 6) and
    W = sum_i w_i y_i, one has sum_i w_i P_i = <p, W> and sum_i w_i U_i = <u, W>, so

        grad = (<p, W> p + (<u, W> - A - i B) u - W) / n

    with A = sum a_i, B = sum cos(2 rho_i) b_i (footpoint) or A = sum t_i a_i,
    B = sum sin(2 rho_i)/(2|v|) b_i (vector). Every term is centred and complex-orthogonal
    to p: the gradients are horizontal.

    Parameters
    ----------
    p, v : array, shape ``(..., k, 2)``
        Footpoints (preshapes) and horizontal shooting vectors (a batch of candidate fits).
    t : array, shape ``(n,)``
        Covariates.
    y : array, shape ``(n, k, 2)``
        Responses (preshapes; any representative of each shape).
    tau : float, optional
        Clip each residual to norm ``tau`` (the strict gradient of the sensitivity proof).
    which : {"both", "footpoint", "vector"}
        The gradient not asked for is returned as ``None``.

    Returns
    -------
    (grad_footpoint, grad_vector) : tuple of ndarray or None, each shape ``(..., k, 2)``
        The energy's gradients with respect to ``p`` and ``v``, horizontal at ``p``; ``None``
        (not a tuple) when some ``|v|`` is 0 (``u`` undefined), so the caller uses the
        generic path.

    Raises
    ------
    ValueError
        For an unknown ``which``.
    CutLocusError
        If a response is orthogonal to its prediction (distance pi/2) and ``tau`` is None.
    """
    if which not in ("both", "footpoint", "vector"):
        raise ValueError(f"`which` must be 'both', 'footpoint' or 'vector', got {which!r}.")
    p = np.asarray(p, dtype=float)
    v = np.asarray(v, dtype=float)
    p, v = np.broadcast_arrays(p, v)
    batch, k = p.shape[:-2], p.shape[-2]
    nv = np.sqrt(np.einsum("...ij,...ij->...", v, v))
    if not np.all(nv > 1e-12):
        return None
    t = np.asarray(t, dtype=float)
    n = t.shape[0]
    big_y = np.asarray(y, dtype=float).reshape(n, 2 * k)
    parts = [part for part in ("footpoint", "vector") if which in ("both", part)]
    # Rows p, i p, u, i u (i turns each landmark by 90 degrees, (x, y) -> (-y, x)): their
    # Euclidean products with y_i are the real and imaginary parts of P_i and U_i. The batch
    # axes come after the row axis so that both products are plain 2-D BLAS calls.
    q = np.empty((4,) + batch + (k, 2))
    q[0] = p
    np.divide(v, nv[..., None, None], out=q[2])
    q[1::2, ..., 0] = q[0::2, ..., 1]
    np.negative(q[1::2, ..., 0], out=q[1::2, ..., 0])
    q[1::2, ..., 1] = q[0::2, ..., 0]
    q = q.reshape(4, -1, 2 * k)
    # One buffer for every (batch x n) array: at the samplers' sizes the cost is memory
    # traffic and allocation, not arithmetic, so everything below is updated in place.
    # Rows 6-9 end as the weights of the second product (c scaled in place, after a spare).
    work = np.empty((10,) + batch + (n,))
    _matmul(q.reshape(-1, 2 * k), big_y.T, work[:4].reshape(-1, n))
    p_re, p_im, u_re, u_im, cr, sr, tmp, spare, c_re, c_im = work
    # cos and sin from h = tan(rho/2), as in the sphere kernel (numpy's tan is faster than its
    # cos and sin, with a few ulp of absolute error for every rho).
    np.multiply(0.5 * nv[..., None], t, out=sr)
    np.tan(sr, out=sr)
    np.multiply(sr, sr, out=cr)
    cr += 1.0
    np.divide(2.0, cr, out=cr)
    sr *= cr
    cr -= 1.0
    # c_i = cos(rho) P_i + sin(rho) U_i and E_i = cos(rho) U_i - sin(rho) P_i.
    np.multiply(cr, p_re, out=c_re)
    c_re += np.multiply(sr, u_re, out=tmp)
    np.multiply(cr, p_im, out=c_im)
    c_im += np.multiply(sr, u_im, out=tmp)
    e_re = np.multiply(cr, u_re, out=u_re)
    e_re -= np.multiply(sr, p_re, out=tmp)
    e_im = np.multiply(cr, u_im, out=u_im)
    e_im -= np.multiply(sr, p_im, out=tmp)
    mod2 = np.multiply(c_re, c_re, out=p_re)                   # |c|^2
    mod2 += np.multiply(c_im, c_im, out=tmp)
    # theta = atan2(s, |c|) = atan2(s |c|, |c|^2) and g = f/|c| = min(theta, tau)/(s |c|):
    # one square root and one division. s |c| is floored before atan2, so that g = 1/|c|^2
    # (the limit) where y_i is its prediction and the residual vanishes whatever g is.
    sm = np.subtract(np.einsum("ij,ij->i", big_y, big_y), mod2, out=tmp)
    np.maximum(sm, 0.0, out=sm)
    sm *= mod2
    np.sqrt(sm, out=sm)
    np.maximum(sm, 1e-300, out=sm)
    theta = np.arctan2(sm, mod2, out=p_im)
    cut = None
    if mod2.size and mod2.min() < CUT_TOL**2:
        if tau is None:
            raise CutLocusError("log is undefined between orthogonal shapes (distance pi/2).")
        # Clipped (strict) gradient: a residual whose direction is undefined counts as 0,
        # the generic path's convention, which keeps every term's norm <= tau.
        cut = theta >= _CUT_DIST
    if tau is not None:
        np.minimum(theta, tau, out=theta)
    g = np.divide(theta, sm, out=theta)
    if cut is not None:
        g[cut] = 0.0
    c_re *= g
    c_im *= g
    # a + i b = g conj(c) E.
    a = np.multiply(c_re, e_re, out=p_re)
    a += np.multiply(c_im, e_im, out=tmp)
    np.multiply(c_im, e_re, out=tmp)
    b = np.multiply(c_re, e_im, out=e_im)
    b -= tmp
    # A and B of each part, shape (parts, batch).
    along_u, along_iu = [], []
    if "footpoint" in parts:
        np.multiply(cr, cr, out=tmp)                  # cos(2 rho) = 2 cos(rho)^2 - 1
        tmp *= 2.0
        tmp -= 1.0
        along_u.append(a.sum(axis=-1))
        along_iu.append(np.einsum("...i,...i->...", tmp, b))
    if "vector" in parts:
        np.multiply(cr, sr, out=tmp)                  # sin(2 rho) / 2
        along_u.append(a @ t)
        along_iu.append(np.einsum("...i,...i->...", tmp, b) / nv)
    # Weights: real parts cos(rho) g Re(c) (footpoint) and sin(rho) g Re(c) (vector, divided
    # by |v| after the product); imaginary parts minus the same with Im(c).
    if len(parts) == 2:
        np.multiply(cr, c_re, out=tmp)
        np.multiply(cr, c_im, out=spare)
        weights = work[6:]
    else:
        weights = work[8:]
    trig = cr if parts[-1] == "footpoint" else sr
    c_re *= trig
    c_im *= trig
    sums = _matmul(weights.reshape(-1, n), big_y, np.empty((weights.size // n, 2 * k)))
    scale = np.ones((len(parts), nv.size, 1))
    if "vector" in parts:
        scale[-1] = nv.reshape(-1, 1)
    grads = _assemble_gradients(q, sums.reshape(len(parts), 2, -1, k, 2), scale,
                                np.reshape(along_u, (len(parts), -1)),
                                np.reshape(along_iu, (len(parts), -1)), n)
    grads = dict(zip(parts, grads.reshape((len(parts),) + batch + (k, 2)), strict=True))
    return grads.get("footpoint"), grads.get("vector")


def _assemble_gradients(q, sums, scale, along_u, along_iu, n):
    """``(<p, W> p + (<u, W> - A - i B) u - W) / n`` with ``W = (w_re - i w_im) / scale``.

    ``q`` holds the rows ``p, i p, u, i u`` (flattened, shape ``(4, batch, 2k)``); the real
    coefficients of the projection on their span are the Euclidean products with the rows.
    ``sums`` holds ``w_re, w_im`` per part, shape ``(parts, 2, batch, k, 2)``; ``scale``,
    ``along_u`` (A) and ``along_iu`` (B) are per part and fit.
    """
    w_re, w_im = sums[:, 0], sums[:, 1]
    big_w = np.empty(w_re.shape)
    np.add(w_re[..., 0], w_im[..., 1], out=big_w[..., 0])      # w_re - i w_im
    np.subtract(w_re[..., 1], w_im[..., 0], out=big_w[..., 1])
    flat = big_w.reshape(big_w.shape[:2] + (-1,))
    flat /= scale
    coef = np.einsum("jbl,pbl->pjb", q, flat)
    coef[:, 2] -= along_u
    coef[:, 3] -= along_iu
    out = np.einsum("pjb,jbl->pbl", coef, q)
    out -= flat
    out /= n
    return out


@closed_form_regression_gradient.register
def _(manifold: KendallShape, p, v, t, y, tau=None, which="both"):
    return kendall_regression_gradient(p, v, t, y, tau, which)


def kendall_frechet_gradient(z, points):
    r"""Closed-form gradient of the Fréchet energy on ``KendallShape(k)``,
    :math:`-\frac1n \sum_i \log_z y_i`: O(batch x n) scalars plus two matrix products.

    With c_i = <z, y_i> (Hermitian), theta_i = atan2(s_i, |c_i|), s_i^2 = |y_i|^2 - |c_i|^2
    and g_i = theta_i / (s_i |c_i|), the log map (Procrustes alignment by the phase of c_i) is
    log_z y_i = g_i (conj(c_i) y_i - |c_i|^2 z), so the gradient is
    (sum_i g_i |c_i|^2 z - W) / n with W = sum_i g_i conj(c_i) y_i; it is horizontal, as
    <z, W> = sum_i g_i |c_i|^2.

    Parameters
    ----------
    z : array, shape ``(..., k, 2)``
        Preshapes at which the gradient is wanted (leading batch axes).
    points : array, shape ``(n, k, 2)``
        The data (preshapes; any representative of each shape).

    Returns
    -------
    ndarray, shape ``(..., k, 2)``
        Horizontal at ``z``.

    Raises
    ------
    CutLocusError
        If a data shape is orthogonal to some ``z`` (distance pi/2), as the log map does.
    """
    z = np.asarray(z, dtype=float)
    batch, k = z.shape[:-2], z.shape[-2]
    big_y = np.asarray(points, dtype=float)
    n = big_y.shape[0]
    big_y = big_y.reshape(n, 2 * k)
    q = np.empty((2,) + batch + (k, 2))
    q[0] = z
    np.negative(z[..., 1], out=q[1, ..., 0])
    q[1, ..., 1] = z[..., 0]
    work = np.empty((5,) + batch + (n,))
    _matmul(q.reshape(-1, 2 * k), big_y.T, work[:2].reshape(-1, n))
    c_re, c_im, mod2, sm, theta = work
    # theta = atan2(s |c|, |c|^2) and g = theta/(s |c|), as in the regression kernel.
    np.multiply(c_re, c_re, out=mod2)
    mod2 += np.multiply(c_im, c_im, out=sm)
    if mod2.size and mod2.min() < CUT_TOL**2:
        raise CutLocusError("log is undefined between orthogonal shapes (distance pi/2).")
    np.subtract(np.einsum("ij,ij->i", big_y, big_y), mod2, out=sm)
    np.maximum(sm, 0.0, out=sm)
    sm *= mod2
    np.sqrt(sm, out=sm)
    np.maximum(sm, 1e-300, out=sm)
    np.arctan2(sm, mod2, out=theta)
    g = np.divide(theta, sm, out=theta)
    along_z = np.einsum("...i,...i->...", g, mod2)
    c_re *= g
    c_im *= g
    sums = _matmul(work[:2].reshape(-1, n), big_y, np.empty((2 * c_re.size // n, 2 * k)))
    w_re, w_im = sums.reshape((2,) + batch + (k, 2))
    out = along_z[..., None, None] * z
    out[..., 0] -= w_re[..., 0] + w_im[..., 1]                 # W = w_re - i w_im
    out[..., 1] -= w_re[..., 1] - w_im[..., 0]
    out /= n
    return out


@closed_form_frechet_gradient.register
def _(manifold: KendallShape, z, points):
    return kendall_frechet_gradient(z, points)
