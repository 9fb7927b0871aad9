"""The refined Lipschitz envelope (dpcore.sampling.envelope): its bounds hold at dense
evaluations, its pieces (chart Jacobian, Lipschitz constants) agree with independent
computations, and its draws follow the target (KS against quadrature, threshold 1e-6)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dpcore.data import make_mean_data
from dpcore.learning.frechet import frechet_mean_gradient
from dpcore.manifolds import SPD, Euclidean, KendallShape, Sphere
from dpcore.mechanisms.base import Ball
from dpcore.mechanisms.kng import KNormGradient, frechet_mean_exact
from dpcore.sampling.envelope import (
    NormalChart,
    RefinedEnvelope,
    frechet_gradient_lipschitz,
    predict_refined_cost,
)

from .reference import P_THRESHOLD

NORTH = np.array([0.0, 0.0, 1.0])
CASES = [(Sphere(2), NORTH, 0.4), (SPD(2), np.eye(2), 1.0), (Euclidean(2), np.zeros(2), 1.0),
         (KendallShape(4), None, 0.3)]


def center_of(m, c):
    return m.random_point(rng=0) if c is None else c


def data(m, c, n, r, seed):
    if isinstance(m, KendallShape):
        rng = np.random.default_rng(seed)
        v = m.random_tangent(np.broadcast_to(c, (n, *m.point_shape)), rng)
        v *= (r * rng.random(n) / m.norm(np.broadcast_to(c, v.shape), v))[:, None, None]
        return m.exp(c, v)
    return make_mean_data(m, n, radius=r, rng=seed) if not isinstance(m, Euclidean) else (
        c + r * 0.5 * np.random.default_rng(seed).uniform(-1, 1, (n, 2)))


@pytest.mark.parametrize("m, c, r", CASES, ids=lambda v: repr(v)[:12])
def test_envelope_bounds_dense_evaluations(m, c, r):
    """Every cell's bound is >= the target f(z) J(u) at 200 random points of the cell."""
    c = center_of(m, c)
    pts = data(m, c, 30, r, 1)

    def g(z):
        return m.norm(z, frechet_mean_gradient(m, z, pts))

    chart = NormalChart(m, c)
    env = RefinedEnvelope(chart, r, g, frechet_gradient_lipschitz(m, r), sigma=0.02,
                          max_cells=3000, draws=50)
    rng = np.random.default_rng(2)
    pick = rng.choice(env.centers.shape[0], size=min(300, env.centers.shape[0]), replace=False)
    u = (env.centers[pick][:, None] + env.half[pick][:, None, None]
         * rng.uniform(-1, 1, (pick.size, 200, chart.dim))).reshape(-1, chart.dim)
    cell = np.repeat(pick, 200)
    inside = np.linalg.norm(u, axis=-1) <= r
    u, cell = u[inside], cell[inside]
    log_t = -g(chart.to_point(u)) / env.sigma + chart.log_jacobian(u)
    assert np.all(log_t <= env.log_bound[cell] + 1e-9)


@pytest.mark.parametrize("m, c", [(Sphere(2), NORTH), (KendallShape(4), None), (SPD(2), np.eye(2))],
                         ids=["sphere", "kendall", "spd2"])
def test_chart_jacobian_matches_finite_differences(m, c):
    """J(u) = |det d exp| against a finite-difference Jacobian in orthonormal frames."""
    c = center_of(m, c)
    chart = NormalChart(m, c)
    rng = np.random.default_rng(3)
    for _ in range(3):
        u = rng.normal(size=chart.dim)
        u *= 0.6 / np.linalg.norm(u)
        z = chart.to_point(u[None])[0]
        frame = m.orthonormal_basis(z)
        eps = 1e-6
        cols = []
        for a in range(chart.dim):
            du = np.zeros(chart.dim)
            du[a] = eps
            dz = (chart.to_point((u + du)[None])[0] - chart.to_point((u - du)[None])[0]) / (2 * eps)
            cols.append(m.inner(z, frame, dz))
        det = abs(np.linalg.det(np.array(cols)))
        assert np.log(det) == pytest.approx(chart.log_jacobian(u[None])[0], abs=1e-5)


