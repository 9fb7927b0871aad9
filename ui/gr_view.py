"""The numbers beside the Geodesic regression page's figure: the non-private fit's MSE, or a
release's label, errors, sensitivities, σ, budget, sampler diagnostics and caveats."""

from __future__ import annotations

import streamlit as st

from ui.logic import geodesic_regression as G


def release_numbers(settings, fit, release, met, notes):
    """Draw the numbers of ``release`` (None: the fit's MSE and a hint) with its metrics
    ``met`` (:func:`ui.logic.geodesic_regression.release_metrics`) and the warnings its run
    raised (``notes``)."""
    if release is None:
        st.metric("MSE of the non-private fit", f"{fit.mse:.4g}")
        st.caption("Press **Release** to draw private geodesics and compare.")
    else:
        if release.private:
            st.success(f"Label: **{release.label}**", icon=":material/lock:")
        else:
            st.warning(f"Label: **{release.label}**", icon=":material/warning:")
        m1, m2 = st.columns(2)
        m1.metric("MSE, non-private", f"{met['mse_nonprivate']:.4g}")
        m2.metric("MSE, private (mean)", f"{met['mse_private']:.4g}",
                  delta=f"{met['mse_private'] / max(met['mse_nonprivate'], 1e-300):.3g}× "
                        "non-private", delta_color="off", delta_arrow="off")
        m3, m4, m5 = st.columns(3)
        m3.metric("Footpoint shift", f"{met['footpoint_distance']:.3g}",
                  help="Mean geodesic distance d(p̃, p̂) over the private footpoints.")
        m4.metric("Vector angle", f"{met['angle_deg']:.3g}°",
                  help="Mean angle between v̂ and ṽ transported to p̂.")
        m5.metric("Length error", G.length_error_text(met["relative_length_error"]),
                  help=f"Mean of |ṽ| − |v̂| relative to |v̂| "
                       f"(absolute: {met['length_error']:+.3g}).")
        if met["scheme"] == "joint":
            st.markdown(
                "| | footpoint | shooting vector | joint (p, v) |\n|---|---|---|---|\n"
                f"| sensitivity Δ | {met['delta_p']:.3g} | {met['delta_v']:.3g} | "
                f"{met['delta_joint']:.3g} |\n"
                f"| noise scale σ | – | – | {met['sigma_joint']:.3g} |\n"
                f"| budget ε | – | – | {settings.eps_p + settings.eps_v:.3g} |"
            )
        else:
            st.markdown(
                "| | footpoint | shooting vector |\n|---|---|---|\n"
                f"| sensitivity Δ | {met['delta_p']:.3g} | {met['delta_v']:.3g} |\n"
                f"| noise scale σ | {met['sigma_p']:.3g} | {met['sigma_v']:.3g} |\n"
                f"| budget ε | {settings.eps_p:.3g} | {settings.eps_v:.3g} |"
            )
        delta_text = ("not certified (MCMC)" if met["delta"] is None
                      else format(met["delta"], ".2g"))
        st.markdown(
            f"ε per geodesic **{met['eps_per_geodesic']:.3g}**; this release "
            f"({met['n_draws']} geodesics): ε = **{met['epsilon']:.3g}**, "
            f"δ = {delta_text}. MSE over the draws ranges from "
            f"{met['mse_private_min']:.3g} to {met['mse_private_max']:.3g}."
        )
        st.markdown("**Sampler diagnostics**")
        st.dataframe(G.diagnostics_table(met), hide_index=True, width="stretch")
        exact = all(d.get("exact") for d in release.diagnostics.values()
                    if isinstance(d, dict))
        diag_note = ("Acceptance near 0.3–0.5, large ESS and R-hat near 1 indicate mixed "
                     "chains.")
        if exact:
            diag_note = ("Exact sampler: the draws follow the mechanism's density exactly, "
                         "so there are no chains to diagnose (its acceptance rate depends "
                         "on the data and is not shown).")
        elif settings.n_footpoints > 1:
            diag_note += (" With several footpoints the vector chains target different "
                          "densities, so ESS and R-hat are computed per footpoint (worst "
                          "shown).")
        st.caption(diag_note)
        for flag in G.diagnostic_flags(release):
            st.error(flag, icon=":material/running_with_errors:")
        hint = G.noise_hint(settings.kind, met, release.mode)
        if hint:
            st.info(hint, icon=":material/lightbulb:")
        for note in notes:
            st.warning(note, icon=":material/warning:")
        with st.expander(f"Caveats of this release ({len(release.caveats)})"):
            for c in release.caveats:
                st.markdown(f"- {c}")

