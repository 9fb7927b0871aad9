"""dpcore.release.private_range: columns' ranges estimated under DP (issue 14, point 2).

The record (budget, δ, label, assumptions, JSON), the split of ε over columns and levels
(checked on the draws' law, computed here from the mechanism's definition), shapes, seeding,
accuracy where n·ε is large (a bound derived below), and argument checks.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from dpcore.exceptions import LimitExceededError
from dpcore.release import DEFAULT_RANGE_QUANTILES, SEEDED_CAVEAT, private_range

RECORD_KEYS = {"values", "mechanism", "epsilon", "delta", "mu", "sensitivity", "sigma",
               "assumptions", "diagnostics", "mode", "seeded", "version", "label", "caveats",
               "details", "guarantee", "private"}
#: False-failure chance of each statistical check below (fewer than ten: below 1e-6).
P_FAIL = 1e-7


def column_law(x, q, eps, a, b):
    """Cells between distinct clipped values and their probabilities under
    f(t) ∝ exp(−ε |#{x_i < t} − q n| / 2) on [a, b] (the definition, counted directly)."""
    z = np.clip(np.asarray(x, float), a, b)
    ends = np.unique(np.concatenate([[a, b], z]))
    mid = 0.5 * (ends[:-1] + ends[1:])
    count = np.array([np.sum(z < m) for m in mid])
    log_w = np.log(np.diff(ends)) - 0.5 * eps * np.abs(count - q * z.size)
    p = np.exp(log_w - log_w.max())
    return ends[:-1], p / p.sum()


def numbers(obj):
    """Every number in a JSON-like record."""
    if isinstance(obj, dict):
        return [v for item in obj.values() for v in numbers(item)]
    if isinstance(obj, list):
        return [v for item in obj for v in numbers(item)]
    return [float(obj)] if isinstance(obj, (int, float)) and not isinstance(obj, bool) else []


def test_record_of_one_column():
    x = np.array([6.91, 7.13, 7.02, 7.44, 6.85, 7.61, 7.27])
    rel = private_range(x, epsilon=0.4, bounds=(0.0, 20.0))
    assert rel.epsilon == pytest.approx(0.4) and rel.delta == 0.0 and rel.mu is None
    assert rel.private and rel.label == "private" and rel.guarantee == "private"
    assert not rel.seeded and rel.mode == "strict"
    assert rel.mechanism == "exponential_quantile"
    assert rel.assumptions["bounds"]["value"] == (0.0, 20.0)
    assert rel.assumptions["bounds"]["source"] == "public"
    assert rel.values["quantiles"].shape == (1, 2) and rel.values["range"].shape == (1, 2)
    lo, hi = rel.values["range"][0]
    assert 0.0 <= lo <= hi <= 20.0
    assert sorted(rel.values["quantiles"][0]) == [lo, hi]
    d = rel.details
    assert d["n"] == 7 and d["columns"] == 1 and d["n_draws"] == 1
    np.testing.assert_array_equal(d["quantiles"], DEFAULT_RANGE_QUANTILES)
    assert d["epsilon_per_quantile"] == pytest.approx(0.2)
    assert rel.sensitivity == {"rank": 1.0}
    assert rel.sigma["quantile"] == pytest.approx(2.0 / 0.2)
    record = rel.to_dict()
    assert set(record) == RECORD_KEYS
    json.dumps(record, allow_nan=False)
    # the record holds the released values and public facts, never a data value (released
    # values are continuous draws: equal to a data value with probability zero)
    assert not set(numbers(record)) & set(x.tolist())


def test_seeded_release_is_reproducible_and_labelled():
    x = np.linspace(0.0, 1.0, 30)
    a = private_range(x, epsilon=1.0, bounds=(-1, 2), rng=5)
    b = private_range(x, epsilon=1.0, bounds=(-1, 2), rng=5)
    np.testing.assert_array_equal(a.values["quantiles"], b.values["quantiles"])
    assert a.seeded and a.label == "private mechanism, seeded: not for publication"
    assert SEEDED_CAVEAT in a.caveats
    c = private_range(x, epsilon=1.0, bounds=(-1, 2))
    d = private_range(x, epsilon=1.0, bounds=(-1, 2))
    assert not np.array_equal(c.values["quantiles"], d.values["quantiles"])


def test_several_columns_and_draws():
    rng = np.random.default_rng(0)
    x = np.column_stack([rng.normal(7, 0.3, 50), rng.uniform(0, 1, 50), rng.normal(size=50)])
    rel = private_range(x, epsilon=0.6, bounds=[(0, 20), (0, 1), (-10, 10)], n_draws=4,
                        quantiles=(0.1, 0.5, 0.9), rng=1)
    assert rel.values["quantiles"].shape == (4, 3, 3)
    assert rel.values["range"].shape == (4, 3, 2)
    assert rel.epsilon == pytest.approx(4 * 0.6)
    assert rel.details["epsilon_per_quantile"] == pytest.approx(0.6 / 9)
    assert any("4 independent draws" in c for c in rel.caveats)
    for j, (a, b) in enumerate([(0, 20), (0, 1), (-10, 10)]):
        q = rel.values["quantiles"][:, j, :]
        assert np.all((q >= a) & (q <= b))
    np.testing.assert_array_equal(rel.values["range"][..., 0], rel.values["quantiles"].min(-1))
    np.testing.assert_array_equal(rel.values["range"][..., 1], rel.values["quantiles"].max(-1))
    # one pair for every column
    same = private_range(x, epsilon=0.6, bounds=(-20, 20), rng=1)
    assert same.assumptions["bounds"]["value"] == ((-20.0, 20.0),) * 3


@pytest.mark.statistical
def test_budget_is_split_over_columns_and_levels():
    """Two columns × two levels at ε = 2: every level of every column follows the law at
    ε / 4 (χ² over cells, draws pooled over seeded calls of 400)."""
    x = np.column_stack([np.array([0.1, 0.2, 0.2, 0.5, 0.9, 1.7]),
                         np.array([-0.5, 0.3, 0.3, 0.3, 0.6, 0.8])])
    levels, eps, bounds = (0.2, 0.8), 2.0, (0.0, 1.0)
    draws = np.concatenate([
        private_range(x, epsilon=eps, bounds=bounds, quantiles=levels, n_draws=400,
                      rng=1000 + k).values["quantiles"] for k in range(100)])
    for j in range(2):
        for i, q in enumerate(levels):
            lo, p = column_law(x[:, j], q, eps / 4, *bounds)
            cell = np.searchsorted(lo, draws[:, j, i], side="right") - 1
            counts = np.bincount(cell, minlength=lo.size)
            pvalue = stats.chisquare(counts, draws.shape[0] * p).pvalue
            assert pvalue > P_FAIL / 4, (j, q, pvalue)
    # power: the same check rejects the law at ε / 2 (no split over the columns)
    lo, p = column_law(x[:, 0], levels[0], eps / 2, *bounds)
    counts = np.bincount(np.searchsorted(lo, draws[:, 0, 0], side="right") - 1,
                         minlength=lo.size)
    assert stats.chisquare(counts, draws.shape[0] * p).pvalue < 1e-12


def test_accuracy_when_n_epsilon_is_large():
    """Data on an even grid, x_i = (i − 1/2) h with h = 1/n, in [a, b] = [0, 1]: every gap has
    length at most h and the gap of rank q n (an integer here) has length h (h/2 at the ends).
    With ε' the budget of one level, the gaps more than k ranks away weigh at most
    h · 2 e^{−ε' k/2} / (1 − e^{−ε'/2}) against at least h/2 for that gap, so
    P(rank error > k) ≤ 4 e^{−ε' k/2} / (1 − e^{−ε'/2}), below 1e-12 for n = 1000, ε = 5
    (ε' = 2.5) and k = 25. A draw of rank i lies in [(i − 1/2) h, (i + 1/2) h], hence within
    (k + 1) h of q."""
    n, eps, k = 1000, 5.0, 25
    x = (np.arange(n) + 0.5) / n
    h, eps_each = 1.0 / n, eps / 2
    bound = 4 * np.exp(-eps_each * k / 2) / (1 - np.exp(-eps_each / 2))
    assert bound < 1e-12
    rel = private_range(x, epsilon=eps, bounds=(0.0, 1.0), rng=11)
    lo, hi = rel.values["range"][0]
    assert abs(lo - 0.02) <= (k + 1) * h and abs(hi - 0.98) <= (k + 1) * h


@pytest.mark.parametrize("kwargs, error, fragment", [
    ({"x": [[0.1, np.nan], [0.2, 0.3]]}, ValueError, "row 0, column 1"),
    ({"x": [0.1, np.inf]}, ValueError, "first at row 1"),
    ({"x": np.zeros((2, 2, 2))}, ValueError, "shape (n,) or (n, k)"),
    ({"x": []}, ValueError, "at least one row"),
    ({"bounds": [(0, 1), (0, 2), (0, 3)]}, ValueError, "one per column"),
    ({"bounds": (2.0, 1.0)}, ValueError, "low < high"),
    ({"epsilon": 0}, ValueError, "`epsilon` must be positive"),
    ({"quantiles": (0.1, 1.2)}, ValueError, "[0, 1]"),
    ({"n_draws": 0}, ValueError, "`n_draws` must be at least 1"),
])
def test_bad_arguments(kwargs, error, fragment):
    args = {"x": [[0.1, 0.5], [0.2, 0.3]], "epsilon": 1.0, "bounds": (0.0, 1.0)}
    args.update(kwargs)
    x = args.pop("x")
    with pytest.raises(error) as info:
        private_range(x, **args)
    assert fragment in str(info.value)


def test_draws_are_capped():
    with pytest.raises(LimitExceededError, match="max_replicates"):
        private_range([0.1, 0.2], epsilon=1.0, bounds=(0, 1), n_draws=401)
