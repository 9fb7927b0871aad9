"""Every built-in manifold against the shared contract and its geomstats counterpart."""

from __future__ import annotations

import numpy as np
import pytest
from geomstats.geometry.euclidean import Euclidean as GsEuclidean
from geomstats.geometry.hyperboloid import Hyperboloid
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.spd_matrices import SPDMatrices

from dpcore.manifolds import SPD, CutLocusError, Euclidean, Hyperbolic, KendallShape, Sphere

from .contract import ManifoldContract


class TestEuclidean(ManifoldContract):
    @pytest.fixture(params=[1, 3])
    def manifold(self, request):
        return Euclidean(request.param)

    @pytest.fixture
    def oracle(self, manifold):
        return GsEuclidean(manifold.d)

    def test_adjoints_are_identity(self, manifold, rng):
        p, v, w = (manifold.random_point(rng=rng) for _ in range(3))
        np.testing.assert_array_equal(manifold.adjoint_dexp_point(p, v, w), w)
        np.testing.assert_array_equal(manifold.adjoint_dexp_vector(p, v, w), w)


class TestSphere(ManifoldContract):
    @pytest.fixture(params=[1, 2, 4])
    def manifold(self, request):
        return Sphere(request.param)

    @pytest.fixture
    def oracle(self, manifold):
        return Hypersphere(manifold.d)

    def test_antipodal_log_is_a_clear_error(self, manifold, rng):
        x = manifold.random_point(rng=rng)
        with pytest.raises(CutLocusError, match="antipodal"):
            manifold.log(x, -x)
        with pytest.raises(CutLocusError, match="antipodal"):
            manifold.transport(x, -x, manifold.random_tangent(x, rng))
        assert manifold.dist(x, -x) == pytest.approx(np.pi)

    def test_nearly_antipodal_log_is_finite(self, manifold, rng):
        x = manifold.random_point(rng=rng)
        u = manifold.random_tangent(x, rng)
        u /= np.linalg.norm(u)
        y = manifold.exp(x, (np.pi - 1e-6) * u)
        np.testing.assert_allclose(manifold.log(x, y), (np.pi - 1e-6) * u, atol=1e-8)
        w = manifold.random_tangent(x, rng)
        tw = manifold.transport(x, y, w)
        np.testing.assert_allclose(np.linalg.norm(tw), np.linalg.norm(w), rtol=1e-9)
        np.testing.assert_allclose(tw @ y, 0.0, atol=1e-9)

    def test_exp_closed_form(self, manifold, rng):
        x = manifold.random_point(rng=rng)
        v = manifold.random_tangent(x, rng)
        nv = np.linalg.norm(v)
        np.testing.assert_allclose(
            manifold.exp(x, v), np.cos(nv) * x + np.sin(nv) * v / nv, atol=1e-15
        )


class TestSPD(ManifoldContract):
    @pytest.fixture(params=[2, 3])
    def manifold(self, request):
        return SPD(request.param)

    @pytest.fixture
    def oracle(self, manifold):
        return SPDMatrices(manifold.k)

    def test_nearly_singular_matrices(self, manifold):
        x = np.diag([1.0] + [1e-10] * (manifold.k - 1))
        y = np.eye(manifold.k)
        d = manifold.dist(x, y)
        np.testing.assert_allclose(d, np.sqrt(manifold.k - 1) * np.log(1e10), rtol=1e-9)
        self.assert_same_point(manifold, manifold.exp(x, manifold.log(x, y)), y, tol=1e-8)

    def test_curvature_eigenvalues_at_identity(self, manifold):
        # DESIGN section 3: at I with v = diag(l), the E_ij direction has eigenvalue
        # -(l_i - l_j)^2 / 4; check through the point-adjoint scaling cosh(|l_i - l_j| / 2).
        lam = np.arange(1.0, manifold.k + 1)
        eye = np.eye(manifold.k)
        v = np.diag(lam)
        e = np.zeros((manifold.k, manifold.k))
        e[0, 1] = e[1, 0] = 1.0
        w = manifold.transport(eye, manifold.exp(eye, v), e)
        out = manifold.adjoint_dexp_point(eye, v, w)
        np.testing.assert_allclose(out, np.cosh(abs(lam[0] - lam[1]) / 2) * e, atol=1e-12)


class TestHyperbolic(ManifoldContract):
    @pytest.fixture(params=[2, 3])
    def manifold(self, request):
        return Hyperbolic(request.param)

    @pytest.fixture
    def oracle(self, manifold):
        return Hyperboloid(manifold.d)


