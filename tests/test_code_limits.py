"""Limits on the code's shape that must not drift (issue 29 point 6).

Targets: no source file over 600 lines (every Python file of the repository: the product, its
tests and its benchmarks); no function over 150 lines in ``pages/`` and ``ui/``;
at most 12 switches on concrete manifold classes outside ``dpcore/manifolds``; no import cycle
between dpcore modules. Where today's code is over a target, the excess is listed below with
its current size as a cap: a listed file or function may shrink (and must then be removed from
the list, or its cap lowered) but never grow, and nothing new may cross a target. Each checker
is shown to report a planted violation, so the limits can fail.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCE_DIRS = ("dpcore", "ui", "pages")
#: Where the file-size limit applies: every Python file of the repository.
ALL_PYTHON_DIRS = SOURCE_DIRS + ("tests", "benchmarks")
MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 150
MAX_SWITCHES = 12
CONCRETE = {"Sphere", "SPD", "KendallShape", "Euclidean", "Hyperbolic"}

#: Files over MAX_FILE_LINES today, with the size they may not exceed (to be split).
OVERSIZE_FILES = {}
#: Functions in pages/ and ui/ over MAX_FUNCTION_LINES today, with their caps.
OVERSIZE_FUNCTIONS = {}
#: Concrete-manifold switches outside dpcore/manifolds today (within the issue's limit,
#: MAX_SWITCHES; the cap only comes down).
SWITCH_CAP = 9
#: Calls that rebuild a manifold from a dashboard setting's key (``make_manifold``) outside
#: ``ui/manifolds.py``: the issue found 33 and asked for objects instead; the pages and
#: configurations now carry their manifold, and the cap only comes down.
MAKE_MANIFOLD_CAP = 24
#: Import cycles today (sets of modules), to be broken: the work estimate times a real sweep
#: release to calibrate itself, and the release checks its work.
KNOWN_CYCLES = []


def source_files(root=ROOT):
    files = [p for d in SOURCE_DIRS for p in (root / d).rglob("*.py")]
    return sorted(files + [root / "app.py"])


def all_python_files(root=ROOT):
    """Every Python file the repository holds (product, tests, benchmarks; not the browser
    tests' installed node packages)."""
    files = [p for d in ALL_PYTHON_DIRS for p in (root / d).rglob("*.py")
             if "node_modules" not in p.parts]
    return sorted(files + [root / "app.py"])


def rel(path, root=ROOT):
    return path.relative_to(root).as_posix()


# ---------------------------------------------------------------------- checkers
def long_files(files, root=ROOT):
    """``{path: lines}`` of files over MAX_FILE_LINES."""
    out = {}
    for p in files:
        n = len(p.read_text(encoding="utf-8").splitlines())
        if n > MAX_FILE_LINES:
            out[rel(p, root)] = n
    return out


def long_functions(files, root=ROOT):
    """``{"path:name": lines}`` of functions over MAX_FUNCTION_LINES in pages/, ui/, app.py."""
    out = {}
    for p in files:
        r = rel(p, root)
        if not (r.startswith(("pages/", "ui/")) or r == "app.py"):
            continue
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    out[f"{r}:{node.name}"] = max(n, out.get(f"{r}:{node.name}", 0))
    return out


def concrete_switches(files, root=ROOT):
    """``isinstance(x, <concrete manifold>)`` calls outside dpcore/manifolds, as "path:line"."""
    out = []
    for p in files:
        r = rel(p, root)
        if r.startswith("dpcore/manifolds/"):
            continue
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance"
                    and len(node.args) == 2):
                arg = node.args[1]
                elts = arg.elts if isinstance(arg, ast.Tuple) else [arg]
                names = {e.id if isinstance(e, ast.Name) else getattr(e, "attr", None)
                         for e in elts}
                if names & CONCRETE:
                    out.append(f"{r}:{node.lineno}")
    return out


def manifold_rebuilds(files, root=ROOT):
    """``make_manifold(...)`` calls (by name or attribute) outside ui/manifolds.py, as
    "path:line"."""
    out = []
    for p in files:
        r = rel(p, root)
        if r == "ui/manifolds.py":
            continue
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.id if isinstance(f, ast.Name) else getattr(f, "attr", None)
                if name == "make_manifold":
                    out.append(f"{r}:{node.lineno}")
    return out


