"""The privacy ledger of a browser session: its entries in ``st.session_state``, the rows one
person contributes (group privacy), the budget cap, the planned cost of a release and the
sidebar that lists and totals them (the ledger's logic is :mod:`dpcore.privacy.ledger`)."""


from __future__ import annotations

import streamlit as st

from dpcore.exceptions import PrivacyBudgetError
from dpcore.privacy import PrivacyEvent
from dpcore.privacy import ledger as _ledger
from dpcore.privacy.accountant import UNCERTIFIED_DELTA
from dpcore.privacy.ledger import (
    delta_text,
    entry_rows,
    ledger_totals,
)

from .caps import CAPS
from .widgets import lazy_expander

LEDGER_KEY = "privacy_ledger"
#: The sidebar's ledger heading, drawn at the end of every complete run of the app (browser
#: tests and ``bench_browser`` wait for it as the mark of a whole page).
LEDGER_TITLE = "Privacy ledger"
#: Session state key of the optional budget cap (total ε at the accountant's δ).
CAP_KEY = "ledger_cap"
#: Session state key of the rows one person contributes (group privacy).
ROWS_KEY = "rows_per_person"
#: Session state key of one page's own rows per person (from its person column): a dict with the
#: page's script hash, the rows and a note. It applies on that page only (the sidebar shows the
#: note and locks its field there); the other pages keep the sidebar's value (``ROWS_KEY``),
#: which a page never overwrites.
PAGE_ROWS_KEY = "rows_per_person_page"
#: Session state key of the note shown once after a ledger file was loaded.
LOAD_NOTE_KEY = "ledger_load_note"
#: Session state keys of the sidebar's "Load a ledger" and "Settings file" sections (open or
#: closed; their file uploaders are built only while open, see :func:`lazy_expander`).
LEDGER_LOAD_OPEN = "ledger_load_open"
SETTINGS_IO_OPEN = "settings_io_open"


# ---------------------------------------------------------------------- ledger
def ledger():
    """The list of ledger entries of this session (created on first use)."""
    return st.session_state.setdefault(LEDGER_KEY, [])


def record_release(page, release, note="", rows=None):
    """Add a :class:`dpcore.release.Release` to the session's ledger and return the entry.

    The entry is built from the release's privacy event
    (:meth:`dpcore.privacy.PrivacyEvent.of`, :func:`dpcore.privacy.ledger.release_entry`) and
    keeps ``rows`` (default: :func:`rows_per_person` now), the rows one person contributed to
    this release: it counts at them whatever the rows per person later."""
    return record_event(page, PrivacyEvent.of(release), mechanism=release.mechanism,
                        note=note, rows=rows)


def record_event(page, event, *, mechanism, note="", rows=None):
    """Add a release made outside dpcore (e.g. a baseline library's), given by its
    :class:`dpcore.privacy.PrivacyEvent`, to the session's ledger and return the entry
    (as :func:`record_release`)."""
    entry = _ledger.ledger_entry(page, event, mechanism=mechanism, note=note,
                                 rows=rows_per_person() if rows is None else rows)
    ledger().append(entry)
    return entry


def rows_per_person():
    """Rows one person contributes to the data (1: the unit protected is one row): the current
    page's own setting (:func:`set_page_rows`) if it has one, else the sidebar's."""
    own = page_rows()
    if own is not None:
        return own["rows"]
    return max(1, int(st.session_state.get(ROWS_KEY) or 1))


def _page_hash():
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    return None if ctx is None else ctx.page_script_hash


def set_page_rows(rows, note=None):
    """Set the rows per person of the current page only (e.g. from its person column), with
    the sidebar's ``note`` saying why; ``rows=None`` clears it. Other pages keep the sidebar's
    value."""
    if rows is None:
        st.session_state.pop(PAGE_ROWS_KEY, None)
    else:
        st.session_state[PAGE_ROWS_KEY] = {"page": _page_hash(), "rows": max(1, int(rows)),
                                           "note": note}


def page_rows():
    """The current page's own rows-per-person setting (``{"rows", "note", "page"}``) or None
    (none set, or set by another page)."""
    own = st.session_state.get(PAGE_ROWS_KEY)
    return own if own is not None and own["page"] == _page_hash() else None


def budget_cap():
    """The session's cap on the total ε (None: no cap)."""
    cap = st.session_state.get(CAP_KEY)
    return float(cap) if cap else None


