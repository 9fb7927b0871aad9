"""Progress of a private Fréchet mean (issue 14 point 7): ``progress=`` follows the exact
samplers and the chains, ends at 1.0, does not change the release, and an exception it raises
(a user interface's cancel) propagates."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpcore.data import make_mean_data
from dpcore.manifolds import SPD, Sphere
from dpcore.mechanisms import Ball, KNormGradient
from dpcore.mechanisms.kng import frechet_mean_exact
from dpcore.release import private_frechet_mean

SPHERE = Sphere(2)
NORTH = np.array([0.0, 0.0, 1.0])


class Cancel(Exception):
    pass


@pytest.fixture(scope="module")
def sphere_data():
    return make_mean_data(SPHERE, 200, radius=0.5, rng=0)


def release(y, progress=None, **kw):
    args = {"epsilon": 1.0, "radius": 0.5, "center": NORTH, "rng": 3, "n_draws": 5, **kw}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return private_frechet_mean(SPHERE, y, progress=progress, **args)


CASES = {
    "laplace": {"mechanism": "laplace"},
    "ambient": {"mechanism": "ambient_laplace"},
    "gaussian": {"mechanism": "gaussian"},
    "kng exact": {"mechanism": "kng", "sampler": "exact"},
    "kng mcmc": {"mechanism": "kng", "sampler": "mcmc", "chain_length": 300, "burn_in": 200},
}


@pytest.mark.parametrize("case", list(CASES))
def test_progress_is_monotone_ends_at_one_and_leaves_the_release_unchanged(sphere_data, case):
    calls = []
    with_cb = release(sphere_data, calls.append, **CASES[case])
    without = release(sphere_data, **CASES[case])
    np.testing.assert_array_equal(with_cb.values["mean"], without.values["mean"])
    assert calls and calls[-1] == 1.0
    assert np.all(np.diff(calls) >= 0) and all(0.0 <= c <= 1.0 for c in calls)
    if case == "kng mcmc":  # the chains report along the way, about a hundred times
        assert 50 <= len(calls) <= 200 and calls[0] < 0.05
    if case == "kng exact":
        assert with_cb.diagnostics["exact"]


@pytest.mark.parametrize("case", ["kng exact", "kng mcmc", "laplace"])
def test_an_exception_of_the_callback_propagates(sphere_data, case):
    calls = []

    def cancel(fraction):
        calls.append(fraction)
        raise Cancel

    with pytest.raises(Cancel):
        release(sphere_data, cancel, **CASES[case])
    assert len(calls) == 1


def test_exact_sampler_reports_the_accepted_share_of_every_mechanism(sphere_data):
    """Two budgets in one call: the refined envelope reports each budget's draws in its own
    half; the uniform-proposal sampler reports the accepted share of all draws."""
    ball = Ball.make(SPHERE, NORTH, 0.5)
    mechs = [KNormGradient(manifold=SPHERE, epsilon=e, sensitivity=0.02) for e in (1.0, 2.0)]
    for refined in (True, False):
        calls = []
        a = frechet_mean_exact(mechs, sphere_data, size=40, rng=1, support=ball,
                               refined=refined, progress=calls.append)
        b = frechet_mean_exact(mechs, sphere_data, size=40, rng=1, support=ball,
                               refined=refined)
        for ra, rb in zip(a, b, strict=True):
            np.testing.assert_array_equal(ra.values, rb.values)
        assert calls[-1] == 1.0 and np.all(np.diff(calls) >= 0)
        if refined:
            assert any(0.49 <= c <= 0.51 for c in calls)  # the first budget's stage ends at 1/2


def test_mcmc_on_spd3_reports_and_is_unchanged():
    m = SPD(3)
    y = make_mean_data(m, 30, radius=1.0, rng=0)
    kw = {"epsilon": 1.0, "radius": 1.0, "center": np.eye(3), "rng": 2, "mechanism": "kng",
          "chain_length": 200, "burn_in": 100, "sampler": "mcmc"}
    calls = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = private_frechet_mean(m, y, progress=calls.append, **kw)
        b = private_frechet_mean(m, y, **kw)
    np.testing.assert_array_equal(a.values["mean"], b.values["mean"])
    assert not a.diagnostics["exact"] and calls[-1] == 1.0 and len(calls) >= 50
