"""The launcher relies on one Streamlit internal; fail loudly if it moves."""

import re
import weakref
from pathlib import Path

from streamlit.runtime.pages_manager import PagesManager

import ui.serve
from tests._asyncio import run as run_coroutine


def test_multipart_spool_attribute_exists():
    from starlette.formparsers import MultiPartParser

    assert hasattr(MultiPartParser, "spool_max_size")


def test_pages_manager_flag_exists():
    assert hasattr(PagesManager, "uses_pages_directory")
    assert ui.serve.APP.name == "app.py" and ui.serve.APP.exists()


def _accepted_nodelay(bind):
    """TCP_NODELAY of a connection accepted on a socket bound by ``bind`` (Streamlit's)."""
    import select
    import socket

    server = bind("127.0.0.1", 0, 8)
    try:
        with socket.create_connection(server.getsockname()[:2], timeout=10):
            assert select.select([server], [], [], 10)[0], "no connection arrived"
            conn, _ = server.accept()
            with conn:
                return conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
    finally:
        server.close()


def test_the_server_sends_without_nagles_delay(monkeypatch):
    """Streamlit's own listening socket leaves Nagle's algorithm on for every connection (a
    kept-alive static file waited about 40 ms for a delayed acknowledgement); the launcher's
    socket passes TCP_NODELAY on to each connection it accepts. If Streamlit sets the option
    itself one day, the first assertion fails and the patch can go."""
    from streamlit.web.server.starlette import starlette_server

    monkeypatch.setattr(starlette_server, "_bind_socket", starlette_server._bind_socket)
    assert _accepted_nodelay(starlette_server._bind_socket) == 0
    ui.serve.send_without_delay()
    patched = starlette_server._bind_socket
    ui.serve.send_without_delay()  # wrapped once, however often the launcher runs
    assert starlette_server._bind_socket is patched
    assert _accepted_nodelay(starlette_server._bind_socket) != 0


def test_page_html_preloads_the_chart_library(monkeypatch):
    """Every page URL (served as the single-page fallback) carries a modulepreload Link to
    Streamlit's own plotly chunk; the Home page and assets do not."""
    from pathlib import Path

    import streamlit
    from streamlit.web.server.starlette import starlette_static_routes as routes

    chunks = ui.serve.chart_chunks()
    assert len(chunks) == 1 and chunks[0].startswith("PlotlyChart.")
    monkeypatch.setattr(routes, "create_streamlit_static_handler",
                        routes.create_streamlit_static_handler)
    ui.serve.preload_chart_library()
    files = routes.create_streamlit_static_handler(
        str(Path(streamlit.__file__).parent / "static"), None)

    def headers(path):
        scope = {"type": "http", "method": "GET", "path": "/" + path, "headers": [],
                 "root_path": ""}
        return run_coroutine(files.get_response(path, scope)).headers

    assert headers("geodesic_regression")["link"] == \
        f"</static/js/{chunks[0]}>; rel=modulepreload"
    assert "link" not in headers("")  # the Home page, no chart
    assert "link" not in headers(f"static/js/{chunks[0]}")


def _static_files(monkeypatch):
    from pathlib import Path

    import streamlit
    from streamlit.web.server.starlette import starlette_static_routes as routes

    monkeypatch.setattr(routes, "create_streamlit_static_handler",
                        routes.create_streamlit_static_handler)
    ui.serve.preload_chart_library()
    return routes.create_streamlit_static_handler(
        str(Path(streamlit.__file__).parent / "static"), None)


def _body(files, path):

    scope = {"type": "http", "method": "GET", "path": "/" + path, "headers": [],
             "root_path": ""}
    response = run_coroutine(files.get_response(path, scope))
    assert response.status_code == 200
    body = getattr(response, "body", None)
    if body is None:  # a FileResponse (served from disk)
        body = open(response.path, "rb").read()
    return body.decode("utf-8"), response.headers


def test_pages_with_a_chart_on_open_run_the_chart_library_early(monkeypatch):
    """A page that draws a chart when it opens gets a module script importing Streamlit's own
    plotly chunk (same URL as the preload header) after Streamlit's entry script; Home (no
    chart on open) gets Streamlit's HTML unchanged."""
    from ui.registry import PAGES

    files = _static_files(monkeypatch)
    chunk = ui.serve.chart_chunks()[0]
    script = f'<script type="module">import("/static/js/{chunk}");</script>'
    original, _ = _body(files, "")
    assert script not in original
    eager = {spec.url_path for spec in PAGES if spec.chart_on_open}
    assert eager == {"geodesic_regression", "budget_split", "frechet_mean", "gaussian_dp",
                     "sensitivity", "linear_regression"}
    for spec in PAGES:
        html, headers = _body(files, spec.url_path)
        assert headers["cache-control"] == "no-cache"
        if spec.url_path in eager:
            assert html == original.replace("</head>", script + "</head>", 1)
            assert html.index(script) > html.index('<script type="module" crossorigin src=')
            assert headers["link"] == f"</static/js/{chunk}>; rel=modulepreload"
        else:
            assert html == original, spec.url_path


