"""Progress reporting of the Metropolis-Hastings sampler."""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.manifolds import Euclidean, Sphere
from dpcore.sampling import metropolis_hastings

NORTH = np.array([0.0, 0.0, 1.0])


def _target(z):
    return -np.linalg.norm(z - NORTH, axis=-1) / 0.3


def _run(progress=None, **kwargs):
    options = dict(n_samples=300, burn_in=200, n_chains=3, rng=5)
    options.update(kwargs)
    return metropolis_hastings(Sphere(2), _target, NORTH, progress=progress, **options)


@pytest.mark.parametrize("kwargs", [{}, {"adapt": False}, {"thin": 3},
                                    {"groups": np.array([0, 1, 1]), "step_size": [0.2, 0.5]}],
                         ids=["adaptive", "fixed step", "thinned", "groups"])
def test_progress_reports_about_a_hundred_increasing_fractions(kwargs):
    seen = []
    result = _run(seen.append, **kwargs)
    assert 90 <= len(seen) <= 110
    assert all(0.0 < f <= 1.0 for f in seen)
    assert np.all(np.diff(seen) > 0)
    assert seen[-1] == 1.0
    # the reporting does not change the chains
    plain = _run(**kwargs)
    np.testing.assert_array_equal(result.samples, plain.samples)


def test_progress_spans_burn_in_and_sampling():
    seen = []
    _run(seen.append, n_samples=100, burn_in=300)
    # burn-in is 3/4 of the 400 steps: 3/4 of the reports come before fraction 0.75
    assert 70 <= sum(f <= 0.75 for f in seen) <= 80


def test_progress_exception_stops_the_run():
    calls = []

    def cancel(fraction):
        calls.append(fraction)
        if fraction > 0.3:
            raise KeyboardInterrupt("cancelled")

    with pytest.raises(KeyboardInterrupt, match="cancelled"):
        _run(cancel)
    assert calls[-1] > 0.3 and calls[-1] < 0.4


def test_progress_on_a_linear_space():
    seen = []
    metropolis_hastings(Euclidean(2), lambda z: -np.linalg.norm(z, axis=-1), np.zeros(2),
                        n_samples=50, burn_in=0, n_chains=2, rng=0, progress=seen.append)
    assert seen[-1] == 1.0 and len(seen) == 50
