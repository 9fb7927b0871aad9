"""The request of a private range estimate (:func:`~dpcore.release.private_range`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._progress import report
from ..._validation import check_int, check_interval, check_positive, check_quantile_levels
from ..bounds import DEFAULT_RANGE_QUANTILES, private_range
from ..work import estimate_work
from ._base import Request, optional_seed, planned_event, record_outline


@dataclass(frozen=True)
class PrivateRangeRequest(Request):
    r"""Columns' ranges estimated under DP, described by their public inputs only.

    The fields are the arguments of :func:`~dpcore.release.private_range` but the data, plus
    ``seed``. The exponential mechanism draws exactly (δ = 0) and its budget does not depend
    on the number of rows, so no ``n`` is needed.

    Attributes
    ----------
    epsilon : float
        Budget of one draw (all columns and levels together).
    bounds : tuple
        One public enclosing interval ``(low, high)`` for every column, or one per column
        (a tuple of such pairs).
    quantiles : tuple of float
        Levels in [0, 1].
    n_draws : int
    seed : int or None
    """

    epsilon: float
    bounds: tuple
    quantiles: tuple = DEFAULT_RANGE_QUANTILES
    n_draws: int = 1
    seed: int | None = None

    def __post_init__(self):
        self._set("epsilon", check_positive(self.epsilon, "epsilon"))
        bounds = self.bounds
        if np.ndim(np.asarray(bounds, dtype=object)) == 2:
            bounds = tuple(check_interval(tuple(b), f"bounds[{j}]") for j, b in enumerate(bounds))
            if not bounds:
                raise ValueError("`bounds` must hold at least one (low, high) pair.")
        else:
            bounds = check_interval(bounds, "bounds")
        self._set("bounds", bounds)
        self._set("quantiles", tuple(float(q) for q in check_quantile_levels(self.quantiles,
                                                                             "quantiles")))
        self._set("n_draws", check_int(self.n_draws, "n_draws"))
        self._set("seed", optional_seed(self.seed))

    @property
    def per_column(self):
        """Whether :attr:`bounds` gives one interval per column."""
        return isinstance(self.bounds[0], tuple)

    def release_kwargs(self):
        """The keyword arguments of :func:`~dpcore.release.private_range` (all but the data
        and ``rng``)."""
        return {"epsilon": self.epsilon, "bounds": self.bounds, "quantiles": self.quantiles,
                "n_draws": self.n_draws}

    # ------------------------------------------------------------------ questions
    def plan(self):
        """The exponential mechanism draws exactly: always private, δ = 0.

        Returns
        -------
        dict
            ``mechanism``, ``exact`` (True), ``exact_possible``, ``sampler`` and
            ``guarantee``.
        """
        from ...mechanisms import ExponentialQuantile
        from ...mechanisms.quantile import SAMPLER

        return {"mechanism": ExponentialQuantile.name, "exact": True, "exact_possible": True,
                "sampler": SAMPLER, "guarantee": self.outline().guarantee}

    def work(self, costs=None):
        """No stage worth estimating: one sort and a closed-form draw per column and draw.

        Returns
        -------
        WorkEstimate
            Without parts (0 seconds); ``costs`` is accepted for a uniform interface.
        """
        return estimate_work()

    def predict(self):
        """No prediction before release (the quantiles' error depends on the data's spread).

        Returns
        -------
        None
        """
        return None

    def outline(self):
        """The :class:`~dpcore.release.Release` this request will make, without values."""
        from ...mechanisms import ExponentialQuantile

        return record_outline(mechanism=ExponentialQuantile.name,
                              epsilon=float(self.n_draws * self.epsilon), delta=0.0, mu=None,
                              coverage="proven", mode="strict", seeded=self.seeded)

    def event(self, rows=1, *, source="", note=""):
        """The privacy event the estimate will cost: ε = ``n_draws * epsilon`` (times
        ``rows`` per person), δ = 0, ``guarantee`` "private".

        Returns
        -------
        PrivacyEvent
        """
        return planned_event(self.outline(), rows=rows, source=source, note=note)

    def run(self, x, *, rng=None, progress=None):
        """Make the estimate (:func:`~dpcore.release.private_range`).

        Parameters
        ----------
        x : array-like, shape (n,) or (n, k)
        rng : None, int or Generator
            None: :attr:`seed` (None there too: OS entropy).
        progress : callable, optional
            Called with 1.0 when done (the draws are closed form).

        Returns
        -------
        Release
        """
        release = private_range(x, rng=self.seed if rng is None else rng,
                                **self.release_kwargs())
        report(progress, 1.0)
        return release
