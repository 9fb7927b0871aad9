"""Progress reporting of the private geodesic regression releases (issue 13 point 6, 14 point 7).

Every sampler path reports through the callback: non-decreasing fractions ending at 1.0, the
draws unchanged by the reporting (same seed, bit-identical release), and an exception raised by
the callback (a page's Cancel) stops the release.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpcore.data import make_regression_data
from dpcore.manifolds import Euclidean, Sphere
from dpcore.release import private_geodesic_regression, private_geodesic_regression_budgets
from dpcore.release.work import regression_work

S2 = Sphere(2)
QUICK = dict(chain_length=100, burn_in=100, rng=3)
STRICT = dict(tau=0.2, covariate_range=(0.0, 1.0))


@pytest.fixture(scope="module")
def sphere_data():
    data = make_regression_data(S2, 40, rng=0)
    return data.x, data.y


@pytest.fixture(scope="module")
def line_data():
    m = Euclidean(1)
    data = make_regression_data(m, 30, rng=1)
    return m, data.x, data.y


def _release(m, x, y, progress=None, budgets=None, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if budgets is not None:
            return private_geodesic_regression_budgets(m, x, y, budgets=budgets,
                                                       progress=progress, **kwargs)
        return private_geodesic_regression(m, x, y, progress=progress, **kwargs)


def _same(a, b):
    a, b = np.atleast_1d(a), np.atleast_1d(b)
    assert len(a) == len(b)
    for ra, rb in zip(a, b, strict=True):
        for key in ("footpoint", "shooting_vector", "intercept", "coef"):
            np.testing.assert_array_equal(ra.values[key], rb.values[key])


def _check_reports(seen, at_least):
    assert len(seen) >= at_least
    assert all(0.0 <= f <= 1.0 for f in seen)
    assert np.all(np.diff(seen) >= 0), "progress went backwards"
    assert seen[-1] == 1.0


CASES = {
    "joint MCMC": dict(eps_p=1.0, eps_v=1.0, sampler="mcmc", **STRICT, **QUICK),
    "joint exact (uniform proposals)": dict(eps_p=0.05, eps_v=0.05, sampler="exact",
                                            n_vectors=3, **STRICT, **QUICK),
    "sequential MCMC": dict(eps_p=1.0, eps_v=1.0, scheme="sequential", n_footpoints=2,
                            n_vectors=2, **STRICT, **QUICK),
    "paper mode": dict(eps_p=1.0, eps_v=1.0, mode="paper", **QUICK),
}


@pytest.mark.parametrize("case", list(CASES))
def test_progress_is_monotone_ends_at_one_and_changes_no_draw(sphere_data, case):
    x, y = sphere_data
    seen = []
    with_progress = _release(S2, x, y, seen.append, **CASES[case])
    # MCMC stages report about a hundred times each; an exact sampler once per batch.
    _check_reports(seen, 1 if "exact" in case else 90)
    _same(with_progress, _release(S2, x, y, **CASES[case]))


@pytest.mark.parametrize("scheme", ["joint", "sequential"])
def test_several_budgets_report_one_run(sphere_data, scheme):
    x, y = sphere_data
    kwargs = dict(budgets=[(0.5, 0.5), (2.0, 2.0)], scheme=scheme, sampler="auto"
                  if scheme == "sequential" else "mcmc", **STRICT, **QUICK)
    seen = []
    releases = _release(S2, x, y, seen.append, **kwargs)
    _check_reports(seen, 90)
    _same(releases, _release(S2, x, y, **kwargs))


@pytest.mark.parametrize("kwargs", [
    dict(eps_p=1.0, eps_v=1.0, tau=1.0, covariate_range=(0.0, 1.0), tau_m=3.0, max_speed=2.0,
         sampler="exact"),  # refined envelope on R^1
    dict(eps_p=1.0, eps_v=1.0, mode="paper", scheme="sequential"),  # closed-form K-norm
    dict(mode="paper", scheme="sequential", budgets=[(1.0, 1.0), (2.0, 0.5)]),
], ids=["refined exact", "closed form", "closed form, two budgets"])
def test_progress_on_the_line(line_data, kwargs):
    m, x, y = line_data
    seen = []
    with_progress = _release(m, x, y, seen.append, rng=7, **kwargs)
    _check_reports(seen, 1)
    _same(with_progress, _release(m, x, y, rng=7, **kwargs))


def test_sequential_stages_share_the_bar_by_estimated_time(sphere_data):
    """The footpoint stage ends exactly at its share of the work estimate."""
    x, y = sphere_data
    kwargs = CASES["sequential MCMC"]
    seen = []
    _release(S2, x, y, seen.append, **kwargs)
    work = regression_work(S2, len(x), draws=4, n_footpoints=2, chain_length=100, burn_in=100,
                           scheme="sequential")
    foot, vec = (p.seconds for p in work.parts)
    share = foot / (foot + vec)
    assert 0.0 < share < 1.0
    assert any(abs(f - share) < 1e-12 for f in seen)
    before = [f for f in seen if f < share - 1e-12]
    after = [f for f in seen if f > share + 1e-12]
    # each stage's chains report about a hundred times
    assert 90 <= len(before) <= 110 and 90 <= len(after) <= 110


class Cancelled(Exception):
    pass


@pytest.mark.parametrize("case", ["joint MCMC", "sequential MCMC"])
def test_an_exception_from_the_callback_stops_the_release(sphere_data, case):
    x, y = sphere_data
    calls = []

    def cancel(fraction):
        calls.append(fraction)
        if fraction >= 0.25:
            raise Cancelled

    with pytest.raises(Cancelled):
        _release(S2, x, y, cancel, **CASES[case])
    assert 0.25 <= calls[-1] < 0.3  # it stopped at the first report past a quarter


def test_an_exception_from_the_callback_stops_an_exact_release(sphere_data):
    x, y = sphere_data

    def cancel(fraction):
        raise Cancelled

    with pytest.raises(Cancelled):
        _release(S2, x, y, cancel, **CASES["joint exact (uniform proposals)"])
