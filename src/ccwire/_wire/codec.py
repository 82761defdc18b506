"""The codec: the one place that knows the CLI's wire names.

Everything above this module works with typed values; everything below it (the
transport) moves bytes. Decoders are lenient: unknown message types, block types and
fields are kept (``RawMessage``, ``UnknownBlock``, ``raw``), never dropped. Decoders
raise only `MessageDecodeError`. The wire forms of permission requests
and hook callbacks live in `codec_callbacks` and are re-exported here, so
``codec.X`` reaches every wire name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeGuard

from .._core.errors import MessageDecodeError
from .._core.slots import slot_builder

# permissions and hooks live in _codec_callbacks; every wire name is still codec.X
from .codec_callbacks import (
    CanUseToolRequest as CanUseToolRequest,
    HookCallbackRequest as HookCallbackRequest,
    _opt_str,
    decode_can_use_tool as decode_can_use_tool,
    decode_hook_callback as decode_hook_callback,
    decode_hook_input as decode_hook_input,
    decode_permission_update as decode_permission_update,
    encode_hook_matcher as encode_hook_matcher,
    encode_hook_matchers as encode_hook_matchers,
    encode_hook_output as encode_hook_output,
    encode_hook_result as encode_hook_result,
    encode_permission_result as encode_permission_result,
    encode_permission_update as encode_permission_update,
)
from .messages import (
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

if TYPE_CHECKING:  # the hook types load with the first hook callback: fast import
    pass


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
    """Decode one content block; unknown types become `UnknownBlock`."""
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
    """Decode a conversation frame; unknown types become `RawMessage`."""
    t = obj.get("type")
    if type(t) is not str:  # frame_type(), inlined: this runs for every message
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
