"""AppTest tests of the "Linear regression" page while its bounds still hold the data's range:
an upload's fields start from the data's range rounded outward, and kept as they are the page
warns and the release is labelled NOT PRIVATE (bounds from the data), apart in the ledger;
typed public bounds give a private release. The preset's and the generated example's bounds
are public from the start."""

import importlib.util

import pytest

from .pages import click_release, open_app_page
from .pages import lr_box_fields as box_fields
from .pages import lr_csv_bytes as csv_bytes
from .pages import lr_data_warnings as data_warnings
from .pages import lr_ledger as ledger
from .pages import lr_number as number
from .pages import lr_type_box as type_box
from .pages import lr_type_covariate as type_covariate
from .pages import lr_upload as upload

TIMEOUT = 180
HAS_DIFFPRIVLIB = importlib.util.find_spec("diffprivlib") is not None


def open_page(**query):
    return open_app_page("linear_regression.py", timeout=TIMEOUT, **query)


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
