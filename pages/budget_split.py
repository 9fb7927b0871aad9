"""Budget split: how dividing ε between footpoint and shooting vector changes the error.

A simulation on synthetic data (paper 002 §4 protocol, with the Geodesic regression page's
public designs in strict mode), not a release of anyone's data, so nothing here enters the
privacy ledger. Settings (:mod:`ui.bs_settings`, read before their widgets are drawn) ->
:mod:`ui.logic` -> :func:`dpcore.experiments.budget_sweep` ->
:mod:`dpcore.visualization.budget`; the figures are drawn before the settings' widgets. In
strict mode no cell comes from Markov chains: exact draws where their public worst case is
within reach, else a prediction from the mechanism's asymptotic law, checked against its exact
target. The page's default simulation is computed on opening; other settings run on a button,
in chunks (view × n × replicate) with a progress bar; each chunk is a seeded, deterministic
computation cached with ``st.cache_data``.
"""

import dataclasses

import pandas as pd
import streamlit as st

from dpcore.visualization import budget as VB
from ui import bs_settings as S
from ui.figures import frame_key, show_figure
from ui.first_paint import chart_first
from ui.logic import budget_advice as A
from ui.logic import budget_split as B
from ui.logic import regression_data as D
from ui.progress import RunProgress, cancelled_notice, show_work
from ui.session import PageSettings, export_buttons, lazy_expander

RESULT = "bs_result"
RUNNING = "bs_running"
OPENED = "bs_opened"  # the default simulation was computed (or skipped) on opening
#: A strict simulation estimated within this many seconds is computed on opening the page
#: (paper mode's Markov chains run on the button only).
OPEN_SECONDS = 10.0
settings_state = PageSettings("bs")


@st.cache_data(show_spinner=False, max_entries=4000)
def cached_chunk(config, view, n, rep):
    # A seeded simulation on synthetic data: deterministic, so safe to cache and share. (No
    # progress callback inside: a cached function may not draw into the page's bar.)
    return B.run_chunk(config, view, n, rep)


def _start_run():
    """The Run button's callback: the run it starts renders the button disabled."""
    st.session_state[RUNNING] = True


def run_simulation(config, chunk_seconds, estimate):
    """Every unit of the simulation, with a progress bar updated after each unit (share of the
    estimated work done, time left) and a Cancel that takes effect at the next update; the
    results are stored only when every unit finished."""
    chunks = B.sweep_chunks(config)
    total = sum(chunk_seconds) or 1.0
    parts, done = [], 0.0
    try:
        with RunProgress("Simulating", key="bs_sim", estimate=estimate) as bar:
            for i, ((view, n, rep), seconds) in enumerate(
                    zip(chunks, chunk_seconds, strict=True), start=1):
                parts.append(cached_chunk(config, view, n, rep))
                done += seconds
                bar.label = f"Simulating: {i} of {len(chunks)} cells done"
                bar(done / total)
    except Exception as exc:  # show the reason, keep the page alive
        return str(exc)
    st.session_state[RESULT] = {"config": config, "df": pd.concat(parts, ignore_index=True)}
    return None


# ================================================================================ results
# Every rerun of the page (any widget change) redraws the last simulation from the same rows:
# its summary, table and line figures are kept per result rather than rebuilt (about 0.15 s of
# CPU a rerun). Each is a function of its arguments alone, and the rows are synthetic.
@st.cache_data(show_spinner=False, max_entries=16, hash_funcs={pd.DataFrame: frame_key})
def result_summary(df, kind):
    """:func:`ui.logic.budget_split.summary_of` of a simulation's rows."""
    return B.summary_of(df, kind)


@st.cache_data(show_spinner=False, max_entries=16, hash_funcs={pd.DataFrame: frame_key})
def result_table(df, kind):
    """:func:`ui.logic.budget_split.sweep_table` of a simulation's rows."""
    return B.sweep_table(df, kind)


@st.cache_data(show_spinner=False, max_entries=32, hash_funcs={pd.DataFrame: frame_key})
def split_figure(summary, **kwargs):
    """:func:`dpcore.visualization.budget.split_error_figure` of one view's summary."""
    return VB.split_error_figure(summary, **kwargs)


