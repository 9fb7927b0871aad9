"""One release panel for the pages that release (issue 29 point 4).

It takes the release's dpcore request and draws, in order: the cost line (the request's privacy
event, checked against the session's cap before anything is drawn), the disclosure-risk box,
the estimated time, the notices of a cancelled or failed run, and the Release button, which
spends only after a confirmation stating the cost. On the run the confirmation starts, the
release runs under a progress bar with Cancel (:class:`ui.progress.RunProgress`) and is recorded
in the ledger and kept in the session for this page. While it runs a disabled stand-in holds the
button's place; the button is drawn after the run, in that place, so the page shows the release
in the same run: one rerun per release (the dialog's), where the flow before asked for a second
one to enable the button again.

Usage in a page::

    entry = release_panel(PAGE, request, lambda bar: request.run(y, progress=bar),
                          key="fm", signature=(fingerprint, request), work=work)
    if entry is not None:
        show_release(entry["release"])
"""

from __future__ import annotations

import time
import warnings

import streamlit as st

from .ledger import planned_cost, record_release, show_cost
from .progress import RunProgress, cancelled_notice, show_work
from .release_flow import release_button
from .risk import show_risk


def release_panel(page, request, make_release, *, key, signature, work=None, work_ok=True,
                  work_caption=None, label="Drawing the release", on_page="", disabled=False,
                  help=None, button_box=None, event=None, button=None, run=None, last=None):
    """Draw the release panel of ``request`` and return this page's last release, if it was
    made with ``signature`` (None otherwise).

    Parameters
    ----------
    page : str
        The page's name, in the ledger.
    request : dpcore request
        What the release is: its ``event()`` gives the cost line and the risk box.
    make_release : callable
        ``make_release(progress)`` makes the release and returns it, or ``(release, extra)`` with a
        dict of page data kept with it (e.g. the warnings its run raised); ``progress`` is the
        progress bar (its Cancel stops the run, nothing is then kept or recorded).
    key : str
        The page's key prefix: the risk box's widgets, and by default the button
        (``<key>_release``), the progress bar (``<key>_run``) and the kept release
        (``<key>_last``); ``button``, ``run`` and ``last`` name them otherwise.
    signature : hashable
        What the release was made for (the request and the data's identity): a kept release
        with another signature is not returned (the page says the settings changed).
    work : WorkEstimate, optional
        The release's estimated work (``request.work()``); shown with ``work_ok`` (within
        the work budget), ``work_caption`` (the sentence of the estimate, optional) and
        ``on_page`` (what to lower).
    label : str
        The progress bar's label.
    disabled : bool
        The page's own reasons to refuse (e.g. MCMC not opted in); the accountant's refusal
        and a work estimate above the budget disable the button too.
    button_box : container, optional
        Where the button goes (default: here).
    event : PrivacyEvent, optional
        The request's event, when the page has it already (default: ``request.event()``).

    Returns
    -------
    dict or None
        ``{"release", "seconds", "signature", **extra}``.
    """
    event = request.event() if event is None else event
    cost = planned_cost(epsilon=event.epsilon, mu=event.mu, delta=event.delta,
                        guarantee=event.guarantee, label=event.label)
    show_cost(cost)
    show_risk(key, event)
    if work is not None:
        show_work(work, work_ok, caption=work_caption, on_page=on_page)
    button = button or f"{key}_release"
    run, last = run or f"{key}_run", last or f"{key}_last"
    cancelled_notice(run, "The release")
    slot = (button_box or st).empty()
    confirmed = st.session_state.pop(f"{button}_confirmed", False)
    if confirmed and not (disabled or not work_ok or cost["error"]):
        # While the release runs a disabled stand-in holds the button's place: the browser
        # would otherwise keep showing the previous run's enabled button until this run ends,
        # and a second click would interrupt the release.
        slot.button("Release", key=f"{button}_busy", type="primary", disabled=True,
                    help="A release is running: wait for it, or press Cancel.")
        _run(page, make_release, run=run, label=label, last=last, signature=signature,
             estimate=None if work is None else work.seconds)
    release_button(button, cost, disabled=disabled or not work_ok, help=help,
                   container=slot.container())
    kept = st.session_state.get(last)
    return kept if kept is not None and kept["signature"] == signature else None


def _run(page, make_release, *, run, label, last, signature, estimate):
    """Make the release under a progress bar, record it and keep it; a failed run says why
    (nothing is recorded). A Cancel interrupts the run inside the bar's block: nothing after
    it runs."""
    start = time.perf_counter()
    try:
        with RunProgress(label, key=run, estimate=estimate) as bar, \
                warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = make_release(bar)
    except Exception as exc:  # said on the page, nothing kept or recorded (a Cancel is not
        # an Exception: Streamlit's rerun and stop derive from BaseException)
        st.error(f"The release failed: {exc}", icon=":material/error:")
        return
    release, extra = out if isinstance(out, tuple) else (out, {})
    record_release(page, release)
    st.session_state[last] = {"release": release, **extra, "signature": signature,
                              "seconds": time.perf_counter() - start}
