"""The tangent bundle of S² in the geodesic's own coordinates (dpcore.sampling.sphere_native,
issue 28): Rodrigues' formula against scipy, the 1-Lipschitz exponential map of SO(3), the
volume density against the Sasaki volume in closed form, the frame form of g against the
library, the cap bound below g at sampled points of random boxes (also across s = 0, near
rotations by pi and with data near the cut locus), a bound for a smaller box violated on the
larger one (the check has power), the compiled kernel against numpy, and the public lattice."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from dpcore.learning.regression import regression_gradient
from dpcore.manifolds import Sphere
from dpcore.sampling.sphere_native import (
    SINC1,
    NativeLattice,
    bundle_points,
    cap_lower_bound,
    frame_gradient,
    log_volume_bound,
    log_volume_density,
    rotation_matrix,
)

S2 = Sphere(2)


def _library_g(z, t, y, tau):
    p, v = bundle_points(z)
    gp, gv = regression_gradient(S2, p, v, t, y, tau=tau)
    return np.sqrt(np.sum(gp * gp, axis=-1) + np.sum(gv * gv, axis=-1))


def _rotvecs(rng, m, top=math.pi):
    w = rng.normal(size=(m, 3))
    return w * (rng.uniform(0, top, m) / np.linalg.norm(w, axis=1))[:, None]


def _problem(rng, n=None, signed=False):
    n = int(rng.integers(4, 60)) if n is None else n
    t = rng.uniform(-1, 1, n) if signed else rng.uniform(0, 1, n)
    y = rng.normal(size=(n, 3))
    return t, y / np.linalg.norm(y, axis=1, keepdims=True), float(rng.uniform(0.05, 1.5))


def test_rodrigues_matches_scipy_and_is_a_rotation():
    rng = np.random.default_rng(1)
    w = np.concatenate([_rotvecs(rng, 400), _rotvecs(rng, 50, 1e-3), np.zeros((1, 3))])
    rot = rotation_matrix(w)
    assert np.allclose(rot, Rotation.from_rotvec(w).as_matrix(), atol=2e-15)
    assert np.allclose(rot @ rot.transpose(0, 2, 1), np.eye(3), atol=1e-15)
    assert np.allclose(np.linalg.det(rot), 1.0, atol=1e-14)


def test_exp_of_so3_is_one_lipschitz():
    """The proof's step (i): the angle of R(w1)^T R(w2) is at most |w1 - w2|."""
    rng = np.random.default_rng(2)
    w1 = _rotvecs(rng, 20_000)
    w2 = w1 + rng.normal(size=w1.shape) * rng.uniform(0, 1.5, (w1.shape[0], 1))
    rel = np.einsum("mji,mjk->mik", rotation_matrix(w1), rotation_matrix(w2))
    angle = Rotation.from_matrix(rel).magnitude()
    assert np.all(angle <= np.linalg.norm(w1 - w2, axis=1) + 1e-12)
    assert np.max(angle / np.linalg.norm(w1 - w2, axis=1)) > 0.99   # and it is attained


def test_volume_density_integrates_to_the_sasaki_volume():
    """J over |w| <= pi, s <= V is 4 pi^2 V^2 = |S^2| pi V^2 (radial quadrature in w)."""
    x, wq = np.polynomial.legendre.leggauss(60)
    r, wr = 0.5 * math.pi * (x + 1), 0.5 * math.pi * wq
    speed = 1.7
    z = np.stack([r, 0 * r, 0 * r, np.ones_like(r)], axis=1)
    radial = np.sum(wr * 4 * math.pi * r**2 * np.exp(log_volume_density(z)))
    assert radial * speed**2 / 2 == pytest.approx(4 * math.pi**2 * speed**2, rel=1e-12)


def test_volume_bound_holds_in_boxes():
    rng = np.random.default_rng(3)
    c = np.concatenate([_rotvecs(rng, 300, 3.3), rng.uniform(0, 3, (300, 1))], axis=1)
    h = rng.uniform(0, 0.5, (300, 4))
    bound = log_volume_bound(c - h, c + h)
    pts = c[:, None] + h[:, None] * rng.uniform(-1, 1, (300, 200, 4))
    pts[..., 3] = np.abs(pts[..., 3])
    dens = log_volume_density(pts.reshape(-1, 4)).reshape(300, 200)
    assert np.all(dens <= bound[:, None])


def test_bundle_points_and_frame_form_match_the_library():
    rng = np.random.default_rng(4)
    t, y, tau = _problem(rng, 40)
    z = np.concatenate([_rotvecs(rng, 500), rng.uniform(0, math.pi, (500, 1))], axis=1)
    z[:20, 3] = 0.0
    z[20:40, :3] *= (math.pi - 1e-9) / np.linalg.norm(z[20:40, :3], axis=1)[:, None]
    p, v = bundle_points(z)
    assert np.allclose(np.linalg.norm(p, axis=1), 1.0, atol=1e-15)
    assert np.allclose(np.sum(p * v, axis=1), 0.0, atol=1e-14)
    assert np.allclose(np.linalg.norm(v, axis=1), z[:, 3], atol=1e-14)
    g = np.linalg.norm(frame_gradient(z, t, y, tau), axis=1)
    assert np.allclose(g, _library_g(z, t, y, tau), rtol=1e-12, atol=1e-14)


def test_sinc_derivative_constant_is_a_supremum():
    r = np.linspace(1e-6, 40.0, 4_000_001)
    d = np.abs((r * np.cos(r) - np.sin(r)) / r**2)
    assert d.max() + 1e-5 <= SINC1 and d.max() > SINC1 - 1e-3


