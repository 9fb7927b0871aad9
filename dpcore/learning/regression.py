"""Geodesic regression (Fletcher 2011) by preconditioned Riemannian gradient descent."""

from __future__ import annotations

import warnings

import numpy as np

from .._validation import check_int, check_positive
from ..manifolds._functions import jacobi_point_scale, jacobi_vector_scale
from ..manifolds.base import CutLocusError
from .frechet import ConvergenceWarning, _check_points, frechet_mean
from .kernels import closed_form_regression_gradient


def _expand_params(manifold, p, v, t):
    """Broadcast parameters with leading batch axes against n covariates.

    Returns base points of shape ``(..., 1, *ps)`` and tangent vectors ``t_i v`` of shape
    ``(..., n, *ps)``.
    """
    axis = -(manifold.point_ndim + 1)
    pb = np.expand_dims(np.asarray(p, dtype=float), axis=axis)
    vb = np.expand_dims(np.asarray(v, dtype=float), axis=axis)
    tb = np.asarray(t, dtype=float).reshape((-1,) + (1,) * manifold.point_ndim)
    return pb, tb * vb, tb


def clip_residuals(manifold, base, residuals, tau):
    """Scale each residual to Riemannian norm at most ``tau`` (no-op if ``tau`` is None)."""
    if tau is None:
        return residuals
    norms = manifold.norm(base, residuals)
    factor = np.minimum(1.0, tau / np.where(norms > 0, norms, 1.0))
    return residuals * manifold.pointwise(factor)


def _residuals(manifold, pred, y, tau):
    """``log_pred y``; with clipping (``tau`` given) a residual on the cut locus counts as 0.

    The direction of such a residual is undefined; the fixed convention keeps every term of the
    clipped gradient at norm <= tau, which is all the sensitivity proof uses, and makes the
    strict mechanisms defined for every data set.
    """
    try:
        return manifold.log(pred, y)
    except CutLocusError:
        if tau is None:
            raise
    pred, y = np.broadcast_arrays(pred, np.asarray(y, dtype=float))
    cut = manifold.dist(pred, y) >= manifold.injectivity_radius - 1e-7
    return manifold.log(pred, np.where(manifold.pointwise(cut), pred, y))


def regression_energy(manifold, p, v, t, y):
    r"""Geodesic regression energy :math:`E(p, v) = \frac{1}{2n} \sum_i d(Exp(p, t_i v), y_i)^2`.

    Parameters
    ----------
    manifold : Manifold
    p : array-like, shape (..., *point_shape)
        Footpoints (leading axes are a batch of parameter values).
    v : array-like, shape (..., *point_shape)
        Shooting vectors, tangent at ``p``.
    t : array-like, shape (n,)
        Covariates (already rescaled).
    y : array-like, shape (n, *point_shape)
        Responses.

    Returns
    -------
    ndarray with the batch shape of ``p``.
    """
    pb, tv, _ = _expand_params(manifold, p, v, t)
    pred = manifold.exp(pb, tv)
    return 0.5 * np.mean(manifold.squared_dist(pred, y), axis=-1)


def regression_gradient(manifold, p, v, t, y, *, tau=None, which="both"):
    r"""Riemannian gradient of the regression energy (paper 002, eqs. 5-8).

    With residuals :math:`\epsilon_i = \log_{\hat y_i} y_i`, :math:`\hat y_i = Exp(p, t_i v)`:
    :math:`\nabla_p E = -\frac1n \sum_i (d_p Exp)^\dagger \epsilon_i` and
    :math:`\nabla_v E = -\frac1n \sum_i t_i (d_v Exp)^\dagger \epsilon_i`.

    Parameters
    ----------
    tau : float, optional
        If given, each residual is clipped to norm ``tau`` first, which bounds the sensitivity
        of the gradient whatever the data.
    which : {"both", "footpoint", "vector"}
        Which gradients are needed. Where a closed-form kernel computes the gradient
        (:func:`dpcore.learning.kernels.closed_form_regression_gradient`) only those are
        computed and the other is ``None``; the generic path always returns both.

    Returns
    -------
    (grad_p, grad_v) : tuple of ndarrays, tangent at ``p``
    """
    if which not in ("both", "footpoint", "vector"):
        raise ValueError(f"`which` must be 'both', 'footpoint' or 'vector', got {which!r}.")
    out = closed_form_regression_gradient(manifold, p, v, t, np.asarray(y, dtype=float), tau,
                                          which)
    if out is not None:
        return out
    return generic_regression_gradient(manifold, p, v, t, y, tau=tau)


