"""Types of the callbacks that answer the CLI's questions besides permissions.

An MCP server may ask the user for input (MCP elicitation): the CLI forwards the
question as an ``elicitation`` control request, answered by
``ClaudeAgentOptions.on_elicitation``. The CLI may also ask the host to show a blocking
dialog (``request_user_dialog``), answered by ``ClaudeAgentOptions.on_user_dialog``.
Both callbacks receive a `RequestContext`; returning `ANSWER_LATER` from them (or
from ``can_use_tool``) leaves the request open, to be answered with
``ClaudeSDKClient.answer_control_request()``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal, Union, final

import anyio

__all__ = [
    "ANSWER_LATER",
    "AnswerLater",
    "ElicitationRequest",
    "ElicitationResult",
    "OnElicitation",
    "OnUserDialog",
    "RequestContext",
    "UserDialogRequest",
    "UserDialogResult",
]


@final
class AnswerLater:
    """The type of `ANSWER_LATER`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "ANSWER_LATER"


ANSWER_LATER: Final = AnswerLater()
"""Returned by ``can_use_tool``, ``on_elicitation`` or ``on_user_dialog``: ccwire writes no
answer now; the request stays open until ``ClaudeSDKClient.answer_control_request()``
answers it (with the callback's ``context.request_id``) or the CLI withdraws it. What
the TypeScript SDK's callbacks mean by returning ``null``."""


@dataclass(frozen=True)
class RequestContext:
    """What an elicitation or dialog callback gets besides the request.

    Attributes:
        request_id: The control request's id: pass it to
            ``ClaudeSDKClient.answer_control_request()`` after returning `ANSWER_LATER`.
        signal: Set when the CLI withdraws the request (the callback is then cancelled).
    """

    request_id: str
    # a lambda: touching anyio.Event at import would load anyio's synchronization module
    signal: anyio.Event = field(default_factory=lambda: anyio.Event(), compare=False, repr=False)


@dataclass(frozen=True)
class ElicitationRequest:
    """An MCP server asks the user for input (``elicitation/create``), through the CLI.

    Attributes:
        server_name: The MCP server asking.
        message: What to show the user.
        mode: ``"form"`` (fill in ``requested_schema``) or ``"url"`` (open ``url``).
        url: The page to open, in ``url`` mode.
        elicitation_id: Correlates a ``url`` elicitation with its completion (an
            `ElicitationCompleteMessage`).
        requested_schema: The JSON Schema of the input asked for, in ``form`` mode.
        property_order: The schema's top-level property names, in the server's order.
        title: A permission-display header from the server's
            ``_meta["anthropic/permissionDisplay"]``.
        display_name: A short label for the tool or server, from the same.
        description: A subtitle, from the same.
        raw: The control request as the CLI sent it.
    """

    server_name: str
    message: str
    mode: Literal["form", "url"] | None = None
    url: str | None = None
    elicitation_id: str | None = None
    requested_schema: Mapping[str, Any] | None = None
    property_order: tuple[str, ...] | None = None
    title: str | None = None
    display_name: str | None = None
    description: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class ElicitationResult:
    """The user's answer to an `ElicitationRequest` (MCP's ``ElicitResult``).

    Attributes:
        action: ``"accept"`` (with ``content`` in form mode), ``"decline"`` or ``"cancel"``.
        content: The values entered, matching the request's ``requested_schema``.
    """

    action: Literal["accept", "decline", "cancel"]
    content: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class UserDialogRequest:
    """The CLI asks the host to show a blocking dialog (``request_user_dialog``).

    Sent only for the kinds listed in ``ClaudeAgentOptions.supported_dialog_kinds``.

    Attributes:
        dialog_kind: Which dialog (e.g. ``"refusal_fallback_prompt"``); each kind defines
            its own ``payload`` and result.
        payload: The dialog's data, as the CLI sent it.
        tool_use_id: The tool call the dialog is about, if any (as ``can_use_tool``'s).
        raw: The control request as the CLI sent it.
    """

    dialog_kind: str
    payload: Mapping[str, Any] = field(default_factory=dict)
    tool_use_id: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class UserDialogResult:
    """The host's answer to a `UserDialogRequest`.

    Attributes:
        behavior: ``"completed"`` with the dialog's ``result``, or ``"cancelled"`` (the
            CLI then applies the dialog's default behavior: the answer to a kind you
            cannot render).
        result: The dialog's result, shaped as its kind defines (``completed`` only).
    """

    behavior: Literal["completed", "cancelled"]
    result: Any = None


OnElicitation = Callable[
    [ElicitationRequest, RequestContext],
    Awaitable[Union[ElicitationResult, Mapping[str, Any], AnswerLater]],
]
"""``async def on_elicitation(request, context) -> ElicitationResult | ANSWER_LATER``
(or the dict form ``{"action": "accept", "content": {...}}``)."""

OnUserDialog = Callable[
    [UserDialogRequest, RequestContext],
    Awaitable[Union[UserDialogResult, Mapping[str, Any], AnswerLater]],
]
"""``async def on_user_dialog(request, context) -> UserDialogResult | ANSWER_LATER``
(or the dict form ``{"behavior": "completed", "result": ...}``)."""
