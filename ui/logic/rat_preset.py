"""The rat skulls preset of the Geodesic regression page: the data, their public bounds, and what
the joint KNG can and cannot do with them (issue 14; issue 28 point 4).

Two designs are compared on the page, side by side, from the figures below:

* **today** (one stage): the joint KNG on all 144 skulls with no public footpoint region. Its
  smallest useful n·ε is at least :data:`RAT_USEFUL_N_EPS` (asymptotic prediction,
  :func:`rat_asymptotic`): far geodesics where the clipped residuals cancel hold the mass.
* **two-stage** (:func:`dpcore.release.private_geodesic_regression_two_stage`): rat 1 is held
  out as a public pilot animal (its mean shape is the public centre of the stage-1 ball), the
  other 17 rats (n = 136) are released: a private Laplace Fréchet mean c̃ first, then the joint
  KNG with its footpoint in a public-radius ball about c̃ (:func:`rat_pilot_design`,
  :func:`rat_two_stage_prediction`).

The figures are measured by ``python -m benchmarks.bench_two_stage`` (which computes them with
the functions of this module) and re-measured by ``tests/ui/logic/test_rat_preset.py``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dpcore.data import load_csv
from ui.caps import upload_max_bytes
from ui.manifolds import make_manifold

from .geodesic_regression import USEFUL_RATIO, fit_nonprivate
from .regression_data import Dataset

__all__ = [
    "RAT_AGES",
    "RAT_BASIN_N_EPS",
    "RAT_BOUNDS_NOTE",
    "RAT_PILOT_BALL_RADIUS",
    "RAT_PRESET",
    "RAT_PROVENANCE",
    "RAT_SKULLS_FILE",
    "RAT_TWO_STAGE",
    "RAT_USEFUL_N_EPS",
    "futile_release_note",
    "rat_asymptotic",
    "rat_comparison",
    "rat_pilot_design",
    "rat_skulls_dataset",
    "rat_two_stage_prediction",
    "rat_two_stage_release",
]

#: The rat skulls preset (issue 14): Vilmann's rat calvaria (Bookstein 1991), shipped in
#: assets/data (README there). Public bounds chosen from the study design and domain
#: knowledge, never from the data: ages 7-150 days lie in [0, 150]; skull shapes of one
#: species differ from each other by well under 0.1 rad of Kendall distance, and growth over
#: 150 days changes the shape by at most about 0.3 rad.
RAT_SKULLS_FILE = Path(__file__).resolve().parents[2] / "assets" / "data" / "rat_skulls.csv"
RAT_AGES = (7, 14, 21, 30, 40, 60, 90, 150)
RAT_PRESET = {"kind": "kendall", "param": 8, "covariate_range": (0.0, 150.0), "tau": 0.1,
              "max_speed": 0.3, "rows_per_person": 8, "eps_p": 3.0, "eps_v": 7.0,
              "n_footpoints": 1, "n_vectors": 3}
RAT_PROVENANCE = (
    "Vilmann's rat calvaria: 18 rats, each X-rayed at 8 ages (7, 14, 21, 30, 40, 60, 90 and "
    "150 days), 8 midsagittal landmarks per skull (144 rows, 8 per rat). From F. L. Bookstein "
    "(1991), *Morphometric Tools for Landmark Data*, Cambridge University Press; this copy "
    "from the geomstats repository (MIT licence), shipped in `assets/data/rat_skulls.csv` "
    "(see `assets/data/README.md`).")


#: Asymptotic prediction for the rat preset (issue 14), from
#: :class:`dpcore.release.asymptotic.AsymptoticKNG` (:func:`rat_asymptotic`, re-measured by
#: tests/ui/logic/test_geodesic_regression.py). The basin of the fit alone (linear law about
#: it, exact target within it by importance sampling) would be useful from n·ε ≈ 700 (median
#: draw 3.8x at 700, 2.1x at 1000; effective sample sizes 27 and 184 of 4000 there: rough).
#: But the footpoint may lie anywhere on CP^6, and about π/2 from the data every residual is
#: clipped and they nearly cancel: Levenberg-Marquardt descent from the best of 1e5 (and 4e5)
#: uniform proposals finds points with |∇E| = 8e-5 (against τ√2 = 0.14 at most), on a flat
#: part of the energy (log |det J| ≈ -140 to -170 against -29 at the fit), whose geodesics
#: have 1220-1260x the non-private MSE (the 500-1100x measured by MCMC). Their mass, bounded
#: below by importance sampling and Markov's inequality (probability 0.999), exceeds the
#: basin's (e^50 times at n·ε = 1440) until n·ε ≈ 9.3e5: below that the median draw is far.
#: Mass that the search missed would only raise the number: it is a lower bound.
RAT_USEFUL_N_EPS = 9.3e5
RAT_BASIN_N_EPS = 700.0


RAT_BOUNDS_NOTE = (
    "Public bounds of the preset, from the study design and domain knowledge: ages in [0, 150] "
    "days; residuals τ = 0.1 rad of Kendall shape distance (skulls of one species at one age "
    "differ by less); the shape changes by at most 0.3 rad over 150 days (maximal speed). "
    "Each rat gives 8 rows, so the preset sets *Rows one person contributes* to 8 (sidebar) "
    "and every cost is stated per rat (group privacy: 8 × the ε of one row). "
    "**Utility:** at n = 144 with 8 landmarks the joint mechanism samples a 24-dimensional "
    "(footpoint, vector) space, beyond any exact sampler, and MCMC chains do not mix there. "
    f"**Asymptotic prediction** (not a release; it reads the data): the smallest useful n·ε "
    f"is at least **{RAT_USEFUL_N_EPS:,.0f}**, i.e. ε ≈ {RAT_USEFUL_N_EPS / 144:,.0f} per "
    "geodesic and row at n = 144. Near the fit the mechanism would be useful from n·ε ≈ "
    f"{RAT_BASIN_N_EPS:.0f}, but far from the data, where every residual is clipped, the "
    "clipped residuals nearly cancel, and those geodesics (about 1200× the non-private MSE) "
    "hold most of the mechanism's mass below that n·ε. A public footpoint region that excludes "
    "them would change this; without one no budget this page offers is useful, so it does not "
    "draw the release by default. The two-stage design below makes that region private "
    "instead: a private mean shape first, then the footpoint within a public radius of it.")


def rat_asymptotic(*, proposals=100_000, starts=8, draws=4000, bounds=(1e4, 1e8), seed=0):
    """Recompute :data:`RAT_USEFUL_N_EPS` (:class:`dpcore.release.asymptotic.AsymptoticKNG` on
    the preset's data and bounds, about a minute).

    Returns
    -------
    dict
        ``n_eps`` (smallest useful n·ε predicted, a lower bound; None beyond ``bounds``),
        ``far`` (the far points' gradient norms) and ``model`` (the AsymptoticKNG).
    """
    from dpcore.release.asymptotic import AsymptoticKNG, joint_sigma

    p, ds = RAT_PRESET, rat_skulls_dataset()
    m = make_manifold(p["kind"], p["param"])
    low, high = p["covariate_range"]
    fit = fit_nonprivate(p["kind"], p["param"], ds.x, ds.y, p["covariate_range"])
    model = AsymptoticKNG(m, (ds.x - low) / (high - low), ds.y, fit.footpoint, fit.vector,
                          tau=p["tau"], max_speed=p["max_speed"],
                          sigma_n_eps=joint_sigma(m, ds.n, 1.0, p["tau"]) * ds.n)
    far = model.far_points(proposals=proposals, starts=starts, rng=seed)
    n_eps, _ = model.smallest_useful_n_eps(ratio=USEFUL_RATIO, bounds=bounds, draws=draws,
                                           rng=seed)
    return {"n_eps": n_eps, "far": [g for _, _, g in far], "model": model}


def futile_release_note(source, settings, n):
    """On the rat preset, below :data:`RAT_USEFUL_N_EPS`: the sentence the page shows instead
    of offering an MCMC release (None elsewhere)."""
    p = RAT_PRESET
    if (source != "rats" or (settings.kind, settings.param) != (p["kind"], p["param"])
            or settings.mode != "strict" or settings.scheme != "joint"
            or settings.footpoint_radius):
        return None
    n_eps = int(n) * (float(settings.eps_p) + float(settings.eps_v))
    if n_eps >= RAT_USEFUL_N_EPS:
        return None
    return (f"**Not useful at n·ε = {n_eps:,.0f}**: the asymptotic prediction above puts the "
            f"smallest useful n·ε at {RAT_USEFUL_N_EPS:,.0f} or more, so the page does not draw "
            "an MCMC release here (its draws would lie far from the data). To see one anyway, "
            "choose *MCMC* under the sampler settings.")


def rat_skulls_dataset(path=RAT_SKULLS_FILE):
    """The rat skulls preset as a :class:`~ui.logic.regression_data.Dataset`: covariate the
    age in days, responses the skull shapes (Kendall preshapes, 8 landmarks)."""
    m = make_manifold("kendall", 8)
    x, y = load_csv(str(path), m, task="regression", max_bytes=upload_max_bytes())
    return Dataset(x, y, "preset",
                   "Preset: rat skulls (Bookstein 1991), n = 144 skulls of 18 rats at 8 ages "
                   "(covariate: age in days, 7 to 150).")


# ============================================================================ two-stage design
#: Radius of the public stage-1 ball about the pilot rat's mean shape: the preset's own public
#: bounds (individual differences τ = 0.1; growth at most 0.3 over the covariate range, of which
#: about 2/3 lies after the mean age: 0.2) plus 0.05 for the pilot's own deviation. It must stay
#: below r* = π/8 on Kendall shape space (paper 001 Thm 2) for the Laplace mechanism.
RAT_PILOT_BALL_RADIUS = 0.35
#: Share of the preset's total budget spent on the private centre (stage 1).
RAT_CENTER_SHARE = 0.2

#: Measured by ``python -m benchmarks.bench_two_stage --seeds 3`` (2026-11-28; medians over
#: release seeds 0-2 of the page's verdict ratio, the median draw's MSE over the non-private
#: MSE; useful means at most 5). ``today_*``: the page's preset release (n = 144, MCMC, chains
#: of 300 + 200 steps). ``mcmc_*``: the two-stage release at the preset's total ε = 30
#: (ε₁ = 6, then 3 geodesics at ε₂ = 8; n = 136), stage 2 by MCMC with the page's chains, whose
#: split R-hat is ``mcmc_rhat`` (not mixed). ``exact_*``: the two-stage design's exact target,
#: predicted by :func:`rat_two_stage_prediction` (importance sampling about the fit, restricted
#: to the footpoint ball): the median ratio at n·ε₂ = 1088 and the smallest useful n·ε₂.
RAT_TWO_STAGE = {
    "eps_center": 6.0, "eps_stage2": 8.0, "draws": 3, "n": 136, "footpoint_radius": 0.513,
    "today_ratio": 713.0, "today_range": (529.0, 821.0),
    "mcmc_ratio": 3.49, "mcmc_range": (2.85, 4.58), "mcmc_rhat": 3.3,
    "exact_ratio": 2.32, "exact_useful_n_eps": 492.0,
}


def rat_pilot_design():
    """The two-stage design's data and public inputs on the rat preset (module docstring).

    Returns
    -------
    dict
        ``manifold``; ``x``, ``y`` the 136 released rows (rats 2-18); ``pilot_center`` the
        Fréchet mean of rat 1's 8 skulls (public: rat 1 is not released);
        ``center_ball`` ``(pilot_center, RAT_PILOT_BALL_RADIUS)``; ``eps_center`` and
        ``eps_stage2`` (per geodesic) splitting the preset's total ε; ``footpoint_radius``
        ρ = V + τ + the predicted 95% error of the centre
        (:func:`dpcore.release.two_stage.two_stage_footpoint_radius`, public inputs only); and
        the preset's ``tau``, ``max_speed``, ``covariate_range``, ``n_footpoints``,
        ``n_vectors``, ``share`` (ε_p's share of a geodesic's budget).
    """
    from dpcore.learning import frechet_mean
    from dpcore.release.two_stage import two_stage_footpoint_radius

    p, ds = RAT_PRESET, rat_skulls_dataset()
    m = make_manifold(p["kind"], p["param"])
    rows = p["rows_per_person"]
    pilot = frechet_mean(m, ds.y[:rows])
    draws = p["n_footpoints"] * p["n_vectors"]
    total = draws * (p["eps_p"] + p["eps_v"])
    eps_center = RAT_CENTER_SHARE * total
    n = len(ds.x) - rows
    rho = two_stage_footpoint_radius(m, n, eps_center=eps_center,
                                     center_ball=(pilot, RAT_PILOT_BALL_RADIUS), tau=p["tau"],
                                     max_speed=p["max_speed"])
    return {"manifold": m, "x": ds.x[rows:], "y": ds.y[rows:], "pilot_center": pilot,
            "center_ball": (pilot, RAT_PILOT_BALL_RADIUS), "eps_center": eps_center,
            "eps_stage2": (total - eps_center) / draws, "footpoint_radius": rho,
            "tau": p["tau"], "max_speed": p["max_speed"],
            "covariate_range": p["covariate_range"], "n_footpoints": p["n_footpoints"],
            "n_vectors": p["n_vectors"], "share": p["eps_p"] / (p["eps_p"] + p["eps_v"])}


def rat_two_stage_prediction(center, *, design=None, n_eps=None, draws=2000, far=True,
                             bounds=(50.0, 1e5), search=True, seed=0):
    """The two-stage design's exact stage-2 target on the rats, predicted about the fit.

    :class:`dpcore.release.asymptotic.AsymptoticKNG` on the 136 released rows, with the
    footpoint restricted to ``B_ρ(center)`` (ρ the design's public footpoint radius).

    Parameters
    ----------
    center : array
        A stage-1 centre c̃ (a released private mean).
    design : dict, optional
        :func:`rat_pilot_design` (computed when None).
    n_eps : float, optional
        n·ε₂ of the prediction (default: the design's, n × ``eps_stage2``).
    draws : int
        Importance-sampling draws.
    far : bool
        Also search the ball for far points where the clipped gradient nearly vanishes.
    bounds : (float, float)
        Search interval of the smallest useful n·ε₂.
    search : bool
        Search for the smallest useful n·ε₂ (else ``useful_n_eps`` is None).
    seed : int

    Returns
    -------
    dict
        ``ratio`` (predicted median ratio at ``n_eps``), ``ess`` (effective sample size of
        the importance weights there), ``useful_n_eps`` (smallest n·ε₂ with a median ratio
        at most :data:`~ui.logic.geodesic_regression.USEFUL_RATIO`; None beyond ``bounds``),
        ``far_gradient`` (smallest clipped-gradient norm of far points found in the ball;
        None when none is found or ``far`` is False), ``n_eps`` and ``model`` (the
        AsymptoticKNG, for further predictions).
    """
    from dpcore.mechanisms import Ball
    from dpcore.release.asymptotic import AsymptoticKNG, joint_sigma

    d = rat_pilot_design() if design is None else design
    m, x, y = d["manifold"], d["x"], d["y"]
    lo, hi = d["covariate_range"]
    n = len(x)
    n_eps = n * d["eps_stage2"] if n_eps is None else float(n_eps)
    fit = fit_nonprivate("kendall", RAT_PRESET["param"], x, y, d["covariate_range"])
    model = AsymptoticKNG(m, (np.clip(x, lo, hi) - lo) / (hi - lo), y, fit.footpoint,
                          fit.vector, tau=d["tau"], max_speed=d["max_speed"],
                          sigma_n_eps=joint_sigma(m, n, 1.0, d["tau"]) * n,
                          support=Ball.make(m, np.asarray(center, dtype=float),
                                            d["footpoint_radius"]))
    found = model.far_points(proposals=20_000, starts=4, rng=seed) if far else []
    with np.errstate(invalid="ignore"):
        pred = model.predict(n_eps, draws=draws, rng=seed)
        useful = (model.smallest_useful_n_eps(ratio=USEFUL_RATIO, bounds=bounds, draws=draws,
                                              rng=seed)[0] if search else None)
    return {"ratio": float(pred["median_ratio"]), "ess": float(pred["ess"]),
            "useful_n_eps": useful, "n_eps": n_eps, "model": model,
            "far_gradient": min((g for *_, g in found), default=None)}


def rat_two_stage_release(rng, *, design=None, chain_length=300, burn_in=200):
    """One two-stage release on the rats (:func:`rat_pilot_design`) and its verdict ratio.

    Parameters
    ----------
    rng : None, int or Generator
        As for :func:`dpcore.release.private_geodesic_regression_two_stage` (an int seeds it:
        not for publication).
    design : dict, optional
        :func:`rat_pilot_design` (computed when None).
    chain_length, burn_in : int
        Stage 2's Metropolis-Hastings chain (the page's by default).

    Returns
    -------
    (Release, float)
        The release and the median over its draws of the draw's MSE over the non-private
        MSE on the released rows.
    """
    import warnings

    from dpcore.experiments.metrics import release_mse
    from dpcore.release import private_geodesic_regression_two_stage

    d = rat_pilot_design() if design is None else design
    m, x, y = d["manifold"], d["x"], d["y"]
    with warnings.catch_warnings():  # the label says what the warnings would
        warnings.simplefilter("ignore")
        release = private_geodesic_regression_two_stage(
            m, x, y, eps_center=d["eps_center"], eps_p=d["share"] * d["eps_stage2"],
            eps_v=(1 - d["share"]) * d["eps_stage2"], tau=d["tau"],
            covariate_range=d["covariate_range"], footpoint_radius=d["footpoint_radius"],
            center_ball=d["center_ball"], max_speed=d["max_speed"],
            n_footpoints=d["n_footpoints"], n_vectors=d["n_vectors"], sampler="auto",
            chain_length=chain_length, burn_in=burn_in, rng=rng, max_work=float("inf"))
    fit = fit_nonprivate("kendall", RAT_PRESET["param"], x, y, d["covariate_range"])
    ratio = float(np.median(np.ravel(release_mse(m, release, x, y)) / fit.mse))
    return release, ratio


def rat_comparison():
    """The two columns of the rat preset's box: today's design and the two-stage design, each
    a ``(heading, figure, caption)`` triple from :data:`RAT_TWO_STAGE`."""
    t = RAT_TWO_STAGE
    total = t["eps_center"] + t["draws"] * t["eps_stage2"]
    today = (
        "Today: one stage, all 18 rats",
        f"{t['today_ratio']:,.0f}× the non-private MSE",
        f"Median draw at the preset's budget (ε = {total:g}, n·ε = "
        f"{144 * (RAT_PRESET['eps_p'] + RAT_PRESET['eps_v']):,.0f} per geodesic; range "
        f"{t['today_range'][0]:,.0f}–{t['today_range'][1]:,.0f}× over 3 seeds). Not useful: "
        f"the smallest useful n·ε is at least {RAT_USEFUL_N_EPS:,.0f}.")
    two = (
        "Two-stage: private centre, then KNG in a ball",
        f"{t['exact_ratio']:.1f}× predicted, {t['mcmc_ratio']:.1f}× by MCMC",
        f"Rat 1 held out as a public pilot; the other 17 rats (n = {t['n']}) released: a "
        f"private Laplace mean (ε₁ = {t['eps_center']:g}), then {t['draws']} geodesics at "
        f"ε₂ = {t['eps_stage2']:g} with the footpoint within ρ = {t['footpoint_radius']:.2f} "
        f"of it; total ε = {total:g}. The exact target is predicted useful from n·ε₂ ≈ "
        f"{t['exact_useful_n_eps']:,.0f} (here {t['n'] * t['eps_stage2']:,.0f}). No exact "
        f"sampler reaches this 24-dimensional target yet: MCMC draws give "
        f"{t['mcmc_range'][0]:.1f}–{t['mcmc_range'][1]:.1f}×, but their chains do not mix "
        f"(R-hat {t['mcmc_rhat']:.1f}): approximately private, and not the mechanism's law.")
    return today, two
