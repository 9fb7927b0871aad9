"""Page: private Fréchet means on the sphere S² and on SPD(k), four mechanisms compared.

Widgets (:mod:`ui.frechet_data`) -> :mod:`ui.logic.frechet_simulation` (cached previews and
simulations) and one :class:`dpcore.release.FrechetMeanRequest` (:func:`release_request`),
which the prediction, the cost line, the work estimate, the release on a button, its ledger
entry and the exported script all read -> figures from :mod:`ui.figures`.

Every widget takes its starting value from the page's :class:`ui.session.PageSettings`
(``settings_state``); ``finish()`` keeps the settings for a page switch and writes them to the
URL, at the end of the page and of each fragment (a fragment's own rerun runs nothing else).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import streamlit as st

from dpcore import visualization as V
from dpcore.data import to_csv
from dpcore.mechanisms.kng import exact_support_available
from dpcore.release import FrechetMeanRequest
from dpcore.visualization.subsample import subsample_for_drawing, subsample_note
from ui import figures
from ui import manifolds as M
from ui.caps import CAPS
from ui.figures import frame_key, show_figure
from ui.first_paint import chart_first
from ui.frechet_data import data_and_budget, data_numbers, figure_data, per_data
from ui.frechet_notes import assumptions_box, teaching_notes
from ui.logic import export as X
from ui.logic import frechet_mean as L
from ui.logic import frechet_simulation as S
from ui.release_panel import release_panel
from ui.session import (
    PageSettings,
    export_buttons,
    formula_notes,
    group,
    lazy_expander,
    rows_per_person,
    session_memo,
    set_page_rows,
)
from ui.widgets import request_key

PAGE = "Fréchet mean"
N_OPTIONS = [10, 20, 50, 100, 200, 500, 1000]
DEFAULT_NS = (10, 20, 50, 100, 200)
SIM_CHAIN = (100, 100)  # KNG chain length and burn-in in the simulation
PREVIEW_CHAIN = (200, 150)  # ... and in the preview cloud
LARGE_N = 20_000  # above this many rows the preview runs on request
ERROR_TAB = "Error distribution"  # the tab of the preview's error ECDF
METRICS = {
    "euclidean_error": "Euclidean distance in the ambient space (paper 001)",
    "geodesic_error": "geodesic distance on the manifold",
}
LAST = "fm_last_release"
#: Session-state store of what the page states before a release, per request.
PLAN_MEMO = "fm_release_facts"
#: The studies' section (built only while open) and the settings drawn in it.
STUDIES_OPEN = "fm_studies_open"
STUDY_KEYS = ("fm_ns", "fm_reps", "fm_kng", "fm_metric")
settings_state = PageSettings("fm")
init = settings_state.init

draws_cached = st.cache_data(show_spinner=False, max_entries=64)(S.frechet_mechanism_draws)
sim_cached = st.cache_data(show_spinner=False, max_entries=512)(S.frechet_simulation_one_n)
sens_cached = st.cache_data(show_spinner=False, max_entries=64)(S.frechet_sensitivity_simulation)


@st.cache_data(show_spinner=False, max_entries=64, hash_funcs={pd.DataFrame: frame_key})
def sim_figure(frame, metric, epsilon):
    """The simulation's figure (synthetic data only), kept per frame: every rerun of the page
    while the studies are open draws it again from the same cached frame."""
    return V.frechet_error_figure(frame, metric, epsilon=epsilon)


def sample_sizes(text):
    """The simulation's sample sizes a URL names ("10,20"; unknown and repeated ones dropped,
    at most ``CAPS["sim_sizes"]``), or the defaults."""
    sizes = [int(v) for v in str(text).split(",") if v.strip().isdigit()]
    sizes = list(dict.fromkeys(v for v in sizes if v in N_OPTIONS))
    return sizes[:CAPS["sim_sizes"]] or list(DEFAULT_NS)


def guarantee_text(g):
    """One release's per-draw guarantee as the preview table states it."""
    if g["mu"] is not None:
        return f"µ = {g['mu']:.3g}-GDP ({g['label']})"
    delta = "δ = 0" if g["delta"] == 0 else (
        "δ not certified" if g["delta"] is None else f"δ = {g['delta']:.2g}")
    return f"ε = {g['epsilon']:g}, {delta} ({g['label']})"


