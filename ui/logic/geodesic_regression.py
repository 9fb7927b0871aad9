"""Page logic of the Geodesic regression page: release settings, the non-private fit, one
release, its metrics, diagnostics, JSON record, assumptions and figures."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from dpcore.data import make_regression_data
from dpcore.data.synthetic import SPD_REGION_SHOOTING_LENGTH
from dpcore.learning import GeodesicRegression
from dpcore.release import GeodesicRegressionRequest
from dpcore.release.work import DEFAULT_WORK_BUDGET  # noqa: F401 - the pages read it here
from ui.caps import CAPS
from ui.manifolds import make_manifold, spec

from .gr_plan import exact_plan_text, sampler_plan, time_estimate_text  # noqa: F401
from .gr_results import (  # noqa: F401 - this module's API
    ACCURACY_PROPOSALS,
    ERROR_UNITS,
    ESS_MIN,
    ESTIMATE_SOURCES,
    LATEX_NOTES,
    RHAT_MAX,
    _private_at,
    _stage,
    accuracy_lines,
    assumption_rows,
    center_point,
    covariate_estimate_note,
    diagnostic_flags,
    diagnostics_table,
    estimate_offered,
    estimate_scope,
    length_error_text,
    noise_hint,
    planned_epsilon,
    predict_accuracy,
    regression_figures,
    release_epsilon,
    release_json,
    release_metrics,
    residual_norms,
)
from .regression_data import PARAM_RANGE, Dataset, needs_ball
from .regression_data import synthetic_dataset as synthetic_dataset_paper

__all__ = [
    "length_error_text",
    "assumption_rows",
    "center_point",
    "covariate_estimate_note",
    "covariate_range_for",
    "ESTIMATE_SOURCES",
    "estimate_offered",
    "estimate_scope",
    "DEFAULT_BURN_IN",
    "DEFAULT_CHAIN",
    "diagnostics_table",
    "diagnostic_flags",
    "Fit",
    "fit_nonprivate",
    "LATEX_NOTES",
    "noise_hint",
    "accuracy_lines",
    "clipping_preview",
    "default_n",
    "default_param",
    "default_tau_m",
    "DEFAULT_DRAWS",
    "DEFAULT_EPS",
    "exact_plan_text",
    "DEMO_DEFAULTS",
    "demo_settings",
    "FOOTPOINT_REGION_KINDS",
    "SPD_DEMO_REGION",
    "synthetic_dataset",
    "USEFUL_RATIO",
    "usefulness",
    "useful_budget_search",
    "useful_budget_text",
    "useful_search_seconds",
    "MCMC_OPT_IN_HELP",
    "predict_accuracy",
    "planned_epsilon",
    "release_epsilon",
    "regression_figures",
    "release_json",
    "release_metrics",
    "ReleaseSettings",
    "residual_norms",
    "run_release",
    "SAMPLER_LABELS",
    "sampler_plan",
    "SCHEME_LABELS",
    "time_estimate_text",
]

#: Budget schemes of the release (DESIGN §8) and their labels.
SCHEME_LABELS = {"joint": "joint (one ε over (p, v); proven)",
                 "sequential": "sequential (papers: ε_p then ε_v; not covered by the proof)"}


SAMPLER_LABELS = {"auto": "exact when within reach, else MCMC",
                  "exact": "exact only (private; may be slow)",
                  "mcmc": "MCMC (approximately private)"}


#: Why MCMC needs an explicit opt-in (measured, see dpcore.release.accuracy).
MCMC_OPT_IN_HELP = (
    "Metropolis-Hastings chains only approximate the mechanism, and no δ is certified. They can "
    "miss most of the target's mass: on S² at n = 40, ε = 4, τ = 0.2 chains of 1000 + 1000 steps "
    "put the median footpoint error at 0.13 rad where the exact target's is 1.57 rad, so an "
    "MCMC release can look more accurate, and be less private, than the mechanism it stands "
    "for.")

#: Default MCMC settings: a scenario of S², n = 50, 3 x 3 draws takes about a second.
DEFAULT_CHAIN = 300
DEFAULT_BURN_IN = 200


@dataclass(frozen=True)
class ReleaseSettings:
    """Everything the release button uses (all public: no data in here).

    ``tau``, ``covariate_range``, ``tau_m`` and ``center`` are ignored in paper mode (the
    release then takes them from the data). ``seed`` None means OS entropy.
    """

    kind: str
    param: int | None
    eps_p: float
    eps_v: float
    mode: str = "strict"
    tau: float | None = None
    covariate_range: tuple | None = None
    tau_m: float | None = None
    center: tuple | None = None
    n_footpoints: int = 1
    n_vectors: int = 1
    chain_length: int = DEFAULT_CHAIN
    burn_in: int = DEFAULT_BURN_IN
    seed: int | None = None
    scheme: str = "joint"
    sampler: str = "auto"
    max_speed: float | None = None
    footpoint_radius: float | None = None
    #: The two-stage design's inputs (:class:`ui.logic.two_stage.TwoStage`), None for one stage.
    two_stage: object | None = None

    @property
    def manifold(self):
        return make_manifold(self.kind, self.param)

    def release_kwargs(self):
        """Keyword arguments of :func:`dpcore.release.private_geodesic_regression`."""
        kw = {
            "eps_p": float(self.eps_p), "eps_v": float(self.eps_v), "mode": self.mode,
            "n_footpoints": int(min(self.n_footpoints, CAPS["gr_footpoints"])),
            "n_vectors": int(min(self.n_vectors, CAPS["gr_vectors"])),
            "chain_length": int(min(self.chain_length, CAPS["gr_chain"])),
            "burn_in": int(min(self.burn_in, CAPS["gr_chain"])),
            "rng": self.seed,
            "scheme": self.scheme,
            "sampler": self.sampler if self.scheme == "joint" else "auto",
        }
        if self.max_speed is not None and self.mode == "strict":
            kw["max_speed"] = float(self.max_speed)
        if self.mode == "strict":
            kw["tau"] = self.tau
            kw["covariate_range"] = self.covariate_range
            if needs_ball(self.kind):
                kw["tau_m"] = self.tau_m
                kw["center"] = center_point(self.kind, self.param, self.center)
            if self.footpoint_radius:
                kw["footpoint_radius"] = float(self.footpoint_radius)
                kw["center"] = center_point(self.kind, self.param, self.center)
        return kw

    def request(self, n):
        """The dpcore request of the release these settings make on ``n`` rows: a
        :class:`~dpcore.release.GeodesicRegressionRequest`, or for the two-stage design a
        :class:`~dpcore.release.TwoStageRegressionRequest` (:func:`ui.logic.two_stage.
        request`). The page's plan, cost, work estimate, prediction, release and exported
        script all read it (:mod:`ui.logic.gr_request`).

        Raises
        ------
        ValueError
            For public inputs the request rejects (e.g. a covariate range with low >= high).
        """
        if self.two_stage is not None:
            from .two_stage import request

            return request(self, n)
        kw = self.release_kwargs()
        seed = kw.pop("rng")
        return GeodesicRegressionRequest(self.manifold, int(n), seed=seed, **kw)


def covariate_range_for(settings, dataset):
    """The covariate range the release uses: public in strict mode, the data's in paper mode."""
    if settings.mode == "strict":
        low, high = settings.covariate_range
        return float(low), float(high)
    return float(dataset.x.min()), float(dataset.x.max())


