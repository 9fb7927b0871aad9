"""The Linear regression page on the shared release panel (:mod:`ui.release_panel`): dpcore's
release and the diffprivlib comparison on one confirmation, each costed and recorded from its
own request (:class:`ui.logic.linear_regression_baseline.DiffprivlibRequest`)."""

import importlib.util

import pytest

from ui.logic.linear_regression_baseline import DiffprivlibRequest

from .pages import click_release, open_app_page

TIMEOUT = 180
LEDGER = "privacy_ledger"

pytestmark = pytest.mark.skipif(importlib.util.find_spec("diffprivlib") is None,
                                reason="the comparison needs diffprivlib")


def open_with_comparison():
    at = open_app_page("linear_regression.py", timeout=TIMEOUT)
    at.checkbox(key="lr_dpl").check().run()
    assert not at.exception, at.exception
    return at


def cost_lines(at):
    return [md.value for md in at.markdown if "Cost of this release" in md.value]


def test_both_releases_are_costed_and_recorded_from_their_requests():
    at = open_with_comparison()
    (line,) = cost_lines(at)
    assert line.startswith("**Cost of this release: ε = 4.**")
    assert "2 releases on one confirmation, each recorded in the ledger" in line
    assert "dpcore's release ε = 2 (labelled private)" in line
    assert "diffprivlib's comparison ε = 2 (labelled private (diffprivlib))" in line
    assert any(c.value.startswith("Estimated work:") for c in at.caption)  # the panel's
    click_release(at, "lr_release")
    dpcore_entry, dpl_entry = at.session_state[LEDGER]
    assert dpcore_entry["mechanism"] == "kng_joint" and dpcore_entry["epsilon"] == 2.0
    event = DiffprivlibRequest(epsilon=2.0, covariate_range=(0.0, 1.0), lower=(0.0,),
                               upper=(1.0,)).event()
    assert dpl_entry["mechanism"] == DiffprivlibRequest.mechanism
    assert dpl_entry["note"] == DiffprivlibRequest.note
    for field in ("epsilon", "delta", "mu", "guarantee", "label"):
        assert dpl_entry[field] == getattr(event, field), field
    assert any(md.value.startswith("**Total:** ε = 4,") for md in at.sidebar.markdown)
    kept = at.session_state["lr_last_release"]
    assert set(kept) >= {"release", "dpcore", "diffprivlib", "warnings", "signature"}
    at.run()
    assert len(at.session_state[LEDGER]) == 2  # a rerun releases nothing


def test_the_cap_counts_both_releases():
    at = open_with_comparison()
    at.sidebar.number_input(key="ledger_cap").set_value(3.0).run()
    assert not cost_lines(at)
    assert any("above the cap" in e.value for e in at.error)
    assert at.button(key="lr_release").disabled
    at.checkbox(key="lr_dpl").uncheck().run()  # dpcore's release alone fits
    assert not at.button(key="lr_release").disabled
    click_release(at, "lr_release")
    assert [e["epsilon"] for e in at.session_state[LEDGER]] == [2.0]


def test_a_failed_comparison_leaves_dpcores_release_alone_in_the_ledger(monkeypatch):
    def broken(self, x, y):
        raise ImportError("scikit-learn is incompatible")

    monkeypatch.setattr(DiffprivlibRequest, "fit_lines", broken)
    at = open_with_comparison()
    click_release(at, "lr_release")
    (entry,) = at.session_state[LEDGER]
    assert entry["mechanism"] == "kng_joint"
    assert any("diffprivlib's comparison could not be made" in i.value
               and "scikit-learn is incompatible" in i.value for i in at.info)
    columns = at.main.table[-1].value.columns
    assert "dpcore private geodesic regression" in columns
    assert "diffprivlib LinearRegression" not in columns