@st.cache_data(show_spinner=False, max_entries=16)
def release_distances(_manifold, name, fingerprint, value, _y, center, radius):
    return L.release_distances(_manifold, value, _y, center, radius)


@st.cache_data(show_spinner=False, max_entries=64, hash_funcs={FrechetMeanRequest: request_key})
def cached_prediction(request, seed=0):
    """:meth:`~dpcore.release.FrechetMeanRequest.predict` (seeded releases of a public model
    data set; none of the user's data)."""
    return request.predict(rng=seed)


@st.cache_data(show_spinner=False, max_entries=64, hash_funcs={FrechetMeanRequest: request_key})
def cached_smallest(request, target, seed=0):
    return L.smallest_epsilon_text(request, target, seed=seed)


def release_request(manifold, n, radius, center, epsilon):
    """The mechanism (a radio) and the page's one request, built from the widgets; None, with
    the reason, when they cannot make one."""
    st.subheader("Release one private mean")
    options = list(L.available_mechanisms(manifold, radius))
    if st.session_state.get("fm_mech") not in (None, *options):
        del st.session_state["fm_mech"]  # r grew past r*: only the ambient mechanism is left
    init("fm_mech", "fm_mech", options[0], str, choices=options)
    mech = st.radio("Mechanism", options, format_func=V.MECHANISM_LABELS.get, horizontal=True,
                    key="fm_mech")
    note = {"gaussian": "The Gaussian release first calibrates σ by Monte Carlo: allow a few "
                        "seconds (longer on SPD).",
            "kng": "KNG is drawn exactly by rejection sampling where the library can (its run "
                   "time then depends on the data; the estimate below is from public inputs "
                   "only), else by Metropolis–Hastings chains."}.get(mech)
    st.caption("A release happens only when you press the button; it is drawn with OS entropy "
               "and recorded in the privacy ledger in the sidebar. " + (note or ""))
    try:
        return L.release_request(manifold, n, epsilon, mech, radius, center)
    except ValueError as exc:
        st.error(f"No release with these settings: {exc}")
        return None


def export_section(request, source, meta, y=None):
    """The scenario as a script or notebook that reproduces it with dpcore alone: the
    request's public settings (:meth:`~dpcore.release.FrechetMeanRequest.to_script_dict`)."""
    spec = request.to_script_dict()
    settings = spec["settings"]
    emg = source == "emg"
    upload = st.session_state.get("fm_upload") if source == "upload" else None
    data_file = X.data_file_name(getattr(upload, "name", None))
    if emg:  # public data: the script reads the preset's matrices from a CSV
        source, data_file = "upload", "emg_covariances_c0_c1.csv"
    # Built only once opened: its caption and two download buttons (and the script and
    # notebook they hold) are not made on every run, nor drawn with the first plot.
    box = lazy_expander("Take it with you: this scenario as a Python script or notebook",
                        "fm_export_open")
    if box is None:
        return
    with box:
        st.caption("The script holds only public settings: synthetic data are regenerated from "
                   f"their seed, an uploaded file is read as {data_file}, next to the script "
                   "(it is never embedded). Its release draws from OS entropy; set "
                   "RELEASE_SEED for a reproducible demo.")
        mapping = meta.get("mapping")
        mapped = {}
        if mapping is not None:
            st.caption("The script reads your file as this page does, through the column "
                       "mapping chosen above (other columns ignored): put it next to the "
                       f"script as {data_file}.")
            mapped = {"columns": L.mapped_columns(request.manifold, mapping),
                      "person": mapping.person}
        script = X.frechet_script(request.manifold, source=source, n=spec["n"],
                                  seed=meta.get("seed"), radius=settings["radius"],
                                  center=settings["center"], epsilon=settings["epsilon"],
                                  mechanism=settings["mechanism"],
                                  release_seed=spec["release_seed"], data_file=data_file,
                                  **mapped)
        if emg:
            st.caption(f"The EMG preset's {request.n} matrices (public data, geomstats, "
                       f"MIT) go in {data_file}, next to the script:")
            st.download_button("Download the EMG matrices (.csv)", to_csv(request.manifold, y),
                               file_name=data_file, mime="text/csv", key="fm_export_emg",
                               on_click="ignore")
        export_buttons(script, "frechet_mean", "fm")


