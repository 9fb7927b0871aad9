"""Fréchet (Karcher) mean by Riemannian gradient descent."""

from __future__ import annotations

import warnings

import numpy as np

from .._validation import check_int, check_manifold, check_positive
from ..exceptions import ConvergenceWarning, CutLocusError
from .kernels import closed_form_frechet_gradient


def _check_points(manifold, points, name="points"):
    check_manifold(manifold)
    points = np.asarray(points, dtype=float)
    if points.shape[1:] != manifold.point_shape:
        raise ValueError(
            f"`{name}` must have shape (n, {', '.join(map(str, manifold.point_shape))}) for "
            f"{manifold!r}, got {points.shape}."
        )
    if points.shape[0] < 1:
        raise ValueError(f"`{name}` must hold at least one point.")
    if not np.all(np.isfinite(points)):
        raise ValueError(f"`{name}` contains NaN or infinite values.")
    return points


def frechet_energy(manifold, z, points):
    """F(z) = (1 / 2n) sum_i d(z, y_i)^2 (batched over leading axes of ``z``)."""
    z = np.asarray(z, dtype=float)
    zb = np.expand_dims(z, axis=-(manifold.point_ndim + 1))
    return 0.5 * np.mean(manifold.squared_dist(zb, points), axis=-1)


def frechet_mean_gradient(manifold, z, points):
    """Riemannian gradient of the Fréchet energy: -(1/n) sum_i log_z y_i.

    ``z`` may carry leading batch axes; ``points`` has shape ``(n, *point_shape)``. Where a
    closed-form kernel exists (:func:`dpcore.learning.kernels.closed_form_frechet_gradient`)
    it computes the gradient.
    """
    z = np.asarray(z, dtype=float)
    out = closed_form_frechet_gradient(manifold, z, np.asarray(points, dtype=float))
    if out is not None:
        return out
    zb = np.expand_dims(z, axis=-(manifold.point_ndim + 1))
    return -np.mean(manifold.log(zb, points), axis=-(manifold.point_ndim + 1))


def frechet_mean(
    manifold, points, *, weights=None, tol=1e-10, max_iter=1000, init=None, return_info=False
):
    """Fréchet mean: the minimizer of (1/2n) sum_i d(z, y_i)^2.

    Gradient descent ``z <- exp_z(h * mean_i log_z y_i)`` with ``h = 1`` (Newton's step in flat
    space) halved whenever the energy would rise, until the Riemannian gradient norm is below
    ``tol``. In Euclidean space the mean is returned in closed form.

    Parameters
    ----------
    manifold : Manifold
    points : array-like, shape (n, *point_shape)
    weights : array-like, shape (n,), optional
        Non-negative weights (normalized internally).
    tol : float
        Stop when ``|grad F(z)| < tol``.
    max_iter : int
    init : array-like, optional
        Starting point. By default the first data point from which every data point has a
        logarithm (on the sphere: no data point antipodal to it); the first 64 are tried.
    return_info : bool
        Also return a dict with ``n_iter``, ``grad_norm`` and ``converged``.

    Returns
    -------
    mean : ndarray, shape point_shape
    info : dict, only if ``return_info``

    Raises
    ------
    ValueError
        If no start point works: every candidate is in the cut locus of some data point (e.g.
        only pairs of antipodal points on the sphere, whose Fréchet mean is not unique).

    Warns
    -----
    ConvergenceWarning
        If ``max_iter`` iterations did not reach ``tol``.
    """
    points = _check_points(manifold, points)
    tol = check_positive(tol, "tol")
    max_iter = check_int(max_iter, "max_iter", minimum=0)
    n = points.shape[0]
    if weights is None:
        w = np.full(n, 1.0 / n)
    else:
        w = np.asarray(weights, dtype=float)
        if w.shape != (n,) or np.any(w < 0) or not np.all(np.isfinite(w)) or w.sum() <= 0:
            raise ValueError("`weights` must be n finite non-negative numbers with a positive sum.")
        w = w / w.sum()
    wb = w.reshape((n,) + (1,) * manifold.point_ndim)

    def energy_grad(z):
        logs = manifold.log(z, points)
        return 0.5 * np.sum(w * manifold.squared_dist(z, points)), -np.sum(wb * logs, axis=0)

    if manifold.is_linear:  # the mean is the weighted average
        z = np.sum(wb * points, axis=0)
        info = {"n_iter": 0, "grad_norm": 0.0, "converged": True}
        return (z, info) if return_info else z

    z, energy, grad = _start(manifold, points, init, energy_grad)
    gnorm = float(manifold.norm(z, grad))
    n_iter = 0
    while gnorm >= tol and n_iter < max_iter:
        h = 1.0
        while True:
            cand = manifold.exp(z, -h * grad)
            try:
                cand_energy, cand_grad = energy_grad(cand)
            except CutLocusError:
                # The step landed where some data point is conjugate (its log is undefined):
                # reject it like a step that raises the energy.
                cand_energy, cand_grad = np.inf, None
            # Armijo with a relative slack of a few ulps so steps near the optimum, whose
            # decrease is below floating-point resolution of F, are still taken.
            if cand_energy <= energy - 1e-4 * h * gnorm**2 + 8 * np.finfo(float).eps * abs(energy):
                break
            h *= 0.5
            if h < 1e-12:
                break
        if h < 1e-12:
            break
        z, energy, grad = cand, cand_energy, cand_grad
        gnorm = float(manifold.norm(z, grad))
        n_iter += 1
    converged = gnorm < tol
    if not converged:
        warnings.warn(
            f"frechet_mean stopped after {n_iter} iterations with gradient norm {gnorm:.2e} "
            f"(tol={tol:.0e}).",
            ConvergenceWarning,
            stacklevel=2,
        )
    info = {"n_iter": n_iter, "grad_norm": gnorm, "converged": converged}
    return (z, info) if return_info else z


#: Data points tried as start points of the Fréchet mean iteration.
_MAX_STARTS = 64


def _start(manifold, points, init, energy_grad):
    """``(z, energy, gradient)`` at the first usable start point (see :func:`frechet_mean`)."""
    if init is not None:
        z = np.asarray(init, dtype=float).copy()
        try:
            return (z, *energy_grad(z))
        except CutLocusError as exc:
            raise ValueError(
                "`init` is in the cut locus of a data point (e.g. antipodal to it on the "
                "sphere): the gradient of the Fréchet energy is undefined there."
            ) from exc
    for z in points[:_MAX_STARTS]:
        try:
            return (z.copy(), *energy_grad(z))
        except CutLocusError:
            continue
    raise ValueError(
        "The Fréchet mean is not defined by this data: every data point tried as a start lies "
        "in the cut locus of another (e.g. antipodal points on the sphere), so the mean is not "
        "unique. Remove antipodal pairs or restrict the data to a ball of radius below half the "
        "injectivity radius."
    )
