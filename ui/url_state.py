"""Shareable scenarios: widget starting values read from the URL query string (and from the
settings a page kept for a page switch), the current settings written back (never data)."""


from __future__ import annotations

import streamlit as st


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

    Call :meth:`init` right before the widget is drawn. A widget given its value in a run
    where it is not drawn (one in a section built only while open) must be listed in that
    section's ``keep`` (:func:`ui.widgets.lazy_expander`): otherwise Streamlit keeps that
    first value under the key next to the user's later ones, and brings it back after a page
    switch instead of letting the saved copy in.

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

    def finish(self, page_end=True):
        """Save the settings in the session, write them to the URL and, at the page's end (not
        at a fragment's: ``page_end=False``), mark the page initialised: from then on the URL
        is no longer read. A fragment inside the page must leave that mark to the page's end,
        which a visit's first run, cut at its chart (:mod:`ui.first_paint`), does not reach:
        the settings drawn after the cut are read from the URL in the run that follows."""
        self.saved.update({k: st.session_state[k] for k in self.keys if k in st.session_state})
        query = {}
        for qkey, key in self.url.items():
            value = st.session_state[key]
            if isinstance(value, (list, tuple)):
                value = ",".join(str(v) for v in value)
            query[qkey] = value
        write_query(**query)
        if page_end:
            st.session_state[self.flag_key] = True


def starting_value(key, value, choices=None):
    """Give widget ``key`` its starting value ``value`` through the session state, unless it
    holds one (in ``choices``, when given). Returns the value held; draw the widget without
    ``value=`` or ``index=``."""
    ss = st.session_state
    if key not in ss or (choices is not None and ss[key] not in choices):
        ss[key] = value
    return ss[key]
