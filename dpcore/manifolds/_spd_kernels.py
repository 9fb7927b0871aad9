"""Closed-form kernels behind :class:`~dpcore.manifolds.spd.SPD`: batched symmetric
eigendecompositions of 2 x 2 and 3 x 3 matrices (LAPACK otherwise), whitening and functions
of symmetric matrices. Pure numpy, no class."""

from __future__ import annotations

import math

import numpy as np

_TINY = np.finfo(float).tiny
_SQRT2 = math.sqrt(2.0)
_THIRD_TURN = 2.0 * math.pi / 3.0
#: The closed-form 3 x 3 eigensolver hands matrices whose traceless part has its largest entry
#: outside (_LOW, _HIGH), or whose mean eigenvalue exceeds _HIGH, to LAPACK: inside these
#: bounds none of its products can overflow or underflow.
_LOW, _HIGH = 1e-100, 1e100


def _eigh_2x2_scalar(p, q, r):
    """Closed-form eigendecomposition of one symmetric matrix ``[[p, r], [r, q]]``.

    Returns
    -------
    low, high : float
        The eigenvalues, ascending.
    vec_low, vec_high : tuple of float
        Matching unit eigenvectors ``(c, s)``; exact unit vectors when ``r == 0``.
    """
    mid = 0.5 * (p + q)
    # The eigenvalue of larger modulus is mid + sign(mid) half; the other one is det / it,
    # which keeps full relative accuracy when the two differ by orders of magnitude.
    big = mid + math.copysign(math.hypot(0.5 * (p - q), r), mid)
    other = (p * q - r * r) / big if big != 0 else 0.0
    low, high = min(big, other), max(big, other)
    # The rotation angle is taken in [-pi/4, pi/4] (diagonal input gives exact unit vectors):
    # for p >= q, (cos t, sin t) with t = atan2(2r, p - q) / 2 belongs to the larger eigenvalue;
    # for p < q the same formula applied to -A gives the eigenvector of the smaller one.
    if p >= q:
        t = 0.5 * math.atan2(2.0 * r, p - q)
        c, s = math.cos(t), math.sin(t)
        return low, high, (-s, c), (c, s)
    t = 0.5 * math.atan2(-2.0 * r, q - p)
    c, s = math.cos(t), math.sin(t)
    return low, high, (c, s), (-s, c)


def _eigh_2x2(p, q, r):
    """Vectorized :func:`_eigh_2x2_scalar`, with arrays in place of floats."""
    mid, half = 0.5 * (p + q), np.hypot(0.5 * (p - q), r)
    big = mid + np.copysign(half, mid)
    other = np.divide(p * q - r * r, big, out=np.zeros_like(big), where=big != 0)
    low, high = np.minimum(big, other), np.maximum(big, other)
    first = p >= q
    # One arctan2 of the selected arguments (q - p = -(p - q) exactly).
    r2 = 2.0 * r
    diff = p - q
    t = 0.5 * np.arctan2(np.where(first, r2, -r2), np.where(first, diff, -diff))
    c, s = np.cos(t), np.sin(t)
    vec_low = (np.where(first, -s, c), np.where(first, c, s))
    vec_high = (np.where(first, c, -s), np.where(first, s, c))
    return low, high, vec_low, vec_high


