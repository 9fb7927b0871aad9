"""The dispatcher of the closed-form estimator kernels (one registration per space)."""

from __future__ import annotations

import functools

__all__ = ["closed_form_frechet_gradient", "closed_form_regression_gradient"]


@functools.singledispatch
def closed_form_regression_gradient(manifold, p, v, t, y, tau=None, which="both"):
    r"""Regression gradients of ``manifold`` from a closed-form kernel, or ``None``.

    A space with a closed form registers it here (``functools.singledispatch`` on the
    manifold's class, in the kernel's own module); :func:`dpcore.learning.regression_gradient`
    falls back to the generic path (adjoint Jacobi maps) where this returns ``None``.

    Parameters
    ----------
    manifold : Manifold
    p, v : array, shape ``(..., *point_shape)``
        Footpoints and shooting vectors (a batch of candidate fits).
    t : array, shape ``(n,)``
        Covariates.
    y : array, shape ``(n, *point_shape)``
        Responses (float).
    tau : float, optional
        Residual clipping bound.
    which : {"both", "footpoint", "vector"}
        The gradient not asked for may be returned as ``None``.

    Returns
    -------
    (grad_p, grad_v) : tuple of ndarray or None, or None
        ``None`` when no kernel applies (this space, or this input, e.g. ``|v| = 0``).
    """
    return None


@functools.singledispatch
def closed_form_frechet_gradient(manifold, z, points):
    r"""Gradient of the Fréchet energy, :math:`-\frac1n \sum_i \log_z y_i`, from a closed-form
    kernel, or ``None``.

    A space with a closed form registers it here (in the kernel's own module);
    :func:`dpcore.learning.frechet.frechet_mean_gradient` falls back to the manifold's ``log``
    where this returns ``None``.

    Parameters
    ----------
    manifold : Manifold
    z : array, shape ``(..., *point_shape)``
        Points at which the gradient is wanted (leading batch axes).
    points : array, shape ``(n, *point_shape)``
        The data (float).

    Returns
    -------
    ndarray, shape ``(..., *point_shape)``, or None
    """
    return None
