"""Smoke tests of the Streamlit app with ``streamlit.testing.v1.AppTest`` (no browser).

The entry script ``app.py`` registers the pages of :mod:`ui.registry` with ``st.navigation``;
each page is run once through the entry script (``AppTest.switch_page``, as a user clicking in
the sidebar) and once on its own. ``tests/ui/test_registry.py`` checks that the registry and
``pages/`` agree.
"""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ui.registry import HOME, PAGES

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "app.py"
TIMEOUT = 30  # seconds; the first run imports streamlit's machinery
PAGE_IDS = [spec.name for spec in PAGES]


def titles(at: AppTest) -> list[str]:
    return [element.value for element in at.title]


def test_app_runs_and_shows_home_page():
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT).run()
    assert not at.exception
    assert titles(at) == [HOME.page_title]
    # The landing page lists every other page by name.
    text = "\n".join(element.value for element in at.markdown)
    for spec in PAGES:
        if spec is not HOME:
            assert spec.title in text


def test_sidebar_shows_privacy_ledger_placeholder():
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT).run()
    assert not at.exception
    assert [header.value for header in at.sidebar.header] == ["Privacy ledger"]
    captions = [element.value for element in at.sidebar.caption]
    assert any(text.startswith("No releases yet.") for text in captions)


def test_rerun_keeps_shared_sidebar():
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT).run()
    at.run()
    assert not at.exception
    assert titles(at) == [HOME.page_title]
    assert [header.value for header in at.sidebar.header] == ["Privacy ledger"]


@pytest.mark.parametrize("spec", PAGES, ids=PAGE_IDS)
def test_navigation_to_page(spec):
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT).run()
    at.switch_page(f"pages/{spec.file}").run()
    assert not at.exception
    assert titles(at) == [spec.page_title]
    # The shared sidebar is drawn by app.py on every page.
    assert [header.value for header in at.sidebar.header] == ["Privacy ledger"]


@pytest.mark.parametrize("spec", PAGES, ids=PAGE_IDS)
def test_page_runs_on_its_own(spec):
    at = AppTest.from_file(str(spec.path), default_timeout=TIMEOUT).run()
    assert not at.exception
    assert titles(at) == [spec.page_title]


def test_switching_to_unregistered_file_is_rejected():
    """switch_page only accepts files that app.py registered with st.navigation."""
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT).run()
    with pytest.raises(ValueError):
        at.switch_page("app.py")
