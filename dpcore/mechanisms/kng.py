r"""K-norm gradient mechanism on manifolds (paper 002 eq. 9; Reimherr & Awan; Soto et al.).

The release has density :math:`f(z; D) \propto \exp(-\|\nabla E(z; D)\|_z / \sigma)`.
With Δ the sensitivity of the gradient, :math:`\sigma = 2\Delta/\epsilon` is ε-DP in general (the
normalizing constant depends on D); the papers use :math:`\sigma = \Delta/\epsilon`
(``sigma_rule="paper"``), which is only justified when that constant does not depend on D.

Draws come from the batched Riemannian random-walk Metropolis-Hastings sampler, one chain per
draw started at the non-private estimate, except where an exact sampler exists (Euclidean
regression and Fréchet mean, where the gradient is affine and KNG is a Euclidean K-norm
Laplace centred at the least-squares solution).
"""

from __future__ import annotations

import numpy as np

from .._validation import check_int, check_manifold
from ..learning.frechet import frechet_mean_gradient
from ..learning.regression import regression_gradient
from ..manifolds import Euclidean
from .base import (
    Ball,
    MechanismResult,
    check_epsilon,
    check_sensitivity,
    size_tuple,
)
from .envelopes import frechet_envelope
from .kng_exact import (  # noqa: F401 - _uniform_support: dpcore.release.accuracy reads it
    _uniform_support,
    exact_support_available,
    frechet_mean_exact,
    refined_chart_available,
    refined_joint_available,
    regression_gradient_bounds,
    regression_joint_exact,
)
from .protocol import Guarantee

SIGMA_RULES = ("rigorous", "paper")

# Step sizes come from public quantities only (issue 13): the mean of t^2 for covariates spread
# uniformly over the public range, to which t is rescaled ([0, 1]), stands in for the data's.
_PUBLIC_MEAN_T2 = 1.0 / 3.0


