"""Streamlit session helpers shared by the pages: the privacy ledger and shareable URLs.

This is the only ``ui`` module that imports Streamlit (figures stay testable without it).

* The **privacy ledger** lives in ``st.session_state`` (one per browser session, never shared):
  every release a page makes is recorded with its ε / µ / δ and its guarantee; the sidebar shows
  the list and one total composed by :class:`dpcore.privacy.PrivacyAccountant` (pure DP adds ε,
  Gaussian DP composes as sqrt(sum µ²), both combine into one ε at δ; non-private releases are
  counted apart, never added).
* **Shareable scenarios**: widget defaults are read from the URL query string and the current
  settings are written back, so copying the URL shares the scenario (never uploaded data).
"""

from __future__ import annotations

import datetime as _dt
from types import SimpleNamespace

import streamlit as st

from dpcore.privacy import PrivacyAccountant

LEDGER_KEY = "privacy_ledger"


# ---------------------------------------------------------------------- ledger
def ledger():
    """The list of ledger entries of this session (created on first use)."""
    return st.session_state.setdefault(LEDGER_KEY, [])


def record_release(page, release, note=""):
    """Add a :class:`dpcore.release.Release` to the session's ledger and return the entry."""
    entry = {
        "page": page,
        "mechanism": release.mechanism,
        "epsilon": release.epsilon,
        "delta": release.delta,
        "mu": release.mu,
        "label": release.label,
        "guarantee": release.guarantee,  # from the proof, never parsed from the label
        "note": note,
        "time": _dt.datetime.now().strftime("%H:%M:%S"),
    }
    ledger().append(entry)
    return entry


def ledger_totals(entries):
    """Totals over entries, composed by :class:`dpcore.privacy.PrivacyAccountant`: one ε at the
    accountant's δ (δ = 0 when every release is pure ε-DP from an exact sampler), the µ of the
    Gaussian-DP releases, and counts of approximate and non-private releases (never added)."""
    acc = PrivacyAccountant()
    for e in entries:
        acc.spend(SimpleNamespace(epsilon=e["epsilon"], delta=e["delta"], mu=e["mu"],
                                  guarantee=e.get("guarantee"), label=e["label"]))
    return acc.totals()


def render_ledger():
    """Draw the ledger in the sidebar."""
    entries = ledger()
    with st.sidebar:
        st.header("Privacy ledger")
        if not entries:
            st.caption("No releases yet. Every private release of this session appears here.")
            return
        # Few, short columns: the sidebar is narrow and the budget columns must stay visible.
        rows = [
            {
                "page": e["page"],
                "ε": "" if e["epsilon"] is None else f"{e['epsilon']:.3g}",
                "δ": "" if e["delta"] is None else f"{e['delta']:.2g}",
                "µ": "" if e["mu"] is None else f"{e['mu']:.3g}",
            }
            for e in entries
        ]
        st.dataframe(rows, hide_index=True, width="stretch")
        tot = ledger_totals(entries)
        text = f"**Total:** ε = {tot['epsilon']:.3g}, δ = {tot['delta']:.2g}"
        if tot["mu"] is not None:
            text += f"; of which Gaussian DP µ = {tot['mu']:.3g}"
        st.markdown(text)
        if tot["not_private"]:
            st.warning(f"{tot['not_private']} release(s) not private (paper mode or the "
                       "sequential scheme).")
        if tot["approximate"]:
            st.warning(f"{tot['approximate']} release(s) only approximately private (MCMC or "
                       "Monte Carlo calibration): their δ is not certified, so the total δ "
                       "is a lower bound.")
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
    """Write the page's current settings to the URL (only the keys given)."""
    for key, value in settings.items():
        text = str(value)
        if st.query_params.get(key) != text:
            st.query_params[key] = text


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
        self.saved.update({k: st.session_state[k] for k in self.keys if k in st.session_state})
        query = {}
        for qkey, key in self.url.items():
            value = st.session_state[key]
            if isinstance(value, (list, tuple)):
                value = ",".join(str(v) for v in value)
            query[qkey] = value
        write_query(**query)
        st.session_state[self.flag_key] = True
