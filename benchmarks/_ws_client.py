"""A websocket client that behaves like a browser tab of the dashboard (issue 30 point 6).

:class:`BrowserLikeClient` opens one Streamlit session the way Streamlit's frontend does and
keeps the page's state the way the frontend keeps it, without rendering anything. What it does,
as the frontend (streamlit 1.67, ``static/js/index.*.js``) does:

* **Loading.** ``GET`` of the page's URL (the HTML, Streamlit's single-page fallback) and of
  every script and stylesheet that HTML loads or preloads, the page's ``Link`` header (the
  chart chunk, :func:`ui.serve.preload_chart_library`) included, with ``Accept-Encoding:
  gzip`` (a fresh browser context has an empty cache; the bytes are read, not run); then
  ``/_stcore/health`` (which sets the XSRF cookie) and ``/_stcore/host-config``.
* **Connecting.** The websocket ``/_stcore/stream`` with the page's ``Origin``, the XSRF cookie
  and the subprotocols ``streamlit, <XSRF token>`` (as the frontend's
  ``WebsocketConnection``).
* **Running the page.** The first ``BackMsg`` is ``rerun_script`` with the page's name from its
  URL (``page_name``, no ``page_script_hash`` yet), its query string, no widget states and the
  browser's context (time zone, locale, URL, colour scheme); later reruns name the page by the
  ``page_script_hash`` its ``new_session`` gave and carry the query string the server last set
  (``page_info_changed``), every widget state held and the hashes of the cached messages.
* **ForwardMsgs.** Deltas are applied to an element tree keyed by delta path (an element at a
  path replaces what was there and below it); at the end of a complete run the elements that
  run did not send are removed as stale, for a fragment run those of its fragments only
  (``clearStaleNodes``); a ``new_session`` of another page clears the tree. Cacheable messages
  are kept by hash and a ``ref_hash`` message is replaced by the one it names (the frontend's
  ``ForwardMsgCache``, without its expiry). ``auto_rerun`` starts a timer that asks for a run
  of its fragment every ``interval`` seconds (``is_auto_rerun``, ``st.fragment(run_every=...)``),
  ``stop_auto_rerun`` and a complete run's ``new_session`` stop them (``cleanupAutoReruns``).
* **Widget states** (the frontend's ``WidgetStateManager``). When a widget's element arrives
  its value is committed as the frontend's widgets commit it on mount: the value the server
  sends (``set_value``), else the value already held for that id, else the element's default
  (checkbox and toggle, number input, slider and select slider, radio, select box, text
  input and area, multiselect; a stateful expander's ``expanded`` when the server sets it).
  After a complete run the states of widgets no longer on the page are dropped
  (``removeInactive``). A button press is a ``trigger_value`` sent with every other state, in
  one rerun only; a checkbox click commits the new value and reruns.
* **Script state** (the app's ``data-test-script-state``). ``session_status_changed`` moves
  it between running and not running. A rerun asked for counts as "rerun requested" until a
  run starts (its ``new_session``): stricter than the frontend, which asks for a widget's
  rerun without leaving "notRunning", so :attr:`BrowserLikeClient.idle` never holds between a
  press and the run it asks for.

What it does not do: it runs no JavaScript and renders nothing, so a time here is the
server's time to *send* (the first plot: the ``plotly_chart`` delta received) plus the
network, not a browser's time to *draw* (Plotly's rendering and the browser's layout of every
element before it, about 0.3-1 s of a browser's main thread on the 2-core machine,
``benchmarks/bench_browser.py``); it fetches only the static files the HTML names (not the
chunks the frontend imports later on demand, nor fonts and images); a timer fires on time,
where a browser's fires once its busy main thread is free; it sends no heartbeat, no metrics,
and does not reconnect; a stateful tab container's state is never sent (the frontend sends one
only when the user or the server changes the tab); widget kinds it does not know (file
uploaders, data editors, charts with selections) are listed in :attr:`unknown_widgets` and
their states are left to the server.
"""

from __future__ import annotations

import asyncio
import gzip
import re
import time
import urllib.request
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from urllib.parse import urljoin

#: Root containers of a delta path (``RootContainer.proto``).
MAIN, SIDEBAR = 0, 1
#: ``Alert.Format.ERROR``: an ``st.error`` (the browser's ``stAlertContentError``); an
#: ``exception`` element is the browser's ``stException``. Either is an error on the page.
ERROR_ALERT = 1
#: The browser's context sent with each rerun (``ContextInfo``).
CONTEXT = {"timezone": "UTC", "timezone_offset": 0, "locale": "en-US", "is_embedded": False,
           "color_scheme": "light"}
