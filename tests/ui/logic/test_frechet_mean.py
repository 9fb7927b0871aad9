"""Page logic of the Fréchet-mean page (ui.logic.frechet_mean, ui.logic.frechet_simulation):
the preview, the simulation and the empirical sensitivity, which are the report's studies seed
for seed; the one release as a request, and what the page says about it before it runs."""

import numpy as np
import pandas as pd
import pytest

from dpcore import visualization as V
from dpcore.data import make_mean_data
from dpcore.experiments.studies import frechet_mean_study, frechet_sensitivity_study
from dpcore.learning import frechet_mean
from dpcore.manifolds import SPD, Sphere
from dpcore.release import project_to_ball
from ui.logic import frechet_mean as L
from ui.logic import frechet_simulation as S
from ui.manifolds import make_manifold


def test_simulation_is_the_report_study_for_the_same_seed():
    page = S.frechet_simulation_one_n("sphere", np.pi / 8, 1.0, 15, 4, seed=3)
    study = frechet_mean_study(Sphere(2), sample_sizes=[15], epsilon=1.0, radius=np.pi / 8,
                               replicates=4, mode="strict", chain_length=300, burn_in=200,
                               rng=np.random.SeedSequence([3, 15]))
    pd.testing.assert_frame_equal(page, study)
    assert set(page["mechanism"]) == set(V.MECHANISM_LABELS)


def test_spd3_leaves_out_the_gaussian_and_by_default_nothing_else():
    m = make_manifold("spd3")
    assert "gaussian" not in L.simulated_mechanisms(m)
    assert L.simulated_mechanisms(make_manifold("spd")) == tuple(V.MECHANISM_LABELS)


def test_empirical_sensitivity_is_the_report_study_for_the_same_seed():
    page = S.frechet_sensitivity_simulation("spd", 1.5, [12, 6], 3, seed=4)
    study = frechet_sensitivity_study(SPD(2), sample_sizes=[6, 12], radius=1.5, replicates=3,
                                      rng=4)
    pd.testing.assert_frame_equal(page, study.rename(columns={"replicate": "pair"}))


def test_mechanism_draws_have_the_right_shapes_and_scales():
    y = make_mean_data(Sphere(2), 30, radius=0.4, rng=0)
    res = S.frechet_mechanism_draws("sphere", y, 0.4, 1.0, 12, seed=0, chain_length=50,
                                    burn_in=50, mc_samples=200, mc_repeats=5)
    assert list(res["draws"]) == list(V.MECHANISM_LABELS)
    for pts in res["draws"].values():
        assert pts.shape == (12, 3)
        assert np.allclose(np.linalg.norm(pts, axis=1), 1.0)
    assert res["left_manifold"].all()  # ambient draws never lie on the sphere
    assert res["sigma"]["laplace"] == pytest.approx(res["delta"])  # σ = Δ/ε at ε = 1
    # the Gaussian is the release's: σ calibrated to µ(ε) with a margin, so its Monte Carlo µ
    # lies below the target (a flat-space σ = Δ/µ would sit at it)
    assert res["guarantee"]["gaussian"]["mu"] == pytest.approx(res["mu"])
    mu_hat, mu_se = res["mu_check"]
    assert mu_hat <= res["mu"] + 3 * mu_se
    assert res["guarantee"]["kng"]["delta"] == 0.0  # the exact sampler


def test_simulation_rows_and_errors():
    frame = S.frechet_simulation_one_n("spd", 1.5, 1.0, 20, 4, chain_length=30, burn_in=30)
    assert set(frame["mechanism"]) == set(V.MECHANISM_LABELS)
    assert len(frame) == 4 * 4
    assert (frame["geodesic_error"] >= 0).all() and (frame["euclidean_error"] >= 0).all()
    amb = frame[frame["mechanism"] == "ambient_laplace"]["left_manifold"]
    assert amb.between(0, 1).all()
    fig = V.frechet_error_figure(frame)
    assert fig.layout.title.text and fig.layout.xaxis.title.text and fig.layout.yaxis.title.text


def test_empirical_sensitivity_stays_below_the_bound():
    frame = S.frechet_sensitivity_simulation("sphere", np.pi / 8, [10, 40], 5)
    assert len(frame) == 10
    assert (frame["ratio"] >= 1).all()
    frame = S.frechet_sensitivity_simulation("spd", 1.5, [10], 5)
    assert (frame["ratio"] >= 1).all()


def test_spd_figures_have_titles_and_legends():
    y = make_mean_data(SPD(2), 10, radius=1.5, rng=0)
    clouds = {"Riemannian Laplace": y[:5], "KNG": y[5:]}
    for fig in (V.spd_mean_clouds_cone_figure(y, y[0], clouds),
                V.spd_mean_ellipses_figure(y[0], clouds),
                V.tangent_clouds_figure(Sphere(2), np.array([0.0, 0, 1]),
                                        {"KNG": make_mean_data(Sphere(2), 5, radius=0.1)})):
        assert fig.layout.title.text
        assert fig.layout.showlegend
        assert any(tr.showlegend is not False for tr in fig.data)


