"""Progress, time left and Cancel for long runs on the pages (issue 14 point 7).

Usage in a page, around a library call that accepts ``progress=``::

    cancelled_notice("gr_release")                 # says so after a cancelled run
    with RunProgress("Drawing the release", key="gr_release", estimate=work.seconds) as bar:
        release = run(..., progress=bar)

The Cancel button works through Streamlit itself: clicking it during the run asks for a rerun,
and Streamlit stops the running script at its next call into Streamlit, which is the next update
of the bar. Nothing after the interrupted call runs, so a cancelled release is neither shown nor
recorded in the ledger. The button's callback only leaves a note for the next run.
"""

from __future__ import annotations

import time

import streamlit as st

#: Seconds between two updates of the bar (each update is also where a Cancel takes effect).
UPDATE_EVERY = 0.25


def _flag(key):
    return f"{key}__cancelled"


def _finished(key):
    return f"{key}__finished"


def _mark_cancelled(key):
    # A click that reaches the server after the run finished cancels nothing: its result was
    # kept (and recorded), so no "cancelled" notice.
    if not st.session_state.pop(_finished(key), False):
        st.session_state[_flag(key)] = True


def cancelled_notice(key, what="The run"):
    """Show (once) that the last run under ``key`` was cancelled; True if it was."""
    if st.session_state.pop(_flag(key), False):
        st.info(f"{what} was cancelled: nothing was released or recorded in the ledger.",
                icon=":material/cancel:")
        return True
    return False


def format_seconds(seconds):
    """``'42 s'``, ``'3 min 05 s'`` or ``'1 h 02 min'``."""
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {(seconds % 3600) // 60:02d} min"


def time_left(fraction, elapsed, estimate=None):
    """Seconds left: from the rate so far once 2% is done, else from the a-priori estimate
    (None when neither is known)."""
    if fraction >= 1.0:
        return 0.0
    if fraction >= 0.02 and elapsed > 0:
        return elapsed * (1.0 - fraction) / fraction
    if estimate is not None:
        return max(0.0, float(estimate) - elapsed)
    return None


class RunProgress:
    """A progress bar with the time elapsed, the time left and a Cancel button.

    The instance is the progress callback: ``bar(fraction)`` with ``fraction`` in ``[0, 1]``
    (see :mod:`dpcore._progress`). Used as a context manager, the bar and button disappear when
    the run ends.

    Parameters
    ----------
    label : str
        What runs, e.g. ``"Drawing the release"``.
    key : str
        Widget key prefix of the Cancel button (unique on the page).
    estimate : float, optional
        A-priori estimate of the run's seconds (from :mod:`dpcore.release.work`), used for the
        time left until the run's own rate is known.
    container : optional
        Where to draw (default: the main area).
    """

    def __init__(self, label, *, key, estimate=None, container=None):
        self.label, self.key, self.estimate = label, key, estimate
        st.session_state.pop(_finished(key), None)
        # An st.empty placeholder holding the bar and the button: emptied, both are gone
        # (emptying the container itself would only add an empty element to it).
        self._slot = (container or st).empty()
        self._box = self._slot.container()
        self._bar = self._box.progress(0.0, text=self._text(0.0, 0.0))
        self._box.button("Cancel", key=f"{key}_cancel", on_click=_mark_cancelled, args=(key,),
                         icon=":material/stop_circle:",
                         help="Stop this run. Nothing is released or recorded.")
        self._start = time.perf_counter()
        self._last = -1.0
        self.fraction = 0.0

    def _text(self, fraction, elapsed):
        left = time_left(fraction, elapsed, self.estimate)
        parts = [f"{self.label}: {100 * fraction:.0f}%", f"{format_seconds(elapsed)} elapsed"]
        if left is not None:
            parts.append(f"about {format_seconds(left)} left")
        return " · ".join(parts)

    def __call__(self, fraction):
        fraction = min(1.0, max(0.0, float(fraction)))
        self.fraction = max(self.fraction, fraction)
        now = time.perf_counter()
        if now - self._last < UPDATE_EVERY and fraction < 1.0:
            return
        self._last = now
        self._bar.progress(self.fraction, text=self._text(self.fraction, now - self._start))

    def close(self):
        """Remove the bar and the Cancel button."""
        self._slot.empty()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        # A cancel arrives as Streamlit's own control exception (not an Exception): leave the
        # page to the rerun it asked for instead of drawing into the stopped run.
        if exc_type is None or issubclass(exc_type, Exception):
            self.close()
        if exc_type is None:  # after close(), where a Cancel in time still stops the run
            st.session_state[_finished(self.key)] = True
        return False


def show_work(work, ok, *, on_page, caption=None, where=None):
    """The estimated work of the request a button would make, before it runs.

    Within the budget: a caption (``caption``, default the estimate's first line) with the
    details in its help. Above it: the library's refusal (:func:`dpcore.release.work.
    refusal_message`) and what to change on this page (``on_page``); the caller disables its
    button.
    """
    from dpcore.release.work import refusal_message

    where = where or st
    if ok:
        where.caption(caption or work.describe().splitlines()[0], help=work.describe())
    else:
        reason = (refusal_message(work)
                  or f"{work.describe()}\n\nThis is above the work budget of this page.")
        where.error(f"{reason}\n\nOn this page: {on_page}", icon=":material/timer:")