def release_section(request, y, fingerprint, group_ok=True):
    """The prediction, the cost, the work estimate, the Release button and the last release:
    every one reads ``request``."""
    pred = cached_prediction(request)
    st.info(L.predicted_error_text(pred, request), icon=":material/target:")
    # Searched only while its section is open: the search costs a dozen predictions, and a
    # closed expander's widget would still be built by the browser before the first plot.
    box = (lazy_expander("Smallest ε for a target error", "fm_smallest_open", keep=("fm_target",))
           if pred is not None else None)
    if box is not None:
        with box:
            # the median shrinks like 1/n: a 50,000-row file predicts errors below 1e-4
            init("fm_target", None, float(f"{pred['median']:.2g}"), bounds=(1e-9, 10.0))
            target = st.number_input("Largest acceptable median error (distance)", 1e-9, 10.0,
                                     format="%.4g", key="fm_target")
            st.markdown(cached_smallest(request, target))
    event, work, work_ok = session_memo(PLAN_MEMO, request, lambda: L.release_facts(request),
                                        max_entries=8)
    if not group_ok:
        st.info("Confirm above that the largest group size is public (or choose no person "
                "column) to release.", icon=":material/group:")
    rows = rows_per_person()
    entry = release_panel(
        PAGE, request, lambda bar: (request.run(y, progress=bar), {"rows": rows}), key="fm",
        signature=(fingerprint, request), work=work, work_ok=work_ok, event=event,
        label="Drawing one private mean", disabled=not group_ok, button="fm_release",
        run="fm_run", last=LAST,
        on_page="lower n (or use fewer rows), lower ε, or choose another mechanism.")
    if entry is None:
        if st.session_state.get(LAST):
            st.info("The settings changed since the last release (it stays in the ledger). "
                    "Press *Release* for a release with the current settings.")
        return
    show_release(entry, request, y, fingerprint)


def show_release(last, request, y, fingerprint):
    """The last release of ``request``: its guarantee, its distances to the non-private means
    (not released) and its value."""
    manifold, center, radius = request.manifold, request.center_array, request.radius
    rel = last["release"]
    value = np.asarray(rel.values["mean"])[0]
    st.markdown(f"**{V.MECHANISM_LABELS[rel.mechanism]}** release")
    cols = st.columns(2)
    if rel.mu is not None:
        cols[0].metric("Guarantee", f"µ = {rel.mu:.3g}-GDP")
    else:
        delta = "not certified" if rel.delta is None else f"{rel.delta:.2g}"
        cols[0].metric("Guarantee", f"ε = {rel.epsilon:.3g}, δ = {delta}")
    k = last.get("rows", 1)
    if k > 1:
        eps_k, delta_k, mu_k = group(rel.epsilon, rel.delta, rel.mu, k)
        per = (f"µ = {mu_k:.3g}" if mu_k is not None else f"ε = {eps_k:.3g}, δ = "
               + ("not certified" if delta_k is None else f"{delta_k:.2g}"))
        st.caption(f"Per person ({k} rows each, group privacy): {per}; the ledger entry "
                   f"records {k} rows per person.")
    cols[1].metric("Noise scale σ", f"{float(next(iter(rel.sigma.values()))):.3g}")
    dist = (L.release_distances(manifold, value, y, center, radius)
            if fingerprint.startswith("upl-") else
            release_distances(manifold, repr(manifold), fingerprint, value, y, center, radius))
    cols = st.columns(2)  # two wide columns: the labels are never truncated at 1280 px
    cols[0].metric("Distance to the mean of your data", f"{dist['unprojected']:.4g}",
                   help="Geodesic distance to the non-private Fréchet mean of the data as "
                        "given (not projected onto the public ball): the error that matters. "
                        "Not released.")
    cols[1].metric("Distance to the mean of the projected data", f"{dist['projected']:.4g}",
                   help="Geodesic distance to the non-private mean the mechanism privatizes "
                        "(data projected onto the public ball): the noise alone. Not released.")
    if dist["bias"] > dist["projected"]:
        st.warning(f"Projecting the data onto the public ball moved their mean by "
                   f"{dist['bias']:.3g}, more than the noise did: move the centre towards your "
                   "data or enlarge the radius.")
    st.markdown("**Private mean:**")
    st.code(np.array2string(value, precision=5, suppress_small=True), language=None)
    st.caption("For comparison, not released: the non-private mean of your data is "
               + np.array2string(dist["mean_unprojected"], precision=5, suppress_small=True)
               .replace("\n", " ") + ".")
    st.caption(f"Label: {rel.label}.")
    st.download_button("Download release", json.dumps(rel.to_dict(), indent=2),
                       file_name="frechet_mean_release.json", mime="application/json",
                       key="fm_download_release", on_click="ignore")


