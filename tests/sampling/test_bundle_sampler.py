"""Exact joint KNG on S^2 with a certified mixture proposal (dpcore.sampling.bundle_sampler):
the public lattice and leaf index, agreement with the audited uniform exact sampler
(two-sample KS on footpoint distance, |v| and g), a deliberately wrong bound raises, every
emitted index is reachable for a neighbouring data set, the public cost prediction runs on
public inputs only, and (slow) the cost at n = 250 and n eps = 250, 500, 1000 is reported."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import ks_2samp

from dpcore.exceptions import EnvelopeViolation
from dpcore.learning.regression import regression_gradient
from dpcore.manifolds import Sphere
from dpcore.sampling.bundle_cost import model_data, predict_bundle_cost
from dpcore.sampling.bundle_lattice import BundleLattice, LeafIndex
from dpcore.sampling.bundle_sampler import BundleKNGSampler
from dpcore.sampling.rejection import BundleBall, UniformBall, sample_kng_exact

S2 = Sphere(2)
CENTER = np.array([0.0, 0.0, 1.0])
TAU = 0.2


def regression_data(lattice, n, rng, noise=0.1, uw=(0.1, -0.1, 0.8, 0.5)):
    """Responses about the geodesic with chart coordinates ``uw``, covariates on [0, 1]."""
    t = rng.random(n)
    t[:2] = 0.0, 1.0
    uw = np.asarray(uw, dtype=float)
    p, v = lattice.chart.to_bundle(uw[:2], uw[2:])
    pred = S2.exp(p, t[:, None] * v)
    return t, S2.exp(pred, S2.proj_tangent(pred, noise * rng.standard_normal((n, 3))))


def joint_sigma(n, n_eps, tau=TAU):
    """sigma = 2 Delta / eps with Delta = hypot(2 tau / n, 2 tau / n) (joint scheme)."""
    return 2.0 * np.hypot(2 * tau / n, 2 * tau / n) / (n_eps / n)


def g_of(t, y, p, v):
    gp, gv = regression_gradient(S2, p, v, t, y, tau=TAU)
    return np.sqrt(np.sum(gp**2, axis=-1) + np.sum(gv**2, axis=-1))


# ------------------------------------------------------------------------------ the lattice
def test_lattice_is_public_and_consistent(rng):
    lat = BundleLattice(CENTER, 0.6, 2.0)
    index = rng.integers(0, 2**32, (500, 4), dtype=np.int64)
    z = lat.coordinates(index)
    np.testing.assert_array_equal(lat.index_of(z), index)
    inside = lat.in_support(index)
    assert np.array_equal(inside, (np.hypot(z[:, 0], z[:, 1]) <= 0.6 - 2 * lat.spacing[0])
                          & (np.hypot(z[:, 2], z[:, 3]) <= 2.0 - 2 * lat.spacing[2]))
    assert not lat.in_support(np.array([[-1, 0, 0, 0], [2**32, 0, 0, 0]])).any()
    p, v = lat.point(index)
    np.testing.assert_allclose(np.linalg.norm(p, axis=1), 1.0, atol=1e-15)
    np.testing.assert_allclose(np.sum(p * v, axis=1), 0.0, atol=1e-14)
    for bad in ((CENTER, 2.5, 1.0), (CENTER, 0.5, 3.2)):
        with pytest.raises(ValueError):
            BundleLattice(*bad)


@pytest.mark.parametrize("dim, deep", [(4, False), (6, True)])
def test_leaf_index_matches_brute_force(rng, dim, deep):
    """A random k-d partition of the lattice box by repeated splits; with ``deep``, also 120
    splits of the leaf holding one point, so that leaves reach 120 levels in total (keys of
    two 64-bit words)."""
    lo = np.zeros((1, dim), dtype=np.int64)
    lev = np.zeros((1, dim), dtype=np.int64)
    target = rng.integers(0, 2**32, dim, dtype=np.int64)

    def split(i, axis):
        nonlocal lo, lev
        child = lev[i].copy()
        child[axis] += 1
        hi_lo = lo[i].copy()
        hi_lo[axis] += 1 << (32 - child[axis])
        lo = np.concatenate([np.delete(lo, i, 0), lo[i][None], hi_lo[None]])
        lev = np.concatenate([np.delete(lev, i, 0), child[None], child[None]])

    for _ in range(300):
        split(rng.integers(lo.shape[0]), rng.integers(dim))
    for step in range(120 if deep else 0):
        size = np.left_shift(np.int64(1), 32 - lev)
        hold = np.flatnonzero(np.all((lo <= target) & (target < lo + size), axis=1))[0]
        split(hold, step % dim)
    assert lev.sum(axis=1).max() > (64 if deep else 0)
    leaves = LeafIndex(lo, lev, 32)
    near = np.clip(target + rng.integers(-2**10, 2**10, (500, dim)), 0, 2**32 - 1)
    index = np.concatenate([rng.integers(0, 2**32, (2000, dim), dtype=np.int64), near])
    size = np.left_shift(np.int64(1), 32 - lev)
    brute = np.array([np.flatnonzero(np.all((lo <= k) & (k < lo + size), axis=1))[0]
                      for k in index])
    np.testing.assert_array_equal(leaves.lookup(index), brute)
    # a hint (the leaf a proposal was drawn in) never changes the answer: right, wrong or none
    hint = np.where(rng.random(index.shape[0]) < 0.5, brute,
                    rng.integers(-1, lo.shape[0], index.shape[0]))
    np.testing.assert_array_equal(leaves.lookup(index, hint), brute)
    assert leaves.lookup(np.array([[-1] + [0] * (dim - 1)]))[0] == -1
    assert leaves.lookup(np.array([[-1] + [0] * (dim - 1)]), np.array([0]))[0] == -1


# ------------------------------------------------------------------------------ exactness
@pytest.fixture(scope="module")
def small_problem():
    rng = np.random.default_rng(20240528)
    lat = BundleLattice(CENTER, 0.6, 2.0)
    t, y = regression_data(lat, 40, rng)
    return lat, t, y, joint_sigma(40, 40.0)


def test_agrees_with_the_uniform_exact_sampler(small_problem):
    """n = 40, n eps = 40: both exact samplers, 1500 draws each (fixed seeds), KS p > 1e-6 on
    the footpoint's distance to the centre, |v| and g. The refinement is forced (box_cost 0)
    so that both components of the proposal carry weight."""
    lat, t, y, sigma = small_problem
    sampler = BundleKNGSampler(t, y, TAU, sigma, lat, draws=1500, box_cost=0.0,
                               acceptance_goal=0.99, max_boxes=400, slack=4.0)
    diag = sampler.diagnostics
    assert 0.01 < diag["beta"] < 0.99 and diag["q1_boxes"] >= 1
    tried = assert_agrees_with_uniform_exact(sampler, lat, t, y, sigma, 1e-6)
    print(f"acceptance {1500 / tried:.3g}, diagnostics {diag}")


def test_a_wrong_bound_raises(small_problem):
    lat, t, y, sigma = small_problem
    sampler = BundleKNGSampler(t, y, TAU, sigma, lat, draws=50, max_boxes=50)
    sampler.log_m -= 4.0  # M below the certified one: some proposal must exceed it
    with pytest.raises(EnvelopeViolation):
        sampler.sample_indices(200, np.random.default_rng(3))


def test_emitted_indices_are_reachable_for_a_neighbour(small_problem):
    lat, t, y, sigma = small_problem
    rng = np.random.default_rng(4)
    sampler = BundleKNGSampler(t, y, TAU, sigma, lat, draws=200, box_cost=0.0, max_boxes=200)
    index, _ = sampler.sample_indices(200, rng)
    t2, y2 = neighbour_rows(t, y, rng)             # one row replaced
    neighbour = BundleKNGSampler(t2, y2, TAU, sigma, lat, draws=200, box_cost=0.0,
                                 max_boxes=150, sigma_ratios=(2.0, 5.0))
    assert neighbour.reachable(index).all()
    assert sampler.reachable(index).all()
    # and nothing outside the public support is ever reachable
    outside = index.copy()
    outside[:, 2] = 0                                        # w far outside |w| <= V
    assert not neighbour.reachable(outside).any()


def test_public_cost_prediction():
    lat = BundleLattice(CENTER, 0.5, 1.5)
    t, y = model_data(64, lat, TAU)
    assert t.shape == (64,) and np.allclose(np.linalg.norm(y, axis=1), 1.0)
    first = predict_bundle_cost(250, joint_sigma(250, 40.0), TAU, lat, 9, max_boxes=60)
    again = predict_bundle_cost(250, joint_sigma(250, 40.0), TAU, lat, 9, max_boxes=60)
    assert first["boxes"] == again["boxes"] and first["work"] == again["work"]  # deterministic
    assert first["boxes"] >= 1 and 1.0 <= first["proposals_per_draw"] < np.inf
    assert first["work"] > 0


# ------------------------------------------------------------------------------ shared checks
_REFERENCE = {}


def uniform_reference(t, y, sigma, radius, draws):
    """``draws`` draws of the audited uniform exact sampler (seed 2, speeds up to 2) and their
    g. The draws are a deterministic function of the arguments, and the bundle samplers'
    agreement tests (here, test_bundle_whitened, test_bundle_farfield, test_sphere_taylor)
    share one problem: computed once per session, returned read-only."""
    key = (t.tobytes(), y.tobytes(), t.shape, y.shape, float(sigma), float(radius), int(draws))
    if key not in _REFERENCE:
        def g(z):
            return g_of(t, y, z[:, 0], z[:, 1])

        ref, _ = sample_kng_exact(g, sigma, BundleBall(UniformBall(S2, CENTER, radius), 2.0),
                                  draws, np.random.default_rng(2), n_terms=t.size)
        g_ref = g(ref)
        ref.setflags(write=False)
        g_ref.setflags(write=False)
        _REFERENCE[key] = ref, g_ref
    return _REFERENCE[key]


def assert_agrees_with_uniform_exact(sampler, lat, t, y, sigma, threshold, draws=1500):
    """The contract every bundle sampler meets: ``draws`` draws of ``sampler`` and of the audited
    uniform exact sampler (fixed seeds 1 and 2) pass three two-sample KS tests (the footpoint's
    distance to the centre, |v|, g) at ``threshold`` each. Returns the proposals tried."""
    index, tried = sampler.sample_indices(draws, np.random.default_rng(1))
    assert lat.in_support(index).all()
    p, v = lat.point(index)

    ref, g_ref = uniform_reference(t, y, sigma, lat.radius, draws)
    stats = {"distance": (S2.dist(p, CENTER), S2.dist(ref[:, 0], CENTER)),
             "|v|": (np.linalg.norm(v, axis=1), np.linalg.norm(ref[:, 1], axis=1)),
             "g": (g_of(t, y, p, v), g_ref)}
    for name, (a, b) in stats.items():
        pvalue = ks_2samp(a, b).pvalue
        print(f"{name}: KS p = {pvalue:.3g}")
        assert pvalue > threshold, name
    return tried


def assert_planted_violation_raises(sampler):
    """Contract of every certified bundle sampler: with M lowered below the certified one some
    proposal must exceed it, and sampling raises instead of releasing."""
    sampler.log_m -= 4.0
    with pytest.raises(EnvelopeViolation):
        sampler.sample_indices(200, np.random.default_rng(3))


class _Cancelled(Exception):
    """What a user interface's progress callback raises to stop a run."""