# Closed-form 3 x 3 eigendecomposition. With q = tr(A) / 3 and B = (A - q I) / m, m the largest
# entry of |A - q I| (so tr B^2 >= 1), B is traceless with characteristic polynomial
# mu^3 - (tr B^2 / 2) mu - det B. Writing mu = 2 p cos(theta), p^2 = tr(B^2) / 6, turns it into
# 4 cos^3 theta - 3 cos theta = cos(3 theta) = det B / (2 p^3) =: r, so the eigenvalues are
# 2 p cos(theta_0 + 2 pi k / 3) with theta_0 = acos(r) / 3 in [0, pi / 3]: k = 0 the largest,
# k = 1 the smallest. Their spread is 2 sqrt(3) p sin(theta_0 + pi / 3) >= 3 p, so the extreme
# eigenvalue farther from the middle one (the largest if r >= 0, else the smallest) is isolated
# by a gap of at least 1.5 p >= 1.5 / sqrt(6). Only its eigenvector v is taken from B: the
# cross products of rows of M = B - mu I are the columns of adj(M) = d1 d2 v v^T (d1, d2 the
# other eigenvalues of M, |d1 d2| >= 4.5 p^2), so the largest is parallel to v and O(1), hence
# accurate to O(eps) whatever the other two eigenvalues do. Its eigenvalue is the Rayleigh
# quotient v^T A v, and the other two eigenpairs come from the 2 x 2 matrix of A on an
# orthonormal basis (u, w) of v's complement: a repeated or nearly repeated pair stays accurate
# and orthogonal, and working with A rather than B keeps small eigenvalues of (nearly) diagonal
# input to full relative accuracy (v, u, w are then exact unit vectors).
def _deflate(a, v, u, w):
    """Rayleigh quotient of the symmetric 3x3 matrix ``a`` (entries a00, a11, a22, a10, a20,
    a21) at the unit vector ``v``, and its 2x2 block ``(p, q, r)`` = (u'Au, w'Aw, w'Au) on the
    orthonormal complement (u, w). Works on floats and on arrays alike."""
    a00, a11, a22, a10, a20, a21 = a

    def times_a(x):
        return (a00 * x[0] + a10 * x[1] + a20 * x[2], a10 * x[0] + a11 * x[1] + a21 * x[2],
                a20 * x[0] + a21 * x[1] + a22 * x[2])

    def dot(x, y):
        return x[0] * y[0] + x[1] * y[1] + x[2] * y[2]

    au = times_a(u)
    return dot(v, times_a(v)), (dot(u, au), dot(w, times_a(w)), dot(w, au))


def _eigh_3x3_scalar(a00, a11, a22, a10, a20, a21):
    """Closed-form eigendecomposition of one symmetric 3 x 3 matrix given its lower triangle.

    Returns
    -------
    vals : tuple of float or None
        The eigenvalues, ascending; None when the matrix is outside the range the closed form
        handles (non-finite or extreme entries), in which case ``vecs`` is None too.
    vecs : tuple of tuple of float or None
        Matching unit eigenvectors, one 3-tuple per eigenvalue.
    """
    q = (a00 + a11 + a22) / 3.0
    b00, b11, b22 = a00 - q, a11 - q, a22 - q
    m = max(abs(b00), abs(b11), abs(b22), abs(a10), abs(a20), abs(a21))
    if m == 0.0:
        return (a00, a11, a22), ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))
    if not (_LOW < m < _HIGH and abs(q) < _HIGH):
        return None, None
    b00, b11, b22, b10, b20, b21 = b00 / m, b11 / m, b22 / m, a10 / m, a20 / m, a21 / m
    p = math.sqrt(
        (b00 * b00 + b11 * b11 + b22 * b22 + 2.0 * (b10 * b10 + b20 * b20 + b21 * b21)) / 6.0
    )
    det = b00 * (b11 * b22 - b21 * b21) - b10 * (b10 * b22 - b21 * b20)
    det += b20 * (b10 * b21 - b11 * b20)
    r = max(-1.0, min(1.0, det / (2.0 * p * p * p)))
    theta = math.acos(r) / 3.0
    mu = 2.0 * p * math.cos(theta if r >= 0.0 else theta + _THIRD_TURN)
    m00, m11, m22 = b00 - mu, b11 - mu, b22 - mu
    x0, y0, z0 = b10 * b21 - b20 * m11, b20 * b10 - m00 * b21, m00 * m11 - b10 * b10
    x1, y1, z1 = b10 * m22 - b20 * b21, b20 * b20 - m00 * m22, m00 * b21 - b10 * b20
    x2, y2, z2 = m11 * m22 - b21 * b21, b21 * b20 - b10 * m22, b10 * b21 - m11 * b20
    n0 = x0 * x0 + y0 * y0 + z0 * z0
    n1 = x1 * x1 + y1 * y1 + z1 * z1
    n2 = x2 * x2 + y2 * y2 + z2 * z2
    if n0 >= n1 and n0 >= n2:
        n = math.sqrt(n0)
        vx, vy, vz = x0 / n, y0 / n, z0 / n
    elif n1 >= n2:
        n = math.sqrt(n1)
        vx, vy, vz = x1 / n, y1 / n, z1 / n
    else:
        n = math.sqrt(n2)
        vx, vy, vz = x2 / n, y2 / n, z2 / n
    if abs(vx) > abs(vy):
        n = math.sqrt(vx * vx + vz * vz)
        ux, uy, uz = -vz / n, 0.0, vx / n
    else:
        n = math.sqrt(vy * vy + vz * vz)
        ux, uy, uz = 0.0, vz / n, -vy / n
    wx, wy, wz = vy * uz - vz * uy, vz * ux - vx * uz, vx * uy - vy * ux
    a = (a00, a11, a22, a10, a20, a21)
    lam, block = _deflate(a, (vx, vy, vz), (ux, uy, uz), (wx, wy, wz))
    low, high, (cl, sl), (ch, sh) = _eigh_2x2_scalar(*block)
    v_low = (cl * ux + sl * wx, cl * uy + sl * wy, cl * uz + sl * wz)
    v_high = (ch * ux + sh * wx, ch * uy + sh * wy, ch * uz + sh * wz)
    v = (vx, vy, vz)
    if lam >= high:
        return (low, high, lam), (v_low, v_high, v)
    if lam <= low:
        return (lam, low, high), (v, v_low, v_high)
    return (low, lam, high), (v_low, v, v_high)


