"""The one exception tree of ccwire.

Everything ccwire raises on purpose derives from `CcwireError`.  Foreign
exceptions (``OSError``, ``json.JSONDecodeError``, anyio's stream errors, ...) are
translated into these at the layer boundary where they happen, with the original
kept as ``__cause__``.

The names used by Anthropic's ``claude-agent-sdk`` are available as aliases so that
code written against it keeps working after changing the import.

The text of every ccwire error is shown with secret-shaped parts masked
(`redact_text()`), and so is every record of the ``ccwire`` logger.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .redact import install_log_filter, redact_text

install_log_filter()  # the ccwire logger masks secrets in its records

__all__ = [
    "AsyncOnlyError",
    "CLIConnectionError",
    "CLIJSONDecodeError",
    "CLINotFoundError",
    "CLISilenceError",
    "CallbackError",
    "CcwireError",
    "ClaudeSDKError",
    "ControlProtocolError",
    "ControlTimeoutError",
    "InvalidTransitionError",
    "LineTooLongError",
    "McpError",
    "MessageDecodeError",
    "MessageEncodeError",
    "MessageParseError",
    "MissingExtraError",
    "NoPromptError",
    "OptionsError",
    "ProcessError",
    "ResourceNotFoundError",
    "ResultError",
    "SessionInUseError",
    "SessionStateError",
    "SessionStoreError",
    "SessionTimeoutError",
    "SnapshotTimeoutError",
    "SpareStartError",
    "SpawnError",
    "ToolDefinitionError",
    "ToolError",
    "exception_text",
    "UnknownEventError",
    "UnsupportedFeatureError",
]


class CcwireError(Exception):
    """Base class of every error ccwire raises.

    Its text (``str()``, ``repr()``, and so tracebacks and logs) has secret-shaped parts masked:
    API keys, tokens, URL passwords (see `redact_text()`); ``args`` keep the original.
    """

    def __str__(self) -> str:
        return redact_text(super().__str__())

    def __repr__(self) -> str:
        return redact_text(super().__repr__())


ClaudeSDKError = CcwireError
"""Alias of `CcwireError` under the reference SDK's name."""


class CLIConnectionError(CcwireError):
    """The Claude Code CLI could not be started, or the connection to it is gone."""


class CLISilenceError(CLIConnectionError, TimeoutError):
    """The CLI wrote nothing for ``seconds`` in the middle of a turn while nothing was
    waiting on this side (``ClaudeAgentOptions.silence_timeout``); it was stopped."""

    def __init__(self, seconds: float) -> None:
        super().__init__(
            f"the Claude Code CLI wrote nothing for {seconds:g} s in the middle of a turn "
            "(silence_timeout): it was stopped"
        )
        self.seconds = seconds


class CLINotFoundError(CLIConnectionError):
    """No Claude Code CLI executable was found.

    The message lists every place that was searched and how to install the CLI.
    """

    def __init__(
        self,
        message: str = "Claude Code not found",
        cli_path: str | None = None,
        *,
        searched: tuple[str, ...] = (),
    ) -> None:
        super().__init__(f"{message}: {cli_path}" if cli_path else message)
        self.searched = searched


class SpawnError(CLIConnectionError):
    """A ``spawn_claude_code_process`` function failed: it raised, or returned
    something that is not a usable process (the message says what it lacks).

    The original exception, if any, is ``__cause__``.
    """


class SpareStartError(CLIConnectionError):
    """A `SparePool` stopped starting spare CLIs: too many failed to start in a row.

    Its sessions start cold until a spare starts again (see `SparePool`).

    ``failures`` is how many failed in a row, ``stderr`` what the last one wrote to
    stderr (also in the message), if anything; the last failure is ``__cause__``.
    """

    def __init__(self, message: str, *, failures: int, stderr: str | None = None) -> None:
        super().__init__(message)
        self.failures = failures
        self.stderr = stderr


