"""Smoke tests of the Streamlit app with ``streamlit.testing.v1.AppTest`` (no browser).

The entry script ``app.py`` registers the files in ``pages/`` with ``st.navigation``; each page is
run once through the entry script (``AppTest.switch_page``, as a user clicking in the sidebar)
and once on its own.
"""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "app.py"
PAGES_DIR = ROOT / "pages"

# page file -> title shown by st.title on that page
PAGE_TITLES = {
    "home.py": "Private statistics on manifolds",
    "geodesic_regression.py": "Geodesic regression",
    "budget_split.py": "Budget split",
    "frechet_mean.py": "Fréchet mean",
    "gaussian_dp.py": "Gaussian DP",
    "sensitivity.py": "Sensitivity",
    "linear_regression.py": "Linear regression",
}
OTHER_PAGES = sorted(set(PAGE_TITLES) - {"home.py"})
TIMEOUT = 30  # seconds; the first run imports streamlit's machinery


def titles(at: AppTest) -> list[str]:
    return [element.value for element in at.title]


def test_every_page_file_is_known():
    """A new page file must be added to PAGE_TITLES (and to app.py)."""
    assert {path.name for path in PAGES_DIR.glob("*.py")} == set(PAGE_TITLES)


def test_app_runs_and_shows_home_page():
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT).run()
    assert not at.exception
    assert titles(at) == [PAGE_TITLES["home.py"]]
    # The landing page lists every other page by name.
    text = "\n".join(element.value for element in at.markdown)
    for filename in OTHER_PAGES:
        assert PAGE_TITLES[filename] in text


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
    assert titles(at) == [PAGE_TITLES["home.py"]]
    assert [header.value for header in at.sidebar.header] == ["Privacy ledger"]


@pytest.mark.parametrize("filename", sorted(PAGE_TITLES))
def test_navigation_to_page(filename):
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT).run()
    at.switch_page(f"pages/{filename}").run()
    assert not at.exception
    assert titles(at) == [PAGE_TITLES[filename]]
    # The shared sidebar is drawn by app.py on every page.
    assert [header.value for header in at.sidebar.header] == ["Privacy ledger"]


@pytest.mark.parametrize("filename", sorted(PAGE_TITLES))
def test_page_runs_on_its_own(filename):
    at = AppTest.from_file(str(PAGES_DIR / filename), default_timeout=TIMEOUT).run()
    assert not at.exception
    assert titles(at) == [PAGE_TITLES[filename]]


def test_switching_to_unregistered_file_is_rejected():
    """switch_page only accepts files that app.py registered with st.navigation."""
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT).run()
    with pytest.raises(ValueError):
        at.switch_page("app.py")
