"""The ledger as the dashboard uses it (ui.session): its download, its loading back with the
sidebar's cap on the rows per person, and the sidebar's total line. The ledger's logic itself
is tested without Streamlit in tests/privacy/test_ledger.py."""

import json

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


def test_the_ledger_logic_is_dpcore_s():
    """ui.session keeps the Streamlit parts only; the ledger's logic is imported from
    dpcore.privacy.ledger under the names pages and tests use."""
    from dpcore.privacy import ledger

    for name in ("ENTRY_FIELDS", "group", "entry_rows", "ledger_totals", "delta_text"):
        assert getattr(session, name) is getattr(ledger, name), name


def test_the_total_line_says_delta_zero_only_when_every_release_is_exact():
    exact = _entries()[0]
    assert session.ledger_total_text([exact, dict(exact, epsilon=2.0)]) == \
        "**Total:** ε = 3, δ = 0"
    assert session.ledger_total_text([dict(exact, rows=8)]) == "**Total per person:** ε = 8, δ = 0"


def test_the_total_line_with_an_mcmc_release_states_no_delta():
    """DESIGN §12: with an approximately private (MCMC) entry the sidebar's total says "δ not
    certified (includes an approximately private release)", never δ = 0."""
    mcmc = {"page": "Geodesic regression", "mechanism": "kng_joint", "epsilon": 2.0,
            "delta": None, "mu": None, "rows": 1,
            "label": "approximately private (MCMC; δ not certified)",
            "guarantee": "approximately private", "note": "", "time": "10:02:00"}
    text = session.ledger_total_text([_entries()[0], mcmc])
    assert text == ("**Total:** ε = 3, δ not certified (includes an approximately private "
                    "release)")
    assert "δ = 0" not in text
    # a Monte Carlo Gaussian entry: its ε is computed at the accountant's δ, which is not
    # certified either
    text = session.ledger_total_text(_entries())
    assert "δ not certified (includes an approximately private release)" in text
    assert text.startswith("**Total:** ε = ") and "(computed at δ = 1e-06)" in text
    assert text.endswith("; of which Gaussian DP µ = 0.5")


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
def test_round_trip_keeps_each_entry_rows():
    entries = [dict(_entries()[0], rows=8), dict(_entries()[1], rows=1)]
    text = session.ledger_json(entries)
    assert [e["rows"] for e in json.loads(text)["entries"]] == [8, 1]
    back, notes = session.read_ledger(text.encode())
    assert back == entries and notes == []
    assert session.ledger_totals(back) == session.ledger_totals(entries)


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


def test_the_cap_refusal_names_a_delta_only_when_one_applies():
    """Pure ε-DP releases compose to a pure total: the accountant's refusal then states no δ;
    with a Gaussian (µ-GDP) release the total is an ε at the accountant's δ, and says so."""
    from types import SimpleNamespace

    from dpcore.exceptions import PrivacyBudgetError
    from dpcore.privacy.accountant import PrivacyAccountant

    def rel(epsilon=None, mu=None, delta=0.0):
        return SimpleNamespace(epsilon=epsilon, delta=delta, mu=mu, label="private",
                               guarantee="private", mechanism="m", details={})

    acc = PrivacyAccountant(epsilon_cap=2.0)
    with pytest.raises(PrivacyBudgetError) as info:
        acc.check(rel(epsilon=3.0))
    assert "δ" not in str(info.value) and "ε = 3" in str(info.value)
    acc = PrivacyAccountant(epsilon_cap=2.0)
    with pytest.raises(PrivacyBudgetError, match="at δ = 1e-06"):
        acc.check(rel(mu=5.0, delta=None))
