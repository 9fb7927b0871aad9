"""The privacy ledger's logic (dpcore.privacy.ledger), without any user interface: entries built
from privacy events, group privacy per entry, totals (no δ with an approximately private
entry, DESIGN §12), and the JSON file and its reader."""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import numpy as np
import pytest

from dpcore.data import make_mean_data, make_regression_data
from dpcore.manifolds import Sphere
from dpcore.privacy import PrivacyAccountant, PrivacyEvent
from dpcore.privacy import ledger as L
from dpcore.privacy.accountant import GUARANTEES, UNCERTIFIED_DELTA
from dpcore.release import private_frechet_mean, private_geodesic_regression

NORTH = np.array([0.0, 0.0, 1.0])


def _entries():
    return [
        {"page": "Fréchet mean", "mechanism": "laplace", "epsilon": 1.0, "delta": 0.0,
         "mu": None, "rows": 1, "label": "private", "guarantee": "private", "note": "",
         "time": "10:00:00"},
        {"page": "Gaussian DP", "mechanism": "gaussian", "epsilon": None, "delta": None,
         "mu": 0.5, "rows": 1,
         "label": "approximately private (µ calibrated by Monte Carlo; not proven)",
         "guarantee": "approximately private", "note": "", "time": "10:01:00"},
    ]


def _exact(epsilon=1.0, rows=1):
    return dict(_entries()[0], epsilon=epsilon, rows=rows)


def _mcmc(epsilon=2.0, rows=1):
    return {"page": "Geodesic regression", "mechanism": "kng_joint", "epsilon": epsilon,
            "delta": None, "mu": None, "rows": rows,
            "label": "approximately private (MCMC; δ not certified)",
            "guarantee": "approximately private", "note": "", "time": "10:02:00"}


# --------------------------------------------------------------------------- group privacy
def test_group_privacy_scales_each_release():
    """k rows per person: pure ε-DP becomes kε, µ-GDP kµ, (ε, δ) becomes (kε, k e^{(k-1)ε} δ);
    a δ not certified stays not certified."""
    assert L.group(1.0, 0.0, None, 8) == (8.0, 0.0, None)
    assert L.group(None, None, 0.5, 4) == (None, None, 2.0)
    eps, delta, _ = L.group(0.5, 1e-6, None, 3)
    assert eps == pytest.approx(1.5) and delta == pytest.approx(3 * math.exp(1.0) * 1e-6)
    assert L.group(2.0, None, None, 5)[1] is None
    assert L.group(0.3, 1e-9, 0.2, 1) == (0.3, 1e-9, 0.2)


def test_each_entry_counts_at_its_own_rows():
    """A release made at 8 rows per person then one at 1 row total 8 ε1 + ε2; (ε, δ) and µ
    entries are scaled each at their own rows before the accountant composes them."""
    assert L.ledger_totals([_exact(0.3, 8), _exact(0.7, 1)])["epsilon"] == pytest.approx(3.1)
    approx = dict(_entries()[0], epsilon=0.5, delta=1e-8, rows=3)
    gdp = dict(_entries()[1], rows=2)
    by_hand = PrivacyAccountant()
    by_hand.events = [
        PrivacyEvent(epsilon=1.5, delta=3 * math.exp(1.0) * 1e-8, mu=None, guarantee="private",
                     label="private"),
        PrivacyEvent(epsilon=None, delta=None, mu=1.0, guarantee="approximately private",
                     label="gdp")]
    totals = L.ledger_totals([approx, gdp])
    assert totals["epsilon"] == pytest.approx(by_hand.epsilon_at(), rel=1e-12)
    assert totals["mu"] == pytest.approx(1.0)
    legacy = {k: v for k, v in _exact(0.3, 8).items() if k != "rows"}  # counts at 1 row
    assert L.entry_rows(legacy) == 1
    assert L.ledger_totals([legacy])["epsilon"] == pytest.approx(0.3)


def test_entry_event_is_the_grouped_privacy_event():
    event = L.entry_event(_mcmc(0.5, rows=4))
    assert event == PrivacyEvent(epsilon=2.0, delta=None, mu=None,
                                 guarantee="approximately private",
                                 label="approximately private (MCMC; δ not certified)")


def test_the_accountant_of_a_ledger_keeps_every_entry_and_checks_later_releases():
    acc = L.ledger_accountant([_exact(1.5)], epsilon_cap=1.0)  # a cap set later removes nothing
    assert len(acc.events) == 1 and acc.epsilon_at() == pytest.approx(1.5)
    from dpcore.exceptions import PrivacyBudgetError

    with pytest.raises(PrivacyBudgetError, match="above the cap"):
        acc.check(L.grouped_event(epsilon=0.1, guarantee="private"))


