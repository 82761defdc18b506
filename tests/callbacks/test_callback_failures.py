"""Bounds and failures of the callbacks the CLI calls back into, over the fake CLI.

``can_use_tool_timeout`` bounds a permission callback that never decides; a callback's
own ``BaseException`` (not a stop request of the program) is contained in its call like
an exception; a sync callback is called as an async one is, and an async callback that
returns a coroutine (a missing ``await``) gets a clear error, its coroutine closed.
"""

from __future__ import annotations

import gc
import warnings
from typing import Any

import anyio
import pytest

from ccwire import (
    CallbackError,
    ClaudeAgentOptions,
    ElicitationRequest,
    ElicitationResult,
    HookMatcher,
    OptionsError,
    PermissionResultAllow,
    PermissionResultDeny,
    RequestContext,
    ToolPermissionContext,
    create_sdk_mcp_server,
    tool,
)
from tests.faults.conftest import no_leaks
from tests.fixtures.fake_session import connected

pytestmark = pytest.mark.anyio

ASK: dict[str, Any] = {"tool_name": "Bash", "input": {"command": "ls"}, "tool_use_id": "t1"}
ELICIT: dict[str, Any] = {"mcp_server_name": "gh", "message": "Pick", "mode": "form"}


class PolicyAbort(BaseException):
    """A library's BaseException subclass (as pytest's ``Failed`` is one)."""


def _ok(response: dict[str, Any]) -> dict[str, Any]:
    assert response["subtype"] == "success", response
    body: dict[str, Any] = response.get("response", {})
    return body


# ------------------------------------------------------------ can_use_tool_timeout


async def test_a_permission_callback_past_its_timeout_is_cancelled_and_denied() -> None:
    seen: list[tuple[str, bool]] = []
    errors: list[CallbackError] = []

    async def undecided(name: str, inp: dict[str, Any], ctx: ToolPermissionContext) -> Any:
        try:
            await anyio.sleep_forever()
        finally:
            seen.append((name, ctx.signal.is_set()))
        raise AssertionError("unreachable")

    options = ClaudeAgentOptions(
        can_use_tool=undecided, can_use_tool_timeout=0.2, on_callback_error=errors.append
    )
    async with no_leaks(), connected(options) as (client, fake):
        with anyio.fail_after(5):
            answer = _ok(await fake.request("can_use_tool", **ASK))
        assert await client.get_server_info() is not None  # the session goes on
    assert answer["behavior"] == "deny"
    assert "did not decide within 0.2 s" in answer["message"]
    assert seen == [("Bash", True)]  # cancelled, its signal set first
    assert [(e.kind, e.timed_out) for e in errors] == [("can_use_tool", True)]


async def test_a_permission_callback_that_answers_as_it_is_cancelled_keeps_its_answer() -> None:
    errors: list[CallbackError] = []

    async def polite(name: str, inp: dict[str, Any], ctx: ToolPermissionContext) -> Any:
        with anyio.CancelScope(shield=True):
            await ctx.signal.wait()  # a UI dismissing its prompt when told to
        return PermissionResultDeny(message="nobody answered the prompt")

    async def quick(name: str, inp: dict[str, Any], ctx: ToolPermissionContext) -> Any:
        return PermissionResultAllow()

    options = ClaudeAgentOptions(
        can_use_tool=polite, can_use_tool_timeout=0.1, on_callback_error=errors.append
    )
    async with connected(options) as (_, fake):
        answer = _ok(await fake.request("can_use_tool", **ASK))
    assert answer == {"behavior": "deny", "message": "nobody answered the prompt"}
    assert errors == []
    fast = ClaudeAgentOptions(can_use_tool=quick, can_use_tool_timeout=30)
    async with connected(fast) as (_, fake):  # a callback within its time: unchanged
        assert _ok(await fake.request("can_use_tool", **ASK))["behavior"] == "allow"


def _answers_to(fake: Any, rid: str) -> list[dict[str, Any]]:
    return [
        f["response"]
        for f in fake.received
        if f.get("type") == "control_response" and f["response"].get("request_id") == rid
    ]


