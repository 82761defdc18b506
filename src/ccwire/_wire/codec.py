"""The codec: the one place that knows the CLI's wire names.

Everything above this module works with typed values; everything below it (the
transport) moves bytes. Decoders are lenient: unknown message types, block types and
fields are kept (``RawMessage``, ``UnknownBlock``, ``raw``), never dropped. Decoders
raise only `MessageDecodeError`. The wire forms of permission requests
and hook callbacks live in `codec_callbacks` and are re-exported here, so
``codec.X`` reaches every wire name.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass
from typing import Any, Final, TypeGuard, cast

from .._core.errors import MessageDecodeError

# permissions and hooks live in codec_callbacks; every wire name is still codec.X
from .codec_callbacks import (
    ELICITATION_DECLINED as ELICITATION_DECLINED,
    CanUseToolRequest as CanUseToolRequest,
    HookCallbackRequest as HookCallbackRequest,
    decode_can_use_tool as decode_can_use_tool,
    decode_elicitation as decode_elicitation,
    decode_hook_callback as decode_hook_callback,
    decode_hook_input as decode_hook_input,
    decode_permission_update as decode_permission_update,
    decode_user_dialog as decode_user_dialog,
    encode_elicitation_result as encode_elicitation_result,
    encode_hook_matcher as encode_hook_matcher,
    encode_hook_matchers as encode_hook_matchers,
    encode_hook_output as encode_hook_output,
    encode_hook_result as encode_hook_result,
    encode_permission_result as encode_permission_result,
    encode_permission_update as encode_permission_update,
    encode_user_dialog_result as encode_user_dialog_result,
)
from .control_requests import decode_commands
from .jsonrpc import invalid_request, valid_id
from .messages import (
    ActiveGoalMessage,
    ApiRetryMessage,
    AssistantMessage,
    AuthStatusMessage,
    AutocompactStateMessage,
    BackgroundTasksChangedMessage,
    CommandsChangedMessage,
    CompactBoundaryMessage,
    ContentBlock,
    ControlRequestProgressMessage,
    ConversationResetMessage,
    DeferredToolUse,
    ElicitationCompleteMessage,
    FilesPersistedMessage,
    HookEventMessage,
    InformationalMessage,
    LocalCommandOutputMessage,
    MemoryRecallMessage,
    Message,
    MirrorErrorMessage,
    ModelRefusalFallbackMessage,
    ModelRefusalNoFallbackMessage,
    NotificationMessage,
    PermissionDeniedMessage,
    PluginInstallMessage,
    PostTurnSummaryMessage,
    PromptSuggestionMessage,
    RateLimitEvent,
    RateLimitInfo,
    RawMessage,
    ResultMessage,
    ServerToolResultBlock,
    ServerToolUseBlock,
    SessionMetadataMessage,
    SessionStateChangedMessage,
    SessionTitleChangedMessage,
    SessionWritesLostMessage,
    StatusMessage,
    StreamEvent,
    SystemMessage,
    TaskNotificationMessage,
    TaskProgressMessage,
    TaskStartedMessage,
    TaskSummaryMessage,
    TaskUpdatedMessage,
    TextBlock,
    ThinkingBlock,
    ThinkingTokensMessage,
    ToolProgressMessage,
    ToolResultBlock,
    ToolUseBlock,
    ToolUseSummaryMessage,
    TranscriptMirrorMessage,
    UnknownBlock,
    UserMessage,
    WorkerShuttingDownMessage,
)

# Top-level frame types that belong to the control protocol.
CONTROL_REQUEST = "control_request"
CONTROL_RESPONSE = "control_response"
CONTROL_CANCEL_REQUEST = "control_cancel_request"
KEEP_ALIVE = "keep_alive"

PROMPT_FRAME = "user"
"""The one frame type the CLI answers with a turn (a result). It reads any other
(``keep_alive``, ``control_cancel_request``, ``assistant``, ``system``...) without one:
no ``command_lifecycle``, no result (observed with CLI 2.1.330). Written as a prompt,
such a frame is owed nothing."""

# Control subtypes the CLI sends us.
CAN_USE_TOOL = "can_use_tool"
HOOK_CALLBACK = "hook_callback"
MCP_MESSAGE = "mcp_message"
ELICITATION = "elicitation"
REQUEST_USER_DIALOG = "request_user_dialog"

# Control subtypes we send.
INITIALIZE = "initialize"
INTERRUPT = "interrupt"
SET_PERMISSION_MODE = "set_permission_mode"
SET_MODEL = "set_model"

SESSION_STATE_CHANGED = "session_state_changed"


def _opt_str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def frame_type(obj: Mapping[str, Any]) -> str:
    """The ``type`` of a decoded frame ('' when missing or not a string)."""
    t = obj.get("type")
    return t if isinstance(t, str) else ""


# --------------------------------------------------------------------------- blocks


def _is_map(v: Any) -> TypeGuard[Mapping[str, Any]]:
    """``isinstance(v, Mapping)``, ten times faster for the common ``dict``."""
    return type(v) is dict or isinstance(v, Mapping)


def _malformed(b: Mapping[str, Any], field: str, want: str) -> MessageDecodeError:
    """The error for a known block whose ``field`` does not have the wire's shape."""
    got = type(b.get(field)).__name__ if field in b else "nothing"
    return MessageDecodeError(
        f"malformed {b.get('type')} block: {field!r} must be {want}, got {got}",
        line=repr(dict(b))[:200],
    )


