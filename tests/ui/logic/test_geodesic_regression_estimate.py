"""Page logic of "Estimate privately" on the Geodesic regression page
(ui.logic.geodesic_regression with ui.logic.private_bounds): where it is offered, the key an
estimate is kept under, the statement a release carries, the release's cost the default ε_b
is taken from, and the issue's example (log population in [6.7, 7.6]) end to end."""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.data import make_regression_data
from dpcore.manifolds import Sphere
from ui.caps import CAPS
from ui.logic import geodesic_regression as G
from ui.logic import private_bounds as PB
from ui.logic.regression_data import Dataset


def settings(covariate_range=(0.0, 1.0), **kw):
    return G.ReleaseSettings(kind="sphere", param=None, eps_p=1.0, eps_v=2.0, tau=0.2,
                             covariate_range=covariate_range, **kw)


@pytest.mark.parametrize("source, mode, offered", [
    ("upload", "strict", True), ("upload", "paper", False), ("synthetic", "strict", False),
    ("example", "strict", False), ("rats", "strict", False)])
def test_offered_for_uploads_in_strict_mode_only(source, mode, offered):
    assert G.estimate_offered(source, mode) is offered


def test_an_estimate_belongs_to_its_file_manifold_and_covariate():
    base = G.estimate_scope("a" * 64, "sphere", None, "log_pop")
    assert base == G.estimate_scope("a" * 64, "sphere", None, "log_pop")
    assert len(base) == 12 and int(base, 16) >= 0
    others = {G.estimate_scope("b" * 64, "sphere", None, "log_pop"),
              G.estimate_scope("a" * 64, "kendall", 4, "log_pop"),
              G.estimate_scope("a" * 64, "kendall", 5, "log_pop"),
              G.estimate_scope("a" * 64, "sphere", None, "age")}
    assert len(others) == 4 and base not in others


def test_the_note_holds_while_the_fields_hold_the_estimate():
    estimate = {"range": (6.61, 7.63), "epsilon": 0.5, "levels": (0.02, 0.98), "token": 1}
    (note,) = G.covariate_estimate_note((6.61, 7.63), estimate).values()
    assert note == PB.estimated_note(0.5, (0.02, 0.98))
    assert note.startswith("estimated under DP with ε_b = 0.5 (2%–98% quantiles")
    assert G.covariate_estimate_note((6.6, 7.63), estimate) == {}  # retyped
    assert G.covariate_estimate_note((6.61, 7.63), None) == {}
    assert G.covariate_estimate_note(None, estimate) == {}  # paper mode


def test_assumptions_before_the_release_state_the_estimate():
    s = settings((6.61, 7.63))
    note = PB.estimated_note(0.5, (0.02, 0.98))
    rows = G.assumption_rows(s, plan=G.sampler_plan(s, 20),
                             estimated={"covariate_range": note})
    (line,) = [r for r in rows if "covariate range" in r]
    assert line.startswith("- covariate range [6.61, 7.63] (public; covariates clipped to it; "
                           "estimated under DP with ε_b = 0.5")
    (plain,) = [r for r in G.assumption_rows(s) if "covariate range" in r]
    assert plain == "- covariate range [6.61, 7.63] (public; covariates clipped to it)"


def test_release_epsilon_is_what_the_ledger_records():
    assert G.release_epsilon("joint", 1.0, 2.0, 3, 3) == pytest.approx(27.0)
    assert G.release_epsilon("sequential", 1.0, 2.0, 3, 3) == pytest.approx(3 + 18.0)
    big = CAPS["gr_footpoints"] + 5
    assert G.release_epsilon("joint", 1.0, 2.0, big, 1) == pytest.approx(
        CAPS["gr_footpoints"] * 3.0)
    for scheme in ("joint", "sequential"):
        s = settings(scheme=scheme, n_footpoints=2, n_vectors=4)
        assert G.planned_epsilon(s) == G.release_epsilon(scheme, 1.0, 2.0, 2, 4)


def log_population(n, seed):
    """The issue's example: x = log population in [6.7, 7.6] and S² responses."""
    d = make_regression_data(Sphere(2), n, noise=0.003, rng=seed)
    return Dataset(6.7 + 0.9 * d.x, d.y, "upload", "log population")


def test_log_population_estimate_clips_few_rows_where_zero_one_clips_all():
    r"""n = 2000, ε_b = 3 on the public enclosing interval [0, 25], levels 2% / 98%: the
    range [0, 1] clips every row, the estimate at most 80 at each end.

    Each end is drawn with ε = 1.5 from gap i (the rows below it: between the order statistics
    z_(i) and z_(i+1), the outer gaps reaching 0 and 25) with probability
    ∝ len_i exp(−0.75 |i − 40|). The gaps with |i − 40| ≥ 40 (80 or more rows beyond the end,
    or the end outside the data) weigh at most 25 e^{−30} together (their lengths add up to at
    most 25); the 11 gaps with |i − 40| ≤ 5 at least (z_(46) − z_(35)) e^{−3.75}. So each end
    fails with probability at most 25 e^{−26.25} / (z_(46) − z_(35)), checked below to be under
    1e-7 for these data, whatever the release's seed.
    """
    ds = log_population(2000, seed=11)
    z = np.sort(ds.x)
    for order in (z, -z[::-1]):  # the low end, and the high end mirrored
        assert 25 * np.exp(-26.25) / (order[45] - order[34]) < 1e-7  # z_(46) − z_(35)
    rows = G.clipping_preview(settings(), ds)
    assert rows[0]["count"] == 2000 and rows[0]["warn"]

    est = PB.estimate_bounds({"log_pop": ds.x}, {"log_pop": (0.0, 25.0)}, 3.0, (0.02, 0.98),
                             rng=np.random.default_rng(5))
    lo, hi = est.ranges["log_pop"]
    assert z[0] - 0.01 <= lo < hi <= z[-1] + 0.01  # inside the data (rounded outward)
    assert np.sum(ds.x < lo) <= 80 and np.sum(ds.x > hi) <= 80
    estimated = G.covariate_estimate_note((lo, hi), {"range": (lo, hi), "epsilon": est.epsilon,
                                                     "levels": est.levels})
    rows = G.clipping_preview(settings((lo, hi)), ds)
    assert rows[0]["count"] <= 160 and not rows[0]["warn"]
    assert "ε_b = 3" in estimated["covariate_range"]


def test_release_with_an_estimated_range_states_it():
    """The page's path: estimate, fill the range, release, annotate (the release's record and
    the assumptions box after it carry the statement; the range stays a public input)."""
    ds = log_population(20, seed=2)
    est = PB.estimate_bounds({"log_pop": ds.x}, {"log_pop": (0.0, 25.0)}, 2.0, (0.02, 0.98),
                             rng=np.random.default_rng(1))
    kept = {"range": est.ranges["log_pop"], "epsilon": est.epsilon, "levels": est.levels}
    s = settings(kept["range"], n_footpoints=1, n_vectors=1, seed=3)
    release, _ = G.run_release(s, ds)
    release = PB.annotate_release(release, G.covariate_estimate_note(s.covariate_range, kept))
    cov = release.assumptions["covariate_range"]
    assert cov["source"] == "public" and tuple(cov["value"]) == kept["range"]
    assert cov["note"].endswith(PB.estimated_note(2.0, (0.02, 0.98)))
    (line,) = [r for r in G.assumption_rows(s, release) if r.startswith("- `covariate_range`")]
    assert "source: public" in line and "estimated under DP with ε_b = 2" in line
    assert release.to_dict()["assumptions"]["covariate_range"]["note"] == cov["note"]