@st.fragment
def preview_section(manifold_key, manifold, y, center, radius, epsilon, is_synthetic,
                    fingerprint=""):
    st.subheader("How the mechanisms spread")
    # The number of draws is set under the figure (drawn after it: one widget less before the
    # page's first plot); its value is read here, already the slider's in a rerun it caused.
    init("fm_draws", "fm_draws", 50, int, bounds=(10, CAPS["cloud_draws"]))
    n_draws = st.session_state["fm_draws"]

    def draws_slider():
        st.slider("Private means drawn per mechanism", 10, CAPS["cloud_draws"], step=10,
                  key="fm_draws")
        settings_state.finish(page_end=False)  # a fragment's own rerun runs no code after it
        st.caption("A simulation on the current data: seeded draws for illustration, not a "
                   "release and not recorded in the ledger. Publishing all of them would cost ε "
                   "each.")
    if y.shape[0] > LARGE_N and not st.toggle(
            f"Compute the preview on all {y.shape[0]:,} rows", value=False, key="fm_preview_large",
            help="Each KNG draw evaluates the gradient over every row: with large data the "
                 "preview takes several seconds per change of ε or of the number of draws."):
        st.info(f"With more than {LARGE_N:,} rows the preview is computed on request (switch "
                "above), so that the page stays interactive. The release below does not need "
                "it.")
        draws_slider()
        return
    base, size = M.spec(manifold_key).key, M.param_of(manifold_key)
    # SPD(k >= 3) samples its Gaussian by Markov chains: a smaller Monte Carlo check there.
    mc = (200, 5) if base == "spd" and size >= 3 else (1000, 20)
    # Public data: cached on their content; an upload: this session's memory only.
    draw_kw = dict(center=center, seed=1, chain_length=PREVIEW_CHAIN[0],
                   burn_in=PREVIEW_CHAIN[1], mc_samples=mc[0], mc_repeats=mc[1])
    args = (manifold_key, y, float(radius), float(epsilon), int(n_draws))
    res = per_data(fingerprint, ("draws", float(epsilon), int(n_draws)),
                   lambda: S.frechet_mechanism_draws(*args, **draw_kw),
                   lambda: draws_cached(*args, **draw_kw))
    labels = {k: V.MECHANISM_LABELS[k] for k in res["draws"]}
    for mech, message in res["skipped"].items():
        st.warning(f"{V.MECHANISM_LABELS[mech]} is left out of the preview: {message}")
    # Large data are drawn subsampled (seeded); every computation above used all of them.
    shown, n_total = subsample_for_drawing(y)
    note = subsample_note(shown.shape[0], n_total)
    errors = {labels[k]: v for k, v in res["errors"].items()}

    def error_distribution():
        show_figure(st, figures.ecdf_figure(
            errors, x_title="geodesic distance to the non-private mean",
            title="Distribution of the error per mechanism",
            subtitle=f"{n_draws} draws per mechanism at ε = {epsilon:g}; diamonds: medians; "
                     "further left is better"),
            width="stretch", key="fm_hist")
        chart_first()

    # Stateful tabs: only the open one is drawn (the light 2D view first; the 3D scene, the
    # slowest figure to draw in a browser, and the error distribution when asked for: each
    # chart drawn on opening the page delays its first plot by about 0.15 s).
    if base == "sphere":
        clouds = {labels[k]: v for k, v in res["draws"].items()}
        tab_zoom, tab_sphere, tab_errors = st.tabs(
            ["Zoom: normal coordinates at the mean", "3D sphere", ERROR_TAB],
            key="fm_view_sphere", on_change="rerun")
        if tab_zoom.open is not False:
            with tab_zoom:
                show_figure(st, V.tangent_clouds_figure(manifold, res["mean"], clouds,
                                                        data=shown),
                            width="stretch", key="fm_zoom")
                chart_first()  # a visit's first run ends at its first chart (ui.first_paint)
        if tab_sphere.open:
            with tab_sphere:
                fig = figures.sphere_points_figure(
                    clouds, data=shown, nonprivate_point=res["mean"],
                    true_point=center if is_synthetic else None, true_label="Ball centre m₀",
                    title=f"Private means on S² at ε = {epsilon:g}",
                    subtitle="Rotate and zoom with the mouse; ambient draws projected onto the "
                             "sphere")
                show_figure(st, fig, width="stretch", key="fm_cloud")
                chart_first()
    elif base == "spd" and size == 2:
        clouds = {labels[k]: v for k, v in res["draws"].items()}
        if "ambient_laplace" in labels:
            clouds[labels["ambient_laplace"]] = res["ambient"]
        tab_ell, tab_cone, tab_errors = st.tabs(["Ellipses", "SPD cone (3D)", ERROR_TAB],
                                                key="fm_view_spd", on_change="rerun")
        if tab_ell.open is not False:
            with tab_ell:
                ell = {labels[k]: v for k, v in res["draws"].items()}
                show_figure(st, V.spd_mean_ellipses_figure(res["mean"], ell), width="stretch",
                            key="fm_ellipses")
                chart_first()
        if tab_cone.open:
            with tab_cone:
                show_figure(st, V.spd_mean_clouds_cone_figure(
                    shown, res["mean"], clouds,
                    title=f"Private means in the SPD(2) cone at ε = {epsilon:g}"),
                    width="stretch", key="fm_cone")
                chart_first()
                st.caption("Ambient Laplace draws are shown before projection: those outside "
                           "the cone are not positive definite.")
    else:
        tab_errors = None
    if note:
        st.caption(note)
    if tab_errors is None:
        error_distribution()
    elif tab_errors.open:
        with tab_errors:
            error_distribution()
    draws_slider()
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
    # A static table (four rows): lighter to draw than an interactive data grid.
    st.table(table.style.format({"noise scale σ": "{:.3g}", "mean geodesic error": "{:.3g}",
                                 "mean ambient error": "{:.3g}",
                                 "share off the manifold": "{:.0%}"}).hide(axis="index"))
    mu_hat, mu_se = res["mu_check"]
    if "gaussian" in res["sigma"]:
        gauss_note = (
            f"The Gaussian draws use σ = {res['sigma']['gaussian']:.3g}, calibrated as a "
            "release calibrates it (Monte Carlo, paper 004 Alg. 2, with a safety margin). An "
            f"independent Monte Carlo run puts its µ on this manifold at {mu_hat:.3f} ± "
            f"{2 * mu_se:.3f} (target {res['mu']:.3f}). ")
    elif res["delta"] is None:
        gauss_note = "Only the ambient mechanism has a sensitivity bound at r ≥ r*. "
    else:
        gauss_note = ("The Riemannian Gaussian is not shown here: on SPD(k ≥ 3) it has no "
                      "exact sampler, and calibrating its σ as a release does takes minutes. ")
    st.caption(
        gauss_note
        + ("Every ambient draw leaves the sphere (it has measure zero in R³)."
           if manifold_key == "sphere" else
           f"{np.mean(res['left_manifold']):.0%} of the ambient draws are not positive "
           "definite before projection." if res["left_manifold"] is not None else "")
    )
    if res["n_outside"]:
        st.caption(f"{res['n_outside']} data point(s) were projected onto the public ball.")


