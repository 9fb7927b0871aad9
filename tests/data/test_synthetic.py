"""Synthetic generators: shapes, manifold membership, reproducibility, paper protocols."""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.data import (
    DEFAULT_NOISE,
    RegressionData,
    default_center,
    kendall_template,
    make_mean_data,
    make_regression_data,
)
from dpcore.learning import GeodesicRegression
from dpcore.manifolds import SPD, Euclidean, Hyperbolic, KendallShape, Sphere

from .manifold_cases import IDS, MANIFOLDS

#: A radius that is valid on every manifold above (Kendall's injectivity radius is pi/2).
RADIUS = {Sphere: np.pi / 8, KendallShape: 0.4, SPD: 1.5, Euclidean: 2.0, Hyperbolic: 1.0}


# ------------------------------------------------------------------------- regression
@pytest.mark.parametrize("m", MANIFOLDS, ids=IDS)
def test_regression_shapes_and_membership(m):
    data = make_regression_data(m, 40, rng=0)
    assert isinstance(data, RegressionData)
    assert data.x.shape == (40,)
    assert data.y.shape == (40, *m.point_shape)
    assert np.all((data.x >= 0) & (data.x <= 1))
    assert np.all(m.belongs(data.y, atol=1e-10))
    assert m.belongs(data.footpoint, atol=1e-10)
    assert m.is_tangent(data.footpoint, data.shooting_vector, atol=1e-10)
    assert data.noise == DEFAULT_NOISE[type(m)]


@pytest.mark.parametrize("m", MANIFOLDS, ids=IDS)
def test_regression_unpacks_as_x_y(m):
    data = make_regression_data(m, 5, noise=0.01, rng=1)
    x, y = data
    assert x is data.x and y is data.y


@pytest.mark.parametrize("m", MANIFOLDS, ids=IDS)
def test_regression_reproducible(m):
    a = make_regression_data(m, 10, noise=0.01, rng=7)
    b = make_regression_data(m, 10, noise=0.01, rng=np.random.default_rng(7))
    c = make_regression_data(m, 10, noise=0.01, rng=8)
    for name in ("x", "y", "footpoint", "shooting_vector"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert not np.allclose(a.y, c.y)


@pytest.mark.parametrize("m", MANIFOLDS, ids=IDS)
def test_noise_free_data_lie_on_the_true_geodesic(m):
    data = make_regression_data(m, 25, noise=0.0, rng=2)
    np.testing.assert_allclose(data.y, data.true_points(), atol=1e-12)


def test_sphere_fit_on_noise_free_data_recovers_geodesic():
    m = Sphere(2)
    data = make_regression_data(m, 30, noise=0.0, rng=3)
    fit = GeodesicRegression(m).fit(data.x, data.y)
    grid = np.linspace(0.0, 1.0, 11)
    np.testing.assert_allclose(fit.predict(data.x), data.true_points(), atol=1e-6)
    np.testing.assert_allclose(fit.predict(grid), data.true_points(grid), atol=1e-6)


def test_sphere_shooting_vector_length_and_ambient_noise_variance():
    # Paper 002 section 4.1: ambient N(0, delta I) then renormalise, delta a *variance*. For
    # small delta the tangential residual has variance delta per tangent direction, so
    # E|log_{clean}(y)|^2 = d * delta on S^d.
    m, delta = Sphere(2), 1e-4
    data = make_regression_data(m, 4000, noise=delta, rng=4)
    assert m.norm(data.footpoint, data.shooting_vector) == pytest.approx(np.pi / 4)
    res = m.log(data.true_points(), data.y)
    assert np.mean(np.sum(res**2, axis=-1)) == pytest.approx(2 * delta, rel=0.08)


@pytest.mark.parametrize("m", [SPD(2), KendallShape(4), Hyperbolic(3)], ids=repr)
def test_tangent_noise_has_standard_deviation_noise(m):
    # Paper 002 appendix F: Exp(y_clean, xi), xi ~ N(0, sigma^2 I) in the tangent space.
    sigma = 0.01
    data = make_regression_data(m, 4000, noise=sigma, rng=5)
    clean = data.true_points()
    sq = m.norm(clean, m.log(clean, data.y)) ** 2
    assert np.mean(sq) == pytest.approx(m.dim * sigma**2, rel=0.08)


def test_euclidean_noise_is_standard_deviation():
    m = Euclidean(2)
    data = make_regression_data(m, 4000, noise=0.5, rng=6)
    assert np.std(data.y - data.true_points()) == pytest.approx(0.5, rel=0.05)


def test_kendall_regression_starts_at_template():
    m = KendallShape(6)
    data = make_regression_data(m, 10, rng=0)
    np.testing.assert_array_equal(data.footpoint, kendall_template(6))
    assert m.norm(data.footpoint, data.shooting_vector) == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"n": 1}, ValueError, "`n` must be at least 2"),
        ({"n": 2.5}, TypeError, "`n` must be an integer"),
        ({"noise": -0.1}, ValueError, "`noise` must be non-negative"),
        ({"noise": np.nan}, ValueError, "`noise` must be non-negative"),
        ({"noise": "a"}, TypeError, "`noise` must be a real number"),
    ],
)
def test_regression_argument_errors(kwargs, exc, match):
    args = {"n": 10, "noise": 0.1} | kwargs
    with pytest.raises(exc, match=match):
        make_regression_data(Sphere(2), args.pop("n"), **args)


