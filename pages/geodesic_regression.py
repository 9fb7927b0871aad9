"""Geodesic regression: a private footpoint and shooting vectors next to the non-private fit.

Widgets -> :mod:`ui.logic` (which calls dpcore) -> :mod:`ui.figures`. A release happens
only when the Release button is pressed; it is kept in ``st.session_state`` for this page and
recorded in the session's privacy ledger. Deterministic work (data generation, the non-private
fit of generated data) is cached; releases and uploaded data never are. In strict mode the
covariate range of an uploaded file may be estimated under DP with a small stated ε_b
("Estimate privately", :mod:`ui.logic.private_bounds`), confirmed, capped and recorded in the
ledger like a release; the estimate fills the range fields and the release states it. Uploads go
through the shared upload-and-mapping widget (:mod:`ui.upload`), as on the other pages.

Layout: the settings on the left; on the right the figure, the release controls under it and
the release's numbers.
"""

import hashlib
from dataclasses import replace

import streamlit as st

from ui import covariate_estimate as CE
from ui import manifolds as M
from ui import rat_preset as RP
from ui import two_stage as TSW
from ui.caps import CAPS
from ui.figures import show_figure
from ui.logic import export as X
from ui.logic import geodesic_regression as G
from ui.logic import privacy_text as T
from ui.logic import private_bounds as PB
from ui.logic import regression_data as D
from ui.logic import two_stage as TS
from ui.logic import upload as U
from ui.progress import RunProgress, cancelled_notice, show_work
from ui.risk import show_risk
from ui.session import (
    PageSettings,
    export_buttons,
    finish_release,
    formula_notes,
    lazy_expander,
    planned_cost,
    record_release,
    release_button,
    release_error,
    rows_per_person,
    set_page_rows,
    show_cost,
)
from ui.upload import (
    confirm_person_rows,
    file_bytes,
    header_caption,
    map_file,
    param_from_header,
)

PAGE = "Geodesic regression"
LAST = "gr_last"  # the last release of this page
BUTTON = "gr_release_button"
RUN = "gr_release"  # key of the progress bar and its Cancel button
SOURCES = {"synthetic": "Synthetic (paper protocol)", "example": "Generated example",
           "rats": "Preset: rat skulls (real data)", "upload": "Upload a CSV"}
settings_state = PageSettings("gr")
init = settings_state.init


@st.cache_data(show_spinner=False, max_entries=64)
def cached_synthetic(kind, param, n, noise, seed):
    return G.synthetic_dataset(kind, param, n, noise, seed)


@st.cache_data(show_spinner=False, max_entries=16)
def cached_example(kind, param):
    return D.example_dataset(kind, param)


@st.cache_data(show_spinner=False, max_entries=64)
def cached_fit(kind, param, x, y, covariate_range):
    # Only generated data reach this cache; uploaded data are fitted without caching.
    return G.fit_nonprivate(kind, param, x, y, covariate_range)


@st.cache_data(show_spinner=False, max_entries=32)
def cached_prediction(settings, n, seed=0):
    return G.predict_accuracy(settings, n, seed=seed)


def accuracy_section(settings, n):
    """Predicted error of the release the button would make (public inputs only)."""
    if st.toggle("Predict the error before releasing", key="gr_predict",
                 help="Simulates the exact private target on a model data set of the same n "
                      "and public bounds (no data used, nothing spent)."):
        with st.spinner("Simulating the exact target on model data…"):
            pred = cached_prediction(settings, n)
        st.info("  \n".join(G.accuracy_lines(settings.kind, pred)), icon=":material/target:")


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


def upload_data(kind, param, found):
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


