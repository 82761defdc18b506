"""`SparePool`: a few spare CLIs kept booted, so that new sessions start on one.

The pool keeps ``size`` spares (`prewarm()`) parked or booting in the background.
Each session takes one and claims it for its folder and options; a replacement starts
booting at once. A session whose options differ from the pool's in more than a claim
can change (`claim_for()`), or that finds no spare at all, starts cold, as does one
whose claim the CLI refuses (see `SpareProcess.fallback_reason`).

A spare that is still booting when a session wants one is waited for (it started
earlier than a cold start would, so it is ready sooner), unless other sessions already
wait for every booting spare: that session starts cold.

Every parked spare is watched: one whose CLI exits (killed, out of memory, crashed, its
SSH connection dropped) is reaped and replaced at once. One whose CLI hangs (stopped,
wedged, its SSH link frozen: it runs but answers nothing) is found by a check every
``check_interval`` seconds (one task for the pool: each parked spare is sent a cheap
request, all at once, which must be answered within `SPARE_ANSWER_SECONDS`, 3 s), killed,
and then reaped and replaced like one that exited. A session that claims a hung spare
before a check finds it waits `SPARE_ANSWER_SECONDS` at most (see `prewarm()`): the
spare is killed and the session takes another spare or starts cold. So a bad spare
costs a session a few seconds, never the control timeout. A spare is handed out only
while its CLI runs and while it was started with what a cold start would use now: the
pool's options (compared with a copy taken at its start, so options changed in place
count), the CLI's environment, the CLI executable on disk (an upgrade replaces it);
any other is discarded. Failed starts are retried after a delay that doubles up to a
cap (``restart_backoff``); a spare that exits within 10 s of parking counts
as a failed start. After ``max_start_failures`` in a row the pool stops starting spares
(`SpareStartError` in `last_error`, logged with the CLI's stderr; sessions start cold)
until a start succeeds again: each session on a stopped pool tries one start in the
background, once the cap has passed since the last failure.
"""

from __future__ import annotations

import copy
import enum
import logging
import os
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator, Hashable
from contextlib import aclosing, asynccontextmanager
from dataclasses import dataclass, fields, replace
from types import TracebackType
from typing import Any, Final

import anyio
import anyio.abc

from .. import _wire
from .._core.errors import (
    CcwireError,
    CLIConnectionError,
    OptionsError,
    SessionStateError,
    SpareStartError,
)
from .._core.tasks import TaskHost
from .._transport.discovery import find_cli
from .cli_env import build_env
from .client import ClaudeSDKClient
from .connection import Connection
from .options import ClaudeAgentOptions
from .prompt_check import Prompt, check_prompt
from .query import converse
from .warm import (
    SPARE_ANSWER_SECONDS,
    UNRESPONSIVE,
    SpareProcess,
    claim_for,
    open_cold,
    prewarm,
)

__all__ = ["SparePool"]

logger = logging.getLogger("ccwire")

MAX_SIZE: Final = 64
"""The most spares a pool keeps (each parked CLI holds a few hundred MB): a larger
``size`` is refused, where it would start them all at once (or, far larger, hang in
scheduling them)."""

_SETTLE_SECONDS: Final = 10.0
"""A spare that exits sooner than this after parking counts as a failed start."""


class _Pool(enum.Enum):
    NEW = "new"
    RUNNING = "running"  # keeps ``size`` spares parked or booting
    STOPPED = "stopped"  # too many failed starts in a row: starts none until one succeeds
    CLOSED = "closed"


_MOVES: Final = {
    _Pool.NEW: {_Pool.RUNNING, _Pool.CLOSED},
    _Pool.RUNNING: {_Pool.STOPPED, _Pool.CLOSED},
    _Pool.STOPPED: {_Pool.RUNNING, _Pool.CLOSED},
    _Pool.CLOSED: {_Pool.CLOSED},
}


@dataclass(frozen=True)
class _Origin:
    """What a spare was started with, to tell whether it still fits."""

    options: ClaudeAgentOptions  # a copy: the caller may change theirs in place
    started: Hashable  # the CLI's environment and executable file


def _copied(value: Any) -> Any:
    """``value`` with its plain containers copied (what options are changed in place by)."""
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copied(v) for v in value]
    if isinstance(value, set):
        return set(value)
    return value


def _snapshot(options: ClaudeAgentOptions) -> ClaudeAgentOptions:
    snap = copy.copy(options)
    for f in fields(options):
        value = getattr(options, f.name)
        if isinstance(value, (dict, list, set)):
            object.__setattr__(snap, f.name, _copied(value))
    return snap


