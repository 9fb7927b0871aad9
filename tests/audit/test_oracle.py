"""Self-checks of the audit's independent oracle on S² (:mod:`tests.audit._oracle` and
:mod:`tests.audit._oracle_regression`).

The audit is only as good as its oracle, so the oracle is checked against first principles
rather than against the library:

* geometry: Exp∘Log = id, d = ‖Log‖, transport is an isometry and sends Log_x y to −Log_y x;
* the closed-form regression gradients agree with central finite differences of the oracle's
  own Huber energy (footpoint moves carry v by parallel transport: the horizontal lift);
* the quadrature rules integrate known quantities (areas, the Laplace normalizer in closed form,
  the volume of the tangent-disk bundle);
* the oracle's exact Laplace sampler matches its radial CDF, and Clopper–Pearson bounds have
  their nominal coverage on a seeded binomial experiment.
"""

import numpy as np
import pytest
from scipy import stats

from . import _oracle as O
from . import _oracle_regression as RG

SEED = 20240611


@pytest.fixture
def rng():
    return np.random.default_rng(SEED)


def random_tangent(p, rng, max_norm):
    v = rng.standard_normal(p.shape)
    v -= O.dot(v, p)[..., None] * p
    return v * (rng.uniform(0, max_norm, size=p.shape[:-1]) / O.norm(v))[..., None]


class TestGeometry:
    def test_exp_log_dist(self, rng):
        x = O.uniform_sphere(200, rng)
        y = O.uniform_sphere(200, rng)
        v = O.log(x, y)
        np.testing.assert_allclose(O.dot(v, x), 0, atol=1e-12)
        np.testing.assert_allclose(O.exp(x, v), y, atol=1e-10)
        np.testing.assert_allclose(O.norm(v), O.dist(x, y), atol=1e-12)
        np.testing.assert_allclose(O.dist(x, y), np.arccos(np.clip(O.dot(x, y), -1, 1)),
                                   atol=1e-7)

    def test_transport(self, rng):
        x = O.uniform_sphere(200, rng)
        y = O.uniform_sphere(200, rng)
        w = random_tangent(x, rng, 2.0)
        tw = O.transport(x, y, w)
        np.testing.assert_allclose(O.dot(tw, y), 0, atol=1e-10)
        np.testing.assert_allclose(O.norm(tw), O.norm(w), atol=1e-10)
        np.testing.assert_allclose(O.transport(x, y, O.log(x, y)), -O.log(y, x), atol=1e-9)

    def test_frame_and_projection(self, rng):
        x = O.uniform_sphere(100, rng)
        e1, e2 = O.tangent_frame(x)
        for a, b in ((e1, e1), (e2, e2)):
            np.testing.assert_allclose(O.dot(a, b), 1, atol=1e-12)
        for a, b in ((e1, e2), (e1, x), (e2, x)):
            np.testing.assert_allclose(O.dot(a, b), 0, atol=1e-12)
        y = O.project_ball(x, O.NORTH, 0.4)
        assert np.all(O.dist(y, O.NORTH) <= 0.4 + 1e-12)
        inside = O.dist(x, O.NORTH) <= 0.4
        np.testing.assert_allclose(y[inside], x[inside])
        # projection moves along the geodesic from the centre
        out = ~inside
        np.testing.assert_allclose(O.normalize(O.log(O.NORTH, y[out])),
                                   O.normalize(O.log(O.NORTH, x[out])), atol=1e-10)

    def test_frechet_mean_is_stationary(self, rng):
        y = O.point_at(np.broadcast_to(O.NORTH, (15, 3)), rng.uniform(0, 0.7, 15),
                       rng.uniform(0, 2 * np.pi, 15))
        z = O.frechet_mean(y)
        assert O.norm(O.log(z, y).mean(axis=0)) < 1e-12
        # a strict local minimum of the Fréchet function
        f = lambda q: 0.5 * np.mean(O.dist(q, y) ** 2)
        for v in random_tangent(np.broadcast_to(z, (20, 3)), rng, 1e-3):
            assert f(O.exp(z, v)) > f(z)


