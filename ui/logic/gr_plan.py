"""What a geodesic-regression release will run and what it costs, in the page's words: the
sampler plan (exact or MCMC, and which exact sampler), the sentence above the Release button
and the time estimate's sentence. Public inputs only (:func:`dpcore.release.
plan_regression_sampler`, :class:`~dpcore.release.work.WorkEstimate`); re-exported by
:mod:`ui.logic.geodesic_regression`.
"""

from __future__ import annotations

import numpy as np

from dpcore.release.work import DATA_DEPENDENT_NOTE


def sampler_plan(settings, n):
    """What the release button will run (exact or MCMC) and the label it will get, from public
    inputs only: :func:`ui.logic.gr_request.plan_release` of the settings' request on ``n`` rows."""
    from .gr_request import plan_release

    return plan_release(settings.request(n))


def exact_plan_text(plan):
    """The sentence above the Release button when the release will be exact and private
    (Markdown): the sampler and the cost figure that applies to it. Uniform proposals: their
    worst case over all data sets, per draw. The refined envelope (R¹): its predicted work
    (from a public model data set of this n, what 'auto' decides on) or, without a
    prediction, its own worst case -- never the uniform proposals' worst case, which can be
    1e65 proposals per draw where the envelope takes under a second. The certified bundle
    samplers (S², R², R³): its public prediction, which is not a
    bound over data sets -- a fit outside the public bounds can take far longer. Uniform
    proposals beyond their worst case's limit (SPD(2), Kendall): their prediction for a public
    model data set (:mod:`dpcore.release.uniform_cost`), with the worst case beside it."""
    head = ("This release will be drawn by **exact** rejection sampling{how} and labelled "
            "**private** (ε-DP, δ = 0). ")
    if plan.get("exact_sampler") == "certified bundle":
        return head.format(how=" from a certified envelope about the fit") + (
            f"Predicted work from public inputs: about {plan['predicted_work']:,.0f} gradient "
            f"terms (an envelope of at most {plan['leaf_cap']:,} cells). This is a prediction for "
            "data that fit inside the public bounds, not a bound: how long it takes depends on "
            "your data (a fit outside the bounds can take far longer; Cancel stops it), which "
            "changes the time, never the guarantee.")
    if not plan.get("refined") and plan.get("predicted_work") is not None:
        how = " from uniform proposals on the public support"
        if plan.get("cost_kind") == "squeeze":
            how += (" (a certified squeeze decides most of them from a proven lower bound of "
                    "the gradient, without changing the law)")
        return head.format(how=how) + (
            f"Predicted work from public inputs: about {plan['predicted_work']:,.0f} gradient "
            "terms (priced for a public model data set whose fit lies inside the bounds). "
            "This is a prediction, not a bound: the worst case over all data sets, "
            f"{plan['worst_case_proposals']:.3g} proposals per draw, is beyond the library's "
            "limit, and how long it takes depends on your data (a fit outside the bounds can "
            "take far longer; Cancel stops it), which changes the time, never the guarantee.")
    if not plan.get("refined"):
        return (head.format(how="") + "Worst case over all data sets: "
                f"{plan['worst_case_proposals']:.3g} proposals per draw.")
    text = head.format(how=" from a refined envelope")
    if plan.get("predicted_work") is not None:
        return text + (f"Predicted work: about {plan['predicted_work']:,.0f} gradient terms (the "
                       "envelope of a public model data set of this n; your data's may differ "
                       "somewhat).")
    if plan.get("exact_bound") is not None:
        return text + (f"Worst case over all data sets for this sampler: "
                       f"{plan['exact_bound']:.3g} gradient terms.")
    return text.rstrip()


def _duration(seconds):
    """``'under a second'``, ``'about 42 s'``, ``'about 3 min 05 s'`` or ``'about 1 h 02 min'``."""
    if not np.isfinite(seconds):
        return "an unbounded time"
    if seconds < 1:
        return "under a second"
    s = int(round(seconds))
    if s < 60:
        return f"about {s} s"
    if s < 3600:
        return f"about {s // 60} min {s % 60:02d} s"
    return f"about {s // 3600} h {(s % 3600) // 60:02d} min"


def time_estimate_text(work):
    """One sentence for the page before a release: its estimated time (and the worst case over
    data sets where an exact sampler's cost is only bounded), from a
    :class:`~dpcore.release.work.WorkEstimate`."""
    text = f"Estimated time: {_duration(work.seconds)}"
    if work.worst_case_seconds > max(work.seconds, 1.0):
        text += f" (up to {_duration(work.worst_case_seconds).removeprefix('about ')} for " \
                "the worst-case data set)"
    text += f", {work.operations:,.0f} gradient terms."
    if work.data_dependent:
        text += f" {DATA_DEPENDENT_NOTE}"
    return text + " A progress bar with the time left and a Cancel button shows while it runs."


__all__ = ["exact_plan_text", "sampler_plan", "time_estimate_text"]
