"""Page: the Euclidean case. Private linear regression of several responses on one covariate,
dpcore's private geodesic regression on R^d against ordinary least squares and diffprivlib.

Uploaded files (and the example's and preset's bytes) go through the shared upload-and-mapping
widget (:mod:`ui.upload`): a preview, the covariate, the responses and a person column, read by
the library's reader in this session's memory only (keyed on the file's SHA-256, so a widget
change does not read the file again), never written to disk, logged or put in a cache shared
between sessions. In strict mode the public bounds may
be estimated under DP with a small stated ε_b ("Estimate privately",
:mod:`ui.logic.private_bounds`), confirmed, capped and recorded in the ledger like a release.
A bounds field still holding its starting value taken from the data (an upload's range
rounded outward) is not public: the page warns next to it, the cost line states the label,
and the release passes it to the library as such (``bound_sources``), so it is labelled NOT
PRIVATE (bounds from the data) and listed in the ledger apart. The generated example's fields
start from its generator's design and the red-wine preset's from domain knowledge (public).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import warnings

import numpy as np
import streamlit as st

from dpcore import visualization as V
from dpcore.release import GeodesicRegressionRequest
from ui.caps import CAPS
from ui.figures import show_figure
from ui.first_paint import chart_first
from ui.logic import common as C
from ui.logic import export as X
from ui.logic import linear_regression as L
from ui.logic import privacy_text as T
from ui.logic import private_bounds as PB
from ui.logic.linear_regression_baseline import DiffprivlibRequest
from ui.logic.upload import PointMapping, UploadTarget
from ui.lr_bounds import ESTIMATES, bounds_widgets, estimate_section
from ui.release_panel import Companion, release_panel
from ui.session import (
    PageSettings,
    export_buttons,
    formula_notes,
    lazy_expander,
    rows_per_person,
    session_memo,
    set_page_rows,
)
from ui.upload import confirm_person_rows, file_bytes, map_file
from ui.widgets import request_key

PAGE = "Linear regression"
EPS_OPTIONS = [0.2, 0.5, 1.0, 2.0, 5.0, 10.0]
SOURCES = ["example", "upload", "wine"]
#: Most points drawn in the figure (a seeded subsample of larger data, with a note).
PLOT_POINTS = 5000
LAST = "lr_last_release"
#: The Release button (its confirmation: ``lr_release_confirm``) and its progress bar.
BUTTON, RUN = "lr_release", "lr_run"
#: Session-state key of the predictions made from bounds that hold the data's range.
PREDICTIONS = "lr_predictions"
HAS_DIFFPRIVLIB = importlib.util.find_spec("diffprivlib") is not None
settings_state = PageSettings("lr")
init = settings_state.init
#: What the page reads from a file (:mod:`ui.upload`): a covariate and Euclidean responses (one
#: by default: lines in R¹, R² and R³ are drawn by exact samplers, private with δ = 0; four or
#: more go to R^d, exact only at small n·ε).
TARGET = UploadTarget("euclidean", covariate=True, responses=1,
                      max_responses=CAPS["lr_responses"])
#: The red-wine preset's roles (its known columns).
WINE_ROLES = PointMapping("coordinates", tuple(L.WINE_MAPPING[1]), covariate=L.WINE_MAPPING[0])
#: Where a source's public bounds come from (shown with them).
PUBLIC_BOUNDS_TEXT = {
    "wine": "domain knowledge of the columns (units and ranges in assets/data/README.md)",
    "example": f"the example generator's design (dose drawn in [{L.EXAMPLE_DOSE[0]:g}, "
               f"{L.EXAMPLE_DOSE[1]:g}]; each response's line over that range ± "
               f"{L.EXAMPLE_NOISE_SDS:g} noise standard deviations), fixed before any data",
}


@st.cache_data(show_spinner=False, max_entries=32)
def example_frame(n, seed):
    """The generated example (deterministic, so cached)."""
    return L.example_regression_frame(n, seed=seed)


def teaching_notes():
    st.markdown(
        "On R^d a geodesic is a straight line, so geodesic regression of the responses on one "
        "covariate is ordinary least squares, one line per response. The private version "
        "(paper 002 / 000 §4) rescales x to [0, 1] with the public covariate range, clips each "
        "residual to norm τ and releases the intercept p and slope v by the K-norm gradient "
        "mechanism with budgets ε_p + ε_v = ε:"
    )
    st.latex(r"E(p, v) = \frac{1}{2n}\sum_{i=1}^n \|y_i - p - x_i v\|^2")
    st.latex(r"\tilde p \propto e^{-\|\nabla_p E\|/\sigma_p},\qquad "
             r"\tilde v \propto e^{-\|\nabla_v E\|/\sigma_v}")
    st.latex(r"\Delta_p = \Delta_v = \frac{2\tau}{n},\qquad \sigma = \frac{2\Delta}{\varepsilon}"
             r"\ \ (\text{rigorous rule})")
    st.markdown(
        "diffprivlib's `LinearRegression` (functional mechanism) gets the same total ε and the "
        "same public bounds."
    )


def assumptions_box(mode, cov_range, box, tau, tau_m, eps_p, eps_v, diffprivlib_on,
                    estimated=None, held=None):
    estimated = estimated or {}
    held = held or L.DataHeld()
    data = "taken from the data (the field's starting value), NOT public: the release is " \
           "labelled NOT PRIVATE"
    if mode == "strict":
        rows = [
            ("Covariate range", f"[{cov_range[0]:.4g}, {cov_range[1]:.4g}], "
                                + (data if held.covariate else "public") + "; x is "
                                "clipped to it and mapped to [0, 1]"
             + (f"; {estimated['covariate_range']}." if estimated.get("covariate_range")
                else ".")),
            ("Response box", "per response "
             + ", ".join(f"{name} ∈ [{lo:.4g}, {hi:.4g}]" for name, lo, hi in box)
             + (f" ({', '.join(map(repr, held.responses))} {data})" if held.responses
                else "")
             + f"; its circumscribed ball (radius τ_m = {tau_m:.4g}) holds the responses, "
               "which are projected onto it"
             + (f"; {estimated['tau_m']}." if estimated.get("tau_m") else ".")),
            ("Residual bound", f"τ = {tau:.4g}" + (f", {data}" if held.tau else "")
                               + "; residuals are clipped to this norm, so "
                               "Δ_p = Δ_v = 2τ/n holds for every data set."),
        ]
    else:
        rows = [("Paper mode", "bounds taken from the data: the output is NOT differentially "
                               "private, only a reproduction of the papers' choice.")]
    rows += [
        ("Budget", f"ε_p = {eps_p:.3g} (intercept) + ε_v = {eps_v:.3g} (slope) = "
                   f"{eps_p + eps_v:.3g} for dpcore"
                   + (f"; diffprivlib gets ε = {eps_p + eps_v:.3g} too (another release: the "
                      "ledger adds both)." if diffprivlib_on else ".")),
        ("Sampler", "strict mode uses the joint scheme; with clipping the gradient is no "
                    "longer affine, so KNG is drawn by exact rejection sampling (labelled "
                    "private): from a certified envelope for one to three responses, by "
                    "uniform proposals for more when their public worst-case cost or their "
                    "predicted cost (for data inside the bounds) allows; "
                    "otherwise by Metropolis–Hastings (labelled approximately private, δ not "
                    "certified)."),
        ("Uploaded data", "parsed and kept in this session's memory only, never written to "
                          "disk, logged or cached across sessions."),
    ]
    with st.container(border=True):
        st.markdown("**Assumptions in force**")
        st.markdown(C.assumptions_markdown(rows))


def source_settings():
    """Starting values of the data source's widgets; returns the source. Their values are read
    from the session (:func:`load_source`) and the widgets drawn after the figure
    (:func:`source_widgets`), except an upload's, whose file gives the data."""
    init("lr_src", "lr_src", "example", str, SOURCES)
    source = st.session_state["lr_src"]
    if source == "example":
        init("lr_n", "lr_n", 100, int, bounds=(20, 1000))
        init("lr_seed", "lr_seed", 0, int, bounds=(0, 10**6))
    return source


