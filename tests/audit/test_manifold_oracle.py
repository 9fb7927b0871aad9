r"""Self-checks of the oracle for R², SPD(2) and Kendall Σ²₃ (:mod:`tests.audit._manifold_oracle`,
:mod:`tests.audit._manifold_oracle_spd`).

The oracle is checked against first principles, never against the mechanisms:

* SPD(2): the closed-form spectral calculus against ``scipy.linalg`` (expm, logm, sqrtm,
  generalized eigenvalues), Exp∘Log = id, d = ‖Log‖, affine invariance; the volume density
  J(X) = sinh(|a − b|/2)/(|a − b|/2) against a finite-difference Jacobian of the exponential
  map at I *and at random base points* (homogeneity, on which σ = Δ/ε for the unrestricted
  Laplace rests); quadrature against the Struve closed forms; the own samplers against their
  radial laws;
* Kendall: the Hopf map is a homothety of factor 2 (distances, logs, horizontal lengths), so
  the Kendall quantities the audit computes on the unit sphere equal those computed directly
  on preshapes (distance arccos |⟨x, y⟩_C|, aligned log), including the KNG gradient norm and
  the regression energy and vector gradient (finite differences on preshapes);
* R²: the Huber regression gradients against finite differences.

The last class compares the library's public geometry (``Euclidean``, ``SPD``,
``KendallShape.from_landmarks`` and ``dist``) with the oracle's, so that the points exchanged
with the black box mean the same thing on both sides.
"""

import numpy as np
import pytest
from scipy import linalg, stats

from dpcore.manifolds import SPD, Euclidean, KendallShape

from . import _manifold_oracle as M
from . import _manifold_oracle_spd as SP
from . import _oracle as O
from . import _oracle_regression as RG

SEED = 8_128


@pytest.fixture
def rng():
    return np.random.default_rng(SEED)


def random_spd(size, rng, spread=1.0):
    c = rng.standard_normal((size, 3)) * spread
    return SP.sym_exp(SP.sym_from_coords(c))


