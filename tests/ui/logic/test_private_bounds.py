"""Page logic of "Estimate privately" (ui.logic.private_bounds), Streamlit-free."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpcore.release import Release
from ui.logic import private_bounds as PB


# --------------------------------------------------------------------------- enclosing intervals
@pytest.mark.parametrize("name, interval", [
    ("age", (0.0, 120.0)),
    ("Age (years)", (0.0, 120.0)),
    ("share %", (0.0, 100.0)),
    ("percent_fat", (0.0, 100.0)),
    ("Latitude", (-90.0, 90.0)),
    ("lon", (-180.0, 180.0)),
    ("pH", (0.0, 14.0)),
    ("proportion", (0.0, 1.0)),
    ("birth year", (1900.0, 2100.0)),
])
def test_units_known_from_the_name(name, interval):
    d = PB.enclosing_default(name)
    assert (d.low, d.high) == interval and d.known and d.reason.startswith("units:")


@pytest.mark.parametrize("name", ["height", "Systolic BP [mmHg]", "log population", "page",
                                  "stage", "coverage"])
def test_other_names_get_the_wide_interval_to_confirm(name):
    d = PB.enclosing_default(name)
    assert (d.low, d.high) == PB.WIDE_INTERVAL and not d.known


def test_public_bounds_of_the_data_set_come_first():
    d = PB.enclosing_default("age", {"age": (18.0, 65.0)})
    assert (d.low, d.high, d.known) == (18.0, 65.0, True)


def test_defaults_never_depend_on_the_data():
    """The table is built from names (and public bounds) only: it has no data argument, and
    the same names give the same table."""
    a = PB.enclosing_table(["age", "height"])
    b = PB.enclosing_table(["age", "height"])
    pd.testing.assert_frame_equal(a, b)
    assert list(a.columns) == ["column", "lower", "upper", "from"]
    assert PB.unconfirmed_columns(a) == ["height"]
    a.loc[1, ["lower", "upper"]] = [100.0, 250.0]  # the user types an interval
    assert PB.unconfirmed_columns(a) == []


def test_typed_intervals_are_kept_and_start_the_next_table():
    """What the user typed (and only that) is kept; a table built again starts from it, says
    so, and keeps the defaults of the other columns; typing a default back forgets it."""
    table = PB.enclosing_table(["age", "height"])
    age_default = tuple(table.loc[0, ["lower", "upper"]])
    table.loc[1, ["lower", "upper"]] = [100.0, 250.0]
    kept = PB.typed_intervals(table)
    assert kept == {"height": (100.0, 250.0)}
    again = PB.enclosing_table(["age", "height", "weight"], kept=kept)
    assert tuple(again.loc[1, ["lower", "upper"]]) == (100.0, 250.0)
    assert again.loc[1, "from"] == "your entry"
    assert tuple(again.loc[0, ["lower", "upper"]]) == age_default
    assert again.loc[0, "from"] != "your entry" and again.loc[2, "from"] != "your entry"
    # Columns not in this table stay kept; a typed default is forgotten.
    only_age = PB.enclosing_table(["age"], kept=kept)
    assert PB.typed_intervals(only_age, kept=kept) == kept
    again.loc[1, ["lower", "upper"]] = list(PB.WIDE_INTERVAL)
    assert PB.typed_intervals(again, kept=kept) == {}


def test_interval_problems_name_the_column():
    table = pd.DataFrame({"column": ["a", "b", "c", "d"], "lower": [0.0, 2.0, np.nan, None],
                          "upper": [1.0, 2.0, 1.0, 3.0]})
    problems = PB.interval_problems(table)
    assert [p.split("'")[1] for p in problems] == ["b", "c", "d"]


# --------------------------------------------------------------------------- budget texts
def test_default_budget_and_levels():
    assert PB.default_budget(2.0) == pytest.approx(0.2)
    assert PB.default_budget(0.5) == pytest.approx(0.05)
    assert PB.default_budget(1 / 3) == pytest.approx(0.0333)
    assert PB.levels_of(2.0) == pytest.approx((0.02, 0.98))
    with pytest.raises(ValueError, match="50"):
        PB.levels_of(60)


def test_budget_text_states_the_split_and_flags_thin_budgets():
    levels = (0.02, 0.98)
    text, thin = PB.budget_text(0.2, 2, 200, levels)
    assert "ε = 0.05 each" in text and "2 column(s) × 2 ends" in text
    # best-case miss (2/ε) ln n = 40 ln 200 ≈ 212 rows against 4 rows beyond each end
    assert f"about {40 * math.log(200):,.0f}" in text and "against 4 of the n = 200" in text
    assert thin
    text, thin = PB.budget_text(0.2, 2, 50_000, levels)  # 40 ln 50000 ≈ 433 < 1000
    assert not thin


def test_composition_text():
    text = PB.composition_text(0.2, 2.0)
    assert "ε_b + ε = 0.2 + 2 = 2.2" in text and "sequential composition" in text


# --------------------------------------------------------------------------- the estimate
def test_round_outward():
    """To 3 significant digits of the width: a width 0.875 rounds on a 0.001 grid, a width
    1.51 on a 0.01 grid."""
    assert PB.round_outward(6.71234, 7.58765, (0, 20)) == (6.712, 7.588)
    assert PB.round_outward(-0.012345, 1.49765, (-1, 2)) == (-0.02, 1.5)
    assert PB.round_outward(0.0004, 19.99999, (0, 20)) == (0.0, 20.0)  # kept in the interval
    lo, hi = PB.round_outward(123456.7, 987654.3, (-1e6, 1e6))
    assert lo <= 123456.7 and hi >= 987654.3 and (lo, hi) == (123000.0, 988000.0)


def test_estimate_bounds_records_one_release():
    rng = np.random.default_rng(0)
    cols = {"x": rng.uniform(6.7, 7.6, 5000), "y": rng.normal(0.0, 1.0, 5000)}
    est = PB.estimate_bounds(cols, {"x": (0.0, 20.0), "y": (-100.0, 100.0)}, 4.0,
                             (0.02, 0.98), rng=3)
    rel = est.release
    assert rel.epsilon == pytest.approx(4.0) and rel.delta == 0.0 and rel.private
    assert rel.details["columns"] == 2 and rel.details["epsilon_per_quantile"] == 1.0
    raw = rel.values["range"][0]
    for j, (nm, (a, b)) in enumerate({"x": (0.0, 20.0), "y": (-100.0, 100.0)}.items()):
        lo, hi = est.ranges[nm]
        assert a <= lo <= raw[j, 0] and raw[j, 1] <= hi <= b  # rounded outward, inside
    assert est.epsilon == 4.0 and est.levels == (0.02, 0.98)
    with pytest.raises(ValueError, match="at least one column"):
        PB.estimate_bounds({}, {}, 1.0, (0.02, 0.98))


def test_ledger_and_release_statements():
    est = PB.BoundsEstimate(release=None, ranges={"age": (20.0, 80.0), "h": (150.0, 190.0)},
                            epsilon=0.2, levels=(0.02, 0.98))
    assert PB.ledger_page("Linear regression") == "Linear regression: bounds estimate"
    note = PB.ledger_note(est, 3)
    assert note == ("bounds estimate of 'age', 'h' (2%–98% quantiles), ε_b = 0.2, "
                    "3 row(s) per person")
    stated = PB.estimated_note(0.2, (0.02, 0.98))
    assert stated.startswith("estimated under DP with ε_b = 0.2")
    assert PB.matches_estimate((20.0, 80.0), (20.0, 80.0))
    assert not PB.matches_estimate((20.0, 81.0), (20.0, 80.0))  # retyped
    assert not PB.matches_estimate((20.0, 80.0), None)
    original = Release(values={}, mechanism="kng_joint", epsilon=1.0, delta=0.0, mu=None,
                       sensitivity={}, sigma={}, diagnostics={}, mode="strict", seeded=False,
                       assumptions={
        "covariate_range": {"value": (20.0, 80.0), "source": "public"},
        "tau": {"value": 3.0, "source": "public", "note": "residuals clipped to this norm"}})
    rel = PB.annotate_release(original, {"covariate_range": stated, "tau": "typed",
                                         "missing": "x"})
    assert "note" not in original.assumptions["covariate_range"]  # a copy: records never change
    assert rel.assumptions["covariate_range"] == {"value": (20.0, 80.0), "source": "public",
                                                  "note": stated}
    assert rel.assumptions["tau"]["note"] == "residuals clipped to this norm; typed"
    assert "missing" not in rel.assumptions
