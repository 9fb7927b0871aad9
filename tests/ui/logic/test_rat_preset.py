"""The rat preset's two designs (issue 28 point 4): the figures the page shows side by side in
``ui.logic.rat_preset.RAT_TWO_STAGE`` are re-measured here from the library, so they cannot
drift from what the code does."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.learning import frechet_mean
from ui.logic import geodesic_regression as G
from ui.logic import rat_preset as R

FIGURES = R.RAT_TWO_STAGE


@pytest.fixture(scope="module")
def design():
    return R.rat_pilot_design()


def test_pilot_design_holds_out_rat_one_and_splits_the_presets_budget(design):
    p, ds = R.RAT_PRESET, R.rat_skulls_dataset()
    m = design["manifold"]
    assert len(design["x"]) == FIGURES["n"] == len(ds.x) - p["rows_per_person"]
    np.testing.assert_array_equal(design["y"], ds.y[p["rows_per_person"]:])
    # the public centre is rat 1's mean shape, and rat 1 is not among the released rows
    pilot = frechet_mean(m, ds.y[:p["rows_per_person"]])
    assert float(m.dist(design["pilot_center"], pilot)) < 1e-9
    center, radius = design["center_ball"]
    assert radius == R.RAT_PILOT_BALL_RADIUS < math.pi / 8  # r* on Kendall shape space
    # the total is the preset's: ε₁ + draws × ε₂
    total = p["n_footpoints"] * p["n_vectors"] * (p["eps_p"] + p["eps_v"])
    draws = design["n_footpoints"] * design["n_vectors"]
    assert design["eps_center"] + draws * design["eps_stage2"] == pytest.approx(total)
    assert (design["eps_center"], design["eps_stage2"], draws) == (
        FIGURES["eps_center"], FIGURES["eps_stage2"], FIGURES["draws"])
    assert design["footpoint_radius"] == pytest.approx(FIGURES["footpoint_radius"], abs=5e-4)
    # the data lie in the stage-1 ball (the ball is public; this checks it is sensible)
    assert float(np.max(m.dist(design["y"], center))) < radius


@pytest.mark.slow
def test_two_stage_release_figures_are_remeasured(design):
    """The MCMC two-stage release at the preset's total budget: 3 seeds, median ratio within
    25% of the page's figure, inside its stated range, labelled approximately private."""
    ratios = []
    for seed in range(3):
        release, ratio = R.rat_two_stage_release(seed, design=design)
        assert release.epsilon == pytest.approx(
            FIGURES["eps_center"] + FIGURES["draws"] * FIGURES["eps_stage2"])
        assert release.label.startswith("approximately private")
        ratios.append(ratio)
    low, high = FIGURES["mcmc_range"]
    assert np.median(ratios) == pytest.approx(FIGURES["mcmc_ratio"], rel=0.25)
    assert 0.8 * low <= min(ratios) and max(ratios) <= 1.25 * high


@pytest.mark.slow
def test_exact_target_prediction_is_remeasured(design):
    """The two-stage exact target predicted about the fit, for seed 0's private centre: the
    median ratio at the preset's n·ε₂ within 30% of the page's figure, and the smallest useful
    n·ε₂ bracketed within 30% of the page's (importance sampling with 2000 draws: rough, as
    the page says)."""
    release, _ = R.rat_two_stage_release(0, design=design, chain_length=10, burn_in=0)
    center = np.asarray(release.values["center"])[0]
    out = R.rat_two_stage_prediction(center, design=design, far=False, search=False)
    assert out["n_eps"] == pytest.approx(FIGURES["n"] * FIGURES["eps_stage2"])
    assert out["ratio"] == pytest.approx(FIGURES["exact_ratio"], rel=0.3)
    useful = FIGURES["exact_useful_n_eps"]
    with np.errstate(invalid="ignore"):
        below = out["model"].predict(0.7 * useful, draws=2000, rng=0)["median_ratio"]
        above = out["model"].predict(1.3 * useful, draws=2000, rng=0)["median_ratio"]
    assert below > G.USEFUL_RATIO >= above, (below, above)


def test_comparison_texts_state_both_designs():
    today, two = R.rat_comparison()
    assert "713×" in today[1] and f"{R.RAT_USEFUL_N_EPS:,.0f}" in today[2]
    assert "2.3× predicted" in two[1] and "3.5× by MCMC" in two[1]
    assert "total ε = 30" in two[2] and "approximately private" in two[2]
