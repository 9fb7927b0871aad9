"""A setting drawn in a section built only while open (``ui.widgets.lazy_expander``) keeps the
user's value across a page switch, whether the section was open or closed when the page was
left, and whether the page visited in between uses ``PageSettings`` (Sensitivity) or not (Home).

The bug these pin: the page's first run (section closed) gave the widget its starting value
through ``st.session_state`` while the widget was not drawn, and Streamlit kept that value under
the key; the user's later edits lived under the widget's element id, which a page switch drops,
so the first run's value came back.
"""

import pytest

from .pages import gr_open_sampler, open_app_page

TIMEOUT = 180
AWAY = ["sensitivity.py", "home.py"]


def go_away_and_back(at, away, page):
    at.switch_page(f"pages/{away}").run()
    assert not at.exception, at.exception
    at.switch_page(f"pages/{page}").run()
    assert not at.exception, at.exception
    return at


@pytest.mark.parametrize("close_first", [False, True], ids=["left-open", "left-closed"])
@pytest.mark.parametrize("away", AWAY)
def test_geodesic_regression_sampler_setting_survives_a_page_switch(away, close_first):
    at = open_app_page("geodesic_regression.py", timeout=TIMEOUT)
    assert at.session_state["gr_chain"] == 300
    gr_open_sampler(at)
    at.number_input(key="gr_chain").set_value(400)
    at.checkbox(key="gr_fix_seed").check().run()
    assert not at.exception, at.exception
    if close_first:
        at.session_state["gr_sampler_open"] = False
        at.run()
        assert not any(w.key == "gr_chain" for w in at.number_input)
    go_away_and_back(at, away, "geodesic_regression.py")
    assert at.session_state["gr_chain"] == 400
    assert at.session_state["gr_fix_seed"] is True
    assert at.query_params["gr_chain"] == "400"
    gr_open_sampler(at)
    assert at.number_input(key="gr_chain").value == 400
    assert at.checkbox(key="gr_fix_seed").value is True
    # Twice: the value held after the first trip must be the live one too.
    at.number_input(key="gr_chain").set_value(450).run()
    go_away_and_back(at, away, "geodesic_regression.py")
    assert at.session_state["gr_chain"] == 450
    gr_open_sampler(at)
    assert at.number_input(key="gr_chain").value == 450


#: The Gaussian DP page's tab of its simulation (stateful tabs, key gd_explore).
SIM_TAB = "Gaussian vs Laplace at equal µ on S² (simulation)"


@pytest.mark.parametrize("away", AWAY)
def test_gaussian_dp_simulation_setting_survives_a_page_switch(away):
    at = open_app_page("gaussian_dp.py", timeout=TIMEOUT)
    assert at.session_state["gd_sim_reps"] == 200
    at.session_state["gd_explore"] = SIM_TAB  # the simulation's tab (built only while open)
    at.run()
    at.session_state["gd_sim_open"] = True
    at.run()
    at.slider(key="gd_sim_reps").set_value(300).run()
    assert not at.exception, at.exception
    go_away_and_back(at, away, "gaussian_dp.py")
    assert at.session_state["gd_sim_reps"] == 300
    assert at.query_params["gd_sim_reps"] == "300"
    at.session_state["gd_explore"] = SIM_TAB
    at.run()
    at.session_state["gd_sim_open"] = True
    at.run()
    assert at.slider(key="gd_sim_reps").value == 300


def test_a_link_value_is_read_on_the_first_run_only():
    """URL behaviour is unchanged: a link's value starts the lazily built widget; after a
    page switch the user's own value wins over the URL."""
    at = open_app_page("geodesic_regression.py", timeout=TIMEOUT, gr_chain="500")
    assert at.session_state["gr_chain"] == 500
    gr_open_sampler(at)
    at.number_input(key="gr_chain").set_value(350).run()
    go_away_and_back(at, "home.py", "geodesic_regression.py")
    assert at.session_state["gr_chain"] == 350
    gr_open_sampler(at)
    assert at.number_input(key="gr_chain").value == 350