def useful_budget_section(settings, dataset, fit, signature):
    """After a release judged not useful: search the smallest useful n·ε by simulation (a
    preview on the user's data, nothing released or recorded)."""
    key = "gr_useful_search"
    found = st.session_state.get(key)
    if found is not None and found["signature"] == signature:
        st.info(found["text"], icon=":material/query_stats:")
        return
    seconds = G.useful_search_seconds(settings, dataset.n)
    too_long = seconds > G.DEFAULT_WORK_BUDGET
    st.caption("How large must n·ε be? The search simulates releases of this data set at 2× "
               "to 64× the budget (seeded MCMC draws: a preview for your eyes, nothing is "
               "released or recorded) and stops at the first useful one. "
               + (f"At this n it could take {seconds:.0f} s, above the work budget of "
                  f"{G.DEFAULT_WORK_BUDGET:g} s: lower the number of draws or n."
                  if too_long else f"At most about {max(seconds, 1):.0f} s."))
    cancelled_notice(key, "The search")
    if st.button("Find the smallest useful n·ε", key="gr_useful_button", disabled=too_long,
                 icon=":material/query_stats:"):
        with RunProgress("Simulating larger budgets", key=key, estimate=seconds) as bar:
            result = G.useful_budget_search(settings, dataset, fit, progress=bar)
        st.session_state[key] = {"signature": signature,
                                 "text": G.useful_budget_text(result, dataset.n)}
        st.info(st.session_state[key]["text"], icon=":material/query_stats:")


def footpoint_region_inputs(kind, source, limit=None):
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


def sampler_section():
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