@dataclass(frozen=True, eq=False)
class Fit:
    """A non-private geodesic: footpoint at the low end of ``covariate_range``, velocity per
    unit of the rescaled covariate, its MSE on the data and whether the descent converged."""

    footpoint: np.ndarray
    vector: np.ndarray
    covariate_range: tuple
    mse: float
    converged: bool


def fit_nonprivate(kind, param, x, y, covariate_range):
    """Non-private geodesic regression, parametrized by ``covariate_range`` (deterministic).

    Returns
    -------
    Fit
    """
    m = make_manifold(kind, param)
    cr = (float(covariate_range[0]), float(covariate_range[1]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = GeodesicRegression(m, covariate_range=cr, tol=1e-9).fit(x, y)
    return Fit(fit.footpoint_, fit.shooting_vector_, cr, float(fit.mse(x, y)),
               bool(fit.converged_))


def run_release(settings, dataset, progress=None):
    """Make one private release of ``settings`` on ``dataset`` through its request
    (:meth:`ReleaseSettings.request`, :func:`ui.logic.gr_request.make_release`):
    ``(release, notes)``."""
    from .gr_request import make_release

    return make_release(settings.request(len(dataset.x)), dataset, progress=progress)


def work_estimate(settings, n):
    """The release's estimated work and time from its public inputs only, and whether it is
    within the library's work budget (:func:`ui.logic.gr_request.estimate_work` of the request).

    Returns
    -------
    (WorkEstimate, bool)
    """
    from .gr_request import estimate_work

    return estimate_work(settings.request(n))


#: Share of rows clipped or projected above which the page warns (issue 14).
CLIP_WARN = 0.05


def clipping_preview(settings, dataset, fit=None):
    """How the public bounds meet this data set, row counts only (for the analyst's eyes: a
    preview computed from the data, never released).

    Returns
    -------
    list of dict
        One per bound (strict mode only): ``what`` (a sentence), ``count``, ``n``, ``share``
        (``count / n``) and ``warn`` (``share > CLIP_WARN``). Covariates outside the public
        range (clipped), responses outside the public ball (projected) and residuals of the
        non-private fit above τ (clipped inside the gradients).
    """
    if settings.mode != "strict":
        return []
    n = dataset.n
    rows = []

    def add(count, what):
        share = count / max(n, 1)
        rows.append({"count": int(count), "n": n, "share": share, "warn": share > CLIP_WARN,
                     "what": what})

    low, high = settings.covariate_range
    add(np.sum((dataset.x < low) | (dataset.x > high)),
        f"covariates outside the public range [{low:g}, {high:g}] (clipped to it)")
    if needs_ball(settings.kind):
        m = settings.manifold
        center = center_point(settings.kind, settings.param, settings.center)
        d = np.asarray(m.dist(dataset.y, np.broadcast_to(center, dataset.y.shape)))
        add(np.sum(d > settings.tau_m),
            f"responses outside the public ball of radius τ_m = {settings.tau_m:g} "
            "(projected onto it)")
    if fit is not None and settings.footpoint_radius:
        # The footpoint region is a support, not a clipping: a fit outside it cannot be
        # released at all, so the preview says so (1 of 1: the fit's footpoint).
        m = settings.manifold
        center = center_point(settings.kind, settings.param, settings.center)
        outside = float(m.dist(fit.footpoint, center)) > float(settings.footpoint_radius)
        rows.append({"count": int(outside), "n": 1, "share": float(outside), "warn": outside,
                     "what": (f"non-private footpoint outside the public footpoint region of "
                              f"radius {settings.footpoint_radius:g} (the release stays inside "
                              "the region: widen it or move its centre)")})
    if fit is not None:
        res = residual_norms(settings.manifold, dataset.x, dataset.y, fit)
        add(np.sum(res > settings.tau),
            f"residuals of the non-private fit above τ = {settings.tau:g} (clipped to norm τ "
            "inside the gradients)")
    return rows


#: A release is called useful when its mean private MSE is at most this many times the
#: non-private MSE (issue 14: "the private error within a small factor of the non-private").
USEFUL_RATIO = 5.0


#: Per-manifold demo defaults of the synthetic data (issue 14: each default release is exact,
#: private and useful; re-measure with ``python -m benchmarks.bench_defaults``). Measured over
#: 24 data seeds at ε = 3, 3 x 3 draws: the median over seeds of the median draw's MSE over
#: the non-private MSE, and in brackets the same for a uniform draw on the public support
#: (what the public design alone gives, without the data).
#: R^1: the joint KNG has an exact sampler with a refined envelope that stays fast at large
#: n x ε: n = 200 gives 1.05x (24 of 24 seeds useful; support alone 1800x).
#: S², SPD(2) and Kendall state a public design: the footpoint lies in a public region and the
#: speed under a public bound, which restrict the mechanism's support to where the data can be
#: (without them the exact target at page sizes is close to uniform on a huge support).
#: S²: footpoint within 0.2 rad of the north pole, speed π/4 < 0.8 (noise variance 0.003):
#: 2.2x (21 of 24; support alone 70x).
#: SPD(2): footpoint within 0.1 of I (:data:`SPD_DEMO_REGION`), speed 0.5 < 0.55, noise 0.05,
#: so the responses lie within 0.1 + 0.5 + 4 x 0.05 = 0.8 of I: τ_m = 0.8 and τ = 0.175 (3.5
#: noise standard deviations) give the sensitivity factor cosh(2c) = 2.1 with
#: c = √½ (τ_m + τ), against 4.9 before (τ_m = 1.5, τ = 0.1, the paper's data, of which
#: 16 of 24 seeds had over 5% of their responses outside that ball). The joint space is
#: 6-dimensional and Δ carries that factor, so SPD needs n·ε ≈ 90: n = 30 (ε = 3 as
#: everywhere), within the exact sampler's reach (worst case 6e5 proposals per draw): 2.2x
#: (24 of 24; support alone 20x), against 15000x before (0 of 24; a uniform draw on its
#: support, 20000x).
#: Kendall: the template shape, speed 0.5 < 0.55, noise 0.05, now with k = 4 landmarks:
#: 2.7x (22 of 24; support alone 17x). With the former k = 8 the joint space has 24
#: dimensions, and at the largest n·ε the exact sampler reaches (60) the release was no better
#: than the support alone (7.0x, 4 of 24, against 8.0x).
DEMO_DEFAULTS = {"euclidean": {"param": 1, "n": 200},
                 "spd": {"n": 30, "noise": 0.05, "footpoint_radius": 0.1, "max_speed": 0.55,
                         "tau": 0.175, "tau_m": 0.8},
                 "sphere": {"noise": 0.003, "footpoint_radius": 0.2, "max_speed": 0.8},
                 "kendall": {"param": 4, "noise": 0.05, "footpoint_radius": 0.15,
                             "max_speed": 0.55, "tau": 0.25}}

#: The SPD(2) demonstration's footpoint region (centre None: the identity; radius): its
#: generator draws the footpoint uniformly within 0.1 of I and a shooting vector of length 0.5
#: (:func:`dpcore.data.make_regression_data` with ``footpoint_region``), facts of the
#: demonstration's design that a lecturer may state as public bounds.
SPD_DEMO_REGION = (None, 0.1)

#: Manifolds where the page offers a public footpoint region (on SPD(2) about the ball's
#: centre, within τ_m + τ of it: the sensitivity proof's support).
FOOTPOINT_REGION_KINDS = ("sphere", "spd", "kendall")


def synthetic_dataset(kind, param, n, noise, seed):
    """The page's synthetic data: :func:`ui.logic.regression_data.synthetic_dataset`, except on
    SPD(2), whose demonstration draws its footpoint in :data:`SPD_DEMO_REGION`.

    Returns
    -------
    Dataset
    """
    if kind != "spd":
        return synthetic_dataset_paper(kind, param, n, noise, seed)
    m = make_manifold(kind, param)
    center, radius = SPD_DEMO_REGION
    d = make_regression_data(m, int(n), noise=float(noise), rng=int(seed),
                             footpoint_region=(center, radius))
    return Dataset(d.x, d.y, "synthetic",
                   f"Synthetic data (paper protocol with a public design): n = {int(n)}, noise "
                   f"standard deviation {noise:g}, seed {int(seed)}; covariate x uniform on "
                   f"[0, 1]. The footpoint lies within {radius:g} of I and the speed is "
                   f"{SPD_REGION_SHOOTING_LENGTH:g} (the demonstration's design, public).",
                   truth=(d.footpoint, d.shooting_vector, (0.0, 1.0)))


def default_n(kind):
    """Default synthetic sample size of a manifold on the page."""
    return int(DEMO_DEFAULTS.get(kind, {}).get("n", 20))


def default_tau(kind, fallback):
    """Default public residual bound τ (Kendall's demonstration: residual norms of noise 0.05
    are about 0.09 with 4 landmarks and 0.17 with 8 (12 dimensions), so τ = 0.25 clips about 1%
    of them even there; SPD(2): τ = 0.175 is 3.5 noise standard deviations in 3 dimensions)."""
    return float(DEMO_DEFAULTS.get(kind, {}).get("tau", fallback))


def default_noise(kind, fallback):
    """Default noise of the page's synthetic data (demonstration defaults, else the paper's)."""
    return float(DEMO_DEFAULTS.get(kind, {}).get("noise", fallback))


def default_footpoint_radius(kind, source):
    """Default radius of the public footpoint region: the demonstration's for its synthetic
    data, none (0: the whole space) for other data, whose region only the user can state."""
    if source != "synthetic":
        return 0.0
    return float(DEMO_DEFAULTS.get(kind, {}).get("footpoint_radius", 0.0))


def default_max_speed(kind, source):
    """Default public speed bound (0: the library's default bound)."""
    if source != "synthetic":
        return 0.0
    return float(DEMO_DEFAULTS.get(kind, {}).get("max_speed", 0.0))


def default_tau_m(kind, fallback):
    """Default radius τ_m of the public response ball on the page."""
    return DEMO_DEFAULTS.get(kind, {}).get("tau_m", fallback)


def default_param(kind, fallback):
    """Default manifold parameter (landmarks, dimension) on the page."""
    return int(DEMO_DEFAULTS.get(kind, {}).get("param", fallback))


#: The page's default budget (ε_p, ε_v) of one geodesic and its draws (footpoints, vectors).
DEFAULT_EPS = (1.0, 2.0)
#: One geodesic: a first release costs ε_p + ε_v, what the page teaches; more draws (their
#: spread, at their cost, stated before releasing) are the user's choice.
DEFAULT_DRAWS = (1, 1)


def demo_settings(kind, *, seed=None, sampler="auto"):
    """The release settings of the page's default scenario on a manifold (synthetic data),
    field for field what the page builds from its default widgets.

    Parameters
    ----------
    kind : str
        A manifold key (:data:`ui.logic.regression_data.MANIFOLD_KINDS`).
    seed : int, optional
        Release seed (None: OS entropy, the page's default).
    sampler : {"auto", "exact", "mcmc"}

    Returns
    -------
    ReleaseSettings
        Its sample size and noise are :func:`default_n` and :func:`default_noise`.
    """
    sp = spec(kind)
    param = default_param(kind, PARAM_RANGE[kind][2]) if kind in PARAM_RANGE else None
    tau_m = center = None
    if needs_ball(kind):
        tau_m = float(default_tau_m(kind, sp.tau_m))
        center = ((1.0,) if kind == "spd" else
                  tuple([0.0] * int(param)) if kind == "euclidean" else None)
    radius = default_footpoint_radius(kind, "synthetic") or None
    if kind == "sphere":
        center = (90.0, 0.0)  # the north pole, as (latitude, longitude)
    return ReleaseSettings(
        kind=kind, param=param, eps_p=DEFAULT_EPS[0], eps_v=DEFAULT_EPS[1], mode="strict",
        tau=default_tau(kind, sp.tau), covariate_range=(0.0, 1.0), tau_m=tau_m, center=center,
        n_footpoints=DEFAULT_DRAWS[0], n_vectors=DEFAULT_DRAWS[1], seed=seed, scheme="joint",
        sampler=sampler, max_speed=default_max_speed(kind, "synthetic") or None,
        footpoint_radius=radius if kind in FOOTPOINT_REGION_KINDS else None)


def usefulness(metrics, n, eps_per_geodesic):
    """Whether a release is useful: its typical draw's MSE within :data:`USEFUL_RATIO` of the
    non-private one.

    A published release is one draw (the page's default); more draws show their spread, at
    their cost. "Useful" means the median draw is within :data:`USEFUL_RATIO` times the
    non-private MSE, i.e. at least half of the single releases would be (the mean over draws
    is dominated by the rare far draw and is shown beside it).

    Returns
    -------
    dict
        ``useful`` (bool), ``ratio`` (median draw / non-private, finite, or None when the
        non-private MSE is 0), ``within`` (draws within the ratio), ``draws`` and ``text`` (a
        sentence for the page).
    """
    np_mse = metrics["mse_nonprivate"]
    draws = np.asarray(metrics.get("mse_private_draws") or [metrics["mse_private"]], dtype=float)
    finite = np.isfinite(draws).all()
    ratio = float(np.median(draws)) / np_mse if np_mse > 0 and finite else None
    within = int(np.sum(draws <= USEFUL_RATIO * np_mse)) if np_mse > 0 and finite else 0
    n_eps = int(n) * float(eps_per_geodesic)
    share = f"{within} of {draws.size} draw{'s' if draws.size != 1 else ''}"
    out = {"ratio": ratio, "within": within, "draws": int(draws.size)}
    one = draws.size == 1
    draw = "the private draw's" if one else "the median private draw's"
    if ratio is not None and ratio <= USEFUL_RATIO:
        spread = "" if one else f", and {share} are within {USEFUL_RATIO:g}×"
        return {**out, "useful": True,
                "text": f"Useful: {draw} MSE is {ratio:.3g}× the non-private one{spread} "
                        f"(n·ε = {n_eps:.3g} per geodesic)."}
    what = ("cannot be compared" if ratio is None
            else f"is {ratio:.3g}× the non-private one" if one
            else f"is {ratio:.3g}× the non-private one ({share} within {USEFUL_RATIO:g}×)")
    return {**out, "useful": False,
            "text": f"**Not useful at n·ε = {n_eps:.3g}**: {draw} MSE {what}; useful means "
                    f"the median draw within {USEFUL_RATIO:g}×. The private "
                    f"{'geodesic' if one else 'geodesics'} drawn say"
                    f"{'s' if one else ''} little about the data."}


#: Budget multipliers tried by :func:`useful_budget_search`, in order.
USEFUL_SEARCH_FACTORS = (2, 4, 8, 16, 32, 64)
#: Metropolis-Hastings chain of the search's simulations (each factor).
USEFUL_SEARCH_CHAIN = 1000


def useful_budget_search(settings, dataset, fit, progress=None, *, seed=0):
    """Smallest ε (hence n·ε) at which a release like ``settings`` on this data set would be
    useful (:func:`usefulness`), searched over ε x :data:`USEFUL_SEARCH_FACTORS`.

    A **preview for the analyst**, like the verdict: it simulates releases of the user's data
    at larger budgets (seeded Metropolis-Hastings draws, or exact ones where the sampler plan
    allows them; nothing is published or recorded) and compares them with the non-private fit.
    MCMC draws can miss far parts of a target that is not yet concentrated, so near the
    threshold the answer is a rough guide, said so on the page.

    Parameters
    ----------
    progress : callable, optional
        ``progress(fraction)`` over the factors tried (:mod:`dpcore._progress`).

    Returns
    -------
    dict
        ``found`` (bool), ``factor``, ``epsilon`` (per geodesic), ``n_eps``, ``ratio`` (median
        draw / non-private at that budget) and ``tried`` (list of ``(factor, ratio)``).
    """
    from dataclasses import replace

    from dpcore._progress import stages

    eps = float(settings.eps_p) + float(settings.eps_v)
    tried = []
    parts = stages(progress, [1.0] * len(USEFUL_SEARCH_FACTORS))
    for factor, part in zip(USEFUL_SEARCH_FACTORS, parts, strict=True):
        trial = replace(settings, eps_p=settings.eps_p * factor, eps_v=settings.eps_v * factor,
                        seed=seed, sampler="mcmc", chain_length=USEFUL_SEARCH_CHAIN,
                        burn_in=USEFUL_SEARCH_CHAIN)
        release, _ = run_release(trial, dataset, progress=part)
        verdict = usefulness(release_metrics(settings.manifold, dataset, release, fit),
                             dataset.n, eps * factor)
        tried.append((factor, verdict["ratio"]))
        if verdict["useful"]:
            if part is not None:
                part(1.0)
            return {"found": True, "factor": factor, "epsilon": eps * factor,
                    "n_eps": dataset.n * eps * factor, "ratio": verdict["ratio"],
                    "tried": tried}
    return {"found": False, "factor": None, "epsilon": None,
            "n_eps": dataset.n * eps * USEFUL_SEARCH_FACTORS[-1], "ratio": None,
            "tried": tried}


def useful_search_seconds(settings, n):
    """Estimated seconds of :func:`useful_budget_search` at its worst (every factor tried)."""
    from dataclasses import replace

    trial = replace(settings, sampler="mcmc", chain_length=USEFUL_SEARCH_CHAIN,
                    burn_in=USEFUL_SEARCH_CHAIN)
    est, _ = work_estimate(trial, n)
    return est.seconds * len(USEFUL_SEARCH_FACTORS)


def useful_budget_text(result, n):
    """The page's sentence for :func:`useful_budget_search`."""
    steps = ", ".join(f"×{f}: {r:.3g}×" if r is not None else f"×{f}: n/a"
                      for f, r in result["tried"])
    if result["found"]:
        return (f"**Smallest useful budget found: ε ≈ {result['epsilon']:.3g} per geodesic, "
                f"n·ε ≈ {result['n_eps']:.3g}** (n = {n}; the median simulated draw is "
                f"{result['ratio']:.3g}× the non-private MSE). Tried (budget factor: median "
                f"ratio): {steps}. Alternatively keep ε and collect about "
                f"{result['factor']}× more rows.")
    return (f"**No useful release up to n·ε ≈ {result['n_eps']:.3g}** (64× this budget). "
            f"Tried (budget factor: median ratio): {steps}. Tighter public bounds (footpoint "
            "region, speed, τ) or many more rows are needed.")
