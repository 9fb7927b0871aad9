"""The classroom's browser-like websocket client (``benchmarks/_ws_client.py``) without a server:
the widget states it commits, the element tree it keeps, the messages it sends."""

from __future__ import annotations

import asyncio

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.Checkbox_pb2 import Checkbox
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.NumberInput_pb2 import NumberInput
from streamlit.proto.Radio_pb2 import Radio
from streamlit.proto.Slider_pb2 import Slider
from streamlit.proto.WidgetStates_pb2 import WidgetState

from benchmarks._ws_client import SIDEBAR, BrowserLikeClient, committed_state
from tests._asyncio import run


class FakeSocket:
    """Records the BackMsgs a client sends."""

    def __init__(self):
        self.sent = []

    async def send(self, data):
        msg = BackMsg()
        msg.ParseFromString(data)
        self.sent.append(msg)

    async def close(self):
        pass


def client():
    c = BrowserLikeClient("http://localhost:1", "geodesic_regression", fetch_static=False)
    c._ws = FakeSocket()
    return c


def new_session(run, fragments=(), page="pagehash"):
    msg = ForwardMsg()
    msg.new_session.page_script_hash = page
    msg.metadata.run.script_run_id = run
    msg.metadata.run.fragment_ids.extend(fragments)
    return msg


def finished(run, status=ForwardMsg.FINISHED_SUCCESSFULLY, fragments=()):
    msg = ForwardMsg(script_finished=status)
    msg.metadata.run.script_run_id = run
    msg.metadata.run.fragment_ids.extend(fragments)
    return msg


def element(path, kind, **fields):
    msg = ForwardMsg()
    msg.metadata.delta_path.extend(path)
    getattr(msg.delta.new_element, kind).MergeFrom(
        type(getattr(msg.delta.new_element, kind))(**fields))
    return msg


def feed(c, *messages):
    async def go():
        for msg in messages:
            await c._handle(msg)

    run(go())


def test_widget_states_committed_as_the_frontend_commits_them():
    number = NumberInput(id="n", default=3, data_type=NumberInput.INT)
    assert committed_state("number_input", number).int_value == 3
    held = WidgetState(id="n", int_value=7)
    assert committed_state("number_input", number, held) is held  # the user's value stays
    number.set_value, number.value = True, 5  # the server sets it: it wins
    assert committed_state("number_input", number, held).int_value == 5
    radio = Radio(id="r", options=["a", "b"], default=1)
    assert committed_state("radio", radio).string_value == "b"
    choice = Slider(id="s", options=["0.1", "0.3"], default=[1])  # a select slider
    assert list(committed_state("slider", choice).string_array_value.data) == ["0.3"]
    plain = Slider(id="s", default=[20.0])
    assert list(committed_state("slider", plain).double_array_value.data) == [20.0]
    assert committed_state("checkbox", Checkbox(id="c", default=True)).bool_value is True
    assert committed_state("button", Checkbox(id="b")) is None


def test_stale_elements_and_their_widget_states_go_at_the_end_of_a_run():
    c = client()
    feed(c, new_session("A"),
         element([0, 0], "number_input", id="$$ID-1-gr_n", default=2, data_type=1),
         element([0, 1], "markdown", body="hello"),
         element([1, 0], "heading", body="Privacy ledger"),
         finished("A"))
    assert c.widget("gr_n") is not None and "$$ID-1-gr_n" in c.widgets
    assert c.texts(SIDEBAR) == ["Privacy ledger"]
    feed(c, new_session("B"), element([0, 0], "markdown", body="only this"), finished("B"))
    assert c.widget("gr_n") is None and c.widgets == {}
    assert c.texts() == ["only this"]
    assert c.errors == []


def test_errors_and_the_first_plot_are_seen():
    c = client()
    feed(c, new_session("A"), element([0, 0], "plotly_chart", spec="{}"),
         element([0, 1], "exception", type="ValueError", message="boom"),
         element([0, 2], "alert", body="bad", format=1))
    assert c.first_plot is not None
    assert c.errors == ["exception: ValueError: boom", "error: bad"]


def test_a_reference_is_replaced_by_the_cached_message():
    c = client()
    big = element([0, 0], "markdown", body="x" * 100)
    big.hash, big.metadata.cacheable = "h1", True
    ref = ForwardMsg(ref_hash="h1")
    ref.metadata.delta_path.extend([0, 3])
    feed(c, new_session("A"), big, ref)
    assert [n.proto.body for p, n in sorted(c.nodes.items())] == ["x" * 100] * 2
    assert (0, 3) in c.nodes and c.stats.ref_hits == 1


def test_reruns_carry_the_widget_states_the_page_and_a_trigger_once():
    c = client()
    run(c.rerun())  # the first run: the page named by its URL
    first = c._ws.sent[-1].rerun_script
    assert first.page_name == "geodesic_regression" and not first.page_script_hash
    assert len(first.widget_states.widgets) == 0
    feed(c, new_session("A"),
         element([0, 0], "checkbox", id="$$ID-2-box", default=True),
         element([0, 1], "button", id="$$ID-3-go"))
    nav = ForwardMsg()
    nav.navigation.page_script_hash = "pagehash"
    feed(c, nav)
    run(c.press("go"))
    run(c.rerun())
    pressed, after = (m.rerun_script for m in c._ws.sent[-2:])
    assert pressed.page_script_hash == "pagehash" and not pressed.page_name
    states = {w.id: w for w in pressed.widget_states.widgets}
    assert states["$$ID-3-go"].trigger_value and states["$$ID-2-box"].bool_value
    assert [w.id for w in after.widget_states.widgets] == ["$$ID-2-box"]
    assert c.script_state == "rerun_requested"


def test_the_fragment_timer_asks_for_its_fragment_until_a_complete_run_starts():
    async def go():
        c = client()
        auto = ForwardMsg()
        auto.auto_rerun.interval, auto.auto_rerun.fragment_id = 0.01, "frag"
        await c._handle(new_session("A"))
        await c._handle(auto)
        await asyncio.sleep(0.1)
        sent = len(c._ws.sent)
        assert sent >= 2
        assert all(m.rerun_script.fragment_id == "frag" and m.rerun_script.is_auto_rerun
                   for m in c._ws.sent)
        await c._handle(new_session("B"))  # a complete run: the timers stop
        await asyncio.sleep(0.05)
        assert len(c._ws.sent) == sent and c.auto_reruns == {}

    run(go())