def assert_progress_reports_and_cancels(sample):
    """Contract of every certified bundle sampler: ``sample(size, progress)`` calls
    ``progress(have / size)`` after every batch of proposals, so a long run shows its progress
    and a callback that raises (a Cancel) stops it there, not after every draw is in."""
    seen = []
    sample(200, seen.append)
    assert len(seen) >= 2 and seen == sorted(seen) and seen[-1] == 1.0, seen[:5]
    assert all(0.0 <= f <= 1.0 for f in seen)
    calls = []

    def cancel(fraction):
        calls.append(fraction)
        raise _Cancelled

    with pytest.raises(_Cancelled):
        sample(200, cancel)
    assert len(calls) == 1 and calls[0] < 1.0


def assert_construction_reports_and_cancels(build):
    """Contract of every certified bundle sampler: ``build(progress)`` (its constructor) calls
    ``progress(fraction)`` after every round of the envelope's refinement, rising within
    [0, 1], so the construction shows its progress and a callback that raises (a Cancel)
    stops it at its first round."""
    seen = []
    build(seen.append)
    assert len(seen) >= 3 and seen == sorted(seen), seen[:5]
    assert all(0.0 <= f <= 1.0 for f in seen) and seen[-1] > seen[0]
    calls = []

    def cancel(fraction):
        calls.append(fraction)
        raise _Cancelled

    with pytest.raises(_Cancelled):
        build(cancel)
    assert len(calls) == 1


