"""Geodesic regression: a private footpoint and shooting vectors next to the non-private fit.

Widgets (:mod:`ui.gr_settings`) -> the release's request (:meth:`ui.logic.geodesic_regression.
ReleaseSettings.request`, a dpcore request) -> dpcore -> figures. The plan, the cost line, the
work estimate, the predicted error, the release and the exported script all read that one
request (:mod:`ui.logic.gr_request`). A release happens only when the Release button is
pressed; it is kept in ``st.session_state`` for this page and recorded in the session's privacy
ledger. Deterministic work (data generation, the non-private fit of generated data) is cached;
releases and uploaded data never are. In strict mode the covariate range of an uploaded file
may be estimated under DP with a small stated ε_b ("Estimate privately",
:mod:`ui.logic.private_bounds`), confirmed, capped and recorded in the ledger like a release;
the estimate fills the range fields and the release states it.

Layout: the settings on the left; on the right the figure, the release controls under it and
the release's numbers. The settings are read from the session state first (:mod:`ui.gr_values`)
and the figure drawn before their widgets, so the browser gets the chart first.
"""

from typing import NamedTuple

import streamlit as st

from ui import gr_settings as S
from ui import gr_values as V
from ui import rat_preset as RP
from ui import two_stage as TSW
from ui.figures import show_figure
from ui.first_paint import chart_first
from ui.gr_view import release_numbers
from ui.logic import geodesic_regression as G
from ui.logic import gr_request as R
from ui.logic import private_bounds as PB
from ui.logic import regression_data as D
from ui.logic import two_stage as TS
from ui.logic import upload as U
from ui.progress import RunProgress, cancelled_notice
from ui.release_panel import release_panel
from ui.session import (
    PageSettings,
    export_buttons,
    formula_notes,
    lazy_expander,
    release_button,
)
from ui.widgets import request_key

PAGE = "Geodesic regression"
LAST = "gr_last"  # the last release of this page
BUTTON = "gr_release_button"
RUN = "gr_release"  # key of the progress bar and its Cancel button
settings_state = PageSettings("gr")
init = settings_state.init


class Settings(NamedTuple):
    """What :func:`read_settings` read and derived, before any settings widget is drawn."""

    settings: object  # ui.logic.geodesic_regression.ReleaseSettings
    request: object  # the release's dpcore request, or None
    data: object  # ui.gr_values.DataChoice
    budget: object  # ui.gr_values.Budget
    bounds: object  # ui.gr_values.Bounds
    fit: object  # the non-private fit, or None
    problem: str | None  # a public bound the request cannot use, said under the settings
    preview: list | None  # the clipping preview's rows


@st.cache_data(show_spinner=False, max_entries=64)
def cached_fit(kind, param, x, y, covariate_range):
    # Only generated data reach this cache; uploaded data are fitted without caching.
    return G.fit_nonprivate(kind, param, x, y, covariate_range)


@st.cache_data(show_spinner=False, max_entries=32)
def cached_prediction(key, _request, seed=0):
    # Keyed by the request's public description (``key``, its script dict as JSON) and the
    # prediction's fixed seed; the request itself is not hashed by Streamlit (the leading
    # underscore).
    return R.predict_error(_request, seed=seed)


def accuracy_section(request, kind):
    """Predicted error of the release the button would make (public inputs only)."""
    if st.toggle("Predict the error before releasing", key="gr_predict",
                 help="Simulates the exact private target on a model data set of the same n "
                      "and public bounds (no data used, nothing spent)."):
        with st.spinner("Simulating the exact target on model data…"):
            pred = cached_prediction(request_key(request), request)
        st.info("  \n".join(G.accuracy_lines(kind, pred)), icon=":material/target:")


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


