"""The settings column of the Geodesic regression page: manifold and data, privacy budget,
mode and public bounds, and the sampler (widgets only).

The page reads the settings first (:mod:`ui.gr_values`, which gives every widget its starting
value through ``init``, the page's :meth:`ui.session.PageSettings.init`), draws its chart, then
draws these widgets with the same keys: each section takes the values read and draws their
widgets and what is said about them. The page maps the values to a
:class:`~ui.logic.geodesic_regression.ReleaseSettings` and from it to the release's request
(:mod:`ui.logic.gr_request`).
"""

from __future__ import annotations

import hashlib
from dataclasses import replace

import streamlit as st

from ui import covariate_estimate as CE
from ui import manifolds as M
from ui import rat_preset as RP
from ui import two_stage as TSW
from ui.caps import CAPS
from ui.gr_values import SAMPLER_KEYS, SOURCES, parse_center
from ui.logic import geodesic_regression as G
from ui.logic import privacy_text as T
from ui.logic import regression_data as D
from ui.logic import upload as U
from ui.session import lazy_expander, rows_per_person
from ui.upload import confirm_person_rows, file_bytes, header_caption, map_file

__all__ = ["SAMPLER_KEYS", "SAMPLER_OPEN", "bounds_section", "budget_section", "data_section",
           "show_clipping_preview"]


def data_section(data, init):
    """Section 1, the manifold and the data, for ``data`` (:func:`ui.gr_values.read_data`):
    returns it, with an uploaded file's data read from its widgets (``init`` gives them their
    starting values)."""
    kind, param, source = data.kind, data.param, data.source
    with st.container(border=True):
        st.subheader("1 · Manifold and data")
        # Radio buttons, not a select box: four choices in view, and one kind of widget less
        # to load before the page's first plot (the select box's script chunks, 0.04 s).
        st.radio("Manifold", D.MANIFOLD_KINDS, key="gr_manifold",
                 format_func=D.MANIFOLD_LABELS.get, on_change=manifold_changed)
        if kind in D.PARAM_RANGE:
            lo_p, hi_p, _ = D.PARAM_RANGE[kind]
            st.number_input(M.spec(kind).param_label, lo_p, hi_p, key=f"gr_param_{kind}",
                            step=1)
        st.radio("Data", tuple(SOURCES), key="gr_source", format_func=SOURCES.get,
                 horizontal=True, on_change=RP.source_changed,
                 help="*Preset: rat skulls* is real data in one click: Kendall "
                      "regression of rat skull shape on age (Bookstein 1991), with "
                      "public bounds from the study design and 8 rows per rat.")
        if source == "synthetic":
            st.slider("Sample size n", 10, CAPS["gr_max_n"], key="gr_n", step=5)
            noise_key = f"gr_noise_{kind}"
            if kind == "sphere":
                st.select_slider("Noise variance δ (ambient Gaussian, paper 002 §4.1)",
                                 D.SPHERE_NOISE_CHOICES, key=noise_key)
            else:
                st.number_input("Noise standard deviation (tangent Gaussian)", 0.0, 2.0,
                                key=noise_key, step=0.01, format="%.3f")
            st.number_input("Data seed", 0, 10**6, key="gr_seed", step=1)
        elif source == "rats" and not data.data_error:
            preset = RP.RAT_PRESET
            if rows_per_person() != preset["rows_per_person"]:
                st.warning(
                    f"Each rat contributes {preset['rows_per_person']} rows, but the "
                    f"ledger counts {rows_per_person()} row(s) per person: the guarantee "
                    f"per rat is {preset['rows_per_person']} times the ε shown per row "
                    "(group privacy). Set *Rows one person contributes* (sidebar) to 8, "
                    "or press the preset button.", icon=":material/group:")
        elif source == "upload":
            dataset, read, renormalize, group_ok = upload_data(init, kind, param, data.found)
            covariate, file_digest, upload_digest = "x", None, None
            if read is not None:
                covariate, file_digest = read.mapping.covariate, read.digest
                upload_digest = (read.digest, renormalize, read.mapping)
            data = replace(data, dataset=dataset, read=read, renormalize=renormalize,
                           group_ok=group_ok, covariate=covariate, file_digest=file_digest,
                           upload_digest=upload_digest)
        if data.data_error:
            st.error(data.data_error)
        elif data.dataset is not None:
            st.caption(data.dataset.description)
    return data


