"""Answering ``elicitation`` and ``request_user_dialog``: the user's callbacks, typed.

As the TypeScript SDK answers them: an elicitation nobody handles is declined
(``{"action": "decline"}``); a dialog without ``on_user_dialog`` gets no answer at all
(another attached client may be the one that shows it; the CLI's dialog deadline
settles it otherwise). A callback that raises or returns something unusable gives the
CLI an error answer and is reported as a `CallbackError`; one that returns
`ANSWER_LATER` leaves the request open for ``ClaudeSDKClient.answer_control_request()``.
When the CLI withdraws the request, ``context.signal`` is set and the callback is
cancelled. A sync function is called as an async one is.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from .._core.cancel import raised_by_callback, stop_request
from .._core.errors import CallbackError, ControlProtocolError, exception_text
from .._protocol.control import ANSWERED_BY_ROUTE, NO_REPLY, Answer, IncomingCall, RouteHandler
from .._wire import codec
from .._wire.dialog_types import (
    ANSWER_LATER,
    ElicitationResult,
    OnElicitation,
    OnUserDialog,
    RequestContext,
    UserDialogResult,
)
from .reporting import (
    CallbackErrorHandler,
    call_callback,
    callback_name,
    failure_text,
    report_callback_error,
)

__all__ = [
    "elicitation_route",
    "encode_elicitation_answer",
    "encode_user_dialog_answer",
    "user_dialog_route",
]


def encode_elicitation_answer(answer: object) -> dict[str, Any]:
    """The wire answer for an `ElicitationResult` (or its dict form).

    Raises:
        ControlProtocolError: ``answer`` is neither.
    """
    if isinstance(answer, (ElicitationResult, Mapping)):
        return codec.encode_elicitation_result(answer)
    raise ControlProtocolError(
        f"on_elicitation returned {answer!r}; expected an ElicitationResult",
        subtype=codec.ELICITATION,
    )


def encode_user_dialog_answer(answer: object) -> dict[str, Any]:
    """The wire answer for a `UserDialogResult` (or its dict form).

    Raises:
        ControlProtocolError: ``answer`` is neither.
    """
    if isinstance(answer, (UserDialogResult, Mapping)):
        return codec.encode_user_dialog_result(answer)
    raise ControlProtocolError(
        f"on_user_dialog returned {answer!r}; expected a UserDialogResult",
        subtype=codec.REQUEST_USER_DIALOG,
    )


def _route(
    kind: str,
    callback: Callable[[Any, RequestContext], Awaitable[object]],
    decode: Callable[[Mapping[str, Any]], object],
    encode: Callable[[object], dict[str, Any]],
    on_error: CallbackErrorHandler | None,
) -> RouteHandler:
    def failure(message: str, subtype: str) -> CallbackError:
        error = CallbackError(
            message, kind=kind, callback_name=callback_name(callback), subtype=subtype
        )
        report_callback_error(on_error, error)
        return error

    async def handle(req: codec.ControlRequest, call: IncomingCall) -> Answer:
        context = RequestContext(request_id=req.request_id, signal=call.cancelled)
        try:
            answer: object = await call_callback(kind, callback, decode(req.request), context)
        except Exception as exc:
            raise failure(exception_text(exc) or type(exc).__name__, req.subtype) from exc
        except BaseException as exc:  # a cancellation (or a BaseException) of its own
            if not raised_by_callback(exc):
                stop = stop_request(exc)
                if stop is not None:  # it stops the connection: told first
                    failure(f"{failure_text(stop)}; the connection stops", req.subtype)
                raise
            raise failure(failure_text(exc), req.subtype) from exc
        if call.withdrawn:
            return NO_REPLY  # it answered once cancelled: the CLI wants no answer now
        if answer is ANSWER_LATER or not call.claim_answer(ANSWERED_BY_ROUTE):
            return ANSWER_LATER  # (answered out of band: what it returned is no answer)
        try:
            return encode(answer)
        except ControlProtocolError as exc:
            raise failure(str(exc), req.subtype) from exc

    return handle


def elicitation_route(
    callback: OnElicitation | None, *, on_error: CallbackErrorHandler | None = None
) -> RouteHandler:
    """The route handler for ``elicitation`` requests (declined without ``callback``)."""
    if callback is None:
        return lambda req, call: dict(codec.ELICITATION_DECLINED)
    return _route(
        "on_elicitation", callback, codec.decode_elicitation, encode_elicitation_answer, on_error
    )


def user_dialog_route(
    callback: OnUserDialog | None, *, on_error: CallbackErrorHandler | None = None
) -> RouteHandler:
    """The route handler for ``request_user_dialog`` requests (no answer without
    ``callback``)."""
    if callback is None:
        return lambda req, call: NO_REPLY
    return _route(
        "on_user_dialog", callback, codec.decode_user_dialog, encode_user_dialog_answer, on_error
    )
