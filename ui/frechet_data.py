"""The Fréchet mean page's data: the manifold, the source (synthetic, a preset or an upload
through the shared upload-and-mapping widget, :func:`ui.upload.upload_and_map`, with its person
column), the public ball and ε, read from widgets, and the numbers of the data as set. Uploaded
data stay in this session's memory (:func:`ui.session.session_memo`), never in
``st.cache_data`` nor on disk.

Every widget takes its starting value from the page's :class:`ui.session.PageSettings`
(``settings``): this session's value, else the copy kept for a page switch, else a shared
link's (first run only), else its default; the page calls ``settings.finish()``.
"""

from __future__ import annotations

import hashlib

import streamlit as st

from dpcore.data import DataValidationError, make_mean_data, to_csv
from dpcore.data.synthetic import default_center
from dpcore.manifolds import Sphere
from dpcore.privacy import eps_to_mu
from ui import manifolds as M
from ui.caps import CAPS, upload_max_bytes
from ui.logic import frechet_mean as L
from ui.logic import privacy_text as T
from ui.logic.upload import UploadTarget
from ui.session import rows_per_person, session_memo
from ui.upload import confirm_person_rows, upload_and_map
from ui.widgets import NUMBER_WIDTH, numbers_row

#: Session-state store of the work done on an uploaded file (never st.cache_data); the scans
#: and reads of the file are the shared widget's (:mod:`ui.upload`: ``fm_upload_scans``,
#: ``fm_upload_reads``), apart, so that the previews and means here never push a file out.
UPLOAD_MEMO = "fm_upload_memo"
EPS_OPTIONS = [0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0]
#: Presets: source -> (public radius, public centre as typed).
PRESET_BOUNDS = {"emg": (L.EMG_PRESET["radius"], f"{L.EMG_PRESET['scale']:g}"),
                 "cities": (L.CITIES_PRESET["radius"], L.CITIES_PRESET["center"])}
#: How the data sources are labelled (each manifold offers its own presets only).
SOURCE_LABELS = {"synthetic": "Synthetic (paper 001)", "upload": "Upload CSV",
                 "cities": "Preset: world cities", "emg": "Preset: EMG covariances"}


@st.cache_data(show_spinner=False, max_entries=64)
def synthetic_data(manifold_key, n, radius, seed):
    """Synthetic data in the ball (paper 001 protocol), cached: it is deterministic."""
    return make_mean_data(M.make_manifold(manifold_key), n, radius=radius, rng=seed)


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


def read_digest(sha, mapping):
    """Names the points read from a file (its SHA-256 ``sha``) through a mapping (the person
    column aside: it does not change the points)."""
    point = repr((mapping.layout, mapping.columns)).encode()
    return f"{sha[:16]}-{hashlib.sha256(point).hexdigest()[:8]}"


def link_float(text):
    """A number read from a link; NaN is junk (a slider cannot hold it), ±inf is clamped."""
    value = float(text)
    if value != value:
        raise ValueError("not a number")
    return value


def link_radius_applies(manifold_key, source):
    """Whether a shared link's radius ``fm_r`` is one for ``manifold_key`` and ``source``: it
    belongs to the link's manifold (a sphere radius of 0.39 is no SPD radius) and, for a
    preset, to the link's preset (its radius comes with its centre). A junk manifold or
    source reads as its default, as :meth:`ui.session.PageSettings.init` reads it."""
    link = st.query_params
    try:
        link_manifold = M.canonical(link.get("fm_manifold", "sphere"))
    except ValueError:
        link_manifold = "sphere"
    link_source = link.get("fm_source", "synthetic")
    same = link_source == source or (link_source not in PRESET_BOUNDS
                                     and source not in PRESET_BOUNDS)
    return link_manifold == manifold_key and same