def assert_reports_and_cancels(make, build_boxes, draw_boxes=50):
    """Both progress contracts for a sampler class ``make(**options)``: its draws
    (:func:`assert_progress_reports_and_cancels`, ``draw_boxes`` leaves) and its envelope's
    construction (:func:`assert_construction_reports_and_cancels`, ``build_boxes`` leaves,
    refinement forced)."""
    sampler = make(draws=50, max_boxes=draw_boxes)
    assert_progress_reports_and_cancels(
        lambda size, progress: sampler.sample(size, np.random.default_rng(6), progress=progress))
    assert_construction_reports_and_cancels(
        lambda progress: make(draws=200, box_cost=0.0, max_boxes=build_boxes,
                              progress=progress))


def assert_reachable_for_a_neighbour(make, lat, t, y, neighbour_of):
    """Contract of every certified bundle sampler (float safety): the indices one data set
    emits are reachable from a neighbouring one (``neighbour_of(t, y, rng)``), and so is every
    random support cell, nothing outside. ``make(t, y, **options)`` builds a sampler."""
    rng = np.random.default_rng(4)
    sampler = make(t, y, draws=200, box_cost=0.0, max_boxes=200)
    index, _ = sampler.sample_indices(200, rng)
    t2, y2 = neighbour_of(t, y, rng)               # one row replaced
    neighbour = make(t2, y2, draws=200, box_cost=0.0, max_boxes=150, sigma_ratios=(2.0, 5.0))
    assert neighbour.reachable(index).all()
    cells = np.random.default_rng(5).integers(0, 2**32, (400, lat.dim), dtype=np.int64)
    inside = lat.in_support(cells)
    assert np.array_equal(neighbour.reachable(cells), inside) and inside.any()


def neighbour_rows(t, y, rng):
    """A neighbouring data set: row 5 replaced (covariate 0.37, a random response)."""
    t2, y2 = t.copy(), y.copy()
    t2[5], y2[5] = 0.37, S2.random_point(rng=rng)
    return t2, y2


def test_progress_reports_and_cancels(small_problem):
    lat, t, y, sigma = small_problem
    assert_reports_and_cancels(
        lambda **options: BundleKNGSampler(t, y, TAU, sigma, lat, **options), 300)