def accountant(entries=None):
    """A :class:`dpcore.privacy.PrivacyAccountant` holding this session's releases (as they
    were recorded: a cap set later removes nothing), with the session's cap. Each entry counts
    per person at the rows it was recorded at (:func:`entry_rows`)."""
    return _ledger.ledger_accountant(ledger() if entries is None else entries,
                                     epsilon_cap=budget_cap())


def planned_cost(*, epsilon=None, mu=None, delta=0.0, guarantee="private", label=None):
    """What a release about to be made will add to the ledger, and the session's total after
    it, checked against the cap before anything is drawn. The release counts at the current
    :func:`rows_per_person`, every past entry at the rows it was recorded at. ``label``, when
    given, is the label the release will get: the sentence (shown above the button and in the
    confirmation) states it.

    Returns
    -------
    dict
        ``text`` (one sentence: the release's cost and the total after it) and ``error`` (the
        accountant's :class:`~dpcore.exceptions.PrivacyBudgetError` message when the release
        would exceed the cap, else None).
    """
    acc = accountant()
    rows = rows_per_person()
    planned = _ledger.grouped_event(epsilon=epsilon, delta=delta, mu=mu, guarantee=guarantee,
                                    rows=rows)
    epsilon, mu = planned.epsilon, planned.mu
    try:
        event = acc.check(planned)
    except PrivacyBudgetError as exc:
        return {"text": None, "error": str(exc) + _per_person_note(rows)}
    cost = (f"ε = {epsilon:.3g}" if epsilon is not None else f"µ = {mu:.3g} (Gaussian DP)")
    if rows > 1:
        cost += f" per person ({rows} rows each)"
    if not event.composes:
        said = f"will be labelled **{label}**" if label else f"is not private ({guarantee})"
        return {"text": f"This release {said}: it is listed in the ledger apart (not "
                        "private) and adds nothing to the total.", "error": None}
    acc.events = acc.events + [event]
    tot = acc.totals()
    after = tot["epsilon"]
    # A total with an approximately private release states no δ (DESIGN §12).
    at = ("" if tot["nominal_delta"] == 0 else f" at δ = {acc.delta:g}") if \
        tot["delta_certified"] else _uncertified(tot)
    cap = budget_cap()
    who = " per person" if rows > 1 or any(entry_rows(e) > 1 for e in ledger()) else ""
    text = (f"**Cost of this release: {cost}.** The session's total{who} becomes "
            f"ε = {after:.3g}{at}"
            + (f", of the cap {cap:g}." if cap else " (no cap set; see the sidebar).")
            + (f" Label: **{label}**." if label else ""))
    return {"text": text, "error": None}


def _uncertified(totals):
    """What a total with an approximately private release says instead of its δ: its ε was
    computed at ``nominal_delta`` (stated when above 0) and no δ is certified."""
    at = (f" (computed at δ = {totals['nominal_delta']:g})" if totals["nominal_delta"] > 0
          else "")
    return f"{at}, {UNCERTIFIED_DELTA}"


def _per_person_note(rows):
    """Why a refusal's totals are per person, when some release counts more than one row."""
    recorded = sorted({entry_rows(e) for e in ledger()} - {1})
    if rows == 1 and not recorded:
        return ""
    past = ("" if not recorded else " Past releases count at the rows per person each was "
            f"recorded at ({', '.join(map(str, recorded))} rows for some; see the ledger).")
    return (f" The totals are per person (group privacy): this release counts at {rows} "
            f"row(s) per person.{past}")


def show_cost(cost, note=""):
    """Draw :func:`planned_cost`'s result above a Release button: the accountant's refusal in
    red, else the cost sentence (with an optional ``note``)."""
    if cost["error"]:
        st.error(cost["error"], icon=":material/block:")
    else:
        st.markdown(cost["text"] + note)


def ledger_json(entries=None):
    """The ledger as JSON text (for download): its entries (each with its rows per person)
    and the session's cap (:func:`dpcore.privacy.ledger.ledger_json`)."""
    return _ledger.ledger_json(ledger() if entries is None else entries, cap=budget_cap())


def read_ledger(data):
    """Entries of a downloaded ledger (bytes or text) and notes on how it was read
    (:func:`dpcore.privacy.ledger.read_ledger`, with the sidebar's cap on the rows per person).

    Returns
    -------
    entries : list of dict
    notes : list of str

    Raises
    ------
    ValueError
        With a clear message (naming the entry and field) on anything else.
    """
    return _ledger.read_ledger(data, max_rows=CAPS["rows_per_person"])