def radius_key(settings, manifold_key, source):
    """The public radius's widget key, given its starting value: one key per manifold (and
    preset), so each starts from its own default, or from the value it had in this session."""
    r_lo, r_hi = L.FRECHET_MANIFOLDS[manifold_key]
    r_default = PRESET_BOUNDS.get(source, (M.spec(manifold_key).radius,))[0]
    key = (f"fm_radius_{M.full_name(manifold_key)}"
           + (f"_{source}" if source in PRESET_BOUNDS else ""))
    # The URL is read on the page's first run only (later runs wrote it from the widgets):
    # there, a link's radius for another manifold or preset is not this one's. Either way the
    # radius in force is written back to ``fm_r``.
    if settings.first_run and not link_radius_applies(manifold_key, source):
        settings.init(key, None, r_default, bounds=(r_lo, r_hi))
    settings.init(key, "fm_r", r_default, link_float, bounds=(r_lo, r_hi))
    return key


def radius_widget(settings, manifold_key, manifold, source):
    """The public radius's slider (:func:`radius_key`)."""
    r_lo, r_hi = L.FRECHET_MANIFOLDS[manifold_key]
    return st.slider(
        "Public radius r of the data ball", min_value=float(r_lo), max_value=float(r_hi),
        step=0.01, key=radius_key(settings, manifold_key, source),
        help=L.radius_help(manifold),
    )


def spd_size(manifold):
    """k for SPD(k), None for the sphere (the page's two kinds of manifold)."""
    return None if isinstance(manifold, Sphere) else manifold.k


def center_key(settings, manifold, source):
    """The public centre's widget key (one per manifold kind and preset), given its starting
    value."""
    if spd_size(manifold) is None:
        key, default = (("fm_center_cities", PRESET_BOUNDS["cities"][1]) if source == "cities"
                        else ("fm_center", "0, 0, 1"))
    else:
        key = f"fm_center_spd{manifold.k}_{'emg' if source == 'emg' else 'own'}"
        default = PRESET_BOUNDS.get(source, (None, "1"))[1]
    settings.init(key, None, default)
    return key


def parse_center(manifold, text):
    """The public centre typed as ``text``: (centre, its text for the page); ValueError when
    it is not one."""
    if spd_size(manifold) is None:
        return L.parse_center_text(text), text
    center = L.parse_spd_center_text(text, spd_size(manifold))
    return center, L.spd_center_text(center)


def init_synthetic(settings):
    """Starting values of the synthetic data's sample size and seed."""
    settings.init("fm_n", "fm_n", 50, int, bounds=(10, CAPS["fm_max_n"]))
    settings.init("fm_seed", "fm_seed", 0, int, bounds=(0, 10**6))


def synthetic_loaded(manifold_key, manifold, n, seed, meta):
    """The synthetic data's (y, center, center_text, radius, meta); RuntimeError or ValueError
    when they cannot be generated."""
    radius = meta["radius"]
    y = synthetic_data(manifold_key, int(n), float(radius), int(seed))
    meta.update(n=int(n), seed=int(seed), fingerprint=f"syn-{manifold_key}-{n}-{radius}-{seed}")
    center = default_center(manifold)
    center_text = ("the north pole (0, 0, 1)" if spd_size(manifold) is None else
                   L.spd_center_text(center))
    return y, center, center_text, radius, meta


def preset_points(manifold_key, source):
    """A preset's points: (y, the reading's note or None, digest); DataValidationError when the
    file cannot be used."""
    if source == "emg":
        digest = "emg-" + "-".join(L.EMG_PRESET["channels"]) + f"-{L.EMG_PRESET['window']}"
        return emg_points(), None, digest
    raw = L.cities_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    y, note = parse_upload(digest, raw, manifold_key, upload_max_bytes())
    return y, note, digest[:16]


def preset_fingerprint(manifold_key, digest, radius, center_text):
    return f"upl-{manifold_key}-{digest}-{radius}-{center_text}"