def test_simulation_concatenation_is_plain_pandas():
    frames = [S.frechet_simulation_one_n("sphere", 0.3, 2.0, n, 3, include_kng=False)
              for n in (10, 20)]
    frame = pd.concat(frames, ignore_index=True)
    assert set(frame["n"]) == {10, 20}
    assert "kng" not in set(frame["mechanism"])


# --------------------------------------------------------------------------- public bounds
def test_spd_centre_accepts_a_scale_the_upper_triangle_or_the_full_matrix():
    np.testing.assert_array_equal(L.parse_spd_center_text("10", 2), 10 * np.eye(2))
    np.testing.assert_array_equal(L.parse_spd_center_text("12, -2; 16", 2),
                                  [[12, -2], [-2, 16]])
    np.testing.assert_array_equal(L.parse_spd_center_text("2,1,0,1,3,0,0,0,4", 3)[1], [1, 3, 0])
    full = L.parse_spd_center_text("4, 1, 0, 2, 1, 5", 3)
    np.testing.assert_array_equal(full, [[4, 1, 0], [1, 2, 1], [0, 1, 5]])
    for text, fragment in [("1, 2", "takes 1 number"), ("1, 3, 1", "positive definite"),
                           ("-1", "positive definite"), ("x", "Could not read"),
                           ("nan", "finite"), ("1,2,3,4", "symmetric")]:
        with pytest.raises(ValueError, match=fragment):
            L.parse_spd_center_text(text, 2)
    assert L.spd_center_text(10 * np.eye(2)) == "10·I"
    assert L.spd_center_text(np.eye(2)) == "the identity matrix"


def test_ball_preview_counts_rows_outside_and_warns_above_five_percent():
    m = SPD(2)
    inside = make_mean_data(m, 95, radius=1.0, rng=0)
    far = np.stack([np.diag([50.0, 60.0])] * 5)
    y = np.concatenate([inside, far])
    pre = L.ball_preview(m, y, np.eye(2), 1.5)
    # oracle: the distances by the closed form sqrt(sum log^2 eig) at the identity
    dist = np.sqrt((np.log(np.linalg.eigvalsh(y)) ** 2).sum(axis=1))
    assert pre["count"] == int((dist > 1.5).sum()) == 5
    assert pre["rows"] == [97, 98, 99, 100, 101]  # file rows, the header is row 1
    assert pre["share"] == pytest.approx(0.05) and not pre["warn"]
    assert L.ball_preview(m, y[4:], np.eye(2), 1.5)["warn"]  # 5 of 96 > 5%
    assert pre["max_distance"] == pytest.approx(dist.max())
    text = L.ball_preview_text(L.ball_preview(m, y[4:], np.eye(2), 1.5), 96, 1.5)
    assert "not released" in text and "5 of 96" in text and "more than 5%" in text
    assert "all 95 rows" in L.ball_preview_text(L.ball_preview(m, inside, np.eye(2), 1.5), 95,
                                                1.5)


def test_release_distances_separate_projection_bias_from_noise():
    """Data far from the centre: the mean of the projected data is pulled to the ball, so a
    value at that mean is at distance 0 from it and at the bias from the data's own mean."""
    m = SPD(2)
    y = np.stack([np.diag([10.0, 12.0]), np.diag([12.0, 10.0])])
    center, radius = np.eye(2), 1.0
    proj_mean = frechet_mean(m, project_to_ball(m, y, center, radius))
    dist = L.release_distances(m, proj_mean, y, center, radius)
    assert dist["projected"] == pytest.approx(0.0, abs=1e-9)
    raw = frechet_mean(m, y)
    np.testing.assert_allclose(dist["mean_unprojected"], raw)
    # both points are diagonal: the mean is sqrt(120) I, and the distance to the projected
    # mean (also a multiple of I by symmetry) is sqrt(2) |log(sqrt(120)) - log(s)|
    s = proj_mean[0, 0]
    np.testing.assert_allclose(proj_mean, s * np.eye(2), atol=1e-9)
    assert dist["unprojected"] == pytest.approx(np.sqrt(2) * abs(0.5 * np.log(120) - np.log(s)))
    assert dist["bias"] == pytest.approx(dist["unprojected"])


# --------------------------------------------------------------------------- radius limits
def test_above_r_star_only_the_ambient_mechanism_has_a_sensitivity():
    s2 = Sphere(2)
    assert L.available_mechanisms(s2, np.pi / 4 - 1e-3) == L.simulated_mechanisms(s2)
    assert L.available_mechanisms(s2, np.pi / 4) == ("ambient_laplace",)
    info = L.frechet_summary(s2, 40, 3.0)
    assert info["delta"] is None and info["delta_gradient"] is None
    assert info["delta_ambient"] == pytest.approx(2 * 2 * np.sin(1.5) / 40)  # chord 2 sin(r/2)
    assert L.FRECHET_MANIFOLDS["sphere"][1] >= 3.14
    # the slider's whole range is usable: the ambient release runs on a whole-sphere ball
    y = make_mean_data(s2, 30, radius=3.0, rng=1)
    res = S.frechet_mechanism_draws("sphere", y, 3.14, 1.0, 10, seed=0)
    assert list(res["draws"]) == ["ambient_laplace"]
    assert np.allclose(np.linalg.norm(res["draws"]["ambient_laplace"], axis=1), 1.0)
    # SPD: no r*, every mechanism at the largest radius; the ambient radius depends on m0
    assert L.available_mechanisms(SPD(2), 6.0) == L.simulated_mechanisms(SPD(2))
    assert L.frechet_summary(SPD(2), 10, 1.0, 10 * np.eye(2))["delta_ambient"] == \
        pytest.approx(2 * 10 * np.expm1(1.0) / 10)
    assert "π/4" in L.radius_help(s2) and "e^(-r)" in L.radius_help(SPD(2))