class TestKendallShape(ManifoldContract):
    quotient = True

    @pytest.fixture(params=[3, 5, 8])
    def manifold(self, request):
        return KendallShape(request.param)

    @pytest.fixture
    def oracle(self, manifold):
        from geomstats.geometry.pre_shape import PreShapeSpace

        space = PreShapeSpace(manifold.k_landmarks, 2)
        space.equip_with_group_action("rotations")
        space.equip_with_quotient()
        return space

    def test_agrees_with_geomstats(self, manifold, oracle, rng):
        x, y = self.pair(manifold, rng)
        # Rotate y by a random angle: answers must be the same for every representative.
        angle = rng.uniform(0, 2 * np.pi, size=(len(y), 1))
        rot = np.stack(
            [
                np.cos(angle) * y[..., 0] - np.sin(angle) * y[..., 1],
                np.sin(angle) * y[..., 0] + np.cos(angle) * y[..., 1],
            ],
            axis=-1,
        )
        metric = oracle.quotient.metric
        np.testing.assert_allclose(manifold.dist(x, rot), metric.dist(x, rot), atol=1e-8)
        np.testing.assert_allclose(manifold.log(x, rot), metric.log(rot, x), atol=1e-8)
        v = manifold.random_tangent(x, rng)
        np.testing.assert_allclose(manifold.exp(x, v), metric.exp(v, x), atol=1e-8)
        np.testing.assert_allclose(manifold.dist(x, rot), manifold.dist(x, y), atol=1e-12)
        assert np.all(oracle.fiber_bundle.is_horizontal(v, x))
        # The preshape sphere has one dimension more than the shape space (rotations).
        assert manifold.dim == oracle.dim - 1

    def test_transport_agrees_with_geomstats(self, manifold, oracle, rng):
        # geomstats integrates the quotient transport numerically; compare at its accuracy.
        x, y = self.pair(manifold, rng, n=2)
        v = manifold.random_tangent(x, rng)
        for i in range(2):
            expected = oracle.quotient.metric.parallel_transport(v[i], x[i], end_point=y[i])
            np.testing.assert_allclose(manifold.transport(x[i], y[i], v[i]), expected, atol=1e-5)

    def test_orthogonal_shapes_are_a_clear_error(self, manifold, rng):
        x = manifold.random_point(rng=rng)
        # Complex Gram-Schmidt: y = z - <x, z>_C x is a shape orthogonal to x (distance pi/2).
        y = manifold.from_landmarks(manifold.proj_tangent(x, rng.normal(size=x.shape)))
        assert manifold.dist(x, y) == pytest.approx(np.pi / 2)
        with pytest.raises(CutLocusError, match="orthogonal"):
            manifold.log(x, y)
        with pytest.raises(CutLocusError, match="orthogonal"):
            manifold.transport(x, y, manifold.random_tangent(x, rng))

    def test_landmarks_roundtrip_and_degenerate(self, manifold, rng):
        raw = rng.normal(size=(4, manifold.k_landmarks, 2)) * 3 + 5
        pre = manifold.from_landmarks(raw)
        assert np.all(manifold.belongs(pre))
        np.testing.assert_allclose(manifold.to_landmarks(pre), pre)
        with pytest.raises(ValueError, match="degenerate"):
            manifold.from_landmarks(np.ones((manifold.k_landmarks, 2)))
        with pytest.raises(ValueError, match="shape"):
            manifold.from_landmarks(np.ones((manifold.k_landmarks + 1, 2)))

    def test_to_landmarks_aligns_to_reference(self, manifold, rng):
        x, y = self.pair(manifold, rng, n=1)
        aligned = manifold.to_landmarks(y, reference=x)
        # Optimal rotation: the aligned representative is the closest to x in the preshape sphere.
        assert np.linalg.norm(aligned - x) <= np.linalg.norm(y - x) + 1e-12
        np.testing.assert_allclose(manifold.dist(aligned, y), 0.0, atol=1e-7)

    def test_curvature_along_i_v_is_four(self, manifold, rng):
        p = manifold.random_point(rng=rng)
        v = self.tangent_of_length(manifold, p, rng, 0.7, 0.7)
        iv = np.stack([-v[..., 1], v[..., 0]], axis=-1)
        w = manifold.transport(p, manifold.exp(p, v), iv)
        np.testing.assert_allclose(
            manifold.adjoint_dexp_vector(p, v, w), np.sin(1.4) / 1.4 * iv, atol=1e-12
        )