class ProcessError(CcwireError):
    """The CLI process ended while it still owed us something.

    ``exit_code`` is the process's exit status (negative for a signal, ``None`` if it
    could not be collected) and ``stderr`` the last part of what it wrote to stderr.
    As in claude-agent-sdk, it derives from `CcwireError` (`ClaudeSDKError`) directly,
    not from `CLIConnectionError`: catch both where either may end a connection.
    """

    def __init__(
        self, message: str, exit_code: int | None = None, stderr: str | None = None
    ) -> None:
        detail = message
        if exit_code is not None:
            detail += f" (exit code: {exit_code})"
        if stderr:
            detail += f"\nError output: {stderr}"
        super().__init__(detail)
        self.exit_code = exit_code
        self.stderr = stderr


class ResultError(ProcessError):
    """The CLI exited after reporting a terminal error result.

    The CLI ends a failed run with a ``result`` frame whose ``is_error`` is true
    (yielded as a `ResultMessage`) and then exits non-zero. This error replaces the
    bare "exit code 1" `ProcessError` for that case; it is raised after the error
    result was yielded, by `query()` and by ``receive_messages()`` /
    ``receive_response()``. Being a `ProcessError`, ``except ProcessError`` still
    catches it.

    Attributes:
        subtype: The result's subtype (``"error_max_turns"``,
            ``"error_during_execution"``, or ``"success"`` when the last turn was an
            API error), or None.
        errors: The error strings the CLI reported (may be empty).
        result: The result text, if any (``"API Error: ..."`` for API failures).
        api_error_status: The HTTP status of the failing API call, if any.
        terminal_reason: Why the run ended (``"api_error"``, ``"max_turns"``...).
        session_id: The session the result belongs to, if reported.
        data: The raw ``result`` frame as the CLI wrote it.
        exit_code: The CLI's exit status.
    """

    def __init__(
        self,
        message: str,
        data: dict[str, Any] | None = None,
        exit_code: int | None = None,
        *,
        stderr: str = "",
    ) -> None:
        # ``data`` is optional so that ``type(e)(*e.args)`` (pickle, copy) still works
        data = data if isinstance(data, dict) else {}
        super().__init__(message, exit_code=exit_code, stderr=stderr)
        self.data = data
        self.subtype: str | None = _str_or_none(data.get("subtype"))
        self.errors: list[str] = result_error_strings(data.get("errors"))
        self.result: str | None = _str_or_none(data.get("result"))
        status = data.get("api_error_status")
        self.api_error_status: int | None = (
            status if isinstance(status, int) and not isinstance(status, bool) else None
        )
        self.terminal_reason: str | None = _str_or_none(data.get("terminal_reason"))
        self.session_id: str | None = _str_or_none(data.get("session_id"))


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def result_error_strings(raw: Any) -> list[str]:
    """The ``errors`` of a result frame as clean strings (a bare string is one error;
    blank and non-string entries are dropped)."""
    if isinstance(raw, str):
        raw = [raw]
    elif not isinstance(raw, list):
        return []
    return [e.strip() for e in raw if isinstance(e, str) and e.strip()]


def exception_text(exc: BaseException) -> str:
    """``str(exc)``, or a stand-in naming its type when that ``__str__`` raises itself
    (a user's exception class may have a broken one; its failure must not replace the
    error being reported)."""
    try:
        return str(exc)
    except Exception as failure:  # any failure of a foreign __str__
        return f"<{type(exc).__name__}: str() failed with {type(failure).__name__}>"


def result_error_text(data: Mapping[str, Any]) -> str:
    """The most telling text of an error result: its errors, else its result text,
    else a non-success subtype, else its HTTP status."""
    errors = result_error_strings(data.get("errors"))
    if errors:
        return "; ".join(errors)
    result = data.get("result")
    if isinstance(result, str) and result.strip():
        return result.strip()
    subtype = data.get("subtype")
    if isinstance(subtype, str) and subtype and subtype != "success":
        return subtype
    status = data.get("api_error_status")
    if status is not None:
        return f"API error (HTTP {status})"
    return "unknown error"