def budget_section(budget):
    """Section 2, the privacy budget (:func:`ui.gr_values.read_budget`)."""
    eps_p, eps_v, n_foot, n_vec = budget.eps_p, budget.eps_v, budget.n_foot, budget.n_vec
    with st.container(border=True):
        st.subheader("2 · Privacy budget")
        st.radio("Set", ("separate", "total"), key="gr_budget_input", horizontal=True,
                 format_func={"separate": "ε_p and ε_v", "total": "total ε and a split"}.get)
        if budget.split == "separate":
            st.select_slider("ε_p — footpoint budget (log scale)", D.EPS_GRID, key="gr_eps_p")
            st.select_slider("ε_v — shooting-vector budget (log scale)", D.EPS_GRID,
                             key="gr_eps_v")
        else:
            st.select_slider("Total ε per geodesic (log scale)", D.EPS_GRID, key="gr_total")
            st.slider("Share of ε for the footpoint (%)", 5, 95, key="gr_share", step=5)
            st.caption(f"ε_p = {eps_p:.3g}, ε_v = {eps_v:.3g}")
        st.caption("One geodesic: " + T.epsilon_reading(eps_p + eps_v, rows=rows_per_person()))
        st.radio("Scheme", tuple(G.SCHEME_LABELS), key="gr_scheme", horizontal=True,
                 format_func=G.SCHEME_LABELS.get, help=SCHEME_HELP)
        c1, c2 = st.columns(2)
        c1.number_input("Private footpoints", 1, CAPS["gr_footpoints"], key="gr_nf")
        c2.number_input("Vectors per footpoint", 1, CAPS["gr_vectors"], key="gr_nv")
        if budget.scheme == "joint":
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


def bounds_section(bounds, data, budget):
    """Section 3, the mode and the public bounds (and the sampler section under it), for the
    values read (:func:`ui.gr_values.read_bounds`) and the data and budget above."""
    kind, param, source = data.kind, data.param, data.source
    with st.container(border=True):
        st.subheader("3 · Mode and public bounds")
        st.radio("Mode", ("strict", "paper"), key="gr_mode", horizontal=True,
                 format_func={"strict": "strict (private)", "paper": "paper (NOT private)"}.get)
        if bounds.mode == "paper":
            st.warning(
                "**Paper mode is NOT private.** τ, the covariate range"
                + (" and τ_m" if D.needs_ball(kind) else "")
                + " are taken from the data and σ = Δ/ε, as in the papers. Use it to reproduce "
                "their experiments, never to publish.", icon=":material/warning:")
        else:
            st.number_input("τ — bound on residual norms (public)", 0.001, 10.0,
                            key=f"gr_tau_{kind}", step=0.05, format="%.3f")
            c1, c2 = st.columns(2)
            c1.number_input("Covariate range: low", key=bounds.range_keys[0], format="%.4g")
            c2.number_input("high", key=bounds.range_keys[1], format="%.4g")
            if bounds.estimated:
                st.caption(f"The covariate range holds the range of '{data.covariate}' "
                           f"estimated under DP with ε_b = {bounds.estimate['epsilon']:.3g} (a "
                           "release recorded in the ledger); retyped, it is your own public "
                           "choice.")
            if bounds.scope is not None and data.group_ok:
                CE.estimate_section(data.dataset.x, data.covariate, bounds.scope,
                                    G.release_epsilon(budget.scheme, budget.eps_p, budget.eps_v,
                                                      budget.n_foot, budget.n_vec))
            elif bounds.scope is not None:
                st.caption("Confirm the rows per person above to estimate the covariate "
                           "range privately.")
            st.number_input(
                "Maximal speed |v| — change of the response over the covariate range (public; "
                "0: the default bound)", 0.0, 100.0, key=f"gr_ms_{kind}_{source}", step=0.1,
                format="%.3g",
                help="Bounds the shooting vector, the support of the private vectors. The "
                     "default is the diameter on S² and Kendall, 2 (τ_m + τ) elsewhere. A "
                     "smaller bound from domain knowledge (how much can the response change "
                     "over the whole covariate range?) shrinks the support.")
            if D.needs_ball(kind):
                st.number_input("τ_m — radius of the public ball holding the responses", 0.01,
                                100.0, key=f"gr_taum_{kind}", step=0.5, format="%.3g")
                if kind == "spd":
                    st.number_input("Ball centre c·I, c =", 0.001, 1000.0, key="gr_center_spd",
                                    format="%.4g")
                elif kind == "euclidean":
                    text = st.text_input(f"Ball centre ({param} comma-separated numbers)",
                                         key=f"gr_center_{param}")
                    if parse_center(text, param) is None:
                        st.error(f"The centre must be {param} comma-separated numbers; "
                                 "using the origin.")
                else:  # any other manifold: its default centre (G.center_point)
                    st.caption("Ball centre: the manifold's default point.")
            if kind in G.FOOTPOINT_REGION_KINDS:
                footpoint_region_inputs(kind, source, limit=None if bounds.tau_m is None
                                        else bounds.tau_m + bounds.tau)
            TSW.two_stage_inputs(kind, budget.scheme)
            st.caption("Public means: fixed before seeing the data (e.g. from the study "
                       "design). Strict mode clips covariates and residuals and projects "
                       "responses to these bounds, so the guarantee holds whatever the data.")
        sampler_section()


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


