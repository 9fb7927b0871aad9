"""Disclosure risk beside the cost of a release: what an attacker can conclude about one person.

Every releasing page calls :func:`show_risk` once, with the guarantee of the release its
button would make (the ε, δ or µ its cost line states, the rows one person contributes and
whether the guarantee is proven). It draws, in a bordered box: a choice of the attacker's
prior, one sentence in words (the bounds of :func:`dpcore.privacy.risk.disclosure_risk`), what
the sentence assumes, and, on request, the figure
:func:`dpcore.visualization.disclosure_risk_figure`. The texts are built by the pure
:func:`risk_text` (tested without Streamlit).
"""

from __future__ import annotations

import streamlit as st

from dpcore.privacy import disclosure_risk
from dpcore.privacy.accountant import COMPOSING
from dpcore.visualization import disclosure_risk_figure
from dpcore.visualization.risk import DEFAULT_PRIORS
from ui.figures import show_figure
from ui.session import lazy_expander, rows_per_person

__all__ = ["PRIORS", "not_private_text", "risk_text", "show_risk"]

#: The priors offered, and the one shown first.
PRIORS = (0.01, 0.05, 0.1, 0.25, 0.5)
DEFAULT_PRIOR = 0.1
TITLE = "**What an attacker can conclude** about one person from this release"


def _pct(x):
    return f"{100 * x:.3g}%"


def _certain(x):
    return x >= 0.9995


def not_private_text(guarantee):
    """The sentence for a release that carries no guarantee."""
    return (f"This release is labelled **{guarantee}**: nothing bounds what an attacker "
            "concludes about a person from it.")


def risk_text(risk):
    """The sentence and its assumptions for a :class:`~dpcore.privacy.risk.DisclosureRisk`.

    Returns
    -------
    sentence, assumptions : str
        Markdown.
    """
    who = (f"An attacker who believed a {_pct(risk.prior)} chance that a given person is in the "
           "data (or that their record holds a given value)")
    if risk.per_release:
        belief = ("can, after this release, become practically certain (above 99.9%)"
                  if _certain(risk.posterior) else
                  f"can, after this release, believe it **at most {_pct(risk.posterior)}**, "
                  "whatever the release shows")
    else:
        belief = ("believes it, on average when it is true, with practical certainty "
                  "(above 99.9%) after this release" if _certain(risk.average_posterior) else
                  f"believes it, on average when it is true, **at most "
                  f"{_pct(risk.average_posterior)}** after this release (a rare release can "
                  "say more)")
    guess = ("guesses right practically always (above 99.9%)" if _certain(risk.success_even)
             else f"guesses right **at most {_pct(risk.success_even)}** of the time")
    sentence = f"{who} {belief}; one who starts at 50:50 {guess}."
    if risk.mu is not None:
        form = f"µ-GDP at µ = {risk.mu:.3g}, through its whole trade-off curve"
    elif risk.delta > 0:
        form = (f"(ε, δ)-DP at ε = {risk.epsilon:.3g}, δ = {risk.delta:.2g} (δ adds at most δ "
                "to the chance of a right guess)")
    elif risk.certified:
        form = f"pure ε-DP at ε = {risk.epsilon:.3g} with an exact sampler (δ = 0)"
    else:
        form = f"ε = {risk.epsilon:.3g}, computed as if δ = 0"
    rows = (f"per person, {risk.rows} rows each (group privacy: the budget times {risk.rows})"
            if risk.rows > 1 else "one row per person")
    caveat = ""
    if not risk.certified:
        caveat = (" **Not guaranteed:** " + (
            "this µ is a Monte Carlo estimate (with a margin), a statistical rather than a "
            "proven bound." if risk.mu is not None else
            "the release is drawn by MCMC (δ not certified): the bounds hold only as far as "
            "its chains mixed."))
    assumptions = (f"Assumes {form}, {rows}; an attacker who knows every other row; this "
                   "release alone (the ledger composes the session's releases). Exact: no "
                   "tighter bound follows from this guarantee." + caveat)
    return sentence, assumptions


def show_risk(key, event=None, *, epsilon=None, delta=None, mu=None, guarantee="private",
              rows=None, where=st):
    """Draw the disclosure-risk box of the release a page's button would make.

    Parameters
    ----------
    key : str
        The page's key prefix (widget keys ``<key>_risk_prior``, ``<key>_risk_open``).
    event : PrivacyEvent, optional
        The planned release's event (per row); its ``epsilon``, ``delta``, ``mu`` and
        ``guarantee`` replace the keywords.
    epsilon, delta, mu : float or None
        The guarantee per row (δ None: not certified); µ when the release is Gaussian DP.
    guarantee : str
        The guarantee the release will state.
    rows : int, optional
        Rows one person contributes (group privacy; default: the page's
        :func:`ui.session.rows_per_person`, which its cost line uses).
    where : module or DeltaGenerator
    """
    if event is not None:
        epsilon, delta, mu, guarantee = event.epsilon, event.delta, event.mu, event.guarantee
    rows = rows_per_person() if rows is None else rows
    box = where.container(border=True)
    box.markdown(TITLE)
    if guarantee not in COMPOSING or (epsilon is None and mu is None):
        box.markdown(not_private_text(guarantee))
        return
    prior = box.selectbox("The attacker's belief before the release", PRIORS,
                          index=PRIORS.index(DEFAULT_PRIOR), format_func=_pct,
                          key=f"{key}_risk_prior",
                          help="How likely the attacker thinks it is, before the release, "
                               "that a given person is in the data.")
    risk = disclosure_risk(prior, epsilon=epsilon, delta=delta, mu=mu, rows=rows,
                           guarantee=guarantee)
    sentence, assumptions = risk_text(risk)
    box.markdown(sentence)
    box.caption(assumptions)
    scale = "mu" if risk.mu is not None else "epsilon"
    current = risk.mu if risk.mu is not None else risk.epsilon
    symbol = "µ" if risk.mu is not None else "ε"
    fig_box = lazy_expander(f"Figure: the attacker's belief against {symbol}",
                            f"{key}_risk_open", where=box)
    if fig_box is not None and current and current > 0:
        priors = sorted(set(DEFAULT_PRIORS) | {prior})
        show_figure(fig_box, disclosure_risk_figure(current, scale=scale, delta=risk.delta,
                                                    priors=priors, per_person=risk.rows > 1),
                    width="stretch", key=f"{key}_risk_fig")
