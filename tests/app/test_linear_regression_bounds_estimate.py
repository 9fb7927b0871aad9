"""AppTest tests of "Estimate privately" on the Linear regression page (issue 14, point 2):
an uploaded file's ranges estimated under DP with a stated ε_b, through the same confirmation,
session cap and ledger as a release; the estimate fills the bounds fields and the release
states it in its assumptions; the total is ε_b + ε."""

from __future__ import annotations

import numpy as np
import pytest

from .pages import click_release, open_app_page
from .test_linear_regression_page import data_warnings, ledger, upload

TIMEOUT = 180
ESTIMATES = "lr_bounds_estimates"


def csv_bytes(n=3000, seed=1):
    """'age' (units known from the name: [0, 120]) and 'height' (no known units)."""
    rng = np.random.default_rng(seed)
    age = rng.uniform(20, 80, n)
    lines = ["age,height"]
    lines += [f"{a:.2f},{150 + 0.3 * a + rng.normal(0, 5):.2f}" for a in age]
    return ("\n".join(lines) + "\n").encode()


def open_upload():
    at = open_app_page("linear_regression.py", timeout=TIMEOUT)
    upload(at, csv_bytes())
    assert not at.exception and not at.error, [e.value for e in at.error]
    # "Estimate privately" is built only once opened (issue 15: the page's first plot).
    assert not any(w.key and w.key.startswith("lr_eps_b") for w in at.number_input)
    at.session_state["lr_estimate_open"] = True
    at.run()
    return at


def widget(elements, prefix):
    found = [w for w in elements if w.key and w.key.startswith(prefix)]
    assert len(found) == 1, [w.key for w in elements]
    return found[0]


def field(at, label):
    return [n for n in at.number_input if n.label == label][0].value


def test_upload_estimate_then_release():
    at = open_upload()
    assert data_warnings(at)  # before the estimate the fields hold the data's range
    # the enclosing intervals come from units or a wide default, never from the data
    (table,) = [d.value for d in at.main.dataframe if "from" in d.value.columns]
    assert table[["column", "lower", "upper"]].values.tolist() == [
        ["age", 0.0, 120.0], ["height", -1e6, 1e6]]
    button = at.button(key="lr_bounds_estimate")
    assert button.disabled  # 'height' has no known units: its wide interval must be confirmed
    box = widget(at.checkbox, "lr_wide_ok")
    assert "'height'" in box.label and "-1,000,000, 1,000,000" in box.label
    box.check().run()
    widget(at.number_input, "lr_eps_b").set_value(2.0).run()
    assert any("ε_b + ε = 2 + 2 = 4" in c.value for c in at.caption)  # said at the control
    assert any(md.value.startswith("**Cost of this release: ε = 2.**")
               and "the bounds estimate only" in md.value for md in at.markdown)
    click_release(at, "lr_bounds_estimate")
    assert not at.error, [e.value for e in at.error]

    entries = ledger(at)
    assert len(entries) == 1
    est = entries[0]
    assert est["page"] == "Linear regression: bounds estimate"
    assert est["epsilon"] == pytest.approx(2.0) and est["delta"] == 0.0 and est["rows"] == 1
    assert est["guarantee"] == "private" and est["mechanism"] == "exponential_quantile"
    assert est["note"].startswith("bounds estimate of 'age', 'height'")
    assert "ε_b = 2" in est["note"] and "1 row(s) per person" in est["note"]

    # the estimate fills the fields, inside the enclosing intervals
    (stored,) = at.session_state[ESTIMATES].values()
    lo, hi = stored["ranges"]["age"]
    assert 0.0 <= lo < hi <= 120.0
    assert (field(at, "Covariate lower bound"), field(at, "Covariate upper bound")) == (lo, hi)
    assert any("hold the ranges estimated under DP with ε_b = 2" in c.value for c in at.caption)
    assert not data_warnings(at)  # every field now holds a private estimate

    # the release: both entries, the total ε_b + ε, the assumption stated
    assert any("The session's total becomes ε = 4" in md.value for md in at.markdown)
    click_release(at, "lr_release")
    assert not at.error, [e.value for e in at.error]
    entries = ledger(at)
    assert [e["page"] for e in entries] == ["Linear regression: bounds estimate",
                                            "Linear regression"]
    assert sum(e["epsilon"] for e in entries) == pytest.approx(4.0)
    assert any(md.value.startswith("**Total:** ε = 4,") for md in at.sidebar.markdown)
    rel = at.session_state["lr_last_release"]["release"]
    assert rel.private and rel.label == "private" and entries[-1]["guarantee"] == "private"
    assert all(a.get("source") != "data" for a in rel.assumptions.values())
    note = rel.assumptions["covariate_range"]["note"]
    assert note.startswith("estimated under DP with ε_b = 2")
    assert "ε_b + ε by sequential composition" in note
    assert tuple(rel.assumptions["covariate_range"]["value"]) == (lo, hi)
    assert rel.assumptions["tau_m"]["note"].startswith("the response box of 'height' estimated")
    assert any("estimated under DP with ε_b = 2" in md.value for md in at.markdown)
    at.run()
    assert len(ledger(at)) == 2  # a rerun spends nothing


