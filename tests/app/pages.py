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


def fm_open_studies(at):
    """Open the Fréchet mean page's "Studies on synthetic data" (built only while open,
    ``ui.session.lazy_expander``: the simulation's settings and chart) and run; the page as it
    was if already open."""
    if not any(w.key == "fm_ns" for w in at.multiselect):
        at.session_state["fm_studies_open"] = True
        at.run()
        assert not at.exception, at.exception
    return at


def gr_open_sampler(at):
    """Open the Geodesic regression page's "Advanced: sampler" section (built only while open,
    ``ui.session.lazy_expander``) and run; the page as it was if already open."""
    if not any(w.key == "gr_chain" for w in at.number_input):
        at.session_state["gr_sampler_open"] = True
        at.run()
        assert not at.exception, at.exception
    return at


def gr_quick_sampler(at):
    """Short chains on the Geodesic regression page keep tests fast (the default is longer)."""
    gr_open_sampler(at)
    at.number_input(key="gr_chain").set_value(50)
    at.number_input(key="gr_burn").set_value(50)
    return at


def gr_release(at):
    """Press the Geodesic regression page's release button; no exception. Where the release
    would be drawn by MCMC the page asks for an explicit opt-in first: tick it, as a user
    would."""
    return click_release(at, "gr_release_button")


def click_release(at, key):
    """Press a page's release button and confirm in the dialog that states its cost (a
    release spends budget only after that); no exception."""
    for box in at.checkbox:  # the explicit MCMC opt-in, where the page asks for it
        if box.key and box.key.endswith("_mcmc_ok") and not box.value:
            box.check().run()
            break
    at.button(key=key).click().run()
    assert not at.exception, at.exception
    at.button(key=f"{key}_confirm").click().run()
    assert not at.exception, at.exception
    return at
