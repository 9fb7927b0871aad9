"""Page: private Fréchet means on the sphere S² and on SPD(k), four mechanisms compared.

Widgets -> :mod:`ui.logic.frechet_mean` (cached simulations) and :mod:`dpcore.release` (the one
private release, on a button) -> figures from :mod:`ui.figures`.
"""

from __future__ import annotations

import hashlib
import json
import time
import warnings

import numpy as np
import pandas as pd
import streamlit as st

from dpcore import visualization as V
from dpcore.data import DataValidationError, make_mean_data, to_csv
from dpcore.data.synthetic import default_center
from dpcore.learning import frechet_mean
from dpcore.manifolds import Sphere
from dpcore.mechanisms.kng import exact_support_available
from dpcore.privacy import eps_to_mu
from dpcore.release import private_frechet_mean, project_to_ball
from ui import figures
from ui import manifolds as M
from ui.caps import CAPS, upload_max_bytes
from ui.logic import common as C
from ui.logic import export as X
from ui.logic import frechet_mean as L
from ui.logic import privacy_text as T
from ui.session import (
    planned_cost,
    query_value,
    record_release,
    release_button,
    rows_per_person,
    show_cost,
    write_query,
)

PAGE = "Fréchet mean"
EPS_OPTIONS = [0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0]
N_OPTIONS = [10, 20, 50, 100, 200, 500, 1000]
DEFAULT_NS = (10, 20, 50, 100, 200)
SIM_CHAIN = (100, 100)  # KNG chain length and burn-in in the simulation
PREVIEW_CHAIN = (200, 150)  # ... and in the preview cloud
METRICS = {
    "euclidean_error": "Euclidean distance in the ambient space (paper 001)",
    "geodesic_error": "geodesic distance on the manifold",
}
LAST = "fm_last_release"

draws_cached = st.cache_data(show_spinner=False, max_entries=64)(L.frechet_mechanism_draws)
sim_cached = st.cache_data(show_spinner=False, max_entries=512)(L.frechet_simulation_one_n)
sens_cached = st.cache_data(show_spinner=False, max_entries=64)(L.frechet_sensitivity_simulation)


def guarantee_text(g):
    """One release's per-draw guarantee as the preview table states it."""
    if g["mu"] is not None:
        return f"µ = {g['mu']:.3g}-GDP ({g['label']})"
    delta = "δ = 0" if g["delta"] == 0 else (
        "δ not certified" if g["delta"] is None else f"δ = {g['delta']:.2g}")
    return f"ε = {g['epsilon']:g}, {delta} ({g['label']})"


@st.cache_data(show_spinner=False, max_entries=64)
def synthetic_data(manifold_key, n, radius, seed):
    """Synthetic data in the ball (paper 001 protocol), cached: it is deterministic."""
    return make_mean_data(M.make_manifold(manifold_key), n, radius=radius, rng=seed)


def teaching_notes():
    st.markdown(
        "The **Fréchet mean** minimizes the sum of squared geodesic distances. If the data lie "
        "in a ball of radius r < r*, replacing one of n points moves it by at most Δ "
        "(κ: upper curvature bound):"
    )
    st.latex(r"\bar x = \arg\min_{z} \sum_{i=1}^n d(z, x_i)^2")
    st.latex(r"\Delta = \frac{2r\,(2-h)}{n\,h}")
    st.latex(r"h = 2r\sqrt{\kappa}\,\cot(2r\sqrt{\kappa})\ \text{ if } \kappa > 0,"
             r"\qquad h = 1 \text{ if } \kappa \le 0")
    st.markdown("The four mechanisms draw the private mean from:")
    st.latex(r"\text{Laplace: } p(y) \propto e^{-d(\bar x, y)/\sigma},\quad "
             r"\sigma = \Delta/\varepsilon")
    st.latex(r"\text{KNG: } p(z) \propto e^{-\|\nabla F(z)\|_z/\sigma},\quad "
             r"\sigma = 2\Delta_\nabla/\varepsilon")
    st.latex(r"\text{Gaussian: } p(y) \propto e^{-d(\bar x, y)^2/(2\sigma^2)}")
    st.latex(r"\text{at } \mu = -2\,\Phi^{-1}\big(1/(1+e^{\varepsilon})\big)")
    st.latex(r"\text{Ambient: } \bar x_E + \frac{2 r_E}{n\varepsilon}\,R\,U,\quad "
             r"R\sim\Gamma(D,1)")
    st.caption("x̄_E: the extrinsic mean in the embedding R^D; U: a uniform unit direction.")


