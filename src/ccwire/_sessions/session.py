"""``Session``: one conversation you can watch (state, events) and steer (pause, cancel...).

How it works is described in `runtime`; the states and the
transition table in `state`.

**Pause.** ``pause()`` is a gate on what *we* write to the CLI. While paused it holds
back, in the order they become ready:

* the answers to the CLI's control requests: the results of in-process (SDK MCP)
  tool calls, ``can_use_tool`` permission decisions, hook callback answers (and any
  other answer, such as an in-process server's ``tools/list``);
* prompts passed to ``send()`` (queued; ``send`` returns at once).

The tool handlers and callbacks still run; only their answers wait. ``interrupt()``
and ``cancel()`` are never held. ``resume()`` releases what was held, in order. A
turn that ended while paused is reported on ``resume()``.

Pause does **not** stop work the CLI does without needing an answer from us: the
model finishes the reply it is streaming, and tools the CLI runs by itself go on:
built-in tools it may run without asking (allowed by ``allowed_tools``, the
permission mode or its own rules, such as read-only tools) and tools of external
MCP servers (stdio, HTTP, SSE), which the CLI calls directly. Their messages and
``tool_call``/``tool_result`` events keep arriving and the state stays ``paused``;
such a turn can even end while paused. So the session stops at the next point where
the CLI needs us, not at once. To hold every tool call, make each one need an
answer: a ``PreToolUse`` hook callback (matching every tool) is asked before a tool
runs, and its answer is held. To stop work at once, use ``interrupt()`` or
``cancel()``. The CLI may stop waiting for some answers after time limits of its
own, so a very long pause can end a held request with a timeout on the CLI's side.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Literal, Protocol, overload

import anyio
import anyio.abc

from .._conversation.options import ClaudeAgentOptions
from .._conversation.prompt_check import check_prompt
from .._core.errors import (
    CcwireError,
    OptionsError,
    SessionStateError,
    SessionTimeoutError,
    UnknownEventError,
)
from .._transport.base import Transport
from .._wire.messages import Message, ResultMessage
from .events import (
    EVENT_NAMES,
    ErrorOccurred,
    MessageReceived,
    PermissionRequested,
    SessionCompleted,
    SessionEvent,
    SessionEventName,
    StateChanged,
    ToolCallFinished,
    ToolCallStarted,
    drain,
)
from .lifecycle import Lifecycle
from .machine import SessionMachine
from .owner import track, untrack
from .runtime import (
    _CANCEL_INTERRUPT_TIMEOUT,
    _CLOSE_GRACE,
    Callback,
    SessionPrompt,
    SessionRuntime,
    Subscription,
    logger,
)
from .state import ACTIVE_STATES, FINAL_STATES, SessionState, SessionStateInfo
from .store import SnapshotStore

__all__ = ["Session", "SessionHost", "SessionPrompt", "Subscription"]


class SessionHost(Protocol):
    """What a session needs from the agent that made it."""

    def task_group(self) -> anyio.abc.TaskGroup:
        """The task group sessions run in; raises `SessionStateError` if none."""
        ...

    def limiter(self) -> anyio.CapacityLimiter | None:
        """The slot a session holds while its CLI runs, if sessions are limited."""
        ...

    def register(self, session: Session) -> None:
        """``session`` is live."""
        ...

    def unregister(self, session: Session) -> None:
        """``session`` released its CLI."""
        ...


class _RuntimeHost:
    """The runtime's view of the agent: the slot, and live/ended for this session."""

    def __init__(self, host: SessionHost, session: Session) -> None:
        self._host = host
        self._session = session

    def limiter(self) -> anyio.CapacityLimiter | None:
        return self._host.limiter()

    def started(self) -> None:
        self._host.register(self._session)

    def finished(self) -> None:
        self._host.unregister(self._session)
        untrack(self._session)


