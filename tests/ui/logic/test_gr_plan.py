"""The sentence above the Release button names the exact sampler that will run and the cost
figure that applies to it (ui.logic.gr_plan)."""

from __future__ import annotations

import dataclasses

from dpcore.mechanisms.kng_bundle import MAX_LEAVES, NATIVE_MAX_LEAVES
from ui.logic import geodesic_regression as G
from ui.logic.gr_plan import exact_plan_text, sampler_plan


def test_uniform_proposals_at_the_sphere_default():
    s = G.demo_settings("sphere")
    plan = sampler_plan(s, G.default_n("sphere"))
    assert plan["exact_sampler"] == "uniform proposals"
    assert "Worst case over all data sets" in exact_plan_text(plan)


def test_the_far_field_sampler_states_its_public_prediction():
    """S² with the demonstration's footpoint ball at n (eps_p + eps_v) = 1,000: the bundle
    sampler (native boxes), exact and private; the sentence gives its public prediction and
    says it is not a bound over data sets (its cost depends on the data), never the uniform
    proposals' worst case (about 1e108 proposals per draw here)."""
    s = dataclasses.replace(G.demo_settings("sphere"), eps_p=5.0, eps_v=5.0)
    plan = sampler_plan(s, 100)
    assert plan["exact"] and plan["exact_sampler"] == "certified bundle"
    text = exact_plan_text(plan)
    assert "labelled **private**" in text and "Predicted work from public inputs" in text
    assert "not a bound" in text and "bound:" not in text.lower().replace("not a bound:", "")
    assert f"{plan['predicted_work']:,.0f} gradient terms" in text
    assert f"at most {plan['leaf_cap']:,} cells" in text and plan["leaf_cap"] == NATIVE_MAX_LEAVES
    assert f"{plan['worst_case_proposals']:.3g}" not in text
    work, ok = G.work_estimate(s, 100)
    assert ok and work.operations >= plan["predicted_work"] * 0.999


def test_the_plane_sampler_states_its_leaf_cap_for_large_n():
    """R² at n = 10,000 (two responses on the Linear regression page, say): the whitened-leaf
    sampler's sentence gives the public cap its prediction assumes (6,000 leaves at this n,
    dpcore.mechanisms.kng_bundle.bundle_leaf_cap), not the sphere's 60,000."""
    from dpcore.manifolds import Euclidean
    from dpcore.release import plan_regression_sampler

    plan = plan_regression_sampler(Euclidean(2), 10_000, eps_p=1.0, eps_v=1.0, tau=2.0,
                                   tau_m=10.0, draws=9)
    assert plan["exact"] and plan["exact_sampler"] == "certified bundle"
    text = exact_plan_text(plan)
    assert "at most 6,000 cells" in text
    assert f"at most {MAX_LEAVES:,} cells" not in text


def test_the_spd2_squeeze_is_named_above_the_release_button():
    """The page's SPD(2) design at n·ε = 500 (n = 100, 3 x 3 draws): exact, uniform proposals
    with the certified squeeze, and the sentence says so next to its public prediction."""
    s = dataclasses.replace(G.demo_settings("spd"), eps_p=2.5, eps_v=2.5, n_footpoints=3,
                            n_vectors=3)
    plan = sampler_plan(s, 100)
    assert plan["exact"] and plan["exact_sampler"] == "uniform proposals with a certified squeeze"
    text = exact_plan_text(plan)
    assert "certified squeeze" in text and "Predicted work from public inputs" in text
    assert "not a bound" in text
