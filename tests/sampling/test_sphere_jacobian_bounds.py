"""Brute-force checks of the closed-form far-field bounds (dpcore.sampling.sphere_jacobian_bounds
and the chart speeds of dpcore.sampling.bundle_farfield): the turn rate is the supremum, the
prediction speed bound holds on random segments (thin directions where moving the footpoint
and the shooting vector cancel included), and each term's transported change along a random
segment stays below its bound (near-antipodal responses, angles near the clipping kink, large
rho and thin directions included), the linear part of the speed bound is the prediction's
Jacobian at the centre (finite differences), and the compiled and numpy losses agree."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.learning.regression import regression_gradient
from dpcore.manifolds import Sphere
from dpcore.sampling.bundle_farfield import (
    _jacobian_norm,
    leaf_geometry,
    leaf_losses,
    prediction_speed,
    residual_angles,
)
from dpcore.sampling.sphere_enclosure import SphereBundleChart
from dpcore.sampling.sphere_jacobian_bounds import residual_turn_rate, term_change_bounds

from .test_bundle_sphere import _transport_back as transport_back

S2 = Sphere(2)
CHART = SphereBundleChart(np.array([0.0, 0.0, 1.0]))


def test_turn_rate_is_the_supremum(rng):
    for _ in range(200):
        tau = rng.uniform(0.05, 2.5)
        lo = rng.uniform(0, 3.0)
        hi = min(lo + rng.uniform(0, 1.0), math.pi - 1e-3)
        lo = min(lo, hi)
        th = np.linspace(lo, hi, 4001)
        psi = np.minimum(th, tau)
        brute = np.max(np.maximum((th < tau).astype(float), psi * np.abs(1 / np.tan(th))))
        got = residual_turn_rate(lo, hi, tau)
        assert got >= brute * (1 - 1e-12)
        assert got <= brute * (1 + 1e-3) + 1e-12     # the sup itself, up to the grid


def _random_leaf(rng, trial):
    """A centre, a basis (thin in every other trial: columns with delta_u = -t0 delta_w, the
    valley's cancelling directions), a slack and caps |u| <= r_cap, |w| <= w_cap of the
    segments' ends (finite in every third trial; the centre may lie outside)."""
    zc = np.concatenate([rng.uniform(-1.2, 1.2, 2), rng.uniform(-2.0, 2.0, 2)])
    basis = rng.normal(size=(4, 4)) * 10 ** rng.uniform(-3, -0.5)
    if trial % 2:
        t0 = rng.uniform(0.2, 1.0)
        basis[:2] = -t0 * basis[2:] + 1e-3 * np.abs(basis).max() * rng.normal(size=(2, 4))
    slack = rng.uniform(0, 1e-9, (1, 4))
    caps = (math.inf, math.inf)
    if trial % 3 == 0:
        reach = np.abs(basis).sum(axis=1)
        caps = (np.hypot(*zc[:2]) + rng.uniform(-0.5, 0.2) * np.hypot(*reach[:2]),
                np.hypot(*zc[2:]) + rng.uniform(-0.5, 0.2) * np.hypot(*reach[2:]))
    return zc, basis, slack, caps


def _segment(zc, basis, slack, caps, rng, k=321):
    """A segment from the centre to a random point on a face of the parallelepiped inside the
    caps (None if 200 tries miss them)."""
    for _ in range(200):
        eps = rng.uniform(-1, 1, 4)
        eps[rng.integers(4)] = rng.choice([-1.0, 1.0])      # on a face of the cube
        end = zc + basis @ eps + rng.uniform(-1, 1, 4) * slack[0]
        if np.hypot(*end[:2]) <= caps[0] and np.hypot(*end[2:]) <= caps[1]:
            s = np.linspace(0, 1, k)
            return zc + s[:, None] * (end - zc), s
    return None, None


def test_prediction_speed_bound_holds(rng):
    used = 0
    for trial in range(300):
        zc, basis, slack, caps = _random_leaf(rng, trial)
        t = np.concatenate([rng.uniform(0, 1, 6), [0.0, 1.0]])
        eta0, eta1 = prediction_speed(leaf_geometry(zc[None], basis[None], slack, *caps), t)
        zs, s = _segment(zc, basis, slack, caps, rng)
        if zs is None:
            continue
        used += 1
        p, v = CHART.to_bundle(zs[:, :2], zs[:, 2:])
        yhat = S2.exp(np.repeat(p, t.size, 0), (t[None, :, None] * v[:, None, :]).reshape(-1, 3))
        yhat = yhat.reshape(s.size, t.size, 3)
        speed = np.linalg.norm(np.diff(yhat, axis=0), axis=-1) / (s[1] - s[0])
        allowed = eta0 + s[1:, None] * eta1
        assert np.all(speed <= allowed * (1 + 1e-6) + 1e-12), trial
    assert used > 250


def _transport_back(ps, x):
    """Parallel transport of x (3,) along the polyline ps back to ps[0] (exact per geodesic
    piece; test_bundle_sphere's rotation of several vectors at once)."""
    return transport_back(ps, x)[0]


def _response(kind, zc, t, tau, rng):
    p, v = CHART.to_bundle(zc[None, :2], zc[None, 2:])
    yhat = S2.exp(p, t[:, None] * v)
    if kind == 0:                                   # near the antipode of the prediction
        y = -yhat + rng.normal(0, 0.05, (1, 3))
    elif kind == 1:                                 # at angle ~ tau (the clipping kink)
        d = np.cross(yhat, rng.normal(size=(1, 3)))
        d /= np.linalg.norm(d)
        y = S2.exp(yhat, d * (tau + rng.normal(0, 0.01)))
    else:
        y = rng.normal(size=(1, 3))
    return y / np.linalg.norm(y, axis=1, keepdims=True)


def test_term_change_is_below_its_bound(rng):
    tightness = []
    for trial in range(160):
        tau = float(rng.choice([0.2, 0.5, 1.0, 2.5]))
        zc, basis, slack, caps = _random_leaf(rng, trial)
        t = rng.uniform(0, 1, 1) if trial % 5 else np.ones(1)
        y = _response(trial % 3, zc, t, tau, rng)
        geo = leaf_geometry(zc[None], basis[None], slack, *caps)
        eta0, eta1 = prediction_speed(geo, t)
        theta = residual_angles(CHART, zc[None], t, y)
        bound, _ = term_change_bounds(theta, t, geo["P"], geo["N"], geo["W"], tau, eta=eta0,
                                      eta1=eta1, form=("transport", "direct")[trial // 2 % 2])
        zs, _ = _segment(zc, basis, slack, caps, rng, k=161)
        if zs is None:
            continue
        p, v = CHART.to_bundle(zs[:, :2], zs[:, 2:])
        gp, gv = regression_gradient(S2, p, v, t, y, tau=tau)
        moved = np.concatenate([_transport_back(p, gp[-1]), _transport_back(p, gv[-1])])
        change = np.linalg.norm(moved - np.concatenate([gp[0], gv[0]]))
        assert change <= bound[0, 0] * (1 + 1e-6) + 1e-9, trial
        tightness.append(change / bound[0, 0])
    assert np.max(tightness) > 0.2          # informative, not only valid


def test_compiled_and_numpy_losses_agree(rng):
    pytest.importorskip("numba")
    m, n = 60, 40
    zc = np.concatenate([rng.uniform(-0.6, 0.6, (m, 2)), rng.uniform(-1.5, 1.5, (m, 2))], 1)
    basis = rng.normal(size=(m, 4, 4)) * 10 ** rng.uniform(-3, -0.5, (m, 1, 1))
    slack = rng.uniform(0, 1e-9, (m, 4))
    t = rng.uniform(0, 1, n)
    y = rng.normal(size=(n, 3))
    y[:5] = -CHART.to_bundle(zc[:1, :2], zc[:1, 2:])[0]          # antipodal responses
    y /= np.linalg.norm(y, axis=1, keepdims=True)
    geo = leaf_geometry(zc, basis, slack, 0.7, 1.6)
    loss_c, score_c = leaf_losses(CHART, zc, geo, t, y, 0.2, compiled=True)
    loss_n, score_n = leaf_losses(CHART, zc, geo, t, y, 0.2, compiled=False)
    assert np.allclose(loss_c, loss_n, rtol=1e-10, atol=0)
    assert np.allclose(score_c, score_n, rtol=1e-8, atol=1e-300)


def test_linear_speed_is_the_jacobian_at_the_centre(rng):
    """The linear part L_c of the speed bound (chart speeds, frame connection and its sign,
    cos/sinc factors of the Jacobi field) equals the prediction's speed at the centre."""
    for _ in range(50):
        zc = np.concatenate([rng.uniform(-1.2, 1.2, 2), rng.uniform(-2.0, 2.0, 2)])
        basis = np.zeros((4, 4))
        basis[:, 0] = rng.normal(size=4)
        t = rng.uniform(0, 1, 5)
        geo = leaf_geometry(zc[None], basis[None], np.zeros((1, 4)))
        rho = t * geo["wc"][0]
        lin = _jacobian_norm(geo["a1"], geo["a2"], geo["b1"], geo["b2"], t[None, :],
                             np.cos(rho)[None], np.sinc(rho / math.pi)[None])[0, :, 0]
        step = 1e-6
        ends = [CHART.to_bundle((zc + k * step * basis[:, 0])[None, :2],
                                (zc + k * step * basis[:, 0])[None, 2:]) for k in (-1, 1)]
        yh = [S2.exp(np.repeat(p, t.size, 0), t[:, None] * v) for p, v in ends]
        speed = np.linalg.norm(yh[1] - yh[0], axis=-1) / (2 * step)
        assert np.allclose(lin, speed, rtol=1e-6, atol=1e-9)
