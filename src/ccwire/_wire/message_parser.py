"""``parse_message()``: one decoded frame from the CLI to its typed message, with the
signature and the failures of ``claude-agent-sdk``'s function of that name.

Code written for the reference imports it from ``claude_agent_sdk._internal.
message_parser`` (the drop-in of ``ccwire compat install`` answers that import with
this function). The decoding is the codec's (`codec.decode_message`); the reference's
stricter contract (required fields, checked by `codec.parse_contract_error`) applies
here only: the live stream passes a frame that does not fit on, never loses it.
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
        MessageParseError: ``data`` is not a dict, has no ``type``, lacks a field the
            reference requires of its type (``Missing required field in <type>
            message: '<field>'``; see `codec.parse_contract_error`), or is malformed.
    """
    if not isinstance(data, dict):
        raise MessageParseError(
            f"Invalid message data type (expected dict, got {type(data).__name__})", data
        )
    if not data.get("type"):
        raise MessageParseError("Message missing 'type' field", data)
    problem = codec.parse_contract_error(data)
    if problem is not None:
        raise MessageParseError(problem, data)
    try:
        message = codec.decode_message(data)
    except MessageDecodeError as exc:
        raise MessageParseError(str(exc), data) from exc
    return None if isinstance(message, RawMessage) else message