def _eigh_3x3(a):
    """Vectorized :func:`_eigh_3x3_scalar` (LAPACK for the matrices it declines).

    Parameters
    ----------
    a : ndarray, shape (..., 3, 3)
        Symmetric matrices; only the lower triangle is read.

    Returns
    -------
    vals : ndarray, shape (..., 3)
    vecs : ndarray, shape (..., 3, 3)
        As for :func:`eigh`.
    """
    a00, a11, a22 = a[..., 0, 0], a[..., 1, 1], a[..., 2, 2]
    a10, a20, a21 = a[..., 1, 0], a[..., 2, 0], a[..., 2, 1]
    q = (a00 + a11 + a22) / 3.0
    m = np.abs(a00 - q)
    for entry in (a11 - q, a22 - q, a10, a20, a21):
        m = np.maximum(m, np.abs(entry))
    ok = (m > _LOW) & (m < _HIGH) & (np.abs(q) < _HIGH)
    if ok.all():
        return _eigh_3x3_closed(a00, a11, a22, a10, a20, a21, q, m)
    # The declined matrices are replaced by diag(-1, 0, 1) for the closed form, then by LAPACK.
    one, zero = np.ones_like(q), np.zeros_like(q)
    a00, a11, a22 = np.where(ok, a00, -one), np.where(ok, a11, zero), np.where(ok, a22, one)
    a10, a20, a21 = np.where(ok, a10, zero), np.where(ok, a20, zero), np.where(ok, a21, zero)
    vals, vecs = _eigh_3x3_closed(
        a00, a11, a22, a10, a20, a21, np.where(ok, q, zero), np.where(ok, m, one)
    )
    vals[~ok], vecs[~ok] = np.linalg.eigh(a[~ok])
    return vals, vecs