@pytest.mark.parametrize("m, c, r", CASES[:3], ids=["sphere", "spd2", "euclidean"])
def test_lipschitz_constant_of_the_gradient_norm(m, c, r):
    """|g(z) - g(w)| <= L d(z, w) on random pairs of the ball (adversarial-ish: data on the
    boundary, pairs close and far)."""
    pts = data(m, c, 20, r, 4)
    chart = NormalChart(m, c)
    rng = np.random.default_rng(5)
    u = rng.normal(size=(4000, chart.dim))
    u *= (r * rng.random(4000) ** (1 / chart.dim) / np.linalg.norm(u, axis=-1))[:, None]
    z = chart.to_point(u)
    w = chart.to_point(np.clip(u + 0.05 * rng.normal(size=u.shape), -r, r) * 0.999)
    keep = m.dist(w, c) <= r
    z, w = z[keep], w[keep]
    gz = m.norm(z, frechet_mean_gradient(m, z, pts))
    gw = m.norm(w, frechet_mean_gradient(m, w, pts))
    assert np.all(np.abs(gz - gw) <= frechet_gradient_lipschitz(m, r) * m.dist(z, w) + 1e-12)


@pytest.mark.statistical
def test_refined_draws_match_quadrature_on_the_sphere():
    m, r = Sphere(2), 0.5
    ys = data(m, NORTH, 40, r, 6)
    kng = KNormGradient(manifold=m, epsilon=1.0, sensitivity=0.004)  # concentrated target
    res = frechet_mean_exact([kng], ys, size=3000, rng=7, support=Ball.make(m, NORTH, r))[0]
    assert res.diagnostics["acceptance"] > 0.2  # a violation would have raised
    # CDF of the distance to the data's Fréchet mean by quadrature on a polar grid about it.
    from dpcore.learning import frechet_mean

    mu = frechet_mean(m, ys)
    e1 = np.cross(mu, [1.0, 0, 0])
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(mu, e1)
    th = np.linspace(0, 0.3, 1501)[1:] - 0.0001
    ph = np.linspace(0, 2 * np.pi, 361)[:-1]
    tt, pp = np.meshgrid(th, ph, indexing="ij")
    z = (np.cos(tt)[..., None] * mu + np.sin(tt)[..., None]
         * (np.cos(pp)[..., None] * e1 + np.sin(pp)[..., None] * e2))
    inside = z @ NORTH >= np.cos(r)
    zf = z.reshape(-1, 3)  # row by row, in cache-sized blocks (the same values, faster)
    g = np.concatenate([np.linalg.norm(frechet_mean_gradient(m, zf[i:i + 5000], ys), axis=-1)
                        for i in range(0, len(zf), 5000)]).reshape(tt.shape)
    w = np.where(inside, np.exp(-g / kng.sigma), 0.0) * np.sin(tt)
    cdf = np.concatenate([[0.0], np.cumsum(w.sum(axis=1))])
    cdf /= cdf[-1]
    edges = np.concatenate([[0.0], th + 0.0001])
    d = m.dist(res.values, mu)
    assert d.max() < 0.3  # the grid holds the whole law (tail below e^-30 beyond)
    assert stats.kstest(d, lambda t: np.interp(t, edges, cdf)).pvalue > P_THRESHOLD


def test_prediction_is_public_and_matches_the_cell_count_scale():
    m = Sphere(2)
    chart = NormalChart(m, NORTH)
    cells, per_draw = predict_refined_cost(chart, 0.4, 1.0, 0.001, draws=10)
    assert 10 < cells < 5000 and 1 <= per_draw < 50


# ---------------------------------------------------------------------- joint regression in R^d
def _line_data(n, d, seed, outliers=0):
    rng = np.random.default_rng(seed)
    t = rng.uniform(size=n)
    y = 0.3 + 0.5 * t[:, None] + 0.1 * rng.standard_normal((n, d))
    y[:outliers] += 3.0  # far responses: their residuals are clipped almost everywhere
    return t, y