class KNormGradient:
    r"""K-norm gradient mechanism for an energy given by its gradient field.

    Parameters
    ----------
    manifold : Manifold
    epsilon : float
    sensitivity : float
        Sensitivity Δ of the gradient (:mod:`dpcore.sensitivity`).
    sigma_rule : {"rigorous", "paper"}
        ``"rigorous"``: σ = 2Δ/ε; ``"paper"``: σ = Δ/ε as in paper 002.
    chain_length : int
        Metropolis-Hastings steps kept after burn-in (the release is the last state).
    burn_in : int
        Steps used to tune the proposal radius before it is frozen.
    """

    name = "kng"

    def __init__(self, *, manifold, epsilon, sensitivity, sigma_rule="rigorous",
                 chain_length=2000, burn_in=1000):
        self.manifold = check_manifold(manifold)
        self.epsilon = check_epsilon(epsilon)
        self.sensitivity = check_sensitivity(sensitivity)
        if sigma_rule not in SIGMA_RULES:
            raise ValueError(f"`sigma_rule` must be one of {SIGMA_RULES}, got {sigma_rule!r}.")
        self.sigma_rule = sigma_rule
        self.sigma = (2.0 if sigma_rule == "rigorous" else 1.0) * self.sensitivity / self.epsilon
        self.chain_length = check_int(chain_length, "chain_length")
        self.burn_in = check_int(burn_in, "burn_in", minimum=0)

    def guarantee(self, *, exact=False):
        """The privacy statement of one draw: δ = 0 for an exact draw, δ of order 1/chain
        length for an MCMC draw (paper 002 app. A.1, assuming the chain has mixed)."""
        return Guarantee(
            epsilon=self.epsilon, delta=0.0 if exact else 1.0 / self.chain_length, mu=None,
            sensitivity=self.sensitivity, sigma=self.sigma,
            sigma_rule="2 Delta/epsilon" if self.sigma_rule == "rigorous" else "Delta/epsilon",
            note=None if exact else (
                "MCMC sampler: pure epsilon-DP holds only approximately, delta of order "
                "1/chain length (paper 002 app. A.1), assuming the chain has mixed."))

    # ------------------------------------------------------------------ generic sampler
    def sample(self, gradient_norm, init, size=1, rng=None, *, domain=None, support=None,
               step_size=None, progress=None):
        """Draw from :math:`\\propto \\exp(-\\|\\nabla E(z)\\|/\\sigma)` by Metropolis-Hastings.

        Parameters
        ----------
        gradient_norm : callable
            Maps a batch ``(n_chains, *point_shape)`` of points of ``domain`` to the gradient
            norms ``(n_chains,)``.
        init : array
            Starting point(s): one point or one per chain.
        size : int
            Number of independent draws (= chains).
        domain : Manifold, optional
            The space sampled (default: the mechanism's manifold).
        support : Ball, optional
            Points outside get density zero.
        progress : callable, optional
            ``progress(fraction)`` of the chains' steps (:mod:`dpcore._progress`).
        """
        return sample_many([self], gradient_norm, init, size, rng, domain=domain,
                           support=support, step_size=step_size, progress=progress)[0]

    # ------------------------------------------------------------------ Fréchet mean
    def frechet_mean(self, points, mean, size=1, rng=None, *, support=None, progress=None):
        """KNG on the Fréchet energy :math:`\\tfrac1{2n}\\sum d(z, y_i)^2`, started at ``mean``.

        ``support`` (a public ball, usually the data ball) restricts the draws; on R^d the
        gradient is ``z - ybar`` and the draw is exact (truncated Euclidean K-norm).
        ``progress(fraction)`` follows the chains' steps (:mod:`dpcore._progress`).
        """
        from ..sampling import sample_laplace

        m = self.manifold
        points = np.asarray(points, dtype=float)
        ball = None if support is None else Ball.make(m, *support)
        if m.is_linear:  # affine gradient: an exact K-norm draw
            values = sample_laplace(m, points.mean(axis=0), self.sigma, size=size, rng=rng,
                                    support=None if ball is None else ball.as_tuple())
            return MechanismResult(values=values, exact=True,
                                   sampler="exact Euclidean K-norm (affine gradient)")

        def gradient_norm(z):
            return m.norm(z, frechet_mean_gradient(m, z, points))

        return self.sample(gradient_norm, mean, size, rng, support=ball, progress=progress)

    # ------------------------------------------------------------------ regression
    def regression_footpoint(self, t, y, p_hat, v_hat, size=1, rng=None, *, tau=None,
                             support=None, progress=None):
        r"""Private footpoints: KNG on :math:`p \mapsto E(p, \Gamma_{\hat p \to p}\hat v)`.

        Parameters
        ----------
        t : array (n,)
            Covariates on [0, 1].
        y : array (n, *point_shape)
        p_hat, v_hat : arrays
            Non-private fit; ``v_hat`` is transported to each proposal (paper 002 app. A).
        tau : float, optional
            Residual clipping bound (strict mode).
        support : tuple (center, radius), optional
        progress : callable, optional
            ``progress(fraction)`` of the chains' steps (:mod:`dpcore._progress`).
        """
        m = self.manifold
        t = np.asarray(t, dtype=float)
        y = np.asarray(y, dtype=float)
        ball = None if support is None else Ball.make(m, *support)
        if m.is_linear and tau is None:  # affine gradient: exact
            return self._euclidean_footpoint(t, y, v_hat, size, rng, ball)

        return regression_footpoints_many([self], t, y, p_hat, v_hat, size, rng, tau=tau,
                                          support=ball, progress=progress)[0]

    def regression_vector(self, t, y, p, v_init, size=1, rng=None, *, tau=None, max_norm=None,
                          progress=None):
        r"""Private shooting vectors at the (private) footpoint ``p``: KNG on
        :math:`v \mapsto E(p, v)` over :math:`T_pM`.

        ``p`` may be a batch of footpoints ``(m, *point_shape)``; then ``size`` vectors are drawn
        at each and the result has shape ``(m, size, *point_shape)``. ``v_init`` (tangent at
        ``p``, one per footpoint) starts the chains, e.g. the non-private shooting vector
        transported to ``p``. Chains run in orthonormal coordinates of each tangent space;
        ``max_norm`` restricts ‖v‖ (needed on spaces where the energy does not grow with ‖v‖).
        ``progress(fraction)`` follows the chains' steps (:mod:`dpcore._progress`).
        """

        m = self.manifold
        t = np.asarray(t, dtype=float)
        y = np.asarray(y, dtype=float)
        p = np.asarray(p, dtype=float)
        single = p.ndim == m.point_ndim
        pb = p[None] if single else p
        n_draws = 1 if size is None else int(size)
        if m.is_linear and tau is None:  # affine gradient: exact
            out = self._euclidean_vector(t, y, pb, n_draws, rng, max_norm)
            if single:
                out.values = out.values[0] if size is not None else out.values[0, 0]
            elif size is None:
                out.values = out.values[:, 0]
            return out
        out = regression_vectors_many([self], t, y, pb, v_init, n_draws, rng, tau=tau,
                                      max_norm=max_norm, progress=progress)[0]
        vals = out.values
        if size is None:
            vals = vals[:, 0]
        if single:
            vals = vals[0]
        out.values = vals
        return out

    def regression_joint(self, t, y, p_hat, v_hat, size=1, rng=None, *, tau=None, support=None,
                         max_norm=None, progress=None):
        r"""Private (footpoint, shooting vector) pairs: one KNG on the tangent bundle.

        The density is :math:`\propto \exp(-\sqrt{\|\nabla_p E\|^2 + \|\nabla_v E\|^2}/\sigma)`
        over :math:`(p, v) \in TM` (DESIGN §8, ``scheme="joint"``); the sensitivity of the
        stacked gradient is :math:`\sqrt{\Delta_p^2 + \Delta_v^2}`, to be passed as this
        mechanism's ``sensitivity``. Chains start at ``(p_hat, v_hat)`` and move by
        :class:`~dpcore.mechanisms.bundle.TangentBundleWalk`. ``progress(fraction)`` follows
        the chains' steps (:mod:`dpcore._progress`).

        Returns
        -------
        MechanismResult
            ``values`` of shape ``(size, 2, *point_shape)``: ``[:, 0]`` footpoints,
            ``[:, 1]`` shooting vectors.
        """
        # R^d only: the stacked gradient is affine, so the draw is an exact K-norm one
        if (self.manifold.is_linear and tau is None and support is None
                and max_norm is None):
            return self._euclidean_joint(np.asarray(t, dtype=float),
                                         np.asarray(y, dtype=float), size, rng)
        return regression_joint_many([self], t, y, p_hat, v_hat, size, rng, tau=tau,
                                     support=support, max_norm=max_norm, progress=progress)[0]

    def _euclidean_joint(self, t, y, size, rng):
        # With z = (p, v), the stacked gradient is H z - b, H = [[1, tbar], [tbar, mean t^2]]
        # (x) I_d, b = (ybar, mean(t y)). Substituting w = H z - b (constant Jacobian), w has
        # density proportional to exp(-|w|/sigma) on R^{2d}: an exact Euclidean K-norm draw
        # mapped back by H^{-1}.
        from ..sampling import sample_laplace

        d = self.manifold.dim
        t_bar, t2 = float(t.mean()), float(np.mean(t**2))
        if t2 - t_bar**2 <= 0:
            raise ValueError("All covariates are equal: the shooting vector is not "
                             "identifiable.")
        a_inv = np.linalg.inv(np.array([[1.0, t_bar], [t_bar, t2]]))
        b = np.stack([y.mean(axis=0), np.mean(t[:, None] * y, axis=0)])  # (2, d)
        n_draws = int(np.prod(size_tuple(size))) if size is not None else 1
        w = sample_laplace(Euclidean(2 * d), np.zeros(2 * d), self.sigma, size=n_draws,
                           rng=rng).reshape(n_draws, 2, d)
        z = np.einsum("ij,njk->nik", a_inv, b[None] + w)
        values = z[0] if size is None else z.reshape(size_tuple(size) + (2, d))
        return MechanismResult(values=values, exact=True,
                               sampler="exact Euclidean K-norm (affine stacked gradient)")

    # ------------------------------------------------------------------ helpers
    def _start_vectors(self, pb, v_init):
        """Starting vectors, one per footpoint, made tangent (and shortened into the support)."""
        m = self.manifold
        return m.proj_tangent(pb, np.broadcast_to(np.asarray(v_init, dtype=float), pb.shape))

    def _euclidean_footpoint(self, t, y, v_hat, size, rng, ball):
        # E(p, v) = (1/2n) sum |y_i - p - t_i v|^2 has gradient p - (ybar - tbar v): KNG is the
        # K-norm (Laplace) centred at the least-squares footpoint for this v.
        from ..sampling import sample_laplace

        center = y.mean(axis=0) - t.mean() * np.asarray(v_hat, dtype=float)
        values = sample_laplace(self.manifold, center, self.sigma, size=size, rng=rng,
                                support=None if ball is None else ball.as_tuple())
        return MechanismResult(values=values, exact=True,
                               sampler="exact Euclidean K-norm (affine gradient)")

    def _euclidean_vector(self, t, y, pb, n_draws, rng, max_norm):
        # grad_v E = mean(t^2) v - mean(t (y - p)): K-norm centred at the least-squares slope
        # for this footpoint, with scale sigma / mean(t^2).
        from ..sampling import sample_laplace

        rng = np.random.default_rng(rng)
        mt2 = float(np.mean(t**2))
        if mt2 == 0:
            raise ValueError("All covariates are zero: the shooting vector is not identifiable.")
        out = []
        origin = np.zeros(self.manifold.point_shape)
        for p in pb:
            center = np.mean(t[:, None] * (y - p), axis=0) / mt2
            support = None if max_norm is None else (origin, float(max_norm))
            out.append(sample_laplace(self.manifold, center, self.sigma / mt2, size=n_draws,
                                      rng=rng, support=support))
        return MechanismResult(values=np.stack(out), exact=True,
                               sampler="exact Euclidean K-norm (affine gradient)")


