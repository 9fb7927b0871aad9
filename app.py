"""Streamlit entry point: page config, navigation over ``pages/`` and the shared sidebar.

Start it with ``make run`` (or ``streamlit run app.py``). The pages and their titles, icons
and URLs come from :mod:`ui.registry`.
"""

import streamlit as st

from ui.registry import PAGES
from ui.session import render_ledger

st.set_page_config(page_title="Private statistics on manifolds", layout="wide")

# The first registered page is the landing page.
navigation = st.navigation(
    [
        st.Page(spec.path, title=spec.title, icon=spec.icon, url_path=spec.url_path,
                default=(index == 0))
        for index, spec in enumerate(PAGES)
    ]
)

navigation.run()
# After the page, so a release made during this run is already listed.
render_ledger()