def _eigh_3x3_closed(a00, a11, a22, a10, a20, a21, q, m):
    """:func:`_eigh_3x3_scalar` on arrays, given ``q`` and ``m`` within the accepted range."""
    inv = 1.0 / m
    b00, b11, b22 = (a00 - q) * inv, (a11 - q) * inv, (a22 - q) * inv
    b10, b20, b21 = a10 * inv, a20 * inv, a21 * inv
    p = np.sqrt(
        (b00 * b00 + b11 * b11 + b22 * b22 + 2.0 * (b10 * b10 + b20 * b20 + b21 * b21)) / 6.0
    )
    det = b00 * (b11 * b22 - b21 * b21) - b10 * (b10 * b22 - b21 * b20)
    det += b20 * (b10 * b21 - b11 * b20)
    r = np.clip(det / (2.0 * p * p * p), -1.0, 1.0)
    mu = 2.0 * p * np.cos(np.arccos(r) / 3.0 + np.where(r >= 0.0, 0.0, _THIRD_TURN))
    m00, m11, m22 = b00 - mu, b11 - mu, b22 - mu
    x0, y0, z0 = b10 * b21 - b20 * m11, b20 * b10 - m00 * b21, m00 * m11 - b10 * b10
    x1, y1, z1 = b10 * m22 - b20 * b21, b20 * b20 - m00 * m22, m00 * b21 - b10 * b20
    x2, y2, z2 = m11 * m22 - b21 * b21, b21 * b20 - b10 * m22, b10 * b21 - m11 * b20
    n0 = x0 * x0 + y0 * y0 + z0 * z0
    n1 = x1 * x1 + y1 * y1 + z1 * z1
    n2 = x2 * x2 + y2 * y2 + z2 * z2
    first = (n0 >= n1) & (n0 >= n2)
    second = ~first & (n1 >= n2)
    n = np.sqrt(np.where(first, n0, np.where(second, n1, n2)))
    vx = np.where(first, x0, np.where(second, x1, x2)) / n
    vy = np.where(first, y0, np.where(second, y1, y2)) / n
    vz = np.where(first, z0, np.where(second, z1, z2)) / n
    first = np.abs(vx) > np.abs(vy)
    n = np.sqrt(np.where(first, vx * vx, vy * vy) + vz * vz)
    ux = np.where(first, -vz, 0.0) / n
    uy = np.where(first, 0.0, vz) / n
    uz = np.where(first, vx, -vy) / n
    wx, wy, wz = vy * uz - vz * uy, vz * ux - vx * uz, vx * uy - vy * ux
    a = (a00, a11, a22, a10, a20, a21)
    lam, block = _deflate(a, (vx, vy, vz), (ux, uy, uz), (wx, wy, wz))
    low, high, (cl, sl), (ch, sh) = _eigh_2x2(*block)
    u, w = np.stack([ux, uy, uz], axis=-1), np.stack([wx, wy, wz], axis=-1)
    v_low = cl[..., None] * u + sl[..., None] * w
    v_high = ch[..., None] * u + sh[..., None] * w
    v = np.stack([vx, vy, vz], axis=-1)
    top = lam >= high
    bottom = ~top & (lam <= low)
    vals = np.stack(
        [
            np.where(bottom, lam, low),
            np.where(top, high, np.where(bottom, low, lam)),
            np.where(top, lam, high),
        ],
        axis=-1,
    )
    top, bottom = top[..., None], bottom[..., None]
    vecs = np.stack(
        [
            np.where(bottom, v, v_low),
            np.where(top, v_high, np.where(bottom, v_low, v)),
            np.where(top, v, v_high),
        ],
        axis=-1,
    )
    return vals, vecs


