"""The settings column of the Geodesic regression page: manifold and data, privacy budget,
mode and public bounds, and the sampler (widgets only). The page maps what they return to a
:class:`~ui.logic.geodesic_regression.ReleaseSettings` and from it to the release's request
(:mod:`ui.logic.gr_request`).

Each section takes ``init``, the page's :meth:`ui.session.PageSettings.init` (a widget's
starting value from the session, a shared URL or its default).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace

import streamlit as st

from ui import covariate_estimate as CE
from ui import manifolds as M
from ui import rat_preset as RP
from ui import two_stage as TSW
from ui.caps import CAPS
from ui.logic import geodesic_regression as G
from ui.logic import privacy_text as T
from ui.logic import regression_data as D
from ui.logic import upload as U
from ui.session import lazy_expander, rows_per_person, set_page_rows
from ui.upload import (
    confirm_person_rows,
    file_bytes,
    header_caption,
    map_file,
    param_from_header,
)

SOURCES = {"synthetic": "Synthetic (paper protocol)", "example": "Generated example",
           "rats": "Preset: rat skulls (real data)", "upload": "Upload a CSV"}


@st.cache_data(show_spinner=False, max_entries=64)
def cached_synthetic(kind, param, n, noise, seed):
    return G.synthetic_dataset(kind, param, n, noise, seed)


@st.cache_data(show_spinner=False, max_entries=16)
def cached_example(kind, param):
    return D.example_dataset(kind, param)


@dataclass(frozen=True)
class DataChoice:
    """What section 1 chose: the manifold (``kind``, ``param``), the data ``source``, the
    ``dataset`` (None while it cannot be used), an upload's ``read`` (its mapping), whether its
    points are renormalized, whether its rows per person are confirmed (``group_ok``), the
    covariate's name, the file's digest and the synthetic data's settings (``n``, ``noise``,
    ``seed``)."""

    kind: str
    param: int | None
    source: str
    dataset: object = None
    read: object = None
    renormalize: bool = False
    group_ok: bool = True
    covariate: str = "x"
    file_digest: str | None = None
    upload_digest: tuple | None = None
    synthetic: dict | None = None

    @property
    def key(self):
        """What identifies the data in a release's signature (never the data themselves)."""
        return (self.source, self.upload_digest) if self.source == "upload" else (self.source,)


@dataclass(frozen=True)
class Budget:
    """Section 2: the budgets, the scheme and the number of draws."""

    eps_p: float
    eps_v: float
    scheme: str
    n_foot: int
    n_vec: int


@dataclass(frozen=True)
class Bounds:
    """Section 3: the mode, the public bounds, the two-stage design, a covariate range
    estimated under DP (``estimated``: bound -> statement; ``estimate``: the estimate) and the
    sampler's settings (``chain``, ``burn``, ``sampler``, ``seed``: None for OS entropy)."""

    mode: str
    tau: float | None
    covariate_range: tuple | None
    tau_m: float | None
    center: tuple | None
    max_speed: float | None
    footpoint_radius: float | None
    two: object
    estimated: dict
    estimate: dict | None
    chain: int
    burn: int
    sampler: str
    seed: int | None


