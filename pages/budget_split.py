"""Budget split: how dividing ε between footpoint and shooting vector changes the error.

A simulation on synthetic data (paper 002 §4 protocol, with the Geodesic regression page's
public designs in strict mode), not a release of anyone's data, so nothing here enters the
privacy ledger. Widgets -> :mod:`ui.logic` -> :func:`dpcore.experiments.budget_sweep` ->
:mod:`dpcore.visualization.budget`. In strict mode no cell comes from Markov chains: exact
draws where their public worst case is within reach, else a prediction from the mechanism's
asymptotic law, checked against its exact target. The page's default simulation is computed
on opening; other settings run on a button, in chunks (view × n × replicate) with a progress
bar; each chunk is a seeded, deterministic computation cached with ``st.cache_data``.
"""

import dataclasses

import pandas as pd
import streamlit as st

from dpcore.visualization import budget as VB
from ui import manifolds as M
from ui.caps import CAPS
from ui.figures import frame_key, show_figure
from ui.logic import budget_advice as A
from ui.logic import budget_split as B
from ui.logic import regression_data as D
from ui.progress import RunProgress, cancelled_notice, show_work
from ui.session import PageSettings, export_buttons, lazy_expander, query_value

RESULT = "bs_result"
RUNNING = "bs_running"
OPENED = "bs_opened"  # the default simulation was computed (or skipped) on opening
SCENARIO = "bs_scenario"  # the (manifold, mode) whose defaults the settings started from
#: Widgets whose default depends on the (manifold, mode) scenario: their SweepConfig fields.
SCENARIO_KEYS = {"bs_sizes": "sample_sizes", "bs_total": "total", "bs_chain": "chain_length",
                 "bs_burn": "burn_in", "bs_nf": "n_footpoints", "bs_nv": "n_vectors"}
DEFAULT = B.SweepConfig()
SIZE_OPTIONS = (10, 20, 30, 50, 100, 200, 500)
VIEW_LABELS = {"unequal": "Unequal split at a fixed total", "equal": "Equal split across totals",
               "grid": "Heatmap over (ε_p, ε_v)"}
#: A strict simulation estimated within this many seconds is computed on opening the page
#: (paper mode's Markov chains run on the button only).
OPEN_SECONDS = 10.0
settings_state = PageSettings("bs")
init = settings_state.init


def range_value(key, qkey, default):
    """Value for a range ``select_slider`` (passed as ``value=``: AppTest loses the range of a
    select_slider whose value was set through ``st.session_state``)."""
    settings_state.keys.append(key)
    settings_state.url[qkey] = key
    pairs = [(a, b) for a in D.EPS_GRID for b in D.EPS_GRID if a < b]
    if key in st.session_state:
        value = tuple(st.session_state[key])
    else:
        value = tuple(settings_state.saved.get(key, ()))
        if not value and settings_state.first_run:
            value = query_value(qkey, default, float_pair)
    return value if tuple(value) in pairs else default


def float_pair(text):
    """``"0.2,2.0"`` -> ``(0.2, 2.0)`` (for the URL)."""
    return tuple(float(v) for v in str(text).strip("()").split(","))


def int_list(text):
    """``"20,50,100"`` -> ``[20, 50, 100]`` (for the URL)."""
    return [int(v) for v in str(text).split(",") if v.strip()]


@st.cache_data(show_spinner=False, max_entries=4000)
def cached_chunk(config, view, n, rep):
    # A seeded simulation on synthetic data: deterministic, so safe to cache and share. (No
    # progress callback inside: a cached function may not draw into the page's bar.)
    return B.run_chunk(config, view, n, rep)


def _widget_value(field, value):
    """A scenario default as its widget holds it (sample sizes: a list)."""
    return list(value) if field == "sample_sizes" else value


def scenario_changed():
    """Switching manifold or mode moves each setting that was at the old scenario's default to
    the new scenario's (:func:`ui.logic.budget_split.scenario_defaults`: SPD(2) and Kendall in
    strict mode have their own sizes); a changed setting stays."""
    ss = st.session_state
    old, new = ss.get(SCENARIO), (ss["bs_manifold"], ss["bs_mode"])
    if old is not None and tuple(old) != new:
        before, after = B.scenario_defaults(*old), B.scenario_defaults(*new)
        for key, field in SCENARIO_KEYS.items():
            if key in ss and ss[key] == _widget_value(field, before[field]):
                ss[key] = _widget_value(field, after[field])
        # The manifold parameter has one widget per manifold: it moves when it holds this
        # manifold's default in the old mode (Kendall: 8 landmarks in paper mode, 4 in strict).
        key = f"bs_param_{new[0]}"
        if key in ss and ss[key] == B.scenario_defaults(new[0], old[1])["param"]:
            ss[key] = after["param"]
    ss[SCENARIO] = new


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


