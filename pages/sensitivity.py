"""Page: sensitivity bounds of private geodesic regression, checked on adjacent data sets,
and a curvature explainer built on Jacobi fields.
"""

from __future__ import annotations

import math

import numpy as np
import streamlit as st

from dpcore import visualization as V
from ui import manifolds as M
from ui.caps import CAPS
from ui.figures import show_figure
from ui.first_paint import chart_first
from ui.logic import common as C
from ui.logic import sensitivity as L
from ui.session import PageSettings, formula_notes

N_OPTIONS = [10, 20, 50, 100, 200, 500]
DEFAULT_NS = (20, 50, 100)  # paper 002 app. G
settings_state = PageSettings("se")
init = settings_state.init


def sample_sizes(text):
    """The sample sizes a URL names ("20,50,100"; unknown and repeated ones dropped, at most
    ``CAPS["sens_sizes"]``: the widget holds no more), or the defaults."""
    sizes = [int(v) for v in str(text).split(",") if v.strip().isdigit()]
    sizes = list(dict.fromkeys(v for v in sizes if v in N_OPTIONS))
    return sizes[:CAPS["sens_sizes"]] or list(DEFAULT_NS)

ratios_cached = st.cache_data(show_spinner=False, max_entries=64)(L.regression_sensitivity_ratios)


def teaching_notes():
    st.markdown(
        "Geodesic regression fits y ≈ Exp(p, x v). KNG releases p and v by the norm of the "
        "energy gradient, so the **sensitivity** is how far one replaced observation can move "
        "that gradient. With τ a bound on the residual norms, τ_m the radius of a ball holding "
        "the responses and κ_l a lower curvature bound (paper 002 Thm 3.3 and Thm D.1):"
    )
    st.latex(r"\kappa_l \ge 0:\quad \Delta_p = \Delta_v = \frac{2\tau}{n}")
    st.latex(r"\kappa_l < 0:\quad \Delta_p = \frac{2\tau}{n}\cosh(2c),\qquad "
             r"\Delta_v = \frac{\tau}{n}\,\frac{\sinh(2c)}{c}")
    st.latex(r"\text{with } c = \sqrt{-\kappa_l}\,(\tau_m + \tau)")
    st.markdown(
        "The empirical check (paper 002 app. G) draws n + 1 observations; D drops the first, "
        "D′ the last. At the non-private fit of D it measures ‖∇E(D) − ∇E(D′)‖ and reports the "
        "ratio bound / empirical, which must be at least 1. The same study, with the same "
        "seed, draws figures 9-10 of the reproduction report."
    )


def kappa_low(manifold_key):
    """The lower curvature bound κ_l of the manifold (the one the bounds use)."""
    return float(M.make_manifold(manifold_key).curvature_bounds[0])


def assumptions_box(manifold_key):
    kappa = kappa_low(manifold_key)
    rows = [
        ("Curvature", f"lower bound κ_l = {kappa:g} for "
                      f"{M.choice_label(manifold_key)}"
                      + (" (so the flat formula 2τ/n applies)." if kappa >= 0 else
                         " (so the cosh / sinh inflation applies).")),
        ("Residual bound τ", "the largest residual of the n + 1 points at the fit of D "
                             "(as in paper 002 app. G: a data-dependent τ, fine for a check, "
                             "not for a release)."),
        ("Response ball τ_m", "for κ_l < 0, the radius of the smallest ball about the fitted "
                              "footpoint holding the responses."),
        ("Covariates", "drawn uniformly on [0, 1], the rescaled range the bounds assume."),
        ("Data", "synthetic, from the paper protocols; nothing here is released."),
    ]
    with st.container(border=True):
        st.markdown("**Assumptions in force**")
        st.markdown(C.assumptions_markdown(rows))


def ratio_settings():
    """The study's settings (manifold, sample sizes, pairs, log axis), read from the session
    state after their starting values are given, before their widgets are drawn."""
    keys = list(L.REGRESSION_MANIFOLDS)
    # M.canonical reads aliases from the URL: "spd2" (an older link) is "spd".
    init("se_manifold", "se_manifold", "sphere", M.canonical, keys)
    init("se_ns", "se_ns", list(DEFAULT_NS), sample_sizes)
    init("se_pairs", "se_pairs", 20, int, bounds=(5, CAPS["sens_pairs"]))
    init("se_log", "se_log", False, bool)
    return tuple(st.session_state[k] for k in ("se_manifold", "se_ns", "se_pairs", "se_log"))