def _started_with(options: ClaudeAgentOptions) -> Hashable:
    """The environment and the executable file a CLI of ``options`` starts with now:
    a hash of the variables, and the file's identity (path, inode, size, mtime), which
    an upgrade of the CLI changes (``None`` with a spawner: the file is elsewhere).

    Raises:
        CcwireError: The options or the CLI are unusable (a start fails the same way).
        OSError: The CLI file cannot be read.
    """
    env = hash(tuple(sorted(build_env(options, base_env=os.environ).items())))
    if options.spawn_claude_code_process is not None:
        return env, None
    path = os.path.realpath(find_cli(options.cli_path, cwd=options.cwd))
    st = os.stat(path)
    return env, (path, st.st_ino, st.st_size, st.st_mtime_ns)


class SparePool:
    """Keeps ``size`` spare CLIs booted for new sessions; see the module docstring.

    ```python
    async with SparePool(options, size=2) as pool:
        async with pool.client(replace(options, cwd=folder)) as client:
            await client.query("...")
            ...
    ```

    Use it as an async context manager (or call `aclose()`): its spares boot in a
    background task of its own until it is closed; `aclose()` stops every spare CLI.

    Args:
        options: The options every spare starts with (as for `prewarm()`).
        size: How many spares to keep parked or booting (1 to 64).
        initialize_timeout: Seconds a spare's start may take (default:
            ``options.initialize_timeout``).
        max_start_failures: Failed starts in a row after which the pool stops starting
            spares until one starts again.
        restart_backoff: The delay before the start that follows a failed one, in
            seconds, and its cap: it doubles with each failure in a row.
        check_interval: Seconds between two checks that the parked spares still
            answer (a hung one is killed and replaced). A check costs one small request
            per parked spare, answered in milliseconds; a session that finds a hung
            spare first loses 3 s to it (``SPARE_ANSWER_SECONDS``), whatever the
            interval.

    Attributes:
        claimed: Sessions started on a spare.
        cold: Sessions started cold (no spare, options a claim cannot give, or a
            refused claim).
        boot_failures: Spares that failed to start (in all).
        failed: Failed starts in a row now (a spare that parks and then runs for
            10 s, or is claimed, ends the series).
        restarts: Parked spares that exited, or hung and were killed, and were reaped
            (each is replaced, unless the pool stopped starting spares).
        unresponsive: Of those, the spares killed because they did not answer within
            3 s (at a check, or at a session's claim).
        discarded: Parked spares thrown away unused because the pool's options, the
            CLI's environment or the CLI executable changed since they started.
        last_error: The last failed start, if any; a `SpareStartError` while the pool
            has stopped starting spares.
    """

    def __init__(
        self,
        options: ClaudeAgentOptions | None = None,
        *,
        size: int = 1,
        initialize_timeout: float | None = None,
        max_start_failures: int = 3,
        restart_backoff: tuple[float, float] = (0.5, 30.0),
        check_interval: float = 30.0,
    ) -> None:
        if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= MAX_SIZE:
            raise OptionsError(f"size must be a positive integer, at most {MAX_SIZE}, got {size!r}")
        if (
            isinstance(max_start_failures, bool)
            or not isinstance(max_start_failures, int)
            or max_start_failures < 1
        ):
            raise OptionsError(
                f"max_start_failures must be a positive integer, got {max_start_failures!r}"
            )
        try:
            first, cap = (float(x) for x in restart_backoff)
        except (TypeError, ValueError):
            first = cap = -1.0
        if not 0 <= first <= cap:
            raise OptionsError(
                "restart_backoff must be (first, cap) with 0 <= first <= cap, "
                f"got {restart_backoff!r}"
            )
        if (
            isinstance(check_interval, bool)
            or not isinstance(check_interval, (int, float))
            or not 0 < check_interval < float("inf")
        ):
            raise OptionsError(
                f"check_interval must be a positive number of seconds, got {check_interval!r}"
            )
        self.options = options or ClaudeAgentOptions()
        if initialize_timeout is not None:  # checked now, not at each start (which it fails)
            replace(self.options, initialize_timeout=initialize_timeout)
        self.size = size
        self.max_start_failures = max_start_failures
        self.restart_backoff = (first, cap)
        self.check_interval = float(check_interval)
        self._timeout = initialize_timeout
        self._state = _Pool.NEW
        self._ready: deque[SpareProcess] = deque()
        self._origins: dict[SpareProcess, _Origin] = {}
        self._watches: dict[SpareProcess, anyio.CancelScope] = {}
        self._hung: set[SpareProcess] = set()  # killed by a check, still to be reaped
        self._pending = 0  # starts scheduled, waiting their delay or booting
        self._booting = 0  # of those, booting now
        self._waiting = 0  # sessions waiting in take() for a booting spare
        self._failed_at = 0.0  # when the last start failed (anyio's clock)
        self._told = True  # the stop was logged at a session
        self._changed: anyio.Event | None = None  # made by start(): it needs an event loop
        self._started: anyio.Event | None = None
        self._host: TaskHost | None = None
        self._tg: anyio.abc.TaskGroup | None = None
        self.claimed = 0
        self.cold = 0
        self.boot_failures = 0
        self.failed = 0
        self.restarts = 0
        self.unresponsive = 0
        self.discarded = 0
        self.last_error: BaseException | None = None

    def _move(self, to: _Pool) -> None:
        if to not in _MOVES[self._state]:
            raise SessionStateError(
                f"the spare pool cannot go from {self._state.value} to {to.value}"
            )
        self._state = to

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
        if self._state is _Pool.CLOSED:
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
        if self._state is _Pool.NEW:
            self._move(_Pool.RUNNING)
        self._tg.start_soon(self._check, name="ccwire spare check")
        self._refill()

    async def aclose(self) -> None:
        """Stop booting, and stop every parked spare's CLI (bounded, shielded); idempotent.

        A session waiting for a spare gets none (`take()` returns ``None``; `client()`
        and `query()` raise `SessionStateError`)."""
        self._move(_Pool.CLOSED)
        if self._started is not None:  # a start under way: its task host runs once it is done
            with anyio.CancelScope(shield=True):
                await self._started.wait()
        self._tg = None
        host, self._host = self._host, None
        if host is not None:  # cancels the boots (each stops its CLI) and the watches
            await host.aclose()
        with anyio.CancelScope(shield=True):
            while self._ready:
                await self._discard(self._ready.popleft())
        self._notify()

    # ---------------------------------------------------------- observability

    @property
    def parked(self) -> int:
        """Spares parked now, ready for a session (each is watched: one whose CLI
        exits is removed at once)."""
        return len(self._ready)

    @property
    def starting(self) -> int:
        """Spares booting now, or waiting their delay after a failed start."""
        return self._pending

    @property
    def closed(self) -> bool:
        """True once `aclose()` was called."""
        return self._state is _Pool.CLOSED

    @property
    def stopped(self) -> bool:
        """True while the pool starts no spares after too many failed starts (see
        `last_error`), and once it is closed."""
        return self._state in (_Pool.STOPPED, _Pool.CLOSED)

    async def changed(self) -> None:
        """Wait for the next change of the pool: a spare parked, taken, discarded or
        exited, a start failed, the pool stopped, recovered or closed.

        ```python
        while not pool.closed:  # e.g. a dashboard
            show(pool.parked, pool.starting, pool.failed, pool.restarts)
            await pool.changed()
        ```

        Returns at once on a closed pool. Starts the pool if it was not yet.
        """
        if self._state is _Pool.CLOSED:
            return
        if self._started is None or not self._started.is_set():
            await self.start()
        # taken before any await: a change made while this task yields would set the
        # event it replaced, and the next change could be long in coming (or never come)
        changed = self._changed
        assert changed is not None
        await changed.wait()

    # ----------------------------------------------------------------- spares

    def _notify(self) -> None:
        if self._changed is not None:
            self._changed.set()
            self._changed = anyio.Event()

    def _delay(self) -> float:
        """The delay before the next start: none after a success, then doubling."""
        if self.failed == 0:
            return 0.0
        first, cap = self.restart_backoff
        return float(min(cap, first * 2 ** (self.failed - 1)))

    def _refill(self) -> None:
        """Schedule starts until ``size`` spares are parked or starting (none while
        the pool is stopped or closed)."""
        tg = self._tg
        if tg is None or self._state is not _Pool.RUNNING:
            return
        while self._pending + len(self._ready) < self.size:
            self._schedule(tg, self._delay())

    def _retry_stopped(self) -> None:
        """On a stopped pool: one start in the background, once the delay's cap has
        passed since the last failure (a session asks; nothing loops)."""
        tg = self._tg
        if tg is None or self._state is not _Pool.STOPPED or self._pending:
            return
        if anyio.current_time() - self._failed_at < self.restart_backoff[1]:
            return
        self._schedule(tg, 0.0)

    def _schedule(self, tg: anyio.abc.TaskGroup, delay: float) -> None:
        """Start a spare after ``delay``; one started at once counts as booting from
        now (a session may wait for it before its task runs)."""
        self._pending += 1
        if delay <= 0:
            self._booting += 1
        retry = self._state is _Pool.STOPPED  # the start a stopped pool tries
        tg.start_soon(self._keep, delay, retry, name="ccwire spare")

    async def _keep(self, delay: float, retry: bool) -> None:
        """One spare: wait ``delay``, start it, park it, and watch it until a session
        takes it or its CLI exits (then it is reaped and replaced)."""
        try:
            got = await self._boot(delay, retry)
        except BaseException:  # cancelled: the pool is closing
            self._pending -= 1
            raise
        self._pending -= 1
        if isinstance(got, BaseException):
            self._start_failed(got)
        elif got is not None:
            spare, origin = got
            if self._state is _Pool.CLOSED:
                await self._discard(spare)
            else:
                if self._state is _Pool.STOPPED:
                    self._move(_Pool.RUNNING)
                    logger.warning("ccwire: a spare CLI started again; the pool refills")
                self._origins[spare] = origin
                self._ready.append(spare)
                self._notify()
                self._refill()
                await self._watch(spare)
                return
        self._notify()

    async def _boot(
        self, delay: float, retry: bool
    ) -> tuple[SpareProcess, _Origin] | CcwireError | ValueError | OSError | None:
        """A started spare (``None``: the pool closed, or stopped after this start was
        scheduled), or why it failed."""
        booting = delay <= 0  # counted by _schedule()
        try:
            if not booting:
                await anyio.sleep(delay)
                self._booting += 1
                booting = True
            if self._state is _Pool.CLOSED or (self._state is _Pool.STOPPED and not retry):
                return None
            origin = _Origin(_snapshot(self.options), _started_with(self.options))
            spare = await prewarm(options=origin.options, initialize_timeout=self._timeout)
        except (CcwireError, ValueError, OSError) as exc:
            return exc
        finally:
            if booting:
                self._booting -= 1
        return spare, origin

    def _start_failed(self, exc: BaseException) -> None:
        """Count a failed start: retry after the delay, or stop the pool."""
        self.boot_failures += 1
        self.failed += 1
        self._failed_at = anyio.current_time()
        self.last_error = exc
        if self._state is _Pool.RUNNING and self.failed < self.max_start_failures:
            logger.warning(
                "ccwire: a spare CLI failed to start (%s); the next start in %.1f s",
                exc,
                self._delay(),
            )
            self._refill()
            return
        if self._state is _Pool.CLOSED:
            return
        stopped = SpareStartError(
            f"{self.failed} spare CLIs in a row failed to start; the pool starts no "
            f"more (its sessions start cold) until one starts again. The last: {exc}",
            failures=self.failed,
            stderr=getattr(exc, "stderr", None),
        )
        stopped.__cause__ = exc
        self.last_error = stopped
        if self._state is _Pool.RUNNING:
            self._move(_Pool.STOPPED)
            self._told = False
            logger.error("ccwire: %s", stopped)

    async def _watch(self, spare: SpareProcess) -> None:
        """Until ``spare`` is taken (its scope is cancelled) or its CLI exits: then it
        is reaped and replaced. One that stays parked for 10 s ends a series
        of failed starts; one that exits sooner is a failed start."""
        exited = early = False
        with anyio.CancelScope() as scope:
            self._watches[spare] = scope
            with anyio.move_on_after(_SETTLE_SECONDS):
                await spare.wait_exited()
                exited = early = True
            if not exited:
                self.failed = 0
                await spare.wait_exited()
                exited = True
        if not exited or spare not in self._ready:
            return  # taken, or discarded
        self._ready.remove(spare)
        why = self._gone(spare)
        await self._discard(spare)
        logger.warning("ccwire: a parked spare CLI %s", why)
        if early:
            self._start_failed(why)  # retried after the delay, or the pool stops
        else:
            self._refill()
        self._notify()

    def _gone(self, spare: SpareProcess) -> CcwireError:
        """Count a parked spare whose CLI exited or was killed hung (`restarts`,
        `unresponsive`), and say why it is gone."""
        self.restarts += 1
        if spare in self._hung:
            self.unresponsive += 1
            return CLIConnectionError(
                f"did not answer within {SPARE_ANSWER_SECONDS:g} s (hung): it was killed"
            )
        error = spare.exit_error or CLIConnectionError("the spare CLI exited")
        return CLIConnectionError(f"exited: {error}")

    async def _check(self) -> None:
        """Every ``check_interval`` s: send each parked spare a cheap request (all at
        once, each bounded by `SPARE_ANSWER_SECONDS`); kill each that gives no answer.
        Its watch then reaps and replaces it, as one that exited."""
        while True:
            await anyio.sleep(self.check_interval)
            async with anyio.create_task_group() as tg:
                for spare in list(self._ready):
                    tg.start_soon(self._check_one, spare)

    async def _check_one(self, spare: SpareProcess) -> None:
        if await spare._answers() or spare not in self._ready:
            return  # it answered, or it was taken (its claim checks it again)
        self._hung.add(spare)
        await spare._discard(kill=True)  # its watch wakes

    async def _discard(self, spare: SpareProcess) -> None:
        self._hung.discard(spare)
        scope = self._watches.pop(spare, None)
        if scope is not None:
            scope.cancel()
        self._origins.pop(spare, None)
        await spare.close()  # shielded: its CLI is stopped and reaped

    def _fits(self, spare: SpareProcess) -> bool:
        """Whether ``spare`` runs and was started with what a start would use now."""
        origin = self._origins.get(spare)
        if not spare.parked or origin is None:
            return False
        try:
            return origin.options == self.options and origin.started == _started_with(self.options)
        except (CcwireError, ValueError, OSError):
            return False  # a cold start says what is wrong

    async def take(self) -> SpareProcess | None:
        """A parked spare whose CLI runs, removed from the pool (a replacement starts
        booting).

        When none is parked, waits for a spare still booting, unless every booting one
        is already awaited by another session (then a cold start is sooner). Starts
        the pool if it was not yet. Spares started with other options, environment or
        CLI executable than the pool's now are discarded, not returned.

        Returns:
            The spare (yours to claim or close), or ``None`` when the pool has none
            for this session now: it is closed, its spares are all taken or awaited,
            or they fail to start.
        """
        if self._state is not _Pool.CLOSED:
            await self.start()
        self._retry_stopped()
        while self._state is not _Pool.CLOSED:
            while self._ready:
                spare = self._ready.popleft()
                if self._fits(spare):
                    scope = self._watches.pop(spare, None)
                    if scope is not None:
                        scope.cancel()
                    self._origins.pop(spare, None)
                    self.failed = 0  # it ran until claimed
                    self._refill()
                    self._notify()
                    return spare
                if spare.parked:
                    self.discarded += 1
                    logger.info("ccwire: a spare CLI started with other options was discarded")
                else:  # exited, or killed hung; its watch had not run yet
                    logger.warning("ccwire: a parked spare CLI %s", self._gone(spare))
                await self._discard(spare)
                self._refill()
                self._notify()
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
        if self._state is _Pool.CLOSED:
            raise SessionStateError("the spare pool is closed")
        target = options or self.options
        for _ in range(self.size + 1):  # a spare whose CLI exited as it was taken: another
            spare = None if claim_for(self.options, target) is None else await self.take()
            if spare is None and self.closed:
                raise SessionStateError("the spare pool was closed while the session waited")
            # what take() returned fits the pool's options now, which may have changed
            # while it waited: the claim is made from them
            claim = claim_for(self.options, target)
            if spare is not None and claim is None:
                self.discarded += 1
                await spare.close()
            if spare is None or claim is None:
                break
            session = await spare._take_session(claim, prompt, cold_if_exited=False)
            if session is None:  # its CLI exited before its watch saw it, or hung
                self.restarts += 1
                reason = spare.fallback_reason or ""
                if reason.startswith(UNRESPONSIVE):
                    self.unresponsive += 1
                    logger.warning("ccwire: %s; killed, the session takes another spare", reason)
                else:
                    logger.info("ccwire: %s; the session takes another spare", reason)
                self._notify()
                continue
            if spare.fallback_reason is None:
                self.claimed += 1
            else:
                self.cold += 1
            return session
        if self._state is _Pool.STOPPED and not self._told:
            self._told = True
            logger.warning("ccwire: the session starts cold: %s", self.last_error)
        self.cold += 1
        return await open_cold(target, None), False

    def query(
        self,
        prompt: str | AsyncIterable[Prompt],
        options: ClaudeAgentOptions | None = None,
    ) -> AsyncGenerator[_wire.messages.Message, None]:
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
    ) -> AsyncGenerator[_wire.messages.Message, None]:
        conn, sent = await self._open(options, prompt if isinstance(prompt, str) else None)
        try:
            async with aclosing(converse(conn, prompt, sent=sent, closes=False)) as messages:
                async for message in messages:
                    yield message
        finally:
            await conn.close()

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
