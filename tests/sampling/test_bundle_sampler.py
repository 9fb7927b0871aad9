"""What the certified bundle samplers share (dpcore.sampling.bundle_sampler,
dpcore.sampling.bundle_lattice): the leaf index of their lattices against brute force, and the
contracts every sampler's tests apply to it (a planted violation raises, emitted indices are
reachable for a neighbouring data set, progress is reported and a Cancel stops both the draws
and the envelope's construction). The S² sampler first tested here (a certified mixture on one
chart) was replaced by the native sampler in session 35 and removed."""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.exceptions import EnvelopeViolation
from dpcore.sampling.bundle_lattice import LeafIndex


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


# ------------------------------------------------------------------------------ shared checks
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
