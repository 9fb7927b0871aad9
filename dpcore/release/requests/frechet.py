"""The requests of private Fréchet-mean releases: by any mechanism at a budget ε
(:class:`FrechetMeanRequest`), and by the Riemannian Gaussian at a rate σ, a µ or an ε
(:class:`GaussianReleaseRequest`, µ-GDP)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from ..._validation import check_choice, check_int, check_positive
from ...manifolds.base import Manifold
from ..frechet import private_frechet_mean
from ..frechet_mechanisms import estimate_frechet_release_work, frechet_mechanism
from ..record import FRECHET_MECHANISMS, MODES, SAMPLERS
from ._base import (
    Request,
    check_rows,
    optional_budget,
    optional_positive,
    optional_seed,
    planned_event,
    point_tuple,
    record_outline,
)
from ._floats import LATTICE_SAMPLER, on_lattice, pure_coverage


class _BallRequest(Request):
    """Shared by the Fréchet-mean requests: the public ball and the model data set."""

    def _check_ball(self):
        self._set("n", check_int(self.n, "n", minimum=2))
        self._set("radius", optional_positive(self.radius, "radius"))
        self._set("center", point_tuple(self.manifold, self.center, "center"))
        check_choice(self.mode, "mode", MODES)
        self._set("n_draws", check_int(self.n_draws, "n_draws"))
        self._set("seed", optional_seed(self.seed))
        if self.mode == "strict":
            if self.center is None:
                raise ValueError("Strict mode needs the public `center` of the ball holding "
                                 "the data.")
            if self.radius is None:
                raise ValueError("Strict mode needs the public `radius` of the ball holding "
                                 "the data.")

    @property
    def center_array(self):
        """:attr:`center` as an array (None if not given)."""
        return None if self.center is None else np.asarray(self.center, dtype=float)

    def _from_data(self):
        """The bounds the release will take from the data (paper mode without them)."""
        return [name for name in ("center", "radius") if getattr(self, name) is None]

    def _need_ball(self, what):
        if self.radius is None or self.center is None:
            raise ValueError(f"{what} needs the public `radius` and `center` (paper mode "
                             "without them takes the ball from the data).")

    def run(self, y, *, rng=None, progress=None):
        """Make the release (:func:`~dpcore.release.private_frechet_mean`).

        Parameters
        ----------
        y : array-like, shape (n, *point_shape)
            ``n`` must be the request's.
        rng : None, int or Generator
            None: :attr:`seed` (None there too: OS entropy).
        progress : callable, optional

        Returns
        -------
        Release
        """
        check_rows(y, self.n, "y")
        return private_frechet_mean(self.manifold, y, rng=self.seed if rng is None else rng,
                                    progress=progress, **self.release_kwargs())


@dataclass(frozen=True)
class FrechetMeanRequest(_BallRequest):
    r"""One private Fréchet mean at budget ε, described by its public inputs only.

    The fields are the public arguments of :func:`~dpcore.release.private_frechet_mean` for
    a budget ε (same names and defaults) plus ``n`` (public: the release states it) and
    ``seed``. ``mechanism="gaussian"`` runs the Riemannian Gaussian at the µ equivalent to ε
    (paper 004 §5.2), as :meth:`as_gaussian`; for a rate σ or a µ use
    :class:`GaussianReleaseRequest`.

    Attributes
    ----------
    manifold : Manifold
    n : int
    epsilon : float
        Budget of one draw.
    mechanism : {"laplace", "kng", "gaussian", "ambient_laplace"}
    radius : float or None
    center : tuple or None
        The public ball holding the data (required in strict mode); :attr:`center_array`
        gives the array.
    mode : {"strict", "paper"}
    n_draws : int
    project : bool
        Ambient Laplace only.
    chain_length, burn_in : int
    sampler : {"auto", "exact", "mcmc"}
        KNG only.
    max_work : float or None
    seed : int or None
    """

    manifold: Manifold = field(compare=False)
    n: int
    epsilon: float
    mechanism: str = "laplace"
    radius: float | None = None
    center: tuple | None = None
    mode: str = "strict"
    n_draws: int = 1
    project: bool = True
    chain_length: int = 2000
    burn_in: int = 1000
    sampler: str = "auto"
    max_work: float | None = None
    seed: int | None = None
    _manifold_key: tuple = field(default=None, init=False, repr=False)

    def __post_init__(self):
        self._set_manifold()
        self._set("epsilon", check_positive(self.epsilon, "epsilon"))
        check_choice(self.mechanism, "mechanism", FRECHET_MECHANISMS)
        if not isinstance(self.project, bool):
            raise TypeError(f"`project` must be a bool, got {type(self.project).__name__}.")
        self._set("chain_length", check_int(self.chain_length, "chain_length"))
        self._set("burn_in", check_int(self.burn_in, "burn_in", minimum=0))
        check_choice(self.sampler, "sampler", SAMPLERS)
        self._set("max_work", optional_budget(self.max_work))
        self._check_ball()
        self._delegate()  # its own checks (the Gaussian's: a homogeneous manifold)

    @property
    def kind(self):
        """The mechanism's class (:mod:`dpcore.release.frechet_mechanisms`)."""
        return frechet_mechanism(self.mechanism)

    def _delegate(self):
        """The request that answers for this mechanism (the Gaussian's), or None."""
        return self.kind.own_request(self)

    def as_gaussian(self):
        """The :class:`GaussianReleaseRequest` of ``mechanism="gaussian"`` at this ε."""
        if self.kind.pure:
            raise ValueError(f"`as_gaussian` is for mechanism='gaussian', not "
                             f"{self.mechanism!r}.")
        return GaussianReleaseRequest(self.manifold, self.n, epsilon=self.epsilon,
                                      radius=self.radius, center=self.center, mode=self.mode,
                                      n_draws=self.n_draws, seed=self.seed)

    def release_kwargs(self):
        """The keyword arguments of :func:`~dpcore.release.private_frechet_mean` (all but the
        data, ``rng`` and ``progress``); unset optional bounds are left out."""
        kw = {"epsilon": self.epsilon, "mechanism": self.mechanism}
        if self.radius is not None:
            kw["radius"] = self.radius
        if self.center is not None:
            kw["center"] = self.center_array
        # Every field, so that the settings rebuild this request; the release reads
        # ``project`` for the ambient mechanism only, the sampler settings for KNG only.
        kw.update(mode=self.mode, n_draws=self.n_draws, project=self.project,
                  chain_length=self.chain_length, burn_in=self.burn_in, sampler=self.sampler)
        if self.max_work is not None:
            kw["max_work"] = self.max_work
        return kw

    # ------------------------------------------------------------------ questions
    def plan(self):
        """What the release will run (exact or MCMC) and the label that follows, from public
        inputs only.

        Returns
        -------
        dict
            ``mechanism``, ``exact`` (the sampler that will run), ``exact_possible``,
            ``sampler`` (in words), ``guarantee``; for Laplace and ambient Laplace also
            ``float_safe`` (draws on a public lattice; None in paper mode without the ball,
            which the release takes from the data); for KNG ``sigma``,
            ``worst_case_proposals`` (per draw), ``work`` (worst-case gradient terms),
            ``limit`` (``max_exact_work``) and, where the refined envelope is predicted,
            ``predicted_work`` (the same decision as the release's). The Gaussian's plan is
            :meth:`GaussianReleaseRequest.plan`.
        """
        delegate = self._delegate()
        if delegate is not None:
            return delegate.plan()
        out = self.kind.plan(self)
        out["guarantee"] = self.outline(plan=out).guarantee
        return out

    def work(self, costs=None):
        """The release's estimated work (:func:`~dpcore.release.frechet_mechanisms.
        estimate_frechet_release_work`; ``costs`` fixes the per-unit costs).

        Returns
        -------
        WorkEstimate
        """
        if self.kind.ball_support:
            self._need_ball(f"The work estimate of {self.mechanism}")
        return estimate_frechet_release_work(
            self.manifold, self.n, mechanism=self.mechanism, epsilon=self.epsilon,
            radius=self.radius, center=self.center_array, n_draws=self.n_draws,
            chain_length=self.chain_length, burn_in=self.burn_in, mode=self.mode,
            sampler=self.sampler, costs=costs)

    def predict(self, *, rng=0):
        """The predicted distance between the private and the non-private mean, from public
        inputs only.

        Laplace and KNG: :func:`~dpcore.release.accuracy.predict_frechet_error` (``rng``: the
        seed of its model release); Gaussian: :meth:`GaussianReleaseRequest.predict`.

        Returns
        -------
        dict or None
            None where no prediction exists: the ambient mechanism, paper mode, and spaces
            without a closed-form radial law (SPD(k >= 3)).
        """
        from ..accuracy import predict_frechet_error

        delegate = self._delegate()
        if delegate is not None:
            return delegate.predict()
        if self.mode == "paper" or not self.kind.error_prediction:
            return None
        try:
            return predict_frechet_error(self.manifold, self.n, epsilon=self.epsilon,
                                         radius=self.radius, center=self.center_array,
                                         mechanism=self.mechanism, rng=rng)
        except NotImplementedError:
            return None

    def smallest_epsilon(self, target, *, quantile="median", rng=0):
        """The smallest per-draw ε whose predicted ``quantile`` error is at most ``target``,
        this request's other inputs fixed (:func:`~dpcore.release.accuracy.
        smallest_frechet_epsilon`, which searches :meth:`predict`'s law over ε).

        Returns
        -------
        float or None
            None when no ε up to 10⁴ reaches ``target``.

        Raises
        ------
        NotImplementedError
            With the reason, where there is no search: the Gaussian (its σ is calibrated by
            Monte Carlo at each ε), and wherever :meth:`predict` has no law (the ambient
            mechanism, paper mode, spaces without a closed-form radial law).
        """
        from ..accuracy import smallest_frechet_epsilon

        if self.kind.no_search:
            raise NotImplementedError(self.kind.no_search)
        if self.mode == "paper" or not self.kind.error_prediction:
            raise NotImplementedError("no closed-form law of this release's error")
        return smallest_frechet_epsilon(self.manifold, self.n, target, radius=self.radius,
                                        center=self.center_array, mechanism=self.mechanism,
                                        quantile=quantile, rng=rng)

    def outline(self, plan=None):
        """The :class:`~dpcore.release.Release` this request will make, without values
        (``plan``: :meth:`plan`'s sampler decision, computed if not given)."""
        delegate = self._delegate()
        if delegate is not None:
            return delegate.outline()
        if plan is None:
            plan = self.kind.plan(self)
        coverage = pure_coverage(plan["exact"], plan.get("float_safe"))
        return record_outline(mechanism=self.mechanism,
                              epsilon=float(self.n_draws * self.epsilon),
                              delta=0.0 if coverage == "proven" else None, mu=None,
                              coverage=coverage, mode=self.mode, seeded=self.seeded,
                              from_data=self._from_data())

    def event(self, rows=1, *, source="", note=""):
        """The privacy event the release will cost, before it is made.

        Parameters
        ----------
        rows : int
            Rows per person (group privacy: ε, or µ, times ``rows``).
        source, note : str

        Returns
        -------
        PrivacyEvent
            ε = ``n_draws * epsilon`` (µ for the Gaussian), δ (0 exact, None by MCMC),
            ``guarantee`` and ``label`` as the release will state them.
        """
        return planned_event(self.outline(), rows=rows, source=source, note=note)