def _str_field(b: Mapping[str, Any], field: str, default: str | None = None) -> str:
    value = b.get(field, default)
    if type(value) is not str:
        raise _malformed(b, field, "a string")
    return value


def _input_field(b: Mapping[str, Any]) -> dict[str, Any]:
    inp = b.get("input", {})
    if not isinstance(inp, dict):
        raise _malformed(b, "input", "an object")
    return inp


def _text(b: Mapping[str, Any]) -> ContentBlock:
    text = b.get("text")
    if type(text) is not str:
        raise _malformed(b, "text", "a string")
    return TextBlock(text=text, raw=b)


def _thinking(b: Mapping[str, Any]) -> ContentBlock:
    return ThinkingBlock(
        thinking=_str_field(b, "thinking"), signature=_str_field(b, "signature", ""), raw=b
    )


def _tool_use(b: Mapping[str, Any]) -> ContentBlock:
    return ToolUseBlock(
        id=_str_field(b, "id"), name=_str_field(b, "name"), input=_input_field(b), raw=b
    )


def _server_tool_use(b: Mapping[str, Any]) -> ContentBlock:
    return ServerToolUseBlock(
        id=_str_field(b, "id"), name=_str_field(b, "name"), input=_input_field(b), raw=b
    )


def _tool_result(b: Mapping[str, Any]) -> ContentBlock:
    content = b.get("content")
    if not (content is None or isinstance(content, (str, list))):
        raise _malformed(b, "content", "a string, a list of blocks or absent")
    is_error = b.get("is_error")
    if not (is_error is None or isinstance(is_error, bool)):
        raise _malformed(b, "is_error", "a boolean or absent")
    return ToolResultBlock(
        tool_use_id=_str_field(b, "tool_use_id"), content=content, is_error=is_error, raw=b
    )


_BLOCK_DECODERS: dict[str, Callable[[Mapping[str, Any]], ContentBlock]] = {
    "text": _text,
    "thinking": _thinking,
    "tool_use": _tool_use,
    "server_tool_use": _server_tool_use,
    "tool_result": _tool_result,
}


def _server_tool_result(b: Mapping[str, Any], t: str) -> ContentBlock:
    """A ``<server tool>_tool_result`` block (``advisor_tool_result``, ...) whose content
    is an object; anything else stays an `UnknownBlock`."""
    content = b.get("content")
    tid = b.get("tool_use_id")
    if isinstance(content, dict) and isinstance(tid, str):
        return ServerToolResultBlock(tool_use_id=tid, content=content, raw=b)
    return UnknownBlock(type=t, raw=b)


def decode_block(b: Any) -> ContentBlock:
    """Decode one content block; unknown types become `UnknownBlock`."""
    if not _is_map(b):
        return UnknownBlock(type="", raw={"value": b})
    t = b.get("type")
    decoder = _BLOCK_DECODERS.get(t) if isinstance(t, str) else None
    if decoder is None:
        if isinstance(t, str) and t.endswith("_tool_result"):
            return _server_tool_result(b, t)
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
        origin=_origin(obj),
        session_id=_opt_str(obj.get("session_id")),
        raw=obj,
        **_carried(obj, _USER_EXTRAS),
    )


# The fields of user and assistant frames that most frames lack, as (wire key:
# (attribute, kind)); absent, each keeps its dataclass default (None).
_SUBAGENT_EXTRAS: Final = {
    "agent_id": ("agent_id", "optstr"),
    "subagent_type": ("subagent_type", "optstr"),
    "task_description": ("task_description", "optstr"),
    "timestamp": ("timestamp", "optstr"),
}
_USER_EXTRAS: Final = {
    "isSynthetic": ("is_synthetic", "optbool"),
    "isReplay": ("is_replay", "optbool"),
    "priority": ("priority", "optstr"),
    "shouldQuery": ("should_query", "optbool"),
    "client_composed": ("client_composed", "optbool"),
    "pasted_content": ("pasted_content", "list"),
    "inline_pastes": ("inline_pastes", "strlist"),
    "file_attachments": ("file_attachments", "list"),
    **_SUBAGENT_EXTRAS,
}
_ASSISTANT_EXTRAS: Final = {
    "request_id": ("request_id", "optstr"),
    "aborted": ("aborted", "optbool"),
    "supersedes": ("supersedes", "strlist"),
    "resume_reason": ("resume_reason", "optstr"),
    "resumed_from_incomplete_thinking": ("resumed_from_incomplete_thinking", "optbool"),
    "context_usage": ("context_usage", "map"),
    "usage_report": ("usage_report", "map"),
    **_SUBAGENT_EXTRAS,
}


def _carried(obj: Mapping[str, Any], extras: Mapping[str, tuple[str, str]]) -> dict[str, Any]:
    """The fields of ``extras`` that ``obj`` carries, decoded by `_field`, by attribute
    (the keys of the frame are walked, not the table: a frame carries few of them)."""
    return {extras[key][0]: _field(obj, key, extras[key][1]) for key in obj if key in extras}


