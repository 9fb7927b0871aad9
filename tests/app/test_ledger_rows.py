"""AppTest tests of the ledger's rows per person (ui.session), driven through app.py.

Each ledger entry keeps the rows one person contributed when its release was made (group
privacy per entry, issue 14 §4 and issue 15 §4): the totals, the cap and the downloaded ledger
count every release at its own rows, whatever the sidebar's rows per person later. Releases
are made on the Fréchet mean page (ambient Laplace: exact, pure ε-DP, quick).
"""

import json

import pytest

from ui import ledger as session  # the ledger's own module: where its sidebar looks

from .pages import click_release, open_app_page

TIMEOUT = 180
LEDGER = "privacy_ledger"


def open_page():
    """The Fréchet mean page with a small preview and a pure ε-DP exact mechanism (its
    simulation study runs only once opened)."""
    at = open_app_page("frechet_mean.py", timeout=TIMEOUT)
    at.slider(key="fm_draws").set_value(20)
    at.radio(key="fm_mech").set_value("ambient_laplace")
    return at.run()


def set_rows(at, rows):
    at.sidebar.number_input(key="rows_per_person").set_value(rows).run()
    assert not at.exception, at.exception


def release(at, epsilon, rows):
    """A release of ε = ``epsilon`` per row, made with ``rows`` rows per person."""
    set_rows(at, rows)
    at.select_slider(key="fm_eps").set_value(epsilon).run()
    click_release(at, "fm_release")
    assert not at.error, [e.value for e in at.error]


def costs(at):
    return [md.value for md in at.main.markdown if "Cost of this release" in md.value]


def total(at):
    return [md.value for md in at.sidebar.markdown if md.value.startswith("**Total")]


def load(at, data):
    at.session_state["ledger_load_open"] = True  # "Load a ledger" is built once opened
    at.run()
    at.file_uploader(key="ledger_upload").set_value(("ledger.json", data,
                                                     "application/json")).run()
    at.button(key="ledger_load").click().run()
    assert not at.exception, at.exception
    return at


def test_each_release_counts_at_the_rows_it_was_made_with(monkeypatch):
    """A release at 8 rows per person (ε1 = 1), then one at 1 row (ε2 = 2): the total per
    person is 8 ε1 + ε2 = 10 and stays so when the sidebar's rows change later; the sidebar
    marks the entry made at 8 rows; the downloaded ledger keeps each entry's rows and loads
    back to the same totals."""
    downloads = []
    real = session.ledger_json
    monkeypatch.setattr(session, "ledger_json",
                        lambda *a, **k: downloads.append(real(*a, **k)) or downloads[-1])
    at = open_page()
    set_rows(at, 8)
    assert any("ε = 8 per person (8 rows each)" in c for c in costs(at))
    release(at, 1.0, 8)
    assert at.session_state[LEDGER][-1]["rows"] == 8
    set_rows(at, 1)
    at.select_slider(key="fm_eps").set_value(2.0).run()
    # the planned release at 1 row, the past one at its 8 rows: 2 + 8
    assert any("Cost of this release: ε = 2.** The session's total per person becomes ε = 10"
               in c for c in costs(at)), costs(at)
    release(at, 2.0, 1)
    assert [e["rows"] for e in at.session_state[LEDGER]] == [8, 1]
    assert total(at) == ["**Total per person:** ε = 10, δ = 0"]
    table = at.sidebar.dataframe[0].value
    assert list(table["page"]) == ["×8 · Fréchet mean", "Fréchet mean"]
    assert list(table["ε"]) == ["1", "2"]
    assert any(c.value.startswith("×k: the release was made at k rows per person")
               for c in at.sidebar.caption)
    # the sidebar's rows changed later: past entries keep theirs, the next release takes 3
    set_rows(at, 3)
    assert total(at) == ["**Total per person:** ε = 10, δ = 0"]
    assert [e["rows"] for e in at.session_state[LEDGER]] == [8, 1]
    assert any("ε = 6 per person (3 rows each).** The session's total per person becomes "
               "ε = 16" in c for c in costs(at)), costs(at)
    # download, clear, load back: the rows and the totals are kept
    saved = json.loads(downloads[-1])
    assert [e["rows"] for e in saved["entries"]] == [8, 1]
    at.button(key="ledger_clear").click().run()
    assert at.session_state[LEDGER] == []
    load(at, downloads[-1].encode())
    assert [e["rows"] for e in at.session_state[LEDGER]] == [8, 1]
    assert total(at) == ["**Total per person:** ε = 10, δ = 0"]
    assert not at.sidebar.info  # nothing to say about a file that records its rows


