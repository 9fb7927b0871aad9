"""The ledger's download format and its loading back (ui.session)."""

import json
import math

import pytest

from ui import session


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


def test_ledger_round_trip_keeps_entries_and_totals():
    text = session.ledger_json(_entries())
    back = session.parse_ledger(text.encode())
    assert back == _entries()
    assert session.ledger_totals(back) == session.ledger_totals(_entries())


@pytest.mark.parametrize("payload,message", [
    (b"\xff\xfe", "not JSON"),
    (b'{"entries": []}', "not a ledger"),
    (json.dumps({"dpcore_ledger": 1, "entries": [{"epsilon": -1, "guarantee": "private"}]})
     .encode(), "entry 1: `epsilon`"),
    (json.dumps({"dpcore_ledger": 1, "entries": [{"epsilon": 1, "guarantee": "great"}]})
     .encode(), "unknown guarantee"),
])
def test_bad_ledger_files_are_refused_with_a_message(payload, message):
    with pytest.raises(ValueError, match=message):
        session.parse_ledger(payload)


def test_group_privacy_scales_each_release():
    """k rows per person: pure ε-DP becomes kε, µ-GDP kµ, (ε, δ) becomes
    (kε, k e^{(k-1)ε} δ); the ledger's totals per person compose the scaled releases."""
    assert session.group(1.0, 0.0, None, 8) == (8.0, 0.0, None)
    assert session.group(None, None, 0.5, 4) == (None, None, 2.0)
    eps, delta, _ = session.group(0.5, 1e-6, None, 3)
    assert eps == pytest.approx(1.5) and delta == pytest.approx(3 * math.exp(1.0) * 1e-6)
    assert session.group(2.0, None, None, 5)[1] is None  # not certified stays not certified
    pure = [dict(_entries()[0], epsilon=0.7, rows=8), dict(_entries()[0], rows=8)]
    assert session.ledger_totals(pure)["epsilon"] == pytest.approx(8 * 1.7)
    mixed = session.ledger_totals([dict(e, rows=4) for e in _entries()])
    assert mixed["mu"] == pytest.approx(2.0)
    assert mixed["epsilon"] > session.ledger_totals(_entries())["epsilon"]


@pytest.mark.parametrize("payload,message", [
    (b"{", "not JSON"),
    (b'{"page": "geodesic_regression"}', "not a settings file"),
    (json.dumps({"dpcore_settings": 1, "page": "geodesic_regression",
                 "settings": {"fm_eps": "1"}}).encode(), "not a setting of this page"),
    (json.dumps({"dpcore_settings": 1, "page": "geodesic_regression",
                 "settings": {"gr_n": "9" * 300}}).encode(), "short text"),
])
def test_bad_settings_files_are_refused(payload, message):
    with pytest.raises(ValueError, match=message):
        session.parse_settings(payload, "gr", "geodesic_regression")


# --------------------------------------------------------------------------- rows per entry
def test_each_entry_counts_at_its_own_rows():
    """Group privacy per entry: a release made at 8 rows per person then one at 1 row total
    8 ε1 + ε2 (pure DP adds), whatever the rows per person now; (ε, δ) and µ entries are
    scaled each at their own rows before the accountant composes them."""
    from dpcore.privacy import PrivacyAccountant, PrivacyEvent

    first = dict(_entries()[0], epsilon=0.3, rows=8)
    second = dict(_entries()[0], epsilon=0.7, rows=1)
    assert session.ledger_totals([first, second])["epsilon"] == pytest.approx(8 * 0.3 + 0.7)
    assert session.ledger_totals([first, second])["delta"] == 0.0
    # an (ε, δ) entry at 3 rows and a µ entry at 2 rows, against the accountant fed by hand
    approx = dict(_entries()[0], epsilon=0.5, delta=1e-8, rows=3)
    gdp = dict(_entries()[1], rows=2)
    by_hand = PrivacyAccountant()
    by_hand.events = [
        PrivacyEvent(epsilon=1.5, delta=3 * math.exp(1.0) * 1e-8, mu=None, guarantee="private",
                     label="private"),
        PrivacyEvent(epsilon=None, delta=None, mu=1.0, guarantee="approximately private",
                     label="gdp")]
    totals = session.ledger_totals([approx, gdp])
    assert totals["epsilon"] == pytest.approx(by_hand.epsilon_at(), rel=1e-12)
    assert totals["mu"] == pytest.approx(1.0)
    # entries kept in a session before entries recorded their rows count at 1 row
    legacy = {k: v for k, v in first.items() if k != "rows"}
    assert session.ledger_totals([legacy])["epsilon"] == pytest.approx(0.3)


def test_round_trip_keeps_each_entry_rows():
    entries = [dict(_entries()[0], rows=8), dict(_entries()[1], rows=1)]
    text = session.ledger_json(entries)
    assert [e["rows"] for e in json.loads(text)["entries"]] == [8, 1]
    back, notes = session.read_ledger(text.encode())
    assert back == entries and notes == []
    assert session.ledger_totals(back) == session.ledger_totals(entries)


def test_old_ledger_files_load_at_one_row_and_say_so():
    """A file saved before entries recorded their rows (with the session's rows at the top
    level) loads with rows = 1 per entry, and a note says so."""
    old = [{k: v for k, v in e.items() if k != "rows"} for e in _entries()]
    data = json.dumps({"dpcore_ledger": 1, "cap": None, "rows_per_person": 8,
                       "entries": old}).encode()
    back, notes = session.read_ledger(data)
    assert [e["rows"] for e in back] == [1, 1]
    assert len(notes) == 1 and "2 entries (1, 2) count at 1 row per person" in notes[0]
    assert "sidebar at 8 rows per person" in notes[0]
    assert session.ledger_totals(back)["epsilon"] == session.ledger_totals(_entries())[
        "epsilon"]
    # one entry without rows among others: named
    mixed = json.dumps({"dpcore_ledger": 1, "entries": [dict(_entries()[0], rows=4), old[1]]})
    back, notes = session.read_ledger(mixed)
    assert [e["rows"] for e in back] == [4, 1] and "entry 2 count" in notes[0]
    assert "sidebar" not in notes[0]


@pytest.mark.parametrize("rows", [0, -3, 2.5, "8", True, None, 10_001])
def test_bad_rows_are_refused_naming_entry_and_field(rows):
    entries = [dict(_entries()[0]), dict(_entries()[0], rows=rows)]
    data = json.dumps({"dpcore_ledger": 1, "entries": entries}).encode()
    with pytest.raises(ValueError, match=r"Ledger entry 2: `rows` \(rows one person "
                                         r"contributes\) must be a whole number from 1"):
        session.parse_ledger(data)


def test_whole_float_rows_are_read_as_integers():
    data = json.dumps({"dpcore_ledger": 1, "entries": [dict(_entries()[0], rows=8.0)]})
    assert session.parse_ledger(data)[0]["rows"] == 8