class Session:
    """One conversation with the Claude Code CLI, observable and steerable.

    Made by `ClaudeCodeAgent` (``start_session``, ``session``,
    ``create_session``, ``resume_session``). The states are `SessionState`;
    ``get_state()`` returns an immutable `SessionStateInfo`; events come
    as typed objects from `events()` or to callbacks registered with `on()`.
    """

    def __init__(
        self,
        host: SessionHost,
        prompt: SessionPrompt,
        options: ClaudeAgentOptions,
        machine: SessionMachine,
        *,
        store: SnapshotStore | None,
        transport: Transport | None = None,
    ) -> None:
        self._host = host
        self._rt = SessionRuntime(
            prompt,
            options,
            machine,
            host=_RuntimeHost(host, self),
            store=store,
            transport=transport,
        )
        self._cancelling: anyio.Event | None = None  # set once cancel() let the CLI go

    @property
    def options(self) -> ClaudeAgentOptions:
        """The options this session's CLI runs with (``cwd``, ``resume``...)."""
        return self._rt.options

    def __repr__(self) -> str:
        return f"<Session {self.session_id} {self.state.value}>"

    # ---------------------------------------------------------------- reading

    @property
    def session_id(self) -> str:
        """The session id (the one the CLI uses, and the store's key)."""
        return self._rt.machine.session_id

    @property
    def state(self) -> SessionState:
        """The current state (shortcut for ``get_state().state``)."""
        return self._rt.machine.state

    def get_state(self) -> SessionStateInfo:
        """An immutable snapshot: state, calls and permissions in flight, statistics."""
        return self._rt.machine.info

    @property
    def last_result(self) -> ResultMessage | None:
        """The last `ResultMessage` received, if any."""
        return self._rt.machine.last_result

    @property
    def closed(self) -> bool:
        """True once the session released its CLI (or never started and was cancelled)."""
        return self._rt.lifecycle is Lifecycle.CLOSED

    def messages(self) -> AsyncIterator[Message]:
        """The conversation messages (the client's types), until the session comes to rest.

        Ends once the state is ``completed``, ``failed`` or ``cancelled`` and every message
        was yielded; after ``send()`` iterate again for the next turn. Each message is
        yielded once, to whichever iterator takes it first. Leaving the loop early needs
        no ``aclosing()``.
        """
        return _MessageReader(self)

    def events(self, *, replay: bool = True) -> AsyncIterator[SessionEvent]:
        """Every event as a typed object, in order, until the session is closed.

        With ``replay`` (the default) iteration starts at the session's first event, so
        nothing is missed however late you start; otherwise at the next event.
        """
        log = self._rt.log
        return log.read(0 if replay else len(log))

    @overload
    def on(
        self,
        event: Literal["message"],
        callback: Callable[[MessageReceived], Awaitable[None] | None],
        *,
        replay: bool = False,
    ) -> Subscription: ...
    @overload
    def on(
        self,
        event: Literal["state_change"],
        callback: Callable[[StateChanged], Awaitable[None] | None],
        *,
        replay: bool = False,
    ) -> Subscription: ...
    @overload
    def on(
        self,
        event: Literal["tool_call"],
        callback: Callable[[ToolCallStarted], Awaitable[None] | None],
        *,
        replay: bool = False,
    ) -> Subscription: ...
    @overload
    def on(
        self,
        event: Literal["tool_result"],
        callback: Callable[[ToolCallFinished], Awaitable[None] | None],
        *,
        replay: bool = False,
    ) -> Subscription: ...
    @overload
    def on(
        self,
        event: Literal["permission_request"],
        callback: Callable[[PermissionRequested], Awaitable[None] | None],
        *,
        replay: bool = False,
    ) -> Subscription: ...
    @overload
    def on(
        self,
        event: Literal["complete"],
        callback: Callable[[SessionCompleted], Awaitable[None] | None],
        *,
        replay: bool = False,
    ) -> Subscription: ...
    @overload
    def on(
        self,
        event: Literal["error"],
        callback: Callable[[ErrorOccurred], Awaitable[None] | None],
        *,
        replay: bool = False,
    ) -> Subscription: ...
    def on(
        self, event: SessionEventName, callback: Callback, *, replay: bool = False
    ) -> Subscription:
        """Call ``callback(event_object)`` for every event named ``event``.

        Names: ``message``, ``tool_call``, ``tool_result``, ``permission_request``,
        ``state_change``, ``complete``, ``error``. The callback may be sync or async; it
        runs in a task of its own, in event order, so a slow callback delays only
        itself (a sync callback still runs on the event loop: keep it quick). If it
        raises, an ``error`` event (source ``"callback"``) reports it and delivery goes
        on. ``replay`` also delivers the matching events that already happened.
        Returns a `Subscription`; call it to unsubscribe. Raises `SessionStateError`
        once the session is closed: no callback runs any more (read what happened with
        `events()`), and `OptionsError` for a ``callback`` that cannot be called.
        """
        if event not in EVENT_NAMES:
            raise UnknownEventError(
                f"unknown session event {event!r}; expected one of {sorted(EVENT_NAMES)}"
            )
        if not callable(callback):
            raise OptionsError(
                f"the {event!r} callback must be callable, not {type(callback).__name__}"
            )
        if self.closed:
            raise SessionStateError(
                f"session {self.session_id} is closed ({self.state.value}): its callbacks "
                "no longer run; read its events with session.events()"
            )
        sub = Subscription(frozenset({event}), callback, 0 if replay else len(self._rt.log))
        self._rt.subscribe(sub)
        return sub

    # -------------------------------------------------------------- control

    async def start(self) -> None:
        """Start a session made with ``agent.create_session()`` (in the agent's task group).

        Waits until the CLI serves. If the caller is cancelled meanwhile, the session
        is cancelled (its CLI released) before the cancellation goes on.
        """
        await self._launch(self._host.task_group())

    async def _launch(self, task_group: anyio.abc.TaskGroup) -> None:
        if self._rt.lifecycle is not Lifecycle.NEW or self.state is not SessionState.IDLE:
            raise SessionStateError(f"this session was already started ({self.state.value})")
        track(self)  # at once, so that a racing resume_session() sees it; may refuse
        try:
            self._rt.launch(task_group)  # the runner untracks it at its end
        except BaseException:
            untrack(self)
            raise
        try:
            await self._rt.wait_ready()
        except BaseException as exc:
            if not isinstance(exc, Exception):  # the caller gave up (cancelled): end it,
                with anyio.CancelScope(shield=True):  # not a CLI that starts for nobody
                    await self.cancel()  # bounded
            raise

    async def send(self, prompt: SessionPrompt) -> None:
        """Send a follow-up prompt.

        After ``completed`` it starts a new turn; mid-turn the CLI folds it into the
        running turn. While paused it is queued and written on ``resume()`` (``send``
        then returns at once; if the session ends before it is written, an ``error``
        event of source ``"cli"`` carries the `SessionStateError`). Raises
        `SessionStateError` if the session
        ended (continue it with ``agent.resume_session``), or ends before the prompt
        was written, and `OptionsError` for a prompt that is neither text nor content
        blocks (the session is left as it was). A caller cancelled while it waits only
        stops waiting: the prompt is still written, and if it cannot be, an ``error``
        event of source ``"cli"`` says so (as for a prompt queued while paused).
        """
        if self._rt.lifecycle is not Lifecycle.SERVING:
            hint = (
                "wait until it is running"
                if self.state in (SessionState.IDLE, SessionState.STARTING)
                else "continue it with agent.resume_session()"
            )
            raise SessionStateError(f"session {self.session_id} is {self.state.value}: {hint}")
        check_prompt(prompt, blocks=True)  # before the turn opens: a bad one changes nothing
        self._rt.publish(self._rt.machine.new_turn())
        item = self._rt.enqueue_input(prompt, awaited=not self._rt.gate.holds)
        if not item.awaited:
            return
        try:
            await item.done.wait()  # the write is bounded by the transport
        except BaseException:  # cancelled: nobody waits any more
            self._rt.abandon_input(item)
            raise
        if item.error is not None:
            raise item.error

    async def interrupt(self) -> None:
        """Stop the current turn (it ends as ``completed``); the session stays usable."""
        client = self._rt.require_client()
        self._rt.machine.interrupted()
        await client.interrupt()

    async def pause(self) -> None:
        """Hold back our answers to the CLI and every prompt until `resume()`.

        Held: results of in-process tool calls, permission decisions, hook answers and
        prompts from `send()`. Not stopped: what the CLI does without asking us
        (the reply being streamed, auto-approved built-in tools, external MCP tools).
        Allowed while ``running``/``waiting_*``; see the module docstring for details.
        A no-op when already paused.
        """
        events = self._rt.machine.pause()
        self._rt.gate.close()
        self._rt.publish(events)

    async def resume(self) -> None:
        """Release what `pause()` held back, in order (a no-op when not paused)."""
        if self.state is not SessionState.PAUSED:
            return
        self._rt.publish(self._rt.machine.resume(self._rt.owes_answer()))
        await self._rt.open_gate()

    async def cancel(self) -> None:
        """End the session: interrupt the turn, close the CLI, state ``cancelled``.

        The interrupted turn's result (what it cost) is waited for, within the bound of
        the interrupt, and counted in the statistics.

        Works in every state; on a session already at rest it only releases the CLI
        (once a ``cancel()`` still under way has counted the interrupted turn). If the
        caller is cancelled meanwhile, the CLI is released all the same.
        """
        state = self.state
        if state in FINAL_STATES:
            if self._cancelling is not None:  # another cancel() counts the interrupted
                await self._cancelling.wait()  # turn's cost first (bounded)
            await self.close()
            return
        self._rt.publish(self._rt.machine.cancel())
        if self._rt.lifecycle is Lifecycle.NEW:
            self._rt.move(Lifecycle.CLOSED)  # never started: nothing to release
            return
        self._cancelling = cancelling = anyio.Event()
        if state in (SessionState.IDLE, SessionState.STARTING):
            self._rt.stop_starting()  # stop waiting for a slot, or for initialize
        client = self._rt.live_client()
        try:
            if client is not None and state in ACTIVE_STATES:
                with anyio.move_on_after(_CANCEL_INTERRUPT_TIMEOUT):
                    try:
                        await client.interrupt()
                    except CcwireError as exc:
                        logger.debug("ccwire: interrupt during cancel failed: %s", exc)
                    else:  # the interrupted turn's result says what it cost: count it
                        await self._rt.wait_answered()
        finally:  # our caller cancelled meanwhile: the session is cancelled all the same
            self._rt.move(Lifecycle.CLOSING)  # the runner releases the CLI
            cancelling.set()
        await self.close()

    async def close(self) -> None:
        """Release the CLI; work still in flight is cancelled first. Idempotent, bounded.

        Waits for the store to save the session's last snapshots, at most the store's
        `snapshot_timeout` (default `DEFAULT_SNAPSHOT_TIMEOUT`, 30 s). Called from one
        of the session's own callbacks (or a task that callback awaits), it returns once
        the CLI is released and the snapshots saved, without waiting for the callbacks
        to finish, its own included (``closed`` is true once they have).

        Raises:
            SnapshotTimeoutError: The store did not save the last snapshots in time
                (raised once; the session is closed all the same).
            SessionStoreError: The store failed to save the last snapshot (raised
                once; the session is closed all the same; the store's error is the
                ``__cause__``).
        """
        if self.state not in FINAL_STATES:
            await self.cancel()  # ends in a final state, then comes back here
            return
        if self._rt.lifecycle is Lifecycle.NEW:
            return
        self._rt.move(Lifecycle.CLOSING)
        await self._rt.wait_closed(_CLOSE_GRACE * 3 + self._rt.snapshot_wait())
        error = self._rt.take_close_error()
        if error is not None:
            raise error  # a SessionStoreError: the store kept an older state

    async def wait_for_completion(self, timeout: float | None = None) -> SessionStateInfo:
        """Wait until the session is ``completed``, ``failed`` or ``cancelled``; returns
        the final snapshot. Raises `SessionTimeoutError` after ``timeout``.

        Before returning it waits until the callbacks registered with `on()` have
        handled every event so far, the final ``state_change`` included, within
        ``EVENT_DRAIN_TIMEOUT`` (5 s) and ``timeout``; a callback still busy then is
        logged and not waited for (a callback waiting for its own session is skipped).
        Raises `OptionsError` for a ``timeout`` that is not a number of seconds."""
        if timeout is not None and (
            isinstance(timeout, bool)
            or not isinstance(timeout, (int, float))
            or math.isnan(timeout)  # anyio raises a bare ValueError for a NaN deadline
        ):
            raise OptionsError(f"timeout must be a number of seconds or None, not {timeout!r}")
        with anyio.move_on_after(timeout) as scope:
            while self.state not in FINAL_STATES:
                if self.closed:
                    raise SessionStateError("the session was closed before it started")
                await self._rt.changed.wait()
            await drain(self._rt.log)  # the final events reached the callbacks (bounded)
        if scope.cancelled_caught and self.state not in FINAL_STATES:
            raise SessionTimeoutError(
                f"session {self.session_id} still {self.state.value} after {timeout:g} s"
            )
        return self.get_state()


class _MessageReader:
    """`Session.messages()`: takes queued messages until the session comes to rest."""

    def __init__(self, session: Session) -> None:
        self._session = session

    def __aiter__(self) -> _MessageReader:
        return self

    async def __anext__(self) -> Message:
        session = self._session
        queued = session._rt.messages
        while not queued:
            if session.state in FINAL_STATES or session.closed:
                raise StopAsyncIteration
            await session._rt.changed.wait()
        return queued.popleft()