def _origin(obj: Mapping[str, Any]) -> Any:
    """``obj["origin"]`` when it is an object with a string ``kind``, else None."""
    origin = obj.get("origin")
    if isinstance(origin, dict) and isinstance(origin.get("kind"), str):
        return origin
    return None


def _str_list(v: Any) -> list[str] | None:
    return [x for x in v if isinstance(x, str)] if isinstance(v, list) else None


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
            blocks = [TextBlock(b["text"], b)]
        else:
            blocks = [decode_block(b)]
    else:
        blocks = _blocks(content)
    model = msg.get("model", "")
    ptu, err, mid, uuid, sid = (
        get("parent_tool_use_id"), get("error"), msg.get("id"), get("uuid"), get("session_id")
    )  # fmt: skip
    stop, umu, umus = msg.get("stop_reason"), get("user_message_uuid"), get("user_message_uuids")
    return AssistantMessage(
        blocks,
        model if type(model) is str else str(model),
        parent_tool_use_id=ptu if type(ptu) is str else None,
        error=err if type(err) is str else None,
        usage=usage if _is_map(usage) else None,
        message_id=mid if type(mid) is str else None,
        stop_reason=stop if type(stop) is str else None,
        session_id=sid if type(sid) is str else None,
        uuid=uuid if type(uuid) is str else None,
        user_message_uuid=umu if type(umu) is str else None,
        user_message_uuids=None if umus is None else _str_list(umus),
        raw=obj,
        **_carried(obj, _ASSISTANT_EXTRAS),
    )


_NO_USAGE: Any = {"total_tokens": 0, "tool_uses": 0, "duration_ms": 0}


def _task_usage(v: Any) -> Any:
    """A task's ``usage`` object (a `TaskUsage` dict, passed on as sent), else None."""
    return v if isinstance(v, dict) else None


def _task_started(obj: Mapping[str, Any], subtype: str) -> Message:
    return TaskStartedMessage(
        subtype,
        obj,
        str(obj["task_id"]),
        str(obj.get("description", "")),
        str(obj.get("uuid", "")),
        str(obj.get("session_id", "")),
        _opt_str(obj.get("tool_use_id")),
        _opt_str(obj.get("task_type")),
        raw=obj,
        run_id=_field(obj, "run_id", "optstr"),
        subagent_type=_field(obj, "subagent_type", "optstr"),
        is_backgrounded=_field(obj, "is_backgrounded", "optbool"),
        spawn_depth=_field(obj, "spawn_depth", "optint"),
        parent_task_id=_field(obj, "parent_task_id", "optstr"),
        workflow_name=_field(obj, "workflow_name", "optstr"),
        prompt=_field(obj, "prompt", "optstr"),
        skip_transcript=_field(obj, "skip_transcript", "optbool"),
        ambient=_field(obj, "ambient", "optbool"),
    )


def _task_progress(obj: Mapping[str, Any], subtype: str) -> Message:
    return TaskProgressMessage(
        subtype,
        obj,
        str(obj["task_id"]),
        str(obj.get("description", "")),
        _task_usage(obj.get("usage")) or _NO_USAGE,
        str(obj.get("uuid", "")),
        str(obj.get("session_id", "")),
        _opt_str(obj.get("tool_use_id")),
        _opt_str(obj.get("last_tool_name")),
        raw=obj,
        run_id=_field(obj, "run_id", "optstr"),
        subagent_type=_field(obj, "subagent_type", "optstr"),
        summary=_field(obj, "summary", "optstr"),
    )


def _task_notification(obj: Mapping[str, Any], subtype: str) -> Message:
    return TaskNotificationMessage(
        subtype,
        obj,
        str(obj["task_id"]),
        str(obj.get("status", "")),  # type: ignore[arg-type]  # an open set on the wire
        str(obj.get("output_file", "")),
        str(obj.get("summary", "")),
        str(obj.get("uuid", "")),
        str(obj.get("session_id", "")),
        _opt_str(obj.get("tool_use_id")),
        _task_usage(obj.get("usage")),
        raw=obj,
        run_id=_field(obj, "run_id", "optstr"),
        reason=_field(obj, "reason", "optstr"),
        resource_links=_field(obj, "resource_links", _MAPS),
        skip_transcript=_field(obj, "skip_transcript", "optbool"),
        ambient=_field(obj, "ambient", "optbool"),
    )


def _task_updated(obj: Mapping[str, Any], subtype: str) -> Message:
    patch = obj.get("patch")
    patch = patch if isinstance(patch, dict) else {}
    return TaskUpdatedMessage(
        subtype,
        obj,
        str(obj["task_id"]),
        patch,
        _opt_str(patch.get("status")),  # type: ignore[arg-type]  # an open set on the wire
        _opt_str(obj.get("session_id")),
        _opt_str(obj.get("uuid")),
        raw=obj,
        run_id=_field(obj, "run_id", "optstr"),
    )


def _hook_event(obj: Mapping[str, Any], subtype: str) -> Message:
    name = obj.get("hook_event") or obj.get("hook_name") or obj.get("hook_event_name")
    code = obj.get("exit_code")
    return HookEventMessage(
        subtype,
        obj,
        name if isinstance(name, str) else "",
        _opt_str(obj.get("session_id")),
        _opt_str(obj.get("uuid")),
        _opt_str(obj.get("hook_id")),
        _opt_str(obj.get("hook_name")),
        _opt_str(obj.get("stdout")),
        _opt_str(obj.get("stderr")),
        _opt_str(obj.get("output")),
        code if isinstance(code, int) and not isinstance(code, bool) else None,
        _opt_str(obj.get("outcome")),
        raw=obj,
    )


