"""The timing behind the work estimates (dpcore.release._timing): exact releases are priced at
the cost of an exact sampler's proposal term, not at the compiled MCMC chain's."""

from __future__ import annotations

import pytest

from dpcore.manifolds import Sphere
from dpcore.release import work
from dpcore.release._timing import WorkCosts, _calibrate


def test_the_exact_kind_times_a_gradient_term():
    costs = _calibrate(Sphere(2), "exact")
    assert isinstance(costs, WorkCosts)
    assert costs.per_term >= 1e-10 and costs.per_step >= 0.0 and costs.per_sample == 0.0
    assert costs.per_proposal > 0.0                  # drawing a proposal is timed too


def test_proposal_draws_are_timed_where_uniform_proposals_exist():
    """SPD(2) draws its uniform proposals by a truncated Laplace sampler (microseconds each,
    more than one proposal's gradient terms at small n); SPD(3) has no uniform proposals."""
    from dpcore.manifolds import SPD
    from dpcore.release._timing import _proposal_draw_cost

    assert _proposal_draw_cost(SPD(2)) > 0.0
    assert _proposal_draw_cost(SPD(3)) == 0.0


def test_an_exact_part_prices_its_terms_and_its_proposals():
    costs = WorkCosts(per_step=0.0, per_term=1e-8, per_proposal=5e-6)
    part = work.exact_part(costs, draws=9, proposals_per_draw=1000.0, n=30)
    assert part.operations == pytest.approx(9 * 1000 * 30)
    assert part.seconds == pytest.approx(9 * 1000 * 30 * 1e-8 + 9 * 1000 * 5e-6)


def test_exact_releases_are_priced_at_the_exact_kind(monkeypatch, measured_work_costs):
    per_kind = {"exact": 1e-6, "joint": 1e-9}
    monkeypatch.setattr(work, "_CACHE", {})
    monkeypatch.setattr(work, "_MEASURED", {})
    monkeypatch.setattr(work, "_calibrate",
                        lambda manifold, kind: WorkCosts(per_step=0.0, per_term=per_kind[kind]))
    est = work.regression_work(Sphere(2), 100, draws=9, n_footpoints=9, chain_length=10,
                               burn_in=10, scheme="joint", exact_terms=2e7)
    assert est.operations == pytest.approx(2e7)
    assert est.seconds == pytest.approx(2e7 * 1e-6)
    chain = work.regression_work(Sphere(2), 100, draws=9, n_footpoints=9, chain_length=10,
                                 burn_in=10, scheme="joint")
    assert chain.seconds == pytest.approx(9 * 20 * 100 * 1e-9)