def test_regression_rejects_non_manifold():
    with pytest.raises(TypeError, match="Manifold"):
        make_regression_data("sphere", 10)


# ------------------------------------------------------------------------------ means
@pytest.mark.parametrize("m", MANIFOLDS, ids=IDS)
def test_mean_data_in_ball_on_manifold(m):
    radius = RADIUS[type(m)]
    pts = make_mean_data(m, 300, radius=radius, rng=0)
    assert pts.shape == (300, *m.point_shape)
    assert np.all(m.belongs(pts, atol=1e-10))
    assert np.all(m.dist(default_center(m), pts) <= radius)


@pytest.mark.parametrize("m", MANIFOLDS, ids=IDS)
def test_mean_data_custom_center(m):
    rng = np.random.default_rng(1)
    center = kendall_template(m.k_landmarks) if isinstance(m, KendallShape) else None
    if center is None:
        center = m.random_point(rng=rng)
    radius = RADIUS[type(m)]
    pts = make_mean_data(m, 200, radius=radius, rng=rng, center=center)
    assert np.all(m.belongs(pts, atol=1e-9))
    assert np.all(m.dist(center, pts) <= radius)


@pytest.mark.parametrize("m", MANIFOLDS, ids=IDS)
def test_mean_data_reproducible(m):
    radius = RADIUS[type(m)]
    a = make_mean_data(m, 20, radius=radius, rng=11)
    b = make_mean_data(m, 20, radius=radius, rng=11)
    np.testing.assert_array_equal(a, b)


def test_sphere_polar_angle_is_uniform():
    # Paper 001 supplement A.3.1: polar angle ~ U(0, pi/8) about the north pole.
    r = np.pi / 8
    pts = make_mean_data(Sphere(2), 5000, radius=r, rng=2)
    np.testing.assert_array_equal(default_center(Sphere(2)), [0.0, 0.0, 1.0])
    theta = np.arccos(np.clip(pts[:, 2], -1, 1))
    counts, _ = np.histogram(theta, bins=8, range=(0, r))
    assert counts.min() > 0.85 * 5000 / 8 and counts.max() < 1.15 * 5000 / 8


def test_spd_wishart_rejection_matches_paper():
    # Paper 001 supplement A.2.1: W(I/k, df=k) kept if d(X, I) < 1.5; W has mean I, so the
    # kept samples stay centred near the identity.
    m = SPD(2)
    pts = make_mean_data(m, 2000, radius=1.5, rng=3)
    assert np.all(m.dist(np.eye(2), pts) < 1.5)
    off = pts[:, 0, 1]
    assert abs(np.mean(off)) < 0.05


