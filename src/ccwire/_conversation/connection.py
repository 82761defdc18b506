"""One live conversation with one CLI process: the layer the client and sessions share.

`Connection` builds the transport from the options, wires the route handlers
(SDK servers, permissions, hooks) into the control protocol, performs ``initialize``,
and keeps the bookkeeping that the message streams need:

* which prompts are still owed an answer (each prompt carries a ``uuid``; results name
  the prompts they answered, and the CLI's ``idle`` state settles everything), so
  ``receive_response()`` never waits for a result that will not come;
* the CLI's own session state: every ``session_state_changed`` frame is tracked here;
  the ones marked ``sdk_host_only`` (sent only because ccwire asked for them with
  ``CLAUDE_CODE_SDK_READS_SESSION_STATE``) are not surfaced, the others (a caller who
  set ``CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS``) are, as both reference SDKs do;
* the run-end ceiling (`run_end.RunEndClock`): how long a reader waiting for the run
  to settle (`messages()` with ``until_settled``) waits between turns;
* the session id and capabilities the CLI reported.

With ``session_store`` set, a `StoreLink` resumes the session from the store and
mirrors its transcript into it (see `transcript_store.link`).
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import AsyncGenerator, AsyncIterable, Awaitable, Callable, Mapping
from contextlib import aclosing
from typing import TYPE_CHECKING, Any, Final

import anyio
import anyio.abc

from .._callbacks.hooks import HookRegistry
from .._callbacks.permissions import permission_route
from .._callbacks.reporting import report_callback_error
from .._core.cancel import raised_by_callback
from .._core.errors import (
    CallbackError,
    CcwireError,
    CLIConnectionError,
    CLISilenceError,
    MessageDecodeError,
    MessageEncodeError,
    OptionsError,
    ProcessError,
    ResultError,
    SessionStateError,
    credentials_hint,
    result_error_text,
)
from .._core.loops import current_loop
from .._core.tasks import TaskHost
from .._mcp.routing import McpRouter
from .._protocol.control import (
    ConnectionState,
    ControlObserver,
    ControlProtocol,
    IncomingCall,
    ReplyGate,
    RouteHandler,
)
from .._protocol.inbox import Inbox
from .._protocol.ledger import PromptLedger
from .._transport.base import CLI_EXITED, LineTransport, Transport, as_line_transport
from .._transport.subprocess import SubprocessTransport
from .._wire import codec
from .._wire.messages import (
    TERMINAL_TASK_STATUSES,
    AssistantMessage,
    Message,
    RawMessage,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TaskNotificationMessage,
    TaskStartedMessage,
    TaskUpdatedMessage,
    TranscriptMirrorMessage,
)
from .argv import SpillDir, build_argv, build_initialize_fields, sdk_servers
from .options import ClaudeAgentOptions, validate_session_store_options
from .ownership import SessionClaim, claim_session
from .prompt_check import Prompt, check_prompt_item
from .run_end import RunEndClock, run_end_ceiling
from .subprocess_cli import cli_process, resolve_cli
from .telemetry import Telemetry, otel_missing

if TYPE_CHECKING:
    from .._mcp.server import SdkMcpServer
    from .tracing import SessionTrace
    from .transcript_store.link import StoreLink

__all__ = ["Connection", "MessageObserver", "ServeThrough"]

logger = logging.getLogger("ccwire")

MessageObserver = Callable[[Message], None]
"""Called synchronously for every decoded message, including ones not surfaced."""

ServeThrough = Callable[[codec.ControlRequest, Callable[[], Any]], Awaitable[Any]]
"""``through(request, serve)``: serves a request of the CLI by calling ``serve()`` (the
route's call, its answer or an awaitable of it) and returns the answer."""


class Connection:
    """See the module docstring. Use `open()` / `close()` from one task."""

    def __init__(
        self,
        options: ClaudeAgentOptions,
        transport: Transport | None = None,
        *,
        spare: bool = False,
    ) -> None:
        self.options = options
        self._spare = spare  # a spare CLI: its session's span starts at the claim
        self._launch_options = options  # what the CLI starts with (a resume may change it)
        self._link: StoreLink | None = None
        self._trace: SessionTrace | None = None  # with options.telemetry
        # any object with the reference's six methods is driven through an adapter
        self._custom_transport = None if transport is None else as_line_transport(transport)
        self._transport: LineTransport | None = None
        self._protocol: ControlProtocol | None = None
        self._tg: anyio.abc.TaskGroup | None = None
        self._host: TaskHost | None = None
        self._spill_dir: SpillDir | None = None
        self._claim: SessionClaim | None = None
        self._inbox: Inbox[Message | Exception] | None = None  # an error: raised in turn
        self._router: McpRouter | None = None
        self.serve_through: ServeThrough | None = None
        """What serves each request of the CLI (the client's `Query`, which code patches
        to run around the callbacks), given the request and the route's call; None: the
        route is called as it is."""
        self._observers: list[MessageObserver] = []
        self._system_observers: list[MessageObserver] = []  # of SystemMessage only
        self._turns = PromptLedger()
        self._stamped: set[str] = set()  # prompt uuids ccwire made up (not the caller's)
        self._ungranted: set[str] = set()  # tools or servers logged about (`_tell_ungranted`)
        self._told_unreachable = False  # `_tell_unreachable` logged
        self._gate: ReplyGate | None = None
        self._cli_state: str | None = None
        self.session_id: str | None = None
        self.server_info: Mapping[str, Any] | None = None
        self.latest_commands: list[Mapping[str, Any]] | None = None
        """The commands of the last ``commands_changed`` message, if one came."""
        self.initialize_fields: Mapping[str, Any] = {}
        """The fields of the ``initialize`` request sent (``reinitialize()`` sends them again)."""
        self.capabilities: frozenset[str] = frozenset()
        self.last_result: ResultMessage | None = None
        self._prompted = False  # a prompt was sent (or is being sent) on this connection
        self._prompt_streams = 0  # prompt streams running (their prompts may come later)
        self._prompted_at = 0.0
        self._turn_open = False  # a turn's output has begun and its result not yet come
        self._closing = False  # close() was called
        self._error_result: Mapping[str, Any] | None = None  # the last message, if an error result
        self._ended: anyio.Event | None = None  # set when the CLI's output has ended
        self._run_end = RunEndClock(run_end_ceiling(options.env, os.environ))
        self.loop: object | None = None
        """The event loop `open()` ran in (see `current_loop()`)."""

    # ------------------------------------------------------------- properties

    @property
    def protocol(self) -> ControlProtocol:
        """The control protocol (raises if not open)."""
        if self._protocol is None:
            raise SessionStateError("not connected: call connect() first")
        return self._protocol

    @property
    def is_open(self) -> bool:
        """True while the CLI connection is usable."""
        return self._protocol is not None and self._protocol.state is ConnectionState.OPEN

    @property
    def cli_state(self) -> str | None:
        """The CLI's last reported session state (``idle``/``running``/``requires_action``)."""
        return self._cli_state

    @property
    def owes_answer(self) -> bool:
        """True while a prompt we sent is not yet answered, the CLI is mid-turn, or a
        turn's output has begun and its result not yet arrived."""
        return (
            self._turns.owed or self._turn_open or self._cli_state in ("running", "requires_action")
        )

    @property
    def run_open(self) -> bool:
        """`owes_answer`, unless the run-end ceiling ran out between turns (see
        `run_end`): what a reader waiting for the run to settle waits for."""
        return self.owes_answer and not self._run_end.ended

    def add_control_observer(self, observer: ControlObserver) -> Callable[[], None]:
        """Watch incoming control requests (tool calls, permissions, hooks)."""
        return self.protocol.add_observer(observer)

    def set_reply_gate(self, gate: ReplyGate | None) -> None:
        """Hold back every answer to the CLI, and every prompt, until ``gate()`` returns."""
        self._gate = gate
        self.protocol.reply_gate = gate

    def add_observer(
        self, observer: MessageObserver, *, system_only: bool = False
    ) -> Callable[[], None]:
        """Watch every message (only each `SystemMessage` with ``system_only``,
        which keeps it off the hot path of a streaming turn); returns a function that
        removes the observer."""
        observers = self._system_observers if system_only else self._observers
        observers.append(observer)

        def remove() -> None:
            if observer in observers:
                observers.remove(observer)

        return remove

    # -------------------------------------------------------------- lifecycle

    def _make_transport(self) -> LineTransport:
        if self._custom_transport is not None:
            return self._custom_transport
        opts = self._launch_options
        cli = resolve_cli(opts)
        self._spill_dir = SpillDir()
        # the CLI joins the session's trace
        trace_env = None if self._trace is None else self._trace.cli_env(os.environ)
        argv = build_argv(opts, cli_path=cli, spill_dir=self._spill_dir)
        return cli_process(opts, argv, spill_dir=self._spill_dir, extra_env=trace_env)

    async def open(self) -> None:
        """Start the CLI and complete ``initialize``. On failure everything is cleaned up."""
        if self._protocol is not None:
            raise SessionStateError("already connected")
        opts = self.options
        self.loop = current_loop()
        self._ended = anyio.Event()
        hooks = None
        if opts.hooks:
            hooks = HookRegistry(opts.hooks, on_error=opts.on_callback_error)
        hooks_config = None if hooks is None else hooks.initialize_config
        self._inbox = Inbox(
            opts.max_buffered_bytes, on_full=self._pause_reading, on_drained=self._resume_reading
        )
        if opts.session_store is not None:
            validate_session_store_options(opts)  # the options may have changed since
            from .transcript_store.link import StoreLink  # only with a store: lazy

            self._link = StoreLink(opts)
        if opts.telemetry is not None:  # only then is OpenTelemetry imported
            self._trace = _session_trace(opts.telemetry, opts.model, started=not self._spare)
            if self._trace is not None:
                self.add_observer(self._trace.on_message)
        try:
            owned = owned_session_id(opts)
            if owned is not None:  # one owner per session id: before any CLI starts on it
                self._claim = claim_session(owned)
            fields = codec.initialize_fields(
                hooks_config, build_initialize_fields(opts, hooks_config)
            )
            if self._link is not None:  # a resume loads the session from the store first
                self._launch_options = await self._link.prepare(
                    materialize=self._custom_transport is None
                )
            self._transport = self._make_transport()
            await self._transport.launch()  # the CLI boots while the rest is set up
            # the background tasks live in a host task of their own, not in the caller's
            # scopes: close() may run in another task or scope than open()
            self._host = TaskHost("ccwire connection")
            tg = self._tg = await self._host.start()
            if self._link is not None:
                self._link.start(self._launch_options, tg, self.wake)
            protocol = ControlProtocol(
                self._transport,
                on_message=self._on_message,
                on_closed=self._on_closed,
                on_error=self._on_handler_error,
                control_timeout=opts.control_timeout,
            )
            self._protocol = protocol
            self._router = McpRouter(
                sdk_servers(opts.mcp_servers), protocol.request, lambda: self.session_id
            )
            protocol.add_route(
                codec.MCP_MESSAGE,
                self._served(self._mcp_route(self._router)),
                unencodable=_mcp_unencodable,
            )
            traced, served = self._traced, self._served
            protocol.add_route(
                codec.CAN_USE_TOOL, served(traced(_on_first_call(self._permission_route)))
            )
            protocol.add_route(codec.ELICITATION, served(_on_first_call(self._elicitation_route)))
            protocol.add_route(
                codec.REQUEST_USER_DIALOG, served(_on_first_call(self._dialog_route))
            )
            protocol.add_route(
                codec.HOOK_CALLBACK,
                served(
                    traced(
                        hooks.route() if hooks is not None else _on_first_call(self._no_hooks_route)
                    )
                ),
            )
            if opts.audit_log is not None:
                protocol.add_observer(opts.audit_log.observe)
            if self._trace is not None:
                protocol.add_observer(self._trace.on_control)
            if opts.silence_timeout is not None:
                protocol.clock = anyio.current_time
            await tg.start(protocol.run)
            if opts.silence_timeout is not None:
                tg.start_soon(self._watch_silence, opts.silence_timeout)
            self._router.attach()
            self.initialize_fields = fields
            self.server_info = await protocol.request(
                codec.INITIALIZE, fields, timeout=initialize_timeout(opts, os.environ)
            )
            if hooks is not None:
                hooks.verify(self.server_info)
            caps = self.server_info.get("capabilities")
            if isinstance(caps, list):
                self.capabilities = frozenset(c for c in caps if isinstance(c, str))
        except BaseException as exc:
            self._open_failed(exc)
            silent = await self._failed_open(exc)
            if silent is not None:
                raise silent from exc
            raise

    def _open_failed(self, exc: BaseException) -> None:
        """With telemetry, the session's span records why `open` failed: an error, or a
        cancellation (a time limit that passed as the CLI started) or an interrupt, not
        a session that went well."""
        if self._trace is None:
            return
        if isinstance(exc, Exception):
            self._trace.on_closed(exc)
        else:
            self.abandoned(exc)

    async def _failed_open(self, exc: BaseException) -> ProcessError | None:
        """Clean up after `open()` failed with ``exc``; the error to raise instead, if the
        program was likely no CLI at all (`_silent_exit`)."""
        silent = None
        if self.server_info is None and self._transport is not None:
            # no answer to initialize (timed out, or the caller gave up): a CLI with
            # no session to save is not given the grace to exit after its input
            # ends (SIGTERM, then SIGKILL; shielded and bounded)
            await self._transport.terminate()
            silent = _silent_exit(self._transport, exc)
        await self.close()
        return silent

    def claimed(self) -> None:
        """A spare CLI was claimed: its session's span starts now, under the current span."""
        if self._trace is not None:
            try:
                self._trace.start()
            except Exception:  # the application's span processor: the session runs on
                logger.exception("ccwire: telemetry could not start the session's span")

    def serve_sdk_servers(self, servers: Mapping[str, SdkMcpServer]) -> None:
        """Serve exactly these in-process servers from now on (before ``mcp_set_servers``
        tells the CLI about them, so their handshake finds them)."""
        router = McpRouter(servers, self.protocol.request, lambda: self.session_id)
        self.protocol.add_route(
            codec.MCP_MESSAGE, self._served(self._mcp_route(router)), unencodable=_mcp_unencodable
        )
        if self._router is not None:
            self._router.detach()
        router.attach()
        self._router = router

    async def end_input(self) -> None:
        """Close the CLI's stdin; it finishes what is queued and exits."""
        await self.protocol.end_input()

    def kill_outside_loop(self) -> None:
        """Stop the CLI at once (SIGKILL) and release what needs no event loop: for a
        connection whose event loop is gone, or is another one, where nothing of it can
        be awaited."""
        self._closing = True
        if self._transport is not None:
            self._transport.kill()
        if self._spill_dir is not None:
            self._spill_dir.remove()
            self._spill_dir = None
        if self._claim is not None:
            self._claim.release()
            self._claim = None

    async def close(self) -> None:
        """Stop the CLI (bounded, shielded) and release everything. Idempotent.

        May run in any task and any cancel scope, not only where `open()` ran.
        """
        self._closing = True  # the end is ours: a turn cut short is not the CLI's loss
        if self._trace is not None:
            self._trace.on_closing()
        with anyio.CancelScope(shield=True):
            if self._router is not None:
                self._router.detach()
            if self._protocol is not None:
                await self._protocol.aclose()
            elif self._transport is not None:
                await self._transport.aclose()
            if self._inbox is not None:
                self._inbox.close(self._protocol.closed_error if self._protocol else None)
            if self._link is not None:  # the CLI has exited: the last frames are in
                await self._link.aclose()
            if self._spill_dir is not None:
                self._spill_dir.remove()
                self._spill_dir = None
            if self._trace is not None:  # the CLI has exited: every frame was observed
                self._trace.end()
            if self._claim is not None:  # the CLI has exited: the id is free again
                self._claim.release()
                self._claim = None
            if self._ended is not None:
                self._ended.set()
        self._tg = None
        host, self._host = self._host, None
        if host is not None:
            # every background task ends by itself once the transport is closed;
            # cancelling only hurries the stragglers
            await host.aclose()

    async def kill(self) -> None:
        """Stop the CLI at once (SIGKILL, for one that answers nothing), then `close()`."""
        if self._transport is not None:
            self._transport.kill()
        await self.close()

    async def _watch_silence(self, limit: float) -> None:
        """End the conversation with `CLISilenceError` once the CLI has written nothing
        for ``limit`` s in the middle of a turn while nothing waits on us."""
        protocol = self.protocol
        while protocol.state is ConnectionState.OPEN:
            armed = self.owes_answer and not protocol.serving
            quiet = anyio.current_time() - max(protocol.last_heard, self._prompted_at)
            if armed and quiet >= limit:
                logger.error("ccwire: the CLI wrote nothing for %g s mid-turn: stopping it", limit)
                await protocol.abort(CLISilenceError(limit))
                return
            # re-checked at the earliest moment the limit could be reached
            await anyio.sleep(limit - quiet if armed else limit)

    # ------------------------------------------------------------------ input

    async def send_prompt(self, prompt: Prompt, *, session_id: str = "default") -> str | None:
        """Write one user message; returns the ``uuid`` it carries.

        ``prompt`` is text, a list of content blocks, or a complete user-message frame
        (which is sent as given, gaining a ``uuid`` if it has none); anything else
        raises `OptionsError` (the CLI would never answer it). A frame of another type,
        which the CLI reads without answering (``keep_alive``, ``control_cancel_request``,
        ``assistant``...), is sent as given, owed nothing (None is returned).
        """
        check_prompt_item(prompt)
        if isinstance(prompt, Mapping) and codec.frame_type(prompt) != codec.PROMPT_FRAME:
            if self._gate is not None:  # not a prompt: no turn, nothing owed
                await self._gate()
            await self.protocol.send_frame(prompt)
            return None
        if isinstance(prompt, Mapping):
            frame = dict(prompt)
            if "uuid" not in frame:
                frame["uuid"] = self._stamp()
        else:
            frame = codec.encode_user_message(prompt, session_id=session_id, uuid=self._stamp())
        if self.options.verbatim_prompts:
            codec.mark_client_composed(frame)
        if self._trace is not None:
            self._trace.on_prompt(prompt)
        self._prompted = True
        if self._gate is not None:
            await self._gate()
        self._prompted_at = anyio.current_time()  # the CLI owes us output from now on
        self._run_end.on_prompt()
        mid = codec.user_message_uuid(frame)
        if mid is not None:
            self._turns.issue(mid)
            if self._inbox is not None:
                self._inbox.wake()
        try:
            await self.protocol.send_frame(frame)
        except BaseException:
            if mid is not None:
                self._turns.settle(mid)
            raise
        return mid

    def _stamp(self) -> str:
        """A new prompt uuid of ccwire's own. The CLI names it in the frames of the turn
        that answers the prompt; those are shown to the caller without it (`_shown`), as
        the reference SDK, which stamps nothing, shows them."""
        uid = _uuid4()
        self._stamped.add(uid)
        return uid

    async def stream_prompts(
        self, prompts: AsyncIterable[Prompt], *, session_id: str = "default"
    ) -> None:
        """Write every message of an async iterable as it arrives.

        An iterable that raises the cancellation exception while nothing cancelled it
        has failed: a `CcwireError` naming it is raised instead (its ``__cause__``), so
        that no cancellation escapes it into the task that streams it.
        """
        self._prompt_streams += 1
        try:
            async for prompt in prompts:
                await self.send_prompt(prompt, session_id=session_id)
        except BaseException as exc:
            if isinstance(exc, Exception) or not raised_by_callback(exc):
                raise
            error = CcwireError(f"the prompt stream raised {type(exc).__name__}: {exc}")
            raise error from exc
        finally:
            self._prompt_streams -= 1

    def stream_prompts_soon(self, prompts: AsyncIterable[Prompt]) -> None:
        """`stream_prompts()` in the background; if the iterable fails, its error is
        raised to the reader of `messages()` after the messages before it (and the
        conversation goes on), as `query()` raises it to its caller."""

        async def stream() -> None:
            try:
                await self.stream_prompts(prompts)
            except Exception as exc:
                if isinstance(exc, CcwireError) and not self.is_open:
                    return  # the connection's own end: its readers get that error
                if self._inbox is not None:
                    self._inbox.put(exc)
            finally:
                self._prompt_streams -= 1

        self._prompt_streams += 1  # a prompt is on its way from now on
        self.start_soon(stream)

    async def wait_for_a_prompt(self, seconds: float) -> bool:
        """Wait for a reason to expect messages: a prompt sent and not yet answered (or
        a prompt stream running), a turn under way, or output waiting to be read. While
        the CLI reports it is at work (``running``: a background agent may start a turn)
        it waits on; once the CLI is idle and owes nothing, at most ``seconds``.

        Returns:
            True at once if there is one, or as soon as there is; False if none came.
        """
        inbox = self._inbox
        if inbox is None:
            raise SessionStateError("not connected")
        idle_since = anyio.current_time()
        while not (self._turns.owed or self._turn_open or self._prompt_streams):
            if inbox.closed or len(inbox) or self._mirror_errors_waiting:
                return True
            if self._cli_state in ("running", "requires_action"):
                idle_since = anyio.current_time()
                await inbox.wait()  # woken by each frame, a state change among them
                continue
            left = idle_since + seconds - anyio.current_time()
            if left <= 0:
                return False
            with anyio.move_on_after(left):
                await inbox.wait()
        return True

    @property
    def prompted(self) -> bool:
        """True once a prompt was sent (or began to be sent) on this connection."""
        return self._prompted

    async def wait_activity(self) -> None:
        """Wait until a message arrives, a prompt is sent, or the state changes."""
        if self._inbox is None:
            raise SessionStateError("not connected")
        if self._inbox.closed or len(self._inbox) or self._mirror_errors_waiting:
            return
        await self._inbox.wait()

    def wake(self) -> None:
        """Wake whoever waits in `wait_activity()` or `messages()`."""
        if self._inbox is not None:
            self._inbox.wake()

    def abandoned(self, error: BaseException) -> None:
        """The caller's code stops the session with ``error`` (its task cancelled, or an
        exception raised where the session was used): with telemetry, the session's span
        records it (a session closed on purpose, ``break`` or ``aclose()``, records
        nothing; but closed as the caller's task unwinds a cancellation, it was
        cancelled)."""
        if self._trace is None:
            return
        cancelled = isinstance(error, anyio.get_cancelled_exc_class())
        if isinstance(error, GeneratorExit):
            try:
                unwinding = anyio.current_effective_deadline() == -math.inf
            except Exception:  # closed outside any event loop (the garbage collector)
                unwinding = False
            if not unwinding:
                return
            cancelled = True
        try:
            self._trace.on_abandoned(error, cancelled=cancelled)
        except Exception:  # the application's span processor: the session closes anyway
            logger.exception("ccwire: telemetry could not record why the session stopped")

    def start_soon(self, func: Callable[..., Any], *args: Any) -> None:
        """Run a background coroutine in the connection's task group."""
        if self._tg is None:
            raise SessionStateError("not connected")
        self._tg.start_soon(func, *args)

    # ----------------------------------------------------------------- output

    async def rest(self) -> AsyncGenerator[Message, None]:
        """Close the CLI's input, then yield the rest of its output until it ends.

        A CLI whose output has not ended `end_grace()` s after its input was closed (it
        lingers, or a process it started holds its stdout open) is stopped
        (`LineTransport.terminate()`: SIGTERM, then SIGKILL), and what it wrote is still
        yielded; an output that has not ended as long after that is given up
        (`close()`). Either way the stream ends normally: the run had settled.
        """
        if self.is_open:
            await self.end_input()
        inbox = self._inbox
        if inbox is None:
            raise SessionStateError("not connected: call connect() first")
        grace = end_grace(self.options.env, os.environ)
        for step in range(2):
            until = anyio.current_time() + grace
            async with aclosing(self.messages(until_result=False, until=until)) as rest:
                async for message in rest:
                    yield message
            if inbox.closed:
                return
            if step == 0 and self._transport is not None:
                logger.warning(
                    "ccwire: the CLI's output did not end %g s after its input was closed: "
                    "stopping it",
                    grace,
                )
                await self._transport.terminate()
        logger.error("ccwire: the CLI's output did not end after it was stopped: giving it up")
        await self.close()
        async with aclosing(self.messages(until_result=False)) as left:
            async for message in left:  # what was read before the end
                yield message

    async def messages(
        self, *, until_result: bool, until_settled: bool = False, until: float | None = None
    ) -> AsyncGenerator[Message, None]:
        """Yield messages in order.

        With ``until_result`` it stops after a `ResultMessage` (waiting for one if no
        turn is pending, as ``receive_response()`` does); with ``until_settled`` also as
        soon as nothing is owed (so it never waits for a result that will not come), or
        the run-end ceiling ran out between turns (`run_open`).
        Otherwise it runs until the CLI's output ends, or until the time ``until`` (on
        the anyio clock) if that comes first. A decode error (or the error of a
        prompt stream, see `stream_prompts_soon()`) is raised where it occurred;
        iterating again continues after it. A connection failure is raised at the end.
        """
        inbox = self._inbox
        if inbox is None:
            raise SessionStateError("not connected: call connect() first")
        link = self._link
        flushed: object = None
        while True:
            if link is not None and link.has_errors:  # a store append that gave up
                for error in link.take_errors():
                    yield error
                continue
            if len(inbox):
                head = inbox.peek() if link is not None else None
                if link is not None and isinstance(head, ResultMessage) and head is not flushed:
                    # whoever sees the result finds the turn stored; flushed before the
                    # result is taken, so a reader cancelled meanwhile loses nothing
                    flushed = head
                    await link.flush()
                    continue
                item = inbox.take()
                if isinstance(item, Exception):
                    raise item
                yield item
                if until_result and isinstance(item, ResultMessage):
                    return
                continue
            if inbox.closed:
                if inbox.error is not None:
                    raise inbox.error
                return
            if until_settled and not self.run_open:
                return
            if until is not None and anyio.current_time() >= until:
                return
            deadline = self._run_end.deadline if until_settled else None
            if until is not None:
                deadline = until if deadline is None else min(deadline, until)
            if deadline is None:
                await inbox.wait()
                continue
            with anyio.move_on_at(deadline):
                await inbox.wait()
            if until_settled:
                self._run_end.expire_if_due(anyio.current_time())

    @property
    def _mirror_errors_waiting(self) -> bool:
        return self._link is not None and self._link.has_errors

    # -------------------------------------------------------------- callbacks

    def _pause_reading(self) -> None:
        # more output is buffered than max_buffered_bytes: the CLI's pipe fills up
        if self._protocol is not None:
            self._protocol.pause_reading()

    def _resume_reading(self) -> None:
        if self._protocol is not None:
            self._protocol.resume_reading()

    def _on_message(self, item: Message | MessageDecodeError, size: int) -> None:
        inbox = self._inbox
        assert inbox is not None
        if isinstance(item, MessageDecodeError):
            inbox.put(item)  # observers see messages only
            return
        shown = self._shown(item) if self._stamped else item  # item: for the bookkeeping
        if self._observers:
            _notify(self._observers, shown)
        if isinstance(item, AssistantMessage):  # what a streamed turn is made of: first
            self._turn_open = True
            if not item.parent_tool_use_id:
                self._run_end.on_turn_output()  # a main-thread turn is under way
        elif isinstance(item, SystemMessage):
            if self._system_observers:
                _notify(self._system_observers, shown)
            state = codec.session_state(item.data)
            if state is not None:  # the CLI's own state: bookkeeping...
                self._on_cli_state(state)
                if codec.host_only(item.data):  # ...and only that, unless the caller asked
                    inbox.wake()
                    return
                inbox.put(shown, size)  # not a sign that the conversation moved on
                return
            self._on_task_frame(item)
            if item.subtype == "init":
                self._on_init(item)
            elif item.subtype == codec.API_RETRY:
                self._tell_unreachable(item)
            commands = codec.changed_commands(item.data)
            if commands is not None:
                self.latest_commands = commands
        elif isinstance(item, RawMessage):
            if self._link is not None and isinstance(item, TranscriptMirrorMessage):
                self._link.feed(item)  # for the store, not the caller
                if not self.options.session_mirror:
                    return
            command = codec.command_lifecycle(item.data)
            if command is not None and self._turns.issued(command[0]):
                # lifecycle of a prompt we stamped: bookkeeping, not conversation
                self._turns.on_lifecycle(*command)
                inbox.wake()
                return
        elif isinstance(item, ResultMessage):
            self._on_result(item, shown)
            inbox.put(shown, size)
            return
        elif isinstance(item, StreamEvent) and not item.parent_tool_use_id:
            self._run_end.on_turn_output()
        self._error_result = None  # (the last message is no error result)
        inbox.put(shown, size)

    def _on_task_frame(self, item: SystemMessage) -> None:
        """Background agents in flight hold the run-end ceiling (see `run_end`)."""
        if isinstance(item, TaskStartedMessage):
            self._run_end.on_task_started(item.task_id, item.task_type)
        elif isinstance(item, TaskNotificationMessage) or (
            isinstance(item, TaskUpdatedMessage) and item.status in TERMINAL_TASK_STATUSES
        ):
            self._run_end.on_task_ended(item.task_id, anyio.current_time())

    def _on_cli_state(self, state: str) -> None:
        self._cli_state = state
        self._run_end.on_state(state, anyio.current_time())
        if state == "idle" and not self._turn_open:
            # an idle that overtakes its turn's result settles nothing: the turn ends
            # with its result (`_on_result`)
            self._turns.on_idle()

    def _on_result(self, item: ResultMessage, shown: Message) -> None:
        self.last_result = shown if isinstance(shown, ResultMessage) else item
        if item.session_id:
            self.session_id = item.session_id
        self._turns.on_result(tuple(item.user_message_uuids or ()))
        self._turn_open = False
        self._run_end.on_result(anyio.current_time())
        if self._cli_state == "idle":  # the idle came first: it settles now
            self._turns.on_idle()
        self._error_result = shown.raw if item.is_error else None
        if item.permission_denials:
            self._tell_ungranted(item.permission_denials)

    def _tell_serverless_rules(self, connected: set[object]) -> None:
        """Log, once per server, an ``allowed_tools`` rule for an MCP server the session
        does not have (``mcp__calc__add`` with no ``"calc"`` in ``mcp_servers``, nor in
        the CLI's settings): the model never sees such a tool, and nothing said why."""
        for rule in self.options.allowed_tools:
            if not isinstance(rule, str) or not rule.startswith("mcp__"):
                continue
            server = rule[len("mcp__") :].split("__", 1)[0]
            if not server or "*" in server or server in connected or server in self._ungranted:
                continue
            self._ungranted.add(server)
            logger.warning(
                "ccwire: allowed_tools names %r, but this session has no MCP server %r: "
                "add it to mcp_servers, e.g. mcp_servers={%r: create_sdk_mcp_server(%r, "
                "tools=[...])} (the key names the server's tools)",
                rule,
                server,
                server,
                server,
            )

    def _tell_unreachable(self, item: SystemMessage) -> None:
        """Log, once per connection, the CLI's first retry of a model request that got
        no response at all (no network, a proxy, a wrong ``ANTHROPIC_BASE_URL``): the
        CLI retries for minutes (10 times by default, each wait longer) before the turn
        fails, and a caller that reads only results was told nothing meanwhile."""
        retry = codec.api_retry(item.data)
        if retry is None or retry.status is not None or self._told_unreachable:
            return
        self._told_unreachable = True
        url = (self.options.env or {}).get("ANTHROPIC_BASE_URL") or os.environ.get(
            "ANTHROPIC_BASE_URL"
        )
        logger.warning(
            "ccwire: the CLI cannot reach the model's API%s (no response; retry %s of %s, "
            "each wait longer): the turn fails if none gets through. Check the network, a "
            "proxy or ANTHROPIC_BASE_URL; CLAUDE_CODE_MAX_RETRIES (in the environment or "
            "options.env) sets how many retries",
            f" at {url}" if url else "",
            retry.attempt if retry.attempt is not None else "?",
            retry.max_retries if retry.max_retries is not None else "?",
        )

    def _tell_ungranted(self, denials: list[Any]) -> None:
        """Log, once per tool, an in-process tool the CLI refused because nothing in the
        options answers its permission prompt (no ``allowed_tools`` entry, no
        ``can_use_tool``, no ``PreToolUse`` hook, the default mode): the model got
        "you haven't granted it yet", and the caller, else, no word of it."""
        opts = self.options
        if (
            self._router is None
            or opts.can_use_tool is not None
            or opts.permission_prompt_tool_name
            or opts.permission_mode not in (None, "default", "acceptEdits")
            or "PreToolUse" in (opts.hooks or {})
        ):
            return
        servers = self._router.names
        for denial in denials:
            name = denial.get("tool_name") if isinstance(denial, Mapping) else None
            if not isinstance(name, str) or name in self._ungranted:
                continue
            server = next((s for s in servers if name.startswith(f"mcp__{s}__")), None)
            if server is None:
                continue
            self._ungranted.add(name)
            logger.warning(
                "ccwire: the CLI refused to call the in-process tool %r: it asks for "
                "permission, and nothing in the options grants it. Allow it with "
                "allowed_tools=[%r] (or %r for every tool of the server), or decide each "
                "call with can_use_tool",
                name,
                name,
                f"mcp__{server}__*",
            )

    def _shown(self, item: Message) -> Message:
        """``item`` as the caller sees it: without the uuids ccwire stamped on prompts.

        The reference SDK sends prompts without a ``uuid``, so their ``user_message_uuid``
        and ``user_message_uuids`` stay unset (and absent from a `SystemMessage`'s
        ``data``) unless the caller gave the prompt one, which is shown as sent.
        """
        raw = item.raw
        if "user_message_uuids" not in raw and "user_message_uuid" not in raw:
            return item
        frame = codec.without_prompt_uuids(raw, self._stamped)
        return item if frame is None else codec.decode_message(frame)

    def _on_init(self, item: SystemMessage) -> None:
        sid = item.data.get("session_id")
        if isinstance(sid, str):
            self.session_id = sid
        servers = item.data.get("mcp_servers")
        if isinstance(servers, list) and self.options.allowed_tools:
            self._tell_serverless_rules({s.get("name") for s in servers if isinstance(s, Mapping)})
        caps = item.data.get("capabilities")
        if isinstance(caps, list):
            self.capabilities = self.capabilities | {c for c in caps if isinstance(c, str)}
            if codec.MSG_LIFECYCLE_CAPABILITY in self.capabilities:
                self._turns.lifecycle_reported = True

    async def wait_ended(self) -> None:
        """Wait until the CLI's output has ended (it exited, or the connection closed)."""
        if self._ended is None:
            raise SessionStateError("not connected")
        await self._ended.wait()

    def _on_closed(self, error: CcwireError | None) -> None:
        if error is None and not self._closing and self._turns.owed:
            error = self._ended_mid_turn()  # a prompt of ours lost its answer
        if self._ended is not None:
            self._ended.set()
        self._turns.clear()
        self._turn_open = False
        if (
            isinstance(error, ProcessError)
            and not isinstance(error, ResultError)
            and self._error_result is not None
        ):
            # The CLI exits non-zero after a final error result, on purpose: the exit
            # becomes a ResultError carrying that result (raised after it was yielded).
            data = dict(self._error_result)
            text = result_error_text(data) + credentials_hint(data)
            typed = ResultError(
                f"Claude Code returned an error result: {text}", data, error.exit_code
            )
            typed.__cause__ = error
            error = typed
        if self._trace is not None:
            self._trace.on_closed(error)
        if self._inbox is not None:
            if isinstance(error, MessageDecodeError):
                # A decode error that ends the stream (a line over max_buffer_size) is
                # raised once where it occurred, like any other; the stream then ends
                # with a connection error, so a consumer that skips decode errors and
                # keeps reading meets the end instead of the same error forever.
                self._inbox.put(error)
                end = CLIConnectionError(f"the CLI's output cannot be read any further: {error}")
                end.__cause__ = error
                error = end
            self._inbox.close(error)

    def _ended_mid_turn(self) -> ProcessError:
        """The error for a CLI that ended its output cleanly (exit code 0) while a
        prompt of ours was still owed its result: that result is lost."""
        ended = self._transport.exit_info if self._transport is not None else None
        return ProcessError(
            f"{CLI_EXITED} before the result of the turn",
            exit_code=ended.returncode if ended is not None else None,
            stderr=ended.stderr_tail if ended is not None else None,
        )

    def _on_handler_error(self, where: str, exc: BaseException) -> None:
        logger.error("ccwire: %s handler failed: %s", where, exc, exc_info=exc)
        if isinstance(exc, MessageEncodeError):  # an answer the wire cannot carry
            kind = _ANSWER_KINDS.get(where, where)
            error = CallbackError(
                f"the answer to a {where} request could not be encoded as JSON: {exc}",
                kind=kind,
                callback_name=kind,
                subtype=where,
            )
            error.__cause__ = exc
            report_callback_error(self.options.on_callback_error, error)

    def _mcp_route(self, router: McpRouter) -> RouteHandler:
        return self._traced(router.route())

    def _served(self, route: RouteHandler) -> RouteHandler:
        """``route``, each call served through `serve_through` when one is set."""

        def serve(req: codec.ControlRequest, call: IncomingCall) -> Any:
            through = self.serve_through
            if through is None:
                return route(req, call)
            return through(req, lambda: route(req, call))

        return serve

    def _traced(self, route: RouteHandler) -> RouteHandler:
        """``route``, its handlers run inside the span of the tool call a request is
        about (with telemetry)."""
        return route if self._trace is None else self._trace.wrap_route(route)

    def _permission_route(self) -> RouteHandler:
        opts = self.options
        return permission_route(
            opts.can_use_tool, on_error=opts.on_callback_error, timeout=opts.can_use_tool_timeout
        )

    def _elicitation_route(self) -> RouteHandler:
        from .._callbacks.dialogs import elicitation_route  # with the first elicitation

        opts = self.options
        return elicitation_route(opts.on_elicitation, on_error=opts.on_callback_error)

    def _dialog_route(self) -> RouteHandler:
        from .._callbacks.dialogs import user_dialog_route  # with the first dialog

        opts = self.options
        return user_dialog_route(opts.on_user_dialog, on_error=opts.on_callback_error)

    def _no_hooks_route(self) -> RouteHandler:
        # answers a hook_callback for an id that was never registered, as a registry does
        return HookRegistry(None, on_error=self.options.on_callback_error).route()


def _on_first_call(make: Callable[[], RouteHandler]) -> RouteHandler:
    """A route handler made by ``make()`` when the first request arrives (the callback
    modules are loaded only by a session that gets such a request)."""
    handler: RouteHandler | None = None

    def route(req: Any, call: Any) -> Any:
        nonlocal handler
        if handler is None:
            handler = make()
        return handler(req, call)

    return route


_ANSWER_KINDS: Final = {
    codec.MCP_MESSAGE: "tool",
    codec.CAN_USE_TOOL: "can_use_tool",
    codec.HOOK_CALLBACK: "hook",
}
"""The kind of `CallbackError` reported for an unencodable answer, by request subtype."""


def _mcp_unencodable(req: codec.ControlRequest, exc: MessageEncodeError) -> Mapping[str, Any]:
    return codec.mcp_unencodable(req.request.get("message"), str(exc))


def owned_session_id(options: ClaudeAgentOptions) -> str | None:
    """The id of the existing conversation a connection with ``options`` writes to: the
    one it resumes (unless it forks it), or the id it gives a new session."""
    if options.resume is not None and not options.fork_session:
        return options.resume
    return options.session_id


END_GRACE = 5.0
"""Seconds a CLI whose input was closed at the end of a conversation may take to end
its output before it is stopped (as long as `SubprocessTransport` waits in ``aclose()``
before its SIGTERM, and ``claude-agent-sdk``'s ``close()``)."""

SESSION_END_HOOKS_TIMEOUT_ENV: Final = "CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS"


def end_grace(env: Mapping[str, str], environ: Mapping[str, str]) -> float:
    """Seconds a CLI may take to end its output once its input is closed: `END_GRACE`,
    or longer when ``CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS`` (from ``env``, the
    options', else ``environ``) gives its ``SessionEnd`` hooks longer (plus a second)."""
    raw = env.get(SESSION_END_HOOKS_TIMEOUT_ENV, environ.get(SESSION_END_HOOKS_TIMEOUT_ENV, ""))
    raw = raw.strip()
    if raw.isascii() and raw.isdigit():
        return max(END_GRACE, int(raw) / 1000 + 1)
    return END_GRACE


STREAM_CLOSE_TIMEOUT_ENV: Final = "CLAUDE_CODE_STREAM_CLOSE_TIMEOUT"


def _silent_exit(transport: LineTransport, exc: BaseException) -> ProcessError | None:
    """The error for a program that exited 0 before answering ``initialize`` and wrote
    nothing to stderr (a ``cli_path`` to ``/bin/true``): the CLI always says why it
    stops, so it is likely no CLI. ``None`` for any other failure."""
    if not isinstance(exc, (ProcessError, CLIConnectionError)) or not isinstance(
        transport, SubprocessTransport
    ):
        return None
    ended = transport.exit_info
    if ended is None or ended.returncode != 0 or ended.stderr_tail.strip():
        return None
    program = transport.executable
    return ProcessError(
        f"{program} exited before answering initialize and wrote nothing to stderr: is it "
        f"the Claude Code CLI? `ccwire doctor --cli-path {program}` checks it",
        exit_code=0,
    )


def initialize_timeout(options: ClaudeAgentOptions, environ: Mapping[str, str]) -> float:
    """Seconds the ``initialize`` handshake may take: ``options.initialize_timeout``,
    or ``CLAUDE_CODE_STREAM_CLOSE_TIMEOUT`` (milliseconds, in the environment) when that
    is longer, as ``claude-agent-sdk`` reads it (a value that is not a plain integer is
    ignored)."""
    raw = environ.get(STREAM_CLOSE_TIMEOUT_ENV, "").strip()
    if raw.isascii() and raw.isdigit():
        return max(options.initialize_timeout, int(raw) / 1000)
    return options.initialize_timeout


def _session_trace(
    telemetry: Telemetry, model: str | None, *, started: bool = True
) -> SessionTrace | None:
    """Start the span of a session that has `telemetry` (OpenTelemetry imported here).

    Args:
        telemetry: The session's option.
        model: The requested model, if any.
        started: Start the span now (a spare CLI's starts at its claim).

    Returns:
        The session's trace, its span started as a child of the current span; None
        when the application's providers fail to start it (logged: the session runs
        untraced, as telemetry must not fail a session).

    Raises:
        TypeError: ``telemetry`` is not a `Telemetry`.
        MissingExtraError: OpenTelemetry is not installed.
    """
    if not isinstance(telemetry, Telemetry):
        raise OptionsError(f"options.telemetry must be a Telemetry, not {type(telemetry)!r}")
    try:
        from .tracing import SessionTrace
    except ImportError as exc:
        raise otel_missing() from exc
    try:
        return SessionTrace(telemetry, model, started=started)
    except Exception:  # a tracer or meter provider, or a span processor, that fails
        logger.exception("ccwire: telemetry could not start the session's span: it runs untraced")
        return None


def _uuid4() -> str:
    """``str(uuid.uuid4())``, without importing ``uuid`` (and ``platform``) into the
    first connect: 16 random bytes with the version 4 and RFC 4122 variant bits."""
    b = bytearray(os.urandom(16))
    b[6] = (b[6] & 0x0F) | 0x40
    b[8] = (b[8] & 0x3F) | 0x80
    h = b.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _notify(observers: list[MessageObserver], message: Message) -> None:
    for observer in tuple(observers):
        try:
            observer(message)
        except Exception:
            logger.exception("ccwire: a message observer raised")
