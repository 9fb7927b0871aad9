"""The progress bar's wording and time left (ui/progress.py), without a browser."""

import pytest

from ui.progress import format_seconds, time_left


@pytest.mark.parametrize("seconds, text", [(0, "0 s"), (42.4, "42 s"), (185, "3 min 05 s"),
                                           (3720, "1 h 02 min")])
def test_format_seconds(seconds, text):
    assert format_seconds(seconds) == text


def test_time_left_uses_the_rate_once_known_and_the_estimate_before():
    assert time_left(0.5, 10.0) == pytest.approx(10.0)
    assert time_left(0.01, 1.0, estimate=30.0) == pytest.approx(29.0)
    assert time_left(0.01, 1.0) is None
    assert time_left(1.0, 5.0, estimate=30.0) == 0.0


def _cancel_script():
    import streamlit as st

    from ui.progress import RunProgress, _mark_cancelled, cancelled_notice

    phase = st.session_state.get("phase")
    if phase == "late_click" or phase == "click_during_run":
        _mark_cancelled("k")  # what the Cancel button's callback does when its click arrives
    cancelled_notice("k", "The run")
    if phase == "run":
        with RunProgress("Working", key="k") as bar:
            bar(1.0)
        st.session_state["result"] = "kept"
    elif phase == "start_run":
        RunProgress("Working", key="k")  # a run that has begun and not finished
    st.write(st.session_state.get("result", "none"))


@pytest.mark.parametrize("before, cancelled", [("run", False), ("start_run", True)])
def test_a_cancel_that_arrives_after_the_run_finished_cancels_nothing(before, cancelled):
    """A click on Cancel that reaches the server once the run has finished (its result kept)
    shows no "cancelled" notice beside that result; one that arrives while the run is going
    does."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_cancel_script, default_timeout=30)
    at.session_state["phase"] = before
    at.run()
    assert not at.exception
    at.session_state["phase"] = "late_click" if before == "run" else "click_during_run"
    at.run()
    assert not at.exception
    notice = [i.value for i in at.info if "was cancelled" in i.value]
    assert bool(notice) is cancelled
    assert (at.markdown[-1].value == "kept") is (before == "run")
