r"""Asymptotic prediction of the joint KNG release of geodesic regression at large
:math:`n\varepsilon`, where no exact sampler reaches and MCMC does not mix (DESIGN §8, §12).

**What is approximated.** The joint mechanism draws :math:`z = (p, v)` from
:math:`f(z) \propto e^{-\|G(z)\|/\sigma}` on the support :math:`K` (footpoint region x speed
ball), :math:`G = (\nabla_p E_\tau, \nabla_v E_\tau)` the clipped gradient (paper 002 eq. 9 on
the tangent bundle). :math:`G` is the gradient of the Huber-type energy
:math:`E_\tau = \frac1n\sum_i \rho_\tau(d(\hat y_i, y_i))`, :math:`\rho_\tau(r) = r^2/2` for
:math:`r \le \tau` and :math:`\tau r - \tau^2/2` beyond, so its zeros are critical points of
:math:`E_\tau` and its Jacobian there is the (symmetric) Hessian. In normal coordinates
:math:`\delta = (a, b)` of the tangent bundle about a zero :math:`z^*`,
:math:`p = \exp_{p^*}(a)`, :math:`v = \Gamma_{p^* \to p}(v^* + b)` (an orthonormal chart at
:math:`\delta = 0` for the Sasaki metric), :math:`G(\delta) \approx H\delta`. Substituting
:math:`w = H\delta` gives the **asymptotic law**

.. math:: \delta = H^{-1} w, \qquad w \propto e^{-|w|/\sigma} \text{ on } \mathbb R^{2d},

i.e. :math:`|w| \sim \mathrm{Gamma}(2d, \sigma)` with a uniform direction, and the Laplace
mass of the basin :math:`Z_* \approx |S^{2d-1}|\,\Gamma(2d)\,\sigma^{2d}/|\det H|`. On
:math:`\mathbb R^d` without clipping :math:`G` is affine and this law is exact.

**Where it is valid, and what is checked.**

* *The basin.* The law is used as an importance-sampling proposal for the exact target
  restricted to a ball about :math:`z^*` (:meth:`AsymptoticKNG.local`); the effective sample
  size says how close the linearization is (near the number of draws: the linear law is
  accurate). Residuals clipped at :math:`z^*` contribute only their transverse derivative
  :math:`(\tau/|\epsilon|)(I - uu^\top)` to :math:`H`: with many of them :math:`H` loses rank
  and the law is refused (:attr:`AsymptoticKNG.valid`).
* *Mass elsewhere.* :math:`e^{-\|G\|/\sigma}` is large wherever the clipped residuals cancel,
  not only at :math:`z^*`: on a compact space every critical point of :math:`E_\tau` is a mode,
  and far from the data (all residuals clipped to :math:`\tau`) the energy is flat, so a far
  mode can hold far more mass than the basin. :meth:`AsymptoticKNG.far_points` finds such
  points (uniform proposals on the support, the exact sampler's, then Levenberg-Marquardt
  descent of :math:`\|G\|`); :meth:`AsymptoticKNG.far_log_mass` estimates the mass about the
  best of them without bias by importance sampling, and divides by :math:`1/\alpha` (Markov's
  inequality): with probability at least :math:`1 - \alpha` the far mass is at least that.
  Far mass that was not found is not counted, so the share of the basin, hence the
  probability of a useful draw, is an **upper bound**, and the smallest useful
  :math:`n\varepsilon` predicted here a **lower bound** of the mechanism's.

Nothing here is a release: it reads the data (a preview for the analyst, like the page's
usefulness search) and is labelled an asymptotic prediction, never private.
"""

from __future__ import annotations

import math

import numpy as np

from .._lazy import lazy_module
from .._validation import check_int, check_manifold, check_positive
from ..learning.regression import regression_energy, regression_gradient
from ..sampling._compiled_sphere import (
    compiled_gradient_norms,
    compiled_mean_squared_distances,
)
from ..sampling.radial import log_kfnorm_mass
from ..sensitivity import geodesic_regression_sensitivity

special = lazy_module("scipy.special")  # imported on first use

__all__ = [
    "AsymptoticKNG",
    "BundleChart",
    "bundle_hessian",
    "joint_sigma",
    "log_kfnorm_mass",
]

