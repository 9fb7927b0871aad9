"""The Gaussian DP page sends its first chart (µ against σ) before its settings widgets
(issue 29: each input widget drawn before the chart delays it in the browser), and the chart,
drawn before the widgets, follows a change of them in the same rerun."""

import base64
import json

import numpy as np
import pytest

from dpcore.privacy import gdp_mu_circle

from .pages import open_app_page

TIMEOUT = 180
INPUTS = {"slider", "select_slider", "number_input", "radio", "checkbox", "selectbox",
          "multiselect", "button", "text_input", "file_uploader", "toggle"}


def current_point(at):
    """The "Current setting" marker (σ, µ) of the µ-against-σ chart."""
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    trace = next(t for t in spec["data"] if t.get("name") == "Current setting")

    def value(v):
        return (float(np.frombuffer(base64.b64decode(v["bdata"]), dtype=v["dtype"])[0])
                if isinstance(v, dict) else float(v[0]))
    return value(trace["x"]), value(trace["y"])


def test_the_chart_is_sent_before_any_input_widget(sent):
    at = open_app_page("gaussian_dp.py", timeout=TIMEOUT)
    sent.clear()
    at.run()
    assert not at.exception, at.exception
    types = [t for t, _ in sent]
    first = types.index("plotly_chart")
    assert sent[first][1].endswith("gd_mu_sigma")
    assert not INPUTS & set(types[:first]), types[:first]
    # ... and every widget of the left column is still drawn, with its value.
    assert at.radio(key="gd_mode").value == "sigma"
    assert at.slider(key="gd_delta").value == 1.0
    assert at.slider(key="gd_sigma").value == 1.0
    assert at.number_input(key="gd_target").value == 10.0


def test_a_changed_setting_reaches_the_chart_in_the_same_rerun():
    at = open_app_page("gaussian_dp.py", timeout=TIMEOUT)
    assert current_point(at) == pytest.approx((1.0, gdp_mu_circle(1.0, 1.0)), rel=1e-6)
    at.slider(key="gd_sigma").set_value(2.0)
    at.slider(key="gd_delta").set_value(0.5).run()
    assert not at.exception, at.exception
    assert current_point(at) == pytest.approx((2.0, gdp_mu_circle(2.0, 0.5)), rel=1e-6)
    # a target µ: σ is calibrated on S¹ for it, in the same rerun
    at.radio(key="gd_mode").set_value("mu").run()
    at.slider(key="gd_mu").set_value(1.5).run()
    assert not at.exception, at.exception
    sigma, mu = current_point(at)
    assert mu == pytest.approx(1.5, abs=1e-3)
    assert float(next(m.value for m in at.metric if m.label == "Rate σ")) == pytest.approx(
        sigma, rel=1e-3)
