"""The bad-input corpus of issue 6 through the app's uploaders (AppTest), as a user sends it.

For every manifold of the "Geodesic regression" page and both manifolds of the "Fréchet mean"
page, one page session receives file after file: random bytes, empty files, other encodings
and delimiters, BOMs, duplicated and missing headers, NaN / inf / huge values, one row, more
rows than the row cap, points off the manifold, indefinite matrices, degenerate shapes,
constant covariates and spreadsheet formulas. Each must end in an ``st.error`` naming the
problem (the release button disabled) or in accepted data — never in an exception. The loader
itself is fuzzed property-based in tests/data/test_csvio_fuzz.py; this file checks the pages
around it.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.data import make_mean_data, make_regression_data, to_csv
from dpcore.manifolds import SPD, Sphere
from ui import manifolds as M
from ui.logic import geodesic_regression as G
from ui.logic import regression_data as D

from .pages import open_app_page

TIMEOUT = 120
ROW_CAP = 60  # DPCORE_MAX_ROWS for these tests, so "too many rows" stays a small file

ERROR, OK, EITHER = "error", "ok", "either"


def _table(text):
    lines = text.strip().splitlines()
    return lines[0].split(","), [line.split(",") for line in lines[1:]]


def _join(header, rows, sep=","):
    return "\n".join([sep.join(header)] + [sep.join(r) for r in rows]) + "\n"


def corpus(valid_text, kind):
    """``(label, bytes, expectation)`` for one valid CSV text of a manifold."""
    header, rows = _table(valid_text)
    rng = np.random.default_rng(11)
    n_col = len(header)
    cases = [
        ("valid", valid_text.encode(), OK),
        ("random bytes", rng.integers(0, 256, 300, dtype=np.uint8).tobytes(), ERROR),
        ("empty file", b"", ERROR),
        ("header only", (",".join(header) + "\n").encode(), ERROR),
        ("one row", _join(header, rows[:1]).encode(), ERROR),
        ("utf-16 with BOM", valid_text.encode("utf-16"), EITHER),
        ("utf-8 BOM", valid_text.encode("utf-8-sig"), OK),
        ("latin-1 text cell", _join(header, [rows[0], ["\xe9"] * n_col] + rows[1:])
         .encode("latin-1"), ERROR),
        ("semicolon delimiter", _join(header, rows, ";").encode(), EITHER),
        ("tab delimiter", _join(header, rows, "\t").encode(), EITHER),
        ("duplicated header", _join(header[:-1] + [header[0]], rows).encode(), ERROR),
        ("missing header", _join(rows[0], rows[1:]).encode(), ERROR),
        ("NaN cell", _join(header, [rows[0][:-1] + ["nan"]] + rows[1:]).encode(), ERROR),
        ("inf cell", _join(header, [rows[0][:-1] + ["inf"]] + rows[1:]).encode(), ERROR),
        ("huge value", _join(header, [rows[0][:-1] + ["1e308"]] + rows[1:]).encode(), ERROR),
        ("formula cell", _join(header, [rows[0][:-1] + ["=1+2"]] + rows[1:]).encode(), ERROR),
        ("too many rows", _too_many(valid_text), ERROR),
    ]
    last = len(header) - 1
    if kind == "sphere":
        off = list(rows[1])
        off[last] = str(float(off[last]) + 3.0)
        cases.append(("off the sphere", _join(header, [rows[0], off] + rows[2:]).encode(),
                      ERROR))
    if M.spec(kind).key == "spd":
        # upper triangle s11, s12, s22: |s12| > s11 = s22 makes the matrix indefinite
        bad = list(rows[1])
        start = 1 if header[0] == "x" else 0
        bad[start:start + 3] = ["1", "2", "1"]
        cases.append(("indefinite matrix", _join(header, [rows[0], bad] + rows[2:]).encode(),
                      ERROR))
    if kind == "kendall":
        flat = list(rows[1])
        flat[1:] = ["0.5"] * (len(flat) - 1)  # all landmarks at one point: no shape
        cases.append(("degenerate shape", _join(header, [rows[0], flat] + rows[2:]).encode(),
                      ERROR))
    if header[0] == "x":
        const = [["0.5"] + r[1:] for r in rows]
        cases.append(("constant covariate", _join(header, const).encode(), ERROR))
    return cases


def _check(at, label, expectation, button_key):
    assert not at.exception, (label, at.exception)
    errors = [e.value for e in at.error]
    if expectation == ERROR:
        assert errors, f"{label}: no error shown"
        assert at.button(key=button_key).disabled, label
    elif expectation == OK:
        assert not errors, (label, errors)
    return bool(errors)


@pytest.fixture(autouse=True)
def _row_cap(monkeypatch):
    monkeypatch.setenv("DPCORE_MAX_ROWS", str(ROW_CAP))


@pytest.mark.parametrize("kind", D.MANIFOLD_KINDS)
def test_geodesic_regression_uploader_survives_the_corpus(kind):
    # The page's own default parameter (R¹ on Euclidean, issue 14's defaults).
    param = G.default_param(kind, D.PARAM_RANGE[kind][2]) if kind in D.PARAM_RANGE else None
    m = M.make_manifold(kind, param)
    data = make_regression_data(m, 12, rng=3)
    at = open_app_page("geodesic_regression.py", timeout=TIMEOUT)
    at.radio(key="gr_manifold").set_value(kind).run()
    at.radio(key="gr_source").set_value("upload").run()
    shown = {}
    for label, content, expectation in corpus(to_csv(m, data.y, data.x), kind):
        at.file_uploader(key="gr_upload").set_value((f"{label}.csv", content, "text/csv")).run()
        shown[label] = _check(at, f"{kind}: {label}", expectation, "gr_release_button")
        if expectation == ERROR:
            assert any("cannot be used" in e.value for e in at.error), label
            # Messages speak of the page's controls, not of library keywords (issue 14 §3).
            assert not any("renormalize=True" in e.value for e in at.error), label
    assert not shown["valid"]
    # The row cap names itself and how to change it.
    at.file_uploader(key="gr_upload").set_value(
        ("big.csv", _too_many(to_csv(m, data.y, data.x)), "text/csv")).run()
    assert any("DPCORE_MAX_ROWS" in e.value for e in at.error), [e.value for e in at.error]


def _too_many(valid_text):
    header, rows = _table(valid_text)
    return _join(header, rows * (ROW_CAP // len(rows) + 1)).encode()


@pytest.mark.parametrize("key,manifold", [("sphere", Sphere(2)), ("spd", SPD(2))])
def test_frechet_mean_uploader_survives_the_corpus(key, manifold):
    radius = 0.3 if key == "sphere" else 1.0
    y = make_mean_data(manifold, 12, radius=radius, rng=3)
    at = open_app_page("frechet_mean.py", timeout=TIMEOUT)
    at.selectbox(key="fm_manifold").set_value(key).run()
    at.radio(key="fm_source").set_value("upload").run()
    for label, content, expectation in corpus(to_csv(manifold, y), key):
        at.file_uploader(key="fm_upload").set_value((f"{label}.csv", content, "text/csv")).run()
        assert not at.exception, (key, label, at.exception)
        errors = [e.value for e in at.error]
        assert not any("renormalize=True" in e for e in errors), (key, label)
        if expectation == ERROR:
            assert errors, f"{key}: {label}: no error shown"
            assert "fm_release" not in [b.key for b in at.button], label  # nothing to release
        elif expectation == OK:
            assert not errors, (key, label, errors)
