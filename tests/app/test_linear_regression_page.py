"""AppTest tests of the "Linear regression" page, driven through app.py as a user would.

Uploads: streamlit 1.67's ``AppTest`` supports ``st.file_uploader``
(``FileUploader.set_value((name, bytes, mime))``), so uploads are tested end to end. The parser
behind the page, :func:`ui.logic.linear_regression.parse_numeric_csv` (a thin call to the
library's reader, :func:`dpcore.data.scan_table`), takes the raw bytes and is tested in
tests/ui/logic and tests/data.
"""

import importlib.util
import re

import numpy as np
import pytest

from .pages import click_release, open_app_page

TIMEOUT = 180
LEDGER = "privacy_ledger"
HAS_DIFFPRIVLIB = importlib.util.find_spec("diffprivlib") is not None

GOOD_CSV = (
    "id;temperature;yield;quality;note\n"
    "1;10.5;3,2;7;ok\n"
    "2;12.5;4,1;8;ok\n"
    "3;15,0;5,3;6;late\n"  # semicolon-separated, decimal commas are numbers
)


def open_page(**query):
    return open_app_page("linear_regression.py", timeout=TIMEOUT, **query)


def ledger(at):
    return at.session_state[LEDGER] if LEDGER in at.session_state else []


def upload(at, data, name="table.csv"):
    at.radio(key="lr_src").set_value("upload").run()
    at.file_uploader(key="lr_upload").set_value((name, data, "text/csv")).run()
    return at


def number(at, label):
    return [n for n in at.number_input if n.label == label][0]


def box_fields(at, name):
    """The response box's two fields of response ``name`` (lower, upper)."""
    return number(at, f"'{name}': lower bound"), number(at, f"'{name}': upper bound")


def type_box(at, name, lo, hi):
    """Type public bounds of response ``name`` into the response box, as a user would."""
    box_fields(at, name)[0].set_value(lo).run()
    box_fields(at, name)[1].set_value(hi).run()
    return at


def type_covariate(at, lo, hi):
    number(at, "Covariate lower bound").set_value(lo).run()
    number(at, "Covariate upper bound").set_value(hi).run()
    return at


def data_warnings(at):
    return [w.value for w in at.warning if w.value.startswith("**Bounds from the data:**")]


def csv_bytes(n=40, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 5, n)
    lines = ["label,age,height,weight"]
    for i, xi in enumerate(x):
        lines.append(f"p{i},{xi:.4f},{100 + 10 * xi + rng.normal():.4f},"
                     f"{20 + 3 * xi + rng.normal():.4f}")
    return ("\n".join(lines) + "\n").encode()


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


# --------------------------------------------------------------------------- uploads
def test_uploaded_csv_columns_can_be_chosen():
    at = open_page()
    upload(at, csv_bytes())
    assert not at.exception, at.exception
    assert not at.error
    covariate = [s for s in at.selectbox if s.label.startswith("Covariate")][0]
    assert covariate.options == ["age", "height", "weight"]
    assert covariate.value == "age"
    responses = [m for m in at.multiselect if m.label.startswith("Response")][0]
    assert responses.value == ["height"]
    responses.set_value(["weight"]).run()
    assert not at.exception
    assert list(at.main.table[-1].value.index) == ["weight", "all responses"]
    assert "Download data" not in [b.label for b in at.get("download_button")]
    click_release(at, "lr_release")
    assert not at.exception, at.exception
    assert ledger(at)