_NO_CREDENTIALS = re.compile(
    r"not logged in|/login|invalid api key|x-api-key|authentication_error", re.IGNORECASE
)


CREDENTIALS_FIX = (
    "Set ANTHROPIC_API_KEY in the environment or in ClaudeAgentOptions(env=...), or log "
    "in with Claude Code's /login; to run without a key, point the CLI at "
    "ccwire.testing.ScriptedModel. `ccwire doctor` checks the setup"
)
"""What to do when the CLI has no usable credentials."""


def credentials_hint(data: Mapping[str, Any]) -> str:
    """What to do about an error result that says the CLI has no usable credentials
    (``"Not logged in · Please run /login"``, an HTTP 401), else ``""``."""
    text = " ".join([result_error_text(data), str(data.get("result") or "")])
    if data.get("api_error_status") != 401 and not _NO_CREDENTIALS.search(text):
        return ""
    return f" (the CLI found no usable API key or login). {CREDENTIALS_FIX}"


class MessageDecodeError(CcwireError):
    """A line from the CLI could not be decoded as a protocol message.

    ``line`` holds (at most the first 200 characters of) the offending text.
    """

    def __init__(self, message: str, *, line: str = "") -> None:
        super().__init__(f"{message}: {line!r}" if line else message)
        self.line = line


class CLIJSONDecodeError(MessageDecodeError):
    """A line from the CLI is not JSON (claude-agent-sdk's name and signature).

    Args:
        line: The offending line (the message shows its first 100 characters).
        original_error: The JSON decoder's error.
    """

    def __init__(self, line: str, original_error: Exception) -> None:
        CcwireError.__init__(self, f"Failed to decode JSON: {line[:100]}...")
        self.line = line
        self.original_error = original_error

    def __reduce__(self) -> tuple[Any, ...]:
        # rebuilt from its arguments, not its message (which would be wrapped again)
        return type(self), (self.line, self.original_error), self.__dict__


class LineTooLongError(CLIJSONDecodeError):
    """A line from the CLI is longer than the cap (``max_buffer_size``): a
    `CLIJSONDecodeError`, which the reference SDK raises for it.

    Args:
        limit: The cap, in bytes.
        line: The line's start (its first 200 bytes at most).
    """

    def __init__(self, limit: int, line: str) -> None:
        CcwireError.__init__(
            self, f"a line from the CLI exceeds max_line_bytes ({limit} bytes): {line!r}"
        )
        self.limit = limit
        self.line = line
        self.original_error = ValueError(f"a line longer than {limit} bytes")

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.limit, self.line), self.__dict__


class MessageParseError(MessageDecodeError):
    """A message from the CLI could not be parsed into its type (``claude-agent-sdk``'s
    name and signature, raised by ``parse_message()``).

    Args:
        message: What is wrong.
        data: The offending message (``None`` when it was not a dict).
    """

    def __init__(self, message: str, data: Any = None) -> None:
        CcwireError.__init__(self, message)
        self.data = data
        self.line = "" if data is None else str(data)[:200]


class ControlProtocolError(CcwireError):
    """A control request failed: the peer answered with an error, or broke the protocol.

    ``subtype`` names the request, ``error_code`` is the CLI's optional error code.
    """

    def __init__(
        self, message: str, *, subtype: str | None = None, error_code: str | None = None
    ) -> None:
        super().__init__(message)
        self.subtype = subtype
        self.error_code = error_code


class ControlTimeoutError(CcwireError, TimeoutError):
    """A control request got no answer within its time limit."""

    def __init__(self, subtype: str, timeout: float) -> None:
        super().__init__(f"control request {subtype!r} got no answer within {timeout:g} s")
        self.subtype = subtype
        self.timeout = timeout


class UnsupportedFeatureError(ControlProtocolError):
    """The connected CLI does not support the requested feature."""


