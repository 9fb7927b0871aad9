"""The exact joint KNG sampler on R^d over whitened leaves (dpcore.sampling.bundle_flat): its
closed forms against the library and finite differences, its leaf bound pointwise, its draws
against the audited uniform exact sampler, and float safety (public lattice, every support
cell reachable for a neighbouring data set)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import ks_2samp

from dpcore.learning.regression import regression_gradient
from dpcore.manifolds import Euclidean
from dpcore.sampling.bundle_flat import HALF_D2, FlatBundleSampler, flat_gradient
from dpcore.sampling.bundle_lattice import FlatLattice
from dpcore.sampling.rejection import BundleBall, UniformBall, sample_kng_exact

from .test_bundle_sampler import (
    assert_planted_violation_raises,
    assert_reachable_for_a_neighbour,
    assert_reports_and_cancels,
)

TAU = 1.0
CENTER = np.array([0.5, -1.0, 2.0])
SLOPES = np.array([1.5, -1.0, 0.5])


def make_data(n, seed, d=2, noise=0.6, shift=0.0):
    """Lines through the centre (shifted by ``shift`` along the first axis) with Gaussian
    noise; covariates uniform on [0, 1]."""
    rng = np.random.default_rng(seed)
    t = rng.uniform(0.0, 1.0, n)
    y = (CENTER[:d] + np.outer(t - 0.5, SLOPES[:d]) + noise * rng.standard_normal((n, d)))
    y[:, 0] += shift
    return t, y


def g_of(t, y, p, v):
    gp, gv = regression_gradient(Euclidean(y.shape[1]), p, v, t, y, tau=TAU)
    return np.sqrt(np.sum(gp**2, axis=-1) + np.sum(gv**2, axis=-1))


@pytest.fixture(scope="module")
def small_problem():
    t, y = make_data(30, 0)
    lat = FlatLattice(CENTER[:2], 2.0, 3.0)
    return lat, t, y, 0.06          # n eps about 30 x 2.7: uniform proposals still practical


# ------------------------------------------------------------------------------ the lattice
def test_flat_lattice_is_public_and_consistent():
    rng = np.random.default_rng(0)
    lat = FlatLattice(CENTER, 1.5, 2.5)
    index = rng.integers(0, 2**32, (400, 6), dtype=np.int64)
    z = lat.coordinates(index)
    np.testing.assert_array_equal(lat.index_of(z), index)
    inside = lat.in_support(index)
    expect = ((np.linalg.norm(z[:, :3], axis=1) <= 1.5 - 2 * lat.spacing[0])
              & (np.linalg.norm(z[:, 3:], axis=1) <= 2.5 - 2 * lat.spacing[3]))
    assert np.array_equal(inside, expect) and inside.any() and not inside.all()
    p, v = lat.point(index)
    np.testing.assert_array_equal(p, CENTER + z[:, :3])
    np.testing.assert_array_equal(v, z[:, 3:])
    with pytest.raises(ValueError):
        FlatLattice(CENTER, -1.0, 1.0)


# ------------------------------------------------------------------------------ closed forms
@pytest.mark.parametrize("d", [1, 2, 3])
def test_gradient_matches_the_library(d):
    rng = np.random.default_rng(d)
    t, y = make_data(25, d, d=d)
    z = rng.normal(0.0, 1.5, (50, 2 * d))
    got = flat_gradient(z, t, y - CENTER[:d], TAU)
    gp, gv = regression_gradient(Euclidean(d), CENTER[:d] + z[:, :d], z[:, d:], t, y, tau=TAU)
    np.testing.assert_allclose(got, np.concatenate([gp, gv], axis=-1), atol=1e-13)


@pytest.mark.parametrize("d", [1, 2, 3])
def test_jacobian_matches_finite_differences(d):
    t, y = make_data(25, 10 + d, d=d)
    sampler = FlatBundleSampler(t, y, TAU, 0.05, FlatLattice(CENTER[:d], 2.0, 3.0), draws=1,
                                max_boxes=50)
    rng = np.random.default_rng(d)
    for z in rng.normal(0.0, 0.8, (5, 2 * d)):
        step = 1e-6
        fd = np.stack([(flat_gradient((z + step * e)[None], t, sampler.yc, TAU)[0]
                        - flat_gradient((z - step * e)[None], t, sampler.yc, TAU)[0])
                       / (2 * step) for e in np.eye(2 * d)], axis=1)
        np.testing.assert_allclose(sampler._jacobian(z), fd, atol=1e-6)
    # the fit is the clipped energy's minimum: its gradient vanishes there
    assert np.linalg.norm(flat_gradient(sampler.fit[None], t, sampler.yc, TAU)) < 1e-12


def test_second_derivative_constant_of_the_unit_vector_map():
    """HALF_D2 bounds half of |D^2(r/|r|)[a, a]| at |r| = 1 over unit a (the outside terms'
    Taylor remainder), and is sharp: central finite differences at 20,000 random (r, a) in R^3
    and at the maximizer (|Pi a|^2 = 2/3) stay below 2 HALF_D2 and reach it within 1e-6."""
    rng = np.random.default_rng(5)

    def unit(x):
        return x / np.linalg.norm(x, axis=-1, keepdims=True)

    r = unit(rng.standard_normal((20_000, 3)))
    a = unit(rng.standard_normal((20_000, 3)))
    e1, e2 = np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])
    r = np.vstack([r, e1])
    a = np.vstack([a, np.sqrt(1 / 3) * e1 + np.sqrt(2 / 3) * e2])
    h = 1e-4
    d2 = (unit(r + h * a) - 2 * unit(r) + unit(r - h * a)) / h**2
    norms = np.linalg.norm(d2, axis=-1)
    assert norms.max() <= 2 * HALF_D2 * (1 + 1e-6)
    assert norms[-1] >= 2 * HALF_D2 * (1 - 1e-6)


@pytest.mark.parametrize("d", [1, 2, 3])
def test_leaf_lower_bound_is_pointwise(d):
    """Random parallelepipeds from near the fit to far from it, sizes from 1e-3 to 1: the
    certified g_B never exceeds g at 400 points of each (vertices included), and it is
    informative on many of them."""
    t, y = make_data(40, 20 + d, d=d)
    lat = FlatLattice(CENTER[:d], 2.0, 3.0)
    sampler = FlatBundleSampler(t, y, TAU, 0.05, lat, draws=1, max_boxes=50)
    rng = np.random.default_rng(100 + d)
    dim, used = 2 * d, 0
    signs = 2.0 * ((np.arange(2**dim)[:, None] >> np.arange(dim)) & 1) - 1.0
    for trial in range(40):
        size = 10.0 ** rng.uniform(-3, 0)
        zc = sampler.fit + rng.normal(0.0, 1.0, dim) * 10.0 ** rng.uniform(-2, 0.3)
        basis = rng.normal(0.0, size, (dim, dim))
        slack = np.full(dim, 1e-12)
        g_lb = sampler._certify(zc[None], basis[None], slack[None])[0][0]
        eps = np.concatenate([rng.uniform(-1, 1, (400 - signs.shape[0], dim)), signs])
        z = zc + eps @ basis.T + rng.uniform(-1, 1, (400, dim)) * slack
        g = sampler._g(z)
        assert g_lb <= g.min(), trial
        used += g_lb > 0.1 * g.min()
    assert used >= 10


# ------------------------------------------------------------------------------ exactness
def g_by_coordinate(t, y, z):
    """g of the proposals ``z`` ``(m, 2, d)``, as :func:`g_of` gives it to rounding (the
    library's closed form, one contiguous ``(m, n)`` array per coordinate: ~2x faster on the
    uniform reference's millions of proposals; agreement checked on its draws)."""
    r = [y[:, k] - z[:, 0, k, None] - t * z[:, 1, k, None] for k in range(y.shape[1])]
    norm = np.sqrt(sum(rk * rk for rk in r))
    scale = np.minimum(1.0, TAU / np.where(norm > 0, norm, 1.0))
    return np.sqrt(sum(np.mean(rk * scale, axis=-1) ** 2 + np.mean(t * rk * scale, axis=-1) ** 2
                       for rk in r))


def uniform_reference(t, y, sigma, lat, draws):
    """``draws`` draws of the audited uniform exact sampler on the lattice's support (seed 2)
    and their g (the library's)."""
    d = lat.foot_dim
    support = BundleBall(UniformBall(Euclidean(d), lat.center, lat.radius), lat.max_speed)
    ref, _ = sample_kng_exact(lambda z: g_by_coordinate(t, y, z), sigma, support, draws,
                              np.random.default_rng(2), n_terms=t.size)
    g_ref = g_of(t, y, ref[:, 0], ref[:, 1])
    np.testing.assert_allclose(g_by_coordinate(t, y, ref), g_ref, rtol=1e-13)
    return ref, g_ref


def assert_agrees_with_uniform_exact(sampler, lat, t, y, sigma, threshold, draws=1500):
    """Three two-sample KS tests (|p - c|, |v|, g) at ``threshold`` each between ``draws``
    draws of ``sampler`` (seed 1) and of the uniform exact sampler (seed 2)."""
    index, tried = sampler.sample_indices(draws, np.random.default_rng(1))
    assert lat.in_support(index).all()
    p, v = lat.point(index)
    ref, g_ref = uniform_reference(t, y, sigma, lat, draws)
    stats = {"|p - c|": (np.linalg.norm(p - lat.center, axis=1),
                         np.linalg.norm(ref[:, 0] - lat.center, axis=1)),
             "|v|": (np.linalg.norm(v, axis=1), np.linalg.norm(ref[:, 1], axis=1)),
             "g": (g_of(t, y, p, v), g_ref)}
    for name, (a, b) in stats.items():
        pvalue = ks_2samp(a, b).pvalue
        print(f"{name}: KS p = {pvalue:.3g}")
        assert pvalue > threshold, name
    return tried


def test_agrees_with_the_uniform_exact_sampler(small_problem):
    """n = 30, 1500 draws each (fixed seeds), three KS tests at p > 3e-7 each: a false failure
    has chance below 1e-6 when both laws agree. Refinement forced (box_cost 0) so that the
    K-norm and the piecewise-uniform components both carry weight."""
    lat, t, y, sigma = small_problem
    sampler = FlatBundleSampler(t, y, TAU, sigma, lat, draws=1500, box_cost=0.0,
                                acceptance_goal=0.99, max_boxes=800, slack=4.0)
    diag = sampler.diagnostics
    assert 0.01 < diag["beta"] < 0.99 and diag["q1_boxes"] >= 1, diag
    tried = assert_agrees_with_uniform_exact(sampler, lat, t, y, sigma, 3e-7)
    print(f"acceptance {1500 / tried:.3g}, diagnostics {diag}")


def test_agrees_with_the_uniform_exact_sampler_in_three_dimensions():
    """R^3 (six coordinates, 64 vertices per leaf in the convexity bound, two-word leaf keys
    possible): n = 30, 600 draws each, the same three KS tests at p > 3e-7 each, refinement
    forced to 1,500 leaves. (At this small n eps the six-dimensional envelope is loose, about
    1e-4 acceptance, and the K-norm component certifies no leaf: releases use uniform
    proposals there; the near-fit component is tested in two dimensions above.)"""
    t, y = make_data(30, 4, d=3)
    lat = FlatLattice(CENTER, 1.0, 1.5)
    sampler = FlatBundleSampler(t, y, TAU, 0.2, lat, draws=600, box_cost=0.0,
                                acceptance_goal=0.99, max_boxes=1500, slack=4.0)
    assert sampler.dim == 6 and sampler.diagnostics["boxes"] == 1500
    assert_agrees_with_uniform_exact(sampler, lat, t, y, 0.2, 3e-7, draws=600)


def test_agrees_with_the_uniform_exact_sampler_with_the_fit_outside_the_ball():
    """The data's fit lies about 0.5 beyond the footpoint ball (radius 1; speeds up to 6, so
    only the footpoint bound binds): the support-mass steering of
    dpcore.sampling.bundle_support runs, and the draws still follow the target (same test)."""
    t, y = make_data(30, 3, shift=2.4)
    lat = FlatLattice(CENTER[:2], 1.0, 6.0)
    sampler = FlatBundleSampler(t, y, TAU, 0.2, lat, draws=1500, box_cost=0.0,
                                acceptance_goal=0.99, max_boxes=800, slack=4.0)
    assert sampler.x_near is not None and np.linalg.norm(sampler.fit[:2]) > 1.4
    assert_agrees_with_uniform_exact(sampler, lat, t, y, 0.2, 3e-7)


def test_a_planted_violation_raises(small_problem):
    lat, t, y, sigma = small_problem
    assert_planted_violation_raises(
        FlatBundleSampler(t, y, TAU, sigma, lat, draws=50, max_boxes=300))


def test_emitted_indices_are_reachable_for_a_neighbour(small_problem):
    lat, t, y, sigma = small_problem

    def neighbour_of(t, y, rng):
        t2, y2 = t.copy(), y.copy()
        t2[5], y2[5] = 0.37, y[5] + rng.normal(0.0, 3.0, 2)
        return t2, y2

    assert_reachable_for_a_neighbour(
        lambda t, y, **options: FlatBundleSampler(t, y, TAU, sigma, lat, **options),
        lat, t, y, neighbour_of)


def test_emitted_indices_are_reachable_for_a_neighbour_in_three_dimensions():
    t, y = make_data(30, 4, d=3)
    lat = FlatLattice(CENTER, 1.0, 1.5)

    def neighbour_of(t, y, rng):
        t2, y2 = t.copy(), y.copy()
        t2[5], y2[5] = 0.37, y[5] + rng.normal(0.0, 3.0, 3)
        return t2, y2

    assert_reachable_for_a_neighbour(
        lambda t, y, **options: FlatBundleSampler(t, y, TAU, 0.2, lat, **options),
        lat, t, y, neighbour_of)


@pytest.mark.parametrize("d", [1, 2, 3])
def test_compiled_term_sums_match_numpy(d):
    """The numba kernel (dpcore.sampling._flat_numba) and the numpy path give the same term
    sums to 1e-12 (relative to each array's scale) on leaves near and far from the fit."""
    pytest.importorskip("numba", reason="numba not installed: only the numpy path runs")
    t, y = make_data(40, 30 + d, d=d)
    sampler = FlatBundleSampler(t, y, TAU, 0.05, FlatLattice(CENTER[:d], 2.0, 3.0), draws=1,
                                max_boxes=50)
    rng = np.random.default_rng(d)
    dim = 2 * d
    zc = sampler.fit + rng.normal(0.0, 1.0, (60, dim)) * 10.0 ** rng.uniform(-2, 0.3, (60, 1))
    basis = rng.normal(0.0, 1.0, (60, dim, dim)) * 10.0 ** rng.uniform(-3, 0, (60, 1, 1))
    slack = np.full((60, dim), 1e-12)
    sampler.compiled = True
    fast = sampler._terms(zc, basis, slack)
    sampler.compiled = False
    slow = sampler._terms(zc, basis, slack)
    for a, b in zip(fast, slow, strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12 * (1.0 + np.max(np.abs(b))))


def test_compiled_g_matches_the_library():
    """The compiled g of the proposals (dpcore.sampling._flat_numba.flat_g) and the library's
    regression_gradient agree to 1e-12 relative (the certificate's float slack covers both)."""
    pytest.importorskip("numba", reason="numba not installed: only the numpy path runs")
    t, y = make_data(50, 40)
    sampler = FlatBundleSampler(t, y, TAU, 0.05, FlatLattice(CENTER[:2], 2.0, 3.0), draws=1,
                                max_boxes=50)
    z = sampler.fit + np.random.default_rng(0).normal(0.0, 1.5, (200, 4))
    sampler.compiled = True
    fast = sampler._g(z)
    sampler.compiled = False
    slow = sampler._g(z)
    np.testing.assert_allclose(fast, slow, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(slow, g_of(t, y, CENTER[:2] + z[:, :2], z[:, 2:]), rtol=0,
                               atol=0)


def test_the_kernel_gets_one_memory_layout(monkeypatch):
    """The leaves' bases come Fortran-ordered (the first leaves) or strided (split leaves);
    the kernel is handed C-contiguous float arrays only, so numba compiles one specialisation
    (each further layout is seconds of compile in a fresh process, and `make venv`'s warm-up
    compiles only the one it meets). The values do not depend on the layout."""
    pytest.importorskip("numba", reason="numba not installed: only the numpy path runs")
    from dpcore.data import make_regression_data
    from dpcore.release import private_geodesic_regression
    from dpcore.sampling import bundle_flat

    seen = []
    kernel = bundle_flat._flat_terms

    def spy(*args):
        seen.extend((a.dtype, a.flags.c_contiguous) for a in args[:3])
        return kernel(*args)

    monkeypatch.setattr(bundle_flat, "_flat_terms", spy)
    for n, eps in ((40, 1.25), (200, 2.5)):
        data = make_regression_data(Euclidean(2), n, rng=1)
        rel = private_geodesic_regression(
            Euclidean(2), data.x, data.y, eps_p=eps, eps_v=eps, tau=0.3, tau_m=1.0,
            center=np.zeros(2), covariate_range=(0.0, 1.0), rng=0)
        assert rel.delta == 0.0
    assert seen and set(seen) == {(np.dtype(float), True)}


def test_progress_reports_and_cancels(small_problem):
    lat, t, y, sigma = small_problem
    assert_reports_and_cancels(
        lambda **options: FlatBundleSampler(t, y, TAU, sigma, lat, **options), 200)
