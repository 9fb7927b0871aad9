"""Subsampling large data for drawing (dpcore.visualization.subsample)."""

import numpy as np
import pytest

from dpcore.visualization.subsample import (
    DRAW_MAX_POINTS,
    subsample_for_drawing,
    subsample_note,
)


def test_small_data_are_drawn_whole():
    y = np.arange(30.0).reshape(10, 3)
    shown, n = subsample_for_drawing(y)
    assert shown is y and n == 10
    assert subsample_note(10, 10) is None


def test_large_data_give_a_seeded_ordered_subset_of_distinct_rows():
    y = np.arange(50_000 * 2 * 2, dtype=float).reshape(50_000, 2, 2)
    shown, n = subsample_for_drawing(y, seed=3)
    assert n == 50_000 and shown.shape == (DRAW_MAX_POINTS, 2, 2)
    rows = (shown[:, 0, 0] // 4).astype(int)
    assert np.all(np.diff(rows) > 0)  # distinct rows, in file order
    np.testing.assert_array_equal(shown, y[rows])
    again, _ = subsample_for_drawing(y, seed=3)
    np.testing.assert_array_equal(shown, again)
    other, _ = subsample_for_drawing(y, seed=4)
    assert not np.array_equal(shown, other)
    assert "2,000 of the 50,000" in subsample_note(2000, 50_000)


def test_subset_is_uniform_over_the_rows():
    """Chi-square test of the rows' deciles: each decile holds a tenth of the subset in
    expectation (hypergeometric counts; the multinomial chi-square overstates their variance,
    so the test is conservative). Threshold 46 for 9 degrees of freedom: P(false failure)
    < 1e-6."""
    n = 100_000
    y = np.arange(n, dtype=float)[:, None]
    counts = np.zeros(10)
    for seed in range(20):
        shown, _ = subsample_for_drawing(y, seed=seed)
        counts += np.bincount((shown[:, 0] * 10 // n).astype(int), minlength=10)
    expected = counts.sum() / 10
    assert ((counts - expected) ** 2 / expected).sum() < 46.0


def test_bad_size_is_refused():
    with pytest.raises(ValueError, match="max_points"):
        subsample_for_drawing(np.zeros((5, 3)), max_points=0)
