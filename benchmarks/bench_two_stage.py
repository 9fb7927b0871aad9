"""Two-stage private geodesic regression on real data (issue 28 point 4): is it useful where
today's one-stage joint KNG is not?

``python -m benchmarks.bench_two_stage [--seeds N]`` prints one table. Each row is a design
released with ``N`` release seeds (sampler ``"auto"``, the page's chains of 300 + 200 steps);
per seed the page's verdict ratio (:func:`ui.logic.geodesic_regression.usefulness`: the median
draw's MSE over the non-private MSE) is taken, and the table gives the median over seeds
(``ratio``), the range over seeds and the seeds whose ratio is within 5 (``useful``);
``n·ε per geodesic`` is stage 2's for the two-stage rows (ε₁ is spent once). ``label``
is the release's label without the seeded suffix; ``R-hat`` the largest split R-hat of stage 2's
chains over the seeds ("exact" for the exact sampler): above about 1.1 the chains did not mix,
and the MCMC draws say more about the chains' start than about the mechanism.

**Rat skulls** (Kendall, 8 landmarks; :data:`ui.logic.rat_preset.RAT_PRESET`: ages in
[0, 150] days, τ = 0.1, speed at most 0.3, (ε_p, ε_v) = (3, 7) per geodesic, 1 x 3 draws, total
ε = 30). Stage 1 needs a public ball of radius below r* = π/8 on Kendall shape space (the
template shape is 1.4 rad from every skull, and the whole space is too large). No public rat
skull shape exists in this repository, so **rat 1 is held out as a pilot animal**: the Fréchet
mean of its 8 skulls is the public centre, and the released data are the other 17 rats
(n = 136). The ball's radius 0.35 follows from the preset's own public bounds (individual
differences τ = 0.1, growth at most 0.3 over the covariate range of which about 2/3 lies
after the mean age, and 0.05 for the pilot's own deviation). Rows:

* ``today (page preset, n = 144)``: the page's rat release as it is (every rat).
* ``today``: the same design on the 136 rows.
* ``one-stage, pilot ball``: the footpoint restricted to B_ρ(pilot centre), a public centre.
* ``two-stage``: ε₁ = 20% of the total on a Laplace Fréchet mean in B_0.35(pilot centre), then
  3 draws at ε₂ = 8 per geodesic with the footpoint in B_ρ(c̃); ρ = V + τ + the predicted 95%
  error of c̃ (:func:`dpcore.release.two_stage.two_stage_footpoint_radius`, public inputs).
* ``two-stage, chains 2000 + 1000``: the same with the library's default chains (do longer
  chains move the draws? they do where the chains have not mixed).
* ``two-stage, support only``: stage 2 at ε₂ = 1e-9 (a uniform draw on B_ρ(c̃) x speed ball):
  what stage 1 and the public design give without stage 2's use of the data.
* ``centre only (c̃, 0)``: the constant geodesic at the stage-1 centre (costs ε₁ only).
* ``asymptotic, exact target in B_ρ(c̃)``: :class:`dpcore.release.asymptotic.AsymptoticKNG`
  restricted to B_ρ(c̃) for each seed's c̃: the predicted median ratio of the exact target at
  the row's n·ε₂ (importance sampling about the fit; its effective sample size is shown in the
  ``R-hat`` column: a small one makes the figure rough), whether the far-point search finds
  points in the ball where the clipped gradient nearly vanishes (``far |G|``: the smallest
  gradient norm found; about τ means every residual is clipped the same way, no cancellation,
  negligible mass), and the smallest useful n·ε₂ (``useful n·ε``). Two more rows repeat it for
  the first seed at smaller stage-1 budgets (a larger ρ). Today's smallest useful n·ε is the
  page's constant :data:`~ui.logic.rat_preset.RAT_USEFUL_N_EPS` (a lower bound, about
  a minute to recompute with ``rat_asymptotic()``; not re-measured here).

**EMG covariances** (SPD(2), an upload-like data set): the 840 windows of the Fréchet-mean
page's EMG preset (:func:`dpcore.data.shipped.emg_covariances`), with a real covariate from the
same file: the window's start in seconds since the onset of the sign being held (from its
``time`` column; each sign is held for 25 s, so the public range is [0, 25]). Public bounds:
the EMG preset's ball (10·I, radius 3.5) for stage 1 and as τ_m; τ = 1 (a window's covariance
within a factor e of the trend) and, except in ``today``, speed at most V = 1 over the 25 s.
Budgets: the page's defaults, (ε_p, ε_v) = (1, 2) per geodesic, 3 x 3 draws, total ε = 27.
``today`` is the page's upload default (footpoint in B_{τ_m+τ}(10·I), the library's speed bound
2(τ_m + τ)); the other rows as for the rats, with the public centre 10·I.

**World cities** (S²): the preset is the 50 largest cities' locations; the file's only numeric
column besides them is the population, and "location as a geodesic function of population" is
not a regression anyone would run, so no row is given (a synthetic covariate would not be
honest).
"""

