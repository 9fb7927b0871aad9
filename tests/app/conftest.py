"""Fixtures for the AppTest (no browser) tests of the Streamlit app.

Why the patch below: the entry script ``app.py`` uses ``st.navigation`` while its pages live in a
directory named ``pages/``. Streamlit decides per process whether to use the legacy
"pages/ directory" multipage mode: it starts with that mode on whenever ``pages/`` exists and
switches it off for good the first time ``st.navigation`` is called. ``AppTest`` resets that flag
before *every* run, so every run after the first one (a rerun, a widget interaction, or
``switch_page``) falls back to the legacy mode: the page file is executed on its own and
``app.py`` (page config, navigation, shared sidebar) is skipped. A running server does not do that
once ``st.navigation`` has been called, so the fixture keeps the legacy mode off in tests.
"""

import pytest
from streamlit.runtime.pages_manager import PagesManager
from streamlit.runtime.scriptrunner.script_cache import ScriptCache
from streamlit.testing.v1 import app_test, local_script_runner


class _NavigationPagesManager(PagesManager):
    """PagesManager that always behaves as after the app's first ``st.navigation`` call."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        PagesManager.uses_pages_directory = False


@pytest.fixture(autouse=True)
def _navigation_mode(monkeypatch):
    # Guard against silent no-ops if streamlit's internals move (streamlit is pinned).
    assert app_test.PagesManager is PagesManager, "streamlit internals changed: revisit conftest"
    monkeypatch.setattr(app_test, "PagesManager", _NavigationPagesManager)
    yield
    PagesManager.uses_pages_directory = None


@pytest.fixture(autouse=True, scope="session")
def _one_script_cache():
    """Scripts compiled once per test process, as a server compiles them once per runtime.

    ``AppTest`` makes a new ``ScriptCache`` for every run (its page manager's and its script
    runner's), so each run compiled ``app.py`` and the page again: about 10 CPU s of the page
    tests (py-spy, session 30). A server keeps one cache for all its sessions; the files do not
    change during the tests.
    """
    assert app_test.ScriptCache is ScriptCache is local_script_runner.ScriptCache, (
        "streamlit internals changed: revisit conftest")
    shared = ScriptCache()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(app_test, "ScriptCache", lambda: shared)
        patch.setattr(local_script_runner, "ScriptCache", lambda: shared)
        yield


@pytest.fixture(autouse=True)
def _error_details_for_tests():
    """The app's config shows a browser no error details (``client.showErrorDetails = "none"``,
    tests/app/test_polish.py); AppTest reads that config, so an exception in a test would say
    only "This app has encountered an error". Tests see the message (and the assertions that
    print ``at.exception`` say what went wrong)."""
    from streamlit import config

    before = config.get_option("client.showErrorDetails")
    config.set_option("client.showErrorDetails", "full")
    yield
    config.set_option("client.showErrorDetails", before)


@pytest.fixture
def sent(monkeypatch):
    """The elements a run sends, in order: ``[(type, widget id or "")]``."""
    from streamlit.delta_generator import DeltaGenerator

    log = []
    enqueue = DeltaGenerator._enqueue

    def record(self, delta_type, element_proto, *args, **kwargs):
        log.append((delta_type, getattr(element_proto, "id", "")))
        return enqueue(self, delta_type, element_proto, *args, **kwargs)

    monkeypatch.setattr(DeltaGenerator, "_enqueue", record)
    return log
