"""The library stands on its own: nothing under ``dpcore/`` imports the dashboard or Streamlit.

DESIGN §1: ``dpcore`` must be importable and usable from a notebook or a script, "with no
Streamlit import anywhere inside it". The dashboard (``ui``, ``pages``) depends on the library,
never the other way round, so there is no import cycle. Two checks:

* statically, every ``import`` statement of every file under ``dpcore/`` (at module level or
  inside a function), and every ``importlib.import_module`` / ``__import__`` call with a literal
  name;
* dynamically, in a fresh interpreter where importing ``ui`` or ``streamlit`` raises
  ``ImportError``: every ``dpcore`` module imports, and the quick reproduction report (which
  draws every kind of figure the library has) builds.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LIBRARY = ROOT / "dpcore"
#: Top-level packages the library must not import.
FORBIDDEN = ("ui", "streamlit")


def _forbidden(module):
    """Whether the absolute module name ``module`` is, or is inside, a forbidden package."""
    return bool(module) and module.split(".")[0] in FORBIDDEN


def forbidden_imports(path):
    """``(line, statement)`` for each import of a forbidden package in the file ``path``."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source, filename=str(path))
    hits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            # Relative imports (level > 0) stay inside dpcore and cannot reach a top-level package.
            names = [node.module] if node.level == 0 else []
        elif isinstance(node, ast.Call):
            func = node.func
            called = (func.attr if isinstance(func, ast.Attribute)
                      else func.id if isinstance(func, ast.Name) else None)
            literal = (node.args and isinstance(node.args[0], ast.Constant)
                       and isinstance(node.args[0].value, str))
            names = [node.args[0].value] if called in ("import_module", "__import__") and \
                literal else []
        else:
            continue
        if any(_forbidden(name) for name in names):
            hits.append((node.lineno, ast.get_source_segment(source, node) or ", ".join(names)))
    return hits


def library_files():
    return sorted(p for p in LIBRARY.rglob("*.py") if "__pycache__" not in p.parts)


def test_scanner_catches_every_form(tmp_path):
    """The scanner itself: each way of importing ``ui`` / ``streamlit`` is reported."""
    path = tmp_path / "example.py"
    path.write_text(textwrap.dedent("""\
        import numpy as np
        from . import ui
        from .ui import figures
        import ui
        import streamlit as st

        def draw():
            from ui.figures import band_figure
            import ui.colors
            from streamlit import session_state
            import importlib
            importlib.import_module("ui.figures")
            __import__("streamlit")
            return np, ui, figures, band_figure, session_state, st
        """), encoding="utf-8")
    assert [line for line, _ in forbidden_imports(path)] == [4, 5, 8, 9, 10, 12, 13]


def test_library_files_found():
    files = {p.relative_to(LIBRARY).as_posix() for p in library_files()}
    assert {"__init__.py", "experiments/report.py", "visualization/__init__.py"} <= files


def test_library_does_not_import_the_dashboard_or_streamlit():
    offences = [f"{path.relative_to(ROOT).as_posix()}:{line}: {statement}"
                for path in library_files() for line, statement in forbidden_imports(path)]
    assert not offences, ("dpcore must not import the dashboard (ui) or Streamlit:\n"
                          + "\n".join(offences))


#: Run first in the subprocess: importing ``ui`` or ``streamlit`` (or a submodule) fails.
BLOCKER = textwrap.dedent(f"""\
    import sys

    BLOCKED = {FORBIDDEN!r}

    class Blocker:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ImportError(f"{{name}} is blocked: dpcore must not import it")
            return None

    for _name in list(sys.modules):
        if _name.split(".")[0] in BLOCKED:
            del sys.modules[_name]
    sys.meta_path.insert(0, Blocker())
    try:
        import ui  # noqa: F401
    except ImportError:
        pass
    else:
        raise AssertionError("the import blocker does not work")

    def check_clean():
        loaded = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
        assert not loaded, loaded
    """)


def run_blocked(code, timeout):
    """Run ``BLOCKER + code`` in a fresh interpreter from the repository root (where ``ui`` would
    otherwise be importable); fail with its output if it fails."""
    proc = subprocess.run([sys.executable, "-c", BLOCKER + textwrap.dedent(code)], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, (f"exit code {proc.returncode}\n--- stdout\n{proc.stdout[-4000:]}"
                                  f"\n--- stderr\n{proc.stderr[-4000:]}")
    return proc.stdout


def test_every_library_module_imports_without_the_dashboard():
    modules = sorted(
        ".".join(("dpcore", *p.relative_to(LIBRARY).with_suffix("").parts)).removesuffix(
            ".__init__")
        for p in library_files())
    out = run_blocked(f"""
        import importlib
        for name in {modules!r}:
            importlib.import_module(name)
        check_clean()
        print("imported", len({modules!r}))
        """, timeout=300)
    assert f"imported {len(modules)}" in out


@pytest.mark.slow
def test_quick_report_builds_without_the_dashboard(tmp_path):
    # One job: everything runs in the interpreter that blocks the dashboard (joblib workers
    # would not inherit the blocker).
    out = run_blocked(f"""
        import re
        from pathlib import Path
        from dpcore.experiments import report

        out = Path({str(tmp_path)!r})
        sections = report.build_report(out, quick=True, n_jobs=1)
        check_clean()
        text = (out / "index.html").read_text(encoding="utf-8")
        n_figures = sum(len(s.figures) for s in sections)
        assert n_figures >= 15, n_figures
        assert len(re.findall(r"Plotly\\.newPlot\\(", text)) == n_figures
        print("figures", n_figures)
        """, timeout=600)
    assert re.search(r"^figures \d+$", out, flags=re.MULTILINE)