# ================================================================================ settings
def manifold_section():
    """Section 1: manifold, sample sizes, mode and the public design. Returns ``(kind, param,
    sizes, mode, tau, tau_m)``."""
    st.subheader("1 · Manifold and data")
    # M.canonical reads aliases from the URL: "spd2" (an older link) is "spd".
    init("bs_manifold", "bs_m", "sphere", M.canonical, D.MANIFOLD_KINDS)
    kind = st.selectbox("Manifold", D.MANIFOLD_KINDS, key="bs_manifold",
                        format_func=D.MANIFOLD_LABELS.get, on_change=scenario_changed)
    # The mode's starting value is needed now: the scenario's defaults depend on it.
    init("bs_mode", "bs_mode", "strict", str, ("strict", "paper"))
    scenario = B.scenario_defaults(kind, st.session_state["bs_mode"])
    st.session_state.setdefault(SCENARIO, (kind, st.session_state["bs_mode"]))
    param = None
    if kind in D.PARAM_RANGE:
        lo_p, hi_p, _ = D.PARAM_RANGE[kind]
        init(f"bs_param_{kind}", f"bs_{M.spec(kind).param}", scenario["param"], int,
             range(lo_p, hi_p + 1))
        param = int(st.number_input(M.spec(kind).param_label, lo_p, hi_p,
                                    key=f"bs_param_{kind}"))
    init("bs_sizes", "bs_n", list(scenario["sample_sizes"]), int_list)
    # Typed entries arrive as text; keep whole numbers from 5 to the cap, report the rest.
    sizes, bad = set(), []
    for v in st.session_state["bs_sizes"]:
        text = str(v).strip()
        if text.isdigit() and 5 <= int(text) <= CAPS["sweep_max_n"]:
            sizes.add(int(text))
        else:
            bad.append(text)
    sizes = sorted(sizes)
    st.session_state["bs_sizes"] = sizes
    st.multiselect("Sample sizes n (type a number to add one)",
                   sorted(set(SIZE_OPTIONS) | set(sizes)), key="bs_sizes",
                   accept_new_options=True, max_selections=CAPS["sweep_sizes"])
    if bad:
        st.warning(f"Ignored sample sizes {', '.join(bad)}: use whole numbers from 5 to "
                   f"{CAPS['sweep_max_n']}.")
    mode = st.radio("Mode", ("strict", "paper"), key="bs_mode", horizontal=True,
                    format_func={"paper": "paper (reproduces the figures)",
                                 "strict": "strict (public bounds)"}.get,
                    on_change=scenario_changed)
    tau = tau_m = None
    if mode == "strict":
        design = B.strict_design(kind)
        init(f"bs_tau_{kind}", "bs_tau", design.get("tau", M.spec(kind).tau), float,
             bounds=(0.001, 10.0))
        tau = float(st.number_input("τ — public residual bound", 0.001, 10.0,
                                    key=f"bs_tau_{kind}", format="%.3f"))
        if D.needs_ball(kind):
            init(f"bs_taum_{kind}", "bs_taum", design.get("tau_m", M.spec(kind).tau_m),
                 float, bounds=(0.01, 100.0))
            tau_m = float(st.number_input("τ_m — public ball radius", 0.01, 100.0,
                                          key=f"bs_taum_{kind}", format="%.3g"))
        st.caption("Covariates are U[0, 1], so the public covariate range is [0, 1]. The "
                   "unequal splits keep ε_p/ε_v between 1/10 and 10. No Markov chains: each "
                   "cell is drawn exactly where that is within reach, else predicted from the "
                   "mechanism's asymptotic law and checked against its exact target.")
        design_note = B.design_note(kind, tau, tau_m)
        if design_note:
            st.caption(design_note)
        note = B.flat_noise_note(kind, mode)
        if note:
            st.warning(note, icon=":material/blur_on:")
    else:
        st.caption("Paper mode takes τ from each simulated data set and uses σ = Δ/ε, as in "
                   "the papers (not private; harmless here because the data are synthetic), "
                   "and draws by Markov chains, as the papers did.")
    return kind, param, sizes, mode, tau, tau_m


