r"""Closed-form regression gradient on :math:`\mathbb{R}^d` (linear regression).

The exponential map is :math:`\mathrm{Exp}_p(t v) = p + t v`, the logarithm a difference and
the adjoint Jacobi maps the identity, so with residuals :math:`r_i = y_i - p - t_iv`, clipped
to norm :math:`\tau`, the gradient of the regression energy is
:math:`\nabla_p E = -\frac1n\sum_i \psi(r_i)`, :math:`\nabla_v E = -\frac1n\sum_i t_i\psi(r_i)`
with :math:`\psi(r) = r\min(1, \tau/|r|)`: the generic path's result without its temporaries
(agreement tested in ``tests/learning/test_kernels_euclidean.py``).
"""

from __future__ import annotations

import numpy as np

from ...manifolds import Euclidean
from ._dispatch import closed_form_regression_gradient

__all__ = ["euclidean_regression_gradient"]


def euclidean_regression_gradient(p, v, t, y, tau=None, which="both"):
    """Clipped regression gradients on R^d (module docstring).

    Parameters
    ----------
    p, v : array, shape ``(..., d)``
    t : array, shape ``(n,)``
    y : array, shape ``(n, d)``
    tau : float, optional
    which : {"both", "footpoint", "vector"}

    Returns
    -------
    (grad_p, grad_v) : tuple of ndarray (``None`` for the one not asked for)
    """
    p = np.asarray(p, dtype=float)
    v = np.asarray(v, dtype=float)
    t = np.asarray(t, dtype=float).reshape(-1)
    y = np.asarray(y, dtype=float)
    n = t.size
    want_p, want_v = which in ("both", "footpoint"), which in ("both", "vector")
    same = p.shape == v.shape  # the residuals' shape: subtract in place
    if y.shape[-1] == 1:
        # One response: residuals (..., n) without a size-1 axis.
        r = y[:, 0] - p[..., :1]
        r = r.__isub__(t * v[..., :1]) if same else r - t * v[..., :1]
        if tau is not None:
            a = np.abs(r)
            r *= np.minimum(1.0, tau / np.where(a > 0, a, 1.0))
        grad_p = -r.sum(axis=-1, keepdims=True) / n if want_p else None
        grad_v = -(r @ t)[..., None] / n if want_v else None
        return grad_p, grad_v
    r = y - p[..., None, :]
    r = r.__isub__(t[:, None] * v[..., None, :]) if same else r - t[:, None] * v[..., None, :]
    if tau is not None:
        sq = np.einsum("...nd,...nd->...n", r, r)
        r *= np.minimum(1.0, tau / np.sqrt(np.where(sq > 0, sq, 1.0)))[..., None]
    grad_p = -r.sum(axis=-2) / n if want_p else None
    grad_v = -np.einsum("...nd,n->...d", r, t) / n if want_v else None
    return grad_p, grad_v


@closed_form_regression_gradient.register
def _(manifold: Euclidean, p, v, t, y, tau=None, which="both"):
    return euclidean_regression_gradient(p, v, t, y, tau, which)
