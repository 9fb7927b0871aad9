"""The noise allowance of the trend facts (the facts themselves are exercised on real studies
in test_studies.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpcore.experiments import facts as F


def _sweep(means_by_n, spread, replicates=4):
    """A budget-sweep-like frame: one budget pair, log MSE = mean ± spread per replicate."""
    rows = []
    offsets = spread * np.linspace(-1.0, 1.0, replicates)
    for n, mean in means_by_n.items():
        for rep, off in enumerate(offsets):
            log_mse = mean + off
            rows.append({"n": n, "eps_p": 0.5, "eps_v": 0.5, "epsilon": 1.0, "replicate": rep,
                         "mse": np.exp(log_mse), "log_mse": log_mse,
                         "nonprivate_mse": np.exp(-8.0)})
    return pd.DataFrame(rows)


def test_rise_within_noise_is_tolerated_only_when_asked():
    df = _sweep({20: -3.0, 50: -2.99, 100: -4.0}, spread=0.5)  # 20 -> 50 rises by 0.01
    strict = F.log_mse_falls_with_n(df)
    lenient = F.log_mse_falls_with_n(df, tolerance=2.0)
    assert not strict.holds and lenient.holds
    assert strict.margin == lenient.margin < 0
    assert "z = " in lenient.detail and "within noise" in lenient.detail


def test_significant_rise_fails_even_with_tolerance():
    df = _sweep({20: -3.0, 50: -2.0, 100: -4.0}, spread=0.05)
    assert not F.log_mse_falls_with_n(df, tolerance=2.0).holds


def test_one_replicate_counts_every_rise():
    df = _sweep({20: -3.0, 50: -2.999, 100: -4.0}, spread=0.0, replicates=1)
    assert not F.log_mse_falls_with_n(df, tolerance=2.0).holds


def test_gap_to_nonprivate_with_a_noisy_step():
    rows = []
    for eps, gap in [(0.5, 2.0), (1.0, 1.0), (1.5, 0.2), (2.0, 0.21)]:
        for rep, off in enumerate([-0.1, 0.1]):
            rows.append({"n": 50, "epsilon": eps, "mse": np.exp(gap + off - 6.0),
                         "nonprivate_mse": np.exp(-6.0), "replicate": rep})
    df = pd.DataFrame(rows)
    assert not F.private_approaches_nonprivate(df).holds
    fact = F.private_approaches_nonprivate(df, tolerance=2.0)
    assert fact.holds and "rises 1.5->2" in fact.detail
