""""Estimate privately" on the Geodesic regression page (issue 14, point 2): an uploaded
file's covariate range under DP with a stated ε_b, through the same confirmation, session cap
and ledger as a release (:mod:`ui.logic.private_bounds`)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ui.logic import private_bounds as PB
from ui.session import (
    finish_release,
    mark_typed,
    record_release,
    release_button,
    release_error,
    rows_per_person,
    show_estimate_budget,
)

__all__ = ["ESTIMATES", "ESTIMATE_BUTTON", "estimate_section"]

#: Session-state key of the covariate ranges estimated under DP, by scope (file, manifold and
#: covariate column).
ESTIMATES = "gr_bounds_estimates"
#: Widget key of the estimate's button.
ESTIMATE_BUTTON = "gr_bounds_estimate"
#: The page the estimates are recorded for in the ledger.
PAGE = "Geodesic regression"


def estimate_section(x, covariate, scope, epsilon):
    """"Estimate privately": the covariate's range under DP with a stated ε_b, spent through
    the same confirmation, cap and ledger as a release (:mod:`ui.logic.private_bounds`). On
    confirmation the estimate is made, recorded and kept for ``scope``; the rerun fills the
    covariate range fields with it. ``epsilon`` is the release's own cost (for the default ε_b
    and the total). Only the covariate: the responses' bounds (τ, τ_m, the regions) are
    geometric and set above."""
    with st.expander("Estimate privately: don't know the covariate's range? Spend a small, "
                     "stated ε_b on it"):
        st.caption(f"The exponential mechanism (Smith 2011) releases a low and a high quantile "
                   f"of '{covariate}' inside a public enclosing interval you give (from the "
                   "column's units, never from the data; values outside it are clipped to "
                   "it). The estimate is a release of its own: it costs ε_b, is confirmed and "
                   "recorded in the ledger like any release, and the range then fills the "
                   "fields above.")
        default = PB.enclosing_default(covariate)
        c1, c2 = st.columns(2)
        enc_lo = c1.number_input("Enclosing interval: low", value=default.low,
                                 key=f"gr_enc_lo_{scope}", format="%.6g")
        enc_hi = c2.number_input("high", value=default.high, key=f"gr_enc_hi_{scope}",
                                 format="%.6g")
        st.caption(f"Default from {default.reason}.")
        table = pd.DataFrame({"column": [covariate], "lower": [enc_lo], "upper": [enc_hi]})
        problems = PB.interval_problems(table)
        if problems:
            st.error("\n".join(f"- {p}" for p in problems))
        confirmed = True
        if not problems and PB.unconfirmed_columns(table):
            lo, hi = PB.WIDE_INTERVAL
            confirmed = st.checkbox(
                f"I confirm that every value of '{covariate}' lies in [{lo:,.0f}, {hi:,.0f}], "
                "or may be clipped to it (a public fact, not read from the data)",
                key=f"gr_wide_ok_{scope}")
        # ε_b follows the release's cost until typed (then it is the user's own value).
        eps_key = f"gr_eps_b_{scope}"
        typed_key = f"{eps_key}_typed"
        if not st.session_state.get(typed_key):
            st.session_state[eps_key] = min(max(PB.default_budget(epsilon), 0.001), 1000.0)
        eps_b = st.number_input(
            "Budget of the estimate ε_b", min_value=0.001, max_value=1000.0, key=eps_key,
            format="%.3g", on_change=mark_typed, args=(typed_key,),
            help=f"By default {100 * PB.DEFAULT_SHARE:g}% of this release's cost ε (it "
                 "follows the cost until typed).")
        trim = st.select_slider("Rows allowed beyond each end (%)", PB.TRIM_OPTIONS, value=2.0,
                                key=f"gr_trim_{scope}")
        st.caption(PB.composition_text(float(eps_b), float(epsilon)))
        levels = PB.levels_of(trim)
        cost = show_estimate_budget(eps_b, 1, x.size, levels, "covariate range estimate")
        if not confirmed:
            st.info("Confirm the wide enclosing interval above (or type one from the column's "
                    "units) before estimating.")
        if release_button(ESTIMATE_BUTTON, cost, label="Estimate privately",
                          disabled=bool(problems) or not confirmed):
            try:
                est = PB.estimate_bounds({covariate: x}, {covariate: (enc_lo, enc_hi)},
                                         float(eps_b), levels)
            except ValueError as exc:
                finish_release(ESTIMATE_BUTTON, error=exc)
            record_release(PB.ledger_page(PAGE), est.release,
                           note=PB.ledger_note(est, rows_per_person()))
            store = st.session_state.setdefault(ESTIMATES, {})
            token = store.get(scope, {}).get("token", 0) + 1
            store[scope] = {"range": est.ranges[covariate], "epsilon": est.epsilon,
                            "levels": est.levels, "token": token}
            finish_release(ESTIMATE_BUTTON)
        release_error(ESTIMATE_BUTTON, "The estimate")