def eigh(a):
    """Symmetric eigendecomposition ``(vals ascending, vecs)`` reading the lower triangle.

    2 x 2 and 3 x 3 matrices use closed forms (see :func:`_eigh_2x2_scalar` and
    :func:`_eigh_3x3_scalar`), vectorized for batches and in scalar arithmetic for a single
    matrix: LAPACK's per-call overhead dominates at these sizes. Larger matrices use LAPACK.

    Parameters
    ----------
    a : array_like, shape (..., n, n)
        Symmetric matrices; only the lower triangle is read.

    Returns
    -------
    vals : ndarray, shape (..., n)
        Eigenvalues in ascending order.
    vecs : ndarray, shape (..., n, n)
        Orthonormal eigenvectors, column ``j`` for ``vals[..., j]``.
    """
    a = np.asarray(a, dtype=float)
    shape = a.shape[-2:]
    if shape == (2, 2):
        if a.ndim == 2:
            (a00, _), (a10, a11) = a.tolist()
            low, high, (c0, s0), (c1, s1) = _eigh_2x2_scalar(a00, a11, a10)
            return np.array((low, high)), np.array(((c0, c1), (s0, s1)))
        low, high, vec_low, vec_high = _eigh_2x2(a[..., 0, 0], a[..., 1, 1], a[..., 1, 0])
        vals, vecs = np.empty(a.shape[:-1]), np.empty(a.shape)
        vals[..., 0], vals[..., 1] = low, high
        vecs[..., 0, 0], vecs[..., 1, 0] = vec_low
        vecs[..., 0, 1], vecs[..., 1, 1] = vec_high
        return vals, vecs
    if shape == (3, 3):
        if a.ndim == 2:
            (a00, _, _), (a10, a11, _), (a20, a21, a22) = a.tolist()
            vals, vecs = _eigh_3x3_scalar(a00, a11, a22, a10, a20, a21)
            if vals is None:
                return np.linalg.eigh(a)
            return np.array(vals), np.array(vecs).T
        return _eigh_3x3(a)
    return np.linalg.eigh(a)


# Single 3 x 3 points skip numpy: any A with A A^T = P serves as the isometry X -> A X A^T in
# the formulas of SPD, and the Cholesky factor L of P is far cheaper than an eigendecomposition,
# so one closed-form eigendecomposition (of S = L^{-1} Y L^{-T}) is left per call. With
# L^{-1} = [[i00, 0, 0], [i10, i11, 0], [i20, i21, i22]], T = L^{-1} Y and S = T L^{-T}:
# S_jk = sum_{l <= k} T_jl i_kl for k <= j, needing only the lower triangle of T.
def _whiten_3x3_scalar(x, y):
    """Cholesky factor of one 3 x 3 SPD matrix and the whitened second argument.

    Parameters
    ----------
    x, y : list of list of float
        The point ``P`` (lower triangle read) and the matrix ``Y`` (symmetrized), 3 x 3 each.

    Returns
    -------
    chol : tuple of float or None
        ``(l00, l10, l11, l20, l21, l22)``, the lower triangle of ``L`` with ``L L^T = P``;
        None when ``P`` is not numerically positive definite (and ``white`` is None too).
    white : tuple of float or None
        ``(s00, s11, s22, s10, s20, s21)``, the lower triangle of ``L^{-1} Y L^{-T}``.
    """
    (p00, _, _), (p10, p11, _), (p20, p21, p22) = x
    (y00, y01, y02), (y10, y11, y12), (y20, y21, y22) = y
    if not p00 > 0.0:
        return None, None
    l00 = math.sqrt(p00)
    l10, l20 = p10 / l00, p20 / l00
    pivot = p11 - l10 * l10
    if not pivot > 0.0:
        return None, None
    l11 = math.sqrt(pivot)
    l21 = (p21 - l20 * l10) / l11
    pivot = p22 - l20 * l20 - l21 * l21
    if not pivot > 0.0:
        return None, None
    l22 = math.sqrt(pivot)
    i00, i11, i22 = 1.0 / l00, 1.0 / l11, 1.0 / l22
    i10 = -l10 * i00 * i11
    i21 = -l21 * i11 * i22
    i20 = -(l20 * i00 + l21 * i10) * i22
    y10, y20, y21 = 0.5 * (y10 + y01), 0.5 * (y20 + y02), 0.5 * (y21 + y12)
    t10 = i10 * y00 + i11 * y10
    t11 = i10 * y10 + i11 * y11
    t20 = i20 * y00 + i21 * y10 + i22 * y20
    t21 = i20 * y10 + i21 * y11 + i22 * y21
    t22 = i20 * y20 + i21 * y21 + i22 * y22
    white = (
        i00 * y00 * i00,
        t10 * i10 + t11 * i11,
        t20 * i20 + t21 * i21 + t22 * i22,
        t10 * i00,
        t20 * i00,
        t20 * i10 + t21 * i11,
    )
    return (l00, l10, l11, l20, l21, l22), white


