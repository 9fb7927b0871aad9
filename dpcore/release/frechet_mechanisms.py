"""The private Fréchet mean, one class per mechanism (issue 29 point 2).

:func:`~dpcore.release.private_frechet_mean` validates the public inputs that every
mechanism shares (the ball, the mode, the draws), then hands the rest to the class that
:data:`FRECHET_RELEASES` names: how that mechanism reads its budget, which sensitivity it
needs, how it draws, and what it records. A new Fréchet-mean mechanism is one subclass of
:class:`FrechetMechanism` added to :data:`FRECHET_RELEASES`, plus its audit test; nothing
else branches on its name.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import numpy as np

from .._validation import check_int, check_positive
from ..mechanisms import (
    AmbientLaplace,
    KNormGradient,
    RiemannianGaussian,
    RiemannianLaplace,
    ambient_radius,
    embed,
)
from ..mechanisms.kng import frechet_mean_exact, refined_chart_available
from ..mechanisms.laplace import LATTICE_SAMPLER, _laplace_integrable, lattice_plan, unembed
from ..sensitivity import frechet_gradient_sensitivity, frechet_mean_sensitivity
from ..settings import check_limit
from ._common import _assumption
from .planning import (
    _choose_exact,
    exact_work,
    frechet_exact_bound,
    frechet_prediction,
    frechet_term_weight,
    predicted_frechet_kng_work,
    within_limit,
)
from .record import MCMC_CAVEAT
from .work import (
    _remeasured_before_refusing,
    calibrated_costs,
    check_work,
    estimate_frechet_work,
    estimate_work,
    exact_part,
    frechet_kng_work,
    monte_carlo_part,
)

__all__ = ["FRECHET_RELEASES", "FrechetDraw", "FrechetMechanism", "FrechetSetting",
           "estimate_frechet_release_work", "frechet_mechanism"]


@dataclasses.dataclass(frozen=True)
class FrechetSetting:
    """What every Fréchet mechanism is given: public inputs (validated) and the data.

    ``y`` are the points (projected onto the public ball in strict mode) and ``mean`` their
    Fréchet mean; everything else is public.
    """

    manifold: object
    y: np.ndarray
    mean: np.ndarray
    ball: object
    mode: str
    n_draws: int
    rng: np.random.Generator
    float_safe: bool = True
    sampler: str = "auto"
    chain_length: int = 2000
    burn_in: int = 1000
    max_work: float | None = None
    progress: object = None
    project: bool = True

    @property
    def n(self):
        return int(self.y.shape[0])

    @property
    def center(self):
        return self.ball.center

    @property
    def radius(self):
        return float(self.ball.radius)


@dataclasses.dataclass
class FrechetDraw:
    """What a mechanism's draw adds to the release record (``mu``: the per-draw µ stated,
    with its Monte Carlo margin where µ is estimated at a given σ)."""

    values: dict
    sensitivity: dict
    sigma: dict
    diagnostics: dict
    coverage: str = "proven"
    delta: float | None = 0.0
    mu: float | None = None
    caveats: list = dataclasses.field(default_factory=list)
    assumptions: dict = dataclasses.field(default_factory=dict)


def _float_safety(result):
    """The public float-safety facts of a mechanism result (DESIGN §12)."""
    keep = ("float_safety", "lattice_spacing", "truncation_slack")
    return {k: result.diagnostics[k] for k in keep if k in result.diagnostics}


def _mean_sensitivity(s):
    m = s.manifold
    return frechet_mean_sensitivity(s.n, s.radius, m.curvature_bounds[1], m.injectivity_radius)


class FrechetMechanism:
    """One mechanism of the private Fréchet mean: its budget, its draw, its record.

    Subclasses set :attr:`name` and implement :meth:`draw_means`; the class attributes say what
    the pages and the predictions may ask of it.
    """

    #: The ``mechanism`` argument that selects this class.
    name: ClassVar[str] = ""
    #: Whether its budget is a pure-DP ε (False: Gaussian DP, a µ).
    pure: ClassVar[bool] = True
    #: Whether its support is always the public ball (the error prediction's support).
    ball_support: ClassVar[bool] = False
    #: Whether :func:`~dpcore.release.predict_frechet_error` models its error.
    error_prediction: ClassVar[bool] = False
    #: Settings of a release made only for its record (σ, the support), never published.
    record_settings: ClassVar[dict] = {}
    #: Whether it needs the manifold's ambient embedding.
    needs_embedding: ClassVar[bool] = False
    #: Whether its sensitivity needs the ball's radius below r* (paper 001 Thm 2).
    radius_limited: ClassVar[bool] = True

    #: Why no search over ε exists before release (None: where :meth:`predict` has a law).
    no_search: ClassVar[str | None] = None

    # ------------------------------------------------------------------ before the data
    def own_request(self, request):
        """The request that answers for this mechanism instead of ``request`` (a
        :class:`~dpcore.release.requests.FrechetMeanRequest`), or None."""
        return None

    def plan(self, request):
        """What the release of ``request`` will run, from public inputs only: a dict with
        ``mechanism``, ``exact``, ``exact_possible``, ``sampler`` and the mechanism's own
        facts (:meth:`~dpcore.release.requests.FrechetMeanRequest.plan`)."""
        raise NotImplementedError

    def work(self, manifold, n, *, epsilon, radius, center, sigma=None, n_draws=1,
             chain_length=2000, burn_in=1000, mode="strict", sampler="auto", costs=None):
        """Estimated work of the release (:func:`estimate_frechet_release_work`): by default
        ``n_draws`` closed-form or radial draws about the mean, O(n) each."""
        draw_costs = calibrated_costs(manifold, "frechet") if costs is None else costs
        return estimate_work(exact_part(draw_costs, draws=n_draws, proposals_per_draw=1, n=n,
                                        what="closed-form draws about the mean",
                                        data_dependent=False))

    def check_budget(self, epsilon, mu, sigma):
        """The validated budget ``(epsilon, mu, sigma, caveats)`` of one draw."""
        if sigma is not None:
            raise ValueError(f"`sigma` applies to the Gaussian mechanism only, not {self.name!r}.")
        if mu is not None:
            raise ValueError(f"`mu` applies to the Gaussian mechanism only, not {self.name!r}.")
        if epsilon is None:
            raise ValueError(f"The {self.name} mechanism needs `epsilon`.")
        return check_positive(epsilon, "epsilon"), None, None, []

    def check_settings(self, chain_length, burn_in):
        """Check the settings only this mechanism reads (none by default)."""

    def draw_means(self, setting, *, epsilon, mu, sigma):
        """Draw ``setting.n_draws`` private means: a :class:`FrechetDraw`."""
        raise NotImplementedError

    def total_epsilon(self, epsilon, n_draws):
        """The release's total ε (None for Gaussian DP)."""
        return float(n_draws * epsilon) if self.pure else None


