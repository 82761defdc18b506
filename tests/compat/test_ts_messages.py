"""Every message type the TypeScript SDK declares (the ``SDKMessage`` union) arrives
typed on ccwire: as a class of its own, not as a bare `SystemMessage` or `RawMessage`."""

from __future__ import annotations

from typing import Any

from ccwire import RawMessage, SystemMessage
from ccwire._wire import codec

PLAIN_ON_PURPOSE = {
    ("system", "init"): "code written for claude-agent-sdk matches type(msg).__name__ "
    "== 'SystemMessage'; its data is typed as SystemInitData",
}


def test_every_declared_message_type_is_typed(ts_api: Any) -> None:
    untyped = []
    for message in ts_api.messages:
        if not message.type:  # a union of its own (SDKResultMessage): result frames
            continue
        frame = {"type": message.type, "uuid": "u", "session_id": "s"}
        if message.subtype is not None:
            frame["subtype"] = message.subtype
        if message.type == "user":
            frame["message"] = {"role": "user", "content": "hi"}
        if message.type == "assistant":
            frame["message"] = {"role": "assistant", "content": [], "model": "m"}
        if message.type in ("rate_limit_event",):
            frame["rate_limit_info"] = {"status": "allowed"}
        if message.type == "conversation_reset":
            frame["new_conversation_id"] = "c"
        if message.type == "system" and message.subtype and message.subtype.startswith("task_"):
            frame["task_id"] = "t"
        decoded = codec.decode_message(frame)
        plain = type(decoded) in (SystemMessage, RawMessage)
        if plain and (message.type, message.subtype) not in PLAIN_ON_PURPOSE:
            untyped.append(f"{message.name} ({message.type}/{message.subtype})")
    assert untyped == []
    assert len(ts_api.messages) >= 40


FIELDS_ON_PURPOSE = {
    "SDKAssistantMessage.message": "`content`, `model`, `usage`, `message_id`, ...",
    "SDKUserMessage.message": "`content`",
    "SDKUserMessageReplay.message": "`content`",
    "SDKSystemMessage": "claude-agent-sdk's SystemMessage: `data`, typed as SystemInitData",
    "SDKHookStartedMessage.hook_event": "`hook_event_name`, as the hook inputs call it",
    "SDKHookProgressMessage.hook_event": "`hook_event_name`",
    "SDKHookResponseMessage.hook_event": "`hook_event_name`",
}


def test_every_declared_field_of_a_message_is_an_attribute(ts_api: Any) -> None:
    from tests.compat.ts_migration_table import _SAMPLE_FIELDS, snake

    missing = []
    for message in ts_api.messages:
        if not message.type or message.name in FIELDS_ON_PURPOSE:
            continue
        frame: dict[str, Any] = {"type": message.type, "uuid": "u", "session_id": "s"}
        if message.subtype is not None:
            frame["subtype"] = message.subtype
        frame.update(_SAMPLE_FIELDS.get(message.type, {}))
        if message.subtype and message.subtype.startswith("task_"):
            frame["task_id"] = "t"
        decoded = codec.decode_message(frame)
        for name in message.fields:
            key = f"{message.name}.{name}"
            if name in ("type", "subtype") or key in FIELDS_ON_PURPOSE:
                continue
            if not hasattr(decoded, snake(name)):
                missing.append(key)
    assert missing == []


RESULT_DIAGNOSTICS = {
    # latency diagnostics of the CLI's own transport, in `raw`
    "ttft_stream_ms",
    "time_to_request_ms",
    "request_sent_wall_ms",
    "first_content_frame_ms",
    "first_stream_post_ms",
    "first_stream_post_ack_ms",
    "first_stream_post_queue_wait_ms",
    "first_stream_post_queued_behind",
    "first_stream_post_wall_ms",
    "first_text_post_ms",
    "first_text_post_queue_wait_ms",
    "first_text_post_queued_behind",
    "first_text_post_wall_ms",
    "time_to_request_from_spawn_ms",
    "time_origin_ms",
}


def test_every_declared_field_of_a_result_is_an_attribute(ts_api: Any) -> None:
    from tests.compat.ts_api import find_package, members, statements
    from tests.compat.ts_migration_table import snake

    package = find_package()
    assert package is not None
    declared = {s.name: s for s in statements((package / "sdk.d.ts").read_text("utf-8"))}
    result = codec.decode_message({"type": "result", "subtype": "success", "session_id": "s"})
    missing = [
        f"{kind}.{m.name}"
        for kind in ("SDKResultSuccess", "SDKResultError")
        for m in members(declared[kind].text)
        if m.name != "type" and m.name not in RESULT_DIAGNOSTICS
        if not hasattr(result, snake(m.name))
    ]
    assert missing == []