def load_data(settings, manifold_key, manifold, source):
    """Widgets for the data; returns (y, center, center_text, radius, meta) or None."""
    radius = radius_widget(settings, manifold_key, manifold, source)
    meta = {"radius": radius}
    key = center_key(settings, manifold, source)
    k = spd_size(manifold)
    if k is not None:
        label = ("Public centre m₀ (a typical variance s for s·I, or "
                 + ("s11, s12, s22)" if k == 2 else "the upper triangle s11, s12, …)"))
        text = st.text_input(
            label, key=key, disabled=source == "synthetic",
            help="From domain knowledge, never from the data: the units and a typical scale of "
                 "your matrices (e.g. a covariance of signals with variance about 10 in their "
                 "units: type 10). The ball is centred there.")
    elif source == "cities":
        text = st.text_input("Public centre m₀ (latitude, longitude in degrees)", key=key)
    else:
        text = st.text_input("Public centre m₀ (x₁, x₂, x₃, or latitude, longitude)", key=key,
                             disabled=source == "synthetic")
    try:
        center, center_text = parse_center(manifold, text)
    except ValueError as exc:
        st.error(str(exc))
        return None
    if source == "synthetic":
        init_synthetic(settings)
        c1, c2 = st.columns(2)
        n = c1.slider("Sample size n", 10, CAPS["fm_max_n"], key="fm_n")
        seed = c2.number_input("Seed of the synthetic data", 0, 10**6, key="fm_seed")
        try:
            return synthetic_loaded(manifold_key, manifold, n, seed, meta)
        except (RuntimeError, ValueError) as exc:
            st.error(f"Could not generate the data: {exc}")
            return None
    if source == "emg":
        st.caption(L.EMG_ATTRIBUTION)
        st.caption(L.EMG_PRIVACY_UNIT)
        st.caption(L.EMG_BOUNDS_NOTE)
    elif source == "cities":
        st.caption(L.CITIES_ATTRIBUTION)
        st.caption(L.CITIES_BOUNDS_NOTE)
    else:
        read = upload_and_map(
            "fm", UploadTarget(manifold_key, infer_param=False),
            label="Upload a CSV file (a header row naming the columns, one point per row; "
                  "choose the point's columns below)",
            empty="Upload a file to continue, or switch the data to *Synthetic*.")
        if read is None:
            return None
        y, digest = read.y, read_digest(read.digest, read.mapping)
        meta.update(person=read.mapping.person, mapping=read.mapping,
                    group_ok=confirm_person_rows(read, "fm",
                                                 f"{manifold_key}_{read.digest[:12]}"))
    if source in PRESET_BOUNDS:
        try:
            y, note, digest = preset_points(manifold_key, source)
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
    preview = L.ball_preview(manifold, y, center, radius)
    (st.warning if preview["warn"] else st.caption)(
        L.ball_preview_text(preview, y.shape[0], radius, file_rows=source == "upload"))
    meta.update(n=int(y.shape[0]),
                fingerprint=preset_fingerprint(manifold_key, digest, radius, center_text))
    return y, center, center_text, radius, meta


def init_choices(settings):
    """Starting values of the manifold, the data source and ε (a preset of the other manifold
    is dropped); returns the manifold key and the sources it offers."""
    keys = list(L.FRECHET_MANIFOLDS)
    # M.canonical reads aliases from the URL: "spd2" (an older link) is "spd".
    settings.init("fm_manifold", "fm_manifold", "sphere", M.canonical, choices=keys)
    manifold_key = st.session_state["fm_manifold"]
    sources = ["synthetic", "upload"] + {"sphere": ["cities"], "spd": ["emg"]}.get(
        manifold_key, [])
    if st.session_state.get("fm_source") not in (None, *sources):
        del st.session_state["fm_source"]  # a preset of the other manifold
    settings.init("fm_source", "fm_source", "synthetic", str, choices=sources)
    settings.init("fm_eps", "fm_eps", 1.0, float, choices=EPS_OPTIONS)
    return manifold_key, sources