def study_settings(manifold):
    """Starting values of the simulation's settings, given on every run (the studies may be
    closed: the settings stay in the URL and the session)."""
    kng_exact = exact_support_available(manifold)
    init("fm_ns", "fm_ns", list(DEFAULT_NS), sample_sizes)
    init("fm_reps", "fm_reps", 20, int, bounds=(5, CAPS["sim_replicates"]))
    init("fm_kng", "fm_kng", kng_exact, bool)
    init("fm_metric", "fm_metric", "euclidean_error", str, choices=list(METRICS))


@st.fragment
def simulation_section(manifold_key, manifold, radius, epsilon):
    st.markdown("#### Error against the sample size (simulation on synthetic data)")
    info = L.frechet_summary(manifold, 10, radius)
    if info["delta"] is None:
        st.info(f"The simulation compares the four mechanisms, which needs r < r* = "
                f"{info['r_star']:.3g}; lower the radius to see it.")
        return
    kng_exact = exact_support_available(manifold)
    with st.expander("Simulation settings", expanded=False):
        cols = st.columns(4)
        ns = cols[0].multiselect("Sample sizes n", N_OPTIONS, max_selections=CAPS["sim_sizes"],
                                 key="fm_ns")
        reps = cols[1].slider("Replicates per n", 5, CAPS["sim_replicates"], step=5,
                              key="fm_reps")
        include_kng = cols[2].checkbox(
            "Include KNG" + ("" if kng_exact else " (MCMC here, slow)"), key="fm_kng",
            help=None if kng_exact else "On SPD(k ≥ 3) KNG has no exact sampler: every "
            "replicate runs its own Markov chain (approximately private), about a second each.")
        metric = cols[3].radio("Error metric", list(METRICS), format_func=METRICS.get,
                               key="fm_metric")
    settings_state.finish(page_end=False)  # a fragment's own rerun runs no code after it
    ns = sorted(int(v) for v in ns)
    if not ns:
        st.info("Choose at least one sample size in the simulation settings.")
        return
    bar = st.progress(0.0, text="Simulating …")
    frames = []
    for i, n in enumerate(ns):
        bar.progress(i / len(ns), text=f"Simulating n = {n} ({i + 1} of {len(ns)}) …")
        frames.append(sim_cached(manifold_key, float(radius), float(epsilon), n, int(reps),
                                 include_kng=bool(include_kng), chain_length=SIM_CHAIN[0],
                                 burn_in=SIM_CHAIN[1], seed=0))
    bar.empty()
    frame = pd.concat(frames, ignore_index=True)
    show_figure(st, sim_figure(frame, metric, epsilon), width="stretch", key="fm_sim")
    amb = frame[frame["mechanism"] == "ambient_laplace"]["left_manifold"]
    if manifold_key == "sphere":
        st.info(f"Ambient releases off the manifold: {amb.mean():.0%} at every n of the "
                "simulation. On the sphere this is certain: S² has measure zero in R³.")
    else:
        show_figure(st, V.frechet_left_manifold_figure(frame), width="stretch", key="fm_left")
    st.caption(
        f"{reps} fresh data sets per n (paper 001 protocol), each released once per mechanism "
        "exactly as a strict release would (KNG by its exact sampler; the Gaussian at the µ "
        "of ε, σ calibrated as a Gaussian release does). The same study, with the same seed, "
        "draws the reproduction report's figure. The ambient mechanism "
        "privatizes the extrinsic mean, so its error also contains the gap between the "
        "extrinsic and the Fréchet mean, which does not shrink with n (visible on SPD)."
    )


