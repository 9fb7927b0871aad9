"""Streamlit session helpers shared by the pages: the privacy ledger and shareable URLs.

With :mod:`ui.progress` (progress bars), the only ``ui`` modules that import Streamlit
(figures and page logic stay testable without it).

* The **privacy ledger** lives in ``st.session_state`` (one per browser session, never shared):
  every release a page makes is recorded with its ε / µ / δ, its guarantee and the rows one
  person contributed to it (the entry counts per person at those rows for good, group privacy);
  the sidebar shows the list and one total composed by
  :class:`dpcore.privacy.PrivacyAccountant` (pure DP adds ε, Gaussian DP composes as
  sqrt(sum µ²), both combine into one ε at δ; non-private releases are counted apart, never
  added; with an approximately private release the total states no δ). The ledger's logic
  (entries built from privacy events, group privacy, totals, the JSON file and its reader)
  is :mod:`dpcore.privacy.ledger`; this module keeps the session state and the widgets.
* **Shareable scenarios**: widget defaults are read from the URL query string and the current
  settings are written back, so copying the URL shares the scenario (never uploaded data).
"""

from __future__ import annotations

import json
import os

import streamlit as st

from dpcore.exceptions import PrivacyBudgetError
from dpcore.privacy import PrivacyEvent
from dpcore.privacy import ledger as _ledger
from dpcore.privacy.accountant import UNCERTIFIED_DELTA
from dpcore.privacy.ledger import (  # noqa: F401  (the names pages and tests import from here)
    ENTRY_FIELDS,
    delta_text,
    entry_rows,
    group,
    ledger_totals,
)
from dpcore.privacy.ledger import load_json as _load_json

from .caps import CAPS

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


# ---------------------------------------------------------------------- query string
def query_value(key, default, cast=None, choices=None):
    """Read a scenario setting from the URL, falling back to ``default`` on absence or junk."""
    raw = st.query_params.get(key)
    if raw is None:
        return default
    cast = cast or type(default)
    try:
        if cast is bool:
            value = raw.lower() in ("1", "true", "yes")
        else:
            value = cast(raw)
    except (TypeError, ValueError):
        return default
    if choices is not None and value not in choices:
        return default
    return value


def write_query(**settings):
    """Write the page's current settings to the URL (only the keys given).

    One update for all the changed keys: each assignment to ``st.query_params`` sends the
    browser its own message (Geodesic regression's first run sent 19, about 28 ms of the
    browser's main thread before the first plot)."""
    changed = {key: str(value) for key, value in settings.items()
               if st.query_params.get(key) != str(value)}
    if changed:
        st.query_params.update(changed)


# ---------------------------------------------------------------------- widget state
class PageSettings:
    """Starting values of a page's widgets, their URL keys and their in-session copy.

    A widget starts from this session's last value, else from its saved copy (which survives
    switching pages), else from the URL (on the page's first run only), else its default.
    :meth:`finish` stores the copy, writes the settings to the URL (lists comma-joined) and
    marks the page as initialised.

    Parameters
    ----------
    prefix : str
        The page's key prefix: the copy lives under ``<prefix>_saved`` and the first-run flag
        under ``<prefix>_initialized`` in ``st.session_state``.
    """

    def __init__(self, prefix):
        self.saved_key = f"{prefix}_saved"
        self.flag_key = f"{prefix}_initialized"
        self.first_run = self.flag_key not in st.session_state
        self.url = {}  # query-string key -> widget key
        self.keys = []  # every widget key given a starting value

    @property
    def saved(self):
        return st.session_state.setdefault(self.saved_key, {})

    def init(self, key, qkey, default, cast=None, choices=None, bounds=None):
        """Give widget ``key`` its starting value; ``bounds`` clamps a URL value into range
        and ``choices`` rejects saved or URL values outside them."""
        self.keys.append(key)
        if qkey:
            self.url[qkey] = key
        if key in st.session_state:
            if st.session_state.get(RESTORE_KEY):
                # The run a progressive opening asked for (ui.session.after_first_chart): the
                # browser may have built the page's widgets anew after the opening run.
                resend_values((key,))
            return
        saved = self.saved
        if key in saved and (choices is None or saved[key] in choices):
            st.session_state[key] = saved[key]
            return
        value = query_value(qkey, default, cast, choices) if self.first_run and qkey else default
        if bounds is not None:
            value = min(max(value, bounds[0]), bounds[1])
        st.session_state[key] = value

    def finish(self):
        """Save the settings in the session, write them to the URL, mark the page initialised."""
        st.session_state.pop(RESTORE_KEY, None)
        self.saved.update({k: st.session_state[k] for k in self.keys if k in st.session_state})
        query = {}
        for qkey, key in self.url.items():
            value = st.session_state[key]
            if isinstance(value, (list, tuple)):
                value = ",".join(str(v) for v in value)
            query[qkey] = value
        write_query(**query)
        st.session_state[self.flag_key] = True


