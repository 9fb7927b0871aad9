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