class _DrawnMean(FrechetMechanism):
    """Shared by the mechanisms that draw about a statistic (Laplace, ambient Laplace):
    their plan says whether the draws lie on a public lattice."""

    def plan(self, request):
        lattice = None if request.radius is None or request.center is None else (
            self.on_lattice(request))
        exact, radial = self.radial(request.manifold, lattice)
        return {"mechanism": self.name, "exact": exact, "exact_possible": exact,
                "sampler": LATTICE_SAMPLER if lattice else radial, "float_safe": lattice}

    def on_lattice(self, request):
        """Whether the draws of ``request`` (its ball given) lie on a public lattice."""
        raise NotImplementedError

    def radial(self, manifold, lattice):
        """``(exact, sampler)`` of the draws off the lattice."""
        raise NotImplementedError


class LaplaceMean(_DrawnMean):
    """The Riemannian Laplace mechanism about the Fréchet mean (paper 001)."""

    name = "laplace"
    error_prediction = True

    def on_lattice(self, r):
        m, eps, ball = r.manifold, r.epsilon, (r.center_array, r.radius)
        delta_m = frechet_mean_sensitivity(r.n, r.radius, m.curvature_bounds[1],
                                           m.injectivity_radius)
        support = None if _laplace_integrable(m, 2.0 * delta_m / eps) else ball
        mech = RiemannianLaplace(manifold=m, epsilon=eps, sensitivity=delta_m, support=support,
                                 public_ball=ball)
        return lattice_plan(m, "laplace", sigma=mech.sigma, epsilon=eps, support=support,
                            public_ball=mech.public_ball.as_tuple(),
                            truncate=mech.truncated) is not None

    def radial(self, manifold, lattice):
        from ..sampling import exact_sampler_available

        exact = bool(lattice or exact_sampler_available(manifold, "laplace"))
        return exact, "exact radial" if exact else "radial part by MCMC"

    def draw_means(self, s, *, epsilon, mu, sigma):
        m, caveats = s.manifold, []
        delta_m = _mean_sensitivity(s)
        support = None
        # Whole space only with a margin: the radial tail decays like exp(-(1/sigma - g) r)
        # (g the volume growth rate), and for 1/sigma near g the draws reach distances that
        # overflow float64 (non-SPD "means" found by the audit). Require 1/sigma >= 2 g, a
        # public condition; otherwise restrict to the public ball.
        if not _laplace_integrable(m, 2.0 * delta_m / epsilon):
            support = s.ball.as_tuple()
            caveats.append("Support restricted to the public ball (on the whole space the "
                           "density is not integrable, or its tail too heavy to sample in "
                           "float64, at this epsilon); sigma = 2 Delta/epsilon.")
        # The mean of data in the public ball lies in it: a public ball for a float-safe
        # (lattice) release on non-compact spaces (dpcore.sampling.lattice).
        mech = RiemannianLaplace(manifold=m, epsilon=epsilon, sensitivity=delta_m,
                                 support=support, public_ball=s.ball.as_tuple())
        res = mech.release(s.mean, size=s.n_draws, rng=s.rng, float_safe=s.float_safe)
        out = FrechetDraw(values={"mean": res.values}, sensitivity={"mean": delta_m},
                          sigma={"mean": mech.sigma}, caveats=caveats,
                          diagnostics={"exact": res.exact, "sampler": res.sampler,
                                       **_float_safety(res)})
        if not res.exact:
            out.coverage, out.delta = "mcmc", None
            caveats.append(MCMC_CAVEAT + " Here the eigen-radius vector of SPD(k >= 3) is "
                           "drawn by MCMC.")
        return out