# ---------------------------------------------------------------------- spending on purpose
def _dialog_state(key):
    return f"{key}_confirm_open", f"{key}_confirmed"


def release_button(key, cost, *, disabled=False, label="Release", container=None,
                   help=None):
    """A release button that spends only after a confirmation stating the exact cost.

    The button opens a dialog with ``cost["text"]`` (from :func:`planned_cost`) and *Release
    now* / *Cancel*; the release runs on the rerun after *Release now*. Refused outright (button
    disabled, the accountant's message shown by the caller) when ``cost["error"]`` is set.

    Returns
    -------
    bool
        True on the one run where the user confirmed.
    """
    open_key, go_key = _dialog_state(key)
    where = container or st
    # On the run that performs a confirmed release the button stays disabled until it ends.
    running = bool(st.session_state.get(go_key))
    if where.button(label, type="primary", key=key, help=help,
                    disabled=disabled or running or cost.get("error") is not None):
        st.session_state[open_key] = True

    def close():
        st.session_state[open_key] = False

    @st.dialog("Confirm the release", on_dismiss=close)
    def confirm():
        st.markdown(cost["text"] or "")
        st.caption("Nothing is drawn until you confirm. The release is recorded in the privacy "
                   "ledger (sidebar), where it stays.")
        c1, c2 = st.columns(2)
        if c1.button("Release now", type="primary", key=f"{key}_confirm"):
            st.session_state[open_key] = False
            st.session_state[go_key] = True
            st.rerun()
        if c2.button("Cancel", key=f"{key}_cancel"):
            st.session_state[open_key] = False
            st.rerun()

    if st.session_state.get(open_key) and not disabled and cost.get("error") is None:
        confirm()
    return bool(st.session_state.pop(go_key, False))


def finish_release(key, error=None):
    """End the run of a confirmed release: keep its error (if any) for the next run and rerun,
    so that the Release button, disabled while the release ran, is enabled again.

    Call it after the release was stored (``st.session_state``) and recorded in the ledger;
    :func:`release_error` shows the kept error on the next run.
    """
    if error is not None:
        st.session_state[f"{key}_error"] = str(error)
    st.rerun()


def draw_release(page, button, run, label, estimate, draw, last, **extra):
    """Draw a confirmed release under a progress bar, record it and rerun.

    ``draw(progress)`` makes the release (``progress`` is the :class:`ui.progress.RunProgress`
    bar, whose Cancel stops it); warnings are silenced (the page states the label). On a
    ``ValueError`` or ``RuntimeError`` the error is kept for :func:`release_error` and nothing
    is recorded. Otherwise the release is recorded in the ledger and stored in
    ``st.session_state[last]`` as ``{"release", "seconds", **extra}``; then
    :func:`finish_release` reruns so the button ``button`` is enabled again.
    """
    import time
    import warnings

    from .progress import RunProgress

    start = time.perf_counter()
    try:
        with RunProgress(label, key=run, estimate=estimate) as bar, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            release = draw(bar)
    except (ValueError, RuntimeError) as exc:
        finish_release(button, error=exc)
    seconds = time.perf_counter() - start
    record_release(page, release)
    st.session_state[last] = {"release": release, **extra, "seconds": seconds}
    finish_release(button)