class CallbackError(ControlProtocolError):
    """A user callback (a hook, ``can_use_tool``, ``on_elicitation`` or ``on_user_dialog``)
    raised, timed out or returned something unusable. The CLI got an error answer with
    this message; the error is also logged on the ``ccwire`` logger and passed to
    ``ClaudeAgentOptions.on_callback_error``.

    ``kind`` is ``"hook"``, ``"can_use_tool"``, ``"on_elicitation"`` or
    ``"on_user_dialog"``; ``event`` the hook event (hooks only);
    ``callback_name`` the callback's qualified name; ``timed_out`` is True after a
    timeout. The original exception, if any, is ``__cause__``.
    """

    def __init__(
        self,
        message: str,
        *,
        kind: str,
        callback_name: str,
        event: str | None = None,
        timed_out: bool = False,
        subtype: str | None = None,
    ) -> None:
        super().__init__(message, subtype=subtype)
        self.kind = kind
        self.callback_name = callback_name
        self.event = event
        self.timed_out = timed_out


class OptionsError(CcwireError, TypeError, ValueError):
    """An option or an argument (such as a prompt) has the wrong type or value.

    Raised for `ClaudeAgentOptions` when they are built and again when a session
    starts, before any CLI runs. It is also a `TypeError` and a `ValueError`, so code written for
    ``claude-agent-sdk``, which raises those, catches it unchanged.
    """


class AsyncOnlyError(CcwireError, TypeError):
    """An async context manager entered with a plain ``with``.

    A plain ``with`` on `ClaudeSDKClient` or `ClaudeCodeAgent`. The message says what
    to write instead (``async with``) and how to run it (inside an ``async def``, with
    ``anyio.run(main)`` or ``asyncio.run(main())``). It is raised before anything
    starts. It is also a `TypeError`, what Python (and so ``claude-agent-sdk``) raises
    there, so code that catches that keeps working.

    Example:
        ```python
        with ClaudeSDKClient() as client:  # AsyncOnlyError: use `async with ...`
            ...
        ```
    """


class MissingExtraError(CcwireError, ImportError):
    """A feature needs an optional extra that is not installed.

    The message names the feature and how to install what it needs, for example
    ``RedisStore needs redis-py: pip install 'ccwire[redis]'``. It is also an
    `ImportError`, so code that catches that keeps working.

    Example:
        ```python
        try:
            await store.load(key)  # a RedisStore, without redis-py installed
        except MissingExtraError as exc:
            print(exc)  # RedisStore needs redis-py: pip install 'ccwire[redis]'
        ```

    Attributes:
        feature: What needs the extra (``"RedisStore"``).
        needs: The package it needs, as a reader knows it (``"redis-py"``).
        extra: The extra that installs it (``"redis"``: ``pip install 'ccwire[redis]'``).
    """

    def __init__(self, feature: str, needs: str, extra: str) -> None:
        super().__init__(f"{feature} needs {needs}: pip install 'ccwire[{extra}]'")
        self.feature = feature
        self.needs = needs
        self.extra = extra

    def __reduce__(self) -> tuple[type[MissingExtraError], tuple[str, str, str]]:
        return type(self), (self.feature, self.needs, self.extra)


class ToolDefinitionError(CcwireError, TypeError, ValueError):
    """A tool or server definition is invalid (bad name, duplicate, bad schema).

    It is also a `TypeError` and a `ValueError`: ``claude-agent-sdk`` raises a
    `TypeError` for ``@tool`` used without its arguments or one tool where the list goes.
    """


class ToolError(CcwireError):
    """Raise from a tool handler to return an ``isError`` result with exactly this message."""