# ---------------------------------------------------------------------- several budgets at once
# The functions below run the chains of several KNG mechanisms that differ only in their budget
# (hence sigma) as one batched Metropolis-Hastings run, one step-size group per mechanism: the
# per-step cost of the sampler is paid once instead of once per budget. Every mechanism gets
# its own MechanismResult, with diagnostics computed on its chains alone. With one mechanism
# they are exactly the single-mechanism methods above.
def _check_batch(mechanisms):
    mechanisms = list(mechanisms)
    if not mechanisms or not all(isinstance(k, KNormGradient) for k in mechanisms):
        raise TypeError("`mechanisms` must be a non-empty sequence of KNormGradient.")
    first = mechanisms[0]
    for k in mechanisms[1:]:
        if (k.manifold is not first.manifold and repr(k.manifold) != repr(first.manifold)) or (
                k.chain_length, k.burn_in) != (first.chain_length, first.burn_in):
            raise ValueError("Batched KNG mechanisms must share the manifold, chain length "
                             "and burn-in.")
    return mechanisms


def _sampler_label(first, n_chains, what="Riemannian random-walk Metropolis-Hastings"):
    return (f"{what} ({n_chains} chains x {first.burn_in} burn-in + {first.chain_length} "
            "steps)")


def sample_many(mechanisms, gradient_norm, init, size=1, rng=None, *, domain=None,
                support=None, step_size=None, progress=None):
    """:meth:`KNormGradient.sample` for several mechanisms in one sampler run.

    ``gradient_norm`` and ``init`` are shared; each mechanism gets ``size`` chains of its own
    (its sigma, its step size). Returns one :class:`MechanismResult` per mechanism.
    ``progress(fraction)`` follows the sampler's steps (:mod:`dpcore._progress`).
    """
    from ..sampling import metropolis_hastings
    from ..sampling._compiled_regression import attached_target, sampler_target

    mechanisms = _check_batch(mechanisms)
    first = mechanisms[0]
    domain = first.manifold if domain is None else domain
    n_per = int(np.prod(size_tuple(size))) if size is not None else 1
    n_mech = len(mechanisms)
    sigmas = np.array([k.sigma for k in mechanisms], dtype=float)
    sigma = sigmas[0] if n_mech == 1 else np.repeat(sigmas, n_per)

    def log_density(z):
        logp = -np.asarray(gradient_norm(z), dtype=float) / sigma
        if support is not None:
            logp = np.where(support.contains(domain, z), logp, -np.inf)
        return np.where(np.isfinite(logp), logp, -np.inf)

    target = attached_target(gradient_norm)
    if target is not None:  # the compiled chain
        sampler_target(log_density, target.with_sigma(sigma), support)
    if step_size is None:
        step_size = sigmas[0] if n_mech == 1 else sigmas
    if support is not None:
        init = support.pull_inside(domain, init)
    result = metropolis_hastings(
        domain, log_density, init, n_samples=first.chain_length, n_chains=n_mech * n_per,
        burn_in=first.burn_in, step_size=step_size, rng=rng,
        groups=None if n_mech == 1 else np.repeat(np.arange(n_mech), n_per),
        progress=progress,
    )
    out = []
    for k in range(n_mech):
        sub = result if n_mech == 1 else result.subset(
            domain, np.arange(k * n_per, (k + 1) * n_per), group=k)
        values = sub.final
        if size is None:
            values = values[0]
        else:
            values = values.reshape(size_tuple(size) + domain.point_shape)
        out.append(MechanismResult(values=values, exact=False,
                                   sampler=_sampler_label(first, n_per),
                                   diagnostics=sub.to_dict()))
    return out


