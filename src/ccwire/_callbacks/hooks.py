"""Hook callbacks: registration ids for ``initialize`` and answering ``hook_callback``.

Every failure of a callback (it raised, ran past its timeout, or returned something
that is not a hook output) becomes a `CallbackError`: the CLI gets an
error answer carrying its message (never silence, so the turn never hangs), the
control layer logs it on the ``ccwire`` logger, and the optional ``on_error``
callable (``ClaudeAgentOptions.on_callback_error``) receives it.

Hooks that guard an action fail closed: for `FAIL_CLOSED_EVENTS` (``PreToolUse``,
``PermissionRequest``, ``UserPromptSubmit``, ``PreSkillShellCommand``), unless the
matcher sets ``on_failure``, the CLI gets a deny (or block) answer naming the failure
instead of the error answer, so a crashed guard never lets the action through.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import anyio

from .._core.cancel import raised_by_callback, stop_request
from .._core.errors import (
    CallbackError,
    ControlProtocolError,
    OptionsError,
    UnsupportedFeatureError,
)
from .._protocol.control import ANSWERED_BY_ROUTE, NO_REPLY, Answer, IncomingCall, RouteHandler
from .._protocol.features import CliFeatures
from .._wire import codec
from .._wire.dialog_types import ANSWER_LATER
from .._wire.hook_types import (
    FAIL_CLOSED_EVENTS,
    HookCallback,
    HookContext,
    HookEvent,
    HookMatcher,
)
from .._wire.permission_types import PermissionResultDeny
from .permissions import drop_malformed_hook_updates
from .reporting import (
    CallbackErrorHandler,
    call_callback,
    callback_name,
    check_arity,
    failure_text,
    report_callback_error,
)

__all__ = [
    "DEFAULT_HOOK_TIMEOUT",
    "TIMEOUT_GRACE",
    "CallbackErrorHandler",
    "HookRegistry",
    "as_matcher",
    "callback_name",
]

logger = logging.getLogger("ccwire")

DEFAULT_HOOK_TIMEOUT = 60.0
"""Seconds a hook callback may run when its matcher sets no timeout (the CLI's default)."""

TIMEOUT_GRACE = 0.5
"""Seconds ccwire waits past a hook's timeout before answering with an error itself.

The CLI enforces the same timeout and applies its own policy first (for PreToolUse:
the tool call is not executed); answering earlier would turn a hung guard into an
empty answer, which lets the call run. The late error answer is the fallback that
guarantees the CLI is never left waiting, and the failure is reported either way.
"""

_WITHDRAWN_AT_TIMEOUT = 0.9  # a withdrawal this late (share of the timeout) is the CLI's timeout


def as_matcher(event: str, value: object) -> HookMatcher:
    """An entry of ``hooks[event]`` as a `HookMatcher` (it may be the reference SDK's
    early dict form).

    Raises:
        OptionsError: It is neither.
    """
    if isinstance(value, HookMatcher):
        return value
    if isinstance(value, Mapping):  # the reference SDK's early dict form
        return HookMatcher(
            matcher=value.get("matcher"),
            hooks=tuple(value.get("hooks") or ()),
            timeout=value.get("timeout"),
            on_failure=value.get("on_failure", value.get("onFailure")),
        )
    fix = ""
    if callable(value):  # the hook itself, where its matcher goes
        name = getattr(value, "__name__", "hook")
        fix = f": write hooks={{{event!r}: [HookMatcher(hooks=[{name}])]}}"
    raise OptionsError(f"hooks[{event!r}] entries must be HookMatcher, not {value!r}{fix}")


def _check_matcher(event: str, matcher: HookMatcher) -> None:
    """A matcher's ``matcher`` is a str (or None) and its ``hooks`` a list of callbacks.

    Raises:
        OptionsError: Either is not (a bare ``TypeError`` at best, or a pattern the CLI
            cannot match with).
    """
    pattern = matcher.matcher
    if pattern is not None and not isinstance(pattern, str):
        raise OptionsError(
            f"hooks[{event!r}]: HookMatcher matcher must be a str (a tool name or "
            f"pattern) or None, got {pattern!r}"
        )
    hooks = matcher.hooks
    if isinstance(hooks, (str, bytes, Mapping)) or not isinstance(hooks, Iterable):
        fix = ""
        if callable(hooks):
            fix = f": write HookMatcher(hooks=[{getattr(hooks, '__name__', 'hook')}])"
        raise OptionsError(
            f"hooks[{event!r}]: HookMatcher hooks must be a list of callbacks, got {hooks!r}{fix}"
        )


def _checked_timeout(event: str, value: object) -> float:
    """A matcher's ``timeout`` in seconds (`DEFAULT_HOOK_TIMEOUT` when None).

    Raises:
        OptionsError: it is not a positive, finite number of seconds (the CLI reads 0
            as no timeout given, and JSON cannot carry NaN or infinity).
    """
    if value is None:
        return DEFAULT_HOOK_TIMEOUT
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
        raise OptionsError(
            f"hooks[{event!r}]: HookMatcher timeout must be a positive number of seconds "
            f"(or None for the CLI's default of {DEFAULT_HOOK_TIMEOUT:g} s), got {value!r}"
        )
    return float(value)


@dataclass(frozen=True)
class _Registered:
    """One registered hook callback: its event, the callback and its timeout."""

    event: str
    callback: HookCallback
    timeout: float
    callback_id: str
    fail_closed: bool = False


def _closed_answer(event: str, reason: str) -> Mapping[str, Any]:
    """The answer that denies (or blocks) what a failed ``event`` hook was guarding."""
    # here, not at the top: the ~30 hook output classes load with the first hook answer
    from .._wire.hook_output import (
        HookOutput,
        PermissionRequestOutput,
        PreSkillShellCommandOutput,
        PreToolUseOutput,
    )

    output: object
    if event == "PreToolUse":
        output = PreToolUseOutput(permission_decision="deny", permission_decision_reason=reason)
    elif event == "PreSkillShellCommand":
        output = PreSkillShellCommandOutput(
            permission_decision="deny", permission_decision_reason=reason
        )
    elif event == "PermissionRequest":
        output = PermissionRequestOutput(decision=PermissionResultDeny(message=reason))
    else:  # UserPromptSubmit
        output = HookOutput(decision="block", reason=reason)
    return codec.encode_hook_result(output, event)


class HookRegistry:
    """Assigns ``hook_<n>`` ids to callbacks and routes ``hook_callback`` requests to them."""

    def __init__(
        self,
        hooks: Mapping[HookEvent, Sequence[HookMatcher]] | None,
        *,
        on_error: CallbackErrorHandler | None = None,
    ) -> None:
        self._by_id: dict[str, _Registered] = {}
        self._config: dict[str, list[dict[str, Any]]] = {}
        self._on_error = on_error
        self.blocking = False
        """True when some matcher has ``on_failure="block"``."""
        counter = 0
        for event, matchers in (hooks or {}).items():
            entries: list[dict[str, Any]] = []
            for matcher in matchers:
                matcher = as_matcher(event, matcher)
                _check_matcher(event, matcher)
                ids = []
                for callback in matcher.hooks:
                    if not callable(callback):
                        raise OptionsError(f"hook for {event} is not callable: {callback!r}")
                    check_arity(
                        callback, "hook(input, tool_use_id, context)", f"hooks[{event!r}]: a hook"
                    )
                    cid = f"hook_{counter}"
                    counter += 1
                    timeout = _checked_timeout(event, matcher.timeout)
                    closed = matcher.on_failure is None and event in FAIL_CLOSED_EVENTS
                    self._by_id[cid] = _Registered(event, callback, timeout, cid, closed)
                    ids.append(cid)
                if ids:
                    entries.append(
                        codec.encode_hook_matcher(
                            matcher.matcher, ids, matcher.timeout, matcher.on_failure
                        )
                    )
                    self.blocking = self.blocking or matcher.on_failure == "block"
            if entries:
                self._config[event] = entries

    @property
    def initialize_config(self) -> dict[str, list[dict[str, Any]]] | None:
        """The ``hooks`` field of ``initialize`` (None when there are no hooks)."""
        return self._config or None

    def verify(self, server_info: Mapping[str, Any]) -> None:
        """Check the ``initialize`` answer: the CLI must know every event we registered
        hooks for (an older CLI drops the others silently), must have applied our hooks,
        and must honour ``onFailure`` when a matcher asks to block.

        Raises:
            UnsupportedFeatureError: when the CLI falls short of any of these.
        """
        if not self._config:
            return
        features = CliFeatures(server_info)
        missing = features.missing_hook_events(self._config)
        if missing:
            raise UnsupportedFeatureError(
                f"hooks for {', '.join(missing)}: the connected Claude Code CLI"
                f"{features.describe()} does not know these hook events and would never "
                "call them (CLI 2.1.197 knows 30 of the 33 events of 2.1.330); upgrade the "
                "CLI or remove these hooks",
                subtype=codec.INITIALIZE,
            )
        if server_info.get("hooks_applied") is False:
            raise UnsupportedFeatureError(
                "the CLI ignored the hooks sent in initialize (hooks_applied: false)",
                subtype=codec.INITIALIZE,
            )
        if self.blocking and server_info.get("hook_on_failure_supported") is not True:
            raise UnsupportedFeatureError(
                "a HookMatcher has on_failure='block', but this CLI does not report "
                "hook_on_failure_supported, so a failing hook would not block; "
                "upgrade the CLI or drop on_failure",
                subtype=codec.INITIALIZE,
            )

    def _failure(
        self,
        reg: _Registered,
        what: str,
        *,
        timed_out: bool = False,
        cause: BaseException | None = None,
    ) -> CallbackError:
        name = callback_name(reg.callback)
        error = CallbackError(
            f"{reg.event} hook {name} ({reg.callback_id}) {what}",
            kind="hook",
            callback_name=name,
            event=reg.event,
            timed_out=timed_out,
            subtype=codec.HOOK_CALLBACK,
        )
        error.__cause__ = cause
        report_callback_error(self._on_error, error)
        return error

    def _failed(
        self,
        reg: _Registered,
        what: str,
        cause: BaseException | None = None,
        *,
        timed_out: bool = False,
    ) -> Mapping[str, Any]:
        """The answer for a failed callback: a deny/block when it fails closed, else the
        `CallbackError` is raised (the CLI gets an error answer)."""
        error = self._failure(reg, what, timed_out=timed_out, cause=cause)
        if reg.fail_closed:
            logger.error("ccwire: %s; failing closed: the CLI is told to deny", error)
            return _closed_answer(reg.event, f"ccwire: the hook failed, so denied: {error}")
        raise error from cause

    def _checked_decision(self, reg: _Registered, output: object) -> object:
        """``output`` without the ``updatedPermissions`` of its decision if the CLI would
        reject one of them (it then rejects them all), as ``can_use_tool`` answers are
        checked; the drop is logged and reported (the decision itself still goes out)."""
        checked, problems = drop_malformed_hook_updates(output)
        if problems:
            name = callback_name(reg.callback)
            detail = "; ".join(problems)
            logger.warning(
                "ccwire: dropping updatedPermissions of a PermissionRequest hook answer: %s",
                detail,
            )
            report_callback_error(
                self._on_error,
                CallbackError(
                    f"{reg.event} hook {name} ({reg.callback_id}) returned permission "
                    f"updates the CLI would reject, so none were sent: {detail}",
                    kind="hook",
                    callback_name=name,
                    event=reg.event,
                    subtype=codec.HOOK_CALLBACK,
                ),
            )
        return checked

    def route(self) -> RouteHandler:
        """The route handler for ``hook_callback`` requests."""

        async def handle(req: codec.ControlRequest, call: IncomingCall) -> Answer:
            decoded = codec.decode_hook_callback(req.request)
            reg = self._by_id.get(decoded.callback_id)
            if reg is None:
                raise ControlProtocolError(
                    f"no hook callback registered as {decoded.callback_id!r}", subtype=req.subtype
                )
            hook_input = codec.decode_hook_input(decoded.input)
            context = HookContext(signal=call.cancelled)
            output: Any = None
            started = anyio.current_time()
            try:
                # a scope, not `call_within` (a task per call): hooks run on every tool
                # call, and the CLI withdraws a hook at its timeout before this expires
                with anyio.move_on_after(reg.timeout + TIMEOUT_GRACE) as scope:
                    output = await call_callback(
                        "the hook", reg.callback, hook_input, decoded.tool_use_id, context
                    )
            except Exception as exc:
                return self._failed(reg, failure_text(exc), exc)
            except BaseException as exc:  # a cancellation (or a BaseException) of its own
                if not raised_by_callback(exc):
                    stop = stop_request(exc)
                    if stop is not None:  # it stops the connection: told first
                        self._failure(
                            reg, f"{failure_text(stop)}; the connection stops", cause=stop
                        )
                    raise
                return self._failed(reg, failure_text(exc), exc)
            finally:
                # The CLI withdraws a hook call when its own timeout expires; that is a
                # timeout of the callback, so report it (nothing is written back).
                elapsed = anyio.current_time() - started
                if call.cli_withdrew and elapsed >= reg.timeout * _WITHDRAWN_AT_TIMEOUT:
                    self._failure(
                        reg,
                        f"timed out after {reg.timeout:g} s (the CLI withdrew the call)",
                        timed_out=True,
                    )
            if call.withdrawn:
                return NO_REPLY  # it answered once cancelled: the CLI wants no answer now
            if not call.claim_answer(ANSWERED_BY_ROUTE):
                return ANSWER_LATER  # answered out of band: no answer, timeout or failure
            if scope.cancelled_caught:
                call.cancelled.set()  # for whatever the hook started that watches it
                return self._failed(reg, f"timed out after {reg.timeout:g} s", timed_out=True)
            if reg.event == "PermissionRequest":
                output = self._checked_decision(reg, output)
            try:
                return codec.encode_hook_result(output, reg.event)
            except (TypeError, ValueError) as exc:
                return self._failed(reg, f"returned an unusable output: {exc}", exc)

        return handle
