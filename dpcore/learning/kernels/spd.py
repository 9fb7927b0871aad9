r"""Closed-form regression and Fréchet gradients on ``SPD(k)`` (affine-invariant metric).

Derivation (paper 002 eqs. 5-8, 15 and 40; DESIGN §3-4). Let :math:`A A^T = p` and
:math:`A^{-1} v A^{-T} = U \operatorname{diag}(\lambda) U^T`, and write :math:`B = A U`,
:math:`C = A^{-T} U`, so that :math:`C^T B = I` and :math:`C^T p C = I`. The geodesic is
:math:`\operatorname{Exp}(p, t v) = B D_t^2 B^T` with :math:`D_t = \operatorname{diag}
(e^{t\lambda/2})`, and :math:`X \mapsto B D_t X D_t B^T` is an isometry taking :math:`I` to
the prediction :math:`\hat y_i` (:math:`t = t_i`). Through it the residual is

.. math:: \varepsilon_i = \log_{\hat y_i} y_i = B D L_i D B^T, \qquad
          L_i = \operatorname{logm}(Z_i), \quad Z_i = D^{-1} C^T y_i C D^{-1},

with :math:`\|\varepsilon_i\|_{\hat y_i} = \|L_i\|_F` (so clipping at τ scales :math:`L_i` by
:math:`\min(1, \tau / \|L_i\|_F)`). Read in the frame (:math:`W \mapsto C^T W C`), transporting
:math:`\varepsilon_i` back to :math:`p` along the geodesic multiplies entry :math:`(a, b)` by
:math:`e^{-t_i(\lambda_a + \lambda_b)/2}`, which leaves exactly :math:`L_i`. The curvature
operator :math:`R(\cdot, t_i v) t_i v = -\frac14 [[\cdot, t_i V], t_i V]` is diagonal in this
frame with eigenvalue :math:`-t_i^2 g_{ab}^2`, :math:`g_{ab} = |\lambda_a - \lambda_b| / 2`, so
the adjoint Jacobi maps scale entry :math:`(a, b)` by :math:`C = \cosh(t_i g_{ab})` (footpoint,
eq. 15) and :math:`S = \sinh(t_i g_{ab}) / (t_i g_{ab})` (vector, eq. 40), 1 on the diagonal.
Summing eqs. 5-6 in the frame and writing the result back:

.. math:: \nabla_p E = -\tfrac1n B \Big[\sum_i c_i L_i \circ \cosh(t_i g)\Big] B^T, \qquad
          \nabla_v E = -\tfrac1n B \Big[\sum_i c_i L_i \circ \frac{\sinh(t_i g)}{g}\Big] B^T,

with :math:`c_i` the clipping factor and :math:`\sinh(t g)/g = t` where :math:`g = 0`. SPD has
no cut locus, so every residual is defined and clipping is the only convention. The same
whitening gives the Fréchet gradient :math:`-\frac1n \sum_i \log_z y_i = -A \big[\frac1n
\sum_i \operatorname{logm}(A^{-1} y_i A^{-T})\big] A^T` with one factorization of ``z``.

Only :math:`C^T y_i C` needs all pairs (fit, response): it is one matrix product of the
responses' upper triangles with a :math:`d \times d` matrix per fit,
:math:`d = k (k + 1) / 2`. For k = 2 the matrix logarithm is in closed form (no
eigenvectors), for k >= 3 it goes through :func:`~dpcore.manifolds.spd.eigh` (closed form for
3 x 3, LAPACK beyond).

Accuracy: that one composite map per fit rounds with an error of order eps times the condition
number of the footpoint, spread over all frame entries, where the generic path's error stays
along the footpoint's small eigen-directions. Against 40-digit arithmetic the kernels' relative
error is below 1e-11 up to condition number 1e4 (measured: 5e-12 at 1e3 where the generic
path had 5e-14) and about 1e-10 at 1e6; above ``MAX_COND`` (footpoints and, for k = 2,
responses) they return None and the generic path runs.
"""

from __future__ import annotations

import functools

import numpy as np

from ...manifolds import SPD
from ...manifolds._spd_kernels import _TINY, eigh, sym
from ._dispatch import closed_form_frechet_gradient, closed_form_regression_gradient

