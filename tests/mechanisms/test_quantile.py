"""The exponential quantile mechanism (dpcore.mechanisms.quantile): exact law, edge cases,
validation.

The law is checked against its definition, computed here without the library's weights: for
t in [a, b], f(t) ∝ exp(−ε |#{x_i < t} − q n| / 2) with the data clipped to [a, b]. It is
constant between consecutive distinct clipped values (cells), so the draws' cells follow a
discrete law (χ² test) and, within its cell, a draw is uniform (KS test of the position inside
the cell). Each statistical test fails falsely with chance at most P_FAIL; fewer than ten run,
so together below 1e-6.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dpcore.mechanisms import ExponentialQuantile, sample_exponential_quantiles
from dpcore.mechanisms.quantile import quantile_edges, quantile_log_weights

P_FAIL = 1e-7
DRAWS = 100_000


def cell_law(x, q, eps, a, b):
    """Cells (ends of positive-length cells between distinct clipped values) and their
    probabilities, from the definition: count at each cell's midpoint."""
    z = np.clip(np.asarray(x, float), a, b)
    ends = np.unique(np.concatenate([[a, b], z]))
    lo, hi = ends[:-1], ends[1:]
    mid = 0.5 * (lo + hi)
    count = np.array([np.sum(z < m) for m in mid])
    log_w = np.log(hi - lo) - 0.5 * eps * np.abs(count - q * z.size)
    p = np.exp(log_w - log_w.max())
    return lo, hi, p / p.sum()


def check_law(draws, x, q, eps, a, b):
    """χ² over the cells and KS of the position inside the cells; returns the p-values."""
    lo, hi, p = cell_law(x, q, eps, a, b)
    assert np.all((draws >= a) & (draws <= b))
    cell = np.clip(np.searchsorted(lo, draws, side="right") - 1, 0, lo.size - 1)
    counts = np.bincount(cell, minlength=lo.size)
    expected = draws.size * p
    big = expected >= 5  # pool sparse cells: χ² needs expected counts ≥ 5
    obs = np.append(counts[big], counts[~big].sum())
    exp_ = np.append(expected[big], expected[~big].sum())
    if exp_[-1] < 5:  # fold a small pool into the largest cell
        i = int(np.argmax(exp_[:-1]))
        obs[i] += obs[-1]
        exp_[i] += exp_[-1]
        obs, exp_ = obs[:-1], exp_[:-1]
    p_chi2 = 1.0 if obs.size == 1 else float(stats.chisquare(obs, exp_).pvalue)
    inside = (draws - lo[cell]) / (hi[cell] - lo[cell])
    p_ks = float(stats.kstest(inside, "uniform").pvalue)
    return p_chi2, p_ks


# --------------------------------------------------------------------------- exact law
CASES = {
    # data with ties, points below a and above b (clipped), several levels
    "ties and clipping": (np.array([-3.0, 0.1, 0.1, 0.1, 0.4, 0.45, 0.7, 0.7, 2.5, 9.0]),
                          (0.0, 0.02, 0.3, 0.5, 0.9, 1.0), 1.5, (0.0, 1.0)),
    # every point equal, strictly inside
    "all equal": (np.full(7, 0.3), (0.0, 0.5, 1.0), 2.0, (0.0, 1.0)),
    # n = 1, a wide interval
    "one row": (np.array([2.0]), (0.0, 0.5, 1.0), 3.0, (-10.0, 10.0)),
}


@pytest.mark.statistical
@pytest.mark.parametrize("name", list(CASES))
def test_draws_follow_the_exact_law(name):
    x, levels, eps, (a, b) = CASES[name]
    draws = sample_exponential_quantiles(x, levels, eps, (a, b), size=DRAWS,
                                         rng=np.random.default_rng(20261201))
    assert draws.shape == (DRAWS, len(levels))
    # one χ² and one KS per level; the levels share P_FAIL (Bonferroni)
    for j, q in enumerate(levels):
        p_chi2, p_ks = check_law(draws[:, j], x, q, eps, a, b)
        assert p_chi2 > P_FAIL / (2 * len(levels)), (name, q, p_chi2)
        assert p_ks > P_FAIL / (2 * len(levels)), (name, q, p_ks)


