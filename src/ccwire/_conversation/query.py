"""``query()``: one prompt (or a stream of them) in, the conversation's messages out."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterable
from contextlib import aclosing
from typing import TYPE_CHECKING

from .. import _transport, _wire
from .options import ClaudeAgentOptions, options_or_default
from .prompt_check import Prompt, check_prompt

if TYPE_CHECKING:  # in private annotations only: the connection loads with the first query
    from .connection import Connection

__all__ = ["InternalClient", "converse", "query"]


class _Feeder:
    """Streams the caller's prompts in the background and remembers how that ended."""

    def __init__(self, conn: Connection, prompts: AsyncIterable[Prompt]) -> None:
        self._conn = conn
        self._prompts = prompts
        self.done = False
        self.error: BaseException | None = None

    async def run(self) -> None:
        try:
            await self._conn.stream_prompts(self._prompts, session_id="")
        except Exception as exc:  # re-raised in the caller's task by query()
            self.error = exc
        finally:
            self.done = True
            self._conn.wake()


async def query(
    *,
    prompt: str | AsyncIterable[Prompt],
    options: ClaudeAgentOptions | None = None,
    transport: _transport.base.Transport | None = None,
) -> AsyncGenerator[_wire.messages.Message, None]:
    """Run a one-shot conversation and yield its messages.

    Example:
        ```python
        async for message in query(prompt="What is 2 + 2?", options=options):
            if isinstance(message, ResultMessage):
                print(message.result)
        ```

    ``query()`` is an async generator: iterate it with ``async for`` inside an
    ``async def`` (``anyio.run(main)`` or ``asyncio.run(main())`` runs that). A plain
    ``for`` or an ``await query(...)`` fails with a `TypeError`, and calling it
    without iterating does nothing: the CLI starts at the first message asked for.
    Its arguments are keywords only: ``query(prompt=..., options=...)``.

    ``prompt`` is text, or an async iterable of prompts that is streamed while the
    conversation runs (it may wait for earlier answers before yielding more). Stdin
    stays open while anything is owed, so in-process tools, permission callbacks and
    hooks keep working, and is closed once the prompts are exhausted and answered; the
    CLI's remaining output is then drained and the process stopped. A CLI whose output
    has not ended 5 s later (longer if ``CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS`` gives
    its ``SessionEnd`` hooks longer), as it lingers or a process it started holds its
    stdout, is stopped with SIGTERM, then SIGKILL, and the iterator ends normally, with
    all the CLI wrote. Past a result, a CLI that still reports work ("running", a
    background agent) but starts no new turn keeps stdin open at most
    ``CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS`` (from ``options.env``, else the
    environment; 10 minutes by default, ``0`` for no limit) between turns.

    To stop early, close the iterator in the task that iterates it: Python does not
    close an async generator on ``break``, so use ``contextlib.aclosing``:

        async with aclosing(query(prompt="...")) as messages:
            async for message in messages:
                if done(message):
                    break  # the CLI is stopped when the block exits

    To start the CLI before the prompt is known, see `startup()` and `prewarm()`.
    """
    check_prompt(prompt)
    options = options_or_default(options)
    # only the outermost generator may wait in its cleanup (see `converse()`): this one
    client = InternalClient(caller_closes=True)
    try:
        process = client.process_query(prompt=prompt, options=options, transport=transport)
        async with aclosing(process) as messages:
            async for message in messages:
                yield message
    finally:
        if client._conn is not None:
            await client._conn.close()


class InternalClient:
    """`query()`'s conversation, run as claude-agent-sdk's ``InternalClient`` runs it.

    `query()` calls ``InternalClient().process_query(prompt=..., options=...,
    transport=...)``, as the reference's does, so what patches
    ``claude_agent_sdk._internal.client.InternalClient.process_query`` (tracing
    integrations, tests that feed recorded messages) sees every `query()`: the drop-in
    serves this class under that name.

    Args:
        caller_closes: `process_query()` leaves the connection open at its end: its
            caller closes it (`query()` does, from the outermost generator).
    """

    def __init__(self, *, caller_closes: bool = False) -> None:
        self._conn: Connection | None = None
        self._caller_closes = caller_closes

    async def process_query(
        self,
        prompt: str | AsyncIterable[Prompt],
        options: ClaudeAgentOptions,
        transport: _transport.base.Transport | None = None,
    ) -> AsyncGenerator[_wire.messages.Message, None]:
        """Open a connection for ``options`` (over ``transport``, if given), send
        ``prompt`` and yield the conversation's messages, as `query()` does; the
        connection is closed at the end.

        Args:
            prompt: The prompt, or an async iterable of prompts.
            options: The options.
            transport: A custom transport.

        Yields:
            The conversation's messages.
        """
        from .connection import Connection

        conn = self._conn = Connection(options, transport)
        await conn.open()
        try:
            async with aclosing(converse(conn, prompt, closes=False)) as messages:
                async for message in messages:
                    yield message
        finally:
            if not self._caller_closes:
                await conn.close()


async def converse(
    conn: Connection,
    prompt: str | AsyncIterable[Prompt],
    *,
    sent: bool = False,
    closes: bool = True,
) -> AsyncGenerator[_wire.messages.Message, None]:
    """The conversation of `query()` on an open connection, which it closes at the end.

    Used by `query()` and by the warm starts (`WarmQuery`, `SpareProcess`), whose
    connection was opened earlier; ``sent``: the text ``prompt`` was already sent
    (right behind a spare's claim). A generator that wraps this one passes
    ``closes=False`` and closes the connection itself, once this one is closed: at its
    end, an asyncio event loop closes every async generator still open at once, so
    only the outermost may wait in its cleanup (an inner one closed by the loop while
    the outer one closes it raises "asynchronous generator is already running").
    """
    try:
        feeder: _Feeder | None = None
        if isinstance(prompt, str):
            if not sent:
                await conn.send_prompt(prompt, session_id="")
        else:
            feeder = _Feeder(conn, prompt)
            conn.start_soon(feeder.run)
        while True:
            # closed with the conversation (trio warns of a generator left to the collector)
            async with aclosing(conn.messages(until_result=True, until_settled=True)) as turn:
                async for message in turn:
                    yield message
            if feeder is not None and feeder.error is not None:
                raise feeder.error  # noqa: TRY301 (recorded on the session's span below)
            if not conn.is_open or (not conn.run_open and (feeder is None or feeder.done)):
                break
            if not conn.run_open:
                await conn.wait_activity()
        async with aclosing(conn.rest()) as rest:  # bounded: a CLI that lingers is stopped
            async for message in rest:
                yield message
    except BaseException as exc:  # cancelled, or failed: the session's span says so
        conn.abandoned(exc)
        raise
    finally:
        if closes:
            await conn.close()
