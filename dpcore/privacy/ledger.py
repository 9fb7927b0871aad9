"""A privacy ledger: releases recorded as entries, their totals and their JSON file (DESIGN §7,
§12).

An application that makes releases one after another (a notebook, a dashboard session) keeps
a *ledger*: a list of entries, one per release, each a plain dict with the fields
:data:`ENTRY_FIELDS`. An entry is built from the release's
:class:`~dpcore.privacy.PrivacyEvent` (:func:`release_entry`, :func:`ledger_entry`): its ε, δ,
µ, guarantee and label come from the release's own record, never from parsing its label.

* **Group privacy.** Each entry keeps ``rows``, the rows one person contributed to the data
  when the release was made; it counts per person at those rows for good (:func:`group`:
  pure ε-DP becomes kε, (ε, δ) becomes (kε, k e^{(k−1)ε} δ), µ-GDP becomes kµ).
* **Totals.** :func:`ledger_totals` composes the entries, each at its own rows, with
  :class:`~dpcore.privacy.PrivacyAccountant`. A total is only as strong as its weakest entry:
  with an approximately private entry (MCMC, δ not certified) it states no δ
  (:func:`delta_text` says :data:`~dpcore.privacy.accountant.UNCERTIFIED_DELTA`, never δ = 0).
* **File.** :func:`ledger_json` writes the ledger as JSON (``{"dpcore_ledger": 1, "cap": ...,
  "entries": [...]}``); :func:`read_ledger` reads it back, refusing anything else with a
  message naming the entry and the field. Files saved before entries recorded their rows load
  at 1 row per person, with a note saying so.

Nothing here draws anything or reads any private value: the ledger holds guarantees only.
"""

from __future__ import annotations

import datetime as _dt
import json

import numpy as np

from .accountant import GUARANTEES, UNCERTIFIED_DELTA, PrivacyAccountant, PrivacyEvent

#: Fields of a ledger entry, as written and read back. ``rows``: the rows one person
#: contributed when the release was made; the entry counts at it (group privacy) for good.
ENTRY_FIELDS = ("page", "mechanism", "epsilon", "delta", "mu", "rows", "label", "guarantee",
                "note", "time")
#: Version mark of the ledger file format (the value of its ``"dpcore_ledger"`` key).
FORMAT_VERSION = 1

__all__ = [
    "ENTRY_FIELDS",
    "FORMAT_VERSION",
    "delta_text",
    "entry_event",
    "entry_rows",
    "group",
    "grouped_event",
    "ledger_accountant",
    "ledger_entry",
    "ledger_json",
    "ledger_totals",
    "load_json",
    "parse_ledger",
    "read_ledger",
    "release_entry",
]


# ---------------------------------------------------------------------- group privacy
def group(epsilon=None, delta=None, mu=None, rows=1):
    """A release's guarantee for a group of ``rows`` rows (one person).

    Group privacy along a path of ``rows`` single-row replacements: pure ε-DP gives
    ``rows * ε``; (ε, δ) gives ``(rows ε, rows e^{(rows - 1) ε} δ)``; µ-GDP gives ``rows µ``.
    δ None (not certified) stays None.

    Parameters
    ----------
    epsilon, delta, mu : float or None
        The release's guarantee per row.
    rows : int
        Rows one person contributes (1: unchanged).

    Returns
    -------
    (epsilon, delta, mu) : tuple of float or None
    """
    k = int(rows)
    if k == 1:
        return epsilon, delta, mu
    eps = None if epsilon is None else k * float(epsilon)
    if delta is not None and delta > 0 and epsilon is not None:
        delta = k * float(np.exp(min((k - 1) * float(epsilon), 700.0))) * float(delta)
    return eps, delta, None if mu is None else k * float(mu)


def grouped_event(*, epsilon=None, delta=None, mu=None, guarantee, label=None, rows=1):
    """The :class:`~dpcore.privacy.PrivacyEvent` of a release counted at ``rows`` rows per
    person (:func:`group`), e.g. a release about to be made, to check it against a cap.

    Parameters
    ----------
    epsilon, delta, mu : float or None
        The release's guarantee per row.
    guarantee : str
        One of :data:`~dpcore.privacy.accountant.GUARANTEES`.
    label : str, optional
        Its label (default: ``guarantee``).
    rows : int

    Returns
    -------
    PrivacyEvent
    """
    eps, delta, mu = group(epsilon, delta, mu, rows)
    return PrivacyEvent(epsilon=None if eps is None else float(eps),
                        delta=None if delta is None else float(delta),
                        mu=None if mu is None else float(mu), guarantee=guarantee,
                        label=str(guarantee if label is None else label))


