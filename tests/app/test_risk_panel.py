"""The disclosure-risk box on every releasing page (ui.risk, issue 30 point 3): its sentence is
there, states the bound of dpcore.privacy.risk for the budget the cost line states, and moves
when the page's budget widget moves; its prior and its figure answer too."""

import math

import pytest

from dpcore.privacy import average_posterior, posterior_bound
from ui.risk import PRIORS, not_private_text, risk_text

from .pages import open_app_page

TIMEOUT = 240
START = "An attacker who believed"


def sentence(at):
    found = [m.value for m in at.markdown if m.value.startswith(START)]
    assert len(found) == 1, [m.value[:80] for m in at.markdown]
    return found[0]


def pct(x):
    return f"{100 * x:.3g}%"


def test_frechet_mean_sentence_follows_epsilon():
    at = open_app_page("frechet_mean.py", timeout=TIMEOUT)
    before = sentence(at)
    # The default mechanism is exact (pure ε-DP): the per-release bound at ε = 1, prior 10%.
    assert f"at most {pct(posterior_bound(0.1, epsilon=1.0))}" in before
    at.select_slider(key="fm_eps").set_value(5.0).run()
    assert not at.exception, at.exception
    after = sentence(at)
    assert after != before
    assert f"at most {pct(posterior_bound(0.1, epsilon=5.0))}" in after
    # The prior is the attacker's: 50% changes the first bound to e^ε/(1 + e^ε).
    at.selectbox(key="fm_risk_prior").set_value(0.5).run()
    assert "a 50% chance" in sentence(at)
    assert f"at most {pct(math.exp(5) / (1 + math.exp(5)))}" in sentence(at)
    # The figure is drawn when asked for.
    charts = len(at.get("plotly_chart"))
    at.session_state["fm_risk_open"] = True
    at.run()
    assert not at.exception, at.exception
    assert len(at.get("plotly_chart")) == charts + 1


def test_gaussian_dp_sentence_follows_sigma():
    at = open_app_page("gaussian_dp.py", timeout=TIMEOUT)
    before = sentence(at)
    assert "on average when it is true" in before  # µ-GDP: no per-release bound
    captions = "\n".join(c.value for c in at.caption)
    assert "Not guaranteed" in captions and "Monte Carlo" in captions
    at.slider(key="gd_sigma").set_value(2.0).run()
    assert not at.exception, at.exception
    assert sentence(at) != before


def test_linear_regression_sentence_follows_epsilon():
    at = open_app_page("linear_regression.py", timeout=TIMEOUT)
    before = sentence(at)
    assert f"at most {pct(posterior_bound(0.1, epsilon=2.0))}" in before
    at.select_slider(key="lr_eps").set_value(0.5).run()
    assert not at.exception, at.exception
    assert f"at most {pct(posterior_bound(0.1, epsilon=0.5))}" in sentence(at)


def test_geodesic_regression_sentence_follows_epsilon():
    at = open_app_page("geodesic_regression.py", timeout=TIMEOUT)
    before = sentence(at)
    at.select_slider(key="gr_eps_v").set_value(0.5).run()
    assert not at.exception, at.exception
    assert sentence(at) != before


# ------------------------------------------------------------------ texts (no page)
def test_texts_state_the_bounds_and_their_assumptions():
    from dpcore.privacy import disclosure_risk

    pure, caveat = risk_text(disclosure_risk(0.1, epsilon=1.0, delta=0.0, rows=3))
    assert f"at most {pct(posterior_bound(0.1, epsilon=3.0))}" in pure
    assert "whatever the release shows" in pure
    assert "3 rows each" in caveat and "pure ε-DP" in caveat and "Not guaranteed" not in caveat
    mcmc = risk_text(disclosure_risk(0.1, epsilon=1.0, guarantee="approximately private"))[1]
    assert "Not guaranteed" in mcmc and "MCMC" in mcmc
    gdp, gdp_caveat = risk_text(disclosure_risk(0.25, mu=1.0))
    assert f"at most {pct(average_posterior(0.25, mu=1.0))}" in gdp
    assert "µ-GDP" in gdp_caveat
    huge = risk_text(disclosure_risk(0.1, epsilon=50.0))[0]
    assert "practically certain" in huge
    assert "nothing bounds" in not_private_text("not private")
    assert 0.1 in PRIORS


@pytest.mark.parametrize("guarantee", ["not private", "not covered"])
def test_no_sentence_without_a_guarantee(guarantee):
    from dpcore.privacy import disclosure_risk

    with pytest.raises(ValueError):
        disclosure_risk(0.1, epsilon=1.0, guarantee=guarantee)
