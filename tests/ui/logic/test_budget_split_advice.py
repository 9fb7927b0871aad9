"""The Budget split page's advice (ui.logic.budget_advice): the recommendation sentence in the
data's units, and the settings that carry a split to Geodesic regression."""

import numpy as np
import pandas as pd
import pytest

from dpcore.experiments.budget_summary import cell_summary
from ui.logic import budget_advice as A
from ui.logic.regression_data import EPS_GRID


def summary(flags=None, scale=180 / np.pi):
    """An unequal view at total 3 and n = 100: the 24% split best, 91% flagged."""
    flags = flags or {2.727: "vector stage: the asymptotic law is 0.61 from the exact target"}
    shares = {0.273: 0.0110, 0.721: 0.0064, 1.5: 0.0066, 2.279: 0.0080, 2.727: 0.0050}
    rows = []
    for ep, mse in shares.items():
        for rep in range(3):
            rows.append({"view": "unequal", "n": 100, "eps_p": ep, "eps_v": 3.0 - ep,
                         "epsilon": 3.0, "replicate": rep, "mse": mse * (1 + 0.01 * rep),
                         "log_mse": 0.0, "nonprivate_mse": 0.0062, "scheme": "sequential",
                         "source": "law", "flag": flags.get(ep, "")})
    for rep in range(3):
        rows.append({"view": "unequal", "n": 100, "eps_p": 1.5, "eps_v": 1.5, "epsilon": 3.0,
                     "replicate": rep, "mse": 0.0070, "log_mse": 0.0, "nonprivate_mse": 0.0062,
                     "scheme": "joint", "source": "law", "flag": ""})
    return cell_summary(pd.DataFrame(rows), scale)


def test_the_sentence_names_the_good_splits_the_tolerance_and_what_to_avoid():
    rec, text = A.recommendation(summary(), 100, unit="degrees", tolerance=0.10)
    best = rec["best"]
    assert best["eps_p"] == 0.721  # the flagged 2.727 has a lower error but is passed over
    assert "within 10% of the best" in text and "n = 100" in text and "ε = 3" in text
    assert f"{best['rms']:.3g} degrees" in text and "footpoint shares **24% to 50%**" in text
    assert "**Avoid** 9% to the footpoint" in text  # 0.273: 1.25x the best or more
    assert "The split with 91% to the footpoint is flagged and not considered" in text
    assert "predicted from the asymptotic law" in text
    assert "joint** scheme" in text and "the split does not apply" in text
    # the tolerance is the user's
    _, strict = A.recommendation(summary(), 100, unit="degrees", tolerance=0.0)
    assert "within 0% of the best" in strict and "shares **24%**" in strict


def test_no_recommendation_when_every_split_is_flagged():
    every = {ep: "not trusted" for ep in (0.273, 0.721, 1.5, 2.279, 2.727)}
    rec, text = A.recommendation(summary(every), 100, unit="degrees")
    assert rec is None and "No recommendation" in text and "none is called best" in text


@pytest.mark.parametrize("eps_p, eps_v, total, share", [
    (0.721, 2.279, 3.0, 25), (1.5, 1.5, 3.0, 50), (0.273, 2.727, 3.0, 10),
    (0.1, 9.9, 10.0, 5), (4.9, 0.2, 5.0, 95)])
def test_a_split_is_carried_as_the_pages_total_and_share(eps_p, eps_v, total, share):
    values, note = A.carry_settings("sphere", None, 100, eps_p, eps_v)
    assert values["gr_total"] == total and values["gr_total"] in EPS_GRID
    assert values["gr_share"] == share and share % 5 == 0 and 5 <= share <= 95
    assert values["gr_budget_input"] == "total" and values["gr_manifold"] == "sphere"
    assert values["gr_prev_kind"] == "sphere" and "gr_n" not in values  # the page's own n
    assert "gr_param_sphere" not in values
    assert f"{share}% to the footpoint" in note and f"ε_p = {eps_p:.3g}" in note
    assert "chosen for n = 100" in note


def test_the_manifold_parameter_is_carried():
    values, _ = A.carry_settings("kendall", 4, 100, 1.0, 2.0)
    assert values["gr_param_kendall"] == 4 and values["gr_manifold"] == "kendall"
