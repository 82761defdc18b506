"""`SparePool`: a few spare CLIs kept booted, so that new sessions start on one.

The pool keeps ``size`` spares (`prewarm()`) parked or booting in the background.
Each session takes one and claims it for its folder and options; a replacement starts
booting at once. A session whose options differ from the pool's in more than a claim
can change (`claim_for()`), or that finds no spare at all, starts cold, as does one
whose claim the CLI refuses (see `SpareProcess.fallback_reason`).

A spare that is still booting when a session wants one is waited for (it started
earlier than a cold start would, so it is ready sooner), unless other sessions already
wait for every booting spare: that session starts cold.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator
from contextlib import aclosing, asynccontextmanager
from types import TracebackType
from typing import TYPE_CHECKING

import anyio
import anyio.abc

from .._core.errors import CcwireError, OptionsError, SessionStateError
from .._core.tasks import TaskHost
from .options import ClaudeAgentOptions
from .query import check_prompt, converse
from .warm import SpareProcess, claim_for, open_cold, prewarm

if TYPE_CHECKING:
    from .._wire.messages import Message
    from .client import ClaudeSDKClient
    from .connection import Connection, Prompt

__all__ = ["SparePool"]

logger = logging.getLogger("ccwire")


class SparePool:
    """Keeps ``size`` spare CLIs booted for new sessions; see the module docstring.

    ```python
    async with SparePool(options, size=2) as pool:
        async with pool.client(replace(options, cwd=folder)) as client:
            await client.query("...")
            ...
    ```

    Use it as an async context manager (or call `aclose()`): its spares boot in a
    background task of its own until it is closed.

    Args:
        options: The options every spare starts with (as for `prewarm()`).
        size: How many spares to keep parked or booting.
        initialize_timeout: Seconds a spare's start may take (default:
            ``options.initialize_timeout``).

    Attributes:
        claimed: Sessions started on a spare.
        cold: Sessions started cold (no spare, options a claim cannot give, or a
            refused claim).
        boot_failures: Spares that failed to start.
        last_error: The last boot failure, if any.
    """

    def __init__(
        self,
        options: ClaudeAgentOptions | None = None,
        *,
        size: int = 1,
        initialize_timeout: float | None = None,
    ) -> None:
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise OptionsError(f"size must be a positive integer, got {size!r}")
        self.options = options or ClaudeAgentOptions()
        self.size = size
        self._timeout = initialize_timeout
        self._ready: deque[SpareProcess] = deque()
        self._booting = 0
        self._waiting = 0  # sessions waiting in take() for a booting spare
        self._changed: anyio.Event | None = None  # made by start(): it needs an event loop
        self._started: anyio.Event | None = None
        self._host: TaskHost | None = None
        self._tg: anyio.abc.TaskGroup | None = None
        self._closed = False
        self.claimed = 0
        self.cold = 0
        self.boot_failures = 0
        self.last_error: BaseException | None = None

    # ---------------------------------------------------------------- lifecycle

    async def __aenter__(self) -> SparePool:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def start(self) -> None:
        """Start booting the spares (in the background); the first `take()` does it
        too. Idempotent."""
        if self._closed:
            raise SessionStateError("the spare pool is closed")
        if self._started is not None:  # started, or starting in another task
            await self._started.wait()
            return
        self._started, self._changed = anyio.Event(), anyio.Event()
        host = self._host = TaskHost("ccwire spare pool")
        try:
            self._tg = await host.start()
        finally:
            self._started.set()
        self._refill()

    async def aclose(self) -> None:
        """Stop booting and discard the parked spares (bounded, shielded); idempotent."""
        self._closed = True
        if self._started is not None:  # a start under way: its task host runs once it is done
            with anyio.CancelScope(shield=True):
                await self._started.wait()
        self._tg = None
        host, self._host = self._host, None
        if host is not None:
            await host.aclose()
        with anyio.CancelScope(shield=True):
            while self._ready:
                await self._ready.popleft().close()
        self._notify()

    # ----------------------------------------------------------------- spares

    @property
    def parked(self) -> int:
        """Spares parked now (some may have died since)."""
        return len(self._ready)

    def _notify(self) -> None:
        if self._changed is not None:
            self._changed.set()
            self._changed = anyio.Event()

    def _refill(self) -> None:
        """Start booting spares until ``size`` are parked or booting."""
        tg = self._tg
        if tg is None or self._closed:
            return
        while self._booting + len(self._ready) < self.size:
            self._booting += 1
            tg.start_soon(self._boot, name="ccwire spare boot")

    async def _boot(self) -> None:
        try:
            spare = await prewarm(options=self.options, initialize_timeout=self._timeout)
        except (CcwireError, ValueError, OSError) as exc:
            self.boot_failures += 1
            self.last_error = exc
            logger.warning("ccwire: a spare CLI failed to start: %s", exc)
        else:
            if self._closed:
                await spare.close()
            else:
                self._ready.append(spare)
        finally:
            self._booting -= 1
            self._notify()

    async def take(self) -> SpareProcess | None:
        """A parked spare, removed from the pool (a replacement starts booting).

        When none is parked, waits for a spare still booting, unless every booting one
        is already awaited by another session (then a cold start is sooner). Starts
        the pool if it was not yet.

        Returns:
            The spare (yours to claim or close), or ``None`` when the pool has none
            for this session now: it is closed, its spares are all taken or awaited,
            or they fail to start.
        """
        if not self._closed:
            await self.start()
        while not self._closed:
            while self._ready:
                spare = self._ready.popleft()
                if spare.parked:
                    self._refill()
                    return spare
                await spare.close()  # died while parked
            if self._booting <= self._waiting:
                self._refill()  # for the next sessions: this one does not wait
                return None
            assert self._changed is not None
            self._waiting += 1
            try:
                await self._changed.wait()
            finally:
                self._waiting -= 1
        return None

    # --------------------------------------------------------------- sessions

    async def _open(
        self, options: ClaudeAgentOptions | None, prompt: str | None = None
    ) -> tuple[Connection, bool]:
        """A connection for a session of ``options`` (default: the pool's), on a claimed
        spare when a claim can give those options, else cold; and whether ``prompt``
        was sent (right behind the claim)."""
        target = options or self.options
        claim = claim_for(self.options, target)
        spare = None if claim is None else await self.take()
        if spare is None or claim is None:
            self.cold += 1
            return await open_cold(target, None), False
        conn, sent = await spare._take_session(claim, prompt)
        if spare.fallback_reason is None:
            self.claimed += 1
        else:
            self.cold += 1
        return conn, sent

    def query(
        self,
        prompt: str | AsyncIterable[Prompt],
        options: ClaudeAgentOptions | None = None,
    ) -> AsyncGenerator[Message, None]:
        """Run a conversation like `query()`, on a spare when possible.

        Args:
            prompt: Text, or an async iterable of prompts.
            options: The session's options (default: the pool's).

        Returns:
            The conversation's messages (an async iterator).
        """
        check_prompt(prompt)
        return self._messages(prompt, options)

    async def _messages(
        self, prompt: str | AsyncIterable[Prompt], options: ClaudeAgentOptions | None
    ) -> AsyncGenerator[Message, None]:
        conn, sent = await self._open(options, prompt if isinstance(prompt, str) else None)
        async with aclosing(converse(conn, prompt, sent=sent)) as messages:
            async for message in messages:
                yield message

    @asynccontextmanager
    async def client(
        self, options: ClaudeAgentOptions | None = None
    ) -> AsyncIterator[ClaudeSDKClient]:
        """A connected `ClaudeSDKClient` for a session of ``options``, on a spare when
        possible; disconnected when the block ends.

        Args:
            options: The session's options (default: the pool's).

        Yields:
            The connected client.
        """
        from .client import ClaudeSDKClient

        target = options or self.options
        conn, _ = await self._open(target)
        client = ClaudeSDKClient(target)
        await client._attach(conn)
        try:
            yield client
        finally:
            await client.disconnect()
