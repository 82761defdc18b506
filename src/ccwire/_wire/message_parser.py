"""``parse_message()``: one decoded frame from the CLI to its typed message, with the
signature and the failures of ``claude-agent-sdk``'s function of that name.

Code written for the reference imports it from ``claude_agent_sdk._internal.
message_parser`` (the drop-in of ``ccwire compat install`` answers that import with
this function). The decoding is the codec's (`codec.decode_message`).
"""

from __future__ import annotations

from typing import Any

from .._core.errors import MessageDecodeError, MessageParseError
from . import codec
from .messages import Message, RawMessage

__all__ = ["MessageParseError", "parse_message"]


def parse_message(data: dict[str, Any]) -> Message | None:
    """Parse one message the CLI wrote (decoded from JSON) into its typed message.

    Args:
        data: The message, as a dict.

    Returns:
        The typed message; ``None`` for a type ccwire does not model (as the reference
        skips the types it does not know).

    Raises:
        MessageParseError: ``data`` is not a dict, has no ``type``, or is malformed.
    """
    if not isinstance(data, dict):
        raise MessageParseError(
            f"Invalid message data type (expected dict, got {type(data).__name__})", data
        )
    if "type" not in data:
        raise MessageParseError("Message missing 'type' field", data)
    try:
        message = codec.decode_message(data)
    except MessageDecodeError as exc:
        raise MessageParseError(str(exc), data) from exc
    return None if isinstance(message, RawMessage) else message
