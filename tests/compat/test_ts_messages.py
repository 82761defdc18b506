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
