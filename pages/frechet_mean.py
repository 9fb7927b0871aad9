"""Page: private Fréchet means on the sphere S² and on SPD(k), four mechanisms compared.

Widgets -> :mod:`ui.logic.frechet_mean` (cached simulations) and :mod:`dpcore.release` (the one
private release, on a button) -> figures from :mod:`ui.figures`.
"""

from __future__ import annotations

import hashlib
import json

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
from dpcore.visualization.subsample import subsample_for_drawing, subsample_note
from ui import figures
from ui import manifolds as M
from ui.caps import CAPS, upload_max_bytes
from ui.figures import show_figure
from ui.logic import common as C
from ui.logic import export as X
from ui.logic import frechet_mean as L
from ui.logic import privacy_text as T
from ui.logic import regression_data as D
from ui.progress import cancelled_notice, show_work
from ui.session import (
    ValuesOnly,
    draw_release,
    export_buttons,
    formula_notes,
    group,
    open_whole,
    opening_run,
    planned_cost,
    query_value,
    release_button,
    release_error,
    rows_per_person,
    session_memo,
    set_page_rows,
    show_cost,
    starting_value,
    write_query,
)

PAGE = "Fréchet mean"
#: Session-state store of the work done on an uploaded file (never st.cache_data).
UPLOAD_MEMO = "fm_upload_memo"
#: ... of the scanned files (one entry per file content) and of their mapped columns (one per
#: file and mapping): apart, so that the previews and means of the store above never push a
#: file out and a widget change never reads it again.
SCAN_MEMO, READ_MEMO = "fm_upload_scans", "fm_upload_reads"
EPS_OPTIONS = [0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0]
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


