"""AppTest tests of the "Linear regression" page, driven through app.py as a user would.

Uploads: streamlit 1.67's ``AppTest`` supports ``st.file_uploader``
(``FileUploader.set_value((name, bytes, mime))``), so uploads are tested end to end. The parser
behind the page, :func:`ui.logic.linear_regression.parse_numeric_csv` (a thin call to the
library's reader, :func:`dpcore.data.scan_table`), takes the raw bytes and is tested in
tests/ui/logic and tests/data.

Elsewhere: the upload path and the person column in test_linear_regression_uploads.py; bounds
still holding the data's range in test_linear_regression_data_bounds.py.
"""

import importlib.util
import re

import numpy as np
import pytest

from .pages import click_release, open_app_page
from .pages import lr_data_warnings as data_warnings
from .pages import lr_ledger as ledger
from .pages import lr_type_box as type_box
from .pages import lr_type_covariate as type_covariate
from .pages import lr_upload as upload

TIMEOUT = 180
HAS_DIFFPRIVLIB = importlib.util.find_spec("diffprivlib") is not None


def open_page(**query):
    return open_app_page("linear_regression.py", timeout=TIMEOUT, **query)


# --------------------------------------------------------------------------- default scenario
def test_default_run_shows_least_squares_without_releasing():
    at = open_page()
    assert [t.value for t in at.title] == ["Linear regression"]
    assert not at.error
    assert len(at.get("plotly_chart")) == 1
    mse = at.main.table[-1].value
    assert list(mse.columns) == ["Non-private least squares"]
    # One response by default: its line in R¹ is drawn exactly (private, δ = 0).
    assert list(mse.index) == ["response_a", "all responses"]
    assert ledger(at) == []
    # The script and notebook are made once their section is opened (issue 29).
    assert [b.label for b in at.main.get("download_button")] == ["Download data"]
    at.session_state["lr_export_open"] = True
    at.run()
    assert [b.label for b in at.main.get("download_button")] == [
        "Download data", "Export script (.py)", "Export notebook (.ipynb)"]
    # ... and the teaching notes are typeset once theirs is
    assert not at.latex
    at.session_state["lr_notes"] = True
    at.run()
    assert len(at.latex) == 3
    assert any("'site'" in c.value for c in at.caption)  # the text column is ignored
    assert at.query_params["lr_src"] == "example"


def test_release_adds_private_lines_and_ledger_entries():
    at = open_page()
    if HAS_DIFFPRIVLIB:  # the comparison is a second release: opt-in (off by default)
        assert not at.checkbox(key="lr_dpl").value
        at.checkbox(key="lr_dpl").check().run()
        assert any("Cost of this release: ε = 4" in md.value for md in at.markdown)
    click_release(at, "lr_release")
    assert not at.exception, at.exception
    entries = ledger(at)
    assert entries[0]["page"] == "Linear regression"
    assert entries[0]["epsilon"] == pytest.approx(2.0)
    # One response (R¹): the refined-envelope exact sampler, private with δ = 0.
    assert entries[0]["guarantee"] == "private" and entries[0]["delta"] == 0.0
    mse = at.main.table[-1].value
    assert "dpcore private geodesic regression" in mse.columns
    if HAS_DIFFPRIVLIB:
        assert len(entries) == 2
        assert entries[1]["mechanism"] == "diffprivlib LinearRegression"
        assert "diffprivlib LinearRegression" in mse.columns
    assert "Download release" in [b.label for b in at.get("download_button")]
    at.run()
    assert len(ledger(at)) == len(entries)  # a rerun releases nothing


def test_changed_widgets_and_paper_mode():
    at = open_page()
    at.select_slider(key="lr_eps").set_value(5.0)
    at.slider(key="lr_split").set_value(0.3)
    at.checkbox(key="lr_dpl").uncheck()
    at.radio(key="lr_mode").set_value("paper").run()
    assert not at.exception, at.exception
    assert any("NOT PRIVATE" in w.value for w in at.warning)
    assert at.query_params["lr_mode"] == "paper"
    click_release(at, "lr_release")
    assert not at.exception, at.exception
    entries = ledger(at)
    assert len(entries) == 1
    assert entries[0]["label"].startswith("NOT PRIVATE")
    assert entries[0]["epsilon"] == pytest.approx(5.0)


def test_missing_diffprivlib_shows_info(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a, **k: None if name == "diffprivlib" else real(name, *a,
                                                                                       **k))
    at = open_page()
    assert not at.exception
    assert any("diffprivlib is not installed" in i.value for i in at.info)


# --------------------------------------------------------------------------- responses
@pytest.mark.parametrize("responses", [["response_a", "response_b"],
                                       ["response_a", "response_b", "response_c"]])
