"""Plain-language readings of ε and µ (ui.logic.privacy_text) against closed forms."""

import math

import numpy as np
import pytest
from scipy import stats

from ui.logic import privacy_text as T


@pytest.mark.parametrize("eps", [0.01, 0.5, 1.0, 3.0, 10.0])
def test_epsilon_success_is_the_optimal_test_bound(eps):
    # Best test between two laws with likelihood ratio within [e^-eps, e^eps] and equal priors:
    # success = (1 + TV)/2 with TV <= (e^eps - 1)/(e^eps + 1) = tanh(eps/2).
    assert T.guess_success_epsilon(eps) == pytest.approx((1 + math.tanh(eps / 2)) / 2)
    assert f"{100 * T.guess_success_epsilon(eps):.3g}%" in T.epsilon_reading(eps)


@pytest.mark.parametrize("mu", [0.1, 1.0, 2.5])
def test_mu_success_is_the_gaussian_test(mu):
    # Telling N(0,1) from N(mu,1) with equal priors: threshold at mu/2, success Phi(mu/2).
    x = np.linspace(-10, 10 + mu, 200_001)
    tv = 0.5 * np.trapezoid(np.abs(stats.norm.pdf(x) - stats.norm.pdf(x, mu)), x)
    assert T.guess_success_mu(mu) == pytest.approx((1 + tv) / 2, abs=1e-6)
    assert "rare outcomes" in T.mu_reading(mu)
    assert "N(0, 1)" in T.mu_reading(mu)


def test_group_privacy_multiplies_the_budget():
    assert "ε = 8 for one person (8 rows)" in T.epsilon_reading(1.0, rows=8)
    assert "µ = 4 for one person (4 rows)" in T.mu_reading(1.0, rows=4)
    assert "more than a million" in T.epsilon_reading(20.0)