class KNGMean(FrechetMechanism):
    """The K-norm gradient mechanism on the Fréchet energy (paper 002), exact where the
    public work bound allows (DESIGN §12), else MCMC (approximately private)."""

    name = "kng"
    ball_support = True
    error_prediction = True
    # Only the record is read (σ, the support): a 2-step chain, not the exact sampler's
    # envelope, which would cost more than the prediction itself.
    record_settings = {"sampler": "mcmc", "chain_length": 2, "burn_in": 0}

    def check_settings(self, chain_length, burn_in):
        check_limit("max_chain_length", check_int(chain_length, "chain_length"))
        check_limit("max_burn_in", check_int(burn_in, "burn_in", minimum=0))

    def plan(self, r):
        """The decision of :meth:`draw_means`, without data (``sigma``,
        ``worst_case_proposals`` per draw, ``work`` in worst-case gradient terms, ``limit``
        and, where the refined envelope is predicted, ``predicted_work``)."""
        from ..mechanisms.kng import exact_support_available
        from ..sampling.rejection import worst_case_proposals
        from ..settings import get_limits

        m, n = r.manifold, r.n
        refined = refined_chart_available(m)
        support_ok = r.mode == "strict" or r.sampler == "exact"
        out = {"mechanism": self.name, "exact": False,
               "exact_possible": bool(support_ok and (exact_support_available(m) or refined)),
               "sampler": None, "sigma": None, "worst_case_proposals": None, "work": None,
               "limit": get_limits().max_exact_work}
        if r.radius is None:  # paper mode, ball from the data: only sampler="exact" is
            out["exact"] = out["exact_possible"] and r.sampler == "exact"  # exact there
        else:
            delta_g = frechet_gradient_sensitivity(n, r.radius, m.curvature_bounds[1],
                                                   m.injectivity_radius)
            sigma = KNormGradient(manifold=m, epsilon=r.epsilon, sensitivity=delta_g,
                                  sigma_rule="rigorous" if r.mode == "strict" else "paper",
                                  chain_length=r.chain_length, burn_in=r.burn_in).sigma
            g_max = 2.0 * r.radius
            predicted = (frechet_prediction(m, r.center_array, r.radius, sigma, n, r.n_draws)
                         if refined and r.mode == "strict" and r.sampler == "auto" else None)
            out.update(sigma=sigma, worst_case_proposals=worst_case_proposals(g_max, sigma),
                       work=exact_work(g_max, sigma, n, r.n_draws))
            if predicted is not None:
                out["predicted_work"] = predicted
            out["exact"] = bool(_choose_exact(
                m, r.sampler, r.mode, clip=True, speed_cap=True, g_max=g_max, sigma=sigma, n=n,
                draws=r.n_draws, what="plan", stacklevel=2, support_ok=support_ok,
                predicted_work=predicted, refined=refined, warn=False))
        out["sampler"] = "exact rejection sampling" if out["exact"] else "Metropolis-Hastings"
        return out

    def work(self, manifold, n, *, epsilon, radius, center, sigma=None, n_draws=1,
             chain_length=2000, burn_in=1000, mode="strict", sampler="auto", costs=None):
        return estimate_frechet_work(manifold, n, epsilon=epsilon, radius=radius,
                                     center=center, n_draws=n_draws,
                                     chain_length=chain_length, burn_in=burn_in, mode=mode,
                                     sampler=sampler, costs=costs)

    def draw_means(self, s, *, epsilon, mu, sigma):
        m, n, draws = s.manifold, s.n, s.n_draws
        delta_g = frechet_gradient_sensitivity(n, s.radius, m.curvature_bounds[1],
                                               m.injectivity_radius)
        mech = KNormGradient(manifold=m, epsilon=epsilon, sensitivity=delta_g,
                             sigma_rule="rigorous" if s.mode == "strict" else "paper",
                             chain_length=s.chain_length, burn_in=s.burn_in)
        # Points and proposals lie in B_r(m0): |mean log_z y_i| <= max d(z, y_i) <= 2r.
        refined = refined_chart_available(m)
        # A forced exact release is refused in _choose_exact, before any sampling, when the
        # public worst-case work of its sampler is above the limit and the refined envelope's
        # public prediction (the one "auto" reads) is not within it (public inputs only).
        forced_bound = (frechet_exact_bound(m, center=s.center, radius=s.radius,
                                            sigma=mech.sigma, n=n, draws=draws)
                        if s.sampler == "exact" else None)
        # the space's own terms (priced by the estimate); the limit reads sphere-equivalent ones
        predicted = (predicted_frechet_kng_work(m, s.center, s.radius, mech.sigma, n, draws)
                     if refined and s.mode == "strict" and (
                         s.sampler == "auto" or forced_bound is not None
                         and not within_limit(forced_bound.terms)) else None)
        use_exact = _choose_exact(
            m, s.sampler, s.mode, clip=True, speed_cap=True, g_max=2.0 * s.radius,
            sigma=mech.sigma, n=n, draws=draws, what="Fréchet-mean KNG",
            stacklevel=4, support_ok=s.mode == "strict" or s.sampler == "exact",
            predicted_work=None if predicted is None else frechet_term_weight(m) * predicted,
            refined=refined, exact_bound=forced_bound)
        check_work(frechet_kng_work(
            m, n, draws=draws, chain_length=s.chain_length, burn_in=s.burn_in,
            exact_terms=None if not use_exact else (
                predicted if predicted is not None
                else exact_work(2.0 * s.radius, mech.sigma, n, draws)),
            exact_worst_case=predicted is None), s.max_work)
        if use_exact:
            res = frechet_mean_exact([mech], s.y, size=draws, rng=s.rng, support=s.ball,
                                     progress=s.progress)[0]
        else:
            # Strict mode: MCMC from the public centre, not from the data's mean.
            start = s.center if s.mode == "strict" else s.mean
            res = mech.frechet_mean(s.y, start, size=draws, rng=s.rng,
                                    support=s.ball.as_tuple(), progress=s.progress)
        out = FrechetDraw(values={"mean": res.values}, sensitivity={"gradient": delta_g},
                          sigma={"mean": mech.sigma},
                          diagnostics={**res.diagnostics, "exact": res.exact,
                                       "sampler": res.sampler})
        if not res.exact:
            out.coverage, out.delta = "mcmc", None
            out.caveats.append(MCMC_CAVEAT)
        return out


