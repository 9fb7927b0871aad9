"""One page idiom: every page module defines ``main()`` and its last statement calls it; at
module level there are only imports, constants, functions (e.g. ``st.cache_data`` wrappers)
and that call, so no widget is drawn on import."""

import ast
from pathlib import Path

import pytest

PAGES = sorted((Path(__file__).resolve().parents[2] / "pages").glob("*.py"))


def test_there_are_pages():
    assert len(PAGES) >= 7


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name)
def test_page_defines_and_calls_main(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    body = tree.body
    assert any(isinstance(n, ast.FunctionDef) and n.name == "main" for n in body), path.name
    last = body[-1]
    assert (isinstance(last, ast.Expr) and isinstance(last.value, ast.Call)
            and getattr(last.value.func, "id", None) == "main"), path.name
    allowed = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef, ast.Assign,
               ast.AnnAssign)
    for node in body[:-1]:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the module docstring
        assert isinstance(node, allowed), f"{path.name}:{node.lineno}: top-level statement"
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            calls = [c for c in ast.walk(node) if isinstance(c, ast.Call)]
            for c in calls:
                name = ast.unparse(c.func)
                if name.startswith(("st.cache_data", "st.cache_resource")):
                    continue  # a caching wrapper draws nothing
                assert not name.startswith("st."), f"{path.name}:{node.lineno}: {name} at import"
