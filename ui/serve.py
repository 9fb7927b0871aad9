"""Start the dashboard: ``python -m ui.serve [streamlit options]`` (what ``make run`` does).

Same as ``streamlit run app.py``, with one fix. ``app.py`` builds its navigation with
``st.navigation`` while the page files live in ``pages/``; a fresh Streamlit server treats a
``pages/`` directory as a legacy multipage app until the first ``st.navigation`` call, so a
shared page link opened before anyone loaded the landing page ran that page alone, without the
app's sidebar and titles. Declaring navigation mode before the server starts removes that
window. It also sends without Nagle's delay (:func:`send_without_delay`), keeps uploads in
memory up to the upload limit (the web server would otherwise
spool bodies above 1 MB to a temporary file), preloads the chart library
(:func:`preload_chart_library`) and warms the pages up once the server answers
(:func:`warm_up_pages`), within a budget of CPU seconds and only until the first visitor
connects (:class:`WarmUpBudget`). (Streamlit is pinned in requirements.txt;
tests/app/test_serve.py checks the attributes used.)
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
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

    send_without_delay()
    config.on_config_parsed(keep_uploads_in_memory, force_connect=True)
    if os.environ.get(WARM_UP_ENV, "1").strip() != "0":
        config.on_config_parsed(start_warm_up, force_connect=True)
    preload_chart_library()
    # Streamlit reads .streamlit/config.toml from the working directory only: started from
    # anywhere else, the project's settings would silently not apply (among them
    # client.showErrorDetails = "none", which keeps tracebacks and server paths out of the
    # browser). The app and its data are found by absolute paths, so run from the repository.
    os.chdir(APP.parent)
    sys.argv = ["streamlit", "run", str(APP), *(sys.argv[1:] if argv is None else argv)]
    return cli.main()


def send_without_delay():
    """Turn Nagle's algorithm off on every connection of the server (``TCP_NODELAY``).

    Streamlit binds its listening socket itself (``starlette_server._bind_socket``) with
    protocol 0, and asyncio sets ``TCP_NODELAY`` only on sockets created with
    ``IPPROTO_TCP``: every connection the server accepts keeps Nagle's algorithm. A response
    written in two parts (headers, then body) over a kept-alive connection then waits for the
    browser's delayed acknowledgement, about 40 ms: 44 ms per static file on the 2-core
    machine against 1.2 ms with the option (``benchmarks/bench_browser.py`` shows what it does
    to a page, whose widgets are some 50 modules fetched over six connections). The option is
    set on the listening socket; Linux passes it on to every connection ``accept`` returns
    (``tests/app/test_serve.py`` checks that).
    """
    import socket

    from streamlit.web.server.starlette import starlette_server

    bind = starlette_server._bind_socket
    if getattr(bind, "sends_without_delay", False):
        return

    def bind_without_delay(*args, **kwargs):
        sock = bind(*args, **kwargs)
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock

    bind_without_delay.sends_without_delay = True
    starlette_server._bind_socket = bind_without_delay


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
      draw nothing on open (Home) are left without it: their first paint would
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
#: Environment variable: CPU seconds the warm-up may spend (``inf``: no cap).
WARM_UP_CPU_ENV = "DASHBOARD_WARM_UP_CPU_S"
#: Environment variable: ``0`` keeps the warm-up going when a visitor connects.
WARM_UP_YIELD_ENV = "DASHBOARD_WARM_UP_YIELD"
#: Default of :data:`WARM_UP_CPU_ENV`: CPU seconds of the server process the warm-up may use
#: from its start (the five pages take about 6.6 s of CPU on the 2-core machine; Geodesic
#: regression, first in the navigation, about 1.4 s).
WARM_UP_CPU_S = 3.0
#: Start of the server's log line once the warm-up has ended (complete or stopped).
WARM_UP_DONE = "Warm-up done:"
#: Seconds the warm-up waits for the server to answer, and for one run of a page.
WARM_UP_TIMEOUT_S = 120
#: Seconds between two checks of the budget while a page runs.
WARM_UP_POLL_S = 0.1


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
        ``st.stop``; ``STOPPED`` when the warm-up stopped it, see :class:`WarmUp`).
    exceptions : tuple of str
        Messages of the exceptions the page showed (none expected).
    """

    page: str
    seconds: float
    status: str
    exceptions: tuple = ()


@dataclass(frozen=True)
class WarmUp:
    """What :func:`warm_up_pages` did.

    Attributes
    ----------
    runs : tuple of WarmRun
        The runs, in order (the last one ``STOPPED`` if the warm-up stopped during it).
    stopped : str
        Why the warm-up stopped before the end of its pages (empty when it ran them all).
    cpu_seconds : float
        CPU seconds of the budget's clock from the start to the end of the warm-up.
    """

    runs: tuple
    stopped: str = ""
    cpu_seconds: float = 0.0

    @property
    def pages(self):
        """``url_path`` of the pages run, each once, in order."""
        return tuple(dict.fromkeys(run.page for run in self.runs))


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


