"""The Budget split page's settings: read from ``st.session_state`` first, drawn afterwards.

As on the other chart pages (:mod:`ui.gr_values`), every setting gets its starting value from
``init`` (the page's :meth:`ui.session.PageSettings.init`) and is read from the session state
by :func:`read`, before any widget is drawn, so the page can draw its simulation's figures
first (:mod:`ui.first_paint`). The widgets (:func:`draw_manifold`, :func:`draw_views`,
:func:`draw_draws`) are drawn afterwards with the same keys and show what was read
(Streamlit puts a value the user changed in the session state before the rerun starts).
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from ui import manifolds as M
from ui.caps import CAPS
from ui.logic import budget_split as B
from ui.logic import regression_data as D
from ui.url_state import query_value

SCENARIO = "bs_scenario"  # the (manifold, mode) whose defaults the settings started from
#: Widgets whose default depends on the (manifold, mode) scenario: their SweepConfig fields.
SCENARIO_KEYS = {"bs_sizes": "sample_sizes", "bs_total": "total", "bs_chain": "chain_length",
                 "bs_burn": "burn_in", "bs_nf": "n_footpoints", "bs_nv": "n_vectors"}
DEFAULT = B.SweepConfig()
SIZE_OPTIONS = (10, 20, 30, 50, 100, 200, 500)
VIEW_LABELS = {"unequal": "Unequal split at a fixed total", "equal": "Equal split across totals",
               "grid": "Heatmap over (ε_p, ε_v)"}


@dataclass(frozen=True)
class Settings:
    """Everything the page's three settings sections hold: section 1 (``kind``, ``param``,
    ``sizes``, the sample sizes ignored as ``bad``, ``mode``, ``tau``, ``tau_m``), section 2's
    :class:`~ui.logic.budget_split.SweepConfig` fields (``views``) with the heatmap's sample
    size choices, and section 3's (``draws``)."""

    kind: str
    param: int | None
    sizes: list
    bad: list
    mode: str
    tau: float | None
    tau_m: float | None
    views: dict
    grid_choices: list
    draws: dict

    @property
    def scenario(self):
        return B.scenario_defaults(self.kind, self.mode)


def float_pair(text):
    """``"0.2,2.0"`` -> ``(0.2, 2.0)`` (for the URL)."""
    return tuple(float(v) for v in str(text).strip("()").split(","))


def int_list(text):
    """``"20,50,100"`` -> ``[20, 50, 100]`` (for the URL)."""
    return [int(v) for v in str(text).split(",") if v.strip()]


def range_value(settings, key, qkey, default):
    """Value for a range ``select_slider`` (passed as ``value=``: AppTest loses the range of a
    select_slider whose value was set through ``st.session_state``)."""
    settings.keys.append(key)
    settings.url[qkey] = key
    pairs = [(a, b) for a in D.EPS_GRID for b in D.EPS_GRID if a < b]
    if key in st.session_state:
        value = tuple(st.session_state[key])
    else:
        value = tuple(settings.saved.get(key, ()))
        if not value and settings.first_run:
            value = query_value(qkey, default, float_pair)
    return value if tuple(value) in pairs else default


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


# ================================================================================ reading
def read(settings):
    """Every setting of the three sections, each given its starting value first
    (``settings``: the page's :class:`ui.session.PageSettings`)."""
    ss, init = st.session_state, settings.init
    # M.canonical reads aliases from the URL: "spd2" (an older link) is "spd".
    init("bs_manifold", "bs_m", "sphere", M.canonical, D.MANIFOLD_KINDS)
    init("bs_mode", "bs_mode", "strict", str, ("strict", "paper"))
    kind, mode = ss["bs_manifold"], ss["bs_mode"]
    scenario = B.scenario_defaults(kind, mode)
    ss.setdefault(SCENARIO, (kind, mode))
    param = None
    if kind in D.PARAM_RANGE:
        lo_p, hi_p, _ = D.PARAM_RANGE[kind]
        init(f"bs_param_{kind}", f"bs_{M.spec(kind).param}", scenario["param"], int,
             range(lo_p, hi_p + 1))
        param = int(ss[f"bs_param_{kind}"])
    init("bs_sizes", "bs_n", list(scenario["sample_sizes"]), int_list)
    # Typed entries arrive as text; keep whole numbers from 5 to the cap, report the rest.
    sizes, bad = set(), []
    for v in ss["bs_sizes"]:
        text = str(v).strip()
        if text.isdigit() and 5 <= int(text) <= CAPS["sweep_max_n"]:
            sizes.add(int(text))
        else:
            bad.append(text)
    sizes = sorted(sizes)
    ss["bs_sizes"] = sizes
    tau = tau_m = None
    if mode == "strict":
        design = B.strict_design(kind)
        init(f"bs_tau_{kind}", "bs_tau", design.get("tau", M.spec(kind).tau), float,
             bounds=(0.001, 10.0))
        tau = float(ss[f"bs_tau_{kind}"])
        if D.needs_ball(kind):
            init(f"bs_taum_{kind}", "bs_taum", design.get("tau_m", M.spec(kind).tau_m),
                 float, bounds=(0.01, 100.0))
            tau_m = float(ss[f"bs_taum_{kind}"])
    views, grid_choices = _read_views(settings, sizes, scenario)
    return Settings(kind=kind, param=param, sizes=sizes, bad=bad, mode=mode, tau=tau,
                    tau_m=tau_m, views=views, grid_choices=grid_choices,
                    draws=_read_draws(settings, scenario, mode))