def source_widgets(source):
    """The data source's widgets: the source, the example's size and seed, the preset's note
    (an upload's field is drawn by :func:`load_source`)."""
    st.radio("Data", SOURCES,
             format_func={"example": "Generated example", "upload": "Upload CSV",
                          "wine": "Preset: red wine (UCI)"}.get,
             horizontal=True, key="lr_src")
    if source == "example":
        cols = st.columns(2)
        cols[0].slider("Rows of the generated example", 20, 1000, key="lr_n")
        cols[1].number_input("Seed", 0, 10**6, key="lr_seed")
    elif source == "wine":
        st.caption("**Preset: red wine (UCI)**, 1599 red *vinho verde* wines, 11 "
                   "physico-chemical measurements and a sensory quality score (column "
                   f"`class`). {L.WINE_CITATION} Shipped with the dashboard "
                   "(`assets/data/winequality-red.csv`). Its public bounds come from domain "
                   "knowledge of red wine, not from the file (`assets/data/README.md`).")


def load_source(source):
    """The data of ``source`` (the example's size and seed read from the session, where a
    user's change is before the run starts; an upload's field drawn here); returns (file
    bytes, fingerprint, example frame or None, query settings), or Nones when there is nothing
    to read."""
    if source == "example":
        n, seed = st.session_state["lr_n"], st.session_state["lr_seed"]
        frame = example_frame(int(n), int(seed))
        return (frame.to_csv(index=False).encode(), f"example-{n}-{seed}", frame,
                {"lr_n": n, "lr_seed": seed})
    if source == "wine":
        return L.wine_bytes(), "wine", None, {}
    data = file_bytes("lr", label="Upload a CSV file (header row, one observation per row)",
                      empty="Upload a CSV file, or switch to the generated example or the "
                            "red-wine preset.")
    if data is None:
        return None, None, None, {}
    return data, "upload-" + hashlib.sha256(data).hexdigest()[:16], None, {}