# ---------------------------------------------------------------------- entries
def entry_rows(entry):
    """The rows per person a ledger entry was recorded at (1 for an entry without them)."""
    return max(1, int(entry.get("rows") or 1))


def ledger_entry(page, event, *, mechanism, rows=1, note="", time=None):
    """A ledger entry (a dict of :data:`ENTRY_FIELDS`) for a release's privacy event.

    Parameters
    ----------
    page : str
        Where the release was made.
    event : PrivacyEvent
        Its guarantee per row (:meth:`PrivacyEvent.of` for a release, or built explicitly for
        a release made by another library).
    mechanism : str
        The release's mechanism.
    rows : int
        Rows one person contributed when it was made (at least 1).
    note : str
    time : str, optional
        When it was made (default: now, ``HH:MM:SS``).

    Returns
    -------
    dict

    Raises
    ------
    TypeError
        If ``event`` is not a :class:`~dpcore.privacy.PrivacyEvent`.
    """
    if not isinstance(event, PrivacyEvent):
        raise TypeError(f"`event` must be a PrivacyEvent, got {type(event).__name__}.")
    return {
        "page": page,
        "mechanism": mechanism,
        "epsilon": event.epsilon,
        "delta": event.delta,
        "mu": event.mu,
        "rows": max(1, int(rows)),
        "label": event.label,
        "guarantee": event.guarantee,  # from the proof, never parsed from the label
        "note": note,
        "time": _dt.datetime.now().strftime("%H:%M:%S") if time is None else time,
    }


def release_entry(page, release, *, rows=1, note="", time=None):
    """The ledger entry of ``release`` (a :class:`dpcore.release.Release`): its
    :meth:`PrivacyEvent.of <dpcore.privacy.PrivacyEvent.of>` and its mechanism
    (:func:`ledger_entry`)."""
    return ledger_entry(page, PrivacyEvent.of(release), mechanism=release.mechanism, rows=rows,
                        note=note, time=time)


def entry_event(entry):
    """The :class:`~dpcore.privacy.PrivacyEvent` an entry counts as in a total: its guarantee
    at the rows per person it was recorded at (:func:`group`, :func:`entry_rows`)."""
    return grouped_event(epsilon=entry["epsilon"], delta=entry["delta"], mu=entry["mu"],
                         guarantee=entry.get("guarantee"), label=entry["label"],
                         rows=entry_rows(entry))


# ---------------------------------------------------------------------- totals
def ledger_accountant(entries, *, epsilon_cap=None, delta=1e-6):
    """A :class:`~dpcore.privacy.PrivacyAccountant` holding ``entries`` as they were recorded
    (a cap set later removes nothing), each at its own rows per person (:func:`entry_event`).

    Parameters
    ----------
    entries : iterable of dict
    epsilon_cap : float, optional
        The cap later releases are checked against.
    delta : float
        The δ at which totals involving Gaussian DP are stated.

    Returns
    -------
    PrivacyAccountant
    """
    acc = PrivacyAccountant(epsilon_cap=epsilon_cap, delta=delta)
    acc.events = [entry_event(e) for e in entries]
    return acc


def ledger_totals(entries):
    """Totals over entries (:meth:`PrivacyAccountant.totals
    <dpcore.privacy.PrivacyAccountant.totals>`): one ε at the accountant's δ (δ = 0 when every
    release is pure ε-DP from an exact sampler; no δ, ``delta_certified`` False, when one is
    only approximately private), the µ of the Gaussian-DP releases, and counts of approximate
    and non-private releases (never added). Each entry counts per person at the rows it was
    recorded at (group privacy)."""
    return ledger_accountant(entries).totals()


