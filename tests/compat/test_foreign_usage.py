"""Usage patterns of other people's projects written for ``claude-agent-sdk``, distilled.

Each test names the project whose code showed the pattern. The projects themselves are
not kept here; they were run unchanged on the reference and on ccwire's drop-in, against
the real CLI and a scripted model, and these are the differences they found.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import io
import json
import os
import pickle
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, get_type_hints

import anyio
import pytest

import ccwire
import ccwire.types as ccwire_types
from ccwire import (
    AgentDefinition,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    PermissionRuleValue,
    PermissionUpdate,
    ToolPermissionContext,
    create_sdk_mcp_server,
)
from ccwire.testing import FakeCLI, memory_transport_pair
from tests.compat.conftest import on_reference

_MUTABLE_IN_THE_REFERENCE = """
import dataclasses, json
import claude_agent_sdk, claude_agent_sdk.types as types
names = {
    name
    for module in (claude_agent_sdk, types)
    for name, value in vars(module).items()
    if isinstance(value, type) and dataclasses.is_dataclass(value)
    and not value.__dataclass_params__.frozen
}
print(json.dumps(sorted(names)))
"""


def _same_on_both(reference_python: Path, script: str, theirs: str, ours: str) -> None:
    """Run ``script`` (it prints JSON) on the reference, in its venv, and again with
    ``theirs`` replaced by ``ours`` on ccwire, in this process: both print the same."""
    theirs_printed = on_reference(reference_python, script)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(script.replace(theirs, ours), {})
    assert json.loads(printed.getvalue()) == theirs_printed


def test_what_the_reference_lets_code_change_ccwire_does_too(reference_python: Path) -> None:
    mutable = on_reference(reference_python, _MUTABLE_IN_THE_REFERENCE)
    ours = [getattr(ccwire, n, None) or getattr(ccwire_types, n, None) for n in mutable]
    params = {v.__name__: getattr(v, "__dataclass_params__", None) for v in ours if v is not None}
    frozen = [name for name, p in params.items() if getattr(p, "frozen", False)]
    assert frozen == []


_ERRORS_AS_BUILT = """
import json, pickle
from claude_agent_sdk import CLIJSONDecodeError, CLINotFoundError, ProcessError
built = {
    "process": ProcessError("boom"),
    "process_code": ProcessError("boom", 2),
    "process_all": ProcessError("boom", exit_code=2, stderr="bad flag"),
    "process_empty": ProcessError("boom", 1, ""),
    "not_found": CLINotFoundError("no CLI", cli_path="/x/claude"),
    "json": CLIJSONDecodeError("{not json", ValueError("x")),
}
print(json.dumps({
    name: [str(e), getattr(e, "exit_code", 0), getattr(e, "stderr", 0), getattr(e, "line", 0)]
    for name, e in built.items()
}))
"""


def test_errors_built_by_code_carry_the_references_attributes(reference_python: Path) -> None:
    # code that raises or fakes the reference's errors (wrappers that retry on
    # ProcessError, tests that check `e.stderr is None`): ccwire turned a missing
    # stderr into "", so `if e.stderr is not None:` printed an empty error output
    from ccwire import CLIJSONDecodeError

    _same_on_both(
        reference_python, _ERRORS_AS_BUILT, "from claude_agent_sdk import", "from ccwire import"
    )
    # typed as the reference types it: `orig: Exception = e.original_error` type-checks
    hints = get_type_hints(CLIJSONDecodeError.__init__)
    assert hints["original_error"] is Exception


def test_a_json_decode_error_survives_pickling() -> None:
    # multiprocessing and Ray pickle a worker's exception: the reference's cannot be
    # rebuilt (its one argument became two), ccwire's came back with its message
    # wrapped twice ("Failed to decode JSON: Failed to decode JSON: ...")
    import pickle

    from ccwire import CLIJSONDecodeError

    error = CLIJSONDecodeError("{not json", ValueError("x"))
    error.hint = "while reading"  # type: ignore[attr-defined]
    again = pickle.loads(pickle.dumps(error))
    assert (str(again), again.line) == (str(error), "{not json")
    assert repr(again.original_error) == "ValueError('x')"
    assert again.hint == "while reading"


async def _hook(input_data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
    return {}


def test_a_hook_matcher_carries_a_marker_of_the_code_that_added_it() -> None:
    # agento11y-claude-agent-sdk 0.21.0 (PyPI), handler.py: its client wrapper appends a
    # HookMatcher per event to a copy of the options and tags it with a private attribute
    options = ClaudeAgentOptions(hooks={"Stop": [HookMatcher(hooks=[_hook])]})
    hooks = {event: list(matchers) for event, matchers in (options.hooks or {}).items()}
    matcher = HookMatcher(hooks=[_hook])
    matcher._added_by_tracer = True  # type: ignore[attr-defined]
    hooks.setdefault("PreToolUse", []).append(matcher)
    traced = dataclasses.replace(options, hooks=hooks)
    assert traced.hooks is not None
    assert getattr(traced.hooks["PreToolUse"][0], "_added_by_tracer", False) is True
    assert len(traced.hooks["Stop"]) == 1


def test_fields_set_after_construction_are_kept() -> None:
    # code written for the reference's plain dataclasses fills them in step by step:
    # a matcher's timeout, an agent's model and turn limit from a config, an allow
    # decision's rewritten input, a permission update's destination
    matcher = HookMatcher(matcher="Bash")
    matcher.hooks = [_hook]
    matcher.timeout = 5
    agent = AgentDefinition(description="reviews code", prompt="Review it.")
    agent.model = "sonnet"
    agent.maxTurns = 3
    allow = PermissionResultAllow()
    allow.updated_input = {"command": "ls"}
    deny = PermissionResultDeny()
    deny.message = "not here"
    rule = PermissionRuleValue(tool_name="Bash")
    rule.rule_content = "ls:*"
    update = PermissionUpdate(type="addRules", rules=[rule], behavior="allow")
    update.destination = "session"
    context = ToolPermissionContext()
    context.suggestions = [update]
    assert (matcher.hooks, matcher.timeout) == ([_hook], 5)
    assert (agent.model, agent.max_turns) == ("sonnet", 3)
    assert allow.updated_input == {"command": "ls"} and deny.message == "not here"
    assert update.to_dict()["destination"] == "session"
    assert update.to_dict()["rules"] == [{"toolName": "Bash", "ruleContent": "ls:*"}]
    assert context.suggestions == [update]


_NOT_A_LIST = "mcp_servers must be a dict of server configs by name"


def test_servers_given_as_a_list_are_refused_by_name() -> None:
    # HKUDS/AI-Trader, agent/claude_sdk_agent/claude_sdk_agent.py, passes
    # mcp_servers=[server]: the reference gives the list's repr to the CLI, which exits
    # (ProcessError); ccwire failed deep in connect with "'list' object has no attribute
    # 'items'"
    server = create_sdk_mcp_server("trade", tools=[])
    with pytest.raises(TypeError, match=_NOT_A_LIST):
        ClaudeAgentOptions(mcp_servers=[server])  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_servers_set_to_a_list_later_are_refused_at_connect() -> None:
    # the same project changes its client's options after making it
    options = ClaudeAgentOptions(cli_path="/nonexistent/claude")
    options.mcp_servers = [create_sdk_mcp_server("trade", tools=[])]  # type: ignore[assignment]
    with pytest.raises(TypeError, match=_NOT_A_LIST):
        async with ClaudeSDKClient(options):
            pass


@asynccontextmanager
async def _connected(options: ClaudeAgentOptions) -> AsyncIterator[FakeCLI]:
    async with _client(options) as (_, fake):
        yield fake


@asynccontextmanager
async def _client(options: ClaudeAgentOptions) -> AsyncIterator[tuple[ClaudeSDKClient, FakeCLI]]:
    transport, peer = memory_transport_pair()
    fake = FakeCLI(peer)
    async with anyio.create_task_group() as tg:
        tg.start_soon(fake.handshake)
        with anyio.fail_after(15):
            async with ClaudeSDKClient(options, transport) as client:
                yield client, fake


@pytest.mark.anyio
async def test_a_hook_input_is_a_dict_as_the_references() -> None:
    # the reference's hook inputs are TypedDicts, plain dicts at run time (its examples
    # annotate hooks with input_data: dict[str, Any]); code written for it may json-dump
    # the input to log it, check isinstance(input_data, dict), or add a key to it. The
    # same hook, run on both SDKs against the real CLI, failed all three on ccwire
    seen: list[Any] = []

    async def log_it(input_data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        seen.append((isinstance(input_data, dict), json.loads(json.dumps(input_data))))
        input_data["seen_by"] = "logger"
        seen.append((input_data.tool_name, input_data["seen_by"]))
        return {}

    wire = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}}
    options = ClaudeAgentOptions(hooks={"PreToolUse": [HookMatcher(hooks=[log_it])]})
    async with _connected(options) as fake:
        answer = await fake.request("hook_callback", callback_id="hook_0", input=wire)
    assert answer["subtype"] == "success", answer
    assert seen == [(True, wire), ("Bash", "logger")]


@pytest.mark.anyio
async def test_a_hook_context_is_a_dict_as_the_references() -> None:
    # the reference's HookContext is a TypedDict ({"signal": None}); hooks written for it
    # read context.get("signal") or context["signal"], which failed on ccwire's object
    seen: list[Any] = []

    async def check(input_data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        seen.append((isinstance(context, dict), context.get("signal") is context.signal))
        return {}

    wire = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {}}
    options = ClaudeAgentOptions(hooks={"PreToolUse": [HookMatcher(hooks=[check])]})
    async with _connected(options) as fake:
        answer = await fake.request("hook_callback", callback_id="hook_0", input=wire)
    assert answer["subtype"] == "success", answer
    assert seen == [(True, True)]


@pytest.mark.anyio
async def test_context_usage_is_a_dict_as_the_references() -> None:
    # the same probe: the reference's get_context_usage() returns its ContextUsageResponse
    # TypedDict, a dict json.dumps takes (get_server_info and get_mcp_status already were)
    body = {
        "categories": [{"name": "Messages", "tokens": 120, "color": "blue"}],
        "totalTokens": 120,
        "maxTokens": 200000,
        "percentage": 0.06,
        "model": "claude-sonnet-4-5",
    }

    async def cli_side(fake: FakeCLI) -> None:
        request = await fake.receive("control_request", "get_context_usage")
        await fake.respond(request["request_id"], body)

    async with _client(ClaudeAgentOptions()) as (client, fake), anyio.create_task_group() as tg:
        tg.start_soon(cli_side, fake)
        usage = await client.get_context_usage()
    assert isinstance(usage, dict) and json.loads(json.dumps(usage)) == body
    assert usage.total_tokens == usage["totalTokens"] == 120


def test_what_the_client_returns_is_typed_as_the_references() -> None:
    # code written for the reference annotates what it gets back; mypy --strict refused
    # `info: dict[str, Any] | None = await client.get_server_info()` on ccwire (a Mapping)
    hints = get_type_hints(ClaudeSDKClient.get_server_info)
    assert hints["return"] == (dict[str, Any] | None)


def test_pydantic_validates_and_embeds_the_message_classes() -> None:
    # web backends (FastAPI) put messages in their pydantic models; pydantic reads a
    # dataclass field's `type` (a string) and looked `ContentBlock` up in `ccwire`, where
    # the lazy package had not loaded it: "`AssistantMessage` is not fully defined"
    import pydantic  # a dev dependency, as web backends have it

    adapter = pydantic.TypeAdapter(ccwire.AssistantMessage)
    message = adapter.validate_python({"content": [{"text": "hi"}], "model": "m"})
    assert message.content == [ccwire.TextBlock(text="hi")]

    class Reply(pydantic.BaseModel):
        message: ccwire.AssistantMessage
        result: ccwire.ResultMessage | None = None

    reply = Reply(message=message)
    assert reply.model_dump()["message"]["content"] == [{"text": "hi", "raw": {}}]
    assert set(Reply.model_json_schema()["$defs"]) >= {"AssistantMessage", "TextBlock"}


def test_a_tool_given_twice_is_served_once_the_last_wins() -> None:
    # langchain-claude-agent-sdk 0.2.0 (PyPI) turns bind_tools() into one
    # create_sdk_mcp_server; langchain-tests' standard test_bind_tool_pydantic binds a
    # model and its JSON schema, two tools of one name. The reference serves them (calls
    # run the last); ccwire refused the server with ToolDefinitionError
    first = ccwire.tool("square", "Square it.", {"n": int})(_square)
    second = ccwire.tool("square", "Square an integer.", {"n": int})(_square)
    other = ccwire.tool("cube", "Cube it.", {"n": int})(_square)
    server = create_sdk_mcp_server("langchain-tools", tools=[first, other, second])
    assert dict(server["instance"].tools) == {"square": second, "cube": other}


async def _square(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": str(args["n"] ** 2)}]}


_SYSTEM_FRAMES_BY_TYPE_NAME = """
import json
import pickle
from claude_agent_sdk._internal.message_parser import parse_message
subtypes = [
    "init", "api_retry", "status", "compact_boundary", "background_tasks_changed",
    "session_state_changed", "notification", "informational", "session_title_changed",
    "task_started", "hook_started",
]
frames = [
    {"type": "system", "subtype": s, "session_id": "s", "uuid": "u", "task_id": "t",
     "description": "d", "hook_id": "h", "hook_name": "n", "hook_event": "Stop"}
    for s in subtypes
]
print(json.dumps([type(parse_message(f)).__name__ for f in frames]))
"""


def test_system_messages_the_reference_has_no_class_for_dispatch_by_type_name(
    reference_python: Path,
) -> None:
    # agentd-sdk 0.6.0 (PyPI), tracker.py: process_message() dispatches on
    # type(message).__name__ and records `elif message_type == "SystemMessage"`. Run on
    # both SDKs against the real CLI (a 529 answered by a retry), its run on ccwire lost
    # the api_retry event: ccwire's ApiRetryMessage was not named SystemMessage, as the
    # reference's plain SystemMessage for that frame is. Typed classes the reference has
    # too (TaskStartedMessage, HookEventMessage) keep their names
    _same_on_both(  # on the parser the drop-in serves
        reference_python,
        _SYSTEM_FRAMES_BY_TYPE_NAME,
        "claude_agent_sdk._internal.message_parser",
        "ccwire._wire.message_parser",
    )
    # still the typed classes, under their own names where pickle and imports look
    retry = ccwire.ApiRetryMessage(subtype="api_retry", data={})
    assert isinstance(retry, ccwire.SystemMessage)
    assert type(retry).__qualname__ == "ApiRetryMessage"
    assert ccwire.ApiRetryMessage.__module__ == "ccwire"
    assert pickle.loads(pickle.dumps(retry)) == retry


def _sniffed_as_claude_agent_sdk(obj: object) -> bool:
    return any(cls.__module__.split(".")[0] == "claude_agent_sdk" for cls in type(obj).__mro__)


def test_an_agent_object_is_told_from_other_sdks_by_the_modules_of_its_mro() -> None:
    # bridge-adk 0.1.0 (PyPI), adapters/_claude.py: serve(ClaudeAgentOptions(...)) picks
    # its claude-agent-sdk adapter when a class of type(agent).__mro__ lives in
    # claude_agent_sdk (module_root_in). On the drop-in every class reported ccwire, so
    # serve() raised NoAdapterError ("Don't know how to serve ...") where the reference
    # serves the agent over A2A
    options = ClaudeAgentOptions(system_prompt="You are a researcher.")
    assert _sniffed_as_claude_agent_sdk(options)
    assert _sniffed_as_claude_agent_sdk(ClaudeSDKClient(options))
    # still ccwire's classes, under the module where pickle and imports look
    assert (ClaudeAgentOptions.__module__, ClaudeSDKClient.__module__) == ("ccwire", "ccwire")


_TAGGED_MESSAGES = """
import json
from claude_agent_sdk import (
    AssistantMessage, RateLimitEvent, RateLimitInfo, ResultMessage, StreamEvent,
    SystemMessage, TextBlock, ToolResultBlock, ToolUseBlock, UserMessage,
)
made = [
    AssistantMessage(content=[TextBlock(text="hi")], model="m"),
    UserMessage(content=[ToolResultBlock(tool_use_id="t", content="ok", is_error=True)]),
    ResultMessage(subtype="success", duration_ms=1, duration_api_ms=1, is_error=False,
                  num_turns=1, session_id="s"),
    SystemMessage(subtype="init", data={"session_id": "s"}),
    StreamEvent(uuid="u", session_id="s", event={"type": "message_stop"}),
    RateLimitEvent(rate_limit_info=RateLimitInfo(status="allowed"), uuid="u", session_id="s"),
    TextBlock(text="hi"),
    ToolUseBlock(id="t", name="Bash", input={"command": "ls"}),
]
seen = []
for message in made:
    message.received_at = 1.5
    fields = vars(message)
    seen.append([type(message).__name__, message.received_at, hasattr(message, "__dict__"),
                 "received_at" in fields])