def data_section(init):
    """Section 1, the manifold and the data: a :class:`DataChoice`."""
    with st.container(border=True):
        st.subheader("1 · Manifold and data")
        # M.canonical reads aliases from the URL: "spd2" (an older link) is "spd".
        init("gr_manifold", "gr_m", "sphere", M.canonical, D.MANIFOLD_KINDS)
        # Radio buttons, not a select box: four choices in view, and one kind of widget less
        # to load before the page's first plot (the select box's script chunks, 0.04 s).
        kind = st.radio("Manifold", D.MANIFOLD_KINDS, key="gr_manifold",
                        format_func=D.MANIFOLD_LABELS.get, on_change=manifold_changed)
        st.session_state["gr_prev_kind"] = kind
        param = None
        found = header_param(kind)
        if kind in D.PARAM_RANGE:
            lo_p, hi_p, default_p = D.PARAM_RANGE[kind]
            default_p = G.default_param(kind, default_p)
            key = f"gr_param_{kind}"
            init(key, f"gr_{M.spec(kind).param}", default_p, int, range(lo_p, hi_p + 1))
            param = int(st.number_input(M.spec(kind).param_label, lo_p, hi_p, key=key, step=1))
        init("gr_source", "gr_src", "synthetic", str, tuple(SOURCES))
        source = st.radio("Data", tuple(SOURCES), key="gr_source", format_func=SOURCES.get,
                          horizontal=True, on_change=RP.source_changed,
                          help="*Preset: rat skulls* is real data in one click: Kendall "
                               "regression of rat skull shape on age (Bookstein 1991), with "
                               "public bounds from the study design and 8 rows per rat.")

        dataset, upload_digest, data_error, read = None, None, None, None
        covariate, file_digest, renormalize, group_ok = "x", None, False, True
        set_page_rows(None)  # set again below while an uploaded file's person column is mapped
        if source == "synthetic":
            init("gr_n", "gr_n", G.default_n(kind), int, range(10, CAPS["gr_max_n"] + 1))
            n = st.slider("Sample size n", 10, CAPS["gr_max_n"], key="gr_n", step=5)
            noise_key = f"gr_noise_{kind}"
            if kind == "sphere":
                init(noise_key, "gr_noise", G.default_noise(kind, D.SPHERE_NOISE_CHOICES[0]),
                     float, D.SPHERE_NOISE_CHOICES)
                noise = st.select_slider("Noise variance δ (ambient Gaussian, paper 002 §4.1)",
                                         D.SPHERE_NOISE_CHOICES, key=noise_key)
            else:
                init(noise_key, "gr_noise", G.default_noise(kind, D.default_noise(kind)), float,
                     bounds=(0.0, 2.0))
                noise = st.number_input("Noise standard deviation (tangent Gaussian)", 0.0, 2.0,
                                        key=noise_key, step=0.01, format="%.3f")
            init("gr_seed", "gr_seed", 0, int, bounds=(0, 10**6))
            seed = int(st.number_input("Data seed", 0, 10**6, key="gr_seed", step=1))
            dataset = cached_synthetic(kind, param, int(n), float(noise), seed)
        elif source == "example":
            dataset = cached_example(kind, param)
        elif source == "rats":
            preset = RP.RAT_PRESET
            if (kind, param) != (preset["kind"], preset["param"]):
                data_error = ("The rat skulls are planar shapes with 8 landmarks: choose "
                              "*Kendall planar shapes* with k = 8 (choosing the data *Preset: "
                              "rat skulls* sets it, with the preset's bounds and budget).")
            else:
                dataset = RP.rat_skulls_dataset()
                if rows_per_person() != preset["rows_per_person"]:
                    st.warning(
                        f"Each rat contributes {preset['rows_per_person']} rows, but the "
                        f"ledger counts {rows_per_person()} row(s) per person: the guarantee "
                        f"per rat is {preset['rows_per_person']} times the ε shown per row "
                        "(group privacy). Set *Rows one person contributes* (sidebar) to 8, "
                        "or press the preset button.", icon=":material/group:")
        else:
            dataset, read, renormalize, group_ok = upload_data(init, kind, param, found)
            if read is not None:
                covariate, file_digest = read.mapping.covariate, read.digest
                upload_digest = (read.digest, renormalize, read.mapping)
        if data_error:
            st.error(data_error)
        elif dataset is not None:
            st.caption(dataset.description)

    return DataChoice(kind, param, source, dataset, read, renormalize, group_ok, covariate,
                      file_digest, upload_digest,
                      {"n": n, "noise": noise, "seed": seed} if source == "synthetic" else None)


