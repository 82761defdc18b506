"""Run one benchmark measurement in this process and print one JSON line.

``python bench/driver.py --impl ccwire|ref|floor --scenario NAME --cli PATH --spec JSON``

``ccwire`` and ``ref`` (Anthropic's ``claude-agent-sdk``) are driven through the same
code: their public APIs are the same (``ClaudeSDKClient``, ``ClaudeAgentOptions``,
``tool``, ``create_sdk_mcp_server``). ``floor`` is :mod:`floor`. The CLI is the fake one
of :mod:`fake_cli`, started through the SDK's real subprocess path (``cli_path``).

What is timed here (the fake CLI times the tool-call scenarios itself):

* ``handshake``: from ``connect()`` (spawn) to the first ``ResultMessage``; with
  ``--warmup N``, N complete sessions run first, untimed, in the same process (so the
  one-time costs of a process, such as anyio loading its event-loop backend, are paid);
* ``messages``/``big``: from sending the prompt to the ``ResultMessage``;
* ``many``: ``sessions`` complete sessions at once: wall time, this process's CPU time
  (children excluded) and peak-RSS growth;
* ``hundred``: ``sessions`` (100) clients in this one process: all connected at once,
  then idle (RSS growth per idle session, after one untimed warm-up session), then all
  prompted at once (messages per second over all of them, and the event loop's lag:
  how late a 5 ms ticker task wakes up meanwhile);
* ``tool_real``: one turn with one tool call on the real CLI through ``relay.py``,
  which times the SDK's share of the tool call (see there);
* ``warm_start`` (ccwire only): prompt to first message on the real CLI: a cold
  ``query()``, a ``WarmQuery`` and a claimed spare, interleaved;
* ``sandbox`` (ccwire only): a one-turn session on the real CLI, unsandboxed and in a
  bubblewrap sandbox, interleaved;
* ``batch_spares`` (ccwire only): `run_batch` of one-turn tasks on the real CLI against
  a slow scripted model, without and with a pool of spare CLIs.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import resource
import sys
import time
import traceback
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from floor import FloorSession, floor_argv, floor_env, touch_anyio  # noqa: E402

TIMEOUT = 600.0
# Extra environment for the CLI (JSON in BENCH_CLI_ENV): run.py points the real CLI at
# a local scripted model this way.
CLI_ENV: dict[str, str] = json.loads(os.environ.get("BENCH_CLI_ENV") or "{}")
# BENCH_FLOOR_ANYIO=1: the floor also pays anyio's first use while the CLI boots
# (`floor.touch_anyio`); anyio itself is imported here, untimed, as the SDKs import it.
FLOOR_ANYIO = bool(os.environ.get("BENCH_FLOOR_ANYIO"))
if FLOOR_ANYIO:
    import anyio  # noqa: F401


def _maxrss() -> int:
    """Peak RSS of this process so far, in bytes.

    ``VmHWM`` where Linux has it: ``ru_maxrss`` is no good here, because a process
    started with ``vfork`` (as ``subprocess`` does) inherits its parent's peak.
    """
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _rss_now() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class Marks:
    """Timestamps and counters of one session."""

    def __init__(self) -> None:
        self.t_start = time.perf_counter()
        self.t_prompt = 0.0
        self.t_result = 0.0
        self.rss_before = 0
        self.messages = 0
        self.text_bytes = 0
        self.result_ok = False


def sdk_session_factory(impl: str, cli: str, spec: dict[str, Any], max_buffer: int | None):  # type: ignore[no-untyped-def]
    if impl == "ccwire":
        import ccwire as sdk
    else:
        import claude_agent_sdk as sdk  # type: ignore[import-not-found,no-redef]

    @sdk.tool("echo", "Echo the text", {"text": str})
    async def echo(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": args["text"]}]}

    server = sdk.create_sdk_mcp_server("bench", tools=[echo])
    # Resolve the names used below before anything is timed: importing is measured by
    # the import scenario (ccwire loads its modules on first use of a name).
    Options, Client = sdk.ClaudeAgentOptions, sdk.ClaudeSDKClient
    AssistantMessage, TextBlock, ResultMessage = (
        sdk.AssistantMessage,
        sdk.TextBlock,
        sdk.ResultMessage,
    )

    async def session(marks: Marks, out: str | None) -> None:
        s = dict(spec)
        if out:
            s["out"] = out
        kwargs: dict[str, Any] = {}
        if max_buffer is not None:
            kwargs["max_buffer_size"] = max_buffer
        if spec.get("allowed_tools"):
            kwargs["allowed_tools"] = list(spec["allowed_tools"])
        options = Options(
            cli_path=cli,
            mcp_servers={"bench": server},
            env={**CLI_ENV, "BENCH_SPEC": json.dumps(s)},
            **kwargs,
        )
        client = Client(options)
        await client.connect()
        try:
            marks.rss_before = _maxrss()
            marks.t_prompt = time.perf_counter()
            await client.query("go")
            async for m in client.receive_response():
                if isinstance(m, AssistantMessage):
                    marks.messages += 1
                    for b in m.content:
                        if isinstance(b, TextBlock):
                            marks.text_bytes += len(b.text)
                elif isinstance(m, ResultMessage):
                    marks.t_result = time.perf_counter()
                    marks.result_ok = m.result == "done"
        finally:
            await client.disconnect()

    return session


def floor_session_factory(cli: str, spec: dict[str, Any]):  # type: ignore[no-untyped-def]
    async def session(marks: Marks, out: str | None) -> None:
        s = dict(spec)
        if out:
            s["out"] = out
        argv = floor_argv(cli, spec.get("allowed_tools", ()))
        fs = FloorSession(argv, floor_env({**CLI_ENV, "BENCH_SPEC": json.dumps(s)}))
        if FLOOR_ANYIO:  # the floor plus anyio's first use
            fs.after_spawn = touch_anyio
        try:
            result = await fs.run(on_prompt=lambda: _mark_prompt(marks))
            marks.t_result = time.perf_counter()
            marks.result_ok = result.get("result") == "done"
            marks.messages = fs.messages
            marks.text_bytes = fs.text_bytes
        finally:
            await fs.close()

    return session


def _mark_prompt(marks: Marks) -> None:
    marks.rss_before = _maxrss()
    marks.t_prompt = time.perf_counter()


async def _lag_monitor(stop: asyncio.Event, lags: list[float], interval: float = 0.005) -> None:
    """How late a ticker task wakes up (s), every ``interval``, until ``stop``."""
    loop = asyncio.get_running_loop()
    while not stop.is_set():
        t = loop.time()
        await asyncio.sleep(interval)
        lags.append(max(0.0, loop.time() - t - interval))


def _sdk_pair(impl: str, cli: str, spec: dict[str, Any]):  # type: ignore[no-untyped-def]
    """``(connect, converse, close)`` over one SDK client each."""
    if impl == "ccwire":
        import ccwire as sdk
    else:
        import claude_agent_sdk as sdk  # type: ignore[import-not-found,no-redef]

    @sdk.tool("echo", "Echo the text", {"text": str})
    async def echo(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": args["text"]}]}

    server = sdk.create_sdk_mcp_server("bench", tools=[echo])
    AssistantMessage = sdk.AssistantMessage
    env = {**CLI_ENV, "BENCH_SPEC": json.dumps(spec)}

    async def connect() -> Any:
        opts = sdk.ClaudeAgentOptions(cli_path=cli, mcp_servers={"bench": server}, env=env)
        client = sdk.ClaudeSDKClient(opts)
        await client.connect()
        return client

    async def converse(client: Any) -> int:
        await client.query("go")
        return sum([isinstance(m, AssistantMessage) async for m in client.receive_response()])

    async def close(client: Any) -> None:
        await client.disconnect()

    return connect, converse, close


def _floor_pair(cli: str, spec: dict[str, Any]):  # type: ignore[no-untyped-def]
    env = floor_env({**CLI_ENV, "BENCH_SPEC": json.dumps(spec)})

    async def connect() -> FloorSession:
        fs = FloorSession(floor_argv(cli), env)
        await fs.start()
        return fs

    async def converse(fs: FloorSession) -> int:
        before = fs.messages
        await fs.converse()
        return fs.messages - before

    async def close(fs: FloorSession) -> None:
        await fs.close()

    return connect, converse, close


async def _first(event: asyncio.Event, tasks: asyncio.Future[Any]) -> None:
    """Wait for ``event``; raise at once if ``tasks`` fail first."""
    waiter = asyncio.ensure_future(event.wait())
    await asyncio.wait([waiter, tasks], return_when=asyncio.FIRST_COMPLETED)
    if not waiter.done():
        waiter.cancel()
        await tasks  # raises the failure
        raise RuntimeError("sessions ended early")


async def measure_hundred(args: argparse.Namespace) -> dict[str, Any]:
    """The ``hundred`` scenario (see the module docstring)."""
    spec = json.loads(args.spec)
    spec.setdefault("scenario", "messages")
    if args.impl == "floor":
        connect, converse, close = _floor_pair(args.cli, spec)
    else:
        connect, converse, close = _sdk_pair(args.impl, args.cli, spec)
    warm = await connect()  # one untimed session: lazy imports, first-use caches
    await converse(warm)
    await close(warm)
    k = args.sessions
    gc.collect()
    rss0 = _rss_now()
    # A client is connected, used and closed in one task (anyio's rule), so each
    # session is a task that waits for the others between its phases.
    connected, go, conversed = asyncio.Event(), asyncio.Event(), asyncio.Event()
    counts: list[int] = []

    async def one() -> None:
        client = await connect()
        try:
            ready.append(1)
            if len(ready) == k:
                connected.set()
            await go.wait()
            counts.append(await converse(client))
            if len(counts) == k:
                conversed.set()
        finally:
            await close(client)

    ready: list[int] = []
    t0 = time.perf_counter()
    sessions = asyncio.gather(*(one() for _ in range(k)))
    await _first(connected, sessions)
    connect_s = time.perf_counter() - t0
    await asyncio.sleep(0.2)
    gc.collect()
    rss_idle = _rss_now()
    stop, lags = asyncio.Event(), []  # type: ignore[var-annotated]
    monitor = asyncio.ensure_future(_lag_monitor(stop, lags))
    t1 = time.perf_counter()
    go.set()
    await _first(conversed, sessions)
    wall = time.perf_counter() - t1
    stop.set()
    await monitor
    await sessions
    lags.sort()
    total = sum(counts)
    expected = int(spec.get("n", 0))
    return {
        "impl": args.impl,
        "scenario": args.scenario,
        "ok": True,
        "sessions": k,
        "results_ok": sum(c == expected for c in counts),
        "connect_s": connect_s,
        "rss_idle_growth": rss_idle - rss0,
        "rss_per_idle_session": (rss_idle - rss0) / k,
        "messages": total,
        "wall_s": wall,
        "msgs_per_s": total / wall if wall else None,
        "lag_p50_ms": lags[len(lags) // 2] * 1000 if lags else None,
        "lag_p99_ms": lags[min(len(lags) - 1, int(len(lags) * 0.99))] * 1000 if lags else None,
        "lag_max_ms": lags[-1] * 1000 if lags else None,
    }


async def _first_messages(messages: Any, t0: float) -> tuple[float | None, float | None, bool]:
    """Drain ``messages``: ms from ``t0`` to the first ``system/init`` and to the first
    assistant message, and whether the conversation ended with the result ``done``."""
    import ccwire

    init = assistant = None
    ok = False
    async for m in messages:
        now = (time.perf_counter() - t0) * 1000
        if init is None and isinstance(m, ccwire.SystemMessage) and m.subtype == "init":
            init = now
        elif assistant is None and isinstance(m, ccwire.AssistantMessage):
            assistant = now
        elif isinstance(m, ccwire.ResultMessage):
            ok = m.result == "done"
    return init, assistant, ok


async def measure_warm_start(args: argparse.Namespace) -> dict[str, Any]:
    """``warm_start`` (ccwire only): prompt to first message on the real CLI, three ways,
    interleaved ``reps`` times: a cold `query()` (spawn, handshake, prompt), a
    `WarmQuery` (`startup()` done ``idle_s`` earlier) and a claimed spare (`prewarm()`
    done ``idle_s`` earlier, claimed for the session's folder)."""
    import dataclasses

    import ccwire

    spec = json.loads(args.spec)
    reps, idle = int(spec.get("reps", 4)), float(spec.get("idle_s", 1.0))
    work = Path(args.work) / f"warm-{os.getpid()}"
    work.mkdir()
    base = ccwire.ClaudeAgentOptions(cli_path=args.cli, env=dict(CLI_ENV))
    options = dataclasses.replace(base, cwd=str(work))
    kinds = ("cold", "warm", "spare")
    out: dict[str, list[float | None]] = {f"{k}_{w}": [] for k in kinds for w in ("init", "asst")}
    good = 0
    # one untimed session first: the imports and first-use costs of this process
    await _first_messages(ccwire.query(prompt="go", options=options), time.perf_counter())
    for rep in range(reps):
        for kind in kinds[rep % 3 :] + kinds[: rep % 3]:
            if kind == "cold":
                t0 = time.perf_counter()
                messages = ccwire.query(prompt="go", options=options)
            elif kind == "warm":
                warm = await ccwire.startup(options=options)
                await asyncio.sleep(idle)  # the prompt comes later
                t0 = time.perf_counter()
                messages = warm.query("go")
            else:
                spare = await ccwire.prewarm(options=base)
                await asyncio.sleep(idle)
                t0 = time.perf_counter()
                messages = spare.claim("go", ccwire.ClaimOptions(cwd=str(work)))
            init, asst, ok = await _first_messages(messages, t0)
            if kind == "spare" and spare.fallback_reason is not None:
                raise RuntimeError(f"the spare was not claimed: {spare.fallback_reason}")
            out[f"{kind}_init"].append(init)
            out[f"{kind}_asst"].append(asst)
            good += ok
    return {
        "impl": args.impl,
        "scenario": args.scenario,
        "ok": True,
        "sessions": reps * 3,
        "results_ok": good,
        "reps": reps,
        "idle_s": idle,
        **out,
    }


async def measure_sandbox(args: argparse.Namespace) -> dict[str, Any]:
    """``sandbox`` (ccwire only): a one-turn `query()` on the real CLI, from the call to
    the end of the conversation (the CLI has exited), unsandboxed and in a bubblewrap
    sandbox (`BubblewrapSpawner`), interleaved ``reps`` times."""
    import dataclasses

    import ccwire

    spec = json.loads(args.spec)
    reps = int(spec.get("reps", 4))
    work = Path(args.work) / f"sandbox-{os.getpid()}"
    work.mkdir()
    plain = ccwire.ClaudeAgentOptions(cli_path=args.cli, env=dict(CLI_ENV), cwd=str(work))
    boxed = dataclasses.replace(plain, spawn_claude_code_process=ccwire.BubblewrapSpawner())
    out: dict[str, list[float]] = {"plain_ms": [], "sandboxed_ms": []}
    good = 0
    await _first_messages(ccwire.query(prompt="go", options=plain), time.perf_counter())
    for rep in range(reps):
        order = [("plain_ms", plain), ("sandboxed_ms", boxed)]
        for key, options in order if rep % 2 == 0 else order[::-1]:
            t0 = time.perf_counter()
            _, _, ok = await _first_messages(ccwire.query(prompt="go", options=options), t0)
            out[key].append((time.perf_counter() - t0) * 1000)
            good += ok
    return {
        "impl": args.impl,
        "scenario": args.scenario,
        "ok": True,
        "sessions": reps * 2,
        "results_ok": good,
        "reps": reps,
        **out,
    }


async def _one_batch(
    options: Any, n: int, concurrency: int, spares: int
) -> tuple[list[float], float, int]:
    """``n`` one-turn tasks with `run_batch`: each task's start (its ``started`` event)
    to its first message (``system/init``) in ms, the batch's wall time, tasks ok."""
    import ccwire
    from ccwire.batch import BatchTask, run_batch

    starts: dict[str, float] = {}

    def on_event(event: Any) -> None:
        if event.kind == "started":
            starts[event.task_id] = time.perf_counter()

    async def task(client: Any) -> float | None:
        await client.query("go")
        first = None
        async for m in client.receive_response():
            if first is None and isinstance(m, ccwire.SystemMessage) and m.subtype == "init":
                first = time.perf_counter()
        return first

    tasks = [BatchTask(id=f"t{i}", run=task) for i in range(n)]
    t0 = time.perf_counter()
    async with run_batch(
        tasks, options=options, concurrency=concurrency, spares=spares, events=on_event
    ) as batch:
        results = await batch.collect()
    wall = time.perf_counter() - t0
    latencies = [(r.output - starts[r.id]) * 1000 for r in results if r.ok and r.output]
    return latencies, wall, sum(r.ok for r in results)


async def measure_batch_spares(args: argparse.Namespace) -> dict[str, Any]:
    """``batch_spares`` (ccwire only): ``n`` one-turn tasks at ``concurrency`` with
    `run_batch` on the real CLI, against a scripted model of this process that answers
    after ``delay_s``: without spare CLIs, then with ``spares`` of them."""
    import dataclasses

    import ccwire
    from ccwire.testing import ScriptedModel, text

    spec = json.loads(args.spec)
    n, conc = int(spec.get("n", 200)), int(spec.get("concurrency", 4))
    spares, delay = int(spec.get("spares", 2)), float(spec.get("delay_s", 1.0))

    def slow(request: Any) -> Any:
        time.sleep(delay)  # the model's fixed answer time (in the server's thread)
        return text("done")

    work = Path(args.work) / f"batch-{os.getpid()}"
    (work / "home").mkdir(parents=True)
    out: dict[str, Any] = {"impl": args.impl, "scenario": args.scenario, "ok": True}
    good = 0
    with ScriptedModel(default=slow) as model:
        options = ccwire.ClaudeAgentOptions(
            cli_path=args.cli, env=model.env(work / "home"), cwd=str(work)
        )
        await _one_batch(dataclasses.replace(options), 4, conc, 0)  # untimed: first use
        for key, size in (("cold", 0), ("spares", spares)):
            latencies, wall, ok = await _one_batch(options, n, conc, size)
            out[f"{key}_first_ms"] = latencies
            out[f"{key}_rate"] = n / wall
            good += ok
    out.update(sessions=2 * n, results_ok=good, n=n, concurrency=conc, spares=spares,
               delay_s=delay, cpus=os.cpu_count())  # fmt: skip
    return out


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    if args.scenario == "hundred":
        return await measure_hundred(args)
    if args.scenario == "batch_spares":
        return await measure_batch_spares(args)
    if args.scenario == "warm_start":
        return await measure_warm_start(args)
    if args.scenario == "sandbox":
        return await measure_sandbox(args)
    spec = json.loads(args.spec)
    spec.setdefault("scenario", args.scenario if args.scenario != "many" else "session")
    if args.impl == "floor":
        session = floor_session_factory(args.cli, spec)
    else:
        session = sdk_session_factory(args.impl, args.cli, spec, args.max_buffer_size)
    work = Path(args.work)
    out: dict[str, Any] = {"impl": args.impl, "scenario": args.scenario, "ok": True}
    k = args.sessions
    marks = [Marks() for _ in range(k)]
    outs = [str(work / f"stats-{os.getpid()}-{i}.json") for i in range(k)]
    for _ in range(args.warmup):
        await session(Marks(), None)
    rss0, cpu0, t0 = _maxrss(), _cpu(), time.perf_counter()
    for m in marks:
        m.t_start = t0
    await asyncio.gather(*(session(m, o) for m, o in zip(marks, outs)))
    wall, cpu, rss1 = time.perf_counter() - t0, _cpu() - cpu0, _maxrss()
    stats = []
    for o in outs:
        try:
            stats.append(json.loads(Path(o).read_text()))
            os.unlink(o)
        except FileNotFoundError:
            stats.append({})
    m0 = marks[0]
    out.update(
        wall_s=wall,
        cpu_s=cpu,
        peak_rss_growth=rss1 - rss0,
        rss_before_prompt=m0.rss_before,
        peak_rss_growth_after_connect=rss1 - m0.rss_before,
        peak_rss=rss1,
        handshake_s=m0.t_result - m0.t_start,
        prompt_to_result_s=m0.t_result - m0.t_prompt,
        messages=sum(m.messages for m in marks),
        text_bytes=sum(m.text_bytes for m in marks),
        results_ok=sum(m.result_ok for m in marks),
        sessions=k,
        cli=stats[0],
    )
    if k > 1:
        out["cli_all"] = stats
    return out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--impl", required=True, choices=["ccwire", "ref", "floor"])
    p.add_argument("--scenario", required=True)
    p.add_argument("--cli", required=True)
    p.add_argument("--spec", default="{}")
    p.add_argument("--work", default=".")
    p.add_argument("--sessions", type=int, default=1)
    p.add_argument("--warmup", type=int, default=0, help="untimed sessions run first")
    p.add_argument("--max-buffer-size", type=int, default=None)
    args = p.parse_args()
    try:
        result = asyncio.run(asyncio.wait_for(measure(args), TIMEOUT))
    except BaseException as exc:  # report, never hang or crash silently
        result = {
            "impl": args.impl,
            "scenario": args.scenario,
            "ok": False,
            "error": f"{type(exc).__name__}: {exc}"[:500],
            "traceback": traceback.format_exc()[-2000:],
        }
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