@st.cache_data(show_spinner=False, max_entries=64,
               hash_funcs={GeodesicRegressionRequest: request_key})
def cached_prediction(request, seed=0):
    """The predicted error (public inputs only, so safe to share between sessions)."""
    return L.predicted_error(request, seed=seed)


@st.cache_data(show_spinner=False, max_entries=64,
               hash_funcs={GeodesicRegressionRequest: request_key})
def cached_smallest(request, target, rows, seed=0):
    return L.smallest_epsilon_text(request, target, rows=rows, seed=seed)


def prediction(data_bounds, request):
    """:func:`cached_prediction`; while some field holds the data's range its τ and τ_m come
    from the data, so they stay in this session's memory instead of the shared cache."""
    if not data_bounds:
        return cached_prediction(request)
    return session_memo(PREDICTIONS, ("prediction", request),
                        lambda: L.predicted_error(request), max_entries=16)


def smallest(data_bounds, request, target, rows):
    """:func:`cached_smallest`, kept per session as :func:`prediction` is."""
    if not data_bounds:
        return cached_smallest(request, target, rows)
    return session_memo(PREDICTIONS, ("smallest", request, target, rows),
                        lambda: L.smallest_epsilon_text(request, target, rows=rows),
                        max_entries=16)


def accuracy_section(slot, request, bounds, mcmc):
    """The predicted error of the release ``request`` the button would make (None in paper
    mode), under the budget controls, and the smallest ε for a target error; returns the
    prediction."""
    data_bounds = bool(bounds.get("bound_sources"))
    epsilon = request.eps_p + request.eps_v
    with slot:
        pred = None
        if request.mode == "strict":
            with st.spinner("Predicting the error …"):
                pred = prediction(data_bounds, request)
        st.info(L.predicted_error_text(pred, epsilon, request.n, mcmc=mcmc,
                                       data_bounds=data_bounds),
                icon=":material/target:")
        # Built only while open: a closed expander's widget would still be built by the
        # browser before the page's first plot.
        box = (lazy_expander("Smallest ε for a target error", "lr_smallest_open",
                             keep=("lr_target",))
               if pred is not None and pred["available"] else None)
        if box is not None:
            with box:
                # Empty until a target is typed: the search costs about 15 predictions.
                st.session_state.setdefault("lr_target", None)
                target = st.number_input(
                    "Largest acceptable median excess mean squared error", 1e-12, 1e12,
                    placeholder=f"e.g. {pred['median']:.2g}", format="%.4g",
                    key="lr_target",
                    help="Mean squared error above least squares, all responses (the table's "
                         "last row), as predicted for the model data.")
                if target is not None:
                    with st.spinner("Searching ε …"):
                        st.markdown(smallest(data_bounds, request, float(target),
                                             rows_per_person()))
    return pred


