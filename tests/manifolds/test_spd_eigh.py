"""The closed-form 2 x 2 symmetric eigendecomposition used by SPD(2) against LAPACK."""

from __future__ import annotations

import numpy as np
import pytest

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
    a = rng.normal(size=(3, 3))
    a = a + a.T
    np.testing.assert_array_equal(eigh(a)[0], np.linalg.eigh(a)[0])