def release_controls(settings, request, data, fit, signature, estimated):
    """What the release will be (its sampler and label, the predicted error, its cost and
    time), the Release button and the downloads; draws the release when the button is
    confirmed. Everything here reads ``request``, the release's dpcore request (None while
    the data or the bounds cannot be used). Returns the sampler plan (None without a
    request)."""
    kind, param, source, dataset = settings.kind, settings.param, data.source, data.dataset
    mcmc_ok = True
    plan = None
    if request is not None:
        plan = R.plan_release(request)
        if plan.get("refusal"):
            # 'exact only' above the public bound on its work: the library refuses it before
            # sampling, so the button is disabled and the reason shown.
            st.error(f"{plan['refusal']}\n\nOn this page: lower ε, n or the number of draws, "
                     "or choose another sampler.", icon=":material/block:")
            mcmc_ok = False
        elif plan.get("two_stage"):
            (st.success if plan["guarantee"] == "private" else st.warning)(
                TSW.two_stage_plan_text(plan, request.epsilon),
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
            offer = TS.exact_two_stage_offer(settings, request.n)
            reach = (R.exact_reach_text(request) if plan["exact_possible"]
                     and settings.sampler != "mcmc" else None)
            st.warning(
                f"This release will use **MCMC** ({why}) and be labelled **approximately private "
                "(MCMC; δ not certified)**. For an exact, private release lower ε, n or the "
                "number of draws ('exact only' is refused above the same public limit on the "
                "work)" + ("." if offer is None else
                           f", or tick **Two-stage** in section 3: a private centre first "
                           f"(ε₁ = {offer:g} more), then the geodesics drawn exactly near it.")
                + ("" if reach is None else " " + reach),
                icon=":material/warning:")
            futile = RP.futile_release_note(source, settings, request.n)
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
            accuracy_section(request, kind)

    if not data.group_ok:
        st.info("Confirm above that the largest group size is public to release.",
                icon=":material/group:")
    b1, b2, b3 = st.columns([1, 1.6, 1.4])
    help_text = ("Draw a private release with these settings (after a confirmation stating "
                 "its cost).")
    release = None
    if request is None:  # nothing to release yet: the button is shown, disabled
        release_button(BUTTON, {"text": None, "error": None}, container=b1, disabled=True,
                       help=help_text)
    else:
        def draw_geodesics(progress):
            release, notes = R.make_release(request, dataset, progress=progress)
            # A range filled by an estimate under DP: the release says so.
            return PB.annotate_release(release, estimated), {"notes": notes}

        work, work_ok = R.estimate_work(request)
        entry = release_panel(
            PAGE, request, draw_geodesics, key="gr", signature=signature, work=work,
            work_ok=work_ok, work_caption=G.time_estimate_text(work), button=BUTTON, run=RUN,
            last=LAST, disabled=fit is None or not mcmc_ok or not data.group_ok,
            on_page="lower n, the number of draws or the chain length (or ε, for an exact "
                    "sampler).", help=help_text, button_box=b1)
        release = None if entry is None else entry["release"]
    if release is not None:
        b2.download_button("Download release", G.release_json(release),
                           file_name="geodesic_regression_release.json", mime="application/json",
                           key="gr_download_release", on_click="ignore")
    if dataset is not None and dataset.generated:
        b3.download_button("Download data", D.data_csv(kind, param, dataset),
                           file_name=f"{source}_{kind}.csv", mime="text/csv",
                           key="gr_download_data", on_click="ignore")
    if st.session_state.get(LAST) and release is None:
        st.info("Settings changed since the last release (it stays in the ledger). "
                "Press **Release** to draw a private release for these settings.")
    return plan


def read_settings(data_box):
    """The settings, read from the session state before their widgets are drawn
    (:mod:`ui.gr_values`), the release's request (None while the data or the bounds cannot be
    used), the non-private fit and what the settings column says under its sections (a
    problem with the public bounds, the clipping preview). An uploaded file is read through
    its widgets: section 1 is then drawn here, into ``data_box``."""
    data = V.read_data(init)
    if data.source == "upload":
        with data_box:
            data = S.data_section(data, init)
    budget = V.read_budget(init)
    bounds = V.read_bounds(init, data, budget)
    settings = G.ReleaseSettings(
        kind=data.kind, param=data.param, eps_p=budget.eps_p, eps_v=budget.eps_v,
        mode=bounds.mode, tau=bounds.tau, covariate_range=bounds.covariate_range,
        tau_m=bounds.tau_m, center=bounds.center, n_footpoints=budget.n_foot,
        n_vectors=budget.n_vec, chain_length=bounds.chain, burn_in=bounds.burn, seed=bounds.seed,
        scheme=budget.scheme, sampler=bounds.sampler, max_speed=bounds.max_speed,
        footpoint_radius=None if bounds.two else bounds.footpoint_radius, two_stage=bounds.two)
    # Settings, never data, go to the URL; also keep an in-session copy for page switches.
    settings_state.finish()

    request = fit = problem = preview = None
    cr = bounds.covariate_range
    if cr is not None and not cr[1] > cr[0]:
        problem = "The covariate range needs low < high."
    elif data.dataset is not None:
        dataset = data.dataset
        try:
            request = settings.request(dataset.n)
        except ValueError as exc:  # a public input the request rejects, said on the page
            problem = str(exc)
        else:
            cr = G.covariate_range_for(settings, dataset)
            fit = (cached_fit if dataset.generated else G.fit_nonprivate)(
                data.kind, data.param, dataset.x, dataset.y, cr)
            preview = (G.clipping_preview(settings, dataset, fit)
                       + TS.stage_two_preview(settings, dataset, fit))
    return Settings(settings, request, data, budget, bounds, fit, problem, preview)


def settings_column(read, data_box):
    """The settings' widgets (left column), drawn after the figure with the values ``read``
    (section 1 into ``data_box``, unless an upload drew it already)."""
    data = read.data
    if data.source != "upload":
        with data_box:
            S.data_section(data, init)
    S.budget_section(read.budget)
    S.bounds_section(read.bounds, data, read.budget)
    if data.source == "rats" and data.dataset is not None:
        RP.show_rat_preset()
    if read.problem:
        st.error(read.problem)
    if read.preview is not None:
        S.show_clipping_preview(read.preview)


def figure_section(settings, data, fit, release, met, signature, cut=False):
    """The verdict on a release (with the search for a useful budget when it is not), the
    figures of the fit and the release (``cut``: a visit's first run may end at the first
    figure, :func:`ui.first_paint.chart_first`)."""
    kind, dataset = settings.kind, data.dataset
    if met is not None:
        # The verdict comes before the figure: an unusable release is read as such.
        verdict = G.usefulness(met, dataset.n, met["eps_per_geodesic"])
        if verdict["useful"]:
            st.success(verdict["text"], icon=":material/check_circle:")
        else:
            st.warning(verdict["text"], icon=":material/error:")
            useful_budget_section(settings, dataset, fit, signature)
    kendall_range, panels = None, 4
    if kind == "kendall":
        lo_c, hi_c = fit.covariate_range
        current = st.session_state.get("gr_kx")
        if current is None or not lo_c <= current[0] <= current[1] <= hi_c:
            st.session_state["gr_kx"] = (float(lo_c), float(hi_c))
        k1, k2 = st.columns([3, 1])
        kendall_range = k1.slider("Covariate values of the shape panels", float(lo_c),
                                  float(hi_c), key="gr_kx")
        init("gr_kpanels", None, 4, int, bounds=(1, 8))
        panels = int(k2.number_input("Panels", 1, 8, key="gr_kpanels"))
    figure_kw = dict(covariate_name={"example": "age (years)",
                                     "rats": "age (days)"}.get(data.source, data.covariate),
                     kendall_range=kendall_range, kendall_panels=panels)
    if kind == "sphere":
        # Stateful tabs: only the open one is drawn (the flat map first, a 2D chart; the 3D
        # globe, the slowest figure to draw in a browser, when asked for).
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
            for caption, fig in G.regression_figures(settings.manifold, dataset, fit, release,
                                                     sphere_view=view, **figure_kw):
                show_figure(st, fig, width="stretch")
                if cut:
                    chart_first()  # a visit's first run ends at its chart (ui.first_paint)
                st.caption(caption)


def main():
    """The page: settings (read first) -> the release's request -> dpcore -> figures, then the
    settings' widgets."""
    st.title("Geodesic regression")
    st.markdown(
        "Fit a geodesic to manifold-valued responses and release its footpoint p and shooting "
        "vector v with differential privacy (K-norm gradient mechanism, paper 002). Compare the "
        "private geodesics with the non-private fit, and read off what privacy cost."
    )
    # The settings on the left; on the right the figure, the release under it and its numbers:
    # the figure stays in view while the settings change.
    left, right = st.columns([2, 3], gap="large")
    data_box = left.container()
    fig_box, controls_box, numbers_box = right.container(), right.container(), right.container()
    # Every setting is read from the session state first, so the figure is sent to the browser
    # before the ~20 input widgets of the settings column (each costs the browser 10-20 ms to
    # mount); the widgets are drawn after it with the same values.
    read = read_settings(data_box)
    settings, request, data, fit, bounds = (read.settings, read.request, read.data, read.fit,
                                            read.bounds)
    signature = (settings, data.key, getattr(data.dataset, "description", None))

    def controls():
        with controls_box:
            return release_controls(settings, request, data, fit, signature, bounds.estimated)

    # A release confirmed in its dialog is made by the release controls: then they come before
    # the figure in the script, so the release is in it. Otherwise after the settings.
    confirmed = bool(st.session_state.get(f"{BUTTON}_confirmed"))
    plan = controls() if confirmed else None
    last = st.session_state.get(LAST)
    release = last["release"] if last and last["signature"] == signature else None

    if fit is None:
        fig_box.info("The non-private fit and the private geodesics are drawn here once the data "
                     "and the public bounds on the left can be used.",
                     icon=":material/insights:")
    else:
        met = (None if release is None else
               G.release_metrics(settings.manifold, data.dataset, release, fit))
        with fig_box:
            # (not in a run that releases: a confirmed release runs whole)
            figure_section(settings, data, fit, release, met, signature, cut=not confirmed)
        with numbers_box:
            release_numbers(settings, fit, release, met, last["notes"] if release else [])
    with left:
        settings_column(read, data_box)
    if not confirmed:
        plan = controls()

    if request is not None:
        export_section(request, data, bounds)
    col_a, col_t = st.columns([2, 3], gap="medium")
    with col_a, st.container(border=True):
        st.markdown("**Assumptions in force**")
        st.markdown("\n".join(G.assumption_rows(settings, release, plan,
                                                estimated=bounds.estimated)))
    formula_notes("gr_notes", teaching_notes, where=col_t)


def export_section(request, data, bounds):
    """The scenario as a script or notebook, from the release's request and the data's
    public description (synthetic settings, the example, the preset, or an upload's mapping
    and file name; never the data)."""
    source, read = data.source, data.read
    extra = (data.synthetic if source == "synthetic" else
             {"example": (D.EXAMPLE_N, D.EXAMPLE_SEED, D.EXAMPLE_AGES)} if source == "example"
             else {"data_file": "assets/data/rat_skulls.csv"} if source == "rats" else
             {"renormalize": data.renormalize, "covariate": data.covariate,
              "person": read.mapping.person,
              "columns": U.mapped_columns(read.manifold, read.mapping),
              "data_file": getattr(st.session_state.get("gr_upload"), "name", None),
              "bounds_estimate": ({"epsilon": bounds.estimate["epsilon"],
                                   "notes": bounds.estimated} if bounds.estimated else None)})
    # Built only once opened: its caption and two download buttons (and the script and
    # notebook they hold) are not made on every run, nor drawn with the first plot.
    box = lazy_expander("Take it with you: this scenario as a Python script or notebook",
                        "gr_export_open")
    if box is None:
        return
    with box:
        st.caption("Public settings only: synthetic data come from their seed, an uploaded "
                   "file is read from a path you fill in (never embedded). The release "
                   "draws from OS entropy unless RELEASE_SEED is set.")
        script = R.release_script(request, source="upload" if source == "rats" else source, **extra)
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
