"""The Geodesic regression page's release as one dpcore request (issue 29 point 1).

The page maps its widgets to a :class:`~ui.logic.geodesic_regression.ReleaseSettings`, and
:meth:`~ui.logic.geodesic_regression.ReleaseSettings.request` turns it into the request of the
release on ``n`` rows: a :class:`dpcore.release.GeodesicRegressionRequest`, or a
:class:`dpcore.release.TwoStageRegressionRequest` for the two-stage design. Everything the
page asks before and during a release reads that one object: the sampler plan
(:func:`plan_release`), the cost line (its privacy event, ``request.event()``), the work
estimate (:func:`estimate_work`), the predicted error (:func:`predict_error`), the release
itself (:func:`make_release`) and the exported script (:func:`release_script`).
"""

from __future__ import annotations

import functools
import math
import warnings

from dpcore.exceptions import ApproximatePrivacyWarning, PrivacyLeakWarning

from .gr_results import ACCURACY_PROPOSALS

__all__ = ["estimate_work", "make_release", "plan_release", "predict_error", "release_script"]


def plan_release(request):
    """What the Release button will run (exact or MCMC) and the label it will get, from
    public inputs only (``request.plan()``).

    One stage: the request's plan with ``refined`` (whether an exact draw would come from the
    refined envelope of R¹ with its public ball, :func:`dpcore.mechanisms.kng.
    refined_joint_available`, whose cost the uniform proposals' worst case does not
    describe). Two stages: stage 2's plan with the whole release's ``guarantee``, the whole
    plan under ``two_stage`` and stage 2's ``footpoint_radius``.

    Returns
    -------
    dict
    """
    whole = request.plan()
    if "stage2" in whole:  # the two-stage request's plan: one entry per stage
        return {**whole["stage2"], "refined": False, "two_stage": whole,
                "guarantee": whole["guarantee"], "footpoint_radius": request.footpoint_radius}
    from dpcore.mechanisms.kng import refined_joint_available

    whole["refined"] = bool(request.mode == "strict" and request.resolved_scheme == "joint"
                            and request.tau_m is not None
                            and refined_joint_available(request.manifold))
    return whole


@functools.lru_cache(maxsize=64)
def _exact_reach(request):
    # public inputs only (a frozen, hashable request): shared by sessions, kept across reruns
    return request.exact_reach()


def exact_reach_text(request):
    """Where the release would be exact again: a sentence naming the largest ε_p + ε_v per
    geodesic (this split, n, draws and public bounds) at which ``auto`` samples exactly
    (:meth:`~dpcore.release.requests.GeodesicRegressionRequest.exact_reach`, public inputs
    only), rounded down to two significant digits; None where no ε is exact."""
    reach = _exact_reach(request)
    if reach is None or reach >= request.eps_p + request.eps_v:
        return None
    unit = 10.0 ** (math.floor(math.log10(reach)) - 1)
    shown = math.floor(reach / unit) * unit
    draws = request.draws
    return (f"With these n = {request.n}, bounds and {draws} draw{'s' if draws > 1 else ''}, "
            f"releases are exact up to ε_p + ε_v = {shown:.2g} per geodesic (n·(ε_p + ε_v) "
            f"= {request.n * shown:,.3g}) at this split.")


def estimate_work(request):
    """``(WorkEstimate, within the work budget)`` of the release: the library's budget, as
    the page states it (:data:`ui.logic.geodesic_regression.DEFAULT_WORK_BUDGET`; the release
    refuses above it)."""
    from . import geodesic_regression as G

    est = request.work()
    return est, est.seconds <= G.DEFAULT_WORK_BUDGET


def predict_error(request, seed=0):
    """The predicted error of the strict joint release (``request.predict``, public inputs
    only, no data), or None where there is none (paper mode, the sequential scheme)."""
    return request.predict(proposals=ACCURACY_PROPOSALS, rng=seed)


def make_release(request, dataset, progress=None):
    """Make the release (never cached: every call draws fresh randomness).

    ``progress(fraction)`` follows the release (:mod:`dpcore._progress`; a page passes its
    :class:`ui.progress.RunProgress`, whose Cancel stops the release).

    Returns
    -------
    (release, notes) : tuple
        The :class:`~dpcore.release.Release` and the messages of any
        :class:`~dpcore.exceptions.PrivacyLeakWarning` (paper mode) or
        :class:`~dpcore.exceptions.ApproximatePrivacyWarning` (MCMC) raised.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PrivacyLeakWarning)
        warnings.simplefilter("always", ApproximatePrivacyWarning)
        release = request.run(dataset.x, dataset.y, progress=progress)
    notes = [str(w.message) for w in caught
             if issubclass(w.category, (PrivacyLeakWarning, ApproximatePrivacyWarning))]
    return release, notes


def release_script(request, *, source, **data):
    """Script reproducing the release of ``request`` (:func:`ui.logic.export.
    regression_script` with the request's keyword arguments and seed, or for a
    :class:`~dpcore.release.TwoStageRegressionRequest` that request itself); ``source`` and
    ``data`` describe the data as there (never the data)."""
    from dpcore.release import TwoStageRegressionRequest

    from .export import regression_script

    if isinstance(request, TwoStageRegressionRequest):
        return regression_script(request.manifold, {}, source=source, two_stage=request, **data)
    kwargs = {**request.release_kwargs(), "rng": request.seed}
    return regression_script(request.manifold, kwargs, source=source, **data)