def _mirror_error(obj: Mapping[str, Any], subtype: str) -> Message:
    key, error = obj.get("key"), obj.get("error")
    return MirrorErrorMessage(
        subtype=subtype,
        data=obj,
        key=key if isinstance(key, Mapping) else None,
        error=error if isinstance(error, str) else "",
        raw=obj,
        uuid=_field(obj, "uuid", "optstr"),
        session_id=_field(obj, "session_id", "optstr"),
    )


# ---- the other typed frames: field by field, as (attribute, wire key, kind) ----

_STR, _STRS, _MAPS = "str", "strs", "maps"


def _field(obj: Mapping[str, Any], key: str, kind: str) -> Any:
    """``obj[key]`` as ``kind`` wants it; a missing or mistyped value gets its default."""
    v = obj.get(key)
    if kind == _STR:
        return v if isinstance(v, str) else ""
    if kind == "optstr":
        return v if isinstance(v, str) else None
    if kind in ("int", "optint"):
        ok = isinstance(v, int) and not isinstance(v, bool)
        return v if ok else (0 if kind == "int" else None)
    if kind in ("num", "optnum"):
        return _num(v) if _num(v) is not None else (0.0 if kind == "num" else None)
    if kind in ("bool", "optbool"):
        return v if isinstance(v, bool) else (False if kind == "bool" else None)
    if kind == "map":
        return v if _is_map(v) else None
    if kind in (_STRS, "optstrs"):
        found = _str_list(v)
        return tuple(found) if found is not None else (() if kind == _STRS else None)
    if kind == _MAPS:
        return tuple(x for x in v if _is_map(x)) if isinstance(v, list) else ()
    if kind == "commands":
        return tuple(decode_commands(v))
    if kind == "list":
        return list(v) if isinstance(v, list) else None
    if kind == "strlist":
        return _str_list(v)
    return v  # "any": as sent


_COMMON_FIELDS = "uuid:optstr session_id:optstr"


def _typed(cls: Any, spec: str) -> Callable[..., Message]:
    """A decoder that builds ``cls`` from a frame, one `_field` per entry of ``spec``
    (``attribute[=wire_key]:kind``, space-separated)."""
    fields = []
    for item in f"{spec} {_COMMON_FIELDS}".split():
        names, kind = item.rsplit(":", 1)
        attr, _, key = names.partition("=")
        fields.append((attr, key or attr, kind))

    def decode(obj: Mapping[str, Any], *head: str) -> Message:
        kwargs = {attr: _field(obj, key, kind) for attr, key, kind in fields}
        if head:  # a system frame: subtype, data
            return cast("Message", cls(head[0], obj, raw=obj, **kwargs))
        return cast("Message", cls(type=str(obj.get("type")), data=obj, **kwargs))

    return decode


_TYPED_SYSTEM: dict[str, tuple[Any, str]] = {
    "compact_boundary": (CompactBoundaryMessage, "compact_metadata:map"),
    "status": (
        StatusMessage,
        "status:optstr permission_mode=permissionMode:optstr compact_result:optstr "
        "compact_error:optstr",
    ),
    "api_retry": (
        ApiRetryMessage,
        "attempt:int max_retries:int retry_delay_ms:num error_status:optint error:optstr "
        "no_response:map",
    ),
    "control_request_progress": (
        ControlRequestProgressMessage,
        "request_id:str status:str attempt:optint max_retries:optint "
        "retry_delay_ms:optnum error_status:optint",
    ),
    "model_refusal_fallback": (
        ModelRefusalFallbackMessage,
        "trigger:str direction:str scope:optstr original_model:str fallback_model:str "
        "request_id:optstr api_refusal_category:optstr api_refusal_explanation:optstr "
        "retracted_message_uuids:strs refused_user_message_uuid:optstr content:str",
    ),
    "model_refusal_no_fallback": (
        ModelRefusalNoFallbackMessage,
        "original_model:str request_id:optstr api_refusal_category:optstr "
        "api_refusal_explanation:optstr refused_user_message_uuid:optstr content:str",
    ),
    "local_command_output": (LocalCommandOutputMessage, "content:str"),
    "plugin_install": (PluginInstallMessage, "status:str name:optstr error:optstr"),
    "background_tasks_changed": (BackgroundTasksChangedMessage, "tasks:maps"),
    "thinking_tokens": (
        ThinkingTokensMessage,
        "estimated_tokens:int estimated_tokens_delta:int user_message_uuid:optstr",
    ),
    "session_state_changed": (SessionStateChangedMessage, "state:str"),
    "worker_shutting_down": (WorkerShuttingDownMessage, "reason:str"),
    "commands_changed": (CommandsChangedMessage, "commands:commands"),
    "notification": (
        NotificationMessage,
        "key:str text:str priority:str color:optstr timeout_ms:optint",
    ),
    "files_persisted": (FilesPersistedMessage, "files:maps failed:maps processed_at:str"),
    "memory_recall": (MemoryRecallMessage, "mode:str memories:maps"),
    "elicitation_complete": (ElicitationCompleteMessage, "mcp_server_name:str elicitation_id:str"),
    "permission_denied": (
        PermissionDeniedMessage,
        "tool_name:str tool_use_id:str agent_id:optstr decision_reason_type:optstr "
        "decision_reason:optstr message:str",
    ),
    "informational": (
        InformationalMessage,
        "content:str level:str tool_use_id:optstr prevent_continuation:optbool tag:optstr",
    ),
    "session_writes_lost": (
        SessionWritesLostMessage,
        "error_code:str lost:strs transcript_session_ids:strs",
    ),
    "post_turn_summary": (
        PostTurnSummaryMessage,
        "summarizes_uuid:str status_category:optstr status_detail:optstr needs_action:optbool",
    ),
    "task_summary": (TaskSummaryMessage, "detail:any"),
    "session_metadata": (SessionMetadataMessage, "metadata:map"),
    "session_title_changed": (SessionTitleChangedMessage, "title:str"),
}
"""The typed ``system`` frames: subtype -> (class, fields). A field is
``attribute[=wire_key]:kind``; every one also has ``uuid`` and ``session_id``."""