async def test_a_permission_answered_out_of_band_is_not_timed_out_after() -> None:
    errors: list[CallbackError] = []
    asked, cancelled = anyio.Event(), anyio.Event()

    async def undecided(name: str, inp: dict[str, Any], ctx: ToolPermissionContext) -> Any:
        asked.set()
        try:
            await anyio.sleep_forever()  # a UI that answers with answer_control_request
        finally:
            cancelled.set()

    options = ClaudeAgentOptions(
        can_use_tool=undecided, can_use_tool_timeout=0.1, on_callback_error=errors.append
    )
    async with connected(options) as (client, fake):
        rid = await fake.start_request("can_use_tool", **ASK)
        with anyio.fail_after(5):
            await asked.wait()
            assert await client.answer_control_request(rid, PermissionResultAllow()) is True
            await cancelled.wait()  # then its time ran out
        await fake.request("no_such_subtype")  # a deny would be written by now
        answers = _answers_to(fake, rid)
    assert [a["response"]["behavior"] for a in answers] == ["allow"]
    assert errors == []  # it answered in time: no false timeout


async def test_a_timeout_and_an_answer_out_of_band_at_once_give_one_answer() -> None:
    errors: list[CallbackError] = []
    asked = anyio.Event()
    entered: list[anyio.Event] = []  # one per answer waiting at the gate, in order
    released: list[anyio.Event] = []
    second = anyio.Event()

    async def gate() -> None:  # a paused session holds every answer back
        entered.append(anyio.Event())
        release = anyio.Event()
        released.append(release)
        if len(entered) == 2:
            second.set()
        await release.wait()

    async def undecided(name: str, inp: dict[str, Any], ctx: ToolPermissionContext) -> Any:
        asked.set()
        await anyio.sleep_forever()

    options = ClaudeAgentOptions(
        can_use_tool=undecided, can_use_tool_timeout=0.1, on_callback_error=errors.append
    )
    results: list[bool] = []
    answered = anyio.Event()
    async with connected(options) as (client, fake), anyio.create_task_group() as tg:
        client._connection().set_reply_gate(gate)
        rid = await fake.start_request("can_use_tool", **ASK)

        async def answer() -> None:
            results.append(await client.answer_control_request(rid, PermissionResultAllow()))
            answered.set()

        with anyio.fail_after(5):
            await asked.wait()
            tg.start_soon(answer)  # the allow reaches the gate first...
            await second.wait()  # ...then the timeout's deny
            released[0].set()
            await answered.wait()
            released[1].set()
            response = await fake.response_to(rid)
        client._connection().set_reply_gate(None)
        await fake.request("no_such_subtype")
        assert len(_answers_to(fake, rid)) == 1
    # the timeout's deny claimed the answer first: it alone is written, and reported
    assert results == [False]
    assert response["response"]["behavior"] == "deny"
    assert [e.timed_out for e in errors] == [True]


async def test_a_timeout_whose_deny_the_cli_withdrew_first_is_not_reported() -> None:
    errors: list[CallbackError] = []
    held, release = anyio.Event(), anyio.Event()

    async def gate() -> None:  # a paused session holds the deny back
        held.set()
        await release.wait()

    async def undecided(name: str, inp: dict[str, Any], ctx: ToolPermissionContext) -> Any:
        await anyio.sleep_forever()

    options = ClaudeAgentOptions(
        can_use_tool=undecided, can_use_tool_timeout=0.1, on_callback_error=errors.append
    )
    async with connected(options) as (client, fake):
        client._connection().set_reply_gate(gate)
        rid = await fake.start_request("can_use_tool", **ASK)
        with anyio.fail_after(5):
            await held.wait()  # timed out: its deny waits to be written
            await fake.cancel(rid)  # the CLI withdraws the request (an interrupt)
            await fake.request("no_such_subtype")  # (answered without the gate) read
            release.set()
        client._connection().set_reply_gate(None)
        await fake.request("no_such_subtype")  # the deny would be written by now
        assert _answers_to(fake, rid) == []
    assert errors == []  # its deny never went out: no timeout to report


async def test_a_callback_that_answered_out_of_band_is_done_whatever_it_does_after() -> None:
    # the TypeScript SDK's contract: answer out of band, then return null; a hook answered
    # so and left running past its timeout. Neither is a failure: its answer went out.
    errors: list[CallbackError] = []
    box: list[Any] = []
    hook_answered, hook_ended = anyio.Event(), anyio.Event()

    async def ask(name: str, inp: dict[str, Any], ctx: ToolPermissionContext) -> Any:
        await box[0].answer_control_request(ctx.request_id, PermissionResultAllow())
        return None

    async def elicit(request: ElicitationRequest, ctx: RequestContext) -> Any:
        await box[0].answer_control_request(ctx.request_id, ElicitationResult("decline"))
        return None

    async def hook(inp: Any, tid: Any, ctx: Any) -> Any:
        hook_answered.set()
        try:
            await anyio.sleep_forever()
        finally:
            hook_ended.set()

    options = ClaudeAgentOptions(
        can_use_tool=ask,
        on_elicitation=elicit,
        hooks={"Stop": [HookMatcher(hooks=[hook], timeout=0.05)]},
        on_callback_error=errors.append,
    )
    async with connected(options) as (client, fake):
        box.append(client)
        with anyio.fail_after(5):
            assert _ok(await fake.request("can_use_tool", **ASK))["behavior"] == "allow"
            assert _ok(await fake.request("elicitation", **ELICIT)) == {"action": "decline"}
            rid = await fake.start_request(
                "hook_callback", callback_id="hook_0", input={"hook_event_name": "Stop"}
            )
            await hook_answered.wait()
            assert await client.answer_control_request(rid, {"continue": True}) is True
            await hook_ended.wait()  # its time ran out
        await fake.request("no_such_subtype")  # a second answer would be written by now
        assert [a["subtype"] for a in _answers_to(fake, rid)] == ["success"]
    assert errors == []


