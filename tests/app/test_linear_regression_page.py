"""AppTest tests of the "Linear regression" page, driven through app.py as a user would.

Uploads: streamlit 1.67's ``AppTest`` supports ``st.file_uploader``
(``FileUploader.set_value((name, bytes, mime))``), so uploads are tested end to end. The parser
behind the page, :func:`ui.logic.linear_regression.parse_numeric_csv` (a thin call to the
library's reader, :func:`dpcore.data.scan_table`), takes the raw bytes and is tested in
tests/ui/logic and tests/data.
"""

import importlib.util

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
    mse = at.main.dataframe[-1].value
    assert list(mse.columns) == ["Non-private least squares"]
    # One response by default: its line in R¹ is drawn exactly (private, δ = 0).
    assert list(mse.index) == ["response_a", "all responses"]
    assert ledger(at) == []
    assert [b.label for b in at.main.get("download_button")] == ["Download data"]
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
    mse = at.main.dataframe[-1].value
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
    assert list(at.main.dataframe[-1].value.index) == ["weight", "all responses"]
    assert "Download data" not in [b.label for b in at.get("download_button")]
    click_release(at, "lr_release")
    assert not at.exception, at.exception
    assert ledger(at)


@pytest.mark.parametrize(
    "content, fragments",
    [
        (b"x,y\n1,2\n2,abc\n3,4\n", ["Row 3", "'y'", "abc"]),
        (b"x,y\n1,2\n2,\n3,4\n", ["Row 3", "'y'", "empty"]),
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
    assert covariate.options == ["id", "temperature", "yield", "quality"]
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
    upload(at, b"a,b,c\n" + b"".join(f"{i},{100 + 10 * i},{i % 3}\n".encode()
                                      for i in range(12)))
    assert not at.exception, at.exception

    def cov_bounds():
        lo = [n for n in at.number_input if n.label == "Covariate lower bound"][0].value
        hi = [n for n in at.number_input if n.label == "Covariate upper bound"][0].value
        return lo, hi

    lo_a, hi_a = cov_bounds()
    assert lo_a <= 0 and 11 <= hi_a < 100
    [s for s in at.selectbox if s.label.startswith("Covariate")][0].set_value("b").run()
    assert not at.exception, at.exception
    lo_b, hi_b = cov_bounds()
    assert lo_b <= 100 and hi_b >= 210 and (lo_b, hi_b) != (lo_a, hi_a)


def test_several_responses_go_to_mcmc_only_by_choice():
    """Three responses (R³, n = 100, ε = 2) are beyond the exact sampler's reach: the page says
    so and the release waits for the explicit MCMC opt-in; its label says approximately
    private."""
    at = open_page()
    responses = [m for m in at.multiselect if m.label.startswith("Response")][0]
    responses.set_value(["response_a", "response_b", "response_c"]).run()
    assert any("MCMC" in w.value for w in at.warning)
    assert at.button(key="lr_release").disabled
    click_release(at, "lr_release")
    assert ledger(at)[0]["label"] == "approximately private (MCMC; δ not certified)"