_TYPED_FRAMES: dict[str, tuple[Any, str]] = {
    "tool_progress": (
        ToolProgressMessage,
        "tool_use_id:str tool_name:str parent_tool_use_id:optstr elapsed_time_seconds:num "
        "task_id:optstr heartbeat:optbool subagent_type:optstr subagent_retry:map",
    ),
    "auth_status": (
        AuthStatusMessage,
        "is_authenticating=isAuthenticating:bool output:strs error:optstr",
    ),
    "tool_use_summary": (ToolUseSummaryMessage, "summary:str preceding_tool_use_ids:strs"),
    "prompt_suggestion": (PromptSuggestionMessage, "suggestion:str"),
    "active_goal": (ActiveGoalMessage, "value:map"),
    "autocompact_state": (AutocompactStateMessage, "value:map"),
}
"""The other typed frames: type -> (class, fields), as `_TYPED_SYSTEM`."""


_SYSTEM_DECODERS: dict[str, Callable[[Mapping[str, Any], str], Message]] = {
    "task_started": _task_started,
    "task_progress": _task_progress,
    "task_notification": _task_notification,
    "task_updated": _task_updated,
    "hook_started": _hook_event,
    "hook_progress": _hook_event,
    "hook_response": _hook_event,
    "mirror_error": _mirror_error,
    **{subtype: _typed(cls, f) for subtype, (cls, f) in _TYPED_SYSTEM.items()},
}


_TASK_FRAMES = frozenset({"task_started", "task_progress", "task_notification", "task_updated"})


def _system(obj: Mapping[str, Any]) -> Message:
    subtype = str(obj.get("subtype", ""))
    decoder = _SYSTEM_DECODERS.get(subtype)
    # a task frame without its task id stays a plain SystemMessage: nothing is lost
    if decoder is not None and (subtype not in _TASK_FRAMES or "task_id" in obj):
        return decoder(obj, subtype)
    return SystemMessage(subtype=subtype, data=obj, raw=obj)


def _result(obj: Mapping[str, Any]) -> Message:
    cost = obj.get("total_cost_usd")
    usage = obj.get("usage")
    model_usage = obj.get("modelUsage")
    errors = obj.get("errors")
    denials = obj.get("permission_denials")
    deferred = obj.get("deferred_tool_use")
    api_status = obj.get("api_error_status")
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
        model_usage=model_usage if isinstance(model_usage, Mapping) else None,
        permission_denials=list(denials) if isinstance(denials, list) else None,
        deferred_tool_use=_deferred(deferred) if _is_map(deferred) else None,
        errors=[str(e) for e in errors] if isinstance(errors, list) else None,
        api_error_status=api_status
        if isinstance(api_status, int) and not isinstance(api_status, bool)
        else None,
        uuid=_opt_str(obj.get("uuid")),
        terminal_reason=_opt_str(obj.get("terminal_reason")),
        origin=_origin(obj),
        user_message_uuid=_opt_str(obj.get("user_message_uuid")),
        user_message_uuids=_str_list(obj.get("user_message_uuids")),
        raw=obj,
        queued_turn_count=_field(obj, "queued_turn_count", "optint"),
        result_index=_field(obj, "result_index", "optint"),
        startup_failure_reason=_field(obj, "startup_failure_reason", "optstr"),
        invalid_config_file=_field(obj, "invalid_config_file", "map"),
        resume_reason=_field(obj, "resume_reason", "optstr"),
        local_command=_field(obj, "local_command", "optstr"),
        ttft_ms=_field(obj, "ttft_ms", "optnum"),
        warm_spare_claimed=_field(obj, "warm_spare_claimed", "optbool"),
        credential_expires_at=_field(obj, "credential_expires_at", "optstr"),
        fast_mode_state=_field(obj, "fast_mode_state", "optstr"),
        fast_mode_disabled_reason=_field(obj, "fast_mode_disabled_reason", "optstr"),
    )


def _deferred(d: Mapping[str, Any]) -> DeferredToolUse:
    inp = d.get("input")
    return DeferredToolUse(
        id=str(d.get("id", "")),
        name=str(d.get("name", "")),
        input=inp if isinstance(inp, dict) else {},
    )