@pytest.mark.parametrize("value", [0, -1, "5", float("nan")])
def test_can_use_tool_timeout_must_be_a_positive_number(value: Any) -> None:
    with pytest.raises(OptionsError, match="can_use_tool_timeout"):
        ClaudeAgentOptions(can_use_tool_timeout=value)


async def test_a_hook_the_cli_never_withdraws_is_cancelled_and_its_signal_set() -> None:
    # (an older CLI, or a stalled one: ccwire's own fallback past the matcher's timeout)
    contexts: list[Any] = []
    errors: list[CallbackError] = []

    async def hangs(inp: Any, tid: Any, ctx: Any) -> Any:
        contexts.append(ctx)
        await anyio.sleep_forever()

    options = ClaudeAgentOptions(
        hooks={"Stop": [HookMatcher(hooks=[hangs], timeout=0.05)]}, on_callback_error=errors.append
    )
    async with connected(options) as (_, fake):
        answer = await fake.request(
            "hook_callback", callback_id="hook_0", input={"hook_event_name": "Stop"}
        )
    assert answer["subtype"] == "error" and "timed out after 0.05 s" in answer["error"]
    assert [ctx.signal.is_set() for ctx in contexts] == [True]  # what it started is told
    assert [(e.kind, e.timed_out) for e in errors] == [("hook", True)]


async def test_a_hook_running_when_the_connection_ends_has_not_timed_out() -> None:
    # the CLI withdraws a hook at its timeout (reported as one); the connection's end
    # cancels it too, and is no timeout of the hook, however long it had run
    errors: list[CallbackError] = []
    late, ended = anyio.Event(), anyio.Event()

    async def working(inp: Any, tid: Any, ctx: Any) -> Any:
        try:
            await anyio.sleep(0.05)  # its work, most of its time
            late.set()
            await anyio.sleep_forever()
        finally:
            ended.set()

    options = ClaudeAgentOptions(
        hooks={"Stop": [HookMatcher(hooks=[working], timeout=0.05)]},
        on_callback_error=errors.append,
    )
    with anyio.fail_after(5):
        async with connected(options) as (_, fake):
            await fake.start_request(
                "hook_callback", callback_id="hook_0", input={"hook_event_name": "Stop"}
            )
            await late.wait()  # then the client is closed (within ccwire's own grace)
        await ended.wait()
    assert errors == []


@pytest.mark.parametrize("value", [0, -1, "30", float("nan"), float("inf"), True])
def test_a_hook_timeout_must_be_a_positive_number(value: Any) -> None:
    # the CLI reads 0 as no timeout given (ccwire's own fallback then cut the hook at
    # 0.5 s), and JSON cannot carry NaN or infinity
    async def hook(inp: Any, tid: Any, ctx: Any) -> Any:
        return None

    with pytest.raises(OptionsError, match="HookMatcher timeout must be a positive number"):
        ClaudeAgentOptions(hooks={"Stop": [HookMatcher(hooks=[hook], timeout=value)]})


# ------------------------------------------------------- a BaseException of its own


