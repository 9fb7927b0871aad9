"""The asymptotic law of the budget split's mechanisms against exact draws where both reach
(dpcore.experiments.budget_law; issue 28 point 3).

Every comparison is a two-sample Kolmogorov-Smirnov test with fixed seeds and the threshold
p > 1e-6 (a false failure, were the two laws equal, has probability below 1e-6). The law is an
approximation, so equality is not exact: the tests pass because at these settings the law is
within a total variation of about 0.01 of its target, far below what 300 exact draws can
detect (the two-sample KS critical distance at 1e-6 is about 2.7 / sqrt(300) = 0.16). The
negative control shows that the same test rejects a law that is off (the one the law's own
check flags), so the comparison can fail.
"""

import numpy as np
import pytest
from scipy.stats import ks_2samp

from dpcore.data import make_regression_data
from dpcore.experiments import budget_cells as C
from dpcore.experiments import budget_law as L
from dpcore.learning.regression import regression_gradient
from dpcore.manifolds import Sphere
from dpcore.release.asymptotic import _Law
from dpcore.sampling.rejection import BundleBall, UniformBall, sample_kng_exact

ALPHA = 1e-6
SPHERE = Sphere(2)
POLE = np.array([0.0, 0.0, 1.0])
#: The Geodesic regression page's S² design (the Budget split page's strict default).
DESIGN = dict(tau=0.2, covariate_range=(0.0, 1.0), max_speed=0.8, footpoint_radius=0.2,
              center=POLE)
EXACT_DRAWS = 300
LAW_DRAWS = 20000


def problem(n, seed=1):
    x, y = make_regression_data(SPHERE, n, rng=seed, noise=0.003, footpoint_region=(POLE, 0.2))
    return L.StrictProblem.make(SPHERE, x, y, **DESIGN)


def sequential_errors(pr, eps_p, eps_v, seed):
    """Per-geodesic MSE of exact and of law draws (one vector per footpoint: independent)."""
    gen = np.random.default_rng(seed)
    laws = L.BudgetLaws(pr)
    feet, vecs = C.exact_sequential(pr, [(eps_p, eps_v)], EXACT_DRAWS, 1, gen)[0]
    law_feet, law_vecs = laws.sequential(eps_p, eps_v, LAW_DRAWS, 1, gen)
    return laws, pr.mse(feet, vecs)[:, 0], pr.mse(law_feet, law_vecs)[:, 0]


@pytest.mark.parametrize("n, eps, seed", [(50, 2.0, 1), (30, 3.0, 1)])
def test_the_sequential_law_has_the_error_distribution_of_exact_draws(n, eps, seed):
    """n·ε = 100 per stage (n = 50): the law passes its check and its per-geodesic MSE has
    the law of exact draws. n = 30: the fit's speed lies beyond the public bound 0.8, so the
    vector stage's law is truncated to the speed ball (the polar sampler) and still agrees."""
    pr = problem(n, seed)
    if n == 30:
        assert float(SPHERE.norm(pr.p_hat, pr.v_hat)) > DESIGN["max_speed"]
    laws, exact, law = sequential_errors(pr, eps, eps, seed=0)
    s_p, s_v = pr.sigmas(eps, eps)
    gen = np.random.default_rng(1)
    assert laws.check("p", s_p, gen) is None and laws.check("v", s_v, gen) is None
    assert np.isfinite(exact).all() and np.isfinite(law).all()
    assert ks_2samp(exact, law).pvalue > ALPHA


def test_a_law_its_check_flags_is_rejected_by_exact_draws():
    """Negative control: at n·ε = 50 per stage the vector stage's target is much broader than
    its linear law (the clipped gradient saturates); the check flags it and the same KS test
    rejects the law against exact draws."""
    pr = problem(50)
    laws, exact, law = sequential_errors(pr, 1.0, 1.0, seed=0)
    _, s_v = pr.sigmas(1.0, 1.0)
    flag = laws.check("v", s_v, np.random.default_rng(1))
    assert flag is not None and "vector stage" in flag
    assert ks_2samp(exact, law).pvalue < ALPHA


