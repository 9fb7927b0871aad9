"""AppTest tests of uploads on the "Linear regression" page (driven through app.py, as a user
would): the numeric columns offered, bad files as errors without an exception, decimal commas,
the covariate's bounds following the chosen column, and a person column that applies to this
page only."""

import numpy as np
import pytest

from .pages import click_release, open_app_page
from .pages import lr_csv_bytes as csv_bytes
from .pages import lr_ledger as ledger
from .pages import lr_upload as upload

TIMEOUT = 180


GOOD_CSV = (
    "id;temperature;yield;quality;note\n"
    "1;10.5;3,2;7;ok\n"
    "2;12.5;4,1;8;ok\n"
    "3;15,0;5,3;6;late\n"  # semicolon-separated, decimal commas are numbers
)


def open_page(**query):
    return open_app_page("linear_regression.py", timeout=TIMEOUT, **query)


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
