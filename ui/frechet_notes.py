"""The Fréchet mean page's notes: the formulas (teaching notes) and the assumptions in
force for the data and ball as set."""

from __future__ import annotations

import streamlit as st

from dpcore.mechanisms.kng import exact_support_available
from ui import manifolds as M
from ui.logic import common as C
from ui.session import rows_per_person


def teaching_notes():
    st.markdown(
        "The **Fréchet mean** minimizes the sum of squared geodesic distances. If the data lie "
        "in a ball of radius r < r*, replacing one of n points moves it by at most Δ "
        "(κ: upper curvature bound):"
    )
    st.latex(r"\bar x = \arg\min_{z} \sum_{i=1}^n d(z, x_i)^2")
    st.latex(r"\Delta = \frac{2r\,(2-h)}{n\,h}")
    st.latex(r"h = 2r\sqrt{\kappa}\,\cot(2r\sqrt{\kappa})\ \text{ if } \kappa > 0,"
             r"\qquad h = 1 \text{ if } \kappa \le 0")
    st.markdown("The four mechanisms draw the private mean from:")
    st.latex(r"\text{Laplace: } p(y) \propto e^{-d(\bar x, y)/\sigma},\quad "
             r"\sigma = \Delta/\varepsilon")
    st.latex(r"\text{KNG: } p(z) \propto e^{-\|\nabla F(z)\|_z/\sigma},\quad "
             r"\sigma = 2\Delta_\nabla/\varepsilon")
    st.latex(r"\text{Gaussian: } p(y) \propto e^{-d(\bar x, y)^2/(2\sigma^2)}")
    st.latex(r"\text{at } \mu = -2\,\Phi^{-1}\big(1/(1+e^{\varepsilon})\big)")
    st.latex(r"\text{Ambient: } \bar x_E + \frac{2 r_E}{n\varepsilon}\,R\,U,\quad "
             r"R\sim\Gamma(D,1)")
    st.caption("x̄_E: the extrinsic mean in the embedding R^D; U: a uniform unit direction.")


def assumptions_box(manifold_key, radius, center_text, info, source, person=None):
    rows = [
        ("Data ball", f"every point lies within geodesic distance r = {radius:.3g} of the "
                      f"public centre m₀ = {center_text}; "
                      + (f"r < r* = {info['r_star']:.3g} (paper 001 Thm 2)"
                         if info["delta"] is not None else
                         f"r ≥ r* = {info['r_star']:.3g}: only the ambient mechanism applies")
                      + ". Strict mode projects points outside onto the ball."),
        ("Sensitivity", f"Δ = {info['delta']:.3g} for the mean (curvature bound κ = "
                        f"{info['kappa']:g}, h = {info['h']:.3f}); the KNG gradient has "
                        f"Δ∇ = {info['delta_gradient']:.3g}." if info["delta"] is not None else
                        f"r ≥ r*: no bound for the intrinsic mechanisms; the ambient mechanism's "
                        f"is 2 r_E / n = {info['delta_ambient']:.3g}."),
        ("Laplace", "σ = Δ/ε: the manifold is homogeneous, so the normalizing constant does "
                    "not depend on the centre."),
        ("KNG", "σ = 2Δ∇/ε (rigorous rule); " + (
            "the release and the simulations are drawn exactly, by rejection from a refined "
            "Lipschitz envelope (ε-DP, δ = 0)."
            if exact_support_available(M.make_manifold(manifold_key)) else
            "on this space there is no exact sampler: releases and simulations run "
            "Metropolis–Hastings chains and are labelled approximately private.")),
        ("Gaussian", "µ-GDP with µ = µ(ε); the release calibrates σ by Monte Carlo (paper 004 "
                     "Alg. 2) with a 3-standard-error margin: a statistical guarantee."),
        ("Ambient Laplace", "noise on the extrinsic mean in the embedding, sensitivity "
                            "2 r_E / n with r_E the chord radius of the ball; projected back."),
        ("Randomness", "the Release button uses OS entropy; previews and simulations are seeded "
                       "and are not releases."),
    ]
    if source == "upload":
        rows.append(("Uploaded data", "kept in memory only, never written to disk or logged; "
                                      "parsed once per file content and its chosen columns "
                                      "read once per mapping (this session's memory, keyed on "
                                      "the file's SHA-256, which only the same file can "
                                      "reach)."))
    k = rows_per_person()
    if k > 1:
        why = (f"the largest group of the person column '{person}', confirmed public"
               if person else "the sidebar's setting")
        rows.append(("Unit of privacy", f"one person, with up to {k} rows ({why}): each "
                                        f"guarantee per row holds per person at {k} times its "
                                        "ε (group privacy), as the cost and the ledger entry "
                                        "count it."))
    with st.container(border=True):
        st.markdown("**Assumptions in force**")
        st.markdown(C.assumptions_markdown(rows))
