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

With no Gaussian-DP release and only exact samplers, δ = 0 and the total is Σ ε. A total is only
as strong as its weakest entry (DESIGN §12): approximately private releases (MCMC, δ not
certified; or a µ calibrated by Monte Carlo) are added with their ε, and the total then states
no δ at all (``delta`` None, ``delta_certified`` False, :data:`UNCERTIFIED_DELTA`): it holds only
as far as their chains mixed or their calibration is right. ``dp_accounting``'s PLD accountant
is the test oracle: the total here is never below its (tight) ε at the same δ.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from .._lazy import lazy_module
from .._validation import check_positive
from ..exceptions import PrivacyBudgetError
from .gdp import compose_gdp, delta_mu, eps_to_mu

optimize = lazy_module("scipy.optimize")  # imported on first use (several times numpy's import)

#: Guarantees that compose; the others are listed apart.
COMPOSING = ("private", "approximately private")
#: Every guarantee a release may state (as :data:`dpcore.release.record.GUARANTEES`).
GUARANTEES = (*COMPOSING, "not covered", "not private")
#: Why a total with an approximately private release states no δ.
UNCERTIFIED_REASON = "includes an approximately private release"
#: What a total states instead of a δ when it includes an approximately private release.
UNCERTIFIED_DELTA = f"δ not certified ({UNCERTIFIED_REASON})"


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
    """One release as the accountant sees it (no private values, only its guarantee).

    Parameters
    ----------
    epsilon, delta, mu : float or None
        The release's ε, δ (None: not certified) and µ (Gaussian DP), per unit protected.
    guarantee : str
        What the release may claim, one of :data:`GUARANTEES` (from its proof, never parsed
        from its label).
    label : str
        The release's label, as shown.
    source, note : str
        Where the release was made and a free note.

    Raises
    ------
    ValueError
        If ``guarantee`` is not one of :data:`GUARANTEES`.
    """

    epsilon: float | None
    delta: float | None
    mu: float | None
    guarantee: str
    label: str
    source: str = ""
    note: str = ""

    def __post_init__(self):
        if self.guarantee not in GUARANTEES:
            raise ValueError(f"`guarantee` must be one of {', '.join(map(repr, GUARANTEES))}, "
                             f"got {self.guarantee!r}.")

    @classmethod
    def of(cls, release, *, source="", note=""):
        """The event of ``release``: a :class:`dpcore.release.Release`, or any object with
        ``epsilon``, ``delta``, ``mu`` (optional), ``guarantee`` and ``label``.

        The guarantee is the release's own (:attr:`dpcore.release.Release.guarantee`, from its
        proof); a release without one is refused, never read from its label.

        Raises
        ------
        ValueError
            If ``release.guarantee`` is missing or not one of :data:`GUARANTEES`.
        """
        guarantee = getattr(release, "guarantee", None)
        if guarantee not in GUARANTEES:
            raise ValueError(f"`release.guarantee` must be one of "
                             f"{', '.join(map(repr, GUARANTEES))}, got {guarantee!r}.")
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
        """Summary of the session's releases.

        A total is only as strong as its weakest entry (DESIGN §12): with an approximately
        private release (MCMC, δ not certified; or a µ calibrated by Monte Carlo) the total
        states no δ.

        Returns
        -------
        dict
            ``epsilon``: total ε at ``nominal_delta``; ``delta``: the total's δ (0 when every
            counted release is pure ε-DP, else the accountant's δ), or None when the total
            includes an approximately private release; ``delta_certified``: whether ``delta``
            is stated (False exactly when ``delta`` is None); ``delta_note``: why it is not
            (:data:`UNCERTIFIED_REASON`), else None; ``nominal_delta``: the δ at which
            ``epsilon`` was computed (what the total's δ would be if every approximately
            private release held as stated); ``mu``: total µ of the Gaussian-DP releases;
            ``epsilon_pure``: Σ ε of the ε-DP releases; ``approximate``, ``not_private`` and
            ``releases``: counts (approximately private, listed apart, all).
        """
        counted, eps, mus, deltas = self._parts(self.events)
        pure_only = not mus and not any(d for d in deltas)
        nominal = 0.0 if pure_only else self.delta
        approximate = sum(1 for e in counted if e.guarantee == "approximately private")
        certified = approximate == 0
        return {
            "epsilon": self.epsilon_at(nominal),
            "delta": nominal if certified else None,
            "delta_certified": certified,
            "delta_note": None if certified else UNCERTIFIED_REASON,
            "nominal_delta": nominal,
            "mu": compose_gdp(mus) if mus else None,
            "epsilon_pure": float(np.sum(eps)) if eps else 0.0,
            "approximate": approximate,
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
                # Pure ε-DP releases only: the total is pure, at no δ.
                _, _, mus, deltas = self._parts(self.events + [event])
                at = f" (at δ = {self.delta:g})" if mus or any(deltas) else ""
                raise PrivacyBudgetError(
                    f"This release would bring the session's total to ε = {after:.4g}"
                    f"{at}, above the cap ε = {self.epsilon_cap:g}; "
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


__all__ = ["COMPOSING", "GUARANTEES", "UNCERTIFIED_DELTA", "UNCERTIFIED_REASON",
           "PrivacyAccountant", "PrivacyEvent", "epsilon_of_gdp"]