def footpoint_region_inputs(kind, source, limit=None):
    """The optional public footpoint region's inputs: its radius and, on the sphere, its centre
    (latitude, longitude); on SPD the region is about the response ball's centre c·I, and a
    radius above ``limit`` = τ_m + τ is refused (its value is read by
    :func:`ui.gr_values.footpoint_region_value`)."""
    radius = st.number_input(
        "Footpoint region: radius r (public; 0: the whole space)", 0.0, 3.2,
        key=f"gr_fr_{kind}_{source}", step=0.05, format="%.3g",
        help="Where the fitted curve's starting point can be, known before seeing the data "
             "(the study design, a map). The private footpoint is drawn inside this ball only. "
             "At small n × ε this is what makes the release useful: without it most of the "
             "private target lies far from the data. The demonstration's data are generated "
             "with their footpoint in such a region, so its default is public.")
    if kind == "sphere":
        c1, c2 = st.columns(2)
        c1.number_input("Centre latitude (°)", -90.0, 90.0, key="gr_fc_lat", step=1.0,
                        format="%.4g", disabled=not radius)
        c2.number_input("Centre longitude (°)", -180.0, 180.0, key="gr_fc_lon", step=1.0,
                        format="%.4g", disabled=not radius)
    elif kind == "spd":
        if limit is not None and radius > limit:
            st.error(f"The footpoint region's radius r = {radius:g} exceeds τ_m + τ = "
                     f"{limit:g}: on SPD the sensitivity proof covers footpoints within "
                     "τ_m + τ of the centre only. Using r = τ_m + τ.")
        st.caption("Footpoint region centre: the ball centre c·I above (0: the ball of radius "
                   "τ_m + τ, the proof's support).")
    elif radius:
        st.caption("Footpoint region centre: the template shape (the manifold's default "
                   "point).")


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
                st.warning(r.get("advice") or (
                    f"{100 * r['share']:.3g}% of the rows are affected ({r['what']}), more than "
                    f"{100 * G.CLIP_WARN:g}%: the release would describe the clipped data, not "
                    "yours. Widen the public bound from domain knowledge (not from these "
                    "counts) before releasing."), icon=r.get("icon", ":material/content_cut:"))


SCHEME_HELP = ("Joint: one K-norm gradient mechanism over (p, v) with ε = ε_p + ε_v and "
               "sensitivity √(Δ_p² + Δ_v²), covered by the sensitivity proof. Sequential (the "
               "papers): footpoint with ε_p, then vectors with ε_v; its footpoint stage uses the "
               "data's own shooting vector, which the proof does not cover, so it is never "
               "labelled private.")
SAMPLER_OPEN = "gr_sampler_open"


def sampler_section():
    """The "Advanced: sampler" section (its values are read by :func:`ui.gr_values.
    sampler_values`).

    Built only while open (:func:`ui.session.lazy_expander`: five input widgets less before the
    page's first plot); closed, its values come from the session (a shared URL's included). It
    opens on the first run when a setting differs from its default (a shared scenario says so).
    """
    ss = st.session_state
    changed = (ss["gr_chain"] != G.DEFAULT_CHAIN or ss["gr_burn"] != G.DEFAULT_BURN_IN
               or ss["gr_sampler"] != "auto" or ss["gr_fix_seed"])
    box = lazy_expander("Advanced: sampler", SAMPLER_OPEN, expanded=changed, keep=SAMPLER_KEYS)
    if box is None:
        return
    with box:
        st.number_input("Chain length (steps kept)", 50, CAPS["gr_chain"], key="gr_chain",
                        step=50)
        st.number_input("Burn-in (tuning steps)", 0, CAPS["gr_chain"], key="gr_burn", step=50)
        st.radio("Sampler", tuple(G.SAMPLER_LABELS), key="gr_sampler",
                 format_func=G.SAMPLER_LABELS.get,
                 help="Exact: rejection sampling, the release is ε-DP with δ = 0. "
                      "MCMC: Metropolis-Hastings chains (length and burn-in below); "
                      "no δ is certified, so the label says approximately private.")
        fix_seed = st.checkbox("Fix the release seed (reproducible demo, not for publication)",
                               key="gr_fix_seed")
        st.number_input("Release seed", 0, 10**6, key="gr_release_seed", disabled=not fix_seed)
        st.caption("Chain settings apply to MCMC only. Longer chains mix better (watch ESS "
                   "and R-hat) but take longer. "
                   "Without a fixed seed the randomness comes from the operating system.")