def budget_section(init):
    """Section 2, the privacy budget: a :class:`Budget`."""
    with st.container(border=True):
        st.subheader("2 · Privacy budget")
        init("gr_budget_input", "gr_bi", "separate", str, ("separate", "total"))
        budget_input = st.radio("Set", ("separate", "total"), key="gr_budget_input",
                                horizontal=True,
                                format_func={"separate": "ε_p and ε_v",
                                             "total": "total ε and a split"}.get)
        if budget_input == "separate":
            init("gr_eps_p", "gr_ep", G.DEFAULT_EPS[0], float, D.EPS_GRID)
            init("gr_eps_v", "gr_ev", G.DEFAULT_EPS[1], float, D.EPS_GRID)
            eps_p = st.select_slider("ε_p — footpoint budget (log scale)", D.EPS_GRID,
                                     key="gr_eps_p")
            eps_v = st.select_slider("ε_v — shooting-vector budget (log scale)", D.EPS_GRID,
                                     key="gr_eps_v")
        else:
            init("gr_total", "gr_tot", 3.0, float, D.EPS_GRID)
            init("gr_share", "gr_share", 35, int, range(5, 96, 5))
            total = st.select_slider("Total ε per geodesic (log scale)", D.EPS_GRID,
                                     key="gr_total")
            share = st.slider("Share of ε for the footpoint (%)", 5, 95, key="gr_share", step=5)
            eps_p, eps_v = total * share / 100.0, total * (100 - share) / 100.0
            st.caption(f"ε_p = {eps_p:.3g}, ε_v = {eps_v:.3g}")
        st.caption("One geodesic: " + T.epsilon_reading(eps_p + eps_v, rows=rows_per_person()))
        init("gr_scheme", "gr_scheme", "joint", str, G.SCHEME_LABELS)
        scheme = st.radio("Scheme", tuple(G.SCHEME_LABELS), key="gr_scheme", horizontal=True,
                          format_func=G.SCHEME_LABELS.get,
                          help=SCHEME_HELP)
        init("gr_nf", "gr_nf", G.DEFAULT_DRAWS[0], int, range(1, CAPS["gr_footpoints"] + 1))
        init("gr_nv", "gr_nv", G.DEFAULT_DRAWS[1], int, range(1, CAPS["gr_vectors"] + 1))
        c1, c2 = st.columns(2)
        n_foot = int(c1.number_input("Private footpoints", 1, CAPS["gr_footpoints"],
                                     key="gr_nf"))
        n_vec = int(c2.number_input("Vectors per footpoint", 1, CAPS["gr_vectors"],
                                    key="gr_nv"))
        if scheme == "joint":
            st.caption(
                f"One private geodesic costs ε = ε_p + ε_v = {eps_p + eps_v:.3g}. The joint "
                f"scheme draws {n_foot * n_vec} independent (footpoint, vector) pairs; "
                f"publishing all costs **{n_foot * n_vec * (eps_p + eps_v):.3g}**, the amount "
                "the ledger records."
            )
        else:
            st.caption(
                f"One private geodesic costs ε_p + ε_v = {eps_p + eps_v:.3g}. Publishing all "
                f"{n_foot} × {n_vec} draws costs {n_foot} ε_p + {n_foot * n_vec} ε_v = "
                f"**{n_foot * eps_p + n_foot * n_vec * eps_v:.3g}**, the amount the ledger "
                "records."
            )

    return Budget(float(eps_p), float(eps_v), scheme, n_foot, n_vec)