def test_the_joint_law_has_the_error_distribution_of_exact_draws():
    """The joint scheme (one KNG over (p, v)) at n·ε = 120: the law of
    :class:`~dpcore.release.asymptotic.AsymptoticKNG`, restricted to the support, against
    exact rejection from uniform proposals on the same support (independent code: the
    library's uniform sampler and gradient). The public footpoint ball is small (0.06 about
    the design's footpoint, a fact of this synthetic design) so that exact draws are cheap."""
    data = make_regression_data(SPHERE, 40, rng=1, noise=0.003, footpoint_region=(POLE, 0.2))
    design = {**DESIGN, "footpoint_radius": 0.06, "center": data.footpoint}
    pr = L.StrictProblem.make(SPHERE, data.x, data.y, **design)
    total = 3.0
    laws = L.BudgetLaws(pr)
    sigma = laws.kng.sigma(pr.n * total)
    assert laws.check("joint", sigma, np.random.default_rng(1)) is None

    def gradient_norm(z):
        p, v = z[:, 0], z[:, 1]
        gp, gv = regression_gradient(SPHERE, p, v, pr.t, pr.y, tau=pr.tau)
        return np.hypot(SPHERE.norm(p, gp), SPHERE.norm(p, gv))

    support = BundleBall(UniformBall(SPHERE, data.footpoint, 0.06), DESIGN["max_speed"])
    z, _ = sample_kng_exact(gradient_norm, sigma, support, 200, 0, n_terms=pr.n)
    exact = pr.mse(z[:, 0], z[:, 1][:, None])[:, 0]
    feet, vecs = laws.joint(total, LAW_DRAWS, np.random.default_rng(2))
    law = pr.mse(feet, vecs)[:, 0]
    assert ks_2samp(exact, law).pvalue > ALPHA


@pytest.mark.parametrize("centre", [(1.3, 0.0), (0.9, 0.6)])
def test_ball_truncated_knorm_is_the_restricted_law(centre):
    """The polar sampler of the law restricted to a ball agrees with brute-force rejection
    from the unrestricted law, where the law's centre lies outside the ball (most rows take
    the polar path) and near its edge."""
    gen = np.random.default_rng(0)
    a = np.array([[2.0, 0.3], [0.3, 1.0]])
    law, sigma, c0, k = _Law(a), 0.05, np.array(centre), 20000
    ref = []
    while sum(len(r) for r in ref) < k:
        c = c0 + law.sample(sigma, 400_000, gen)
        ref.append(c[np.linalg.norm(c, axis=1) <= 1.0])
    ref = np.concatenate(ref)[:k]
    out = L.ball_truncated_knorm(a, sigma, np.tile(c0, (k, 1)), 1.0, gen)
    assert np.all(np.linalg.norm(out, axis=1) <= 1.0 + 1e-12)
    for j in range(2):
        assert ks_2samp(ref[:, j], out[:, j]).pvalue > ALPHA
    angle = np.arctan2(out[:, 1], out[:, 0])
    assert ks_2samp(np.arctan2(ref[:, 1], ref[:, 0]), angle).pvalue > ALPHA


def test_a_concentrated_restricted_law_is_resolved():
    """The law's centre 4 units outside the unit ball with scale 1e-3: its mass on the ball is
    a thin layer about (1, 0), which uniform candidate directions cannot resolve; the
    candidates concentrate about the heaviest direction and the draws agree with an exact
    reference (rejection from uniform points of a box holding all but e^-25 of the mass)."""
    gen = np.random.default_rng(0)
    c0, sigma = np.array([5.0, 0.0]), 1e-3
    ref = []
    while sum(len(r) for r in ref) < 20000:
        c = np.column_stack([gen.uniform(0.97, 1.0, 2_000_000),
                             gen.uniform(-0.2, 0.2, 2_000_000)])
        keep = (np.linalg.norm(c, axis=1) <= 1.0) & (
            gen.random(2_000_000) < np.exp(-(np.linalg.norm(c - c0, axis=1) - 4.0) / sigma))
        ref.append(c[keep])
    ref = np.concatenate(ref)[:20000]
    out = L.ball_truncated_knorm(np.eye(2), sigma, np.tile(c0, (1000, 1)), 1.0, gen)
    for j in range(2):
        assert ks_2samp(ref[:, j], out[:, j]).pvalue > ALPHA


def test_a_law_with_no_direction_to_the_support_is_refused():
    """A law so far from the ball that no candidate direction meets it is refused: its cell is
    flagged rather than drawn wrongly."""
    with pytest.raises(L.LawOutsideSupport):
        L.ball_truncated_knorm(np.eye(2), 1e-3, np.array([[1e9, 0.0]]), 1.0,
                               np.random.default_rng(0))


def test_the_law_is_not_given_where_the_clipped_energy_has_no_minimum():
    """A law needs a positive definite Hessian at a zero of the clipped gradient; with every
    residual clipped (τ far below the noise) the cell has no prediction, and strict_cells says
    why instead of drawing."""
    x, y = make_regression_data(SPHERE, 30, rng=3, noise=0.1, footpoint_region=(POLE, 0.2))
    pr = L.StrictProblem.make(SPHERE, x, y, **{**DESIGN, "tau": 1e-3})
    laws = L.BudgetLaws(pr)
    if laws.valid:  # the check then flags it
        assert laws.check("p", pr.sigmas(50.0, 50.0)[0], np.random.default_rng(0))
    out = C.strict_cells(SPHERE, x, y, [(50.0, 50.0, "sequential")], 0, 2, 2,
                         {**DESIGN, "tau": 1e-3})
    mse, source, flag = out[0]
    assert source == "law" and flag
