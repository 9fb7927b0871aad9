r"""Accuracy before release: the error a strict release would have, predicted from public
inputs only (DESIGN §8, §12).

Fréchet means (:func:`predict_frechet_error`). The Riemannian Laplace mechanism on the whole
space releases :math:`\exp_{\bar y}(\cdot)` of a draw whose distance :math:`\rho` to the
non-private mean :math:`\bar y` has the exact density :math:`\propto e^{-\rho/\sigma} J(\rho)`
(:meth:`~dpcore.manifolds.Manifold.radial_log_volume`), whatever the data: the prediction is the
law itself, by quadrature. Restricted to the public ball (where the release restricts it), and
for KNG, the law depends on the data; it is computed for the model data set of ``n`` points at
the public centre, for which the KNG gradient norm is exactly :math:`d(z, c)`, so the distance
has the density :math:`\propto e^{-\rho/\sigma} J(\rho)` on :math:`[0, r]`. Real data spread
over the ball have a gradient norm between :math:`h\,d(z, \bar y)` and :math:`d(z, \bar y)` near
their mean on a space of curvature :math:`\ge 0` (Hessian comparison,
:mod:`dpcore.sampling.envelope`), so the model is close but not exact (measured on S², n = 30,
ε = 2, r = 0.4: observed median 0.0534 against 0.0547 predicted).
The noise scale σ is read from the record of a release of the model data (one source of truth).

Geodesic regression (:func:`predict_regression_error`):

Nothing here reads the user's data. The prediction is about the release the same public
inputs would make (its σ, footpoint support and speed bound are read from the record of that
release, so they cannot drift apart), on a **model data set**: ``n`` covariates evenly spread
over the covariate range (``(k + 1/2)/n`` after rescaling to [0, 1]) and every response at the
public centre, whose non-private fit is the constant geodesic :math:`(c, 0)`. Real data of the
same size have a target of the same shape near their own fit (exactly so on homogeneous
spaces, where the fit's position does not matter) and the same clipped floor away from it.

**The law is the exact KNG target.** The model target
:math:`f(z) \propto e^{-\|\nabla E(z)\|/\sigma}` on the support :math:`K` is estimated by
self-normalized importance sampling from uniform proposals on :math:`K` (the exact sampler's
proposals), with weights :math:`w = f`: a consistent estimate of the target's error
quantiles, whose precision is stated by the effective sample size
:math:`\mathrm{ESS} = (\sum w)^2/\sum w^2`. MCMC is not used: on S² at n = 40, ε = 4, τ = 0.2,
Metropolis–Hastings chains of 1000 + 1000 steps started *at the model's mode* gave a median
footpoint error of 0.13 rad where the exact target's is 1.57 rad (most of the target's mass lies
on geodesics that wind around the sphere, whose clipped residuals cancel; the chains never
reach them). Where the target has concentrated so much that the ESS falls below
``min_ess``, the prediction says so instead of guessing.

Errors are in the data's own units: the geodesic distance :math:`d(\tilde p, c)` of the private
footpoint to the fit's, and the root-mean-square distance between the private geodesic and the
fit over the model covariates, :math:`(\frac1n\sum_k d(\exp_{\tilde p}(t_k \tilde v), c)^2)^{1/2}`.

Linear regression on R^d (:func:`predict_linear_regression_error`) is in
:mod:`dpcore.release._accuracy_linear`, the pieces the predictions share in
:mod:`dpcore.release._accuracy_common`; both are re-exported here.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .._validation import check_int, check_manifold, check_positive
from ..learning.regression import regression_gradient
from ..mechanisms import Ball
from ..mechanisms.kng import _uniform_support
from ..sampling.rejection import BundleBall
from ._accuracy_common import (
    _TERMS_PER_BATCH,
    MIN_ESS,
    _log_bisect,
    _model_data,
    _smallest_epsilon,
    _weighted_quantiles,
)
from ._accuracy_linear import (  # noqa: F401  (re-exported)
    LINEAR_MODEL_POINTS,
    LINEAR_PROPOSALS,
    LINEAR_UNIFORM_SHARE,
    predict_linear_regression_error,
    smallest_linear_regression_epsilon,
)
from .frechet import private_frechet_mean
from .frechet_mechanisms import FRECHET_RELEASES, frechet_mechanism
from .regression import private_geodesic_regression

#: Proposals per prediction (uniform on the support).
PROPOSALS = 100_000


def predict_regression_error(manifold, n, *, eps_p, eps_v, tau, tau_m=None, center=None,
                             max_speed=None, proposals=PROPOSALS, min_ess=MIN_ESS, rng=0,
                             footpoint_radius=None):
    r"""Predicted error of a strict joint release of geodesic regression (module docstring).

    Parameters
    ----------
    manifold : Manifold
        A manifold with uniform proposals on the support (compact, or a public footpoint
        ball): Sphere, KendallShape, SPD(2), Euclidean, Hyperbolic.
    n : int
        Sample size of the release (public: the release states it).
    eps_p, eps_v : float
        Budget of one private geodesic, ``eps_p + eps_v`` in the joint scheme.
    tau, tau_m, center, max_speed, footpoint_radius
        The release's public bounds, as for :func:`~dpcore.release.private_geodesic_regression`
        (``center`` defaults to the manifold's origin).
    proposals : int
        Uniform proposals drawn.
    min_ess : float
        Smallest effective sample size for which a prediction is given.
    rng : int
        Seed (fixed by default: the same inputs give the same prediction).

    Returns
    -------
    dict
        ``available`` (bool), ``ess``, ``sigma``, ``epsilon`` (per geodesic), ``model`` (what
        was simulated) and, when available, ``footpoint`` and ``curve``:
        ``{"median", "q95", "uniform_median"}`` (``q95`` is the 95% radius; ``uniform_median``
        the median error of a draw uniform on the support, the release that tells nothing);
        otherwise ``reason``.
    """
    m = check_manifold(manifold)
    n = check_int(n, "n", minimum=2)
    proposals = check_int(proposals, "proposals")
    eps_p = check_positive(eps_p, "eps_p")
    eps_v = check_positive(eps_v, "eps_v")
    center = m.origin if center is None else np.asarray(center, dtype=float)
    t, y = _model_data(m, n, center)
    kw = {"tau_m": tau_m, "center": center} if tau_m is not None else {}
    if footpoint_radius is not None:
        kw.update(center=center, footpoint_radius=footpoint_radius)
    with warnings.catch_warnings():
        # Only the record is read (sigma and supports): a 2-step chain, never published.
        warnings.simplefilter("ignore")
        rec = private_geodesic_regression(
            m, t, y, eps_p=eps_p, eps_v=eps_v, tau=tau, covariate_range=(0.0, 1.0),
            max_speed=max_speed, scheme="joint", sampler="mcmc", chain_length=2, burn_in=0,
            rng=0, **kw)
    sigma = float(rec.sigma["joint"])
    speed = float(rec.assumptions["max_speed"]["value"])
    foot = rec.assumptions.get("footpoint_support")
    ball = None if foot is None else Ball.make(m, center, float(foot["value"]))
    bundle = BundleBall(_uniform_support(m, ball), speed)
    gen = np.random.default_rng(rng)
    batch = max(256, _TERMS_PER_BATCH // n)
    log_w, d_foot, d_curve = [], [], []
    for start in range(0, proposals, batch):
        z = bundle.sample(min(batch, proposals - start), gen)
        p, v = z[:, 0], z[:, 1]
        gp, gv = regression_gradient(m, p, v, t, y, tau=tau)
        g = np.sqrt(np.asarray(m.norm(p, gp)) ** 2 + np.asarray(m.norm(p, gv)) ** 2)
        log_w.append(-g / sigma)
        d_foot.append(np.asarray(m.dist(p, np.broadcast_to(center, p.shape)), dtype=float))
        shape = (p.shape[0], n, *m.point_shape)
        curve = m.exp(np.broadcast_to(p[:, None], shape),
                      v[:, None] * m.pointwise(np.broadcast_to(t, shape[:2])))
        d = np.asarray(m.dist(curve, np.broadcast_to(center, shape)), dtype=float)
        d_curve.append(np.sqrt(np.mean(d**2, axis=1)))
    log_w = np.concatenate(log_w)
    w = np.exp(log_w - log_w.max())
    ess = float(w.sum() ** 2 / np.sum(w**2))
    out = {
        "available": ess >= min_ess, "ess": ess, "sigma": sigma, "epsilon": eps_p + eps_v,
        "model": (f"exact KNG target of a model data set (n = {n} covariates evenly spread "
                  "over the covariate range, responses at the public centre), by importance "
                  f"sampling of {proposals:,} uniform proposals (effective sample size "
                  f"{ess:,.0f})"),
    }
    if not out["available"]:
        out["reason"] = (f"the target has concentrated (effective sample size {ess:.0f} < "
                         f"{min_ess:g} of {proposals:,} uniform proposals): beyond the reach of "
                         "an exact prediction")
        return out
    for key, vals in (("footpoint", np.concatenate(d_foot)), ("curve", np.concatenate(d_curve))):
        med, q95 = _weighted_quantiles(vals, w, [0.5, 0.95])
        # The same error of a draw uniform on the support: what "no information" looks like.
        out[key] = {"median": med, "q95": q95, "uniform_median": float(np.median(vals))}
    return out


#: Points of the radial quadrature of :func:`predict_frechet_error`.
RADIAL_GRID = 20_001


def _frechet_record(m, n, epsilon, radius, center, mechanism, rng):
    y = np.broadcast_to(center, (n, *m.point_shape)).copy()
    # Only the record is read (σ, the support): each mechanism says how to make it cheaply.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # seeded: a record only, never published
        return private_frechet_mean(m, y, epsilon=epsilon, mechanism=mechanism, radius=radius,
                                    center=center, rng=rng,
                                    **frechet_mechanism(mechanism).record_settings)


def predict_frechet_error(manifold, n, *, epsilon, radius, center=None, mechanism="laplace",
                          rng=0):
    r"""Predicted distance between a strict private Fréchet mean and the non-private one
    (module docstring).

    Parameters
    ----------
    manifold : Manifold
        A manifold with a closed-form radial law (Sphere, Euclidean, Hyperbolic, Kendall,
        SPD(1), SPD(2)).
    n : int
    epsilon : float
        Budget of one release.
    radius : float
        Public radius of the ball holding the data.
    center : array, optional
        Public centre (default: the manifold's origin).
    mechanism : {"laplace", "kng"}
    rng : int
        Seed of the model release whose record gives σ (its draw is not used).

    Returns
    -------
    dict
        ``median``, ``q95`` (the 95% radius), ``sigma``, ``exact_law`` (True where the law does
        not depend on the data: Laplace on the whole space), ``support`` (largest distance
        considered) and ``model`` (a sentence).
    """
    m = check_manifold(manifold)
    n = check_int(n, "n", minimum=2)
    epsilon = check_positive(epsilon, "epsilon")
    radius = check_positive(radius, "radius")
    predicted = [name for name, kind in FRECHET_RELEASES.items() if kind.error_prediction]
    if mechanism not in predicted:
        raise ValueError(f"`mechanism` must be one of {predicted}, got {mechanism!r}.")
    kind = FRECHET_RELEASES[mechanism]
    center = m.origin if center is None else np.asarray(center, dtype=float)
    rec = _frechet_record(m, n, epsilon, radius, center, mechanism, rng)
    sigma = float(rec.sigma["mean"])
    restricted = kind.ball_support or any("restricted to the public" in c for c in rec.caveats)
    if restricted:
        top = radius
    elif m.is_compact:
        top = float(m.diameter)
    else:
        top = np.inf
    # Beyond 60 e-folds of exp(-(1/sigma - growth) rho) the mass is below e^-60 (relative):
    # the grid stops there so that it resolves sigma however small.
    growth = max(float(m.volume_growth_rate), 0.0)
    support = top
    if 1.0 / sigma > growth:
        top = min(top, 60.0 / (1.0 / sigma - growth))
    rho = np.linspace(0.0, top, RADIAL_GRID)
    with np.errstate(divide="ignore"):
        log_f = -rho / sigma + np.asarray(m.radial_log_volume(rho), dtype=float)
    finite = np.isfinite(log_f)
    if not np.any(finite[1:]):
        raise RuntimeError(f"The radial law of {m!r} is not finite on (0, {top:g}].")
    f = np.where(finite, np.exp(np.where(finite, log_f, 0.0) - np.max(log_f[finite])), 0.0)
    cdf = np.concatenate([[0.0], np.cumsum(0.5 * (f[1:] + f[:-1]) * np.diff(rho))])
    cdf /= cdf[-1]
    median, q95 = (float(np.interp(q, cdf, rho)) for q in (0.5, 0.95))
    exact = not restricted
    if exact:
        model = "the exact law of the Laplace noise's radius (the same for every data set)"
    elif kind.ball_support:
        model = f"{n} points at the public centre ({kind.name.upper()})"
    else:
        model = f"{n} points at the public centre (support restricted to the public ball)"
    return {
        "median": median, "q95": q95, "sigma": sigma, "exact_law": exact, "support": support,
        "grid_top": top,
        "model": model,
    }


def smallest_frechet_epsilon(manifold, n, target, *, radius, center=None, mechanism="laplace",
                             quantile="median", bounds=(1e-3, 1e4), rng=0):
    """The smallest ε whose predicted ``quantile`` error (:func:`predict_frechet_error`) is
    at most ``target`` (bisection in log ε; the error decreases with ε), or None when even
    ``bounds[1]`` does not reach it.

    Parameters
    ----------
    manifold : Manifold
    n : int
    target : float
        Largest acceptable error (distance to the non-private mean).
    radius, center, mechanism
        As for :func:`predict_frechet_error`.
    quantile : {"median", "q95"}
    bounds : (float, float)
        Range of ε searched.
    rng : int
        As for :func:`predict_frechet_error`.

    Returns
    -------
    float or None
        Rounded up to 3 significant digits.
    """
    target = check_positive(target, "target")
    if quantile not in ("median", "q95"):
        raise ValueError(f"`quantile` must be 'median' or 'q95', got {quantile!r}.")

    def err(eps):
        return predict_frechet_error(manifold, n, epsilon=eps, radius=radius, center=center,
                                     mechanism=mechanism, rng=rng)[quantile]

    return _smallest_epsilon(err, target, bounds)


def predict_gaussian_error(manifold, sigma):
    r"""Exact law of the distance between a Riemannian Gaussian release and the statistic.

    The mechanism releases a draw with density :math:`\propto e^{-d(\eta, y)^2/(2\sigma^2)}`
    about the statistic :math:`\eta` on the whole space, so on the spaces with a closed-form
    radial law the distance :math:`\rho = d(\eta, Y)` has the density
    :math:`\propto e^{-\rho^2/(2\sigma^2)} J(\rho)` (:func:`dpcore.sampling.radial_density`),
    whatever the data (e.g. :math:`\sin\rho` on S², :math:`\rho^{d-1}` on R^d, where
    :math:`\rho/\sigma` is chi with d degrees of freedom). Its quantiles are computed by
    trapezoidal quadrature of that density: only σ (public) enters.

    Parameters
    ----------
    manifold : Manifold
        A homogeneous manifold with a closed-form radial law (Sphere, Euclidean, Hyperbolic).
    sigma : float
        Rate of the mechanism.

    Returns
    -------
    dict
        ``median`` and ``q95`` (the 95% radius) of the distance, ``sigma`` and ``model`` (a
        sentence).
    """
    from ..sampling.radial import radial_density

    m = check_manifold(manifold)
    sigma = check_positive(sigma, "sigma")
    law = radial_density(m, sigma, "gaussian")
    # The log-density is concave with second derivative <= -1/sigma^2: beyond mode + 12 sigma
    # the mass is below e^-72 (relative), so the grid stops there.
    top = min(law.r_max, law.mode + 12.0 * sigma)
    rho = np.linspace(0.0, top, RADIAL_GRID)
    f = law(rho)
    cdf = np.concatenate([[0.0], np.cumsum(0.5 * (f[1:] + f[:-1]) * np.diff(rho))])
    cdf /= cdf[-1]
    median, q95 = (float(np.interp(q, cdf, rho)) for q in (0.5, 0.95))
    return {"median": median, "q95": q95, "sigma": sigma,
            "model": "the exact law of the Gaussian noise's radius (the same for every data set)"}


def largest_gaussian_sigma(manifold, target, *, quantile="median", bounds=(1e-4, 1e3)):
    """The largest σ whose predicted ``quantile`` error (:func:`predict_gaussian_error`) is at
    most ``target`` (bisection in log σ; the error grows with σ), or None when even
    ``bounds[0]`` does not reach it. On a compact space a target at or beyond the error of the
    uniform law is met by every σ in ``bounds``: ``bounds[1]`` is returned.

    Parameters
    ----------
    manifold : Manifold
    target : float
        Largest acceptable distance to the statistic.
    quantile : {"median", "q95"}
    bounds : (float, float)
        Range of σ searched.

    Returns
    -------
    float or None
        Rounded down to 3 significant digits.
    """
    target = check_positive(target, "target")
    if quantile not in ("median", "q95"):
        raise ValueError(f"`quantile` must be 'median' or 'q95', got {quantile!r}.")

    def gaussian_error(sigma):
        return predict_gaussian_error(manifold, sigma)[quantile]

    lo, hi = (float(b) for b in bounds)
    if gaussian_error(lo) > target:
        return None
    if gaussian_error(hi) <= target:
        return hi
    lo = _log_bisect(lambda sigma: gaussian_error(sigma) <= target, good=lo, bad=hi,
                     rel_tol=1e-4, max_iter=60)
    step = math.floor(math.log10(lo)) - 2
    return round(math.floor(lo / 10.0**step) * 10.0**step, max(0, -step))


__all__ = ["LINEAR_MODEL_POINTS", "LINEAR_PROPOSALS", "MIN_ESS", "PROPOSALS", "RADIAL_GRID",
           "largest_gaussian_sigma", "predict_frechet_error", "predict_gaussian_error",
           "predict_linear_regression_error", "predict_regression_error",
           "smallest_frechet_epsilon", "smallest_linear_regression_epsilon"]