@pytest.mark.parametrize(
    "content, fragments",
    [
        # (x is not 1, 2, 3: a row counter is an identifier, never a default covariate)
        (b"x,y\n1.5,2\n2,abc\n3,4\n", ["Row 3", "'y'", "abc"]),
        # An empty cell drops its row (with a count); too few rows are left here.
        (b"x,y\n1.5,2\n2,\n3,4\n", ["at least 3 rows", "2 are usable"]),
        (b"x,y\n1,2\n2,3,4\n", ["Row 3", "3 values"]),
        (b"x,x\n1,2\n", ["appears 2 times"]),
        (b"name,city\nann,rome\n", ["No column holds numbers"]),
        (b"", ["empty"]),
        (b"x,y\n1,2\n\xff\xfe\xfa,3\n", ["Row 3", "UTF-8"]),
        (b"x,y\n1,2\n1,3\n1,4\n", ["constant"]),
    ],
)
def test_bad_csv_shows_error_without_exception(content, fragments):
    at = open_page()
    upload(at, content)
    assert not at.exception, at.exception
    assert at.error, "a bad file must produce st.error"
    message = at.error[0].value
    for fragment in fragments:
        assert fragment in message
    assert ledger(at) == []


def test_decimal_comma_columns_are_offered_as_numbers():
    """Regression: a ';'-separated file with decimal commas was read by the page's own parser,
    which took '3,2' for text and silently left 'yield' out. The library reader reads it."""
    at = open_page()
    upload(at, GOOD_CSV.encode("utf-8-sig"))
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    covariate = [s for s in at.selectbox if s.label.startswith("Covariate")][0]
    # 'id' (1, 2, 3) is offered, marked, and never the default.
    assert covariate.options == ["id (identifier?)", "temperature", "yield", "quality"]
    assert covariate.value == "temperature"
    assert any("'note'" in c.value for c in at.caption)  # the text column is ignored
    covariate.set_value("yield").run()
    responses = [m for m in at.multiselect if m.label.startswith("Response")][0]
    responses.set_value(["temperature"]).run()
    assert not at.exception and not at.error
    lo = [n for n in at.number_input if n.label == "Covariate lower bound"][0].value
    hi = [n for n in at.number_input if n.label == "Covariate upper bound"][0].value
    assert lo <= 3.2 and 5.3 <= hi < 10  # read as 3.2 .. 5.3, not 32 .. 53


def test_covariate_bounds_follow_the_chosen_column():
    """Issue 14 §3: choosing another covariate starts its public bounds from that column's
    own range (they used to keep the first column's, silently clipping the new one)."""
    at = open_page()
    upload(at, b"a,b,c\n" + b"".join(f"{i / 2},{100 + 10 * i},{i % 3}\n".encode()
                                      for i in range(12)))
    assert not at.exception, at.exception

    def cov_bounds():
        lo = [n for n in at.number_input if n.label == "Covariate lower bound"][0].value
        hi = [n for n in at.number_input if n.label == "Covariate upper bound"][0].value
        return lo, hi

    lo_a, hi_a = cov_bounds()
    assert lo_a <= 0 and 5.5 <= hi_a < 100
    [s for s in at.selectbox if s.label.startswith("Covariate")][0].set_value("b").run()
    assert not at.exception, at.exception
    lo_b, hi_b = cov_bounds()
    assert lo_b <= 100 and hi_b >= 210 and (lo_b, hi_b) != (lo_a, hi_a)


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


# --------------------------------------------------------------------------- person column
def grouped_csv(n=30):
    """A small file whose column 'subject' gives each person at most 3 rows."""
    rng = np.random.default_rng(4)
    subject = np.repeat(np.arange(n), 3)[:n]
    lines = ["subject,dose,response"]
    for i in range(n):
        dose = rng.uniform(0, 10)
        lines.append(f"s{subject[i]},{dose:.3f},{2 + 0.5 * dose + rng.normal():.3f}")
    return ("\n".join(lines) + "\n").encode()