def generic_regression_gradient(manifold, p, v, t, y, *, tau=None):
    r""":func:`regression_gradient` from the geometry alone, on every manifold.

    The residuals are transported back along the fitted geodesics by the manifold's adjoint
    Jacobi maps (:meth:`~dpcore.manifolds.Manifold.adjoint_dexp`); no closed-form kernel is
    used.

    Parameters
    ----------
    manifold : Manifold
    p, v : array, shape ``(..., *point_shape)``
        Footpoints and shooting vectors.
    t : array, shape ``(n,)``
    y : array, shape ``(n, *point_shape)``
    tau : float, optional
        Residual clipping bound.

    Returns
    -------
    (grad_p, grad_v) : tuple of ndarray, each shape ``(..., *point_shape)``
    """
    pb, tv, tb = _expand_params(manifold, p, v, t)
    pred = manifold.exp(pb, tv)
    res = clip_residuals(manifold, pred, _residuals(manifold, pred, y, tau), tau)
    adj_p, adj_v = manifold.adjoint_dexp(pb, tv, res)
    axis = -(manifold.point_ndim + 1)
    return -np.mean(adj_p, axis=axis), -np.mean(tb * adj_v, axis=axis)


def gauss_newton_direction(manifold, p, v, t, grad_p, grad_v):
    r"""Solve the Gauss-Newton system of the regression energy for the step ``(dp, dv)``.

    The Jacobian of :math:`\hat y_i = Exp(p, t_i v)`, read in T_p M through parallel transport
    along the fitted geodesic, is
    :math:`(\delta p, \delta v) \mapsto C_i \delta p + t_i S_i \delta v`
    with :math:`C_i, S_i` the Jacobi scalings of the curvature operator of :math:`t_i v`.
    The vectors :math:`t_i v` are collinear, so all these maps share the eigenbasis of
    :math:`u \mapsto R(u, v) v` and the normal equations split into one 2 x 2 system per
    eigen-direction with eigenvalue :math:`\lambda` (curvature times :math:`|v|^2`):
    :math:`H_{11} = \overline{C^2}`, :math:`H_{12} = \overline{t C S}`,
    :math:`H_{22} = \overline{t^2 S^2}` with :math:`C = C(t_i^2 \lambda)`,
    :math:`S = S(t_i^2 \lambda)`. In flat space this is ``[[1, mean t], [mean t, mean t^2]]``
    and one step gives ordinary least squares.
    """
    t = np.asarray(t, dtype=float)
    t2 = t**2

    def blocks(lam):
        lam_t = np.asarray(lam, dtype=float)[..., None] * t2
        c, s = jacobi_point_scale(lam_t), jacobi_vector_scale(lam_t)
        h11 = np.mean(c * c, axis=-1)
        h12 = np.mean(t * c * s, axis=-1)
        h22 = np.mean(t2 * s * s, axis=-1)
        # A tiny Levenberg-Marquardt damping keeps the system solvable at conjugate points.
        damp = 1e-12 * (h11 + h22)
        h11, h22 = h11 + damp, h22 + damp
        return h11, h12, h22, h11 * h22 - h12**2

    def scaled(w, pick):
        return manifold._scale_by_curvature(p, v, w, lambda lam: pick(*blocks(lam)))

    dp = scaled(grad_p, lambda a, b, c, d: c / d) - scaled(grad_v, lambda a, b, c, d: b / d)
    dv = scaled(grad_v, lambda a, b, c, d: a / d) - scaled(grad_p, lambda a, b, c, d: b / d)
    return dp, dv


