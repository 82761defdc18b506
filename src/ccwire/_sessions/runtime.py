"""The machinery under `Session`: the tasks that wire a client to a machine.

A session is built on `ClaudeSDKClient`, the same code path as every
other conversation. It watches the client's connection (every decoded message, the
CLI's hidden ``session_state_changed`` frames, and every incoming control request as
it starts and finishes) and feeds those facts, in wire order, to a
`SessionMachine`, which tracks every tool call and
permission request in flight and owns the one transition table.

**Tasks.** One runner task per session (in the agent's task group, or the one of
``agent.session()``) owns the client: it connects, then runs the processor (machine
updates, in wire order), the drain (end of output, decode errors), the input writer,
the snapshot writer and one delivery task per callback, and closes everything,
bounded, at the end. Observers only queue what they see: all decisions are taken by
the processor, once the connection's own bookkeeping has seen the same frame.

**Pause.** The runtime installs a reply gate on the connection. While paused, every
answer to a control request of the CLI (in-process tool results, permission
decisions, hook answers) and every prompt waits at the gate; ``resume()`` lets them
through one at a time, in the order they arrived. The gate holds only what we write:
work the CLI does without asking us goes on (see `session`).

**Snapshots.** A snapshot goes to the store after every transition, and whenever the
tool calls or permission requests in flight change without one (a second parallel
call starting or finishing), so a crash leaves an accurate record. Each names the
process that runs the session (`owner`).
"""

from __future__ import annotations

import inspect
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Union, cast

import anyio
import anyio.abc

from .._conversation.client import ClaudeSDKClient
from .._conversation.connection import Connection
from .._conversation.options import ClaudeAgentOptions
from .._core.errors import CcwireError, MessageDecodeError, SessionStateError
from .._protocol.control import ControlEvent
from .._transport.base import Transport
from .._wire import codec
from .._wire.messages import Message, RawMessage, SystemMessage
from .events import (
    Cursor,
    ErrorOccurred,
    EventLog,
    MessageReceived,
    SessionEvent,
    StateChanged,
)
from .machine import SessionMachine
from .owner import untrack
from .state import SessionState, SessionStateInfo
from .store import SessionStore

if TYPE_CHECKING:
    from .agent import ClaudeCodeAgent
    from .session import Session

__all__ = ["SessionPrompt", "SessionRuntime", "Subscription"]

logger = logging.getLogger("ccwire")

_CLOSE_GRACE = 5.0  # bounded time for callbacks and the store to catch up at the end
_CANCEL_INTERRUPT_TIMEOUT = 2.0
_RELEASE_TIMEOUT = 1.0  # for one held writer to take its place after resume()

Callback = Callable[[Any], Union[Awaitable[None], None]]
_Item = tuple[str, Any]

SessionPrompt = Union[str, list[dict[str, Any]]]
"""A prompt: text, or a list of content blocks."""


class _Signal:
    """Wake every waiter; a new waiter waits for the next wake-up."""

    def __init__(self) -> None:
        self._event = anyio.Event()

    def wake(self) -> None:
        self._event.set()
        self._event = anyio.Event()

    async def wait(self) -> None:
        await self._event.wait()


@dataclass(eq=False)
class _Held:
    """A writer stopped at the reply gate while paused."""

    release: anyio.Event = field(default_factory=anyio.Event)
    passed: anyio.Event = field(default_factory=anyio.Event)


@dataclass(eq=False)
class _Input:
    prompt: SessionPrompt
    awaited: bool = False  # a caller waits for the write and gets the error
    done: anyio.Event = field(default_factory=anyio.Event)
    error: BaseException | None = None


class Subscription:
    """A callback registered with `Session.on()`; call it (or `cancel()`) to stop."""

    def __init__(self, names: frozenset[str], callback: Callback, start: int) -> None:
        self.names = names
        self.callback = callback
        self.start = start
        self.active = True

    def cancel(self) -> None:
        """Stop delivering events to the callback (idempotent)."""
        self.active = False

    def __call__(self) -> None:
        """Same as `cancel()`."""
        self.cancel()