def test_two_or_three_responses_are_released_exactly(responses):
    """Two or three responses (R² or R³, n = 100, ε = 2): the whitened-leaf sampler
    (dpcore.sampling.bundle_flat) draws the joint KNG exactly, so the release is private with
    δ = 0 and needs no MCMC opt-in."""
    at = open_page()
    box = [m for m in at.multiselect if m.label.startswith("Response")][0]
    box.set_value(responses).run()
    assert not any("MCMC" in w.value for w in at.warning)
    assert not at.button(key="lr_release").disabled
    click_release(at, "lr_release")
    assert not at.exception, at.exception
    entry = ledger(at)[0]
    assert entry["guarantee"] == "private" and entry["delta"] == 0.0


def test_four_responses_go_to_mcmc_only_by_choice():
    """Four responses (R⁴, an upload of n = 60): at the page's ε = 2 the uniform proposals'
    public prediction (dpcore.release.uniform_cost, R⁴ terms evaluated by the compiled flat
    kernel) is within the limit, so the release will be exact; at ε = 5 it is not, so the page
    says MCMC, the release waits for the explicit opt-in, and its label says approximately
    private."""
    rng = np.random.default_rng(3)
    x = rng.uniform(0, 5, 60)
    lines = ["dose,r1,r2,r3,r4"] + [
        f"{xi:.4f}," + ",".join(f"{a + b * xi + rng.normal():.4f}"
                                for a, b in ((1, 2), (5, -1), (0, 0.5), (3, 1)))
        for xi in x]
    at = upload(open_page(), ("\n".join(lines) + "\n").encode())
    responses = [m for m in at.multiselect if m.label.startswith("Response")][0]
    responses.set_value(["r1", "r2", "r3", "r4"]).run()
    type_covariate(at, 0.0, 5.0)
    for name in ("r1", "r2", "r3", "r4"):
        type_box(at, name, -20.0, 20.0)
    assert not at.exception, at.exception
    assert not data_warnings(at)
    assert not any("MCMC" in w.value for w in at.warning)
    assert not at.button(key="lr_release").disabled
    at.select_slider(key="lr_eps").set_value(5.0).run()
    assert any("MCMC" in w.value for w in at.warning)
    assert at.button(key="lr_release").disabled
    click_release(at, "lr_release")
    assert ledger(at)[0]["label"] == "approximately private (MCMC; δ not certified)"


# --------------------------------------------------------------------------- real files (issue 14)
def messy_csv(n=50_000, seed=0):
    """A messy file as real ones are: ';'-separated, a row counter 'ID', a person column with
    1-3 rows each, renamed columns with units, decimal commas in two columns (a point in a
    third), blank cells (1% of ages, 3% of cholesterol values, many comments) and a free-text
    column."""
    rng = np.random.default_rng(seed)
    age = rng.uniform(20, 80, n)
    bp = 100 + 0.5 * age + rng.normal(0, 8, n)
    chol = 4 + 0.02 * age + rng.normal(0, 0.6, n)
    subject = np.repeat(np.arange(n), rng.integers(1, 4, n))[:n]
    words = np.array(["ok", "late", "recheck", "fasting", "follow up; call", ""])
    comment = words[rng.integers(len(words), size=n)]
    blank_age = rng.random(n) < 0.01
    blank_chol = rng.random(n) < 0.03
    lines = ["ID;Subject;Age (years);Systolic BP [mmHg];Cholesterol, mmol/L;Comment"]
    for i in range(n):
        a = "" if blank_age[i] else f"{age[i]:.1f}".replace(".", ",")
        c = "" if blank_chol[i] else f"{chol[i]:.2f}".replace(".", ",")
        lines.append(f'{i + 1};S{subject[i]:05d};{a};{bp[i]:.1f};{c};"{comment[i]}"')
    return ("\n".join(lines) + "\n").encode(), int(blank_age.sum()), \
        int((blank_age | blank_chol).sum()), int(np.bincount(subject).max())


