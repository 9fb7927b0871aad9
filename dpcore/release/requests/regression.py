"""The request of a private geodesic (or linear) regression release."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..._validation import (
    check_bound_sources,
    check_choice,
    check_int,
    check_interval,
    check_positive,
)
from ...manifolds import Euclidean
from ...manifolds.base import Manifold
from .._accuracy_common import _log_bisect
from ..planning import plan_regression_sampler
from ..record import MODES, SAMPLERS, SCHEMES
from ..regression import BOUND_NAMES, private_geodesic_regression
from ..work import estimate_regression_work
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

#: Error metrics of :meth:`GeodesicRegressionRequest.predict`.
METRICS = ("distance", "excess_mse")


@dataclass(frozen=True)
class GeodesicRegressionRequest(Request):
    r"""One private geodesic regression release, described by its public inputs only.

    The fields are the public arguments of
    :func:`~dpcore.release.private_geodesic_regression` (same names, same meaning and
    defaults) plus ``n``, the number of rows (public: the release states it), and ``seed``
    (None: OS entropy). Linear regression is geodesic regression on ``Euclidean(d)``
    (:meth:`linear`).

    Attributes
    ----------
    manifold : Manifold
    n : int
    eps_p, eps_v : float
        Budget of the footpoint and of each shooting vector (joint scheme: their sum, once per
        geodesic).
    tau, covariate_range, tau_m, center, max_speed, footpoint_radius
        Public bounds (``covariate_range`` a ``(low, high)`` tuple, ``center`` a point held
        as nested tuples; :attr:`center_array` gives the array).
    n_vectors, n_footpoints : int
    scheme : {None, "joint", "sequential"}
        None: the release's default (joint in strict mode, sequential in paper mode).
    sampler : {"auto", "exact", "mcmc"}
    mode : {"strict", "paper"}
    chain_length, burn_in : int
    max_work : float or None
        Work budget in seconds (None: the library's default).
    bound_sources : tuple of (name, source)
        Pass a mapping; held as sorted pairs. A bound marked ``"data"`` makes the release
        "NOT PRIVATE (bounds from the data)".
    seed : int or None

    Examples
    --------
    >>> from dpcore.manifolds import Sphere
    >>> req = GeodesicRegressionRequest(Sphere(2), 40, eps_p=0.5, eps_v=0.5, tau=0.2,
    ...                                 covariate_range=(0.0, 1.0))
    >>> req.event().guarantee, req.event().epsilon
    ('private', 1.0)
    """

    manifold: Manifold = field(compare=False)
    n: int
    eps_p: float
    eps_v: float
    tau: float | None = None
    covariate_range: tuple | None = None
    tau_m: float | None = None
    center: tuple | None = None
    n_vectors: int = 1
    n_footpoints: int = 1
    max_speed: float | None = None
    footpoint_radius: float | None = None
    scheme: str | None = None
    sampler: str = "auto"
    mode: str = "strict"
    chain_length: int = 2000
    burn_in: int = 1000
    max_work: float | None = None
    bound_sources: tuple = ()
    seed: int | None = None
    _manifold_key: tuple = field(default=None, init=False, repr=False)

    def __post_init__(self):
        self._set_manifold()
        m = self.manifold
        self._set("n", check_int(self.n, "n", minimum=2))
        self._set("eps_p", check_positive(self.eps_p, "eps_p"))
        self._set("eps_v", check_positive(self.eps_v, "eps_v"))
        for name in ("tau", "tau_m", "max_speed", "footpoint_radius"):
            self._set(name, optional_positive(getattr(self, name), name))
        if self.covariate_range is not None:
            self._set("covariate_range", check_interval(self.covariate_range,
                                                        "covariate_range"))
        self._set("center", point_tuple(m, self.center, "center"))
        self._set("n_vectors", check_int(self.n_vectors, "n_vectors"))
        self._set("n_footpoints", check_int(self.n_footpoints, "n_footpoints"))
        if self.scheme is not None:
            check_choice(self.scheme, "scheme", SCHEMES)
        check_choice(self.sampler, "sampler", SAMPLERS)
        check_choice(self.mode, "mode", MODES)
        self._set("chain_length", check_int(self.chain_length, "chain_length"))
        self._set("burn_in", check_int(self.burn_in, "burn_in", minimum=0))
        self._set("max_work", optional_budget(self.max_work))
        self._set("seed", optional_seed(self.seed))
        sources = self.bound_sources
        if isinstance(sources, (tuple, list)):  # the sorted pairs a request holds
            try:
                sources = dict(sources) if sources else None
            except (TypeError, ValueError):
                raise TypeError("`bound_sources` must be a mapping of bound names to sources, "
                                f"got {self.bound_sources!r}.") from None
        sources = check_bound_sources(sources, "bound_sources", BOUND_NAMES)
        for name in sources:
            if getattr(self, name) is None:
                raise ValueError(f"`bound_sources` names {name!r}, which was not passed: only "
                                 "a supplied bound has a source.")
        self._set("bound_sources", tuple(sorted(sources.items())))
        if self.mode == "strict":
            if self.covariate_range is None:
                raise ValueError("Strict mode needs a public `covariate_range=(low, high)`.")
            if self.tau is None:
                raise ValueError("Strict mode needs a public residual bound `tau`.")
            if self.needs_ball and self.tau_m is None:
                raise ValueError(f"Strict mode on {m!r} needs `tau_m`, the radius of a public "
                                 "ball about `center` holding the responses.")

    # ------------------------------------------------------------------ construction
    @classmethod
    def linear(cls, d, n, *, epsilon=None, **kwargs):
        """A linear regression request: geodesic regression on ``Euclidean(d)`` (``d``
        responses), e.g. the Linear regression page's release.

        ``epsilon``, if given instead of ``eps_p`` and ``eps_v``, is split equally between
        them (the joint scheme uses only their sum). Other arguments as the class's fields.
        """
        if epsilon is not None:
            if "eps_p" in kwargs or "eps_v" in kwargs:
                raise ValueError("Give `epsilon` or `eps_p` and `eps_v`, not both.")
            epsilon = check_positive(epsilon, "epsilon")
            kwargs.update(eps_p=0.5 * epsilon, eps_v=0.5 * epsilon)
        return cls(Euclidean(check_int(d, "d")), n, **kwargs)

    # ------------------------------------------------------------------ public facts
    @property
    def needs_ball(self):
        """Whether the responses need a public ball ``B_{tau_m}(center)`` (curvature can be
        negative, or the space is not compact)."""
        return self.manifold.curvature_bounds[0] < 0 or not self.manifold.is_compact

    @property
    def center_array(self):
        """:attr:`center` as an array (None if not given)."""
        return None if self.center is None else np.asarray(self.center, dtype=float)

    @property
    def resolved_scheme(self):
        """The scheme the release runs: :attr:`scheme`, or the mode's default."""
        if self.scheme is not None:
            return self.scheme
        return "joint" if self.mode == "strict" else "sequential"

    @property
    def draws(self):
        """Geodesics drawn: ``n_footpoints * n_vectors``."""
        return self.n_footpoints * self.n_vectors

    @property
    def epsilon(self):
        """Total ε of the release: every drawn geodesic is a use of the data (joint: draws x
        (ε_p + ε_v); sequential: footpoints x ε_p + draws x ε_v)."""
        if self.resolved_scheme == "joint":
            return self.draws * (self.eps_p + self.eps_v)
        return self.n_footpoints * self.eps_p + self.draws * self.eps_v

    def release_kwargs(self):
        """The keyword arguments of :func:`~dpcore.release.private_geodesic_regression`
        (all but the data, ``rng`` and ``progress``); unset optional bounds are left out."""
        kw = {"eps_p": self.eps_p, "eps_v": self.eps_v}
        for name in ("tau", "covariate_range", "tau_m"):
            if getattr(self, name) is not None:
                kw[name] = getattr(self, name)
        if self.center is not None:
            kw["center"] = self.center_array
        kw.update(n_vectors=self.n_vectors, n_footpoints=self.n_footpoints, mode=self.mode)
        for name in ("max_speed", "footpoint_radius", "scheme", "max_work"):
            if getattr(self, name) is not None:
                kw[name] = getattr(self, name)
        kw.update(sampler=self.sampler, chain_length=self.chain_length, burn_in=self.burn_in)
        if self.bound_sources:
            kw["bound_sources"] = dict(self.bound_sources)
        return kw

    def _from_data(self):
        """The bounds the release will hold as taken from the data."""
        names = {name for name, source in self.bound_sources if source == "data"}
        if self.mode == "paper":
            names |= {name for name in ("covariate_range", "tau")
                      if getattr(self, name) is None}
            if self.needs_ball and self.tau_m is None:
                names.add("tau_m")
        return sorted(names)

    # ------------------------------------------------------------------ questions
    def plan(self):
        """Exact or MCMC, and the label that follows, from public inputs only
        (:func:`~dpcore.release.plan_regression_sampler`).

        Returns
        -------
        dict
            As :func:`~dpcore.release.plan_regression_sampler`, except that ``guarantee`` is
            ``"not private"`` when :attr:`bound_sources` marks a bound as taken from the data
            (that function does not take them; the release's label does).
        """
        out = plan_regression_sampler(
            self.manifold, self.n, eps_p=self.eps_p, eps_v=self.eps_v, tau=self.tau,
            tau_m=self.tau_m, max_speed=self.max_speed, draws=self.draws, mode=self.mode,
            scheme=self.scheme, sampler=self.sampler, footpoint_radius=self.footpoint_radius)
        if self._from_data():
            out["guarantee"] = "not private"
        return out

    def exact_reach(self, *, span=1e3, resolution=0.01):
        """The largest ε_p + ε_v per geodesic, at this request's split ε_p : ε_v, n, draws
        and public bounds, at which ``sampler="auto"`` draws exactly (:meth:`plan`; public
        inputs only).

        The plan is monotone in n·ε (``tests/release/test_uniform_cost.py``), so the reach is
        found by bisection on a log scale.

        Parameters
        ----------
        span : float
            The search runs over ε_p + ε_v in [E / span, E · span], E this request's.
        resolution : float
            Relative width of the final bracket.

        Returns
        -------
        float or None
            The lower end of the final bracket (the plan is exact there, so the value is
            never above the reach); ``E · span`` if the plan is exact there too; None if it is
            not exact even at ``E / span`` (no exact sampler for this space, or the sequential
            scheme).
        """
        total = self.eps_p + self.eps_v
        share = self.eps_p / total

        def exact(t):
            request = self.replace(eps_p=share * t, eps_v=(1.0 - share) * t, sampler="auto")
            return bool(request.plan()["exact"])

        lo, hi = total / span, total * span
        if not exact(lo):
            return None
        if exact(hi):
            return hi
        return _log_bisect(exact, good=lo, bad=hi, rel_tol=resolution, max_iter=200)

    def work(self, costs=None):
        """The release's estimated work (:func:`~dpcore.release.work.
        estimate_regression_work`; ``costs`` fixes the per-unit costs instead of the
        calibrated ones).

        Returns
        -------
        WorkEstimate
        """
        return estimate_regression_work(
            self.manifold, self.n, eps_p=self.eps_p, eps_v=self.eps_v, tau=self.tau,
            tau_m=self.tau_m, max_speed=self.max_speed, n_vectors=self.n_vectors,
            n_footpoints=self.n_footpoints, chain_length=self.chain_length,
            burn_in=self.burn_in, mode=self.mode, scheme=self.scheme, sampler=self.sampler,
            costs=costs, footpoint_radius=self.footpoint_radius)

    def predict(self, *, metric="distance", proposals=None, min_ess=None, rng=0):
        """The predicted error of the release, from public inputs only.

        Parameters
        ----------
        metric : {"distance", "excess_mse"}
            ``"distance"``: footpoint and geodesic errors in the data's units
            (:func:`~dpcore.release.accuracy.predict_regression_error`). ``"excess_mse"``
            (``Euclidean(d)`` only): the mean squared error above least squares, the Linear
            regression page's unit (:func:`~dpcore.release.accuracy.
            predict_linear_regression_error`; it assumes the default footpoint support).
        proposals, min_ess : optional
            As for those functions (None: their defaults).
        rng : int
            Seed of the prediction (fixed: the same request gives the same prediction).

        Returns
        -------
        dict or None
            That function's result; None where no prediction exists: paper mode (its bounds
            come from the data) and the sequential scheme (the predictions are of the strict
            joint release).
        """
        from .. import accuracy

        check_choice(metric, "metric", METRICS)
        if self.mode == "paper" or self.resolved_scheme != "joint":
            return None
        extra = {k: v for k, v in (("proposals", proposals), ("min_ess", min_ess))
                 if v is not None}
        if metric == "excess_mse":
            if not self.manifold.is_linear:
                raise ValueError(f"`metric='excess_mse'` is for linear regression on "
                                 f"Euclidean(d), not {self.manifold!r}.")
            if self.footpoint_radius is not None:
                raise ValueError("The excess-MSE prediction assumes the default footpoint "
                                 "support B_{tau_m + tau}(center); this request sets "
                                 "`footpoint_radius`.")
            return accuracy.predict_linear_regression_error(
                self.n, self.manifold.d, epsilon=self.eps_p + self.eps_v, tau=self.tau,
                tau_m=self.tau_m, max_speed=self.max_speed, rng=rng, **extra)
        return accuracy.predict_regression_error(
            self.manifold, self.n, eps_p=self.eps_p, eps_v=self.eps_v, tau=self.tau,
            tau_m=self.tau_m, center=self.center_array, max_speed=self.max_speed,
            footpoint_radius=self.footpoint_radius, rng=rng, **extra)

    def outline(self):
        """The :class:`~dpcore.release.Release` this request will make, without values:
        total ε, δ (0 when exact, None for MCMC), coverage, mode, the bounds from the data;
        its ``guarantee`` and ``label`` are the release's."""
        scheme = self.resolved_scheme
        if scheme == "joint":
            exact = bool(self.plan()["exact"])
            coverage = "proven" if exact else "mcmc"
        else:
            # Closed-form K-norm stages without clipping: R^d in paper mode (as the release
            # and estimate_regression_work decide); MCMC otherwise.
            exact = bool(self.manifold.is_linear and self.mode == "paper")
            coverage = "sequential"
        return record_outline(mechanism=f"kng_{scheme}", epsilon=float(self.epsilon),
                              delta=0.0 if exact else None, mu=None, coverage=coverage,
                              mode=self.mode, seeded=self.seeded, from_data=self._from_data())

    def event(self, rows=1, *, source="", note=""):
        """The privacy event the release will cost, before it is made.

        Parameters
        ----------
        rows : int
            Rows per person: group privacy multiplies ε by ``rows``
            (:func:`~dpcore.release.requests.group_privacy`).
        source, note : str
            Stored in the event (e.g. the page, for a ledger).

        Returns
        -------
        PrivacyEvent
            ``epsilon`` (total over every drawn geodesic), ``delta`` (0 exact, None MCMC),
            ``mu`` (None), ``guarantee`` and ``label`` as the release will state them (its
            label assumes ``rng`` is not passed to :meth:`run` in place of :attr:`seed`).
        """
        return planned_event(self.outline(), rows=rows, source=source, note=note)

    def run(self, x, y, *, rng=None, progress=None):
        """Make the release (:func:`~dpcore.release.private_geodesic_regression`).

        Parameters
        ----------
        x : array-like, shape (n,)
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
        return private_geodesic_regression(
            self.manifold, x, y, rng=self.seed if rng is None else rng, progress=progress,
            **self.release_kwargs())
