"""Small widgets shared by the pages: uploads kept in session memory, the export buttons of a
script or notebook, expanders built only while open, the formula notes, the budget line of a
bounds estimate."""


from __future__ import annotations

import json

import streamlit as st

#: Width in pixels of a number (``st.metric``) in a :func:`numbers_row`: two a line in a page's
#: left column.
NUMBER_WIDTH = 150


def numbers_row(where=st):
    """A row of numbers (``st.metric(..., width=NUMBER_WIDTH)``) that wraps: two a line in a
    page's left column. One element for the whole row, where a grid of ``st.columns`` sends
    three per line; a page's first run sends every element before its chart is drawn (the
    Fréchet mean's five numbers as a grid delayed its first plot by about 65 ms,
    docs/measurements.md, session 42)."""
    return where.container(horizontal=True, gap="small")


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


def request_key(request):
    """What a page's caches know a dpcore request by (``st.cache_data(hash_funcs=...)``): its
    script settings as JSON, public inputs only."""
    return json.dumps(request.to_script_dict(), sort_keys=True)


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
    """Set each of ``keys`` present in the session to its own value, through the session state
    under a fresh key (the key deleted first).

    Such a value is kept even in a run where its widget is not drawn (Streamlit drops the
    others), and is sent with the widget when it is drawn: the browser shows it even on a
    widget it builds anew, which it would otherwise build at its default (a number field's
    minimum, an unticked box), sending that default on the next click.

    Why delete first: a value set while the widget has never been drawn (a lazily built
    section's first, closed run) is kept under the key; once the widget is drawn Streamlit
    keeps the later values under the widget's element id and leaves that first value under
    the key. A page switch drops the element id, and the first value came back (Geodesic
    regression's chain length went back to 300 after a visit to another page). Deleting the
    key drops that old value and the key's link to the element id: the value is stored under
    the key alone until the widget is drawn, then under its element id alone, which a page
    switch drops whole, so the page takes its saved copy (``PageSettings.init``)."""
    ss = st.session_state
    for k in keys:
        if k in ss:
            value = ss[k]
            del ss[k]
            ss[k] = value


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
        user's values, and a page switch does not bring back an older one
        (:func:`resend_values`). Those widgets must take their starting value from
        ``st.session_state`` (``setdefault`` or ``PageSettings.init`` before the widget), not
        from ``value=``; every such key given a value while the expander is closed must be
        listed here.
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


def lazy_tabs(labels, key, *, keep=None, where=st):
    """Stateful tabs (``on_change="rerun"``) whose content a page builds only in the open one
    (``tab.open``): the first tab is the only one drawn on opening, so the others' charts and
    widgets do not delay the page's first plot.

    Parameters
    ----------
    labels : sequence of str
    key : str
        Widget key of the open tab (``st.session_state[key]`` holds its label).
    keep : dict, optional
        Tab label -> widget keys drawn in that tab: kept while it is closed and sent again
        when it opens, as :func:`lazy_expander`'s ``keep``.
    where : module or DeltaGenerator

    Returns
    -------
    The tab containers; each has ``open`` (True for the open one).
    """
    tabs = where.tabs(list(labels), key=key, on_change="rerun")
    opened = next((label for label, tab in zip(labels, tabs, strict=True) if tab.open), labels[0])
    was_open = f"{key}__was_open"
    previous = st.session_state.get(was_open, labels[0])
    st.session_state[was_open] = opened
    for label, keys in (keep or {}).items():
        if label != opened or previous != opened:
            resend_values(keys)
    return tabs


def formula_notes(key, render, where=st):
    """The page's formulas in a lazy expander (:func:`lazy_expander`), so they are not typeset
    (KaTeX) before the page's first figure. ``render()`` draws them."""
    box = lazy_expander("Teaching notes: the formulas behind this page", key, where=where)
    if box is not None:
        with box:
            render()