from __future__ import annotations

import argparse
import time
import warnings
from dataclasses import replace

import numpy as np
import pandas as pd

SEEDS = 5
#: Stage-1 budgets of the asymptotic sweep on the rats (first seed only).
SWEEP_EPS_CENTER = (1.0, 3.0)
#: Share of the total budget spent on the private centre.
CENTER_SHARE = 0.2
#: The page's Metropolis-Hastings chain (ui.logic.geodesic_regression.DEFAULT_CHAIN, BURN_IN).
CHAIN = {"chain_length": 300, "burn_in": 200}
USEFUL = 5.0
#: Importance-sampling draws of the asymptotic prediction.
ASYMPTOTIC_DRAWS = 2000


# =========================================================================== data sets
def rat_design():
    """The rat preset with rat 1 held out as the public pilot (module docstring;
    :func:`ui.logic.rat_preset.rat_pilot_design`)."""
    from ui.logic import rat_preset as R

    ds, p, pilot = R.rat_skulls_dataset(), R.RAT_PRESET, R.rat_pilot_design()
    eps_geo = p["eps_p"] + p["eps_v"]
    return {
        "name": "rat skulls", "manifold": pilot["manifold"], "x": pilot["x"], "y": pilot["y"],
        "x_all": ds.x, "y_all": ds.y, "covariate_range": p["covariate_range"],
        "tau": p["tau"], "max_speed": p["max_speed"], "tau_m": None,
        "budget": (p["eps_p"], p["eps_v"]), "draws": (p["n_footpoints"], p["n_vectors"]),
        "total": p["n_footpoints"] * p["n_vectors"] * eps_geo,
        "public_center": pilot["pilot_center"], "center_ball": pilot["center_ball"],
        "today": {"max_speed": p["max_speed"]}, "pilot": pilot,
    }


def emg_design():
    """EMG covariances with the time since the sign's onset as covariate (module docstring)."""
    from dpcore.data.shipped import emg_covariances, geomstats_data_path
    from dpcore.manifolds import SPD
    from ui.logic.frechet_mean import EMG_PRESET

    emg = emg_covariances(channels=EMG_PRESET["channels"], window=EMG_PRESET["window"])
    times = pd.read_csv(geomstats_data_path("emg", "emg.csv"), usecols=["time"])["time"]
    start = times.to_numpy(dtype=float)[emg.start]
    keys = pd.Series(list(zip(emg.session, emg.gesture, strict=True)))
    onset = pd.Series(start).groupby(keys).transform("min").to_numpy()
    center = EMG_PRESET["scale"] * np.eye(2)
    return {
        "name": "EMG (SPD(2))", "manifold": SPD(2), "x": (start - onset) / 1000.0,
        "y": emg.matrices, "covariate_range": (0.0, 25.0), "tau": 1.0, "max_speed": 1.0,
        "tau_m": EMG_PRESET["radius"], "budget": (1.0, 2.0), "draws": (3, 3), "total": 27.0,
        "public_center": center, "center_ball": (center, EMG_PRESET["radius"]),
        "today": {"center": center},
    }


# =========================================================================== releases
def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _ratios(m, release, x, y, np_mse):
    from dpcore.experiments.metrics import release_mse

    return np.ravel(release_mse(m, release, x, y)) / np_mse


def _rhat(release):
    diag = release.diagnostics.get("joint", {})
    return "exact" if diag.get("exact") else diag.get("rhat")


def _two_stage_args(d, n, eps1):
    from dpcore.release.two_stage import two_stage_footpoint_radius

    k = d["draws"][0] * d["draws"][1]
    eps2 = (d["total"] - eps1) / k
    share = d["budget"][0] / sum(d["budget"])
    rho = two_stage_footpoint_radius(d["manifold"], n, eps_center=eps1,
                                     center_ball=d["center_ball"], tau=d["tau"],
                                     max_speed=d["max_speed"])
    return eps2, share, rho


