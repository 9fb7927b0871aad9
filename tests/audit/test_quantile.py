r"""Audit of bounds estimated under DP: the exponential quantile mechanism behind
``dpcore.release.private_range`` (issue 14, point 2; DESIGN §12).

The oracle (:mod:`tests.audit._quantile_oracle`) writes the output density from the definition
and never calls the library's weights or sampler; the library is used as a black box
(``dpcore.release.private_range``). Neighbouring relation: one row replaced (n fixed).

(a) Exact log-density ratios. For adversarial neighbouring pairs (a point moved from one end of
    the public interval to the other, points outside it that clip to either end, duplicated
    points with one of them moved, n = 1, levels q = 0 and 1) and a random search over data and
    replacements, sup_t |log f_D(t) − log f_D′(t)| is computed exactly (both densities are
    constant on the cells of the union of the two data sets) and must be at most the level's ε;
    a release of m levels (ε/m each) adds the levels' ratios, so its sup is at most ε. The
    oracle itself is checked against a closed form where the bound is nearly attained.

(b) Black box. Draws of the library's release under D and D′ (exact sampler, seeded calls of 400
    draws), the oracle's joint log-ratio statistic at each draw, events {stat > c} and
    {stat < −c} with thresholds fixed from the oracle before any draw, Clopper–Pearson bounds:
    a certified P_D(A) − e^ε P_D′(A) > 0 is a failure. Each of the two certifications of the
    correct mechanism fails falsely with chance at most ``ALPHA_EACH``, the audit's shared
    budget 1e-6 over ``N_PRIVACY_TESTS`` certifications (tests/audit/_draws.py; it counted 20
    before these two), and the four goodness-of-fit checks at most 2.5e-8 each. Power: the
    same test, on a broken mechanism that draws with 4ε while claiming ε, must certify a
    violation; the chance that it misses, bounded from the exact law of the broken draws
    before sampling, is below 1e-6.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dpcore.release import DEFAULT_RANGE_QUANTILES, private_range

from . import _oracle as O
from . import _quantile_oracle as Q
from ._draws import ALPHA_EACH, PER_CALL

A, B = 0.0, 1.0
LEVELS = (0.0, 0.02, 0.25, 0.5, 0.98, 1.0)
#: The budget of one level in (a); the ratio scales with it, so one value suffices with a
#: second one for the record.
EPSILONS = (0.5, 2.0)
SEED = 14_002
#: Goodness-of-fit checks of the library's draws against the oracle: 4 of them, each below this.
GOF_ALPHA = 2.5e-8


# --------------------------------------------------------------------------- (a) exact ratio
def adversarial_pairs():
    """Named neighbouring pairs (D, D′): one row replaced."""
    mid = np.linspace(0.3, 0.7, 9)
    pairs = {
        "one row: a -> b": (np.array([A]), np.array([B])),
        "one row inside": (np.array([0.2]), np.array([0.9])),
        "a point moved from a to b": (np.r_[A, mid], np.r_[B, mid]),
        "outside: below a -> above b": (np.r_[-5.0, mid], np.r_[7.0, mid]),
        "duplicates, one moved a little": (np.full(10, 0.5), np.r_[0.51, np.full(9, 0.5)]),
        "duplicates, one moved to an end": (np.full(10, 0.5), np.r_[B, np.full(9, 0.5)]),
        "duplicates at an end, one moved": (np.full(6, A), np.r_[0.4, np.full(5, A)]),
        # near-tight for q = 1/2: {b − δ, b} against {b − δ, a} (see the closed form below)
        "two rows, far end moved": (np.array([0.999, B]), np.array([0.999, -1.0])),
    }
    return pairs


def random_search(eps, q, rng, trials=400):
    """The largest sup-ratio found over random data (n from 1 to 12, values in [−0.2, 1.2] with
    ties and ends likely) and a random replaced row."""
    best = 0.0
    for _ in range(trials):
        n = int(rng.integers(1, 13))
        pool = np.r_[A, B, -0.2, 1.2, rng.uniform(-0.2, 1.2, 3)]
        d = rng.choice(pool, size=n) if rng.random() < 0.5 else rng.uniform(-0.2, 1.2, n)
        e = d.copy()
        e[rng.integers(n)] = rng.choice(pool)
        best = max(best, Q.sup_log_ratio(d, e, q, eps, A, B))
    return best


def test_oracle_against_a_closed_form():
    """D = {b − δ, b}, D′ = {b − δ, a}, q = 1/2 (q n = 1): f_D ∝ e^{−ε/2} on (a, b − δ) and 1
    on (b − δ, b); f_D′ ∝ 1 and e^{−ε/2}. So sup log f_D / f_D′ = ε/2 + log(Z′/Z) with
    Z = (L − δ) e^{−ε/2} + δ, Z′ = (L − δ) + δ e^{−ε/2}, L = b − a: it tends to ε as δ → 0."""
    for eps in EPSILONS:
        for delta in (0.3, 0.01, 1e-4):
            L = B - A
            z_d = (L - delta) * np.exp(-eps / 2) + delta
            z_e = (L - delta) + delta * np.exp(-eps / 2)
            expected = eps / 2 + np.log(z_e / z_d)
            got = Q.sup_log_ratio(np.array([B - delta, B]), np.array([B - delta, -1.0]), 0.5,
                                  eps, A, B)
            assert got == pytest.approx(expected, rel=1e-12)
    assert expected > 0.999 * eps  # the bound ε is attained in the limit


def test_exact_log_ratio_is_within_epsilon():
    rng = np.random.default_rng(SEED)
    rows = []
    worst = 0.0
    for eps in EPSILONS:
        for q in LEVELS:
            sups = {name: Q.sup_log_ratio(d, e, q, eps, A, B)
                    for name, (d, e) in adversarial_pairs().items()}
            sups["random search"] = random_search(eps, q, rng)
            name, top = max(sups.items(), key=lambda kv: kv[1])
            rows.append(f"ε = {eps:g}, q = {q:<4g}: sup/ε = {top / eps:.4f} ({name})")
            assert top <= eps * (1 + 1e-12), (eps, q, name, top)
            worst = max(worst, top / eps)
    print("\nexponential quantile mechanism, exact sup |log f_D − log f_D'| / ε per level:")
    print("\n".join("  " + r for r in rows))
    print(f"  largest: {worst:.4f}")
    # the pairs reach the bound closely (q = 1/2): the check is not vacuous
    assert worst > 0.99


def test_release_of_several_levels_is_within_its_total():
    """The release's levels are independent draws at ε/m each: the joint log-ratio is the sum
    of theirs. Its sup over all pairs, at the default levels and at (1/4, 1/2, 3/4), is at most
    ε; a second column (another row value of the same replaced row) adds ε/k per column in the
    same way."""
    for levels in (DEFAULT_RANGE_QUANTILES, (0.25, 0.5, 0.75)):
        for eps in EPSILONS:
            each = eps / len(levels)
            for name, (d, e) in adversarial_pairs().items():
                total = sum(Q.sup_log_ratio(d, e, q, each, A, B) for q in levels)
                assert total <= eps * (1 + 1e-12), (levels, eps, name, total)


# --------------------------------------------------------------------------- (b) black box
def release_draws(x, *, epsilon, levels, total, seed):
    """``total`` draws of the library's one-column release (pooled seeded calls), shape
    (total, m), after checking each call states ε and δ = 0."""
    out = []
    for k in range(int(np.ceil(total / PER_CALL))):
        count = min(PER_CALL, total - k * PER_CALL)
        rel = private_range(x, epsilon=epsilon, bounds=(A, B), quantiles=levels,
                            n_draws=count, rng=seed + k)
        assert rel.epsilon == pytest.approx(count * epsilon) and rel.delta == 0.0
        assert rel.private
        out.append(rel.values["quantiles"].reshape(count, len(levels)))
    return np.concatenate(out)


#: Black-box designs: (D, D′, levels, claimed ε). "tight": q = 1/2, where the bound is nearly
#: attained (sup/ε = 0.90 for δ = 0.1); "default levels": the page's (0.02, 0.98) with a point
#: moved to the far end (found by a search over moved positions for the broken mechanism's
#: power at n = 3, ε = 1).
DESIGNS = {
    "tight": (np.array([0.9, B]), np.array([0.9, -1.0]), (0.5,), 1.0),
    "default levels": (np.array([0.45, 0.5, 0.7]), np.array([B, 0.5, 0.7]),
                       DEFAULT_RANGE_QUANTILES, 1.0),
}
N_DRAWS = 200_000


def design_law(name, factor=1.0):
    """The joint statistic's values and their probabilities under D and D′ for draws made at
    ``factor`` × the claimed ε; the statistic is always the claimed one."""
    d, e, levels, eps = DESIGNS[name]
    each = eps / len(levels)
    return Q.joint_law(d, e, levels, each, factor * each, A, B)


def thresholds_of(name):
    """Events fixed from the oracle at the claimed ε, before any draw."""
    stat, p_d, p_e = design_law(name)
    return Q.discrete_thresholds(stat, p_d, p_e, N_DRAWS, ALPHA_EACH)


def certify(name, factor, seed):
    d, e, levels, eps = DESIGNS[name]
    thresholds = thresholds_of(name)
    kw = dict(epsilon=factor * eps, levels=levels, total=N_DRAWS)
    t_d = release_draws(d, seed=seed, **kw)
    t_e = release_draws(e, seed=seed + 100_000, **kw)
    each = eps / len(levels)
    stat_d = Q.draw_statistic(t_d, d, e, levels, each, A, B)
    stat_e = Q.draw_statistic(t_e, d, e, levels, each, A, B)
    return O.distinguishing_bounds(stat_d, stat_e, thresholds, eps, ALPHA_EACH)


@pytest.mark.statistical
@pytest.mark.parametrize("name", list(DESIGNS))
def test_library_draws_follow_the_oracle(name):
    """The library samples the law the oracle audits: χ² of each level's cells."""
    d, e, levels, eps = DESIGNS[name]
    draws = release_draws(d, epsilon=eps, levels=levels, total=40_000, seed=SEED + 7)
    for j, q in enumerate(levels):
        _, p_d, _, cuts = Q.level_law(d, e, q, eps / len(levels), eps / len(levels), A, B)
        p_value = O.chi_square_pvalue(Q.cell_index(draws[:, j], cuts), p_d)
        assert p_value > GOF_ALPHA, (name, q, p_value)