def _active_sessions():
    """Sessions connected to this process's Streamlit runtime (0 without a runtime)."""
    from streamlit.runtime import Runtime

    if not Runtime.exists():
        return 0
    return Runtime.instance()._session_mgr.num_active_sessions()


@dataclass(frozen=True)
class WarmUpBudget:
    """When the warm-up gives the server back to its visitors.

    The warm-up stops, between two runs or during one (then it asks the server to stop that
    run, which happens at the page's next Streamlit call), as soon as either holds:

    * ``cpu_clock()`` has advanced ``cpu_seconds`` since the warm-up began (by default the
      server process's CPU time, every thread, visitors' included: an upper bound on the
      warm-up's own);
    * ``visitors()`` is positive: a visitor's session is connected, and the warm-up would only
      compete with it for the server's cores and its interpreter lock.

    Attributes
    ----------
    cpu_seconds : float
        The cap (``math.inf``: none).
    cpu_clock : callable
        Returns CPU seconds (``time.process_time``; tests inject a fake clock).
    visitors : callable or None
        Returns the number of sessions besides the warm-up's own; None never yields.
    """

    cpu_seconds: float = WARM_UP_CPU_S
    cpu_clock: Callable[[], float] = time.process_time
    visitors: Callable[[], int] | None = None

    @classmethod
    def from_environment(cls, environ=None):
        """The server's budget, from its environment.

        Parameters
        ----------
        environ : mapping, optional
            Default ``os.environ``. Read: :data:`WARM_UP_CPU_ENV` (default
            :data:`WARM_UP_CPU_S`) and :data:`WARM_UP_YIELD_ENV` (default ``1``: yield to
            the first visitor, counted by the runtime's session manager).

        Returns
        -------
        WarmUpBudget
        """
        environ = os.environ if environ is None else environ
        cap = float(environ.get(WARM_UP_CPU_ENV, "").strip() or WARM_UP_CPU_S)
        yields = environ.get(WARM_UP_YIELD_ENV, "1").strip() != "0"
        return cls(cap, visitors=(lambda: _active_sessions() - 1) if yields else None)

    def reason_to_stop(self, start):
        """Why the warm-up begun at ``cpu_clock() == start`` must stop now ("" if it need not).

        Parameters
        ----------
        start : float
            ``cpu_clock()`` at the start of the warm-up.

        Returns
        -------
        str
        """
        if self.visitors is not None and self.visitors() > 0:
            return "a visitor connected"
        if self.cpu_clock() - start >= self.cpu_seconds:
            return f"its budget of {self.cpu_seconds:g} CPU s was spent"
        return ""


def _connect(stream, timeout):
    from websockets.sync.client import connect

    return connect(stream, subprotocols=["streamlit"], max_size=None, open_timeout=timeout)


def warm_up_pages(url, pages=None, timeout=WARM_UP_TIMEOUT_S, budget=None, connect=_connect):
    """Open each page once, as a visitor's browser would, so the first real visitor does not
    pay the server's one-off costs, within a budget that gives the server back to visitors.

    The first run of a page in a server process imports its libraries (pandas, plotly, numba
    kernels), builds its first chart, times the samplers that price a release
    (:func:`dpcore.release.work.calibrated_costs`) and fills the ``st.cache_data`` caches the
    page shares between sessions: 0.3 to 0.7 s more to the first plot than later visits
    (``benchmarks/bench_browser.py``, cold against warm). This function opens one session
    over the server's websocket, like a browser, and runs each page's default scenario
    (synthetic data only; nothing is released or recorded beyond that session, which closes
    at the end). It stops early when ``budget`` says so (:class:`WarmUpBudget`).

    Parameters
    ----------
    url : str
        The server's address (``http://localhost:8501``, with its base path if any).
    pages : sequence of ui.registry.PageSpec, optional
        Default: :func:`warm_up_order` (every page that draws a chart on opening).
    timeout : float
        Seconds to wait for each run.
    budget : WarmUpBudget, optional
        Default: no cap, no yielding (every page is run).
    connect : callable, optional
        ``connect(stream_url, timeout)`` returns an open websocket (a context manager with
        ``send(bytes)`` and ``recv(timeout)``, raising ``TimeoutError``); tests inject one.

    Returns
    -------
    WarmUp
    """
    from streamlit.proto.BackMsg_pb2 import BackMsg

    from ui.registry import PAGES

    pages = warm_up_order(PAGES) if pages is None else list(pages)
    budget = WarmUpBudget(math.inf) if budget is None else budget
    start_cpu = budget.cpu_clock()
    stream = "ws" + url[len("http"):] + "/_stcore/stream"
    runs = []
    stopped = ""
    with connect(stream, timeout) as ws:
        for spec in pages:
            stopped = budget.reason_to_stop(start_cpu)
            if stopped:
                break
            run, stopped = _run_page(ws, spec.url_path, timeout, budget, start_cpu)
            runs.append(run)
            if stopped:
                stop = BackMsg()
                stop.stop_script = True
                ws.send(stop.SerializeToString())
                break
    return WarmUp(tuple(runs), stopped, budget.cpu_clock() - start_cpu)


