"""The ledger's download format and its loading back (ui.session)."""

import json
import math

import pytest

from ui import session


def _entries():
    return [
        {"page": "Fréchet mean", "mechanism": "laplace", "epsilon": 1.0, "delta": 0.0,
         "mu": None, "label": "private", "guarantee": "private", "note": "", "time": "10:00:00"},
        {"page": "Gaussian DP", "mechanism": "gaussian", "epsilon": None, "delta": None,
         "mu": 0.5, "label": "approximately private (µ calibrated by Monte Carlo; not proven)",
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
    pure = [dict(_entries()[0], epsilon=0.7), _entries()[0]]
    assert session.ledger_totals(pure, 8)["epsilon"] == pytest.approx(8 * 1.7)
    mixed = session.ledger_totals(_entries(), 4)
    assert mixed["mu"] == pytest.approx(2.0)
    assert mixed["epsilon"] > session.ledger_totals(_entries(), 1)["epsilon"]


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
