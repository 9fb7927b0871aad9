"""Landing page: what the dashboard is for and what each page shows."""

import streamlit as st

from ui.registry import HOME, PAGES


def main():
    """The landing page."""
    st.title(HOME.page_title)

    st.markdown(
        "This dashboard shows what differential privacy does to statistics of data that live "
        "on curved spaces. You pick a manifold (the sphere S², SPD covariance matrices, Kendall "
        "planar shape space, or plain Euclidean space), generate synthetic data or upload a "
        "CSV, and set the privacy budgets. Each page then compares the true estimate with a "
        "private release of it (geodesics, Fréchet means and shapes) next to the numbers that "
        "measure what privacy cost."
    )

    st.subheader("Pages")
    rows = "\n".join(f"| {spec.title} | {spec.summary} |" for spec in PAGES if spec is not HOME)
    st.markdown("| Page | What it shows |\n|---|---|\n" + rows)

    st.caption(
        "Every release happens only when you press a page's Release button and is listed in the "
        "privacy ledger in the sidebar. A page's settings (never its data) are kept in the URL, so "
        "a link reopens the same scenario."
    )


main()