def bounds_section(init, data, budget):
    """Section 3, the mode and the public bounds (and the sampler section under it), for the
    data and budget chosen above: a :class:`Bounds`."""
    kind, param, source, dataset = data.kind, data.param, data.source, data.dataset
    covariate, file_digest, group_ok = data.covariate, data.file_digest, data.group_ok
    eps_p, eps_v, scheme = budget.eps_p, budget.eps_v, budget.scheme
    n_foot, n_vec = budget.n_foot, budget.n_vec
    scope = estimate = None
    with st.container(border=True):
        st.subheader("3 · Mode and public bounds")
        init("gr_mode", "gr_mode", "strict", str, ("strict", "paper"))
        mode = st.radio("Mode", ("strict", "paper"), key="gr_mode", horizontal=True,
                        format_func={"strict": "strict (private)",
                                     "paper": "paper (NOT private)"}.get)
        tau = covariate_range = tau_m = center = max_speed = footpoint_radius = two = None
        estimated = {}
        if mode == "paper":
            st.warning(
                "**Paper mode is NOT private.** τ, the covariate range"
                + (" and τ_m" if D.needs_ball(kind) else "")
                + " are taken from the data and σ = Δ/ε, as in the papers. Use it to reproduce "
                "their experiments, never to publish.", icon=":material/warning:")
        else:
            init(f"gr_tau_{kind}", "gr_tau", G.default_tau(kind, M.spec(kind).tau), float,
                 bounds=(0.001, 10.0))
            tau = float(st.number_input("τ — bound on residual norms (public)", 0.001, 10.0,
                                        key=f"gr_tau_{kind}", step=0.05, format="%.3f"))
            scope = estimate = None
            if G.estimate_offered(source, mode) and dataset is not None:
                scope = G.estimate_scope(file_digest, kind, param, covariate)
                estimate = st.session_state.get(CE.ESTIMATES, {}).get(scope)
            range_default = (estimate["range"] if estimate else
                             D.EXAMPLE_AGES if source == "example" else
                             RP.RAT_PRESET["covariate_range"] if source == "rats" else
                             (0.0, 1.0))
            # An estimate gives the fields new keys: they start from it (later edits stay).
            suffix = f"_{scope}_est{estimate['token']}" if estimate else ""
            init(f"gr_lo_{source}{suffix}", "gr_lo", float(range_default[0]), float)
            init(f"gr_hi_{source}{suffix}", "gr_hi", float(range_default[1]), float)
            c1, c2 = st.columns(2)
            lo = float(c1.number_input("Covariate range: low", key=f"gr_lo_{source}{suffix}",
                                       format="%.4g"))
            hi = float(c2.number_input("high", key=f"gr_hi_{source}{suffix}", format="%.4g"))
            covariate_range = (lo, hi)
            estimated = G.covariate_estimate_note(covariate_range, estimate)
            if estimated:
                st.caption(f"The covariate range holds the range of '{covariate}' estimated "
                           f"under DP with ε_b = {estimate['epsilon']:.3g} (a release recorded "
                           "in the ledger); retyped, it is your own public choice.")
            if scope is not None and group_ok:
                CE.estimate_section(dataset.x, covariate, scope,
                                    G.release_epsilon(scheme, eps_p, eps_v, n_foot, n_vec))
            elif scope is not None:
                st.caption("Confirm the rows per person above to estimate the covariate "
                           "range privately.")
            # One field per data source: the demonstration's speed bound is its design, not a
            # bound for an uploaded file.
            init(f"gr_ms_{kind}_{source}", "gr_ms", G.default_max_speed(kind, source), float,
                 bounds=(0.0, 100.0))
            max_speed = float(st.number_input(
                "Maximal speed |v| — change of the response over the covariate range (public; "
                "0: the default bound)", 0.0, 100.0, key=f"gr_ms_{kind}_{source}", step=0.1,
                format="%.3g",
                help="Bounds the shooting vector, the support of the private vectors. The "
                     "default is the diameter on S² and Kendall, 2 (τ_m + τ) elsewhere. A "
                     "smaller bound from domain knowledge (how much can the response change "
                     "over the whole covariate range?) shrinks the support.")) or None
            if D.needs_ball(kind):
                init(f"gr_taum_{kind}", "gr_taum", G.default_tau_m(kind, M.spec(kind).tau_m),
                     float, bounds=(0.01, 100.0))
                tau_m = float(st.number_input("τ_m — radius of the public ball holding the "
                                              "responses", 0.01, 100.0, key=f"gr_taum_{kind}",
                                              step=0.5, format="%.3g"))
                if kind == "spd":
                    init("gr_center_spd", "gr_c", 1.0, float, bounds=(0.001, 1000.0))
                    c = float(st.number_input("Ball centre c·I, c =", 0.001, 1000.0,
                                              key="gr_center_spd", format="%.4g"))
                    center = (c,)
                elif kind == "euclidean":
                    init(f"gr_center_{param}", None, ", ".join(["0"] * int(param)), str)
                    text = st.text_input(f"Ball centre ({param} comma-separated numbers)",
                                         key=f"gr_center_{param}")
                    try:
                        center = tuple(float(s) for s in text.split(","))
                        if len(center) != int(param):
                            raise ValueError
                    except ValueError:
                        st.error(f"The centre must be {param} comma-separated numbers; "
                                 "using the origin.")
                        center = None
                else:  # any other manifold: its default centre (G.center_point)
                    st.caption("Ball centre: the manifold's default point.")
            if kind in G.FOOTPOINT_REGION_KINDS:
                footpoint_radius, region_center = footpoint_region_inputs(
                    init, kind, source, limit=None if tau_m is None else tau_m + tau)
                if kind != "spd":  # SPD: the region is about the ball's centre
                    center = region_center
            two = TSW.two_stage_inputs(kind, scheme, eps_p, eps_v, n_foot * n_vec, init)
            st.caption("Public means: fixed before seeing the data (e.g. from the study "
                       "design). Strict mode clips covariates and residuals and projects "
                       "responses to these bounds, so the guarantee holds whatever the data.")
        chain, burn, sampler, fix_seed, release_seed = sampler_section(init)
    return Bounds(mode, tau, covariate_range, tau_m, center, max_speed, footpoint_radius, two,
                  estimated, estimate, chain, burn, sampler, release_seed if fix_seed else None)


