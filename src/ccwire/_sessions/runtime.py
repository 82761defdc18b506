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

import dataclasses
import inspect
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any, Protocol, Union

import anyio
import anyio.abc

from .._callbacks.reporting import report_callback_error
from .._conversation.client import ClaudeSDKClient
from .._conversation.connection import Connection
from .._conversation.options import ClaudeAgentOptions
from .._core.cancel import raised_by_callback
from .._core.errors import CallbackError, CcwireError, MessageDecodeError, SessionStateError
from .._protocol.control import ControlEvent
from .._transport.base import Transport
from .._wire import codec
from .._wire.messages import Message, RawMessage, ResultMessage, SystemMessage
from .events import (
    Cursor,
    ErrorOccurred,
    EventLog,
    MessageReceived,
    SessionEvent,
    StateChanged,
)
from .lifecycle import Lifecycle, ReplyGate, advance
from .machine import SessionMachine
from .state import FINAL_STATES, SessionState, SessionStateInfo
from .store import SnapshotStore, snapshot_timeout, stale_snapshot_error, wait_for_snapshots

__all__ = ["RuntimeHost", "SessionPrompt", "SessionRuntime", "Subscription"]

logger = logging.getLogger("ccwire")

_CLOSE_GRACE = 5.0  # bounded time for callbacks and the store to catch up at the end
_CANCEL_INTERRUPT_TIMEOUT = 2.0
_RELEASE_TIMEOUT = 1.0  # for one held writer to take its place after resume()

Callback = Callable[[Any], Union[Awaitable[None], None]]
_Item = tuple[str, Any]

SessionPrompt = Union[str, list[dict[str, Any]]]
"""A prompt: text, or a list of content blocks."""