# --------------------------------------------------------------------------- δ of a total
def test_a_total_with_an_exact_release_only_states_delta_zero():
    totals = L.ledger_totals([_exact(1.0), _exact(2.0)])
    assert totals["delta"] == 0.0 and totals["delta_certified"] is True
    assert L.delta_text(totals) == "δ = 0"


def test_a_total_with_an_mcmc_release_states_no_delta():
    """DESIGN §12: a total is only as strong as its weakest entry; with an approximately
    private (MCMC) entry it has no δ, and its text never says δ = 0."""
    totals = L.ledger_totals([_exact(1.0), _mcmc(2.0)])
    assert totals["epsilon"] == pytest.approx(3.0)
    assert totals["delta"] is None and totals["delta_certified"] is False
    assert totals["delta_note"] == "includes an approximately private release"
    assert totals["approximate"] == 1
    text = L.delta_text(totals)
    assert text == UNCERTIFIED_DELTA
    assert text == "δ not certified (includes an approximately private release)"
    assert "δ = 0" not in text
    # the same at several rows per person, and with the MCMC release alone
    assert L.ledger_totals([_mcmc(1.0, rows=3)])["delta"] is None


def test_non_private_entries_do_not_weaken_the_total():
    """Listed apart and never added, a non-private entry leaves the total's δ as it was."""
    paper = dict(_exact(5.0), guarantee="not private", label="NOT PRIVATE (paper mode)")
    totals = L.ledger_totals([_exact(1.0), paper])
    assert totals["delta"] == 0.0 and totals["not_private"] == 1
    assert totals["epsilon"] == pytest.approx(1.0)


# --------------------------------------------------------------------------- entries
@pytest.fixture(scope="module")
def exact_release():
    pts = make_mean_data(Sphere(2), 12, radius=0.4, rng=2)
    return private_frechet_mean(Sphere(2), pts, epsilon=1.0, mechanism="laplace", radius=0.4,
                                center=NORTH, rng=0)


@pytest.fixture(scope="module")
def mcmc_release():
    x, y = make_regression_data(Sphere(2), 15, noise=0.01, rng=0)
    return private_geodesic_regression(Sphere(2), x, y, eps_p=0.5, eps_v=0.5, tau=0.3,
                                       covariate_range=(0.0, 1.0), sampler="mcmc",
                                       chain_length=40, burn_in=40, rng=1)


def test_entries_are_built_from_the_release_privacy_event(exact_release, mcmc_release):
    entry = L.release_entry("Fréchet mean", exact_release, rows=3, note="n", time="12:00:00")
    event = PrivacyEvent.of(exact_release)
    assert entry == {"page": "Fréchet mean", "mechanism": exact_release.mechanism,
                     "epsilon": event.epsilon, "delta": event.delta, "mu": event.mu,
                     "rows": 3, "label": event.label, "guarantee": "private", "note": "n",
                     "time": "12:00:00"}
    assert tuple(entry) == L.ENTRY_FIELDS
    mcmc = L.release_entry("Geodesic regression", mcmc_release)
    assert mcmc["guarantee"] == "approximately private" and mcmc["delta"] is None
    assert mcmc["rows"] == 1 and len(mcmc["time"]) == 8
    totals = L.ledger_totals([entry, mcmc])
    assert totals["delta"] is None and not totals["delta_certified"]
    assert totals["epsilon"] == pytest.approx(3 * exact_release.epsilon + mcmc_release.epsilon)


def test_an_explicit_event_makes_an_entry_for_another_library_release():
    event = PrivacyEvent(epsilon=2.0, delta=0.0, mu=None, guarantee="private",
                         label="private (diffprivlib)")
    entry = L.ledger_entry("Linear regression", event, mechanism="diffprivlib LinearRegression",
                           rows=0, note="baseline")
    assert entry["rows"] == 1 and entry["label"] == "private (diffprivlib)"
    assert L.ledger_totals([entry])["epsilon"] == pytest.approx(2.0)
    with pytest.raises(TypeError, match="`event` must be a PrivacyEvent, got SimpleNamespace"):
        L.ledger_entry("p", SimpleNamespace(epsilon=1.0), mechanism="m")


