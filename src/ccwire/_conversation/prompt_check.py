"""What a prompt may be, checked before it is sent: the CLI never answers a prompt it
cannot read, so a bad one would leave its reader waiting for ever."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Union

from .._core.errors import OptionsError

__all__ = ["Prompt", "check_prompt", "check_prompt_item"]

Prompt = Union[str, list[dict[str, Any]], Mapping[str, Any]]
"""Text, a list of content blocks, or a complete user-message frame."""


def check_prompt(prompt: object, *, blocks: bool = False) -> None:
    """Refuse, before anything starts, a prompt that is neither text nor an async
    iterable of prompts (with ``blocks``, a list of content blocks is text too).

    Raises:
        TypeError: ``prompt`` is of another type (a plain list, bytes, None...), or a
            list holds something that is not a content block (the CLI would never
            answer such a prompt).
    """
    if isinstance(prompt, str):
        return
    if blocks and isinstance(prompt, list):
        check_prompt_item(prompt)
        return
    if not hasattr(prompt, "__aiter__"):
        wanted = "a str, a list of content blocks" if blocks else "a str"
        raise OptionsError(
            f"prompt must be {wanted} or an async iterable of prompts, not {type(prompt).__name__}"
        )


def check_prompt_item(prompt: object) -> None:
    """Refuse, before it is sent, a prompt that is neither text, a list of content
    blocks nor a user-message frame (a mapping): the CLI would never answer it; and a
    frame the CLI exits on (a ``user`` frame without a ``message`` of role ``user``, a
    ``control_request`` without its ``request`` object).

    Raises:
        TypeError: ``prompt`` is of another type, or a list holds something that is
            not a content block, or a frame the CLI exits on.
    """
    if isinstance(prompt, str):
        return
    if isinstance(prompt, Mapping):
        problem = _frame_problem(prompt)
        if problem is not None:
            raise OptionsError(f"a prompt frame the CLI would exit on: {problem}")
        return
    if not isinstance(prompt, list):
        raise OptionsError(
            "a prompt must be a str, a list of content blocks or a user-message dict, "
            f"not {type(prompt).__name__}"
        )
    for n, block in enumerate(prompt):
        problem = _block_problem(block)
        if problem is not None:
            raise OptionsError(f"prompt[{n}] is not a content block: {problem}")


def _frame_problem(frame: Mapping[object, object]) -> str | None:
    """Why the CLI would exit on reading ``frame`` (as CLI 2.1.330 does), or None."""
    kind = frame.get("type")
    if kind == "user":
        message = frame.get("message")
        role = message.get("role") if isinstance(message, Mapping) else None
        if role != "user":
            return (
                f"a 'user' frame needs a 'message' object whose 'role' is 'user', got {role!r:.80}"
            )
    elif kind == "control_request" and not isinstance(frame.get("request"), Mapping):
        return "a 'control_request' frame needs a 'request' object"
    return None


def _block_problem(block: object) -> str | None:
    """Why ``block`` cannot be a content block of a prompt, or None (a cheap check of
    what the CLI needs to answer at all, not a schema validation)."""
    if not isinstance(block, Mapping):
        return f"a content block is a dict, not {type(block).__name__}"
    kind = block.get("type")
    if not isinstance(kind, str):
        return f"its 'type' must be a string, got {kind!r:.80}"
    if kind == "text" and not isinstance(block.get("text"), str):
        return f"a text block's 'text' must be a string, got {block.get('text')!r:.80}"
    return None