@pytest.mark.statistical
@pytest.mark.parametrize("name", list(DESIGNS))
def test_blackbox_certifies_no_violation(name):
    bounds = certify(name, 1.0, SEED)
    best = max(bounds, key=lambda b: b.excess)
    print(f"\nquantile black box ({name}, ε = {DESIGNS[name][3]:g}, {N_DRAWS} draws each): "
          f"best certified excess {best.excess:+.4f}")
    for b in bounds:
        print("  ", b)
    assert best.excess <= 0.0, str(best)


def miss_probability(name, factor):
    """An upper bound, from the exact law of the broken draws, on the chance that the test
    certifies no violation: for the best single event, the chance that its hits under D fall
    below the level k_a, or under D′ rise above k_b, where k_a, k_b still certify."""
    stat, p_d, p_e = design_law(name, factor)
    _, _, _, eps = DESIGNS[name]
    up, down = thresholds_of(name)
    alpha = ALPHA_EACH / (len(up) + len(down)) / 2.0
    best = 1.0
    events = [(p_d[stat > c].sum(), p_e[stat > c].sum()) for c in up]
    events += [(p_e[stat < -c].sum(), p_d[stat < -c].sum()) for c in down]
    for pa, pb in events:
        tail = 1e-9
        k_a = int(stats.binom.ppf(tail, N_DRAWS, pa))
        k_b = int(stats.binom.isf(tail, N_DRAWS, pb))
        if O.cp_lower(k_a, N_DRAWS, alpha) - np.exp(eps) * O.cp_upper(k_b, N_DRAWS, alpha) > 0:
            best = min(best, float(stats.binom.cdf(k_a - 1, N_DRAWS, pa)
                                   + stats.binom.sf(k_b, N_DRAWS, pb)))
    return best


@pytest.mark.statistical
@pytest.mark.parametrize("name", list(DESIGNS))
def test_blackbox_catches_a_mechanism_using_four_times_epsilon(name):
    """Power: draws made at 4ε (the claim stays ε) are certified as a violation."""
    miss = miss_probability(name, 4.0)
    assert miss < 1e-6, miss  # the design has the power, before any draw
    bounds = certify(name, 4.0, SEED + 1)
    best = max(bounds, key=lambda b: b.excess)
    print(f"\nbroken (4ε) quantile mechanism ({name}): certified excess {best.excess:+.4f}, "
          f"certified log-ratio {max(b.eps_lower for b in bounds):.3f} > ε = "
          f"{DESIGNS[name][3]:g}; chance of a miss ≤ {miss:.1e}")
    assert best.excess > 0.0