def sensitivity_section(manifold_key, manifold, radius):
    st.markdown("#### Sensitivity: empirical vs theoretical bound")
    info = L.frechet_summary(manifold, 10, radius)
    if info["delta"] is None:
        st.info(f"Paper 001 Thm 2 gives no bound at r ≥ r* = {info['r_star']:.3g}: nothing "
                "to compare.")
        return
    frame = sens_cached(manifold_key, float(radius), DEFAULT_NS, 20, seed=0)
    show_figure(st, V.frechet_sensitivity_figure(frame), width="stretch", key="fm_sens")
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


def studies(manifold_key, manifold, radius, epsilon):
    """The two studies on synthetic data (``manifold``, the setting ``manifold_key``'s), built
    only once their section is opened (their settings and chart were drawn with the page's
    first plot; issue 29), in stateful tabs: only the open study is computed and drawn."""
    st.subheader("Studies on synthetic data")
    study_settings(manifold)
    box = lazy_expander("Error against the sample size, and the sensitivity bound against "
                        "its empirical value", STUDIES_OPEN, keep=STUDY_KEYS)
    if box is None:
        return
    with box:
        tab_sim, tab_sens = st.tabs(["Error against the sample size",
                                     "Sensitivity: empirical vs bound"], key="fm_study_tab",
                                    on_change="rerun")
        if tab_sim.open is not False:
            with tab_sim:
                simulation_section(manifold_key, manifold, radius, epsilon)
        if tab_sens.open:
            with tab_sens:
                sensitivity_section(manifold_key, manifold, radius)