def ratio_widgets(box):
    """The study's settings widgets in ``box`` (they show, and return, what
    :func:`ratio_settings` read)."""
    keys = list(L.REGRESSION_MANIFOLDS)
    box.selectbox("Manifold", keys, format_func=M.choice_label, key="se_manifold")
    box.multiselect("Sample sizes n", N_OPTIONS, max_selections=CAPS["sens_sizes"],
                    key="se_ns")
    box.slider("Adjacent pairs per n", 5, CAPS["sens_pairs"], step=5, key="se_pairs")
    box.toggle("log₁₀ ratio axis", key="se_log")


def settings_summary(manifold_key, ns, pairs, log_scale):
    """The study's settings in words (beside the popover that holds their widgets)."""
    sizes = ", ".join(str(v) for v in sorted(ns)) if ns else "none chosen"
    return (f"**{M.choice_label(manifold_key)}**, sample sizes n = {sizes}, {pairs} adjacent "
            f"pairs per n, {'log₁₀' if log_scale else 'linear'} ratio axis.")


def ratio_section():
    st.subheader("Theory / empirical ratios on adjacent data sets")
    # The settings sit in a popover, summarised beside it: the browser builds a popover's
    # widgets only when it is opened, and these four, drawn with the page's first chart,
    # delayed it (measured, with the run-to-run spread, in docs/measurements.md, session 30).
    with st.container(border=True):
        pop_col, text_col = st.columns([1, 4], vertical_alignment="center")
        setting_box = pop_col.popover("Study settings", icon=":material/tune:", width="stretch")
    # The histograms are drawn before the settings above them (filled in below): the browser
    # then draws them first (each input widget drawn before a chart delays it by 10-20 ms).
    manifold_key, ns, pairs, log_scale = ratio_settings()
    text_col.markdown(settings_summary(manifold_key, ns, pairs, log_scale))
    if not ns:
        ratio_widgets(setting_box)
        st.info("Choose at least one sample size.")
        return manifold_key
    with st.status("Drawing adjacent data sets and fitting …", expanded=False) as status:
        frame = ratios_cached(manifold_key, tuple(sorted(int(v) for v in ns)), int(pairs),
                              seed=0)
        status.update(label=f"{len(frame)} adjacent pairs evaluated", state="complete")
    label = M.choice_label(manifold_key)
    cols = st.columns(2)
    show_figure(cols[0], V.ratio_histogram(frame, "p", log_scale=log_scale,
                                           manifold_label=label),
                         width="stretch", key="se_hist_p")
    show_figure(cols[1], V.ratio_histogram(frame, "v", log_scale=log_scale,
                                           manifold_label=label),
                         width="stretch", key="se_hist_v")
    chart_first()  # a visit's first run ends here (ui.first_paint)
    ratio_widgets(setting_box)
    summary = frame.groupby("n").agg(
        pairs=("pair", "size"),
        min_ratio_p=("ratio_p", "min"), median_ratio_p=("ratio_p", "median"),
        min_ratio_v=("ratio_v", "min"), median_ratio_v=("ratio_v", "median"),
        median_tau=("tau", "median"),
    ).reset_index()
    summary["bound holds"] = np.where((summary["min_ratio_p"] >= 1)
                                      & (summary["min_ratio_v"] >= 1), "yes", "NO")
    # A static table: a data grid would cost the page's first plot about 0.25 s (its chunk).
    shown = summary.rename(columns={
        "min_ratio_p": "smallest ratio Δ_p", "median_ratio_p": "median ratio Δ_p",
        "min_ratio_v": "smallest ratio Δ_v", "median_ratio_v": "median ratio Δ_v",
        "median_tau": "median τ"})
    ratios = [c for c in shown.columns if "ratio" in c or c == "median τ"]
    st.table(shown.style.hide(axis="index").format({c: "{:.3g}" for c in ratios}))
    if (summary["bound holds"] == "NO").any():
        st.warning("Some ratio is below 1: the bound failed on at least one pair.")
    return manifold_key


