"""Plain-language readings of a privacy budget, shown next to the controls that set it.

The neighbouring relation of every release is "one row replaced" (DESIGN §8). For pure
ε-DP, any event's probability changes by at most a factor :math:`e^\\varepsilon` between
neighbouring data sets, so an attacker who must tell which of two neighbours was used, starting
at 50:50, is right with probability at most :math:`e^\\varepsilon/(1 + e^\\varepsilon)`, an
advantage over guessing of at most :math:`\\tanh(\\varepsilon/2)` (the total-variation bound).
For µ-GDP (paper 004) that test is at most as easy as telling :math:`N(0, 1)` from
:math:`N(\\mu, 1)`: success at most :math:`\\Phi(\\mu/2)`, advantage :math:`2\\Phi(\\mu/2) - 1`.
"""

from __future__ import annotations

import math

__all__ = ["NEIGHBOURS", "epsilon_reading", "mu_reading", "guess_success_epsilon",
           "guess_success_mu"]

#: The neighbouring relation, in words.
NEIGHBOURS = "one row of the data replaced by any other"


def _phi(x):
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def guess_success_epsilon(epsilon):
    """Largest chance that an attacker starting at 50:50 tells two neighbours apart."""
    e = min(float(epsilon), 700.0)
    return math.exp(e) / (1.0 + math.exp(e))


def guess_success_mu(mu):
    """The same for µ-GDP: Φ(µ/2)."""
    return _phi(float(mu) / 2.0)


def epsilon_reading(epsilon, *, rows=1):
    """One sentence reading ε for a non-specialist (``rows``: rows one person contributes;
    group privacy multiplies ε by it)."""
    eps = float(epsilon) * int(rows)
    who = "one row" if rows == 1 else f"one person ({rows} rows)"
    odds = math.exp(min(eps, 700.0))
    odds_text = f"{odds:.3g}" if odds < 1e6 else "more than a million"
    return (f"ε = {eps:.3g} for {who}: replacing it changes the probability of any outcome by "
            f"at most a factor e^ε = {odds_text}; an attacker who starts at 50:50 guesses "
            f"whether it was replaced correctly at most {100 * guess_success_epsilon(eps):.3g}% "
            "of the time.")


def mu_reading(mu, *, rows=1):
    """One sentence reading µ (Gaussian DP) for a non-specialist; group privacy multiplies µ
    by ``rows``. Says that equal µ is a weaker promise than the ε it is matched to."""
    m = float(mu) * int(rows)
    who = "one row" if rows == 1 else f"one person ({rows} rows)"
    return (f"µ = {m:.3g} for {who}: telling whether it was replaced is at most as easy as "
            f"telling N(0, 1) from N({m:.3g}, 1); an attacker starting at 50:50 is right at "
            f"most {100 * guess_success_mu(m):.3g}% of the time. Gaussian DP bounds the whole "
            "trade-off curve, not a worst-case factor: it allows rare outcomes that pure ε-DP "
            "at the 'equivalent' ε forbids.")
