"""Contract every manifold must satisfy; concrete test modules subclass ``ManifoldContract``.

A subclass provides the ``manifold`` fixture (and optionally ``oracle``: a geomstats space
equipped with its metric, or None) and may override ``max_radius``.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.learning import regression_energy, regression_gradient

BATCH = 7


class ManifoldContract:
    """Shared checks. ``tol`` is the absolute tolerance of closed-form identities."""

    tol = 1e-10
    oracle_tol = 1e-8
    #: whether points are representatives of equivalence classes (compare with dist, not arrays)
    quotient = False

    # ------------------------------------------------------------------ sampling helpers
    @staticmethod
    def max_radius(manifold):
        return float(min(0.8 * manifold.injectivity_radius, 2.0))

    def tangent_of_length(self, manifold, x, rng, low=0.05, high=None):
        high = self.max_radius(manifold) if high is None else high
        v = manifold.random_tangent(x, rng)
        r = rng.uniform(low, high, size=np.shape(x)[: np.ndim(x) - manifold.point_ndim])
        return v * manifold.pointwise(r / manifold.norm(x, v))

    def pair(self, manifold, rng, n=BATCH):
        x = manifold.random_point(n, rng)
        y = manifold.exp(x, self.tangent_of_length(manifold, x, rng))
        return x, y

    def assert_same_point(self, manifold, a, b, tol=None):
        tol = self.tol if tol is None else tol
        np.testing.assert_allclose(manifold.dist(a, b), 0.0, atol=tol * 10)
        if not self.quotient:
            np.testing.assert_allclose(a, b, atol=tol * 10)

    # ------------------------------------------------------------------ basic structure
    def test_random_points_belong(self, manifold, rng):
        x = manifold.random_point(BATCH, rng)
        assert x.shape == (BATCH, *manifold.point_shape)
        assert np.all(manifold.belongs(x))
        assert manifold.random_point(rng=rng).shape == manifold.point_shape

    def test_random_tangent_is_tangent(self, manifold, rng):
        x = manifold.random_point(BATCH, rng)
        v = manifold.random_tangent(x, rng)
        assert np.all(manifold.is_tangent(x, v))

    def test_random_tangent_is_standard_gaussian_in_the_metric(self, manifold):
        """The coordinates of random_tangent in an orthonormal basis are i.i.d. N(0, 1)
        (what uniform tangent balls built from it rely on): at a fixed random point, 4000
        draws (fixed seeds); KS of every coordinate against N(0, 1), of |v|^2 against
        chi-square(dim), and of the first two coordinates' product against the law of a
        product of independent N(0, 1) (closed form). Each p > 1e-8: a false failure
        has chance below 1e-6 in all (at most 8 + 2 tests per manifold)."""
        from scipy import special, stats

        x = manifold.random_point(rng=np.random.default_rng(11))
        v = manifold.random_tangent(np.broadcast_to(x, (4000, *manifold.point_shape)),
                                    np.random.default_rng(12))
        basis = manifold.orthonormal_basis(x)
        coef = np.stack([manifold.inner(x, basis[a], v) for a in range(manifold.dim)], axis=1)
        for a in range(min(manifold.dim, 8)):
            assert stats.kstest(coef[:, a], "norm").pvalue > 1e-8, a
        sq = manifold.norm(np.broadcast_to(x, v.shape), v) ** 2
        assert stats.kstest(sq, stats.chi2(manifold.dim).cdf).pvalue > 1e-8
        if manifold.dim >= 2:
            # P(XY <= z) = 1/2 + sign(z) int_0^|z| K0(t) dt / pi for independent N(0, 1)
            def product_cdf(z):
                return 0.5 + np.sign(z) * special.iti0k0(np.abs(z))[1] / np.pi
            prod = coef[:, 0] * coef[:, 1]
            assert stats.kstest(prod, product_cdf).pvalue > 1e-8

    def test_orthonormal_basis(self, manifold, rng):
        x = manifold.random_point(BATCH, rng)
        basis = manifold.orthonormal_basis(x)
        assert basis.shape == (BATCH, manifold.dim, *manifold.point_shape)
        xb = np.expand_dims(x, axis=(1, 2))
        gram = manifold.inner(xb, basis[:, :, None], basis[:, None, :])
        np.testing.assert_allclose(gram, np.broadcast_to(np.eye(manifold.dim), gram.shape),
                                   atol=1e-10)
        assert np.all(manifold.is_tangent(x[:, None], basis))
        # The basis spans T_x M: a random tangent vector equals its expansion.
        v = manifold.random_tangent(x, rng)
        coef = manifold.inner(x[:, None], basis, v[:, None])
        recon = np.einsum("na,na...->n...", coef, basis)
        np.testing.assert_allclose(recon, v, atol=1e-10)

    def test_attributes(self, manifold):
        lo, hi = manifold.curvature_bounds
        assert lo <= hi
        assert manifold.injectivity_radius > 0
        assert isinstance(manifold.is_homogeneous, bool)
        assert manifold.dim >= 1
        assert isinstance(manifold.is_compact, bool)
        assert (manifold.diameter < np.inf) == manifold.is_compact

    def test_origin_is_a_fixed_point_of_the_manifold(self, manifold):
        try:
            o = manifold.origin
        except NotImplementedError:
            pytest.skip(f"{manifold!r} names no origin (a centre must be passed explicitly)")
        assert np.shape(o) == tuple(manifold.point_shape)
        assert np.all(manifold.belongs(o, atol=1e-10))
        np.testing.assert_array_equal(manifold.origin, o)  # the same point every time

    def test_is_linear_means_exp_is_addition(self, manifold, rng):
        """``is_linear`` (algorithms use it for closed forms) holds exactly where exp and log
        are vector addition and subtraction."""
        x = manifold.random_point(size=5, rng=rng)
        y = manifold.random_point(size=5, rng=rng)
        v = np.stack([manifold.random_tangent(xi, rng=rng) for xi in x])
        additive = (np.allclose(manifold.exp(x, v), x + v, atol=1e-12)
                    and np.allclose(manifold.log(x, y), y - x, atol=1e-12))
        assert manifold.is_linear == additive

    def test_embedding_round_trips_and_holds_the_ball(self, manifold, rng):
        try:
            dim = manifold.ambient_dim
        except NotImplementedError:
            pytest.skip(f"{manifold!r} has no ambient embedding here")
        x = manifold.random_point(50, rng)
        z = manifold.embed(x)
        assert z.shape == (50, dim)
        np.testing.assert_allclose(manifold.unembed(z), x, atol=1e-12)
        np.testing.assert_allclose(manifold.project(x), x, atol=1e-10)
        assert np.all(manifold.on_manifold(x))
        # the embedding is isometric to the ambient norm: |embed(x) − embed(y)| = |x − y|_F
        y = manifold.random_point(50, rng)
        np.testing.assert_allclose(np.linalg.norm(manifold.embed(x) - manifold.embed(y), axis=-1),
                                   np.sqrt(manifold._sum((x - y) ** 2)), rtol=1e-12)
        # the ambient ball of radius ambient_radius(c, r) holds the geodesic ball B_r(c)
        c, r = x[0], 0.4
        v = manifold.random_tangent(np.broadcast_to(c, x.shape), rng)
        v *= manifold.pointwise(r * rng.uniform(size=50) / manifold.norm(c, v))
        inside = manifold.exp(c, v)
        gap = np.linalg.norm(manifold.embed(inside) - manifold.embed(c), axis=-1)
        assert np.all(gap <= manifold.ambient_radius(c, r) * (1 + 1e-12))

    def test_distances_within_the_diameter(self, manifold, rng):
        x, y = manifold.random_point(200, rng), manifold.random_point(200, rng)
        d = manifold.dist(x, y)
        assert np.all(d <= manifold.diameter + 1e-9)
        if manifold.is_compact:  # attained: exp of a diameter-long geodesic from x
            v = manifold.random_tangent(x[:1], rng)
            v *= manifold.diameter / manifold.norm(x[:1], v)
            far = manifold.exp(x[:1], v)
            assert manifold.dist(x[:1], far)[0] == pytest.approx(manifold.diameter, abs=1e-6)

    def test_seeded_randomness_is_reproducible(self, manifold):
        a = manifold.random_point(3, np.random.default_rng(5))
        b = manifold.random_point(3, np.random.default_rng(5))
        np.testing.assert_array_equal(a, b)

    # ------------------------------------------------------------------ exp / log / dist
    def test_exp_log_roundtrip(self, manifold, rng):
        x, y = self.pair(manifold, rng)
        self.assert_same_point(manifold, manifold.exp(x, manifold.log(x, y)), y)

    def test_log_exp_roundtrip(self, manifold, rng):
        x = manifold.random_point(BATCH, rng)
        v = self.tangent_of_length(manifold, x, rng)
        np.testing.assert_allclose(manifold.log(x, manifold.exp(x, v)), v, atol=self.tol * 10)

    def test_exp_stays_on_manifold(self, manifold, rng):
        x, y = self.pair(manifold, rng)
        assert np.all(manifold.belongs(y))

    def test_dist_is_norm_of_log(self, manifold, rng):
        x, y = self.pair(manifold, rng)
        np.testing.assert_allclose(
            manifold.dist(x, y), manifold.norm(x, manifold.log(x, y)), atol=self.tol
        )

    def test_dist_symmetric_and_zero_on_diagonal(self, manifold, rng):
        x, y = self.pair(manifold, rng)
        np.testing.assert_allclose(manifold.dist(x, y), manifold.dist(y, x), atol=self.tol)
        np.testing.assert_allclose(manifold.dist(x, x), 0.0, atol=1e-7)

    def test_log_of_same_point_is_zero(self, manifold, rng):
        x = manifold.random_point(BATCH, rng)
        v = manifold.log(x, x)
        assert np.all(np.isfinite(v))
        np.testing.assert_allclose(v, 0.0, atol=1e-7)

    def test_small_vectors_are_stable(self, manifold, rng):
        x = manifold.random_point(BATCH, rng)
        v = self.tangent_of_length(manifold, x, rng, low=1e-12, high=1e-10)
        y = manifold.exp(x, v)
        assert np.all(np.isfinite(y))
        # Points are O(1): absolute accuracy near machine epsilon is what float64 allows.
        np.testing.assert_allclose(manifold.log(x, y), v, atol=1e-13, rtol=1e-6)
        np.testing.assert_allclose(manifold.dist(x, y), manifold.norm(x, v), atol=1e-13, rtol=1e-5)

    def test_triangle_inequality(self, manifold, rng):
        x, y = self.pair(manifold, rng)
        z = manifold.exp(x, self.tangent_of_length(manifold, x, rng))
        assert np.all(manifold.dist(x, z) <= manifold.dist(x, y) + manifold.dist(y, z) + 1e-12)

    # ------------------------------------------------------------------ transport
    def test_transport_is_isometry(self, manifold, rng):
        x, y = self.pair(manifold, rng)
        u = manifold.random_tangent(x, rng)
        w = manifold.random_tangent(x, rng)
        tu, tw = manifold.transport(x, y, u), manifold.transport(x, y, w)
        assert np.all(manifold.is_tangent(y, tu))
        np.testing.assert_allclose(manifold.inner(y, tu, tw), manifold.inner(x, u, w), atol=1e-9)

    def test_transport_maps_log_to_minus_log(self, manifold, rng):
        x, y = self.pair(manifold, rng)
        np.testing.assert_allclose(
            manifold.transport(x, y, manifold.log(x, y)), -manifold.log(y, x), atol=1e-9
        )

    def test_transport_roundtrip(self, manifold, rng):
        x, y = self.pair(manifold, rng)
        u = manifold.random_tangent(x, rng)
        back = manifold.transport(y, x, manifold.transport(x, y, u))
        np.testing.assert_allclose(back, u, atol=1e-9)

    # ------------------------------------------------------------------ batching
    def test_batch_equals_loop(self, manifold, rng):
        x, y = self.pair(manifold, rng)
        u = manifold.random_tangent(x, rng)
        w = manifold.random_tangent(manifold.exp(x, u), rng)
        ops = {
            "exp": (manifold.exp, (x, u)),
            "log": (manifold.log, (x, y)),
            "dist": (manifold.dist, (x, y)),
            "inner": (manifold.inner, (x, u, u)),
            "transport": (manifold.transport, (x, y, u)),
            "adjoint_dexp_point": (manifold.adjoint_dexp_point, (x, u, w)),
            "adjoint_dexp_vector": (manifold.adjoint_dexp_vector, (x, u, w)),
        }
        for name, (fn, args) in ops.items():
            batched = fn(*args)
            looped = np.stack([fn(*(a[i] for a in args)) for i in range(BATCH)])
            np.testing.assert_allclose(batched, looped, atol=1e-12, err_msg=name)

    def test_broadcasting_single_point_against_batch(self, manifold, rng):
        x = manifold.random_point(rng=rng)
        _, y = self.pair(manifold, rng)
        # A point near x, against a batch of points near it.
        ys = manifold.exp(x, self.tangent_of_length(manifold, np.broadcast_to(x, y.shape), rng))
        d = manifold.dist(x, ys)
        assert d.shape == (BATCH,)
        np.testing.assert_allclose(d, [manifold.dist(x, yi) for yi in ys], atol=1e-12)

    # ------------------------------------------------------------------ Jacobi adjoints
    def test_adjoint_dexp_point_matches_finite_differences(self, manifold, rng):
        """<adj_p(p, v, w), u> = <w, d/ds Exp(exp_p(s u), Gamma_s v)|_{s=0}>."""
        p = manifold.random_point(rng=rng)
        v = self.tangent_of_length(manifold, p, rng, low=0.3, high=1.2)
        q = manifold.exp(p, v)
        w = manifold.random_tangent(q, rng)
        u = manifold.random_tangent(p, rng)
        h = 1e-6

        def curve(s):
            ps = manifold.exp(p, s * u)
            return manifold.exp(ps, manifold.transport(p, ps, v))

        deriv = (curve(h) - curve(-h)) / (2 * h)
        lhs = manifold.inner(p, manifold.adjoint_dexp_point(p, v, w), u)
        np.testing.assert_allclose(lhs, manifold.inner(q, w, deriv), rtol=1e-6, atol=1e-8)

    def test_adjoint_dexp_vector_matches_finite_differences(self, manifold, rng):
        """<adj_v(p, v, w), u> = <w, d/ds Exp(p, v + s u)|_{s=0}>."""
        p = manifold.random_point(rng=rng)
        v = self.tangent_of_length(manifold, p, rng, low=0.3, high=1.2)
        q = manifold.exp(p, v)
        w = manifold.random_tangent(q, rng)
        u = manifold.random_tangent(p, rng)
        h = 1e-6
        deriv = (manifold.exp(p, v + h * u) - manifold.exp(p, v - h * u)) / (2 * h)
        lhs = manifold.inner(p, manifold.adjoint_dexp_vector(p, v, w), u)
        np.testing.assert_allclose(lhs, manifold.inner(q, w, deriv), rtol=1e-6, atol=1e-8)

    def test_adjoint_dexp_agrees_with_separate_calls(self, manifold, rng):
        p = manifold.random_point(BATCH, rng)
        v = self.tangent_of_length(manifold, p, rng)
        w = manifold.random_tangent(manifold.exp(p, v), rng)
        both = manifold.adjoint_dexp(p, v, w)
        np.testing.assert_allclose(both[0], manifold.adjoint_dexp_point(p, v, w), atol=1e-13)
        np.testing.assert_allclose(both[1], manifold.adjoint_dexp_vector(p, v, w), atol=1e-13)

    @pytest.mark.parametrize("length", [0.5, 2.5])
    def test_regression_gradient_matches_finite_differences(self, manifold, rng, length):
        """Gradients of E(p, v) = (1/2n) sum d(Exp(p, t_i v), y_i)^2 along random variations.

        ``length`` 2.5 takes the geodesic past the injectivity radius of compact spaces, where
        the Jacobi fields must be carried along the fitted geodesic, not the minimizing one.
        """
        p = manifold.random_point(rng=rng)
        v = self.tangent_of_length(manifold, p, rng, low=length, high=length)
        t = rng.uniform(0.0, 1.0, 15)
        pred = manifold.geodesic(p, v, t)
        y = manifold.exp(pred, self.tangent_of_length(manifold, pred, rng, 0.01, 0.3))
        gp, gv = regression_gradient(manifold, p, v, t, y)
        u = manifold.random_tangent(p, rng)
        w = manifold.random_tangent(p, rng)
        h = 1e-6

        def energy_p(s):
            ps = manifold.exp(p, s * u)
            return regression_energy(manifold, ps, manifold.transport(p, ps, v), t, y)

        fd_p = (energy_p(h) - energy_p(-h)) / (2 * h)
        fd_v = (
            regression_energy(manifold, p, v + h * w, t, y)
            - regression_energy(manifold, p, v - h * w, t, y)
        ) / (2 * h)
        np.testing.assert_allclose(manifold.inner(p, gp, u), fd_p, rtol=1e-5, atol=1e-9)
        np.testing.assert_allclose(manifold.inner(p, gv, w), fd_v, rtol=1e-5, atol=1e-9)

    # ------------------------------------------------------------------ volume laws
    @staticmethod
    def fd_log_det_dexp(manifold, x, v, h=1e-6):
        """Oracle: log |det d exp_x(v)| from a central-difference Jacobian of ``exp``.

        Columns are the derivatives of ``exp_x`` along an orthonormal basis of T_x M, read in
        an orthonormal basis of the tangent space at ``exp_x(v)`` (for quotient spaces this
        keeps the horizontal part, i.e. the differential of ``exp`` on the quotient).
        """
        y = manifold.exp(x, v)
        frame = manifold.orthonormal_basis(y)
        cols = []
        for e in manifold.orthonormal_basis(x):
            dy = (manifold.exp(x, v + h * e) - manifold.exp(x, v - h * e)) / (2 * h)
            cols.append(manifold.inner(y, frame, dy))
        return float(np.log(abs(np.linalg.det(np.array(cols)))))

    @staticmethod
    def _volume_or_skip(fn, *args):
        try:
            return fn(*args)
        except NotImplementedError as exc:
            pytest.skip(f"no closed form: {exc}")

    def unit_directions(self, manifold, x, n, rng):
        """``n`` tangent vectors at ``x``, uniform on its unit sphere, shape ``(n, *ps)``."""
        xs = np.broadcast_to(x, (n, *manifold.point_shape))
        v = manifold.random_tangent(xs, rng)
        return v / manifold.pointwise(manifold.norm(xs, v))

    def test_log_volume_density_matches_finite_difference_jacobian(self, manifold, rng):
        x = manifold.random_point(rng=rng)
        self._volume_or_skip(manifold.log_volume_density, x, manifold.random_tangent(x, rng))
        top = min(self.max_radius(manifold), 0.95 * manifold.injectivity_radius)
        for length in (0.05, 0.4, 0.9 * top):
            x = manifold.random_point(rng=rng)
            v = self.tangent_of_length(manifold, x, rng, low=length, high=length)
            expected = self.fd_log_det_dexp(manifold, x, v)
            assert manifold.log_volume_density(x, v) == pytest.approx(expected, abs=1e-6)
        assert manifold.log_volume_density(x, 0.0 * v) == pytest.approx(0.0, abs=1e-12)

    def test_log_volume_density_is_batched(self, manifold, rng):
        x = manifold.random_point(BATCH, rng)
        v = self.tangent_of_length(manifold, x, rng)
        batched = self._volume_or_skip(manifold.log_volume_density, x, v)
        assert batched.shape == (BATCH,)
        looped = [manifold.log_volume_density(x[i], v[i]) for i in range(BATCH)]
        np.testing.assert_allclose(batched, looped, atol=1e-12)
        # one base point against a batch of vectors; on these symmetric spaces parallel
        # transport is induced by an isometry, which keeps the volume density
        one = manifold.log_volume_density(x[0], manifold.transport(x, x[0], v))
        np.testing.assert_allclose(one, batched, atol=1e-9)
        # the norms may be passed in; a space that uses them must agree with its own
        given = manifold.log_volume_density(x, v, rho=manifold.norm(x, v))
        np.testing.assert_allclose(given, batched, atol=1e-12)

    def test_log_volume_density_max_bounds_dense_evaluations(self, manifold, rng):
        self._volume_or_skip(manifold.log_volume_density_max, 0.0, 0.0)
        top = min(3.0, manifold.injectivity_radius)
        edges = np.linspace(0.0, top, 7)
        lo, hi = edges[:-1], edges[1:]
        bound = manifold.log_volume_density_max(lo, hi)
        assert bound.shape == lo.shape
        n = 400
        x = manifold.random_point(n, rng)
        for a, b, cap in zip(lo, hi, bound, strict=True):
            # radii spread over the annulus, both ends included
            r = np.concatenate([[a, b], rng.uniform(a, b, n - 2)])
            v = manifold.random_tangent(x, rng)
            v *= manifold.pointwise(r / manifold.norm(x, v))
            vals = manifold.log_volume_density(x, v)
            assert np.all(vals <= cap + 1e-12 * (1 + abs(cap))), (a, b, vals.max(), cap)

    def test_radial_log_volume_integrates_the_volume_density(self, manifold, rng):
        """J(r) = r^(d-1) E_u[theta_x(r u)], u uniform on the unit sphere of T_x M."""
        self._volume_or_skip(manifold.radial_log_volume, 1.0)
        x = manifold.random_point(rng=rng)
        u = self.unit_directions(manifold, x, 20_000, rng)
        r = np.linspace(0.05, min(2.0, 0.95 * manifold.diameter), 12)
        log_theta = np.stack([manifold.log_volume_density(x, ri * u) for ri in r])
        top = log_theta.max(axis=1, keepdims=True)
        log_mean = top[:, 0] + np.log(np.mean(np.exp(log_theta - top), axis=1))
        oracle = (manifold.dim - 1) * np.log(r) + log_mean
        diff = manifold.radial_log_volume(r) - oracle  # equal up to a constant
        # exact for spaces whose density depends on |v| alone; Monte Carlo error (~1e-3) else
        assert np.ptp(diff) < 5e-3, diff

    def test_radial_dlog_volume_is_the_derivative(self, manifold):
        self._volume_or_skip(manifold.radial_log_volume, 1.0)
        r = np.linspace(0.05, min(5.0, 0.95 * manifold.diameter), 40)
        h = 1e-6
        fd = (manifold.radial_log_volume(r + h) - manifold.radial_log_volume(r - h)) / (2 * h)
        np.testing.assert_allclose(manifold.radial_dlog_volume(r), fd, rtol=1e-6, atol=1e-6)
        assert np.ndim(manifold.radial_log_volume(0.5)) == 0

    def test_volume_growth_rate(self, manifold, rng):
        rate = self._volume_or_skip(lambda: manifold.volume_growth_rate)
        assert isinstance(rate, float) and rate >= 0
        if manifold.is_compact:
            assert rate == 0.0
            return
        # The slope of max_u log theta_x(R u) between two large radii (the log R terms of the
        # flat factor cancel); random directions come close to the fastest one.
        x = manifold.random_point(rng=rng)
        u = self.unit_directions(manifold, x, 4000, rng)
        lo, hi = (np.max(manifold.log_volume_density(x, big * u)) for big in (200.0, 400.0))
        slope = (hi - lo) / 200.0
        assert slope <= rate + 1e-3
        assert slope >= 0.9 * rate - 1e-3
        try:
            far = manifold.radial_dlog_volume(1000.0)
        except NotImplementedError:
            return
        assert far == pytest.approx(rate, abs=3e-3)  # J(r) grows like e^(rate r)

    # ------------------------------------------------------------------ CSV format
    def test_csv_columns_match_the_rows(self, manifold, rng):
        cols = manifold.csv_columns()
        assert cols and all(isinstance(c, str) and c.strip() == c and c for c in cols)
        # headers are matched case-insensitively, and 'x' is the covariate of regression files
        assert len({c.lower() for c in cols}) == len(cols)
        assert "x" not in {c.lower() for c in cols}
        x = manifold.random_point(BATCH, rng)
        rows = manifold.to_csv_rows(x)
        assert rows.shape == (BATCH, len(cols))
        assert manifold.from_csv_rows(rows).shape == x.shape
        for wrong in (rows[:, :-1], np.concatenate([rows, rows[:, :1]], axis=1)):
            with pytest.raises(ValueError, match="columns"):
                manifold.from_csv_rows(wrong)
            with pytest.raises(ValueError, match="columns"):
                manifold.csv_problems(wrong)
        assert isinstance(manifold.csv_header_hint(["zz"], cols), str)

    def test_csv_rows_round_trip(self, manifold, rng):
        x = manifold.random_point(BATCH, rng)
        rows = manifold.to_csv_rows(x)
        assert np.all(np.isfinite(rows))
        assert manifold.csv_problems(rows) == []
        for renormalize in (False, True):
            back = manifold.from_csv_rows(rows, renormalize=renormalize)
            assert back.shape == x.shape
            assert np.all(manifold.belongs(back))
            self.assert_same_point(manifold, back, x)
        # any batch shape, a single point included
        grid = manifold.random_point((2, 3), rng)
        grid_rows = manifold.to_csv_rows(grid)
        assert grid_rows.shape == (2, 3, len(manifold.csv_columns()))
        self.assert_same_point(manifold, manifold.from_csv_rows(grid_rows), grid)
        one = manifold.to_csv_rows(x[0])
        assert one.shape == (len(manifold.csv_columns()),)
        self.assert_same_point(manifold, manifold.from_csv_rows(one), x[0])
        np.testing.assert_array_equal(one, rows[0])

    @pytest.mark.parametrize("atol", [1e-6, 1e-2])
    def test_csv_problems_flag_exactly_the_rows_off_the_manifold(self, manifold, rng, atol):
        """Perturbed rows are reported (with a message each) iff the point they convert to is
        not on the manifold; untouched rows never are."""
        x = manifold.random_point(7, rng)
        rows = manifold.to_csv_rows(x)
        bad = rows.copy()
        bad[1] = 0.0
        bad[2] = 1.5 * rows[2]
        bad[3] = -rows[3]
        bad[4] = rows[4] + 0.3 * rng.standard_normal(rows.shape[1])
        bad[5] = (1 + 1e-4) * rows[5]
        for renormalize in (False, True):
            flagged = np.zeros(len(bad), dtype=bool)
            for problem in manifold.csv_problems(bad, atol=atol, renormalize=renormalize):
                assert problem.mask.shape == (len(bad),) and problem.mask.any()
                assert problem.column is None or problem.column in manifold.csv_columns()
                for i in np.flatnonzero(problem.mask):
                    assert isinstance(problem.message(int(i)), str) and problem.message(int(i))
                flagged |= problem.mask
            points = manifold.from_csv_rows(bad, renormalize=renormalize)
            assert points.shape == x.shape and np.all(np.isfinite(points))
            on = np.asarray(manifold.belongs(points, atol=atol), dtype=bool)
            np.testing.assert_array_equal(flagged, ~on, err_msg=f"renormalize={renormalize}")
            assert not flagged[[0, 6]].any()

    # ------------------------------------------------------------------ oracle
    def _oracle_or_skip(self, oracle):
        if oracle is None:
            pytest.skip("no geomstats counterpart for this manifold")
        return oracle

    def test_agrees_with_geomstats(self, manifold, oracle, rng):
        space = self._oracle_or_skip(oracle)
        x, y = self.pair(manifold, rng)
        v = manifold.random_tangent(x, rng)
        u = manifold.random_tangent(x, rng)
        metric = space.metric
        tol = self.oracle_tol
        np.testing.assert_allclose(manifold.dist(x, y), metric.dist(x, y), atol=tol)
        np.testing.assert_allclose(manifold.log(x, y), metric.log(y, x), atol=tol)
        np.testing.assert_allclose(manifold.exp(x, v), metric.exp(v, x), atol=tol)
        np.testing.assert_allclose(manifold.inner(x, u, v), metric.inner_product(u, v, x), atol=tol)
        assert np.all(space.belongs(manifold.random_point(BATCH, rng)))
        assert manifold.dim == space.dim

    def test_transport_agrees_with_geomstats(self, manifold, oracle, rng):
        space = self._oracle_or_skip(oracle)
        x, y = self.pair(manifold, rng)
        v = manifold.random_tangent(x, rng)
        expected = space.metric.parallel_transport(v, x, end_point=y)
        np.testing.assert_allclose(manifold.transport(x, y, v), expected, atol=self.oracle_tol)
