"""The Ray executor: a pool of async Ray actors, each running several sessions at once.

Ray is imported only here, and only when a batch asks for it. The batch starts
``ceil(concurrency / per_actor)`` actors (`SessionHost`, in ``ray_actors``), each
reserving ``per_actor`` times the per-task resource hints and running up to
``per_actor`` sessions concurrently on its own event loop. An actor gets the batch
options (without in-process objects) and the references of the tools and hooks once,
at creation; each task is one actor method call, sent to the least-loaded actor that
is up: a streaming generator that reports the task's progress (attempt, session id,
whether it may have acted), then its result as JSON. Results stream back as they
finish (``ray.wait``). The actors are killed when the batch ends, however it ends.

Joining a cluster is bounded: an address nothing answers at fails at once, one that
does not answer as Ray within `CONNECT_SECONDS` fails then (`BatchConfigError`). So is
waiting for room: while no actor is up and no node alive is large enough to host one
(the nodes were lost, or each is smaller than an actor needs), the batch waits at most
`PLACE_SECONDS` (an autoscaler may be adding a node), then fails (`BatchConfigError`
when no actor ever started, else `BatchError`); the tasks without a result run on the
next call.
The options are put in Ray's object store once, before any actor starts: what cannot
be pickled fails the batch there (`BatchConfigError`); a task that cannot be pickled
(a task function's closure) fails alone, as ``config``.

A task whose actor is lost (the actor's process or its node died) is run again on
another actor (a replacement is started, on a node that is up) when its session had
not acted yet: no tool call, no task function started. The driver always knows:
a session's first action waits on its actor until the driver has recorded the
progress saying it acted and acknowledged it (`SessionHost.ack`). The lost attempt counts
against the retry policy and in the result's ``attempts``. A session that may have
acted is not run again: its result is ``lost``, with the session id to resume it.

A task's time limit is enforced by its actor, on the actor's event loop; synchronous
code in a task function (``time.sleep``, a CPU-bound loop) blocks that loop, and so
the actor's every session and its enforcement. So the driver watches: once a task is
`OVERDUE_SECONDS` past its limit it pings its actor, and kills an actor that leaves
the ping unanswered for `UNRESPONSIVE_SECONDS`; the overdue task fails with
``timeout`` (its cost unknown), the actor's other tasks are lost with it (run again
when they had not acted), and a replacement is started.

Actor method calls go straight from this process to the actor's worker, without the
raylet's scheduling of each task that a Ray task pays (see ``bench/BATCH_NOTES.md``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import math
import os
import socket
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.to_thread
from anyio.streams.memory import MemoryObjectSendStream

from .._conversation.options import ClaudeAgentOptions
from .errors import BatchConfigError, BatchError
from .ray_actors import SessionHost
from .results import BatchResult
from .session import BatchEvent, emit
from .tasks import BatchTask
from .telemetry import portable_telemetry

__all__ = ["CONNECT_SECONDS", "default_per_actor", "feed_ray", "portable_options"]

_WAIT_SECONDS = 0.25  # one ray.wait() call in a thread; cancellation is seen between calls
# after cancelling, how long the sessions get to end their CLIs: a session's close waits
# up to 5 s for the CLI to exit once its input ends, then 5 s after SIGTERM (SIGKILL then)
_SETTLE_SECONDS = 12.0
_CLEANUP_SECONDS = 20.0  # the whole shutdown (cancel, settle, kill), shielded
_GONE_SECONDS = 5.0  # how long the shutdown waits for killed actors to be gone
MAX_PER_ACTOR = 16
"""The most sessions one actor runs by default (an actor crash loses them all)."""
CONNECT_SECONDS = 20.0
"""How long joining a Ray cluster may take before the batch fails."""
_PROBE_SECONDS = 5.0  # a TCP connect to the address given, before Ray tries it
PLACE_SECONDS = 120.0
"""How long a batch with no actor up waits for a node that can host one."""
OVERDUE_SECONDS = 2.0
"""How long past its time limit a task may run before the driver pings its actor (the
actor stops a timed-out session itself, and its loop answers meanwhile)."""
UNRESPONSIVE_SECONDS = 10.0
"""How long an actor with an overdue task may leave a ping unanswered before it is
killed: its event loop is blocked (synchronous code in a task function)."""
_PING_EVERY = 5.0  # while a task is overdue, the pings of an actor that answers


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise BatchConfigError("executor='ray' needs Ray: pip install 'ccwire[ray]'") from None
    return ray


def portable_options(options: ClaudeAgentOptions) -> ClaudeAgentOptions:
    """The options as a Ray worker can receive them: no in-process objects.

    Args:
        options: The batch options.

    Returns:
        The options without `debug_stderr` (this process's stream).

    Raises:
        BatchConfigError: They hold an SDK MCP server, hooks, a spawner, a permission
            callback or another callable; these must be passed by reference (`tools=`,
            `hooks=`, `spawn=`).
    """
    servers = options.mcp_servers
    if isinstance(servers, dict):
        for name, config in servers.items():
            if isinstance(config, dict) and config.get("type") == "sdk":
                raise BatchConfigError(
                    f"options.mcp_servers[{name!r}] is an in-process server: with the Ray "
                    "executor pass it by reference, tools=['package.module:server']"
                )
    if options.hooks:
        raise BatchConfigError(
            "options.hooks holds functions: with the Ray executor pass them by reference, "
            "hooks='package.module:HOOKS'"
        )
    if options.spawn_claude_code_process is not None:
        raise BatchConfigError(
            "options.spawn_claude_code_process is an in-process object: with the Ray "
            "executor pass it by reference, spawn='package.module:spawner'"
        )
    for name in ("can_use_tool", "stderr", "on_callback_error", "audit_log", "on_elicitation",
                 "on_user_dialog"):  # fmt: skip
        if getattr(options, name) is not None:
            raise BatchConfigError(
                f"options.{name} is an in-process object, which the Ray executor cannot ship"
            )
    # `debug_stderr` defaults to this process's stderr, which the CLI never writes to
    # here (it is the reference's field, accepted and ignored): a worker gets its own.
    return dataclasses.replace(
        options, debug_stderr=None, telemetry=portable_telemetry(options.telemetry)
    )


def default_per_actor(
    nodes: list[dict[str, Any]], concurrency: int, num_cpus: float, memory: int | None
) -> int:
    """How many sessions one actor runs when the caller does not say.

    As many as the smallest node that can hold a session has room for (so that every
    such node can host an actor), at most `concurrency` and `MAX_PER_ACTOR`.

    Args:
        nodes: ``ray.nodes()``.
        concurrency: The batch's concurrency.
        num_cpus: CPUs per session.
        memory: Bytes of memory per session.

    Returns:
        Sessions per actor, at least 1.
    """
    fits = []
    for node in nodes:
        if not node.get("Alive", True):
            continue
        res = node.get("Resources") or {}
        fit = concurrency
        if num_cpus > 0:
            fit = min(fit, math.floor(res.get("CPU", 0) / num_cpus + 1e-9))
        if memory:
            fit = min(fit, math.floor(res.get("memory", 0) / memory))
        if fit >= 1:
            fits.append(fit)
    return max(1, min(min(fits, default=1), concurrency, MAX_PER_ACTOR))


def _probe(target: str) -> None:
    """Fail at once when nothing listens at a ``host:port`` (or ``ray://host:port``)
    address: Ray itself would retry it for minutes."""
    hostport = target.removeprefix("ray://")
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit() or not host:
        return  # "auto", "local", a name Ray resolves itself
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=_PROBE_SECONDS):
            pass
    except OSError as exc:
        reason = exc.strerror or str(exc) or type(exc).__name__
        raise BatchConfigError(
            f"cannot join Ray at {target}: {reason} (is the cluster up? `ray status` "
            "on its head node shows its address)"
        ) from exc


def _init_ray(ray: Any, address: str | None, join: dict[str, Any]) -> list[dict[str, Any]]:
    """Join (or start) Ray, bounded by `CONNECT_SECONDS`, and return its nodes.

    ``ray.init`` runs in a daemon thread: when it does not return in time, the batch
    fails and the attempt is abandoned (it cannot keep the process alive). ``join``:
    more arguments of ``ray.init`` (the namespace and runtime environment of the
    caller's own Ray connection, `ray_process`).
    """
    if not ray.is_initialized():
        target = address or os.environ.get("RAY_ADDRESS") or None
        where = target or "a local instance"
        if target:
            _probe(target)
        outcome: list[BaseException | None] = []
        answered = threading.Event()

        def init() -> None:
            try:
                ray.init(address=target, include_dashboard=False, log_to_driver=False,
                         ignore_reinit_error=True, **join)  # fmt: skip
                outcome.append(None)
            except BaseException as exc:
                outcome.append(exc)
                return
            finally:
                answered.set()
            # the processes of a local instance started here (its GCS, its raylet) get
            # SIGKILL when the thread that started them ends (Ray sets PR_SET_PDEATHSIG,
            # which is per thread): this one stays (daemon) while the process runs
            threading.Event().wait()

        thread = threading.Thread(target=init, name="ccwire ray.init", daemon=True)
        thread.start()
        answered.wait(CONNECT_SECONDS)
        if not outcome:
            raise BatchConfigError(
                f"cannot join Ray at {where}: no answer within {CONNECT_SECONDS:g} s "
                "(is it a Ray cluster's address?)"
            )
        if outcome[0] is not None:
            exc = outcome[0]
            raise BatchConfigError(f"cannot start or join Ray ({where}): {exc}") from exc
    return list(ray.nodes())


@dataclass(eq=False)
class _Host:
    """One actor of the pool, as the driver tracks it."""

    handle: Any
    name: str = ""
    up: bool = False  # answered `ready`: tasks go only to actors that are up
    dead: bool = False
    load: int = 0  # its tasks in flight
    ping: Any = None  # a `ready` call asked while one of its tasks is overdue
    ping_sent: float = 0.0
    quiet_until: float = 0.0  # no ping before (it answered the last one)
    killed: str | None = None  # why the driver killed it (its loop was blocked)
    overdue: frozenset[str] = frozenset()  # the tasks past their limit then


@dataclass(eq=False)
class _Ping:
    """A `ready` call to an actor with an overdue task: does its event loop answer?"""

    host: _Host


@dataclass(eq=False)
class _Flight:
    """One task on an actor, and what its progress told the driver so far."""

    task: BatchTask
    host: _Host
    attempts_before: int  # attempts on actors lost before this one
    attempt: int = 0  # the attempt the actor reported last
    session_id: str | None = None
    acted: bool = False
    acked: set[str] = dataclasses.field(default_factory=set)  # the "ack" keys answered
    since: float = dataclasses.field(default_factory=time.monotonic)  # sent to its actor


@dataclass(eq=False)
class _Pool:
    """The batch's actors, and every reference the driver waits on."""

    ray: Any
    actor: Any  # ray.remote(SessionHost)
    hints: dict[str, Any]  # its options: resources, max_concurrency...
    shared: Any  # the reference of what every actor gets (`_ship`)
    per_actor: int
    size: int
    prefix: str = dataclasses.field(default_factory=lambda: uuid.uuid4().hex[:12])
    hosts: list[_Host] = dataclasses.field(default_factory=list)
    # what each reference (or task generator) waited on is: a host's `ready`, or a task
    waiting: dict[Any, _Host | _Flight | _Ping] = dataclasses.field(default_factory=dict)
    again: deque[_Flight] = dataclasses.field(default_factory=deque)  # lost, to run again
    in_flight: int = 0
    started: int = 0  # actors that came up
    replaced: int = 0  # actors lost on their way up and replaced
    broken: BatchError | None = None
    homeless_since: float | None = None  # since when no actor is up nor can be placed
    _names: itertools.count[int] = dataclasses.field(default_factory=itertools.count)

    def spawn(self) -> None:
        """Start one actor (it is used once its `ready` answers)."""
        name = f"ccwire-batch-{self.prefix}-{next(self._names)}"
        host = _Host(self.actor.options(name=name, **self.hints).remote(self.shared), name)
        self.hosts.append(host)
        self.waiting[host.handle.ready.remote()] = host

    def pick(self) -> _Host | None:
        """The least-loaded actor that is up and has room, if any."""
        free = [h for h in self.hosts if h.up and not h.dead and h.load < self.per_actor]
        return min(free, key=lambda h: h.load) if free else None

    def submit(
        self,
        host: _Host,
        task: BatchTask,
        seed: int,
        attempts_before: int = 0,
        trace: dict[str, str] | None = None,
        cap: float | None = None,
    ) -> None:
        """Start `task` on `host`, as a streaming generator of its progress and result
        (``trace``: the batch span's context, with telemetry; ``cap``: its session's
        ``max_budget_usd`` under the batch's budget)."""
        call = host.handle.run.options(num_returns="streaming")
        flight = _Flight(task, host, attempts_before)
        self.waiting[call.remote(task, seed, attempts_before, trace, cap)] = flight
        host.load += 1
        self.in_flight += 1

    def landed(self, flight: _Flight) -> None:
        """`flight` is over (a result, or lost)."""
        flight.host.load -= 1
        self.in_flight -= 1


async def feed_ray(run: Any, send: MemoryObjectSendStream[BatchResult]) -> None:
    """Run `run`'s tasks on a pool of Ray actors (at most its concurrency in flight) and
    stream their results back as they finish; cancelling this cancels the sessions, and
    the actors never outlive it. A failure is raised (the driver records it)."""
    ropts = run._ray_options
    ray = _import_ray()
    options = portable_options(run._options)
    nodes = await anyio.to_thread.run_sync(
        _init_ray, ray, ropts["address"], ropts.get("join") or {}, abandon_on_cancel=True
    )
    concurrency: int = run._concurrency
    per_actor = ropts.get("per_actor") or default_per_actor(
        nodes, concurrency, ropts["num_cpus"], ropts["memory"]
    )
    per_actor = min(per_actor, concurrency)
    # two call slots more than sessions: `stop` must get through a busy actor, and so
    # must the driver's `ack` (a session's action waits for it) and pings
    hints: dict[str, Any] = {"num_cpus": ropts["num_cpus"] * per_actor,
                             "max_concurrency": per_actor + 2, "max_restarts": 0,
                             "max_task_retries": 0}  # fmt: skip
    if ropts["memory"]:
        hints["memory"] = ropts["memory"] * per_actor
    shared = {"options": options, "policy": run._policy, "tools": run._tools,
              "hooks": run._hooks, "spawn": run._spawn, "spares": run._spares}  # fmt: skip
    shipped = await anyio.to_thread.run_sync(_ship, ray, shared)
    pool = _Pool(ray, ray.remote(SessionHost), hints, shipped, per_actor,
                 size=math.ceil(concurrency / per_actor))  # fmt: skip
    try:
        for _ in range(pool.size):
            pool.spawn()
        # the tasks are read by a task of their own (ahead, up to `concurrency`): a
        # source that waits (for a result, say) never keeps this loop from collecting
        ahead, queued = anyio.create_memory_object_stream[BatchTask](concurrency)
        async with queued, anyio.create_task_group() as tg:
            tg.start_soon(_read_tasks, run, ahead)
            more = True
            while (
                pool.broken is None
                and not run.interrupted  # by the budget: cancelled below
                and ((more and not run.over_budget()) or pool.again or pool.in_flight)
            ):
                room = pool.in_flight < concurrency and run.budget_room(pool.in_flight)
                host = pool.pick() if room else None
                if host is not None and pool.again:
                    lost = pool.again.popleft()
                    pool.submit(host, lost.task, run._rng.getrandbits(32), lost.attempts_before,
                                run._tracing.carrier(),
                                run.budget_cap(lost.task.id, pool.in_flight))  # fmt: skip
                    emit(run._events, BatchEvent("started", lost.task.id,
                                                 lost.attempts_before + 1))  # fmt: skip
                elif host is not None and more:
                    try:  # nothing to collect: wait for the source
                        task = queued.receive_nowait() if pool.waiting else await queued.receive()
                    except anyio.WouldBlock:  # none read yet: collect meanwhile
                        await _collect(pool, run, send)
                        continue
                    except anyio.EndOfStream:
                        more = False
                        continue
                    if run.over_budget():  # spent since it was read: it runs next time
                        continue
                    run.submitted += 1
                    emit(run._events, BatchEvent("started", task.id))
                    try:
                        pool.submit(host, task, run._rng.getrandbits(32), 0, run._tracing.carrier(),
                                    run.budget_cap(task.id, pool.in_flight))  # fmt: skip
                    except TypeError as exc:  # Ray cannot pickle it: it cannot run there
                        await run.finish(send, _unsendable(task, exc))
                else:
                    await _collect(pool, run, send)
            tg.cancel_scope.cancel()  # the reader, if the batch ends before the source
        if pool.broken is not None:
            raise pool.broken
    finally:
        with anyio.CancelScope(shield=True), anyio.move_on_after(_CLEANUP_SECONDS):
            await anyio.to_thread.run_sync(_shut_down, pool, abandon_on_cancel=True)


async def _read_tasks(run: Any, ahead: MemoryObjectSendStream[BatchTask]) -> None:
    """Pass the batch's tasks on as the source gives them (results are charged to the
    budget by `_collect`; `next_tasks` stops once it is spent)."""
    async with ahead, contextlib.aclosing(run.next_tasks()) as tasks:
        async for task in tasks:
            await ahead.send(task)


def _ship(ray: Any, shared: dict[str, Any]) -> Any:
    """`shared` in Ray's object store, once for every actor (in a worker thread).

    Raises:
        BatchConfigError: Something in it cannot be pickled (an in-process object in
            the options: a session store holding a connection, say).
    """
    try:
        return ray.put(shared)
    except TypeError as exc:
        raise BatchConfigError(
            f"the batch options cannot be sent to the Ray workers: {_why_unpicklable(exc)}"
        ) from exc


def _why_unpicklable(exc: BaseException) -> str:
    """The pickling error under Ray's (whose first line names only the argument)."""
    return _first_line(exc.__cause__ or exc)


def _unsendable(task: BatchTask, exc: BaseException) -> BatchResult:
    return BatchResult(id=task.id, ok=False, is_error=True, error_kind="config",
                       error=f"the task cannot be sent to a Ray worker: {_why_unpicklable(exc)} "
                       "(a task function must be picklable, its closure included)",
                       metadata=dict(task.metadata))  # fmt: skip


def _can_host(nodes: list[dict[str, Any]], hints: dict[str, Any]) -> bool:
    """Whether a node alive is large enough for one actor (busy or not)."""
    need = {"CPU": hints["num_cpus"], "memory": hints.get("memory") or 0}
    return any(
        node.get("Alive", True)
        and all((node.get("Resources") or {}).get(k, 0) + 1e-9 >= v for k, v in need.items())
        for node in nodes
    )


async def _check_room(pool: _Pool) -> None:
    """Fail the batch once, for `PLACE_SECONDS`, no actor was up and no node alive could
    host one (every such node was lost, or none is large enough): else it waits forever."""
    if any(host.up and not host.dead for host in pool.hosts):
        pool.homeless_since = None
        return
    nodes = await anyio.to_thread.run_sync(pool.ray.nodes, abandon_on_cancel=True)
    if _can_host(nodes, pool.hints):
        pool.homeless_since = None  # an actor is starting, or waits for room on a busy node
        return
    now = time.monotonic()
    if pool.homeless_since is None:
        pool.homeless_since = now
    elif now - pool.homeless_since >= PLACE_SECONDS:
        need = f"{pool.hints['num_cpus']:g} CPU"
        if pool.hints.get("memory"):
            need += f" and {pool.hints['memory'] / 2**20:.0f} MiB of memory"
        kind = BatchError if pool.started else BatchConfigError
        pool.broken = kind(
            f"for {PLACE_SECONDS:g} s no Ray node alive could host a batch actor (one "
            f"needs {need}): add nodes, or ask for less per actor (--num-cpus, "
            "--memory-mb, --sessions-per-actor); the tasks without a result run next time"
        )


def _shut_down(pool: _Pool) -> None:
    """Have every actor with sessions still running cancel them and wait (bounded) for
    their CLIs to end, then kill every actor of the pool (in a worker thread).

    The actors do the cancelling themselves (`SessionHost.stop`): ``ray.cancel`` of a
    task on a busy async actor is not always delivered."""
    busy = {flight.host for flight in pool.waiting.values() if isinstance(flight, _Flight)}
    stops = []
    for host in busy:
        if not host.dead:
            with contextlib.suppress(Exception):  # the actor or the cluster is gone
                stops.append(host.handle.stop.remote(_SETTLE_SECONDS))
    if stops:
        with contextlib.suppress(Exception):
            pool.ray.wait(stops, num_returns=len(stops), timeout=_SETTLE_SECONDS + 2)
    for host in pool.hosts:
        with contextlib.suppress(Exception):
            pool.ray.kill(host.handle, no_restart=True)
    # ray.kill only asks: wait (bounded) until Ray no longer lists them, so that once the
    # batch has ended none of its actors is left (Ray has no event to wait on for this)
    names = {host.name for host in pool.hosts}
    deadline = time.monotonic() + _GONE_SECONDS
    with contextlib.suppress(Exception):  # the cluster is gone: so are the actors
        while names & set(pool.ray.util.list_named_actors()) and time.monotonic() < deadline:
            time.sleep(0.05)


async def _collect(pool: _Pool, run: Any, send: MemoryObjectSendStream[BatchResult]) -> None:
    """Wait (at most `_WAIT_SECONDS`) for what the pool waits on, and handle everything
    ready by then: actors coming up, progress, results, actors that were lost."""
    assert pool.waiting, "nothing to wait for"
    ready = await anyio.to_thread.run_sync(_wait_and_get, pool.ray, list(pool.waiting))
    # progress first: a session waiting for its acknowledgement does not wait behind
    # results handed to a slow reader (one item per generator here: order is kept)
    ready.sort(key=lambda item: not (isinstance(item[1], dict) and "progress" in item[1]))
    for ref, data in ready:
        what = pool.waiting[ref]
        if isinstance(what, _Ping):  # its loop answers (or it is gone: seen by its tasks)
            del pool.waiting[ref]
            what.host.ping = None
            what.host.quiet_until = time.monotonic() + _PING_EVERY
            continue
        if isinstance(what, _Host):  # an actor's `ready`
            del pool.waiting[ref]
            if not isinstance(data, BaseException):
                what.up = True
                pool.started += 1
            elif pool.started and pool.replaced < 2 * pool.size + 2:
                what.dead = True  # lost on its way up (its node, say): start another
                pool.replaced += 1
                pool.spawn()
            else:  # none could start at all (ccwire not importable there...), or again
                what.dead = True  # and again: the batch cannot run
                pool.broken = BatchConfigError(
                    f"cannot start a Ray actor for the batch: {_first_line(data)}"
                )
            continue
        if isinstance(data, dict) and "progress" in data:
            change = data["progress"]
            what.attempt = int(change.get("attempt") or what.attempt)
            what.session_id = change.get("session_id") or what.session_id
            what.acted = what.acted or bool(change.get("acted"))
            key = change.get("ack")
            if what.acted and isinstance(key, str) and key not in what.acked:
                what.acked.add(key)  # recorded: its action may go on (not waited on)
                with contextlib.suppress(Exception):  # the actor is gone: seen by its task
                    what.host.handle.ack.remote(key)
            continue
        del pool.waiting[ref]
        pool.landed(what)
        if isinstance(data, dict) and "result" in data:
            if data.get("export"):
                run.note_export(data["export"])
            result: BatchResult | None = BatchResult.from_json(data["result"])
            if what.attempts_before and result is not None:  # after attempts on lost actors
                result = dataclasses.replace(result, cost_known=False)
        elif isinstance(data, pool.ray.exceptions.RayTaskError) or data is None:
            result = _failed(what, "crash", f"the Ray task failed: {_first_line(data)}")
        elif what.host.killed is not None and what.task.id in what.host.overdue:
            result = _failed(what, "timeout", f"the task did not finish within its time limit "
                             f"of {what.task.timeout:g} s, and {what.host.killed}",
                             blocked_s=UNRESPONSIVE_SECONDS)  # fmt: skip
        else:  # the actor's process or its node is gone
            result = _lost(pool, what, data, run._policy.max_attempts)
            if result is None:
                pool.again.append(what)
                emit(run._events, BatchEvent("retry", what.task.id, what.attempts_before,
                                             reason=_first_line(data)))  # fmt: skip
                continue
        await run.finish(send, result)
    await _check_room(pool)
    _check_overdue(pool)


def _check_overdue(pool: _Pool) -> None:
    """Ping the actor of each task past its time limit (by `OVERDUE_SECONDS`); kill an
    actor that leaves a ping unanswered for `UNRESPONSIVE_SECONDS`: synchronous code in
    a task function blocks its event loop, so the actor cannot stop the task itself."""
    now = time.monotonic()
    late: dict[_Host, list[_Flight]] = {}
    for flight in pool.waiting.values():
        if not isinstance(flight, _Flight) or flight.task.timeout is None or flight.host.dead:
            continue
        if now > flight.since + flight.task.timeout + OVERDUE_SECONDS:
            late.setdefault(flight.host, []).append(flight)
    for host, flights in late.items():
        if host.ping is None:
            if now >= host.quiet_until:
                host.ping, host.ping_sent = host.handle.ready.remote(), now
                pool.waiting[host.ping] = _Ping(host)
        elif now - host.ping_sent >= UNRESPONSIVE_SECONDS:
            _kill_blocked(pool, host, flights, now - host.ping_sent)


def _kill_blocked(pool: _Pool, host: _Host, late: list[_Flight], silent: float) -> None:
    """Kill an actor whose loop is blocked: its overdue tasks that may run code of their
    own on the loop fail with ``timeout``, its other tasks are lost with it (run again
    when their session had not acted). A prompt whose session has not acted (no tool
    call seen, so no in-process tool or hook ran for it) cannot have blocked the loop:
    overdue, it only waited behind the one that did. (A task function may have started
    without the driver hearing of it: the loop it blocked never sent the news.)"""
    suspects = [f for f in late if f.acted or f.task.run is not None] or late
    ids = [flight.task.id for flight in suspects]
    running = sorted(f.task.id for f in pool.waiting.values()
                     if isinstance(f, _Flight) and f.host is host)  # fmt: skip
    host.killed = (
        f"the Ray worker running it was killed: its event loop did not answer for "
        f"{silent:.0f} s while {', '.join(map(repr, ids))} ran past the time limit "
        "(synchronous code in a task function, such as time.sleep or a CPU-bound loop, "
        f"blocks the loop, and no time limit can stop it; tasks on that worker: "
        f"{', '.join(map(repr, running))})"
    )
    host.overdue = frozenset(ids)
    host.dead = True
    with contextlib.suppress(Exception):  # already gone
        pool.ray.kill(host.handle, no_restart=True)
    if pool.broken is None:
        pool.spawn()


def _first_line(exc: object) -> str:
    if exc is None:
        return "it ended without a result"
    return (str(exc).splitlines() or [type(exc).__name__])[0]


def _failed(flight: _Flight, kind: Any, error: str, **fields: Any) -> BatchResult:
    """The result of a task whose actor gave none (the cost of its attempts is unknown:
    they ended without saying what they spent)."""
    return BatchResult(id=flight.task.id, ok=False, is_error=True, error_kind=kind, error=error,
                       attempts=max(flight.attempt, flight.attempts_before + 1),
                       session_id=flight.session_id, metadata=dict(flight.task.metadata),
                       cost_known=False, **fields)  # fmt: skip


def _lost(
    pool: _Pool, flight: _Flight, exc: BaseException, max_attempts: int
) -> BatchResult | None:
    """A task whose actor was lost: `None` when it is to run again (its session had
    not acted and it has attempts left; `flight.attempts_before` is updated), else its
    ``lost`` result. A dead actor is replaced (it is killed at the end)."""
    host = flight.host
    if not host.dead:  # its first lost task: replace it
        host.dead = True
        if pool.broken is None:
            pool.spawn()
    used = max(flight.attempt, flight.attempts_before + 1)
    why = f"the Ray actor running it was lost ({host.killed or _first_line(exc)})"
    if flight.acted:
        return _failed(flight, "lost", f"{why} after its session {flight.session_id} may have "
                       "acted (it made tool calls): not run again; resume that session, or "
                       "run the task again with --rerun-failed", retryable=False)  # fmt: skip
    if used >= max_attempts:
        return _failed(flight, "lost", f"{why} on its last attempt ({used} of {max_attempts})",
                       retryable=True)  # fmt: skip
    flight.attempts_before = used
    return None


def _wait_and_get(ray: Any, items: list[Any]) -> list[tuple[Any, Any]]:
    """What is ready among ``items`` (references and task generators) and its value:
    a reference's value (or the error ``ray.get`` raised), the next item of a
    generator (or its error; `None` when it ended). Waits at most ``_WAIT_SECONDS``."""
    ready, rest = ray.wait(items, num_returns=1, timeout=_WAIT_SECONDS)
    if ready and rest:
        more, _ = ray.wait(rest, num_returns=len(rest), timeout=0)
        ready += more
    out: list[tuple[Any, Any]] = []
    for item in ready:
        try:
            if isinstance(item, ray.ObjectRefGenerator):
                try:
                    ref = next(item)
                except StopIteration:
                    out.append((item, None))
                    continue
                out.append((item, ray.get(ref)))
            else:
                out.append((item, ray.get(item)))
        except Exception as exc:  # the actor died or the call raised: that task's failure
            out.append((item, exc))
    return out