def _clipped_gradient(p, v, t, y, tau):
    """G(z) = -(1/n) sum_i (1, t_i) (x) clip_tau(y_i - p - t_i v), written out independently."""
    r = y[None] - p[:, None] - t[None, :, None] * v[:, None]
    norm = np.linalg.norm(r, axis=-1, keepdims=True)
    r = r * np.minimum(1.0, tau / np.maximum(norm, 1e-300))
    return -r.mean(axis=1), -(t[None, :, None] * r).mean(axis=1)


@pytest.mark.parametrize("d", [1, 2])
def test_joint_regression_lipschitz_constant(d):
    """|g(z) - g(w)| <= (1 + mean t^2) |z - w| on random pairs, near and far, with clipped
    outliers; the library's gradient agrees with the formula written out here."""
    from dpcore.learning.regression import regression_gradient
    from dpcore.sampling.envelope import regression_joint_lipschitz

    t, y = _line_data(25, d, 8, outliers=4)
    tau = 0.3
    rng = np.random.default_rng(9)
    z = rng.normal(scale=1.5, size=(6000, 2, d))
    w = z + rng.normal(size=z.shape) * rng.choice([1e-3, 0.05, 1.0], size=(6000, 1, 1))
    gp, gv = _clipped_gradient(z[:, 0], z[:, 1], t, y, tau)
    lp, lv = regression_gradient(Euclidean(d), z[:, 0], z[:, 1], t, y, tau=tau)
    np.testing.assert_allclose(lp, gp, atol=1e-13)
    np.testing.assert_allclose(lv, gv, atol=1e-13)
    g_z = np.sqrt(np.sum(gp**2 + gv**2, axis=-1))
    hp, hv = _clipped_gradient(w[:, 0], w[:, 1], t, y, tau)
    g_w = np.sqrt(np.sum(hp**2 + hv**2, axis=-1))
    dist = np.linalg.norm((z - w).reshape(len(z), -1), axis=-1)
    lip = regression_joint_lipschitz(t)
    assert lip == pytest.approx(1 + np.mean(t**2)) and lip <= 2
    ratio = np.abs(g_z - g_w) / dist
    assert np.all(ratio <= lip + 1e-12)
    assert ratio.max() > 0.3 * lip  # the pairs probe the constant, not only flat regions


def test_product_ball_domain_misses_projection_and_layout():
    from dpcore.sampling.envelope import ProductBallDomain

    dom = ProductBallDomain(np.array([0.5]), 0.9, 1.8)
    rng = np.random.default_rng(10)
    centers = rng.uniform(-3, 3, size=(400, 2))
    half = rng.uniform(0.01, 0.5, size=400)
    miss = dom.misses(centers, half)
    pts = centers[:, None] + half[:, None, None] * rng.uniform(-1, 1, (400, 500, 2))
    hit = dom.inside(pts.reshape(-1, 2)).reshape(400, 500).any(axis=1)
    assert not np.any(miss & hit)  # never drops a cube that meets the domain
    # exact: the clamped nearest point of a kept cube is inside
    near = np.clip(np.zeros(2), centers - half[:, None], centers + half[:, None])
    assert np.all(dom.inside(near[~miss]))
    a, b = rng.normal(scale=3, size=(2, 1000, 2))
    pa, pb = dom.project(a), dom.project(b)
    assert np.all(dom.inside(pa * (1 - 1e-12)))
    assert np.all(np.linalg.norm(pa - pb, axis=-1) <= np.linalg.norm(a - b, axis=-1) + 1e-12)
    inside = a[dom.inside(a)]
    np.testing.assert_array_equal(dom.project(inside), inside)
    z = dom.to_point(np.array([[0.1, -0.2]]))
    np.testing.assert_allclose(z, [[[0.6], [-0.2]]])


def _joint_target(d=1, n=60, seed=11):
    t, y = _line_data(n, d, seed, outliers=2)
    tau, center, radius = 0.3, np.full(d, 0.5), 0.9
    max_norm = 2 * radius

    def g(z):
        gp, gv = _clipped_gradient(z[:, 0], z[:, 1], t, y, tau)
        return np.sqrt(np.sum(gp**2 + gv**2, axis=-1))

    return t, y, tau, center, radius, max_norm, g


