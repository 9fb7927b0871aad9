"""Streamlit entry point: page config, navigation over ``pages/`` and the shared sidebar.

Start it with ``make run`` (or ``streamlit run app.py``).
"""

from pathlib import Path

import streamlit as st

from ui.session import render_ledger

PAGES_DIR = Path(__file__).parent / "pages"

# (file in pages/, navigation title, icon); the first entry is the landing page.
PAGES = [
    ("home.py", "Home", ":material/home:"),
    ("geodesic_regression.py", "Geodesic regression", ":material/timeline:"),
    ("budget_split.py", "Budget split", ":material/pie_chart:"),
    ("frechet_mean.py", "Fréchet mean", ":material/center_focus_strong:"),
    ("gaussian_dp.py", "Gaussian DP", ":material/blur_on:"),
    ("sensitivity.py", "Sensitivity", ":material/tune:"),
    ("linear_regression.py", "Linear regression", ":material/show_chart:"),
]

st.set_page_config(page_title="Private statistics on manifolds", layout="wide")

navigation = st.navigation(
    [
        st.Page(PAGES_DIR / filename, title=title, icon=icon, default=(index == 0))
        for index, (filename, title, icon) in enumerate(PAGES)
    ]
)

navigation.run()
# After the page, so a release made during this run is already listed.
render_ledger()