class GaussianMean(FrechetMechanism):
    """The Riemannian Gaussian mechanism about the Fréchet mean, in Gaussian DP (paper 004)."""

    name = "gaussian"
    pure = False
    no_search = "the Gaussian's σ is calibrated by Monte Carlo at each ε"
    #: Monte Carlo runs of a release: :func:`~dpcore.privacy.calibrate_sigma` (secant
    #: search, three or four runs of 1000 samples x 100 repeats) for a target µ, or one run
    #: of 2000 x 50 (:class:`~dpcore.mechanisms.RiemannianGaussian`'s defaults) at a given σ.
    CALIBRATION = (4, 1000, 100)
    AT_SIGMA = (1, 2000, 50)

    def own_request(self, request):
        return request.as_gaussian()

    def work(self, manifold, n, *, epsilon, radius, center, sigma=None, n_draws=1,
             chain_length=2000, burn_in=1000, mode="strict", sampler="auto", costs=None):
        """The Monte Carlo accounting where µ has no closed form (calibrating σ for the µ of
        ``epsilon``, or estimating µ at a given ``sigma``); else the closed-form draws."""
        from ..privacy import exact_gdp_accounting

        if exact_gdp_accounting(manifold) is not None:
            return super().work(manifold, n, epsilon=epsilon, radius=radius, center=center,
                                n_draws=n_draws, costs=costs)
        runs, n_samples, repeats = self.AT_SIGMA if sigma is not None else self.CALIBRATION
        mc_costs = calibrated_costs(manifold, "monte_carlo") if costs is None else costs
        what = ("Monte Carlo estimate of mu at sigma" if sigma is not None else
                f"Monte Carlo calibration of sigma ({runs} runs)")
        return estimate_work(monte_carlo_part(mc_costs, n_samples=runs * n_samples,
                                              repeats=repeats, what=what,
                                              reduce="nothing on this page (fixed sizes)"))

    def check_budget(self, epsilon, mu, sigma):
        caveats = []
        if sigma is not None:
            if epsilon is not None or mu is not None:
                raise ValueError("Give the Gaussian mechanism one of `mu`, `epsilon` and "
                                 "`sigma`.")
            return None, None, check_positive(sigma, "sigma"), caveats
        if (epsilon is None) == (mu is None):
            raise ValueError("The Gaussian mechanism needs exactly one of `mu` and `epsilon`.")
        if mu is None:
            from ..privacy import eps_to_mu

            mu = float(eps_to_mu(check_positive(epsilon, "epsilon")))
            caveats.append("mu is the GDP equivalent of the given epsilon (paper 004 §5.2).")
        return None, check_positive(mu, "mu"), None, caveats

    def draw_means(self, s, *, epsilon, mu, sigma):
        from ..privacy import exact_gdp_accounting

        m, caveats = s.manifold, []
        delta_m = _mean_sensitivity(s)
        if sigma is None:
            mech = RiemannianGaussian(manifold=m, sensitivity=delta_m, mu=mu)
        else:
            mech = RiemannianGaussian(manifold=m, sensitivity=delta_m, sigma=sigma)
            mu = float(mech.mu + 3.0 * mech.mu_standard_error)
            if not np.isfinite(mu):
                raise ValueError(
                    f"At sigma = {sigma:g} and sensitivity {delta_m:.4g} the Monte Carlo "
                    "estimate of mu does not resolve (the neighbouring outputs never overlap "
                    "in its samples): raise sigma.")
            if mech.mu_standard_error:
                caveats.append(f"mu = {mech.mu:.4g} + 3 x {mech.mu_standard_error:.2g} "
                               "(Monte Carlo estimate at the given sigma plus 3 standard "
                               "errors).")
        res = mech.release(s.mean, size=s.n_draws, rng=s.rng, float_safe=s.float_safe)
        out = FrechetDraw(values={"mean": res.values}, sensitivity={"mean": delta_m},
                          sigma={"mean": mech.sigma}, delta=None, mu=mu, caveats=caveats,
                          diagnostics={"exact": res.exact, "sampler": res.sampler,
                                       "mu_accounting": mech.accounting,
                                       **_float_safety(res)})
        if exact_gdp_accounting(m) is None:
            out.coverage = "monte_carlo"
            caveats.append(
                ("sigma was calibrated to mu" if sigma is None else "mu was estimated at sigma")
                + " by Monte Carlo (paper 004 Algorithm 2, fixed seed, conservative by a few "
                "standard errors): a statistical estimate of the privacy profile, not a proof.")
        if not res.exact:
            out.coverage = "mcmc"
            caveats.append(MCMC_CAVEAT)
        return out