#: HTTP requests of the static files made at once by one client (a browser: 6 a host).
PARALLEL_FETCHES = 6
_ASSET = re.compile(r'<(?:script|link)\b[^>]*?\b(?:src|href)="(\./static/[^"]+)"')
_LINK = re.compile(r"<([^>]+)>\s*;\s*rel=modulepreload")


def _has(msg, name):
    """Whether the (optional) field ``name`` of ``msg`` is set (True for fields without
    presence, whose value is then always meaningful)."""
    try:
        return msg.HasField(name)
    except ValueError:
        return True


def committed_state(kind, element, held=None):
    """The ``WidgetState`` the frontend commits when a widget's element arrives.

    Parameters
    ----------
    kind : str
        The element's type (``Element.WhichOneof("type")``).
    element : message
        That element's proto (``NumberInput``, ``Slider`` ...).
    held : WidgetState, optional
        The state held for this widget id (the frontend keeps it when the element arrives
        again without ``set_value``).

    Returns
    -------
    WidgetState or None
        None for elements whose state the frontend does not commit on arrival (buttons,
        tabs) or that this client does not know (see :data:`KNOWN_WIDGETS`).
    """
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    if kind not in KNOWN_WIDGETS:
        return None
    if held is not None and not getattr(element, "set_value", False):
        return held
    state = WidgetState(id=element.id)
    use_value = getattr(element, "set_value", False)
    if kind == "checkbox":
        state.bool_value = element.value if use_value else element.default
    elif kind == "number_input":
        if use_value and _has(element, "value"):
            value = element.value
        elif _has(element, "default"):
            value = element.default
        else:
            return None  # an empty number field: no state
        if element.data_type == element.INT:
            state.int_value = int(value)
        else:
            state.double_value = value
    elif kind == "slider":
        if element.options:  # a select slider: the options' labels
            indices = element.default
            if use_value:
                raw = list(element.raw_value)
                if raw:
                    state.string_array_value.data.extend(raw)
                    return state
                indices = element.value
            state.string_array_value.data.extend(element.options[int(i)] for i in indices)
        else:
            state.double_array_value.data.extend(element.value if use_value
                                                 else element.default)
    elif kind in ("radio", "selectbox"):
        if use_value and _has(element, "raw_value"):
            state.string_value = element.raw_value
        elif element.options and _has(element, "default"):
            state.string_value = element.options[element.default]
        else:
            return None  # nothing selected: no state
    elif kind in ("text_input", "text_area"):
        if use_value and _has(element, "value"):
            state.string_value = element.value
        elif _has(element, "default"):
            state.string_value = element.default
        else:
            return None
    elif kind == "multiselect":
        if use_value:
            state.string_array_value.data.extend(element.raw_values)
        else:
            state.string_array_value.data.extend(element.options[i] for i in element.default)
    return state


#: Widgets whose state :func:`committed_state` commits as the frontend does.
KNOWN_WIDGETS = frozenset({"checkbox", "number_input", "slider", "radio", "selectbox",
                           "text_input", "text_area", "multiselect"})
#: Widgets whose state this client does not know how to commit: listed in
#: :attr:`BrowserLikeClient.unknown_widgets` when they appear (buttons hold no state: a press
#: is a trigger; charts and tables have ids but no state unless they take selections, which
#: the dashboard's do not).
UNKNOWN_WIDGETS = frozenset({"audio_input", "button_group", "camera_input", "chat_input",
                             "color_picker", "date_input", "date_time_input", "feedback",
                             "file_uploader", "menu_button", "pagination", "time_input"})


@dataclass
class Node:
    """One element or block of the page: ``kind`` is the element's type, or ``block:<type>``;
    ``run`` the script run that sent it; ``fragment`` its fragment id ("" outside one)."""

    kind: str
    proto: object
    run: str
    fragment: str = ""


@dataclass
class Stats:
    """What a client saw, besides the page itself."""

    messages: int = 0
    bytes: int = 0
    ref_hits: int = 0
    static_files: int = 0
    static_bytes: int = 0
    auto_reruns: int = 0
    runs_finished: dict = field(default_factory=dict)