def test_a_guarantee_is_never_read_from_a_label():
    """An object without a guarantee is refused, whatever its label says."""
    labelled = SimpleNamespace(epsilon=1.0, delta=0.0, mu=None, label="NOT PRIVATE (paper)")
    with pytest.raises(ValueError, match=r"`release.guarantee` must be one of .*got None\."):
        PrivacyEvent.of(labelled)
    with pytest.raises(ValueError, match=r"`guarantee` must be one of .*got 'great'\."):
        L.grouped_event(epsilon=1.0, guarantee="great")


def test_the_guarantees_are_the_release_record_s():
    from dpcore.release.record import GUARANTEES as RECORD

    assert GUARANTEES == RECORD


# --------------------------------------------------------------------------- the file
def test_round_trip_keeps_entries_rows_cap_and_totals():
    entries = [dict(_entries()[0], rows=8), dict(_entries()[1], rows=1), _mcmc()]
    text = L.ledger_json(entries, cap=4.5)
    saved = json.loads(text)
    assert saved["dpcore_ledger"] == L.FORMAT_VERSION and saved["cap"] == 4.5
    assert [e["rows"] for e in saved["entries"]] == [8, 1, 1]
    back, notes = L.read_ledger(text.encode())
    assert back == entries and notes == []
    assert L.parse_ledger(text) == entries
    assert L.ledger_totals(back) == L.ledger_totals(entries)


def test_only_the_documented_fields_are_read():
    data = json.dumps({"dpcore_ledger": 1, "entries": [dict(_exact(), secret=[1, 2])]})
    assert set(L.parse_ledger(data)[0]) == set(L.ENTRY_FIELDS)


@pytest.mark.parametrize("payload,message", [
    (b"\xff\xfe", "not a ledger \\(not JSON"),
    (b'{"entries": []}', "not a ledger"),
    (b'{"dpcore_ledger": 2, "entries": []}', "not a ledger"),
    (json.dumps({"dpcore_ledger": 1, "entries": [3]}).encode(), "entry 1 is not an object"),
    (json.dumps({"dpcore_ledger": 1, "entries": [{"epsilon": -1, "guarantee": "private"}]})
     .encode(), "entry 1: `epsilon` must be a number >= 0"),
    (json.dumps({"dpcore_ledger": 1, "entries": [{"mu": True, "guarantee": "private"}]})
     .encode(), "entry 1: `mu` must be a number >= 0"),
    (json.dumps({"dpcore_ledger": 1, "entries": [{"epsilon": 1, "guarantee": "great"}]})
     .encode(), "unknown guarantee 'great'"),
])
def test_bad_ledger_files_are_refused_with_a_message(payload, message):
    with pytest.raises(ValueError, match=message):
        L.read_ledger(payload)


def test_old_ledger_files_load_at_one_row_and_say_so():
    old = [{k: v for k, v in e.items() if k != "rows"} for e in _entries()]
    data = json.dumps({"dpcore_ledger": 1, "cap": None, "rows_per_person": 8,
                       "entries": old}).encode()
    back, notes = L.read_ledger(data)
    assert [e["rows"] for e in back] == [1, 1]
    assert len(notes) == 1 and "2 entries (1, 2) count at 1 row per person" in notes[0]
    assert "at 8 rows per person" in notes[0]
    mixed = json.dumps({"dpcore_ledger": 1, "entries": [dict(_entries()[0], rows=4), old[1]]})
    back, notes = L.read_ledger(mixed)
    assert [e["rows"] for e in back] == [4, 1] and "entry 2 counts at 1 row" in notes[0]


@pytest.mark.parametrize("rows", [0, -3, 2.5, "8", True, None])
def test_bad_rows_are_refused_naming_entry_and_field(rows):
    data = json.dumps({"dpcore_ledger": 1, "entries": [_exact(), dict(_exact(), rows=rows)]})
    with pytest.raises(ValueError, match=r"Ledger entry 2: `rows` \(rows one person "
                                         r"contributes\) must be a whole number from 1 up"):
        L.read_ledger(data)


def test_rows_above_the_caller_s_cap_are_refused():
    data = json.dumps({"dpcore_ledger": 1, "entries": [_exact(rows=12)]})
    assert L.parse_ledger(data)[0]["rows"] == 12  # no cap by default
    with pytest.raises(ValueError, match=r"whole number from 1 to 10, not 12\."):
        L.parse_ledger(data, max_rows=10)
    assert L.parse_ledger(json.dumps({"dpcore_ledger": 1, "entries": [_exact(rows=8.0)]}),
                          max_rows=10)[0]["rows"] == 8