def assumptions_box(manifold_key, radius, center_text, info, source, person=None):
    rows = [
        ("Data ball", f"every point lies within geodesic distance r = {radius:.3g} of the "
                      f"public centre m₀ = {center_text}; "
                      + (f"r < r* = {info['r_star']:.3g} (paper 001 Thm 2)"
                         if info["delta"] is not None else
                         f"r ≥ r* = {info['r_star']:.3g}: only the ambient mechanism applies")
                      + ". Strict mode projects points outside onto the ball."),
        ("Sensitivity", f"Δ = {info['delta']:.3g} for the mean (curvature bound κ = "
                        f"{info['kappa']:g}, h = {info['h']:.3f}); the KNG gradient has "
                        f"Δ∇ = {info['delta_gradient']:.3g}." if info["delta"] is not None else
                        f"r ≥ r*: no bound for the intrinsic mechanisms; the ambient mechanism's "
                        f"is 2 r_E / n = {info['delta_ambient']:.3g}."),
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
        rows.append(("Uploaded data", "kept in memory only, never written to disk or logged; "
                                      "parsed once per file content and its chosen columns "
                                      "read once per mapping (this session's memory, keyed on "
                                      "the file's SHA-256, which only the same file can "
                                      "reach)."))
    k = rows_per_person()
    if k > 1:
        why = (f"the largest group of the person column '{person}', confirmed public"
               if person else "the sidebar's setting")
        rows.append(("Unit of privacy", f"one person, with up to {k} rows ({why}): each "
                                        f"guarantee per row holds per person at {k} times its "
                                        "ε (group privacy), as the cost and the ledger entry "
                                        "count it."))
    with st.container(border=True):
        st.markdown("**Assumptions in force**")
        st.markdown(C.assumptions_markdown(rows))


def parse_upload(digest, raw, manifold_key, max_bytes):
    """An upload's points and note, parsed once per file content (``digest``: its SHA-256) and
    kept in this session's memory (:func:`ui.session.session_memo`), never in a cache shared
    by sessions nor on disk, so a widget change never re-parses the file."""
    return session_memo(UPLOAD_MEMO, ("parse", digest, manifold_key),
                        lambda: L.read_upload(raw, M.make_manifold(manifold_key),
                                              max_bytes=max_bytes),
                        keep_errors=(DataValidationError,), spinner="Reading the file …")


def per_data(fingerprint, key, make, cached):
    """``cached()`` (through ``st.cache_data``) for synthetic and preset data; for an upload
    (fingerprint ``upl-...``), ``make()`` once per session and ``key``, in this session's
    memory only."""
    if fingerprint.startswith("upl-"):
        return session_memo(UPLOAD_MEMO, (fingerprint, *key), make)
    return cached()


@st.cache_data(show_spinner=False, max_entries=2)
def emg_points():
    """The EMG preset's covariance matrices (read once from geomstats' shipped file)."""
    return L.emg_points()


@st.cache_data(show_spinner=False, max_entries=8)
def nonprivate_mean(_manifold, name, fingerprint, _y, center, radius):
    """The non-private mean of the projected data (the mechanisms' centre), once per data
    (``fingerprint`` names the data)."""
    return frechet_mean(_manifold, project_to_ball(_manifold, _y, center, radius))


@st.cache_data(show_spinner=False, max_entries=16)
def release_distances(_manifold, name, fingerprint, value, _y, center, radius):
    return L.release_distances(_manifold, value, _y, center, radius)


#: Presets: source -> (public radius, public centre as typed).
PRESET_BOUNDS = {"emg": (L.EMG_PRESET["radius"], f"{L.EMG_PRESET['scale']:g}"),
                 "cities": (L.CITIES_PRESET["radius"], L.CITIES_PRESET["center"])}


def read_digest(sha, mapping):
    """Names the points read from a file (its SHA-256 ``sha``) through a mapping (the person
    column aside: it does not change the points)."""
    point = repr((mapping.layout, mapping.columns)).encode()
    return f"{sha[:16]}-{hashlib.sha256(point).hexdigest()[:8]}"


def column_mapping(upload, manifold, tag):
    """Preview and role widgets of a scanned upload; returns a
    :class:`ui.logic.frechet_mean.PointMapping`, or None (with a message) while a column of the
    point is not chosen."""
    profiles = upload.profiles
    with st.expander(f"Preview: first {len(upload.preview)} of {upload.n_rows:,} rows, column "
                     "types and empty cells", expanded=True):
        st.dataframe(upload.preview, width="stretch")
        st.dataframe(D.profile_frame(profiles), hide_index=True, width="stretch",
                     column_config={"note": st.column_config.TextColumn("note",
                                                                        width="large")})
    ids = {p.name: p.id_like for p in profiles if p.id_like}

    def label(name):
        return f"{name} (identifier?)" if name in ids else name

    layouts = L.point_layouts(manifold)
    detected = L.default_layout(manifold, profiles)
    st.markdown("**Columns**: choose how the file writes a point and which columns hold it, "
                "and, if one person contributes several rows, the column naming the person; "
                "other columns are ignored.")
    keys = list(layouts)
    layout = keys[0] if len(keys) == 1 else st.radio(
        "Each point is written as", keys, index=keys.index(detected), horizontal=True,
        format_func=lambda k: layouts[k].label, key=f"fm_map_layout_{tag}")
    defaults = L.default_point_columns(manifold, layout, profiles)
    st.caption(L.recognised_text(manifold, layout, defaults, profiles))
    slots, options = layouts[layout].slot_labels, L.slot_options(profiles, layouts[layout])
    chosen = []
    for start in range(0, len(slots), 6):  # at most six choices a line (SPD(3): 9 entries)
        cols = st.columns(min(6, len(slots)))
        for j, col in zip(range(start, min(start + 6, len(slots))), cols, strict=False):
            chosen.append(col.selectbox(
                slots[j], options, format_func=label, placeholder="Choose a column",
                index=options.index(defaults[j]) if defaults[j] in options else None,
                key=f"fm_map_{tag}_{layout}_{j}"))
    others = [p.name for p in profiles if p.name not in chosen]
    person = st.selectbox(
        "Person (group) column (optional)", [None, *others], key=f"fm_map_person_{tag}",
        format_func=lambda c: "(none)" if c is None else c,
        help="A column naming who each row belongs to (a patient, an animal, a household); "
             "(none): one row per person. The largest number of rows one person has becomes "
             "the rows per person of the privacy guarantee on this page.")
    hint = L.person_hint(profiles, exclude=chosen)
    if hint and person is None:
        st.caption(f"Column {', '.join(repr(c) for c in hint)} may name people: if one person "
                   "has several rows, choose it as the person column (group privacy).")
    if None in chosen:
        level, text = L.incomplete_mapping_text(manifold, layout, chosen, profiles)
        (st.error if level == "error" else st.info)(text)
        return None
    mapping = L.PointMapping(layout, tuple(chosen), person)
    ignored = [c for c in others if c != person]
    if ignored:
        st.caption("Columns ignored: " + ", ".join(
            f"'{c}'" + (" (looks like an identifier)" if c in ids else "") for c in ignored))
    return mapping


def uploaded_points(raw, digest, manifold_key, manifold):
    """An uploaded file (its SHA-256 ``digest``): scanned once per file content, previewed,
    mapped, and its chosen columns read once per mapping (this session's memory only, never
    st.cache_data). Returns a :class:`ui.logic.frechet_mean.MeanUpload`, or None with a
    message naming the row and column of what is wrong."""
    try:
        upload = session_memo(SCAN_MEMO, digest,
                              lambda: L.scan_upload(raw, max_bytes=upload_max_bytes()),
                              keep_errors=(DataValidationError,), spinner="Reading the file …",
                              max_entries=2)
    except DataValidationError as exc:
        st.error(f"The file could not be used.\n\n{exc}")
        return None
    mapping = column_mapping(upload, manifold, f"{manifold_key}_{digest[:12]}")
    if mapping is None:
        return None
    try:
        read = session_memo(READ_MEMO, (digest, manifold_key, mapping),
                            lambda: L.read_mapped(upload, manifold, mapping),
                            keep_errors=(DataValidationError,),
                            spinner="Reading the chosen columns …", max_entries=4)
    except DataValidationError as exc:
        message = str(exc).replace(
            "Pass renormalize=True to project every point onto the sphere.",
            "Normalize each row to unit length before uploading.")
        legend = L.mapping_legend(manifold, mapping)
        st.error(f"The file could not be used.\n\n{message}" + (f"\n\n{legend}" if legend
                                                                   else ""))
        return None
    legend = L.mapping_legend(manifold, mapping)
    st.caption(read.note + (f" {legend}" if legend else ""))
    return read


def person_rows(read, tag):
    """Rows per person from the person column (group privacy), for this page only
    (:func:`ui.session.set_page_rows`): the cost, the ledger entry and the ε readings of this
    page count per person, with the sidebar saying why. Returns False while the user has not
    confirmed that the largest group size is public."""
    if read.groups is None:
        return True
    k, person = read.rows_per_person, read.mapping.person
    set_page_rows(k, f"This page counts {k} rows per person: the largest group of its person "
                     f"column '{person}'. The field above applies on the other pages.")
    st.info(L.person_rows_text(k, person, read.group_sizes), icon=":material/group:")
    return st.checkbox(
        f"I confirm that the largest group size ({k} rows per person) is public information",
        key=f"fm_group_ok_{tag}_{person}",
        help="The group sizes come from the data. Taking their maximum as the rows per person "
             "treats it as public: confirm only if it is (e.g. a study design of at most "
             f"{k} measurements per person), or set a public bound in the sidebar instead (with "
             "no person column).")


def load_data(manifold_key, manifold, source, ui=st):
    """Widgets for the data; returns (y, center, center_text, radius, meta) or None.

    ``ui``: ``st``, or in the page's opening run :class:`ui.session.ValuesOnly` (the widgets'
    values are read from the session state, :func:`ui.session.starting_value`)."""
    r_lo, r_hi = L.FRECHET_MANIFOLDS[manifold_key]
    r_default = PRESET_BOUNDS.get(source, (M.spec(manifold_key).radius,))[0]
    # The URL's radius belongs to the URL's manifold: after switching manifold, start from the
    # new one's default (a sphere radius of 0.39 is no SPD radius).
    # So does a preset's: its radius comes with its centre.
    url_manifold = query_value("fm_manifold", "sphere", M.canonical)
    url_source = query_value("fm_source", "synthetic", str)
    same = url_source == source or (url_source not in PRESET_BOUNDS
                                    and source not in PRESET_BOUNDS)
    r_start = (query_value("fm_r", r_default, float)
               if url_manifold == manifold_key and same else r_default)
    radius_key = (f"fm_radius_{M.full_name(manifold_key)}"
                  + (f"_{source}" if source in PRESET_BOUNDS else ""))
    starting_value(radius_key, float(np.clip(r_start, r_lo, r_hi)))
    radius = ui.slider(
        "Public radius r of the data ball", min_value=float(r_lo), max_value=float(r_hi),
        step=0.01, key=radius_key, help=L.radius_help(manifold),
    )
    meta = {"radius": radius}
    if isinstance(manifold, Sphere):
        if source == "cities":
            starting_value("fm_center_cities", PRESET_BOUNDS["cities"][1])
            center_text = ui.text_input(
                "Public centre m₀ (latitude, longitude in degrees)", key="fm_center_cities")
        else:
            starting_value("fm_center", "0, 0, 1")
            center_text = ui.text_input(
                "Public centre m₀ (x₁, x₂, x₃, or latitude, longitude)", key="fm_center",
                disabled=source == "synthetic")
        try:
            center = L.parse_center_text(center_text)
        except ValueError as exc:
            ui.error(str(exc))
            return None
    else:
        k = manifold.k
        center_key = f"fm_center_spd{k}_{'emg' if source == 'emg' else 'own'}"
        starting_value(center_key, PRESET_BOUNDS.get(source, (None, "1"))[1])
        text = ui.text_input(
            "Public centre m₀ (a typical variance s for s·I, or "
            + ("s11, s12, s22)" if k == 2 else "the upper triangle s11, s12, …)"),
            key=center_key, disabled=source == "synthetic",
            help="From domain knowledge, never from the data: the units and a typical scale of "
                 "your matrices (e.g. a covariance of signals with variance about 10 in their "
                 "units: type 10). The ball is centred there.")
        try:
            center = L.parse_spd_center_text(text, k)
        except ValueError as exc:
            ui.error(str(exc))
            return None
        center_text = L.spd_center_text(center)
    if source == "synthetic":
        starting_value("fm_n", int(np.clip(query_value("fm_n", 50, int), 10, CAPS["fm_max_n"])))
        starting_value("fm_seed", int(np.clip(query_value("fm_seed", 0, int), 0, 10**6)))
        c1, c2 = ui.columns(2)
        n = c1.slider("Sample size n", 10, CAPS["fm_max_n"], key="fm_n")
        seed = c2.number_input("Seed of the synthetic data", 0, 10**6, key="fm_seed")
        try:
            y = synthetic_data(manifold_key, int(n), float(radius), int(seed))
        except (RuntimeError, ValueError) as exc:
            ui.error(f"Could not generate the data: {exc}")
            return None
        meta.update(n=int(n), seed=int(seed), fingerprint=f"syn-{manifold_key}-{n}-{radius}-{seed}")
        center = default_center(manifold)
        center_text = ("the north pole (0, 0, 1)" if isinstance(manifold, Sphere) else
                       L.spd_center_text(center))
        return y, center, center_text, radius, meta
    if source == "emg":
        ui.caption(L.EMG_ATTRIBUTION)
        ui.caption(L.EMG_PRIVACY_UNIT)
        ui.caption(L.EMG_BOUNDS_NOTE)
        y = emg_points()
        raw = None
        digest = "emg-" + "-".join(L.EMG_PRESET["channels"]) + f"-{L.EMG_PRESET['window']}"
    elif source == "cities":
        ui.caption(L.CITIES_ATTRIBUTION)
        ui.caption(L.CITIES_BOUNDS_NOTE)
        raw = L.cities_bytes()
    else:
        upload = ui.file_uploader(
            "Upload a CSV file (a header row naming the columns, one point per row; choose "
            "the point's columns below)", type=["csv", "txt"], key="fm_upload",
        )
        ui.caption(f"Expected header: `{', '.join(manifold.csv_columns())}`"
                   + (" or latitude and longitude in degrees" if isinstance(manifold, Sphere)
                      else " or the full matrix")
                   + "; other names are mapped below and other columns (an id, a name, a "
                     "date) are ignored. The file stays in memory and is never stored.")
        if upload is None:
            ui.info("Upload a file to continue, or switch the data to *Synthetic*.")
            return None
        raw = upload.getvalue()
        sha = hashlib.sha256(raw).hexdigest()
        read = uploaded_points(raw, sha, manifold_key, manifold)
        if read is None:
            return None
        y, raw, digest = read.y, None, read_digest(sha, read.mapping)
        meta.update(person=read.mapping.person, mapping=read.mapping,
                    group_ok=person_rows(read, f"{manifold_key}_{sha[:12]}"))
    if raw is not None:
        digest = hashlib.sha256(raw).hexdigest()
        try:
            y, note = parse_upload(digest, raw, manifold_key, upload_max_bytes())
            if note:
                ui.caption(note)
        except DataValidationError as exc:
            message = str(exc).replace(
                "Pass renormalize=True to project every point onto the sphere.",
                "Normalize each row to unit length before uploading.")
            ui.error(f"The file could not be used.\n\n{message}")
            return None
        digest = digest[:16]
    if y.shape[0] < 2:
        ui.error("The file needs at least 2 data rows.")
        return None
    preview = L.ball_preview(manifold, y, center, radius)
    (ui.warning if preview["warn"] else ui.caption)(
        L.ball_preview_text(preview, y.shape[0], radius, file_rows=source == "upload"))
    meta.update(n=int(y.shape[0]), fingerprint=f"upl-{manifold_key}-{digest}-{radius}-"
                                                 f"{center_text}")
    return y, center, center_text, radius, meta


@st.cache_data(show_spinner=False, max_entries=64)
def cached_prediction(_manifold, name, n, epsilon, radius, center, mech, seed=0):
    return L.predicted_error(_manifold, n, epsilon, radius, center, mech, seed=seed)


@st.cache_data(show_spinner=False, max_entries=64)
def cached_smallest(_manifold, name, n, radius, center, mech, target, seed=0):
    return L.smallest_epsilon_text(_manifold, n, radius, center, mech, target, seed=seed)


def export_section(manifold, source, meta, center, radius, epsilon, y=None):
    """The scenario as a script or notebook that reproduces it with dpcore alone."""
    mech = st.session_state.get("fm_mech", "laplace")
    data_file = "your_data.csv"
    if source == "emg":  # public data: the script reads the preset's matrices from a CSV
        source, data_file = "upload", "emg_covariances_c0_c1.csv"
    with st.expander("Take it with you: this scenario as a Python script or notebook"):
        st.caption("The script holds only public settings: synthetic data are regenerated from "
                   "their seed, an uploaded file is read from a path you fill in (it is never "
                   "embedded). Its release draws from OS entropy; set RELEASE_SEED for a "
                   "reproducible demo.")
        mapping = meta.get("mapping")
        mapped = {}
        if mapping is not None:
            st.caption("The script reads your file as this page does, through the column "
                       "mapping chosen above (other columns ignored): put it next to the "
                       "script as your_data.csv.")
            mapped = {"columns": L.mapped_columns(manifold, mapping), "person": mapping.person}
        script = X.frechet_script(manifold, source=source, n=meta.get("n"),
                                  seed=meta.get("seed"), radius=radius, center=center,
                                  epsilon=epsilon, mechanism=mech, data_file=data_file,
                                  **mapped)
        if data_file != "your_data.csv":
            st.caption(f"The EMG preset's {meta.get('n')} matrices (public data, geomstats, "
                       f"MIT) go in {data_file}, next to the script:")
            st.download_button("Download the EMG matrices (.csv)", to_csv(manifold, y),
                               file_name=data_file, mime="text/csv", key="fm_export_emg",
                               on_click="ignore")
        export_buttons(script, "frechet_mean", "fm")


def release_section(manifold, y, center, radius, epsilon, fingerprint, mean, group_ok=True):
    st.subheader("Release one private mean")
    options = list(L.available_mechanisms(manifold, radius))
    if st.session_state.get("fm_mech") not in (None, *options):
        del st.session_state["fm_mech"]  # r grew past r*: only the ambient mechanism is left
    mech = st.radio("Mechanism", options,
                    index=options.index(query_value("fm_mech", options[0], str,
                                                    choices=options)),
                    format_func=V.MECHANISM_LABELS.get, horizontal=True, key="fm_mech")
    note = {"gaussian": "The Gaussian release first calibrates σ by Monte Carlo: allow a few "
                        "seconds (longer on SPD).",
            "kng": "KNG is drawn exactly by rejection sampling where the library can (its run "
                   "time then depends on the data; the estimate below is from public inputs "
                   "only), else by Metropolis–Hastings chains."}.get(mech)
    st.caption("A release happens only when you press the button; it is drawn with OS entropy "
               "and recorded in the privacy ledger in the sidebar. " + (note or ""))
    pred = cached_prediction(manifold, repr(manifold), y.shape[0], epsilon, radius, center,
                             mech)
    st.info(L.predicted_error_text(pred, epsilon, mech), icon=":material/target:")
    if pred is not None:
        with st.expander("Smallest ε for a target error"):
            # the median shrinks like 1/n: a 50,000-row file predicts errors below 1e-4
            target = st.number_input("Largest acceptable median error (distance)", 1e-9, 10.0,
                                     value=float(np.clip(float(f"{pred['median']:.2g}"), 1e-9,
                                                         10.0)),
                                     format="%.4g", key="fm_target")
            st.markdown(cached_smallest(manifold, repr(manifold), y.shape[0], radius, center,
                                        mech, target))
    key = f"{fingerprint}-{epsilon}-{mech}"
    cost = planned_cost(**L.planned_release(manifold, epsilon, mech))
    show_cost(cost)
    work, work_ok = L.work_estimate(manifold, y.shape[0], epsilon, radius, center, mech)
    show_work(work, work_ok,
              on_page="lower n (or use fewer rows), lower ε, or choose another mechanism.")
    cancelled_notice("fm_run", "The release")
    release_error("fm_release")
    if not group_ok:
        st.info("Confirm above that the largest group size is public (or choose no person "
                "column) to release.", icon=":material/group:")
    if release_button("fm_release", cost, disabled=not (work_ok and group_ok)):
        draw_release(PAGE, "fm_release", "fm_run", "Drawing one private mean", work.seconds,
                     lambda bar: private_frechet_mean(manifold, y, epsilon=epsilon,
                                                      mechanism=mech, radius=radius,
                                                      center=center, mode="strict",
                                                      progress=bar),
                     LAST, key=key, rows=rows_per_person())
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
    # page's first plot); its value is read here.
    n_draws = starting_value("fm_draws", int(np.clip(query_value("fm_draws", 50, int), 10,
                                                     CAPS["cloud_draws"])))
    write_query(fm_draws=n_draws)

    def draws_slider():
        st.slider("Private means drawn per mechanism", 10, CAPS["cloud_draws"], step=10,
                  key="fm_draws")
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
                   lambda: L.frechet_mechanism_draws(*args, **draw_kw),
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
        if tab_sphere.open:
            with tab_sphere:
                fig = figures.sphere_points_figure(
                    clouds, data=shown, nonprivate_point=res["mean"],
                    true_point=center if is_synthetic else None, true_label="Ball centre m₀",
                    title=f"Private means on S² at ε = {epsilon:g}",
                    subtitle="Rotate and zoom with the mouse; ambient draws projected onto the "
                             "sphere")
                show_figure(st, fig, width="stretch", key="fm_cloud")
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
        if tab_cone.open:
            with tab_cone:
                show_figure(st, V.spd_mean_clouds_cone_figure(
                    shown, res["mean"], clouds,
                    title=f"Private means in the SPD(2) cone at ε = {epsilon:g}"),
                    width="stretch", key="fm_cone")
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


@st.fragment
def simulation_section(manifold_key, radius, epsilon):
    st.markdown("#### Error against the sample size (simulation on synthetic data)")
    info = L.frechet_summary(M.make_manifold(manifold_key), 10, radius)
    if info["delta"] is None:
        st.info(f"The simulation compares the four mechanisms, which needs r < r* = "
                f"{info['r_star']:.3g}; lower the radius to see it.")
        return
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
    write_query(fm_ns=",".join(map(str, ns)), fm_reps=reps, fm_kng=include_kng,
                fm_metric=metric)
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
    show_figure(st, V.frechet_error_figure(frame, metric, epsilon=epsilon), width="stretch",
                    key="fm_sim")
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


def sensitivity_section(manifold_key, radius):
    st.markdown("#### Sensitivity: empirical vs theoretical bound")
    info = L.frechet_summary(M.make_manifold(manifold_key), 10, radius)
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


def data_and_budget(ui):
    """The manifold, the data and ε (``ui``: ``st`` or :class:`ui.session.ValuesOnly`).

    Returns (manifold key, manifold, source, ε, URL settings, :func:`load_data`'s tuple), or
    None when the data cannot be used (the URL is written either way)."""
    with ui.container(border=True):
        ui.subheader("Data and budget")
        keys = list(L.FRECHET_MANIFOLDS)
        # M.canonical reads aliases from the URL: "spd2" (an older link) is "spd".
        starting_value("fm_manifold", query_value("fm_manifold", "sphere", M.canonical,
                                                  choices=keys), keys)
        manifold_key = ui.selectbox("Manifold", keys, format_func=M.choice_label,
                                    key="fm_manifold")
        sources = ["synthetic", "upload"] + {"sphere": ["cities"], "spd": ["emg"]}.get(
            manifold_key, [])
        starting_value("fm_source", query_value("fm_source", "synthetic", str,
                                                choices=sources), sources)
        source = ui.radio("Data", sources,
                          format_func={"synthetic": "Synthetic (paper 001)",
                                       "upload": "Upload CSV",
                                       "cities": "Preset: world cities",
                                       "emg": "Preset: EMG covariances"}.get,
                          horizontal=True, key="fm_source")
        starting_value("fm_eps", query_value("fm_eps", 1.0, float, choices=EPS_OPTIONS),
                       EPS_OPTIONS)
        epsilon = ui.select_slider("Privacy budget ε (per release)", EPS_OPTIONS, key="fm_eps")
        reading = ui.empty()  # after the data: a person column sets the rows per person
        manifold = M.make_manifold(manifold_key)
        loaded = load_data(manifold_key, manifold, source, ui)
        reading.caption(T.epsilon_reading(epsilon, rows=rows_per_person()))
    settings = {"fm_manifold": manifold_key, "fm_source": source, "fm_eps": epsilon}
    if loaded is None:
        write_query(**settings)
        return None
    return manifold_key, manifold, source, epsilon, settings, loaded


def data_numbers(ui, manifold_key, manifold, source, meta, y, radius, info, epsilon):
    """n, r, the sensitivities and µ(ε) of the data as set; the synthetic data's download."""
    n = y.shape[0]
    cols = ui.columns(2)
    cols[0].metric("Sample size n", n)
    cols[1].metric("Radius r", f"{radius:.3g}",
                   help=f"Laplace, KNG and Gaussian need r < r* = {info['r_star']:.3g}")
    cols = ui.columns(2)
    if info["delta"] is None:
        cols[0].metric("Sensitivity Δ of the mean", "none",
                       help="r ≥ r*: paper 001 Thm 2 bounds it only for r < r*.")
        cols[1].metric("Ambient Δ = 2r_E/n", f"{info['delta_ambient']:.3g}")
    else:
        cols[0].metric("Sensitivity Δ of the mean", f"{info['delta']:.3g}")
        cols[1].metric("KNG gradient Δ∇", f"{info['delta_gradient']:.3g}")
    cols = ui.columns(2)
    cols[0].metric("Equivalent GDP µ(ε)", f"{eps_to_mu(epsilon):.3g}")
    if info["delta"] is None:
        ui.info(f"r = {radius:.3g} is at least r* = {info['r_star']:.3g}: the intrinsic "
                "mechanisms (Laplace, KNG, Gaussian) have no sensitivity bound here (paper 001 "
                "Thm 2), so only the ambient Laplace mechanism is offered. Its sensitivity "
                "2 r_E / n holds for any cap, up to the whole sphere.", icon=":material/info:")
    if source == "synthetic":
        cols[1].download_button(
            "Download data", to_csv(manifold, y),
            file_name=f"frechet_mean_{M.full_name(manifold_key)}_n{n}_seed{meta['seed']}.csv",
            mime="text/csv", key="fm_download_data", on_click="ignore")


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
    # change). The page's first run in a session reads the settings without drawing them
    # (ui.session.ValuesOnly) and ends at the picture; the next run draws the rest.
    left, right = st.columns([2, 3], gap="large")
    ui = ValuesOnly() if opening_run() else st
    with left:
        loaded = data_and_budget(ui)
    if loaded is None:
        open_whole()
        right.info("The private means are drawn here once the data on the left can be used.",
                   icon=":material/insights:")
        return
    manifold_key, manifold, source, epsilon, settings, (y, center, center_text, radius,
                                                         meta) = loaded
    settings["fm_r"] = round(radius, 4)
    if source == "synthetic":
        settings.update(fm_n=meta["n"], fm_seed=meta["seed"])
    n = y.shape[0]
    info = L.frechet_summary(manifold, n, radius, center)
    mean = per_data(meta["fingerprint"], ("mean",),
                    lambda: frechet_mean(manifold, project_to_ball(manifold, y, center, radius)),
                    lambda: nonprivate_mean(manifold, repr(manifold), meta["fingerprint"], y,
                                            center, radius))
    with left:
        data_numbers(ui, manifold_key, manifold, source, meta, y, radius, info, epsilon)

    # The picture (a fragment: its own widgets rerun only it, and write their URL keys).
    with right:
        preview_section(manifold_key, manifold, y, center, radius, float(epsilon),
                        is_synthetic=source == "synthetic", fingerprint=meta["fingerprint"])

    notes, assumptions = st.columns([1, 1])
    with notes:
        formula_notes("fm_notes", teaching_notes)
    with assumptions:
        assumptions_box(manifold_key, radius, center_text, info, source, meta.get("person"))

    release_section(manifold, y, center, radius, float(epsilon), meta["fingerprint"], mean,
                    group_ok=meta.get("group_ok", True))
    export_section(manifold, source, meta, center, radius, float(epsilon), y)
    settings["fm_mech"] = st.session_state.get("fm_mech", "laplace")
    write_query(**settings)
    # Stateful tabs: only the open study is computed and drawn (first paint stays light).
    st.subheader("Studies on synthetic data")
    tab_sim, tab_sens = st.tabs(["Error against the sample size",
                                 "Sensitivity: empirical vs bound"], key="fm_study_tab",
                                on_change="rerun")
    if tab_sim.open is not False:
        with tab_sim:
            simulation_section(manifold_key, radius, float(epsilon))
    if tab_sens.open:
        with tab_sens:
            sensitivity_section(manifold_key, radius)


main()
