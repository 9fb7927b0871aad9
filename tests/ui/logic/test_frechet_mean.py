"""Page logic of the Fréchet-mean page (ui.logic.frechet_mean): the preview, the simulation
and the empirical sensitivity, which are the report's studies seed for seed."""

import numpy as np
import pandas as pd
import pytest

from dpcore import visualization as V
from dpcore.data import make_mean_data
from dpcore.experiments.studies import frechet_mean_study, frechet_sensitivity_study
from dpcore.manifolds import SPD, Sphere
from ui.logic import frechet_mean as L
from ui.manifolds import make_manifold


def test_simulation_is_the_report_study_for_the_same_seed():
    page = L.frechet_simulation_one_n("sphere", np.pi / 8, 1.0, 15, 4, seed=3)
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
    page = L.frechet_sensitivity_simulation("spd", 1.5, [12, 6], 3, seed=4)
    study = frechet_sensitivity_study(SPD(2), sample_sizes=[6, 12], radius=1.5, replicates=3,
                                      rng=4)
    pd.testing.assert_frame_equal(page, study.rename(columns={"replicate": "pair"}))


def test_mechanism_draws_have_the_right_shapes_and_scales():
    y = make_mean_data(Sphere(2), 30, radius=0.4, rng=0)
    res = L.frechet_mechanism_draws("sphere", y, 0.4, 1.0, 12, seed=0, chain_length=50,
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
    frame = L.frechet_simulation_one_n("spd", 1.5, 1.0, 20, 4, chain_length=30, burn_in=30)
    assert set(frame["mechanism"]) == set(V.MECHANISM_LABELS)
    assert len(frame) == 4 * 4
    assert (frame["geodesic_error"] >= 0).all() and (frame["euclidean_error"] >= 0).all()
    amb = frame[frame["mechanism"] == "ambient_laplace"]["left_manifold"]
    assert amb.between(0, 1).all()
    fig = V.frechet_error_figure(frame)
    assert fig.layout.title.text and fig.layout.xaxis.title.text and fig.layout.yaxis.title.text


def test_empirical_sensitivity_stays_below_the_bound():
    frame = L.frechet_sensitivity_simulation("sphere", np.pi / 8, [10, 40], 5)
    assert len(frame) == 10
    assert (frame["ratio"] >= 1).all()
    frame = L.frechet_sensitivity_simulation("spd", 1.5, [10], 5)
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
    frames = [L.frechet_simulation_one_n("sphere", 0.3, 2.0, n, 3, include_kng=False)
              for n in (10, 20)]
    frame = pd.concat(frames, ignore_index=True)
    assert set(frame["n"]) == {10, 20}
    assert "kng" not in set(frame["mechanism"])