def test_the_law_distinguishes_a_wrong_epsilon():
    """Power of the χ² check: draws at 2ε are rejected as draws at ε."""
    x, levels, eps, bounds = CASES["ties and clipping"]
    draws = sample_exponential_quantiles(x, 0.5, 2 * eps, bounds, size=DRAWS, rng=7)[:, 0]
    p_chi2, _ = check_law(draws, x, 0.5, eps, *bounds)
    assert p_chi2 < 1e-12


def test_log_weights_match_the_definition():
    x, _, eps, (a, b) = CASES["ties and clipping"]
    edges = quantile_edges(x, (a, b))
    assert edges[0] == a and edges[-1] == b and np.all(np.diff(edges) >= 0)
    assert edges.size == x.size + 2
    lw = quantile_log_weights(edges, np.array([0.3]), np.array([eps]))[0]
    lengths = np.diff(edges)
    # zero-length gaps (ties, clipped points) have weight zero; the others the definition
    assert np.all(np.isneginf(lw[lengths == 0]))
    lo, hi, p = cell_law(x, 0.3, eps, a, b)
    pos = lengths > 0
    w = np.exp(lw[pos] - lw[pos].max())
    np.testing.assert_allclose(w / w.sum(), p, rtol=1e-12)
    np.testing.assert_allclose(edges[:-1][pos], lo, rtol=0, atol=0)


# --------------------------------------------------------------------------- edge cases
def test_extreme_levels_concentrate_beyond_the_data():
    """q = 0 favours t below every point, q = 1 above every point: with n ε large nearly every
    draw is there. P(a draw of q = 0 above the smallest point) ≤ Σ_{i≥1} (L_i/L_0) e^{−εi/2},
    below 1e-12 here, so one violation in 10^4 draws has chance below 1e-8."""
    x = np.linspace(0.4, 0.6, 50)
    draws = sample_exponential_quantiles(x, (0.0, 1.0), 60.0, (0.0, 1.0), size=10_000, rng=1)
    assert np.all(draws[:, 0] <= 0.4) and np.all(draws[:, 1] >= 0.6)


def test_all_points_at_an_end_and_outside():
    """Every point below a: they all clip to a, the gaps [a, a] have length zero, and the whole
    law sits on the one gap (a, b], where #{x < t} = n."""
    x = np.full(5, -4.0)
    for q in (0.0, 0.5, 1.0):
        draws = sample_exponential_quantiles(x, q, 1.0, (0.0, 2.0), size=2000, rng=3)[:, 0]
        assert np.all((draws >= 0.0) & (draws <= 2.0))
        # uniform on [0, 2]: KS at the shared P_FAIL
        assert stats.kstest(draws / 2.0, "uniform").pvalue > P_FAIL


def test_shapes_and_seeding():
    x = np.arange(10.0)
    assert sample_exponential_quantiles(x, 0.5, 1.0, (0, 10), rng=0).shape == (1,)
    assert sample_exponential_quantiles(x, (0.1, 0.9), 1.0, (0, 10), size=4,
                                        rng=0).shape == (4, 2)
    assert sample_exponential_quantiles(x, 0.5, 1.0, (0, 10), size=(2, 3),
                                        rng=0).shape == (2, 3, 1)
    a = sample_exponential_quantiles(x, (0.1, 0.9), 1.0, (0, 10), size=5, rng=42)
    b = sample_exponential_quantiles(x, (0.1, 0.9), 1.0, (0, 10), size=5, rng=42)
    np.testing.assert_array_equal(a, b)
    c = sample_exponential_quantiles(x, (0.1, 0.9), 1.0, (0, 10), size=5)
    d = sample_exponential_quantiles(x, (0.1, 0.9), 1.0, (0, 10), size=5)
    assert not np.array_equal(c, d)  # OS entropy


