"""The closed-form 2 x 2 and 3 x 3 symmetric eigendecompositions used by SPD against LAPACK."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcore.manifolds import SPD
from dpcore.manifolds.spd import eigh

EDGE_CASES = [
    np.diag([3.0, 1.0]),
    np.diag([1.0, 3.0]),
    np.eye(2),
    np.zeros((2, 2)),
    -np.eye(2),
    np.diag([1e-10, 1.0]),
    np.array([[1.0, 1e-9], [1e-9, 1.0]]),
    np.array([[0.0, 2.0], [2.0, 0.0]]),
]


def check(a, vals, vecs):
    np.testing.assert_allclose(vals, np.linalg.eigh(a)[0], atol=1e-14 * (1 + np.abs(a).max()))
    np.testing.assert_allclose(
        (vecs * vals[..., None, :]) @ vecs.mT, a, atol=1e-14 * (1 + np.abs(a).max())
    )
    np.testing.assert_allclose(vecs.mT @ vecs, np.broadcast_to(np.eye(2), vecs.shape), atol=1e-15)


@pytest.mark.parametrize("a", EDGE_CASES, ids=range(len(EDGE_CASES)))
def test_edge_cases_single_and_batched(a):
    check(a, *eigh(a))
    check(a[None], *eigh(a[None]))


def test_random_batch_and_singles_agree(rng):
    a = rng.normal(size=(500, 2, 2)) * rng.lognormal(size=(500, 1, 1))
    a = a + a.mT
    vals, vecs = eigh(a)
    check(a, vals, vecs)
    for i in range(0, 500, 50):
        np.testing.assert_allclose(eigh(a[i])[0], vals[i], atol=1e-14 * np.abs(a[i]).max())


def test_tiny_eigenvalue_keeps_relative_accuracy():
    vals, _ = eigh(np.diag([1e-10, 1.0]))
    assert vals[0] == 1e-10


def test_larger_matrices_use_lapack(rng):
    a = rng.normal(size=(4, 4))
    a = a + a.T
    np.testing.assert_array_equal(eigh(a)[0], np.linalg.eigh(a)[0])


# ---------------------------------------------------------------------- 3 x 3
#: Relative tolerance (to the largest entry) of the 3 x 3 eigenvalues and reconstruction.
RTOL3 = 1e-13


def check3(a, vals, vecs):
    """Eigenvalues against LAPACK, ``V diag(w) V^T = A`` and ``V^T V = I``, relative to |A|."""
    scale = np.abs(a).max(axis=(-2, -1), keepdims=True)
    scale = np.where(scale > 0, scale, 1.0)
    assert vals.shape == a.shape[:-1] and vecs.shape == a.shape
    assert np.all(np.diff(vals, axis=-1) >= 0)
    np.testing.assert_allclose(
        vals / scale[..., 0], np.linalg.eigh(a)[0] / scale[..., 0], rtol=0, atol=RTOL3
    )
    np.testing.assert_allclose(
        (vecs * vals[..., None, :]) @ vecs.mT / scale, a / scale, rtol=0, atol=RTOL3
    )
    np.testing.assert_allclose(
        vecs.mT @ vecs, np.broadcast_to(np.eye(3), vecs.shape), rtol=0, atol=RTOL3
    )


def check3_single_and_batched(a):
    """``check3`` on every matrix of the batch ``a``, one at a time and as a batch."""
    check3(a, *eigh(a))
    for one in a.reshape(-1, 3, 3):
        check3(one, *eigh(one))


def rotations(rng, n):
    q, r = np.linalg.qr(rng.normal(size=(n, 3, 3)))
    return q * np.sign(np.diagonal(r, axis1=-2, axis2=-1))[..., None, :]


def with_spectrum(vals, rot):
    """``R diag(vals) R^T``."""
    return (rot * vals[..., None, :]) @ rot.mT


def spectra(base, gap):
    """Spectra with a (nearly) repeated pair or triple: ``base * (1, 1 + gap, 2)`` etc."""
    rows = [[1.0, 1.0 + gap, 2.0], [-2.0, 1.0, 1.0 + gap], [1.0, 1.0 + gap, 1.0 + 2 * gap]]
    return base * np.array(rows)


EDGE_CASES_3 = [
    np.eye(3),
    np.zeros((3, 3)),
    -np.eye(3),
    5.0 * np.eye(3),
    np.diag([1.0, 1.0, 2.0]),
    np.diag([2.0, 1.0, 1.0]),
    np.diag([1.0, 2.0, 1.0]),
    np.diag([3.0, 2.0, 1.0]),
    np.diag([1e-8, 1.0, 1e8]),
    np.diag([1e8, 1e-8, 1.0]),
    np.diag([1.0, 1e-10, 1e-10]),
    np.diag([0.0, 0.0, 1.0]),
    np.array([[1.0, 1e-9, 0.0], [1e-9, 1.0, 0.0], [0.0, 0.0, 1.0]]),
    np.array([[0.0, 2.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 0.0]]),
    np.ones((3, 3)),
    np.array([[2.0, -1.0, 0.0], [-1.0, 2.0, -1.0], [0.0, -1.0, 2.0]]),
]


@pytest.mark.parametrize("a", EDGE_CASES_3, ids=range(len(EDGE_CASES_3)))
def test_3x3_edge_cases_single_and_batched(a):
    check3(a, *eigh(a))
    check3(a[None], *eigh(a[None]))


@pytest.mark.parametrize("gap", [0.0, 1e-15, 1e-12, 1e-9, 1e-6, 1e-3])
@pytest.mark.parametrize("base", [1.0, -3.0, 1e-6, 1e6])
def test_3x3_repeated_and_nearly_repeated_eigenvalues(rng, gap, base):
    vals = np.repeat(spectra(base, gap), 20, axis=0)
    check3_single_and_batched(with_spectrum(vals, rotations(rng, len(vals))))


def test_3x3_rotated_repeated_eigenvalues(rng):
    rot = rotations(rng, 50)
    for spectrum in ([1.0, 1.0, 2.0], [1.0, 2.0, 2.0], [3.0, 3.0, 3.0]):
        a = with_spectrum(np.array(spectrum), rot)
        vals, vecs = eigh(a)
        np.testing.assert_allclose(vals, np.broadcast_to(spectrum, vals.shape), atol=1e-14)
        check3_single_and_batched(a)


def test_3x3_huge_condition_numbers(rng):
    vals = 10.0 ** rng.uniform(-8, 8, size=(300, 3))
    vals[:100, 0] = 1e-8
    vals[:100, 2] = 1e8
    check3_single_and_batched(with_spectrum(vals, rotations(rng, 300)))


def test_3x3_random_batch_and_singles_agree(rng):
    g = rng.normal(size=(400, 3, 3)) * rng.lognormal(sigma=2.0, size=(400, 1, 1))
    a = g + g.mT
    vals, vecs = eigh(a)
    check3(a, vals, vecs)
    for i in range(0, 400, 20):
        one_vals, one_vecs = eigh(a[i])
        np.testing.assert_allclose(one_vals, vals[i], rtol=0, atol=1e-14 * np.abs(a[i]).max())
        np.testing.assert_allclose(np.abs(one_vecs.T @ vecs[i]), np.eye(3), atol=1e-10)


def test_3x3_batched_leading_axes(rng):
    g = rng.normal(size=(2, 4, 5, 3, 3))
    a = g + g.mT
    vals, vecs = eigh(a)
    assert vals.shape == (2, 4, 5, 3) and vecs.shape == (2, 4, 5, 3, 3)
    check3(a, vals, vecs)
    empty_vals, empty_vecs = eigh(np.zeros((0, 3, 3)))
    assert empty_vals.shape == (0, 3) and empty_vecs.shape == (0, 3, 3)


def test_3x3_eigenvectors_match_lapack_for_separated_eigenvalues(rng):
    vals = np.sort(rng.uniform(-5, 5, size=(300, 3)), axis=-1)
    vals += 0.1 * np.arange(3)  # gaps of at least 0.1
    a = with_spectrum(vals, rotations(rng, 300))
    _, vecs = eigh(a)
    _, ref = np.linalg.eigh(a)
    np.testing.assert_allclose(np.abs(np.sum(vecs * ref, axis=-2)), 1.0, atol=1e-13)


def test_3x3_diagonal_input_keeps_relative_accuracy(rng):
    for d in 10.0 ** rng.uniform(-12, 12, size=(100, 3)):
        for a in (np.diag(d), np.diag(d)[None]):
            vals, vecs = eigh(a)
            np.testing.assert_allclose(vals.ravel(), np.sort(d), rtol=4e-16, atol=0)
            np.testing.assert_array_equal(np.abs(vecs).sum(axis=-2), 1.0)  # signed permutation


def test_3x3_lower_triangle_is_read(rng):
    g = rng.normal(size=(5, 3, 3))
    sym = np.tril(g) + np.tril(g, -1).mT
    check3(sym, *eigh(g))
    for i in range(5):
        check3(sym[i], *eigh(g[i]))


def test_3x3_extreme_scales_fall_back_to_lapack(rng):
    rot = rotations(rng, 3)
    a = np.stack(
        [
            with_spectrum(np.array([1e150, 2e150, 3e150]), rot[0]),
            with_spectrum(np.array([1e-150, 2e-150, 3e-150]), rot[1]),
            with_spectrum(np.array([1.0, 2.0, 3.0]), rot[2]),
            np.eye(3) + 1e-120 * np.diag([1.0, 2.0, 3.0]),
        ]
    )
    vals, vecs = eigh(a)
    for i, one in enumerate(a):
        ref_vals, ref_vecs = np.linalg.eigh(one)
        one_vals, one_vecs = eigh(one)
        np.testing.assert_allclose(vals[i], ref_vals, rtol=1e-13)
        np.testing.assert_allclose(one_vals, ref_vals, rtol=1e-13)
        if i != 2:  # the closed form takes the well-scaled matrix; LAPACK the others
            np.testing.assert_array_equal(vecs[i], ref_vecs)
            np.testing.assert_array_equal(one_vecs, ref_vecs)
    with pytest.raises(np.linalg.LinAlgError):
        eigh(np.full((3, 3), np.nan))


@st.composite
def structured_spectra(draw):
    """Spectra with clusters: each eigenvalue is a scaled base value or a tiny offset of one."""
    scale = 10.0 ** draw(st.floats(-6, 6))
    # No subnormal entries: a spectrum of subnormals (e.g. [0, 2.2e-313, 0], drawn once in a
    # full run) carries only a few significant bits, so no kernel can meet RTOL3 relative to it.
    base = draw(st.lists(st.floats(-10, 10, allow_subnormal=False), min_size=3, max_size=3))
    tie = draw(st.sampled_from([None, (0, 1), (1, 2), (0, 2), "all"]))
    offset = draw(st.sampled_from([0.0, 1e-14, 1e-11, 1e-9, 1e-6, 1e-4]))
    if tie == "all":
        base = [base[0], base[0] * (1 + offset), base[0] * (1 - offset)]
    elif tie is not None:
        base[tie[1]] = base[tie[0]] * (1 + offset)
    return scale * np.array(base)


@settings(derandomize=True, max_examples=300, deadline=None)
@given(
    vals=structured_spectra(),
    angles=st.lists(st.floats(-np.pi, np.pi), min_size=3, max_size=3),
)
def test_3x3_clustered_spectra_property(vals, angles):
    def turn(i, j, t):
        m = np.eye(3)
        m[i, i] = m[j, j] = np.cos(t)
        m[i, j], m[j, i] = -np.sin(t), np.sin(t)
        return m

    rot = turn(0, 1, angles[0]) @ turn(1, 2, angles[1]) @ turn(0, 1, angles[2])
    a = with_spectrum(vals, rot)
    check3(a, *eigh(a))
    check3(a[None], *eigh(a[None]))


# ---------------------------------------------------------------------- SPD(3) single points
def spd_with_spectrum(rng, vals):
    return with_spectrum(np.asarray(vals, dtype=float), rotations(rng, 1)[0])


@pytest.mark.parametrize(
    "spectrum",
    [[1.0, 2.0, 3.0], [1.0, 1.0, 1.0], [1.0, 1.0 + 1e-9, 2.0], [0.5, 0.5, 4.0], [1e-2, 1.0, 1e2]],
)
def test_spd3_single_point_matches_batched_path(rng, spectrum):
    # Single 3 x 3 points take a Cholesky-based scalar path, batches the eigh-based one; both
    # are backward stable, so they agree up to eps times the condition number of x.
    spd = SPD(3)
    x = spd_with_spectrum(rng, spectrum)
    v = spd.random_tangent(x, rng)
    y = spd.exp(x[None], v[None])[0]
    tol = 1e-14 * spectrum[-1] / spectrum[0]

    def close(single, batched):
        np.testing.assert_allclose(single, batched, rtol=tol, atol=tol * np.abs(batched).max())

    close(spd.exp(x, v), y)
    close(spd.log(x, y), spd.log(x[None], y[None])[0])
    close(spd.dist(x, y), spd.dist(x[None], y[None])[0])
    np.testing.assert_allclose(spd.dist(x, x), 0.0, atol=tol)
    np.testing.assert_allclose(spd.log(x, x), 0.0, atol=tol * np.abs(x).max())


def test_spd3_single_point_outside_the_manifold_matches_batched_path():
    spd = SPD(3)
    x = np.diag([1.0, 2.0, 3.0])
    y = np.diag([1.0, -1.0, 2.0])  # not positive definite: log is undefined
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(spd.log(x, y), spd.log(x[None], y[None])[0])
        np.testing.assert_array_equal(spd.dist(x, y), spd.dist(x[None], y[None])[0])
    v = np.diag([1000.0, 0.0, 0.0])  # exp overflows
    with np.errstate(over="ignore", invalid="ignore"):
        np.testing.assert_array_equal(spd.exp(x, v), spd.exp(x[None], v[None])[0])
