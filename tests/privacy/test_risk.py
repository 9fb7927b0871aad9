"""Disclosure-risk bounds (dpcore.privacy.risk) against independent oracles: closed forms,
brute-force optimisation over the trade-off curve, quadrature, and mechanisms with the same
guarantee (which may never exceed the bounds, and the canonical ones attain them)."""

import math

import numpy as np
import pytest
from scipy import integrate, optimize, special, stats

from dpcore.privacy import (
    average_posterior,
    disclosure_risk,
    posterior_bound,
    success_bound,
    tradeoff_dp,
    tradeoff_gdp,
)

PRIORS = (0.01, 0.1, 0.3, 0.5, 0.8)
EPSILONS = (0.05, 0.5, 1.0, 2.0, 5.0)
MUS = (0.05, 0.3, 1.0, 2.0, 4.0)
# Type I errors from 1e-14 to 1 (fine near 0, where the largest posterior lives).
ALPHA = np.unique(np.concatenate([np.logspace(-14, 0, 20001), np.linspace(0, 1, 200001)]))


def bayes(p, r):
    """Posterior of D from prior p and likelihood ratio r = dP_D / dP_D'."""
    return p * r / (p * r + 1 - p)


# ------------------------------------------------------------------ trade-off curve of (ε, δ)
def test_tradeoff_dp_is_the_randomized_response_curve():
    # δ = 0: the trade-off of randomized response (P = (q, 1-q), Q = (1-q, q)), by its
    # Neyman-Pearson tests: reject on outcome 1 with probability s, then on outcome 2.
    eps = 1.3
    q = math.exp(eps) / (1 + math.exp(eps))
    a = np.linspace(0, 1, 101)
    # α ≤ 1-q: reject only part of outcome 1 (ratio e^ε): β = 1 - q a / (1-q)
    beta = np.where(a <= 1 - q, 1 - a * q / (1 - q), (1 - a) * (1 - q) / q)
    np.testing.assert_allclose(tradeoff_dp(a, eps), beta, atol=1e-12)
    assert tradeoff_dp(0.0, eps, 0.1) == pytest.approx(0.9)


# ------------------------------------------------------------------ (a) the largest belief
@pytest.mark.parametrize("p", PRIORS)
@pytest.mark.parametrize("eps", EPSILONS)
def test_posterior_pure_dp_closed_form_and_brute_force(p, eps):
    closed = p * math.exp(eps) / (p * math.exp(eps) + 1 - p)
    assert posterior_bound(p, epsilon=eps) == pytest.approx(closed, rel=1e-12)
    # The largest positive predictive value of any test on the trade-off curve.
    # (α ≥ 1e-8: below it 1 - f(α) loses its digits to cancellation.)
    a = ALPHA[ALPHA >= 1e-8]
    power = 1 - tradeoff_dp(a, eps)
    ppv = p * power / (p * power + (1 - p) * a)
    assert ppv.max() == pytest.approx(closed, rel=1e-7)
    # Attained by randomized response, whose likelihood ratio is e^ε on one outcome.
    assert bayes(p, math.exp(eps)) == pytest.approx(closed, rel=1e-12)


@pytest.mark.parametrize("mu", MUS)
def test_posterior_gdp_and_delta_reach_certainty(mu):
    # The PPV of the test "draw above t" between N(µ, 1) and N(0, 1), whose errors are on
    # the curve G_µ, climbs towards 1 as t grows (in log space: α = Φ(-t) underflows).
    t = np.linspace(0, 2000, 20001)
    log_ratio = special.log_ndtr(mu - t) - special.log_ndtr(-t)
    ppv = special.expit(log_ratio + special.logit(0.1))
    assert ppv.max() > 0.999 and np.all(np.diff(ppv) >= 0)
    np.testing.assert_allclose(special.ndtr(mu - t[:50]), 1 - tradeoff_gdp(special.ndtr(-t[:50]),
                                                                           mu), atol=1e-12)
    assert posterior_bound(0.1, mu=mu) == 1.0
    assert posterior_bound(0.1, epsilon=1.0, delta=1e-6) == 1.0


def test_laplace_mechanism_attains_the_pure_bound():
    # Laplace(b = 1/ε) at 0 vs at 1: likelihood ratio exp(ε(|y-1| - |y|)) up to e^ε (y ≤ 0).
    eps, p = 0.7, 0.2
    y = np.linspace(-5, 5, 10001)
    ratio = np.exp(eps * (np.abs(y - 1) - np.abs(y)))
    assert bayes(p, ratio).max() == pytest.approx(posterior_bound(p, epsilon=eps), rel=1e-12)


