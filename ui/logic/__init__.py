"""Page logic of the dashboard: one Streamlit-free module per page.

Each page in ``pages/`` reads its widgets, calls its module here (simulations, parsing, tables;
cached by the page through ``st.cache_data`` where the work is deterministic), then
:mod:`dpcore` for releases and :mod:`dpcore.visualization` for figures. Nothing here imports
Streamlit, so every function can be tested and timed on its own. Private *releases* are never
made here: the pages call :mod:`dpcore.release` with OS entropy when the user presses a button.
"""