def release_error(key, what="The release"):
    """Show (once) the error kept by :func:`finish_release`; True if there was one."""
    message = st.session_state.pop(f"{key}_error", None)
    if message is not None:
        st.error(f"{what} failed: {message}", icon=":material/error:")
        return True
    return False


# ---------------------------------------------------------------------- settings files
def settings_json(page_name, url_path):
    """This page's settings (its URL query values) as a JSON settings file. Settings are
    public choices only: no data, no release."""
    own = {k: v for k, v in st.query_params.to_dict().items() if k.startswith(f"{page_name}_")}
    return json.dumps({"dpcore_settings": 1, "page": url_path, "settings": own}, indent=2,
                      ensure_ascii=False)


def parse_settings(data, page_name, url_path):
    """The settings of a settings file for this page; ValueError with a clear message on
    anything else (another page's file, a key of another page, a long or non-text value)."""
    obj = _load_json(data, "settings file")
    if not isinstance(obj, dict) or obj.get("dpcore_settings") != 1:
        raise ValueError("The file is not a settings file exported from this dashboard.")
    if obj.get("page") != url_path:
        raise ValueError(f"These settings belong to the page '{obj.get('page')}'; open that "
                         "page to load them.")
    settings = obj.get("settings")
    if not isinstance(settings, dict):
        raise ValueError("The settings file has no settings.")
    for key, value in settings.items():
        if not str(key).startswith(f"{page_name}_"):
            raise ValueError(f"Setting '{key}' is not a setting of this page.")
        if not isinstance(value, (str, int, float)) or len(str(value)) > CAPS["setting_chars"]:
            raise ValueError(f"Setting '{key}' must be a short text or number.")
    return {str(k): str(v) for k, v in settings.items()}


def render_settings_io(page_name, url_path):
    """Sidebar: download this page's settings, or load a settings file back (the page then
    starts from them, as from a shared link)."""
    if not page_name or page_name == "home":
        return
    with st.sidebar:
        box = lazy_expander("Settings file", SETTINGS_IO_OPEN)
    if box is None:
        return
    with box:
        st.download_button("Download this page's settings", settings_json(page_name, url_path),
                           file_name=f"{url_path}_settings.json", mime="application/json",
                           key="settings_download", on_click="ignore")
        up = st.file_uploader("Load settings (.json)", type=["json"], key="settings_upload")
        if up is not None and st.button("Apply these settings", key="settings_apply"):
            try:
                settings = parse_settings(up.getvalue(), page_name, url_path)
            except ValueError as exc:
                st.error(str(exc))
                return
            st.query_params.clear()
            st.query_params.update(settings)
            for key in [k for k in st.session_state if str(k).startswith(f"{page_name}_")]:
                del st.session_state[key]
            st.rerun()


def session_memo(store_key, key, make, *, keep_errors=(), spinner=None, max_entries=6):
    """``make()`` computed once per session for ``key``, kept in this session's state.

    For work on uploaded data, which must never enter ``st.cache_data`` (its store is shared by
    every session of the server; tests/app/test_hygiene_app.py): a widget change does not read
    the file or recompute on it again while the session lives. Nothing is written to disk.

    Parameters
    ----------
    store_key : str
        Session-state key of the page's store.
    key : hashable
        What the value depends on (e.g. the file's SHA-256 and the settings used).
    make : callable
        Computes the value.
    keep_errors : tuple of exception classes
        Errors kept as the result (a bad file is not read again on every rerun); others
        propagate uncached.
    spinner : str, optional
        Shown while ``make`` runs.
    max_entries : int
        The oldest entries are dropped beyond this many.
    """
    store = st.session_state.setdefault(store_key, {})
    if key not in store:
        try:
            if spinner:
                with st.spinner(spinner):
                    store[key] = (make(), None)
            else:
                store[key] = (make(), None)
        except keep_errors as exc:
            store[key] = (None, exc)
        while len(store) > max_entries:
            store.pop(next(iter(store)))
    value, error = store[key]
    if error is not None:
        raise error
    return value


