"""dpcore installs as a library with honest extras (issue 31 points 4 and 5): the runtime pins
satisfy pyproject.toml's ranges, the runtime holds no geomstats (the presets it supplied ship
inside dpcore), and the wheel carries dpcore with its presets and nothing of the dashboard."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]


def pins(name):
    """``{package: version}`` of the ``==`` pins of a requirements file (not following
    ``-r``)."""
    text = (ROOT / name).read_text(encoding="utf-8")
    found = re.findall(r"^([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?==(\S+)", text, flags=re.M)
    return {canonicalize_name(n): v for n, v in found}


def project():
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def requirements(extras):
    """The requirements of dpcore with ``extras``, self-references (``dpcore[...]``)
    followed."""
    meta = project()
    out, todo, seen = [Requirement(r) for r in meta["dependencies"]], list(extras), set()
    while todo:
        extra = todo.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for text in meta["optional-dependencies"][extra]:
            req = Requirement(text)
            if canonicalize_name(req.name) == "dpcore":
                todo.extend(req.extras)
            else:
                out.append(req)
    return out


def test_extras_name_what_the_issue_asks_for():
    extras = project()["optional-dependencies"]
    assert {"fast", "plot", "parallel", "dashboard"} <= set(extras)
    names = {e: {canonicalize_name(r.name) for r in requirements([e])} for e in extras}
    assert {"numba", "llvmlite"} <= names["fast"]
    assert "plotly" in names["plot"] and "joblib" in names["parallel"]
    assert {"streamlit", "plotly", "websockets", "numba", "joblib", "diffprivlib"} <= (
        names["dashboard"])
    assert "geomstats" not in names["dashboard"]


def test_runtime_pins_satisfy_the_dashboards_ranges():
    """`make run` installs requirements.txt with ``-e ".[dashboard]"``: every package of the
    dashboard's closure is pinned there, at a version its range admits."""
    runtime = pins("requirements.txt")
    for req in requirements(["dashboard"]):
        name = canonicalize_name(req.name)
        assert name in runtime, f"{name} is a dashboard need without a runtime pin"
        assert req.specifier.contains(runtime[name], prereleases=True), (
            f"requirements.txt pins {name}=={runtime[name]}, outside {req}")


def test_runtime_requirements_hold_no_geomstats_and_the_dev_ones_keep_it():
    assert "geomstats" not in pins("requirements.txt")
    assert "geomstats" in pins("requirements-dev.txt")
    # the development oracle's pin and the library's `geomstats` extra agree
    (req,) = [r for r in requirements(["geomstats"]) if r.name == "geomstats"]
    assert req.specifier.contains(pins("requirements-dev.txt")["geomstats"])


@pytest.mark.slow
def test_wheel_holds_dpcore_and_its_presets_only(tmp_path):
    """A wheel built from a copy of the project's files (not in the checkout, which a build
    would leave a build/ folder in) holds dpcore with its presets, none of the dashboard or
    the tests, and declares the extras."""
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    shutil.copytree(ROOT / "dpcore", src / "dpcore",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.nbi", "*.nbc"))
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                          str(tmp_path / "dist"), str(src)], capture_output=True, text=True,
                         timeout=600, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    (wheel,) = (tmp_path / "dist").glob("dpcore-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        meta = zf.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    tops = {n.split("/", 1)[0] for n in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"dpcore"}
    presets = ROOT / "dpcore" / "data" / "presets"
    for path in presets.iterdir():
        assert f"dpcore/data/presets/{path.name}" in names
    for extra in ("fast", "plot", "parallel", "dashboard"):
        assert f"Provides-Extra: {extra}" in meta
    assert 'Requires-Dist: numba>=0.60; extra == "fast"' in meta