def dpcore_lines(request, x, y, bounds, progress):
    """dpcore's release (``request.run``, under the panel's progress bar) and what the page
    keeps with it: its lines and the warnings its run raised. Bounds filled by a private
    estimate, or still holding the data's range, are stated so in its assumptions."""
    d = y.shape[1]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rel = request.run(x, y, progress=progress)
    rel = PB.annotate_release(rel, bounds.get("estimated") or {})
    rel = PB.annotate_release(rel, L.data_start_notes(bounds.get("bound_sources") or {}))
    lines = (np.asarray(rel.values["intercept"]).reshape(d),
             np.asarray(rel.values["coef"]).reshape(d))
    return rel, {"dpcore": lines, "warnings": sorted({str(w.message) for w in caught})}


def diffprivlib_companion(request, bounds, x, y):
    """diffprivlib's comparison at dpcore's ε with the same bounds: a second release on the
    same confirmation (:class:`ui.release_panel.Companion`), whose cost and ledger entry are
    its request's (:class:`ui.logic.linear_regression_baseline.DiffprivlibRequest`)."""
    baseline = DiffprivlibRequest.matching(request, bounds)
    return Companion("diffprivlib", baseline, lambda: baseline.fit_lines(x, y),
                     what="diffprivlib's comparison")


def export_section(source, settings, mapping, bounds, estimate, request):
    """The scenario as a script or notebook that reproduces dpcore's release (its request)
    with dpcore alone."""
    upload = st.session_state.get("lr_upload") if source == "upload" else None
    data_file = X.data_file_name(getattr(upload, "name", None))
    held = bounds.get("estimated") if estimate else None
    # Built only once opened: its caption and two download buttons (and the script and
    # notebook they hold) are not made on every run, nor drawn with the first plot.
    box = lazy_expander("Take it with you: this scenario as a Python script or notebook",
                        "lr_export_open")
    if box is None:
        return
    with box:
        st.caption("The script holds only public settings: the generated example is made again "
                   "from its seed, the red-wine preset is read from the dashboard's copy, an "
                   f"uploaded file is read as {data_file}, next to the script (it is never "
                   "embedded). Its release draws from OS entropy; set RELEASE_SEED for a "
                   "reproducible demo.")
        script = X.linear_regression_script(
            request.release_kwargs(), source=source, covariate=mapping.covariate,
            responses=mapping.columns, group=mapping.person,
            example=(settings.get("lr_n"), settings.get("lr_seed")), data_file=data_file,
            bounds_estimate=({"epsilon": estimate["epsilon"], "notes": held} if held
                             else None))
        export_buttons(script, "linear_regression", "lr")


def lines_figure(where, x, y, responses, lines, covariate, epsilon=None):
    """The data and the lines (least squares; the private ones at ``epsilon`` once released)
    in the container ``where``, the data subsampled for drawing."""
    shown = L.plot_subsample(x.size, PLOT_POINTS)
    show_figure(where, V.linear_regression_figure(
        x[shown], y[shown], responses, lines, x_name=covariate,
        title=("Least-squares lines (press Release for the private ones)" if epsilon is None
               else f"Least-squares and private lines at ε = {epsilon:g}")),
        width="stretch", key="lr_figure")
    if shown.size < x.size:
        where.caption(f"The figure draws {shown.size:,} of the {x.size:,} rows (a fixed random "
                      "subsample, so that the lines stay visible); the lines and the errors "
                      "below use every row.")