def test_person_column_applies_to_this_page_only():
    """Regression (seen in a session): the rows per person set by this page's person column
    stayed in effect on other pages, with the sidebar field unlocked there. It is scoped to
    this page: other pages use the value the user typed in the sidebar, before and after."""
    at = open_page()
    at.number_input(key="rows_per_person").set_value(2).run()  # the user's own setting
    upload(at, grouped_csv())
    [s for s in at.selectbox if s.label.startswith("Person")][0].set_value("subject").run()
    assert not at.exception and not at.error
    field = at.number_input(key="rows_per_person")
    assert field.disabled and field.value == 2
    assert any("This page counts 3 rows per person" in c.value for c in at.sidebar.caption)
    at.session_state["lr_estimate_open"] = True  # "Estimate privately": its cost line
    at.run()
    assert any("per person (3 rows each)" in md.value for md in at.markdown)
    # another page: the sidebar's value, unlocked, no note
    at.switch_page("pages/frechet_mean.py").run()
    assert not at.exception, at.exception
    field = at.number_input(key="rows_per_person")
    assert not field.disabled and field.value == 2
    assert not any("rows per person" in c.value for c in at.sidebar.caption)
    costs = [md.value for md in at.markdown if "Cost of this release" in md.value]
    assert costs and all("per person (2 rows each)" in c for c in costs)
    # the user changes it there; it stays theirs on the way back
    at.number_input(key="rows_per_person").set_value(1).run()
    assert not any("per person" in md.value for md in at.markdown)
    at.switch_page("pages/linear_regression.py").run()
    assert not at.exception, at.exception
    # Streamlit forgets an upload when its page is left: until the file and its person column
    # are given again, nothing on this page is counted per person either
    assert not at.number_input(key="rows_per_person").disabled
    upload(at, grouped_csv())
    [s for s in at.selectbox if s.label.startswith("Person")][0].set_value("subject").run()
    assert at.number_input(key="rows_per_person").disabled
    at.session_state["lr_estimate_open"] = True
    at.run()
    assert any("per person (3 rows each)" in md.value for md in at.markdown)
    at.switch_page("pages/frechet_mean.py").run()
    field = at.number_input(key="rows_per_person")
    assert not field.disabled and field.value == 1


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


# ------------------------------------------------------ bounds still holding the data's range
DATA_LABEL = "NOT PRIVATE (bounds from the data)"


def last_release(at):
    return at.session_state["lr_last_release"]["release"]


def test_untouched_upload_bounds_give_a_not_private_release():
    """An upload's fields start from the data's range rounded outward. Kept as they are, the
    page warns next to them, the cost line states the label, and the release is labelled NOT
    PRIVATE (bounds from the data): listed in the ledger apart, not added to the total."""
    at = open_page()
    upload(at, csv_bytes())
    (warning,) = data_warnings(at)
    for fragment in ("covariate range ('age')", "response box ('height')", "τ",
                     DATA_LABEL, "Estimate privately"):
        assert fragment in warning, fragment
    costs = [md.value for md in at.markdown if "will be labelled" in md.value]
    assert costs == [f"This release will be labelled **{DATA_LABEL}**: it is listed in the "
                     "ledger apart (not private) and adds nothing to the total."]
    assert any("NOT public" in md.value and "Covariate range" in md.value for md in at.markdown)
    # the prediction from these bounds is not called public, and they stay in this session's
    # memory (not the cache shared between sessions)
    assert any("not a public statement" in i.value for i in at.info)
    assert any(k[0] == "prediction" for k in at.session_state["lr_predictions"])
    if HAS_DIFFPRIVLIB:  # the comparison gets the same bounds: not private either
        at.checkbox(key="lr_dpl").check().run()
    click_release(at, "lr_release")
    assert not at.error, [e.value for e in at.error]
    entries = ledger(at)
    assert len(entries) == (2 if HAS_DIFFPRIVLIB else 1)
    assert all(e["label"] == DATA_LABEL and e["guarantee"] == "not private" for e in entries)
    assert entries[0]["mechanism"] == "kng_joint" and entries[0]["epsilon"] == pytest.approx(2)
    rel = last_release(at)
    assert not rel.private and rel.label == DATA_LABEL
    for name in ("covariate_range", "tau", "tau_m", "center"):
        assert rel.assumptions[name]["source"] == "data", name
        assert rel.assumptions[name]["note"].endswith("not replaced"), name
    assert any(w.value == f"Label: **{DATA_LABEL}**" for w in at.warning)
    # the ledger: nothing added to the total, the release counted apart
    assert any(md.value.startswith("**Total:** ε = 0,") for md in at.sidebar.markdown)
    assert any(w.value.startswith(f"{len(entries)} release(s) not private")
               for w in at.sidebar.warning)