def release_controls(settings, dataset, fit, source, signature, estimated, group_ok=True):
    """What the release will be (its sampler and label, the predicted error, its cost and
    time), the Release button and the downloads; draws the release when the button is
    confirmed (``group_ok``: the rows per person of an upload's person column confirmed
    public). Returns the sampler plan (None without data)."""
    kind, param = settings.kind, settings.param
    mcmc_ok = True
    plan = None
    if dataset is not None:
        plan = TS.sampler_plan(settings, len(dataset.x))
        if plan.get("refusal"):
            # 'exact only' above the public bound on its work: the library refuses it before
            # sampling, so the button is disabled and the reason shown.
            st.error(f"{plan['refusal']}\n\nOn this page: lower ε, n or the number of draws, "
                     "or choose another sampler.", icon=":material/block:")
            mcmc_ok = False
        elif plan.get("two_stage"):
            (st.success if plan["guarantee"] == "private" else st.warning)(
                TSW.two_stage_plan_text(plan, TS.planned_epsilon(settings)),
                icon=":material/join_inner:")
            if plan["guarantee"] != "private" and settings.sampler != "mcmc":
                mcmc_ok = st.checkbox("Draw by MCMC anyway (approximately private)",
                                      key="gr_mcmc_ok", help=G.MCMC_OPT_IN_HELP)
        elif plan["guarantee"] == "private":
            st.success(G.exact_plan_text(plan), icon=":material/verified:")
        elif plan["guarantee"] == "approximately private":
            why = ("you chose MCMC" if settings.sampler == "mcmc" else
                   "no exact sampler exists for this space" if not plan["exact_possible"] else
                   f"exact sampling could need up to {plan['work']:.3g} gradient terms at this "
                   f"n × ε (limit {plan['limit']:.3g})")
            st.warning(
                f"This release will use **MCMC** ({why}) and be labelled **approximately private "
                "(MCMC; δ not certified)**. For an exact, private release lower ε, n or the "
                "number of draws ('exact only' is refused above the same public limit on the "
                "work).",
                icon=":material/warning:")
            futile = RP.futile_release_note(source, settings, len(dataset.x))
            if futile:  # issue 14: the preset's number instead of a meaningless release
                st.info(futile, icon=":material/block:")
                mcmc_ok = settings.sampler == "mcmc"
            elif settings.sampler != "mcmc":
                # MCMC is an explicit choice, never a silent fallback (issue 11).
                mcmc_ok = st.checkbox(
                    "Draw by MCMC anyway (approximately private)", key="gr_mcmc_ok",
                    help=G.MCMC_OPT_IN_HELP)
        elif plan["guarantee"] == "not covered":
            st.warning("The sequential scheme is **not covered by the sensitivity proof**: its "
                       "release is labelled NOT PRIVATE. Choose the joint scheme for a private "
                       "release.", icon=":material/warning:")

        if (plan["guarantee"] in ("private", "approximately private")
                and settings.scheme == "joint" and settings.two_stage is None):
            accuracy_section(settings, len(dataset.x))

    cost = {"text": None, "error": None}
    work = None
    if dataset is not None:
        cost = planned_cost(epsilon=TS.planned_epsilon(settings), guarantee=plan["guarantee"])
        show_cost(cost)
        show_risk("gr", epsilon=TS.planned_epsilon(settings), guarantee=plan["guarantee"])
        work, work_ok = TS.work_estimate(settings, len(dataset.x))
        show_work(work, work_ok, caption=G.time_estimate_text(work),
                  on_page="lower n, the number of draws or the chain length (or ε, for an "
                          "exact sampler).")
        if not work_ok:
            mcmc_ok = False

    release_error(BUTTON)
    cancelled_notice(RUN, "The release")
    if not group_ok:
        st.info("Confirm above that the largest group size is public to release.",
                icon=":material/group:")
    b1, b2, b3 = st.columns([1, 1.6, 1.4])
    pressed = release_button(BUTTON, cost, container=b1,
                             disabled=fit is None or not mcmc_ok or not group_ok,
                             help="Draw a private release with these settings (after a "
                                  "confirmation stating its cost).")
    if pressed and fit is not None:
        error = None
        # A Cancel interrupts the run inside this block: nothing below it runs, so a cancelled
        # release is neither kept nor recorded in the ledger.
        with RunProgress("Drawing the release", key=RUN,
                         estimate=None if work is None else work.seconds) as bar:
            try:
                release, notes = TS.run_release(settings, dataset, progress=bar)
            except Exception as exc:  # show the reason on the next run, keep the page alive
                error = str(exc)
            else:  # a range filled by an estimate under DP: the release says so
                release = PB.annotate_release(release, estimated)
        if error is None:
            record_release(PAGE, release)
            st.session_state[LAST] = {"release": release, "notes": notes, "signature": signature}
        finish_release(BUTTON, error=error)

    last = st.session_state.get(LAST)
    release = last["release"] if last and last["signature"] == signature else None
    if release is not None:
        b2.download_button("Download release", G.release_json(release),
                           file_name="geodesic_regression_release.json", mime="application/json",
                           key="gr_download_release", on_click="ignore")
    if dataset is not None and dataset.generated:
        b3.download_button("Download data", D.data_csv(kind, param, dataset),
                           file_name=f"{source}_{kind}.csv", mime="text/csv",
                           key="gr_download_data", on_click="ignore")
    if last and release is None:
        st.info("Settings changed since the last release (it stays in the ledger). "
                "Press **Release** to draw a private release for these settings.")
    return plan