def test_cap_refuses_an_estimate_above_it():
    at = open_upload()
    at.sidebar.number_input(key="ledger_cap").set_value(0.1).run()
    widget(at.checkbox, "lr_wide_ok").check().run()
    # the default ε_b is 10% of ε = 2: 0.2, above the cap
    assert widget(at.number_input, "lr_eps_b").value == pytest.approx(0.2)
    refusals = [e.value for e in at.error if "above the cap" in e.value]
    assert refusals and "ε = 0.2" in refusals[0]
    assert at.button(key="lr_bounds_estimate").disabled
    assert ledger(at) == []
    # within the cap it goes through, and the cap then counts it
    widget(at.number_input, "lr_eps_b").set_value(0.05).run()
    assert not at.button(key="lr_bounds_estimate").disabled
    click_release(at, "lr_bounds_estimate")
    assert [e["epsilon"] for e in ledger(at)] == [pytest.approx(0.05)]
    widget(at.number_input, "lr_eps_b").set_value(0.06).run()
    assert at.button(key="lr_bounds_estimate").disabled  # 0.05 + 0.06 > 0.1
    assert any("0.05 of the budget is left" in e.value for e in at.error)


def test_estimate_counts_per_person():
    """The entry keeps the rows per person in effect when it is made (group privacy)."""
    at = open_upload()
    at.sidebar.number_input(key="rows_per_person").set_value(3).run()
    widget(at.checkbox, "lr_wide_ok").check().run()
    assert any("Cost of this release: ε = 0.6 per person (3 rows each)" in md.value
               and "the bounds estimate only" in md.value for md in at.markdown)
    click_release(at, "lr_bounds_estimate")
    (entry,) = ledger(at)
    assert entry["rows"] == 3 and "3 row(s) per person" in entry["note"]
    assert entry["epsilon"] == pytest.approx(0.2)


def test_known_units_need_no_confirmation_and_paper_mode_has_no_estimate():
    at = open_upload()
    [c for c in at.checkbox if c.key.startswith("lr_est_col_") and c.key.endswith("_height")
     ][0].uncheck().run()  # estimate 'age' only
    assert not [c for c in at.checkbox if c.key.startswith("lr_wide_ok")]
    assert not at.button(key="lr_bounds_estimate").disabled
    at.radio(key="lr_mode").set_value("paper").run()
    assert not at.exception
    assert "lr_bounds_estimate" not in [b.key for b in at.button]


def test_a_partial_estimate_leaves_the_other_fields_from_the_data():
    """Estimating 'age' only: 'height' (and τ, which follows the box) still hold the data's
    range, so the release is labelled NOT PRIVATE (bounds from the data), with the estimate's
    note on the covariate and the starting-value note on the box."""
    at = open_upload()
    [c for c in at.checkbox if c.key.startswith("lr_est_col_") and c.key.endswith("_height")
     ][0].uncheck().run()
    click_release(at, "lr_bounds_estimate")
    (warning,) = data_warnings(at)
    assert "'height'" in warning and "covariate" not in warning
    click_release(at, "lr_release")
    est, rel_entry = ledger(at)
    assert est["guarantee"] == "private"
    assert rel_entry["label"] == "NOT PRIVATE (bounds from the data)"
    rel = at.session_state["lr_last_release"]["release"]
    assert rel.assumptions["covariate_range"]["source"] == "public"
    assert rel.assumptions["covariate_range"]["note"].startswith("estimated under DP")
    assert rel.assumptions["tau_m"]["source"] == rel.assumptions["tau"]["source"] == "data"
    assert rel.assumptions["tau_m"]["note"].endswith("not replaced")


def test_estimate_settings_survive_closing_the_section():
    """"Estimate privately" is built only while open (ui.session.lazy_expander); what the user
    set there is kept while it is closed."""
    at = open_upload()
    widget(at.number_input, "lr_eps_b").set_value(0.7).run()
    widget(at.select_slider, "lr_trim").set_value(5.0).run()
    [c for c in at.checkbox if c.key.startswith("lr_est_col_") and c.key.endswith("_age")][
        0].uncheck().run()
    at.session_state["lr_estimate_open"] = False
    at.run()
    assert not any(w.key and w.key.startswith("lr_eps_b") for w in at.number_input)
    at.run()  # a second run without the widgets: Streamlit would drop their values here
    at.session_state["lr_estimate_open"] = True
    at.run()
    assert not at.exception, at.exception
    assert widget(at.number_input, "lr_eps_b").value == pytest.approx(0.7)
    assert widget(at.select_slider, "lr_trim").value == 5.0
    age = [c for c in at.checkbox if c.key.startswith("lr_est_col_") and c.key.endswith("_age")]
    assert len(age) == 1 and age[0].value is False


def test_typed_enclosing_intervals_survive_closing_the_section():
    """Closing "Estimate privately" drops its table editor's edits (a widget not drawn); the
    intervals typed there are kept and the table drawn again starts from them."""
    at = open_upload()
    (kept_key,) = [k for k in at.session_state.keys() if str(k).startswith("lr_enclosing_kept_")]
    assert at.session_state[kept_key] == {}  # nothing typed yet
    at.session_state["lr_estimate_open"] = False
    at.run()
    at.run()  # a second run without the editor: Streamlit drops its edits here
    # What the editor's last run kept had the user typed 'height' in [100, 250]:
    at.session_state[kept_key] = {"height": (100.0, 250.0)}
    at.session_state["lr_estimate_open"] = True
    at.run()
    assert not at.exception, at.exception
    (table,) = [d.value for d in at.main.dataframe if "from" in d.value.columns]
    assert table[["column", "lower", "upper"]].values.tolist() == [
        ["age", 0.0, 120.0], ["height", 100.0, 250.0]]
    assert table["from"].tolist()[1] == "your entry"
    assert not [c for c in at.checkbox if c.key and c.key.startswith("lr_wide_ok")]
    assert at.session_state[kept_key] == {"height": (100.0, 250.0)}