def assumptions_box(manifold_key, radius, center_text, info, source):
    rows = [
        ("Data ball", f"every point lies within geodesic distance r = {radius:.3g} of the "
                      f"public centre m₀ = {center_text}; r < r* = {info['r_star']:.3g} "
                      "(paper 001 Thm 2). Strict mode projects points outside onto the ball."),
        ("Sensitivity", f"Δ = {info['delta']:.3g} for the mean (curvature bound κ = "
                        f"{info['kappa']:g}, h = {info['h']:.3f}); the KNG gradient has "
                        f"Δ∇ = {info['delta_gradient']:.3g}."),
        ("Laplace", "σ = Δ/ε: the manifold is homogeneous, so the normalizing constant does "
                    "not depend on the centre."),
        ("KNG", "σ = 2Δ∇/ε (rigorous rule); " + (
            "the release and the simulations are drawn exactly, by rejection from a refined "
            "Lipschitz envelope (ε-DP, δ = 0)."
            if exact_support_available(M.make_manifold(manifold_key)) else
            "on this space there is no exact sampler: releases and simulations run "
            "Metropolis–Hastings chains and are labelled approximately private.")),
        ("Gaussian", "µ-GDP with µ = µ(ε); the release calibrates σ by Monte Carlo (paper 004 "
                     "Alg. 2) with a 3-standard-error margin: a statistical guarantee."),
        ("Ambient Laplace", "noise on the extrinsic mean in the embedding, sensitivity "
                            "2 r_E / n with r_E the chord radius of the ball; projected back."),
        ("Randomness", "the Release button uses OS entropy; previews and simulations are seeded "
                       "and are not releases."),
    ]
    if source == "upload":
        rows.append(("Uploaded data", "kept in this session's memory only; never written to "
                                      "disk or cached across sessions."))
    with st.container(border=True):
        st.markdown("**Assumptions in force**")
        st.markdown(C.assumptions_markdown(rows))