def views_section(sizes, scenario):
    """Section 2: the views and their budgets. Returns a dict of SweepConfig fields."""
    init("bs_views", "bs_views", ["unequal", "equal"],
         lambda s: [v for v in str(s).split(",") if v in VIEW_LABELS])
    views = st.multiselect("Views to compute", tuple(VIEW_LABELS), key="bs_views",
                           format_func=VIEW_LABELS.get)
    init("bs_total", "bs_total", scenario["total"], float, bounds=(0.02, 20.0))
    init("bs_nu", "bs_nu", DEFAULT.n_unequal, int, range(3, CAPS["sweep_unequal"] + 1))
    c1, c2 = st.columns(2)
    total = float(c1.number_input("Unequal: total ε", 0.02, 20.0, key="bs_total",
                                  format="%.3g", help="The budget of one private geodesic, "
                                  "ε_p + ε_v (Geodesic regression's default release: 3). "
                                  "Paper 002 uses 2.02."))
    n_unequal = int(c2.number_input("splits", 3, CAPS["sweep_unequal"], key="bs_nu"))
    init("bs_ne", "bs_ne", DEFAULT.n_equal, int, range(2, CAPS["sweep_equal"] + 1))
    c1, c2 = st.columns([3, 1])
    equal_range = c1.select_slider("Equal: totals from … to …", D.EPS_GRID, key="bs_eq",
                                   value=range_value("bs_eq", "bs_eq", DEFAULT.equal_range))
    n_equal = int(c2.number_input("totals", 2, CAPS["sweep_equal"], key="bs_ne"))
    init("bs_ng", "bs_ng", 4, int, range(2, CAPS["sweep_grid"] + 1))
    c1, c2 = st.columns([3, 1])
    grid_range = c1.select_slider("Heatmap: each budget from … to …", D.EPS_GRID,
                                  key="bs_grid",
                                  value=range_value("bs_grid", "bs_grid", (0.05, 2.0)))
    n_grid = int(c2.number_input("per axis", 2, CAPS["sweep_grid"], key="bs_ng"))
    grid_choices = sorted(set(sizes) | {50}) if sizes else [50]
    init("bs_grid_n", "bs_gn", 50, int, grid_choices)
    if st.session_state["bs_grid_n"] not in grid_choices:
        st.session_state["bs_grid_n"] = grid_choices[0]
    grid_n = int(st.selectbox("Heatmap: sample size n", grid_choices, key="bs_grid_n"))
    return dict(views=tuple(v for v in VIEW_LABELS if v in views), total=total,
                n_unequal=n_unequal, equal_range=tuple(float(v) for v in equal_range),
                n_equal=n_equal, grid_range=tuple(float(v) for v in grid_range),
                n_grid=n_grid, grid_n=grid_n)


def draws_section(scenario, mode):
    """Section 3: replicates, draws per release, chains (paper mode) and the seed. Returns a
    dict of SweepConfig fields."""
    init("bs_reps", "bs_reps", DEFAULT.replicates, int, range(3, CAPS["sweep_replicates"] + 1))
    replicates = int(st.slider("Replicates (fresh data set and release each; the band is "
                               "their range)", 3, CAPS["sweep_replicates"], key="bs_reps"))
    init("bs_nf", "bs_nf", scenario["n_footpoints"], int, range(1, CAPS["sweep_draws"] + 1))
    init("bs_nv", "bs_nv", scenario["n_vectors"], int, range(1, CAPS["sweep_draws"] + 1))
    c1, c2 = st.columns(2)
    n_foot = int(c1.number_input("Footpoints per release", 1, CAPS["sweep_draws"],
                                 key="bs_nf"))
    n_vec = int(c2.number_input("Vectors per footpoint", 1, CAPS["sweep_draws"], key="bs_nv"))
    init("bs_chain", "bs_chain", scenario["chain_length"], int,
         range(10, CAPS["sweep_chain"] + 1))
    init("bs_burn", "bs_burn", scenario["burn_in"], int, range(0, CAPS["sweep_chain"] + 1))
    chain, burn = int(st.session_state["bs_chain"]), int(st.session_state["bs_burn"])
    if mode == "paper":
        c1, c2 = st.columns(2)
        chain = int(c1.number_input("Chain length", 10, CAPS["sweep_chain"], key="bs_chain",
                                    step=50))
        burn = int(c2.number_input("Burn-in", 0, CAPS["sweep_chain"], key="bs_burn", step=50))
    init("bs_seed", "bs_seed", 0, int, bounds=(0, 10**6))
    seed = int(st.number_input("Simulation seed", 0, 10**6, key="bs_seed"))
    st.caption("The papers use 10 × 10 draws per budget pair and one replicate. Here each cell "
               "is scored on at least three fresh data sets (replicates), 3 × 3 geodesics each; "
               "the figures show their mean and, as a band, their range."
               + (" Paper mode draws by Markov chains: cells whose chains have not mixed are "
                  "flagged." if mode == "paper" else ""))
    return dict(replicates=replicates, n_footpoints=n_foot, n_vectors=n_vec,
                chain_length=chain, burn_in=burn, seed=seed)


