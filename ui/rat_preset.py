"""The rat skulls preset on the Geodesic regression page: applying it (a callback of the data
source) and its box, today's design and the two-stage design side by side (issue 28 point 4).
The figures and the data come from :mod:`ui.logic.rat_preset`."""

from __future__ import annotations

import streamlit as st

from ui.logic.geodesic_regression import USEFUL_RATIO
from ui.logic.rat_preset import (
    RAT_BOUNDS_NOTE,
    RAT_PRESET,
    RAT_PROVENANCE,
    futile_release_note,
    rat_comparison,
    rat_skulls_dataset,
)
from ui.session import ROWS_KEY

__all__ = ["RAT_PRESET", "apply_rat_preset", "futile_release_note", "rat_skulls_dataset",
           "show_rat_preset", "source_changed"]


def source_changed():
    """Choosing the data *Preset: rat skulls* applies the preset (the one place it is offered)."""
    if st.session_state.get("gr_source") == "rats":
        apply_rat_preset()


def show_rat_preset():
    """The rat preset's box: its provenance and public bounds, then today's one-stage design
    and the two-stage design side by side (issue 28 point 4; figures in ui.logic.rat_preset)."""
    st.info(f"**Rat skulls preset.** {RAT_PROVENANCE}\n\n{RAT_BOUNDS_NOTE}",
            icon=":material/menu_book:")
    with st.container(border=True, key="gr_rat_designs"):
        st.markdown("**What a private release can do with these skulls**: the preset's budget "
                    "spent two ways (median draw's MSE over the non-private MSE; useful at "
                    f"most {USEFUL_RATIO:g}×).")
        for column, (heading, figure, caption) in zip(st.columns(2), rat_comparison(),
                                                      strict=True):
            column.markdown(f"**{heading}**")
            column.markdown(f"#### {figure}")
            column.caption(caption)


def apply_rat_preset():
    """One click: Kendall shapes with 8 landmarks, the rat skulls, their public bounds and
    budget, and 8 rows per person (one rat) for the ledger (a callback: runs before the page)."""
    preset, ss = RAT_PRESET, st.session_state
    ss["gr_manifold"] = ss["gr_prev_kind"] = preset["kind"]
    ss[f"gr_param_{preset['kind']}"] = preset["param"]
    ss["gr_source"], ss["gr_mode"], ss["gr_scheme"] = "rats", "strict", "joint"
    ss[f"gr_tau_{preset['kind']}"] = preset["tau"]
    ss["gr_lo_rats"], ss["gr_hi_rats"] = preset["covariate_range"]
    ss[f"gr_ms_{preset['kind']}_rats"] = preset["max_speed"]
    ss["gr_budget_input"] = "separate"
    ss["gr_eps_p"], ss["gr_eps_v"] = preset["eps_p"], preset["eps_v"]
    ss["gr_nf"], ss["gr_nv"] = preset["n_footpoints"], preset["n_vectors"]
    ss[ROWS_KEY] = preset["rows_per_person"]
