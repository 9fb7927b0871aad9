"""Shared AppTest helpers: open a page of the app as a user would, drive the release button."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "app.py"


def open_app_page(filename, *, timeout=120, **query):
    """Run app.py (with ``query`` in the URL), switch to ``pages/<filename>``; no exception."""
    at = AppTest.from_file(str(APP), default_timeout=timeout)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    at.switch_page(f"pages/{filename}").run()
    assert not at.exception, at.exception
    return at


def gr_quick_sampler(at):
    """Short chains on the Geodesic regression page keep tests fast (the default is longer)."""
    at.number_input(key="gr_chain").set_value(50)
    at.number_input(key="gr_burn").set_value(50)
    return at


def gr_release(at):
    """Press the Geodesic regression page's release button; no exception. Where the release
    would be drawn by MCMC the page asks for an explicit opt-in first: tick it, as a user
    would."""
    boxes = [c for c in at.checkbox if c.key == "gr_mcmc_ok"]
    if boxes and not boxes[0].value:
        boxes[0].check().run()
    at.button(key="gr_release_button").click().run()
    assert not at.exception, at.exception
    return at
