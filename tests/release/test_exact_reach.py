"""``GeodesicRegressionRequest.exact_reach``: the largest ε_p + ε_v at which ``auto`` samples
exactly, found by bisection on the public plan."""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.manifolds import SPD, KendallShape, Sphere
from dpcore.release.requests import GeodesicRegressionRequest

KENDALL = KendallShape(4)
#: The Geodesic regression page's Kendall(4) design (n·ε = 500, one draw: MCMC).
KENDALL_PAGE = dict(tau=0.25, covariate_range=(0.0, 1.0), max_speed=0.55,
                    footpoint_radius=0.15)


def _kendall(eps_p=2.0, eps_v=3.0, **kw):
    return GeodesicRegressionRequest(KENDALL, 100, eps_p=eps_p, eps_v=eps_v,
                                     **{**KENDALL_PAGE, **kw})


def _exact_at(request, total):
    share = request.eps_p / (request.eps_p + request.eps_v)
    return bool(request.replace(eps_p=share * total, eps_v=(1 - share) * total,
                                sampler="auto").plan()["exact"])


@pytest.mark.parametrize("kw", [{}, {"n_footpoints": 3, "n_vectors": 3}, {"sampler": "mcmc"}])
def test_the_reach_is_exact_and_a_little_more_is_not(kw):
    request = _kendall(**kw)
    assert not request.replace(sampler="auto").plan()["exact"]  # n·ε = 500: beyond the reach
    reach = request.exact_reach(resolution=0.01)
    assert reach is not None and reach < 5.0
    assert _exact_at(request, reach)
    assert not _exact_at(request, reach * 1.011)  # the bracket is 1% wide
    # the request's split is kept: 2 : 3 at 2.3 as at 5
    assert _exact_at(request, reach * 0.5)


def test_more_draws_reach_less_far():
    one = _kendall().exact_reach()
    nine = _kendall(n_footpoints=3, n_vectors=3).exact_reach()
    assert nine < one


def test_an_exact_request_reports_at_least_itself_and_the_cap():
    request = GeodesicRegressionRequest(Sphere(2), 100, eps_p=0.05, eps_v=0.05, tau=0.2,
                                        covariate_range=(0.0, 1.0))
    assert request.plan()["exact"]
    assert request.exact_reach(span=2.0) == pytest.approx(0.2)  # exact at twice its ε too
    assert request.exact_reach() >= 0.1


def test_no_exact_sampler_means_no_reach():
    request = GeodesicRegressionRequest(SPD(3), 100, eps_p=1.0, eps_v=1.0, tau=0.175,
                                        covariate_range=(0.0, 1.0), tau_m=0.8)
    assert request.exact_reach() is None
    assert np.isfinite(request.epsilon)