__all__ = ["spd_frechet_gradient", "spd_regression_gradient"]

_LOG2 = float(np.log(2.0))
#: Largest condition number of a footpoint (and, for k = 2, of a response) the kernels take;
#: beyond it they return None and the generic path runs. The kernels whiten with one composite
#: linear map per fit, whose rounding error grows like eps * cond (about 1e-10 relative to the
#: gradient at 1e6, measured against 40-digit arithmetic), while the generic path's error
#: stays graded along the eigen-directions.
MAX_COND = 1e6


@functools.cache
def _triu(k):
    """``triu_indices(k)``, cached (the kernels run once per sampler step) and read-only."""
    rows, cols = np.triu_indices(k)
    rows.flags.writeable = cols.flags.writeable = False
    return rows, cols


def _conditioned_2x2(x):
    """Whether every 2 x 2 matrix ``x`` is positive definite with condition number at most
    ``MAX_COND`` (checked through ``tr^2 / det``, which bounds it from above)."""
    det = x[..., 0, 0] * x[..., 1, 1] - x[..., 0, 1] * x[..., 1, 0]
    trace = x[..., 0, 0] + x[..., 1, 1]
    return bool(np.all((det > 0.0) & (trace > 0.0) & (trace * trace <= MAX_COND * det)))


def _frame(p, v):
    r"""``(B, C, lam, log det p)``: the eigen-frame of the curvature operator of ``v`` at ``p``.

    ``A`` is any square root :math:`A A^T = p` (the Cholesky factor for k = 2,
    :math:`Q \operatorname{diag}(\sqrt s)` from :math:`p = Q \operatorname{diag}(s) Q^T`
    otherwise), :math:`A^{-1} v A^{-T} = U \operatorname{diag}(\lambda) U^T`,
    :math:`B = A U`, :math:`C = A^{-T} U`.
    """
    if p.shape[-1] == 2:
        return _frame_2x2(p, v)
    a_mat, a_inv_t, logdet_p = _root(p)
    lam, u = eigh(a_inv_t.mT @ v @ a_inv_t)
    return a_mat @ u, a_inv_t @ u, lam, logdet_p


def _conditioned(x):
    """Whether every matrix ``x`` is positive definite with condition number <= ``MAX_COND``."""
    if x.shape[-1] == 2:
        return _conditioned_2x2(x)
    vals = np.linalg.eigvalsh(x)
    return bool(np.all((vals[..., 0] > 0.0) & (vals[..., -1] <= MAX_COND * vals[..., 0])))


def _cholesky_2x2(p):
    """Entries ``(l00, l10, l11)`` of the Cholesky factor of 2 x 2 matrices."""
    l00 = np.sqrt(p[..., 0, 0])
    l10 = p[..., 1, 0] / l00
    return l00, l10, np.sqrt(p[..., 1, 1] - l10 * l10)


def _root(z):
    """``(A, A^{-T}, log det z)`` for some ``A A^T = z`` (Cholesky for k = 2)."""
    if z.shape[-1] != 2:
        vals, vecs = eigh(z)
        vals = np.maximum(vals, _TINY)
        root = np.sqrt(vals)[..., None, :]
        return vecs * root, vecs / root, np.sum(np.log(vals), axis=-1)
    l00, l10, l11 = _cholesky_2x2(z)
    a_mat = np.zeros(z.shape)
    a_mat[..., 0, 0] = l00
    a_mat[..., 1, 0] = l10
    a_mat[..., 1, 1] = l11
    a_inv_t = np.zeros(z.shape)
    a_inv_t[..., 0, 0] = 1.0 / l00
    a_inv_t[..., 0, 1] = -l10 / (l00 * l11)
    a_inv_t[..., 1, 1] = 1.0 / l11
    return a_mat, a_inv_t, 2.0 * np.log(l00 * l11)