class AmbientLaplaceMean(_DrawnMean):
    """The extrinsic mean of the embedded points plus Euclidean K-norm noise (the baseline of
    paper 001)."""

    name = "ambient_laplace"
    needs_embedding = True
    radius_limited = False  # its sensitivity 2 r_E / n is extrinsic
    no_search = "no closed-form law of this release's error"

    def on_lattice(self, r):
        from ..manifolds import Euclidean

        m, eps = r.manifold, r.epsilon
        r_e = float(m.ambient_radius(r.center_array, r.radius))
        mech = AmbientLaplace(manifold=m, epsilon=eps, sensitivity=2.0 * r_e / r.n,
                              project=r.project, public_ball=(m.embed(r.center_array), r_e))
        return mech.public_ball is not None and lattice_plan(
            Euclidean(mech.dim), "laplace", sigma=mech.sigma, epsilon=eps,
            public_ball=mech.public_ball, truncate=True) is not None

    def radial(self, manifold, lattice):
        return True, "exact Gamma(D, 1) radius x uniform direction"

    def draw_means(self, s, *, epsilon, mu, sigma):
        m = s.manifold
        r_e = ambient_radius(m, s.center, s.radius)
        delta_e = 2.0 * r_e / s.n
        extrinsic = unembed(m, embed(m, s.y).mean(axis=0))
        mech = AmbientLaplace(manifold=m, epsilon=epsilon, sensitivity=delta_e,
                              project=s.project, public_ball=(embed(m, s.center), r_e))
        noisy = mech.release(extrinsic, size=s.n_draws, rng=s.rng, float_safe=s.float_safe)
        caveats = []
        if "truncation_slack" in noisy.diagnostics:
            caveats.append("sigma = Delta_E / (epsilon (1 - 1e-9)): the truncation slack of "
                           "the float-safe draw stays inside epsilon")
        caveats.append("Ambient mechanism: releases the extrinsic (Euclidean) mean of the "
                       "embedded points plus Euclidean K-norm noise; sensitivity 2 r_E / n.")
        return FrechetDraw(
            values={"mean": noisy.values, "ambient": noisy.diagnostics["ambient_values"],
                    "left_manifold": noisy.diagnostics["left_manifold"]},
            sensitivity={"ambient_mean": delta_e}, sigma={"ambient": mech.sigma},
            diagnostics={"exact": True, "sampler": noisy.sampler, **{
                k: v for k, v in noisy.diagnostics.items()
                if k not in ("left_manifold", "ambient_values")}},
            caveats=caveats,
            assumptions={"ambient_radius": _assumption(
                r_e, "derived", "Euclidean ball holding the geodesic ball")})