def load_data(manifold_key, manifold, source):
    """Widgets for the data; returns (y, center, center_text, radius, meta) or None."""
    r_lo, r_hi = L.FRECHET_MANIFOLDS[manifold_key]
    r_default = M.spec(manifold_key).radius
    # The URL's radius belongs to the URL's manifold: after switching manifold, start from the
    # new one's default (a sphere radius of 0.39 is no SPD radius).
    url_manifold = query_value("fm_manifold", "sphere", M.canonical)
    r_start = query_value("fm_r", r_default, float) if url_manifold == manifold_key else r_default
    cols = st.columns(4)
    radius = cols[0].slider(
        "Public radius r of the data ball", min_value=float(r_lo), max_value=float(r_hi),
        value=float(np.clip(r_start, r_lo, r_hi)), step=0.01,
        key=f"fm_radius_{M.full_name(manifold_key)}",
        help="A public bound: every data point is assumed within distance r of the centre.",
    )
    meta = {"radius": radius}
    if isinstance(manifold, Sphere):
        if source == "cities":  # domain knowledge: a centre in Asia, where most of them are
            center_text = cols[1].text_input(
                "Public centre m₀ (latitude, longitude in degrees)", value="30, 100",
                key="fm_center_cities")
        else:
            center_text = cols[1].text_input(
                "Public centre m₀ (x₁, x₂, x₃, or latitude, longitude)", value="0, 0, 1",
                key="fm_center", disabled=source == "synthetic")
        try:
            center = L.parse_center_text(center_text)
        except ValueError as exc:
            st.error(str(exc))
            return None
    else:
        center = default_center(manifold)
        center_text = "the identity matrix"
        cols[1].markdown(f"Public centre m₀: **{center_text}**")
    if source == "synthetic":
        n = cols[2].slider("Sample size n", 10, CAPS["fm_max_n"], value=int(np.clip(
            query_value("fm_n", 50, int), 10, CAPS["fm_max_n"])), key="fm_n")
        seed = cols[3].number_input("Seed of the synthetic data", 0, 10**6,
                                    value=query_value("fm_seed", 0, int), key="fm_seed")
        try:
            y = synthetic_data(manifold_key, int(n), float(radius), int(seed))
        except (RuntimeError, ValueError) as exc:
            st.error(f"Could not generate the data: {exc}")
            return None
        meta.update(n=int(n), seed=int(seed), fingerprint=f"syn-{manifold_key}-{n}-{radius}-{seed}")
        center = default_center(manifold)
        center_text = "the north pole (0, 0, 1)" if isinstance(manifold, Sphere) else center_text
        return y, center, center_text, radius, meta
    if source == "cities":
        st.caption(L.CITIES_ATTRIBUTION)
        raw = L.cities_bytes()
    else:
        upload = st.file_uploader(
            "Upload a CSV file (header row; columns "
            + ("y1, y2, y3, or lat and lon in degrees" if isinstance(manifold, Sphere)
               else "s11, s12, … (upper triangle)")
            + ", one point per row)", type=["csv", "txt"], key="fm_upload",
        )
        if upload is None:
            st.info("Upload a file to continue, or switch the data to *Synthetic*.")
            return None
        raw = upload.getvalue()
    try:
        y, note = L.read_upload(raw, manifold, max_bytes=upload_max_bytes())
        if note:
            st.caption(note)
    except DataValidationError as exc:
        message = str(exc).replace(
            "Pass renormalize=True to project every point onto the sphere.",
            "Normalize each row to unit length before uploading.")
        st.error(f"The file could not be used.\n\n{message}")
        return None
    if y.shape[0] < 2:
        st.error("The file needs at least 2 data rows.")
        return None
    outside = np.flatnonzero(manifold.dist(y, center) > radius)
    if outside.size:
        rows = ", ".join(str(i + 2) for i in outside[:10]) + (" …" if outside.size > 10 else "")
        st.warning(f"{outside.size} point(s) lie outside the public ball of radius {radius:.3g} "
                   f"(rows {rows}); strict mode projects them onto the ball.")
    digest = hashlib.sha256(raw).hexdigest()[:16]
    meta.update(n=int(y.shape[0]), fingerprint=f"upl-{manifold_key}-{digest}-{radius}-"
                                                 f"{center_text}")
    return y, center, center_text, radius, meta


@st.cache_data(show_spinner=False, max_entries=64)
def cached_prediction(_manifold, name, n, epsilon, radius, center, mech, seed=0):
    return L.predicted_error(_manifold, n, epsilon, radius, center, mech, seed=seed)


@st.cache_data(show_spinner=False, max_entries=64)
def cached_smallest(_manifold, name, n, radius, center, mech, target, seed=0):
    return L.smallest_epsilon_text(_manifold, n, radius, center, mech, target, seed=seed)


def export_section(manifold, source, meta, center, radius, epsilon):
    """The scenario as a script or notebook that reproduces it with dpcore alone."""
    mech = st.session_state.get("fm_mech", "laplace")
    with st.expander("Take it with you: this scenario as a Python script or notebook"):
        st.caption("The script holds only public settings: synthetic data are regenerated from "
                   "their seed, an uploaded file is read from a path you fill in (it is never "
                   "embedded). Its release draws from OS entropy; set RELEASE_SEED for a "
                   "reproducible demo.")
        script = X.frechet_script(manifold, source=source, n=meta.get("n"),
                                  seed=meta.get("seed"), radius=radius, center=center,
                                  epsilon=epsilon, mechanism=mech)
        c1, c2 = st.columns(2)
        c1.download_button("Export script (.py)", script, file_name="frechet_mean_scenario.py",
                           mime="text/x-python", key="fm_export_script", on_click="ignore")
        c2.download_button("Export notebook (.ipynb)", X.notebook_from_script(script),
                           file_name="frechet_mean_scenario.ipynb",
                           mime="application/x-ipynb+json", key="fm_export_notebook",
                           on_click="ignore")


