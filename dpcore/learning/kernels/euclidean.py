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
    r = y - (p[..., None, :] + t[:, None] * v[..., None, :])
    if tau is not None:
        norm = np.sqrt(np.sum(r * r, axis=-1))
        r = r * np.minimum(1.0, tau / np.where(norm > 0, norm, 1.0))[..., None]
    grad_p = -np.mean(r, axis=-2) if which in ("both", "footpoint") else None
    grad_v = -np.mean(t[:, None] * r, axis=-2) if which in ("both", "vector") else None
    return grad_p, grad_v


@closed_form_regression_gradient.register
def _(manifold: Euclidean, p, v, t, y, tau=None, which="both"):
    return euclidean_regression_gradient(p, v, t, y, tau, which)