class TestRegressionGradient:
    @pytest.mark.parametrize("tau", [0.05, 0.3, 10.0])
    def test_closed_form_matches_finite_differences(self, rng, tau):
        n = 9
        for _ in range(12):
            p = O.uniform_sphere(1, rng)[0]
            v = random_tangent(p, rng, np.pi)
            t = rng.uniform(size=n)
            t[0], t[1] = 0.0, 1.0
            y = O.normalize(O.exp(p, t[:, None] * v) + 0.6 * rng.standard_normal((n, 3)))
            gp, gv = RG.regression_gradient(p, v, t, y, tau)
            fp, fv = RG.fd_regression_gradient(p, v, t, y, tau)
            np.testing.assert_allclose(gp[0], fp, atol=1e-8)
            np.testing.assert_allclose(gv[0], fv, atol=1e-8)

    def test_zero_shooting_vector(self, rng):
        p = O.uniform_sphere(1, rng)[0]
        t = rng.uniform(size=6)
        y = O.normalize(p + 0.3 * rng.standard_normal((6, 3)))
        gp, gv = RG.regression_gradient(p, np.zeros(3), t, y, 0.2)
        fp, fv = RG.fd_regression_gradient(p, np.zeros(3), t, y, 0.2)
        np.testing.assert_allclose(gp[0], fp, atol=1e-8)
        np.testing.assert_allclose(gv[0], fv, atol=1e-8)

    def test_batch_equals_loop(self, rng):
        p = O.uniform_sphere(30, rng)
        v = random_tangent(p, rng, np.pi)
        t = rng.uniform(size=5)
        y = O.uniform_sphere(5, rng)
        gp, gv = RG.regression_gradient(p, v, t, y, 0.3, chunk=7)
        for i in range(30):
            a, b = RG.regression_gradient(p[i], v[i], t, y, 0.3)
            np.testing.assert_allclose(gp[i], a[0], atol=1e-14)
            np.testing.assert_allclose(gv[i], b[0], atol=1e-14)

    @pytest.mark.parametrize("tau", [0.05, 0.3, 10.0])
    def test_frame_reductions_match_the_vector_formulas(self, rng, tau):
        """The scalar reductions of the fast paths (rejection sampler, pair searches) give the
        vector formulas' gradient norms and log-densities to rounding."""
        p = O.uniform_sphere(400, rng)
        v = random_tangent(p, rng, np.pi)
        t = rng.uniform(size=7)
        t[0], t[1] = 0.0, 1.0
        y = O.uniform_sphere(7, rng)
        np.testing.assert_allclose(RG.joint_gradient_norm_frame(p, v, t, y, tau),
                                   RG.joint_gradient_norm(p, v, t, y, tau), rtol=1e-12,
                                   atol=1e-14)
        grid = O.bundle_grid(4, 3, np.pi)
        search = RG.PairSearchGrid(grid, tau)
        t_new, y_new = rng.uniform(size=5), O.uniform_sphere(5, rng)
        t_new[0] = 0.0
        got = search.log_f(search.shared(t[:6], y[:6]), 7, 0.1, t_new, y_new)
        for k in range(5):
            lf = -RG.joint_gradient_norm(grid.points, grid.vectors, np.append(t[:6], t_new[k]),
                                         np.vstack([y[:6], y_new[k]]), tau) / 0.1
            want = lf - O.log_integral(lf, grid.weights)
            np.testing.assert_allclose(got[k], want, rtol=0, atol=1e-10)


class TestQuadrature:
    def test_sphere_grid(self):
        g = O.sphere_grid(40)
        assert g.weights.sum() == pytest.approx(4 * np.pi, rel=1e-13)
        # ∫ z² dA = 4π/3
        assert np.sum(g.weights * g.points[:, 2] ** 2) == pytest.approx(4 * np.pi / 3, rel=1e-12)

    @pytest.mark.parametrize("sigma", [0.05, 0.2, 1.0])
    def test_laplace_normalizer(self, sigma, rng):
        center = O.uniform_sphere(1, rng)[0]
        g = O.sphere_grid(400)
        num = O.log_integral(-O.dist(g.points, center) / sigma, g.weights)
        assert num == pytest.approx(O.laplace_log_normalizer(sigma), abs=2e-4)

    def test_ball_and_bundle_volumes(self):
        center = O.normalize(np.array([0.3, -0.2, 0.9]))
        b = O.ball_grid(center, 0.6, 20)
        assert b.weights.sum() == pytest.approx(2 * np.pi * (1 - np.cos(0.6)), rel=1e-12)
        assert np.all(O.dist(b.points, center) < 0.6)
        bundle = O.bundle_grid(8, 6, np.pi)
        assert bundle.weights.sum() == pytest.approx(4 * np.pi * np.pi**3, rel=1e-12)
        np.testing.assert_allclose(O.dot(bundle.vectors, bundle.points), 0, atol=1e-12)
        assert O.norm(bundle.vectors).max() < np.pi


class TestStatistics:
    def test_own_laplace_sampler(self, rng):
        center = O.uniform_sphere(1, rng)[0]
        z = O.sample_laplace(center, 0.3, 4000, rng)
        res = stats.kstest(O.dist(z, center), lambda r: O.laplace_radial_cdf(r, 0.3))
        assert res.pvalue > 1e-4

    def test_clopper_pearson_coverage(self, rng):
        p, n, alpha = 0.07, 300, 0.05
        k = rng.binomial(n, p, size=4000)
        lo = np.array([O.cp_lower(int(a), n, alpha) for a in k])
        hi = np.array([O.cp_upper(int(a), n, alpha) for a in k])
        # one-sided coverage at least 1 − alpha (conservative), up to Monte Carlo error
        assert np.mean(lo > p) <= alpha + 0.01
        assert np.mean(hi < p) <= alpha + 0.01

    def test_distinguishing_bounds_on_known_laws(self, rng):
        # Two Bernoulli-like laws with log-ratio exactly 2 on the event: with ε = 1 the test
        # certifies a violation; with ε = 2.5 it does not.
        stat_d = np.where(rng.uniform(size=20_000) < 0.5, 2.0, -1.0)
        stat_e = np.where(rng.uniform(size=20_000) < 0.5 * np.exp(-2), 2.0, -1.0)
        bounds = O.distinguishing_bounds(stat_d, stat_e, ([1.0], [1.0]), 1.0, 1e-6)
        assert max(b.excess for b in bounds) > 0
        bounds = O.distinguishing_bounds(stat_d, stat_e, ([1.0], [1.0]), 2.5, 1e-6)
        assert max(b.excess for b in bounds) < 0


def test_black_box_tests_skip_without_the_sampler_keyword():
    from ._draws import require_sampler_keyword

    def release_without_sampler(manifold, y, *, epsilon=None):
        return None

    with pytest.raises(pytest.skip.Exception, match="sampler"):
        require_sampler_keyword(release_without_sampler)