def release_section(manifold, y, center, radius, epsilon, fingerprint, mean):
    st.subheader("Release one private mean")
    mech = st.radio("Mechanism", list(V.MECHANISM_LABELS),
                    index=list(V.MECHANISM_LABELS).index(query_value(
                        "fm_mech", "laplace", str, choices=list(V.MECHANISM_LABELS))),
                    format_func=V.MECHANISM_LABELS.get, horizontal=True, key="fm_mech")
    note = {"gaussian": "The Gaussian release first calibrates σ by Monte Carlo: allow a few "
                        "seconds (longer on SPD).",
            "kng": "KNG is drawn exactly by rejection sampling (its run time depends on the "
                   "data and is not shown)."}.get(mech)
    st.caption("A release happens only when you press the button; it is drawn with OS entropy "
               "and recorded in the privacy ledger in the sidebar. " + (note or ""))
    pred = cached_prediction(manifold, repr(manifold), y.shape[0], epsilon, radius, center,
                             mech)
    st.info(L.predicted_error_text(pred, epsilon, mech), icon=":material/target:")
    if pred is not None:
        with st.expander("Smallest ε for a target error"):
            target = st.number_input("Largest acceptable median error (distance)", 1e-4, 10.0,
                                     value=float(f"{pred['median']:.2g}"), format="%.4g",
                                     key="fm_target")
            st.markdown(cached_smallest(manifold, repr(manifold), y.shape[0], radius, center,
                                        mech, target))
    key = f"{fingerprint}-{epsilon}-{mech}"
    cost = planned_cost(**L.planned_release(manifold, epsilon, mech))
    show_cost(cost)
    if release_button("fm_release", cost):
        with st.status("Drawing one private mean …", expanded=False) as status:
            start = time.perf_counter()
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    rel = private_frechet_mean(manifold, y, epsilon=epsilon, mechanism=mech,
                                               radius=radius, center=center, mode="strict")
            except (ValueError, RuntimeError) as exc:
                status.update(label="The release failed", state="error")
                st.error(f"The release failed: {exc}")
                return
            seconds = time.perf_counter() - start
            record_release(PAGE, rel)
            st.session_state[LAST] = {"release": rel, "key": key, "seconds": seconds}
            status.update(label="Released", state="complete")
    last = st.session_state.get(LAST)
    if not last:
        return
    if last["key"] != key:
        st.info("The settings changed since the last release (it stays in the ledger). Press "
                "*Release* for a release with the current settings.")
        return
    rel = last["release"]
    value = np.asarray(rel.values["mean"])[0]
    st.markdown(f"**{V.MECHANISM_LABELS[rel.mechanism]}** release")
    cols = st.columns(3)
    if rel.mu is not None:
        cols[0].metric("Guarantee", f"µ = {rel.mu:.3g}-GDP")
    else:
        delta = "not certified" if rel.delta is None else f"{rel.delta:.2g}"
        cols[0].metric("Guarantee", f"ε = {rel.epsilon:.3g}, δ = {delta}")
    cols[1].metric("Distance to the non-private mean", f"{float(manifold.dist(mean, value)):.4g}")
    cols[2].metric("Noise scale σ", f"{float(next(iter(rel.sigma.values()))):.3g}")
    st.markdown("**Private mean:**")
    st.code(np.array2string(value, precision=5, suppress_small=True))
    st.caption(f"Label: {rel.label}.")
    st.download_button("Download release", json.dumps(rel.to_dict(), indent=2),
                       file_name="frechet_mean_release.json", mime="application/json",
                       key="fm_download_release", on_click="ignore")