#: Finite-difference step of the Jacobian of the gradient (chart units).
JACOBIAN_STEP = 1e-6
#: Largest condition number of H for which the asymptotic law is given.
MAX_CONDITION = 1e8
#: Markov factor of the far-mass lower bound: it holds with probability 1 - 1/this.
FAR_CONFIDENCE = 1000.0


def joint_sigma(manifold, n, epsilon, tau, tau_m=None):
    r"""Noise scale of the strict joint release: :math:`\sigma = 2\sqrt{\Delta_p^2 +
    \Delta_v^2}/\varepsilon` (DESIGN §6, rigorous rule; sensitivities of DESIGN §5)."""
    m = check_manifold(manifold)
    kappa_low = m.curvature_bounds[0]
    dp, dv = geodesic_regression_sensitivity(int(n), float(tau), kappa_low,
                                             tau_m if kappa_low < 0 else None)
    return 2.0 * float(np.hypot(dp, dv)) / float(epsilon)


class BundleChart:
    r"""Normal coordinates :math:`\delta = (a, b) \in \mathbb R^{2d}` of the tangent bundle
    about :math:`(p_0, v_0)`: :math:`p = \exp_{p_0}(a)`, :math:`v = \Gamma_{p_0 \to p}(v_0 + b)`
    (``a``, ``b`` in an orthonormal basis of :math:`T_{p_0}M`).

    Parallel transport is an isometry of the fibres, so the Riemannian (product) volume in
    this chart is the volume density of :math:`\exp_{p_0}` at ``a`` alone.
    """

    def __init__(self, manifold, footpoint, vector):
        self.manifold = m = check_manifold(manifold)
        self.p0 = np.asarray(footpoint, dtype=float)
        self.v0 = m.proj_tangent(self.p0, np.asarray(vector, dtype=float))
        self.dim = m.dim
        self.basis = m.orthonormal_basis(self.p0)

    def _tangent(self, coords):
        return np.tensordot(coords, self.basis, axes=1)

    def to_bundle(self, delta):
        """Points ``(p, v)`` of coordinates ``delta`` of shape ``(k, 2d)``."""
        m, d = self.manifold, self.dim
        delta = np.atleast_2d(np.asarray(delta, dtype=float))
        base = np.broadcast_to(self.p0, (delta.shape[0], *self.p0.shape))
        p = m.exp(base, self._tangent(delta[:, :d]))
        v = m.transport(base, p, self.v0 + self._tangent(delta[:, d:]))
        return p, m.proj_tangent(p, v)

    def coordinates(self, p, w):
        """Coordinates of tangent vectors ``w`` at ``p`` transported back to ``p0``."""
        m = self.manifold
        base = np.broadcast_to(self.p0, p.shape)
        w0 = m.transport(p, base, w)
        frame = np.broadcast_to(self.p0, (p.shape[0], self.dim, *self.p0.shape))
        return m.inner(frame, self.basis[None], w0[:, None])

    def log_volume(self, delta):
        """Log volume density of the chart at ``delta`` (that of :math:`\\exp_{p_0}` at a)."""
        m, d = self.manifold, self.dim
        delta = np.atleast_2d(delta)
        base = np.broadcast_to(self.p0, (delta.shape[0], *self.p0.shape))
        return np.asarray(m.log_volume_density(base, self._tangent(delta[:, :d]),
                                               rho=np.linalg.norm(delta[:, :d], axis=1)))

    def gradient(self, delta, t, y, tau):
        """Clipped gradient at ``chart(delta)`` in the chart's coordinates, shape ``(k, 2d)``,
        and its norm there (transport is an isometry: the same number)."""
        p, v = self.to_bundle(delta)
        gp, gv = regression_gradient(self.manifold, p, v, t, y, tau=tau)
        return np.concatenate([self.coordinates(p, gp), self.coordinates(p, gv)], axis=1)


