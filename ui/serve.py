"""Start the dashboard: ``python -m ui.serve [streamlit options]`` (what ``make run`` does).

Same as ``streamlit run app.py``, with one fix. ``app.py`` builds its navigation with
``st.navigation`` while the page files live in ``pages/``; a fresh Streamlit server treats a
``pages/`` directory as a legacy multipage app until the first ``st.navigation`` call, so a
shared page link opened before anyone loaded the landing page ran that page alone, without the
app's sidebar and titles. Declaring navigation mode before the server starts removes that
window. It also keeps uploads in memory up to the upload limit (the web server would otherwise
spool bodies above 1 MB to a temporary file). (Streamlit is pinned in requirements.txt;
tests/app/test_serve.py checks the attributes used.)
"""

from __future__ import annotations

import sys
from pathlib import Path

APP = Path(__file__).resolve().parent.parent / "app.py"


def main(argv=None):
    from starlette.formparsers import MultiPartParser
    from streamlit import config
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.web import cli

    from ui.caps import MIB, upload_limit_mb

    PagesManager.uses_pages_directory = False

    def keep_uploads_in_memory():
        # Uploads must never touch disk: the web server spools multipart bodies above 1 MB to
        # a temporary file, so keep everything up to the upload limit in memory. The limit is
        # read once Streamlit has parsed its configuration with the command line
        # (server.maxUploadSize from .streamlit/config.toml, STREAMLIT_SERVER_MAX_UPLOAD_SIZE
        # or --server.maxUploadSize).
        MultiPartParser.spool_max_size = (upload_limit_mb() + 1) * MIB

    config.on_config_parsed(keep_uploads_in_memory, force_connect=True)
    preload_chart_library()
    sys.argv = ["streamlit", "run", str(APP), *(sys.argv[1:] if argv is None else argv)]
    return cli.main()


#: Streamlit's chart chunk, preloaded with every page (served as the single-page fallback).
CHART_CHUNK = "PlotlyChart.*.js"


def chart_chunks(static_dir=None):
    """File names of the plotly chunk in Streamlit's static bundle (hashed names)."""
    import streamlit

    static_dir = Path(streamlit.__file__).parent / "static" if static_dir is None else static_dir
    return sorted(p.name for p in (Path(static_dir) / "static" / "js").glob(CHART_CHUNK))


def preload_chart_library():
    """Let a page's HTML ask the browser to fetch and compile the chart library at once.

    Streamlit loads plotly (a 4.7 MB module) only when the first chart arrives, after the app
    has booted and the page's script has run: on the 2-core machine its download and compile
    add about 1.4 s to the first plot. A ``Link: <...>; rel=modulepreload`` header on the HTML
    of every page URL (the single-page fallback Streamlit serves them with; not the Home page,
    which draws no chart) starts both while the app boots. The chunk is the one Streamlit
    itself imports (same URL), so nothing else changes.
    """
    from streamlit.web.server.starlette import starlette_static_routes as routes

    chunks = chart_chunks()
    if not chunks:
        return
    original = routes.create_streamlit_static_handler

    def handler(directory, base_url):
        files = original(directory, base_url)
        apply = files._apply_cache_headers
        prefix = "/" + (base_url or "").strip("/")
        links = ", ".join(f"<{prefix.rstrip('/')}/static/js/{name}>; rel=modulepreload"
                          for name in chunks)

        def with_preload(response, served_path):
            apply(response, served_path)
            if served_path == "index.html" and response.status_code == 200:
                response.headers["Link"] = links

        files._apply_cache_headers = with_preload
        return files

    routes.create_streamlit_static_handler = handler


if __name__ == "__main__":
    sys.exit(main())