def test_messy_50k_file_is_mapped_and_released():
    """Issue 14 §3/§4: the messy 50,000-row file gets a preview, default roles that skip the
    'ID' counter, its blank rows dropped with a count, the person column's largest group as
    the rows per person (confirmed before release) and, with public bounds typed (age in
    years, cholesterol in mmol/L), a strict private release without error."""
    data, blank_age, blank_age_or_chol, largest = messy_csv()
    at = open_page()
    upload(at, data, "messy.csv")
    assert not at.exception and not at.error, [e.value for e in at.error]
    covariate = [s for s in at.selectbox if s.label.startswith("Covariate")][0]
    assert covariate.value == "Age (years)"
    assert "ID (identifier?)" in covariate.options
    assert [m.value for m in at.multiselect] == [["Systolic BP [mmHg]"]]
    preview = at.main.dataframe[0].value
    assert list(preview.columns)[:3] == ["ID", "Subject", "Age (years)"] and len(preview) == 5
    profile = at.main.dataframe[1].value.set_index("column")
    assert profile.loc["Age (years)", "empty cells"] == blank_age
    assert profile.loc["ID", "note"].startswith("looks like an identifier")
    assert any(f"{blank_age:,} of 50,000 rows dropped" in w.value for w in at.warning)
    assert any("'ID' (looks like an identifier)" in c.value for c in at.caption)
    # map: cholesterol as the response, the person column
    [m for m in at.multiselect][0].set_value(["Cholesterol, mmol/L"]).run()
    [s for s in at.selectbox if s.label.startswith("Person")][0].set_value("Subject").run()
    assert not at.exception and not at.error
    assert any(f"{blank_age_or_chol:,} of 50,000 rows dropped" in w.value for w in at.warning)
    assert largest == 3
    assert any(f"Rows per person: {largest}" in i.value for i in at.info)
    # the sidebar's field keeps the user's value (for the other pages), locked, and says why
    rows_field = at.number_input(key="rows_per_person")
    assert rows_field.value == 1 and rows_field.disabled
    assert any(f"This page counts {largest} rows per person" in c.value
               and "person column 'Subject'" in c.value for c in at.sidebar.caption)
    assert at.button(key="lr_release").disabled  # until the group size is confirmed public
    [c for c in at.checkbox if c.key.startswith("lr_group_ok")][0].check().run()
    assert any("draws 5,000 of the" in c.value for c in at.caption)
    # the fields start from the data's range: public bounds are typed, as a user must
    assert data_warnings(at)
    type_box(at, "Cholesterol, mmol/L", 0.0, 20.0)
    type_covariate(at, 0.0, 120.0)
    assert not data_warnings(at)
    assert any(f"per person ({largest} rows each)" in md.value for md in at.markdown)
    click_release(at, "lr_release")
    assert not at.error, [e.value for e in at.error]
    entry = ledger(at)[-1]
    assert entry["epsilon"] == pytest.approx(2.0) and entry["guarantee"] != "not private"
    assert entry["rows"] == largest  # the release keeps the rows it was made with
    assert "dpcore private geodesic regression" in at.main.table[-1].value.columns
    # unmapping the person column gives the user's own setting back
    [s for s in at.selectbox if s.label.startswith("Person")][0].set_value(None).run()
    assert at.number_input(key="rows_per_person").value == 1
    assert not at.number_input(key="rows_per_person").disabled
    assert not any("rows each" in md.value for md in at.markdown)  # the next release: 1 row
    # the past release still counts per person at its rows: 2 + 3 x 2
    assert any("The session's total per person becomes ε = 8" in md.value
               for md in at.markdown)


def test_red_wine_preset_gives_a_private_release_with_provenance():
    """Issue 14 §5: one click loads the shipped UCI red wine, alcohol -> quality, public bounds
    from domain knowledge (alcohol 8-15 % vol, quality score 0-10), and releases privately."""
    at = open_page()
    at.radio(key="lr_src").set_value("wine").run()
    assert not at.exception and not at.error
    assert at.query_params["lr_src"] == "wine"
    assert any("CC BY 4.0" in c.value and "Cortez" in c.value for c in at.caption)
    assert [s.value for s in at.selectbox if s.label.startswith("Covariate")] == ["alcohol"]
    assert [m.value for m in at.multiselect] == [["class"]]
    bounds = {n.label: n.value for n in at.number_input}
    assert (bounds["Covariate lower bound"], bounds["Covariate upper bound"]) == (8.0, 15.0)
    assert any("domain knowledge" in c.value for c in at.caption)
    click_release(at, "lr_release")
    assert not at.error
    entry = ledger(at)[-1]
    assert entry["guarantee"] == "private" and entry["delta"] == 0.0
    mse = at.main.table[-1].value.loc["class"]
    # a sensible release: the private line's error is close to least squares' (0.56)
    assert mse["dpcore private geodesic regression"] < 1.5 * mse["Non-private least squares"]
    # the covariate's bounds follow the chosen column (issue 14 §3) and come from the preset
    [s for s in at.selectbox if s.label.startswith("Covariate")][0].set_value("pH").run()
    bounds = {n.label: n.value for n in at.number_input}
    assert (bounds["Covariate lower bound"], bounds["Covariate upper bound"]) == (2.7, 4.1)