class BrowserLikeClient:
    """One browser tab of the dashboard, over Streamlit's websocket (see the module's
    docstring for what it does and does not do like a browser).

    Parameters
    ----------
    url : str
        The server (``http://localhost:8501``).
    page : str
        The page's URL path (``geodesic_regression``).
    query_string : str
        The URL's query string, without ``?``.
    fetch_static : bool
        Fetch the HTML's static files as a browser with an empty cache does.
    """

    def __init__(self, url, page, query_string="", fetch_static=True):
        self.url, self.page, self.query_string = url.rstrip("/"), page, query_string
        self.fetch_static = fetch_static
        self.nodes = {}
        self.widgets = {}
        self.cache = {}
        self.page_script_hash = ""
        self.run_id = ""
        self.script_state = "initial"  # rerun_requested, running, not_running
        self.auto_reruns = {}
        self.errors = []
        self.unknown_widgets = set()
        self.seen = {}  # element id -> when it first arrived (time.monotonic())
        self.stats = Stats()
        self.started = self.first_plot = None
        self._ws = None
        self._reader = None
        self._changed = asyncio.Condition()
        self._closed = False

    # ------------------------------------------------------------------ connecting
    async def open(self):
        """Load the page as a browser does and ask for its first run; returns at once (the
        ForwardMsgs are read in a task of their own)."""
        from websockets.asyncio.client import connect

        self.started = time.monotonic()
        page_url = f"{self.url}/{self.page}" + (f"?{self.query_string}"
                                                 if self.query_string else "")
        html, headers, _ = await asyncio.to_thread(_get, page_url)
        if self.fetch_static:
            await self._fetch_static(page_url, html.decode("utf-8", "replace"), headers)
        _, headers, cookie = await asyncio.to_thread(_get, f"{self.url}/_stcore/health")
        await asyncio.to_thread(_get, f"{self.url}/_stcore/host-config")
        token = cookie.get("_streamlit_xsrf")
        extra = {"Origin": self.url}
        if token:
            extra["Cookie"] = f"_streamlit_xsrf={token}"
        self._ws = await connect(
            "ws" + self.url[len("http"):] + "/_stcore/stream",
            subprotocols=["streamlit"] + ([token] if token else []),
            additional_headers=extra, max_size=None, compression=None, ping_interval=None)
        self._reader = asyncio.create_task(self._read())
        await self.rerun()

    async def _fetch_static(self, page_url, html, headers):
        urls = [urljoin(page_url, m) for m in _ASSET.findall(html)]
        link = next((v for k, v in headers.items() if k.lower() == "link"), "")
        urls += [urljoin(page_url, m) for m in _LINK.findall(link)]
        limit = asyncio.Semaphore(PARALLEL_FETCHES)

        async def fetch(u):
            async with limit:
                body, _, _ = await asyncio.to_thread(_get, u)
                self.stats.static_files += 1
                self.stats.static_bytes += len(body)

        await asyncio.gather(*(fetch(u) for u in dict.fromkeys(urls)))

    async def close(self):
        """Close the tab: stop its timers and the websocket."""
        self._closed = True
        for _, task in self.auto_reruns.values():
            task.cancel()
        self.auto_reruns.clear()
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            self._reader.cancel()
            try:
                await self._reader
            except (asyncio.CancelledError, Exception):
                pass

    # ------------------------------------------------------------------ sending
    async def rerun(self, fragment_id="", auto=False, trigger=None):
        """Send ``rerun_script`` as the frontend's ``sendRerunBackMsg`` does: every widget
        state held, plus ``trigger`` (a widget id) pressed for this one run."""
        from streamlit.proto.BackMsg_pb2 import BackMsg

        msg = BackMsg()
        client = msg.rerun_script
        client.query_string = self.query_string
        if self.page_script_hash:
            client.page_script_hash = self.page_script_hash
        else:
            client.page_name = self.page
        client.fragment_id = fragment_id
        client.is_auto_rerun = auto
        client.widget_states.widgets.extend(self.widgets.values())
        if trigger is not None:
            client.widget_states.widgets.add(id=trigger, trigger_value=True)
        client.cached_message_hashes.extend(self.cache)
        for name, value in CONTEXT.items():
            setattr(client.context_info, name, value)
        client.context_info.url = f"{self.url}/{self.page}"
        if not fragment_id:
            self.script_state = "rerun_requested"
        await self._ws.send(msg.SerializeToString())

    async def press(self, key):
        """Press the button with widget key ``key`` (a ``trigger_value``); returns its id."""
        node = self.widget(key)
        if node is None:
            raise LookupError(f"no button {key!r} on the page")
        await self.rerun(trigger=node.proto.id)
        return node.proto.id

    async def click_checkbox(self, label):
        """Tick the checkbox labelled ``label`` (commits True and reruns, as a click)."""
        node = next(n for n in self.nodes.values()
                    if n.kind == "checkbox" and n.proto.label == label)
        state = self.widgets.setdefault(node.proto.id, committed_state("checkbox", node.proto))
        state.bool_value = True
        await self.rerun()

    # ------------------------------------------------------------------ reading
    async def _read(self):
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        try:
            async for data in self._ws:
                msg = ForwardMsg()
                msg.ParseFromString(data)
                self.stats.messages += 1
                self.stats.bytes += len(data)
                await self._handle(msg)
        except Exception as exc:
            if not self._closed:
                self.errors.append(f"websocket: {type(exc).__name__}: {exc}")
        finally:
            if not self._closed:
                self.errors.append("websocket closed by the server")
            async with self._changed:
                self._changed.notify_all()

    async def _handle(self, msg):
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        kind = msg.WhichOneof("type")
        if kind == "ref_hash":
            cached = self.cache.get(msg.ref_hash)
            if cached is None:
                self.errors.append(f"ref_hash {msg.ref_hash} not in the cache")
                return
            self.stats.ref_hits += 1
            full = ForwardMsg()
            full.CopyFrom(cached)
            full.metadata.CopyFrom(msg.metadata)
            msg, kind = full, full.WhichOneof("type")
        elif msg.metadata.cacheable and msg.hash:
            self.cache[msg.hash] = msg
        if kind == "new_session":
            self._new_session(msg)
        elif kind == "delta":
            self._delta(msg)
        elif kind == "session_status_changed":
            running = msg.session_status_changed.script_is_running
            if running:
                self.script_state = "running"
            elif self.script_state != "rerun_requested":
                self.script_state = "not_running"
        elif kind == "navigation":  # the page the app's st.navigation runs
            self.page_script_hash = msg.navigation.page_script_hash
        elif kind == "page_info_changed":
            self.query_string = msg.page_info_changed.query_string
        elif kind == "script_finished":
            self._script_finished(msg)
        elif kind == "auto_rerun":
            self._auto_rerun(msg.auto_rerun)
        elif kind == "stop_auto_rerun":
            for fragment in msg.stop_auto_rerun.fragment_ids:
                self._stop_auto_rerun(fragment)
        elif kind == "session_event":
            event = msg.session_event.WhichOneof("type")
            if event == "script_compilation_exception":
                self.errors.append("compile error: "
                                   + msg.session_event.script_compilation_exception.message)
        elif kind == "page_not_found":
            self.errors.append(f"page not found: {msg.page_not_found.page_name}")
        async with self._changed:
            self._changed.notify_all()

    def _new_session(self, msg):
        session = msg.new_session
        self.run_id = msg.metadata.run.script_run_id
        if self.script_state == "rerun_requested":
            self.script_state = "running"  # the run asked for (or one it replaced) started
        if msg.metadata.run.fragment_ids:
            return
        for fragment in list(self.auto_reruns):
            self._stop_auto_rerun(fragment)
        if self.page_script_hash and session.page_script_hash != self.page_script_hash:
            self.nodes.clear()
        self.page_script_hash = session.page_script_hash

    def _delta(self, msg):
        delta = msg.delta
        path = tuple(msg.metadata.delta_path)
        which = delta.WhichOneof("type")
        if which == "new_element":
            element = delta.new_element
            kind = element.WhichOneof("type")
            proto = getattr(element, kind)
            self._drop_below(path)
            self.nodes[path] = Node(kind, proto, self.run_id, delta.fragment_id)
            self._on_element(kind, proto)
        elif which == "add_block":
            block = delta.add_block
            kind = "block:" + str(block.WhichOneof("type"))
            previous = self.nodes.get(path)
            if previous is None or not previous.kind.startswith("block:"):
                self._drop_below(path)
            self.nodes[path] = Node(kind, block, self.run_id, delta.fragment_id)
            if kind == "block:expandable" and block.id and _has(block.expandable, "expanded"):
                from streamlit.proto.WidgetStates_pb2 import WidgetState

                self.widgets[block.id] = WidgetState(id=block.id,
                                                     bool_value=block.expandable.expanded)

    def _drop_below(self, path):
        n = len(path)
        for other in [p for p in self.nodes if len(p) > n and p[:n] == path]:
            del self.nodes[other]

    def _on_element(self, kind, proto):
        if kind == "plotly_chart" and self.first_plot is None:
            self.first_plot = time.monotonic()
        elif kind == "exception":
            self.errors.append(f"exception: {proto.type}: {proto.message[:300]}")
        elif kind == "alert" and proto.format == ERROR_ALERT:
            self.errors.append(f"error: {proto.body[:300]}")
        widget_id = getattr(proto, "id", "")
        if widget_id:
            self.seen.setdefault(widget_id, time.monotonic())
        if kind in UNKNOWN_WIDGETS:
            self.unknown_widgets.add(kind)
        elif kind in KNOWN_WIDGETS:
            state = committed_state(kind, proto, self.widgets.get(widget_id))
            if state is not None:
                self.widgets[widget_id] = state

    def _script_finished(self, msg):
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        status = msg.script_finished
        name = ForwardMsg.ScriptFinishedStatus.Name(status)
        self.stats.runs_finished[name] = self.stats.runs_finished.get(name, 0) + 1
        if status == ForwardMsg.FINISHED_WITH_COMPILE_ERROR:
            self.errors.append("the script failed to compile")
            return
        run = msg.metadata.run
        if status not in (ForwardMsg.FINISHED_SUCCESSFULLY,
                          ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY):
            return
        if not run.fragment_ids and run.script_run_id != self.run_id:
            return
        fragments = set(run.fragment_ids)
        stale = [p for p, node in self.nodes.items() if node.run != run.script_run_id
                 and (not fragments or node.fragment in fragments)]
        for path in stale:
            self.nodes.pop(path, None)
        active = {node.proto.id for node in self.nodes.values()
                  if getattr(node.proto, "id", "")}
        for widget_id in [w for w in self.widgets if w not in active]:
            del self.widgets[widget_id]

    def _auto_rerun(self, auto):
        if not auto.fragment_id:
            return
        held = self.auto_reruns.get(auto.fragment_id)
        if held is not None and held[0] == auto.interval:
            return
        self._stop_auto_rerun(auto.fragment_id)

        async def tick():
            while True:
                await asyncio.sleep(auto.interval)
                self.stats.auto_reruns += 1
                await self.rerun(fragment_id=auto.fragment_id, auto=True)

        self.auto_reruns[auto.fragment_id] = (auto.interval, asyncio.create_task(tick()))

    def _stop_auto_rerun(self, fragment):
        held = self.auto_reruns.pop(fragment, None)
        if held is not None:
            held[1].cancel()

    # ------------------------------------------------------------------ the page
    async def wait_for(self, predicate, timeout):
        """Wait until ``predicate()`` holds (checked after each ForwardMsg); returns its
        value. Raises ``TimeoutError`` after ``timeout`` seconds, ``ConnectionError`` when
        the websocket closed first."""
        async with asyncio.timeout(timeout):
            async with self._changed:
                while True:
                    value = predicate()
                    if value:
                        return value
                    if self._reader is not None and self._reader.done():
                        raise ConnectionError("the websocket closed: " + "; ".join(self.errors))
                    await self._changed.wait()

    @property
    def idle(self):
        """The script is not running and no rerun is pending (the browser's "notRunning")."""
        return self.script_state == "not_running"

    def seen_at(self, key):
        """When the element with user key ``key`` first arrived (``time.monotonic()``)."""
        suffix = f"-{key}"
        return min((t for i, t in self.seen.items() if i.endswith(suffix)), default=None)

    def widget(self, key):
        """The node of the widget with user key ``key`` (its id ends ``-<key>``), or None."""
        suffix = f"-{key}"
        return next((n for n in self.nodes.values()
                     if getattr(n.proto, "id", "").endswith(suffix)), None)

    def elements(self, kind, root=None):
        """The nodes of element type ``kind`` (in ``root``: :data:`MAIN`, :data:`SIDEBAR`)."""
        return [n for p, n in self.nodes.items()
                if n.kind == kind and (root is None or p[0] == root)]

    def texts(self, root=None):
        """The texts of the markdown, heading and caption elements (in ``root``)."""
        out = []
        for path, node in self.nodes.items():
            if root is not None and path[0] != root:
                continue
            if node.kind in ("markdown", "text", "heading"):
                out.append(node.proto.body)
        return out


def _get(url):
    """``GET url`` as a browser: ``(body, headers, cookies)`` (the body decompressed)."""
    request = urllib.request.Request(url, headers={
        "Accept-Encoding": "gzip", "User-Agent": "classroom-ws-client",
        "Accept": "text/html,application/xhtml+xml,*/*"})
    with urllib.request.urlopen(request, timeout=120) as response:
        body = response.read()
        if response.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        cookies = SimpleCookie()
        for header in response.headers.get_all("Set-Cookie") or ():
            cookies.load(header)
        return body, dict(response.headers), {k: m.value for k, m in cookies.items()}