# ------------------------------------------------------------------ (a') the average belief
@pytest.mark.parametrize("p", (0.01, 0.1, 0.5))
@pytest.mark.parametrize("mu", (0.2, 1.0, 3.0, 6.0))
def test_average_posterior_gdp_against_quadrature(p, mu):
    # E over y ~ N(µ, 1) of the posterior of N(µ, 1) against N(0, 1).
    def integrand(y):
        log_ratio = mu * y - mu ** 2 / 2
        return stats.norm.pdf(y - mu) / (1 + (1 - p) / p * math.exp(-log_ratio))

    # Where the posterior crosses 1/2 (its steep part), and ±40 around the mean (beyond: 1e-300).
    mid = (math.log((1 - p) / p) + mu ** 2 / 2) / mu
    oracle = integrate.quad(integrand, mu - 40, mu + 40, epsabs=1e-13, epsrel=1e-12,
                            points=[mid] if abs(mid - mu) < 40 else None, limit=400)[0]
    assert average_posterior(p, mu=mu) == pytest.approx(oracle, abs=1e-9)


@pytest.mark.parametrize("p", (0.01, 0.1, 0.5))
@pytest.mark.parametrize("eps,delta", [(0.5, 0.0), (1.0, 0.0), (1.0, 1e-3), (3.0, 0.05)])
def test_average_posterior_dp_is_the_canonical_four_outcome_pair(p, eps, delta):
    # The (ε, δ) canonical pair (Kairouz et al. 2015): outcomes (reveal D, lean D, lean D',
    # reveal D'); expectation of the posterior under D by enumeration.
    e = math.exp(eps)
    P = np.array([delta, (1 - delta) * e / (1 + e), (1 - delta) / (1 + e), 0.0])
    Q = P[::-1]
    post = np.array([1.0, bayes(p, e), bayes(p, 1 / e), 0.0])
    assert average_posterior(p, epsilon=eps, delta=delta) == pytest.approx(P @ post, rel=1e-12)
    # Its trade-off is f_{ε,δ}: the Neyman-Pearson test rejecting outcome 1 has α = 0,
    # β = 1 - δ; adding outcome 2 has α = Q[:2].sum(), β = 1 - P[:2].sum().
    assert tradeoff_dp(0.0, eps, delta) == pytest.approx(1 - P[0])
    assert tradeoff_dp(Q[:2].sum(), eps, delta) == pytest.approx(1 - P[:2].sum())


def test_average_posterior_bounds_other_mechanisms_with_the_guarantee():
    p = 0.1
    # Laplace mechanism (ε-DP, δ = 0): its average belief under D by quadrature.
    eps = 1.0

    def laplace(y):
        return 0.5 * eps * math.exp(-eps * abs(y - 1)) * bayes(
            p, math.exp(eps * (abs(y) - abs(y - 1))))

    lap = integrate.quad(laplace, -60, 60, points=[0, 1], limit=200)[0]
    assert p < lap <= average_posterior(p, epsilon=eps)
    # A post-processed Gaussian (µ-GDP): only whether the draw exceeds t is released.
    mu = 1.5
    for t in (-1.0, 0.3, 0.75, 2.0):
        pd, pq = stats.norm.sf(t - mu), stats.norm.sf(t)
        binary = pd * bayes(p, pd / pq) + (1 - pd) * bayes(p, (1 - pd) / (1 - pq))
        assert binary <= average_posterior(p, mu=mu) + 1e-12


# ------------------------------------------------------------------ (b) the best guess
def brute_success(p, f):
    """1 - min over α of (1-p) α + p f(α), on a grid refined by a bounded scalar search."""
    values = (1 - p) * ALPHA + p * f(ALPHA)
    i = int(np.argmin(values))
    lo, hi = ALPHA[max(i - 1, 0)], ALPHA[min(i + 1, ALPHA.size - 1)]
    res = optimize.minimize_scalar(lambda a: (1 - p) * a + p * float(f(a)), bounds=(lo, hi),
                                   method="bounded", options={"xatol": 1e-14})
    return 1 - min(values[i], res.fun)


@pytest.mark.parametrize("p", PRIORS)
@pytest.mark.parametrize("mu", MUS)
def test_success_gdp_against_brute_force(p, mu):
    assert success_bound(p, mu=mu) == pytest.approx(
        brute_success(p, lambda a: tradeoff_gdp(a, mu)), abs=1e-9)


@pytest.mark.parametrize("p", PRIORS)
@pytest.mark.parametrize("eps", EPSILONS)
@pytest.mark.parametrize("delta", (0.0, 1e-4, 0.02))
def test_success_dp_against_brute_force(p, eps, delta):
    got = success_bound(p, epsilon=eps, delta=delta)
    assert got == pytest.approx(brute_success(p, lambda a: tradeoff_dp(a, eps, delta)),
                                abs=1e-9)
    # δ adds at most δ to the pure bound.
    assert 0 <= got - success_bound(p, epsilon=eps) <= delta + 1e-15