def delta_text(totals):
    """How a total states its δ: ``"δ = 0"``, ``"δ = 1e-06"``, or, when it includes an
    approximately private release, :data:`~dpcore.privacy.accountant.UNCERTIFIED_DELTA`
    (never δ = 0 there)."""
    if totals.get("delta") is None or not totals.get("delta_certified", True):
        return UNCERTIFIED_DELTA
    return f"δ = {totals['delta']:.2g}"


# ---------------------------------------------------------------------- the file
def load_json(data, what):
    """``data`` (bytes or text) parsed as JSON; ValueError saying the file is not a ``what``
    when it is not JSON."""
    try:
        return json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"The file is not a {what} (not JSON: {exc}).") from exc


def ledger_json(entries, *, cap=None):
    """The ledger as JSON text: its entries (each with its rows per person) and the cap."""
    return json.dumps({"dpcore_ledger": FORMAT_VERSION, "cap": cap,
                       "entries": [{**{k: e.get(k) for k in ENTRY_FIELDS},
                                    "rows": entry_rows(e)} for e in entries]},
                      indent=2)


def _check_rows(value, k, max_rows=None):
    """An entry's ``rows``: a whole number from 1 to ``max_rows`` (no upper end if None);
    ValueError naming the entry otherwise."""
    whole = (isinstance(value, int) or (isinstance(value, float) and value.is_integer()))
    if (isinstance(value, bool) or not whole or value < 1
            or (max_rows is not None and value > max_rows)):
        span = f"from 1 to {max_rows:,}" if max_rows is not None else "from 1 up"
        raise ValueError(f"Ledger entry {k}: `rows` (rows one person contributes) must be a "
                         f"whole number {span}, not {value!r}.")
    return int(value)


def _missing_rows_note(missing, obj):
    """What loading does with entries saved before ledgers recorded their rows per person."""
    which = (f"entry {missing[0]}" if len(missing) == 1
             else f"{len(missing)} entries ({', '.join(map(str, missing[:10]))}"
                  f"{', …' if len(missing) > 10 else ''})")
    old = obj.get("rows_per_person")  # the session's value when such a file was saved
    then = (f" The file was saved with the sidebar at {old} rows per person: if these releases "
            f"were made for people with {old} rows each, their guarantee per person is {old} "
            "times weaker than counted here." if isinstance(old, int)
            and not isinstance(old, bool) and old > 1 else "")
    return (f"This ledger was saved before each entry recorded its rows per person: {which} "
            f"count{'s' if len(missing) == 1 else ''} at 1 row per person.{then}")


def read_ledger(data, *, max_rows=None):
    """Entries of a ledger file (bytes or text, :func:`ledger_json`) and notes on how it was
    read.

    Entries without ``rows`` (files saved before entries recorded it) count at 1 row per
    person, which a note says.

    Parameters
    ----------
    data : bytes or str
    max_rows : int, optional
        Largest ``rows`` accepted (None: no upper end).

    Returns
    -------
    entries : list of dict
        Only the documented fields (:data:`ENTRY_FIELDS`).
    notes : list of str

    Raises
    ------
    ValueError
        With a clear message (naming the entry and field) on anything else.
    """
    obj = load_json(data, "ledger")
    if not isinstance(obj, dict) or obj.get("dpcore_ledger") != FORMAT_VERSION:
        raise ValueError("The file is not a ledger downloaded from this dashboard.")
    out, missing = [], []
    for k, e in enumerate(obj.get("entries", []), start=1):
        if not isinstance(e, dict):
            raise ValueError(f"Ledger entry {k} is not an object.")
        entry = {f: e.get(f) for f in ENTRY_FIELDS}
        for f in ("epsilon", "delta", "mu"):
            v = entry[f]
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))
                                  or not v >= 0):
                raise ValueError(f"Ledger entry {k}: `{f}` must be a number >= 0 or empty.")
        if entry["guarantee"] not in GUARANTEES:
            raise ValueError(f"Ledger entry {k}: unknown guarantee {entry['guarantee']!r}.")
        if "rows" in e:
            entry["rows"] = _check_rows(e["rows"], k, max_rows)
        else:
            entry["rows"] = 1
            missing.append(k)
        out.append(entry)
    return out, [_missing_rows_note(missing, obj)] if missing else []


def parse_ledger(data, *, max_rows=None):
    """Entries of a ledger file (:func:`read_ledger` without its notes)."""
    return read_ledger(data, max_rows=max_rows)[0]
