"""The launcher relies on one Streamlit internal; fail loudly if it moves."""

from streamlit.runtime.pages_manager import PagesManager

import ui.serve


def test_multipart_spool_attribute_exists():
    from starlette.formparsers import MultiPartParser

    assert hasattr(MultiPartParser, "spool_max_size")


def test_pages_manager_flag_exists():
    assert hasattr(PagesManager, "uses_pages_directory")
    assert ui.serve.APP.name == "app.py" and ui.serve.APP.exists()