#: The Fréchet-mean mechanisms by name (the ``mechanism`` argument).
FRECHET_RELEASES = {cls.name: cls() for cls in (LaplaceMean, KNGMean, GaussianMean,
                                                AmbientLaplaceMean)}


def frechet_mechanism(name):
    """The :class:`FrechetMechanism` called ``name``.

    Raises
    ------
    ValueError
        For a name not in :data:`FRECHET_RELEASES`.
    """
    if name not in FRECHET_RELEASES:
        raise ValueError(f"`mechanism` must be one of {tuple(FRECHET_RELEASES)}, got {name!r}.")
    return FRECHET_RELEASES[name]


@_remeasured_before_refusing
def estimate_frechet_release_work(manifold, n, *, mechanism, epsilon=None, radius, center,
                                  sigma=None, n_draws=1, chain_length=2000, burn_in=1000,
                                  mode="strict", sampler="auto", costs=None):
    """Estimated work of :func:`~dpcore.release.private_frechet_mean` for any mechanism: its
    class's :meth:`FrechetMechanism.work` (KNG as
    :func:`~dpcore.release.work.estimate_frechet_work`; the Gaussian's Monte Carlo
    accounting; closed-form draws for the others).

    Returns
    -------
    WorkEstimate
    """
    return frechet_mechanism(mechanism).work(
        manifold, n, epsilon=epsilon, radius=radius, center=center, sigma=sigma,
        n_draws=n_draws, chain_length=chain_length, burn_in=burn_in, mode=mode,
        sampler=sampler, costs=costs)
