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

A button may make further releases on the same confirmation (Linear regression's comparison
with diffprivlib at the same ε): each is a :class:`Companion` with a request of its own, whose
``event()`` enters the cost line (the total of all of them, checked against the cap as one) and
makes its own ledger entry after the run::

    dpl = Companion("diffprivlib", baseline_request, lambda: baseline_request.fit_lines(x, y),
                    what="diffprivlib's comparison")
    entry = release_panel(PAGE, request, make, key="lr", signature=..., companions=[dpl])
    entry.get("diffprivlib")  # its result, or entry["diffprivlib_error"] if it failed
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st

from dpcore.privacy import PrivacyEvent
from dpcore.privacy.ledger import group

from .ledger import planned_cost, record_event, record_release, rows_per_person, show_cost
from .progress import RunProgress, cancelled_notice, show_work
from .release_flow import release_button
from .risk import show_risk


@dataclass(frozen=True)
class Companion:
    """A further release made on the confirmation of a panel's release, e.g. a baseline
    library's at the same budget (made outside dpcore).

    Parameters
    ----------
    key : str
        Where its result is kept in the panel's entry (``entry[key]``); a failed one leaves
        ``entry[f"{key}_error"]`` (the message) and nothing in the ledger.
    request : object
        What the release is, before any data: ``event()`` (a
        :class:`~dpcore.privacy.PrivacyEvent` per row, with ε and no µ, e.g. ε-DP) gives its
        part of the cost line and, after the run, its ledger entry, with ``mechanism`` and
        ``note``.
    make : callable
        ``make()`` makes the release and returns its result (values for the page; nothing is
        recorded from it).
    what : str
        Its name in the cost line (e.g. "diffprivlib's comparison").
    """

    key: str
    request: object
    make: Callable
    what: str


def release_panel(page, request, make_release, *, key, signature, work=None, work_ok=True,
                  work_caption=None, label="Drawing the release", on_page="", disabled=False,
                  help=None, button_box=None, event=None, button=None, run=None, last=None,
                  companions=(), what="this page's release"):
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
    companions : sequence of Companion
        Further releases made on the same confirmation, after this one (see
        :class:`Companion`). The cost line and the risk box are then those of all the
        releases together (basic composition: their ε add up), and the line names each
        release's own cost (``what`` is this one's name there); each release gets its own
        ledger entry. A Cancel keeps and records none of them.

    Returns
    -------
    dict or None
        ``{"release", "seconds", "signature", **extra}``, with each companion's result (or
        error) under its key.
    """
    event = request.event() if event is None else event
    parts = [event] + [c.request.event() for c in companions]
    total = composed_event(parts)
    cost = planned_cost(epsilon=total.epsilon, mu=total.mu, delta=total.delta,
                        guarantee=total.guarantee, label=event.label)
    show_cost(cost, parts_note([what] + [c.what for c in companions], parts)
              if companions else "")
    show_risk(key, total)
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
        _make_and_record(page, make_release, run=run, label=label, last=last,
                         signature=signature, estimate=None if work is None else work.seconds,
                         companions=companions)
    release_button(button, cost, disabled=disabled or not work_ok, help=help,
                   container=slot.container())
    kept = st.session_state.get(last)
    return kept if kept is not None and kept["signature"] == signature else None


def composed_event(events):
    """One event for releases made together (basic composition): the first event when there
    is one, else the sum of the ε (and δ; None when one is not certified) of those that compose,
    approximately private if one of them is. Releases listed apart (not private) add nothing;
    the first event when none composes.

    Raises
    ------
    ValueError
        For a µ (Gaussian DP) among several events: they compose in ε here.
    """
    if len(events) == 1:
        return events[0]
    if any(e.mu is not None or e.epsilon is None for e in events):
        raise ValueError("Releases made together compose in ε here: a Gaussian-DP (µ) "
                         "release cannot have companions.")
    counted = [e for e in events if e.composes]
    if not counted:
        return events[0]
    deltas = [e.delta for e in counted]
    guarantee = ("approximately private" if any(e.guarantee == "approximately private"
                                                for e in counted) else "private")
    return PrivacyEvent(epsilon=float(sum(e.epsilon for e in counted)),
                        delta=None if None in deltas else float(sum(deltas)), mu=None,
                        guarantee=guarantee, label=events[0].label)


def parts_note(names, events):
    """After the cost line of several releases on one confirmation: each one's own cost (per
    person at the page's rows) and label, from its event."""
    rows = rows_per_person()
    said = []
    for name, e in zip(names, events, strict=True):
        eps = group(e.epsilon, e.delta, None, rows)[0]
        said.append(f"{name} ε = {eps:.3g} (labelled {e.label})")
    return (f" ({len(events)} releases on one confirmation, each recorded in the ledger: "
            + "; ".join(said) + ".)")


def _make_and_record(page, make_release, *, run, label, last, signature, estimate,
                     companions=()):
    """Make the release (then its companions) under a progress bar, record each in the
    ledger and keep them; a failed release says why (nothing is recorded), a failed companion
    is kept as its error (nothing recorded for it). A Cancel interrupts the run inside the
    bar's block: nothing after it runs, nothing is recorded."""
    start = time.perf_counter()
    try:
        with RunProgress(label, key=run, estimate=estimate) as bar, \
                warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = make_release(bar)
            made = [_make_companion(c) for c in companions]
    except Exception as exc:  # said on the page, nothing kept or recorded (a Cancel is not
        # an Exception: Streamlit's rerun and stop derive from BaseException)
        st.error(f"The release failed: {exc}", icon=":material/error:")
        return
    release, extra = out if isinstance(out, tuple) else (out, {})
    record_release(page, release)
    kept = {"release": release, **extra}
    for c, (result, error) in zip(companions, made, strict=True):
        if error is not None:
            kept[f"{c.key}_error"] = error
            continue
        # Its ledger entry is its request's event, the one its cost line stated.
        record_event(page, c.request.event(), mechanism=c.request.mechanism,
                     note=getattr(c.request, "note", ""))
        kept[c.key] = result
    st.session_state[last] = {**kept, "signature": signature,
                              "seconds": time.perf_counter() - start}


def _make_companion(companion):
    """``(result, None)``, or ``(None, message)`` when it failed (e.g. its library could not
    be imported): the page's release stands without it."""
    try:
        return companion.make(), None
    except Exception as exc:
        return None, f"{type(exc).__name__}: {exc}"
