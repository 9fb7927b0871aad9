"""The two-stage design on the Geodesic regression page (issue 28 point 4): a private Fréchet
mean of the responses first, then the joint KNG with its footpoint in a public-radius ball
about it (:class:`dpcore.release.TwoStageRegressionRequest`).

It is for data without a tight public footpoint region, where the one-stage joint KNG puts
most of its mass far from the data (``benchmarks/bench_two_stage.py``: on the EMG
covariances the median draw goes from 11× to 1.8× the non-private MSE, exactly). It needs a
public ball holding the responses for stage 1: on the sphere one the user states (centre and
radius), on SPD and Euclidean data the response ball ``B_{τ_m}(c)`` the page already asks for.
Kendall shapes have no public centre shape on the page (the rat preset's box shows the design
with a pilot animal's mean).

The page's questions (plan, cost, work, the release) go through one function each here, which
take the page's :class:`~ui.logic.geodesic_regression.ReleaseSettings` and answer for the
one-stage design (delegating to :mod:`ui.logic.geodesic_regression`) or the two-stage one.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

from dpcore.learning import frechet_mean
from dpcore.release import TwoStageRegressionRequest
from dpcore.release.two_stage import two_stage_footpoint_radius
from dpcore.sensitivity import default_max_speed

from . import geodesic_regression as G
from .regression_data import needs_ball

__all__ = ["SPHERE_BALL_START", "TWO_STAGE_KINDS", "TwoStage", "default_center_epsilon",
           "exact_two_stage_offer", "footpoint_radius", "planned_epsilon", "request",
           "run_release", "sampler_plan", "stage_two_preview", "work_estimate"]

#: Manifold keys where the page offers the two-stage design (a public stage-1 ball exists).
TWO_STAGE_KINDS = ("sphere", "spd", "euclidean")
#: The stage-1 ball's starting inputs on the sphere: centre (latitude, longitude) in degrees
#: and radius.
SPHERE_BALL_START = ((90.0, 0.0), 0.5)
#: Largest stage-1 ball radius the page accepts on the sphere: below r* = π/4 (paper 001
#: Thm 2), which the Laplace mechanism's sensitivity needs.
SPHERE_BALL_MAX = 0.78


@dataclass(frozen=True)
class TwoStage:
    """The two-stage inputs of a release (all public).

    Attributes
    ----------
    eps_center : float
        ε₁ of the private centre (spent once).
    ball_center : tuple or None
        Sphere: the stage-1 ball's centre as (latitude, longitude) in degrees; None on SPD and
        Euclidean data, where the response ball ``B_{τ_m}(c)`` serves.
    ball_radius : float or None
        Sphere: the stage-1 ball's radius; None on SPD and Euclidean data (τ_m serves).
    """

    eps_center: float
    ball_center: tuple | None = None
    ball_radius: float | None = None


def default_center_epsilon(eps_p, eps_v, draws):
    """The page's default ε₁: a quarter of the geodesics' total, to two significant digits."""
    return float(f"{0.25 * (float(eps_p) + float(eps_v)) * int(draws):.2g}")


def _ball_inputs(settings):
    """The stage-1 ball as entered: ``(centre as the page holds it, radius)``; the response
    ball ``B_{τ_m}(c)`` where the page asks for one (SPD, Euclidean)."""
    two = settings.two_stage
    if needs_ball(settings.kind):
        return settings.center, float(settings.tau_m)
    return two.ball_center, float(two.ball_radius)


def _ball(settings):
    """The stage-1 ball ``(centre point, radius)`` of ``settings``."""
    center, radius = _ball_inputs(settings)
    return G.center_point(settings.kind, settings.param, center), radius


@lru_cache(maxsize=64)
def _footpoint_radius(kind, param, n, eps_center, ball, tau, max_speed):
    m = G.make_manifold(kind, param)
    center = G.center_point(kind, param, ball[0])
    return two_stage_footpoint_radius(m, n, eps_center=eps_center, center_ball=(center, ball[1]),
                                      tau=tau, max_speed=max_speed)


def _speed_bound(settings):
    """V: the page's speed bound, or the library's default where the page has none."""
    return float(settings.max_speed or default_max_speed(
        settings.manifold, float(settings.tau_m or 0.0), settings.tau))


def footpoint_radius(settings, n):
    """The public footpoint radius ρ = V + τ + the predicted 95% error of the centre
    (:func:`dpcore.release.two_stage.two_stage_footpoint_radius`; public inputs only), V the
    speed bound (the library's default where the page has none). Cached (public inputs)."""
    return _footpoint_radius(settings.kind, settings.param, int(n),
                             float(settings.two_stage.eps_center), _ball_inputs(settings),
                             float(settings.tau), _speed_bound(settings))


def _within_proof(settings, rho):
    """ρ as stage 2 uses it: at most τ_m + τ where the responses' ball bounds the proof."""
    if needs_ball(settings.kind):
        rho = min(rho, float(settings.tau_m) + float(settings.tau))  # the proof's support
    return rho


#: What a fit outside the footpoint ball does to stage 2's exact sampler, measured on S²
#: (ball radius 1.25, speeds up to 0.8, n = 250, n·ε = 1,000, 9 draws; the native sampler,
#: ``python -m benchmarks.bench_bundle_native --tail``, session 35): 6.9 CPU s 0.1 outside
#: against 5.8 inside, 31 s 0.2 outside, about 6 minutes 0.35 outside.
OUTSIDE_NOTE = ("On S², a fit 0.1 outside the ball took 7 s against 6 s inside, 0.2 outside "
                "31 s, and 0.35 outside about 6 minutes (Cancel stops it).")


def stage_two_preview(settings, dataset, fit):
    """Where the data's own fit sits against the two-stage footpoint ball, for the analyst's
    eyes (computed from the data, never released), in the rows of
    :func:`ui.logic.geodesic_regression.clipping_preview`.

    Stage 2 draws footpoints in the ball of radius ρ about the *private* centre, which misses
    the responses' mean by about the centre's predicted error (its 95% quantile ``q`` is the
    part of ρ = V + τ + q beyond the speed and residual bounds). The non-private fit's
    footpoint lies ``d`` from the responses' (non-private) Fréchet mean, so it stays inside the
    ball while the centre misses by less than ρ - d; the row warns when that margin is below
    ``q``, where stage 2's exact sampler can run far longer than its estimate
    (:data:`OUTSIDE_NOTE`).

    Returns
    -------
    list of dict
        Empty for one stage, paper mode or without a fit; else one row with ``count`` 1 (at
        risk) or 0, ``n`` 1, ``share``, ``warn``, ``what``, ``advice`` and ``icon``.
    """
    if settings.two_stage is None or fit is None or settings.mode != "strict":
        return []
    m = settings.manifold
    planned = footpoint_radius(settings, dataset.n)
    rho = _within_proof(settings, planned)
    q95 = planned - _speed_bound(settings) - float(settings.tau)
    d = float(m.dist(fit.footpoint, frechet_mean(m, dataset.y)))
    margin = rho - d
    risk = margin < q95
    if margin <= 0:
        reach = "even a private centre on the mean leaves it outside"
    else:
        reach = (f"it stays inside while the private centre misses the mean by less than "
                 f"{margin:.2f} (the centre's predicted 95% error: {q95:.2f})")
    what = (f"non-private footpoint at risk of falling outside the two-stage footpoint ball "
            f"(radius ρ = {rho:.2f} about the private centre): it lies {d:.2f} from the "
            f"responses' mean, and {reach}")
    advice = ("Stage 2's exact sampler is quick while the fit lies inside its footpoint ball "
              "and can run far longer than its estimate outside it. " + OUTSIDE_NOTE + " A "
              "larger ε₁ shrinks the centre's error; a larger speed bound V widens the ball "
              "(decide both from the design, not from this preview).")
    return [{"count": int(risk), "n": 1, "share": float(risk), "warn": bool(risk),
             "what": what, "advice": advice, "icon": ":material/schedule:"}]


def request(settings, n):
    """The :class:`~dpcore.release.TwoStageRegressionRequest` of two-stage ``settings``."""
    kw = settings.release_kwargs()
    rho = _within_proof(settings, footpoint_radius(settings, n))
    return TwoStageRegressionRequest(
        settings.manifold, int(n), eps_center=settings.two_stage.eps_center,
        eps_p=kw["eps_p"], eps_v=kw["eps_v"], tau=kw["tau"],
        covariate_range=kw["covariate_range"], footpoint_radius=rho,
        center_ball=_ball(settings), tau_m=kw.get("tau_m"), max_speed=kw.get("max_speed"),
        n_footpoints=kw["n_footpoints"], n_vectors=kw["n_vectors"], sampler=kw["sampler"],
        chain_length=kw["chain_length"], burn_in=kw["burn_in"], seed=kw["rng"])


# ------------------------------------------------------------------ the page's questions
# Each goes through the settings' request (ReleaseSettings.request: this module's request()
# for the two-stage design), as the page does (ui.logic.gr_request).
def sampler_plan(settings, n):
    """:func:`ui.logic.gr_request.plan_release` of the settings' request: for the two-stage design
    stage 2's plan with the whole release's ``guarantee`` and ``two_stage``."""
    return G.sampler_plan(settings, n)


def exact_two_stage_offer(settings, n):
    """ε₁ of the page's default two-stage design (:func:`default_center_epsilon`; on the sphere
    the stage-1 ball's starting inputs, :data:`SPHERE_BALL_START`) where it would draw
    exactly what the one-stage ``settings`` would draw by MCMC, else None. Public inputs only:
    the page offers it next to its MCMC warning."""
    s = settings
    if (s.two_stage is not None or s.scheme != "joint" or s.mode != "strict"
            or s.sampler == "mcmc" or s.kind not in TWO_STAGE_KINDS
            or (needs_ball(s.kind) and s.tau_m is None)):
        return None
    eps1 = default_center_epsilon(s.eps_p, s.eps_v, s.n_footpoints * s.n_vectors)
    two = TwoStage(eps1) if needs_ball(s.kind) else TwoStage(eps1, *SPHERE_BALL_START)
    plan = sampler_plan(replace(s, two_stage=two), n)
    return eps1 if plan.get("guarantee") == "private" else None


def planned_epsilon(settings):
    """The total ε the release will record: ε₁ + the geodesics' (two-stage) or
    :func:`ui.logic.geodesic_regression.planned_epsilon`."""
    one = G.planned_epsilon(settings)
    return one if settings.two_stage is None else float(settings.two_stage.eps_center) + one


def work_estimate(settings, n):
    """(WorkEstimate, within the work budget) of either design."""
    return G.work_estimate(settings, n)


def run_release(settings, dataset, progress=None):
    """(release, notes) of either design, through the settings' request."""
    return G.run_release(settings, dataset, progress=progress)