def test_joint_envelope_bounds_dense_evaluations():
    """Every cell's bound is >= the joint KNG target at 200 random points of the cell."""
    from dpcore.sampling.envelope import (
        ProductBallDomain,
        RefinedEnvelope,
        regression_joint_lipschitz,
    )

    t, y, tau, center, radius, max_norm, g = _joint_target()
    dom = ProductBallDomain(center, radius, max_norm)
    env = RefinedEnvelope(None, None, g, regression_joint_lipschitz(t), 0.01, domain=dom,
                          max_cells=4000, draws=50)
    rng = np.random.default_rng(12)
    pick = rng.choice(env.centers.shape[0], size=min(400, env.centers.shape[0]), replace=False)
    u = (env.centers[pick][:, None] + env.half[pick][:, None, None]
         * rng.uniform(-1, 1, (pick.size, 200, 2))).reshape(-1, 2)
    cell = np.repeat(pick, 200)
    keep = dom.inside(u)
    log_t = -g(dom.to_point(u[keep])) / env.sigma
    assert np.all(log_t <= env.log_bound[cell[keep]] + 1e-9)


@pytest.mark.statistical
def test_refined_joint_draws_match_quadrature_on_the_line():
    """Exact joint KNG on R^1 (refined envelope, the library's release path) against the
    target's footpoint and vector marginals by midpoint quadrature on the product domain."""
    from dpcore.mechanisms.kng import regression_joint_exact

    t, y, tau, center, radius, max_norm, g = _joint_target()
    kng = KNormGradient(manifold=Euclidean(1), epsilon=4.0, sensitivity=np.hypot(0.01, 0.01))
    res = regression_joint_exact([kng], t, y, size=3000, rng=13, tau=tau,
                                 support=Ball.make(Euclidean(1), center, radius),
                                 max_norm=max_norm)[0]
    assert res.exact and "refined" in res.sampler
    assert res.diagnostics["acceptance"] > 0.05  # a violation would have raised
    hp, hv = 0.9 * 2 / 1200, 1.8 * 2 / 2400
    p = center[0] - radius + hp * (np.arange(1200) + 0.5)
    v = -max_norm + hv * (np.arange(2400) + 0.5)
    pp, vv = np.meshgrid(p, v, indexing="ij")
    z = np.stack([pp.ravel(), vv.ravel()], axis=-1)[:, :, None]

    def g_line(z):
        """g on R^1 from (points, n) arrays: _clipped_gradient's formula without its size-1
        coordinate axis (2-3x faster on the 2.9 million nodes; checked against g below)."""
        r = y[:, 0] - z[:, 0] - t * z[:, 1]
        r = r * np.minimum(1.0, tau / np.maximum(np.abs(r), 1e-300))
        return np.sqrt(r.mean(axis=1) ** 2 + (t * r).mean(axis=1) ** 2)

    np.testing.assert_allclose(g_line(z[::97]), g(z[::97]), rtol=1e-13)
    gz = np.concatenate([g_line(z[i:i + 20_000]) for i in range(0, len(z), 20_000)])
    w = np.exp(-(gz - gz.min()) / kng.sigma).reshape(pp.shape)
    pvalues = []
    for axis, grid, h, vals in ((1, p, hp, res.values[:, 0, 0]), (0, v, hv, res.values[:, 1, 0])):
        mass = w.sum(axis=axis)
        cdf = np.concatenate([[0.0], np.cumsum(mass)]) / mass.sum()
        edges = np.concatenate([grid - h / 2, [grid[-1] + h / 2]])
        pvalues.append(stats.kstest(vals, lambda s, e=edges, c=cdf: np.interp(s, e, c)).pvalue)
    print(f"\nrefined joint KNG on R^1: KS p-values {pvalues}, acceptance "
          f"{res.diagnostics['acceptance']:.3f}, cells {res.diagnostics['envelope_cells']}")
    assert min(pvalues) > P_THRESHOLD / 2