def design_rows(d, seeds):
    """``(row name, per-seed results)`` of every release design on one data set."""
    from dpcore.release import (
        private_geodesic_regression,
        private_geodesic_regression_two_stage,
    )
    from ui.logic.geodesic_regression import fit_nonprivate

    m, x, y = d["manifold"], d["x"], d["y"]
    n = len(x)
    kind = "kendall" if d["tau_m"] is None else "spd"
    param = 8 if kind == "kendall" else None
    np_mse = fit_nonprivate(kind, param, x, y, d["covariate_range"]).mse
    eps1 = CENTER_SHARE * d["total"]
    eps2, share, rho = _two_stage_args(d, n, eps1)
    base = {"tau": d["tau"], "covariate_range": d["covariate_range"],
            "n_footpoints": d["draws"][0], "n_vectors": d["draws"][1], "sampler": "auto",
            "max_work": float("inf"), **CHAIN}
    if d["tau_m"] is not None:
        base["tau_m"] = d["tau_m"]
    ep, ev = d["budget"]
    designs = {}
    if "x_all" in d:
        all_mse = fit_nonprivate(kind, param, d["x_all"], d["y_all"], d["covariate_range"]).mse
        designs["today (page preset, n = 144)"] = (
            lambda s: private_geodesic_regression(m, d["x_all"], d["y_all"], eps_p=ep,
                                                  eps_v=ev, rng=s, **base, **d["today"]),
            d["x_all"], d["y_all"], all_mse, ep + ev)
    designs["today"] = (lambda s: private_geodesic_regression(
        m, x, y, eps_p=ep, eps_v=ev, rng=s, **base, **d["today"]), x, y, np_mse, ep + ev)
    public = {**base, "max_speed": d["max_speed"], "footpoint_radius": rho}
    designs["one-stage, public-centre ball"] = (lambda s: private_geodesic_regression(
        m, x, y, eps_p=ep, eps_v=ev, rng=s, center=d["public_center"], **public),
        x, y, np_mse, ep + ev)

    def two(s, e2=eps2):
        return private_geodesic_regression_two_stage(
            m, x, y, eps_center=eps1, eps_p=share * e2, eps_v=(1 - share) * e2, rng=s,
            center_ball=d["center_ball"], **public)

    designs["two-stage"] = (two, x, y, np_mse, eps2)
    if "x_all" in d:  # MCMC there: do longer chains change the draws?
        designs["two-stage, chains 2000 + 1000"] = (
            lambda s: private_geodesic_regression_two_stage(
                m, x, y, eps_center=eps1, eps_p=share * eps2, eps_v=(1 - share) * eps2,
                rng=s, center_ball=d["center_ball"],
                **{**public, "chain_length": 2000, "burn_in": 1000}), x, y, np_mse, eps2)
    designs["two-stage, support only"] = (lambda s: two(s, 2e-9), x, y, np_mse, 2e-9)
    out = {}
    for name, (make, xs, ys, ref, eps_geo) in designs.items():
        runs = []
        for s in seeds:
            start = time.perf_counter()
            rel = _quiet(make, s)
            runs.append({"release": rel, "seconds": time.perf_counter() - start,
                         "ratio": float(np.median(_ratios(m, rel, xs, ys, ref))),
                         "n": len(xs), "eps_geo": eps_geo})
        out[name] = runs
    out["centre only (c̃, 0)"] = [_centre_only(m, r["release"], x, y, np_mse, eps1)
                                  for r in out["two-stage"]]
    return out, {"rho": rho, "eps1": eps1, "eps2": eps2, "n": n}


def _centre_only(m, release, x, y, np_mse, eps1):
    c = np.asarray(release.values["center"])[0]
    mse = float(np.mean(np.asarray(m.dist(y, c)) ** 2))
    stage1 = release.details["stage1"]
    return {"ratio": mse / np_mse, "seconds": 0.0, "n": len(x), "eps_geo": None,
            "label": stage1["label"].replace(", seeded: not for publication", "")
            .replace("private mechanism", "private"), "epsilon": eps1, "rhat": "-"}


def rat_asymptotic_rows(d, centers, rho, n_eps):
    """:func:`ui.logic.rat_preset.rat_two_stage_prediction` for each centre (footpoint ball
    B_ρ(c̃)): the predicted median ratio at ``n_eps``, the smallest useful n·ε₂ (None beyond
    1e5), the smallest clipped-gradient norm of the far points found in the ball (None: none
    found) and the effective sample size of the importance weights at ``n_eps`` (of
    ASYMPTOTIC_DRAWS: a small one makes the prediction rough)."""
    from ui.logic.rat_preset import rat_two_stage_prediction

    design = {**d["pilot"], "footpoint_radius": rho}
    out = [rat_two_stage_prediction(c, design=design, n_eps=n_eps, draws=ASYMPTOTIC_DRAWS)
           for c in centers]
    return ([o["ratio"] for o in out], [o["useful_n_eps"] for o in out],
            [o["far_gradient"] for o in out], [o["ess"] for o in out])