def export_buttons(script, stem, prefix):
    """"Export script" and "Export notebook" side by side for a page's scenario script
    (``<stem>_scenario.py`` / ``.ipynb``; widget keys ``<prefix>_export_script`` and
    ``<prefix>_export_notebook``); downloading does not rerun the page."""
    from .logic.export import notebook_from_script

    c1, c2 = st.columns(2)
    c1.download_button("Export script (.py)", script, file_name=f"{stem}_scenario.py",
                       mime="text/x-python", key=f"{prefix}_export_script", on_click="ignore")
    c2.download_button("Export notebook (.ipynb)", notebook_from_script(script),
                       file_name=f"{stem}_scenario.ipynb", mime="application/x-ipynb+json",
                       key=f"{prefix}_export_notebook", on_click="ignore")


def resend_values(keys):
    """Set each of ``keys`` present in the session to its own value, through the session state.

    Such a value is kept even in a run where its widget is not drawn (Streamlit drops the
    others), and is sent with the widget when it is drawn: the browser shows it even on a
    widget it builds anew, which it would otherwise build at its default (a number field's
    minimum, an unticked box), sending that default on the next click."""
    for k in keys:
        if k in st.session_state:
            st.session_state[k] = st.session_state[k]


def mark_typed(flag):
    """Widget callback: the field was typed, so it stops following its computed default (the
    page sets the field's value from the default only while ``st.session_state[flag]`` is
    unset)."""
    st.session_state[flag] = True


def lazy_expander(label, key, *, expanded=False, keep=(), where=st):
    """A stateful expander whose content is built only while it is open.

    A collapsed expander still renders its content in the browser (about 12 ms of the page's
    main thread per input widget on the 2-core machine, 0.25 s for the first data grid), on
    the way to the page's first plot; a closed lazy expander sends nothing but its label.

    Parameters
    ----------
    label : str
    key : str
        Widget key of the open/closed state (``st.session_state[key]``).
    expanded : bool
        Open on the session's first run.
    keep : iterable of str
        Widget keys drawn inside: while the expander is closed they are kept in the session
        (Streamlit drops the value of a widget that is not drawn), so reopening shows the
        user's values. Those widgets must take their starting value from
        ``st.session_state`` (``setdefault`` before the widget), not from ``value=``.
    where : module or DeltaGenerator

    Returns
    -------
    The expander (a container) if it is open, else None.
    """
    box = where.expander(label, expanded=expanded, key=key, on_change="rerun")
    was_open = f"{key}__was_open"
    reopened = box.open and not st.session_state.get(was_open, False)
    st.session_state[was_open] = bool(box.open)
    if box.open and not reopened:
        return box
    # Closed: keep the values (Streamlit drops those of widgets not drawn). Just opened: the
    # browser builds the widgets anew (a kept checkbox showed unticked, a slider its first
    # option).
    resend_values(keep)
    return box if box.open else None


def formula_notes(key, render, where=st):
    """The page's formulas in a lazy expander (:func:`lazy_expander`), so they are not typeset
    (KaTeX) before the page's first figure. ``render()`` draws them."""
    box = lazy_expander("Teaching notes: the formulas behind this page", key, where=where)
    if box is not None:
        with box:
            render()


def show_estimate_budget(eps_b, n_columns, n_rows, levels, what):
    """Above an "Estimate privately" button: what ε_b buys for this many rows (a warning where
    the estimate is mostly noise) and the cost line of the estimate (``what``: the estimate it
    pays for). Returns the planned cost (:func:`planned_cost`)."""
    from .logic import private_bounds as PB

    text, thin = PB.budget_text(float(eps_b), n_columns, n_rows, levels)
    st.caption(text)
    if thin:
        one = n_columns == 1
        st.warning("At this ε_b the estimate is mostly noise for this many rows: expect "
                   f"{'a range' if one else 'ranges'} near the enclosing interval's ends. "
                   "Raise ε_b (its cost is stated below) or type "
                   f"{'a narrower enclosing interval' if one else 'narrower enclosing intervals'}.",
                   icon=":material/warning:")
    cost = planned_cost(epsilon=float(eps_b))
    show_cost(cost, f" It pays for the {what} only; the release below has its own cost.")
    return cost


