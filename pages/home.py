"""Landing page: what the dashboard is for and what each page will show."""

import streamlit as st

PAGE_SUMMARIES = [
    (
        "Geodesic regression",
        "True versus private regression geodesics on S², SPD(2) and Kendall shape space, "
        "under budgets ε_p and ε_v",
    ),
    (
        "Budget split",
        "How splitting a total ε between footpoint (ε_p) and direction (ε_v) changes the error, "
        "across sample sizes",
    ),
    (
        "Fréchet mean",
        "True versus private Fréchet means on the sphere and on SPD matrices under a budget ε",
    ),
    (
        "Gaussian DP",
        "The Riemannian Gaussian mechanism, its Gaussian-DP parameter µ, and a comparison with "
        "the Laplace mechanism at equal privacy",
    ),
    (
        "Sensitivity",
        "Closed-form sensitivity bounds next to sensitivities measured on adjacent datasets",
    ),
    (
        "Linear regression",
        "The Euclidean special case: private geodesic regression against standard private "
        "linear regression",
    ),
]

st.title("Private statistics on manifolds")

st.markdown(
    "This dashboard shows what differential privacy does to statistics of data that live on "
    "curved spaces. You pick a manifold (the sphere S², SPD covariance matrices, Kendall planar "
    "shape space, or plain Euclidean space), generate synthetic data or upload a CSV, and set the "
    "privacy budgets. Each page then compares the true estimate with a private release of it "
    "(geodesics, Fréchet means and shapes) next to the numbers that measure what privacy cost."
)

st.subheader("Pages")
rows = "\n".join(f"| {page} | {summary} |" for page, summary in PAGE_SUMMARIES)
st.markdown("| Page | What it will show |\n|---|---|\n" + rows)

st.caption("Work in progress: the pages listed above are still under construction.")
