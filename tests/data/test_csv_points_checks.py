"""The faster checks of :mod:`dpcore.data._csv_points` (issue 31 point 3) against the code of
before, decision for decision and bit for bit: full SPD matrices checked symmetric (the pairs
``i < j`` column by column) and halved into their upper triangle, and the test whether raw
landmark rows are already preshapes (sums of squares in another order, numpy's norm only near
the threshold). Adversarial rows sit at the thresholds: asymmetries of exactly ``atol`` times
the largest entry, norms and means within an ulp of ``1 +- atol`` and ``atol``.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.data._csv_points import _are_preshapes, _spd_from_full
from dpcore.data._table_rows import _Collector
from dpcore.exceptions import MAX_PROBLEMS
from dpcore.manifolds import SPD, KendallShape


# ------------------------------------------------------------------------------ the code of before
def old_spd_from_full(m, values, rows, ok, atol, problems, names):
    k = m.k
    mats = values.reshape(-1, k, k)
    scale = np.max(np.abs(mats), axis=(-2, -1))
    gap = np.abs(mats - mats.swapaxes(-1, -2))
    bad = ok & np.any(gap > atol * scale[:, None, None], axis=(-2, -1))
    for i in np.flatnonzero(bad)[:MAX_PROBLEMS]:
        lower = gap[i] > atol * scale[i]
        a, b = (int(v) for v in np.argwhere(np.tril(lower, -1))[0])
        problems.add(int(rows[i]), names[a * k + b], (
            f"the matrix is not symmetric: {names[a * k + b]} = {mats[i, a, b]:.6g} but "
            f"{names[b * k + a]} = {mats[i, b, a]:.6g}. A full SPD matrix must equal its "
            f"transpose (up to atol={atol:g} times its largest entry)."))
    problems.total += max(int(bad.sum()) - MAX_PROBLEMS, 0)
    iu = np.triu_indices(k)
    upper = (0.5 * (mats + mats.swapaxes(-1, -2)))[:, iu[0], iu[1]]
    return upper, ~bad


def old_are_preshapes(m, y, ok, atol):
    land = y[ok].reshape((-1, *m.point_shape))
    centred = np.max(np.abs(land.mean(axis=-2)), axis=-1, initial=0.0) <= atol
    unit = np.abs(np.linalg.norm(land.reshape(land.shape[0], -1), axis=-1) - 1) <= atol
    return bool(np.all(centred & unit))


# ------------------------------------------------------------------------------ SPD, full matrices
def full_matrices(rng, k, n=400, atol=1e-6):
    a = rng.normal(size=(n, k, k))
    mats = a @ a.swapaxes(-1, -2) * 10.0 ** rng.uniform(-200, 11, (n, 1, 1))
    scale = np.max(np.abs(mats), axis=(-2, -1))
    i, j = rng.integers(0, k, n), rng.integers(0, k, n)
    # Asymmetries of about atol times the largest entry, on either side, and signed zeros.
    step = rng.choice([0.0, 0.5, 0.999999, 1.0, 1.000001, 2.0], n) * atol * scale
    mats[np.arange(n), i, j] += step
    mats[rng.random(mats.shape) < 0.05] = -0.0
    mats[:3] = -0.0
    return mats.reshape(n, k * k)


@pytest.mark.parametrize(("k", "seed"), [(2, 0), (2, 1), (3, 2), (4, 3)])
def test_full_spd_matrices_as_before(k, seed):
    rng = np.random.default_rng(seed)
    m = SPD(k)
    names = [f"s{a}{b}" for a in range(1, k + 1) for b in range(1, k + 1)]
    for atol in (1e-6, 1e-12, 0.5):
        values = full_matrices(rng, k, atol=atol)
        rows = np.arange(len(values)) + 2
        ok = rng.random(len(values)) < 0.95
        order = {c: j for j, c in enumerate(names)}
        got_p, want_p = _Collector(order), _Collector(order)
        upper, symmetric = _spd_from_full(m, values, rows, ok, atol, got_p, names)
        want_upper, want_symmetric = old_spd_from_full(m, values, rows, ok, atol, want_p,
                                                       names)
        assert upper.tobytes() == want_upper.tobytes() and upper.shape == want_upper.shape
        assert symmetric.tolist() == want_symmetric.tolist()
        assert got_p.total == want_p.total and got_p.items == want_p.items
        assert 0 < (~symmetric).sum() < len(values) or atol == 0.5


# ------------------------------------------------------------------------------ preshapes
def preshape_rows(rng, m, n, atol):
    """Preshapes, then nudged to norms and means at ``1 +- atol`` and ``atol``, by an ulp or
    so either side."""
    y = m.to_csv_rows(m.from_csv_rows(rng.normal(size=(n, 2 * m.k_landmarks))))
    scale = 1 + rng.choice([-1, 1], (n, 1)) * atol * (1 + rng.choice(
        [-2e-16, -1e-16, 0.0, 1e-16, 2e-16, -1e-9, 1e-9], (n, 1)))
    y = y * np.where(rng.random((n, 1)) < 0.5, scale, 1.0)
    shift = atol * (1 + rng.choice([-1e-15, -2e-16, 0.0, 2e-16, 1e-15], (n, 1)))
    y[:, ::2] += np.where(rng.random((n, 1)) < 0.3, shift, 0.0)
    return np.ascontiguousarray(y)


@pytest.mark.parametrize("atol", [1e-6, 1e-9, 1e-3, 0.5, 4.0])
def test_are_preshapes_decides_as_before(atol):
    rng = np.random.default_rng(int(atol * 1e6) % 1000)
    m = KendallShape(5)
    outcomes = set()
    for trial in range(300):
        n = int(rng.integers(1, 200))
        y = preshape_rows(rng, m, n, atol)
        if trial % 5 == 0:  # raw landmarks, or one raw row among preshapes
            y[int(rng.integers(n))] = rng.normal(size=y.shape[1]) * 3 + 2
        ok = rng.random(n) < 0.9
        ok[0] = True
        want = old_are_preshapes(m, y, ok, atol)
        assert _are_preshapes(m, y, ok, atol) == want
        outcomes.add(want)
        # One row at a time: each row's own decision, near the threshold too.
        if trial % 10 == 0:
            for i in range(min(n, 30)):
                one = np.ones(1, dtype=bool)
                assert _are_preshapes(m, y[i:i + 1], one, atol) == old_are_preshapes(
                    m, y[i:i + 1], one, atol)
    assert outcomes == {True, False}


@pytest.mark.parametrize("at", [0, 63, 64, 400, 4159, 4160, 9999])
def test_are_preshapes_looks_at_every_block(at):
    rng = np.random.default_rng(3)
    m = KendallShape(4)
    y = preshape_rows(rng, m, 10000, 1e-6)
    y = m.to_csv_rows(m.from_csv_rows(y))
    ok = np.ones(10000, dtype=bool)
    assert _are_preshapes(m, y, ok, 1e-6) and old_are_preshapes(m, y, ok, 1e-6)
    y[at, 0] += 1e-3
    assert not _are_preshapes(m, y, ok, 1e-6) and not old_are_preshapes(m, y, ok, 1e-6)
    ok[at] = False
    assert _are_preshapes(m, y, ok, 1e-6) and old_are_preshapes(m, y, ok, 1e-6)


# ------------------------------------------------------------------------------ sphere
def sphere_rows(rng, n, c, atol):
    """Rows with norms at ``1 +- atol`` give or take an ulp or a 1e-9, zero rows, subnormal and
    huge rows, and ordinary points."""
    y = rng.normal(size=(n, c))
    y /= np.linalg.norm(y, axis=-1, keepdims=True)
    side = rng.choice([-1.0, 1.0, 0.0], (n, 1))
    nudge = rng.choice([-1e-9, -3e-16, -1e-16, 0.0, 1e-16, 3e-16, 1e-9], (n, 1))
    y *= 1 + side * atol * (1 + nudge) + rng.choice([0.0, 2.2e-16, -2.2e-16], (n, 1))
    m = n // 20
    y[:m] = 0.0
    y[m:2 * m] *= 1e-170
    y[2 * m:3 * m] = 5e-324
    y[3 * m:4 * m] *= 1e11
    y[4 * m:5 * m] = -0.0
    return y


@pytest.mark.parametrize(("c", "atol"), [(3, 1e-6), (3, 1e-12), (3, 1e-16), (2, 0.5),
                                         (4, 1.0), (3, 2.0), (11, 1e-6)])
def test_sphere_points_checked_as_the_sphere_checks_them(c, atol):
    from dpcore.data._csv_formats import file_format, surely_on_sphere
    from dpcore.manifolds import Sphere

    rng = np.random.default_rng(c)
    m = Sphere(c - 1)
    for trial in range(40):
        n = int(rng.integers(1, 400))
        y = sphere_rows(rng, n, c, atol)
        ok = rng.random(n) < (0.8 if trial % 2 else 1.0)
        points, problems, on = file_format(m).read_points(m, y, ok, atol=atol,
                                                          renormalize=False)
        want_points, want, _ = m.csv_read(y, ok, atol=atol)
        assert points.tobytes() == want_points.tobytes()
        assert [(p.column, p.mask.tolist()) for p in problems] == [
            (p.column, p.mask.tolist()) for p in want]
        for got_check, want_check in zip(problems, want, strict=True):
            for i in np.flatnonzero(want_check.mask):
                assert got_check.message(i) == want_check.message(i)
        if on:
            assert m.belongs(points[ok], atol=atol).all()
        sure = surely_on_sphere(y, atol)
        assert m.belongs(y[sure], atol=atol).all() and not m.csv_problems(y[sure], atol=atol)