def parse_ledger(data):
    """Entries of a downloaded ledger (:func:`read_ledger` without its notes)."""
    return read_ledger(data)[0]


def ledger_total_text(entries):
    """The sidebar's total line for ``entries`` (markdown): ε and the total's δ, or, when an
    entry is only approximately private, "δ not certified (includes an approximately private
    release)" (never δ = 0 there); with the µ of the Gaussian-DP releases."""
    tot = ledger_totals(entries)
    who = " per person" if any(entry_rows(e) > 1 for e in entries) else ""
    if tot["delta_certified"]:
        text = f"**Total{who}:** ε = {tot['epsilon']:.3g}, {delta_text(tot)}"
    else:
        text = f"**Total{who}:** ε = {tot['epsilon']:.3g}{_uncertified(tot)}"
    if tot["mu"] is not None:
        text += f"; of which Gaussian DP µ = {tot['mu']:.3g}"
    return text


def render_ledger():
    """Draw the ledger in the sidebar."""
    entries = ledger()
    with st.sidebar:
        st.header(LEDGER_TITLE)
        own = page_rows()
        rows_note = None if own is None else own["note"]
        st.number_input("Rows one person contributes", 1, CAPS["rows_per_person"], step=1,
                        key=ROWS_KEY,
                        disabled=own is not None,
                        help="Each release protects the replacement of one row. When one person "
                             "contributes k rows (a rat measured at 8 ages), their guarantee is "
                             "k times weaker (group privacy): the costs, the totals and the cap "
                             "are then stated per person. Each release is recorded at the "
                             "value in effect when it is made; changing it later does not "
                             "change past entries.")
        if rows_note:
            st.caption(rows_note)
        st.number_input("Session budget cap ε (0: no cap)", 0.0, 1e6, step=1.0, key=CAP_KEY,
                        help="A release that would bring the session's total ε above the cap "
                             "is refused before anything is drawn (Gaussian-DP releases count "
                             "through their ε at δ = 1e-6).")
        box = lazy_expander("Load a ledger", LEDGER_LOAD_OPEN)
        if box is not None:
            with box:
                up = st.file_uploader("Ledger (.json)", type=["json"], key="ledger_upload")
                if up is not None and st.button("Replace this session's ledger",
                                                key="ledger_load"):
                    try:
                        loaded, notes = read_ledger(up.getvalue())
                    except ValueError as exc:
                        st.error(str(exc))
                    else:
                        st.session_state[LEDGER_KEY] = loaded
                        st.session_state[LOAD_NOTE_KEY] = " ".join(notes)
                        st.rerun()
        load_note = st.session_state.pop(LOAD_NOTE_KEY, None)
        if load_note:
            st.info(load_note, icon=":material/group:")
        if not entries:
            st.caption("No releases yet. Every private release of this session appears here.")
            return
        # Few, short columns: the sidebar is narrow and the budget columns must stay visible.
        grouped = any(entry_rows(e) > 1 for e in entries)
        table = [
            {
                # The rows a release was made at lead its page name: in view however narrow.
                "page": (f"×{entry_rows(e)} · " if entry_rows(e) > 1 else "") + str(e["page"]),
                "ε": "" if e["epsilon"] is None else f"{e['epsilon']:.3g}",
                "δ": "" if e["delta"] is None else f"{e['delta']:.2g}",
                "µ": "" if e["mu"] is None else f"{e['mu']:.3g}",
            }
            for e in entries
        ]
        st.dataframe(table, hide_index=True, width="stretch")
        if grouped:
            st.caption("×k: the release was made at k rows per person. ε, δ, µ are each "
                       "release's own guarantee per row; one made at k rows counts per person "
                       "as kε, (kε, k e^((k−1)ε) δ) or kµ in the total, whatever the rows per "
                       "person set now.")
        tot = ledger_totals(entries)
        st.markdown(ledger_total_text(entries))
        if tot["not_private"]:
            st.warning(f"{tot['not_private']} release(s) not private (paper mode, bounds "
                       "from the data or the sequential scheme), listed apart: not in the "
                       "total.")
        if tot["approximate"]:
            st.warning(f"{tot['approximate']} release(s) only approximately private (MCMC or "
                       "Monte Carlo calibration): their δ is not certified, so the total "
                       "states no δ.")
        st.download_button("Download ledger", ledger_json(entries), file_name="ledger.json",
                           mime="application/json", key="ledger_download", on_click="ignore")
        if st.button("Clear ledger", key="ledger_clear"):
            st.session_state[LEDGER_KEY] = []
            st.rerun()