class RuntimeHost(Protocol):
    """What a runtime needs from whoever runs it (the agent, through the session)."""

    def limiter(self) -> anyio.CapacityLimiter | None:
        """The slot to hold while the CLI runs, if sessions are limited."""
        ...

    def started(self) -> None:
        """The runner started: the session is live."""
        ...

    def finished(self) -> None:
        """The runner ended: the session released its CLI."""
        ...


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
    """The state and tasks of one session; `Session` is its public face.

    Owns the machine (conversation state), the lifecycle (CLI state), the event log,
    the reply gate and the runner task. `Session` composes one and calls the
    methods below; nothing here knows the agent or the session object.
    """

    def __init__(
        self,
        prompt: SessionPrompt,
        options: ClaudeAgentOptions,
        machine: SessionMachine,
        *,
        host: RuntimeHost,
        store: SnapshotStore | None,
        transport: Transport | None = None,
    ) -> None:
        self._prompt = prompt
        self.options = options
        self.machine = machine
        self.log = EventLog()
        self.messages: deque[Message] = deque()
        """Conversation messages not yet taken by `Session.messages()`."""
        self.changed = _Signal()
        """Woken after every change of state, message or lifecycle."""
        self.lifecycle = Lifecycle.NEW
        self.gate = ReplyGate(_RELEASE_TIMEOUT)
        self.start_error: BaseException | None = None
        self._host = host
        self._store = store
        self._transport = transport
        self._queue: deque[_Item] = deque()
        self._queue_signal = _Signal()
        self._inputs: deque[_Input] = deque()
        self._input_signal = _Signal()
        self._subs: list[Subscription] = []
        self._outer: anyio.abc.TaskGroup | None = None
        self._snapshots: deque[SessionStateInfo] = deque()
        self._snapshot_signal = _Signal()
        self._snapshots_saved = anyio.Event()  # the writer saved the last one
        self._persist_scope = anyio.CancelScope()  # the writer's; cancelled once it is late
        self._close_error: BaseException | None = None  # raised once by close()
        self._saved_in_flight: tuple[tuple[str, ...], tuple[str, ...]] | None = None
        self._run_scope = anyio.CancelScope()
        self._busy = 0  # delivery and store tasks still working
        self._quiet = _Signal()
        self._ready = anyio.Event()
        self._close_requested = anyio.Event()
        self._closed = anyio.Event()
        self._released = anyio.Event()  # the CLI released, the last snapshots saved
        self._client: ClaudeSDKClient | None = None

    # ------------------------------------------------------------- lifecycle

    def move(self, to: Lifecycle) -> None:
        """Advance the lifecycle (see `lifecycle.advance`), waking whoever waits on it."""
        new = advance(self.lifecycle, to)
        if new is self.lifecycle:
            return
        self.lifecycle = new
        if new in (Lifecycle.CLOSING, Lifecycle.CLOSED):
            self._close_requested.set()
        if new is Lifecycle.CLOSED:
            self._ready.set()
            self.log.close()
            self._closed.set()
        self.changed.wake()

    def launch(self, task_group: anyio.abc.TaskGroup) -> None:
        """Start the runner in ``task_group`` (it calls the host's ``finished`` at its end)."""
        task_group.start_soon(self._run)
        self.move(Lifecycle.LAUNCHED)

    async def wait_ready(self) -> None:
        """Wait until the CLI serves; raise what its start raised."""
        await self._ready.wait()  # bounded by the initialize timeout
        if self.start_error is not None:
            raise self.start_error

    async def wait_closed(self, timeout: float) -> None:
        """Wait, at most ``timeout`` seconds, until the CLI was released and every
        callback finished; from one of the session's own callbacks, only until the
        CLI was released and the last snapshots saved (the end of the session waits
        for that callback, which would otherwise wait for itself)."""
        done = self._released if self.log.following() else self._closed
        with anyio.move_on_after(timeout):
            await done.wait()

    def snapshot_wait(self) -> float:
        """Seconds closing may wait for the store to save the last snapshots."""
        return snapshot_timeout(self._store) if self._store is not None else 0.0

    def take_close_error(self) -> BaseException | None:
        """The error closing met (the store timed out), reported once."""
        error, self._close_error = self._close_error, None
        return error

    def stop_starting(self) -> None:
        """Stop waiting for a slot, or for ``initialize`` (cancel before serving)."""
        self._run_scope.cancel()

    # ----------------------------------------------------------- operations

    def subscribe(self, sub: Subscription) -> None:
        """Deliver the log's events to ``sub`` from its start, in its own task."""
        self._subs.append(sub)
        if self._outer is not None and not self.log.closed:
            self._spawn(self._deliver, sub, self.log.cursor(sub.start))

    def require_client(self) -> ClaudeSDKClient:
        """The connected client. Raises `SessionStateError` when the CLI does not serve."""
        if self.lifecycle is not Lifecycle.SERVING or self._client is None:
            raise SessionStateError(f"session {self.machine.session_id} has no running CLI")
        return self._client

    def live_client(self) -> ClaudeSDKClient | None:
        """The connected client, if the CLI serves."""
        return self._client if self.lifecycle is Lifecycle.SERVING else None

    def owes_answer(self) -> bool:
        """Whether the CLI waits for an answer of ours (true when unknown)."""
        conn = self._client._conn if self._client is not None else None
        return conn.owes_answer if conn is not None else True

    async def wait_answered(self) -> None:
        """Wait until the CLI owes no result and what it sent is processed, or it no
        longer serves (the caller bounds the wait)."""
        while self.live_client() is not None and (self.owes_answer() or self._queue):
            await self.changed.wait()

    def enqueue_input(self, prompt: SessionPrompt, *, awaited: bool) -> _Input:
        """Queue ``prompt`` for the input writer; ``awaited``: a caller waits for it."""
        item = _Input(prompt, awaited=awaited)
        self._inputs.append(item)
        self._input_signal.wake()
        return item

    def abandon_input(self, item: _Input) -> None:
        """The caller waiting for ``item``'s write was cancelled: a failure to write it is
        reported as an ``error`` event from now on, and one it was told of too late is
        reported now."""
        if not item.done.is_set():
            item.awaited = False
        elif item.error is not None:
            self.publish([ErrorOccurred(item.error, "cli")])

    async def open_gate(self) -> None:
        """Release what the gate held, in order, unless paused again meanwhile."""
        await self.gate.open(lambda: self.machine.state is SessionState.PAUSED)

    def publish(self, events: Iterable[SessionEvent]) -> None:
        """Append ``events`` to the log, saving snapshots and keeping messages."""
        for event in events:
            self.log.append(event)
            if isinstance(event, StateChanged):
                self._save(event.info)
                if event.to_state is SessionState.FAILED:
                    self.move(Lifecycle.CLOSING)
            elif isinstance(event, MessageReceived):
                self.messages.append(event.message)
        self.changed.wake()

    # ------------------------------------------------------------- internals

    def _save(self, info: SessionStateInfo) -> None:
        if self._store is None:
            return
        self._snapshots.append(info)
        self._saved_in_flight = (
            tuple(c.tool_use_id for c in info.pending_tool_calls),
            tuple(p.request_id for p in info.pending_permissions),
        )
        self._snapshot_signal.wake()

    def _starting(self) -> bool:
        return self.machine.state is SessionState.STARTING

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

    # ------------------------------------------------------------ the runner

    async def _run(self) -> None:
        self._host.started()
        try:
            async with anyio.create_task_group() as outer:
                self._outer = outer
                for sub in self._subs:
                    self._spawn(self._deliver, sub, self.log.cursor(sub.start))
                if self._store is not None:
                    self._spawn(self._persist, self._store)
                try:
                    with self._run_scope:
                        await self._run_client()
                finally:
                    self.log.close()
                    self._snapshot_signal.wake()
                    if self._store is not None:  # bounded by the store's snapshot_timeout
                        late = await wait_for_snapshots(
                            self._snapshots_saved,
                            self._store,
                            session_id=self.machine.session_id,
                            queued=self._snapshots,
                        )
                        if late is not None:  # close() raises it: the save is not awaited
                            self._persist_scope.cancel()
                        self._close_error = late or self._close_error
                    self._released.set()  # a callback closing its session may go on
                    with anyio.move_on_after(_CLOSE_GRACE, shield=True):
                        while self._busy:
                            await self._quiet.wait()
                    outer.cancel_scope.cancel()
        finally:
            self._outer = None
            self._client = None
            self._released.set()
            self.move(Lifecycle.CLOSED)
            self._host.finished()

    def _client_options(self) -> ClaudeAgentOptions:
        """The options with callback failures (hooks, permissions, unencodable answers)
        also published as ``error`` events of source ``"callback"``."""
        user = self.options.on_callback_error

        def on_callback_error(error: CallbackError) -> None:
            self.publish([ErrorOccurred(error, "callback")])
            if user is not None:
                report_callback_error(user, error)

        return dataclasses.replace(self.options, on_callback_error=on_callback_error)

    async def _run_client(self) -> None:
        limiter = self._host.limiter()
        if limiter is not None:
            await limiter.acquire_on_behalf_of(self)  # cancel() while waiting stops it
        try:
            if self.machine.state is not SessionState.IDLE:
                return  # cancelled before it could start
            self.publish(self.machine.start())
            client = ClaudeSDKClient(self._client_options(), transport=self._transport)
            try:
                await client.connect()
            except Exception as exc:
                self.start_error = exc
                self.publish(self.machine.start_failed(exc))
                return
            try:
                if self._starting():  # not cancelled meanwhile
                    await self._serve(client)
            except Exception as exc:  # a bug below us: fail the session, loudly
                logger.exception("ccwire: session %s failed", self.machine.session_id)
                self.publish(self.machine.process_ended(exc))
            finally:
                self.move(Lifecycle.CLOSING)
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
        conn.set_reply_gate(self.gate.wait)
        self._client = client
        self.move(Lifecycle.SERVING)
        self.publish(self.machine.connected())
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
        machine = self.machine
        while True:
            while self._queue:
                kind, payload = self._queue.popleft()
                if kind == "message":
                    events = machine.message(payload)
                    if isinstance(payload, ResultMessage) and machine.state in FINAL_STATES:
                        self._save(machine.info)  # an interrupted turn's cost, after cancel()
                elif kind == "control":
                    if payload.outcome == "cancelled" and not conn.is_open:
                        continue  # withdrawn because the CLI ended: "end" reports it
                    events = machine.control(payload)
                elif kind == "cli_state":
                    events = machine.cli_state(payload)
                elif kind == "decode_error":
                    events = [ErrorOccurred(payload, "decode")]
                else:  # "end": the CLI's output is over
                    self.publish(machine.process_ended(payload))
                    self.move(Lifecycle.CLOSING)
                    return
                self.publish(events)
                self.publish(machine.settle(conn.owes_answer))
                saved = self._saved_in_flight
                if saved is not None and saved != machine.in_flight:
                    self._save(machine.info)  # a call or permission came or went, same state
            await self._queue_signal.wait()

    async def _drain(self, client: ClaudeSDKClient) -> None:
        while True:
            try:
                async with aclosing(client.receive_messages()) as messages:
                    async for _ in messages:
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
        try:
            while True:
                while self._inputs:
                    item = self._inputs[0]  # stays queued until written: see below
                    try:
                        await client.query(item.prompt)  # waits at the gate while paused
                    except CcwireError as exc:
                        item.error = exc
                        if not item.awaited:  # nobody to tell: the session cannot go on
                            self.publish(self.machine.process_ended(exc))
                    self._inputs.popleft()
                    item.done.set()
                await self._input_signal.wait()
        finally:
            # the session ended (cancelled, closed, the CLI gone) with prompts not
            # written: every caller still waiting is told, none is left hanging; a
            # prompt nobody waits for (sent while paused) is reported as an error event
            unwaited: list[SessionEvent] = []
            while self._inputs:
                item = self._inputs.popleft()
                item.error = SessionStateError(
                    f"session {self.machine.session_id} ended "
                    f"({self.machine.state.value}) before this prompt was written"
                )
                if not item.awaited:
                    unwaited.append(ErrorOccurred(item.error, "cli"))
                item.done.set()
            self.publish(unwaited)

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
        async for event in self.log.follow(cursor):  # wait_for_completion() drains it
            if not sub.active:
                return
            if event.name not in sub.names:
                continue
            try:
                outcome = sub.callback(event)
                if inspect.isawaitable(outcome):
                    await outcome
            except BaseException as exc:
                if not isinstance(exc, Exception) and not raised_by_callback(exc):
                    raise  # our own cancellation, or KeyboardInterrupt and the like
                logger.warning("ccwire: a session %r callback raised: %r", event.name, exc)
                if not (isinstance(event, ErrorOccurred) and event.source == "callback"):
                    self.publish([ErrorOccurred(exc, "callback")])
        cursor.close()  # also when unsubscribed (the generator is left unfinished)

    async def _persist(self, store: SnapshotStore) -> None:
        with self._persist_scope:  # past the store's snapshot_timeout, close() ends it
            await self._save_snapshots(store)

    async def _save_snapshots(self, store: SnapshotStore) -> None:
        failed: BaseException | None = None  # the last save failed: the store is stale
        while True:
            while self._snapshots:  # one write per transition, in order
                info = self._snapshots.popleft()
                try:
                    await store.save(info)
                except BaseException as exc:
                    if not isinstance(exc, Exception) and not raised_by_callback(exc):
                        raise
                    logger.warning("ccwire: saving session %s failed: %r", info.session_id, exc)
                    self.publish([ErrorOccurred(exc, "store")])  # dropped once closed
                    failed = exc
                else:
                    failed = None
            if self.log.closed:
                if failed is not None:  # close() raises it: the store kept an older state
                    self._close_error = stale_snapshot_error(self.machine.info, failed)
                self._snapshots_saved.set()
                return
            await self._snapshot_signal.wait()