def test_success_closed_forms_at_even_odds():
    for eps in EPSILONS:
        assert success_bound(0.5, epsilon=eps) == pytest.approx(
            math.exp(eps) / (1 + math.exp(eps)), rel=1e-12)
        assert success_bound(0.5, epsilon=eps, delta=0.01) == pytest.approx(
            (math.exp(eps) + 0.01) / (1 + math.exp(eps)), rel=1e-12)
    for mu in MUS:
        assert success_bound(0.5, mu=mu) == pytest.approx(stats.norm.cdf(mu / 2), rel=1e-12)
        # ... the Bayes accuracy of telling N(0, 1) from N(µ, 1) by the midpoint threshold
        assert success_bound(0.5, mu=mu) == pytest.approx(
            0.5 * stats.norm.sf(mu / 2 - mu) + 0.5 * stats.norm.cdf(mu / 2), rel=1e-12)


@pytest.mark.parametrize("p", (0.01, 0.2, 0.4))
def test_success_is_symmetric_in_the_prior(p):
    assert success_bound(p, mu=1.3) == pytest.approx(success_bound(1 - p, mu=1.3), rel=1e-12)
    assert success_bound(p, epsilon=2.0) == pytest.approx(success_bound(1 - p, epsilon=2.0))


# ------------------------------------------------------------------ properties
@pytest.mark.parametrize("p", (0.01, 0.1, 0.5))
def test_monotone_from_the_prior_to_certainty(p):
    eps = np.linspace(0, 40, 401)
    mus = np.linspace(0, 12, 241)
    for bound in (posterior_bound, average_posterior, success_bound):
        curve_e = bound(p, epsilon=eps)
        assert np.all(np.diff(curve_e) >= -1e-12)
        floor = max(p, 1 - p) if bound is success_bound else p
        assert curve_e[0] == pytest.approx(floor, rel=1e-12)
        assert curve_e[-1] == pytest.approx(1.0, abs=1e-12)
        if bound is not posterior_bound:
            curve_m = bound(p, mu=mus)
            assert np.all(np.diff(curve_m) >= -1e-12)
            assert curve_m[0] == pytest.approx(floor, rel=1e-12)
            assert curve_m[-1] == pytest.approx(1.0, abs=1e-6)
    # Small ε moves the belief by about p(1-p)ε.
    assert posterior_bound(p, epsilon=1e-6) - p == pytest.approx(p * (1 - p) * 1e-6, rel=1e-4)
    assert posterior_bound(p, mu=0.0) == p
    assert posterior_bound(p, epsilon=math.inf) == 1.0
    assert success_bound(p, mu=math.inf) == 1.0 and average_posterior(p, mu=math.inf) == 1.0


def test_average_belief_is_below_the_worst_case_for_pure_dp():
    for p in PRIORS:
        for eps in EPSILONS:
            assert p < average_posterior(p, epsilon=eps) < posterior_bound(p, epsilon=eps)


# ------------------------------------------------------------------ one person, k rows
def test_group_privacy_multiplies_the_guarantee():
    r = disclosure_risk(0.1, epsilon=0.5, delta=0.0, rows=4)
    assert (r.epsilon, r.rows, r.per_release, r.certified) == (2.0, 4, True, True)
    assert r.posterior == pytest.approx(posterior_bound(0.1, epsilon=2.0))
    assert r.success_even == pytest.approx(math.exp(2) / (1 + math.exp(2)))
    g = disclosure_risk(0.1, mu=0.5, rows=3, guarantee="approximately private")
    assert g.mu == pytest.approx(1.5) and g.epsilon is None
    assert g.average_posterior == pytest.approx(average_posterior(0.1, mu=1.5))
    assert (g.per_release, g.certified, g.posterior) == (False, False, 1.0)
    d = disclosure_risk(0.5, epsilon=0.5, delta=1e-5, rows=3)
    assert d.delta == pytest.approx(3 * math.exp(1.0) * 1e-5)
    assert d.success == pytest.approx(success_bound(0.5, epsilon=1.5, delta=d.delta))
    assert not d.per_release and d.certified


def test_uncertified_delta_is_computed_at_zero_and_flagged():
    r = disclosure_risk(0.1, epsilon=1.0, delta=None, guarantee="approximately private")
    assert r.posterior == pytest.approx(posterior_bound(0.1, epsilon=1.0))
    assert r.delta == 0.0 and not r.certified


@pytest.mark.parametrize("kwargs", [
    {"guarantee": "not private", "epsilon": 1.0},
    {"guarantee": "not covered", "epsilon": 1.0},
    {"guarantee": "private"},
])
def test_no_bound_without_a_guarantee(kwargs):
    with pytest.raises(ValueError):
        disclosure_risk(0.1, **kwargs)


@pytest.mark.parametrize("bad", [
    {"prior": 0.0, "epsilon": 1.0}, {"prior": 1.0, "epsilon": 1.0},
    {"prior": 0.1, "epsilon": 1.0, "mu": 1.0}, {"prior": 0.1},
    {"prior": 0.1, "epsilon": -1.0}, {"prior": 0.1, "epsilon": 1.0, "delta": 1.5},
])
def test_invalid_inputs_are_refused(bad):
    prior = bad.pop("prior")
    for bound in (posterior_bound, average_posterior, success_bound):
        with pytest.raises(ValueError):
            bound(prior, **bad)
