"""The warm-up's bound (issue 30 point 6): ``ui.serve.warm_up_pages`` under a
:class:`ui.serve.WarmUpBudget`, driven by a fake server and a fake CPU clock (no wall time).

The fake server answers each run request of the warm-up's websocket after the page has
"spent" its CPU seconds on the fake clock, :data:`STEP` per poll of the warm-up (each ``recv`` that
times out advances the clock by one poll), so the tests fix exactly how much CPU the warm-up
may hold before it stops, and check what it asked of the server.
"""

from __future__ import annotations

import inspect
import math

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

import ui.serve
from ui.registry import PAGES
from ui.serve import WarmUpBudget, warm_up_pages

#: CPU seconds the fake clock advances per poll of the warm-up (a power of two: exact sums).
STEP = 0.125
CHART_PAGES = [p for p in PAGES if p.chart_on_open and not p.warm_up_last] + [
    p for p in PAGES if p.chart_on_open and p.warm_up_last]
#: Runs of a complete warm-up: one per page that draws a chart on opening.
ALL_RUNS = [p.url_path for p in CHART_PAGES]


class FakeServer:
    """A websocket endpoint and the server process's CPU clock, in one.

    Each run request costs ``run_cost`` CPU seconds: the fake answers ``TimeoutError`` (the
    warm-up's poll) and advances the clock by :data:`STEP` until the cost is spent, then sends
    a text element and ``script_finished``.
    """

    def __init__(self, run_cost=1.0, cut_first=False):
        self.run_cost = run_cost
        # cut_first: each run starts as a visit's first run does (ui.first_paint): ended early
        # for a rerun, whose end comes next.
        self.cut_first = cut_first
        self.clock = 0.0
        self.sent = []  # ("rerun", page) or ("stop", None), in order
        self._left = None  # CPU seconds left in the current run (None: no run)

    def cpu(self):
        return self.clock

    def __call__(self, stream, timeout):
        assert stream.endswith("/_stcore/stream") and stream.startswith("ws://")
        return self

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def send(self, data):
        msg = BackMsg()
        msg.ParseFromString(data)
        if msg.WhichOneof("type") == "rerun_script":
            assert self._left is None, "a run was requested while one was going"
            self.sent.append(("rerun", msg.rerun_script.page_name))
            self._left = self.run_cost
            self._queue = []
        elif msg.WhichOneof("type") == "stop_script":
            self.sent.append(("stop", None))
            self._left = None

    def recv(self, timeout):
        # The warm-up polls, it never blocks for a whole run.
        assert timeout == ui.serve.WARM_UP_POLL_S < 1
        assert self._left is not None, "recv without a run"
        if self._left > 0:
            self._left -= STEP
            self.clock += STEP
            raise TimeoutError
        if not self._queue:
            text, done = ForwardMsg(), ForwardMsg()
            text.delta.new_element.markdown.body = "page"
            done.script_finished = ForwardMsg.FINISHED_SUCCESSFULLY
            self._queue = [done.SerializeToString(), text.SerializeToString()]
            if self.cut_first:
                cut = ForwardMsg()
                cut.script_finished = ForwardMsg.FINISHED_EARLY_FOR_RERUN
                self._queue += [cut.SerializeToString(), text.SerializeToString()]
        data = self._queue.pop()
        if not self._queue:
            self._left = None
        return data


def test_without_a_budget_every_page_runs_to_its_end():
    server = FakeServer(run_cost=1.0)
    done = warm_up_pages("http://localhost:1", budget=WarmUpBudget(math.inf, server.cpu),
                         connect=server)
    assert [r.page for r in done.runs] == ALL_RUNS
    assert all(r.status == "FINISHED_SUCCESSFULLY" for r in done.runs)
    assert done.stopped == "" and ("stop", None) not in server.sent
    assert done.cpu_seconds == pytest.approx(len(ALL_RUNS) * 1.0)