def _frame_2x2(p, v):
    """:func:`_frame` for k = 2 in closed form, Cholesky factor ``L`` of ``p`` as ``A``."""
    l00, l10, l11 = _cholesky_2x2(p)
    # W = L^{-1} v L^{-T} (v symmetric), then its eigenvectors (cos th, sin th), (-sin th, cos th)
    # with tan(2 th) = 2 w10 / (w00 - w11), for lam_0 = mid + half, lam_1 = mid - half.
    w00 = v[..., 0, 0] / (l00 * l00)
    w10 = (v[..., 1, 0] / l00 - l10 * w00) / l11
    w11 = ((v[..., 1, 1] - l10 * v[..., 1, 0] / l00) / l11 - l10 * w10) / l11
    dw = 0.5 * (w00 - w11)
    half = np.hypot(dw, w10)
    mid = 0.5 * (w00 + w11)
    theta = 0.5 * np.arctan2(w10, dw)
    cs, sn = np.cos(theta), np.sin(theta)
    lam = np.empty(p.shape[:-1])
    lam[..., 0] = mid + half
    lam[..., 1] = mid - half
    b = np.empty(p.shape)
    b[..., 0, 0] = l00 * cs
    b[..., 0, 1] = -l00 * sn
    b[..., 1, 0] = l10 * cs + l11 * sn
    b[..., 1, 1] = l11 * cs - l10 * sn
    c = np.empty(p.shape)
    c[..., 0, 0] = (cs - l10 * sn / l11) / l00
    c[..., 0, 1] = -(sn + l10 * cs / l11) / l00
    c[..., 1, 0] = sn / l11
    c[..., 1, 1] = cs / l11
    return b, c, lam, 2.0 * np.log(l00 * l11)


def _congruence_matrix(c):
    r"""The matrix of :math:`Y \mapsto C^T Y C` on upper triangles (``triu_indices`` order).

    Entry ``((a, b), (j, l))`` is :math:`C_{ja} C_{lb} + C_{la} C_{jb}` for ``j < l`` and
    :math:`C_{ja} C_{jb}` for ``j = l`` (a symmetric :math:`Y` counts :math:`y_{jl}` twice).

    Parameters
    ----------
    c : ndarray, shape ``(..., k, k)``

    Returns
    -------
    ndarray, shape ``(..., d, d)``, ``d = k (k + 1) / 2``
    """
    k = c.shape[-1]
    row_a, row_b = _triu(k)
    col_j, col_l = row_a[None, :], row_b[None, :]
    row_a, row_b = row_a[:, None], row_b[:, None]
    out = c[..., col_j, row_a] * c[..., col_l, row_b]
    off = (col_j != col_l)[0]
    out[..., off] += (c[..., col_l, row_a] * c[..., col_j, row_b])[..., off]
    return out


def _upper(y):
    """Upper triangles ``(n, d)`` of the responses, ``triu_indices`` order."""
    rows, cols = _triu(y.shape[-1])
    return y[..., rows, cols]


def _to_matrices(b, g):
    """``sym(B G B^T)`` from the upper triangles ``g`` ``(..., d)`` of symmetric ``G``."""
    k = b.shape[-1]
    rows, cols = _triu(k)
    out = np.empty(g.shape[:-1] + (k, k))
    out[..., rows, cols] = g
    out[..., cols, rows] = g
    return sym(b @ out @ b.mT)


def _log_unit_2x2(z00, z01x2, z11):
    r"""The matrix logarithm of symmetric 2 x 2 matrices of determinant 1/2, as entries.

    For :math:`Z` of determinant 1 write :math:`Z = m I + N`, :math:`N = [[d, z_{01}],
    [z_{01}, -d]]` traceless with eigenvalues :math:`\pm h`; the eigenvalues of Z are
    :math:`\mu_\pm = m \pm h`, and :math:`\mu_+ \mu_- = 1` gives
    :math:`\mu_+/\mu_- - 1 = \mu_+^2 - 1 = 2 h \mu_+`, so :math:`\operatorname{logm} Z =
    \frac{l}{2h} N` with :math:`l = \log(\mu_+/\mu_-) =` ``log1p(2 h mu_+)`` (accurate for
    small h, no eigenvector). The entries passed in are those of :math:`Z/\sqrt2`, for which
    :math:`2 h \mu_+` is the product of (twice the) radius and trace-plus-radius with no
    further factor. Arrays of any common shape; ``z00`` is overwritten.

    Parameters
    ----------
    z00, z11 : ndarray
        Diagonal entries of :math:`Z/\sqrt2`.
    z01x2 : ndarray
        Twice its off-diagonal entry.

    Returns
    -------
    l : ndarray
        :math:`\log(\mu_+/\mu_-)`, so that :math:`\|\operatorname{logm} Z\|_F^2 = l^2/2`.
    b : ndarray
        The coefficient of ``[[dd2, z01x2], [z01x2, -dd2]] / 2`` in :math:`\operatorname{logm}
        Z` (any finite value where h = 0, where that matrix is 0).
    dd2 : ndarray
        ``z00 - z11``.
    """
    dd2 = z00 - z11
    h2 = np.multiply(dd2, dd2)
    h2 += z01x2 * z01x2
    np.sqrt(h2, out=h2)                       # 2 h / sqrt(2)
    x = np.add(z00, z11, out=z00)             # 2 m / sqrt(2)
    x += h2
    x *= h2                                   # 2 h mu_+
    l = np.log1p(x, out=x)
    np.maximum(h2, _TINY, out=h2)
    return l, np.divide(l, h2, out=h2), dd2