# ---------------------------------------------------------------------- warm-up
def _free_port():
    import socket

    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def test_warm_up_opens_every_chart_page_once_the_server_answers(tmp_path):
    """``python -m ui.serve`` opens each page that draws a chart on opening once the server
    answers (its log says so, naming them), and each ran to its end without an exception;
    a direct call reports every run, one per page. The warm-up's bound is lifted here
    (tests/app/test_serve_warm_up.py tests it)."""
    import os
    import subprocess
    import sys
    import time
    from pathlib import Path

    from ui.registry import PAGES

    root = Path(ui.serve.__file__).resolve().parents[1]
    port = _free_port()
    url = f"http://localhost:{port}"
    log_path = tmp_path / "server.log"
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env.pop(ui.serve.WARM_UP_ENV, None)
    env.update({ui.serve.WARM_UP_CPU_ENV: "inf", ui.serve.WARM_UP_YIELD_ENV: "0"})
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "ui.serve", "--server.port", str(port),
             "--server.headless", "true", "--browser.gatherUsageStats", "false"],
            cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 240
        while ui.serve.WARM_UP_DONE not in log_path.read_text(errors="replace"):
            assert proc.poll() is None, log_path.read_text(errors="replace")[-3000:]
            assert time.monotonic() < deadline, log_path.read_text(errors="replace")[-3000:]
            time.sleep(0.5)
        text = log_path.read_text(errors="replace")
        chart_pages = ui.serve.warm_up_order(PAGES)
        assert {p.url_path for p in chart_pages} == {p.url_path for p in PAGES if p.chart_on_open}
        assert [p.warm_up_last for p in chart_pages] == sorted(p.warm_up_last for p in chart_pages)
        line = next(t for t in text.splitlines() if ui.serve.WARM_UP_DONE in t)
        assert f"{len(chart_pages)} pages" in line
        assert all(p.url_path in line for p in chart_pages), line
        assert "Warm-up:" not in text and "stopped" not in text, text[-3000:]
        assert "ended early" not in line, line
        frozen = re.search(r"Garbage collector: (\d+) long-lived objects set aside", text)
        assert frozen and int(frozen.group(1)) > 10_000, text[-3000:]

        done = ui.serve.warm_up_pages(url)
        assert done.stopped == ""
        runs = done.runs
        expected = [p.url_path for p in chart_pages]
        assert [r.page for r in runs] == expected
        assert all(r.status == "FINISHED_SUCCESSFULLY" and r.exceptions == () for r in runs), \
            runs
    finally:
        proc.terminate()
        proc.wait(timeout=15)


def test_warm_up_can_be_switched_off(monkeypatch):
    """``DASHBOARD_WARM_UP=0`` leaves the warm-up out; by default it is registered to start
    once Streamlit has read its configuration (the port is known then)."""
    from streamlit import config
    from streamlit.web import cli
    from streamlit.web.server.starlette import starlette_server
    from streamlit.web.server.starlette import starlette_static_routes as routes

    monkeypatch.setattr(routes, "create_streamlit_static_handler",
                        routes.create_streamlit_static_handler)
    monkeypatch.setattr(starlette_server, "_bind_socket", starlette_server._bind_socket)
    monkeypatch.setattr(PagesManager, "uses_pages_directory", PagesManager.uses_pages_directory)
    monkeypatch.setattr(cli, "main", lambda: 0)
    monkeypatch.setattr("sys.argv", ["ui.serve"])
    registered = []
    monkeypatch.setattr(config, "on_config_parsed",
                        lambda fn, force_connect=False: registered.append(fn))
    monkeypatch.setenv(ui.serve.WARM_UP_ENV, "0")
    ui.serve.main([])
    assert ui.serve.start_warm_up not in registered
    monkeypatch.delenv(ui.serve.WARM_UP_ENV)
    registered.clear()
    ui.serve.main([])
    assert ui.serve.start_warm_up in registered


def test_the_server_runs_from_the_repository_whatever_the_working_directory(monkeypatch,
                                                                            tmp_path):
    """Streamlit reads .streamlit/config.toml from the working directory: ui.serve starts
    from the repository, so its settings (no error details in the browser) always apply."""
    from streamlit import config
    from streamlit.web import cli
    from streamlit.web.server.starlette import starlette_server
    from streamlit.web.server.starlette import starlette_static_routes as routes

    monkeypatch.setattr(routes, "create_streamlit_static_handler",
                        routes.create_streamlit_static_handler)
    monkeypatch.setattr(starlette_server, "_bind_socket", starlette_server._bind_socket)
    monkeypatch.setattr(PagesManager, "uses_pages_directory", PagesManager.uses_pages_directory)
    monkeypatch.setattr(config, "on_config_parsed", lambda fn, force_connect=False: None)
    monkeypatch.setenv(ui.serve.WARM_UP_ENV, "0")
    seen = []
    monkeypatch.setattr(cli, "main", lambda: seen.append(Path.cwd()) or 0)
    monkeypatch.chdir(tmp_path)
    ui.serve.main([])
    assert seen == [ui.serve.APP.parent]
    assert 'showErrorDetails = "none"' in (seen[0] / ".streamlit" / "config.toml").read_text()


def test_long_lived_objects_are_left_out_of_full_collections():
    """:func:`ui.serve.freeze_long_lived` collects the garbage there is, then sets every live
    object aside (a cycle made before is freed, one made after is still collected). The
    automatic collections are off meanwhile, so that only the calls here free the cycles."""
    import gc

    class Node:
        pass

    def cycle():
        a, b = Node(), Node()
        a.other, b.other = b, a
        return weakref.ref(a)

    was_enabled = gc.isenabled()
    gc.disable()
    try:
        before = cycle()  # unreachable garbage, freed by the collection before the freeze
        assert before() is not None
        kept = Node()
        frozen = ui.serve.freeze_long_lived()
        assert before() is None
        assert frozen == gc.get_freeze_count() > 1000
        assert kept is not None
        after = cycle()
        assert after() is not None
        gc.collect()
        assert after() is None  # what runs create later is still collected
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()
        if was_enabled:
            gc.enable()