def data_section(settings, source, box):
    """The data and the file's mapping, in the bordered container ``box`` (under its source
    widgets): ``(read, source, fingerprint, example frame, rows per person confirmed)``, or
    None while there is nothing usable (said on the page)."""
    with box:
        data, fingerprint, example, extra = load_source(source)
        settings.update(extra)
        if data is None:
            return None
        read = map_file(data, "lr", TARGET, scope=fingerprint, preview_open=source == "upload",
                        defaults=WINE_ROLES if source == "wine" else None)
        if read is None:
            return None
        if read.dropped:
            st.warning(f"{read.dropped:,} of {read.n + read.dropped:,} rows dropped: they "
                       f"have an empty cell in a chosen column. {read.n:,} rows are used.",
                       icon=":material/filter_alt:")
        group_ok = confirm_person_rows(read, "lr", fingerprint)
    x = read.x
    if x.size < 3:
        st.error(f"The regression needs at least 3 rows; {x.size} are usable.")
        return None
    if np.ptp(x) == 0:
        st.error(f"Column '{read.mapping.covariate}' is constant ({x[0]:.6g} in every row): "
                 "no line can be fitted.")
        return None
    return read, source, fingerprint, example, group_ok


def budget_section(read, source, fingerprint, group_ok, settings):
    """The budget, its split, the mode, the diffprivlib comparison and the public bounds:
    ``(epsilon, share, mode, use diffprivlib, bounds, estimate, slot of the prediction)``
    (``bounds`` None on invalid input)."""
    x, y = read.x, read.y
    covariate, responses = read.mapping.covariate, list(read.mapping.columns)
    with st.container(border=True):
        cols = st.columns([2, 2, 2, 2])
        init("lr_eps", "lr_eps", 2.0, float, EPS_OPTIONS)
        epsilon = cols[0].select_slider("Total budget ε", EPS_OPTIONS, key="lr_eps")
        cols[0].caption(T.epsilon_reading(epsilon, rows=rows_per_person()))
        init("lr_split", "lr_split", 0.5, float, bounds=(0.1, 0.9))
        share = cols[1].slider("Share of ε for the intercept (ε_p / ε)", 0.1, 0.9, step=0.05,
                               key="lr_split")
        modes = ["strict", "paper"]
        init("lr_mode", "lr_mode", "strict", str, modes)
        mode = cols[2].radio("Bounds", modes,
            format_func={"strict": "Public (strict, private)",
                         "paper": "From the data (paper mode, not private)"}.get,
            key="lr_mode")
        # The comparison is a second release of the data (it costs ε too): opt-in.
        init("lr_dpl", "lr_dpl", False, bool)
        if not HAS_DIFFPRIVLIB:
            st.session_state["lr_dpl"] = False
        use_dpl = cols[3].checkbox("Compare with diffprivlib",
                                   disabled=not HAS_DIFFPRIVLIB, key="lr_dpl",
                                   help="diffprivlib's LinearRegression at the same ε: a second "
                                        "release of the data, which the ledger records too.")
        if not HAS_DIFFPRIVLIB:
            cols[3].info("diffprivlib is not installed (`pip install diffprivlib`, part of "
                         "the dashboard's extra), so its comparison is skipped.")
        accuracy_slot = st.container()  # the predicted error, under ε (filled below)
        scope = hashlib.sha256(json.dumps([fingerprint, covariate, responses]).encode()
                               ).hexdigest()[:12]
        public = {"wine": L.WINE_BOUNDS, "example": L.EXAMPLE_DESIGN}.get(source)
        estimate = st.session_state.get(ESTIMATES, {}).get(scope) if mode == "strict" else None
        bounds = bounds_widgets(x, y, responses, mode, scope, public=public,
                                covariate=covariate, estimate=estimate,
                                describe_public=PUBLIC_BOUNDS_TEXT.get(source))
        if mode == "strict":
            estimate_section(x, y, covariate, responses, scope, epsilon, public, group_ok)
    return epsilon, share, mode, bool(use_dpl), bounds, estimate, accuracy_slot


