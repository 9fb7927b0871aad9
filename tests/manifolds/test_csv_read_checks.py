"""The faster point checks of the CSV reader (issue 31 point 3) against the checks of before:
``SPD.csv_read`` (a closed form clears 2 x 2 matrices before ``eigvalsh``), the SPD matrix built
from its upper triangle, ``KendallShape.csv_read`` (fewer passes, the raw size only near the
threshold, the final ``belongs`` check skipped when it surely passes) and the bit-exact row mean
they share. Each is compared, bit for bit and decision for decision, with a copy of the code of
before or with an independent oracle (``numpy.linalg.eigvalsh``, ``belongs``) on adversarial
rows: matrices at the ``PD_RTOL`` and ``PD_MIN_EIGENVALUE`` thresholds, subnormal and huge
entries, signed zeros, degenerate and nearly degenerate landmark configurations.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.manifolds import SPD, KendallShape
from dpcore.manifolds._csv_format import _mean_rows
from dpcore.manifolds._functions import stable_norm
from dpcore.manifolds._spd_csv import PD_MIN_EIGENVALUE, PD_RTOL, _not_safely_pd


# ------------------------------------------------------------------------------ the code of before
def old_from_csv_rows(k, values):
    iu = np.triu_indices(k)
    mats = np.zeros(values.shape[:-1] + (k, k))
    mats[..., iu[0], iu[1]] = values
    return mats + np.triu(mats, 1).swapaxes(-1, -2)


def oracle_not_pd(mats):
    """The decision of before: ``eigvalsh`` on every matrix."""
    eig = np.linalg.eigvalsh(mats)
    scale = np.max(np.abs(eig), axis=-1)
    return eig[:, 0] <= np.maximum(PD_RTOL * scale, PD_MIN_EIGENVALUE), eig


def old_kendall(m, values):
    """``from_csv_rows`` and the degenerate rows as ``_csv_landmarks`` computed them."""
    land = values.reshape(values.shape[:-1] + m.point_shape)
    centred = land - land.mean(axis=-2, keepdims=True)
    centred -= centred.mean(axis=-2, keepdims=True)
    size = stable_norm(centred.reshape(values.shape))
    degenerate = size <= 1e-12 * np.maximum(stable_norm(values), 1.0)
    out = np.zeros(centred.shape)
    out[~degenerate] = centred[~degenerate] / size[~degenerate, None, None]
    return out, degenerate


# ------------------------------------------------------------------------------ row means
@pytest.mark.parametrize("seed", range(4))
def test_mean_rows_is_numpys_mean_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    for _ in range(400):
        n, k, d = int(rng.integers(0, 30)), int(rng.integers(1, 150)), int(rng.integers(1, 4))
        x = rng.normal(size=(n, k, d)) * 10.0 ** rng.integers(-300, 300, size=(n, k, d))
        x[rng.random(x.shape) < 0.1] = 5e-324
        x[rng.random(x.shape) < 0.1] = -0.0
        x[rng.random(x.shape) < 0.05] = 0.0
        got, want = _mean_rows(x), np.mean(x, axis=-2, keepdims=True)
        assert got.shape == want.shape and got.tobytes() == want.tobytes()
    x = np.full((5, 8, 2), -0.0)
    assert _mean_rows(x).tobytes() == np.mean(x, axis=-2, keepdims=True).tobytes()


# ------------------------------------------------------------------------------ SPD
def spd_2x2_adversarial(rng, n=4000):
    """Symmetric 2 x 2 matrices around every threshold of the check."""
    angle = rng.uniform(0, np.pi, n)
    c, s = np.cos(angle), np.sin(angle)
    rot = np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)
    big = 10.0 ** rng.uniform(-120, 12, n)
    ratio = rng.choice([1e-13, 9e-13, 1e-12, 1.1e-12, 2e-12, 9e-12, 1e-11, 1.1e-11, 1e-6, 0.5,
                        1.0, 0.0, -1e-12, -1.0], n) * (1 + rng.normal(0, 1e-4, n))
    eig = np.stack([ratio * big, big], -1)
    mats = (rot * eig[:, None, :]) @ rot.swapaxes(-1, -2)
    mats = 0.5 * (mats + mats.swapaxes(-1, -2))
    # Smallest eigenvalues right at PD_MIN_EIGENVALUE, subnormal, zero and huge entries.
    m = n // 8
    mats[:m] = np.eye(2) * rng.choice([1e-100, 1.0000001e-100, 1e-99, 9.9e-100, 5e-324,
                                       2e-308, 1e-60, 1e-61, 1e60, 1e61, 1e12], (m, 1, 1))
    # Correlations of magnitude 1 and just below or above.
    mats[m:2 * m, 0, 1] = mats[m:2 * m, 1, 0] = np.sqrt(np.abs(
        mats[m:2 * m, 0, 0] * mats[m:2 * m, 1, 1])) * (
        1 + rng.choice([-1e-6, -1e-12, 0.0, 1e-12], m))
    mats[2 * m:3 * m] = rng.normal(size=(m, 1, 1)) * np.array([[1.0, 0.0], [0.0, -0.0]])
    mats[3 * m:3 * m + 8] = np.array([[1e12, 1e12], [1e12, 1e12]])
    mats[3 * m + 8:3 * m + 16] = np.array([[1e200, 0.999999e200], [0.999999e200, 1e200]])
    mats[3 * m + 16:3 * m + 24] = np.array([[-0.0, 0.0], [0.0, -0.0]])
    return mats


@pytest.mark.parametrize("seed", range(5))
def test_spd_check_decides_as_eigvalsh_on_every_matrix(seed):
    rng = np.random.default_rng(seed)
    mats = spd_2x2_adversarial(rng)
    want, eig = oracle_not_pd(mats)
    bad, got_eig = _not_safely_pd(mats)
    assert bad.tolist() == want.tolist()
    # The messages quote eigvalsh's eigenvalues of the matrices rejected, bit for bit.
    assert got_eig[bad].tobytes() == eig[bad].tobytes()
    # Both sides of every threshold are there, and the closed form sends some to eigvalsh.
    assert 0 < bad.sum() < bad.size and 0 < np.isnan(got_eig[:, 0]).sum() < bad.size
    with np.errstate(all="ignore"):
        ratio = eig[:, 0] / np.max(np.abs(eig), axis=-1)
    assert ((ratio > 0.5e-12) & (ratio < 2e-12) & ~bad).any()
    assert ((ratio > 0.5e-12) & (ratio <= 1e-12) & bad).any()
    assert ((eig[:, 0] > 0.5e-100) & (eig[:, 0] < 2e-99) & ~bad).any()
    assert ((eig[:, 0] > 0.5e-100) & (eig[:, 0] <= 1e-100) & bad).any()


def test_spd_3x3_check_is_eigvalsh():
    rng = np.random.default_rng(1)
    a = rng.normal(size=(500, 3, 3))
    mats = a @ a.swapaxes(-1, -2) * rng.choice([1.0, 1e-110, 1e-3], (500, 1, 1))
    mats[::7, 2] = mats[::7, :, 2] = 0.0
    bad, eig = _not_safely_pd(mats)
    want, want_eig = oracle_not_pd(mats)
    assert bad.tolist() == want.tolist() and eig.tobytes() == want_eig.tobytes()


@pytest.mark.parametrize("k", [2, 3, 5])
def test_spd_matrices_from_the_upper_triangle_as_before(k):
    rng = np.random.default_rng(k)
    values = rng.normal(size=(300, k * (k + 1) // 2))
    values[rng.random(values.shape) < 0.2] = -0.0
    values[rng.random(values.shape) < 0.1] = 0.0
    m = SPD(k)
    got = m.from_csv_rows(values)
    assert got.tobytes() == old_from_csv_rows(k, values).tobytes()
    assert m.from_csv_rows(values[0]).tobytes() == old_from_csv_rows(k, values[0]).tobytes()
    assert m.from_csv_rows(values[:0]).shape == (0, k, k)


@pytest.mark.parametrize("seed", range(3))
def test_spd_csv_read_as_before(seed):
    rng = np.random.default_rng(seed)
    m = SPD(2)
    mats = spd_2x2_adversarial(rng, 2000)
    values = m.to_csv_rows(mats)
    ok = rng.random(len(values)) < 0.9
    points, problems, on_manifold = m.csv_read(values, ok)
    assert on_manifold and points.tobytes() == old_from_csv_rows(2, values).tobytes()
    want, eig = oracle_not_pd(old_from_csv_rows(2, values[ok]))
    (check,) = problems
    assert check.mask.tolist() == want.tolist()
    for i in np.flatnonzero(want)[:50]:
        assert f"smallest eigenvalue {eig[i, 0]:.6g}, largest {eig[i, -1]:.6g}" in check.message(i)
    (again,) = m.csv_problems(values[ok])
    assert again.mask.tolist() == want.tolist()
    assert m.csv_read(values[:0], np.zeros(0, bool))[1] == []
    assert m.csv_read(values, np.zeros(len(values), bool))[1] == []


# ------------------------------------------------------------------------------ Kendall
def kendall_adversarial(rng, k, n=3000):
    """Raw landmark rows: ordinary, far from the origin, tiny, degenerate and nearly so."""
    values = rng.normal(size=(n, 2 * k)) * 10.0 ** rng.uniform(-5, 5, (n, 1))
    m = n // 10
    values[:m] += 10.0 ** rng.uniform(0, 12, (m, 1))  # offset far beyond the spread
    values[m:2 * m] = rng.normal(size=(m, 1))  # every landmark at one place: degenerate
    base = rng.normal(size=(m, 1)) * 10.0 ** rng.uniform(-3, 11, (m, 1))
    spread = np.abs(base) * rng.choice([1e-13, 1e-12, 2e-12, 1e-11, 1e-9], (m, 1))
    values[2 * m:3 * m] = base + spread * rng.normal(size=(m, 2 * k))
    values[3 * m:3 * m + 10] = rng.normal(size=(10, 2 * k)) * 1e-200
    values[3 * m + 10:3 * m + 20] = 0.0
    values[3 * m + 20:3 * m + 30] = -0.0
    values[3 * m + 30:3 * m + 40] = rng.normal(size=(10, 2 * k)) * 1e-13
    values[3 * m + 40:3 * m + 50] = 1e12 + rng.normal(size=(10, 2 * k)) * 1e-3
    return rng.permutation(values)  # every kind in every block of rows


@pytest.mark.parametrize(("k", "seed", "n"), [(3, 0, 3000), (8, 1, 3000), (8, 2, 9000),
                                              (13, 3, 3000), (4, 4, 1), (5, 5, 4097)])
def test_kendall_csv_read_as_before(k, seed, n):
    """Several blocks of rows (4096 each), or one row, as the rows all at once before."""
    rng = np.random.default_rng(seed)
    m = KendallShape(k)
    values = kendall_adversarial(rng, k, max(n, 100))[:n]
    if n == 1:
        values = np.vstack([values, np.full_like(values, 3.0)])  # and a degenerate one
    ok = rng.random(len(values)) < 0.95
    points, problems, _ = m.csv_read(values, ok, atol=1e-6)
    want_points, degenerate = old_kendall(m, values)
    assert points.tobytes() == want_points.tobytes()
    assert points.tobytes() == m.from_csv_rows(values).tobytes()
    assert 0 < degenerate.sum() < len(values)
    assert [p.mask.tolist() for p in problems] == (
        [degenerate[ok].tolist()] if degenerate[ok].any() else [])
    assert [p.mask.tolist() for p in m.csv_problems(values[ok])] == [
        p.mask.tolist() for p in problems]


@pytest.mark.parametrize("atol", [1e-6, 1e-12, 1e-14, 1e-16, 0.5, 3.0])
def test_kendall_skips_the_final_check_only_when_every_point_belongs(atol):
    """``on_manifold`` True only when ``belongs`` holds for every row: the reader's final
    check would have found nothing."""
    rng = np.random.default_rng(7)
    m = KendallShape(6)
    for values in (rng.normal(size=(2000, 12)),
                   1e12 + rng.normal(size=(200, 12)) * 10.0 ** rng.uniform(-3, 0, (200, 1)),
                   rng.normal(size=(200, 12)) * 1e-150,
                   5.0 + rng.normal(size=(200, 12)) * 1e-10):
        ok = np.ones(len(values), bool)
        points, problems, on_manifold = m.csv_read(values, ok, atol=atol)
        if problems:
            continue
        belongs = m.belongs(points, atol=atol)
        if on_manifold:
            assert belongs.all()
        elif atol >= 1e-12:
            assert not belongs.all() or values[0, 0] > 1e11, "the screen missed clean rows"