def header_param(kind):
    """The manifold parameter an uploaded file's header names (Kendall k from lx1..lyk,
    Euclidean d from y1..yd), set into the page's parameter widget once per file before the
    widget is drawn (:func:`ui.upload.param_from_header`; the file is in the session state
    already): afterwards it is the user's to change. None without an upload."""
    uploaded = st.session_state.get("gr_upload")
    if (kind not in D.PARAM_RANGE or st.session_state.get("gr_source") != "upload"
            or uploaded is None):
        return None
    return param_from_header("gr", kind, f"gr_param_{kind}", uploaded.getvalue(),
                             D.PARAM_RANGE[kind])


def upload_data(init, kind, param, found):
    """An uploaded file through the shared upload-and-mapping widget (:mod:`ui.upload`): the
    preview, the recognised layout, the covariate (never a point column or an identifier),
    the point's columns and the person column; ``found``: the parameter its header names
    (:func:`header_param`). Returns ``(dataset, read, renormalize, group_ok)``: dataset and
    read are None (the widget said why) until the file can be used; ``group_ok`` is False
    while the rows per person of a person column are not confirmed public."""
    target = U.UploadTarget(kind, param, covariate=True, infer_param=False,
                            covariate_ids=False, responses=param or 1,
                            max_responses=param if kind == "euclidean" else None)
    raw = file_bytes("gr", label="CSV file (one observation per row)",
                     caption=header_caption(target) + " See the README for the formats.",
                     empty="Upload a file to continue, or choose other data above.")
    renormalize = False
    if kind == "sphere":
        init("gr_renormalize", None, False, bool)
        renormalize = st.checkbox("Project points onto the sphere (renormalize) instead of "
                                  "rejecting points off it", key="gr_renormalize")
    if raw is None:
        return None, None, renormalize, True
    label = M.spec(kind).param_label if kind in D.PARAM_RANGE else ""
    if found is not None and found == param:
        st.info(U.param_read_text(kind, found, label), icon=":material/scatter_plot:")
    elif U.param_left_out(kind, found, param, label):
        st.warning(U.param_left_out(kind, found, param, label), icon=":material/scatter_plot:")
    scope = f"{kind}_{hashlib.sha256(raw).hexdigest()[:12]}"
    read = map_file(raw, "gr", replace(target, renormalize=renormalize), scope=scope,
                    sphere_hint="Tick *Project points onto the sphere (renormalize)* above to "
                                "project every point onto it.")
    if read is not None and kind == "euclidean" and read.manifold.dim != param:
        st.info(f"*{label}* is {param}: choose {param} response columns, or set it to "
                f"{read.manifold.dim}.")
        read = None
    if read is None:
        return None, None, renormalize, True
    return D.upload_dataset(read), read, renormalize, confirm_person_rows(read, "gr", scope)