class SessionRuntime:
    """Internal state and tasks of a session; `Session` is the public face."""

    def __init__(
        self,
        agent: ClaudeCodeAgent,
        prompt: SessionPrompt,
        options: ClaudeAgentOptions,
        machine: SessionMachine,
        *,
        store: SessionStore | None,
        transport: Transport | None = None,
    ) -> None:
        self._agent = agent
        self._prompt = prompt
        self.options = options
        """The options this session's CLI runs with (``cwd``, ``resume``...)."""
        self._machine = machine
        self._store = store
        self._transport = transport
        self._log = EventLog()
        self._queue: deque[_Item] = deque()
        self._queue_signal = _Signal()
        self._changed = _Signal()
        self._messages: deque[Message] = deque()
        self._inputs: deque[_Input] = deque()
        self._input_signal = _Signal()
        self._subs: list[Subscription] = []
        self._outer: anyio.abc.TaskGroup | None = None
        self._snapshots: deque[SessionStateInfo] = deque()
        self._snapshot_signal = _Signal()
        self._saved_in_flight: tuple[tuple[str, ...], tuple[str, ...]] | None = None
        self._gate_closed = False  # paused, or still releasing what the pause held
        self._held: deque[_Held] = deque()
        self._run_scope = anyio.CancelScope()
        self._busy = 0  # delivery and store tasks still working
        self._quiet = _Signal()
        self._ready = anyio.Event()
        self._close_requested = anyio.Event()
        self._closed = anyio.Event()
        self._launched = False
        self._start_error: BaseException | None = None
        self._client: ClaudeSDKClient | None = None

    # ------------------------------------------------------------- internals

    async def _open_gate(self) -> None:
        # One at a time: a released writer takes its place in the transport's write
        # queue in the step it wakes up in, so waiting for it to pass keeps the order.
        while self._held and self._machine.state is not SessionState.PAUSED:
            held = self._held.popleft()
            held.release.set()
            with anyio.move_on_after(_RELEASE_TIMEOUT):
                await held.passed.wait()
        if self._machine.state is not SessionState.PAUSED:
            self._gate_closed = False

    def _require_client(self) -> ClaudeSDKClient:
        if self._client is None or self._closed.is_set():
            raise SessionStateError(f"session {self._machine.session_id} has no running CLI")
        return self._client

    def _starting(self) -> bool:
        return self._machine.state is SessionState.STARTING

    def _connection(self) -> Connection | None:
        client = self._client
        return client._conn if client is not None else None

    def _publish(self, events: Iterable[SessionEvent]) -> None:
        for event in events:
            self._log.append(event)
            if isinstance(event, StateChanged):
                self._save(event.info)
                if event.to_state is SessionState.FAILED:
                    self._close_requested.set()
            elif isinstance(event, MessageReceived):
                self._messages.append(event.message)
        self._changed.wake()

    def _save(self, info: SessionStateInfo) -> None:
        if self._store is None:
            return
        self._snapshots.append(info)
        self._saved_in_flight = (
            tuple(c.tool_use_id for c in info.pending_tool_calls),
            tuple(p.request_id for p in info.pending_permissions),
        )
        self._snapshot_signal.wake()

    def _push(self, item: _Item) -> None:
        self._queue.append(item)
        self._queue_signal.wake()

    def _on_message(self, message: Message) -> None:
        if isinstance(message, SystemMessage):
            state = codec.session_state(message.data)
            if state is not None:
                self._push(("cli_state", state))
                return
        elif isinstance(message, RawMessage) and codec.command_lifecycle(message.data):
            return  # bookkeeping of our own prompts, not conversation
        self._push(("message", message))

    def _on_control(self, event: ControlEvent) -> None:
        self._push(("control", event))

    async def _gate(self) -> None:
        if not self._gate_closed:
            return
        held = _Held()
        self._held.append(held)
        try:
            await held.release.wait()
        finally:
            held.passed.set()

    # ------------------------------------------------------------ the runner

    async def _run(self) -> None:
        self._agent._register(cast("Session", self))
        try:
            async with anyio.create_task_group() as outer:
                self._outer = outer
                for sub in self._subs:
                    self._spawn(self._deliver, sub, self._log.cursor(sub.start))
                if self._store is not None:
                    self._spawn(self._persist, self._store)
                try:
                    with self._run_scope:
                        await self._run_client()
                finally:
                    self._log.close()
                    self._snapshot_signal.wake()
                    with anyio.move_on_after(_CLOSE_GRACE, shield=True):
                        while self._busy:
                            await self._quiet.wait()
                    outer.cancel_scope.cancel()
        finally:
            self._outer = None
            self._client = None
            self._ready.set()
            self._closed.set()
            self._changed.wake()
            self._agent._unregister(cast("Session", self))
            untrack(cast("Session", self))

    async def _run_client(self) -> None:
        limiter = self._agent._limiter()
        if limiter is not None:
            await limiter.acquire_on_behalf_of(self)  # cancel() while waiting stops it
        try:
            if self._machine.state is not SessionState.IDLE:
                return  # cancelled before it could start
            self._publish(self._machine.start())
            client = ClaudeSDKClient(self.options, transport=self._transport)
            try:
                await client.connect()
            except Exception as exc:
                self._start_error = exc
                self._publish(self._machine.start_failed(exc))
                return
            try:
                if self._starting():  # not cancelled meanwhile
                    await self._serve(client)
            except Exception as exc:  # a bug below us: fail the session, loudly
                logger.exception("ccwire: session %s failed", self._machine.session_id)
                self._publish(self._machine.process_ended(exc))
            finally:
                self._client = None
                await client.disconnect()  # shielded and bounded
        finally:
            self._ready.set()
            if limiter is not None:
                limiter.release_on_behalf_of(self)

    async def _serve(self, client: ClaudeSDKClient) -> None:
        # the client's task group was entered in connect(); ours nests inside it
        conn = client._connection()
        conn.add_observer(self._on_message)
        conn.add_control_observer(self._on_control)
        conn.set_reply_gate(self._gate)
        self._client = client
        self._publish(self._machine.connected())
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._process, conn)
            tg.start_soon(self._drain, client)
            tg.start_soon(self._write_inputs, client)
            self._inputs.appendleft(_Input(self._prompt))
            self._input_signal.wake()
            self._ready.set()
            await self._close_requested.wait()
            tg.cancel_scope.cancel()

    async def _process(self, conn: Connection) -> None:
        machine = self._machine
        while True:
            while self._queue:
                kind, payload = self._queue.popleft()
                if kind == "message":
                    events = machine.message(payload)
                elif kind == "control":
                    if payload.outcome == "cancelled" and not conn.is_open:
                        continue  # withdrawn because the CLI ended: "end" reports it
                    events = machine.control(payload)
                elif kind == "cli_state":
                    events = machine.cli_state(payload)
                elif kind == "decode_error":
                    events = [ErrorOccurred(payload, "decode")]
                else:  # "end": the CLI's output is over
                    self._publish(machine.process_ended(payload))
                    self._close_requested.set()
                    return
                self._publish(events)
                self._publish(machine.settle(conn.owes_answer))
                saved = self._saved_in_flight
                if saved is not None and saved != machine.in_flight:
                    self._save(machine.info)  # a call or permission came or went, same state
            await self._queue_signal.wait()

    async def _drain(self, client: ClaudeSDKClient) -> None:
        while True:
            try:
                async for _ in client.receive_messages():
                    pass  # the observer already queued it, in wire order
            except MessageDecodeError as exc:
                self._push(("decode_error", exc))
                continue
            except CcwireError as exc:
                self._push(("end", exc))
                return
            self._push(("end", None))
            return

    async def _write_inputs(self, client: ClaudeSDKClient) -> None:
        while True:
            while self._inputs:
                item = self._inputs.popleft()
                try:
                    await client.query(item.prompt)  # waits at the gate while paused
                except CcwireError as exc:
                    item.error = exc
                    if not item.awaited:  # nobody to tell: the session cannot go on
                        self._publish(self._machine.process_ended(exc))
                finally:
                    item.done.set()
            await self._input_signal.wait()

    def _spawn(self, func: Callable[..., Awaitable[None]], *args: Any) -> None:
        """Start a task that the end of the session waits for (bounded)."""
        assert self._outer is not None
        self._busy += 1

        async def run() -> None:
            try:
                await func(*args)
            finally:
                self._busy -= 1
                self._quiet.wake()

        self._outer.start_soon(run)

    async def _deliver(self, sub: Subscription, cursor: Cursor) -> None:
        async for event in self._log.follow(cursor):  # wait_for_completion() drains it
            if not sub.active:
                return
            if event.name not in sub.names:
                continue
            try:
                outcome = sub.callback(event)
                if inspect.isawaitable(outcome):
                    await outcome
            except Exception as exc:
                logger.warning("ccwire: a session %r callback raised: %r", event.name, exc)
                if not (isinstance(event, ErrorOccurred) and event.source == "callback"):
                    self._publish([ErrorOccurred(exc, "callback")])
        cursor.close()  # also when unsubscribed (the generator is left unfinished)

    async def _persist(self, store: SessionStore) -> None:
        while True:
            while self._snapshots:  # one write per transition, in order
                info = self._snapshots.popleft()
                try:
                    await store.save(info)
                except Exception as exc:
                    logger.warning("ccwire: saving session %s failed: %r", info.session_id, exc)
                    self._publish([ErrorOccurred(exc, "store")])
            if self._log.closed:
                return
            await self._snapshot_signal.wait()