#: The last responses seen by :func:`_unit_responses_2x2` (a private copy) and what was
#: derived from them: a sampler calls the kernels thousands of times with the same data, and
#: comparing the data with the copy costs a third of deriving it again. Reused only when the
#: content is equal, so results never depend on it.
_LAST_RESPONSES = [None]


def _unit_responses_2x2(y):
    """Rows ``[y00, y01, y11, log det]`` ``(4, n)`` of the responses normalized to
    ``y_i / sqrt(det y_i)``, or None if some ``y_i`` fails :func:`_conditioned_2x2`.

    The returned array is read-only (it may be the memo of :data:`_LAST_RESPONSES`).
    """
    last = _LAST_RESPONSES[0]
    if last is not None and last[0].shape == y.shape and np.array_equal(last[0], y):
        return last[1]
    rows = None
    if _conditioned_2x2(y):
        y00, y01, y11 = y[:, 0, 0], y[:, 0, 1], y[:, 1, 1]
        det_y = y00 * y11 - y01 * y01
        inv_root = 1.0 / np.sqrt(det_y)
        rows = np.empty((4, y.shape[0]))
        np.multiply(y00, inv_root, out=rows[0])
        np.multiply(y01, inv_root, out=rows[1])
        np.multiply(y11, inv_root, out=rows[2])
        np.log(det_y, out=rows[3])
        rows.flags.writeable = False
    _LAST_RESPONSES[0] = (y.copy(), rows)
    return rows


def _whitening_rows_2x2(c, logdet_p, out):
    r"""Write into ``out[..., :3, :3]`` the map of upper triangles :math:`y \mapsto` entries
    ``[z00, 2 z01, z11]`` of :math:`Z = \sqrt{\det p / 2}\; C^T y C`.

    Scaling by a positive number moves ``logm`` by a multiple of I, so the responses enter as
    :math:`y_i / \sqrt{\det y_i}` (:func:`_unit_responses_2x2`) and :math:`C^T y_i C` is
    multiplied by :math:`\sqrt{\det p}` (``det C^2 = 1 / det p``): the result has determinant
    exactly 1 (then 1/2 with the factor :math:`1/\sqrt2` that :func:`_log_unit_2x2` expects),
    and the caller adds :math:`\frac12(\log\det y_i - \log\det p)` to the logarithm's
    eigenvalues. The small eigenvalue then comes from :math:`\mu_- = 1/\mu_+`, with the
    relative accuracy of :math:`\det y_i`. Each entry is quadratic in C, so C is scaled by
    :math:`(\det p / 2)^{1/4}`.
    """
    c = c * np.exp(0.25 * logdet_p - 0.25 * _LOG2)[..., None, None]
    x0, x1, z0, z1 = c[..., 0, 0], c[..., 1, 0], c[..., 0, 1], c[..., 1, 1]
    out[..., 0, 0] = x0 * x0
    out[..., 0, 1] = 2.0 * x0 * x1
    out[..., 0, 2] = x1 * x1
    out[..., 1, 0] = 2.0 * x0 * z0
    out[..., 1, 1] = 2.0 * (x0 * z1 + x1 * z0)
    out[..., 1, 2] = 2.0 * x1 * z1
    out[..., 2, 0] = z0 * z0
    out[..., 2, 1] = 2.0 * z0 * z1
    out[..., 2, 2] = z1 * z1
    return out