def bundle_hessian(manifold, t, y, footpoint, vector, *, tau=None, step=JACOBIAN_STEP):
    r"""Jacobian of the (clipped) regression gradient in :class:`BundleChart` coordinates
    about ``(footpoint, vector)``, by central differences of the analytic gradient.

    At a zero of the gradient it is the Hessian of :math:`E_\tau` (module docstring), checked
    in the tests against second differences of the energy itself.

    Returns
    -------
    (ndarray, BundleChart)
        The ``(2d, 2d)`` Jacobian (not symmetrized: its asymmetry measures how far
        ``(footpoint, vector)`` is from a critical point, or the step's error) and the chart.
    """
    chart = BundleChart(manifold, footpoint, vector)
    k = 2 * chart.dim
    eye = np.eye(k) * step
    jac = (chart.gradient(eye, t, y, tau) - chart.gradient(-eye, t, y, tau)).T / (2 * step)
    return jac, chart


def _descend(chart_at, t, y, tau, start, *, inside, max_iter=60, tol=1e-12):
    """Levenberg-Marquardt descent of |G| from ``start = (p, v)`` within the support.

    Returns the point reached and its gradient norm."""
    p, v = start
    lam = 1e-3
    g0 = None
    for _ in range(max_iter):
        chart = chart_at(p, v)
        k = 2 * chart.dim
        g0 = chart.gradient(np.zeros((1, k)), t, y, tau)[0]
        if np.linalg.norm(g0) < tol:
            break
        eye = np.eye(k) * JACOBIAN_STEP
        jac = (chart.gradient(eye, t, y, tau) - chart.gradient(-eye, t, y, tau)).T / (
            2 * JACOBIAN_STEP)
        while lam < 1e8:
            step = -np.linalg.solve(jac.T @ jac + lam * np.eye(k), jac.T @ g0)
            g1 = chart.gradient(step[None], t, y, tau)[0]
            p1, v1 = chart.to_bundle(step[None])
            if np.linalg.norm(g1) < np.linalg.norm(g0) and inside(p1, v1)[0]:
                p, v = p1[0], v1[0]
                lam = max(lam / 3.0, 1e-12)
                break
            lam *= 10.0
        else:
            break
    chart = chart_at(p, v)
    g = chart.gradient(np.zeros((1, 2 * chart.dim)), t, y, tau)[0]
    return p, v, float(np.linalg.norm(g))


class _Law:
    r"""The K-norm law :math:`\delta = A w`, :math:`w \propto e^{-|w|/\sigma}` on
    :math:`\mathbb R^k`, with :math:`A` symmetric positive definite."""

    def __init__(self, a_matrix):
        self.a = np.asarray(a_matrix, dtype=float)
        self.k = self.a.shape[0]
        self.a_inv = np.linalg.inv(self.a)
        self.logdet_a = float(np.linalg.slogdet(self.a)[1])

    def sample(self, sigma, size, gen):
        r = gen.gamma(self.k, sigma, size=size)
        u = gen.standard_normal((size, self.k))
        u /= np.linalg.norm(u, axis=1, keepdims=True)
        return (r[:, None] * u) @ self.a.T

    def log_density(self, delta, sigma):
        w = np.linalg.norm(delta @ self.a_inv.T, axis=1)
        return -w / sigma - log_kfnorm_mass(self.k, sigma) - self.logdet_a


def _floored_inverse(h, floor):
    """``Q diag(1/max(|lambda|, floor)) Q^T`` of the symmetric part of ``h``."""
    lam, q = np.linalg.eigh(0.5 * (h + h.T))
    return (q / np.maximum(np.abs(lam), floor)) @ q.T