def show_views(shown, summary, unit):
    """The figures of the views in the data's unit (the heatmap with its best split)."""
    col1, col2 = st.columns(2, gap="medium")
    note = f"Line: mean of {shown.replicates} replicates; band: their range"
    if "unequal" in shown.views:
        show_figure(col1, split_figure(
            summary[summary["view"] == "unequal"], unit=unit, x="share",
            title=f"Error against the split of ε = {shown.total:g}",
            x_title="footpoint share ε_p / (ε_p + ε_v) (%)", subtitle=note), width="stretch")
        chart_first()  # a visit's first run ends at its first chart (ui.first_paint)
    if "equal" in shown.views:
        show_figure(col2, split_figure(
            summary[summary["view"] == "equal"], unit=unit, x="epsilon", log_x=True, log_y=True,
            title="Error against the total ε (equal split)",
            x_title="total ε = ε_p + ε_v per geodesic (log scale)", subtitle=note),
            width="stretch")
        chart_first()
    if "grid" in shown.views:
        lo_t, hi_t = float(2 * shown.grid_range[0]), float(2 * shown.grid_range[1])
        if not lo_t <= st.session_state.get("bs_best_total", -1.0) <= hi_t:
            st.session_state["bs_best_total"] = min(max(3.0, lo_t), hi_t)
        col_h, col_t = st.columns([3, 1], gap="medium")
        with col_t:
            best_total = st.slider("Total ε for the best split", lo_t, hi_t,
                                   key="bs_best_total", step=0.01)
        fig, best = VB.error_heatmap_figure(summary[summary["view"] == "grid"], best_total,
                                            unit=unit, n=shown.grid_n,
                                            replicates=shown.replicates)
        show_figure(col_h, fig, width="stretch")
        chart_first()
        with col_t:
            if best is None:
                st.warning("No unflagged grid cell fits within this total.")
            else:
                if best["excluded"]:
                    st.caption(f"{best['excluded']} affordable cell(s) passed over: they are "
                               "flagged (listed below).")
                st.metric("Best split within the total", f"ε_p = {best['eps_p']:.3g}",
                          delta=f"ε_v = {best['eps_v']:.3g}", delta_color="off",
                          delta_arrow="off")
                st.caption(f"RMS error {best['rms']:.3g} {unit} "
                           f"({A.SOURCE_WORDS.get(best['source'], best['source'])}) at "
                           f"ε_p + ε_v = {best['eps_p'] + best['eps_v']:.3g} ≤ {best_total:g}.")


def advise(shown, summary, unit):
    """The recommendation sentence and the button that carries a split to Geodesic
    regression (from the unequal view)."""
    st.subheader("Which split?")
    if "unequal" not in shown.views:
        st.caption("Compute the unequal view (section 2) for a recommendation at a fixed total.")
        return
    part = summary[summary["view"] == "unequal"]
    sizes = sorted(part["n"].unique())
    c1, c2 = st.columns(2)
    n = int(c1.selectbox("For sample size n", sizes, index=len(sizes) - 1, key="bs_rec_n"))
    tolerance = c2.slider("Good: within x% of the best error", 5, 50, 10, step=5,
                          key="bs_rec_tol", format="%d%%")
    rec, text = A.recommendation(part, n, unit=unit, tolerance=tolerance / 100.0)
    (st.success if rec is not None else st.warning)(text, icon=":material/recommend:")
    if rec is None:
        return
    choices = rec["good"].sort_values("rms")
    others = part[(part["n"] == n) & (part["scheme"] == "sequential")
                  & (part["flag"] == "")].drop(choices.index).sort_values("share")
    options = [*choices.index, *others.index]
    c1, c2 = st.columns([3, 2], vertical_alignment="bottom")
    pick = c1.selectbox("Split to use (flagged splits are not offered)", options,
                        format_func=lambda i: A.split_label(part.loc[i], unit),
                        key="bs_carry_pick")
    row = part.loc[pick]
    values, note = A.carry_settings(shown.kind, shown.param, n, float(row["eps_p"]),
                                    float(row["eps_v"]))
    c1.caption(f"Carries {note} and the manifold to Geodesic regression (its sample size "
               "stays that page's). There the joint "
               "scheme (its default, proven private) spends the total on footpoint and vector "
               "at once, so only the total counts; the split applies to the sequential "
               "scheme, which is labelled not private.")
    if c2.button("Use this split on Geodesic regression", type="primary",
                 icon=":material/arrow_forward:", key="bs_carry"):
        st.session_state.update(values)
        st.switch_page(A.GEODESIC_REGRESSION_PAGE)


