"""Benchmark ccwire against Anthropic's claude-agent-sdk and a hand-written floor.

``python bench/run.py [--ref-python bench/.venv-ref/bin/python] [--out bench/RESULTS.md]``

Every measurement runs in a fresh process (:mod:`driver`); the three implementations
are interleaved within each round (their order rotates), each scenario is repeated
``--rounds`` times and medians are reported, with ratios computed from the same run.
``--smoke`` runs tiny sizes, one round, for the test suite. Without a reference Python
(``--ref-python`` missing or ``--impls`` without ``ref``) only ccwire and the floor run.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
IMPLS = ("ccwire", "ref", "floor")
# ``--before DIR``: ccwire's ``src`` before the optimisations (e.g. ``git archive BASE
# src``), measured as a fourth implementation, "before", interleaved in the same run.
BEFORE_SRC: str | None = None
MB = 1_000_000


@dataclass
class Scenario:
    """One benchmark scenario: driver arguments per size set."""

    name: str
    driver_scenario: str
    spec: dict[str, Any]
    sessions: int = 1
    smoke_spec: dict[str, Any] | None = None
    smoke_sessions: int | None = None
    rounds: int | None = None  # fewer rounds for the slow ones
    repeat: int = 1  # driver processes per implementation and round (cheap, noisy ones)
    warmup: int = 0  # untimed sessions each driver process runs first
    real_cli: bool = False  # drive the real Claude Code CLI (``--real-cli``), not fake_cli.py
    impls: tuple[str, ...] | None = None  # only these implementations (ccwire's own features)


SESSION_WORKLOAD = {"n": 100, "messages": 100, "size": 200}
TOOL_NAME = "mcp__bench__echo"
SCENARIOS = [
    Scenario("handshake", "handshake", {}, repeat=5),
    Scenario("handshake_warm", "handshake", {}, repeat=5, warmup=1),
    Scenario("handshake_real", "handshake", {}, repeat=3, real_cli=True),
    # the three targets judged within 10-20% of the floor: 6 paired runs a round (30 in
    # all; with 15, two runs of the same code differed by up to 0.14 in the paired median)
    Scenario("tools_seq", "tools_seq", {"n": 2000}, smoke_spec={"n": 20}, repeat=6),
    Scenario(
        "tools_conc",
        "tools_conc",
        {"n": 4000, "concurrency": 16},
        smoke_spec={"n": 40, "concurrency": 16},
        repeat=6,
    ),
    Scenario(
        "messages",
        "messages",
        {"n": 20000, "size": 200},
        smoke_spec={"n": 50, "size": 200},
        repeat=6,
    ),
    Scenario("big_1MB", "big", {"size": 1 * MB}, smoke_spec={"size": 100_000}),
    Scenario("big_10MB", "big", {"size": 10 * MB}, smoke_spec={"size": 200_000}),
    Scenario("big_100MB", "big", {"size": 100 * MB}, smoke_spec={"size": 300_000}, rounds=3),
    Scenario("many_1", "many", SESSION_WORKLOAD, smoke_spec={"n": 5, "messages": 5}),
    Scenario(
        "many_10",
        "many",
        SESSION_WORKLOAD,
        sessions=10,
        smoke_spec={"n": 5, "messages": 5},
        smoke_sessions=2,
    ),
    Scenario(
        "many_50",
        "many",
        SESSION_WORKLOAD,
        sessions=50,
        smoke_spec={"n": 5, "messages": 5},
        smoke_sessions=3,
        rounds=3,
    ),
    Scenario(
        "sessions_100",
        "hundred",
        {"n": 400, "size": 200},
        sessions=100,
        smoke_spec={"n": 5, "size": 200},
        smoke_sessions=3,
        rounds=3,
    ),
    Scenario(
        "tool_real",
        "tool_real",
        {"allowed_tools": [TOOL_NAME]},
        repeat=3,
        real_cli=True,
    ),
    # ccwire's warm starts and its sandbox, against ccwire itself (the others have neither):
    # each driver process interleaves the variants, so every ratio pairs runs of one process
    Scenario(
        "warm_real",
        "warm_start",
        {"reps": 5, "idle_s": 2.0},
        rounds=3,
        real_cli=True,
        impls=("ccwire",),
    ),
    Scenario("sandbox_real", "sandbox", {"reps": 4}, rounds=3, real_cli=True, impls=("ccwire",)),
    Scenario(
        "batch_spares_real",
        "batch_spares",
        {"n": 200, "concurrency": 4, "spares": 2, "delay_s": 3.0},
        rounds=1,
        real_cli=True,
        impls=("ccwire",),
    ),
]


# ---------------------------------------------------------------------------- running


def make_cli(work: Path, python: str) -> Path:
    """A tiny shell wrapper that runs the fake CLI with ``python`` (no site, isolated)."""
    path = work / "claude"
    path.write_text(f'#!/bin/sh\nexec {shlex.quote(python)} -I -S {HERE / "fake_cli.py"} "$@"\n')
    path.chmod(0o755)
    return path


def run_driver(
    python: str,
    impl: str,
    scenario: Scenario,
    cli: Path,
    work: Path,
    smoke: bool,
    cli_env: dict[str, str] | None = None,
) -> dict[str, Any]:
    spec = dict(scenario.smoke_spec or scenario.spec) if smoke else dict(scenario.spec)
    sessions = (scenario.smoke_sessions or scenario.sessions) if smoke else scenario.sessions
    cmd = [
        python,
        str(HERE / "driver.py"),
        "--impl",
        impl,
        "--scenario",
        scenario.driver_scenario,
        "--cli",
        str(cli),
        "--work",
        str(work),
        "--spec",
        json.dumps(spec),
        "--sessions",
        str(sessions),
        "--warmup",
        str(scenario.warmup),
    ]
    env = dict(os.environ)
    if cli_env:
        env["BENCH_CLI_ENV"] = json.dumps(cli_env)
    if impl == "ref":
        env.pop("PYTHONPATH", None)
    if impl == "floor_anyio":  # the floor plus anyio's first use (floor.touch_anyio)
        env["BENCH_FLOOR_ANYIO"] = "1"
        cmd[cmd.index("--impl") + 1] = "floor"
    if impl == "before":
        assert BEFORE_SRC is not None
        env["PYTHONPATH"] = BEFORE_SRC
        cmd[cmd.index("--impl") + 1] = "ccwire"
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=env)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        return {"ok": False, "error": f"driver exited {proc.returncode}: {proc.stderr[-500:]}"}
    result: dict[str, Any] = json.loads(lines[-1])
    result["spec"] = spec
    if result.get("ok") and result.get("results_ok") != result.get("sessions"):
        result["ok"] = False
        result["error"] = (
            f"{result.get('results_ok')} of {result.get('sessions')} sessions ended with "
            "the expected result"
        )
    return result


def make_relay(work: Path, python: str) -> Path:
    """A shell wrapper running :mod:`relay` (the real CLI behind a timing relay)."""
    path = work / "claude-relay"
    path.write_text(f'#!/bin/sh\nexec {shlex.quote(python)} -I -S {HERE / "relay.py"} "$@"\n')
    path.chmod(0o755)
    return path


def tool_model_env(stack: contextlib.ExitStack, work: Path, real_cli: Path) -> dict[str, str]:
    """A scripted model for ``tool_real``: every turn first calls the bench's echo tool,
    then (once the tool's result is in the request) says ``done``."""
    from ccwire.testing import ScriptedModel, text, tool_use  # noqa: PLC0415

    def step(request: Any) -> Any:
        if request.tool_results():
            return text("done")
        return tool_use(TOOL_NAME, {"text": "hello"})

    model = stack.enter_context(ScriptedModel(default=step))
    home = work / "home-tool"
    home.mkdir()
    return {**model.env(home), "BENCH_REAL_CLI": str(real_cli)}


def scripted_model_env(stack: contextlib.ExitStack, work: Path) -> dict[str, str]:
    """Start ccwire's scripted model (every reply: the text ``done``) for as long as
    ``stack`` is open; returns the environment that points the real CLI at it."""
    from ccwire.testing import ScriptedModel, text  # noqa: PLC0415

    model = stack.enter_context(ScriptedModel(default=text("done")))
    home = work / "home"
    home.mkdir()
    return model.env(home)


USUAL_NAMES = "ClaudeSDKClient, ClaudeAgentOptions, tool, create_sdk_mcp_server, query, HookMatcher"
IMPORTS = {  # name: (implementation whose Python runs it, import statement)
    "usual": ("ccwire", f"from ccwire import {USUAL_NAMES}"),
    "anyio_asyncio": ("ccwire", "import anyio, asyncio"),
    # what an asyncio program pays: the usual import does not load asyncio itself
    "asyncio_usual": ("ccwire", f"import anyio, asyncio; from ccwire import {USUAL_NAMES}"),
    "bare": ("ccwire", "import ccwire"),
    # `ccwire --help`: the command line imports only the declarations of its commands
    "cli_help": (
        "ccwire",
        "import contextlib, io\nfrom ccwire._app.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()): main(['--help'])",
    ),
    "ref_usual": ("ref", f"from claude_agent_sdk import {USUAL_NAMES}"),
    "before_usual": ("before", f"from ccwire import {USUAL_NAMES}"),
}
HEAVY = ("pydantic", "mcp", "httpx", "starlette", "ray", "jsonschema", "opentelemetry")
_IMPORT_PROBE = """
import sys, time
t0 = time.perf_counter()
{stmt}
t1 = time.perf_counter()
heavy = sorted(m for m in {heavy!r} if m in sys.modules)
print(repr((t1 - t0, heavy)))
"""


def import_env(work: Path) -> dict[str, str]:
    """The environment of the import runs: bytecode cached (as for any installed
    package) in a private prefix, so the checkout stays clean."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    return env


def import_once(python: str, stmt: str, env: dict[str, str]) -> tuple[float, float, list[str]]:
    """One fresh process running ``stmt``: (import statement s, process wall s, heavy
    packages it loaded)."""
    code = _IMPORT_PROBE.format(stmt=stmt, heavy=HEAVY)
    t0 = time.perf_counter()
    proc = subprocess.run([python, "-c", code], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{stmt!r} failed: {proc.stderr[-300:]}")
    took, heavy = eval(proc.stdout.strip().splitlines()[-1])  # our own repr() above
    return took, wall, heavy


def import_suite(
    pythons: dict[str, str], impls: Sequence[str], reps: int, work: Path
) -> dict[str, Any]:
    """Every statement of :data:`IMPORTS` ``reps`` times, interleaved (the order
    rotates), each in a fresh process, after one untimed run that fills the bytecode
    cache; per repetition also the paired ratios against ``import anyio, asyncio``."""
    env = import_env(work)
    envs = {impl: env for impl in impls}
    if BEFORE_SRC is not None:
        envs["before"] = {**env, "PYTHONPATH": BEFORE_SRC}
    names = [n for n, (impl, _) in IMPORTS.items() if impl in impls]
    for name in names:
        impl, stmt = IMPORTS[name]
        import_once(pythons[impl], stmt, envs[impl])
    out: dict[str, Any] = {n: {"import_s": [], "wall_s": [], "heavy": []} for n in names}
    for rep in range(reps):
        order = names[rep % len(names) :] + names[: rep % len(names)]
        for name in order:
            impl, stmt = IMPORTS[name]
            took, wall, heavy = import_once(pythons[impl], stmt, envs[impl])
            out[name]["import_s"].append(took)
            out[name]["wall_s"].append(wall)
            out[name]["heavy"] = sorted(set(out[name]["heavy"]) | set(heavy))
    return out


# ---------------------------------------------------------------------------- metrics


def _median(values: Sequence[float]) -> float | None:
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if vals else None


def p50_us(r: dict[str, Any]) -> float | None:
    lat = r.get("cli", {}).get("latencies_ns")
    if not lat:  # a result read back from RESULTS.json keeps only the quantiles
        value: float | None = r.get("cli", {}).get("p50_us")
        return value
    return statistics.median(lat) / 1000


def p99_us(r: dict[str, Any]) -> float | None:
    lat = r.get("cli", {}).get("latencies_ns")
    if not lat:
        value: float | None = r.get("cli", {}).get("p99_us")
        return value
    return sorted(lat)[int(len(lat) * 0.99)] / 1000


def calls_per_s(r: dict[str, Any]) -> float | None:
    c = r.get("cli", {})
    return c["calls"] / (c["elapsed_ns"] / 1e9) if c.get("elapsed_ns") else None


def sdk_share(r: dict[str, Any]) -> float | None:
    """The SDK's share of a real tool round trip: its time on the tool calls over the
    whole turn (both timed by relay.py)."""
    c = r.get("cli", {})
    return sum(c["sdk_ns"]) / c["turn_ns"] if c.get("turn_ns") and c.get("sdk_ns") else None


def med_of(key: str) -> Callable[[dict[str, Any]], float | None]:
    """The median of a driver's list ``key`` (its repetitions)."""

    def get(r: dict[str, Any]) -> float | None:
        vals = [v for v in r[key] if v is not None]
        return statistics.median(vals) if vals else None

    return get


def paired_of(key: str, base: str) -> Callable[[dict[str, Any]], float | None]:
    """The median of ``key[i] / base[i]``: repetitions of one driver process, paired."""

    def get(r: dict[str, Any]) -> float | None:
        vals = [a / b for a, b in zip(r[key], r[base], strict=False) if a is not None and b]
        return statistics.median(vals) if vals else None

    return get


def ratio_of_medians(key: str, base: str) -> Callable[[dict[str, Any]], float | None]:
    """The median of ``key`` over the median of ``base`` (two batches of one process)."""

    def get(r: dict[str, Any]) -> float | None:
        a, b = med_of(key)(r), med_of(base)(r)
        return a / b if a is not None and b else None

    return get


def msgs_per_s(r: dict[str, Any]) -> float | None:
    t = r.get("prompt_to_result_s")
    return r["messages"] / t if t else None


METRICS: dict[str, list[tuple[str, str, Callable[[dict[str, Any]], float | None]]]] = {
    "handshake": [("spawn to first result", "ms", lambda r: r["handshake_s"] * 1000)],
    "tools_seq": [("p50 round trip", "us", p50_us), ("p99 round trip", "us", p99_us)],
    "tools_conc": [("throughput", "calls/s", calls_per_s)],
    "messages": [("throughput", "msgs/s", msgs_per_s)],
    "big": [
        ("prompt to result", "ms", lambda r: r["prompt_to_result_s"] * 1000),
        ("peak RSS growth", "MB", lambda r: r["peak_rss_growth_after_connect"] / MB),
    ],
    "hundred": [
        ("SDK RSS growth per idle session", "MB", lambda r: r["rss_per_idle_session"] / MB),
        ("messages/s over all sessions", "msgs/s", lambda r: r["msgs_per_s"]),
        ("event-loop lag p50", "ms", lambda r: r["lag_p50_ms"]),
        ("event-loop lag p99", "ms", lambda r: r["lag_p99_ms"]),
        ("connect all", "s", lambda r: r["connect_s"]),
    ],
    "tool_real": [
        ("SDK share of the turn", "%", lambda r: sdk_share(r) * 100),
        ("SDK time per tool call", "us", lambda r: statistics.median(r["cli"]["sdk_ns"]) / 1000),
        ("whole turn, prompt to result", "ms", lambda r: r["cli"]["turn_ns"] / 1e6),
    ],
    "warm_start": [
        ("cold query(): prompt to first message (system/init)", "ms", med_of("cold_init")),
        ("WarmQuery: prompt to first message", "ms", med_of("warm_init")),
        ("claimed spare: prompt to first message", "ms", med_of("spare_init")),
        ("WarmQuery / cold, first message", "x", paired_of("warm_init", "cold_init")),
        ("claimed spare / cold, first message", "x", paired_of("spare_init", "cold_init")),
        ("WarmQuery / cold, first assistant message", "x", paired_of("warm_asst", "cold_asst")),
        (
            "claimed spare / cold, first assistant message",
            "x",
            paired_of("spare_asst", "cold_asst"),
        ),
    ],
    "sandbox": [
        ("one-turn session, unsandboxed", "ms", med_of("plain_ms")),
        ("one-turn session in a bubblewrap sandbox", "ms", med_of("sandboxed_ms")),
        ("sandboxed / unsandboxed", "x", paired_of("sandboxed_ms", "plain_ms")),
    ],
    "batch_spares": [
        ("no spares: median task start to first message", "ms", med_of("cold_first_ms")),
        ("with spares: median task start to first message", "ms", med_of("spares_first_ms")),
        (
            "with / without spares, start to first message",
            "x",
            ratio_of_medians("spares_first_ms", "cold_first_ms"),
        ),
        ("no spares: task rate", "tasks/s", lambda r: r["cold_rate"]),
        ("with spares: task rate", "tasks/s", lambda r: r["spares_rate"]),
        ("with / without spares, task rate", "x", lambda r: r["spares_rate"] / r["cold_rate"]),
    ],
    "many": [
        ("wall", "s", lambda r: r["wall_s"]),
        ("SDK CPU per session", "ms", lambda r: r["cpu_s"] / r["sessions"] * 1000),
        (
            "SDK peak RSS growth per session",
            "MB",
            lambda r: r["peak_rss_growth"] / r["sessions"] / MB,
        ),
    ],
}


# ---------------------------------------------------------------------------- main


def machine() -> dict[str, str]:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f"{kb / 1024 / 1024:.1f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return {
        "nproc": str(os.cpu_count()),
        "cpu": model,
        "memory": mem,
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def version_of(python: str, module: str) -> str:
    code = f"import importlib.metadata as m; print(m.version({module!r}))"
    proc = subprocess.run([python, "-c", code], capture_output=True, text=True)
    return proc.stdout.strip() or "?"


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--ref-python", default=str(HERE / ".venv-ref" / "bin" / "python"))
    p.add_argument("--python", default=sys.executable, help="Python with ccwire installed")
    p.add_argument("--impls", default=",".join(IMPLS))
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--import-reps", type=int, default=30, help="fresh processes per import")
    p.add_argument(
        "--before",
        default=None,
        help="a ccwire src directory from before the optimisations, measured alongside",
    )
    p.add_argument("--smoke", action="store_true", help="tiny sizes, one round")
    p.add_argument("--only", default="", help="comma-separated scenario names")
    p.add_argument(
        "--merge",
        action="store_true",
        help="with --only: keep every other result of the JSON next to --out (the page of "
        "record), replace only these scenarios', and render the whole page again",
    )
    p.add_argument("--out", default=str(HERE / "RESULTS.md"))
    p.add_argument("--json", default=None, help="raw results (default: next to --out)")
    p.add_argument("--profile", action="store_true", help="profile ccwire's hot paths")
    p.add_argument(
        "--real-cli",
        default=None,
        help="the real Claude Code CLI, for handshake_real (offline, against a scripted model)",
    )
    args = p.parse_args(argv)

    impls = [i for i in args.impls.split(",") if i]
    global BEFORE_SRC
    if args.before:
        BEFORE_SRC = str(Path(args.before).resolve())
        if not (Path(BEFORE_SRC) / "ccwire" / "__init__.py").is_file():
            # else PYTHONPATH finds no ccwire there, and "before" silently runs this tree
            p.error(f"--before {args.before}: no ccwire package in it (give the src directory)")
        impls.append("before")
    if "ref" in impls and not Path(args.ref_python).exists():
        print(f"no reference SDK at {args.ref_python}: skipping it", file=sys.stderr)
        impls.remove("ref")
    rounds = 1 if args.smoke else args.rounds
    scenarios = [s for s in SCENARIOS if not args.only or s.name in args.only.split(",")]
    if not args.real_cli or args.smoke:
        scenarios = [s for s in scenarios if not s.real_cli]
    pythons = {
        "ccwire": args.python,
        "floor": args.python,
        "ref": args.ref_python,
        "before": args.python,
        "floor_anyio": args.python,
    }

    raw: dict[str, Any] = {"results": {}, "imports": {}}
    do_imports = not args.only or "import" in args.only.split(",")
    started = time.time()
    with contextlib.ExitStack() as stack:
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="ccwire-bench-")))
        cli = make_cli(work, args.python)
        if do_imports:
            reps = 3 if args.smoke else args.import_reps
            raw["imports"] = import_suite(pythons, impls, reps, work)
            print(f"import suite: {reps} repetitions", flush=True)
        real: tuple[Path, dict[str, str]] | None = None
        relay: tuple[Path, dict[str, str]] | None = None
        if any(s.real_cli for s in scenarios):
            real_cli = Path(args.real_cli).resolve()
            real = (real_cli, scripted_model_env(stack, work))
            relay = (make_relay(work, args.python), tool_model_env(stack, work, real_cli))
        for rnd in range(rounds):
            for sc in scenarios:
                if sc.rounds is not None and rnd >= sc.rounds and not args.smoke:
                    continue
                # the first connect also runs the floor plus anyio's first use
                anyio_too = sc.name == "handshake" and "floor" in impls
                names = [*impls, "floor_anyio"] if anyio_too else impls
                names = [i for i in names if sc.impls is None or i in sc.impls]
                if not names:
                    continue
                order = names[rnd % len(names) :] + names[: rnd % len(names)]
                for _ in range(1 if args.smoke else sc.repeat):
                    for impl in order:
                        if sc.name == "tool_real" and relay is not None:
                            r = run_driver(
                                pythons[impl], impl, sc, relay[0], work, args.smoke, relay[1]
                            )
                        elif sc.real_cli and real is not None:
                            r = run_driver(
                                pythons[impl], impl, sc, real[0], work, args.smoke, real[1]
                            )
                        else:
                            r = run_driver(pythons[impl], impl, sc, cli, work, args.smoke)
                        raw["results"].setdefault(sc.name, {}).setdefault(impl, []).append(r)
                        status = "ok" if r.get("ok") else f"FAILED: {r.get('error', '')[:120]}"
                        print(
                            f"round {rnd + 1}/{rounds} {sc.name:<14} {impl:<7} {status}",
                            flush=True,
                        )
        profiles = {}
        if args.profile:
            from profile_hot import profile_all  # noqa: PLC0415

            os.environ["BENCH_PYTHON"] = args.python
            profiles = profile_all(args.python, cli, work, smoke=args.smoke)

    raw["machine"] = machine()
    raw["date"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    raw["duration_s"] = time.time() - started
    raw["versions"] = {
        "ccwire": version_of(args.python, "ccwire"),
        "anyio": version_of(args.python, "anyio"),
    }
    if "ref" in impls:
        raw["versions"]["claude-agent-sdk"] = version_of(args.ref_python, "claude-agent-sdk")
    raw["argv"] = [sys.executable, *sys.argv] if argv is None else ["bench/run.py", *argv]
    raw["impls"] = impls
    raw["rounds"] = rounds
    raw["smoke"] = args.smoke
    raw["profiles"] = profiles

    from report import render, splice  # noqa: PLC0415

    out = Path(args.out)
    json_path = Path(args.json) if args.json else out.with_suffix(".json")
    slim = json.loads(json.dumps(raw))
    for per_impl in slim["results"].values():
        for runs in per_impl.values():
            for r in runs:
                cli_stats = r.get("cli", {})
                if "latencies_ns" in cli_stats:
                    lat = cli_stats.pop("latencies_ns")
                    cli_stats["p50_us"] = statistics.median(lat) / 1000
                    cli_stats["p99_us"] = sorted(lat)[int(len(lat) * 0.99)] / 1000
                r.pop("cli_all", None)
    if args.merge:
        raw, slim = merged(json_path, raw), merged(json_path, slim)
    json_path.write_text(json.dumps(slim, indent=1))
    out.write_text(splice(render(raw, METRICS, SCENARIOS)))
    print(f"wrote {out} and {json_path}")
    failed = [
        (name, impl)
        for name, per_impl in raw["results"].items()
        for impl, runs in per_impl.items()
        if impl == "ccwire" and not all(r.get("ok") for r in runs)
    ]
    if failed:
        print(f"ccwire runs failed: {failed}", file=sys.stderr)
        return 1
    return 0


def merged(path: Path, new: dict[str, Any]) -> dict[str, Any]:
    """The results of record at ``path`` with ``new``'s scenarios replaced (``--merge``);
    the page says which scenarios were run again, when, and how."""
    if not path.exists():
        return new
    old: dict[str, Any] = json.loads(path.read_text())
    old["results"].update(new["results"])
    rerun = {name: {"date": new["date"], "argv": new["argv"]} for name in new["results"]}
    old["merged"] = {**old.get("merged", {}), **rerun}
    return old


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    sys.exit(main())