# ---------------------------------------------------------------------- progressive opening
#: Environment variable that turns progressive opening on (``ui.serve`` sets it to 1; scripts
#: run any other way, ``AppTest`` included, draw every page whole in one run).
PROGRESSIVE_ENV = "DASHBOARD_PROGRESSIVE_OPEN"
#: Seconds after the first chart was sent before the browser asks for the rest of the page. A
#: browser timer (the ``run_every`` of a fragment) fires only once the browser's main thread is
#: free, that is after the chart has been drawn; 0.2 s measured best of 0.05 and 0.2 s.
CONTINUE_AFTER_S = 0.2
#: Session state key: this run opens its page for the first time in the session.
OPENING_RUN_KEY = "_opening_run"
#: Session state key: an opening run ended at its first chart and the rest is still to draw.
CONTINUATION_KEY = "_opening_continuation"
#: Session state key: the run the continuation asked for sends the page's settings again as
#: set through the session state (:meth:`PageSettings.init`; cleared by
#: :meth:`PageSettings.finish`). Without it, under load, the browser built some pages' widgets
#: anew at their defaults (a number field's minimum) and the next click sent those: every
#: setting of Geodesic regression came back at its minimum in 6 of 16 stressed sessions.
RESTORE_KEY = "_opening_restore"
#: Session state key: set by the continuation, turned into :data:`RESTORE_KEY` for the one run
#: it asks for by :func:`begin_page_run` (every other run starts without it).
RESTORE_NEXT_KEY = "_opening_restore_next"


def progressive_open_enabled():
    """Whether pages open progressively (:data:`PROGRESSIVE_ENV` set to 1 by ``ui.serve``)."""
    return os.environ.get(PROGRESSIVE_ENV, "0").strip() == "1"


def begin_page_run(url_path, progressive=True):
    """Note whether this run opens the page ``url_path`` for the first time in the session
    (and the page opens progressively: ``progressive``, ``PageSpec.open_progressively``).

    Called by ``app.py`` before it runs the page (fragment runs do not pass here). Any run of
    the app draws its page whole unless it is an opening run, so a continuation still pending
    is void. See :func:`after_first_chart`.
    """
    flag = f"_opened_{url_path or 'home'}"
    st.session_state[OPENING_RUN_KEY] = (progressive and progressive_open_enabled()
                                         and not st.session_state.get(flag, False))
    st.session_state[flag] = True
    st.session_state[CONTINUATION_KEY] = False
    st.session_state[RESTORE_KEY] = st.session_state.pop(RESTORE_NEXT_KEY, False)


def end_page_run():
    """After a run of the whole page (``app.py``, after the page and the sidebar): the restore
    mark (:data:`RESTORE_KEY`) lasts that run only, not the fragment runs that follow it (a
    value sent again in a fragment run could undo a change the user made meanwhile)."""
    st.session_state[RESTORE_KEY] = False


def after_first_chart():
    """On a page's opening run, end the run at its first chart and draw the rest next.

    The browser renders everything one run sends before it draws a chart sent in the same
    batch: every widget, table and further chart below the first one delayed it (0.25 to
    0.6 s on the 2-core machine, ``benchmarks/bench_browser.py``). On the first run of a page
    in a session (:func:`begin_page_run`) this ends the run right after the first chart and
    leaves a fragment whose browser timer (``run_every``, :data:`CONTINUE_AFTER_S`) fires once
    the chart is drawn and asks for exactly one more run of the app, which draws the whole
    page, the sidebar included. The timer may fire again before that run has removed it; it
    then finds nothing pending and does nothing (a second full run could cut short a run the
    user started, a Release click). A run the user starts first (a widget changed) draws the
    whole page itself and voids the continuation. Every later run draws the whole page at
    once. :func:`ui.figures.show_figure` calls it after each chart; it acts once per opening
    run.
    """
    if not st.session_state.get(OPENING_RUN_KEY, False):
        return
    st.session_state[OPENING_RUN_KEY] = False

    @st.fragment(run_every=CONTINUE_AFTER_S)
    def continue_page():
        # Called inline once with the page, before anything is pending (draws nothing), then
        # by the browser's timer.
        if st.session_state.get(CONTINUATION_KEY, False):
            st.session_state[CONTINUATION_KEY] = False
            st.session_state[RESTORE_NEXT_KEY] = True
            st.rerun()

    continue_page()
    st.session_state[CONTINUATION_KEY] = True
    st.stop()