def show_result(result, config):
    """The last simulation: settings, figures, advice, flags, table and CSV."""
    shown, df = result["config"], result["df"]
    if shown != config:
        changes = [f.name for f in dataclasses.fields(config)
                   if getattr(config, f.name) != getattr(shown, f.name)]
        st.info("Settings changed since this simulation (" + ", ".join(changes) + "); the "
                "figures show the last run. Press **Run simulation** to update.")
    summary, unit = result_summary(df, shown.kind)
    sources = summary["source"].value_counts()
    st.caption(
        f"{D.MANIFOLD_LABELS[shown.kind]}" + (f" (parameter {shown.param})" if shown.param
                                               else "")
        + f", {shown.mode} mode"
        + (f" with the public design (footpoint within {shown.footpoint_radius:g} of the "
           f"centre, speed ≤ {shown.max_speed:g}, noise {shown.noise:g})"
           if shown.footpoint_radius and shown.mode == "strict" else "")
        + f", {shown.replicates} replicates, {shown.n_footpoints} × {shown.n_vectors} "
        "geodesics per cell"
        + (f", chains {shown.burn_in} + {shown.chain_length}" if shown.mode == "paper" else "")
        + f", seed {shown.seed}. Synthetic data only.")
    show_views(shown, summary, unit)
    advise(shown, summary, unit)
    flags = B.flag_sentences(summary)
    if flags:
        st.warning(
            f"**{len(flags)} flagged cell(s)**, shown crossed out and never recommended: their "
            "numbers are not the mechanism's. "
            + ("A prediction is flagged where the asymptotic law is too far from the exact "
               "target (small n·ε, where a stage's law is broad or the target has far modes) "
               "or has none; raise n or ε there." if shown.mode == "strict" else
               "Raise the chain length and burn-in (section 3), or keep the budgets away from "
               "the extremes.") + "\n\n" + "\n".join(f"- {f}" for f in flags),
            icon=":material/running_with_errors:")
    if shown.mode == "strict":
        st.caption(f"No Markov chains: {int(sources.get('exact', 0))} cell(s) from exact "
                   f"draws, {int(sources.get('law', 0))} predicted from the asymptotic law "
                   "(each checked against its exact target).")
    st.markdown(f"**Errors in the data's units** ({unit}): the root-mean-square distance "
                "√Ē of the private geodesics to the responses (mean over replicates, with the "
                "lowest and highest replicate), beside the papers' log MSE.")
    # The table is built only once its section is opened: a data grid drawn with the page's
    # first chart delays it by about 0.25 s in the browser (its code is loaded on first use).
    box = lazy_expander("Every cell as a table (sortable)", "bs_table_open")
    if box is not None:
        table = result_table(df, shown.kind)
        fmt = {c: st.column_config.NumberColumn(format="%.3f") for c in table.columns
               if table[c].dtype.kind == "f"}
        box.dataframe(table, hide_index=True, width="stretch", column_config=fmt)
    st.download_button("Download simulation (CSV)", B.sweep_csv(df),
                       file_name="budget_split_simulation.csv", mime="text/csv",
                       key="bs_download", on_click="ignore")


def teaching_notes():
    # Built only once opened: its formula is typeset (KaTeX) only then.
    box = lazy_expander("Teaching notes: what is measured", "bs_notes_open")
    if box is None:
        return
    with box:
        st.markdown(
            "For every budget pair (ε_p, ε_v) a release draws m private footpoints and r vectors "
            "at each (the papers' sequential scheme). Each private geodesic (p̃_i, ṽ_ij) is "
            "scored by its mean squared error on the data; the figures show the root of their "
            "average, in the data's unit:")
        st.latex(r"E_{ij} = \frac{1}{n}\sum_{k=1}^{n} d\big(\mathrm{Exp}(\tilde p_i,"
                 r" x_k \tilde v_{ij}), y_k\big)^2, \qquad"
                 r" \text{RMS error} = \sqrt{\tfrac{1}{mr}\textstyle\sum_{i,j} E_{ij}}")
        st.markdown(
            "Lines are means over replicates (a fresh data set and release each), the band "
            "their range; dotted lines are the non-private fit. Starving either budget makes "
            "that parameter noisy. Larger n lowers the sensitivity Δ = 2τ/n and with it the "
            "noise.\n\n"
            "**Where the numbers come from (strict mode).** Exact rejection sampling where its "
            "public worst case fits the page's time; elsewhere the mechanism's asymptotic law: "
            "near its mode the clipped gradient is linear, G ≈ Hδ, so each stage's draw is "
            "δ = H⁻¹w with w ∝ exp(−|w|/σ), restricted to the public support. It is a "
            "prediction, checked against the exact target in every cell (total variation at "
            "most 0.1, by importance sampling); a cell that fails is flagged. The test suite "
            "compares the law with exact draws where both reach.\n\n"
            "**The joint scheme** (dashed) draws footpoint and vector at once with one ε: the "
            "split does not apply there. It is Geodesic regression's default and the scheme "
            "with a proof; the sequential split is the papers' and is not covered by it.")


