"""The two-stage design's preview on the Geodesic regression page (ui.logic.two_stage): where
the data's own fit sits against stage 2's footpoint ball, for the analyst's eyes only."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from dpcore.learning import frechet_mean
from ui.logic import geodesic_regression as G
from ui.logic import two_stage as TS


@pytest.fixture(scope="module")
def sphere_data():
    """The page's synthetic sphere data at n = 250 and its non-private fit."""
    dataset = G.synthetic_dataset("sphere", None, 250, 0.003, 0)
    fit = G.fit_nonprivate("sphere", None, dataset.x, dataset.y, (0.0, 1.0))
    return dataset, fit


def _settings(**changes):
    base = G.ReleaseSettings(kind="sphere", param=None, eps_p=2.0, eps_v=2.0, tau=0.2,
                             covariate_range=(0.0, 1.0), max_speed=0.8,
                             two_stage=TS.TwoStage(9.0, *TS.SPHERE_BALL_START))
    return replace(base, **changes)


def _distance_to_mean(dataset, fit):
    m = G.make_manifold("sphere", None)
    return float(m.dist(fit.footpoint, frechet_mean(m, dataset.y)))


def test_a_fit_well_inside_the_ball_is_not_flagged(sphere_data):
    dataset, fit = sphere_data
    settings = _settings()
    (row,) = TS.stage_two_preview(settings, dataset, fit)
    rho = TS.footpoint_radius(settings, dataset.n)
    q95 = rho - 0.8 - 0.2
    d = _distance_to_mean(dataset, fit)
    assert rho - d >= q95                       # the margin covers the centre's 95% error
    assert (row["count"], row["n"], row["warn"]) == (0, 1, False)
    assert f"{d:.2f} from the responses' mean" in row["what"]
    assert f"ρ = {rho:.2f}" in row["what"] and f"{q95:.2f}" in row["what"]


def test_a_speed_bound_that_shrinks_the_ball_below_the_fit_warns(sphere_data):
    dataset, fit = sphere_data
    d = _distance_to_mean(dataset, fit)
    # V + tau below d: even a centre exactly on the mean leaves the fit outside
    settings = _settings(max_speed=0.02, tau=0.05)
    rho = TS.footpoint_radius(settings, dataset.n)
    assert rho < d, (rho, d)
    (row,) = TS.stage_two_preview(settings, dataset, fit)
    assert (row["count"], row["share"], row["warn"]) == (1, 1.0, True)
    assert "even a private centre on the mean leaves it outside" in row["what"]
    assert row["advice"].startswith("Stage 2's exact sampler is quick")
    assert TS.OUTSIDE_NOTE in row["advice"]


def test_a_margin_below_the_centres_error_warns(sphere_data):
    dataset, fit = sphere_data
    d = _distance_to_mean(dataset, fit)
    # choose V so that the margin rho - d is half the centre's predicted 95% error
    q95 = TS.footpoint_radius(_settings(), dataset.n) - 1.0
    speed = d + 0.5 * q95 - 0.2 - q95
    assert speed > 0
    settings = _settings(max_speed=speed)
    (row,) = TS.stage_two_preview(settings, dataset, fit)
    assert row["warn"] and "misses the mean by less than" in row["what"]
    assert f"{0.5 * q95:.2f}" in row["what"]


def test_no_row_for_one_stage_paper_mode_or_without_a_fit(sphere_data):
    dataset, fit = sphere_data
    assert TS.stage_two_preview(_settings(two_stage=None), dataset, fit) == []
    assert TS.stage_two_preview(_settings(mode="paper"), dataset, fit) == []
    assert TS.stage_two_preview(_settings(), dataset, None) == []


def test_the_preview_does_not_change_the_request(sphere_data):
    """ρ in the preview is the request's footpoint radius (one computation)."""
    dataset, fit = sphere_data
    settings = _settings()
    (row,) = TS.stage_two_preview(settings, dataset, fit)
    rho = TS.request(settings, dataset.n).footpoint_radius
    assert f"ρ = {rho:.2f}" in row["what"]
    assert np.isfinite(rho)
