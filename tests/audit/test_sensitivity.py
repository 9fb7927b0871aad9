r"""Independent check of the sensitivities and noise scales recorded by strict releases on S².

Two parts.

1. *The record.* The oracle recomputes DESIGN §5 (κ = 1 on S²: h = 2r cot 2r,
   Δ = 2r(2 − h)/(n h), Δ_g = 2r(2 − h)/n, Δ_p = Δ_v = 2τ/n) and the noise rules of DESIGN §6 / §8
   (Laplace σ = Δ/ε on the homogeneous sphere, KNG σ = 2Δ/ε, joint σ = 2√(Δ_p² + Δ_v²)/(ε_p + ε_v))
   and compares them with ``Release.sensitivity`` / ``Release.sigma`` / ``Release.epsilon`` /
   ``Release.delta`` over a grid of n, r, τ and budgets.

2. *The bounds themselves.* Each bound is a supremum over data; the oracle searches for the
   supremum (random restarts + Nelder–Mead, parameters squashed into the admissible sets) and
   asserts the formula is never exceeded:

   * KNG Fréchet: sup over z, y, y′ ∈ B_r of ‖Log_z y − Log_z y′‖ ≤ n Δ_g = 2r(2 − h);
   * regression: one term's stacked horizontal/vertical gradient difference
     ‖(∇_p, ∇_v)(y) − (∇_p, ∇_v)(y′)‖ ≤ n √(Δ_p² + Δ_v²) = 2√2 τ over p, v (|v| ≤ π), t ∈ [0, 1],
     y, y′ ∈ S², and each block ≤ 2τ.

   (The Fréchet-mean bound Δ itself is searched in :mod:`tests.audit.test_frechet_laplace`.)
"""

import numpy as np
import pytest

from dpcore.manifolds import Sphere
from dpcore.release import private_frechet_mean, private_geodesic_regression

from . import _oracle as O
from . import _oracle_regression as RG
from ._draws import record_only

S2 = Sphere(2)
SEED = 7_310


def _ball_data(n, radius, rng):
    return O.point_at(np.broadcast_to(O.NORTH, (n, 3)), radius * np.sqrt(rng.uniform(size=n)),
                      rng.uniform(0, 2 * np.pi, n))


class TestRecordedScales:
    @pytest.mark.parametrize("n", [2, 7, 40])
    @pytest.mark.parametrize("radius", [0.1, 0.5, 0.75])
    @pytest.mark.parametrize("eps", [0.3, 1.0])
    def test_frechet(self, n, radius, eps):
        y = _ball_data(n, radius, np.random.default_rng(SEED + n))
        lap = private_frechet_mean(S2, y, epsilon=eps, mechanism="laplace", radius=radius,
                                   center=O.NORTH, rng=SEED)
        delta = O.frechet_mean_sensitivity(n, radius)
        assert lap.sensitivity["mean"] == pytest.approx(delta, rel=1e-12)
        assert lap.sigma["mean"] == pytest.approx(delta / eps, rel=1e-12)
        assert lap.epsilon == pytest.approx(eps) and lap.delta == 0
        kng = private_frechet_mean(S2, y, epsilon=eps, mechanism="kng", radius=radius,
                                   center=O.NORTH, rng=SEED,
                                   **record_only(private_frechet_mean))
        delta_g = O.frechet_gradient_sensitivity(n, radius)
        assert kng.sensitivity["gradient"] == pytest.approx(delta_g, rel=1e-12)
        assert kng.sigma["mean"] == pytest.approx(2 * delta_g / eps, rel=1e-12)

    def test_frechet_radius_limit(self):
        # r* = min(inj, π/(2√κ))/2 = π/4 on S²: a larger public radius must be refused.
        y = _ball_data(5, 0.1, np.random.default_rng(SEED))
        with pytest.raises(ValueError):
            private_frechet_mean(S2, y, epsilon=1.0, radius=np.pi / 4 + 1e-3, center=O.NORTH,
                                 rng=SEED)

    @pytest.mark.parametrize("n", [3, 10, 40])
    @pytest.mark.parametrize("tau", [0.05, 0.2, 1.0])
    @pytest.mark.parametrize("budget", [(1.0, 1.0), (0.2, 1.5)])
    def test_regression(self, n, tau, budget):
        rng = np.random.default_rng(SEED + n)
        x = rng.uniform(-0.2, 1.2, n)
        y = _ball_data(n, 0.5, rng)
        eps_p, eps_v = budget
        dp, dv = O.regression_sensitivity(n, tau)
        joint = private_geodesic_regression(S2, x, y, eps_p=eps_p, eps_v=eps_v, tau=tau,
                                            covariate_range=(0, 1), scheme="joint", rng=SEED,
                                            **record_only(private_geodesic_regression))
        assert joint.sensitivity["footpoint"] == pytest.approx(dp, rel=1e-12)
        assert joint.sensitivity["shooting_vector"] == pytest.approx(dv, rel=1e-12)
        assert joint.sensitivity["joint"] == pytest.approx(np.hypot(dp, dv), rel=1e-12)
        assert joint.sigma["joint"] == pytest.approx(2 * np.hypot(dp, dv) / (eps_p + eps_v),
                                                     rel=1e-12)
        assert joint.epsilon == pytest.approx(eps_p + eps_v)
        assert joint.assumptions["max_speed"]["value"] == pytest.approx(np.pi)
        seq = private_geodesic_regression(S2, x, y, eps_p=eps_p, eps_v=eps_v, tau=tau,
                                          covariate_range=(0, 1), scheme="sequential",
                                          rng=SEED, **record_only(private_geodesic_regression))
        assert seq.sensitivity["footpoint"] == pytest.approx(dp, rel=1e-12)
        assert seq.sigma["footpoint"] == pytest.approx(2 * dp / eps_p, rel=1e-12)
        assert seq.sigma["shooting_vector"] == pytest.approx(2 * dv / eps_v, rel=1e-12)
        assert not seq.private


