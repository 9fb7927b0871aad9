"""Start the dashboard: ``python -m ui.serve [streamlit options]`` (what ``make run`` does).

Same as ``streamlit run app.py``, with one fix. ``app.py`` builds its navigation with
``st.navigation`` while the page files live in ``pages/``; a fresh Streamlit server treats a
``pages/`` directory as a legacy multipage app until the first ``st.navigation`` call, so a
shared page link opened before anyone loaded the landing page ran that page alone, without the
app's sidebar and titles. Declaring navigation mode before the server starts removes that
window. It also keeps uploads in memory up to the upload limit (the web server would otherwise
spool bodies above 1 MB to a temporary file), preloads the chart library
(:func:`preload_chart_library`) and opens pages progressively (their first run ends at the
first chart, :func:`ui.session.after_first_chart`). (Streamlit is pinned in requirements.txt;
tests/app/test_serve.py checks the attributes used.)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

APP = Path(__file__).resolve().parent.parent / "app.py"


def main(argv=None):
    from starlette.formparsers import MultiPartParser
    from streamlit import config
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.web import cli

    from ui.caps import MIB, upload_limit_mb
    from ui.session import PROGRESSIVE_ENV

    PagesManager.uses_pages_directory = False

    def keep_uploads_in_memory():
        # Uploads must never touch disk: the web server spools multipart bodies above 1 MB to
        # a temporary file, so keep everything up to the upload limit in memory. The limit is
        # read once Streamlit has parsed its configuration with the command line
        # (server.maxUploadSize from .streamlit/config.toml, STREAMLIT_SERVER_MAX_UPLOAD_SIZE
        # or --server.maxUploadSize).
        MultiPartParser.spool_max_size = (upload_limit_mb() + 1) * MIB

    config.on_config_parsed(keep_uploads_in_memory, force_connect=True)
    # Pages open progressively under this server (ui.session.after_first_chart); a value
    # already in the environment wins (0 turns it off).
    os.environ.setdefault(PROGRESSIVE_ENV, "1")
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


def chart_pages():
    """URL paths of the pages that draw a chart as soon as they open (``ui.registry``)."""
    from ui.registry import PAGES

    return frozenset(spec.url_path for spec in PAGES if spec.chart_on_open)


def preload_chart_library():
    """Have the browser fetch, compile and run the chart library while the app boots.

    Streamlit loads plotly (a 4.7 MB module) only when the first chart arrives, after the app
    has booted and the page's script has run. Two hints on the HTML of a page URL (the
    single-page fallback Streamlit serves them with), both naming the chunk Streamlit itself
    imports (same URL, so the browser's module map holds one instance and nothing else
    changes):

    * a ``Link: <...>; rel=modulepreload`` header on every page URL (not the Home page at
      ``/``) starts the download and compile at once;
    * on the pages that draw a chart as soon as they open (:func:`chart_pages`), a module
      script ``import(...)`` placed after Streamlit's own entry script also *runs* the module
      then: about 0.65 s of the browser's main thread on the 2-core machine, spent before the
      app opens its connection instead of after the page's script has sent its chart, where
      it delayed the first plot (``benchmarks/bench_browser.py`` measures both). Pages that
      draw nothing on open (Home, Budget split) are left without it: their first paint would
      pay for a chart they do not show.
    """
    from starlette.responses import HTMLResponse
    from streamlit.web.server.starlette import starlette_static_routes as routes

    chunks = chart_chunks()
    if not chunks:
        return
    original = routes.create_streamlit_static_handler
    eager = chart_pages()

    def handler(directory, base_url):
        files = original(directory, base_url)
        apply = files._apply_cache_headers
        get_response = files.get_response
        prefix = "/" + (base_url or "").strip("/")
        urls = [f"{prefix.rstrip('/')}/static/js/{name}" for name in chunks]
        links = ", ".join(f"<{url}>; rel=modulepreload" for url in urls)
        script = ('<script type="module">'
                  + "".join(f'import("{url}");' for url in urls) + "</script>")

        def with_preload(response, served_path):
            apply(response, served_path)
            if served_path == "index.html" and response.status_code == 200:
                response.headers["Link"] = links

        async def with_eager_import(path, scope):
            response = await get_response(path, scope)
            if (path.replace("\\", "/").strip("/") in eager and response.status_code == 200
                    and "link" in response.headers):
                html = Path(files._index_path).read_text(encoding="utf-8")
                if "</head>" in html:
                    headers = {k: v for k, v in response.headers.items()
                               if k.lower() in ("cache-control", "link")}
                    response = HTMLResponse(html.replace("</head>", script + "</head>", 1),
                                            headers=headers)
            return response

        files._apply_cache_headers = with_preload
        files.get_response = with_eager_import
        return files

    routes.create_streamlit_static_handler = handler


if __name__ == "__main__":
    sys.exit(main())