class McpError(CcwireError):
    """Raise from a resource or prompt handler to answer with this JSON-RPC error.

    ``code`` is the JSON-RPC error code (default -32603, internal error), ``message``
    is sent exactly as given and ``data`` (if not ``None``) as the error's ``data``.
    """

    def __init__(self, message: str, *, code: int = -32603, data: object = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


class ResourceNotFoundError(McpError, LookupError):
    """Raise from a resource handler when the URI names nothing: the client gets the
    MCP error -32002 ("Resource not found") with ``data: {"uri": uri}``."""

    def __init__(self, uri: str, message: str | None = None) -> None:
        super().__init__(message or f"Resource not found: {uri}", code=-32002, data={"uri": uri})
        self.uri = uri


class SessionStateError(CcwireError):
    """An operation is not possible in the current state (for example: not connected)."""


class NoPromptError(SessionStateError):
    """``receive_response()`` with no prompt sent: usually ``query()`` without ``await``.

    No prompt was ever sent on the connection, and none came within a few seconds
    (`seconds`), nor any message, while the CLI was idle.

    Almost always ``client.query(...)`` called without ``await``: the prompt was never
    sent (Python's ``RuntimeWarning: coroutine ... was never awaited`` says so too), and
    the reference SDK waits forever. Read with ``receive_messages()`` to wait for
    output that no prompt of this connection asks for.
    """

    def __init__(self, seconds: float) -> None:
        super().__init__(
            f"receive_response() waited {seconds:g} s for a prompt to answer, but no prompt "
            "was ever sent on this connection: did you forget `await` before "
            "`client.query(...)`? Write `await client.query(prompt)`, then "
            "`async for message in client.receive_response(): ...` (receive_messages() "
            "reads output that no prompt asked for)"
        )
        self.seconds = seconds

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.seconds,)


class InvalidTransitionError(SessionStateError):
    """A session state machine was asked for a transition its table does not allow.

    This is a bug (in ccwire or in a hand-driven state machine), never a normal outcome:
    the state is left unchanged. ``from_state`` and ``to_state`` name the transition.
    """

    def __init__(self, from_state: str, to_state: str) -> None:
        super().__init__(f"invalid session transition: {from_state} -> {to_state}")
        self.from_state = from_state
        self.to_state = to_state


class SessionInUseError(SessionStateError):
    """A session id is already owned: one session id has one owner.

    Raised when a `ClaudeSDKClient`, ``query()`` or an agent's session would start a
    CLI on a conversation (``resume=``, ``session_id=``, ``agent.resume_session``) that
    a connection of this process, or of another process on this host, still runs: two
    CLIs would write one transcript. Continue it where it runs, or close it first;
    forking it (``fork_session=True``, ``agent.resume_session(..., fork=True)``) is
    allowed. ``session_id`` names it and ``state`` is its state when refused.
    """

    def __init__(self, message: str, *, session_id: str, state: str) -> None:
        super().__init__(message)
        self.session_id = session_id
        self.state = state


class SessionStoreError(CcwireError):
    """A session store could not read or write what it keeps.

    Raised for a corrupt snapshot, an unreadable database file, or a database server
    that refused or dropped a request; the driver's own exception is kept as
    `__cause__`.

    Attributes:
        path: The file or server address the store was using, when it has one.
    """

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(f"{message} ({path})" if path else message)
        self.path = path


class SnapshotTimeoutError(SessionStoreError, TimeoutError):
    """Closing a session could not save its last snapshot within the time allowed.

    Attributes:
        session_id: The session whose final snapshots were not saved.
        timeout: The time allowed, in seconds.
        unsaved: How many snapshots were still waiting (the last one is the newest).
    """

    def __init__(self, session_id: str, timeout: float, unsaved: int) -> None:
        super().__init__(
            f"session {session_id}: the store did not save the last {unsaved} snapshot(s) "
            f"within {timeout:g} s of closing; the stored state is older than the session's"
        )
        self.session_id = session_id
        self.timeout = timeout
        self.unsaved = unsaved


class SessionTimeoutError(CcwireError, TimeoutError):
    """A session did not reach the awaited state within the time limit."""


class UnknownEventError(CcwireError, ValueError):
    """A session event name that does not exist was given to ``Session.on``."""


class MessageEncodeError(CcwireError, ValueError):
    """A value could not be encoded as a JSON protocol line (for example: NaN, or an object
    that is not JSON-serializable). Nothing was written to the CLI."""