def release_section(read, request, epsilon, use_dpl, bounds, group_ok, accuracy_slot, key):
    """What dpcore's release will be (read from its request: plan, label, cost), the predicted
    error, the Release button and the release; returns (the current release or None, the
    prediction)."""
    x, y = read.x, read.y
    st.subheader("Private release")
    st.caption("Pressing *Release* draws the private lines with OS entropy and records them in "
               "the privacy ledger (dpcore and diffprivlib each cost ε). Nothing private is "
               "computed before that.")
    plan = request.plan()
    # MCMC in strict mode (whatever the label: bounds from the data make it NOT PRIVATE).
    mcmc = request.mode == "strict" and not plan["exact"]
    pred = accuracy_section(accuracy_slot, request, bounds, mcmc)
    mcmc_ok = True
    if mcmc:
        st.warning("dpcore's release will use **MCMC** (exact sampling could need up to "
                   f"{plan['work']:.3g} gradient terms at this n × ε, limit {plan['limit']:.3g}) "
                   "and be labelled **approximately private (MCMC; δ not certified)**. Lower ε "
                   "for an exact, private release.", icon=":material/warning:")
        mcmc_ok = st.checkbox("Draw by MCMC anyway (approximately private)", key="lr_mcmc_ok")
    if not group_ok:
        st.info("Confirm above that the largest group size is public before releasing.")
    # The shared panel: cost (dpcore's request's event, and the comparison's when chosen),
    # disclosure risk, estimated work, confirmation, the run with Cancel, the ledger.
    work, work_ok = L.release_work(request)
    current = release_panel(
        PAGE, request, lambda bar: dpcore_lines(request, x, y, bounds, bar), key="lr",
        signature=key, work=work, work_ok=work_ok, button=BUTTON, run=RUN, last=LAST,
        label="Sampling the private intercept and slope", disabled=not (mcmc_ok and group_ok),
        on_page="lower ε or the number of responses.", what="dpcore's release",
        companions=[diffprivlib_companion(request, bounds, x, y)] if use_dpl else ())
    last = st.session_state.get(LAST)
    if last and current is None:
        st.info("The data or settings changed since the last release (it stays in the "
                "ledger). Press *Release* again for the current settings.")
    return current, pred


def results_section(read, lines, current, pred, epsilon, figure_box, example):
    """The figure (into ``figure_box``, unless None: drawn already), the error table, the
    release's numbers and label and the downloads."""
    x, y = read.x, read.y
    covariate, responses = read.mapping.covariate, list(read.mapping.columns)
    if current is not None:
        lines["dpcore private geodesic regression"] = current["dpcore"]
        if "diffprivlib" in current:
            lines["diffprivlib LinearRegression"] = current["diffprivlib"]
        for message in current["warnings"]:
            st.warning(message)
        if "diffprivlib_error" in current:  # e.g. installed but broken (scikit-learn)
            st.info(f"diffprivlib's comparison could not be made ({current['diffprivlib_error']})"
                    ": it is skipped, and not recorded in the ledger.")
    if figure_box is not None:  # (None: drawn before the widgets, no release to show)
        lines_figure(figure_box, x, y, responses, lines, covariate,
                     epsilon=epsilon if current else None)
    preds = {name: a[None, :] + x[:, None] * b[None, :] for name, (a, b) in lines.items()}
    st.markdown("**Mean squared error per response** (on the data used for the fit)")
    table = L.mse_table(y, responses, preds)
    st.table(table.style.format({name: "{:.4g}" for name in preds}))
    if current is not None:
        release_numbers(current["release"], table, pred)
    if example is not None:
        st.download_button("Download data", example.to_csv(index=False),
                           file_name="linear_regression_example.csv", mime="text/csv",
                           key="lr_download_data", on_click="ignore")


def release_numbers(rel, table, pred):
    """dpcore's release: its guarantee, sensitivity, σ, sampler, observed against predicted
    error, label and download."""
    cols = st.columns(4)
    if rel.delta is None:
        cols[0].metric("Guarantee (dpcore)", f"ε = {rel.epsilon:.3g}",
                       help="MCMC release: no δ is certified (see its label).")
    else:
        cols[0].metric("Guarantee (dpcore)", f"ε = {rel.epsilon:.3g}, δ = {rel.delta:.2g}")
    cols[1].metric("Sensitivity Δ_p = Δ_v", f"{rel.sensitivity['footpoint']:.3g}")
    if "joint" in rel.sigma:
        cols[2].metric("σ (joint scheme)", f"{rel.sigma['joint']:.3g}")
    else:
        cols[2].metric("σ_p / σ_v", f"{rel.sigma['footpoint']:.3g} / "
                                    f"{rel.sigma['shooting_vector']:.3g}")
    # No release time: the run time of a strict release depends on the data.
    cols[3].metric("Sampler", "exact" if rel.private or rel.delta == 0 else "MCMC")
    if pred is not None and pred["available"]:
        st.caption(f"dpcore's mean squared error is above the least-squares one by "
                   f"{L.observed_excess(table, 'dpcore private geodesic regression'):.3g} "
                   f"(all responses); predicted before the release: median "
                   f"{pred['median']:.3g}, 95% radius {pred['q95']:.3g}.")
    if rel.private:
        st.success(f"Label: **{rel.label}**", icon=":material/lock:")
    else:
        st.warning(f"Label: **{rel.label}**", icon=":material/warning:")
    st.download_button("Download release", json.dumps(rel.to_dict(), indent=2),
                       file_name="linear_regression_release.json",
                       mime="application/json", key="lr_download_release", on_click="ignore")