def spd_regression_gradient(p, v, t, y, tau=None, which="both"):
    r"""Closed-form regression gradients on ``SPD(k)`` (see the module docstring).

    Parameters
    ----------
    p, v : array, shape ``(..., k, k)``
        Footpoints and shooting vectors (a batch of candidate fits).
    t : array, shape ``(n,)``
        Covariates.
    y : array, shape ``(n, k, k)``
        Responses.
    tau : float, optional
        Clip each residual to norm ``tau`` (the strict gradient of the sensitivity proof).
    which : {"both", "footpoint", "vector"}
        The gradient not asked for is returned as ``None``.

    Returns
    -------
    (grad_footpoint, grad_vector) : tuple of ndarray or None, each shape ``(..., k, k)``
        The energy's gradients with respect to ``p`` and ``v``, as
        :func:`~dpcore.learning.regression.generic_regression_gradient`; ``None`` (not a
        tuple) where a footpoint, or for k = 2 a response, is not positive definite or has a
        condition number above ``MAX_COND``, so the caller uses the generic path.

    Raises
    ------
    ValueError
        For an unknown ``which``.
    """
    if which not in ("both", "footpoint", "vector"):
        raise ValueError(f"`which` must be 'both', 'footpoint' or 'vector', got {which!r}.")
    p = np.asarray(p, dtype=float)
    v = np.asarray(v, dtype=float)
    p, v = np.broadcast_arrays(p, v)
    # A shooting vector below 1e-150 is 0 to double precision in every term (the transport
    # factors are sinh(t delta)/delta = t (1 + O(delta^2)) and the geodesic moves by t v), but
    # the eigendecomposition of a subnormal W is not accurate (k >= 3 lost 2.5% at 5e-324):
    # such a v is taken as 0.
    v = np.where(np.sqrt(np.sum(v * v, axis=(-2, -1)))[..., None, None] < 1e-150, 0.0, v)
    t = np.asarray(t, dtype=float)
    y = np.asarray(y, dtype=float)
    k = p.shape[-1]
    responses = _unit_responses_2x2(y) if k == 2 else None
    if not _conditioned(p) or (k == 2 and responses is None):
        return None
    b_mat, c, lam, logdet_p = _frame(p, v)
    if k == 2:
        g = _frame_sums_2x2(c, lam, logdet_p, t, responses, tau, which)
    else:
        # C^T y_i C for every (fit, response): (..., d, n).
        g = _frame_sums(lam, _congruence_matrix(c) @ _upper(y).T, t, tau, which)
    scale = -1.0 / t.shape[0]
    out = {part: _to_matrices(b_mat, sums * scale) for part, sums in g.items()}
    return out.get("footpoint"), out.get("vector")


