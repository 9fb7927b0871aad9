"""The request of a two-stage private geodesic regression (a private centre, then the joint
KNG in a public-radius ball about it; :mod:`dpcore.release.two_stage`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..._validation import check_choice, check_int, check_interval, check_positive
from ...manifolds.base import Manifold
from ..record import SAMPLERS
from ..two_stage import (
    CENTER_MECHANISMS,
    _center_ball,
    private_geodesic_regression_two_stage,
    weaker_coverage,
)
from ..work import estimate_work
from ._base import (
    Request,
    check_rows,
    nested_tuple,
    optional_budget,
    optional_positive,
    optional_seed,
    planned_event,
    record_outline,
)
from .frechet import FrechetMeanRequest
from .regression import GeodesicRegressionRequest


@dataclass(frozen=True)
class TwoStageRegressionRequest(Request):
    r"""One two-stage private geodesic regression, described by its public inputs only.

    The fields are the public arguments of
    :func:`~dpcore.release.private_geodesic_regression_two_stage` (same names and meaning)
    plus ``n`` and ``seed``. Its questions are answered stage by stage: :meth:`stage1` is the
    :class:`FrechetMeanRequest` of the private centre, :meth:`stage2` the
    :class:`GeodesicRegressionRequest` of the joint KNG in the footpoint ball; the total ε is
    ``eps_center + draws × (eps_p + eps_v)`` and the guarantee the weaker stage's.

    Attributes
    ----------
    manifold : Manifold
    n : int
    eps_center : float
        ε₁ of the private centre, spent once.
    eps_p, eps_v : float
        The budget of one geodesic in stage 2 (the joint scheme uses their sum).
    tau, covariate_range, footpoint_radius, tau_m, max_speed
        Stage 2's public bounds; ``footpoint_radius`` is ρ of the ball ``B_ρ(c̃)`` about the
        private centre.
    center_ball : tuple or None
        ``(center, radius)`` of the public stage-1 ball (the centre held as nested tuples);
        None on a compact space with the ambient mechanism: the whole space.
    center_mechanism : {"laplace", "kng", "ambient_laplace"}
    n_footpoints, n_vectors : int
    sampler, center_sampler : {"auto", "exact", "mcmc"}
    chain_length, burn_in : int
    max_work : float or None
    seed : int or None

    Examples
    --------
    >>> from dpcore.manifolds import Sphere
    >>> req = TwoStageRegressionRequest(
    ...     Sphere(2), 40, eps_center=0.5, eps_p=0.25, eps_v=0.25, tau=0.2,
    ...     covariate_range=(0.0, 1.0), footpoint_radius=0.6,
    ...     center_ball=([0.0, 0.0, 1.0], 0.5))
    >>> req.epsilon
    1.0
    """

    manifold: Manifold = field(compare=False)
    n: int
    eps_center: float
    eps_p: float
    eps_v: float
    tau: float
    covariate_range: tuple
    footpoint_radius: float
    center_ball: tuple | None = None
    center_mechanism: str = "laplace"
    tau_m: float | None = None
    max_speed: float | None = None
    n_footpoints: int = 1
    n_vectors: int = 1
    sampler: str = "auto"
    center_sampler: str = "auto"
    chain_length: int = 2000
    burn_in: int = 1000
    max_work: float | None = None
    seed: int | None = None
    _manifold_key: tuple = field(default=None, init=False, repr=False)

    def __post_init__(self):
        self._set_manifold()
        self._set("n", check_int(self.n, "n", minimum=2))
        for name in ("eps_center", "eps_p", "eps_v", "tau", "footpoint_radius"):
            self._set(name, check_positive(getattr(self, name), name))
        for name in ("tau_m", "max_speed"):
            self._set(name, optional_positive(getattr(self, name), name))
        self._set("covariate_range", check_interval(self.covariate_range, "covariate_range"))
        check_choice(self.center_mechanism, "center_mechanism", CENTER_MECHANISMS)
        check_choice(self.sampler, "sampler", SAMPLERS)
        check_choice(self.center_sampler, "center_sampler", SAMPLERS)
        for name in ("n_footpoints", "n_vectors", "chain_length"):
            self._set(name, check_int(getattr(self, name), name))
        self._set("burn_in", check_int(self.burn_in, "burn_in", minimum=0))
        self._set("max_work", optional_budget(self.max_work))
        self._set("seed", optional_seed(self.seed))
        # The ball is checked as the release checks it (r* of the mechanism, an embedding for
        # the ambient one) and held as public floats.
        center, radius = _center_ball(self.manifold, self.center_ball, self.center_mechanism)
        self._set("center_ball", None if self.center_ball is None else
                  (nested_tuple(center), float(radius)))
        # Stage 2's own checks (e.g. a missing tau_m, a footpoint ball beyond tau_m + tau).
        self.stage2()

    # ------------------------------------------------------------------ the stages
    def _ball(self):
        """The stage-1 ball ``(center array, radius)`` (the whole space when None)."""
        center, radius = _center_ball(self.manifold, self.center_ball, self.center_mechanism)
        return np.asarray(center, dtype=float), float(radius)

    @property
    def draws(self):
        """Geodesics drawn in stage 2: ``n_footpoints * n_vectors``."""
        return self.n_footpoints * self.n_vectors

    @property
    def epsilon(self):
        """Total ε: ``eps_center + draws × (eps_p + eps_v)`` (basic composition)."""
        return self.eps_center + self.draws * (self.eps_p + self.eps_v)

    def stage1(self):
        """The request of the private centre (one draw, no seed of its own)."""
        center, radius = self._ball()
        return FrechetMeanRequest(self.manifold, self.n, epsilon=self.eps_center,
                                  mechanism=self.center_mechanism, radius=radius,
                                  center=center, sampler=self.center_sampler,
                                  chain_length=self.chain_length, burn_in=self.burn_in)

    def stage2(self, center=None):
        """The request of stage 2, its footpoint ball about ``center`` (a released stage-1
        centre; before the release, the stage-1 ball's centre stands in for it: the plan,
        the work and the label do not depend on where the ball is)."""
        if center is None:
            center = self._ball()[0]
        return GeodesicRegressionRequest(
            self.manifold, self.n, eps_p=self.eps_p, eps_v=self.eps_v, tau=self.tau,
            covariate_range=self.covariate_range, tau_m=self.tau_m, center=center,
            n_vectors=self.n_vectors, n_footpoints=self.n_footpoints,
            max_speed=self.max_speed, footpoint_radius=self.footpoint_radius,
            scheme="joint", sampler=self.sampler, mode="strict",
            chain_length=self.chain_length, burn_in=self.burn_in)

    # ------------------------------------------------------------------ questions
    def release_kwargs(self):
        """The keyword arguments of
        :func:`~dpcore.release.private_geodesic_regression_two_stage` (all but the data,
        ``rng`` and ``progress``)."""
        kw = {"eps_center": self.eps_center, "eps_p": self.eps_p, "eps_v": self.eps_v,
              "tau": self.tau, "covariate_range": self.covariate_range,
              "footpoint_radius": self.footpoint_radius,
              "center_mechanism": self.center_mechanism}
        if self.center_ball is not None:
            kw["center_ball"] = (np.asarray(self.center_ball[0], dtype=float),
                                 self.center_ball[1])
        for name in ("tau_m", "max_speed", "max_work"):
            if getattr(self, name) is not None:
                kw[name] = getattr(self, name)
        kw.update(n_footpoints=self.n_footpoints, n_vectors=self.n_vectors,
                  sampler=self.sampler, center_sampler=self.center_sampler,
                  chain_length=self.chain_length, burn_in=self.burn_in)
        return kw

    def plan(self):
        """Each stage's plan and the label of the whole, from public inputs only.

        Returns
        -------
        dict
            ``stage1`` and ``stage2`` (their requests' plans), ``exact`` (both stages draw
            exactly), ``float_safe`` (stage 1's draws lie on a public lattice) and
            ``guarantee`` (the release's: the weaker stage's).
        """
        first, second = self.stage1().plan(), self.stage2().plan()
        return {"stage1": first, "stage2": second,
                "exact": bool(first["exact"] and second["exact"]),
                "float_safe": first.get("float_safe"),
                "guarantee": self.outline().guarantee}

    def work(self, costs=None):
        """The estimated work of both stages together
        (:class:`~dpcore.release.work.WorkEstimate`), as the release checks it."""
        first, second = self.stage1().work(costs=costs), self.stage2().work(costs=costs)
        return estimate_work(*first.parts, *second.parts)

    def outline(self):
        """The :class:`~dpcore.release.Release` this request will make, without values: the
        total ε, δ (0 only when both stages are exact and float-safe, else None) and the
        weaker stage's coverage."""
        first, second = self.stage1().outline(), self.stage2().outline()
        coverage = weaker_coverage(first.coverage, second.coverage)
        return record_outline(
            mechanism=f"two_stage({self.center_mechanism} centre + kng_joint)",
            epsilon=float(self.epsilon), delta=0.0 if coverage == "proven" else None,
            mu=None, coverage=coverage, mode="strict", seeded=self.seeded)

    def event(self, rows=1, *, source="", note=""):
        """The privacy event the release will cost (group privacy at ``rows`` rows per
        person), before it is made: a :class:`~dpcore.privacy.PrivacyEvent`."""
        return planned_event(self.outline(), rows=rows, source=source, note=note)

    def run(self, x, y, *, rng=None, progress=None):
        """Make the release (:func:`~dpcore.release.private_geodesic_regression_two_stage`;
        ``rng`` None: :attr:`seed`, None there too: OS entropy)."""
        check_rows(y, self.n, "y")
        return private_geodesic_regression_two_stage(
            self.manifold, x, y, rng=self.seed if rng is None else rng, progress=progress,
            **self.release_kwargs())