class GeodesicRegression:
    r"""Least-squares geodesic regression of manifold-valued responses on a real covariate.

    Fits the geodesic :math:`x \mapsto Exp(p, t(x) v)` minimizing
    :math:`E(p, v) = \frac{1}{2n}\sum_i d(Exp(p, t_i v), y_i)^2`, where
    :math:`t(x) = (x - a) / (b - a)` maps the covariate range :math:`[a, b]` to [0, 1].

    Parameters
    ----------
    manifold : Manifold
    covariate_range : tuple of float, optional
        Public range ``(a, b)`` used to rescale covariates; the data's min and max by default.
    tol : float
        Stop when the Riemannian gradient norm :math:`\sqrt{|\nabla_p E|^2 + |\nabla_v E|^2}`
        is below ``tol``.
    max_iter : int
        Maximum number of descent steps.

    Attributes
    ----------
    footpoint_ : ndarray
        :math:`p`, the fitted point at ``t = 0``, i.e. at covariate ``a``.
    shooting_vector_ : ndarray
        :math:`v`, tangent at ``footpoint_``: the velocity per unit ``t``.
    intercept_ : ndarray
        The fitted point at covariate 0 in original units.
    coef_ : ndarray
        Tangent vector at ``intercept_``: velocity per unit of the original covariate, so that
        ``predict(x) = Exp(intercept_, x * coef_)``.
    covariate_range_ : tuple of float
    n_iter_ : int
    converged_ : bool
    grad_norm_ : float
    energy_ : float

    Notes
    -----
    Steps follow the Gauss-Newton direction of :func:`gauss_newton_direction` (exact Jacobi
    fields, so one step reaches ordinary least squares in flat space and convergence is fast
    for small residuals); they are taken along geodesics with the shooting vector parallel
    transported, and halved until the energy decreases (Armijo).
    """

    def __init__(self, manifold, *, covariate_range=None, tol=1e-10, max_iter=500):
        self.manifold = manifold
        self.covariate_range = covariate_range
        self.tol = tol
        self.max_iter = max_iter

    # ----------------------------------------------------------------- scaling
    def _rescale(self, x):
        a, b = self.covariate_range_
        return (np.asarray(x, dtype=float) - a) / (b - a)

    def _init_params(self, t, y):
        """Ordinary least squares in the tangent space at the Fréchet mean of the responses."""
        m = self.manifold
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            try:
                center = frechet_mean(m, y, tol=1e-6, max_iter=100)
            except ValueError as exc:
                raise ValueError(f"Geodesic regression cannot start: {exc}") from exc
        try:
            logs = m.log(center, y)
        except CutLocusError as exc:
            raise ValueError(
                f"Observation(s) {_conjugate_rows(m, center, y)} (0-based) lie in the cut locus "
                "of the responses' Fréchet mean (e.g. antipodal to it on the sphere): the "
                "starting geodesic is undefined; remove or correct them."
            ) from exc
        tb = t.reshape((-1,) + (1,) * m.point_ndim)
        t_mean = t.mean()
        slope = np.sum((tb - t_mean) * (logs - logs.mean(axis=0)), axis=0) / np.sum(
            (t - t_mean) ** 2
        )
        offset = logs.mean(axis=0) - t_mean * slope
        p = m.exp(center, offset)
        v = m.proj_tangent(p, m.transport(center, p, slope))
        return p, v

    def fit(self, x, y):
        """Fit the geodesic.

        Parameters
        ----------
        x : array-like, shape (n,)
            Real covariates (at least two distinct values).
        y : array-like, shape (n, *point_shape)
            Responses on the manifold.

        Returns
        -------
        self
        """
        m = self.manifold
        y = _check_points(m, y, "y")
        x = np.asarray(x, dtype=float)
        if x.ndim != 1 or x.shape[0] != y.shape[0]:
            raise ValueError(f"`x` must have shape ({y.shape[0]},), got {x.shape}.")
        if not np.all(np.isfinite(x)):
            raise ValueError("`x` contains NaN or infinite values.")
        tol = check_positive(self.tol, "tol")
        max_iter = check_int(self.max_iter, "max_iter", minimum=0)
        if self.covariate_range is None:
            a, b = float(x.min()), float(x.max())
            if not b > a:
                raise ValueError(
                    "`x` is constant: geodesic regression needs two distinct covariates."
                )
        else:
            a, b = map(float, self.covariate_range)
            if not b > a:
                raise ValueError(f"`covariate_range` must satisfy a < b, got {(a, b)}.")
        self.covariate_range_ = (a, b)
        t = self._rescale(x)
        if np.ptp(t) == 0:
            raise ValueError("`x` is constant: geodesic regression needs two distinct covariates.")

        eps = np.finfo(float).eps
        p, v = self._init_params(t, y)
        energy = float(regression_energy(m, p, v, t, y))
        try:
            gp, gv = regression_gradient(m, p, v, t, y)
        except CutLocusError as exc:
            pred = m.exp(p, m.pointwise(t) * v)
            raise ValueError(
                f"Observation(s) {_conjugate_rows(m, pred, y)} (0-based) lie in the cut locus "
                "of the starting geodesic's prediction (e.g. antipodal to it on the sphere), "
                "where the residual direction is undefined: remove or correct them."
            ) from exc
        gnorm = float(np.sqrt(m.norm(p, gp) ** 2 + m.norm(p, gv) ** 2))
        n_iter = 0
        while gnorm >= tol and n_iter < max_iter:
            dp, dv = gauss_newton_direction(m, p, v, t, gp, gv)
            slope = float(m.inner(p, gp, dp) + m.inner(p, gv, dv))
            h = 1.0
            while True:
                p_new = m.exp(p, -h * dp)
                v_new = m.proj_tangent(p_new, m.transport(p, p_new, v - h * dv))
                e_new = float(regression_energy(m, p_new, v_new, t, y))
                if e_new <= energy - 1e-4 * h * slope + 8 * eps * abs(energy):
                    try:
                        g_new = regression_gradient(m, p_new, v_new, t, y)
                        break
                    except CutLocusError:
                        pass  # a response is conjugate to its new prediction: shorter step
                h *= 0.5
                if h < 1e-10:
                    break
            if h < 1e-10:
                break
            p, v, energy = p_new, v_new, e_new
            gp, gv = g_new
            gnorm = float(np.sqrt(m.norm(p, gp) ** 2 + m.norm(p, gv) ** 2))
            n_iter += 1

        self.footpoint_, self.shooting_vector_ = p, v
        self.energy_, self.grad_norm_, self.n_iter_ = energy, gnorm, n_iter
        self.converged_ = gnorm < tol
        if not self.converged_:
            warnings.warn(
                f"GeodesicRegression stopped after {n_iter} iterations with gradient norm "
                f"{gnorm:.2e} (tol={tol:.0e}).",
                ConvergenceWarning,
                stacklevel=2,
            )
        # Reparametrize the same geodesic by the original covariate.
        self.intercept_ = m.exp(p, (-a / (b - a)) * v)
        self.coef_ = m.transport(p, self.intercept_, v) / (b - a)
        return self

    def _check_fitted(self):
        if not hasattr(self, "footpoint_"):
            raise RuntimeError("This GeodesicRegression is not fitted yet; call fit(x, y) first.")

    def predict(self, x):
        """Points on the fitted geodesic at covariates ``x`` (original units), shape (n, *ps)."""
        self._check_fitted()
        t = np.atleast_1d(self._rescale(x))
        m = self.manifold
        tb = t.reshape(t.shape + (1,) * m.point_ndim)
        return m.exp(self.footpoint_, tb * self.shooting_vector_)

    def mse(self, x, y):
        """Mean squared geodesic error (1/n) sum_i d(prediction_i, y_i)^2."""
        return float(
            np.mean(self.manifold.squared_dist(self.predict(x), np.asarray(y, dtype=float)))
        )

    def r2_score(self, x, y):
        """Fletcher's R^2: 1 - sum d(pred, y)^2 / sum d(mean, y)^2 with the Fréchet mean."""
        y = np.asarray(y, dtype=float)
        center = frechet_mean(self.manifold, y)
        total = np.sum(self.manifold.squared_dist(center, y))
        return 1.0 - self.mse(x, y) * y.shape[0] / total


def _conjugate_rows(manifold, a, b):
    """Indices i where ``log(a_i, b_i)`` is undefined (cut locus), for error messages."""
    a = np.broadcast_to(np.asarray(a, dtype=float), np.shape(b))
    rows = []
    for i in range(np.shape(b)[0]):
        try:
            manifold.log(a[i], b[i])
        except CutLocusError:
            rows.append(i)
    return rows
