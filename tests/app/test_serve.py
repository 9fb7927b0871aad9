"""The launcher relies on one Streamlit internal; fail loudly if it moves."""

from streamlit.runtime.pages_manager import PagesManager

import ui.serve


def test_multipart_spool_attribute_exists():
    from starlette.formparsers import MultiPartParser

    assert hasattr(MultiPartParser, "spool_max_size")


def test_pages_manager_flag_exists():
    assert hasattr(PagesManager, "uses_pages_directory")
    assert ui.serve.APP.name == "app.py" and ui.serve.APP.exists()


def test_page_html_preloads_the_chart_library(monkeypatch):
    """Every page URL (served as the single-page fallback) carries a modulepreload Link to
    Streamlit's own plotly chunk; the Home page and assets do not."""
    import asyncio
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
        return asyncio.run(files.get_response(path, scope)).headers

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
    import asyncio

    scope = {"type": "http", "method": "GET", "path": "/" + path, "headers": [],
             "root_path": ""}
    response = asyncio.run(files.get_response(path, scope))
    assert response.status_code == 200
    body = getattr(response, "body", None)
    if body is None:  # a FileResponse (served from disk)
        body = open(response.path, "rb").read()
    return body.decode("utf-8"), response.headers


def test_pages_with_a_chart_on_open_run_the_chart_library_early(monkeypatch):
    """A page that draws a chart when it opens gets a module script importing Streamlit's own
    plotly chunk (same URL as the preload header) after Streamlit's entry script; Home and
    Budget split (no chart on open) get Streamlit's HTML unchanged."""
    from ui.registry import PAGES

    files = _static_files(monkeypatch)
    chunk = ui.serve.chart_chunks()[0]
    script = f'<script type="module">import("/static/js/{chunk}");</script>'
    original, _ = _body(files, "")
    assert script not in original
    eager = {spec.url_path for spec in PAGES if spec.chart_on_open}
    assert eager == {"geodesic_regression", "frechet_mean", "gaussian_dp", "sensitivity",
                     "linear_regression"}
    for spec in PAGES:
        html, headers = _body(files, spec.url_path)
        assert headers["cache-control"] == "no-cache"
        if spec.url_path in eager:
            assert html == original.replace("</head>", script + "</head>", 1)
            assert html.index(script) > html.index('<script type="module" crossorigin src=')
            assert headers["link"] == f"</static/js/{chunk}>; rel=modulepreload"
        else:
            assert html == original, spec.url_path
