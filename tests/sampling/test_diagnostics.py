"""Effective sample size and split-R-hat on chains with known behaviour."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.sampling import effective_sample_size, split_rhat


def _ar1(phi, n_chains, n_draws, rng):
    """Stationary AR(1) chains x_t = phi x_{t-1} + e_t: integrated autocorrelation time
    (1 + phi) / (1 - phi)."""
    x = np.empty((n_chains, n_draws))
    x[:, 0] = rng.standard_normal(n_chains) / math.sqrt(1 - phi**2)
    noise = rng.standard_normal((n_chains, n_draws))
    for t in range(1, n_draws):
        x[:, t] = phi * x[:, t - 1] + noise[:, t]
    return x


@pytest.mark.statistical
@pytest.mark.parametrize("phi,rel", [(0.5, 0.1), (0.9, 0.2), (-0.3, 0.1)])
def test_ess_of_ar1_chains(phi, rel, rng):
    chains = _ar1(phi, 4, 20_000, rng)
    expected = chains.size * (1 - phi) / (1 + phi)
    assert effective_sample_size(chains) == pytest.approx(expected, rel=rel)


@pytest.mark.statistical
def test_ess_of_iid_draws(rng):
    chains = rng.standard_normal((4, 5000))
    assert effective_sample_size(chains) == pytest.approx(chains.size, rel=0.1)
    # one chain given as a 1-D array
    assert effective_sample_size(chains[0]) == pytest.approx(5000, rel=0.15)


@pytest.mark.statistical
def test_rhat(rng):
    iid = rng.standard_normal((4, 2000))
    assert split_rhat(iid) < 1.01
    shifted = iid + np.arange(4)[:, None]
    assert split_rhat(shifted) > 1.5
    trending = iid + np.linspace(0, 3, 2000)[None, :]
    assert split_rhat(trending) > 1.1
    # a stuck chain lowers the ESS of the pooled draws
    assert effective_sample_size(shifted) < 0.1 * shifted.size


def test_degenerate_and_invalid_input():
    assert math.isnan(effective_sample_size(np.ones((2, 10))))
    assert math.isnan(split_rhat(np.ones((2, 10))))
    with pytest.raises(ValueError, match="at least 4"):
        effective_sample_size(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="NaN"):
        split_rhat(np.array([[0.0, 1.0, np.nan, 2.0, 3.0]]))
    with pytest.raises(ValueError, match="shape"):
        split_rhat(np.zeros((2, 3, 4)))
