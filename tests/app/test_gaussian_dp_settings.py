"""The Gaussian DP page's settings on the page-settings idiom (``ui.url_state.PageSettings``):
read from a shared URL (junk falls back, out-of-range values are clamped), written back to it,
and kept across a page switch."""

import pytest

from dpcore.settings import get_limits
from ui.caps import CAPS

from .pages import open_app_page

TIMEOUT = 180


def open_page(**query):
    return open_app_page("gaussian_dp.py", timeout=TIMEOUT, **query)


def test_junk_url_values_fall_back_to_the_defaults():
    at = open_page(gd_mode="tau", gd_sigma="abc", gd_delta="", gd_rel_n="many",
                   gd_mc_n="7", gd_sim_n="11", gd_conv_k="1.5", gd_target="x")
    assert not at.exception, at.exception
    assert at.radio(key="gd_mode").value == "sigma"
    assert at.slider(key="gd_sigma").value == 1.0
    assert at.slider(key="gd_delta").value == 1.0
    assert at.slider(key="gd_rel_n").value == 10
    assert at.number_input(key="gd_conv_k").value == 4
    assert at.number_input(key="gd_target").value == 10.0
    # closed expanders: their settings go back to the URL, at the defaults
    assert at.query_params["gd_mc_n"] == "500" and at.query_params["gd_sim_n"] == "10"
    assert at.query_params["gd_sigma"] == "1.0" and at.query_params["gd_mode"] == "sigma"


def test_out_of_range_url_values_are_clamped():
    at = open_page(gd_sigma="9", gd_delta="0.01", gd_rel_n="100000", gd_conv_eps="99",
                   gd_target="500", gd_sim_reps="5")
    assert not at.exception, at.exception
    assert at.slider(key="gd_sigma").value == 4.0
    assert at.slider(key="gd_delta").value == 0.05
    assert at.slider(key="gd_rel_n").value == CAPS["gd_max_n"]
    assert at.number_input(key="gd_conv_eps").value == 50.0
    assert at.number_input(key="gd_target").value == 179.0
    assert at.query_params["gd_sim_reps"] == "50"


def test_a_shared_target_mu_waits_for_its_mode():
    """Both the rate and the target µ are read from a link; the one not shown keeps its value
    for when the mode changes."""
    at = open_page(gd_mode="sigma", gd_sigma="0.5", gd_mu="2.5")
    assert at.slider(key="gd_sigma").value == 0.5
    at.radio(key="gd_mode").set_value("mu").run()
    assert at.slider(key="gd_mu").value == 2.5
    at.radio(key="gd_mode").set_value("sigma").run()
    assert at.slider(key="gd_sigma").value == 0.5


def test_settings_survive_a_page_switch():
    at = open_page()
    at.slider(key="gd_sigma").set_value(2.0)
    at.slider(key="gd_delta").set_value(0.5)
    at.number_input(key="gd_conv_k").set_value(9)
    at.slider(key="gd_rel_n").set_value(40)
    at.radio(key="gd_target_q").set_value("q95").run()
    at.session_state["gd_mc_open"] = True
    at.run()
    at.select_slider(key="gd_mc_n").set_value(200).run()
    assert not at.exception, at.exception
    at.switch_page("pages/sensitivity.py").run()
    assert not at.exception, at.exception
    at.switch_page("pages/gaussian_dp.py").run()
    assert not at.exception, at.exception
    assert at.slider(key="gd_sigma").value == 2.0
    assert at.slider(key="gd_delta").value == 0.5
    assert at.number_input(key="gd_conv_k").value == 9
    assert at.slider(key="gd_rel_n").value == 40
    assert at.radio(key="gd_target_q").value == "q95"
    assert at.query_params["gd_sigma"] == "2.0" and at.query_params["gd_mc_n"] == "200"
    at.session_state["gd_mc_open"] = True  # (the expander itself starts closed again)
    at.run()
    assert at.select_slider(key="gd_mc_n").value == 200


def test_more_samples_lower_the_repeats_to_the_library_limit():
    at = open_page()
    at.session_state["gd_mc_open"] = True
    at.run()
    at.slider(key="gd_mc_r").set_value(50).run()
    at.select_slider(key="gd_mc_n").set_value(5000).run()
    assert not at.exception, at.exception
    repeats = at.slider(key="gd_mc_r")
    assert repeats.value * 5000 <= get_limits().max_mc_samples
    assert repeats.value == repeats.max
    assert int(at.query_params["gd_mc_r"]) == repeats.value


@pytest.mark.parametrize("closed", [True, False])
def test_monte_carlo_settings_from_a_link(closed):
    at = open_page(gd_mc_n="200", gd_mc_r="7")
    if not closed:
        at.session_state["gd_mc_open"] = True
        at.run()
        assert at.select_slider(key="gd_mc_n").value == 200
        assert at.slider(key="gd_mc_r").value == 7
    assert (at.query_params["gd_mc_n"], at.query_params["gd_mc_r"]) == ("200", "7")
