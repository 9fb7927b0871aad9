"""The compiled batch gradient norms (``compiled_gradient_norms``) and mean squared distances
(``compiled_mean_squared_distances``) against the library's numpy code, on every space with
compiled kernels, with and without clipping."""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.learning.regression import regression_energy, regression_gradient
from dpcore.manifolds import SPD, Euclidean, Hyperbolic, KendallShape, Sphere
from dpcore.mechanisms.base import Ball
from dpcore.mechanisms.kng import _uniform_support
from dpcore.sampling._compiled_sphere import (
    compiled_gradient_norms,
    compiled_mean_squared_distances,
)
from dpcore.sampling.rejection import BundleBall

SPACES = [Sphere(2), Sphere(3), SPD(2), KendallShape(4), KendallShape(8)]


def _case(manifold, seed, n=60, m=400):
    rng = np.random.default_rng(seed)
    t = rng.random(n)
    y = manifold.random_point(n, rng=rng)
    support = (Ball(manifold.random_point(rng=rng), 1.0)
               if isinstance(manifold, (SPD, Euclidean, Hyperbolic)) else None)
    z = BundleBall(_uniform_support(manifold, support), 1.5).sample(m, rng)
    return z[:, 0], z[:, 1], t, y


@pytest.mark.parametrize("tau", [0.3, None])
@pytest.mark.parametrize("manifold", SPACES, ids=repr)
def test_compiled_norms_equal_the_numpy_kernels(manifold, tau):
    p, v, t, y = _case(manifold, 7)
    gp, gv = regression_gradient(manifold, p, v, t, y, tau=tau)
    want = np.sqrt(np.asarray(manifold.norm(p, gp)) ** 2 + np.asarray(manifold.norm(p, gv)) ** 2)
    got = compiled_gradient_norms(manifold, p, v, t, y, tau)
    assert got is not None and got.shape == want.shape
    # the sphere's kernel sums with polynomial sin/cos (relative error ~1e-13)
    np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-14)


@pytest.mark.parametrize("tau", [0.3, 5.0])
@pytest.mark.parametrize("manifold", [Euclidean(1), Euclidean(4), Hyperbolic(2), Hyperbolic(3)],
                         ids=repr)
def test_compiled_norm_kernels_equal_the_numpy_kernels(manifold, tau):
    """R^d and the hyperboloid have no compiled chain, only a norm kernel (the uniform exact
    proposals'): clipped residuals (most clipped at tau = 0.3, few at 5), one proposal at a
    response with a zero vector (a residual of norm zero, a geodesic of speed zero)."""
    p, v, t, y = _case(manifold, 5)
    p[0], v[0] = y[0], 0.0 * v[0]
    t[0] = 0.0  # residual 0 for the first proposal's first term
    gp, gv = regression_gradient(manifold, p, v, t, y, tau=tau)
    want = np.sqrt(np.asarray(manifold.norm(p, gp)) ** 2 + np.asarray(manifold.norm(p, gv)) ** 2)
    got = compiled_gradient_norms(manifold, p, v, t, y, tau)
    assert got is not None and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    assert compiled_gradient_norms(manifold, p, v, t, y, None) is None  # clipped only


def test_spaces_without_kernels_give_none():
    rng = np.random.default_rng(0)
    spd3 = SPD(3)
    p = spd3.random_point(2, rng=rng)
    assert compiled_gradient_norms(spd3, p, np.zeros_like(p), rng.random(4),
                                   spd3.random_point(4, rng=rng), 0.3) is None


@pytest.mark.parametrize("manifold", [KendallShape(4), KendallShape(8)], ids=repr)
def test_compiled_mean_squared_distances_equal_the_library_energy(manifold):
    p, v, t, y = _case(manifold, 11)
    t[:5] = -t[:5]  # covariates below the range: |t v| with t < 0
    v[0] = 0.0  # a constant geodesic
    want = 2.0 * regression_energy(manifold, p, v, t, y)
    got = compiled_mean_squared_distances(manifold, p, v, t, y)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


def test_mean_squared_distances_without_a_kernel_or_for_one_point_give_none():
    s2 = Sphere(2)
    p, v, t, y = _case(s2, 3)
    assert compiled_mean_squared_distances(s2, p, v, t, y) is None  # numpy is fast there
    k4 = KendallShape(4)
    p, v, t, y = _case(k4, 3)
    assert compiled_mean_squared_distances(k4, p[0], v[0], t, y) is None
    assert compiled_gradient_norms(k4, p[0], v[0], t, y, 0.3) is None