def _boxes(rng, m):
    c = np.concatenate([_rotvecs(rng, m), rng.uniform(0, math.pi, (m, 1))], axis=1)
    c[: m // 4, 3] = rng.uniform(0, 0.03, m // 4)                    # boxes across s = 0
    near_pi = slice(m // 4, m // 3)
    c[near_pi, :3] *= (math.pi - 0.01) / np.linalg.norm(c[near_pi, :3], axis=1)[:, None]
    h = np.exp(rng.uniform(math.log(1e-4), math.log(0.6), (m, 4)))
    return c, h


def _violations(c, h, lower, t, y, tau, rng, points=120):
    worst = -np.inf
    for k in range(c.shape[0]):
        e = rng.uniform(-1, 1, (points, 4))
        e[:16] = np.where(rng.random((16, 4)) < 0.5, -1.0, 1.0)        # vertices
        worst = max(worst, lower[k] - _library_g(c[k] + h[k] * e, t, y, tau).min())
    return worst


@pytest.mark.parametrize("seed", [5, 6, 7, 8])
def test_cap_bound_is_below_g_in_every_box(seed):
    rng = np.random.default_rng(seed)
    t, y, tau = _problem(rng, signed=seed % 2 == 0)
    c, h = _boxes(rng, 150)
    if seed == 7:
        # data near the antipode of their predictions (the cut locus inside the boxes)
        p, v = bundle_points(c[:40])
        y = -S2.exp(p[:1], t[:, None] * v[:1])
        y /= np.linalg.norm(y, axis=1, keepdims=True)
    lower, g_c = cap_lower_bound(c, h, t, y, tau)
    if seed != 7:  # exactly on the cut locus the residual's direction is a convention
        assert np.allclose(g_c, _library_g(c, t, y, tau), rtol=1e-12, atol=1e-14)
    assert _violations(c, h, lower, t, y, tau, rng) <= 0.0
    assert np.mean(lower > 0) > 0.05                               # the bound says something


def test_the_box_check_has_power():
    """A bound for a box four times smaller in every direction is violated on the full box:
    the sampled check above would catch a bound that ignored part of a box."""
    rng = np.random.default_rng(9)
    t, y, tau = _problem(rng, 30)
    c, h = _boxes(rng, 150)
    lower, _ = cap_lower_bound(c, h / 4, t, y, tau)
    assert _violations(c, h, lower, t, y, tau, rng) > 1e-6


def test_compiled_kernel_matches_numpy():
    pytest.importorskip("numba", reason="the compiled kernel needs numba (optional)")
    from dpcore.sampling._native_numba import native_cap_bound

    rng = np.random.default_rng(10)
    t, y, tau = _problem(rng, 70, signed=True)
    c, h = _boxes(rng, 400)
    lo, g = cap_lower_bound(c, h, t, y, tau)
    lo2, g2 = native_cap_bound(c, h, t, y, tau)
    assert np.allclose(lo, lo2, rtol=0, atol=1e-12) and np.allclose(g, g2, rtol=0, atol=1e-12)
    t3 = 3.0 * t                          # |rho / 2| up to 3 pi / 2: the range reduction
    lo, g = cap_lower_bound(c, h, t3, y, tau)
    lo2, g2 = native_cap_bound(c, h, t3, y, tau)
    assert np.allclose(lo, lo2, rtol=0, atol=1e-12) and np.allclose(g, g2, rtol=0, atol=1e-12)


def test_compiled_arctangent_matches_numpy():
    pytest.importorskip("numba", reason="the compiled kernel needs numba (optional)")
    from dpcore.sampling._native_numba import _atan2_pos

    rng = np.random.default_rng(12)
    y = np.concatenate([rng.uniform(0, 1, 4000), np.exp(rng.uniform(-40, 3, 2000)), [0, 0, 1]])
    x = np.concatenate([rng.uniform(-1, 1, 4000), rng.normal(size=2000) * 5, [1, -1, 0]])
    got = np.array([_atan2_pos(a, b) for a, b in zip(y, x, strict=True)])
    assert np.max(np.abs(got - np.arctan2(y, x))) <= 1e-15


def test_lattice_support_and_points_are_public():
    lat = NativeLattice(2.0)
    rng = np.random.default_rng(11)
    z = np.concatenate([_rotvecs(rng, 200, 3.0), rng.uniform(0, 1.9, (200, 1))], axis=1)
    k = lat.index_of(z)
    assert np.all(lat.in_support(k))
    assert np.all(np.abs(lat.coordinates(k) - z) <= lat.spacing)
    p1, v1 = lat.point(k)
    p2, v2 = NativeLattice(2.0).point(k.copy())
    assert np.array_equal(p1, p2) and np.array_equal(v1, v2)
    edge = np.array([[math.pi - 1e-9, 0.0, 0.0, 1.0], [0.1, 0.1, 0.1, 2.0 - 1e-10],
                     [0.1, 0.1, 0.1, 2.5], [4.0, 0.0, 0.0, 1.0]])
    assert not np.any(lat.in_support(lat.index_of(edge)))
    lo, hi = lat.box(np.array([[0, 0, 0, 0]]), np.array([[3, 3, 3, 0]]))
    assert lat.misses(lo, hi)[0]                 # the corner box lies beyond |w| = pi
    with pytest.raises(ValueError):
        NativeLattice(4.0)