def _read_views(settings, sizes, scenario):
    ss, init = st.session_state, settings.init
    init("bs_views", "bs_views", ["unequal", "equal"],
         lambda s: [v for v in str(s).split(",") if v in VIEW_LABELS])
    init("bs_total", "bs_total", scenario["total"], float, bounds=(0.02, 20.0))
    init("bs_nu", "bs_nu", DEFAULT.n_unequal, int, range(3, CAPS["sweep_unequal"] + 1))
    init("bs_ne", "bs_ne", DEFAULT.n_equal, int, range(2, CAPS["sweep_equal"] + 1))
    init("bs_ng", "bs_ng", 4, int, range(2, CAPS["sweep_grid"] + 1))
    equal_range = range_value(settings, "bs_eq", "bs_eq", DEFAULT.equal_range)
    grid_range = range_value(settings, "bs_grid", "bs_grid", (0.05, 2.0))
    grid_choices = sorted(set(sizes) | {50}) if sizes else [50]
    init("bs_grid_n", "bs_gn", 50, int, grid_choices)
    if ss["bs_grid_n"] not in grid_choices:
        ss["bs_grid_n"] = grid_choices[0]
    views = dict(views=tuple(v for v in VIEW_LABELS if v in ss["bs_views"]),
                 total=float(ss["bs_total"]), n_unequal=int(ss["bs_nu"]),
                 equal_range=tuple(float(v) for v in equal_range), n_equal=int(ss["bs_ne"]),
                 grid_range=tuple(float(v) for v in grid_range), n_grid=int(ss["bs_ng"]),
                 grid_n=int(ss["bs_grid_n"]))
    return views, grid_choices


def _read_draws(settings, scenario, mode):
    ss, init = st.session_state, settings.init
    init("bs_reps", "bs_reps", DEFAULT.replicates, int, range(3, CAPS["sweep_replicates"] + 1))
    init("bs_nf", "bs_nf", scenario["n_footpoints"], int, range(1, CAPS["sweep_draws"] + 1))
    init("bs_nv", "bs_nv", scenario["n_vectors"], int, range(1, CAPS["sweep_draws"] + 1))
    init("bs_chain", "bs_chain", scenario["chain_length"], int,
         range(10, CAPS["sweep_chain"] + 1))
    init("bs_burn", "bs_burn", scenario["burn_in"], int, range(0, CAPS["sweep_chain"] + 1))
    init("bs_seed", "bs_seed", 0, int, bounds=(0, 10**6))
    return dict(replicates=int(ss["bs_reps"]), n_footpoints=int(ss["bs_nf"]),
                n_vectors=int(ss["bs_nv"]), chain_length=int(ss["bs_chain"]),
                burn_in=int(ss["bs_burn"]), seed=int(ss["bs_seed"]))


