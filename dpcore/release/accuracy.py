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
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .._validation import check_int, check_manifold, check_positive
from ..learning.regression import regression_gradient
from ..manifolds import Euclidean
from ..mechanisms import Ball
from ..mechanisms.kng import _uniform_support
from ..sampling.rejection import BundleBall
from .frechet import private_frechet_mean
from .frechet_mechanisms import FRECHET_RELEASES, frechet_mechanism
from .regression import private_geodesic_regression

#: Proposals per prediction (uniform on the support).
PROPOSALS = 100_000
#: Smallest effective sample size of a prediction.
MIN_ESS = 200
#: Gradient terms evaluated per batch (memory: a batch holds ``terms x point size`` floats).
_TERMS_PER_BATCH = 2_000_000


def _model_data(manifold, n, center):
    t = (np.arange(n) + 0.5) / n
    y = np.broadcast_to(np.asarray(center, dtype=float), (n, *manifold.point_shape)).copy()
    return t, y


def _weighted_quantiles(values, weights, qs):
    order = np.argsort(values)
    cum = np.cumsum(weights[order])
    cum /= cum[-1]
    idx = np.minimum(np.searchsorted(cum, qs), values.size - 1)
    return [float(values[order][i]) for i in idx]


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


def _log_bisect(is_good, *, good, bad, rel_tol, max_iter):
    """Geometric bisection between a value where ``is_good`` holds (``good``) and one where it
    does not (``bad``), for a monotone ``is_good``; returns the last good value, within a
    factor ``1 + rel_tol`` of the boundary."""
    for _ in range(max_iter):
        mid = math.sqrt(good * bad)
        if is_good(mid):
            good = mid
        else:
            bad = mid
        if max(good, bad) / min(good, bad) < 1.0 + rel_tol:
            break
    return good


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


# ------------------------------------------------------------------ linear regression on R^d
#: Proposals of :func:`predict_linear_regression_error`.
LINEAR_PROPOSALS = 20_000
#: Most model covariates evaluated per proposal (above it, an evenly spread grid of this size
#: stands for the ``n`` covariates: the gradient is their mean, see
#: :func:`predict_linear_regression_error`).
LINEAR_MODEL_POINTS = 500
#: Share of the proposals drawn uniformly on the support (defensive mixture).
LINEAR_UNIFORM_SHARE = 0.2


def _log_ball_volume(d, radius):
    return 0.5 * d * math.log(math.pi) - math.lgamma(0.5 * d + 1.0) + d * math.log(radius)


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
    log_unif = -(_log_ball_volume(d, r_p) + _log_ball_volume(d, r_v))
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


def _smallest_epsilon(err, target, bounds):
    """The smallest ε in ``bounds`` with ``err(ε) <= target`` for a decreasing ``err``, by
    bisection in log ε, rounded up to 3 significant digits; None when ``bounds[1]`` misses."""
    lo, hi = (float(b) for b in bounds)
    if err(hi) > target:
        return None
    if err(lo) <= target:
        return lo
    hi = _log_bisect(lambda eps: err(eps) <= target, good=hi, bad=lo, rel_tol=1e-3,
                     max_iter=40)
    step = math.floor(math.log10(hi)) - 2
    return round(math.ceil(hi / 10.0**step) * 10.0**step, max(0, -step))


__all__ = ["LINEAR_MODEL_POINTS", "LINEAR_PROPOSALS", "MIN_ESS", "PROPOSALS", "RADIAL_GRID",
           "largest_gaussian_sigma", "predict_frechet_error", "predict_gaussian_error",
           "predict_linear_regression_error", "predict_regression_error",
           "smallest_frechet_epsilon", "smallest_linear_regression_epsilon"]