def starting_value(key, value, choices=None):
    """Give widget ``key`` its starting value ``value`` through the session state, unless it
    holds one (in ``choices``, when given); in the run a progressive opening asks for
    (:data:`RESTORE_KEY`), send the value held again (:func:`resend_values`). Returns the value
    held.

    For pages whose opening run reads their settings without drawing them
    (:class:`ValuesOnly`): the widget is then drawn without ``value=`` or ``index=``, and
    first built by the browser in the next run, with the value it is sent."""
    ss = st.session_state
    if key not in ss or (choices is not None and ss[key] not in choices):
        ss[key] = value
    elif ss.get(RESTORE_KEY):
        resend_values((key,))
    return ss[key]


def opening_run():
    """Whether this run is a page's progressive opening run that has not reached its first
    chart yet (:func:`begin_page_run`, :func:`after_first_chart`)."""
    return bool(st.session_state.get(OPENING_RUN_KEY, False))


def open_whole():
    """End a progressive opening run that will draw no chart (a data error, no fit): the next
    run, started at once, draws the whole page. Does nothing outside an opening run."""
    if opening_run():
        st.session_state[OPENING_RUN_KEY] = False
        st.rerun()


class ValuesOnly:
    """Stands in for ``st`` (or a container) where a page's settings are drawn, in the page's
    progressive opening run: each input widget returns the value its key holds in the session
    state (set by :meth:`PageSettings.init`) and draws nothing; every other element is skipped.

    The browser renders every element one run sends before it draws a chart sent in the same
    batch; settings drawn above (or beside) a page's first chart delay it, about 0.3 s for
    Geodesic regression's 19 input widgets on the 2-core machine. Drawn through this stand-in
    in the opening run, the settings cost nothing there and come with the run the continuation
    asks for (:func:`after_first_chart`), which sends their values again
    (:data:`RESTORE_KEY`). The page computes exactly what it would with the widgets drawn:
    a widget's value is its key's value in the session state.

    Examples
    --------
    >>> ui = ValuesOnly() if opening_run() else st      # doctest: +SKIP
    >>> with ui.container(border=True):                  # doctest: +SKIP
    ...     n = ui.slider("Sample size n", 10, 500, key="gr_n")
    """

    def _value(self, kind, kwargs):
        key = kwargs.get("key")
        if key is None:
            raise TypeError(f"ValuesOnly.{kind} needs the widget's key (its value is read "
                            "from the session state)")
        return st.session_state.get(key)

    def button(self, *args, **kwargs):
        """A button drawn nowhere is never pressed."""
        return False

    download_button = button

    def columns(self, spec, **kwargs):
        """As many stand-ins as ``st.columns(spec)`` has columns."""
        return [self] * (spec if isinstance(spec, int) else len(spec))

    def container(self, *args, **kwargs):
        """This stand-in, usable in a ``with`` block."""
        return self

    expander = empty = spinner = container

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _values_only_input(kind):
    def widget(self, *args, **kwargs):
        return self._value(kind, kwargs)

    widget.__name__ = kind
    widget.__doc__ = f"The value of ``st.{kind}``'s key in the session state; draws nothing."
    return widget


def _values_only_skip(kind):
    def element(self, *args, **kwargs):
        return None

    element.__name__ = kind
    element.__doc__ = f"``st.{kind}``, drawn nowhere."
    return element


for _kind in ("number_input", "slider", "select_slider", "radio", "checkbox", "toggle",
              "text_input", "selectbox", "multiselect", "file_uploader"):
    setattr(ValuesOnly, _kind, _values_only_input(_kind))
for _kind in ("caption", "markdown", "subheader", "header", "write", "warning", "error", "info",
              "success", "latex", "dataframe", "table", "metric"):
    setattr(ValuesOnly, _kind, _values_only_skip(_kind))
del _kind