def views_summary(fields):
    """Section 2's settings in words (shown beside its popover)."""
    parts = []
    if "unequal" in fields["views"]:
        parts.append(f"unequal splits of ε = {fields['total']:g} ({fields['n_unequal']} splits)")
    if "equal" in fields["views"]:
        lo, hi = fields["equal_range"]
        parts.append(f"equal splits of totals from {lo:g} to {hi:g} "
                     f"({fields['n_equal']} totals)")
    if "grid" in fields["views"]:
        lo, hi = fields["grid_range"]
        parts.append(f"a heatmap of ε_p and ε_v from {lo:g} to {hi:g} ({fields['n_grid']} per "
                     f"axis, n = {fields['grid_n']})")
    return ("Views: " + "; ".join(parts) + ".") if parts else "No view chosen."


def draws_summary(fields, mode):
    """Section 3's settings in words (shown beside its popover)."""
    text = (f"{fields['replicates']} replicates, {fields['n_footpoints']} × "
            f"{fields['n_vectors']} private geodesics per release, seed {fields['seed']}")
    if mode == "paper":
        text += f"; chains of {fields['chain_length']} after a burn-in of {fields['burn_in']}"
    return text + "."


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
    if "equal" in shown.views:
        show_figure(col2, split_figure(
            summary[summary["view"] == "equal"], unit=unit, x="epsilon", log_x=True, log_y=True,
            title="Error against the total ε (equal split)",
            x_title="total ε = ε_p + ε_v per geodesic (log scale)", subtitle=note),
            width="stretch")
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
    """The page: widgets -> page logic -> dpcore -> figures."""
    st.title("Budget split")
    st.info(
        "**Simulation on synthetic data** (paper 002 protocol; in strict mode with the Geodesic "
        "regression page's public designs), not a release of anyone's data: nothing on this "
        "page enters the privacy ledger. It shows how the split of a budget between the "
        "footpoint (ε_p) and the shooting vector (ε_v) of a private geodesic changes its "
        "error, in the data's units, and which splits are good.",
        icon=":material/science:")
    col_m, col_v, col_r = st.columns(3, gap="medium")
    with col_m, st.container(border=True):
        kind, param, sizes, mode, tau, tau_m = manifold_section()
    scenario = B.scenario_defaults(kind, mode)
    # Sections 2 and 3 keep their widgets in popovers, summarised beside them: the browser
    # builds a popover's widgets only when it is opened, and the input widgets drawn with the
    # page's first chart delay it (measured, with the run-to-run spread, in
    # docs/measurements.md, session 30).
    with col_v, st.container(border=True):
        st.subheader("2 · Budget views")
        with st.popover("Views and budgets", icon=":material/tune:", width="stretch"):
            view_fields = views_section(sizes, scenario)
        st.caption(views_summary(view_fields))
    with col_r, st.container(border=True):
        st.subheader("3 · Replicates and draws")
        with st.popover("Replicates, draws and seed", icon=":material/tune:", width="stretch"):
            draw_fields = draws_section(scenario, mode)
        st.caption(draws_summary(draw_fields, mode))
    settings_state.finish()
    config = B.SweepConfig(
        kind=kind, param=param, mode=mode, sample_sizes=tuple(sizes), tau=tau, tau_m=tau_m,
        max_ratio=10.0 if mode == "strict" else 100.0, **view_fields, **draw_fields,
        **B.design_fields(kind, mode))

    # ============================================================================== run
    problem = None
    if not config.views:
        problem = "Pick at least one view."
    elif not sizes and set(config.views) - {"grid"}:
        problem = "Pick at least one sample size."
    else:
        problem = B.design_problem(config)
    work = None
    if problem is None:
        work, work_ok, chunk_seconds = B.sweep_work(config)
        if not work_ok:
            problem = B.work_refusal(work)
    ss = st.session_state
    running = bool(ss.get(RUNNING))
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
    opening = (RESULT not in ss and not ss.get(OPENED) and problem is None
               and config.mode == "strict" and work.seconds <= OPEN_SECONDS)
    ss[OPENED] = True
    if running or opening:
        # Cleared first: a Cancel stops the script in the middle of the run.
        ss[RUNNING] = False
        error = run_simulation(config, chunk_seconds, work.seconds) if problem is None else None
        if error is not None:
            ss["bs_error"] = error
        if running:
            st.rerun()  # draw the page again: the button enabled, the progress bar gone
        # Opening: the button was drawn enabled and the bar is gone, so the results follow in
        # this run (a rerun would send the whole page twice before the first chart).
    error = ss.pop("bs_error", None)
    if error is not None:
        st.error(f"The simulation failed: {error}")
    result = ss.get(RESULT)
    if result is None:
        st.caption("Press **Run simulation** to compute the views.")
    else:
        show_result(result, config)
    # Built only once opened (its script is not made on every run).
    box = lazy_expander("Take it with you: this simulation as a Python script or notebook",
                        "bs_export_open")
    if box is not None:
        with box:
            export_section(config, problem)
    teaching_notes()


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