async def test_each_callback_kind_contains_a_base_exception_of_its_own() -> None:
    errors: list[CallbackError] = []

    async def ask(name: str, inp: dict[str, Any], ctx: ToolPermissionContext) -> Any:
        raise PolicyAbort("policy engine aborted")

    async def hook(inp: Any, tid: Any, ctx: Any) -> Any:
        raise PolicyAbort("hook aborted")

    async def elicit(request: ElicitationRequest, ctx: RequestContext) -> Any:
        raise PolicyAbort("form aborted")

    @tool("aborts", "Raises a BaseException", {})
    async def aborts(args: dict[str, Any]) -> dict[str, Any]:
        raise PolicyAbort("tool aborted")

    options = ClaudeAgentOptions(
        can_use_tool=ask,
        hooks={"Stop": [HookMatcher(hooks=[hook])]},
        on_elicitation=elicit,
        mcp_servers={"s": create_sdk_mcp_server("s", tools=[aborts])},
        on_callback_error=errors.append,
    )
    async with no_leaks(), connected(options) as (client, fake):
        perm = await fake.request("can_use_tool", **ASK)
        stop = await fake.request(
            "hook_callback", callback_id="hook_0", input={"hook_event_name": "Stop"}
        )
        form = await fake.request("elicitation", **ELICIT)
        call = await fake.mcp("s", "tools/call", {"name": "aborts", "arguments": {}})
        assert await client.get_server_info() is not None  # the connection lives on
    assert (
        perm["subtype"] == "error" and perm["error"] == "raised PolicyAbort: policy engine aborted"
    )
    assert stop["subtype"] == "error" and "raised PolicyAbort: hook aborted" in stop["error"]
    assert form["subtype"] == "error" and form["error"] == "raised PolicyAbort: form aborted"
    result = _ok(call)["mcp_response"]["result"]
    assert result["isError"] is True
    assert result["content"][0]["text"] == "PolicyAbort: tool aborted"
    assert sorted(e.kind for e in errors) == ["can_use_tool", "hook", "on_elicitation"]
    assert all(isinstance(e.__cause__, PolicyAbort) for e in errors)


# ------------------------------------------------- sync callbacks, missing awaits