def curvature_section(manifold_key):
    st.subheader("Why curvature matters: Jacobi fields")
    st.markdown(
        "Moving the footpoint or changing the shooting vector bends the whole geodesic. How far "
        "a nearby geodesic drifts after length s is a **Jacobi field** J(s). In positive "
        "curvature nearby geodesics converge (cos, sin), in flat space they keep their distance "
        "or spread linearly, in negative curvature they diverge exponentially (cosh, sinh). "
        "The gradients of the regression energy are these fields run backwards, so the "
        "sensitivity bounds carry the same factors."
    )
    cols = st.columns([1, 1, 1, 2])
    init("se_kappa", "se_kappa", 0.5, float, bounds=(0.1, 2.0))
    init("se_tau_m", "se_tau_m", 0.75, float, bounds=(0.1, 2.0))
    init("se_tau", "se_tau", 0.25, float, bounds=(0.05, 1.0))
    kappa = cols[0].slider("Curvature magnitude |κ|", 0.1, 2.0, step=0.1, key="se_kappa")
    tau_m = cols[1].slider("Response ball τ_m", 0.1, 2.0, step=0.05, key="se_tau_m")
    tau = cols[2].slider("Residual bound τ", 0.05, 1.0, step=0.05, key="se_tau")
    reach = 2 * (tau_m + tau)
    c = math.sqrt(kappa) * (tau_m + tau)
    cols[3].markdown(
        f"The bounds evaluate the fields at the largest geodesic length in play, "
        f"s = 2(τ_m + τ) = **{reach:.3g}**, with κ = −|κ| = **−{kappa:g}** "
        f"(c = √|κ|(τ_m + τ) = {c:.3g}). SPD(2) has κ_l = −1/2; S² and Kendall shapes have "
        "κ_l > 0 and keep the flat bound."
    )
    s_max = max(3.0, 1.2 * reach)
    cols = st.columns(2)
    show_figure(cols[0], V.jacobi_figure(kappa, s_max, which="point", mark=reach),
                         width="stretch", key="se_jacobi_p")
    cols[0].latex(rf"\Delta_p = \frac{{2\tau}}{{n}}\cosh(2c) = \frac{{2\tau}}{{n}}"
                  rf"\times {math.cosh(2 * c):.4g}")
    show_figure(cols[1], V.jacobi_figure(kappa, s_max, which="vector", mark=reach),
                         width="stretch", key="se_jacobi_v")
    cols[1].latex(rf"\Delta_v = \frac{{2\tau}}{{n}}\,\frac{{\sinh(2c)}}{{2c}} = "
                  rf"\frac{{2\tau}}{{n}}\times {math.sinh(2 * c) / (2 * c):.4g}")
    st.caption(
        "Left: J(0) = u, J′(0) = 0 (the footpoint moves, the direction is transported): "
        "|cos(√κ s)|, 1, cosh(√|κ| s). Right: J(0) = 0, J′(0) = u (the shooting vector "
        "changes), divided by its flat-space length s: sin(√κ s)/(√κ s), 1, sinh(√|κ| s)/"
        "(√|κ| s). The marked values are the factors by which Δ_p and Δ_v exceed the flat "
        "bound 2τ/n. In positive curvature the factors are at most 1, and the bounds simply "
        "keep 2τ/n."
    )
    if kappa_low(manifold_key) >= 0:
        st.caption("Select SPD(2) above to see the ratios under the cosh / sinh bounds.")


def main():
    st.title("Sensitivity")
    st.markdown(
        "Private releases add noise scaled to the **sensitivity**: the most one person's data "
        "can change the statistic. This page checks the closed-form sensitivity bounds of "
        "private geodesic regression against sensitivities measured on adjacent data sets, and "
        "explains where the curvature terms in those bounds come from."
    )
    manifold_key = ratio_section()
    # The formulas under the study, typeset (KaTeX) only once their section is opened, as on
    # the other pages: the browser renders a run's elements before it draws its first chart.
    notes, assumptions = st.columns(2)
    with notes:
        formula_notes("se_notes", teaching_notes)
    with assumptions:
        assumptions_box(manifold_key)
    curvature_section(manifold_key)
    # Settings, never data, go to the URL; also kept in the session for page switches.
    settings_state.finish()


main()