print(json.dumps(seen))
"""


def test_a_message_takes_an_attribute_the_code_adds(reference_python: Path) -> None:
    # a FastAPI memory-chat app on claude-agent-sdk (its chat_logging.py, whose
    # serialize_message feeds a JSONL SessionLogger) logs each message received as
    # `dict(vars(message))` when `hasattr(message, "__dict__")`; other code tags what it
    # receives (`message.received_at = ...`). The reference's messages and blocks are
    # plain dataclasses; ccwire's had __slots__: run on both against the real CLI, the
    # app's log held dicts on the reference and reprs on ccwire, and a tag raised
    # AttributeError
    _same_on_both(
        reference_python, _TAGGED_MESSAGES, "from claude_agent_sdk import", "from ccwire import"
    )
    # still equal by their fields, the tag aside, and still pickled with it
    tagged = ccwire.TextBlock(text="hi")
    tagged.received_at = 1.5  # type: ignore[attr-defined]
    assert tagged == ccwire.TextBlock(text="hi")
    assert pickle.loads(pickle.dumps(tagged)).received_at == 1.5


_MESSAGE_FIELDS = """
import dataclasses, json
import claude_agent_sdk, claude_agent_sdk.types as types
print(json.dumps({
    name: [f.name for f in dataclasses.fields(value)]
    for module in (claude_agent_sdk, types) for name, value in vars(module).items()
    if isinstance(value, type) and dataclasses.is_dataclass(value)
    and name.endswith(("Message", "Block", "Event"))
}))
"""


def test_messages_print_and_compare_by_the_references_fields_only(
    reference_python: Path,
) -> None:
    # code that logs `repr(message)` or compares messages (snapshot tests, dedup by
    # `==`): run on both against the real CLI, a tool result's UserMessage printed a
    # `session_id=...` the reference's has no field for, and HookEventMessage its
    # hook_id, stdout, ... ("raw" aside, each field ccwire adds is out of repr and ==)
    shown = {}
    for name, fields in on_reference(reference_python, _MESSAGE_FIELDS).items():
        ours = getattr(ccwire, name, None) or getattr(ccwire_types, name)
        extra = [
            f.name for f in dataclasses.fields(ours)
            if f.name not in fields and f.name != "raw" and (f.repr or f.compare)
        ]  # fmt: skip
        if extra:
            shown[name] = extra
    assert shown == {}


_INVOCATION: contextvars.ContextVar[str | None] = contextvars.ContextVar("invocation", default=None)


@pytest.mark.anyio
async def test_a_patch_on_the_query_class_runs_around_each_callback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # respan-instrumentation-claude-agent-sdk wraps the reference's
    # Query._handle_control_request (the seam every control request of the CLI is served
    # through) to set its invocation context around the hooks; reading the attribute
    # raised AttributeError on ccwire, out of its activate(), so nothing was traced
    from ccwire._conversation.reference_query import Query  # the drop-in's Query

    original = Query._handle_control_request
    served: list[str] = []

    async def patched(query: Any, request: dict[str, Any]) -> Any:
        served.append(request["request"]["subtype"])
        token = _INVOCATION.set(getattr(query, "_invocation", None))
        try:
            return await original(query, request)
        finally:
            _INVOCATION.reset(token)

    monkeypatch.setattr(Query, "_handle_control_request", patched)
    seen: list[str | None] = []

    async def hook(input_data: Any, tool_use_id: str | None, context: Any) -> dict[str, Any]:
        seen.append(_INVOCATION.get())
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny"}}

    wire = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {}}
    options = ClaudeAgentOptions(hooks={"PreToolUse": [HookMatcher(hooks=[hook])]})
    async with _client(options) as (client, fake):
        assert client._query is not None
        client._query._invocation = "turn-1"  # type: ignore[attr-defined]
        answer = await fake.request("hook_callback", callback_id="hook_0", input=wire)
    assert answer["subtype"] == "success", answer
    assert answer["response"]["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert (served, seen) == (["hook_callback"], ["turn-1"])


_SESSION_STORE_MODULE = """
import asyncio, json
import claude_agent_sdk._internal.session_store as m
names = ("InMemorySessionStore", "SessionKey", "SessionListSubkeysKey", "SessionStore",
         "SessionStoreEntry", "SessionStoreListEntry", "SessionSummaryEntry",
         "file_path_to_session_key", "fold_session_summary", "project_key_for_directory")
store = m.InMemorySessionStore()
key = {"project_key": "p", "session_id": "s"}
asyncio.run(store.append(key, [{"type": "user", "uuid": "u1"}]))
print(json.dumps({
    "names": [n for n in names if hasattr(m, n)],
    "loaded": asyncio.run(store.load(key)),
    "key": m.file_path_to_session_key("/projects/p/s.jsonl", "/projects"),
}))
"""


def test_the_in_memory_store_imported_from_the_private_module(
    reference_python: Path, tmp_path: Path
) -> None:
    # maximem-synap-claude-agent's SynapSessionStore wraps, when given no store, the
    # reference's `claude_agent_sdk._internal.session_store.InMemorySessionStore`:
    # importing it failed with ModuleNotFoundError on the drop-in
    from ccwire._app.compat import install_dropin

    install_dropin(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    ours = subprocess.run(
        [sys.executable, "-c", _SESSION_STORE_MODULE],
        capture_output=True, text=True, timeout=60, env=env, check=False,
    )  # fmt: skip
    assert ours.returncode == 0, ours.stderr
    assert json.loads(ours.stdout) == on_reference(reference_python, _SESSION_STORE_MODULE)
