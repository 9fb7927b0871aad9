"""Importing the release package costs what it uses (issue 31 point 2).

``scipy.optimize`` (several times the import of numpy on its own), pandas and numba are loaded
only by the functions that need them, never by importing ``dpcore.release`` or any of its
public names. Each check runs in a fresh interpreter, since this one has them loaded already.
The speed itself is measured in ``benchmarks/bench_import.py``, not here.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import dpcore.release

ROOT = Path(__file__).resolve().parents[2]
#: Modules no import of the release package may load.
HEAVY = ("scipy.optimize", "pandas", "numba")


def loaded_after(code):
    """The modules of :data:`HEAVY` (and their submodules) in ``sys.modules`` after ``code``."""
    program = textwrap.dedent(code) + textwrap.dedent(f"""
        import json, sys
        heavy = {HEAVY!r}
        print(json.dumps(sorted(m for m in sys.modules
                                if any(m == h or m.startswith(h + ".") for h in heavy))))
        """)
    out = subprocess.run([sys.executable, "-c", program], cwd=ROOT, capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("code", [
    "import dpcore.release",
    "from dpcore.release import *",
    "from dpcore.release import private_frechet_mean, private_geodesic_regression",
    "import dpcore.release.regression, dpcore.release.frechet, dpcore.release.two_stage, "
    "dpcore.release.requests, dpcore.release.work, dpcore.release.planning",
])
def test_the_release_package_does_not_load_scipy_optimize_pandas_or_numba(code):
    assert loaded_after(code) == []


def test_the_check_sees_a_heavy_import():
    """The check can fail: a module that does load ``scipy.optimize`` is reported."""
    assert "scipy.optimize" in loaded_after("import dpcore.release\nimport scipy.optimize")


def test_every_public_name_is_importable_from_the_package():
    """The names of ``__all__`` before the package loaded them lazily (the import statements
    of the eager version) all resolve, to the objects their submodules define."""
    resolved = {name: getattr(dpcore.release, name) for name in dpcore.release.__all__}
    for name, module in dpcore.release._EXPORTS.items():
        assert resolved[name] is getattr(sys.modules[f"dpcore.release.{module}"], name)
    assert {"private_frechet_mean", "private_geodesic_regression", "Release",
            "GeodesicRegressionRequest", "estimate_regression_work"} <= set(resolved)
    assert set(dpcore.release.__all__) <= set(dir(dpcore.release))


def test_submodules_are_attributes_and_unknown_names_raise():
    program = ("import dpcore.release as r\n"
               "print(r.work.__name__, r.accuracy.__name__, r.requests.__name__)\n"
               "print(hasattr(r, 'no_such_module'))")
    out = subprocess.run([sys.executable, "-c", program], cwd=ROOT, capture_output=True,
                         text=True, check=True)
    assert out.stdout.split() == ["dpcore.release.work", "dpcore.release.accuracy",
                                  "dpcore.release.requests", "False"]
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        dpcore.release.no_such_name  # noqa: B018


def test_the_lazy_map_names_where_each_name_is_defined():
    """Every name of the map is defined at the top level of the module it names (read from the
    source, so the check does not depend on what other tests have imported)."""
    package = ROOT / "dpcore" / "release"
    for name, module in dpcore.release._EXPORTS.items():
        path = package / module / "__init__.py" if (package / module).is_dir() \
            else package / f"{module}.py"
        tree = ast.parse(path.read_text(encoding="utf-8"))
        defined = set()
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                defined.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                defined |= {t.id for t in targets if isinstance(t, ast.Name)}
            elif isinstance(node, ast.ImportFrom):
                defined |= {a.asname or a.name for a in node.names}
        assert name in defined, (name, module)
