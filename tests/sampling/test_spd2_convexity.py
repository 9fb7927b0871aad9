"""The proven convexity-defect bound on SPD(2) (dpcore.sampling.spd2_convexity): the
acceleration formula against finite differences of the matrix curve, its bound over directions,
the path, and the theorem g(z0) >= (E(z0) - E(z1) - Delta) / rho on random data and lines."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import expm

from dpcore.data import make_regression_data
from dpcore.manifolds import SPD
from dpcore.sampling.spd2_chart import SPD2Chart, clipped_fit, energy, frame_gradient, huber
from dpcore.sampling.spd2_convexity import (
    acceleration,
    acceleration_bound,
    convexity_path,
    gradient_lower_bound,
)

SPD2 = SPD(2)
R2 = np.sqrt(2.0)
E1 = np.diag([1.0, -1.0]) / R2
E2 = np.array([[0.0, 1.0], [1.0, 0.0]]) / R2


def whitened_acceleration(a, b, b_vel, h=1e-4):
    """The covariant acceleration of u -> e^{ua/2} e^{b + u b'} e^{ua/2} at u = 0, whitened at
    c(0) = e^b (c^-1/2 (c'' - c' c^-1 c') c^-1/2), by central differences."""
    def c(u):
        half = expm(0.5 * u * a)
        return half @ expm(b + u * b_vel) @ half
    c0, cp, cm = c(0.0), c(h), c(-h)
    c1, c2 = (cp - cm) / (2 * h), (cp - 2 * c0 + cm) / h**2
    acc = c2 - c1 @ np.linalg.solve(c0, c1)
    root = expm(-0.5 * b)
    return root @ acc @ root


@pytest.mark.parametrize("lam", [0.02, 0.3, 0.9, 1.1, 2.0])
def test_acceleration_is_the_curves_covariant_acceleration(lam):
    rng = np.random.default_rng(int(lam * 100))
    b = lam * R2 * E1                      # eigenvalues +-lam, along e1
    for _ in range(5):
        a1, a2, b1, b2 = rng.normal(size=4)
        a, b_vel = a1 * E1 + a2 * E2, b1 * E1 + b2 * E2
        got = acceleration([a1, a2], [b1, b2], lam)
        want = whitened_acceleration(a, b, b_vel)
        np.testing.assert_allclose(want, got[0] * E1 + got[1] * E2, rtol=0, atol=2e-5)
        # the log-determinant factor is flat: adding trace parts changes nothing
        shift = rng.normal() * np.eye(2)
        np.testing.assert_allclose(
            whitened_acceleration(a + shift, b + 0.3 * np.eye(2), b_vel - shift),
            want, rtol=0, atol=2e-5)


def test_acceleration_of_a_hypercycle():
    # b' = 0, a across b: the orbit of a transvection at distance r = sqrt2 lam from its axis
    # is an equidistant curve of curvature sqrt(k) tanh(sqrt(k) r), speed cosh(sqrt(k) r)|a|,
    # k = 1/2.
    lam = 0.7
    got = acceleration([0.0, 1.3], [0.0, 0.0], lam)
    k = 0.5
    r = R2 * lam
    want = np.sqrt(k) * np.tanh(np.sqrt(k) * r) * (np.cosh(np.sqrt(k) * r) * 1.3) ** 2
    assert np.hypot(*got) == pytest.approx(want, rel=1e-12)


def test_acceleration_bound_holds_in_every_direction_and_grows():
    rng = np.random.default_rng(0)
    lams = np.concatenate([np.linspace(0.0, 3.0, 61), [0.999999, 1.0, 1.000001]])
    m = acceleration_bound(lams)
    order = np.argsort(lams)
    assert np.all(np.diff(m[order]) >= 0) and m[order][0] == 0.0
    assert abs(acceleration_bound(1 - 1e-12) - acceleration_bound(1 + 1e-12)) < 1e-10
    for lam, bound in zip(lams, m, strict=True):
        x = rng.normal(size=(4000, 4))
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        acc = np.linalg.norm(acceleration(x[:, :2], x[:, 2:], np.full(4000, lam)), axis=1)
        assert np.all(acc <= bound)
        if lam > 0:
            assert np.max(acc) > 0.6 * bound      # not a vacuous bound
    assert acceleration_bound(1e-3) / 1e-3 == pytest.approx(1.55, abs=0.01)


def random_bundle(rng, m, radius, speed):
    """``m`` footpoints within ``radius`` of I and vectors of norm up to ``speed``."""
    chart = SPD2Chart(np.eye(2))
    z = rng.normal(size=(m, 6))
    for cols, r in ((slice(0, 3), radius), (slice(3, 6), speed)):
        z[:, cols] *= (r * rng.uniform(0, 1, m) / np.linalg.norm(z[:, cols], axis=1))[:, None]
    return z, chart.to_bundle(z)


def test_path_runs_from_start_to_end_along_a_geodesic():
    rng = np.random.default_rng(1)
    _, (p, v) = random_bundle(rng, 12, 1.0, 2.0)
    path = convexity_path(p[:6], v[:6], p[6:], v[6:])
    p0, v0 = path.point(0.0)
    p1, v1 = path.point(1.0)
    np.testing.assert_allclose(p0, p[:6], atol=1e-12)
    np.testing.assert_allclose(v0, v[:6], atol=1e-12)
    np.testing.assert_allclose(p1, p[6:], atol=1e-10)
    np.testing.assert_allclose(v1, v[6:], atol=1e-10)
    dist = SPD2.dist(p[:6], p[6:])
    for s in (0.25, 0.5, 0.8):
        ps, vs = path.point(s)
        np.testing.assert_allclose(SPD2.dist(p[:6], ps), s * dist, rtol=1e-9)
        speeds = SPD2.norm(ps, vs)
        assert np.all(speeds <= np.maximum(SPD2.norm(p[:6], v[:6]),
                                           SPD2.norm(p[6:], v[6:])) * (1 + 1e-12))
    # the start velocity's Sasaki norm: footpoint speed d(p0, p1), vector part |B1 - B0|
    assert np.all(path.length >= dist * (1 - 1e-12))


def frame_coordinates(m):
    """Coordinates of symmetric 2 x 2 matrices in (E1, E2) (their traceless parts)."""
    return np.stack([np.sum(m * E1, axis=(-2, -1)), np.sum(m * E2, axis=(-2, -1))], axis=-1)


def in_frame(x, along, across):
    """Coordinates (..., 2) along and across."""
    return np.stack([np.sum(x * along, 1), np.sum(x * across, 1)], 1)


@pytest.mark.parametrize("s", [0.0, 0.4, 0.9])
def test_each_terms_acceleration_along_the_path_is_the_formulas(s):
    """The prediction c(s) = Exp_{p(s)}(t v(s)) accelerates (covariantly, finite differences
    of the matrix curve) as the formula at a = L0, b = t B(s)0, b' = t (B1 - B0)0, and within
    M(t lambda_bar) (|L0|^2 + t^2 |(B1 - B0)0|^2)."""
    rng = np.random.default_rng(int(10 * s) + 7)
    _, (p, v) = random_bundle(rng, 16, 1.0, 2.0)
    path = convexity_path(p[:8], v[:8], p[8:], v[8:])
    h = 1e-4
    for t in (0.3, 1.0):
        def curve(u, t=t):
            ps, vs = path.point(u)
            return SPD2.exp(ps, t * vs)
        c0, cp, cm = curve(s), curve(s + h), curve(s - h)
        c1, c2 = (cp - cm) / (2 * h), (cp - 2 * c0 + cm) / h**2
        acc = c2 - c1 @ np.linalg.solve(c0, c1)
        w, u = np.linalg.eigh(c0)
        root = (u / np.sqrt(w)[:, None, :]) @ np.swapaxes(u, -1, -2)
        fd = np.linalg.norm(root @ acc @ root, axis=(-2, -1))
        a = frame_coordinates(path.log)
        b = t * frame_coordinates(path.start + s * (path.end - path.start))
        bv = t * frame_coordinates(path.end - path.start)
        along = b / np.linalg.norm(b, axis=1, keepdims=True)
        across = np.stack([-along[:, 1], along[:, 0]], axis=1)
        lam = np.linalg.norm(b, axis=1) / R2
        got = np.linalg.norm(acceleration(in_frame(a, along, across), in_frame(bv, along, across),
                                          lam), axis=1)
        np.testing.assert_allclose(fd, got, rtol=1e-4, atol=1e-6)
        lam_bar = t * np.maximum(np.linalg.norm(frame_coordinates(path.start), axis=1),
                                 np.linalg.norm(frame_coordinates(path.end), axis=1)) / R2
        x2 = np.sum(a * a, 1) + np.sum(bv * bv, 1)
        assert np.all(got <= acceleration_bound(lam_bar) * x2)


def energy_along(path, s, t, y, tau):
    p, v = path.point(s)
    pred = SPD2.exp(p[:, None], t[None, :, None, None] * v[:, None])
    r = SPD2.dist(pred, y[None])
    return np.mean(huber(r, tau), axis=1)


@pytest.mark.parametrize("radius, speed", [(0.1, 0.55), (0.5, 1.0), (1.0, 2.0)])
def test_the_defect_bounds_the_energys_departure_from_convexity(radius, speed):
    """On lines between random points of the support, for data about I (theorems: no
    exception allowed): -E'(0) >= E(z0) - E(z1) - Delta, and pointwise E''(s) >= -2 Delta
    (Delta is half the bound of E'' integrated against 1 - s)."""
    rng = np.random.default_rng(int(10 * radius + speed))
    data = make_regression_data(SPD2, 60, noise=0.1, rng=3, footpoint_region=(np.eye(2), 0.3))
    t, y, tau = np.asarray(data.x, float), np.asarray(data.y, float), 0.2
    _, (p, v) = random_bundle(rng, 160, radius, speed)
    path = convexity_path(p[:80], v[:80], p[80:], v[80:])
    h = 1e-5
    slope = -(energy_along(path, h, t, y, tau) - energy_along(path, -h, t, y, tau)) / (2 * h)
    gap = energy_along(path, 0.0, t, y, tau) - energy_along(path, 1.0, t, y, tau)
    defect = path.defect(t, tau)
    assert np.all(slope >= gap - defect - 1e-7)
    assert np.all(defect > 0)
    step = 1.0 / 40
    e = np.stack([energy_along(path, s, t, y, tau) for s in np.linspace(0, 1, 41)])
    second = np.diff(e, 2, axis=0) / step**2
    assert np.all(second >= -2 * defect[None] - 1e-5)
    # term by term (n = 1): E_i'' >= -2 Delta_i, and single terms do have concave stretches
    # on the wider supports, so the defect is needed and these assertions can fail
    concave = 0
    for i in range(t.size):
        ti, yi = t[i:i + 1], y[i:i + 1]
        ei = np.stack([energy_along(path, s, ti, yi, tau) for s in np.linspace(0, 1, 41)])
        second_i = np.diff(ei, 2, axis=0) / step**2
        assert np.all(second_i >= -2 * path.defect(ti, tau)[None] - 1e-5)
        concave += int(np.sum(np.min(second_i, axis=0) < -1e-4))
    if radius >= 0.5:
        assert concave > 0


def test_gradient_lower_bound_is_below_the_gradient_norm():
    rng = np.random.default_rng(5)
    data = make_regression_data(SPD2, 120, noise=0.05, rng=0, footpoint_region=(np.eye(2), 0.1))
    t, y, tau = np.asarray(data.x, float), np.asarray(data.y, float), 0.175
    chart = SPD2Chart(np.eye(2))
    ytil, logdet = chart.responses(y)
    fit = clipped_fit(t, ytil, logdet, tau)
    z, (p, v) = random_bundle(rng, 300, 0.5, 1.0)
    pf, vf = (x[0] for x in chart.to_bundle(fit[None]))
    bound = gradient_lower_bound(p, v, np.broadcast_to(pf, p.shape),
                                 np.broadcast_to(vf, v.shape), t, tau,
                                 energy(z, t, ytil, logdet, tau),
                                 energy(fit[None], t, ytil, logdet, tau))
    g = np.linalg.norm(frame_gradient(z, t, ytil, logdet, tau), axis=1)
    assert np.all(bound <= g * (1 + 1e-9))
    assert np.median(bound / g) > 0.3     # and it is a useful fraction of g


def hyperbolic_triangle_area(x, y, z):
    """Area of the geodesic triangle of unimodular SPD matrices x, y, z (curvature -1/2):
    (pi - angle sum) / K, the angles from the log maps at the vertices."""
    def angle(o, u, w):
        lu, lw = SPD2.log(o, u), SPD2.log(o, w)
        cos = SPD2.inner(o, lu, lw) / (SPD2.norm(o, lu) * SPD2.norm(o, lw))
        return np.arccos(np.clip(cos, -1.0, 1.0))
    return (np.pi - angle(x, y, z) - angle(y, z, x) - angle(z, x, y)) / 0.5


def test_triangle_area_bound_holds():
    from dpcore.sampling.spd2_convexity import triangle_area_bound

    rng = np.random.default_rng(2)
    ratios = []
    for scale in (0.05, 0.5, 2.0):
        for _ in range(60):
            pts = []
            for _ in range(3):
                a = rng.normal(size=2) * scale
                pts.append(expm(a[0] * E1 + a[1] * E2))
            x, y, z = pts
            area = hyperbolic_triangle_area(x, y, z)
            a, b, opp = SPD2.dist(x, y), SPD2.dist(x, z), SPD2.dist(y, z)
            bound = triangle_area_bound(a, a, b, b, opp)
            assert area <= bound
            # loose brackets on the sides are still bounds
            assert area <= triangle_area_bound(0.9 * a, 1.1 * a, 0.8 * b, b, 1.2 * opp)
            ratios.append(area / bound)
    assert np.median(ratios) > 0.1      # of the right order for the triangles tried


@pytest.mark.parametrize("half_width", [0.002, 0.02, 0.1])
def test_leaf_bound_is_below_the_gradient_norm_everywhere_on_the_leaf(half_width):
    from dpcore.sampling.spd2_affine import residual_norm_range, response_enclosure
    from dpcore.sampling.spd2_convexity import leaf_gradient_bound

    rng = np.random.default_rng(int(half_width * 1000))
    data = make_regression_data(SPD2, 80, noise=0.05, rng=1, footpoint_region=(np.eye(2), 0.1))
    t, y, tau = np.asarray(data.x, float), np.asarray(data.y, float), 0.175
    chart = SPD2Chart(np.eye(2))
    ytil, logdet = chart.responses(y)
    fit = clipped_fit(t, ytil, logdet, tau)
    e_ref = float(energy(fit[None], t, ytil, logdet, tau)[0])
    m = 40
    zc, _ = random_bundle(rng, m, 0.5, 1.0)
    rot = np.linalg.qr(rng.normal(size=(m, 6, 6)))[0]
    basis = rot * half_width * rng.uniform(0.5, 1.0, (m, 1, 6))
    zslack = np.full((m, 6), 1e-12)
    lo, _ = residual_norm_range(zc, basis, zslack, t, response_enclosure(chart.T, y))
    e_lo = np.mean(huber(lo, tau), axis=1)
    e_c = energy(zc, t, ytil, logdet, tau)
    g_c = np.linalg.norm(frame_gradient(zc, t, ytil, logdet, tau), axis=1)
    bound = leaf_gradient_bound(chart, zc, basis, zslack, fit, t, tau, e_lo, e_ref,
                                energy_center=e_c, gradient_center=g_c)
    plain = leaf_gradient_bound(chart, zc, basis, zslack, fit, t, tau, e_lo, e_ref)
    assert np.all(plain <= bound)
    eps = rng.uniform(-1, 1, (m, 30, 6))
    eps[:, :10] = np.sign(eps[:, :10])                      # vertices
    z = zc[:, None] + np.einsum("mkj,msj->msk", basis, eps)
    flat = z.reshape(-1, 6)
    g = np.linalg.norm(frame_gradient(flat, t, ytil, logdet, tau), axis=1).reshape(m, 30)
    assert np.all(bound[:, None] <= g)
    assert np.all(e_lo[:, None] <= energy(flat, t, ytil, logdet, tau).reshape(m, 30) + 1e-15)
    # the leaf's bound against the pointwise one at its points: it loses the leaf's size
    p, v = chart.to_bundle(flat)
    pf, vf = (x[0] for x in chart.to_bundle(fit[None]))
    point = gradient_lower_bound(p, v, np.broadcast_to(pf, p.shape), np.broadcast_to(vf, v.shape),
                                 t, tau, energy(flat, t, ytil, logdet, tau), e_ref).reshape(m, 30)
    assert np.all(bound[:, None] <= point * (1 + 1e-9) + 1e-15)
    if half_width <= 0.02:
        far = np.min(point, axis=1) > 0
        assert np.median(bound[far] / np.min(point[far], axis=1)) > 0.5
