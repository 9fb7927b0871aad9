"""Landing page: what the dashboard is for and what each page shows."""

import streamlit as st

PAGE_SUMMARIES = [
    (
        "Geodesic regression",
        "Fit a geodesic to synthetic, example or uploaded data on S², SPD(2), Kendall shape "
        "space or R^d, then release private footpoints and shooting vectors (ε_p, ε_v) on a "
        "button: private geodesics drawn beside the non-private fit, MSE, footpoint and angle "
        "errors, sensitivities, σ's and sampler diagnostics",
    ),
    (
        "Budget split",
        "A simulation of how splitting a total ε between footpoint (ε_p) and shooting vector "
        "(ε_v) changes the error, for several sample sizes: unequal and equal splits, and a "
        "heatmap over (ε_p, ε_v) with the best split for a chosen total",
    ),
    (
        "Fréchet mean",
        "Riemannian Laplace, KNG, Riemannian Gaussian and ambient Euclidean Laplace on S² or "
        "SPD(k) at one ε: clouds of private means, error against n, empirical sensitivity "
        "against its bound, and one private release",
    ),
    (
        "Gaussian DP",
        "µ against σ on the circle (exact and Monte Carlo) and on the line, Gaussian versus "
        "Laplace at equal µ on S², trade-off curves, the privacy profile δ(ε), an ε ↔ µ "
        "converter and one Gaussian-DP release",
    ),
    (
        "Sensitivity",
        "Theory / empirical sensitivity ratios of geodesic regression on adjacent data sets, "
        "and the Jacobi fields (cos, 1, cosh / sin, 1, sinh) behind the curvature terms",
    ),
    (
        "Linear regression",
        "The Euclidean case on an uploaded CSV or a generated example: private and "
        "least-squares lines per response, an MSE table, and diffprivlib's LinearRegression "
        "at the same ε",
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
st.markdown("| Page | What it shows |\n|---|---|\n" + rows)

st.caption(
    "Every release happens only when you press a page's Release button and is listed in the "
    "privacy ledger in the sidebar. A page's settings (never its data) are kept in the URL, so "
    "a link reopens the same scenario."
)