def _stream_event(obj: Mapping[str, Any]) -> Message:
    event = obj.get("event")
    return StreamEvent(
        uuid=str(obj.get("uuid", "")),
        session_id=str(obj.get("session_id", "")),
        event=event if isinstance(event, Mapping) else {},
        parent_tool_use_id=_opt_str(obj.get("parent_tool_use_id")),
        user_message_uuid=_opt_str(obj.get("user_message_uuid")),
        user_message_uuids=_str_list(obj.get("user_message_uuids")),
        raw=obj,
        ttft_ms=_field(obj, "ttft_ms", "optnum"),
        resume_reason=_field(obj, "resume_reason", "optstr"),
    )


def _num(v: Any) -> Any:
    """A finite number, else None."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return v if isinstance(v, int) or math.isfinite(v) else None


def _rate_limit_event(obj: Mapping[str, Any]) -> Message:
    info = obj.get("rate_limit_info")
    if not isinstance(info, dict) or not isinstance(info.get("status"), str):
        return RawMessage(type=RATE_LIMIT_EVENT, data=obj)
    resets, overage_resets, util = (
        _num(info.get("resetsAt")), _num(info.get("overageResetsAt")), _num(info.get("utilization"))
    )  # fmt: skip
    return RateLimitEvent(
        rate_limit_info=RateLimitInfo(
            status=info["status"],
            resets_at=int(resets) if resets is not None else None,
            rate_limit_type=_opt_str(info.get("rateLimitType")),  # type: ignore[arg-type]
            utilization=float(util) if util is not None else None,
            overage_status=_opt_str(info.get("overageStatus")),  # type: ignore[arg-type]
            overage_resets_at=int(overage_resets) if overage_resets is not None else None,
            overage_disabled_reason=_opt_str(info.get("overageDisabledReason")),
            raw=info,
        ),
        uuid=str(obj.get("uuid", "")),
        session_id=str(obj.get("session_id", "")),
        raw=obj,
    )


def _conversation_reset(obj: Mapping[str, Any]) -> Message:
    new_id = obj.get("new_conversation_id")
    if not isinstance(new_id, str):
        return RawMessage(type=CONVERSATION_RESET, data=obj)
    return ConversationResetMessage(
        new_conversation_id=new_id,
        uuid=str(obj.get("uuid", "")),
        session_id=str(obj.get("session_id", "")),
        raw=obj,
        trigger=_field(obj, "trigger", "optstr"),
        user_message_uuid=_field(obj, "user_message_uuid", "optstr"),
        timestamp=_field(obj, "timestamp", "optstr"),
    )


RATE_LIMIT_EVENT = "rate_limit_event"
CONVERSATION_RESET = "conversation_reset"
TRANSCRIPT_MIRROR = "transcript_mirror"


def _transcript_mirror(obj: Mapping[str, Any]) -> Message:
    return TranscriptMirrorMessage(type=TRANSCRIPT_MIRROR, data=obj)


_MESSAGE_DECODERS: dict[str, Callable[[Mapping[str, Any]], Message]] = {
    "user": _user,
    "assistant": _assistant,
    "system": _system,
    "result": _result,
    "stream_event": _stream_event,
    RATE_LIMIT_EVENT: _rate_limit_event,
    CONVERSATION_RESET: _conversation_reset,
    TRANSCRIPT_MIRROR: _transcript_mirror,
    **{kind: _typed(cls, f) for kind, (cls, f) in _TYPED_FRAMES.items()},
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
        raise _malformed_frame(t, obj, exc) from exc


# The fields ``parse_message()`` requires (the reference's contract), by frame type; the
# live stream decodes leniently instead (a frame that does not fit is passed on).
_REQUIRED_FIELDS: Final[Mapping[str, tuple[str, ...]]] = {
    "result": ("subtype", "duration_ms", "duration_api_ms", "is_error", "num_turns", "session_id"),
    "stream_event": ("uuid", "session_id", "event"),
    "conversation_reset": ("new_conversation_id", "uuid", "session_id"),
}
_REQUIRED_SYSTEM_FIELDS: Final[Mapping[str, tuple[str, ...]]] = {
    "task_started": ("task_id", "description", "uuid", "session_id"),
    "task_progress": ("task_id", "description", "usage", "uuid", "session_id"),
    "task_notification": ("task_id", "status", "output_file", "summary", "uuid", "session_id"),
}
_REQUIRED_BLOCK_FIELDS: Final[Mapping[str, tuple[str, ...]]] = {
    "text": ("text",),
    "thinking": ("thinking", "signature"),
    "tool_use": ("id", "name", "input"),
    "tool_result": ("tool_use_id",),
    "server_tool_use": ("id", "name", "input"),
    "advisor_tool_result": ("tool_use_id", "content"),
}
_USER_BLOCK_TYPES: Final = frozenset({"text", "tool_use", "tool_result"})
_HOOK_EVENT_SUBTYPES: Final = frozenset({"hook_started", "hook_response"})


def parse_contract_error(obj: Mapping[str, Any]) -> str | None:
    """Why ``obj`` falls short of the contract of ``parse_message()``, else None.

    ``parse_message()`` (the function of ``claude-agent-sdk``) refuses a frame of a
    known type that lacks a field the reference requires, with the reference's text:
    ``Missing required field in <type> message: '<field>'`` (the first one missing, in
    the reference's order), ``Invalid assistant content (expected list, got ...)`` or
    ``Invalid content block (expected dict, got ...)``. The live stream does not apply
    it: `decode_message()` passes such a frame on as well as it can.
    """
    t = obj.get("type")
    if t == "system" and obj.get("subtype") in _HOOK_EVENT_SUBTYPES:
        return None
    try:
        return _contract_error(t, obj)
    except KeyError as exc:  # a required field is missing: named as the reference does
        return f"Missing required field in {t} message: {exc}"


def _contract_error(t: object, obj: Mapping[str, Any]) -> str | None:
    """`parse_contract_error()`; raises KeyError for a missing required field."""
    fields: tuple[str, ...] = _REQUIRED_FIELDS.get(t, ()) if isinstance(t, str) else ()
    if t in ("user", "assistant"):
        message = obj["message"]
        if not isinstance(message, Mapping):
            return None  # the codec says what is wrong with it
        content = message["content"]
        if t == "assistant" and not isinstance(content, list):
            return f"Invalid assistant content (expected list, got {type(content).__name__})"
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, Mapping):
                return f"Invalid content block (expected dict, got {type(block).__name__})"
            kind = block["type"]
            if isinstance(kind, str) and (t == "assistant" or kind in _USER_BLOCK_TYPES):
                _require(block, _REQUIRED_BLOCK_FIELDS.get(kind, ()))
        if t == "assistant":
            _require(message, ("model",))
    elif t == "system":
        subtype = obj["subtype"]
        fields = _REQUIRED_SYSTEM_FIELDS.get(subtype, ()) if isinstance(subtype, str) else ()
    elif t == "rate_limit_event":
        info = obj["rate_limit_info"]
        if isinstance(info, Mapping):
            _require(info, ("status",))
        fields = ("uuid", "session_id")
    _require(obj, fields)
    if t == "result" and obj.get("deferred_tool_use"):
        deferred = obj["deferred_tool_use"]
        if isinstance(deferred, Mapping):
            _require(deferred, ("id", "name", "input"))
    return None


def _require(obj: Mapping[str, Any], fields: tuple[str, ...]) -> None:
    for name in fields:
        if name not in obj:
            raise KeyError(name)


def _malformed_frame(t: str, obj: Mapping[str, Any], exc: Exception) -> MessageDecodeError:
    return MessageDecodeError(f"malformed {t!r} frame ({exc})", line=str(obj)[:200])


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


def mark_client_composed(frame: dict[str, Any]) -> None:
    """Mark a user message frame as composed by the client (``verbatim_prompts``): the
    CLI then delivers its text as written."""
    frame["client_composed"] = True


def user_message_uuid(frame: Mapping[str, Any]) -> str | None:
    """The ``uuid`` a user message frame carries, if any."""
    return _opt_str(frame.get("uuid"))


def without_prompt_uuids(frame: Mapping[str, Any], hidden: Container[str]) -> dict[str, Any] | None:
    """A copy of ``frame`` whose ``user_message_uuid`` and ``user_message_uuids`` (where
    the CLI names the prompts a frame belongs to) no longer name those in ``hidden``: a
    field left naming none is removed, as if never sent. None when it names none of them."""
    single, several = frame.get("user_message_uuid"), frame.get("user_message_uuids")
    drop_single = isinstance(single, str) and single in hidden
    kept: list[Any] | None = None  # the new list, None if unchanged
    if isinstance(several, list):
        kept = [u for u in several if not (isinstance(u, str) and u in hidden)]
        if len(kept) == len(several):
            kept = None
    if not drop_single and kept is None:
        return None
    out = dict(frame)
    if drop_single:
        del out["user_message_uuid"]
    if kept:
        out["user_message_uuids"] = kept
    elif kept is not None:
        del out["user_message_uuids"]
    return out


# ----------------------------------------------------------------- control frames


@dataclass(slots=True)
class ControlResponse:
    """A ``control_response`` frame, success or error.

    ``pending`` holds the ``control_request`` frames an ``initialize`` answer lists as
    still unanswered (``pending_permission_requests``, ``pending_user_dialog_requests``).
    """

    request_id: str
    ok: bool
    response: Mapping[str, Any]
    error: str = ""
    error_code: str | None = None
    pending: tuple[Mapping[str, Any], ...] = ()


@dataclass(slots=True)
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
    pending = [
        frame
        for key in _PENDING_REQUEST_LISTS
        if isinstance(resp.get(key), list)
        for frame in resp[key]
        if isinstance(frame, Mapping)
    ]
    return ControlResponse(
        request_id=resp["request_id"],
        ok=ok,
        response=payload if isinstance(payload, Mapping) else {},
        error=str(err) if err is not None else ("" if ok else "unknown error"),
        error_code=code if isinstance(code, str) else None,
        pending=tuple(pending),
    )


_PENDING_REQUEST_LISTS = ("pending_permission_requests", "pending_user_dialog_requests")
"""The lists of still unanswered requests an ``initialize`` answer carries, which are
served again (the TypeScript SDK's redelivery after ``reinitialize``)."""


def decode_control_request(obj: Mapping[str, Any]) -> ControlRequest:
    """Decode a ``control_request`` frame. Raises if ``request_id`` or ``request`` is missing."""
    rid = obj.get("request_id")
    req = obj.get("request")
    if not isinstance(rid, str):
        raise MessageDecodeError("control_request without a request_id", line=str(obj)[:200])
    if type(req) is not dict and not isinstance(req, Mapping):  # dict first: no ABC check
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


@dataclass(slots=True)
class McpMessageRequest:
    """A decoded ``mcp_message`` request: a JSON-RPC message for one SDK server."""

    server_name: str
    message: Mapping[str, Any]


def decode_mcp_message(req: Mapping[str, Any]) -> McpMessageRequest:
    """Decode the body of an ``mcp_message`` request."""
    name = req.get("server_name")
    msg = req.get("message")
    if (type(name) is not str or type(msg) is not dict) and (  # exact types: no ABC check
        not isinstance(name, str) or not isinstance(msg, Mapping)
    ):
        raise MessageDecodeError("mcp_message without server_name/message", line=str(req)[:200])
    return McpMessageRequest(server_name=name, message=msg)


def mcp_response(message: Mapping[str, Any]) -> dict[str, Any]:
    """The success body that carries a JSON-RPC message back to the CLI."""
    return {"mcp_response": message}


def mcp_unencodable(message: Any, cause: str) -> dict[str, Any]:
    """The body sent instead of an MCP answer that cannot be encoded as JSON: a failed
    tool result for ``tools/call`` (the model sees why), else JSON-RPC internal error."""
    jsonrpc_id = message.get("id") if isinstance(message, Mapping) else None
    text = f"ccwire could not encode the answer: {cause}"
    if isinstance(message, Mapping) and message.get("method") == "tools/call":
        result = {"content": [{"type": "text", "text": text}], "isError": True}
        return {"mcp_response": {"jsonrpc": "2.0", "id": jsonrpc_id, "result": result}}
    error = {"code": -32603, "message": text}
    return {"mcp_response": {"jsonrpc": "2.0", "id": jsonrpc_id, "error": error}}


def mcp_notification_ack() -> dict[str, Any]:
    """What we answer to a JSON-RPC notification (the reference SDK's choice)."""
    return {"mcp_response": {"jsonrpc": "2.0", "result": {}}}


def mcp_malformed(req: Mapping[str, Any]) -> dict[str, Any]:
    """The body for an ``mcp_message`` that `decode_mcp_message` refused (no server
    name, or a message that is no JSON object: a batch array, a string...): a JSON-RPC
    Invalid Request error, as a server answers a message it cannot read, so that the
    CLI's MCP client is answered in its own terms (the id, when the message has one)."""
    msg = req.get("message")
    jsonrpc_id = msg.get("id") if isinstance(msg, Mapping) else None
    name = req.get("server_name")
    why = (
        "a message must be a JSON object"
        if isinstance(name, str)
        else f"the mcp_message names no server (server_name {name!r})"
    )
    return {"mcp_response": invalid_request(jsonrpc_id if valid_id(jsonrpc_id) else None, why)}


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


def changed_commands(obj: Mapping[str, Any]) -> list[Mapping[str, Any]] | None:
    """The commands of a ``system/commands_changed`` frame (the full list), else None."""
    if obj.get("subtype") != "commands_changed" or not isinstance(obj.get("commands"), list):
        return None
    return [c for c in obj["commands"] if isinstance(c, Mapping)]


def session_state(obj: Mapping[str, Any]) -> str | None:
    """The ``state`` of a ``system/session_state_changed`` frame, else None."""
    if obj.get("subtype") == SESSION_STATE_CHANGED:
        return _opt_str(obj.get("state"))
    return None


def host_only(obj: Mapping[str, Any]) -> bool:
    """True for a frame the CLI sent for the SDK host only (``sdk_host_only: true``: a
    ``session_state_changed`` frame asked for with ``CLAUDE_CODE_SDK_READS_SESSION_STATE``),
    not for the caller."""
    return obj.get("sdk_host_only") is True


API_RETRY = "api_retry"


@dataclass(frozen=True, slots=True)
class ApiRetry:
    """A ``system/api_retry`` frame: the CLI failed to reach the model and will retry.

    Attributes:
        attempt: Which retry this is (1 for the first).
        max_retries: How many the CLI makes before it gives up.
        delay_ms: How long the CLI waits before this attempt.
        status: The HTTP status of the failed request; None when there was no response
            (the connection failed).
        error: The CLI's reason (``"overloaded"``, ``"server_error"``, ...).
    """

    attempt: int | None
    max_retries: int | None
    delay_ms: int | None
    status: int | None
    error: str


def _opt_int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def api_retry(obj: Mapping[str, Any]) -> ApiRetry | None:
    """The retry notice of a ``system/api_retry`` frame, else None."""
    if obj.get("subtype") != API_RETRY:
        return None
    error = obj.get("error")
    if not isinstance(error, str) or not error:
        error = "no response" if obj.get("no_response") else "unknown error"
    return ApiRetry(
        attempt=_opt_int(obj.get("attempt")),
        max_retries=_opt_int(obj.get("max_retries")),
        delay_ms=_opt_int(obj.get("retry_delay_ms")),
        status=_opt_int(obj.get("error_status")),
        error=error,
    )
