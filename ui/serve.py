"""Start the dashboard: ``python -m ui.serve [streamlit options]`` (what ``make run`` does).

Same as ``streamlit run app.py``, with one fix. ``app.py`` builds its navigation with
``st.navigation`` while the page files live in ``pages/``; a fresh Streamlit server treats a
``pages/`` directory as a legacy multipage app until the first ``st.navigation`` call, so a
shared page link opened before anyone loaded the landing page ran that page alone, without the
app's sidebar and titles. Declaring navigation mode before the server starts removes that
window. It also keeps uploads in memory up to the upload limit (the web server would otherwise
spool bodies above 1 MB to a temporary file), preloads the chart library
(:func:`preload_chart_library`), opens pages progressively (their first run ends at the
first chart, :func:`ui.session.after_first_chart`) and warms the pages up once the server
answers (:func:`warm_up_pages`). (Streamlit is pinned in requirements.txt;
tests/app/test_serve.py checks the attributes used.)
"""

from __future__ import annotations

import os
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass
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
    if os.environ.get(WARM_UP_ENV, "1").strip() != "0":
        config.on_config_parsed(start_warm_up, force_connect=True)
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


# ---------------------------------------------------------------------- warm-up
#: Environment variable: ``0`` turns the warm-up at server start off.
WARM_UP_ENV = "DASHBOARD_WARM_UP"
#: Start of the server's log line once the pages are warm.
WARM_UP_DONE = "Warm-up done:"
#: Seconds the warm-up waits for the server to answer, and for one run of a page.
WARM_UP_TIMEOUT_S = 120


@dataclass(frozen=True)
class WarmRun:
    """One run of a page made by :func:`warm_up_pages`.

    Attributes
    ----------
    page : str
        The page's ``url_path``.
    seconds : float
        Time from the request to the end of the run.
    status : str
        How the run ended (``FINISHED_SUCCESSFULLY`` when it ran to its end or its
        ``st.stop``).
    exceptions : tuple of str
        Messages of the exceptions the page showed (none expected).
    """

    page: str
    seconds: float
    status: str
    exceptions: tuple = ()


def _server_url():
    from streamlit import config

    address = config.get_option("server.address") or "localhost"
    if address in ("0.0.0.0", "::"):
        address = "localhost"
    elif ":" in address:
        address = f"[{address}]"
    base = (config.get_option("server.baseUrlPath") or "").strip("/")
    return f"http://{address}:{config.get_option('server.port')}" + (f"/{base}" if base else "")


def server_answers(url):
    """Whether the Streamlit server at ``url`` answers its health check (the benchmarks and
    browser tests wait on it too)."""
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def warm_up_pages(url, pages=None, timeout=WARM_UP_TIMEOUT_S):
    """Open each page once, as a visitor's browser would, so the first real visitor does not
    pay the server's one-off costs.

    The first run of a page in a server process imports its libraries (pandas, plotly, numba
    kernels), builds its first chart, times the samplers that price a release
    (:func:`dpcore.release.work.calibrated_costs`) and fills the ``st.cache_data`` caches the
    page shares between sessions: 0.3 to 0.7 s more to the first plot than later visits
    (``benchmarks/bench_browser.py``, cold against warm). This function opens one session
    over the server's websocket, like a browser, and runs each page's default scenario
    (synthetic data only; nothing is released or recorded beyond that session, which closes
    at the end). A page that opens progressively is run twice (its opening run ends at the
    first chart).

    Parameters
    ----------
    url : str
        The server's address (``http://localhost:8501``, with its base path if any).
    pages : sequence of ui.registry.PageSpec, optional
        Default: every page that draws a chart on opening, in navigation order.
    timeout : float
        Seconds to wait for each run.

    Returns
    -------
    list of WarmRun
    """
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from websockets.sync.client import connect

    from ui.registry import PAGES

    pages = [p for p in PAGES if p.chart_on_open] if pages is None else list(pages)
    stream = "ws" + url[len("http"):] + "/_stcore/stream"
    runs = []
    with connect(stream, subprotocols=["streamlit"], max_size=None,
                 open_timeout=timeout) as ws:
        for spec in pages:
            for _ in range(2 if spec.open_progressively else 1):
                request = BackMsg()
                request.rerun_script.page_name = spec.url_path
                request.rerun_script.query_string = ""
                start = time.perf_counter()
                ws.send(request.SerializeToString())
                exceptions = []
                while True:
                    msg = ForwardMsg()
                    msg.ParseFromString(ws.recv(timeout=timeout))
                    kind = msg.WhichOneof("type")
                    if (kind == "delta" and msg.delta.WhichOneof("type") == "new_element"
                            and msg.delta.new_element.WhichOneof("type") == "exception"):
                        exceptions.append(msg.delta.new_element.exception.message)
                    if kind == "script_finished":
                        break
                runs.append(WarmRun(
                    spec.url_path, time.perf_counter() - start,
                    ForwardMsg.ScriptFinishedStatus.Name(msg.script_finished),
                    tuple(exceptions)))
    return runs


def _warm_up_when_ready():
    from streamlit.logger import get_logger

    log = get_logger(__name__)
    deadline = time.monotonic() + WARM_UP_TIMEOUT_S
    while not server_answers(_server_url()):
        if time.monotonic() > deadline:
            log.warning("Warm-up skipped: the server did not answer in %d s.",
                        WARM_UP_TIMEOUT_S)
            return
        time.sleep(0.2)
    start = time.perf_counter()
    try:
        runs = warm_up_pages(_server_url())
    except Exception as exc:  # the server runs on; its first visitors pay the first runs
        log.warning("Warm-up of the pages stopped: %s", exc)
        return
    for run in runs:
        if run.exceptions or run.status != "FINISHED_SUCCESSFULLY":
            log.warning("Warm-up: page %r ended %s with %d exception(s).", run.page,
                        run.status, len(run.exceptions))
    log.info("%s %d pages in %.1f s (%s).", WARM_UP_DONE, len({r.page for r in runs}),
             time.perf_counter() - start, ", ".join(dict.fromkeys(r.page for r in runs)))


_WARM_UP_STARTED = threading.Event()


def start_warm_up():
    """Start :func:`warm_up_pages` in a background thread, once per process (the server's
    configuration callback; the thread waits until the server answers)."""
    if _WARM_UP_STARTED.is_set():
        return
    _WARM_UP_STARTED.set()
    threading.Thread(target=_warm_up_when_ready, name="warm-up", daemon=True).start()


if __name__ == "__main__":
    sys.exit(main())
