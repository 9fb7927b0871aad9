"""Progress reporting of long computations (samplers, releases, sweeps).

A *progress callback* is any callable ``progress(fraction)`` taking the finished fraction of the
whole request, a float in ``[0, 1]``. Library functions accept ``progress=None`` and report
through :func:`report`; a function made of several stages hands each stage a
:func:`stage` callback that maps the stage's own ``[0, 1]`` onto its share of the whole. The
callback may raise (a user interface cancels a run that way); nothing here catches it.
"""

from __future__ import annotations


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