def test_typed_public_bounds_give_a_private_release():
    """Replacing every field by public values (τ follows the box until typed) removes the
    warning; the release is private and counted in the total. A field left at the data's
    range keeps the release NOT PRIVATE."""
    at = open_page()
    upload(at, csv_bytes())
    type_covariate(at, 0.0, 10.0)
    (warning,) = data_warnings(at)  # the box and τ still hold the data's range
    assert "covariate" not in warning and "'height'" in warning and "τ" in warning
    assert any(f"will be labelled **{DATA_LABEL}**" in md.value for md in at.markdown)
    type_box(at, "height", 50.0, 250.0)
    assert not data_warnings(at)
    assert number(at, "Residual bound τ").value == 100.0  # it followed the public box
    assert any(md.value.startswith("**Cost of this release: ε = 2.**")
               and md.value.endswith("Label: **private**.") for md in at.markdown)
    click_release(at, "lr_release")
    entry = ledger(at)[-1]
    assert entry["guarantee"] == "private" and entry["label"] == "private"
    assert entry["delta"] == 0.0
    rel = last_release(at)
    assert rel.private and all(a.get("source") != "data" for a in rel.assumptions.values())
    assert any(md.value.startswith("**Total:** ε = 2,") for md in at.sidebar.markdown)
    # a τ typed by the user is theirs: it stays when the box changes
    number(at, "Residual bound τ").set_value(40.0).run()
    type_box(at, "height", 0.0, 300.0)
    assert number(at, "Residual bound τ").value == 40.0 and not data_warnings(at)


def test_a_typed_tau_is_public_while_the_box_holds_the_data():
    at = open_page()
    upload(at, csv_bytes())
    type_covariate(at, 0.0, 10.0)
    number(at, "Residual bound τ").set_value(30.0).run()
    (warning,) = data_warnings(at)
    assert "'height'" in warning and "τ" not in warning
    click_release(at, "lr_release")
    rel = last_release(at)
    assert rel.label == DATA_LABEL
    assert rel.assumptions["tau"]["source"] == "public"
    assert rel.assumptions["tau_m"]["source"] == "data"


def test_red_wine_and_example_bounds_are_public_from_the_start():
    """The preset's bounds (domain knowledge) and the generated example's (its generator's
    design, ui.logic.linear_regression.EXAMPLE_DESIGN) are public: no warning, the cost line
    says private, the fields hold them."""
    from ui.logic.linear_regression import EXAMPLE_DESIGN

    at = open_page()
    assert not data_warnings(at)
    assert any("example generator's design" in c.value for c in at.caption)
    lo, hi = EXAMPLE_DESIGN["dose"]
    assert (number(at, "Covariate lower bound").value,
            number(at, "Covariate upper bound").value) == (lo, hi)
    assert tuple(f.value for f in box_fields(at, "response_a")) == EXAMPLE_DESIGN["response_a"]
    assert not at.main.dataframe  # no data grid before the first plot (issue 15)
    assert any(md.value.endswith("Label: **private**.") for md in at.markdown)
    at.radio(key="lr_src").set_value("wine").run()
    assert not data_warnings(at)
    assert any(md.value.endswith("Label: **private**.") for md in at.markdown)
    click_release(at, "lr_release")
    assert ledger(at)[-1]["label"] == "private" and last_release(at).private