def _frame_sums_2x2(c, lam, logdet_p, t, responses, tau, which):
    r"""The bracketed sums of the module docstring for k = 2, upper triangles ``(..., 3)``.

    With :math:`s = (\lambda_0 + \lambda_1)/2`, :math:`\delta = (\lambda_0 - \lambda_1)/2`
    and :math:`q = e^{-t_i \delta}`, :math:`Z_i = e^{-t_i s} \operatorname{diag}(\sqrt q,
    1/\sqrt q)\, C^T y_i C \operatorname{diag}(\sqrt q, 1/\sqrt q)`, so
    :math:`L_i = a_i I + \operatorname{logm}(Z'_i)` with
    :math:`a_i = \frac12(\log\det y_i - \log\det p) - t_i s` and :math:`Z'_i` of determinant
    1 with entries :math:`(\tilde y_{00} q, \tilde y_{01}, \tilde y_{11}/q)` from the
    normalized whitened responses :math:`\tilde y` (:func:`_whitening_rows_2x2`). One
    ``expm1`` per pair gives :math:`r = q - 1`, :math:`2\cosh(t\delta) = q + 1/q` and
    :math:`2\sinh(t\delta) = -r (1 + 1/q)` (no cancellation for small :math:`t\delta`).
    """
    # One matrix product gives, per (fit, response), the whitened entries, -t delta and 2 a:
    # rows [z00, 2 z01, z11, -t delta, 2a] from [y00, y01, y11, t, log det y, 1], each row a
    # contiguous (fit x response) block (strided views cost half as much again per pass).
    n = t.shape[0]
    basis = np.empty((6, n))
    basis[:3] = responses[:3]
    basis[3], basis[4], basis[5] = t, responses[3], 1.0
    batch = lam.shape[:-1]
    half_gap = 0.5 * (lam[..., 0] - lam[..., 1])
    mat = np.zeros(batch + (5, 6))
    _whitening_rows_2x2(c, logdet_p, mat)
    mat[..., 3, 3] = -half_gap
    mat[..., 4, 3] = -(lam[..., 0] + lam[..., 1])
    mat[..., 4, 4] = 1.0
    mat[..., 4, 5] = -logdet_p
    # One product per row, each a separate (fit x response) array: a single (5 x fits x n)
    # block was measured 4x slower to allocate at 10 x 1000 (fresh pages from the OS each call).
    rows = [mat[..., j, :] @ basis for j in range(5)]
    # The (fit x response) arrays are updated in place: their passes over memory are the cost.
    vector = which in ("both", "vector")
    r, a2 = rows[3], rows[4]
    if vector:
        np.expm1(r, out=r)
        q = r + 1.0
    else:
        q = np.exp(r, out=r)
    q_inv = np.divide(1.0, q)
    z01x2 = rows[1]
    l, b, dd2 = _log_unit_2x2(np.multiply(rows[0], q, out=rows[0]), z01x2,
                              np.multiply(rows[2], q_inv, out=rows[2]))
    if tau is None:
        f = None
    else:
        # |L|_F^2 = 2 a^2 + l^2 / 2 (eigenvalues a +- l/2), so 2 |L|^2 = (2a)^2 + l^2 and the
        # factor min(1, tau / |L|_F) is sqrt(2 tau^2 / max(2 |L|^2, 2 tau^2)).
        f = np.multiply(l, l, out=l)
        f += a2 * a2
        bound = 2.0 * tau * tau
        np.maximum(f, bound, out=f)
        np.divide(bound, f, out=f)
        np.sqrt(f, out=f)
        b *= f
    # Frame entries of c_i L_i: a + b dd2 / 2, b z01x2 / 2, a - b dd2 / 2.
    b_dd = np.multiply(b, dd2, out=dd2)
    b_off = np.multiply(b, z01x2, out=b)
    sums = {}
    if vector:
        # t sinh(t g) / (t g) = sinh(t delta) / delta, and t where delta = 0.
        sinh2 = np.add(q_inv, 1.0)
        sinh2 *= r
        s_off = -0.25 * np.vecdot(b_off, sinh2)
        # Below 1e-150, sinh(t delta)/delta = t (1 + (t delta)^2 / 6) is t to double precision,
        # while t delta itself may underflow: use the flat limit there.
        flat = np.abs(half_gap) < 1e-150
        s_off /= np.where(flat, 1.0, half_gap)
        if np.any(flat):
            s_off = np.where(flat, 0.5 * (b_off @ t), s_off)
        s_a = 0.5 * ((a2 if f is None else a2 * f) @ t)
        sums["vector"] = _diagonal_and_off(s_a, 0.5 * (b_dd @ t), s_off)
    if which in ("both", "footpoint"):
        cosh2 = np.add(q, q_inv, out=q_inv)
        s_off = 0.25 * np.vecdot(b_off, cosh2)
        s_a = 0.5 * (a2.sum(axis=-1) if f is None else np.vecdot(a2, f))
        sums["footpoint"] = _diagonal_and_off(s_a, 0.5 * b_dd.sum(axis=-1), s_off)
    return sums


def _diagonal_and_off(s_a, s_d, s_off):
    """Upper triangle ``[s_a + s_d, s_off, s_a - s_d]`` of a symmetric 2 x 2 matrix."""
    out = np.empty(np.shape(s_a) + (3,))
    np.add(s_a, s_d, out=out[..., 0])
    out[..., 1] = s_off
    np.subtract(s_a, s_d, out=out[..., 2])
    return out


