r"""Accuracy before release for linear regression on R^d (:mod:`dpcore.release.accuracy`).

:func:`predict_linear_regression_error` predicts the excess mean squared error of a strict
joint release of private geodesic regression on :class:`~dpcore.manifolds.Euclidean` from
public inputs only, by importance sampling of the exact KNG target of a model data set (a
defensive mixture of the unclipped K-norm law and the uniform law on the support);
:func:`smallest_linear_regression_epsilon` searches the smallest ε that meets a target.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .._validation import check_int, check_positive
from ..learning.regression import regression_gradient
from ..manifolds import Euclidean
from ..sampling.radial import log_euclidean_ball_volume
from ._accuracy_common import (
    _TERMS_PER_BATCH,
    MIN_ESS,
    _model_data,
    _smallest_epsilon,
    _weighted_quantiles,
)
from .regression import private_geodesic_regression

__all__ = ["LINEAR_MODEL_POINTS", "LINEAR_PROPOSALS", "LINEAR_UNIFORM_SHARE",
           "predict_linear_regression_error", "smallest_linear_regression_epsilon"]

#: Proposals of :func:`predict_linear_regression_error`.
LINEAR_PROPOSALS = 20_000
#: Most model covariates evaluated per proposal (above it, an evenly spread grid of this size
#: stands for the ``n`` covariates: the gradient is their mean, see
#: :func:`predict_linear_regression_error`).
LINEAR_MODEL_POINTS = 500
#: Share of the proposals drawn uniformly on the support (defensive mixture).
LINEAR_UNIFORM_SHARE = 0.2


def _uniform_in_ball(gen, size, d, radius):
    u = gen.standard_normal((size, d))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    return u * (radius * gen.random(size) ** (1.0 / d))[:, None]


def _linear_record(n, d, epsilon, tau, tau_m, max_speed):
    """The record (σ, supports) of a strict joint release of the model data on R^d."""
    m = Euclidean(d)
    t, y = _model_data(m, n, np.zeros(d))
    with warnings.catch_warnings():
        # Only the record is read (σ and supports): a 2-step chain, never published.
        warnings.simplefilter("ignore")
        return private_geodesic_regression(
            m, t, y, eps_p=0.5 * epsilon, eps_v=0.5 * epsilon, tau=tau,
            covariate_range=(0.0, 1.0), tau_m=tau_m, center=np.zeros(d), max_speed=max_speed,
            scheme="joint", sampler="mcmc", chain_length=2, burn_in=0, rng=0)


def predict_linear_regression_error(n, d, *, epsilon, tau, tau_m, max_speed=None,
                                    proposals=LINEAR_PROPOSALS, min_ess=MIN_ESS,
                                    model_points=LINEAR_MODEL_POINTS, rng=0):
    r"""Predicted excess mean squared error of a strict joint release of linear regression
    (private geodesic regression on R^d), from public inputs only.

    The unit is the one a linear-regression page reports: the mean squared error of the
    private lines on the data minus that of least squares, averaged over the ``d`` responses.
    For lines :math:`a + x b` off the least-squares fit by :math:`(\Delta a, \Delta b)` the
    residuals of least squares are orthogonal to :math:`(1, x)`, so the excess is exactly
    :math:`\frac{1}{nd}\sum_i \|\Delta a + x_i \Delta b\|^2`, which does not depend on the
    responses' noise; in the rescaled covariate :math:`t \in [0, 1]` it is
    :math:`\frac1d (\|\Delta p\|^2 + 2\bar t\,\Delta p\cdot\Delta v + \overline{t^2}
    \|\Delta v\|^2)`.

    **Model data.** The excess depends on where the covariates lie in the public range, which
    is not public: the prediction is for ``n`` covariates evenly spread over it
    (``t_k = (k + 1/2)/n``) and every response at the public centre, so that the fit is
    :math:`(c, 0)` and the KNG target is :math:`f(z) \propto e^{-\|\nabla E(z)\|/\sigma}` on
    the release's support (footpoint ball, speed bound), with residuals clipped to ``tau``.
    Data bunched in part of the range have larger errors (the excess grows like the trace of
    the inverse of the covariates' second-moment matrix); responses whose noise is small
    against ``tau`` barely change the target.

    **Law.** Without clipping the gradient is affine, :math:`\nabla E = (A \otimes I_d)
    (z - \hat z)` with :math:`A = \frac1n\sum_k (1, t_k)^\top (1, t_k)`, and
    :math:`u = (A \otimes I_d)(z - \hat z)` has the K-norm law
    :math:`\propto e^{-\|u\|/\sigma}` on :math:`\mathbb R^{2d}` (radius Gamma(2d, σ), direction
    uniform). Clipping flattens the target far from the fit, so the exact target is estimated
    by self-normalized importance sampling from the defensive mixture of that K-norm law
    (share ``1 - LINEAR_UNIFORM_SHARE``) and the uniform law on the support, both with known
    normalized densities; the precision is stated by the effective sample size. Above
    ``model_points`` covariates, an evenly spread grid of ``model_points`` stands for the
    ``n`` (the gradient is a mean over the covariates: the midpoint rule of the same
    integral, whose difference is :math:`O(1/m^2)` against a σ of order :math:`1/n`); σ and
    the supports are those of ``n``.

    Parameters
    ----------
    n : int
        Rows of the release (public: the release states it).
    d : int
        Number of responses.
    epsilon : float
        Budget of the release, ``eps_p + eps_v`` (the joint scheme uses only their sum).
    tau, tau_m, max_speed
        The release's public bounds, as for
        :func:`~dpcore.release.private_geodesic_regression` (the covariate range does not
        enter: the excess is the same in every covariate unit).
    proposals : int
    min_ess : float
        Smallest effective sample size for which a prediction is given.
    model_points : int
        Most model covariates evaluated per proposal.
    rng : int
        Seed (fixed by default: the same inputs give the same prediction).

    Returns
    -------
    dict
        ``available``, ``ess``, ``sigma``, ``epsilon``, ``model`` (a sentence) and, when
        available, ``median`` and ``q95`` (the 95% radius) of the excess mean squared error,
        else ``reason``.
    """
    n = check_int(n, "n", minimum=3)
    d = check_int(d, "d")
    epsilon = check_positive(epsilon, "epsilon")
    tau = check_positive(tau, "tau")
    tau_m = check_positive(tau_m, "tau_m")
    proposals = check_int(proposals, "proposals")
    rec = _linear_record(n, d, epsilon, tau, tau_m, max_speed)
    sigma = float(rec.sigma["joint"])
    r_p = float(rec.assumptions["footpoint_support"]["value"])
    r_v = float(rec.assumptions["max_speed"]["value"])
    m = Euclidean(d)
    grid = min(n, check_int(model_points, "model_points"))
    t, y = _model_data(m, grid, np.zeros(d))
    a = np.array([[1.0, t.mean()], [t.mean(), np.mean(t**2)]])
    a_inv = np.linalg.inv(a)
    k = 2 * d
    # log of the K-norm density of z (change of variables u = (A x I_d) z, |det| = det(A)^d)
    log_norm = (d * math.log(np.linalg.det(a)) - math.log(2.0) - 0.5 * k * math.log(math.pi)
                + math.lgamma(0.5 * k) - math.lgamma(k) - k * math.log(sigma))
    log_unif = -(log_euclidean_ball_volume(d, r_p) + log_euclidean_ball_volume(d, r_v))
    share = LINEAR_UNIFORM_SHARE
    gen = np.random.default_rng(rng)
    batch = max(256, _TERMS_PER_BATCH // (grid * d))
    log_w, excess = [], []
    for start in range(0, proposals, batch):
        size = min(batch, proposals - start)
        u = gen.standard_normal((size, k))
        u *= (gen.gamma(k, sigma, size) / np.linalg.norm(u, axis=1))[:, None]
        z = np.einsum("ij,bjd->bid", a_inv, u.reshape(size, 2, d))
        uniform = gen.random(size) < share
        z[uniform, 0] = _uniform_in_ball(gen, int(uniform.sum()), d, r_p)
        z[uniform, 1] = _uniform_in_ball(gen, int(uniform.sum()), d, r_v)
        p, v = z[:, 0], z[:, 1]
        au = np.einsum("ij,bjd->bid", a, z).reshape(size, k)
        log_q = np.logaddexp(math.log1p(-share) + log_norm - np.linalg.norm(au, axis=1) / sigma,
                             math.log(share) + log_unif)
        gp, gv = regression_gradient(m, p, v, t, y, tau=tau)
        g = np.sqrt(np.sum(gp**2, axis=1) + np.sum(gv**2, axis=1))
        inside = (np.linalg.norm(p, axis=1) <= r_p) & (np.linalg.norm(v, axis=1) <= r_v)
        log_w.append(np.where(inside, -g / sigma - log_q, -np.inf))
        excess.append((np.sum(p**2, axis=1) + 2.0 * a[0, 1] * np.sum(p * v, axis=1)
                       + a[1, 1] * np.sum(v**2, axis=1)) / d)
    log_w = np.concatenate(log_w)
    w = np.exp(log_w - log_w.max())
    ess = float(w.sum() ** 2 / np.sum(w**2))
    spread = (f"{n} covariates evenly spread over the covariate range" if grid == n else
              f"{n} covariates evenly spread over the covariate range (a grid of {grid} "
              "standing for them)")
    out = {"available": ess >= min_ess, "ess": ess, "sigma": sigma, "epsilon": epsilon,
           "model": (f"exact KNG target of a model data set ({spread}, responses at the "
                     f"public centre), by importance sampling of {proposals:,} proposals "
                     f"(effective sample size {ess:,.0f})")}
    if not out["available"]:
        out["reason"] = (f"the importance sampler's effective sample size is {ess:.0f} < "
                         f"{min_ess:g}: no reliable prediction")
        return out
    out["median"], out["q95"] = _weighted_quantiles(np.concatenate(excess), w, [0.5, 0.95])
    return out


def smallest_linear_regression_epsilon(n, d, target, *, tau, tau_m, max_speed=None,
                                       quantile="median", bounds=(1e-3, 1e3),
                                       proposals=LINEAR_PROPOSALS, rng=0):
    """The smallest ε whose predicted ``quantile`` excess mean squared error
    (:func:`predict_linear_regression_error`) is at most ``target``, or None when even
    ``bounds[1]`` does not reach it (bisection in log ε on the seeded prediction, whose error
    decreases with ε).

    Parameters
    ----------
    n, d : int
    target : float
        Largest acceptable excess mean squared error.
    tau, tau_m, max_speed, proposals, rng
        As for :func:`predict_linear_regression_error`.
    quantile : {"median", "q95"}
    bounds : (float, float)
        Range of ε searched.

    Returns
    -------
    float or None
        Rounded up to 3 significant digits.

    Raises
    ------
    RuntimeError
        When a prediction on the way is not available (effective sample size too small).
    """
    target = check_positive(target, "target")
    if quantile not in ("median", "q95"):
        raise ValueError(f"`quantile` must be 'median' or 'q95', got {quantile!r}.")

    def err(eps):
        pred = predict_linear_regression_error(n, d, epsilon=eps, tau=tau, tau_m=tau_m,
                                               max_speed=max_speed, proposals=proposals,
                                               rng=rng)
        if not pred["available"]:
            raise RuntimeError(f"No prediction at ε = {eps:.3g}: {pred['reason']}.")
        return pred[quantile]

    return _smallest_epsilon(err, target, bounds)