def warm_up_order(pages):
    """The pages the warm-up runs by default: those that draw a chart on opening, in
    navigation order, those marked ``warm_up_last`` at the end (``ui.registry``)."""
    return sorted((p for p in pages if p.chart_on_open), key=lambda p: p.warm_up_last)


def _run_page(ws, page, timeout, budget, start_cpu):
    """One run of ``page`` over ``ws``: (WarmRun, reason the budget gave to stop it or "")."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    request = BackMsg()
    request.rerun_script.page_name = page
    request.rerun_script.query_string = ""
    start = time.perf_counter()
    deadline = time.monotonic() + timeout
    ws.send(request.SerializeToString())
    exceptions = []
    while True:
        try:
            data = ws.recv(timeout=WARM_UP_POLL_S)
        except TimeoutError:
            if time.monotonic() > deadline:
                raise
            stopped = budget.reason_to_stop(start_cpu)
            if stopped:
                return WarmRun(page, time.perf_counter() - start, "STOPPED",
                               tuple(exceptions)), stopped
            continue
        msg = ForwardMsg()
        msg.ParseFromString(data)
        kind = msg.WhichOneof("type")
        if (kind == "delta" and msg.delta.WhichOneof("type") == "new_element"
                and msg.delta.new_element.WhichOneof("type") == "exception"):
            exceptions.append(msg.delta.new_element.exception.message)
        if kind == "script_finished":
            if msg.script_finished == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                continue  # a visit's first run, cut at its chart (ui.first_paint): the next
            status = ForwardMsg.ScriptFinishedStatus.Name(msg.script_finished)
            return WarmRun(page, time.perf_counter() - start, status, tuple(exceptions)), ""


def _warm_up_when_ready(budget=None):
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
        done = warm_up_pages(_server_url(), budget=(WarmUpBudget.from_environment()
                                                   if budget is None else budget))
    except Exception as exc:  # the server runs on; its first visitors pay the first runs
        log.warning("Warm-up of the pages stopped: %s", exc)
        return
    finally:
        frozen = freeze_long_lived()
        log.info("Garbage collector: %d long-lived objects set aside.", frozen)
    for run in done.runs:
        if run.exceptions or run.status not in ("FINISHED_SUCCESSFULLY", "STOPPED"):
            log.warning("Warm-up: page %r ended %s with %d exception(s).", run.page,
                        run.status, len(run.exceptions))
    log.info("%s %d pages in %.1f s, %.1f CPU s (%s)%s.", WARM_UP_DONE, len(done.pages),
             time.perf_counter() - start, done.cpu_seconds, ", ".join(done.pages),
             f"; ended early: {done.stopped}" if done.stopped else "")


def freeze_long_lived():
    """Set aside the objects alive now from the garbage collector's full collections
    (:func:`gc.freeze`, after one :func:`gc.collect`); returns how many.

    Streamlit collects garbage after every run of a page (``runner.postScriptGC``, a full
    collection), and a full collection walks every object the process tracks: after the
    warm-up that is the libraries and the pages' modules (some 10^5-10^6 objects), 70-140 ms
    of the server's CPU per run on the 2-core machine, spent while the browser draws the chart
    the run just sent, and growing with the sessions alive. Those objects live as long as the
    server does, so the collections after this call walk only what visitors' runs create (the
    post-run collection still frees their garbage). Called once the warm-up ends.
    """
    import gc

    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


_WARM_UP_STARTED = threading.Event()


def start_warm_up():
    """Start :func:`warm_up_pages` in a background thread, once per process (the server's
    configuration callback; the thread waits until the server answers), with the budget of
    :meth:`WarmUpBudget.from_environment`."""
    if _WARM_UP_STARTED.is_set():
        return
    _WARM_UP_STARTED.set()
    threading.Thread(target=_warm_up_when_ready, name="warm-up", daemon=True).start()


if __name__ == "__main__":
    sys.exit(main())
