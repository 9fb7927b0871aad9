"""Budget-split summaries a stakeholder decides with (dpcore.experiments.budget_summary):
errors in the data's units over replicates with their range, sources and flags, and which
splits are good; a flagged cell is never called best."""

import numpy as np
import pandas as pd
import pytest

from dpcore.experiments.budget_summary import cell_summary, recommend_split


def rows(cells, replicates=3):
    """Sweep rows: ``cells`` maps (scheme, eps_p, eps_v) -> (mse per replicate, flag)."""
    out = []
    for (scheme, ep, ev), (mses, flag) in cells.items():
        for rep, mse in enumerate(mses[:replicates]):
            out.append({"n": 50, "eps_p": ep, "eps_v": ev, "epsilon": ep + ev,
                        "replicate": rep, "mse": mse, "log_mse": np.log(mse),
                        "nonprivate_mse": 0.004, "scheme": scheme, "source": "law",
                        "flag": flag})
    return pd.DataFrame(out)


CELLS = {
    ("sequential", 0.3, 2.7): ([0.010, 0.012, 0.011], ""),
    ("sequential", 0.75, 2.25): ([0.0050, 0.0052, 0.0048], ""),
    ("sequential", 1.5, 1.5): ([0.0054, 0.0056, 0.0055], ""),
    ("sequential", 2.25, 0.75): ([0.0080, 0.0090, 0.0085], ""),
    ("sequential", 2.7, 0.3): ([0.0010, 0.0010, 0.0010], "vector stage: law not trusted"),
    ("joint", 1.5, 1.5): ([0.0060, 0.0061, 0.0062], ""),
}


def test_cell_summary_is_in_the_data_units_with_the_replicates_range():
    df = rows(CELLS)
    s = cell_summary(df, scale=180 / np.pi)
    assert len(s) == len(CELLS)
    row = s[(s["scheme"] == "sequential") & (s["eps_p"] == 0.75)].iloc[0]
    deg = np.degrees(np.sqrt([0.0050, 0.0052, 0.0048]))
    assert row["rms"] == pytest.approx(deg.mean())
    assert (row["rms_lo"], row["rms_hi"]) == pytest.approx((deg.min(), deg.max()))
    assert row["nonprivate_rms"] == pytest.approx(np.degrees(np.sqrt(0.004)))
    assert row["share"] == pytest.approx(25.0) and row["replicates"] == 3
    assert row["source"] == "law" and row["flag"] == ""
    assert s.loc[s["eps_p"] == 2.7, "flag"].iloc[0] == "vector stage: law not trusted"


def test_chain_cells_are_flagged_when_they_have_not_mixed():
    df = rows(CELLS).drop(columns=["scheme", "source", "flag"])
    df["rhat"], df["ess"] = 1.01, 500.0
    df.loc[df["eps_p"] == 0.3, "rhat"] = 9.8
    s = cell_summary(df)
    assert set(s["source"]) == {"mcmc"} and set(s["scheme"]) == {"sequential"}
    flagged = s[s["flag"] != ""]
    assert list(flagged["eps_p"]) == [0.3] and "R-hat 9.8" in flagged["flag"].iloc[0]


def test_the_recommendation_never_picks_a_flagged_split():
    s = cell_summary(rows(CELLS))
    rec = recommend_split(s, tolerance=0.10)
    # the flagged 2.7 split has the smallest error but is passed over
    assert rec["best"]["eps_p"] == 0.75
    assert list(rec["flagged"]["eps_p"]) == [2.7]
    assert set(rec["good"]["eps_p"]) == {0.75, 1.5}  # 1.5 is within 10% of the best
    assert set(rec["avoid"]["eps_p"]) == {0.3, 2.25}  # 1.25x the best or more
    assert rec["joint"]["scheme"] == "joint"
    assert 2.7 not in set(rec["good"]["eps_p"]) | set(rec["avoid"]["eps_p"])
    # a tighter tolerance keeps the best only
    assert list(recommend_split(s, tolerance=0.0)["good"]["eps_p"]) == [0.75]


def test_no_recommendation_when_every_split_is_flagged():
    flagged = {k: (v, "not trusted") for k, (v, _) in CELLS.items()}
    assert recommend_split(cell_summary(rows(flagged))) is None
    with pytest.raises(ValueError, match="tolerance"):
        recommend_split(cell_summary(rows(CELLS)), tolerance=0.5, avoid_ratio=1.25)


def test_a_cell_without_prediction_is_flagged():
    df = rows(CELLS)
    df.loc[(df["eps_p"] == 1.5) & (df["replicate"] == 0), "mse"] = np.nan
    s = cell_summary(df)
    row = s[(s["scheme"] == "sequential") & (s["eps_p"] == 1.5)].iloc[0]
    assert row["flag"] and np.isfinite(row["rms"])
