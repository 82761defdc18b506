"""``query()``: one prompt (or a stream of them) in, the conversation's messages out."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterable, Mapping
from contextlib import aclosing
from typing import TYPE_CHECKING

from .._core.errors import OptionsError
from .options import ClaudeAgentOptions, options_or_default

if TYPE_CHECKING:
    from .._transport.base import Transport
    from .._wire.messages import Message
    from .connection import Connection, Prompt

__all__ = ["check_prompt", "check_prompt_item", "converse", "query"]


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
    blocks nor a user-message frame (a mapping): the CLI would never answer it.

    Raises:
        TypeError: ``prompt`` is of another type, or a list holds something that is
            not a content block.
    """
    if isinstance(prompt, (str, Mapping)):
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
    transport: Transport | None = None,
) -> AsyncGenerator[Message, None]:
    """Run a one-shot conversation and yield its messages.

    ``prompt`` is text, or an async iterable of prompts that is streamed while the
    conversation runs (it may wait for earlier answers before yielding more). Stdin
    stays open while anything is owed, so in-process tools, permission callbacks and
    hooks keep working, and is closed once the prompts are exhausted and answered; the
    CLI's remaining output is then drained and the process stopped. Past a result, a CLI
    that still reports work ("running", a background agent) but starts no new turn keeps
    stdin open at most ``CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS`` (from ``options.env``,
    else the environment; 10 minutes by default, ``0`` for no limit) between turns.

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
    from .connection import Connection

    conn = Connection(options, transport)
    await conn.open()
    async with aclosing(converse(conn, prompt)) as messages:
        async for message in messages:
            yield message


async def converse(
    conn: Connection, prompt: str | AsyncIterable[Prompt], *, sent: bool = False
) -> AsyncGenerator[Message, None]:
    """The conversation of `query()` on an open connection, which it closes at the end.

    Used by `query()` and by the warm starts (`WarmQuery`, `SpareProcess`), whose
    connection was opened earlier; ``sent``: the text ``prompt`` was already sent
    (right behind a spare's claim).
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
        if conn.is_open:
            await conn.end_input()
        async with aclosing(conn.messages(until_result=False)) as rest:
            async for message in rest:
                yield message
    except BaseException as exc:  # cancelled, or failed: the session's span says so
        conn.abandoned(exc)
        raise
    finally:
        await conn.close()