def preview_section(manifold_key, manifold, y, center, radius, epsilon, cache_ok, is_synthetic):
    st.subheader("How the four mechanisms spread (simulation on the current data)")
    n_draws = st.slider("Private means drawn per mechanism", 10, CAPS["cloud_draws"],
                        value=int(np.clip(query_value("fm_draws", 50, int), 10,
                                          CAPS["cloud_draws"])), step=10, key="fm_draws")
    st.caption("Seeded draws for illustration: not a release and not recorded in the ledger. "
               "Publishing all of them would cost ε each.")
    fn = draws_cached if cache_ok else L.frechet_mechanism_draws
    base, size = M.spec(manifold_key).key, M.param_of(manifold_key)
    # SPD(k >= 3) samples its Gaussian by Markov chains: a smaller Monte Carlo check there.
    mc = (200, 5) if base == "spd" and size >= 3 else (1000, 20)
    res = fn(manifold_key, y, float(radius), float(epsilon), int(n_draws), center=center,
             seed=1, chain_length=PREVIEW_CHAIN[0], burn_in=PREVIEW_CHAIN[1],
             mc_samples=mc[0], mc_repeats=mc[1])
    labels = {k: V.MECHANISM_LABELS[k] for k in res["draws"]}
    if base == "sphere":
        clouds = {labels[k]: v for k, v in res["draws"].items()}
        fig = figures.sphere_points_figure(
            clouds, data=y, nonprivate_point=res["mean"],
            true_point=center if is_synthetic else None, true_label="Ball centre m₀",
            title=f"Private means on S² at ε = {epsilon:g}",
            subtitle="Rotate and zoom with the mouse; ambient draws projected onto the sphere",
        )
        tab_sphere, tab_zoom = st.tabs(["3D sphere", "Zoom: normal coordinates at the mean"])
        with tab_sphere:
            st.plotly_chart(fig, width="stretch", key="fm_cloud")
        with tab_zoom:
            st.plotly_chart(V.tangent_clouds_figure(manifold, res["mean"], clouds, data=y),
                            width="stretch", key="fm_zoom")
    elif base == "spd" and size == 2:
        clouds = {labels[k]: v for k, v in res["draws"].items()}
        clouds[labels["ambient_laplace"]] = res["ambient"]
        tab_cone, tab_ell = st.tabs(["SPD cone", "Ellipses"])
        with tab_cone:
            st.plotly_chart(V.spd_mean_clouds_cone_figure(
                y, res["mean"], clouds,
                title=f"Private means in the SPD(2) cone at ε = {epsilon:g}"),
                width="stretch", key="fm_cone")
            st.caption("Ambient Laplace draws are shown before projection: those outside the "
                       "cone are not positive definite.")
        with tab_ell:
            ell = {labels[k]: v for k, v in res["draws"].items()}
            st.plotly_chart(V.spd_mean_ellipses_figure(res["mean"], ell), width="stretch",
                            key="fm_ellipses")
    errors = {labels[k]: v for k, v in res["errors"].items()}
    st.plotly_chart(figures.ecdf_figure(
        errors, x_title="geodesic distance to the non-private mean",
        title="Distribution of the error per mechanism",
        subtitle=f"{n_draws} draws per mechanism at ε = {epsilon:g}; diamonds: medians; "
                 "further left is better"),
        width="stretch", key="fm_hist")
    table = pd.DataFrame({
        "mechanism": [labels[k] for k in res["draws"]],
        "noise scale σ": [res["sigma"][k] for k in res["draws"]],
        "guarantee per draw": [guarantee_text(res["guarantee"][k]) for k in res["draws"]],
        "mean geodesic error": [float(np.mean(res["errors"][k])) for k in res["draws"]],
        "mean ambient error": [float(np.mean(res["ambient_errors"][k])) for k in res["draws"]],
        "share off the manifold": [
            float(np.mean(res["left_manifold"])) if k == "ambient_laplace" else 0.0
            for k in res["draws"]],
    })
    st.dataframe(table.style.format({"noise scale σ": "{:.3g}", "mean geodesic error": "{:.3g}",
                                     "mean ambient error": "{:.3g}",
                                     "share off the manifold": "{:.0%}"}),
                 hide_index=True, width="stretch")
    mu_hat, mu_se = res["mu_check"]
    if "gaussian" in res["sigma"]:
        gauss_note = (
            f"The Gaussian draws use σ = {res['sigma']['gaussian']:.3g}, calibrated as a "
            "release calibrates it (Monte Carlo, paper 004 Alg. 2, with a safety margin). An "
            f"independent Monte Carlo run puts its µ on this manifold at {mu_hat:.3f} ± "
            f"{2 * mu_se:.3f} (target {res['mu']:.3f}). ")
    else:
        gauss_note = ("The Riemannian Gaussian is not shown here: on SPD(k ≥ 3) it has no "
                      "exact sampler, and calibrating its σ as a release does takes minutes. ")
    st.caption(
        gauss_note
        + ("Every ambient draw leaves the sphere (it has measure zero in R³)."
           if manifold_key == "sphere" else
           f"{np.mean(res['left_manifold']):.0%} of the ambient draws are not positive "
           "definite before projection.")
    )
    if res["n_outside"]:
        st.caption(f"{res['n_outside']} data point(s) were projected onto the public ball.")


