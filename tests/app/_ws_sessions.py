"""Sessions of ``test_eight_browser_sessions_release_concurrently`` driven by websocket clients.

Each session is a :class:`benchmarks._ws_client.BrowserLikeClient`: a Streamlit session opened
and kept as the frontend keeps it (the page's HTML and static files, the websocket, the
``rerun_script`` messages with every widget state, the element tree), without rendering. The
clients run in a thread of their own (an asyncio loop) beside the test's Chromium pages, and
step with them: :attr:`WsSessions.loaded` is set once every client shows its page, ready to
release; the clients press Release when the test sets :attr:`WsSessions.go`, at the moment the
Chromium pages are clicked, so that all sessions release at once on the one server.

After its release each client reruns its page once more (the ledger must be read again from the
session's state) and keeps a :class:`View` of what a browser would show.
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from dataclasses import dataclass, field
from urllib.parse import urlencode

from benchmarks._classroom import CONFIRM_KEY, MCMC_OPT_IN, PAGE, RELEASE_KEY
from benchmarks._ws_client import MAIN, SIDEBAR, BrowserLikeClient

WARNING = 2  # Alert.Format.WARNING
#: The sidebar ledger's total line as shown: (ε, δ) or (ε, "δ not certified").
TOTAL = re.compile(r"Total: ε = ([^,\n]+), (?:δ = ([^\s;]+)|(δ not certified))")


def plain(text):
    """Markdown as the browser shows it, for the texts read here (bold marks dropped)."""
    return text.replace("**", "")


def metric(client, label):
    """The value of the metric labelled ``label``, or None."""
    return next((n.proto.body for n in client.elements("metric") if n.proto.label == label),
                None)


def sidebar_total(client):
    """(ε, δ or "δ not certified") of the sidebar's total line, or None."""
    for text in client.texts(SIDEBAR):
        m = TOTAL.search(plain(text))
        if m:
            return m.group(1), m.group(2) or m.group(3)
    return None


@dataclass
class View:
    """What one client's page showed after its release and one more run."""

    errors: list
    captions: str
    label_warnings: int
    total: tuple | None
    total_after_rerun: tuple | None
    mse_nonprivate: str | None
    seconds: float
    unknown_widgets: list = field(default_factory=list)


class WsSessions(threading.Thread):
    """Websocket sessions of the geodesic regression page, one per dict of URL settings.

    Parameters
    ----------
    url : str
        The server.
    settings : list of dict
        Each session's query parameters.
    timeout : float
        Seconds allowed for each step of a session.
    unmixed : str
        Text of the error alert that flags unmixed chains (a diagnostic, not a page error).
    """

    def __init__(self, url, settings, timeout, unmixed):
        super().__init__(daemon=True, name="ws-sessions")
        self.url, self.settings, self.timeout, self.unmixed = url, settings, timeout, unmixed
        self.loaded = threading.Event()
        self.go = threading.Event()
        self.views = []
        self.error = None

    def run(self):
        try:
            asyncio.run(self._drive())
        except BaseException as exc:  # reported by the test (error), never swallowed
            self.error = exc
        finally:
            self.loaded.set()  # never leaves the test waiting on a failed start

    async def _drive(self):
        clients = [BrowserLikeClient(self.url, PAGE, urlencode(s)) for s in self.settings]
        try:
            await asyncio.gather(*(c.open() for c in clients))
            await asyncio.gather(*(self._ready(c) for c in clients))
            self.loaded.set()
            await asyncio.to_thread(self.go.wait)
            t0 = time.perf_counter()
            seconds = await asyncio.gather(*(self._release(c, t0) for c in clients))
            self.views = [await self._view(c, s) for c, s in zip(clients, seconds, strict=True)]
        finally:
            for c in clients:
                await c.close()

    async def _ready(self, c):
        """The page shown, with its fit, and the MCMC opt-in ticked where the page asks."""
        await c.wait_for(lambda: c.idle and c.widget(RELEASE_KEY)
                         and metric(c, "MSE of the non-private fit"), self.timeout)
        if any(n.proto.label == MCMC_OPT_IN for n in c.elements("checkbox")):
            await c.click_checkbox(MCMC_OPT_IN)
        await c.wait_for(lambda: c.idle and c.widget(RELEASE_KEY)
                         and not c.widget(RELEASE_KEY).proto.disabled, self.timeout)

    async def _release(self, c, t0):
        """Release, then *Release now* in the dialog that states the cost; the seconds from
        the common start to the private result."""
        await c.press(RELEASE_KEY)
        await c.wait_for(lambda: c.idle and c.widget(CONFIRM_KEY), self.timeout)
        await c.press(CONFIRM_KEY)
        await c.wait_for(lambda: metric(c, "MSE, private (mean)"), self.timeout)
        seconds = time.perf_counter() - t0
        await c.wait_for(lambda: c.idle, self.timeout)
        return seconds

    async def _view(self, c, seconds):
        total = sidebar_total(c)
        await c.rerun()  # a later run of the page reads the ledger from the session again
        await c.wait_for(lambda: c.idle, self.timeout)
        warnings = [plain(n.proto.body) for n in c.elements("alert", MAIN)
                    if n.proto.format == WARNING]
        return View(
            errors=[e for e in c.errors if self.unmixed not in e],
            captions="\n".join(c.texts(MAIN)),
            label_warnings=sum("Label: approximately private (MCMC" in w for w in warnings),
            total=total, total_after_rerun=sidebar_total(c),
            mse_nonprivate=metric(c, "MSE, non-private"), seconds=seconds,
            unknown_widgets=sorted(c.unknown_widgets))