def test_emg_preset_bounds_hold_the_data():
    from dpcore.data.shipped import geomstats_data_path

    try:
        geomstats_data_path("emg", "emg.csv")
    except FileNotFoundError as exc:
        pytest.skip(f"geomstats' EMG file is not installed: {exc}")
    y = L.emg_points()
    pre = L.ball_preview(SPD(2), y, L.EMG_PRESET["scale"] * np.eye(2), L.EMG_PRESET["radius"])
    assert y.shape == (840, 2, 2) and pre["share"] <= L.OUTSIDE_WARN


def test_work_estimate_of_each_mechanism_and_the_refusal(monkeypatch):
    """The page's estimate is the request's, the library's for the mechanism chosen (KNG: its
    sampler's work; Gaussian on S²: the Monte Carlo calibration of σ); above the budget the
    library's reason is returned."""
    from dpcore.data.synthetic import default_center
    from dpcore.release import work

    # A fixed calibration: the outcome must not depend on the machine's load (a calibration
    # re-measured between the two estimates below made them differ once).
    monkeypatch.setattr(work, "_CACHE", {})
    monkeypatch.setattr(work, "_MEASURED", {})
    monkeypatch.setattr(work, "_calibrate", lambda manifold, kind: work.WorkCosts(
        per_step=1e-4, per_term=5e-8, per_sample=1.5e-6))
    m = Sphere(2)
    c = default_center(m)
    kng = L.release_request(m, 200, 1.0, "kng", 0.3, c)
    _, est, ok = L.release_facts(kng)
    assert ok and est == work.estimate_frechet_work(m, 200, epsilon=1.0, radius=0.3, center=c)
    gauss = kng.replace(mechanism="gaussian")
    _, est, _ = L.release_facts(gauss)
    assert est.mc_samples == 4 * 1000 * 100
    monkeypatch.setattr(work, "DEFAULT_WORK_BUDGET", 0.5 * est.seconds)
    _, est, ok = L.release_facts(gauss)
    assert not ok and "above the work budget" in gauss.refusal()


# --------------------------------------------------------------------------- the request
def test_the_page_request_is_the_release_it_makes():
    """One request from the widgets' values: strict mode, one draw, OS entropy; its event is
    the release's, the ledger's entry."""
    from dpcore.privacy import PrivacyEvent

    m = Sphere(2)
    y = make_mean_data(m, 30, radius=0.4, rng=0)
    req = L.release_request(m, 30, 2.0, "laplace", 0.4, [0.0, 0.0, 1.0])
    assert (req.mode, req.n_draws, req.seed, req.epsilon) == ("strict", 1, None, 2.0)
    assert req == L.release_request(m, np.int64(30), 2, "laplace", np.float64(0.4),
                                    np.array([0.0, 0.0, 1.0]))
    event, _, _ = L.release_facts(req)
    rel = req.run(y)
    assert not rel.seeded and event == PrivacyEvent.of(rel)
    with pytest.raises(ValueError, match="center"):
        L.release_request(m, 30, 1.0, "laplace", 0.4, [0.0, 0.0, 2.0])


def test_exact_draws_with_data_dependent_floats_cost_as_the_release_says():
    """SPD(3): the ambient mechanism draws in R^6, off the public lattice; the cost line states
    the release's label and no δ, where the page used to say private."""
    req = L.release_request(SPD(3), 50, 1.0, "ambient_laplace", 1.0, np.eye(3))
    event, _, _ = L.release_facts(req)
    assert event.delta is None and event.guarantee == "approximately private"
    assert "floats depend on the data" in event.label


def test_prediction_texts_read_the_request():
    m = Sphere(2)
    req = L.release_request(m, 50, 1.0, "laplace", 0.4, [0.0, 0.0, 1.0])
    pred = req.predict()
    text = L.predicted_error_text(pred, req)
    assert "Before you release" in text and f"{pred['median']:.3g}" in text
    assert "No prediction before release" in L.predicted_error_text(None, req)
    found = L.smallest_epsilon_text(req, pred["median"] / 2)
    assert f"ε = {req.smallest_epsilon(pred['median'] / 2):g}" in found and "n = 50" in found
    assert "No ε up to 10⁴" in L.smallest_epsilon_text(req, 1e-12)
    gauss = L.smallest_epsilon_text(req.replace(mechanism="gaussian"), 0.01)
    assert gauss == ("No search over ε before release here: the Gaussian's σ is calibrated by "
                     "Monte Carlo at each ε.")