def main():
    """The page: widgets -> page logic -> dpcore -> figures."""
    st.title("Geodesic regression")
    st.markdown(
        "Fit a geodesic to manifold-valued responses and release its footpoint p and shooting "
        "vector v with differential privacy (K-norm gradient mechanism, paper 002). Compare the "
        "private geodesics with the non-private fit, and read off what privacy cost."
    )

    # ============================================================================== settings
    # The settings on the left; on the right the figure, the release under it and its numbers:
    # the figure stays in view while the settings change.
    left, right = st.columns([2, 3], gap="large")
    fig_box, controls_box, numbers_box = right.container(), right.container(), right.container()
    with left:
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
                dataset, read, renormalize, group_ok = upload_data(kind, param, found)
                if read is not None:
                    covariate, file_digest = read.mapping.covariate, read.digest
                    upload_digest = (read.digest, renormalize, read.mapping)
            if data_error:
                st.error(data_error)
            elif dataset is not None:
                st.caption(dataset.description)

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
                        kind, source, limit=None if tau_m is None else tau_m + tau)
                    if kind != "spd":  # SPD: the region is about the ball's centre
                        center = region_center
                two = TSW.two_stage_inputs(kind, scheme, eps_p, eps_v, n_foot * n_vec, init)
                st.caption("Public means: fixed before seeing the data (e.g. from the study "
                           "design). Strict mode clips covariates and residuals and projects "
                           "responses to these bounds, so the guarantee holds whatever the data.")
            chain, burn, sampler, fix_seed, release_seed = sampler_section()

        if source == "rats" and dataset is not None:
            RP.show_rat_preset()

        settings = G.ReleaseSettings(
            kind=kind, param=param, eps_p=float(eps_p), eps_v=float(eps_v), mode=mode, tau=tau,
            covariate_range=covariate_range, tau_m=tau_m, center=center, n_footpoints=n_foot,
            n_vectors=n_vec, chain_length=chain, burn_in=burn,
            seed=release_seed if fix_seed else None, scheme=scheme, sampler=sampler,
            max_speed=max_speed, footpoint_radius=None if two else footpoint_radius, two_stage=two)

        # Settings, never data, go to the URL; also keep an in-session copy for page switches.
        settings_state.finish()

        range_error = None
        if covariate_range is not None and not covariate_range[1] > covariate_range[0]:
            range_error = "The covariate range needs low < high."
            st.error(range_error)

        fit = None
        if dataset is not None:
            cr = G.covariate_range_for(settings, dataset) if range_error is None else None
            if cr is not None:
                if dataset.generated:
                    fit = cached_fit(kind, param, dataset.x, dataset.y, cr)
                else:
                    fit = G.fit_nonprivate(kind, param, dataset.x, dataset.y, cr)
                show_clipping_preview(G.clipping_preview(settings, dataset, fit))

        data_key = (source, upload_digest) if source == "upload" else (source,)
        signature = (settings, data_key, getattr(dataset, "description", None))

    # ============================================================================== release
    plan = None
    # Drawn under the figure, before it in the script: a release made here is in it.
    with controls_box:
        plan = release_controls(settings, dataset, fit, source, signature, estimated,
                                group_ok)
    last = st.session_state.get(LAST)
    release = last["release"] if last and last["signature"] == signature else None

    # ============================================================================== results
    if fit is None:
        fig_box.info("The non-private fit and the private geodesics are drawn here once the data "
                     "and the public bounds on the left can be used.",
                     icon=":material/insights:")
    else:
        col_fig, col_num = fig_box, numbers_box
        met = (None if release is None else
               G.release_metrics(kind, param, dataset, release, fit))
        if met is not None:
            # The verdict comes before the figure: an unusable release is read as such.
            verdict = G.usefulness(met, dataset.n, met["eps_per_geodesic"])
            if verdict["useful"]:
                col_fig.success(verdict["text"], icon=":material/check_circle:")
            else:
                col_fig.warning(verdict["text"], icon=":material/error:")
                with col_fig:
                    useful_budget_section(settings, dataset, fit, signature)
        with col_fig:
            kendall_range, panels = None, 4
            if kind == "kendall":
                lo_c, hi_c = fit.covariate_range
                current = st.session_state.get("gr_kx")
                if (current is None or not lo_c <= current[0] <= current[1] <= hi_c):
                    st.session_state["gr_kx"] = (float(lo_c), float(hi_c))
                k1, k2 = st.columns([3, 1])
                kendall_range = k1.slider("Covariate values of the shape panels", float(lo_c),
                                          float(hi_c), key="gr_kx")
                init("gr_kpanels", None, 4, int, bounds=(1, 8))
                panels = int(k2.number_input("Panels", 1, 8, key="gr_kpanels"))
            figure_kw = dict(covariate_name={"example": "age (years)",
                                             "rats": "age (days)"}.get(source, covariate),
                             kendall_range=kendall_range, kendall_panels=panels)
            if kind == "sphere":
                # Stateful tabs: only the open one is drawn (the flat map first, a 2D chart; the
                # 3D globe, the slowest figure to draw in a browser, when asked for).
                tab_map, tab_globe = st.tabs(["Map (2D)", "Globe (3D, rotatable)"],
                                             key="gr_view_sphere", on_change="rerun")
                views = [(tab_map, "map", tab_map.open is not False),
                         (tab_globe, "globe", bool(tab_globe.open))]
            else:
                views = [(st.container(), "globe", True)]
            for where, view, is_open in views:
                if not is_open:
                    continue
                with where:
                    for caption, fig in G.regression_figures(
                            kind, param, dataset, fit, release, sphere_view=view,
                            **figure_kw):
                        show_figure(st, fig, width="stretch")
                        st.caption(caption)

        with col_num:
            if release is None:
                st.metric("MSE of the non-private fit", f"{fit.mse:.4g}")
                st.caption("Press **Release** to draw private geodesics and compare.")
            else:
                if release.private:
                    st.success(f"Label: **{release.label}**", icon=":material/lock:")
                else:
                    st.warning(f"Label: **{release.label}**", icon=":material/warning:")
                m1, m2 = st.columns(2)
                m1.metric("MSE, non-private", f"{met['mse_nonprivate']:.4g}")
                m2.metric("MSE, private (mean)", f"{met['mse_private']:.4g}",
                          delta=f"{met['mse_private'] / max(met['mse_nonprivate'], 1e-300):.3g}× "
                                "non-private", delta_color="off", delta_arrow="off")
                m3, m4, m5 = st.columns(3)
                m3.metric("Footpoint shift", f"{met['footpoint_distance']:.3g}",
                          help="Mean geodesic distance d(p̃, p̂) over the private footpoints.")
                m4.metric("Vector angle", f"{met['angle_deg']:.3g}°",
                          help="Mean angle between v̂ and ṽ transported to p̂.")
                m5.metric("Length error", G.length_error_text(met["relative_length_error"]),
                          help=f"Mean of |ṽ| − |v̂| relative to |v̂| "
                               f"(absolute: {met['length_error']:+.3g}).")
                if met["scheme"] == "joint":
                    st.markdown(
                        "| | footpoint | shooting vector | joint (p, v) |\n|---|---|---|---|\n"
                        f"| sensitivity Δ | {met['delta_p']:.3g} | {met['delta_v']:.3g} | "
                        f"{met['delta_joint']:.3g} |\n"
                        f"| noise scale σ | – | – | {met['sigma_joint']:.3g} |\n"
                        f"| budget ε | – | – | {settings.eps_p + settings.eps_v:.3g} |"
                    )
                else:
                    st.markdown(
                        "| | footpoint | shooting vector |\n|---|---|---|\n"
                        f"| sensitivity Δ | {met['delta_p']:.3g} | {met['delta_v']:.3g} |\n"
                        f"| noise scale σ | {met['sigma_p']:.3g} | {met['sigma_v']:.3g} |\n"
                        f"| budget ε | {settings.eps_p:.3g} | {settings.eps_v:.3g} |"
                    )
                delta_text = ("not certified (MCMC)" if met["delta"] is None
                              else format(met["delta"], ".2g"))
                st.markdown(
                    f"ε per geodesic **{met['eps_per_geodesic']:.3g}**; this release "
                    f"({met['n_draws']} geodesics): ε = **{met['epsilon']:.3g}**, "
                    f"δ = {delta_text}. MSE over the draws ranges from "
                    f"{met['mse_private_min']:.3g} to {met['mse_private_max']:.3g}."
                )
                st.markdown("**Sampler diagnostics**")
                st.dataframe(G.diagnostics_table(met), hide_index=True, width="stretch")
                exact = all(d.get("exact") for d in release.diagnostics.values()
                            if isinstance(d, dict))
                diag_note = ("Acceptance near 0.3–0.5, large ESS and R-hat near 1 indicate mixed "
                             "chains.")
                if exact:
                    diag_note = ("Exact sampler: the draws follow the mechanism's density exactly, "
                                 "so there are no chains to diagnose (its acceptance rate depends "
                                 "on the data and is not shown).")
                elif settings.n_footpoints > 1:
                    diag_note += (" With several footpoints the vector chains target different "
                                  "densities, so ESS and R-hat are computed per footpoint (worst "
                                  "shown).")
                st.caption(diag_note)
                for flag in G.diagnostic_flags(release):
                    st.error(flag, icon=":material/running_with_errors:")
                hint = G.noise_hint(kind, met, release.mode)
                if hint:
                    st.info(hint, icon=":material/lightbulb:")
                for note in last["notes"]:
                    st.warning(note, icon=":material/warning:")
                with st.expander(f"Caveats of this release ({len(release.caveats)})"):
                    for c in release.caveats:
                        st.markdown(f"- {c}")

    if dataset is not None:
        export_section(settings, source, dataset.n, (
            {"n": n, "noise": noise, "seed": seed} if source == "synthetic" else
            {"example": (D.EXAMPLE_N, D.EXAMPLE_SEED, D.EXAMPLE_AGES)} if source == "example"
            else {"data_file": "assets/data/rat_skulls.csv"} if source == "rats" else
            {"renormalize": renormalize, "covariate": covariate, "person": read.mapping.person,
             "columns": U.mapped_columns(read.manifold, read.mapping),
             "data_file": getattr(st.session_state.get("gr_upload"), "name", None),
             "bounds_estimate": ({"epsilon": estimate["epsilon"], "notes": estimated}
                                 if estimated else None)}))

    # ============================================================================== notes
    col_a, col_t = st.columns([2, 3], gap="medium")
    with col_a, st.container(border=True):
        st.markdown("**Assumptions in force**")
        st.markdown("\n".join(G.assumption_rows(settings, release, plan, estimated=estimated)))
    formula_notes("gr_notes", teaching_notes, where=col_t)


