"""The two-stage design's inputs on the Geodesic regression page (issue 28 point 4): a private
centre first, then the joint KNG in a public-radius ball about it. The logic and the release
are :mod:`ui.logic.two_stage`."""

from __future__ import annotations

import streamlit as st

from ui.logic import two_stage as TS

__all__ = ["two_stage_inputs", "two_stage_plan_text", "two_stage_value"]

HELP = ("For data without a public footpoint region (an upload, say): most of the one-stage "
        "mechanism's mass then lies far from the data. Stage 1 spends ε₁ on a private Fréchet "
        "mean of the responses (Riemannian Laplace, exact) inside a public ball holding them; "
        "stage 2 draws the geodesics with the footpoint within a public radius ρ of that "
        "centre. The budgets add up: total ε = ε₁ + the geodesics' ε.")


def two_stage_value(kind, scheme, eps_p, eps_v, draws, init):
    """The two-stage design's settings, read before its inputs are drawn: a
    :class:`ui.logic.two_stage.TwoStage` when it is chosen, else None. Offered in strict mode
    with the joint scheme on :data:`ui.logic.two_stage.TWO_STAGE_KINDS` (``init``: the page's
    :meth:`ui.session.PageSettings.init`, which gives each widget its starting value)."""
    if scheme != "joint" or kind not in TS.TWO_STAGE_KINDS:
        return None
    ss = st.session_state
    init("gr_two_stage", None, False, bool)
    if not ss["gr_two_stage"]:
        return None
    init("gr_ts_eps", None, TS.default_center_epsilon(eps_p, eps_v, draws), float,
         bounds=(0.01, 100.0))
    eps_center = float(ss["gr_ts_eps"])
    if kind != "sphere":
        return TS.TwoStage(eps_center)
    (lat, lon), radius = TS.SPHERE_BALL_START
    init("gr_ts_lat", None, lat, float, bounds=(-90.0, 90.0))
    init("gr_ts_lon", None, lon, float, bounds=(-180.0, 180.0))
    init("gr_ts_r", None, radius, float, bounds=(0.01, TS.SPHERE_BALL_MAX))
    return TS.TwoStage(eps_center, (float(ss["gr_ts_lat"]), float(ss["gr_ts_lon"])),
                       float(ss["gr_ts_r"]))


def two_stage_inputs(kind, scheme):
    """The checkbox and inputs of the two-stage design (their values are read before, by
    :func:`two_stage_value`)."""
    if scheme != "joint":
        return
    if kind not in TS.TWO_STAGE_KINDS:
        st.caption("Two-stage design (private centre first): needs a public ball holding the "
                   "shapes, which the page has no way to state for Kendall shapes; the rat "
                   "preset's box shows what it does there.")
        return
    if not st.checkbox("Two-stage: a private centre first, then the footpoint near it",
                       key="gr_two_stage", help=HELP):
        return
    st.number_input("ε₁ of the private centre (spent once)", 0.01, 100.0, key="gr_ts_eps",
                    step=0.1, format="%.3g")
    if kind != "sphere":
        st.caption("Stage 1's public ball: the response ball B_τ_m(c) above.")
        return
    c1, c2, c3 = st.columns(3)
    c1.number_input("Data ball: latitude (°)", -90.0, 90.0, key="gr_ts_lat", step=1.0,
                    format="%.4g")
    c2.number_input("longitude (°)", -180.0, 180.0, key="gr_ts_lon", step=1.0, format="%.4g")
    c3.number_input("radius (rad)", 0.01, TS.SPHERE_BALL_MAX, key="gr_ts_r", step=0.05,
                    format="%.3g",
                    help="A public ball holding every response (below π/4, which the Laplace "
                         "mechanism's sensitivity needs); responses outside are projected "
                         "onto it in stage 1.")


def two_stage_plan_text(plan, epsilon):
    """The sentence above the Release button for a two-stage release (Markdown)."""
    whole = plan["two_stage"]
    first = "exact and float-safe" if whole["float_safe"] else (
        "exact" if whole["stage1"]["exact"] else "by MCMC")
    second = ("exact" if whole["stage2"]["exact"] else "by MCMC")
    label = {"private": "**private** (ε-DP, δ = 0)",
             "approximately private": "**approximately private** (δ not certified)"}.get(
        whole["guarantee"], f"**{whole['guarantee']}**")
    return (f"**Two-stage release**, total ε = {epsilon:g}: stage 1 draws the private centre "
            f"{first}; stage 2 draws the geodesics {second}, the footpoint within "
            f"ρ = {plan['footpoint_radius']:.3g} of the centre (V + τ + the centre's "
            f"predicted 95% error; public inputs only). Labelled {label}.")
