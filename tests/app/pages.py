"""Shared AppTest helpers: open a page of the app as a user would, drive the release button;
the helpers shared by the modules of one page carry its prefix (``fm_``, ``gr_``, ``lr_``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "app.py"
LEDGER = "privacy_ledger"


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


# --------------------------------------------------------------------------- Linear regression
def lr_ledger(at):
    return at.session_state[LEDGER] if LEDGER in at.session_state else []


def lr_upload(at, data, name="table.csv"):
    at.radio(key="lr_src").set_value("upload").run()
    at.file_uploader(key="lr_upload").set_value((name, data, "text/csv")).run()
    return at


def lr_number(at, label):
    return [n for n in at.number_input if n.label == label][0]


def lr_box_fields(at, name):
    """The response box's two fields of response ``name`` (lower, upper)."""
    return lr_number(at, f"'{name}': lower bound"), lr_number(at, f"'{name}': upper bound")


def lr_type_box(at, name, lo, hi):
    """Type public bounds of response ``name`` into the response box, as a user would."""
    lr_box_fields(at, name)[0].set_value(lo).run()
    lr_box_fields(at, name)[1].set_value(hi).run()
    return at


def lr_type_covariate(at, lo, hi):
    lr_number(at, "Covariate lower bound").set_value(lo).run()
    lr_number(at, "Covariate upper bound").set_value(hi).run()
    return at


def lr_data_warnings(at):
    return [w.value for w in at.warning if w.value.startswith("**Bounds from the data:**")]


def lr_csv_bytes(n=40, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 5, n)
    lines = ["label,age,height,weight"]
    for i, xi in enumerate(x):
        lines.append(f"p{i},{xi:.4f},{100 + 10 * xi + rng.normal():.4f},"
                     f"{20 + 3 * xi + rng.normal():.4f}")
    return ("\n".join(lines) + "\n").encode()