def test_seeded_export_of_the_default_scenario_reproduces_the_page(monkeypatch, tmp_path):
    """Issue 15 §3: the page's exported script, run in a fresh interpreter with
    RELEASE_SEED set, prints the page's numbers: the least-squares line and, with the page's
    release drawn at the same seed, the private line and its error."""
    import json
    import os
    import subprocess
    import sys

    import dpcore.release.requests.regression as request_module
    from ui.logic import export

    seed, scripts = 20261125, []
    real_script = export.linear_regression_script
    # The page's release runs through its request (GeodesicRegressionRequest.run).
    real_release = request_module.private_geodesic_regression
    monkeypatch.setattr(export, "linear_regression_script",
                        lambda *a, **k: scripts.append(real_script(*a, **k)) or scripts[-1])
    monkeypatch.setattr(request_module, "private_geodesic_regression",
                        lambda *a, **k: real_release(*a, **{**k, "rng": seed}))
    at = open_page()
    at.session_state["lr_export_open"] = True  # the export is built once opened
    click_release(at, "lr_release")
    mse = at.main.table[-1].value.loc["response_a"]
    script = scripts[-1].replace("RELEASE_SEED = None", f"RELEASE_SEED = {seed}")
    assert "import streamlit" not in script and "from ui" not in script
    path = tmp_path / "scenario.py"
    path.write_text(script, encoding="utf-8")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                         cwd=tmp_path, env=dict(os.environ, PYTHONPATH=root), timeout=300)
    assert out.returncode == 0, out.stderr
    printed = {line.split(":", 1)[0]: line.split(":", 1)[1].strip()
               for line in out.stdout.splitlines() if ":" in line}
    assert printed["label"] == ledger(at)[-1]["label"]
    assert float(printed["private MSE"]) == pytest.approx(
        mse["dpcore private geodesic regression"], rel=1e-12)
    assert float(printed["least-squares MSE"]) == pytest.approx(
        mse["Non-private least squares"], rel=1e-12)
    assert len(json.loads(printed["private slope"])) == 1
    notebook = json.loads(export.notebook_from_script(script))
    assert "private_geodesic_regression(" in "".join(c["source"] for c in notebook["cells"])


# --------------------------------------------------------------------------- accuracy
def predicted_numbers(at):
    """The (median, 95%) predicted before release, read from the note under ε."""
    notes = [i.value for i in at.info if i.value.startswith("**Predicted error before")]
    assert len(notes) == 1, [i.value for i in at.info]
    median, q95 = (float(v) for v in re.findall(r"\*\*([-+0-9.e]+|nan|inf)\*\*", notes[0])[:2])
    return median, q95


def test_predicted_error_is_shown_under_epsilon_and_follows_it():
    """Issue 15 §1: before any release the page states the median and 95% radius of the
    excess mean squared error the button's release would have; they change with ε, are
    finite, and the smallest ε for a target error is offered. Nothing is spent."""
    at = open_page()
    first = predicted_numbers(at)
    assert all(np.isfinite(first)) and 0 < first[0] < first[1]
    at.select_slider(key="lr_eps").set_value(0.5).run()
    second = predicted_numbers(at)
    assert all(np.isfinite(second)) and second[0] > first[0] and second[1] > first[1]
    assert not any(md.value.startswith("The smallest ε") for md in at.markdown)  # on demand
    # its section is built only once opened (issue 29), with no target typed yet
    assert not [w for w in at.number_input if w.key == "lr_target"]
    at.session_state["lr_smallest_open"] = True
    at.run()
    assert at.number_input(key="lr_target").value is None
    assert not any(md.value.startswith("The smallest ε") for md in at.markdown)
    # the inverse of the prediction at ε = 2 (shown to 3 digits) is ε = 2 (to that precision)
    at.number_input(key="lr_target").set_value(first[0]).run()
    smallest = [md.value for md in at.markdown if md.value.startswith("The smallest ε")]
    assert 1.98 <= float(re.search(r"\*\*ε = ([0-9.]+)\*\*", smallest[0]).group(1)) <= 2.02
    text = " ".join(i.value for i in at.info) + " ".join(md.value for md in at.markdown)
    assert "nan" not in text.lower().split() and "inf" not in text.lower().split()
    assert ledger(at) == []
    # after a release, the observed excess is set beside the prediction
    click_release(at, "lr_release")
    assert any("predicted before the release: median" in c.value for c in at.caption)
    # paper mode: bounds from the data, so no prediction
    at.radio(key="lr_mode").set_value("paper").run()
    assert any(i.value.startswith("No prediction before release in paper mode")
               for i in at.info)
