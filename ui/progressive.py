"""Progressive opening: a page's first run may end at its first chart and the browser asks for
the rest (:func:`after_first_chart`); :class:`ValuesOnly` reads settings without drawing them."""


from __future__ import annotations

import os

import streamlit as st

from .widgets import resend_values

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
