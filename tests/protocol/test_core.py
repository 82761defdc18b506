"""The protocol core on its own: byte strings in, events and byte strings out.

No subprocess, no event loop: every frame kind, every malformed input, and (with
hypothesis) every order of the CLI's requests, cancellations and answers, ours and its.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from ccwire import (
    AssistantMessage,
    MessageDecodeError,
    RawMessage,
    ResultMessage,
    SessionStateError,
    TextBlock,
)
from ccwire._protocol.core import (
    ConnectionState,
    LineSkipped,
    MessageReceived,
    ProtocolCore,
    ProtocolViolation,
    RequestReceived,
    RequestWithdrawn,
    ResponseReceived,
    UndecodableRequest,
)


def line(frame: Any) -> bytes:
    return json.dumps(frame).encode()


def request(rid: str, subtype: str = "can_use_tool", **fields: Any) -> bytes:
    return line(
        {"type": "control_request", "request_id": rid, "request": {"subtype": subtype, **fields}}
    )


def response(rid: str, ok: bool = True, **body: Any) -> bytes:
    inner: dict[str, Any] = {"subtype": "success" if ok else "error", "request_id": rid}
    inner.update({"response": body} if ok else {"error": "no"})
    return line({"type": "control_response", "response": inner})


def cancel(rid: str) -> bytes:
    return line({"type": "control_cancel_request", "request_id": rid})


def decoded(data: bytes) -> Any:
    assert data.endswith(b"\n") and data.count(b"\n") == 1
    return json.loads(data)


# ------------------------------------------------------------------- frame kinds


def test_a_conversation_frame_is_a_message_with_its_size() -> None:
    core = ProtocolCore()
    data = line({"type": "assistant", "message": {"content": [{"type": "text", "text": "hi"}]}})
    event = core.receive_line(data)
    assert isinstance(event, MessageReceived) and event.size == len(data)
    assert isinstance(event.message, AssistantMessage)
    assert event.message.content == [TextBlock("hi")]


def test_an_unknown_frame_type_is_kept_raw() -> None:
    event = ProtocolCore().receive_line(line({"type": "brand_new", "x": 1}))
    assert isinstance(event, MessageReceived) and isinstance(event.message, RawMessage)
    assert event.message.data == {"type": "brand_new", "x": 1}


def test_keep_alive_is_nothing() -> None:
    assert ProtocolCore().receive_line(b'{"type":"keep_alive"}') is None


def test_a_request_is_owed_one_answer() -> None:
    core = ProtocolCore()
    event = core.receive_line(request("r1", tool_name="Bash"))
    assert isinstance(event, RequestReceived)
    assert event.request.request_id == "r1" and event.request.subtype == "can_use_tool"
    assert event.request.request["tool_name"] == "Bash"
    assert core.owed == ["r1"]
    data, problem = core.answer("r1", {"behavior": "allow"})
    assert problem is None
    assert decoded(data) == {
        "type": "control_response",
        "response": {"subtype": "success", "request_id": "r1", "response": {"behavior": "allow"}},
    }
    assert core.owed == []
    assert core.answer("r1", {"again": True}) == (b"", None)  # exactly one answer


def test_an_error_answer() -> None:
    core = ProtocolCore()
    core.receive_line(request("r1"))
    data, _ = core.answer("r1", error="refused")
    assert decoded(data)["response"] == {"subtype": "error", "request_id": "r1", "error": "refused"}


def test_a_withdrawn_request_is_owed_nothing() -> None:
    core = ProtocolCore()
    core.receive_line(request("r1"))
    assert core.receive_line(cancel("r1")) == RequestWithdrawn("r1")
    assert core.answer("r1", {"late": True}) == (b"", None)
    assert core.receive_line(cancel("r1")) is None  # withdrawn once
    assert core.receive_line(cancel("never-asked")) is None


def test_a_dropped_request_is_owed_nothing() -> None:
    core = ProtocolCore()
    core.receive_line(request("r1", "mcp_message"))
    core.drop("r1")
    assert core.owed == [] and core.answer("r1", {}) == (b"", None)


def test_our_request_resolves_once() -> None:
    core = ProtocolCore()
    rid, data = core.send_request("interrupt", {})
    sent = decoded(data)
    assert sent == {
        "type": "control_request",
        "request_id": rid,
        "request": {"subtype": "interrupt"},
    }
    event = core.receive_line(response(rid, value=1))
    assert isinstance(event, ResponseReceived)
    assert event.response.ok and event.response.response == {"value": 1}
    assert core.receive_line(response(rid)) is None  # answered already
    assert core.receive_line(response("not-ours")) is None


def test_an_error_response_resolves_too() -> None:
    core = ProtocolCore()
    rid, _ = core.send_request("set_model", {"model": "x"})
    event = core.receive_line(response(rid, ok=False))
    assert isinstance(event, ResponseReceived) and not event.response.ok
    assert event.response.error == "no"


def test_our_withdrawn_request_ignores_its_late_answer() -> None:
    core = ProtocolCore()
    rid, _ = core.send_request("interrupt", {})
    assert decoded(core.withdraw_request(rid)) == {
        "type": "control_cancel_request",
        "request_id": rid,
    }
    assert core.withdraw_request(rid) == b""
    assert core.receive_line(response(rid)) is None


def test_request_ids_are_unique() -> None:
    core = ProtocolCore()
    ids = {core.send_request("x", {})[0] for _ in range(100)}
    assert len(ids) == 100
    assert ProtocolCore().send_request("x", {})[0] not in ids  # another connection's


# ---------------------------------------------------------------- malformed input


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b'{"type": "assistant", "mess', "not valid JSON"),
        (b'{"a": 1} {"b": 2}', "not valid JSON"),
        (b'{"text": "\xff"}', "not valid UTF-8"),
        (b'{"type": "assistant", "message": "not an object"}', "'message' object"),
        (b'{"type": "result", "total_cost_usd": 1' + b"0" * 400 + b"}", "malformed"),
        (b'{"type":"assistant","a":' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested deeper"),
    ],
)
def test_a_bad_line_is_a_decode_error_where_it_was(data: bytes, words: str) -> None:
    core = ProtocolCore()
    event = core.receive_line(data)
    assert isinstance(event, MessageReceived)
    assert isinstance(event.message, MessageDecodeError) and words in str(event.message)
    assert event.message.line is not None and len(event.message.line) <= 200
    assert isinstance(core.receive_line(line({"type": "keep_alive"})), type(None))  # goes on


@pytest.mark.parametrize("data", [b"not json at all", b"\x00\xff binary", b"[1, 2, 3]", b"  {"])
def test_noise_is_skipped_and_counted(data: bytes) -> None:
    core = ProtocolCore()
    assert core.receive_line(data) == LineSkipped(data[:200])
    assert core.skipped_lines == 1


def test_a_malformed_request_with_an_id_is_answered_with_an_error() -> None:
    core = ProtocolCore()
    event = core.receive_line(line({"type": "control_request", "request_id": "r9"}))
    assert isinstance(event, ProtocolViolation) and event.frame_type == "control_request"
    answer = decoded(event.answer)["response"]
    assert answer["subtype"] == "error" and answer["request_id"] == "r9"
    assert "request object" in answer["error"]
    assert core.owed == []


def test_a_malformed_request_without_an_id_gets_no_answer() -> None:
    event = ProtocolCore().receive_line(line({"type": "control_request", "request": {}}))
    assert isinstance(event, ProtocolViolation) and event.answer == b""


def test_a_second_request_under_an_id_still_owed_is_not_served() -> None:
    core = ProtocolCore()
    first = core.receive_line(request("r1", tool_name="Bash"))
    assert isinstance(first, RequestReceived)
    again = core.receive_line(request("r1", tool_name="Write"))
    assert isinstance(again, ProtocolViolation) and again.answer == b""
    assert "second can_use_tool request" in str(again.error) and "'r1'" in str(again.error)
    assert core.owed == ["r1"] and core.owed_request("r1") is first.request  # the first one
    data, _ = core.answer("r1", {"behavior": "allow"})
    assert decoded(data)["response"]["request_id"] == "r1"
    assert core.answer("r1", {}) == (b"", None)


def test_a_malformed_response_is_a_violation() -> None:
    event = ProtocolCore().receive_line(line({"type": "control_response", "response": "x"}))
    assert isinstance(event, ProtocolViolation) and event.frame_type == "control_response"
    assert event.answer == b""


def test_a_request_too_deep_to_decode_is_still_answered() -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    data = (
        b'{"type":"control_request","request_id":"deep-1","request":'
        b'{"subtype":"can_use_tool","input":' + deep + b"}}"
    )
    event = ProtocolCore().receive_line(data)
    assert isinstance(event, UndecodableRequest)
    assert "nested deeper than" in str(event.error)
    answer = decoded(event.answer)["response"]
    assert answer["request_id"] == "deep-1" and "nested deeper than" in answer["error"]


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b'"subtype":"can_use_tool","input":{"x":"\xff"}}}', "not valid UTF-8"),
        (b'"subtype":"can_use_tool","input":{"x":1}}', "not valid JSON"),  # torn
        (b'"subtype":"can_use_tool","input":{"x":1}}} {"more":1}', "not valid JSON"),
    ],
)
def test_a_request_that_cannot_be_decoded_is_still_answered(data: bytes, words: str) -> None:
    # the CLI waits for an answer to every request it sends: without one, forever
    core = ProtocolCore()
    event = core.receive_line(b'{"type":"control_request","request_id":"bad-1","request":{' + data)
    assert isinstance(event, UndecodableRequest)
    assert isinstance(event.error, MessageDecodeError) and words in str(event.error)
    answer = decoded(event.answer)["response"]
    assert answer == {
        "subtype": "error",
        "request_id": "bad-1",
        "error": f"ccwire could not decode the request: a line that is {words}",
    }
    assert core.owed == []
    core.receive_line(request("bad-1"))  # the id again, now owed: one answer per request
    again = core.receive_line(b'{"type":"control_request","request_id":"bad-1","request":{' + data)
    assert isinstance(again, MessageReceived) and isinstance(again.message, MessageDecodeError)
    assert core.owed == ["bad-1"]


@pytest.mark.parametrize(
    ("body", "cause"),
    [
        ({"text": "half a pair: \ud800"}, "lone surrogate"),
        ({"ids": {1, 2}}, "not JSON serializable"),
        ({"x": float("nan")}, "NaN and Infinity"),
    ],
)
def test_an_unencodable_answer_becomes_an_error_answer_naming_the_cause(
    body: dict[str, Any], cause: str
) -> None:
    core = ProtocolCore()
    core.receive_line(request("r1"))
    data, problem = core.answer("r1", body)
    assert problem is not None and cause in str(problem)
    answer = decoded(data)["response"]
    assert answer["subtype"] == "error" and cause in answer["error"]
    assert "can_use_tool" in answer["error"]


def test_an_unencodable_answer_takes_the_routes_substitute() -> None:
    core = ProtocolCore()
    core.receive_line(request("r1", "mcp_message"))
    data, problem = core.answer(
        "r1", {"x": {1}}, fallback=lambda req, exc: {"substitute": req.subtype}
    )
    assert problem is not None
    assert decoded(data)["response"]["response"] == {"substitute": "mcp_message"}


def test_a_substitute_that_fails_too_gives_the_plain_error_answer() -> None:
    core = ProtocolCore()
    core.receive_line(request("r1"))

    def broken(req: Any, exc: Any) -> dict[str, Any]:
        raise RuntimeError("no")

    data, _ = core.answer("r1", {"x": {1}}, fallback=broken)
    assert decoded(data)["response"]["subtype"] == "error"


def test_an_unencodable_request_of_ours_waits_for_nothing() -> None:
    core = ProtocolCore()
    with pytest.raises(Exception, match="not JSON serializable"):
        core.send_request("x", {"bad": {1}})
    assert core.waiting == []


# ---------------------------------------------------------------------- lifecycle


def test_the_lifecycle_follows_its_table() -> None:
    core = ProtocolCore()
    assert core.state.value == "new"
    core.transition(ConnectionState.OPEN)
    core.transition(ConnectionState.CLOSING)
    with pytest.raises(SessionStateError, match="from closing to open"):
        core.transition(ConnectionState.OPEN)
    core.close(failed=False)
    assert core.state is ConnectionState.CLOSED
    core.close(failed=True)  # idempotent: the first end stands
    assert core.state is ConnectionState.CLOSED


def test_closing_forgets_everything_owed_and_awaited() -> None:
    core = ProtocolCore()
    core.transition(ConnectionState.OPEN)
    core.receive_line(request("r1"))
    rid, _ = core.send_request("interrupt", {})
    core.close(failed=True)
    assert core.state is ConnectionState.FAILED
    assert core.owed == [] and core.waiting == []
    assert core.answer("r1", {}) == (b"", None)
    assert core.receive_line(response(rid)) is None


def test_a_result_frame() -> None:
    data = line({"type": "result", "subtype": "success", "is_error": False, "result": "ok"})
    event = ProtocolCore().receive_line(data)
    assert isinstance(event, MessageReceived) and isinstance(event.message, ResultMessage)


# ----------------------------------------------------------------- every order


class Conversation(RuleBasedStateMachine):
    """Any order of the CLI's requests, cancellations and our answers, of our requests
    and its responses: each request is answered at most once and never after it was
    withdrawn; a response is delivered only to a request still waiting."""

    def __init__(self) -> None:
        super().__init__()
        self.core = ProtocolCore()
        self.core.transition(ConnectionState.OPEN)
        self.theirs: dict[str, str] = {}  # their request id -> "owed" | "answered" | "withdrawn"
        self.ours: dict[str, str] = {}  # our request id -> "waiting" | "answered" | "withdrawn"
        self.count = 0

    @rule()
    def cli_asks(self) -> None:
        self.count += 1
        rid = f"cli-{self.count}"
        assert isinstance(self.core.receive_line(request(rid)), RequestReceived)
        self.theirs[rid] = "owed"

    @precondition(lambda self: bool(self.theirs))
    @rule(data=st.data())
    def we_answer(self, data: st.DataObject) -> None:
        rid = data.draw(st.sampled_from(sorted(self.theirs)))
        sent, _ = self.core.answer(rid, {"n": 1})
        if self.theirs[rid] == "owed":
            assert decoded(sent)["response"]["request_id"] == rid
            self.theirs[rid] = "answered"
        else:
            assert sent == b""

    @precondition(lambda self: bool(self.theirs))
    @rule(data=st.data())
    def cli_withdraws(self, data: st.DataObject) -> None:
        rid = data.draw(st.sampled_from(sorted(self.theirs)))
        event = self.core.receive_line(cancel(rid))
        if self.theirs[rid] == "owed":
            assert event == RequestWithdrawn(rid)
            self.theirs[rid] = "withdrawn"
        else:
            assert event is None

    @precondition(lambda self: bool(self.theirs))
    @rule(data=st.data())
    def cli_asks_again(self, data: st.DataObject) -> None:
        rid = data.draw(st.sampled_from(sorted(self.theirs)))
        event = self.core.receive_line(request(rid))
        if self.theirs[rid] == "owed":  # a second request under an id still owed
            assert isinstance(event, ProtocolViolation) and event.answer == b""
        else:  # an id may be used again once its request is settled
            assert isinstance(event, RequestReceived)
            self.theirs[rid] = "owed"

    @rule()
    def we_ask(self) -> None:
        rid, _ = self.core.send_request("x", {})
        assert rid not in self.ours
        self.ours[rid] = "waiting"

    @precondition(lambda self: bool(self.ours))
    @rule(data=st.data())
    def cli_responds(self, data: st.DataObject) -> None:
        rid = data.draw(st.sampled_from(sorted(self.ours)))
        event = self.core.receive_line(response(rid))
        if self.ours[rid] == "waiting":
            assert isinstance(event, ResponseReceived) and event.response.request_id == rid
            self.ours[rid] = "answered"
        else:
            assert event is None

    @precondition(lambda self: bool(self.ours))
    @rule(data=st.data())
    def we_give_up(self, data: st.DataObject) -> None:
        rid = data.draw(st.sampled_from(sorted(self.ours)))
        sent = self.core.withdraw_request(rid)
        if self.ours[rid] == "waiting":
            assert decoded(sent)["type"] == "control_cancel_request"
            self.ours[rid] = "withdrawn"
        else:
            assert sent == b""

    @rule(noise=st.binary(max_size=30))
    def cli_prints_anything(self, noise: bytes) -> None:
        self.core.receive_line(noise.replace(b"\n", b""))  # never raises

    @invariant()
    def bookkeeping_matches(self) -> None:
        assert sorted(self.core.owed) == sorted(r for r, s in self.theirs.items() if s == "owed")
        assert sorted(self.core.waiting) == sorted(
            r for r, s in self.ours.items() if s == "waiting"
        )


Conversation.TestCase.settings = settings(max_examples=150, stateful_step_count=30, deadline=None)
test_every_order = Conversation.TestCase