def test_per_level_budgets():
    """One budget per level: a level with a huge ε sits at its quantile, one with a tiny ε is
    nearly uniform on [a, b]."""
    x = np.linspace(0.0, 1.0, 201)
    draws = sample_exponential_quantiles(x, (0.5, 0.5), (500.0, 1e-6), (-100.0, 100.0),
                                         size=2000, rng=5)
    assert np.all(np.abs(draws[:, 0] - 0.5) < 0.05)
    assert stats.kstest((draws[:, 1] + 100.0) / 200.0, "uniform").pvalue > P_FAIL


def test_mechanism_splits_epsilon_over_levels():
    mech = ExponentialQuantile(epsilon=2.0, quantiles=(0.1, 0.5, 0.9), bounds=(0, 1))
    assert mech.epsilon_each == pytest.approx(2.0 / 3)
    g = mech.guarantee()
    assert g.epsilon == 2.0 and g.delta == 0.0 and g.sensitivity == 1.0 and g.pure
    assert g.sigma == pytest.approx(2.0 / (2.0 / 3))
    res = mech.release(np.array([0.2, 0.4]), size=3, rng=0)
    assert res.exact and res.values.shape == (3, 3)
    np.testing.assert_array_equal(
        res.values, sample_exponential_quantiles(np.array([0.2, 0.4]), (0.1, 0.5, 0.9), 2.0 / 3,
                                                 (0, 1), size=3, rng=0))
    with pytest.raises(TypeError):
        ExponentialQuantile(2.0, (0.5,), (0, 1))


# --------------------------------------------------------------------------- validation
@pytest.mark.parametrize("kwargs, error, fragment", [
    ({"bounds": (1.0, 1.0)}, ValueError, "low < high"),
    ({"bounds": (0.0, np.inf)}, ValueError, "`bounds[1]` must be finite"),
    ({"bounds": (np.nan, 1.0)}, ValueError, "`bounds[0]` must be finite"),
    ({"bounds": (0.0, 1.0, 2.0)}, TypeError, "pair (low, high)"),
    ({"bounds": "ab"}, TypeError, "pair (low, high)"),
    ({"quantiles": 1.5}, ValueError, "`quantiles` must lie in [0, 1], got 1.5"),
    ({"quantiles": (0.5, np.nan)}, ValueError, "must lie in [0, 1]"),
    ({"quantiles": ()}, ValueError, "non-empty"),
    ({"quantiles": True}, TypeError, "`quantiles`"),
    ({"epsilon": 0.0}, ValueError, "`epsilon` must be positive"),
    ({"epsilon": -1.0}, ValueError, "`epsilon` must be positive"),
    ({"epsilon": np.inf}, ValueError, "`epsilon` must be positive and finite"),
    ({"epsilon": (1.0, 2.0, 3.0)}, ValueError, "one per level"),
    ({"data": [0.1, np.nan]}, ValueError, "NaN or infinite values (first at index 1)"),
    ({"data": [[0.1, 0.2]]}, ValueError, "one-dimensional"),
    ({"data": []}, ValueError, "at least one value"),
    ({"data": ["a", "b"]}, TypeError, "array-like of real numbers"),
    ({"size": 0}, ValueError, "`size`"),
])
def test_bad_arguments_are_named(kwargs, error, fragment):
    args = {"data": [0.2, 0.5], "quantiles": (0.1, 0.9), "epsilon": 1.0, "bounds": (0.0, 1.0),
            "size": None}
    args.update(kwargs)
    with pytest.raises(error) as info:
        sample_exponential_quantiles(args["data"], args["quantiles"], args["epsilon"],
                                     args["bounds"], size=args["size"], rng=0)
    assert fragment in str(info.value)