def footpoint_region_inputs(init, kind, source, limit=None):
    """The optional public footpoint region: its radius (None: the whole space, or on SPD the
    ball of radius ``limit`` = τ_m + τ) and, on the sphere, its centre as (latitude,
    longitude); on SPD the region is about the response ball's centre c·I."""
    key = f"gr_fr_{kind}_{source}"
    init(key, None, G.default_footpoint_radius(kind, source), float, bounds=(0.0, 3.2))
    radius = float(st.number_input(
        "Footpoint region: radius r (public; 0: the whole space)", 0.0, 3.2, key=key, step=0.05,
        format="%.3g",
        help="Where the fitted curve's starting point can be, known before seeing the data "
             "(the study design, a map). The private footpoint is drawn inside this ball only. "
             "At small n × ε this is what makes the release useful: without it most of the "
             "private target lies far from the data. The demonstration's data are generated "
             "with their footpoint in such a region, so its default is public."))
    center = None
    if kind == "sphere":
        init("gr_fc_lat", None, 90.0, float, bounds=(-90.0, 90.0))
        init("gr_fc_lon", None, 0.0, float, bounds=(-180.0, 180.0))
        c1, c2 = st.columns(2)
        lat = c1.number_input("Centre latitude (°)", -90.0, 90.0, key="gr_fc_lat",
                              step=1.0, format="%.4g", disabled=not radius)
        lon = c2.number_input("Centre longitude (°)", -180.0, 180.0, key="gr_fc_lon", step=1.0,
                              format="%.4g", disabled=not radius)
        center = (float(lat), float(lon))
    elif kind == "spd":
        if limit is not None and radius > limit:
            st.error(f"The footpoint region's radius r = {radius:g} exceeds τ_m + τ = "
                     f"{limit:g}: on SPD the sensitivity proof covers footpoints within "
                     "τ_m + τ of the centre only. Using r = τ_m + τ.")
            radius = 0.0
        st.caption("Footpoint region centre: the ball centre c·I above (0: the ball of radius "
                   "τ_m + τ, the proof's support).")
    elif radius:
        st.caption("Footpoint region centre: the template shape (the manifold's default "
                   "point).")
    return (radius or None), center


def manifold_changed():
    """Switching manifold moves the synthetic n to the new manifold's default when it was at
    the old one's (a changed n stays)."""
    ss = st.session_state
    old, new = ss.get("gr_prev_kind"), ss["gr_manifold"]
    if old is not None and ss.get("gr_n") == G.default_n(old):
        ss["gr_n"] = G.default_n(new)
    ss["gr_prev_kind"] = new