def main():
    """The page: widgets -> dpcore's request (linear regression is geodesic regression on
    R^d) -> dpcore -> figures."""
    st.title("Linear regression")
    set_page_rows(None)  # set again below while a person column is mapped
    st.markdown(
        "The Euclidean special case of private geodesic regression: choose a covariate and "
        "one or more responses from a CSV file (or the generated example) and compare the "
        "non-private least-squares lines with private ones from **dpcore** and, when "
        "installed, **diffprivlib** at the same ε."
    )
    settings = {}
    source = source_settings()
    # The data box: its source widgets on top, drawn after the figure (an upload's at once:
    # the file gives the data), so that the browser gets the figure first.
    box = st.container(border=True)
    top = box.container()
    if source == "upload":
        with top:
            source_widgets(source)
    loaded = data_section(settings, source, box)
    if loaded is None:
        if source != "upload":
            with top:
                source_widgets(source)
        return settings_state.finish()
    read, source, fingerprint, example, group_ok = loaded
    a0, b0 = L.linear_fit(read.x, read.y)
    lines = {"Non-private least squares": (a0, b0)}
    # The figure under the data, then the budget, bounds and release. While no release is
    # kept (or made in this run) the figure holds the least-squares lines only, and is drawn
    # at once, before the widgets; otherwise after the release panel, which says whether the
    # kept release is the current one.
    figure_box = st.container()
    drawn = not (st.session_state.get(LAST) or st.session_state.get(f"{BUTTON}_confirmed"))
    if drawn:
        lines_figure(figure_box, read.x, read.y, list(read.mapping.columns), dict(lines),
                     read.mapping.covariate)
        chart_first()  # a visit's first run ends here (ui.first_paint)
    if source != "upload":
        with top:
            source_widgets(source)
    epsilon, share, mode, use_dpl, bounds, estimate, accuracy_slot = budget_section(
        read, source, fingerprint, group_ok, settings)
    eps_p, eps_v = share * epsilon, (1 - share) * epsilon
    if bounds is None:
        return settings_state.finish()
    # One request describes dpcore's release: plan, label, cost, run and exported script.
    request = GeodesicRegressionRequest.linear(
        read.y.shape[1], read.n, **L.release_settings(eps_p, eps_v, bounds, mode))
    covariate, responses = read.mapping.covariate, list(read.mapping.columns)
    key = json.dumps([fingerprint, covariate, responses, epsilon, share, mode, use_dpl,
                      bounds["covariate_range"], bounds["tau"],
                      [list(b) for b in bounds["box"]]], default=str)
    current, pred = release_section(read, request, epsilon, use_dpl, bounds, group_ok,
                                    accuracy_slot, key)
    results_section(read, lines, current, pred, epsilon, None if drawn else figure_box,
                    example)
    export_section(source, settings, read.mapping, bounds, estimate, request)

    notes, assumptions = st.columns(2)
    with notes:  # typeset (KaTeX) only once opened, as on the other pages
        formula_notes("lr_notes", teaching_notes)
    with assumptions:
        assumptions_box(mode, bounds["covariate_range"], bounds["box"], bounds["tau"] or 0.0,
                        bounds["tau_m"] or 0.0, eps_p, eps_v, use_dpl,
                        estimated=bounds.get("estimated"), held=bounds.get("held"))
    settings_state.finish()

main()
