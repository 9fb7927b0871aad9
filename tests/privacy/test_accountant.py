"""The session accountant (dpcore.privacy.accountant): composition against closed forms and
against dp_accounting's PLD accountant (tight for Laplace and Gaussian events), the budget cap,
and how non-private and approximate releases are counted."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from dpcore.exceptions import PrivacyBudgetError
from dpcore.privacy import PrivacyAccountant, delta_mu, epsilon_of_gdp


def release(epsilon=None, delta=0.0, mu=None, guarantee="private", label=None):
    return SimpleNamespace(epsilon=epsilon, delta=delta, mu=mu, guarantee=guarantee,
                           label=label or guarantee)


def test_pure_releases_add_with_zero_delta():
    acc = PrivacyAccountant()
    acc.spend(release(1.0))
    acc.spend(release(0.5))
    t = acc.totals()
    assert t["epsilon"] == pytest.approx(1.5) and t["delta"] == 0.0 and t["mu"] is None


def test_gaussian_releases_compose_exactly_and_state_epsilon_at_delta():
    acc = PrivacyAccountant(delta=1e-5)
    acc.spend(release(mu=0.6, delta=None))
    acc.spend(release(mu=0.8, delta=None))
    t = acc.totals()
    assert t["mu"] == pytest.approx(1.0)
    assert float(delta_mu(t["epsilon"], 1.0)) == pytest.approx(1e-5, rel=1e-6)


def test_a_gaussian_release_alone_is_not_read_as_zero_epsilon():
    acc = PrivacyAccountant(delta=1e-6)
    acc.spend(release(mu=0.983, delta=None))
    assert acc.totals()["epsilon"] > 1.0


def test_non_private_releases_are_listed_apart_and_never_added():
    acc = PrivacyAccountant()
    acc.spend(release(2.0, guarantee="not private", label="NOT PRIVATE (paper mode)"))
    acc.spend(release(1.0, guarantee="not covered"))
    acc.spend(release(0.25))
    t = acc.totals()
    assert t["epsilon"] == pytest.approx(0.25) and t["not_private"] == 2


def test_approximate_releases_count_and_are_flagged():
    acc = PrivacyAccountant()
    acc.spend(release(1.0, delta=None, guarantee="approximately private"))
    t = acc.totals()
    assert t["epsilon"] == pytest.approx(1.0) and t["approximate"] == 1


def test_cap_refuses_overspend_before_recording():
    acc = PrivacyAccountant(epsilon_cap=2.0)
    acc.spend(release(1.5))
    with pytest.raises(PrivacyBudgetError, match="above the cap"):
        acc.spend(release(1.0))
    assert len(acc.events) == 1
    acc.spend(release(0.5))  # exactly at the cap: fine
    acc.spend(release(3.0, guarantee="not private"))  # void guarantee: nothing to spend


def test_round_trip():
    acc = PrivacyAccountant(epsilon_cap=5.0, delta=1e-7)
    acc.spend(release(1.0), source="Geodesic regression")
    acc.spend(release(mu=0.5, delta=None))
    back = PrivacyAccountant.from_dict(acc.to_dict())
    assert back.totals() == acc.totals() and back.events == acc.events


def test_epsilon_of_gdp_inverts_delta_mu():
    for mu in (0.1, 1.0, 3.0):
        for delta in (1e-3, 1e-6, 1e-10):
            eps = epsilon_of_gdp(mu, delta)
            assert float(delta_mu(eps, mu)) == pytest.approx(delta, rel=1e-6)


@pytest.mark.parametrize("laplace, gaussian", [([1.0], [1.0]), ([0.5, 0.5, 2.0], []),
                                               ([], [0.5, 0.5]), ([0.2] * 5, [0.3, 0.7])])
@pytest.mark.parametrize("delta", [1e-5, 1e-8])
def test_never_below_the_tight_pld_epsilon(laplace, gaussian, delta):
    """dp_accounting's PLD accountant is (near-)tight for Laplace (ε = 1/b for sensitivity 1)
    and Gaussian (µ = 1/noise multiplier) events: our total may be looser, never smaller, and
    stays within 35 % of it."""
    dpa = pytest.importorskip("dp_accounting", reason="dp_accounting is a dev dependency")
    from dp_accounting.pld import pld_privacy_accountant

    pld = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    acc = PrivacyAccountant(delta=delta)
    for eps in laplace:
        pld.compose(dpa.LaplaceDpEvent(noise_multiplier=1.0 / eps))
        acc.spend(release(eps))
    for mu in gaussian:
        pld.compose(dpa.GaussianDpEvent(noise_multiplier=1.0 / mu))
        acc.spend(release(mu=mu, delta=None))
    tight = pld.get_epsilon(delta)
    ours = acc.epsilon_at(delta)
    assert ours >= tight - 1e-3
    assert ours <= 1.35 * tight + 1e-9
    assert np.isfinite(ours)


# --------------------------------------------------------------------------- δ of a total
def test_a_total_with_an_mcmc_release_states_no_delta():
    """DESIGN §12: a total is only as strong as its weakest entry. Exact releases and one MCMC
    release (δ not certified): the total has no δ (None, flagged), never δ = 0."""
    acc = PrivacyAccountant()
    acc.spend(release(1.0))
    acc.spend(release(2.0, delta=None, guarantee="approximately private",
                      label="approximately private (MCMC; δ not certified)"))
    t = acc.totals()
    assert t["epsilon"] == pytest.approx(3.0)
    assert t["delta"] is None
    assert t["delta_certified"] is False
    assert t["delta_note"] == "includes an approximately private release"
    assert t["nominal_delta"] == 0.0


def test_a_total_with_a_monte_carlo_gaussian_release_states_no_delta():
    acc = PrivacyAccountant(delta=1e-5)
    acc.spend(release(mu=0.5, delta=None, guarantee="approximately private"))
    t = acc.totals()
    assert t["delta"] is None and not t["delta_certified"] and t["nominal_delta"] == 1e-5
    assert float(delta_mu(t["epsilon"], 0.5)) == pytest.approx(1e-5, rel=1e-6)


@pytest.mark.parametrize("events", [[(1.0, 0.0)], [(1.0, 0.0), (0.5, 0.0)], []])
def test_a_total_of_exact_releases_certifies_delta_zero(events):
    acc = PrivacyAccountant()
    for eps, delta in events:
        acc.spend(release(eps, delta=delta))
    t = acc.totals()
    assert t["delta"] == 0.0 and t["delta_certified"] is True and t["delta_note"] is None


def test_an_event_needs_a_known_guarantee():
    with pytest.raises(ValueError, match="`release.guarantee` must be one of"):
        PrivacyAccountant().spend(SimpleNamespace(epsilon=1.0, delta=0.0, mu=None,
                                                  label="NOT PRIVATE (paper mode)"))