# ================================================================================ widgets
def draw_manifold(s):
    """Section 1's widgets: manifold, sample sizes, mode and the public design."""
    st.subheader("1 · Manifold and data")
    st.selectbox("Manifold", D.MANIFOLD_KINDS, key="bs_manifold",
                 format_func=D.MANIFOLD_LABELS.get, on_change=scenario_changed)
    if s.param is not None:
        lo_p, hi_p, _ = D.PARAM_RANGE[s.kind]
        st.number_input(M.spec(s.kind).param_label, lo_p, hi_p, key=f"bs_param_{s.kind}")
    st.multiselect("Sample sizes n (type a number to add one)",
                   sorted(set(SIZE_OPTIONS) | set(s.sizes)), key="bs_sizes",
                   accept_new_options=True, max_selections=CAPS["sweep_sizes"])
    if s.bad:
        st.warning(f"Ignored sample sizes {', '.join(s.bad)}: use whole numbers from 5 to "
                   f"{CAPS['sweep_max_n']}.")
    st.radio("Mode", ("strict", "paper"), key="bs_mode", horizontal=True,
             format_func={"paper": "paper (reproduces the figures)",
                          "strict": "strict (public bounds)"}.get,
             on_change=scenario_changed)
    if s.mode != "strict":
        st.caption("Paper mode takes τ from each simulated data set and uses σ = Δ/ε, as in "
                   "the papers (not private; harmless here because the data are synthetic), "
                   "and draws by Markov chains, as the papers did.")
        return
    st.number_input("τ — public residual bound", 0.001, 10.0, key=f"bs_tau_{s.kind}",
                    format="%.3f")
    if s.tau_m is not None:
        st.number_input("τ_m — public ball radius", 0.01, 100.0, key=f"bs_taum_{s.kind}",
                        format="%.3g")
    st.caption("Covariates are U[0, 1], so the public covariate range is [0, 1]. The "
               "unequal splits keep ε_p/ε_v between 1/10 and 10. No Markov chains: each "
               "cell is drawn exactly where that is within reach, else predicted from the "
               "mechanism's asymptotic law and checked against its exact target.")
    design_note = B.design_note(s.kind, s.tau, s.tau_m)
    if design_note:
        st.caption(design_note)
    note = B.flat_noise_note(s.kind, s.mode)
    if note:
        st.warning(note, icon=":material/blur_on:")


def draw_views(s):
    """Section 2's widgets: the views and their budgets."""
    st.multiselect("Views to compute", tuple(VIEW_LABELS), key="bs_views",
                   format_func=VIEW_LABELS.get)
    c1, c2 = st.columns(2)
    c1.number_input("Unequal: total ε", 0.02, 20.0, key="bs_total", format="%.3g",
                    help="The budget of one private geodesic, ε_p + ε_v (Geodesic "
                    "regression's default release: 3). Paper 002 uses 2.02.")
    c2.number_input("splits", 3, CAPS["sweep_unequal"], key="bs_nu")
    c1, c2 = st.columns([3, 1])
    c1.select_slider("Equal: totals from … to …", D.EPS_GRID, key="bs_eq",
                     value=s.views["equal_range"])
    c2.number_input("totals", 2, CAPS["sweep_equal"], key="bs_ne")
    c1, c2 = st.columns([3, 1])
    c1.select_slider("Heatmap: each budget from … to …", D.EPS_GRID, key="bs_grid",
                     value=s.views["grid_range"])
    c2.number_input("per axis", 2, CAPS["sweep_grid"], key="bs_ng")
    st.selectbox("Heatmap: sample size n", s.grid_choices, key="bs_grid_n")


def draw_draws(s):
    """Section 3's widgets: replicates, draws per release, chains (paper mode), the seed."""
    st.slider("Replicates (fresh data set and release each; the band is their range)", 3,
              CAPS["sweep_replicates"], key="bs_reps")
    c1, c2 = st.columns(2)
    c1.number_input("Footpoints per release", 1, CAPS["sweep_draws"], key="bs_nf")
    c2.number_input("Vectors per footpoint", 1, CAPS["sweep_draws"], key="bs_nv")
    if s.mode == "paper":
        c1, c2 = st.columns(2)
        c1.number_input("Chain length", 10, CAPS["sweep_chain"], key="bs_chain", step=50)
        c2.number_input("Burn-in", 0, CAPS["sweep_chain"], key="bs_burn", step=50)
    st.number_input("Simulation seed", 0, 10**6, key="bs_seed")
    st.caption("The papers use 10 × 10 draws per budget pair and one replicate. Here each cell "
               "is scored on at least three fresh data sets (replicates), 3 × 3 geodesics each; "
               "the figures show their mean and, as a band, their range."
               + (" Paper mode draws by Markov chains: cells whose chains have not mixed are "
                  "flagged." if s.mode == "paper" else ""))


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
