"""What every privacy mechanism is: a :class:`Mechanism` carries its proven guarantee
(:class:`Guarantee`) and draws its own outputs (issue 29 point 2).

A mechanism object is built from public inputs only (the manifold, the budget, the
sensitivity, public bounds); its :meth:`Mechanism.guarantee` states what one draw costs
before any data are seen, as OpenDP's measurements carry their privacy map. Two ways to draw:

* :class:`StatisticMechanism` -- perturbs a statistic computed from the data
  (``release(statistic, size, rng)``): the Riemannian Laplace and Gaussian mechanisms, the
  ambient Laplace mechanism.
* :class:`DataMechanism` -- reads the data itself (``release(data, size, rng)``): the
  exponential-mechanism quantiles.
* :class:`GradientMechanism` -- samples a density given by a gradient field
  (``sample(gradient_norm, init, size, rng)``): the K-norm gradient mechanism.

A new mechanism is one class that satisfies one of these protocols plus its audit test; the
contract tests in ``tests/mechanisms/test_protocol.py`` check every class that
:func:`dpcore.mechanisms.mechanism_classes` lists.
"""

from __future__ import annotations

import dataclasses
import math
from typing import ClassVar, Protocol, runtime_checkable

__all__ = ["DataMechanism", "GradientMechanism", "Guarantee", "Mechanism",
           "StatisticMechanism"]


@dataclasses.dataclass(frozen=True)
class Guarantee:
    """The privacy statement of one draw of a mechanism.

    Attributes
    ----------
    epsilon : float or None
        Pure-DP budget of one draw (None for a Gaussian-DP mechanism).
    delta : float or None
        0.0 where an exact sampler draws the mechanism's law; the approximate-DP δ of an
        MCMC draw (order 1/chain length, paper 002 app. A.1, assuming the chain mixed);
        None for Gaussian DP.
    mu : float or None
        GDP parameter (Gaussian mechanism only).
    sensitivity : float
        The proven sensitivity Δ the noise is scaled to.
    sigma : float
        The noise scale.
    sigma_rule : str
        How ``sigma`` follows from Δ and the budget.
    note : str or None
        What the statement assumes beyond its numbers (e.g. a mixed chain).
    mu_standard_error : float
        Standard error of a Monte Carlo estimate of ``mu`` (0 when exact).
    accounting : str or None
        How ``mu`` was obtained (Gaussian mechanism).
    """

    epsilon: float | None
    delta: float | None
    mu: float | None
    sensitivity: float
    sigma: float
    sigma_rule: str = ""
    note: str | None = None
    mu_standard_error: float = 0.0
    accounting: str | None = None

    def __post_init__(self):
        if (self.epsilon is None) == (self.mu is None):
            raise ValueError("A guarantee states exactly one of `epsilon` (pure DP) and `mu` "
                             "(Gaussian DP).")
        for name in ("epsilon", "mu"):
            value = getattr(self, name)
            if value is not None and not (value > 0 and math.isfinite(value)):
                raise ValueError(f"`{name}` must be positive and finite, got {value!r}.")
        if self.delta is not None and not 0.0 <= self.delta <= 1.0:
            raise ValueError(f"`delta` must lie in [0, 1], got {self.delta!r}.")
        if not (self.sensitivity > 0 and self.sigma > 0):
            raise ValueError("A guarantee needs a positive sensitivity and noise scale.")

    @property
    def pure(self):
        """True for ε-DP with δ = 0 (an exact draw of a pure-DP mechanism)."""
        return self.epsilon is not None and self.delta == 0.0

    def as_dict(self):
        """The statement as a JSON-safe dict (None fields left out)."""
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}


@runtime_checkable
class Mechanism(Protocol):
    """A privacy mechanism: a name, its proven sensitivity and noise scale, its guarantee."""

    name: ClassVar[str]
    sensitivity: float
    sigma: float

    def guarantee(self) -> Guarantee:
        """What one draw is proven to cost (public inputs only)."""


@runtime_checkable
class StatisticMechanism(Mechanism, Protocol):
    """A mechanism that perturbs one statistic of the data."""

    def release(self, statistic, size=None, rng=None):
        """Private draws about ``statistic``: a :class:`~dpcore.mechanisms.MechanismResult`
        with ``values`` of shape ``(*size, *point_shape)``."""


@runtime_checkable
class DataMechanism(Mechanism, Protocol):
    """A mechanism that reads the data itself."""

    def release(self, data, size=None, rng=None):
        """Private draws from ``data``: a :class:`~dpcore.mechanisms.MechanismResult`."""


@runtime_checkable
class GradientMechanism(Mechanism, Protocol):
    """A mechanism with density :math:`\\propto \\exp(-\\|\\nabla E\\|/\\sigma)` (KNG)."""

    def sample(self, gradient_norm, init, size=1, rng=None):
        """Draws from the density of ``gradient_norm``: a
        :class:`~dpcore.mechanisms.MechanismResult`."""
