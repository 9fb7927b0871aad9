"""The SPD(2) bundle chart, its eigen-free gradient, the special functions' enclosures and the
affine enclosure of the gradient (``dpcore.sampling.spd2_chart``, ``spd2_parts``,
``spd2_affine``; issue 28).

Oracles: the library's Jacobi-field gradient (``regression_gradient``, itself audited in
``tests/audit/test_spd_regression.py``) for the formula; the library's SPD(2) distance and
metric, and a finite-difference Jacobian of the chart for its volume density; mpmath (120 bits)
for every special function and its derivative; the formula at random points of each
parallelepiped for the enclosure (a point outside its enclosure fails).
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from dpcore.learning.regression import regression_gradient
from dpcore.manifolds import SPD
from dpcore.sampling import spd2_parts as P
from dpcore.sampling.intervals import Interval
from dpcore.sampling.spd2_affine import (
    enclose_spd2_gradient,
    log_volume_bound,
    residual_norm_range,
    response_enclosure,
)
from dpcore.sampling.spd2_chart import SPD2Chart, frame_gradient

SPD2 = SPD(2)
CENTER = np.array([[1.2, -0.2], [-0.2, 0.9]])


def _data(rng, n=40, radius=0.8):
    """Responses within ``radius`` of the centre (as the strict release's projected ones) and
    covariates in [0, 1]."""
    basis = SPD2.orthonormal_basis(CENTER)
    u = rng.normal(size=(n, 3))
    u *= (radius * rng.uniform(0, 1, n) ** (1 / 3) / np.linalg.norm(u, axis=1))[:, None]
    y = SPD2.exp(np.broadcast_to(CENTER, (n, 2, 2)), np.tensordot(u, basis, axes=1))
    return rng.uniform(0, 1, n), y


@pytest.mark.parametrize("tau", [None, 0.2])
def test_frame_gradient_is_the_library_gradient_in_the_a_frame(rng, tau):
    chart = SPD2Chart(CENTER)
    t, y = _data(rng)
    z = rng.normal(size=(30, 6)) * 0.5
    p, v = chart.to_bundle(z)
    ytil, logdet = chart.responses(y)
    g = frame_gradient(z, t, ytil, logdet, tau)
    gp, gv = regression_gradient(SPD2, p, v, t, y, tau=tau)
    a_inv = np.linalg.inv(chart.footpoint_factor(z))
    for grad, cols in ((gp, slice(0, 3)), (gv, slice(3, 6))):
        w = a_inv @ grad @ np.swapaxes(a_inv, -1, -2)
        coords = np.stack([w[:, 0, 0], np.sqrt(2) * w[:, 0, 1], w[:, 1, 1]], axis=-1)
        np.testing.assert_allclose(g[:, cols], coords, atol=1e-12)
    lib = np.sqrt(SPD2.inner(p, gp, gp) + SPD2.inner(p, gv, gv))
    np.testing.assert_allclose(np.linalg.norm(g, axis=1), lib, rtol=1e-12)


def test_chart_distances_norms_and_volume_density(rng):
    chart = SPD2Chart(CENTER)
    z = rng.normal(size=(20, 6)) * 0.6
    p, v = chart.to_bundle(z)
    origin = chart.S @ chart.S.T
    np.testing.assert_allclose(origin, CENTER, rtol=1e-14)
    np.testing.assert_allclose(SPD2.dist(np.broadcast_to(origin, p.shape), p),
                               np.linalg.norm(z[:, :3], axis=1), rtol=1e-10)
    np.testing.assert_allclose(SPD2.norm(p, v), np.linalg.norm(z[:, 3:], axis=1), rtol=1e-12)
    # volume density: sqrt det of the metric pulled back by a -> p (central differences)
    h = 1e-6
    for zi in z[:5]:
        cols = []
        for k in range(3):
            dz = np.zeros(6)
            dz[k] = h
            cols.append((chart.to_bundle((zi + dz)[None])[0][0]
                         - chart.to_bundle((zi - dz)[None])[0][0]) / (2 * h))
        p0 = chart.to_bundle(zi[None])[0][0]
        gram = np.array([[SPD2.inner(p0, a, b) for b in cols] for a in cols])
        np.testing.assert_allclose(chart.volume_density(zi[None])[0],
                                   np.sqrt(np.linalg.det(gram)), rtol=1e-6)


def _mp_checks():
    f = mpmath
    sh = (lambda x: f.sinh(f.sqrt(x)) / f.sqrt(x))
    return {
        "ch": (P._ch, lambda x: f.cosh(f.sqrt(x))),
        "sh": (P._sh, sh),
        "phi1": (P._phi1, lambda x: (f.cosh(f.sqrt(x)) - 1) / x),
        "phi2": (P._phi2, lambda x: (sh(x) - 1) / x),
        "dsh": (P._dsh, lambda x: f.diff(sh, x)),
        "dphi1": (P._dphi1, lambda x: f.diff(lambda u: (f.cosh(f.sqrt(u)) - 1) / u, x)),
        "dphi2": (P._dphi2, lambda x: f.diff(lambda u: (sh(u) - 1) / u, x)),
    }


@pytest.mark.parametrize("name", list(_mp_checks()))
def test_hyperbolic_series_enclose_mpmath(name):
    mpmath.mp.prec = 120
    fn, exact = _mp_checks()[name]
    x = np.array([1e-12, 1e-3, 0.3, 0.999, 1.0, 1.0000001, 2.5, 40.0, 300.0])
    out = fn(x)
    for xi, lo, hi in zip(x, out.lo, out.hi, strict=True):
        ref = exact(mpmath.mpf(float(xi)))
        assert mpmath.mpf(lo) <= ref <= mpmath.mpf(hi), (name, xi, lo, hi, ref)
        assert hi - lo <= 1e-9 * abs(float(ref)), (name, xi, hi - lo)


def test_arsinh_functions_enclose_mpmath():
    mpmath.mp.prec = 120
    f = mpmath
    h = (lambda q: f.asinh(f.sqrt(q)) / f.sqrt(q))
    q = np.array([1e-12, 1e-4, 0.1, 0.25, 0.2500001, 0.5, 1.0, 5.0, 100.0])
    for fn, exact in ((P._asinhc, h), (P._dasinhc, lambda x: f.diff(h, x))):
        out = fn(q)
        for qi, lo, hi in zip(q, out.lo, out.hi, strict=True):
            ref = exact(f.mpf(float(qi)))
            assert f.mpf(lo) <= ref <= f.mpf(hi), (fn, qi, lo, hi, ref)
            assert hi - lo <= 1e-9 * abs(float(ref)), (fn, qi, hi - lo)
    iv = Interval(np.array([0.0, 0.1, 0.3]), np.array([0.05, 0.2, 2.0]))
    for parts, value, slope in (
            (P.asinhc_parts, h, lambda x: f.diff(h, x)),
            (P.asinh2_parts, lambda x: f.asinh(f.sqrt(x)) ** 2,
             lambda x: f.diff(lambda u: f.asinh(f.sqrt(u)) ** 2, x))):
        v, s = parts(iv)
        for i in range(3):
            for x in np.linspace(max(iv.lo[i], 1e-9), iv.hi[i], 7):
                assert v.lo[i] <= float(value(f.mpf(x))) <= v.hi[i]
                assert s.lo[i] <= float(slope(f.mpf(x))) <= s.hi[i]


def test_clip_parts_hold_values_and_slopes():
    tau = 0.3
    parts = P.clip_parts(tau)
    lo = np.array([0.0, 0.01, 0.05, 0.089, 0.2])
    hi = np.array([0.05, 0.2, 0.0899, 0.1, 0.5])
    v, s = parts(Interval(lo, hi))
    for i in range(lo.size):
        x = np.linspace(lo[i], hi[i], 101)
        f = np.minimum(1.0, tau / np.sqrt(np.maximum(x, 1e-300)))
        df = np.where(x > tau * tau, -0.5 * tau * np.maximum(x, tau * tau) ** -1.5, 0.0)
        assert np.all(f >= v.lo[i] - 1e-15) and np.all(f <= v.hi[i] + 1e-15), i
        assert np.all(df >= s.lo[i] - 1e-15) and np.all(df <= s.hi[i] + 1e-15), i


@pytest.mark.parametrize("scale", [1e-4, 3e-3, 1e-2])
@pytest.mark.parametrize("tau", [None, 0.2])
def test_affine_enclosure_contains_the_gradient(rng, scale, tau):
    chart = SPD2Chart(CENTER)
    t, y = _data(rng)
    ytil, logdet = chart.responses(y)
    ys = response_enclosure(chart.T, y)
    m = 60
    zc = rng.normal(size=(m, 6)) * 0.3
    basis = rng.normal(size=(m, 6, 6)) * scale
    slack = np.full((m, 6), 1e-13)
    enc = enclose_spd2_gradient(zc, basis, slack, t, ys, tau)
    finite = np.isfinite(enc.error[:, 0])
    assert finite.mean() > 0.9  # small leaves stay inside every function's domain
    for _ in range(10):
        eps = rng.uniform(-1, 1, (m, 6))
        corner = rng.integers(0, 2, (m, 6)) * 2.0 - 1.0  # vertices too
        for e in (eps, corner):
            z = zc + np.einsum("mkj,mj->mk", basis, e) + rng.uniform(-1, 1, (m, 6)) * slack
            g = frame_gradient(z, t, ytil, logdet, tau)
            pred = enc.value + np.einsum("mkj,mj->mk", enc.linear, e)
            excess = np.abs(g - pred) - enc.error
            # the float formula itself rounds: a few ulp of the terms' size
            assert np.all(excess[finite] <= 1e-14), np.max(excess[finite])


@pytest.mark.parametrize("scale", [1e-3, 3e-2, 0.2])
def test_residual_norm_range_contains_the_distances(rng, scale):
    from dpcore.sampling.spd2_chart import residual_norms

    chart = SPD2Chart(CENTER)
    t, y = _data(rng)
    ytil, logdet = chart.responses(y)
    m = 40
    zc = rng.normal(size=(m, 6)) * 0.3
    basis = rng.normal(size=(m, 6, 6)) * scale
    slack = np.full((m, 6), 1e-13)
    lo, hi = residual_norm_range(zc, basis, slack, t, response_enclosure(chart.T, y))
    assert np.all(lo <= hi) and np.all(lo >= 0)
    width = []
    for _ in range(10):
        e = rng.uniform(-1, 1, (m, 6))
        e[: m // 2] = np.sign(e[: m // 2])
        z = zc + np.einsum("mkj,mj->mk", basis, e)
        r = residual_norms(z, t, ytil, logdet)
        assert np.all(lo <= r * (1 + 1e-13)) and np.all(r <= hi * (1 + 1e-13))
        width.append(np.median((hi - lo)[np.isfinite(hi)]))
    if scale <= 3e-2:
        assert np.all(np.isfinite(hi)) and np.median(width) < 40 * scale


def test_volume_bound_covers_the_density(rng):
    lo = rng.normal(size=(50, 6)) * 0.5
    hi = lo + rng.uniform(0, 0.3, (50, 6))
    bound = log_volume_bound(lo, hi)
    for _ in range(20):
        z = lo + rng.uniform(0, 1, lo.shape) * (hi - lo)
        assert np.all(np.log(SPD2Chart.volume_density(z)) <= bound)


def test_prototype_sampler_envelope_covers_the_target(rng):
    """The SPD(2) whitened-leaf prototype (``dpcore.sampling.bundle_spd2``): at uniform points
    of its public support, t <= M q (log acceptance <= 0) in every leaf they fall in, and its
    draws lie in the support. (Its law against the uniform exact sampler is next, issue 28.)"""
    from dpcore.data import make_regression_data
    from dpcore.release.asymptotic import joint_sigma
    from dpcore.sampling.bundle_lattice import FlatLattice
    from dpcore.sampling.bundle_spd2 import SPD2BundleSampler

    data = make_regression_data(SPD2, 30, noise=0.05, rng=3, footpoint_region=(np.eye(2), 0.1))
    t, y = np.asarray(data.x, float), np.asarray(data.y, float)
    lattice = FlatLattice(np.zeros(3), 0.1, 0.55)
    sigma = joint_sigma(SPD2, 30, 40.0 / 30, 0.175, 0.8)
    sampler = SPD2BundleSampler(t, y, 0.175, sigma, np.eye(2), lattice, draws=3,
                                max_boxes=400, box_cost=8.0, acceptance_goal=1.0)
    u = rng.normal(size=(3000, 6))
    u[:, :3] *= (0.1 * rng.uniform(0, 1, 3000) ** (1 / 3)
                 / np.linalg.norm(u[:, :3], axis=1))[:, None]
    u[:, 3:] *= (0.55 * rng.uniform(0, 1, 3000) ** (1 / 3)
                 / np.linalg.norm(u[:, 3:], axis=1))[:, None]
    ok, leaf, log_acc = sampler._ratios(u, lattice.index_of(u))
    assert ok.mean() > 0.9 and np.all(leaf[ok] >= 0)
    assert np.all(log_acc[ok] <= 1e-9), np.max(log_acc[ok])
    a, b, tried = sampler.sample(3, 5)
    assert tried >= 3
    assert np.all(np.linalg.norm(a, axis=1) <= 0.1) and np.all(np.linalg.norm(b, axis=1) <= 0.55)


def test_energy_is_the_huber_loss_of_the_library_distances(rng):
    from dpcore.sampling.spd2_chart import energy

    chart = SPD2Chart(CENTER)
    t, y = _data(rng)
    ytil, logdet = chart.responses(y)
    z = rng.normal(size=(10, 6)) * 0.5
    p, v = chart.to_bundle(z)
    tau = 0.2
    for i in range(z.shape[0]):
        pred = SPD2.exp(np.broadcast_to(p[i], (t.size, 2, 2)), t[:, None, None] * v[i])
        d = SPD2.dist(pred, y)
        huber = np.where(d <= tau, 0.5 * d * d, tau * d - 0.5 * tau * tau).mean()
        np.testing.assert_allclose(energy(z[i], t, ytil, logdet, tau)[0], huber, rtol=1e-10)


def test_second_derivatives_enclose_mpmath():
    mpmath.mp.prec = 120
    f = mpmath
    sh = (lambda x: f.sinh(f.sqrt(x)) / f.sqrt(x))
    h = (lambda q: f.asinh(f.sqrt(q)) / f.sqrt(q))
    checks = ((P._d2sh, lambda x: f.diff(sh, x, 2)),
              (P._d2phi1, lambda x: f.diff(lambda u: (f.cosh(f.sqrt(u)) - 1) / u, x, 2)),
              (P._d2phi2, lambda x: f.diff(lambda u: (sh(u) - 1) / u, x, 2)),
              (P._d2asinhc, lambda x: f.diff(h, x, 2)))
    x = np.array([1e-3, 0.1, 0.25, 0.2500001, 1.0, 3.9, 4.0, 4.1, 30.0])
    for fn, exact in checks:
        out = fn(x)
        for xi, lo, hi in zip(x, out.lo, out.hi, strict=True):
            ref = exact(f.mpf(float(xi)))
            assert f.mpf(lo) <= ref <= f.mpf(hi), (fn, xi, lo, hi, ref)
    # interval curvatures: arsinh^2(sqrt q) and the clip, at points of each interval
    lo, hi = np.array([0.0, 0.05, 0.3]), np.array([0.1, 0.2, 2.0])
    curv = P._asinh2_curvature(Interval(lo, hi))
    clip = P.clip_curvature(0.3)(Interval(np.array([0.0, 0.1, 0.05]), np.array([0.05, 0.5, 0.2])))
    for i in range(3):
        for q in np.linspace(max(lo[i], 1e-6), hi[i], 9):
            ref = float(f.diff(lambda u: f.asinh(f.sqrt(u)) ** 2, f.mpf(q), 2))
            assert curv.lo[i] <= ref <= curv.hi[i]
    assert clip.lo[0] == clip.hi[0] == 0.0                 # inside: 0
    assert clip.lo[1] >= 0.0 and np.isfinite(clip.hi[1])   # outside: 3/4 tau s^-5/2
    assert clip.lo[2] == -np.inf and clip.hi[2] == np.inf  # across tau^2: a kink


def test_taylor_enclosure_contains_the_gradient(rng):
    from dpcore.sampling.spd2_affine import enclose_spd2_taylor

    chart = SPD2Chart(CENTER)
    t, y = _data(rng, n=20)
    ytil, logdet = chart.responses(y)
    ys = response_enclosure(chart.T, y)
    m = 6
    zc = rng.normal(size=(m, 6)) * 0.3
    basis = rng.normal(size=(m, 6, 6)) * 0.01
    slack = np.full((m, 6), 1e-13)
    enc = enclose_spd2_taylor(zc, basis, slack, t, ys, 0.2)
    assert np.all(np.isfinite(enc.error))
    for _ in range(10):
        e = rng.uniform(-1, 1, (m, 6))
        e[: m // 2] = np.sign(e[: m // 2])
        g = frame_gradient(zc + np.einsum("mkj,mj->mk", basis, e), t, ytil, logdet, 0.2)
        pred = (enc.value + np.einsum("mkj,mj->mk", enc.linear, e)
                + np.einsum("mj,mkjl,ml->mk", e, enc.quad, e))
        assert np.all(np.abs(g - pred) <= enc.error + 1e-14)
