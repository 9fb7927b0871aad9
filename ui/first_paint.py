"""A page visit's first run ends at its first chart; the page runs again, whole, right after.

When a visitor opens a page (a new session, a link, or a switch from another page), the page
draws its chart from the settings its widgets will show (each page reads them from the
session state before drawing them) and calls :func:`chart_first`. In the first run of a visit
that run ends there: after a pause of :data:`PAUSE_S` the page runs again, whole
(:func:`streamlit.rerun`). Every later run (a widget changed) is whole from the start.

Why: the browser draws the elements of a run as they arrive, and the chart's element arrives
with the settings widgets the page draws after it; it then commits the chart together with
them (their code is loaded on first use), 0.3-0.5 s later than a bare page draws its chart.
Call :func:`chart_first` right after the chart, before any other element: with a quiet moment
after it the browser draws the chart first. Measured in Chromium (``docs/measurements.md``,
sessions 43-44): the browser takes 0.15-0.2 s from the chart's message to its drawing on the
2-core machine; with a pause of 0.1 s the second run's elements arrived within that time on
most visits and the chart waited for them (1.1-1.2 times the bare-page floor), with
0.15-0.25 s it was drawn alone (0.95-1.08 times the floor) and the whole page came no later.
With 0.3 s (session 45) the second run's work also starts after a poll from another process
(Playwright's, ``benchmarks/bench_browser.py``'s ``polled_s``) has seen the chart: polled
0.97-1.05 times the floor against 0.99-1.20 with 0.2 s; the whole page came no later on five
pages, 0.2-0.4 s later on Sensitivity.

Nothing is drawn in place of Streamlit: the first run is the page's own run cut short, the
second its ordinary run. The settings survive the cut because every widget's starting value
lives outside the widget (:class:`ui.url_state.PageSettings`). ``app.py`` calls :func:`visit`
before each run of a page.
"""

from __future__ import annotations

import time

import streamlit as st

#: Session-state key: the url path of the page that ran last.
PAGE_KEY = "first_paint_page"
#: Session-state key: True in the first run of a visit, until :func:`chart_first` ends it.
FIRST_RUN_KEY = "first_paint_first_run"
#: Seconds between the end of the first run and the start of the second: the browser's quiet
#: moment to draw the chart (0.15 s was enough on the 2-core machine for the browser's own
#: frame, 0.3 s for a poll from outside the page to see it too).
PAUSE_S = 0.3


def visit(url_path):
    """Note that page ``url_path`` runs (``app.py``, before the page): its first run after
    another page's (or the session's first) starts a visit."""
    ss = st.session_state
    ss[FIRST_RUN_KEY] = ss.get(PAGE_KEY) != url_path
    ss[PAGE_KEY] = url_path


def chart_first():
    """Call right after the page's first chart. In the first run of a visit, end the run here
    and run the page again, whole, after :data:`PAUSE_S`. Otherwise return at once."""
    if not st.session_state.get(FIRST_RUN_KEY):
        return
    st.session_state[FIRST_RUN_KEY] = False
    time.sleep(PAUSE_S)
    # An element is a point where Streamlit takes a rerun the visitor asked for meanwhile (a
    # click on another page): that request then ends this run instead of the one below,
    # which would take its place (a rerun asked for while another is pending replaces its
    # page).
    st.empty()
    st.rerun()