def simulation_section(manifold_key, radius, epsilon):
    st.subheader("Error against the sample size (simulation on synthetic data)")
    with st.expander("Simulation settings", expanded=False):
        cols = st.columns(4)
        default_ns = [int(v) for v in str(query_value("fm_ns", ",".join(map(str, DEFAULT_NS)),
                                                      str)).split(",") if v.strip().isdigit()]
        default_ns = [v for v in default_ns if v in N_OPTIONS] or list(DEFAULT_NS)
        ns = cols[0].multiselect("Sample sizes n", N_OPTIONS, default=default_ns,
                                 max_selections=CAPS["sim_sizes"], key="fm_ns")
        reps = cols[1].slider("Replicates per n", 5, CAPS["sim_replicates"],
                              value=int(np.clip(query_value("fm_reps", 20, int), 5,
                                                CAPS["sim_replicates"])), step=5,
                              key="fm_reps")
        kng_exact = exact_support_available(M.make_manifold(manifold_key))
        include_kng = cols[2].checkbox(
            "Include KNG" + ("" if kng_exact else " (MCMC here, slow)"),
            value=query_value("fm_kng", kng_exact, bool), key="fm_kng",
            help=None if kng_exact else "On SPD(k ≥ 3) KNG has no exact sampler: every "
            "replicate runs its own Markov chain (approximately private), about a second each.")
        metric = cols[3].radio("Error metric", list(METRICS), format_func=METRICS.get,
                               index=list(METRICS).index(query_value(
                                   "fm_metric", "euclidean_error", str, choices=list(METRICS))),
                               key="fm_metric")
    ns = sorted(int(v) for v in ns)
    if not ns:
        st.info("Choose at least one sample size in the simulation settings.")
        return {"fm_ns": "", "fm_reps": reps, "fm_kng": include_kng, "fm_metric": metric}
    bar = st.progress(0.0, text="Simulating …")
    frames = []
    for i, n in enumerate(ns):
        bar.progress(i / len(ns), text=f"Simulating n = {n} ({i + 1} of {len(ns)}) …")
        frames.append(sim_cached(manifold_key, float(radius), float(epsilon), n, int(reps),
                                 include_kng=bool(include_kng), chain_length=SIM_CHAIN[0],
                                 burn_in=SIM_CHAIN[1], seed=0))
    bar.empty()
    frame = pd.concat(frames, ignore_index=True)
    st.plotly_chart(V.frechet_error_figure(frame, metric, epsilon=epsilon), width="stretch",
                    key="fm_sim")
    amb = frame[frame["mechanism"] == "ambient_laplace"]["left_manifold"]
    if manifold_key == "sphere":
        st.info(f"Ambient releases off the manifold: {amb.mean():.0%} at every n of the "
                "simulation. On the sphere this is certain: S² has measure zero in R³.")
    else:
        st.plotly_chart(V.frechet_left_manifold_figure(frame), width="stretch", key="fm_left")
    st.caption(
        f"{reps} fresh data sets per n (paper 001 protocol), each released once per mechanism "
        "exactly as a strict release would (KNG by its exact sampler; the Gaussian at the µ "
        "of ε, σ calibrated as a Gaussian release does). The same study, with the same seed, "
        "draws the reproduction report's figure. The ambient mechanism "
        "privatizes the extrinsic mean, so its error also contains the gap between the "
        "extrinsic and the Fréchet mean, which does not shrink with n (visible on SPD)."
    )
    return {"fm_ns": ",".join(map(str, ns)), "fm_reps": reps, "fm_kng": include_kng,
            "fm_metric": metric}


def sensitivity_section(manifold_key, radius):
    st.subheader("Sensitivity: empirical vs theoretical bound")
    frame = sens_cached(manifold_key, float(radius), DEFAULT_NS, 20, seed=0)
    st.plotly_chart(V.frechet_sensitivity_figure(frame), width="stretch", key="fm_sens")
    worst = frame.groupby("n")["ratio"].min()
    cols = st.columns([3, 2])
    with cols[0]:
        st.markdown(
            "Each dot is one pair of adjacent data sets (n + 1 points, D drops the first and D′ "
            "the last); the dashed line is the bound Δ used by the mechanisms. A valid bound "
            "lies above every dot. The table gives the smallest ratio bound / empirical over "
            "the 20 pairs per n: at least 1 means the bound held."
        )
    with cols[1]:
        st.dataframe(pd.DataFrame({"n": worst.index, "smallest bound / empirical": worst.values})
                     .style.format({"smallest bound / empirical": "{:.2f}"}),
                     hide_index=True, width="stretch")