def _module_name(path, root):
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def import_graph(root=ROOT, package="dpcore"):
    """Module -> the package's modules it imports (anywhere in its body, lazy imports too)."""
    paths = {_module_name(p, root): p for p in (root / package).rglob("*.py")}
    graph = {}
    for mod, path in paths.items():
        is_pkg = path.name == "__init__.py"
        deps = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = mod.split(".") if is_pkg else mod.split(".")[:-1]
                    base = base[:len(base) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                # ``from pkg import mod`` imports the module; ``from pkg import name`` the
                # package (or module) that defines ``name``.
                targets = [f"{target}.{a.name}" if f"{target}.{a.name}" in paths else target
                           for a in node.names]
            for t in targets:
                while t and t not in paths and "." in t:
                    t = t.rsplit(".", 1)[0]
                if t in paths and t != mod:
                    deps.add(t)
        graph[mod] = deps
    return graph


def cycles(graph):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


#: dpcore's packages from the bottom up: a module may import its own layer and the layers
#: below it, never one above (lazy imports too). Private helpers (``_validation``,
#: ``exceptions``, ``settings``, ...) are outside the layers and usable everywhere.
LAYERS = (("manifolds",), ("learning", "sensitivity", "data"), ("sampling",), ("privacy",),
          ("mechanisms",), ("release", "visualization"), ("experiments",))


def layer_violations(graph, package="dpcore", layers=LAYERS):
    """``"module -> module"`` imports from a lower layer of ``package`` to a higher one."""
    rank = {name: k for k, names in enumerate(layers) for name in names}

    def layer(mod):
        parts = mod.split(".")
        return rank.get(parts[1]) if len(parts) > 1 and parts[0] == package else None

    return sorted(f"{a} -> {b}" for a, deps in graph.items() for b in deps
                  if layer(a) is not None and layer(b) is not None and layer(b) > layer(a))


# ---------------------------------------------------------------------- the limits
def test_no_file_grows_past_its_cap_and_no_new_file_crosses_600_lines():
    found = long_files(all_python_files())
    new = sorted(set(found) - set(OVERSIZE_FILES))
    assert not new, f"files over {MAX_FILE_LINES} lines: {new}"
    grown = {f: (n, OVERSIZE_FILES[f]) for f, n in found.items() if n > OVERSIZE_FILES[f]}
    assert not grown, f"over their cap (lines, cap): {grown}"
    stale = sorted(set(OVERSIZE_FILES) - set(found))
    assert not stale, f"now within {MAX_FILE_LINES} lines: remove them from the list: {stale}"


def test_no_page_or_ui_function_grows_past_its_cap():
    found = long_functions(source_files())
    new = sorted(set(found) - set(OVERSIZE_FUNCTIONS))
    assert not new, f"functions over {MAX_FUNCTION_LINES} lines: {new}"
    grown = {f: (n, OVERSIZE_FUNCTIONS[f]) for f, n in found.items()
             if n > OVERSIZE_FUNCTIONS[f]}
    assert not grown, f"over their cap (lines, cap): {grown}"


def test_concrete_manifold_switches_do_not_grow():
    found = concrete_switches(source_files())
    assert len(found) <= SWITCH_CAP <= MAX_SWITCHES, (len(found), found)


def test_manifold_rebuilds_from_keys_do_not_grow():
    found = manifold_rebuilds(source_files())
    assert len(found) <= MAKE_MANIFOLD_CAP, (len(found), found)


def test_no_new_import_cycle():
    found = cycles(import_graph())
    unknown = [sorted(c) for c in found if c not in KNOWN_CYCLES]
    assert not unknown, f"import cycles: {unknown}"
    stale = [sorted(c) for c in KNOWN_CYCLES if c not in found]
    assert not stale, f"broken since: remove them from KNOWN_CYCLES: {stale}"


def test_dpcore_layers_only_import_downwards():
    assert not layer_violations(import_graph())


# ---------------------------------------------------------------------- the checkers can fail
@pytest.fixture
def planted(tmp_path):
    (tmp_path / "pages").mkdir()
    (tmp_path / "dpcore" / "sub").mkdir(parents=True)
    (tmp_path / "app.py").write_text("x = 1\n")
    body = "\n".join(f"    y{i} = {i}" for i in range(MAX_FUNCTION_LINES + 5))
    (tmp_path / "pages" / "big.py").write_text(
        "def main():\n" + body + "\n" + "\n" * MAX_FILE_LINES)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_big.py").write_text("x = 1\n" * (MAX_FILE_LINES + 1))
    (tmp_path / "dpcore" / "__init__.py").write_text("")
    (tmp_path / "dpcore" / "sub" / "__init__.py").write_text("")
    (tmp_path / "dpcore" / "sub" / "a.py").write_text(
        "from . import b\nif isinstance(b, Sphere):\n    pass\n")
    (tmp_path / "ui").mkdir()
    (tmp_path / "ui" / "logic.py").write_text(
        "from ui import manifolds as M\nm = M.make_manifold('sphere')\n")
    (tmp_path / "dpcore" / "sub" / "b.py").write_text(
        "def f():\n    from .a import g\n    return g\n")
    return tmp_path


def test_the_checkers_report_planted_violations(planted):
    files = source_files(planted)
    assert set(long_files(files, planted)) == {"pages/big.py"}
    assert set(long_files(all_python_files(planted), planted)) == {"pages/big.py",
                                                                   "tests/test_big.py"}
    assert set(long_functions(files, planted)) == {"pages/big.py:main"}
    assert concrete_switches(files, planted) == ["dpcore/sub/a.py:2"]
    assert manifold_rebuilds(files, planted) == ["ui/logic.py:2"]
    assert cycles(import_graph(planted)) == [{"dpcore.sub.a", "dpcore.sub.b"}]
    assert layer_violations(import_graph(planted), layers=(("sub",), ("top",))) == []
    (planted / "dpcore" / "top.py").write_text("X = 1\n")
    (planted / "dpcore" / "sub" / "c.py").write_text("def f():\n    from ..top import X\n")
    assert layer_violations(import_graph(planted), layers=(("sub",), ("top",))) == [
        "dpcore.sub.c -> dpcore.top"]


# ---------------------------------------------------------------------- lint
def ruff(*paths):
    """``ruff check`` (pinned in requirements-dev.txt) with the repository's rules
    (pyproject.toml), without a cache: (exit code, its report)."""
    out = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--config",
                          str(ROOT / "pyproject.toml"), *map(str, paths)],
                         capture_output=True, text=True, cwd=ROOT, check=False)
    return out.returncode, out.stdout + out.stderr


def test_the_repository_passes_its_lint():
    """``make lint`` on the whole repository, in the suite: a line over 100 characters once
    passed CI because nothing ran the lint there."""
    code, report = ruff(ROOT)
    assert code == 0, report[-4000:]


def test_the_lint_reports_a_planted_violation(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("X = " + "1 + " * 40 + "1\n")
    code, report = ruff(bad)
    assert code == 1 and "E501" in report, report