def regression_footpoints_many(mechanisms, t, y, p_hat, v_hat, size=1, rng=None, *, tau=None,
                               support=None, progress=None):
    """Private footpoints (:meth:`KNormGradient.regression_footpoint`, MCMC path) for several
    budgets in one run; ``support`` is a :class:`Ball` or None; ``progress(fraction)`` follows
    the chains' steps (:mod:`dpcore._progress`)."""
    mechanisms = _check_batch(mechanisms)
    m = mechanisms[0].manifold
    t = np.asarray(t, dtype=float)
    y = np.asarray(y, dtype=float)

    def gradient_norm(p):
        v = m.transport(p_hat, p, v_hat)
        g, _ = regression_gradient(m, p, v, t, y, tau=tau, which="footpoint")
        return m.norm(p, g)

    if p_hat is not None and v_hat is not None:
        _describe_target(m, gradient_norm, "footpoint", t, y, tau=tau,
                         p_hat=np.asarray(p_hat, float), v_hat=np.asarray(v_hat, float))
    return sample_many(mechanisms, gradient_norm, p_hat, size, rng, support=support,
                       progress=progress)


def regression_vectors_many(mechanisms, t, y, footpoints, v_init, n_draws, rng=None, *,
                            tau=None, max_norm=None, progress=None):
    """Private shooting vectors (:meth:`KNormGradient.regression_vector`, MCMC path) for
    several budgets in one run.

    ``footpoints`` has shape ``(n_mech * n_base, *point_shape)``: the first ``n_base`` belong to
    the first mechanism, and so on; ``v_init`` likewise (or one vector for all). Returns one
    :class:`MechanismResult` per mechanism with values ``(n_base, n_draws, *point_shape)``.
    ``progress(fraction)`` follows the chains' steps (:mod:`dpcore._progress`).
    """
    from ..sampling import metropolis_hastings
    from ..sampling.mcmc import _diagnostics_many

    mechanisms = _check_batch(mechanisms)
    first = mechanisms[0]
    m = first.manifold
    t = np.asarray(t, dtype=float)
    y = np.asarray(y, dtype=float)
    pb = np.asarray(footpoints, dtype=float)
    n_mech = len(mechanisms)
    if pb.shape[0] % n_mech:
        raise ValueError("`footpoints` must hold the same number of points per mechanism.")
    n_base = pb.shape[0] // n_mech
    per_mech = n_base * n_draws
    basis = m.orthonormal_basis(pb)  # (n_mech * n_base, dim, *ps)
    chains_p = np.repeat(pb, n_draws, axis=0)
    chains_b = np.repeat(basis, n_draws, axis=0)
    v0 = np.repeat(first._start_vectors(pb, v_init), n_draws, axis=0)
    c0 = m.inner(chains_p[:, None], chains_b, v0[:, None])
    coords = Euclidean(m.dim)
    sigmas = np.array([k.sigma for k in mechanisms], dtype=float)
    sigma = sigmas[0] if n_mech == 1 else np.repeat(sigmas, per_mech)

    def log_density(c):
        v = np.einsum("na,na...->n...", c, chains_b)
        _, g = regression_gradient(m, chains_p, v, t, y, tau=tau, which="vector")
        logp = -m.norm(chains_p, g) / sigma
        if max_norm is not None:
            logp = np.where(np.linalg.norm(c, axis=-1) <= max_norm, logp, -np.inf)
        return np.where(np.isfinite(logp), logp, -np.inf)

    _describe_target(m, log_density, "vector", t, y, tau=tau,
                     sigma=np.asarray(sigma, dtype=float), max_norm=max_norm,
                     chains_p=chains_p, chains_b=chains_b)
    scale = _PUBLIC_MEAN_T2
    result = metropolis_hastings(
        coords, log_density, c0, n_samples=first.chain_length, n_chains=chains_p.shape[0],
        burn_in=first.burn_in, step_size=sigmas[0] / scale if n_mech == 1 else sigmas / scale,
        rng=rng, groups=None if n_mech == 1 else np.repeat(np.arange(n_mech), per_mech),
        progress=progress,
    )
    vals = np.einsum("na,na...->n...", result.final, chains_b)
    vals = vals.reshape((n_mech, n_base, n_draws) + m.point_shape)
    out = []
    for k in range(n_mech):
        chains = np.arange(k * per_mech, (k + 1) * per_mech)
        # With several footpoints the diagnostics are computed per footpoint below.
        sub = result if n_mech == 1 else result.subset(coords, chains, group=k,
                                                       diagnose=n_base == 1)
        diagnostics = sub.to_dict()
        if n_base > 1:
            # Chains at different footpoints target different densities: pooling them in one
            # R-hat would flag disagreement that is not a mixing failure. Diagnose per footpoint.
            per_group = _diagnostics_many(coords, c0[chains[::n_draws]], sub.samples,
                                          sub.log_density, n_base)
            ess = [e for e, _ in per_group if np.isfinite(e)]
            rhat = [r for _, r in per_group if np.isfinite(r)]
            diagnostics["ess"] = float(min(ess)) if ess else None
            diagnostics["rhat"] = float(max(rhat)) if rhat else None
            diagnostics["diagnostics_grouping"] = "per footpoint (min ESS, max R-hat)"
        out.append(MechanismResult(
            values=vals[k], exact=False,
            sampler=_sampler_label(first, per_mech,
                                   "Metropolis-Hastings in tangent coordinates"),
            diagnostics=diagnostics,
        ))
    return out