def _frame_sums(lam, white, t, tau, which):
    """The bracketed sums of the module docstring for any k (eigendecompositions of Z_i)."""
    k = lam.shape[-1]
    rows, cols = _triu(k)
    # Z_i = D^{-1} (C^T y_i C) D^{-1}, lower triangle only (all eigh reads).
    half = np.exp(np.multiply.outer(-0.5 * lam, t))                  # (..., k, n)
    z_upper = white * half[..., rows, :] * half[..., cols, :]        # (..., d, n)
    z = np.zeros(z_upper.shape[:-2] + (t.shape[0], k, k))
    z[..., cols, rows] = np.moveaxis(z_upper, -2, -1)
    mu, vecs = eigh(z)
    log_mu = np.log(mu)
    if tau is not None:
        norm = np.sqrt(np.sum(log_mu * log_mu, axis=-1, keepdims=True))
        log_mu *= tau / np.maximum(norm, tau)
    logm = (vecs * log_mu[..., None, :]) @ vecs.mT
    logm = logm[..., rows, cols]                                     # (..., n, d)
    gap = 0.5 * np.abs(lam[..., rows] - lam[..., cols])              # (..., d)
    tg = gap[..., None, :] * t[:, None]                              # (..., n, d)
    sums = {}
    if which in ("both", "vector"):
        safe = np.where(gap > 0.0, gap, 1.0)[..., None, :]
        scale = np.where(gap[..., None, :] > 0.0, np.sinh(tg) / safe, t[:, None])
        sums["vector"] = np.sum(logm * scale, axis=-2)
    if which in ("both", "footpoint"):
        sums["footpoint"] = np.sum(logm * np.cosh(tg), axis=-2)
    return sums


def spd_frechet_gradient(z, points):
    r"""Fréchet-energy gradient :math:`-\frac1n \sum_i \log_z y_i` on ``SPD(k)``.

    One factorization :math:`A A^T = z` per candidate; the logarithms are taken of the whitened
    points :math:`A^{-1} y_i A^{-T}` (closed form for k = 2, see :func:`_whitening_rows_2x2`)
    and averaged before :math:`A \cdot A^T` is applied once.

    Parameters
    ----------
    z : array, shape ``(..., k, k)``
        Candidate means.
    points : array, shape ``(n, k, k)``

    Returns
    -------
    ndarray, shape ``(..., k, k)``, or None
        ``None`` under the conditions of :func:`spd_regression_gradient` (the caller then
        averages the manifold's logarithms).
    """
    z = np.asarray(z, dtype=float)
    points = np.asarray(points, dtype=float)
    k = z.shape[-1]
    n = points.shape[0]
    responses = _unit_responses_2x2(points) if k == 2 else None
    if not _conditioned(z) or (k == 2 and responses is None):
        return None
    a_mat, a_inv_t, logdet_z = _root(z)
    if k == 2:
        rows = _whitening_rows_2x2(a_inv_t, logdet_z, np.empty(z.shape[:-2] + (3, 3)))
        white = rows @ responses[:3]
        _, b, dd2 = _log_unit_2x2(white[..., 0, :], white[..., 1, :], white[..., 2, :])
        s_a = 0.5 * (np.sum(responses[3]) - n * logdet_z)
        s_off = 0.5 * np.vecdot(b, white[..., 1, :])
        mean = _diagonal_and_off(s_a, 0.5 * np.vecdot(b, dd2), s_off)
    else:
        white = _congruence_matrix(a_inv_t) @ _upper(points).T        # (..., d, n)
        rows, cols = _triu(k)
        w = np.zeros(white.shape[:-2] + (n, k, k))
        w[..., cols, rows] = np.moveaxis(white, -2, -1)
        mu, vecs = eigh(w)
        logm = (vecs * np.log(mu)[..., None, :]) @ vecs.mT
        mean = np.sum(logm[..., rows, cols], axis=-2)
    return _to_matrices(a_mat, mean * (-1.0 / n))


@closed_form_regression_gradient.register
def _(manifold: SPD, p, v, t, y, tau=None, which="both"):
    return spd_regression_gradient(p, v, t, y, tau, which)


@closed_form_frechet_gradient.register
def _(manifold: SPD, z, points):
    return spd_frechet_gradient(z, points)