def test_spd_rejection_gives_clear_error_when_acceptance_too_low():
    with pytest.raises(RuntimeError, match="accepts too rarely.*larger radius"):
        make_mean_data(SPD(5), 1000, radius=0.5, rng=0)


def test_spd_rejection_cap_grows_with_n(monkeypatch):
    """Issue 13: the draw cap was absolute (2,000,000), so n = 1e6 at the paper's radius (24%
    kept) failed with "accepts too rarely". With the constants shrunk 100-fold, n = 20,000
    needs about 84,000 draws, over the absolute cap (20,000) but within 1000 per point; the
    kept radii follow the same law as plain rejection from an independent stream (two-sample
    KS, false-failure chance 1e-6)."""
    from scipy import stats

    from dpcore.data import synthetic

    monkeypatch.setattr(synthetic, "MAX_WISHART_DRAWS", 20_000)
    monkeypatch.setattr(synthetic, "_BATCH", 1_000)
    m = SPD(2)
    pts = make_mean_data(m, 20_000, radius=1.5, rng=5)
    d = m.dist(np.eye(2), pts)
    assert pts.shape == (20_000, 2, 2) and np.all(d < 1.5)
    g = np.random.default_rng(6).standard_normal((100_000, 2, 2)) / np.sqrt(2)
    ref = m.dist(np.eye(2), g @ g.mT)
    assert stats.ks_2samp(d, ref[ref < 1.5]).pvalue > 1e-6


