"""Page: the Euclidean case. Private linear regression of several responses on one covariate,
dpcore's private geodesic regression on R^d against ordinary least squares and diffprivlib.

Uploaded files are parsed in memory by the library's CSV reader (:func:`dpcore.data.scan_table`
through :func:`ui.logic.linear_regression.parse_numeric_csv`), never written to disk, logged or
cached.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import time
import warnings
from types import SimpleNamespace

import numpy as np
import pandas as pd
import streamlit as st

from dpcore import visualization as V
from dpcore.data import DataValidationError
from dpcore.manifolds import Euclidean
from dpcore.release import private_geodesic_regression
from ui.caps import CAPS
from ui.logic import common as C
from ui.logic import linear_regression as L
from ui.logic import privacy_text as T
from ui.session import (
    planned_cost,
    query_value,
    record_release,
    release_button,
    rows_per_person,
    show_cost,
    write_query,
)

PAGE = "Linear regression"
EPS_OPTIONS = [0.2, 0.5, 1.0, 2.0, 5.0, 10.0]
LAST = "lr_last_release"
HAS_DIFFPRIVLIB = importlib.util.find_spec("diffprivlib") is not None


@st.cache_data(show_spinner=False, max_entries=32)
def example_frame(n, seed):
    """The generated example (deterministic, so cached)."""
    return L.example_regression_frame(n, seed=seed)


def teaching_notes():
    st.markdown(
        "On R^d a geodesic is a straight line, so geodesic regression of the responses on one "
        "covariate is ordinary least squares, one line per response. The private version "
        "(paper 002 / 000 §4) rescales x to [0, 1] with the public covariate range, clips each "
        "residual to norm τ and releases the intercept p and slope v by the K-norm gradient "
        "mechanism with budgets ε_p + ε_v = ε:"
    )
    st.latex(r"E(p, v) = \frac{1}{2n}\sum_{i=1}^n \|y_i - p - x_i v\|^2")
    st.latex(r"\tilde p \propto e^{-\|\nabla_p E\|/\sigma_p},\qquad "
             r"\tilde v \propto e^{-\|\nabla_v E\|/\sigma_v}")
    st.latex(r"\Delta_p = \Delta_v = \frac{2\tau}{n},\qquad \sigma = \frac{2\Delta}{\varepsilon}"
             r"\ \ (\text{rigorous rule})")
    st.markdown(
        "diffprivlib's `LinearRegression` (functional mechanism) gets the same total ε and the "
        "same public bounds."
    )


def assumptions_box(mode, cov_range, box, tau, tau_m, eps_p, eps_v, diffprivlib_on):
    if mode == "strict":
        rows = [
            ("Covariate range", f"[{cov_range[0]:.4g}, {cov_range[1]:.4g}], public; x is "
                                "clipped to it and mapped to [0, 1]."),
            ("Response box", "per response "
             + ", ".join(f"{name} ∈ [{lo:.4g}, {hi:.4g}]" for name, lo, hi in box)
             + f"; its circumscribed ball (radius τ_m = {tau_m:.4g}) holds the responses, "
               "which are projected onto it."),
            ("Residual bound", f"τ = {tau:.4g}; residuals are clipped to this norm, so "
                               f"Δ_p = Δ_v = 2τ/n holds for every data set."),
        ]
    else:
        rows = [("Paper mode", "bounds taken from the data: the output is NOT differentially "
                               "private, only a reproduction of the papers' choice.")]
    rows += [
        ("Budget", f"ε_p = {eps_p:.3g} (intercept) + ε_v = {eps_v:.3g} (slope) = "
                   f"{eps_p + eps_v:.3g} for dpcore"
                   + (f"; diffprivlib gets ε = {eps_p + eps_v:.3g} too (another release: the "
                      "ledger adds both)." if diffprivlib_on else ".")),
        ("Sampler", "strict mode uses the joint scheme; with clipping the gradient is no "
                    "longer affine, so KNG is drawn exactly by uniform rejection when its "
                    "public worst-case cost allows (labelled private), otherwise by "
                    "Metropolis–Hastings (labelled approximately private, δ not certified)."),
        ("Uploaded data", "parsed in memory, never written to disk, logged or cached."),
    ]
    with st.container(border=True):
        st.markdown("**Assumptions in force**")
        st.markdown(C.assumptions_markdown(rows))


def load_table(source):
    """Widgets for the data; returns (TextTable, fingerprint, example frame or None, query
    settings)."""
    if source == "example":
        cols = st.columns(2)
        n = cols[0].slider("Rows of the generated example", 20, 1000, value=int(np.clip(
            query_value("lr_n", 100, int), 20, 1000)), key="lr_n")
        seed = cols[1].number_input("Seed", 0, 10**6, value=query_value("lr_seed", 0, int),
                                    key="lr_seed")
        frame = example_frame(int(n), int(seed))
        data = frame.to_csv(index=False).encode()
        return L.parse_numeric_csv(data), f"example-{n}-{seed}", frame, {"lr_n": n,
                                                                         "lr_seed": seed}
    upload = st.file_uploader("Upload a CSV file (header row, one observation per row)",
                              type=["csv", "txt"], key="lr_upload")
    if upload is None:
        st.info("Upload a CSV file, or switch to the generated example.")
        return None, None, None, {}
    data = upload.getvalue()
    try:
        table = L.parse_numeric_csv(data)
    except DataValidationError as exc:
        st.error(f"The file could not be read:\n\n{exc}")
        return None, None, None, {}
    return table, "upload-" + hashlib.sha256(data).hexdigest()[:16], None, {}


def bounds_widgets(x, y, names, mode, scope=""):
    """Public bounds (strict) or None (paper mode). Returns a dict or None on invalid input.

    ``scope`` names the data and columns the bounds belong to: the widgets' keys include it,
    so choosing another covariate or responses starts from that column's own range instead of
    keeping the previous column's bounds (issue 14 §3).
    """
    if mode == "paper":
        st.warning("Paper mode takes the covariate range, τ and the response ball from the "
                   "data. The release is labelled NOT PRIVATE.")
        return {"covariate_range": None, "tau": None, "tau_m": None, "center": None,
                "box": [(nm, float(lo), float(hi)) for nm, lo, hi in
                        zip(names, y.min(axis=0), y.max(axis=0), strict=True)]}
    st.caption("Bounds must be public: set from domain knowledge, not from the data. The "
               "fields start from the data's range rounded outward, for convenience only: "
               "replace them before publishing anything.")
    cols = st.columns([1, 1, 1, 3])
    lo, hi = L.nice_bounds(x)
    cov_lo = cols[0].number_input("Covariate lower bound", value=float(lo),
                                  key=f"lr_cov_lo_{scope}", format="%.4g")
    cov_hi = cols[1].number_input("Covariate upper bound", value=float(hi),
                                  key=f"lr_cov_hi_{scope}", format="%.4g")
    default_box = pd.DataFrame({
        "response": list(names),
        "lower": [L.nice_bounds(y[:, j])[0] for j in range(len(names))],
        "upper": [L.nice_bounds(y[:, j])[1] for j in range(len(names))],
    })
    with cols[3]:
        box = st.data_editor(default_box, hide_index=True, disabled=["response"],
                             key=f"lr_box_{scope}", width="stretch",
                             column_config={"lower": st.column_config.NumberColumn(
                                 "lower bound", format="%.4g"),
                                 "upper": st.column_config.NumberColumn(
                                     "upper bound", format="%.4g")})
    lower = box["lower"].to_numpy(float)
    upper = box["upper"].to_numpy(float)
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
    tau = cols[2].number_input("Residual bound τ", min_value=1e-6, value=float(
        f"{tau_m:.2g}"), key=f"lr_tau_{scope}", format="%.4g",
        help="Residual norms are clipped to τ; the sensitivity is 2τ/n.")
    return {"covariate_range": (float(cov_lo), float(cov_hi)), "tau": float(tau),
            "tau_m": tau_m, "center": 0.5 * (lower + upper),
            "box": [(nm, float(a), float(b)) for nm, a, b in zip(names, lower, upper,
                                                                 strict=True)]}


def run_release(x, y, eps_p, eps_v, bounds, mode, use_diffprivlib):
    """dpcore's release and (optionally) diffprivlib's; both go to the ledger."""
    d = y.shape[1]
    out = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rel = private_geodesic_regression(
            Euclidean(d), x, y, eps_p=eps_p, eps_v=eps_v, tau=bounds["tau"],
            covariate_range=bounds["covariate_range"], tau_m=bounds["tau_m"],
            center=bounds["center"], mode=mode,
        )
    out["release"] = rel
    out["dpcore"] = (np.asarray(rel.values["intercept"]).reshape(d),
                     np.asarray(rel.values["coef"]).reshape(d))
    out["warnings"] = sorted({str(w.message) for w in caught})
    record_release(PAGE, rel)
    if use_diffprivlib:
        try:
            from diffprivlib.models import LinearRegression
        except ImportError as exc:  # installed but broken (e.g. an incompatible scikit-learn)
            out["diffprivlib_error"] = f"diffprivlib could not be imported ({exc})."
            return out
        lo_x, hi_x = bounds["covariate_range"] or (float(x.min()), float(x.max()))
        lower = np.array([b[1] for b in bounds["box"]])
        upper = np.array([b[2] for b in bounds["box"]])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = LinearRegression(epsilon=eps_p + eps_v, bounds_X=([lo_x], [hi_x]),
                                     bounds_y=(lower, upper))
            model.fit(x[:, None], y)
        coef = np.asarray(model.coef_, dtype=float).reshape(d)
        intercept = np.asarray(model.intercept_, dtype=float).reshape(d)
        out["diffprivlib"] = (intercept, coef)
        private = mode == "strict"
        record_release(PAGE, SimpleNamespace(
            mechanism="diffprivlib LinearRegression", epsilon=eps_p + eps_v, delta=0.0,
            mu=None, label="private (diffprivlib)" if private else
            "NOT PRIVATE (paper mode: bounds from the data)",
            guarantee="private" if private else "not private"), note="diffprivlib baseline")
    return out


def main():
    st.title("Linear regression")
    st.markdown(
        "The Euclidean special case of private geodesic regression: choose a covariate and "
        "one or more responses from a CSV file (or the generated example) and compare the "
        "non-private least-squares lines with private ones from **dpcore** and, when "
        "installed, **diffprivlib** at the same ε."
    )
    settings = {}
    with st.container(border=True):
        sources = ["example", "upload"]
        source = st.radio("Data", sources, index=sources.index(query_value(
            "lr_src", "example", str, choices=sources)),
            format_func={"example": "Generated example", "upload": "Upload CSV"}.get,
            horizontal=True, key="lr_src")
        settings["lr_src"] = source
        table, fingerprint, example, extra = load_table(source)
        settings.update(extra)
    if table is None:
        write_query(**settings)
        return
    if table.text_columns:
        st.caption("Text columns ignored: " + ", ".join(f"'{c}'" for c in table.text_columns))
    if len(table.numeric_columns) < 2:
        st.error("The file needs at least two numeric columns: a covariate and a response.")
        write_query(**settings)
        return
    cols = st.columns([1, 2])
    covariate = cols[0].selectbox("Covariate column (x)", table.numeric_columns,
                                  key=f"lr_cov_{fingerprint}")
    options = [c for c in table.numeric_columns if c != covariate]
    responses = cols[1].multiselect("Response columns (y)", options,
                                    # One response by default: a line in R¹ is drawn by
                                    # the exact sampler (private, δ = 0); more go to R^d.
                                    default=options[:1],
                                    max_selections=CAPS["lr_responses"],
                                    key=f"lr_resp_{fingerprint}_{covariate}")
    if not responses:
        st.info("Choose at least one response column.")
        write_query(**settings)
        return
    try:
        values = L.select_numeric(table, [covariate, *responses])
    except DataValidationError as exc:
        st.error(f"Some cells of the chosen columns cannot be used:\n\n{exc}")
        write_query(**settings)
        return
    x, y = values[:, 0], values[:, 1:]
    if x.size < 3:
        st.error(f"The regression needs at least 3 rows; the file has {x.size}.")
        write_query(**settings)
        return
    if np.ptp(x) == 0:
        st.error(f"Column '{covariate}' is constant ({x[0]:.6g} in every row): no line can "
                 "be fitted.")
        write_query(**settings)
        return

    with st.container(border=True):
        cols = st.columns([2, 2, 2, 2])
        epsilon = cols[0].select_slider("Total budget ε", EPS_OPTIONS, value=query_value(
            "lr_eps", 2.0, float, choices=EPS_OPTIONS), key="lr_eps")
        cols[0].caption(T.epsilon_reading(epsilon, rows=rows_per_person()))
        share = cols[1].slider("Share of ε for the intercept (ε_p / ε)", 0.1, 0.9, value=float(
            np.clip(query_value("lr_split", 0.5, float), 0.1, 0.9)), step=0.05, key="lr_split")
        modes = ["strict", "paper"]
        mode = cols[2].radio("Bounds", modes, index=modes.index(query_value(
            "lr_mode", "strict", str, choices=modes)),
            format_func={"strict": "Public (strict, private)",
                         "paper": "From the data (paper mode, not private)"}.get,
            key="lr_mode")
        # The comparison is a second release of the data (it costs ε too): opt-in.
        use_dpl = cols[3].checkbox("Compare with diffprivlib",
                                   value=query_value("lr_dpl", False, bool) and HAS_DIFFPRIVLIB,
                                   disabled=not HAS_DIFFPRIVLIB, key="lr_dpl",
                                   help="diffprivlib's LinearRegression at the same ε: a second "
                                        "release of the data, which the ledger records too.")
        if not HAS_DIFFPRIVLIB:
            cols[3].info("diffprivlib is not installed (it is a development dependency: "
                         "`pip install diffprivlib`), so its comparison is skipped.")
        scope = hashlib.sha256(json.dumps([fingerprint, covariate, responses]).encode()
                               ).hexdigest()[:12]
        bounds = bounds_widgets(x, y, responses, mode, scope)
    settings.update(lr_eps=epsilon, lr_split=share, lr_mode=mode, lr_dpl=bool(use_dpl))
    eps_p, eps_v = share * epsilon, (1 - share) * epsilon
    if bounds is None:
        write_query(**settings)
        return

    a0, b0 = L.linear_fit(x, y)
    lines = {"Non-private least squares": (a0, b0)}
    key = json.dumps([fingerprint, covariate, responses, epsilon, share, mode, bool(use_dpl),
                      bounds["covariate_range"], bounds["tau"],
                      [list(b) for b in bounds["box"]]], default=str)
    st.subheader("Private release")
    st.caption("Pressing *Release* draws the private lines with OS entropy and records them in "
               "the privacy ledger (dpcore and diffprivlib each cost ε). Nothing private is "
               "computed before that.")
    plan = L.release_plan(y.shape[0], y.shape[1], eps_p, eps_v, bounds, mode)
    mcmc_ok = True
    if plan["guarantee"] == "approximately private":
        st.warning("dpcore's release will use **MCMC** (exact sampling could need up to "
                   f"{plan['work']:.3g} gradient terms at this n × ε, limit {plan['limit']:.3g}) "
                   "and be labelled **approximately private (MCMC; δ not certified)**. Lower ε "
                   "for an exact, private release.", icon=":material/warning:")
        mcmc_ok = st.checkbox("Draw by MCMC anyway (approximately private)", key="lr_mcmc_ok")
    total = float(epsilon) * (2 if use_dpl else 1)
    cost = planned_cost(epsilon=total, guarantee="private" if mode == "strict" else "not private")
    show_cost(cost, " (dpcore's release and diffprivlib's, ε each.)" if use_dpl else "")
    if release_button("lr_release", cost, disabled=not mcmc_ok):
        with st.status("Sampling the private intercept and slope …") as status:
            start = time.perf_counter()
            try:
                out = run_release(x, y, eps_p, eps_v, bounds, mode, bool(use_dpl))
            except (ValueError, RuntimeError) as exc:
                status.update(label="The release failed", state="error")
                st.error(f"The release failed: {exc}")
                out = None
            if out is not None:
                out["seconds"] = time.perf_counter() - start
                out["key"] = key
                st.session_state[LAST] = out
                # No run time: that of a strict release depends on the data.
                status.update(label="Released", state="complete")
    last = st.session_state.get(LAST)
    current = last if last and last["key"] == key else None
    if last and current is None:
        st.info("The data or settings changed since the last release (it stays in the "
                "ledger). Press *Release* again for the current settings.")
    if current is not None:
        lines["dpcore private geodesic regression"] = current["dpcore"]
        if "diffprivlib" in current:
            lines["diffprivlib LinearRegression"] = current["diffprivlib"]
        for message in current["warnings"]:
            st.warning(message)
        if "diffprivlib_error" in current:
            st.info(current["diffprivlib_error"] + " Its comparison is skipped.")

    st.plotly_chart(V.linear_regression_figure(
        x, y, responses, lines, x_name=covariate,
        title=f"Least-squares and private lines at ε = {epsilon:g}" if current else
        "Least-squares lines (press Release for the private ones)"),
        width="stretch", key="lr_figure")
    preds = {name: a[None, :] + x[:, None] * b[None, :] for name, (a, b) in lines.items()}
    st.markdown("**Mean squared error per response** (on the data used for the fit)")
    st.dataframe(L.mse_table(y, responses, preds), width="stretch",
                 column_config={name: st.column_config.NumberColumn(name, format="%.4g")
                                for name in preds})
    if current is not None:
        rel = current["release"]
        cols = st.columns(4)
        if rel.delta is None:
            cols[0].metric("Guarantee (dpcore)", f"ε = {rel.epsilon:.3g}",
                           help="MCMC release: no δ is certified (see its label).")
        else:
            cols[0].metric("Guarantee (dpcore)", f"ε = {rel.epsilon:.3g}, δ = {rel.delta:.2g}")
        cols[1].metric("Sensitivity Δ_p = Δ_v", f"{rel.sensitivity['footpoint']:.3g}")
        if "joint" in rel.sigma:
            cols[2].metric("σ (joint scheme)", f"{rel.sigma['joint']:.3g}")
        else:
            cols[2].metric("σ_p / σ_v", f"{rel.sigma['footpoint']:.3g} / "
                                        f"{rel.sigma['shooting_vector']:.3g}")
        # No release time: the run time of a strict release depends on the data.
        cols[3].metric("Sampler", "exact" if rel.private or rel.delta == 0 else "MCMC")
        st.caption(f"Label: {rel.label}.")
        st.download_button("Download release", json.dumps(rel.to_dict(), indent=2),
                           file_name="linear_regression_release.json",
                           mime="application/json", key="lr_download_release", on_click="ignore")
    if example is not None:
        st.download_button("Download data", example.to_csv(index=False),
                           file_name="linear_regression_example.csv", mime="text/csv",
                           key="lr_download_data", on_click="ignore")

    notes, assumptions = st.columns(2)
    with notes, st.container(border=True):
        st.markdown("**Teaching notes**")
        teaching_notes()
    with assumptions:
        assumptions_box(mode, bounds["covariate_range"], bounds["box"], bounds["tau"] or 0.0,
                        bounds["tau_m"] or 0.0, eps_p, eps_v, bool(use_dpl))
    write_query(**settings)


main()