def export_section(settings, source, n, extra):
    """The scenario as a script or notebook; ``extra`` names its data (the keyword arguments
    of :func:`ui.logic.export.regression_script` for this data source); a two-stage release
    is exported as its request (``n`` rows)."""
    with st.expander("Take it with you: this scenario as a Python script or notebook"):
        st.caption("Public settings only: synthetic data come from their seed, an uploaded "
                   "file is read from a path you fill in (never embedded). The release "
                   "draws from OS entropy unless RELEASE_SEED is set.")
        script = X.regression_script(
            settings.manifold, settings.release_kwargs(),
            source="upload" if source == "rats" else source,
            two_stage=TS.request(settings, n) if settings.two_stage else None, **extra)
        export_buttons(script, "geodesic_regression", "gr")


def teaching_notes():
    """The formulas behind the page (paper 002)."""
    st.markdown("Geodesic regression minimizes the energy (covariates rescaled to [0, 1]):")
    st.latex(G.LATEX_NOTES["energy"])
    st.markdown("Its Riemannian gradient uses the adjoint Jacobi maps of the exponential map:")
    st.latex(G.LATEX_NOTES["gradient"])
    st.markdown("The K-norm gradient mechanism draws parameters whose energy gradient is "
                "small, first the footpoint (budget ε_p), then the vector at it (budget ε_v):")
    st.latex(G.LATEX_NOTES["kng"])
    st.markdown("The joint scheme draws both at once with one budget ε = ε_p + ε_v and no "
                "conditioning on the non-private v̂:")
    st.latex(G.LATEX_NOTES["kng_joint"])
    st.markdown("The sensitivity of the gradient depends on the curvature lower bound κ_l "
                "(S² and Kendall: κ_l > 0; R^d: 0; SPD(2): −1/2), on τ and on n:")
    st.latex(G.LATEX_NOTES["sensitivity_flat"])
    st.latex(G.LATEX_NOTES["sensitivity_neg"])
    st.markdown("Budgets add up: one geodesic costs ε_p + ε_v. Larger n shrinks Δ and with it "
                "the noise; negative curvature inflates it through cosh and sinh.")


main()
