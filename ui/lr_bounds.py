"""The Linear regression page's public bounds: the fields (covariate range, response box, τ,
the ball) with where each start comes from, and the "Estimate privately" section that fills
them with ranges estimated under DP (a release of its own, recorded in the ledger)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from ui.logic import linear_regression as L
from ui.logic import private_bounds as PB
from ui.session import (
    finish_release,
    lazy_expander,
    mark_typed,
    record_release,
    release_button,
    release_error,
    rows_per_person,
    show_estimate_budget,
)

PAGE = "Linear regression"
#: Session-state key of the ranges estimated under DP, by scope (data and columns).
ESTIMATES = "lr_bounds_estimates"
ESTIMATE_BUTTON = "lr_bounds_estimate"


def bounds_widgets(x, y, names, mode, scope="", public=None, covariate=None, estimate=None,
                   describe_public=None):
    """Public bounds (strict) or None (paper mode). Returns a dict or None on invalid input.

    ``scope`` names the data and columns the bounds belong to: the widgets' keys include it,
    so choosing another covariate or responses starts from that column's own range instead of
    keeping the previous column's bounds (issue 14 §3). ``public`` maps column names to bounds
    from domain knowledge (a preset's) or a generator's design, described by
    ``describe_public``; they replace the data's range as defaults.
    ``estimate`` (from :func:`estimate_section`) holds ranges estimated under DP; they fill the
    fields (new keys, so the fields start from them) and the returned dict's ``estimated``
    says which bounds still hold them, with the statement the release carries. A field still
    holding a start taken from the data (the data's range rounded outward) is not public: a
    warning says so, and the returned ``held`` / ``bound_sources``
    (:func:`ui.logic.linear_regression.data_held`) make the release say so too (labelled NOT
    PRIVATE).
    """
    if mode == "paper":
        st.warning("Paper mode takes the covariate range, τ and the response ball from the "
                   "data. The release is labelled NOT PRIVATE.")
        return {"covariate_range": None, "tau": None, "tau_m": None, "center": None,
                "box": [(nm, float(lo), float(hi)) for nm, lo, hi in
                        zip(names, y.min(axis=0), y.max(axis=0), strict=True)]}
    public = public or {}
    ranges = estimate["ranges"] if estimate else {}
    # An estimate gives the fields new keys: they start from it (and later edits stay).
    suffix = f"_est{estimate['token']}" if estimate else ""
    starts = {nm: L.start_bounds(nm, x if nm == covariate else y[:, names.index(nm)],
                                 public=public, estimated=ranges)
              for nm in (covariate, *names)}
    others = [nm for nm, (_, _, origin) in starts.items() if origin == "data"]
    if ranges:
        st.caption(f"Bounds must be public. The fields of {', '.join(map(repr, ranges))} hold "
                   f"the ranges estimated under DP with ε_b = {estimate['epsilon']:.3g} (a "
                   "release recorded in the ledger)"
                   + (f"; those of {', '.join(map(repr, others))} start from the data's range "
                      "rounded outward, for convenience only: replace them before publishing "
                      "anything." if others else "."))
    elif not others:
        st.caption("Bounds must be public: these come from "
                   + (describe_public or "domain knowledge of the columns") + ", not from the "
                   "data.")
    else:
        st.caption("Bounds must be public: set from domain knowledge, not from the data. The "
                   "fields start from the data's range rounded outward, for convenience only: "
                   "replace them before publishing anything, or estimate them privately "
                   "below.")

    cols = st.columns([1, 1, 1, 3])
    lo, hi, _ = starts[covariate]
    cov_lo = cols[0].number_input("Covariate lower bound", value=float(lo),
                                  key=f"lr_cov_lo_{scope}{suffix}", format="%.4g")
    cov_hi = cols[1].number_input("Covariate upper bound", value=float(hi),
                                  key=f"lr_cov_hi_{scope}{suffix}", format="%.4g")
    # The response box: one pair of fields per response (number fields rather than a data
    # grid, whose first appearance costs the page's first plot about 0.25 s).
    lower, upper = np.empty(len(names)), np.empty(len(names))
    with cols[3]:
        for i, nm in enumerate(names):
            lo_nm, hi_nm, _ = starts[nm]
            c_lo, c_hi = st.columns(2)
            lower[i] = c_lo.number_input(f"'{nm}': lower bound", value=float(lo_nm),
                                         key=f"lr_box_{scope}{suffix}_{nm}_lo", format="%.4g")
            upper[i] = c_hi.number_input(f"'{nm}': upper bound", value=float(hi_nm),
                                         key=f"lr_box_{scope}{suffix}_{nm}_hi", format="%.4g")
    problems = []
    if not (np.isfinite(cov_lo) and np.isfinite(cov_hi) and cov_lo < cov_hi):
        problems.append("The covariate lower bound must be below the upper bound.")
    for nm, a, b in zip(names, lower, upper, strict=True):
        if not (np.isfinite(a) and np.isfinite(b) and a < b):
            problems.append(f"Response '{nm}': the lower bound must be below the upper bound.")
    if problems:
        st.error("\n".join(f"- {p}" for p in problems))
        return None
    tau_m = 0.5 * float(np.linalg.norm(upper - lower))
    # τ follows the box until it is typed (then it is the user's own value).
    tau_key = f"lr_tau_{scope}{suffix}"
    typed_key = f"{tau_key}_typed"
    if not st.session_state.get(typed_key) or tau_key not in st.session_state:
        st.session_state[tau_key] = L.default_tau(lower, upper)
    tau = cols[2].number_input("Residual bound τ", min_value=1e-6, key=tau_key, format="%.4g",
                               on_change=mark_typed, args=(typed_key,),
                               help="Residual norms are clipped to τ; the sensitivity is 2τ/n. "
                                    "Until typed, it follows the response box.")
    from_data = L.data_held(covariate, names, starts, (cov_lo, cov_hi),
                            list(zip(lower, upper, strict=True)),
                            bool(st.session_state.get(typed_key)))
    warning = L.data_bounds_warning(covariate, from_data)
    if warning:
        st.warning(warning, icon=":material/warning:")
    estimated = {}
    if ranges:
        note = PB.estimated_note(estimate["epsilon"], estimate["levels"])
        if PB.matches_estimate((cov_lo, cov_hi), ranges.get(covariate)):
            estimated["covariate_range"] = note
        held = [nm for nm, a, b in zip(names, lower, upper, strict=True)
                if PB.matches_estimate((a, b), ranges.get(nm))]
        if held:
            box_note = f"the response box of {', '.join(map(repr, held))} {note}"
            estimated["tau_m"] = estimated["center"] = box_note
    return {"covariate_range": (float(cov_lo), float(cov_hi)), "tau": float(tau),
            "tau_m": tau_m, "center": 0.5 * (lower + upper),
            "box": [(nm, float(a), float(b)) for nm, a, b in zip(names, lower, upper,
                                                                 strict=True)],
            "estimated": estimated, "held": from_data,
            "bound_sources": L.bound_sources(from_data)}


def estimate_section(x, y, covariate, responses, scope, epsilon, public, group_ok):
    """"Estimate privately": the ranges of the covariate and responses under DP with a stated
    ε_b, spent through the same confirmation, cap and ledger as a release
    (:mod:`ui.logic.private_bounds`). On confirmation the estimate is made, recorded and kept
    for this scope; the rerun fills the bounds fields with it."""
    names = [covariate, *responses]
    eps_key, trim_key = f"lr_eps_b_{scope}", f"lr_trim_{scope}"
    column_keys = {nm: f"lr_est_col_{scope}_{nm}" for nm in names}
    box = lazy_expander("Estimate privately: don't know the ranges? Spend a small, stated ε_b "
                        "on them", "lr_estimate_open",
                        keep=[eps_key, f"{eps_key}_typed", trim_key, *column_keys.values()])
    if box is None:
        return
    with box:
        st.caption("The exponential mechanism (Smith 2011) releases a low and a high quantile "
                   "of each chosen column inside a public enclosing interval you give (from "
                   "the column's units, never from the data; values outside it are clipped "
                   "to it). The estimate is a release of its own: it costs ε_b, is confirmed "
                   "and recorded in the ledger like any release, and the ranges then fill the "
                   "fields above.")
        cols = st.columns([1, 1, 2])
        # ε_b follows the page's budget until typed (then it is the user's own value).
        typed_key = f"{eps_key}_typed"
        # (a typed value the session lost on a page switch follows the budget again)
        if not st.session_state.get(typed_key) or eps_key not in st.session_state:
            st.session_state[eps_key] = min(max(PB.default_budget(epsilon), 0.001), 100.0)
        eps_b = cols[0].number_input(
            "Budget of the estimate ε_b", min_value=0.001, max_value=100.0, key=eps_key,
            format="%.3g", on_change=mark_typed, args=(typed_key,),
            help=f"By default {100 * PB.DEFAULT_SHARE:g}% of the page's budget ε (it follows "
                 "ε until typed).")
        st.session_state.setdefault(trim_key, 2.0)
        trim = cols[1].select_slider("Rows allowed beyond each end (%)", PB.TRIM_OPTIONS,
                                     key=trim_key)
        with cols[2]:
            st.caption("Columns to estimate")
            for key in column_keys.values():
                st.session_state.setdefault(key, True)
            chosen = [nm for nm in names
                      if st.checkbox(f"'{nm}'" + (" (covariate)" if nm == covariate else ""),
                                     key=column_keys[nm])]
        st.caption(PB.composition_text(float(eps_b), float(epsilon)))
        if not chosen:
            st.info("Choose at least one column to estimate.")
            return
        editor_key = f"lr_enclosing_{scope}_{'|'.join(chosen)}"
        kept_key, base_key = f"lr_enclosing_kept_{scope}", f"{editor_key}_base"
        if editor_key not in st.session_state or base_key not in st.session_state:
            # A new editor (first shown, or shown again after closing, which drops its edits)
            # starts from the intervals typed before; kept while it lives (edits apply to it).
            st.session_state[base_key] = PB.enclosing_table(
                chosen, public, kept=st.session_state.get(kept_key))
        table = st.data_editor(
            st.session_state[base_key], hide_index=True,
            disabled=["column", "from"], width="stretch",
            key=editor_key,
            column_config={"lower": st.column_config.NumberColumn(
                "enclosing lower end", format="%.6g"),
                "upper": st.column_config.NumberColumn("enclosing upper end", format="%.6g"),
                "from": st.column_config.TextColumn("default from", width="large")})
        st.session_state[kept_key] = PB.typed_intervals(table, public,
                                                        st.session_state.get(kept_key))
        problems = PB.interval_problems(table)
        if problems:
            st.error("\n".join(f"- {p}" for p in problems))
        wide = PB.unconfirmed_columns(table) if not problems else []
        confirmed = True
        if wide:
            lo, hi = PB.WIDE_INTERVAL
            confirmed = st.checkbox(
                f"I confirm that every value of {', '.join(map(repr, wide))} lies in "
                f"[{lo:,.0f}, {hi:,.0f}], or may be clipped to it (a public fact, not read "
                "from the data)", key=f"lr_wide_ok_{scope}_{'|'.join(wide)}")
        levels = PB.levels_of(trim)
        cost = show_estimate_budget(eps_b, len(chosen), x.size, levels, "bounds estimate")
        ready = not problems and confirmed and group_ok
        if not confirmed:
            st.info("Confirm the wide enclosing interval above (or type one from the column's "
                    "units) before estimating.")
        if not group_ok:
            st.info("Confirm above that the largest group size is public before estimating.")
        if release_button(ESTIMATE_BUTTON, cost, label="Estimate privately",
                          disabled=not ready):
            data = {nm: (x if nm == covariate else y[:, responses.index(nm)]) for nm in chosen}
            intervals = {nm: (lo, hi) for nm, lo, hi in
                         zip(table["column"], table["lower"], table["upper"], strict=True)}
            try:
                est = PB.estimate_bounds(data, intervals, float(eps_b), levels)
            except ValueError as exc:
                finish_release(ESTIMATE_BUTTON, error=exc)
            record_release(PB.ledger_page(PAGE), est.release,
                           note=PB.ledger_note(est, rows_per_person()))
            store = st.session_state.setdefault(ESTIMATES, {})
            token = store.get(scope, {}).get("token", 0) + 1
            store[scope] = {"ranges": est.ranges, "epsilon": est.epsilon,
                            "levels": est.levels, "token": token}
            finish_release(ESTIMATE_BUTTON)
        release_error(ESTIMATE_BUTTON, "The estimate")