def main():
    st.title("Fréchet mean")
    st.markdown(
        "Compare four ways to release the **Fréchet mean** of data on the sphere S² or on "
        "symmetric positive definite (SPD) matrices under the same privacy budget ε: the "
        "Riemannian Laplace mechanism, the K-norm gradient mechanism (KNG), the Riemannian "
        "Gaussian at the equivalent Gaussian-DP µ, and Laplace noise added in the ambient "
        "Euclidean space."
    )
    with st.container(border=True):
        cols = st.columns([2, 2, 3])
        keys = list(L.FRECHET_MANIFOLDS)
        # M.canonical reads aliases from the URL: "spd2" (an older link) is "spd".
        manifold_key = cols[0].selectbox(
            "Manifold", keys, index=keys.index(query_value("fm_manifold", "sphere",
                                                           M.canonical, choices=keys)),
            format_func=M.choice_label, key="fm_manifold")
        sources = ["synthetic", "upload"] + (["cities"] if manifold_key == "sphere" else [])
        source = cols[1].radio("Data", sources, index=sources.index(query_value(
            "fm_source", "synthetic", str, choices=sources)),
            format_func={"synthetic": "Synthetic (paper 001)", "upload": "Upload CSV",
                         "cities": "Preset: world cities"}.get,
            horizontal=True, key="fm_source")
        epsilon = cols[2].select_slider(
            "Privacy budget ε (per release)", EPS_OPTIONS,
            value=query_value("fm_eps", 1.0, float, choices=EPS_OPTIONS), key="fm_eps")
        cols[2].caption(T.epsilon_reading(epsilon, rows=rows_per_person()))
        manifold = M.make_manifold(manifold_key)
        loaded = load_data(manifold_key, manifold, source)
    settings = {"fm_manifold": manifold_key, "fm_source": source, "fm_eps": epsilon}
    if loaded is None:
        write_query(**settings)
        return
    y, center, center_text, radius, meta = loaded
    settings["fm_r"] = round(radius, 4)
    if source == "synthetic":
        settings.update(fm_n=meta["n"], fm_seed=meta["seed"])
    n = y.shape[0]
    info = L.frechet_summary(manifold, n, radius)
    mean = frechet_mean(manifold, project_to_ball(manifold, y, center, radius))
    cols = st.columns(5)
    cols[0].metric("Sample size n", n)
    cols[1].metric("Radius r", f"{radius:.3g}", help=f"Must stay below r* = {info['r_star']:.3g}")
    cols[2].metric("Sensitivity Δ of the mean", f"{info['delta']:.3g}")
    cols[3].metric("KNG gradient sensitivity Δ∇", f"{info['delta_gradient']:.3g}")
    cols[4].metric("Gaussian-DP equivalent µ(ε)", f"{eps_to_mu(epsilon):.3g}")
    if source == "synthetic":
        st.download_button("Download data", to_csv(manifold, y), file_name=f"frechet_mean_"
                           f"{M.full_name(manifold_key)}_n{n}_seed{meta['seed']}.csv",
                           mime="text/csv", key="fm_download_data", on_click="ignore")

    notes, assumptions = st.columns([1, 1])
    with notes, st.container(border=True):
        st.markdown("**Teaching notes**")
        teaching_notes()
    with assumptions:
        assumptions_box(manifold_key, radius, center_text, info, source)

    release_section(manifold, y, center, radius, float(epsilon), meta["fingerprint"], mean)
    export_section(manifold, source, meta, center, radius, float(epsilon))
    preview_section(manifold_key, manifold, y, center, radius, float(epsilon),
                    cache_ok=source == "synthetic", is_synthetic=source == "synthetic")
    settings["fm_draws"] = st.session_state.get("fm_draws", 50)
    settings["fm_mech"] = st.session_state.get("fm_mech", "laplace")
    settings.update(simulation_section(manifold_key, radius, float(epsilon)))
    sensitivity_section(manifold_key, radius)
    write_query(**settings)


main()