def preview(loaded):
    """The picture (a fragment: its own widgets rerun only it, and it saves the settings) of
    the data :func:`ui.frechet_data.data_and_budget` returned."""
    manifold_key, manifold, source, epsilon, (y, center, _, radius, meta) = loaded
    preview_section(manifold_key, manifold, y, center, radius, float(epsilon),
                    is_synthetic=source == "synthetic", fingerprint=meta["fingerprint"])


def main():
    st.title("Fréchet mean")
    set_page_rows(None)  # set again below while an uploaded file's person column is mapped
    st.markdown(
        "Compare four ways to release the **Fréchet mean** of data on the sphere S² or on "
        "symmetric positive definite (SPD) matrices under the same privacy budget ε: the "
        "Riemannian Laplace mechanism, the K-norm gradient mechanism (KNG), the Riemannian "
        "Gaussian at the equivalent Gaussian-DP µ, and Laplace noise added in the ambient "
        "Euclidean space."
    )
    # The data and the budget on the left, the picture beside them (in view while they
    # change). The picture is drawn first, from the settings the widgets will show (read from
    # the session state): the browser then draws it before the widgets on the left (each
    # input widget drawn before a chart delays it by 10-20 ms). An upload's data come from its
    # widgets: then the left column is drawn first.
    left, right = st.columns([2, 3], gap="large")
    with right:
        early = figure_data(settings_state)
        if early is not None:
            preview(early)  # a visit's first run ends at its chart (ui.first_paint)
    with left:
        loaded = data_and_budget(settings_state)
    if loaded is None:
        if early is None:  # (a figure drawn first came from the same settings: never here)
            right.info("The private means are drawn here once the data on the left can be "
                       "used.", icon=":material/insights:")
        return settings_state.finish()
    manifold_key, manifold, source, epsilon, (y, center, center_text, radius, meta) = loaded
    n = y.shape[0]
    info = L.frechet_summary(manifold, n, radius, center)
    with left:
        data_numbers(manifold_key, manifold, source, meta, y, radius, info, epsilon)
    if early is None:
        with right:
            preview(loaded)

    notes, assumptions = st.columns([1, 1])
    with notes:
        formula_notes("fm_notes", teaching_notes)
    with assumptions:
        assumptions_box(manifold_key, radius, center_text, info, source, meta.get("person"))

    request = release_request(manifold, n, radius, center, epsilon)
    if request is not None:
        release_section(request, y, meta["fingerprint"], group_ok=meta.get("group_ok", True))
        export_section(request, source, meta, y)
    studies(manifold_key, manifold, radius, float(epsilon))
    # Settings, never data, go to the URL; also kept in the session for page switches.
    settings_state.finish()


main()
