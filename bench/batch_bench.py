"""Batch throughput: `ccwire batch`'s executors against a plain ``xargs -P N`` floor.

``python bench/batch_bench.py [--real-cli PATH] [--out bench/BATCH_RESULTS.md]``

What runs (each measurement in a fresh process, one after another):

* **fake CLI** (``fake_cli.py``, scenario ``handshake``: initialize, one prompt, one
  short answer, result): ``--fake-sessions`` sessions (1,000) at each ``--jobs`` N;
* **real CLI** (``--real-cli``, offline against ccwire's scripted model, which echoes the
  prompt): ``--real-sessions`` sessions (50) at ``--real-jobs`` N;
* three ways to run the same sessions at the same N:
  - ``floor``: ``seq 1 S | xargs -P N`` of a minimal driver (this file with ``--one``:
    a fresh Python process spawns the CLI, sends the prompt, reads to the result,
    prints one JSON line; the floor's hand-written responder, ``floor.py``);
  - ``local``: ``run_batch(executor="local")``, results written to a JSONL file (fsync
    per line, as ``ccwire batch`` does);
  - ``ray``: ``run_batch(executor="ray")`` on a local Ray instance with N CPUs: its
    pool of async actors (``--ray-per-actor`` sessions each, default run_batch's own
    choice: N on this one node). Ray's start-up and N worker processes importing ccwire
    are not timed (``warmup_s``); the batch's actors start inside the clock;
* **memory**: the parent's peak RSS (``VmHWM``) while 100,000 tasks wait: from a
  100,000-line task file read lazily, and from a 100,000-element list in memory.

Throughput is sessions per second of wall time. The targets: local >= 0.8x the floor at
the same N, Ray >= 0.6x local, peak RSS <= 200 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # `--one` runs under `python -I`, without the script's folder

from report import splice  # noqa: E402

FAKE_SPEC = json.dumps({"scenario": "handshake"})
MINIMAL_FLAGS = ["--output-format", "stream-json", "--verbose", "--input-format", "stream-json"]


def _vmhwm() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


# ----------------------------------------------------------------------------- the floor


def one(cli: str, task_id: str) -> None:
    """The minimal driver: one session, one JSON line on stdout."""
    import asyncio

    from floor import FloorSession

    async def go() -> dict[str, Any]:
        session = FloorSession([cli, *MINIMAL_FLAGS], dict(os.environ))
        try:
            return await session.run(f"item {task_id}")
        finally:
            await session.close()

    result = asyncio.run(go())
    line = {"id": task_id, "ok": result.get("is_error") is False, "result": result.get("result")}
    sys.stdout.write(json.dumps(line) + "\n")


def run_floor(
    cli: str, sessions: int, jobs: int, env: dict[str, str], work: Path
) -> dict[str, Any]:
    out = work / f"floor-{jobs}.jsonl"
    me = shlex.quote(str(Path(__file__).resolve()))
    py = shlex.quote(sys.executable)
    script = (f"seq 1 {sessions} | xargs -P {jobs} -I ID {py} -I -S {me} --one "
              f"--cli {shlex.quote(cli)} --id ID > {shlex.quote(str(out))}")  # fmt: skip
    began = time.perf_counter()
    subprocess.run(["sh", "-c", script], env=env, check=True, timeout=3600)
    wall = time.perf_counter() - began
    ok = sum(json.loads(x)["ok"] for x in out.read_text().splitlines())
    return {"wall_s": wall, "ok": ok, "rate": sessions / wall}


# ----------------------------------------------------------------------------- ccwire


def measure(args: argparse.Namespace) -> None:
    """In a fresh process: one run_batch measurement; prints one JSON line."""
    import anyio

    from ccwire import ClaudeAgentOptions
    from ccwire.batch import RetryPolicy, iter_task_file, run_batch

    env = json.loads(os.environ.get("BATCH_BENCH_ENV") or "{}")
    options = ClaudeAgentOptions(cli_path=args.cli, env=env)
    warmup_s = 0.0
    per_actor = 0
    if args.measure == "ray":
        import ray

        from ccwire._batch.ray_executor import default_per_actor

        ray.init(num_cpus=args.jobs, include_dashboard=False, log_to_driver=False)
        per_actor = args.ray_per_actor or default_per_actor(ray.nodes(), args.jobs, 1.0, None)
        # Start the N worker processes and import ccwire in each before the clock runs:
        # a one-off cost of the Ray instance (reported as warmup_s), not of each session,
        # which on a long-lived cluster is paid once for thousands of sessions. The
        # batch's actors start inside the clock, each in a worker process of its own
        # (Ray does not hand them these; measured: 0.2-0.3 s until the first is up).
        warm_began = time.perf_counter()

        @ray.remote(num_cpus=1)
        def warm() -> int:
            import ccwire._batch.ray_actors  # noqa: F401

            time.sleep(0.2)  # hold the slot, so that each of the N lands on its own worker
            return os.getpid()

        ray.get([warm.remote() for _ in range(args.jobs)])
        warmup_s = time.perf_counter() - warm_began
    work = Path(args.work)
    out = work / f"{args.measure}-{args.jobs}-{os.getpid()}.jsonl"
    stop_after = args.stop_after or None
    tasks: Any
    if args.measure == "rss-file":
        path = work / "tasks-100k.jsonl"
        with path.open("w") as f:
            for i in range(args.sessions):
                f.write(json.dumps({"id": f"t{i:06d}", "prompt": f"item {i}"}) + "\n")
        from ccwire.batch import scan_task_file

        scan_task_file(path)
        tasks = iter_task_file(path)
    else:
        tasks = [{"id": f"t{i:06d}", "prompt": f"item {i}"} for i in range(args.sessions)]
    executor = "ray" if args.measure == "ray" else "local"
    rss_before = _vmhwm()

    async def go() -> tuple[int, int]:
        seen = ok = 0
        async with run_batch(tasks, options=options, concurrency=args.jobs, executor=executor,
                             retries=RetryPolicy(max_attempts=1), output=out,
                             sessions_per_actor=args.ray_per_actor or None) as results:  # fmt: skip
            async for r in results:
                seen += 1
                ok += r.ok
                if stop_after and seen >= stop_after:
                    break
        return seen, ok

    began = time.perf_counter()
    seen, ok = anyio.run(go)
    wall = time.perf_counter() - began
    line = {"wall_s": wall, "ok": ok, "seen": seen, "rate": seen / wall, "warmup_s": warmup_s,
            "per_actor": per_actor, "peak_rss_mb": _vmhwm() / 2**20,
            "rss_before_mb": rss_before / 2**20}  # fmt: skip
    print(json.dumps(line))


def run_measure(kind: str, cli: str, sessions: int, jobs: int, env: dict[str, str], work: Path,
                stop_after: int = 0, per_actor: int = 0) -> dict[str, Any]:  # fmt: skip
    cmd = [sys.executable, __file__, "--measure", kind, "--cli", cli, "--sessions", str(sessions),
           "--jobs", str(jobs), "--work", str(work), "--stop-after", str(stop_after),
           "--ray-per-actor", str(per_actor)]  # fmt: skip
    full_env = {**os.environ, **env, "BATCH_BENCH_ENV": json.dumps(env)}
    done = subprocess.run(cmd, env=full_env, capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        raise RuntimeError(f"{kind} failed:\n{done.stderr[-3000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


# ----------------------------------------------------------------------------- orchestration


def fake_cli(work: Path) -> str:
    path = work / "claude"
    path.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -I -S '
                    f'{shlex.quote(str(HERE / "fake_cli.py"))} "$@"\n')  # fmt: skip
    path.chmod(0o755)
    return str(path)


def compare(label: str, cli: str, sessions: int, jobs: int, env: dict[str, str], work: Path,
            with_ray: bool, per_actor: int = 0) -> dict[str, Any]:  # fmt: skip
    row: dict[str, Any] = {"cli": label, "sessions": sessions, "jobs": jobs}
    print(f"[{label}] N={jobs}: floor...", file=sys.stderr, flush=True)
    row["floor"] = run_floor(cli, sessions, jobs, {**os.environ, **env}, work)
    print(f"[{label}] N={jobs}: local...", file=sys.stderr, flush=True)
    row["local"] = run_measure("local", cli, sessions, jobs, env, work)
    if with_ray:
        print(f"[{label}] N={jobs}: ray...", file=sys.stderr, flush=True)
        row["ray"] = run_measure("ray", cli, sessions, jobs, env, work, per_actor=per_actor)
    print(json.dumps(row), file=sys.stderr, flush=True)
    return row


def report(rows: list[dict[str, Any]], rss: dict[str, Any], cores: int) -> str:
    lines = [
        "# Batch benchmark (`bench/batch_bench.py`)",
        "",
        f"Machine: {cores} CPUs, shared with other jobs while this ran; CPython "
        f"{sys.version.split()[0]}. Sessions per second of wall time (higher is better).",
        "",
        "| CLI | sessions | N | floor (xargs -P N) | local | local / floor | ray | ray / local |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        f, lo = r["floor"]["rate"], r["local"]["rate"]
        ray = r.get("ray")
        ray_cells = (f"{ray['rate']:.2f}/s", f"{ray['rate'] / lo:.2f}x") if ray else ("-", "-")
        lines.append(f"| {r['cli']} | {r['sessions']} | {r['jobs']} | {f:.2f}/s | {lo:.2f}/s | "
                     f"{lo / f:.2f}x | {ray_cells[0]} | {ray_cells[1]} |")  # fmt: skip
    on_ray = [r for r in rows if r.get("ray")]
    per_actor = "; ".join(
        f"{r['cli']} N={r['jobs']}: {r['ray'].get('per_actor', 0)} sessions per actor"
        for r in on_ray
    )
    warmup = "; ".join(f"{r['cli']} N={r['jobs']}: {r['ray']['warmup_s']:.1f} s" for r in on_ray)
    about_ray = (
        f"The Ray column runs the batch on a pool of async Ray actors ({per_actor}). Its "
        "clock starts after the Ray instance is up and N worker processes have imported "
        f"ccwire (a one-off cost, paid once per cluster, not per session): {warmup}; "
        "starting the batch's actors is timed."
    )
    lines += ["", *textwrap.wrap(about_ray, 88)]
    lines += ["", "Every session succeeded in every run unless noted:", ""]
    for r in rows:
        bad = [k for k in ("floor", "local", "ray") if k in r and r[k]["ok"] != r["sessions"]]
        if bad:
            lines.append(f"- {r['cli']} N={r['jobs']}: not all ok in {', '.join(bad)}")
    lines += [
        "",
        "## Memory with 100,000 queued tasks",
        "",
        "| source of the tasks | peak RSS of the parent |",
        "|---|---|",
    ]
    for name, value in rss.items():
        lines.append(f"| {name} | {value['peak_rss_mb']:.0f} MB |")
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--id", default="1", help=argparse.SUPPRESS)
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    parser.add_argument("--cli", help=argparse.SUPPRESS)
    parser.add_argument("--sessions", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--jobs", default="1,2,4,8,16", help="N values for the fake CLI")
    parser.add_argument("--work", help=argparse.SUPPRESS)
    parser.add_argument("--stop-after", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--fake-sessions", type=int, default=1000)
    parser.add_argument("--real-sessions", type=int, default=50)
    parser.add_argument("--real-jobs", type=int, default=4)
    parser.add_argument("--ray-jobs", default="4", help="N values also run on Ray")
    parser.add_argument(
        "--ray-per-actor",
        type=int,
        default=0,
        metavar="K",
        help="Ray: sessions per actor (default: run_batch's own choice)",
    )
    parser.add_argument("--real-cli", help="the Claude Code CLI (skips the real-CLI rows if unset)")
    parser.add_argument("--rss-tasks", type=int, default=100_000)
    parser.add_argument("--out", default=str(HERE / "BATCH_RESULTS.md"))
    args = parser.parse_args()
    if args.one:
        one(args.cli, args.id)
        return 0
    if args.measure:
        args.jobs = int(args.jobs)
        measure(args)
        return 0

    rows: list[dict[str, Any]] = []
    ray_jobs = {int(x) for x in args.ray_jobs.split(",") if x}
    with tempfile.TemporaryDirectory(prefix="batch-bench-") as tmp:
        work = Path(tmp)
        fake = fake_cli(work)
        fake_env = {"BENCH_SPEC": FAKE_SPEC}
        for n in (int(x) for x in args.jobs.split(",")):
            with_ray = n in ray_jobs
            rows.append(compare("fake", fake, args.fake_sessions, n, fake_env, work, with_ray,
                                args.ray_per_actor))  # fmt: skip
        if args.real_cli:
            from ccwire.testing import ScriptedModel, text

            with ScriptedModel(default=lambda req: text("echo " + req.last_user_text())) as model:
                home = work / "home"
                home.mkdir()
                real_env = model.env(home)
                rows.append(compare("real", args.real_cli, args.real_sessions, args.real_jobs,
                                    real_env, work, True, args.ray_per_actor))  # fmt: skip
        rss = {
            "100,000-line task file, read lazily": run_measure(
                "rss-file", fake, args.rss_tasks, 8, fake_env, work, stop_after=300),
            "100,000-element list in memory": run_measure(
                "rss-list", fake, args.rss_tasks, 8, fake_env, work, stop_after=300),
        }  # fmt: skip
    text_out = report(rows, rss, os.cpu_count() or 0)
    Path(args.out).write_text(text_out)
    Path(args.out).with_suffix(".json").write_text(json.dumps({"rows": rows, "rss": rss}, indent=1))
    results = HERE / "RESULTS.md"  # the one page with every figure
    results.write_text(splice(results.read_text()))
    print(text_out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
