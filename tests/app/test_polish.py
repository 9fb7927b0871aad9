"""Polish the dashboard owes every user (issue 15): downloads never rerun the page, and the
toolbar has no "Deploy" button."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_download_button_ignores_clicks():
    missing = []
    for path in sorted([*ROOT.glob("pages/*.py"), *ROOT.glob("ui/*.py"), ROOT / "app.py"]):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "download_button"):
                kw = {k.arg: k.value for k in node.keywords}
                value = kw.get("on_click")
                if not (isinstance(value, ast.Constant) and value.value == "ignore"):
                    missing.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert missing == []


def test_toolbar_has_no_deploy_button():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["client"]["toolbarMode"] == "viewer"


def test_no_page_shows_the_run_time_of_a_release():
    """The run time of a strict release depends on the data (issue 11, point 4)."""
    shown = [f"{p.name}: {phrase}" for p in sorted(ROOT.glob("pages/*.py"))
             for phrase in ("Released in", "Computed in", "Release time")
             if phrase in p.read_text(encoding="utf-8")]
    assert shown == []


def test_magic_is_off_and_no_page_relies_on_it():
    """Magic (bare expressions written to the page) is off: Streamlit then skips rewriting each
    page's syntax tree when it compiles it, which it does again for the first visitor after
    every session closed. So no page may hold a bare expression meant to be shown (a docstring
    is not one; calls were never written by magic)."""
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["runner"]["magicEnabled"] is False
    bare = []
    for path in sorted([ROOT / "app.py", *ROOT.glob("pages/*.py")]):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            body = getattr(node, "body", None)  # a lambda's body is one expression
            for i, stmt in enumerate(body if isinstance(body, list) else []):
                if not isinstance(stmt, ast.Expr) or isinstance(stmt.value, (ast.Call, ast.Await)):
                    continue
                docstring = (i == 0 and isinstance(stmt.value, ast.Constant)
                             and isinstance(stmt.value.value, str))
                if not docstring:
                    bare.append(f"{path.relative_to(ROOT)}:{stmt.lineno}")
    assert bare == []


def test_no_traceback_or_server_path_reaches_the_browser():
    """An uncaught error shows Streamlit's generic message only: no exception type, message,
    traceback or server path in the browser (client.showErrorDetails = "none"; its default,
    "full", and the legacy false, "stacktrace", both send the traceback). Full details stay in
    the server's log."""
    from streamlit import config
    from streamlit.elements import exception as st_exception
    from streamlit.proto.Exception_pb2 import Exception as ExceptionProto

    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    value = cfg["client"]["showErrorDetails"]
    assert value == "none"
    before = config.get_option("client.showErrorDetails")
    try:
        config.set_option("client.showErrorDetails", value)
        try:
            raise ValueError(f"the file's column 'lat' is chosen twice ({ROOT / 'app.py'})")
        except ValueError as exc:
            proto = ExceptionProto()
            st_exception.marshall(proto, exc, apply_show_error_details=True)
    finally:
        config.set_option("client.showErrorDetails", before)
    sent = " ".join([proto.type, proto.message, *proto.stack_trace])
    assert not proto.stack_trace and not proto.type
    assert str(ROOT) not in sent and "'lat'" not in sent
