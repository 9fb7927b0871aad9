"""The library stands on its own: nothing under ``dpcore/`` imports the dashboard or Streamlit.

DESIGN §1: ``dpcore`` must be importable and usable from a notebook or a script, "with no
Streamlit import anywhere inside it". The dashboard (``ui``, ``pages``) depends on the library,
never the other way round, so there is no import cycle. Two checks:

* statically, every ``import`` statement of every file under ``dpcore/`` (at module level or
  inside a function), and every ``importlib.import_module`` / ``__import__`` call with a literal
  name;
* dynamically, in a fresh interpreter where importing ``ui`` or ``streamlit`` raises
  ``ImportError``: every ``dpcore`` module imports, and the quick reproduction report (which
  draws every kind of figure the library has) builds, its joblib workers blocked too
  (tests/experiments/test_report_quick.py, which checks the report's output from that build).
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import textwrap
from pathlib import Path

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


def run_blocked(code, timeout, env=None):
    """Run ``BLOCKER + code`` in a fresh interpreter from the repository root (where ``ui`` would
    otherwise be importable); fail with its output if it fails."""
    proc = subprocess.run([sys.executable, "-c", BLOCKER + textwrap.dedent(code)], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout, env=env)
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


# The quick reproduction report built without the dashboard: in
# tests/experiments/test_report_quick.py, which builds the report once, blocked in the
# interpreter and in its joblib workers (:func:`blocked_environment`), and checks both what the
# report writes and that no forbidden module was loaded.
def blocked_environment(directory):
    """Environment for :func:`run_blocked` whose every Python process (joblib's loky workers
    too) installs the blocker at startup: a ``sitecustomize`` module in ``directory`` put first
    on ``PYTHONPATH``. Its ``probe()`` returns ``(pid, blocked)`` of the process it runs in."""
    import os

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "sitecustomize.py").write_text(BLOCKER + textwrap.dedent("""

        def probe():
            import os
            try:
                import ui  # noqa: F401
            except ImportError:
                return os.getpid(), True
            return os.getpid(), False
        """), encoding="utf-8")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(directory), str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    return env


# --------------------------------------------------------------------------- Streamlit settings
#: Lowercase (the module, ``.streamlit/``) and uppercase (``STREAMLIT_*`` variables) spellings
#: are what reading a Streamlit setting takes; the product name "Streamlit" in prose (e.g. its
#: ``UploadedFile`` accepted as a file-like object) is not a setting and is allowed.
STREAMLIT_WORDS = re.compile(r"streamlit|STREAMLIT")
#: A comment may name them only to say that the library does not read them.
DISCLAIMER = re.compile(r"\b(not|never)\b", re.IGNORECASE)
def streamlit_mentions(path):
    """``(line, text)`` of each line of ``path`` naming a Streamlit setting or module in code,
    a string or a docstring; comments only count when they do not say it is not read."""
    import io
    import tokenize

    hits = []
    source = path.read_text(encoding="utf-8")
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if not STREAMLIT_WORDS.search(tok.string):
            continue
        if tok.type == tokenize.COMMENT and DISCLAIMER.search(tok.string):
            continue
        lines = tok.string.splitlines() or [tok.string]
        for offset, line in enumerate(lines):
            if STREAMLIT_WORDS.search(line):
                hits.append((tok.start[0] + offset, line.strip()))
    return hits


def test_streamlit_scanner(tmp_path):
    path = tmp_path / "example.py"
    path.write_text(textwrap.dedent('''\
        """Reads Streamlit's UploadedFile (prose is fine)."""
        import os
        # The library does not read STREAMLIT_SERVER_MAX_UPLOAD_SIZE.
        # reads STREAMLIT_SERVER_MAX_UPLOAD_SIZE
        LIMIT = os.environ.get("STREAMLIT_SERVER_MAX_UPLOAD_SIZE")
        CONFIG = ".streamlit/config.toml"
        def f():
            """Multi-line docstring.

            See streamlit.config.
            """
        '''), encoding="utf-8")
    assert [line for line, _ in streamlit_mentions(path)] == [4, 5, 6, 10]


def test_library_reads_no_streamlit_setting():
    """dpcore has its own limits (``DPCORE_*``) and never reads an application's settings: no
    ``STREAMLIT_*`` variable, ``streamlit`` module or ``.streamlit/`` file is named in its code
    or strings (the dashboard passes its upload cap to the readers as ``max_bytes``)."""
    offences = []
    for path in library_files():
        rel = path.relative_to(LIBRARY).as_posix()
        offences += [f"dpcore/{rel}:{line}: {text}" for line, text in streamlit_mentions(path)]
    assert not offences, "dpcore must not read Streamlit settings:\n" + "\n".join(offences)


# --------------------------------------------------------------------------- exceptions
EXCEPTIONS_MODULE = LIBRARY / "exceptions.py"


def _base_names(node):
    for base in node.bases:
        if isinstance(base, ast.Name):
            yield base.id
        elif isinstance(base, ast.Attribute):
            yield base.attr


def exception_classes():
    """``{(file, line, name)}`` of every class under ``dpcore/`` that derives, directly or
    through other dpcore classes, from a built-in exception or warning."""
    import builtins

    classes = []
    for path in library_files():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        classes += [(path, node) for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
    exceptional = {name for name in dir(builtins)
                   if isinstance(getattr(builtins, name), type)
                   and issubclass(getattr(builtins, name), BaseException)}
    found = set()
    changed = True
    while changed:
        changed = False
        for path, node in classes:
            key = (path.relative_to(ROOT).as_posix(), node.lineno, node.name)
            if key not in found and any(b in exceptional for b in _base_names(node)):
                found.add(key)
                exceptional.add(node.name)
                changed = True
    return found


def test_exception_scanner_sees_the_known_classes():
    names = {name for _, _, name in exception_classes()}
    assert {"CutLocusError", "ConvergenceWarning", "LimitExceededError", "DataValidationError",
            "PrivacyLeakWarning", "PrivacyBudgetError", "ApproximatePrivacyWarning",
            "ExactSamplingUnavailable"} <= names


def test_every_exception_class_is_defined_in_dpcore_exceptions():
    elsewhere = sorted(f"{path}:{line}: class {name}"
                       for path, line, name in exception_classes()
                       if path != "dpcore/exceptions.py")
    assert not elsewhere, ("define exception and warning classes in dpcore/exceptions.py "
                           "(and import them where they are used):\n" + "\n".join(elsewhere))


def test_exceptions_module_imports_nothing_from_dpcore():
    tree = ast.parse(EXCEPTIONS_MODULE.read_text(encoding="utf-8"))
    imports = [node for node in ast.walk(tree) if isinstance(node, ast.ImportFrom | ast.Import)]
    for node in imports:
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0 and not (node.module or "").startswith("dpcore"), node.module
        else:
            assert not any(a.name.startswith("dpcore") for a in node.names)


def test_exceptions_keep_their_old_import_paths():
    import dpcore.exceptions as E
    from dpcore.learning import ConvergenceWarning
    from dpcore.learning.frechet import ConvergenceWarning as FrechetConvergenceWarning
    from dpcore.manifolds import CutLocusError
    from dpcore.manifolds.base import CutLocusError as BaseCutLocusError
    from dpcore.settings import LimitExceededError

    assert CutLocusError is BaseCutLocusError is E.CutLocusError
    assert ConvergenceWarning is FrechetConvergenceWarning is E.ConvergenceWarning
    assert LimitExceededError is E.LimitExceededError
    for name in E.__all__:
        assert hasattr(E, name), name
