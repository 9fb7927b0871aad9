"""A session's running privacy total: releases composed into one guarantee, with a budget cap.

Each release (:class:`dpcore.release.Release`, or any object with ``epsilon``, ``delta``,
``mu``, ``guarantee`` and ``label``) is an event. Events that carry a guarantee (``private`` or
``approximately private``) compose; ``not private`` / ``not covered`` releases carry none, so
they are listed apart and never added (adding a void guarantee would be meaningless).

Composition, for a target δ > 0, takes the better of two valid routes:

- basic: pure-DP releases add their ε (δ = 0 for exact ones), Gaussian-DP releases compose
  exactly as :math:`\\mu = \\sqrt{\\sum \\mu_j^2}` (paper 004) and that µ-GDP total is
  :math:`(\\epsilon_\\mu(\\delta), \\delta)`-DP; the sum of the two ε's holds at δ;
- all-GDP: every ε-DP release is also µ-GDP with :math:`\\mu = -2\\Phi^{-1}(1/(1+e^\\epsilon))`
  (:func:`~dpcore.privacy.gdp.eps_to_mu`), so everything composes exactly as one µ.

With no Gaussian-DP release and only exact samplers, δ = 0 and the total is Σ ε. MCMC releases
(δ not certified) are added with their ε and flagged: the total then holds only as far as their
chains mixed. ``dp_accounting``'s PLD accountant is the test oracle: the total here is never
below its (tight) ε at the same δ.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
from scipy import optimize

from .._validation import check_positive
from ..exceptions import PrivacyBudgetError
from .gdp import compose_gdp, delta_mu, eps_to_mu

#: Guarantees that compose; the others are listed apart.
COMPOSING = ("private", "approximately private")


def epsilon_of_gdp(mu, delta):
    """The ε at which a µ-GDP mechanism is (ε, δ)-DP: the root of δ_µ(ε) = δ (0 if none)."""
    mu, delta = float(mu), float(delta)
    if mu == 0.0 or delta >= 1.0:
        return 0.0
    if not delta > 0:
        return math.inf
    if float(delta_mu(0.0, mu)) <= delta:
        return 0.0
    hi = 1.0
    while float(delta_mu(hi, mu)) > delta:
        hi *= 2.0
        if hi > 1e6:
            return math.inf
    return float(optimize.brentq(lambda e: float(delta_mu(e, mu)) - delta, 0.0, hi,
                                 xtol=1e-12, rtol=1e-10))


@dataclass(frozen=True)
class PrivacyEvent:
    """One release as the accountant sees it (no private values, only its guarantee)."""

    epsilon: float | None
    delta: float | None
    mu: float | None
    guarantee: str
    label: str
    source: str = ""
    note: str = ""

    @classmethod
    def of(cls, release, *, source="", note=""):
        guarantee = getattr(release, "guarantee", None) or (
            "not private" if str(release.label).startswith("NOT PRIVATE") else "private")
        return cls(
            epsilon=None if release.epsilon is None else float(release.epsilon),
            delta=None if release.delta is None else float(release.delta),
            mu=None if getattr(release, "mu", None) is None else float(release.mu),
            guarantee=str(guarantee), label=str(release.label), source=str(source),
            note=str(note),
        )

    @property
    def composes(self):
        return self.guarantee in COMPOSING

    def to_dict(self):
        return asdict(self)


class PrivacyAccountant:
    """Composes a session's releases; refuses a release that would exceed the cap.

    Parameters
    ----------
    epsilon_cap : float, optional
        Largest total ε (at ``delta``) the session may spend; None: no cap.
    delta : float
        The δ at which totals involving Gaussian DP are stated (and the cap is checked).
    """

    def __init__(self, *, epsilon_cap=None, delta=1e-6):
        self.epsilon_cap = None if epsilon_cap is None else check_positive(
            epsilon_cap, "epsilon_cap")
        self.delta = check_positive(delta, "delta")
        if self.delta >= 1:
            raise ValueError(f"`delta` must be below 1, got {self.delta!r}.")
        self.events = []

    # ------------------------------------------------------------------ totals
    @staticmethod
    def _parts(events):
        counted = [e for e in events if e.composes]
        eps = [e.epsilon for e in counted if e.epsilon is not None]
        mus = [e.mu for e in counted if e.mu is not None]
        deltas = [e.delta for e in counted if e.epsilon is not None and e.delta is not None]
        return counted, eps, mus, deltas

    @classmethod
    def epsilon_of(cls, events, delta):
        """Total ε at ``delta`` of ``events`` (the better of the two routes above)."""
        _, eps, mus, deltas = cls._parts(events)
        pure_delta = float(np.sum(deltas)) if deltas else 0.0
        pure = float(np.sum(eps)) if eps else 0.0
        if not mus:
            return pure if delta >= pure_delta else math.inf
        left = delta - pure_delta
        basic = pure + epsilon_of_gdp(compose_gdp(mus), left) if left > 0 else math.inf
        if pure_delta > 0:
            return basic
        mu_all = compose_gdp(list(mus) + [float(eps_to_mu(e)) for e in eps])
        return min(basic, epsilon_of_gdp(mu_all, delta))

    def epsilon_at(self, delta=None):
        """The session's total ε at ``delta`` (default: the accountant's δ)."""
        return self.epsilon_of(self.events, self.delta if delta is None else float(delta))

    def totals(self):
        """Summary: total ε at δ (0-δ total when there is no Gaussian DP), total µ of the
        Gaussian-DP releases, and counts of approximate and non-private releases."""
        counted, eps, mus, deltas = self._parts(self.events)
        pure_only = not mus and not any(d for d in deltas)
        return {
            "epsilon": self.epsilon_at(0.0 if pure_only else None),
            "delta": 0.0 if pure_only else self.delta,
            "mu": compose_gdp(mus) if mus else None,
            "epsilon_pure": float(np.sum(eps)) if eps else 0.0,
            "approximate": sum(1 for e in counted if e.guarantee == "approximately private"),
            "not_private": sum(1 for e in self.events if not e.composes),
            "releases": len(self.events),
        }

    # ------------------------------------------------------------------ spending
    def check(self, release, *, source="", note=""):
        """The event ``release`` would add, after checking it fits the cap.

        Raises
        ------
        PrivacyBudgetError
            If the total ε at δ would exceed ``epsilon_cap``; nothing is recorded.
        """
        event = PrivacyEvent.of(release, source=source, note=note)
        if self.epsilon_cap is not None and event.composes:
            after = self.epsilon_of(self.events + [event], self.delta)
            if after > self.epsilon_cap * (1 + 1e-12):
                before = self.epsilon_at()
                raise PrivacyBudgetError(
                    f"This release would bring the session's total to ε = {after:.4g} "
                    f"(at δ = {self.delta:g}), above the cap ε = {self.epsilon_cap:g}; "
                    f"{max(self.epsilon_cap - before, 0.0):.4g} of the budget is left. Lower "
                    "the release's budget or its number of draws, or raise the cap.")
        return event

    def spend(self, release, *, source="", note=""):
        """Record ``release`` (after :meth:`check`) and return its event."""
        event = self.check(release, source=source, note=note)
        self.events.append(event)
        return event

    def to_dict(self):
        return {"epsilon_cap": self.epsilon_cap, "delta": self.delta,
                "events": [e.to_dict() for e in self.events]}

    @classmethod
    def from_dict(cls, data):
        """Rebuild an accountant from :meth:`to_dict` output (e.g. a downloaded ledger)."""
        acc = cls(epsilon_cap=data.get("epsilon_cap"), delta=data.get("delta", 1e-6))
        acc.events = [PrivacyEvent(**e) for e in data.get("events", [])]
        return acc


__all__ = ["COMPOSING", "PrivacyAccountant", "PrivacyEvent", "epsilon_of_gdp"]
