"""The dashboard's size caps live in one module, ``ui/caps.py``, and the upload cap is
Streamlit's own setting, passed to the library explicitly wherever the dashboard reads a file."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from dpcore.data import DataValidationError
from dpcore.settings import get_limits
from ui import caps
from ui.caps import CAPS, TABLE

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = sorted([*(ROOT / "ui").rglob("*.py"), *(ROOT / "pages").glob("*.py"),
                    ROOT / "app.py"])
#: A module-level name that looks like a size cap.
CAP_NAME = re.compile(r"^(MAX_\w+|\w*CAPS?)$")
#: The library's readers: the dashboard passes its upload cap to each call.
READERS = {"load_csv", "read_manifold_csv", "load_latlon_csv", "read_table", "scan_table"}


def test_table_is_complete_and_documented():
    names = [cap.name for cap in TABLE]
    assert len(names) == len(set(names))
    assert CAPS == {cap.name: cap.value for cap in TABLE}
    for cap in TABLE:
        assert isinstance(cap.value, int) and not isinstance(cap.value, bool) and cap.value > 0
        assert cap.bounds.strip() and cap.why.strip(), cap.name


def test_caps_sit_below_the_library_limits():
    limits = get_limits()
    assert CAPS["gr_footpoints"] * CAPS["gr_vectors"] <= limits.max_replicates
    assert CAPS["sweep_draws"] ** 2 <= limits.max_replicates
    assert max(CAPS["gr_chain"], CAPS["sweep_chain"]) <= min(limits.max_chain_length,
                                                               limits.max_burn_in)
    assert CAPS["cloud_draws"] <= limits.max_replicates


def test_no_other_dashboard_module_defines_a_cap():
    offences = []
    for path in DASHBOARD:
        if path == ROOT / "ui" / "caps.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            targets = (node.targets if isinstance(node, ast.Assign)
                       else [node.target] if isinstance(node, ast.AnnAssign) else [])
            offences += [f"{path.relative_to(ROOT)}:{node.lineno}: {t.id}" for t in targets
                         if isinstance(t, ast.Name) and CAP_NAME.match(t.id)]
    assert not offences, "caps belong in ui/caps.py:\n" + "\n".join(offences)


def test_every_read_of_a_file_passes_the_upload_cap():
    calls = []
    for path in DASHBOARD:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in READERS:
                calls.append((path.relative_to(ROOT).as_posix(), node.lineno,
                              {kw.arg for kw in node.keywords}))
    assert {path for path, _, _ in calls} >= {"ui/logic/regression_data.py",
                                              "ui/logic/linear_regression.py",
                                              "ui/logic/frechet_mean.py"}
    missing = [f"{path}:{line}" for path, line, kws in calls if "max_bytes" not in kws]
    assert not missing, "pass max_bytes= (the dashboard's upload cap) at " + ", ".join(missing)


def test_upload_cap_is_streamlits_setting():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    import streamlit as st

    assert caps.upload_limit_mb() == st.get_option("server.maxUploadSize")
    if Path.cwd() == ROOT:  # Streamlit reads .streamlit/config.toml from the working directory
        assert caps.upload_limit_mb() == config["server"]["maxUploadSize"] == 20
    assert caps.upload_max_bytes() == caps.upload_limit_mb() * 2**20


def test_importing_the_caps_does_not_import_streamlit():
    code = ("import sys, ui.caps, ui.logic.regression_data, ui.logic.linear_regression; "
            "assert 'streamlit' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


def test_uploads_use_the_dashboard_cap_not_the_library_default(monkeypatch):
    """A file over the dashboard's cap is refused even when the library's limit is larger, and
    the library's variable does not change the dashboard's cap."""
    from ui.logic import regression_data as D

    monkeypatch.setenv("DPCORE_MAX_UPLOAD_MB", "1000")
    monkeypatch.setattr(caps, "upload_limit_mb", lambda: 1)
    pairs = 2**20 // 40 + 1  # 20 bytes a row: over 1 MiB, under the row limit
    rows = 2 * pairs
    big = b"x,y1\n" + b"0.2500000,1.0000000\n0.7500000,2.0000000\n" * pairs
    assert len(big) > 2**20
    with pytest.raises(DataValidationError, match="more than the limit of 1,048,576 bytes"):
        D.parse_upload(big, "euclidean", 1)
    monkeypatch.setattr(caps, "upload_limit_mb", lambda: 2)
    assert D.parse_upload(big, "euclidean", 1).x.shape == (rows,)