class TestSPDGeometry:
    def test_calculus_matches_scipy(self, rng):
        xs = SP.sym_from_coords(rng.standard_normal((25, 3)) * 1.5)
        xs[:5, 2] = 0.0
        xs[5:10] = [[0.3, 0.3 + 1e-9, 1e-10]] * 5  # nearly scalar: the series branch
        for x in xs:
            mx = SP.to_matrix(x)
            np.testing.assert_allclose(SP.to_matrix(SP.sym_exp(x)), linalg.expm(mx), rtol=1e-12,
                                       atol=1e-13)
        ps = random_spd(25, rng)
        ps[:5] = SP.sym_exp([[0.2, 0.2 + 1e-9, 0.0]])
        for p in ps:
            mp = SP.to_matrix(p)
            np.testing.assert_allclose(SP.to_matrix(SP.spd_logm(p)), linalg.logm(mp).real,
                                       atol=1e-11)
            np.testing.assert_allclose(SP.to_matrix(SP.spd_sqrt(p)), linalg.sqrtm(mp).real,
                                       atol=1e-11)
            np.testing.assert_allclose(SP.to_matrix(SP.spd_invsqrt(p)) @ mp
                                       @ SP.to_matrix(SP.spd_invsqrt(p)), np.eye(2), atol=1e-11)

    def test_exp_log_dist(self, rng):
        p, q = random_spd(200, rng), random_spd(200, rng)
        v = SP.spd_log(p, q)
        np.testing.assert_allclose(SP.spd_exp(p, v), q, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(SP.spd_norm(p, v), SP.spd_dist(p, q), rtol=1e-10)
        np.testing.assert_allclose(SP.spd_dist(p, q), SP.spd_dist(q, p), rtol=1e-10)
        gen = np.array([linalg.eigh(SP.to_matrix(b), SP.to_matrix(a), eigvals_only=True)
                        for a, b in zip(p, q, strict=True)])
        np.testing.assert_allclose(SP.spd_dist(p, q), np.linalg.norm(np.log(gen), axis=1),
                                   rtol=1e-10)
        # affine invariance: P ↦ A P Aᵀ is an isometry
        a = rng.standard_normal((2, 2)) + 2 * np.eye(2)
        move = lambda s: SP.from_matrix(a @ SP.to_matrix(s) @ a.T)
        np.testing.assert_allclose(SP.spd_dist(move(p), move(q)), SP.spd_dist(p, q), rtol=1e-9)

    @pytest.mark.parametrize("at_identity", [True, False])
    def test_volume_density_is_the_jacobian_of_exp(self, rng, at_identity):
        """sqrt det of the metric tr(Z⁻¹ dZ_k Z⁻¹ dZ_l) pulled back by the chart at the base."""
        h = 1e-6
        for _ in range(30):
            base = None if at_identity else random_spd(1, rng)[0]
            c = rng.standard_normal(3) * rng.uniform(0.1, 2.5)
            z = SP.spd_chart(c, base)
            zinv = np.linalg.inv(SP.to_matrix(z))
            dz = [(SP.to_matrix(SP.spd_chart(c + h * e, base))
                   - SP.to_matrix(SP.spd_chart(c - h * e, base))) / (2 * h) for e in np.eye(3)]
            g = np.array([[np.trace(zinv @ a @ zinv @ b) for b in dz] for a in dz])
            assert np.sqrt(np.linalg.det(g)) == pytest.approx(SP.spd_volume_density(c),
                                                              rel=1e-6)

    def test_chart_distances(self, rng):
        base = random_spd(1, rng)[0]
        c = rng.standard_normal((100, 3))
        np.testing.assert_allclose(SP.spd_dist(base, SP.spd_chart(c, base)), M.norm_last(c),
                                   rtol=1e-10)
        np.testing.assert_allclose(SP.spd_chart_inv(SP.spd_chart(c, base), base), c, atol=1e-10)

    def test_frechet_mean_is_stationary_and_minimal(self, rng):
        y = SP.spd_chart(rng.standard_normal((12, 3)) * 0.4)
        z = SP.spd_frechet_mean(y)
        assert M.norm_last(SP.spd_log_coords(z, y).mean(axis=0)) < 1e-12
        f = lambda q: 0.5 * np.mean(SP.spd_dist(q, y) ** 2)
        for c in rng.standard_normal((20, 3)) * 1e-3:
            assert f(SP.spd_chart(c, z)) > f(z)

    def test_projection(self, rng):
        y = SP.spd_chart(rng.standard_normal((100, 3)))
        p = SP.spd_project_ball(y, 0.5)
        d = SP.spd_dist(SP.IDENTITY, y)
        np.testing.assert_allclose(SP.spd_dist(SP.IDENTITY, p), np.minimum(d, 0.5), rtol=1e-10)
        out = d > 0.5  # on the geodesic from I: d(I, p) + d(p, y) = d(I, y)
        np.testing.assert_allclose(0.5 + SP.spd_dist(p[out], y[out]), d[out], rtol=1e-9)

    def test_quadrature_and_closed_forms(self):
        coords, w = M.ball3_grid(0.7, 20)
        assert w.sum() == pytest.approx(4 * np.pi * 0.7**3 / 3, rel=1e-12)
        vol = np.sum(w * SP.spd_volume_density(coords))
        assert np.log(vol) == pytest.approx(SP.spd_ball_log_volume(0.7), abs=1e-10)
        for sigma in (0.1, 0.5, 1.0):
            coords, w = M.ball3_grid(45 / (1 / sigma - 1 / np.sqrt(2)), 80, 24)
            num = O.log_integral(-M.norm_last(coords) / sigma + np.log(
                SP.spd_volume_density(coords)), w)
            assert num == pytest.approx(SP.spd_laplace_log_normalizer(sigma), abs=1e-8)
        assert SP.spd_laplace_log_normalizer(1.5) == np.inf  # 1/σ < 1/√2: not integrable

    def test_own_samplers(self, rng):
        center = random_spd(1, rng)[0]
        z = SP.spd_sample_laplace(center, 0.4, 4000, rng)
        rho, cdf = SP.spd_radial_cdf_table(0.4, 40.0)
        res = stats.kstest(SP.spd_dist(center, z), lambda r: np.interp(r, rho, cdf))
        assert res.pvalue > 1e-4
        c = SP.spd_uniform_ball(0.8, 4000, rng)
        # volume CDF of the radius: vol B_s / vol B_r
        s = M.norm_last(c)
        grid = np.linspace(0.05, 0.8, 16)
        ref = np.array([np.exp(SP.spd_ball_log_volume(g) - SP.spd_ball_log_volume(0.8))
                        for g in grid])
        emp = np.array([np.mean(s <= g) for g in grid])
        assert np.max(np.abs(emp - ref)) < 0.03


def random_preshape(size, rng):
    z = rng.standard_normal((size, 2)) + 1j * rng.standard_normal((size, 2))
    return M.c2_to_preshape(z / np.linalg.norm(z, axis=1, keepdims=True))


def horizontal(x, v):
    """Project a (3, 2) array onto the horizontal space at preshape x."""
    zx = x[..., 0] + 1j * x[..., 1]
    zv = v[..., 0] + 1j * v[..., 1]
    zv = zv - zv.mean(axis=-1, keepdims=True)
    zv = zv - np.sum(np.conj(zx) * zv, axis=-1, keepdims=True) * zx
    return np.stack([zv.real, zv.imag], axis=-1)


def kendall_exp(x, v):
    nv = np.sqrt(np.sum(v**2, axis=(-2, -1)))[..., None, None]
    return np.cos(nv) * x + np.sinc(nv / np.pi) * v


class TestKendallHopf:
    def test_homothety(self, rng):
        x, y = random_preshape(300, rng), random_preshape(300, rng)
        np.testing.assert_allclose(O.dist(M.kendall_to_s2(x), M.kendall_to_s2(y)),
                                   2 * M.kendall_dist(x, y), atol=1e-12)
        np.testing.assert_allclose(M.kendall_dist(x, y),
                                   np.arccos(np.clip(np.abs(M.herm(x, y)), 0, 1)), atol=1e-7)
        # invariant under rotations of the landmarks, i.e. a shape function
        rot = np.exp(1j * rng.uniform(0, 2 * np.pi, 300))
        zx = (x[..., 0] + 1j * x[..., 1]) * rot[:, None]
        xr = np.stack([zx.real, zx.imag], axis=-1)
        np.testing.assert_allclose(M.kendall_to_s2(xr), M.kendall_to_s2(x), atol=1e-12)
        # the section is a right inverse, and gives preshapes
        u = O.uniform_sphere(300, rng)
        u[:3] = [[0, 0, 1], [0, 0, -1], [1, 0, 0]]
        pre = M.s2_to_kendall(u)
        np.testing.assert_allclose(M.kendall_to_s2(pre), u, atol=1e-12)
        np.testing.assert_allclose(pre.mean(axis=-2), 0, atol=1e-14)
        np.testing.assert_allclose(np.sum(pre**2, axis=(-2, -1)), 1, atol=1e-12)

    def test_logs_and_lengths(self, rng):
        x, y = random_preshape(200, rng), random_preshape(200, rng)
        v = M.kendall_log(x, y)
        np.testing.assert_allclose(M.herm(x, v), 0, atol=1e-12)  # horizontal
        np.testing.assert_allclose(np.sqrt(np.sum(v**2, axis=(-2, -1))), M.kendall_dist(x, y),
                                   atol=1e-12)
        np.testing.assert_allclose(M.kendall_vector_to_s2(x, v),
                                   O.log(M.kendall_to_s2(x), M.kendall_to_s2(y)), atol=1e-10)
        w = horizontal(x, rng.standard_normal((200, 3, 2)))
        np.testing.assert_allclose(O.norm(M.kendall_vector_to_s2(x, w)),
                                   2 * np.sqrt(np.sum(w**2, axis=(-2, -1))), rtol=1e-12)
        # Exp of the preshape sphere along horizontal vectors is the sphere's Exp under Φ
        np.testing.assert_allclose(M.kendall_to_s2(kendall_exp(x, w)),
                                   O.exp(M.kendall_to_s2(x), M.kendall_vector_to_s2(x, w)),
                                   atol=1e-10)

    def test_kng_gradient_norm_is_half_the_spheres(self, rng):
        center = random_preshape(1, rng)[0]
        y = M.s2_to_kendall(O.uniform_ball(M.kendall_to_s2(center), 0.6, 7, rng))
        z = M.s2_to_kendall(O.uniform_ball(M.kendall_to_s2(center), 0.6, 30, rng))
        direct = np.sqrt(np.sum(M.kendall_log(z[:, None], y[None]).mean(axis=1) ** 2,
                                axis=(-2, -1)))
        via = O.frechet_gradient_norm(M.kendall_to_s2(z), M.kendall_to_s2(y))
        np.testing.assert_allclose(direct, 0.5 * via, rtol=1e-10)

    def test_regression_energy_and_vector_gradient(self, rng):
        """E_K(p, v; τ) = ¼ E_S(Φp, dΦv; 2τ), and ‖∇_v E_K‖_K = ½ ‖∇_v E_S‖ by finite
        differences on preshapes (an orthonormal horizontal basis {e, i e} at p)."""
        n, tau = 6, 0.15
        t = rng.uniform(size=n)
        t[-1] = 1.0
        for _ in range(8):
            p = random_preshape(1, rng)[0]
            v = horizontal(p, rng.standard_normal((3, 2)))
            v *= rng.uniform(0.1, 1.4) / np.sqrt(np.sum(v**2))
            y = random_preshape(n, rng)

            def e_k(vv, p=p, y=y):
                q = kendall_exp(p, t[:, None, None] * vv)
                return RG.huber(M.kendall_dist(q, y), tau).mean()

            ps, vs, ys = M.kendall_to_s2(p), M.kendall_vector_to_s2(p, v), M.kendall_to_s2(y)
            e_s = RG.regression_energy(ps, vs, t, ys, 2 * tau)
            assert e_k(v) == pytest.approx(0.25 * float(e_s), rel=1e-10)
            e1 = horizontal(p, rng.standard_normal((3, 2)))
            e1 /= np.sqrt(np.sum(e1**2))
            ze = e1[:, 0] + 1j * e1[:, 1]
            e2 = np.stack([(1j * ze).real, (1j * ze).imag], axis=-1)
            h = 1e-6
            grad = [(e_k(v + h * e) - e_k(v - h * e)) / (2 * h) for e in (e1, e2)]
            _, gv = RG.regression_gradient(ps, vs, t, ys, 2 * tau)
            assert np.hypot(*grad) == pytest.approx(0.5 * O.norm(gv[0]), rel=1e-6, abs=1e-9)


class TestR2:
    @pytest.mark.parametrize("tau", [0.1, 0.5, 10.0])
    def test_regression_gradient(self, rng, tau):
        n = 7
        for _ in range(10):
            t = rng.uniform(size=n)
            y = rng.standard_normal((n, 2)) * 0.5
            p, v = rng.standard_normal(2) * 0.3, rng.standard_normal(2)
            gp, gv = M.r2_regression_gradient(p, v, t, y, tau)
            h = 1e-6
            for k, e in enumerate(np.eye(2)):
                fp = (M.r2_regression_energy(p + h * e, v, t, y, tau)
                      - M.r2_regression_energy(p - h * e, v, t, y, tau)) / (2 * h)
                fv = (M.r2_regression_energy(p, v + h * e, t, y, tau)
                      - M.r2_regression_energy(p, v - h * e, t, y, tau)) / (2 * h)
                assert gp[k] == pytest.approx(fp, abs=1e-8)
                assert gv[k] == pytest.approx(fv, abs=1e-8)


class TestLibraryConventions:
    """The library's points mean what the oracle thinks (checks the library, not the oracle)."""

    def test_spd(self, rng):
        p, q = random_spd(30, rng), random_spd(30, rng)
        lib = SPD(2).dist(SP.to_matrix(p), SP.to_matrix(q))
        np.testing.assert_allclose(lib, SP.spd_dist(p, q), rtol=1e-9)

    def test_kendall(self, rng):
        k = KendallShape(3)
        raw = rng.standard_normal((30, 3, 2)) * 3 + 5
        x = k.from_landmarks(raw)
        np.testing.assert_allclose(x.mean(axis=-2), 0, atol=1e-14)
        np.testing.assert_allclose(np.sum(x**2, axis=(-2, -1)), 1, atol=1e-12)
        y = M.s2_to_kendall(O.uniform_sphere(30, rng))
        np.testing.assert_allclose(k.dist(x, y), M.kendall_dist(x, y), atol=1e-10)
        # the library's own log is horizontal and maps to the sphere's log under Φ
        near = M.s2_to_kendall(O.uniform_ball(M.kendall_to_s2(x[0]), 1.0, 30, rng))
        v = k.log(np.broadcast_to(x[0], near.shape), near)
        np.testing.assert_allclose(M.kendall_vector_to_s2(np.broadcast_to(x[0], near.shape), v),
                                   O.log(M.kendall_to_s2(x[0]), M.kendall_to_s2(near)),
                                   atol=1e-10)

    def test_euclidean(self, rng):
        x, y = rng.standard_normal((20, 2)), rng.standard_normal((20, 2))
        np.testing.assert_allclose(Euclidean(2).dist(x, y), np.linalg.norm(x - y, axis=1))
