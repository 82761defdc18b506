"""The codec: the one place that knows the CLI's wire names.

Everything above this module works with typed values; everything below it (the
transport) moves bytes. Decoders are lenient: unknown message types, block types and
fields are kept (``RawMessage``, ``UnknownBlock``, ``raw``), never dropped. Decoders
raise only :class:`~ccwire.MessageDecodeError`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import TYPE_CHECKING, Any, TypeGuard

from ._errors import MessageDecodeError
from ._messages import (
    AssistantMessage,
    ContentBlock,
    Message,
    RawMessage,
    ResultMessage,
    ServerToolUseBlock,
    StreamEvent,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    TranscriptMirrorMessage,
    UnknownBlock,
    UserMessage,
)
from ._permission_types import (
    PermissionResultAllow,
    PermissionResultDeny,
    PermissionRuleValue,
    PermissionUpdate,
)
from ._slot_builder import slot_builder

if TYPE_CHECKING:  # the hook types load with the first hook callback: fast import
    from ._hook_io import BaseHookInput


# Top-level frame types that belong to the control protocol.
CONTROL_REQUEST = "control_request"
CONTROL_RESPONSE = "control_response"
CONTROL_CANCEL_REQUEST = "control_cancel_request"
KEEP_ALIVE = "keep_alive"

# Control subtypes the CLI sends us.
CAN_USE_TOOL = "can_use_tool"
HOOK_CALLBACK = "hook_callback"
MCP_MESSAGE = "mcp_message"

# Control subtypes we send.
INITIALIZE = "initialize"
INTERRUPT = "interrupt"
SET_PERMISSION_MODE = "set_permission_mode"
SET_MODEL = "set_model"

SESSION_STATE_CHANGED = "session_state_changed"


def frame_type(obj: Mapping[str, Any]) -> str:
    """The ``type`` of a decoded frame ('' when missing or not a string)."""
    t = obj.get("type")
    return t if isinstance(t, str) else ""


# --------------------------------------------------------------------------- blocks


def _is_map(v: Any) -> TypeGuard[Mapping[str, Any]]:
    """``isinstance(v, Mapping)``, ten times faster for the common ``dict``."""
    return type(v) is dict or isinstance(v, Mapping)


# positional constructors for the two classes of a streamed text frame (the hot path)
_new_text = slot_builder(TextBlock)
_new_assistant = slot_builder(AssistantMessage)


def _text(b: Mapping[str, Any]) -> ContentBlock:
    text = b.get("text", "")
    return TextBlock(text=text if type(text) is str else str(text), raw=b)


def _thinking(b: Mapping[str, Any]) -> ContentBlock:
    return ThinkingBlock(
        thinking=str(b.get("thinking", "")), signature=str(b.get("signature", "")), raw=b
    )


def _tool_use(b: Mapping[str, Any]) -> ContentBlock:
    inp = b.get("input")
    return ToolUseBlock(
        id=str(b.get("id", "")),
        name=str(b.get("name", "")),
        input=inp if isinstance(inp, dict) else {},
        raw=b,
    )


def _server_tool_use(b: Mapping[str, Any]) -> ContentBlock:
    inp = b.get("input")
    return ServerToolUseBlock(
        id=str(b.get("id", "")),
        name=str(b.get("name", "")),
        input=inp if isinstance(inp, dict) else {},
        raw=b,
    )


def _tool_result(b: Mapping[str, Any]) -> ContentBlock:
    content = b.get("content")
    if not (content is None or isinstance(content, (str, list))):
        content = None
    is_error = b.get("is_error")
    return ToolResultBlock(
        tool_use_id=str(b.get("tool_use_id", "")),
        content=content,
        is_error=is_error if isinstance(is_error, bool) else None,
        raw=b,
    )


_BLOCK_DECODERS: dict[str, Callable[[Mapping[str, Any]], ContentBlock]] = {
    "text": _text,
    "thinking": _thinking,
    "tool_use": _tool_use,
    "server_tool_use": _server_tool_use,
    "tool_result": _tool_result,
}


def decode_block(b: Any) -> ContentBlock:
    """Decode one content block; unknown types become :class:`UnknownBlock`."""
    if not _is_map(b):
        return UnknownBlock(type="", raw={"value": b})
    t = b.get("type")
    decoder = _BLOCK_DECODERS.get(t) if isinstance(t, str) else None
    if decoder is None:
        return UnknownBlock(type=t if isinstance(t, str) else "", raw=b)
    return decoder(b)


def _blocks(content: Any) -> list[ContentBlock]:
    if isinstance(content, list):
        return [decode_block(b) for b in content]
    if isinstance(content, str):
        return [TextBlock(text=content, raw={"type": "text", "text": content})]
    return []


# ------------------------------------------------------------------------- messages


def _opt_str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def _int(v: Any) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


def _user(obj: Mapping[str, Any]) -> Message:
    msg = obj.get("message")
    content: Any = msg.get("content") if _is_map(msg) else None
    decoded: str | list[ContentBlock]
    decoded = content if isinstance(content, str) else _blocks(content)
    return UserMessage(
        content=decoded,
        uuid=_opt_str(obj.get("uuid")),
        parent_tool_use_id=_opt_str(obj.get("parent_tool_use_id")),
        tool_use_result=obj.get("tool_use_result"),
        session_id=_opt_str(obj.get("session_id")),
        raw=obj,
    )


def _assistant(obj: Mapping[str, Any]) -> Message:
    # The hot path of a streaming turn (one frame per content block): plain
    # conditionals instead of helper calls, and the one-text-block frame decoded inline.
    msg = obj.get("message")
    if not _is_map(msg):
        raise MessageDecodeError("assistant frame without a 'message' object", line=str(obj)[:200])
    get = obj.get
    usage = msg.get("usage")
    content = msg.get("content")
    blocks: list[ContentBlock]
    if type(content) is list and len(content) == 1:
        b = content[0]
        if type(b) is dict and b.get("type") == "text" and type(b.get("text")) is str:
            blocks = [_new_text(b["text"], b)]
        else:
            blocks = [decode_block(b)]
    else:
        blocks = _blocks(content)
    model = msg.get("model", "")
    ptu, err, mid, uuid, sid = (
        get("parent_tool_use_id"), get("error"), msg.get("id"), get("uuid"), get("session_id")
    )  # fmt: skip
    return _new_assistant(  # the fields of AssistantMessage, in order
        blocks,
        model if type(model) is str else str(model),
        ptu if type(ptu) is str else None,
        err if type(err) is str else None,
        usage if _is_map(usage) else None,
        mid if type(mid) is str else None,
        uuid if type(uuid) is str else None,
        sid if type(sid) is str else None,
        obj,
    )


def _system(obj: Mapping[str, Any]) -> Message:
    return SystemMessage(subtype=str(obj.get("subtype", "")), data=obj, raw=obj)


def _result(obj: Mapping[str, Any]) -> Message:
    cost = obj.get("total_cost_usd")
    usage = obj.get("usage")
    model_usage = obj.get("modelUsage")
    errors = obj.get("errors")
    denials = obj.get("permission_denials")
    uuids = obj.get("user_message_uuids")
    return ResultMessage(
        subtype=str(obj.get("subtype", "")),
        duration_ms=_int(obj.get("duration_ms")),
        duration_api_ms=_int(obj.get("duration_api_ms")),
        is_error=bool(obj.get("is_error", False)),
        num_turns=_int(obj.get("num_turns")),
        session_id=str(obj.get("session_id", "")),
        stop_reason=_opt_str(obj.get("stop_reason")),
        total_cost_usd=float(cost) if isinstance(cost, (int, float)) else None,
        usage=usage if isinstance(usage, Mapping) else None,
        result=_opt_str(obj.get("result")),
        structured_output=obj.get("structured_output"),
        errors=tuple(str(e) for e in errors) if isinstance(errors, list) else (),
        permission_denials=tuple(d for d in denials if isinstance(d, Mapping))
        if isinstance(denials, list)
        else (),
        terminal_reason=_opt_str(obj.get("terminal_reason")),
        model_usage=model_usage if isinstance(model_usage, Mapping) else None,
        user_message_uuids=tuple(u for u in uuids if isinstance(u, str))
        if isinstance(uuids, list)
        else (),
        uuid=_opt_str(obj.get("uuid")),
        raw=obj,
    )


def _stream_event(obj: Mapping[str, Any]) -> Message:
    event = obj.get("event")
    return StreamEvent(
        uuid=str(obj.get("uuid", "")),
        session_id=str(obj.get("session_id", "")),
        event=event if isinstance(event, Mapping) else {},
        parent_tool_use_id=_opt_str(obj.get("parent_tool_use_id")),
        raw=obj,
    )


TRANSCRIPT_MIRROR = "transcript_mirror"


def _transcript_mirror(obj: Mapping[str, Any]) -> Message:
    return TranscriptMirrorMessage(type=TRANSCRIPT_MIRROR, data=obj)


_MESSAGE_DECODERS: dict[str, Callable[[Mapping[str, Any]], Message]] = {
    "user": _user,
    "assistant": _assistant,
    "system": _system,
    "result": _result,
    "stream_event": _stream_event,
    TRANSCRIPT_MIRROR: _transcript_mirror,
}


def decode_message(obj: Mapping[str, Any]) -> Message:
    """Decode a conversation frame; unknown types become :class:`RawMessage`."""
    t = frame_type(obj)
    decoder = _MESSAGE_DECODERS.get(t)
    if decoder is None:
        return RawMessage(type=t, data=obj)
    try:
        return decoder(obj)
    except MessageDecodeError:
        raise
    except (TypeError, ValueError, AttributeError, OverflowError) as exc:
        raise MessageDecodeError(f"malformed {t!r} frame ({exc})", line=str(obj)[:200]) from exc


def encode_message(message: Message) -> dict[str, Any]:
    """The wire frame of a decoded message (the frame it was decoded from)."""
    return dict(message.raw)


# ------------------------------------------------------------------- user messages


def encode_user_message(
    content: str | list[dict[str, Any]],
    *,
    session_id: str = "default",
    parent_tool_use_id: str | None = None,
    uuid: str | None = None,
) -> dict[str, Any]:
    """A user message frame for stdin."""
    frame: dict[str, Any] = {
        "type": "user",
        "message": {"role": "user", "content": content},
        "parent_tool_use_id": parent_tool_use_id,
        "session_id": session_id,
    }
    if uuid is not None:
        frame["uuid"] = uuid
    return frame


def user_message_uuid(frame: Mapping[str, Any]) -> str | None:
    """The ``uuid`` a user message frame carries, if any."""
    return _opt_str(frame.get("uuid"))


# ----------------------------------------------------------------- control frames


@dataclass(frozen=True, slots=True)
class ControlResponse:
    """A ``control_response`` frame, success or error."""

    request_id: str
    ok: bool
    response: Mapping[str, Any]
    error: str = ""
    error_code: str | None = None


@dataclass(frozen=True, slots=True)
class ControlRequest:
    """A ``control_request`` frame from the CLI."""

    request_id: str
    subtype: str
    request: Mapping[str, Any]


def decode_control_response(obj: Mapping[str, Any]) -> ControlResponse:
    """Decode a ``control_response`` frame."""
    resp = obj.get("response")
    if not isinstance(resp, Mapping) or not isinstance(resp.get("request_id"), str):
        raise MessageDecodeError(
            "control_response without response.request_id", line=str(obj)[:200]
        )
    payload = resp.get("response")
    ok = resp.get("subtype") == "success"
    err = resp.get("error")
    code = resp.get("error_code")
    return ControlResponse(
        request_id=resp["request_id"],
        ok=ok,
        response=payload if isinstance(payload, Mapping) else {},
        error=str(err) if err is not None else ("" if ok else "unknown error"),
        error_code=code if isinstance(code, str) else None,
    )


def decode_control_request(obj: Mapping[str, Any]) -> ControlRequest:
    """Decode a ``control_request`` frame. Raises if ``request_id`` or ``request`` is missing."""
    rid = obj.get("request_id")
    req = obj.get("request")
    if not isinstance(rid, str):
        raise MessageDecodeError("control_request without a request_id", line=str(obj)[:200])
    if not isinstance(req, Mapping):
        raise MessageDecodeError("control_request without a request object", line=str(obj)[:200])
    subtype = req.get("subtype")
    return ControlRequest(
        request_id=rid, subtype=subtype if isinstance(subtype, str) else "", request=req
    )


def decode_cancel_request_id(obj: Mapping[str, Any]) -> str | None:
    """The id a ``control_cancel_request`` withdraws."""
    return _opt_str(obj.get("request_id"))


def encode_control_request(
    request_id: str, subtype: str, fields: Mapping[str, Any]
) -> dict[str, Any]:
    """A ``control_request`` frame we send."""
    return {
        "type": CONTROL_REQUEST,
        "request_id": request_id,
        "request": {"subtype": subtype, **fields},
    }


def encode_success(request_id: str, response: Mapping[str, Any] | None) -> dict[str, Any]:
    """A success ``control_response`` to a CLI request."""
    body: dict[str, Any] = {"subtype": "success", "request_id": request_id}
    if response is not None:
        body["response"] = response
    return {"type": CONTROL_RESPONSE, "response": body}


def encode_error(request_id: str, error: str) -> dict[str, Any]:
    """An error ``control_response`` to a CLI request."""
    return {
        "type": CONTROL_RESPONSE,
        "response": {"subtype": "error", "request_id": request_id, "error": error},
    }


# --------------------------------------------------------------------- permissions


@dataclass(frozen=True, slots=True)
class CanUseToolRequest:
    """A decoded ``can_use_tool`` request."""

    tool_name: str
    input: dict[str, Any]
    tool_use_id: str | None
    suggestions: tuple[PermissionUpdate, ...]
    agent_id: str | None = None
    blocked_path: str | None = None
    decision_reason: str | None = None
    title: str | None = None
    display_name: str | None = None
    description: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)


def decode_permission_update(d: Mapping[str, Any]) -> PermissionUpdate:
    """Decode one ``PermissionUpdate`` (a suggestion from the CLI)."""
    rules = d.get("rules")
    dirs = d.get("directories")
    return PermissionUpdate(
        type=d.get("type"),  # type: ignore[arg-type]
        rules=tuple(
            PermissionRuleValue(
                tool_name=str(r.get("toolName", "")), rule_content=_opt_str(r.get("ruleContent"))
            )
            for r in rules
            if isinstance(r, Mapping)
        )
        if isinstance(rules, list)
        else None,
        behavior=d.get("behavior"),
        mode=d.get("mode"),
        directories=tuple(str(x) for x in dirs) if isinstance(dirs, list) else None,
        destination=d.get("destination"),
    )


def encode_permission_update(u: PermissionUpdate) -> dict[str, Any]:
    """The wire form of a ``PermissionUpdate`` (destination defaults to ``session``)."""
    out: dict[str, Any] = {"type": u.type, "destination": u.destination or "session"}
    if u.rules is not None:
        rules = []
        for r in u.rules:
            rule: dict[str, Any] = {"toolName": r.tool_name}
            if r.rule_content is not None:
                rule["ruleContent"] = r.rule_content
            rules.append(rule)
        out["rules"] = rules
    if u.behavior is not None:
        out["behavior"] = u.behavior
    if u.mode is not None:
        out["mode"] = u.mode
    if u.directories is not None:
        out["directories"] = list(u.directories)
    return out


def decode_can_use_tool(req: Mapping[str, Any]) -> CanUseToolRequest:
    """Decode the body of a ``can_use_tool`` request."""
    name = req.get("tool_name")
    inp = req.get("input")
    if not isinstance(name, str):
        raise MessageDecodeError("can_use_tool without tool_name", line=str(req)[:200])
    sugg = req.get("permission_suggestions")
    return CanUseToolRequest(
        tool_name=name,
        input=dict(inp) if isinstance(inp, Mapping) else {},
        tool_use_id=_opt_str(req.get("tool_use_id")),
        suggestions=tuple(decode_permission_update(s) for s in sugg if isinstance(s, Mapping))
        if isinstance(sugg, list)
        else (),
        agent_id=_opt_str(req.get("agent_id")),
        blocked_path=_opt_str(req.get("blocked_path")),
        decision_reason=_opt_str(req.get("decision_reason")),
        title=_opt_str(req.get("title")),
        display_name=_opt_str(req.get("display_name")),
        description=_opt_str(req.get("description")),
        raw=req,
    )


def encode_permission_result(
    result: PermissionResultAllow | PermissionResultDeny, original_input: Mapping[str, Any]
) -> dict[str, Any]:
    """The ``can_use_tool`` response body. Allow always carries ``updatedInput``."""
    if isinstance(result, PermissionResultAllow):
        out: dict[str, Any] = {
            "behavior": "allow",
            "updatedInput": dict(result.updated_input)
            if result.updated_input is not None
            else dict(original_input),
        }
        if result.updated_permissions is not None:
            out["updatedPermissions"] = [
                encode_permission_update(u) for u in result.updated_permissions
            ]
        return out
    deny: dict[str, Any] = {"behavior": "deny", "message": result.message}
    if result.interrupt:
        deny["interrupt"] = True
    return deny


# --------------------------------------------------------------------------- hooks


@dataclass(frozen=True, slots=True)
class HookCallbackRequest:
    """A decoded ``hook_callback`` request."""

    callback_id: str
    input: Mapping[str, Any]
    tool_use_id: str | None


def decode_hook_callback(req: Mapping[str, Any]) -> HookCallbackRequest:
    """Decode the body of a ``hook_callback`` request."""
    cid = req.get("callback_id")
    if not isinstance(cid, str):
        raise MessageDecodeError("hook_callback without callback_id", line=str(req)[:200])
    inp = req.get("input")
    return HookCallbackRequest(
        callback_id=cid,
        input=inp if isinstance(inp, Mapping) else {},
        tool_use_id=_opt_str(req.get("tool_use_id")),
    )


_PY_KEYWORD_KEYS = {"async_": "async", "continue_": "continue"}


def encode_hook_output(output: Mapping[str, Any]) -> dict[str, Any]:
    """Hook output for the wire: top-level ``async_``/``continue_`` lose the underscore."""
    return {_PY_KEYWORD_KEYS.get(k, k): v for k, v in output.items()}


def encode_hook_matchers(
    matchers: Iterable[tuple[str | None, list[str], float | None]],
) -> list[dict[str, Any]]:
    """The initialize ``hooks`` entries of one event: (matcher, callback ids, timeout s)."""
    out = []
    for matcher, ids, timeout in matchers:
        entry: dict[str, Any] = {"matcher": matcher, "hookCallbackIds": ids}
        if timeout is not None:
            entry["timeout"] = timeout
        out.append(entry)
    return out


def encode_hook_matcher(
    matcher: str | None, ids: list[str], timeout: float | None, on_failure: str | None
) -> dict[str, Any]:
    """One initialize ``hooks`` entry: matcher, callback ids, timeout (s), ``onFailure``."""
    entry = encode_hook_matchers([(matcher, ids, timeout)])[0]
    if on_failure is not None:
        entry["onFailure"] = on_failure
    return entry


def decode_hook_input(raw: Mapping[str, Any]) -> BaseHookInput:
    """The typed input of a ``hook_callback`` (class chosen by ``hook_event_name``).

    Hook inputs are snake_case on the wire, so fields are taken by name; missing ones
    (and nulls where a value is expected) keep their defaults, so this never raises.
    ``permission_suggestions`` become :class:`PermissionUpdate` values.
    """
    from ._hook_io import HOOK_INPUT_TYPES, BaseHookInput

    event = raw.get("hook_event_name")
    cls = HOOK_INPUT_TYPES.get(event, BaseHookInput) if isinstance(event, str) else BaseHookInput
    kwargs: dict[str, Any] = {}
    for f in fields(cls):
        if f.name == "raw" or f.name not in raw:
            continue
        value = raw[f.name]
        if f.name == "permission_suggestions":
            value = tuple(
                decode_permission_update(s)
                for s in (value if isinstance(value, list) else ())
                if isinstance(s, Mapping)
            )
        elif value is None and (
            f.default_factory is not MISSING or (f.default is not MISSING and f.default is not None)
        ):
            continue  # null where a value is expected (tool_input: {}, ...): keep the default
        kwargs[f.name] = value
    return cls(**kwargs, raw=raw)


_HOOK_WIRE_NAMES = {
    "continue_": "continue",
    "async_": "async",
    "updated_mcp_tool_output": "updatedMCPToolOutput",
}


def _hook_wire_name(name: str) -> str:
    wire = _HOOK_WIRE_NAMES.get(name)
    if wire is not None:
        return wire
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _hook_value(value: Any) -> Any:
    if isinstance(value, PermissionResultAllow):
        allow: dict[str, Any] = {"behavior": "allow"}
        if value.updated_input is not None:
            allow["updatedInput"] = dict(value.updated_input)
        if value.updated_permissions is not None:
            allow["updatedPermissions"] = [
                encode_permission_update(u) for u in value.updated_permissions
            ]
        return allow
    if isinstance(value, PermissionResultDeny):
        deny: dict[str, Any] = {"behavior": "deny", "message": value.message}
        if value.interrupt:
            deny["interrupt"] = True
        return deny
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, tuple):
        return list(value)
    return value


def encode_hook_result(value: object, event: str) -> dict[str, Any]:
    """The ``hook_callback`` response body for what a callback of ``event`` returned.

    Accepts the typed outputs of :mod:`ccwire._hook_output`, the dict form (sent as
    given but for the ``async_``/``continue_`` keys) and ``None`` (``{}``). Raises
    ``TypeError`` for anything else and ``ValueError`` when an event-specific output
    belongs to another event.
    """
    if value is None:
        return {}
    from ._hook_output import AsyncHookOutput, HookOutput, HookSpecificOutput

    if isinstance(value, HookSpecificOutput):
        value = HookOutput(hook_specific_output=value)
    if isinstance(value, AsyncHookOutput):
        out: dict[str, Any] = {"async": True}
        if value.async_timeout is not None:
            out["asyncTimeout"] = value.async_timeout
        return out
    if isinstance(value, HookOutput):
        body: dict[str, Any] = {}
        for f in fields(value):
            item = getattr(value, f.name)
            if item is None:
                continue
            if isinstance(item, HookSpecificOutput):
                if event != item.EVENT:
                    raise ValueError(
                        f"{type(item).__name__} is the output of {item.EVENT} hooks, "
                        f"but this hook is registered for {event}"
                    )
                specific = {"hookEventName": item.EVENT}
                for g in fields(item):
                    sub = getattr(item, g.name)
                    if sub is not None:
                        specific[_hook_wire_name(g.name)] = _hook_value(sub)
                item = specific
            body[_hook_wire_name(f.name)] = _hook_value(item)
        return body
    if isinstance(value, Mapping):
        return encode_hook_output(value)
    raise TypeError(
        "expected a dict, None or a typed hook output (HookOutput, AsyncHookOutput, "
        f"PreToolUseOutput, ...); got {type(value).__name__}"
    )


# ----------------------------------------------------------------------------- MCP


@dataclass(frozen=True, slots=True)
class McpMessageRequest:
    """A decoded ``mcp_message`` request: a JSON-RPC message for one SDK server."""

    server_name: str
    message: Mapping[str, Any]


def decode_mcp_message(req: Mapping[str, Any]) -> McpMessageRequest:
    """Decode the body of an ``mcp_message`` request."""
    name = req.get("server_name")
    msg = req.get("message")
    if not isinstance(name, str) or not isinstance(msg, Mapping):
        raise MessageDecodeError("mcp_message without server_name/message", line=str(req)[:200])
    return McpMessageRequest(server_name=name, message=msg)


def mcp_response(message: Mapping[str, Any]) -> dict[str, Any]:
    """The success body that carries a JSON-RPC message back to the CLI."""
    return {"mcp_response": message}


def mcp_notification_ack() -> dict[str, Any]:
    """What we answer to a JSON-RPC notification (the reference SDK's choice)."""
    return {"mcp_response": {"jsonrpc": "2.0", "result": {}}}


def mcp_server_not_found(name: str, jsonrpc_id: Any) -> dict[str, Any]:
    """The body for an ``mcp_message`` naming a server we do not have."""
    return {
        "mcp_response": {
            "jsonrpc": "2.0",
            "id": jsonrpc_id,
            "error": {"code": -32601, "message": f"Server {name!r} not found"},
        }
    }


def mcp_outgoing(server_name: str, message: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of an ``mcp_message`` request we send (server notifications)."""
    return {"server_name": server_name, "message": message}


# ----------------------------------------------------------------------- initialize


def initialize_fields(
    hooks: Mapping[str, list[dict[str, Any]]] | None, extra: Mapping[str, Any]
) -> dict[str, Any]:
    """The fields of our ``initialize`` request."""
    fields: dict[str, Any] = {"hooks": dict(hooks) if hooks else None}
    fields.update(extra)
    return fields


COMMAND_LIFECYCLE = "command_lifecycle"
_SETTLED_COMMAND_STATES = frozenset({"completed", "cancelled"})


MSG_LIFECYCLE_CAPABILITY = "msg_lifecycle_v1"


def command_lifecycle(obj: Mapping[str, Any]) -> tuple[str, str] | None:
    """For a ``command_lifecycle`` frame: (the prompt's uuid, its state)."""
    if obj.get("type") != COMMAND_LIFECYCLE:
        return None
    cid = obj.get("command_uuid")
    state = obj.get("state")
    if not isinstance(cid, str) or not isinstance(state, str):
        return None
    return cid, state


def is_settled_command_state(state: str) -> bool:
    """True for the lifecycle states after which a prompt is owed nothing more."""
    return state in _SETTLED_COMMAND_STATES


def session_state(obj: Mapping[str, Any]) -> str | None:
    """The ``state`` of a ``system/session_state_changed`` frame, else None."""
    if obj.get("subtype") == SESSION_STATE_CHANGED:
        return _opt_str(obj.get("state"))
    return None