def test_the_cap_counts_each_entry_at_its_rows():
    """After a release of ε = 1 at 8 rows per person, a cap of 9.5 refuses ε = 2 at 1 row
    (8 + 2 = 10; counting every entry at the current 1 row would give 3) and says why, and
    allows ε = 1 (8 + 1 = 9)."""
    at = open_page()
    release(at, 1.0, 8)
    set_rows(at, 1)
    at.sidebar.number_input(key="ledger_cap").set_value(9.5).run()
    at.select_slider(key="fm_eps").set_value(2.0).run()
    refusals = [e.value for e in at.main.error if "above the cap" in e.value]
    assert len(refusals) == 1, [e.value for e in at.error]
    assert "total to ε = 10, above the cap" in refusals[0]  # pure ε-DP: no δ to state
    assert "this release counts at 1 row(s) per person" in refusals[0]
    assert "Past releases count at the rows per person each was recorded at (8 rows" \
        in refusals[0]
    assert at.button(key="fm_release").disabled
    at.select_slider(key="fm_eps").set_value(1.0).run()
    assert not any("above the cap" in e.value for e in at.error)
    assert any("total per person becomes ε = 9, of the cap 9.5" in c for c in costs(at))
    assert not at.button(key="fm_release").disabled


def _old_entries():
    return [{"page": "Fréchet mean", "mechanism": "ambient_laplace", "epsilon": e,
             "delta": 0.0, "mu": None, "label": "private", "guarantee": "private",
             "note": "", "time": "10:00:00"} for e in (0.5, 1.5)]


def test_an_old_ledger_file_loads_at_one_row_and_says_so():
    """A ledger saved before entries recorded their rows (the session's rows at its top level)
    loads with rows = 1 for each entry, and the sidebar says so once."""
    old = {"dpcore_ledger": 1, "cap": None, "rows_per_person": 8, "entries": _old_entries()}
    at = load(open_page(), json.dumps(old).encode())
    assert [e["rows"] for e in at.session_state[LEDGER]] == [1, 1]
    notes = [i.value for i in at.sidebar.info]
    assert len(notes) == 1
    assert "2 entries (1, 2) count at 1 row per person" in notes[0]
    assert "sidebar at 8 rows per person" in notes[0]
    assert total(at) == ["**Total:** ε = 2, δ = 0"]
    at.run()
    assert not at.sidebar.info  # said once


@pytest.mark.parametrize("rows", [0, 2.5, "8"])
def test_a_bad_rows_value_is_refused_naming_entry_and_field(rows):
    entries = _old_entries()
    entries[0]["rows"], entries[1]["rows"] = 2, rows
    bad = {"dpcore_ledger": 1, "entries": entries}
    at = open_page()
    release(at, 1.0, 1)
    load(at, json.dumps(bad).encode())
    errors = [e.value for e in at.sidebar.error]
    assert len(errors) == 1 and errors[0].startswith(
        "Ledger entry 2: `rows` (rows one person contributes) must be a whole number"), errors
    assert [e["epsilon"] for e in at.session_state[LEDGER]] == [1.0]  # kept as it was


def test_a_total_with_an_mcmc_release_states_no_delta():
    """DESIGN §12: a ledger holding an approximately private (MCMC) release states no δ for its
    total, in the sidebar and in the cost line of the next release, never δ = 0."""
    entries = _old_entries()
    for e in entries:
        e["rows"] = 1
    entries[1].update(mechanism="kng_joint", delta=None, guarantee="approximately private",
                      label="approximately private (MCMC; δ not certified)")
    at = load(open_page(), json.dumps({"dpcore_ledger": 1, "entries": entries}).encode())
    uncertified = "δ not certified (includes an approximately private release)"
    assert total(at) == [f"**Total:** ε = 2, {uncertified}"]
    assert any("release(s) only approximately private" in w.value
               and "the total states no δ" in w.value for w in at.sidebar.warning)
    at.select_slider(key="fm_eps").set_value(1.0).run()
    assert any(f"The session's total becomes ε = 3, {uncertified}" in c for c in costs(at)), \
        costs(at)
    assert not any("δ = 0" in t for t in total(at) + costs(at))