@dataclass(frozen=True)
class GaussianReleaseRequest(_BallRequest):
    r"""One Riemannian Gaussian private Fréchet mean (µ-GDP, paper 004), by its public inputs.

    Give exactly one of ``sigma`` (the rate; its µ is computed for the proven sensitivity),
    ``mu`` (σ calibrated to it) or ``epsilon`` (the µ equivalent to ε). The release is
    :func:`~dpcore.release.private_frechet_mean` with ``mechanism="gaussian"``.

    Attributes
    ----------
    manifold : Manifold
        Homogeneous (the mechanism's normalizing constant must not depend on the centre).
    n : int
    sigma, mu, epsilon : float or None
    radius : float or None
    center : tuple or None
        The public ball holding the data (required in strict mode; it gives the sensitivity
        Δ = 2r(2 − h)/(nh) of paper 001 Thm 2).
    mode : {"strict", "paper"}
    n_draws : int
        µ composes over the draws as µ√n_draws.
    seed : int or None
    """

    manifold: Manifold = field(compare=False)
    n: int
    sigma: float | None = None
    mu: float | None = None
    epsilon: float | None = None
    radius: float | None = None
    center: tuple | None = None
    mode: str = "strict"
    n_draws: int = 1
    seed: int | None = None
    _manifold_key: tuple = field(default=None, init=False, repr=False)

    _SCRIPT_ONLY = {"mechanism": "gaussian"}

    def __post_init__(self):
        self._set_manifold()
        given = [name for name in ("sigma", "mu", "epsilon") if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError("Give the Gaussian mechanism exactly one of `sigma`, `mu` and "
                             f"`epsilon`, got {given or 'none'}.")
        self._set(given[0], check_positive(getattr(self, given[0]), given[0]))
        if not self.manifold.is_homogeneous:
            raise ValueError(f"The Riemannian Gaussian needs a homogeneous manifold, got "
                             f"{self.manifold!r}.")
        self._check_ball()

    def release_kwargs(self):
        """The keyword arguments of :func:`~dpcore.release.private_frechet_mean` (all but the
        data, ``rng`` and ``progress``)."""
        kw = {"mechanism": "gaussian"}
        for name in ("sigma", "mu", "epsilon", "radius"):
            if getattr(self, name) is not None:
                kw[name] = getattr(self, name)
        if self.center is not None:
            kw["center"] = self.center_array
        kw.update(mode=self.mode, n_draws=self.n_draws)
        return kw

    def sensitivity(self):
        """The proven sensitivity Δ of the mean in the public ball (paper 001 Thm 2)."""
        from ...sensitivity import frechet_mean_sensitivity

        self._need_ball("The sensitivity")
        m = self.manifold
        return frechet_mean_sensitivity(self.n, self.radius, m.curvature_bounds[1],
                                        m.injectivity_radius)

    def rate(self):
        """The rate σ the release will use: :attr:`sigma`, or the one its mechanism calibrates
        to µ (:class:`~dpcore.mechanisms.RiemannianGaussian`, built as the release builds it:
        exact on R^d and S¹, seeded Monte Carlo elsewhere)."""
        from ...mechanisms import RiemannianGaussian
        from ...privacy import eps_to_mu

        if self.sigma is not None:
            return self.sigma
        mu = self.mu if self.mu is not None else float(eps_to_mu(self.epsilon))
        return float(RiemannianGaussian(manifold=self.manifold, sensitivity=self.sensitivity(),
                                        mu=mu).sigma)

    def model_release(self):
        """The release of a model data set (``n`` points at the public centre), seeded: its
        record holds the σ, µ and coverage this request's release will have, since none of
        them depends on the data (µ at a given σ is computed, or σ calibrated, by seeded
        Monte Carlo where there is no closed form). A record, never for publication.

        Returns
        -------
        Release
        """
        self._need_ball("Stating µ before the release")
        y = np.broadcast_to(self.center_array, (self.n, *self.manifold.point_shape)).copy()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # seeded, paper mode: a record only
            return private_frechet_mean(self.manifold, y, rng=0, **self.release_kwargs())

    # ------------------------------------------------------------------ questions
    def plan(self):
        """What the release will run and the label that follows, from public inputs only
        (without the Monte Carlo of µ).

        Returns
        -------
        dict
            ``mechanism`` (``"gaussian"``), ``exact`` (exact radial sampler),
            ``exact_possible``, ``sampler``, ``float_safe`` (draws on a public lattice),
            ``accounting`` (``"euclidean"`` or ``"circle"`` where µ has a closed form, else
            ``"monte_carlo"``) and ``guarantee``.
        """
        from ...privacy import exact_gdp_accounting
        from ...sampling import exact_sampler_available

        # The release draws about the data's mean with no support: on the lattice of a
        # compact space only (dpcore.mechanisms.gaussian).
        lattice = on_lattice(self.manifold, "gaussian")
        exact = bool(lattice or exact_sampler_available(self.manifold, "gaussian"))
        accounting = exact_gdp_accounting(self.manifold) or "monte_carlo"
        outline = record_outline(mechanism="gaussian", epsilon=None, delta=None, mu=None,
                                 coverage=self._coverage(exact, accounting, lattice),
                                 mode=self.mode, seeded=self.seeded,
                                 from_data=self._from_data())
        radial = "exact radial" if exact else "radial part by MCMC"
        return {"mechanism": "gaussian", "exact": exact, "exact_possible": exact,
                "sampler": LATTICE_SAMPLER if lattice else radial, "float_safe": lattice,
                "accounting": accounting, "guarantee": outline.guarantee}

    @staticmethod
    def _coverage(exact, accounting, float_safe=True):
        # The release's order: MCMC draws win over a Monte Carlo µ, which wins over floats
        # that depend on the data.
        if not exact:
            return "mcmc"
        if accounting == "monte_carlo":
            return "monte_carlo"
        return "proven" if float_safe else "float"

    def work(self, costs=None):
        """The release's estimated work: the Monte Carlo accounting of µ where it has no
        closed form (:func:`~dpcore.release.frechet_mechanisms.estimate_frechet_release_work`).

        Returns
        -------
        WorkEstimate
        """
        return estimate_frechet_release_work(
            self.manifold, self.n, mechanism="gaussian", epsilon=self.epsilon,
            radius=self.radius, center=self.center_array, sigma=self.sigma,
            n_draws=self.n_draws, mode=self.mode, costs=costs)

    def predict(self):
        """The exact law of the distance between the release and the non-private mean
        (:func:`~dpcore.release.accuracy.predict_gaussian_error`; only σ enters, calibrated
        first when ``mu`` or ``epsilon`` is given).

        Returns
        -------
        dict or None
            None in paper mode and on spaces without a closed-form radial law.
        """
        from ...sampling import exact_sampler_available
        from ..accuracy import predict_gaussian_error

        # Without a closed-form radial law there is nothing to predict: say so before the
        # Monte Carlo calibration of σ.
        if self.mode == "paper" or not exact_sampler_available(self.manifold, "gaussian"):
            return None
        try:
            return predict_gaussian_error(self.manifold, self.rate())
        except NotImplementedError:
            return None

    def outline(self):
        """The :class:`~dpcore.release.Release` this request will make, without values. At a
        µ or an ε the release records that µ (composed over the draws) and its coverage is
        :meth:`plan`'s; at a rate σ, µ is the Monte Carlo estimate of :meth:`model_release`."""
        from ...privacy import compose_gdp, eps_to_mu

        if self.sigma is not None:
            rec = self.model_release()
            mu, delta, coverage = rec.mu, rec.delta, rec.coverage
        else:
            plan = self.plan()
            per_draw = self.mu if self.mu is not None else float(eps_to_mu(self.epsilon))
            mu, delta = float(compose_gdp([per_draw] * self.n_draws)), None
            coverage = self._coverage(plan["exact"], plan["accounting"], plan["float_safe"])
        return record_outline(mechanism="gaussian", epsilon=None, delta=delta, mu=mu,
                              coverage=coverage, mode=self.mode, seeded=self.seeded,
                              from_data=self._from_data())

    def event(self, rows=1, *, source="", note=""):
        """The privacy event the release will cost, before it is made.

        Parameters
        ----------
        rows : int
            Rows per person (group privacy: µ times ``rows``).
        source, note : str

        Returns
        -------
        PrivacyEvent
            ``mu`` (over all draws; at a given σ the Monte Carlo estimate plus 3 standard
            errors, as the release records it), ``epsilon`` and ``delta`` None, ``guarantee``
            and ``label`` as the release will state them.
        """
        return planned_event(self.outline(), rows=rows, source=source, note=note)