# =========================================================================== table
def _summary(data, name, runs, useful_n_eps=None):
    ratios = np.array([r["ratio"] for r in runs])
    rel = runs[0].get("release")
    if rel is not None:
        label = replace(rel, seeded=False).label.replace("private mechanism", "private")
        epsilon = rel.epsilon
        rhats = [_rhat(r["release"]) for r in runs]
        rhat = ("exact" if all(h == "exact" for h in rhats) else
                f"{max(float(h) for h in rhats if h not in ('exact', None)):.2g}")
    else:
        label, epsilon, rhat = runs[0]["label"], runs[0]["epsilon"], runs[0]["rhat"]
    eps_geo = runs[0]["eps_geo"]
    return {
        "data": data, "design": name, "label": label, "ε total": round(float(epsilon), 3),
        "n": runs[0]["n"],
        "n·ε per geodesic": "-" if eps_geo is None else f"{runs[0]['n'] * eps_geo:.3g}",
        "ratio": f"{np.median(ratios):.3g}",
        "range": f"{ratios.min():.3g}-{ratios.max():.3g}",
        "useful": f"{int(np.sum(ratios <= USEFUL))}/{ratios.size}",
        "R-hat": rhat, "useful n·ε": useful_n_eps or "-",
        "s/release": f"{np.mean([r['seconds'] for r in runs]):.2g}",
    }


def _asymptotic_row(d, centers, rho, n, eps1, eps2):
    start = time.perf_counter()
    preds, smallest, far, ess = rat_asymptotic_rows(d, centers, rho, n * eps2)
    found = [s for s in smallest if s is not None]
    grads = [g for g in far if g is not None]
    return {
        "data": d["name"],
        "design": f"asymptotic, exact target in B_ρ(c̃), ε₁ = {eps1:g}, ρ = {rho:.2f}",
        "label": "prediction (reads the data; not a release)", "ε total": "-", "n": n,
        "n·ε per geodesic": f"{n * eps2:.3g}", "ratio": f"{np.median(preds):.3g}",
        "range": f"{min(preds):.3g}-{max(preds):.3g}",
        "useful": f"{int(np.sum(np.array(preds) <= USEFUL))}/{len(preds)}",
        "R-hat": (f"ESS {min(ess):.0f}/{ASYMPTOTIC_DRAWS}; " + (
            "no far point in the ball" if not grads else
            f"far |G| ≥ {min(grads):.2g} (τ = {d['tau']:g})")),
        "useful n·ε": (f"n·ε₂ ≈ {np.median(found):.3g}" if found else "n·ε₂ > 1e5"),
        "s/release": f"{(time.perf_counter() - start) / len(preds):.2g}"}


def _sweep_row(d, eps1, seed, info):
    """The asymptotic row at another stage-1 budget (one seed): the ball grows with the
    centre's error; does it let far points in?"""
    from dpcore.release import private_frechet_mean

    eps2, _, rho = _two_stage_args(d, info["n"], eps1)
    center = _quiet(private_frechet_mean, d["manifold"], d["y"], epsilon=eps1,
                    radius=d["center_ball"][1], center=d["center_ball"][0],
                    rng=seed).values["mean"][0]
    return _asymptotic_row(d, [center], rho, info["n"], eps1, eps2)


def main(seeds=SEEDS):
    """The table (module docstring)."""
    from ui.logic.rat_preset import RAT_USEFUL_N_EPS

    seed_list = list(range(int(seeds)))
    rows, notes = [], []
    for design in (rat_design(), emg_design()):
        results, info = design_rows(design, seed_list)
        notes.append(f"{design['name']}: n = {info['n']}, ε₁ = {info['eps1']:g}, ε₂ = "
                     f"{info['eps2']:.4g} per geodesic, ρ = {info['rho']:.3f}")
        for name, runs in results.items():
            useful = (f"≥ {RAT_USEFUL_N_EPS:.2g} (page constant)"
                      if design["tau_m"] is None and name.startswith("today") else None)
            rows.append(_summary(design["name"], name, runs, useful))
        if design["tau_m"] is None:
            centers = [np.asarray(r["release"].values["center"])[0]
                       for r in results["two-stage"]]
            rows.append(_asymptotic_row(design, centers, info["rho"], info["n"], info["eps1"],
                                        info["eps2"]))
            for eps1 in SWEEP_EPS_CENTER:
                rows.append(_sweep_row(design, eps1, seed_list[0], info))
    notes.append("World cities (S²): no regression covariate (population only): not run.")
    table = pd.DataFrame(rows)
    table.attrs["notes"] = notes
    return table


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=SEEDS, help="release seeds per row")
    args = parser.parse_args()
    start = time.perf_counter()
    out = main(args.seeds)
    with pd.option_context("display.width", 250, "display.max_columns", None,
                           "display.max_colwidth", 60):
        print(out.to_string(index=False))
    for line in out.attrs["notes"]:
        print(line)
    print(f"({time.perf_counter() - start:.0f} s)")
