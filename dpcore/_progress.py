"""Progress reporting of long computations (samplers, releases, sweeps).

A *progress callback* is any callable ``progress(fraction)`` taking the finished fraction of the
whole request, a float in ``[0, 1]``. Library functions accept ``progress=None`` and report
through :func:`report`; a function made of several stages hands each stage a
:func:`stage` callback that maps the stage's own ``[0, 1]`` onto its share of the whole. The
callback may raise (a user interface cancels a run that way); nothing here catches it.
"""

from __future__ import annotations

import math


def report(progress, fraction):
    """Call ``progress(fraction)`` (clipped to ``[0, 1]``) unless ``progress`` is None."""
    if progress is not None:
        progress(min(1.0, max(0.0, float(fraction))))


def stage(progress, start, stop):
    """The callback of one stage covering ``[start, stop]`` of the whole request.

    Parameters
    ----------
    progress : callable or None
        The whole request's callback.
    start, stop : float
        The stage's share, ``0 <= start <= stop <= 1``.

    Returns
    -------
    callable or None
        ``None`` when ``progress`` is None, so stages skip the reporting entirely.
    """
    if progress is None:
        return None
    if not 0.0 <= start <= stop <= 1.0:
        raise ValueError(f"A stage must satisfy 0 <= start <= stop <= 1, got [{start}, {stop}].")

    def _stage(fraction):
        report(progress, start + (stop - start) * min(1.0, max(0.0, float(fraction))))

    return _stage


def stages(progress, weights):
    """Callbacks of consecutive stages with shares proportional to ``weights``.

    Parameters
    ----------
    progress : callable or None
    weights : sequence of float
        Non-negative expected costs of the stages (for example chains x steps x n).

    Returns
    -------
    list
        One callback (or None) per stage.
    """
    weights = [max(0.0, float(w)) for w in weights]
    total = sum(weights)
    if progress is None or total <= 0:
        return [None if progress is None else stage(progress, 0.0, 1.0) for _ in weights]
    out, start = [], 0.0
    for w in weights:
        stop = min(1.0, start + w / total)
        out.append(stage(progress, start, stop))
        start = stop
    return out


def steps(progress, total, every=None):
    """A counter for a loop of ``total`` steps that reports about a hundred times.

    Returns a function ``tick(done)`` to call with the number of finished steps; it calls
    ``progress(done / total)`` when ``done`` crosses the next reporting point (and at the end).
    """
    total = max(1, int(total))
    every = max(1, int(every) if every else total // 100)
    next_at = [every]

    def tick(done):
        if progress is None:
            return
        if done >= next_at[0] or done >= total:
            report(progress, done / total)
            next_at[0] = (done // every + 1) * every

    return tick


class RefinementProgress:
    """Progress of an adaptive refinement (an exact sampler's envelope construction) that stops
    at the first of three goals: its log acceptance reaching ``goal``, its leaves reaching
    ``cap``, or its leaves costing (``leaf_cost`` proposals each) more than the proposals they
    would save. Each call reports the largest fraction any goal has reached so far, so the bar
    never moves back, and a callback that raises (a Cancel) stops the construction there.

    Parameters
    ----------
    progress : callable or None
        ``progress(fraction)`` of the construction; None reports nothing.
    goal : float
        Log acceptance at which the refinement stops.
    cap : int
        Largest number of leaves.
    leaf_cost : float
        Cost of one leaf, in proposals.
    """

    def __init__(self, progress, goal, cap, leaf_cost):
        self.progress = progress
        self.goal, self.cap, self.leaf_cost = float(goal), float(cap), float(leaf_cost)
        self.first = None
        self.done = 0.0

    def __call__(self, log_acceptance, leaves, proposals):
        """Report one round: the certified log acceptance, the leaves and the proposals the
        draws would take now."""
        if self.progress is None:
            return
        if self.first is None:
            self.first = min(float(log_acceptance), self.goal)
        span = self.goal - self.first
        by_acceptance = 1.0 if span <= 0 else (float(log_acceptance) - self.first) / span
        room = min(self.cap, proposals / self.leaf_cost if self.leaf_cost > 0 else math.inf)
        by_leaves = leaves / max(1.0, room)
        self.done = max(self.done, min(1.0, max(by_acceptance, by_leaves, 0.0)))
        report(self.progress, self.done)

    def pulse(self):
        """Report the fraction reached so far again (between chunks of a large round: the
        bar stays, and a Cancel need not wait for the round's end)."""
        report(self.progress, self.done)