def main():
    """The page: settings read first -> page logic -> dpcore -> the figures, then the settings'
    widgets (:mod:`ui.bs_settings`) and the run row above the figures."""
    st.title("Budget split")
    st.info(
        "**Simulation on synthetic data** (paper 002 protocol; in strict mode with the Geodesic "
        "regression page's public designs), not a release of anyone's data: nothing on this "
        "page enters the privacy ledger. It shows how the split of a budget between the "
        "footpoint (ε_p) and the shooting vector (ε_v) of a private geodesic changes its "
        "error, in the data's units, and which splits are good.",
        icon=":material/science:")
    # Three settings boxes, the run row and the results, in that order on the page; the
    # settings are read first and the results drawn before the boxes' widgets, so that the
    # browser gets the figures first (ui.first_paint).
    boxes = [col.container(border=True) for col in st.columns(3, gap="medium")]
    run_box = st.container()
    s = S.read(settings_state)
    config = B.SweepConfig(
        kind=s.kind, param=s.param, mode=s.mode, sample_sizes=tuple(s.sizes), tau=s.tau,
        tau_m=s.tau_m, max_ratio=10.0 if s.mode == "strict" else 100.0, **s.views, **s.draws,
        **B.design_fields(s.kind, s.mode))
    problem = work = chunk_seconds = None
    if not config.views:
        problem = "Pick at least one view."
    elif not s.sizes and set(config.views) - {"grid"}:
        problem = "Pick at least one sample size."
    else:
        problem = B.design_problem(config)
    if problem is None:
        work, work_ok, chunk_seconds = B.sweep_work(config)
        if not work_ok:
            problem = B.work_refusal(work)
    ss = st.session_state
    running = bool(ss.get(RUNNING))
    opening = (RESULT not in ss and not ss.get(OPENED) and problem is None
               and config.mode == "strict" and work.seconds <= OPEN_SECONDS)
    ss[OPENED] = True
    if running or opening:
        # Cleared first: a Cancel stops the script in the middle of the run.
        ss[RUNNING] = False
        with run_box:
            if running:  # the button disabled under the bar (this run ends in a rerun)
                run_row(config, problem, work, running)
            error = (run_simulation(config, chunk_seconds, work.seconds) if problem is None
                     else None)
        if error is not None:
            ss["bs_error"] = error
        if running:
            st.rerun()  # draw the page again: the button enabled, the progress bar gone
        # Opening: the bar is gone, so the results follow in this run.
    error = ss.pop("bs_error", None)
    if error is not None:
        st.error(f"The simulation failed: {error}")
    result = ss.get(RESULT)
    if result is None:
        st.caption("Press **Run simulation** to compute the views.")
    else:
        show_result(result, config)
    settings_boxes(boxes, s)
    settings_state.finish()  # after the widgets: the range sliders' keys are theirs
    with run_box:
        run_row(config, problem, work, running)
    # Built only once opened (its script is not made on every run).
    box = lazy_expander("Take it with you: this simulation as a Python script or notebook",
                        "bs_export_open")
    if box is not None:
        with box:
            export_section(config, problem)
    teaching_notes()


def settings_boxes(boxes, s):
    """The three settings sections' widgets; sections 2 and 3 in popovers, summarised beside
    them (the browser builds a popover's widgets only when it is opened)."""
    with boxes[0]:
        S.draw_manifold(s)
    with boxes[1]:
        st.subheader("2 · Budget views")
        with st.popover("Views and budgets", icon=":material/tune:", width="stretch"):
            S.draw_views(s)
        st.caption(S.views_summary(s.views))
    with boxes[2]:
        st.subheader("3 · Replicates and draws")
        with st.popover("Replicates, draws and seed", icon=":material/tune:", width="stretch"):
            S.draw_draws(s)
        st.caption(S.draws_summary(s.draws, s.mode))


def run_row(config, problem, work, running):
    """The Run button, what the simulation will cost or why it cannot run, a cancel notice."""
    c_run, c_info = st.columns([1, 4])
    c_run.button("Run simulation", type="primary", key="bs_run", on_click=_start_run,
                 disabled=problem is not None or running)
    if work is not None and problem is not None:
        show_work(work, False, where=c_info,
                  on_page="lower the replicates or the draws per release (section 3), the "
                          "number of budgets (section 2) or the sample sizes (section 1).")
    else:
        c_info.caption(problem or (
            f"{B.n_releases(config)} cells of {config.n_footpoints} × {config.n_vectors} "
            "private geodesics. Results of a given configuration and seed are cached."))
    if work is not None and problem is None:
        show_work(work, True, on_page="")
    cancelled_notice("bs_sim", "The simulation")


def export_section(config, problem):
    """The simulation as a script or notebook (in the opened "Take it with you" box)."""
    st.caption("The current settings (not necessarily the last run) as one "
               "dpcore.experiments.budget_sweep call per view with the page's seeds: "
               "it prints the same numbers as the page.")
    script = B.export_script(config) if problem is None else None
    if script is None:
        st.caption(problem)
    else:
        export_buttons(script, "budget_split", "bs")


main()