def test_a_run_cut_at_its_chart_is_waited_for_to_its_end():
    # A visit's first run ends early for a rerun (ui.first_paint.chart_first): the warm-up
    # waits for the rerun's end, so the whole page is warmed, not its chart alone.
    server = FakeServer(run_cost=1.0, cut_first=True)
    done = warm_up_pages("http://localhost:1", budget=WarmUpBudget(math.inf, server.cpu),
                         connect=server)
    assert [r.page for r in done.runs] == ALL_RUNS
    assert all(r.status == "FINISHED_SUCCESSFULLY" for r in done.runs)


@pytest.mark.parametrize("cap", [0.5, 1.0, 2.5, 3.0])
def test_the_warm_up_holds_the_cpu_no_longer_than_its_budget(cap):
    """Stopped during a run or between two, the warm-up spends at most its cap plus one poll,
    asks the server to stop the run it was in, and requests nothing after that."""
    server = FakeServer(run_cost=1.0)
    done = warm_up_pages("http://localhost:1", budget=WarmUpBudget(cap, server.cpu),
                         connect=server)
    assert f"budget of {cap:g} CPU s" in done.stopped
    assert cap <= done.cpu_seconds <= cap + STEP
    reruns = [page for kind, page in server.sent if kind == "rerun"]
    assert reruns == ALL_RUNS[:len(reruns)] and len(reruns) < len(ALL_RUNS)
    if done.runs[-1].status == "STOPPED":  # stopped during a run: the server is told
        assert server.sent[-1] == ("stop", None)
        assert server.sent.count(("stop", None)) == 1
    else:  # stopped between two runs (the cap fell on a run's end): nothing to stop
        assert ("stop", None) not in server.sent
    finished = [r for r in done.runs if r.status == "FINISHED_SUCCESSFULLY"]
    # Each run costs 1 CPU s, its end seen one poll after its last: a run that reaches the
    # cap is stopped.
    assert len(finished) == math.ceil(cap) - 1


def test_the_warm_up_gives_way_to_the_first_visitor():
    """A visitor connecting during a run stops that run at the next poll; the default CPU
    cap has not been reached then."""
    server = FakeServer(run_cost=1.0)
    budget = WarmUpBudget(ui.serve.WARM_UP_CPU_S, server.cpu,
                          visitors=lambda: 1 if server.clock >= 1.45 else 0)
    done = warm_up_pages("http://localhost:1", budget=budget, connect=server)
    assert done.stopped == "a visitor connected"
    assert [r.status for r in done.runs] == ["FINISHED_SUCCESSFULLY", "STOPPED"]
    assert server.sent[-1] == ("stop", None)
    assert done.cpu_seconds == pytest.approx(1.5)


def test_a_visitor_already_there_gets_no_warm_up():
    server = FakeServer()
    done = warm_up_pages("http://localhost:1", connect=server,
                         budget=WarmUpBudget(math.inf, server.cpu, visitors=lambda: 1))
    assert done.runs == () and server.sent == [] and done.stopped == "a visitor connected"


def test_the_budget_comes_from_the_environment():
    default = WarmUpBudget.from_environment({})
    assert default.cpu_seconds == ui.serve.WARM_UP_CPU_S and default.visitors is not None
    assert default.cpu_clock is ui.serve.time.process_time
    assert ui.serve.WARM_UP_CPU_S <= 5  # "a few seconds" of one core
    unbounded = WarmUpBudget.from_environment({ui.serve.WARM_UP_CPU_ENV: "inf",
                                               ui.serve.WARM_UP_YIELD_ENV: "0"})
    assert unbounded.cpu_seconds == math.inf and unbounded.visitors is None
    assert WarmUpBudget.from_environment({ui.serve.WARM_UP_CPU_ENV: " 1.5 "}).cpu_seconds == 1.5


def test_visitors_are_counted_by_the_runtime_session_manager():
    """The one Streamlit internal the yield relies on (fail loudly if it moves): the runtime's
    session manager, counted without a runtime as no session at all."""
    from streamlit.runtime import Runtime
    from streamlit.runtime.session_manager import SessionManager

    assert "self._session_mgr = " in inspect.getsource(Runtime.__init__)
    assert callable(SessionManager.num_active_sessions)
    if not Runtime.exists():
        assert ui.serve._active_sessions() == 0
