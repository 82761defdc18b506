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
  (children excluded) and peak-RSS growth.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import sys
import time
import traceback
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from floor import FloorSession, floor_argv, floor_env  # noqa: E402

TIMEOUT = 600.0
# Extra environment for the CLI (JSON in BENCH_CLI_ENV): run.py points the real CLI at
# a local scripted model this way.
CLI_ENV: dict[str, str] = json.loads(os.environ.get("BENCH_CLI_ENV") or "{}")


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
        fs = FloorSession(floor_argv(cli), floor_env({**CLI_ENV, "BENCH_SPEC": json.dumps(s)}))
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


async def measure(args: argparse.Namespace) -> dict[str, Any]:
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
