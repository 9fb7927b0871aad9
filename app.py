"""Streamlit entry point: page config, navigation over ``pages/`` and the shared sidebar.

Start it with ``make run`` (or ``streamlit run app.py``). The pages and their titles, icons
and URLs come from :mod:`ui.registry`.
"""

import streamlit as st

from ui.first_paint import visit
from ui.registry import PAGES
from ui.session import render_ledger, render_settings_io

st.set_page_config(page_title="Private statistics on manifolds", layout="wide")

# The first registered page is the landing page.
navigation = st.navigation(
    [
        st.Page(spec.path, title=spec.title, icon=spec.icon, url_path=spec.url_path,
                default=(index == 0))
        for index, spec in enumerate(PAGES)
    ]
)

_spec = next((p for p in PAGES if p.url_path == navigation.url_path), PAGES[0])
visit(_spec.url_path)
navigation.run()
# After the page, so a release made during this run is already listed.
render_ledger()
render_settings_io(_spec.name, _spec.url_path)