class AsymptoticKNG:
    r"""Asymptotic prediction of the strict joint KNG release of geodesic regression on one
    data set (module docstring).

    Parameters
    ----------
    manifold : Manifold
    t : array, shape (n,)
        Covariates rescaled to [0, 1] (as the release rescales them).
    y : array, shape (n, *point_shape)
        Responses (after any projection the release makes).
    footpoint, vector : array
        The non-private least-squares fit :math:`(\hat p, \hat v)` (the MSE reference, and the
        start of the search for the zero of the clipped gradient).
    tau : float
        Residual clipping bound of the release.
    max_speed : float
        The release's speed bound :math:`\|v\| \le V` (draws beyond it are outside the
        support).
    support : Ball, optional
        The release's footpoint region (None: the whole, compact, space).
    sigma_n_eps : float
        :math:`\sigma \cdot n\varepsilon`, a constant of the release's public bounds
        (:func:`joint_sigma` times :math:`n\varepsilon`).
    """

    def __init__(self, manifold, t, y, footpoint, vector, *, tau, max_speed, sigma_n_eps,
                 support=None):
        self.manifold = m = check_manifold(manifold)
        self.t = np.asarray(t, dtype=float)
        self.y = np.asarray(y, dtype=float)
        self.n = self.t.size
        self.tau = check_positive(tau, "tau")
        self.max_speed = check_positive(max_speed, "max_speed")
        self.sigma_n_eps = check_positive(sigma_n_eps, "sigma_n_eps")
        self.support = support
        self.fit = (np.asarray(footpoint, dtype=float), np.asarray(vector, dtype=float))
        self.mse_nonprivate = 2.0 * float(regression_energy(m, *self.fit, self.t, self.y))
        # The mode of the target: the zero of the clipped gradient (the fit itself when no
        # residual exceeds tau).
        p, v, gnorm = _descend(lambda a, b: BundleChart(m, a, b), self.t, self.y, self.tau,
                               self.fit, inside=self.inside)
        self.center = (p, v)
        self.center_gradient = gnorm
        res = np.asarray(m.dist(m.exp(np.broadcast_to(p, self.y.shape),
                                      m.pointwise(self.t) * v[None]), self.y))
        self.clipped = int(np.sum(res > self.tau))
        jac, self.chart = bundle_hessian(m, self.t, self.y, p, v, tau=self.tau)
        self.asymmetry = float(np.abs(jac - jac.T).max() / max(np.abs(jac).max(), 1e-300))
        self.hessian = 0.5 * (jac + jac.T)
        self.eigenvalues = np.linalg.eigvalsh(self.hessian)
        lo, hi = self.eigenvalues[0], self.eigenvalues[-1]
        self.condition = float(hi / lo) if lo > 0 else math.inf
        self.valid = bool(lo > 0 and self.condition <= MAX_CONDITION and gnorm < 1e-8)
        if not self.valid:
            self.reason = (
                f"the clipped energy's Hessian at its minimum is not positive definite enough "
                f"(eigenvalues {lo:.3g} to {hi:.3g}; {self.clipped} of {self.n} residuals "
                f"clipped at tau = {self.tau:g}, |G| = {gnorm:.2g} there): the asymptotic law "
                "does not apply")
        else:
            self.reason = None
        self.law = _Law(np.linalg.inv(self.hessian)) if self.valid else None
        self._far = None

    # ----------------------------------------------------------------- support and energy
    def inside(self, p, v):
        """Whether ``(p, v)`` lies in the release's support."""
        m = self.manifold
        ok = np.asarray(m.norm(p, v)) <= self.max_speed
        if self.support is not None:
            ok &= np.asarray(self.support.contains(m, p))
        return np.atleast_1d(ok)

    def sigma(self, n_eps):
        """Noise scale at ``n_eps`` = n x (epsilon per geodesic)."""
        return self.sigma_n_eps / float(n_eps)

    def gradient_norms(self, p, v):
        """Norms of the clipped gradient at a batch of ``(p, v)``: by the space's compiled
        kernel where there is one (the same formulas), else by the library's kernel."""
        m = self.manifold
        g = compiled_gradient_norms(m, p, v, self.t, self.y, self.tau)
        if g is None:
            gp, gv = regression_gradient(m, p, v, self.t, self.y, tau=self.tau)
            g = np.sqrt(np.asarray(m.norm(p, gp)) ** 2 + np.asarray(m.norm(p, gv)) ** 2)
        return g

    def _log_target(self, p, v, sigma):
        g = self.gradient_norms(p, v)
        return np.where(self.inside(p, v), -g / sigma, -np.inf)

    def mse(self, p, v):
        """MSE of geodesics ``(p, v)`` on the data (no factor 1/2, as the page's); by the
        space's compiled kernel where it has one (the same formulas)."""
        out = compiled_mean_squared_distances(self.manifold, p, v, self.t, self.y)
        if out is None:
            out = 2.0 * np.asarray(regression_energy(self.manifold, p, v, self.t, self.y))
        return out

    def sample(self, n_eps, size, rng=None):
        """Draws ``(p, v)`` of the linear asymptotic law at ``n_eps`` (no support, no weights:
        the law itself, exact on R^d without clipping)."""
        if not self.valid:
            raise ValueError(f"No asymptotic prediction: {self.reason}.")
        gen = np.random.default_rng(rng)
        return self.chart.to_bundle(self.law.sample(self.sigma(n_eps), int(size), gen))

    # ----------------------------------------------------------------- importance sampling
    def _region_mass(self, chart, law, sigma, radius, draws, gen):
        """Unbiased estimate of the target mass of the chart ball ``|a| < radius`` (log), by
        importance sampling from ``law``; with the draws' log weights and points."""
        delta = law.sample(sigma, draws, gen)
        keep = np.linalg.norm(delta[:, : chart.dim], axis=1) < radius
        logw = np.full(draws, -np.inf)
        p = v = None
        if keep.any():
            d = delta[keep]
            p, v = chart.to_bundle(d)
            logw[keep] = (self._log_target(p, v, sigma) + chart.log_volume(d)
                          - law.log_density(d, sigma))
        return float(special.logsumexp(logw) - math.log(draws)), logw[keep], p, v

    def _separation(self):
        """Chart radius of the regions (the basin and each far point): they do not overlap."""
        m = self.manifold
        limit = 0.5 * float(m.injectivity_radius)
        far = self._far or []
        gaps = [float(m.dist(fp, self.center[0])) for fp, _, _ in far]
        return min([limit, *(0.5 * g for g in gaps)]) if gaps else limit

    def local(self, n_eps, *, draws=4000, ratio=5.0, rng=0):
        r"""The basin's part of the target at ``n_eps``: its log mass and the MSE of its draws.

        Returns
        -------
        dict
            ``log_mass`` (importance-sampling estimate of the basin's mass), ``log_laplace``
            (its Laplace value), ``ess`` (of the weights: near ``draws`` when the linear law is
            accurate), ``median_ratio`` (median private MSE over the non-private one, exact
            target within the basin), ``asymptotic_median_ratio`` (the linear law's own, without
            weights), ``p_within`` (probability of a draw within ``ratio`` of the
            non-private MSE, within the basin) and ``outside_support`` (share of the linear
            law beyond the support).
        """
        if not self.valid:
            raise ValueError(f"No asymptotic prediction: {self.reason}.")
        gen = np.random.default_rng(rng)
        sigma = self.sigma(n_eps)
        log_mass, logw, p, v = self._region_mass(self.chart, self.law, sigma,
                                                 self._separation(), draws, gen)
        w = np.exp(logw - logw.max()) if logw.size else np.zeros(0)
        ess = float(w.sum() ** 2 / np.sum(w**2)) if w.sum() > 0 else 0.0
        out = {"n_eps": float(n_eps), "sigma": sigma, "log_mass": log_mass, "ess": ess,
               "draws": int(draws),
               "log_laplace": log_kfnorm_mass(2 * self.chart.dim, sigma)
               - float(np.linalg.slogdet(self.hessian)[1])}
        if ess <= 0:
            return {**out, "median_ratio": math.inf, "asymptotic_median_ratio": math.inf,
                    "p_within": 0.0, "outside_support": 1.0}
        r = self.mse(p, v) / self.mse_nonprivate
        inside = np.isfinite(logw)
        order = np.argsort(r)
        cum = np.cumsum(w[order]) / w.sum()
        out["median_ratio"] = float(r[order][min(np.searchsorted(cum, 0.5), r.size - 1)])
        out["p_within"] = float(w[r <= ratio].sum() / w.sum())
        out["asymptotic_median_ratio"] = float(np.median(r))
        out["outside_support"] = float(1.0 - inside.mean())
        return out

    # ----------------------------------------------------------------- far modes
    def far_points(self, *, proposals=100_000, starts=8, rng=0):
        """Points far from the basin where the clipped gradient nearly vanishes.

        Uniform proposals on the support (the exact sampler's); the ``starts`` with the
        smallest gradient norm among those at least half the injectivity radius from the
        mode start a Levenberg-Marquardt descent of :math:`\\|G\\|` within the support.

        Returns
        -------
        list of (p, v, gradient_norm), best first (computed once, then cached).
        """
        if self._far is not None:
            return self._far
        from ..mechanisms.kng import _uniform_support
        from ..sampling.rejection import BundleBall

        m = self.manifold
        gen = np.random.default_rng(rng)
        bundle = BundleBall(_uniform_support(m, self.support), self.max_speed)
        batch = max(256, 2_000_000 // self.n)
        best_g, best_z = np.zeros(0), np.zeros((0, 2, *m.point_shape))
        min_gap = 0.5 * float(m.injectivity_radius)
        for s in range(0, check_int(proposals, "proposals"), batch):
            z = bundle.sample(min(batch, proposals - s), gen)
            p, v = z[:, 0], z[:, 1]
            g = self.gradient_norms(p, v)
            far = np.asarray(m.dist(p, np.broadcast_to(self.center[0], p.shape))) >= min_gap
            best_g = np.concatenate([best_g, g[far]])
            best_z = np.concatenate([best_z, z[far]])
            keep = np.argsort(best_g)[:starts]
            best_g, best_z = best_g[keep], best_z[keep]
        found = []
        for z in best_z:
            p, v, g = _descend(lambda a, b: BundleChart(m, a, b), self.t, self.y, self.tau,
                               (z[0], z[1]), inside=self.inside)
            found.append((p, v, g))
        self._far = sorted(found, key=lambda f: f[2])
        return self._far

    def far_log_mass(self, n_eps, *, draws=4000, rng=0, confidence=FAR_CONFIDENCE):
        r"""Lower bound (log) of the target mass about the far points at ``n_eps``: the largest
        importance-sampling estimate over the points of :meth:`far_points`, divided by
        ``confidence`` (Markov: it holds with probability at least ``1 - 1/confidence``).

        The proposal about a far point is the K-norm law of its Jacobian with eigenvalues
        floored at :math:`2d\,\sigma/r` (r the region's radius), which keeps the draws in the
        region where the Jacobian is flat; any proposal gives an unbiased estimate.
        """
        m = self.manifold
        gen = np.random.default_rng(rng)
        sigma = self.sigma(n_eps)
        radius = self._separation()
        best = -math.inf
        for p, v, _ in self.far_points():
            jac, chart = bundle_hessian(m, self.t, self.y, p, v, tau=self.tau)
            law = _Law(_floored_inverse(jac, 2 * chart.dim * sigma / radius))
            log_mass, *_ = self._region_mass(chart, law, sigma, radius, draws, gen)
            best = max(best, log_mass)
        return best - math.log(confidence)

    # ----------------------------------------------------------------- the prediction
    def predict(self, n_eps, *, ratio=5.0, draws=4000, rng=0):
        r"""Probability that one draw at ``n_eps`` is useful (MSE within ``ratio`` of the
        non-private one): at most ``share x p_within``, ``share`` the basin's share of the
        mass with the far mass found so far (an upper bound of the true share).

        Returns
        -------
        dict
            :meth:`local`'s entries, plus ``far_log_mass``, ``share`` and ``p_useful``.
        """
        loc = self.local(n_eps, draws=draws, ratio=ratio, rng=rng)
        far = self.far_log_mass(n_eps, draws=draws, rng=rng) if self.manifold.is_compact or \
            self.support is not None else -math.inf
        share = float(1.0 / (1.0 + math.exp(min(far - loc["log_mass"], 700.0))))
        return {**loc, "far_log_mass": far, "share": share,
                "p_useful": share * loc["p_within"]}

    def smallest_useful_n_eps(self, *, ratio=5.0, bounds=(10.0, 1e9), rel_tol=0.05,
                              draws=4000, rng=0):
        r"""Smallest :math:`n\varepsilon` whose median draw is predicted within ``ratio`` of
        the non-private MSE (``p_useful >= 1/2``), by bisection on a log scale.

        A lower bound of the mechanism's (far mass not found is not counted). Returns
        ``(n_eps or None, evaluations)``; None when even ``bounds[1]`` is not useful.
        """
        cache = {}

        def good(x):
            cache[x] = self.predict(x, ratio=ratio, draws=draws, rng=rng)
            return cache[x]["p_useful"] >= 0.5

        lo, hi = (float(b) for b in bounds)
        if not good(hi):
            return None, cache
        if good(lo):
            return lo, cache
        while hi / lo > 1.0 + rel_tol:
            mid = math.sqrt(lo * hi)
            lo, hi = (lo, mid) if good(mid) else (mid, hi)
        return hi, cache