def show_clipping_preview(rows):
    """Counts of rows the public bounds clip or project, before the release (not released)."""
    if not rows:
        return
    with st.container(border=True):
        st.markdown("**Your data against the public bounds** — a preview for your eyes only, "
                    "computed from the data and **not released**")
        st.markdown("\n".join(f"- {r['count']} of {r['n']} ({100 * r['share']:.3g}%) "
                               f"{r['what']}" for r in rows))
        for r in rows:
            if r["warn"]:
                st.warning(f"{100 * r['share']:.3g}% of the rows are affected ({r['what']}), "
                           f"more than {100 * G.CLIP_WARN:g}%: the release would describe the "
                           "clipped data, not yours. Widen the public bound from domain "
                           "knowledge (not from these counts) before releasing.",
                           icon=":material/content_cut:")


SCHEME_HELP = ("Joint: one K-norm gradient mechanism over (p, v) with ε = ε_p + ε_v and "
               "sensitivity √(Δ_p² + Δ_v²), covered by the sensitivity proof. Sequential (the "
               "papers): footpoint with ε_p, then vectors with ε_v; its footpoint stage uses the "
               "data's own shooting vector, which the proof does not cover, so it is never "
               "labelled private.")
SAMPLER_OPEN = "gr_sampler_open"
#: Widget keys of the "Advanced: sampler" section (kept while it is closed).
SAMPLER_KEYS = ("gr_chain", "gr_burn", "gr_sampler", "gr_fix_seed", "gr_release_seed")


def sampler_section(init):
    """The "Advanced: sampler" section: (chain, burn-in, sampler, fix seed?, release seed).

    Built only while open (:func:`ui.session.lazy_expander`: five input widgets less before the
    page's first plot); closed, its values come from the session (a shared URL's included). It
    opens on the first run when a setting differs from its default (a shared scenario says so).
    """
    init("gr_chain", "gr_chain", G.DEFAULT_CHAIN, int, range(50, CAPS["gr_chain"] + 1))
    init("gr_burn", "gr_burn", G.DEFAULT_BURN_IN, int, range(0, CAPS["gr_chain"] + 1))
    init("gr_sampler", "gr_sampler", "auto", str, G.SAMPLER_LABELS)
    init("gr_fix_seed", None, False, bool)
    init("gr_release_seed", None, 1, int, bounds=(0, 10**6))
    ss = st.session_state
    changed = (ss["gr_chain"] != G.DEFAULT_CHAIN or ss["gr_burn"] != G.DEFAULT_BURN_IN
               or ss["gr_sampler"] != "auto" or ss["gr_fix_seed"])
    box = lazy_expander("Advanced: sampler", SAMPLER_OPEN, expanded=changed,
                                           keep=SAMPLER_KEYS)
    if box is None:
        return (int(ss["gr_chain"]), int(ss["gr_burn"]), ss["gr_sampler"],
                bool(ss["gr_fix_seed"]), int(ss["gr_release_seed"]))
    with box:
        chain = int(st.number_input("Chain length (steps kept)", 50, CAPS["gr_chain"],
                                    key="gr_chain", step=50))
        burn = int(st.number_input("Burn-in (tuning steps)", 0, CAPS["gr_chain"],
                                   key="gr_burn", step=50))
        sampler = st.radio("Sampler", tuple(G.SAMPLER_LABELS), key="gr_sampler",
                           format_func=G.SAMPLER_LABELS.get,
                           help="Exact: rejection sampling, the release is ε-DP with δ = 0. "
                                "MCMC: Metropolis-Hastings chains (length and burn-in below); "
                                "no δ is certified, so the label says approximately private.")
        fix_seed = st.checkbox("Fix the release seed (reproducible demo, not for publication)",
                               key="gr_fix_seed")
        release_seed = int(st.number_input("Release seed", 0, 10**6, key="gr_release_seed",
                                           disabled=not fix_seed))
        st.caption("Chain settings apply to MCMC only. Longer chains mix better (watch ESS "
                   "and R-hat) but take longer. "
                   "Without a fixed seed the randomness comes from the operating system.")
    return chain, burn, sampler, fix_seed, release_seed