# ------------------------------------------------------------------ searches for the suprema
@pytest.mark.parametrize("radius", [0.05, 0.3, 0.6, 0.78])
def test_frechet_gradient_sensitivity_is_an_upper_bound(radius):
    rng = np.random.default_rng(SEED)

    def spread(a):
        z, y, w = (O.ball_point(a[:, k:k + 2], O.NORTH, radius) for k in (0, 2, 4))
        return O.norm(O.log(z, y) - O.log(z, w))

    # random restarts, plus z on the boundary and y, y' on the far boundary, symmetric about
    # the diameter through z
    starts = rng.normal(scale=2.0, size=(400, 6))
    starts[:3] = [[4.0, 0, -4.0, s, -4.0, -s] for s in (0.5, 2.0, 8.0)]
    _, values = O.local_search(spread, starts, rng, steps=400)
    sup = values.max()
    bound = O.frechet_gradient_sensitivity(1, radius)
    print(f"\nKNG Fréchet r={radius}: sup ‖Log_z y − Log_z y'‖ = {sup:.5f}, "
          f"n Δ_g = {bound:.5f}, ratio {sup / bound:.4f} (flat value 2r = {2 * radius:.4f})")
    assert sup <= bound * (1 + 1e-9)
    assert sup >= 2 * radius * (1 - 1e-4)  # the search reaches at least the flat diameter


@pytest.mark.parametrize("tau", [0.05, 0.2, 1.0, 3.0])
def test_regression_term_sensitivity_is_an_upper_bound(tau):
    rng = np.random.default_rng(SEED)

    def parts(a):
        v = _tangent(a[:, 0:2], np.pi)
        t = 0.5 * (1 + np.tanh(a[:, 2:3]))
        y = O.ball_point(a[:, 3:5], O.NORTH, np.pi - 1e-9)
        w = O.ball_point(a[:, 5:7], O.NORTH, np.pi - 1e-9)
        # both responses in one call (elementwise: the numbers of two calls), the parts that
        # depend on the shooting vector only computed once
        (gp1, gp2), (gu1, gu2) = RG.term_gradients(O.NORTH, t * v, np.stack([y, w]), tau)
        return O.norm(gp1 - gp2), O.norm(t * (gu1 - gu2))

    # random restarts, plus the expected extremal configuration: v → 0, t = 1, opposite
    # residuals longer than τ
    r = np.arctanh(min(0.999, 1.2 * tau / np.pi))
    starts = rng.normal(scale=2.0, size=(600, 7))
    starts[:2] = [[0.01, 0.0, 5.0, r, 0.0, -r, 0.0], [0.0, 0.01, 5.0, 0.0, r, 0.0, -r]]
    sups = [O.local_search(f, starts, rng, steps=400)[1].max()
            for f in (lambda a: np.hypot(*parts(a)), lambda a: parts(a)[0],
                      lambda a: parts(a)[1])]
    sup, sup_p, sup_v = sups
    print(f"\nregression τ={tau}: sup stacked {sup / (2 * np.sqrt(2) * tau):.5f} × 2√2τ, "
          f"footpoint {sup_p / (2 * tau):.5f} × 2τ, vector {sup_v / (2 * tau):.5f} × 2τ")
    tol = 1 + 1e-9
    assert sup <= 2 * np.sqrt(2) * tau * tol
    assert sup_p <= 2 * tau * tol and sup_v <= 2 * tau * tol
    if tau < np.pi / 2:  # the bound is attained in the limit v → 0, t = 1
        assert sup >= 2 * np.sqrt(2) * tau * (1 - 1e-3)


def _tangent(a, radius):
    """Rows of R² → tangent vectors at the north pole of norm < ``radius``."""
    c = O.squash_disk(a, radius)
    return np.concatenate([c, np.zeros(c.shape[:-1] + (1,))], axis=-1)