async def test_sync_callbacks_are_called_and_a_missing_await_is_a_clear_error() -> None:
    errors: list[CallbackError] = []

    def sync_ask(name: str, inp: dict[str, Any], ctx: ToolPermissionContext) -> Any:
        return PermissionResultAllow(updated_input={"command": "ls -l"})

    def sync_elicit(request: ElicitationRequest, ctx: RequestContext) -> Any:
        return ElicitationResult("accept", {"repo": "ccwire"})

    async def decide() -> Any:
        return PermissionResultAllow()

    async def forgot_await(name: str, inp: dict[str, Any], ctx: ToolPermissionContext) -> Any:
        return decide()  # a coroutine, never awaited

    async def hook_forgot_await(inp: Any, tid: Any, ctx: Any) -> Any:
        return decide()

    options = ClaudeAgentOptions(
        can_use_tool=sync_ask, on_elicitation=sync_elicit, on_callback_error=errors.append
    )
    async with connected(options) as (_, fake):
        assert _ok(await fake.request("can_use_tool", **ASK)) == {
            "behavior": "allow",
            "updatedInput": {"command": "ls -l"},
        }
        form = _ok(await fake.request("elicitation", **ELICIT))
    assert form == {"action": "accept", "content": {"repo": "ccwire"}}
    bad = ClaudeAgentOptions(
        can_use_tool=forgot_await,
        hooks={"Stop": [HookMatcher(hooks=[hook_forgot_await])]},
        on_callback_error=errors.append,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "coroutine ... was never awaited"
        async with connected(bad) as (_, fake):
            perm = await fake.request("can_use_tool", **ASK)
            stop = await fake.request(
                "hook_callback", callback_id="hook_0", input={"hook_event_name": "Stop"}
            )
        gc.collect()
    for answer in (perm, stop):
        assert answer["subtype"] == "error"
        assert "returned a coroutine object instead of its result" in answer["error"]
        assert "missing 'await'" in answer["error"]
    assert [e.kind for e in errors] == ["can_use_tool", "hook"]


# ------------------------------------------------------- withdrawn, answering late


async def test_a_withdrawn_callback_that_answers_late_writes_and_reports_nothing() -> None:
    errors: list[CallbackError] = []
    started: list[str] = []
    finished: list[str] = []
    all_started, all_finished = anyio.Event(), anyio.Event()

    async def late(kind: str, signal: anyio.Event) -> Any:
        started.append(kind)
        if len(started) == 3:
            all_started.set()
        with anyio.CancelScope(shield=True):
            await signal.wait()  # finishes what it was doing, then answers nonsense
        finished.append(kind)
        if len(finished) == 3:
            all_finished.set()
        return "not an answer"

    async def ask(name: str, inp: dict[str, Any], ctx: ToolPermissionContext) -> Any:
        return await late("can_use_tool", ctx.signal)

    async def hook(inp: Any, tid: Any, ctx: Any) -> Any:
        return await late("hook", ctx.signal)

    async def elicit(request: ElicitationRequest, ctx: RequestContext) -> Any:
        return await late("elicitation", ctx.signal)

    options = ClaudeAgentOptions(
        can_use_tool=ask,
        hooks={"Stop": [HookMatcher(hooks=[hook], on_failure="continue")]},
        on_elicitation=elicit,
        on_callback_error=errors.append,
    )
    async with connected(options) as (_, fake):
        rids = [
            await fake.start_request("can_use_tool", **ASK),
            await fake.start_request(
                "hook_callback", callback_id="hook_0", input={"hook_event_name": "Stop"}
            ),
            await fake.start_request("elicitation", **ELICIT),
        ]
        with anyio.fail_after(5):
            await all_started.wait()
        for rid in rids:
            await fake.cancel(rid)
        with anyio.fail_after(5):
            await all_finished.wait()
        await fake.request("no_such_subtype")  # a late answer would be written by now
        answered = {f.get("response", {}).get("request_id") for f in fake.received}
    assert answered.isdisjoint(rids)
    assert errors == []  # withdrawn: its late answer is nobody's concern


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # trio has no task.cancel()
async def test_a_callback_that_cancels_its_own_task_still_gets_the_cli_an_answer() -> None:
    import asyncio

    async def ask(name: str, inp: dict[str, Any], ctx: ToolPermissionContext) -> Any:
        task = asyncio.current_task()
        assert task is not None
        task.cancel()  # a home-made abort: the task it runs in is ccwire's
        await anyio.sleep(5)
        return PermissionResultAllow()

    async with no_leaks(), connected(ClaudeAgentOptions(can_use_tool=ask)) as (client, fake):
        with anyio.fail_after(5):
            answer = await fake.request("can_use_tool", **ASK)  # was never answered
        again = await fake.request("can_use_tool", **ASK)
        # the connection lived on (the escaped cancellation took its reader down)
        assert (await fake.request("no_such_subtype"))["subtype"] == "error"
        assert await client.get_server_info() is not None
    for response in (answer, again):
        # (before Python 3.11 the task keeps no record of it: the callback's failure)
        assert response["subtype"] == "error" and "cancel" in response["error"].lower()


# ----------------------------------------------------------- closed while running


async def test_closing_the_client_cancels_every_callback_still_running() -> None:
    started: list[str] = []
    ended: list[tuple[str, bool | None]] = []
    all_started = anyio.Event()

    async def hang(kind: str, signal: anyio.Event | None) -> Any:
        started.append(kind)
        if len(started) == 5:
            all_started.set()
        try:
            await anyio.sleep_forever()
        finally:
            ended.append((kind, None if signal is None else signal.is_set()))

    async def ask(name: str, inp: dict[str, Any], ctx: ToolPermissionContext) -> Any:
        await hang("can_use_tool", ctx.signal)

    async def hook(inp: Any, tid: Any, ctx: Any) -> Any:
        await hang("hook", ctx.signal)

    async def elicit(request: ElicitationRequest, ctx: RequestContext) -> Any:
        await hang("on_elicitation", ctx.signal)

    async def dialog(request: Any, ctx: RequestContext) -> Any:
        await hang("on_user_dialog", ctx.signal)

    @tool("slow", "Never returns", {})
    async def slow(args: dict[str, Any]) -> dict[str, Any]:
        await hang("tool", None)
        raise AssertionError("unreachable")

    options = ClaudeAgentOptions(
        can_use_tool=ask,
        hooks={"Stop": [HookMatcher(hooks=[hook])]},
        on_elicitation=elicit,
        on_user_dialog=dialog,
        mcp_servers={"s": create_sdk_mcp_server("s", tools=[slow])},
    )
    async with no_leaks():
        async with connected(options) as (_, fake):
            await fake.start_request("can_use_tool", **ASK)
            await fake.start_request(
                "hook_callback", callback_id="hook_0", input={"hook_event_name": "Stop"}
            )
            await fake.start_request("elicitation", **ELICIT)
            await fake.start_request("request_user_dialog", dialog_kind="k", payload={})
            await fake.start_request(
                "mcp_message",
                server_name="s",
                message={"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                         "params": {"name": "slow", "arguments": {}}},
            )  # fmt: skip
            with anyio.fail_after(5):
                await all_started.wait()
            closing = anyio.current_time()
        # closed without waiting out close()'s 10 s bound for callbacks that hang on
        assert anyio.current_time() - closing < 5
        answers = [f for f in fake.received if f.get("type") == "control_response"]
    assert answers == []  # cancelled: no answer written, late or not
    assert sorted(ended) == [
        ("can_use_tool", True),
        ("hook", True),
        ("on_elicitation", True),
        ("on_user_dialog", True),
        ("tool", None),
    ]
