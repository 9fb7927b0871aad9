"""The release panel's composition of a release and its companions (:mod:`ui.release_panel`):
one event for the cost line and the cap check, from the requests' own events."""

import pytest

from dpcore.privacy import PrivacyEvent
from ui.release_panel import composed_event


def ev(epsilon, delta=0.0, guarantee="private", label=None, mu=None):
    return PrivacyEvent(epsilon=epsilon, delta=delta, mu=mu, guarantee=guarantee,
                        label=label or guarantee)


def test_one_event_is_itself():
    gdp = ev(None, mu=0.7)
    assert composed_event([gdp]) is gdp


def test_epsilons_add_and_the_weakest_guarantee_wins():
    both = composed_event([ev(2.0, label="dpcore"), ev(2.0, label="other")])
    assert (both.epsilon, both.delta, both.guarantee) == (pytest.approx(4.0), 0.0, "private")
    assert both.label == "dpcore"  # the page's release names the cost
    mcmc = composed_event([ev(2.0, None, "approximately private"), ev(1.0)])
    assert mcmc.epsilon == pytest.approx(3.0)
    assert mcmc.delta is None and mcmc.guarantee == "approximately private"
    assert composed_event([ev(1.0, 1e-6), ev(1.0, 1e-6)]).delta == pytest.approx(2e-6)


def test_releases_listed_apart_add_nothing():
    apart = ev(2.0, guarantee="not private", label="NOT PRIVATE")
    assert composed_event([apart, ev(2.0, guarantee="not private")]) is apart
    mixed = composed_event([ev(2.0, guarantee="not private"), ev(1.0)])
    assert mixed.epsilon == pytest.approx(1.0) and mixed.guarantee == "private"


def test_gaussian_dp_has_no_companions():
    with pytest.raises(ValueError, match="µ"):
        composed_event([ev(None, mu=1.0), ev(1.0)])