def regression_joint_many(mechanisms, t, y, p_hat, v_hat, size=1, rng=None, *, tau=None,
                          support=None, max_norm=None, progress=None):
    """:meth:`KNormGradient.regression_joint` for several budgets in one sampler run.

    ``support`` (a :class:`Ball` or None) restricts the footpoint, ``max_norm`` the shooting
    vector's norm; ``progress(fraction)`` follows the chains' steps (:mod:`dpcore._progress`).
    Returns one :class:`MechanismResult` per mechanism, values ``(size, 2, *point_shape)``.
    """
    from .bundle import TangentBundleWalk

    mechanisms = _check_batch(mechanisms)
    m = mechanisms[0].manifold
    t = np.asarray(t, dtype=float)
    y = np.asarray(y, dtype=float)
    # Vector moves a factor 1/mean(t^2) longer than footpoint moves: the energy is that much
    # flatter in v (its Hessian in v scales with mean t^2), as in the sequential vector stage;
    # mean(t^2) is the public value, not the data's.
    bundle = TangentBundleWalk(m, vector_scale=1.0 / _PUBLIC_MEAN_T2)

    def gradient_norm(z):
        p, v = bundle.split(z)
        v = m.proj_tangent(p, v)
        gp, gv = regression_gradient(m, p, v, t, y, tau=tau)
        norm = np.sqrt(m.norm(p, gp) ** 2 + m.norm(p, gv) ** 2)
        inside = np.ones(norm.shape, dtype=bool)
        if support is not None:
            inside &= support.contains(m, p)
        if max_norm is not None:
            inside &= m.norm(p, v) <= max_norm
        return np.where(inside, norm, np.inf)

    ball = {} if support is None else {"center": support.center, "radius": support.radius}
    _describe_target(m, gradient_norm, "joint", t, y, tau=tau, max_norm=max_norm, **ball)
    start = bundle.join(p_hat, m.proj_tangent(p_hat, v_hat))
    out = sample_many(mechanisms, gradient_norm, start, size, rng, domain=bundle,
                      progress=progress)
    for res in out:
        res.sampler = res.sampler.replace("Riemannian random-walk", "tangent-bundle random-walk")
    return out


def _describe_target(m, function, kind, t, y, **fields):
    """Attach the description of this regression target to ``function`` where compiled
    kernels cover ``m`` (:mod:`dpcore.sampling._compiled_regression`), so that the sampler
    runs its compiled chain."""
    from ..sampling._compiled_regression import regression_target

    regression_target(m, function, kind, t, y, **fields)


__all__ = ["SIGMA_RULES", "KNormGradient", "exact_support_available", "frechet_envelope",
           "frechet_mean_exact",
           "refined_chart_available", "refined_joint_available",
           "regression_gradient_bounds", "regression_joint_exact", "sample_many",
           "regression_footpoints_many", "regression_joint_many", "regression_vectors_many"]
