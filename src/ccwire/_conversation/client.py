"""``ClaudeSDKClient``: a multi-turn conversation with the Claude Code CLI."""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncGenerator, AsyncIterable
from contextlib import aclosing
from types import TracebackType
from typing import TYPE_CHECKING, Any

import anyio

from .. import _transport, _wire
from .._core.async_only import AsyncWithOnly
from .._core.errors import CREDENTIALS_FIX, CLIConnectionError, NoPromptError
from .._core.loops import current_loop
from .._core.origin import ReferenceOrigin
from .options import ClaudeAgentOptions, options_or_default
from .prompt_check import Prompt, check_prompt
from .reference_query import Query
from .runtime_control import RuntimeControl
from .shadow_warning import warn_if_can_use_tool_shadowed

if TYPE_CHECKING:  # in private annotations only: the connection loads on connect()
    from .connection import Connection

__all__ = ["NO_PROMPT_SECONDS", "ClaudeSDKClient"]

logger = logging.getLogger("ccwire")

NO_PROMPT_SECONDS = 3.0
"""How long `ClaudeSDKClient.receive_response()` waits, the CLI idle, for a prompt to be
sent (another task may be about to send it) before raising `NoPromptError` when none
ever was, or logging a warning when every one sent was answered."""


class ClaudeSDKClient(RuntimeControl, ReferenceOrigin, AsyncWithOnly):
    """A multi-turn conversation with one Claude Code CLI process.

    Use it as an async context manager (or call `connect()` / `disconnect()`
    from the same task):

        async with ClaudeSDKClient(options) as client:
            await client.query("Greet Alice")
            async for message in client.receive_response():
                print(message)

    Prompts sent back to back may be merged by the CLI into one turn, and a prompt sent
    mid-turn is folded into the running turn; `receive_response()` knows this and
    never waits for a result that will not come.

    While connected, the runtime control methods (`interrupt()`,
    `set_permission_mode()`, `set_model()`, `mcp_status()`,
    `mcp_set_servers()`, `get_context_usage()`, `rewind_files()`, ...)
    return typed results and raise `UnsupportedFeatureError` when the
    connected CLI lacks the feature; `capabilities`, `cli_version` and
    `supports()` tell what it has.
    """

    _ASYNC_WITH = "async with ClaudeSDKClient(options) as client:"

    def __init__(
        self,
        options: ClaudeAgentOptions | None = None,
        transport: _transport.base.Transport | None = None,
    ) -> None:
        self.options = options_or_default(options)
        self._transport = transport
        self._conn: Connection | None = None
        self._connecting: tuple[anyio.CancelScope, anyio.Event] | None = None  # in connect()
        self._told_credentials = False  # the no-credentials warning, logged once
        self._reference_query: Query | None = None  # what `_query` gives while connected

    # -------------------------------------------------------------- lifecycle

    async def connect(self, prompt: str | AsyncIterable[Prompt] | None = None) -> None:
        """Start the CLI and complete the handshake; optionally send a first prompt.

        ``prompt`` may be text or an async iterable of messages (streamed in the
        background; if it raises, the error is raised by the next read of
        `receive_messages()` or `receive_response()`, in its place among the messages,
        and the conversation goes on). Raises `CLINotFoundError`,
        `ProcessError` or `ControlTimeoutError`.
        """
        if self._conn is not None:
            raise CLIConnectionError("already connected")
        if self._connecting is not None:
            raise CLIConnectionError("already connecting: connect() is running in another task")
        if prompt is not None:
            check_prompt(prompt)
        # the connection stack loads with the first connect: importing the client stays cheap
        import anyio

        from .connection import Connection

        if self.options.can_use_tool is not None:
            warn_if_can_use_tool_shadowed(self.options)
        conn = Connection(self.options, self._transport)
        # disconnect() from another task meanwhile cancels this scope: open() then stops
        # the CLI and cleans up as for any cancellation
        done = anyio.Event()
        with anyio.CancelScope() as scope:
            self._connecting = scope, done
            try:
                await conn.open()
            finally:
                self._connecting = None
                done.set()
        if scope.cancel_called:
            await conn.close()  # open() may have finished before the cancellation landed
            raise CLIConnectionError("disconnect() was called while connecting")
        await self._attach(conn, prompt)

    async def _attach(
        self,
        conn: Connection,
        prompt: str | AsyncIterable[Prompt] | None = None,
    ) -> None:
        """Take ``conn`` (open) as this client's connection: what `connect()` does once
        the CLI has answered, and how a warm start (`SpareProcess`) hands its
        connection over."""
        from .._protocol.features import CliFeatures

        self._conn = conn
        conn.serve_through = self._query_of(conn)._serve  # the reference's seam, patchable
        features = CliFeatures(conn.server_info)
        conn.add_observer(features.observe, system_only=True)
        self._features = features
        servers = self.options.mcp_servers
        # os.PathLike, not pathlib.Path: the first connect imports no pathlib (~1 ms)
        self._mcp_servers = None if isinstance(servers, (str, os.PathLike)) else dict(servers)
        if isinstance(prompt, str):
            try:
                await conn.send_prompt(prompt)
            except BaseException:
                # connect() fails as a whole: no CLI left running behind a raised error
                self._conn = None
                await conn.close()
                raise
        elif prompt is not None:
            conn.stream_prompts_soon(prompt)

    async def disconnect(self) -> None:
        """End the conversation and stop the CLI (bounded). Safe to call twice.

        Called while `connect()` runs in another task, it makes that `connect()` stop
        the CLI and raise `CLIConnectionError`, and returns once the CLI is stopped.
        """
        if self._connecting is not None:
            import anyio  # loaded by connect()

            scope, done = self._connecting
            scope.cancel()
            with anyio.CancelScope(shield=True):
                await done.wait()  # open() cleans up (bounded) as for any cancellation
        conn, self._conn = self._conn, None
        if conn is None:
            return
        if conn.loop is not current_loop():
            conn.kill_outside_loop()  # nothing of the loop it ran in can be awaited here
        else:
            await conn.close()

    async def __aenter__(self) -> ClaudeSDKClient:
        await self.connect()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is not None and self._conn is not None:  # the session's span records why
            self._conn.abandoned(exc)
        await self.disconnect()

    def _connection(self, *, any_loop: bool = False) -> Connection:
        """The connection; unless ``any_loop``, only in the event loop it was opened in
        (or outside any)."""
        if self._conn is None:
            raise CLIConnectionError(
                f"not connected: use `{self._ASYNC_WITH}` (or `await client.connect()` first)"
            )
        here = current_loop()
        if not any_loop and here is not None and here is not self._conn.loop:
            raise CLIConnectionError(
                "this client was connected in a different event loop (each asyncio.run() "
                "or anyio.run() runs a new one): use it in the loop that connected it, or "
                "connect a new client in this one"
            )
        return self._conn

    @property
    def _query(self) -> Query | None:
        """The reference's private ``_query``, for code that reaches into it: while
        connected, a `Query` (the same one until `disconnect()`) whose
        ``_send_control_request()`` sends a control request as the reference's does;
        None when not connected."""
        conn = self._conn
        return None if conn is None else self._query_of(conn)

    def _query_of(self, conn: Connection) -> Query:
        """The `Query` of ``conn`` (the same one for as long as it is this client's)."""
        view = self._reference_query
        if view is None or view.connection is not conn:
            view = self._reference_query = Query(self, conn)
        return view

    # ------------------------------------------------------------------ turns

    async def query(
        self,
        prompt: str | list[dict[str, Any]] | AsyncIterable[Prompt],
        session_id: str = "default",
    ) -> str | None:
        """Send a prompt (text, content blocks, or an async iterable of messages).

        Returns the ``uuid`` the prompt carries (None for an iterable): the id that
        `rewind_files()` and `cancel_async_message()` take.
        """
        conn = self._connection()
        check_prompt(prompt, blocks=True)
        if isinstance(prompt, (str, list)):
            return await conn.send_prompt(prompt, session_id=session_id)
        await conn.stream_prompts(prompt, session_id=session_id)
        return None

    async def receive_messages(self) -> AsyncGenerator[_wire.messages.Message, None]:
        """Every message until the CLI's output ends (an async generator, as the
        reference's: not connected, it raises `CLIConnectionError` once iterated)."""
        async with aclosing(self._connection().messages(until_result=False)) as messages:
            async for message in messages:
                yield message

    async def receive_response(self) -> AsyncGenerator[_wire.messages.Message, None]:
        """Messages up to and including the next ``ResultMessage`` (an async iterator).

        With no turn pending it waits for the next messages, as the reference SDK does.
        A turn ends with its result frame, whatever order the CLI's status frames come
        in. If the CLI then exits after an error result, `ResultError` is raised
        after that result was yielded. As in the reference, the messages are read
        through `receive_messages()`, so a wrapper installed on it (a tracing
        integration's) sees them.

        When every prompt sent was answered already (``receive_response()`` twice for
        one prompt, or the next ``query()`` without ``await``) and the CLI stays idle
        for `NO_PROMPT_SECONDS`, a warning is logged and it waits on: another task may
        yet send the prompt.

        Raises:
            NoPromptError: No prompt was ever sent on this connection, none is being
                sent, the CLI is idle and no message came within `NO_PROMPT_SECONDS`
                (the usual cause: ``client.query(...)`` without ``await``; the reference
                waits forever).
        """
        # the message types load with the connection (the usual import leaves them out)
        from .._wire.messages import AssistantMessage, ResultMessage

        conn = self._connection()
        if not await conn.wait_for_a_prompt(NO_PROMPT_SECONDS):
            if not conn.prompted:
                raise NoPromptError(NO_PROMPT_SECONDS)
            # another task may yet send the next prompt (a reader looping over
            # receive_response() while a writer sends): wait on, as the reference does
            logger.warning(
                "ccwire: receive_response() has waited %g s with every prompt sent on this "
                "connection answered and the CLI idle: it waits for the next prompt's "
                "answer. Call it once per `await client.query(...)` (a second call for "
                "one prompt, or a query() without `await`, waits forever)",
                NO_PROMPT_SECONDS,
            )

        async with aclosing(self.receive_messages()) as messages:
            async for message in messages:
                if (
                    isinstance(message, AssistantMessage)
                    and message.error == "authentication_failed"
                    and not self._told_credentials
                ):  # the answer is the CLI's "Not logged in · Please run /login", no more
                    self._told_credentials = True
                    logger.warning(
                        "ccwire: Claude Code found no usable API key or login. %s",
                        CREDENTIALS_FIX,
                    )
                yield message
                if isinstance(message, ResultMessage):
                    return

    @property
    def session_state(self) -> str | None:
        """The CLI's own session state: ``"idle"``, ``"running"`` or ``"requires_action"``
        (None when it does not report one; CLIs older than 2.1.330 never do)."""
        conn = self._conn
        if conn is None:
            return None
        if conn.cli_state is not None:
            return conn.cli_state
        initial = (conn.server_info or {}).get("session_state")  # from initialize
        return initial if isinstance(initial, str) else None

    @property
    def session_id(self) -> str | None:
        """The CLI's session id, once reported."""
        return self._conn.session_id if self._conn is not None else None
