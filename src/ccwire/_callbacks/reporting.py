"""Reporting a failed user callback: one readable name, one handler call.

Shared by the hook and permission callbacks, so both report failures the same way.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from .._core.cancel import raised_by_callback
from .._core.errors import CallbackError

__all__ = ["CallbackErrorHandler", "callback_name", "report_callback_error"]

logger = logging.getLogger("ccwire")

CallbackErrorHandler = Callable[[CallbackError], object]
"""Told about every failed user callback (``ClaudeAgentOptions.on_callback_error``)."""


def callback_name(callback: object) -> str:
    """A readable name for a callback: its qualified name, else its repr."""
    name = getattr(callback, "__qualname__", None) or getattr(callback, "__name__", None)
    return str(name) if name else repr(callback)


def report_callback_error(handler: CallbackErrorHandler | None, error: CallbackError) -> None:
    """Hand ``error`` to the user's handler; a handler that raises is logged, not fatal."""
    if handler is None:
        return
    try:
        handler(error)
    except BaseException as exc:
        if not isinstance(exc, Exception) and not raised_by_callback(exc):
            raise
        logger.exception("ccwire: on_callback_error raised while reporting %s", error)