def figure_data(settings):
    """What :func:`data_and_budget` will return, read from the session state before its
    widgets are drawn (each given its starting value first, as they will be): so the page can
    draw its figure before them (each input widget drawn before a chart delays it in the
    browser). None for an upload (its data come from the upload's widgets) and for data that
    cannot be used (the widgets then say why)."""
    ss = st.session_state
    manifold_key, _ = init_choices(settings)
    source, epsilon = ss["fm_source"], ss["fm_eps"]
    if source not in ("synthetic", *PRESET_BOUNDS):
        return None
    manifold = M.make_manifold(manifold_key)
    radius = ss[radius_key(settings, manifold_key, source)]
    meta = {"radius": radius}
    try:
        center, center_text = parse_center(manifold, ss[center_key(settings, manifold, source)])
        if source == "synthetic":
            init_synthetic(settings)
            loaded = synthetic_loaded(manifold_key, manifold, ss["fm_n"], ss["fm_seed"], meta)
            return manifold_key, manifold, source, epsilon, loaded
        y, _, digest = preset_points(manifold_key, source)
    except (ValueError, RuntimeError, DataValidationError):
        return None
    if y.shape[0] < 2:
        return None
    meta.update(n=int(y.shape[0]),
                fingerprint=preset_fingerprint(manifold_key, digest, radius, center_text))
    return manifold_key, manifold, source, epsilon, (y, center, center_text, radius, meta)


def data_and_budget(settings):
    """The manifold, the data and ε (their widgets' starting values from ``settings``, the
    page's :class:`ui.session.PageSettings`).

    Returns (manifold key, manifold, source, ε, :func:`load_data`'s tuple), or None when the
    data cannot be used."""
    with st.container(border=True):
        st.subheader("Data and budget")
        manifold_key, sources = init_choices(settings)
        manifold_key = st.selectbox("Manifold", list(L.FRECHET_MANIFOLDS),
                                    format_func=M.choice_label, key="fm_manifold")
        source = st.radio("Data", sources, format_func=SOURCE_LABELS.get, horizontal=True,
                          key="fm_source")
        epsilon = st.select_slider("Privacy budget ε (per release)", EPS_OPTIONS, key="fm_eps")
        reading = st.empty()  # after the data: a person column sets the rows per person
        manifold = M.make_manifold(manifold_key)
        loaded = load_data(settings, manifold_key, manifold, source)
        reading.caption(T.epsilon_reading(epsilon, rows=rows_per_person()))
    if loaded is None:
        return None
    return manifold_key, manifold, source, epsilon, loaded


def data_numbers(manifold_key, manifold, source, meta, y, radius, info, epsilon):
    """n, r, the sensitivities and µ(ε) of the data as set; the synthetic data's download (one
    wrapping row, :func:`ui.widgets.numbers_row`)."""
    n = y.shape[0]
    row = numbers_row()
    row.metric("Sample size n", n, width=NUMBER_WIDTH)
    row.metric("Radius r", f"{radius:.3g}", width=NUMBER_WIDTH,
               help=f"Laplace, KNG and Gaussian need r < r* = {info['r_star']:.3g}")
    if info["delta"] is None:
        row.metric("Sensitivity Δ of the mean", "none", width=NUMBER_WIDTH,
                   help="r ≥ r*: paper 001 Thm 2 bounds it only for r < r*.")
        row.metric("Ambient Δ = 2r_E/n", f"{info['delta_ambient']:.3g}", width=NUMBER_WIDTH)
    else:
        row.metric("Sensitivity Δ of the mean", f"{info['delta']:.3g}", width=NUMBER_WIDTH)
        row.metric("KNG gradient Δ∇", f"{info['delta_gradient']:.3g}", width=NUMBER_WIDTH)
    row.metric("Equivalent GDP µ(ε)", f"{eps_to_mu(epsilon):.3g}", width=NUMBER_WIDTH)
    if source == "synthetic":
        row.download_button(
            "Download data", to_csv(manifold, y),
            file_name=f"frechet_mean_{M.full_name(manifold_key)}_n{n}_seed{meta['seed']}.csv",
            mime="text/csv", key="fm_download_data", on_click="ignore")
    if info["delta"] is None:
        st.info(f"r = {radius:.3g} is at least r* = {info['r_star']:.3g}: the intrinsic "
                "mechanisms (Laplace, KNG, Gaussian) have no sensitivity bound here (paper 001 "
                "Thm 2), so only the ambient Laplace mechanism is offered. Its sensitivity "
                "2 r_E / n holds for any cap, up to the whole sphere.", icon=":material/info:")