@pytest.mark.parametrize(
    ("m", "kwargs", "exc", "match"),
    [
        (Sphere(2), {"radius": 4.0}, ValueError, "injectivity radius"),
        (KendallShape(4), {"radius": 2.0}, ValueError, "injectivity radius"),
        (Sphere(2), {"radius": 0.0}, ValueError, "`radius` must be positive"),
        (Sphere(2), {"radius": 0.5, "center": [1.0, 1.0, 0.0]}, ValueError, "not a point"),
        (Sphere(2), {"radius": 0.5, "center": [1.0, 0.0]}, ValueError, "shape"),
    ],
)
def test_mean_argument_errors(m, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        make_mean_data(m, 5, **kwargs)


def test_kendall_template_is_a_preshape():
    for k in (3, 5, 8):
        assert KendallShape(k).belongs(kendall_template(k), atol=1e-12)


# ------------------------------------------------------------- footpoint in a public region
def test_footpoint_region_draws_uniformly_in_the_cap():
    """1 - cos(rho) of a point uniform for the area in a cap of S^2 is uniform on
    [0, 1 - cos r] (Archimedes); KS test at a false-failure chance below 1e-6."""
    from scipy import stats

    m, center, radius = Sphere(2), np.array([0.0, 0.6, 0.8]), 0.4
    gen = np.random.default_rng(12)
    feet = np.array([make_regression_data(m, 3, rng=gen, footpoint_region=(center, radius))
                     .footpoint for _ in range(3000)])
    rho = m.dist(feet, center)
    assert rho.max() <= radius + 1e-12
    u = (1.0 - np.cos(rho)) / (1.0 - np.cos(radius))
    assert stats.kstest(u, "uniform").pvalue > 1e-6
    # The azimuth is uniform too (the direction is isotropic at the centre).
    e1 = np.array([1.0, 0.0, 0.0])
    e2 = np.cross(center, e1)
    phi = np.arctan2(feet @ e2, feet @ e1)
    assert stats.kstest((phi + np.pi) / (2 * np.pi), "uniform").pvalue > 1e-6


def test_footpoint_region_keeps_the_protocol_and_default_data():
    m = Sphere(2)
    d = make_regression_data(m, 40, noise=0.0, rng=3, footpoint_region=([0, 0, 1.0], 0.3))
    assert m.dist(d.footpoint, np.array([0, 0, 1.0])) <= 0.3
    np.testing.assert_allclose(m.norm(d.footpoint, d.shooting_vector), np.pi / 4)
    np.testing.assert_allclose(d.y, m.geodesic(d.footpoint, d.shooting_vector, d.x), atol=1e-12)
    # Without a region the seeded data are the paper protocol's, as before.
    a, b = make_regression_data(m, 40, rng=3), make_regression_data(m, 40, rng=3)
    np.testing.assert_array_equal(a.y, b.y)


@pytest.mark.parametrize("region, match", [(([0, 0, 1.0], 0.0), "radius"),
                                           (([0, 0, 1.0], 4.0), "radius")])
def test_footpoint_region_errors(region, match):
    with pytest.raises(ValueError, match=match):
        make_regression_data(Sphere(2), 5, rng=0, footpoint_region=region)


def test_footpoint_region_only_on_the_sphere_and_spd():
    for m in (KendallShape(4), Euclidean(2), Hyperbolic(2)):
        with pytest.raises(ValueError, match="only available on Sphere"):
            make_regression_data(m, 5, rng=0, footpoint_region=(None, 0.3))


# ---------------------------------------------------- SPD(k): footpoint in a public ball
def _sym_basis(k):
    """An orthonormal basis of the symmetric k x k matrices for tr(AB) (the metric at I)."""
    out = []
    for i in range(k):
        for j in range(i, k):
            e = np.zeros((k, k))
            e[i, j] = e[j, i] = 1.0 if i == j else 1.0 / np.sqrt(2.0)
            out.append(e)
    return out


@pytest.mark.parametrize("k", [2, 3])
def test_spd_volume_density_matches_the_differential_of_exp(k):
    """The closed-form volume density of normal coordinates at I equals sqrt(det G) with G the
    affine-invariant Gram matrix of central finite differences of X -> Exp(I, X)."""
    from dpcore.data.synthetic import spd_log_volume_density

    m, gen, h = SPD(k), np.random.default_rng(5), 1e-5
    basis = _sym_basis(k)
    for scale in (0.3, 1.5, 3.0):
        a = gen.standard_normal((k, k))
        x = scale * (a + a.T) / np.linalg.norm(a + a.T)
        p = m.exp(np.eye(k), x)
        cols = [(m.exp(np.eye(k), x + h * e) - m.exp(np.eye(k), x - h * e)) / (2 * h)
                for e in basis]
        gram = np.array([[m.inner(p, u, w) for w in cols] for u in cols])
        finite = 0.5 * np.log(np.linalg.det(gram))
        closed = spd_log_volume_density(np.linalg.eigvalsh(x))
        assert closed == pytest.approx(finite, abs=1e-6)


def _spd2_laws(radius):
    r"""CDFs (on a grid) of rho = d(C, P) and of t = |tr u| / sqrt 2, the share of the unit
    direction u of Log along the identity, for P uniform for the volume in B_radius(C) of
    SPD(2), by quadrature: in polar coordinates of T_C (t = cos of the polar angle from I, so
    uniform for the Lebesgue measure) the density is rho^2 sinhc(rho sqrt(1 - t^2) / sqrt 2)."""
    from scipy import integrate

    def dens(rho, t):
        z = rho * np.sqrt(1.0 - t * t) / np.sqrt(2.0)
        return rho**2 * (np.sinh(z) / z if z > 0 else 1.0)

    grid = np.linspace(0.0, 1.0, 801)
    rho_pdf = [integrate.quad(lambda t, g=g: dens(g * radius, t), 0, 1, epsabs=1e-13)[0]
               for g in grid]
    t_pdf = [integrate.quad(lambda rho, g=g: dens(rho, g), 0, radius, epsabs=1e-13)[0]
             for g in grid]

    def cdf(pdf, scale):
        c = integrate.cumulative_simpson(np.asarray(pdf), x=grid * scale, initial=0.0)
        return lambda v: np.interp(v, grid * scale, c / c[-1])

    return cdf(rho_pdf, radius), cdf(t_pdf, 1.0)


def test_spd_footpoint_region_draws_uniformly_for_the_volume():
    """KS tests of the footpoint's distance to the centre and of its direction's share along
    the identity against the volume-uniform law of the ball (quadrature of the Jacobi
    density), on a ball of radius 3 about a centre other than I; each at p > 5e-7 (false
    failure below 1e-6 together). The same draws reject the law that ignores the curvature
    (uniform in the tangent ball), so the test can fail."""
    from scipy import stats

    from dpcore.manifolds.spd import sym_funm

    m, radius = SPD(2), 3.0
    c = np.array([[2.0, 0.6], [0.6, 0.7]])
    gen = np.random.default_rng(21)
    feet = np.array([make_regression_data(m, 2, noise=0.0, rng=gen,
                                          footpoint_region=(c, radius)).footpoint
                     for _ in range(3000)])
    rho = m.dist(c, feet)
    assert rho.max() <= radius + 1e-9
    inv_half = np.linalg.inv(sym_funm(c, np.sqrt))
    logs = m.log(np.eye(2), inv_half @ feet @ inv_half)  # Log at I of the moved points
    t = np.abs(np.trace(logs, axis1=-2, axis2=-1)) / np.sqrt(2.0) / rho
    rho_cdf, t_cdf = _spd2_laws(radius)
    assert stats.kstest(rho, rho_cdf).pvalue > 5e-7
    assert stats.kstest(t, t_cdf).pvalue > 5e-7
    assert stats.kstest(rho, lambda v: (np.asarray(v) / radius) ** 3).pvalue < 1e-6
    assert stats.kstest(t, "uniform").pvalue < 1e-6


def test_spd_footpoint_region_protocol():
    """With a region: footpoint in the ball, shooting vector of length 0.5 tangent at it,
    responses on the geodesic without noise, the same covariates as the paper protocol."""
    from dpcore.data.synthetic import SPD_REGION_SHOOTING_LENGTH

    m = SPD(2)
    d = make_regression_data(m, 40, noise=0.0, rng=3, footpoint_region=(None, 0.1))
    assert m.dist(np.eye(2), d.footpoint) <= 0.1
    assert m.norm(d.footpoint, d.shooting_vector) == pytest.approx(SPD_REGION_SHOOTING_LENGTH)
    assert m.is_tangent(d.footpoint, d.shooting_vector, atol=1e-12)
    np.testing.assert_allclose(d.y, m.geodesic(d.footpoint, d.shooting_vector, d.x),
                               atol=1e-12)
    np.testing.assert_array_equal(d.x, make_regression_data(m, 40, rng=3).x)
    noisy = make_regression_data(m, 40, noise=0.05, rng=3, footpoint_region=(None, 0.1))
    assert np.all(m.belongs(noisy.y, atol=1e-10))
    np.testing.assert_array_equal(noisy.footpoint, d.footpoint)


@pytest.mark.parametrize("k", [2, 3])
def test_spd_paper_protocol_is_unchanged_without_a_region(k):
    """Without ``footpoint_region`` the seeded SPD data follow paper 002 app. F step by step
    (x, then p and q by random_point, v = Log(p, q), tangent noise): the recorded outputs of
    the paper protocol do not move."""
    m = SPD(k)
    d = make_regression_data(m, 25, noise=0.01, rng=11)
    gen = np.random.default_rng(11)
    x = gen.uniform(0.0, 1.0, size=25)
    p, q = m.random_point(rng=gen), m.random_point(rng=gen)
    clean = m.geodesic(p, m.log(p, q), x)
    y = m.exp(clean, 0.01 * m.random_tangent(clean, gen))
    np.testing.assert_array_equal(d.x, x)
    np.testing.assert_array_equal(d.y, y)


@pytest.mark.parametrize("region, match", [((None, 0.0), "radius"), ((None, np.inf), "radius"),
                                           ((np.zeros((2, 2)), 0.3), "centre"),
                                           ((np.eye(3), 0.3), "centre")])
def test_spd_footpoint_region_errors(region, match):
    with pytest.raises(ValueError, match=match):
        make_regression_data(SPD(2), 5, rng=0, footpoint_region=region)
