"""Closed-form regression gradient on ``Sphere(d)``."""

from __future__ import annotations

import numpy as np

from ...manifolds import CutLocusError, Sphere
from ...manifolds._functions import rowdot
from ...manifolds.sphere import CUT_TOL
from ._dispatch import closed_form_regression_gradient

__all__ = ["sphere_regression_gradient"]


def sphere_regression_gradient(p, v, t, y, tau=None, which="both"):
    r"""Closed-form regression gradients on ``Sphere(d)``, O(batch x n) scalars plus two
    matrix products.

    With u = v/|v|, rho_i = t_i |v|, P_i = <p, y_i>, U_i = <u, y_i>, the prediction is
    cos(rho_i) p + sin(rho_i) u and the residual eps_i = f_i (y_i - c_i yhat_i) with
    c_i = <yhat_i, y_i>, f_i = theta_i / sin(theta_i). Its part along the geodesic's end
    velocity e_i is a_i e_i, a_i = f_i (cos(rho_i) U_i - sin(rho_i) P_i), and the rest is
    f_i (y_i - P_i p - U_i u) (y_i with its component in the plane of the great circle
    removed). The adjoint Jacobi maps send a_i e_i to a_i u and scale the rest by
    cos(rho_i) (footpoint) or sin(rho_i)/rho_i (shooting vector) (paper 002 eqs. 5-8, 15, 40).

    Parameters
    ----------
    p, v : array, shape ``(..., d + 1)``
        Footpoints and shooting vectors (a batch of candidate fits).
    t : array, shape ``(n,)``
        Covariates.
    y : array, shape ``(n, d + 1)``
        Responses.
    tau : float, optional
        Clip each residual to norm ``tau`` (the strict gradient of the sensitivity proof).
    which : {"both", "footpoint", "vector"}
        The gradient not asked for is returned as ``None`` (the samplers need one of them
        per step).

    Returns
    -------
    (grad_footpoint, grad_vector) : tuple of ndarray or None, each shape ``(..., d + 1)``
        The energy's gradients with respect to ``p`` and ``v``; ``None`` (not a tuple) when
        some ``|v|`` is 0 (``u`` undefined), so the caller uses the generic path.

    Raises
    ------
    ValueError
        For an unknown ``which``.
    CutLocusError
        If a response is antipodal to its prediction and ``tau`` is None.
    """
    if which not in ("both", "footpoint", "vector"):
        raise ValueError(f"`which` must be 'both', 'footpoint' or 'vector', got {which!r}.")
    p = np.asarray(p, dtype=float)
    v = np.asarray(v, dtype=float)
    p, v = np.broadcast_arrays(p, v)
    nv = np.sqrt(rowdot(v, v))
    if not np.all(nv > 1e-12):
        return None
    u = v / nv[..., None]
    t = np.asarray(t, dtype=float)
    n = t.shape[0]
    # Every (batch x n) array below is updated in place: at the samplers' sizes the cost is
    # memory traffic, not arithmetic.
    # cos and sin from h = tan(rho/2): numpy's float64 tan is vectorized and several times
    # faster than its cos and sin. cos = 2/(1+h^2) - 1 and sin = 2h/(1+h^2) keep an
    # absolute error of a few ulp for every rho, also where h overflows past 1e16 near pi.
    h = np.multiply.outer(0.5 * nv, t)
    np.tan(h, out=h)
    cr = np.multiply(h, h)
    cr += 1.0
    np.divide(2.0, cr, out=cr)
    sr = h
    sr *= cr
    cr -= 1.0
    big_p = p @ y.T
    big_u = u @ y.T
    c = cr * big_p
    tmp = sr * big_u
    c += tmp                                      # <yhat_i, y_i>
    ye = np.multiply(cr, big_u, out=big_u)
    np.multiply(sr, big_p, out=tmp)
    ye -= tmp                                     # <e_i, y_i>
    s = np.multiply(c, c, out=tmp)
    np.subtract(1.0, s, out=s)
    np.maximum(s, 0.0, out=s)
    np.sqrt(s, out=s)
    theta = np.arctan2(s, c, out=c)
    cut = None
    if theta.size and theta.max() > np.pi - CUT_TOL:
        if tau is None:
            raise CutLocusError("log is undefined for antipodal points on the sphere.")
        # Clipped (strict) gradient: a residual whose direction is undefined counts as 0,
        # a fixed convention that keeps every term's norm <= tau (the sensitivity proof).
        cut = theta > np.pi - CUT_TOL
    # f_i = theta_i / sin(theta_i), times min(1, tau/theta_i) when clipping: that is
    # min(theta_i, tau) / sin(theta_i). theta = s = 0 only where y_i is the prediction and
    # the residual vanishes whatever f_i is.
    if tau is not None:
        np.minimum(theta, tau, out=theta)
    np.maximum(s, 1e-300, out=s)
    f = np.divide(theta, s, out=s)
    if cut is not None:
        f[cut] = 0.0
    # Gradient = (<p, W> p + (<u, W> - sum_i w_par_i) u - W) / n with W = sum_i w_perp_i y_i,
    # since sum_i w_perp_i P_i = <p, W> and sum_i w_perp_i U_i = <u, W>. Footpoint weights:
    # w_perp = f cos rho, w_par = f <e, y>; vector weights: t f sin(rho)/rho = f sin(rho)/|v|
    # and t f <e, y>.
    grads = {}
    if which in ("both", "vector"):
        w_par = np.einsum("...i,...i,i->...", f, ye, t)
        big_w = ((sr * f) @ y) / nv[..., None]
        grads["vector"] = _assemble_gradient(p, u, big_w, w_par, n)
    if which in ("both", "footpoint"):
        w_par = np.einsum("...i,...i->...", f, ye)
        np.multiply(cr, f, out=cr)
        grads["footpoint"] = _assemble_gradient(p, u, cr @ y, w_par, n)
    return grads.get("footpoint"), grads.get("vector")


def _assemble_gradient(p, u, big_w, w_par, n):
    """``(<p, W> p + (<u, W> - w_par) u - W) / n``: a gradient from its weighted sums."""
    along_p = rowdot(p, big_w, keepdims=True)
    along_u = rowdot(u, big_w, keepdims=True) - w_par[..., None]
    return (along_p * p + along_u * u - big_w) / n


@closed_form_regression_gradient.register
def _(manifold: Sphere, p, v, t, y, tau=None, which="both"):
    return sphere_regression_gradient(p, v, t, y, tau, which)