def _apply_at_3x3_scalar(x, y, fn):
    """``L f(S) L^T`` with ``S = L^{-1} Y L^{-T}`` for one 3 x 3 point (see above).

    Returns the result as a flat row-major list of 9 floats, or None when the general path
    must be taken (``x`` not numerically positive definite, ``f`` undefined at an eigenvalue,
    or extreme entries).
    """
    chol, white = _whiten_3x3_scalar(x, y)
    if chol is None:
        return None
    vals, vecs = _eigh_3x3_scalar(*white)
    if vals is None:
        return None
    try:
        f = [fn(val) for val in vals]
    except (ValueError, OverflowError):
        return None
    l00, l10, l11, l20, l21, l22 = chol
    # sum_j f_j b_j b_j^T with b_j = L u_j.
    r00 = r10 = r11 = r20 = r21 = r22 = 0.0
    for fj, (u0, u1, u2) in zip(f, vecs, strict=True):
        b0, b1, b2 = l00 * u0, l10 * u0 + l11 * u1, l20 * u0 + l21 * u1 + l22 * u2
        g0, g1, g2 = fj * b0, fj * b1, fj * b2
        r00 += g0 * b0
        r10 += g1 * b0
        r11 += g1 * b1
        r20 += g2 * b0
        r21 += g2 * b1
        r22 += g2 * b2
    return [r00, r10, r20, r10, r11, r21, r20, r21, r22]


def _whiten_2x2_scalar(x, y):
    """Cholesky factor ``(l00, l10, l11)`` of one 2 x 2 SPD matrix and ``(s00, s11, s10)``, the
    lower triangle of ``L^{-1} Y L^{-T}`` (``Y`` symmetrized); ``(None, None)`` when ``x`` is not
    numerically positive definite. The 2 x 2 analogue of :func:`_whiten_3x3_scalar`."""
    (p00, _), (p10, p11) = x
    (y00, y01), (y10, y11) = y
    if not p00 > 0.0:
        return None, None
    l00 = math.sqrt(p00)
    l10 = p10 / l00
    pivot = p11 - l10 * l10
    if not pivot > 0.0:
        return None, None
    l11 = math.sqrt(pivot)
    i00, i11 = 1.0 / l00, 1.0 / l11
    i10 = -l10 * i00 * i11
    y10 = 0.5 * (y10 + y01)
    t10 = i10 * y00 + i11 * y10
    t11 = i10 * y10 + i11 * y11
    return (l00, l10, l11), (i00 * y00 * i00, t10 * i10 + t11 * i11, t10 * i00)


def _apply_at_2x2_scalar(x, y, fn):
    """``L f(S) L^T`` for one 2 x 2 point, as a flat row-major list, or None (general path)."""
    chol, white = _whiten_2x2_scalar(x, y)
    if chol is None or not all(math.isfinite(w) for w in white):
        return None
    low, high, vec_low, vec_high = _eigh_2x2_scalar(*white)
    try:
        f = (fn(low), fn(high))
    except (ValueError, OverflowError):
        return None
    l00, l10, l11 = chol
    r00 = r10 = r11 = 0.0
    for fj, (u0, u1) in zip(f, (vec_low, vec_high), strict=True):
        b0, b1 = l00 * u0, l10 * u0 + l11 * u1
        r00 += fj * b0 * b0
        r10 += fj * b1 * b0
        r11 += fj * b1 * b1
    return [r00, r10, r10, r11]


def sym(a):
    """Symmetric part of a batch of square matrices."""
    a = np.asarray(a, dtype=float)
    return 0.5 * (a + a.mT)


def eig_apply(vecs, fn_vals):
    """Rebuild ``Q diag(f) Q^T`` from eigenvectors ``Q`` and transformed eigenvalues ``f``."""
    return (vecs * fn_vals[..., None, :]) @ vecs.mT


def sym_funm(a, fn):
    """Apply a scalar function to a symmetric matrix through its eigendecomposition."""
    vals, vecs = eigh(sym(a))
    return eig_apply(vecs, fn(vals))
