"""``ui.registry`` is the one list of pages: every ``pages/*.py`` file is registered exactly
once, and every registered page exists; names, URLs and keys are consistent."""

import ast
from collections import Counter
from pathlib import Path

from ui import registry
from ui.registry import HOME, PAGES, PAGES_DIR

ROOT = Path(__file__).resolve().parents[2]


def test_every_page_file_is_registered_exactly_once():
    files = sorted(path.name for path in PAGES_DIR.glob("*.py"))
    registered = Counter(spec.file for spec in PAGES)
    assert [f for f, count in registered.items() if count > 1] == []
    assert sorted(registered) == files


def test_every_registered_page_exists():
    assert PAGES_DIR == ROOT / "pages"
    for spec in PAGES:
        assert spec.path.is_file(), spec.file
        assert spec.path.parent == PAGES_DIR


def test_names_titles_and_urls_are_unique():
    for field in ("title", "url_path", "name", "icon"):
        values = [getattr(spec, field) for spec in PAGES]
        assert len(set(values)) == len(values), field
    for spec in PAGES:
        assert spec.url_path and "/" not in spec.url_path, spec
        assert spec.icon.startswith(":material/") and spec.icon.endswith(":"), spec


def test_landing_page_first_and_every_other_page_summarized():
    assert HOME is PAGES[0] and HOME.summary == ""
    for spec in PAGES[1:]:
        assert spec.summary and "\n" not in spec.summary, spec.file


def _literal_strings(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)}


def test_titles_and_button_keys_are_the_pages_own():
    """The st.title and the run / download button keys named here occur in the page file."""
    for spec in PAGES:
        strings = _literal_strings(spec.path)
        if spec is not HOME:  # the landing page takes its title from the registry
            assert spec.page_title in strings, spec.file
        for key in (spec.run_button, spec.done_button):
            if key is not None:
                assert key.startswith(f"{spec.name}_"), (spec.file, key)
                assert key in strings, (spec.file, key)
        assert (spec.run_button is None) == (spec.done_button is None), spec.file


def test_lookup():
    assert registry.page("frechet_mean.py") is registry.page("fm")
    try:
        registry.page("nope.py")
    except KeyError as exc:
        assert "ui/registry.py" in str(exc)
    else:
        raise AssertionError("unknown page accepted")


def test_no_other_page_list():
    """The consumers read the registry instead of keeping their own list of page files."""
    consumers = [ROOT / "app.py", ROOT / "pages" / "home.py",
                 ROOT / "tests" / "app" / "test_app_smoke.py",
                 ROOT / "benchmarks" / "bench_pages.py",
                 ROOT / "tests" / "browser" / "test_pages_in_browser.py"]
    for path in consumers:
        text = path.read_text(encoding="utf-8")
        assert "ui.registry" in text, path.name
        named = [spec.file for spec in PAGES if f'"{spec.file}"' in text]
        assert len(named) <= 1, (path.name, named)
