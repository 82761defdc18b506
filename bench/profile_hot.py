"""Profile ccwire's hot paths with pyinstrument and summarise where the time goes.

The driver runs under ccwire's own Python (the one ``make bench`` runs ccwire with,
where the ``dev`` extra installs pyinstrument), with ``src/`` first on ``PYTHONPATH``, so
the profiled code is this checkout with its own dependencies. A profile of a driver run
that failed is reported as a failure, never summarised: it would only show start-up.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

PROFILES = {
    "tools_seq (4000 calls)": ("tools_seq", {"n": 4000}),
    "tools_conc (8000 calls, 16 in flight)": ("tools_conc", {"n": 8000, "concurrency": 16}),
    "messages (40000 x 200 B)": ("messages", {"n": 40000, "size": 200}),
    "big (100 MB)": ("big", {"size": 100_000_000}),
}
SMOKE_PROFILES = {  # the same paths, tiny (``run.py --smoke --profile``)
    "tools_seq (20 calls)": ("tools_seq", {"n": 20}),
    "messages (50 x 200 B)": ("messages", {"n": 50, "size": 200}),
}


def area(frame: dict[str, Any], parent: str) -> str:
    """The area a frame's self time is charged to."""
    path = frame.get("file_path") or ""
    fn = frame.get("function") or ""
    if path == "<built-in>":
        if fn.endswith(".poll") or fn == "select":
            return "waiting in epoll (idle or blocked on the CLI)"
        return parent
    if "importlib" in path or fn == "<module>":
        return "imports (start-up)"
    if "/ccwire/" in path:
        return "ccwire." + Path(path).stem
    if "/asyncio/" in path or path.endswith("selectors.py"):
        return "asyncio event loop"
    if "/anyio/" in path or "sniffio" in path:
        return "anyio (tasks, cancel scopes, streams)"
    if "/json/" in path:
        return "json"
    if path.startswith("bench/") or "/bench/" in path:
        return "benchmark driver"
    return "other (" + Path(path).name + ")"


def summarise(tree: dict[str, Any]) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
    areas: dict[str, float] = defaultdict(float)
    funcs: dict[str, float] = defaultdict(float)
    total = tree["root_frame"]["time"] or 1.0

    def walk(frame: dict[str, Any], parent_area: str) -> None:
        mine = area(frame, parent_area)
        children = frame.get("children") or []
        self_time = frame["time"] - sum(c["time"] for c in children)
        if self_time > 0:
            areas[mine] += self_time
            name = f"{frame['function']} ({frame.get('file_path_short')}:{frame.get('line_no')})"
            funcs[name] += self_time
        for c in children:
            walk(c, mine)

    walk(tree["root_frame"], "other")
    top_areas = sorted(((a, t / total * 100) for a, t in areas.items()), key=lambda x: -x[1])
    top_funcs = sorted(((f, t / total * 100) for f, t in funcs.items()), key=lambda x: -x[1])
    return [a for a in top_areas if a[1] >= 0.5], top_funcs[:15]


USUAL = (
    "from ccwire import ClaudeSDKClient, ClaudeAgentOptions, tool, create_sdk_mcp_server, "
    "query, HookMatcher"
)


def import_profile(python: str, work: Path, runs: int = 5) -> dict[str, Any]:
    """Where the usual import's time goes: ``python -X importtime`` after ``import anyio,
    asyncio`` (bytecode cached), the modules it loads beyond those, by self time
    (median of ``runs``)."""
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT / "src"),
        "PYTHONPYCACHEPREFIX": str(work / "pycache"),
    }
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    code = f"import anyio, asyncio; {USUAL}"
    per_module: dict[str, list[int]] = defaultdict(list)
    for _ in range(runs + 1):  # the first fills the bytecode cache
        proc = subprocess.run(
            [python, "-X", "importtime", "-c", code], env=env, capture_output=True, text=True
        )
        rows = [ln.split("|") for ln in proc.stderr.splitlines() if ln.startswith("import time:")]
        rows = [r for r in rows if "self" not in r[0]]
        names = [r[2].rstrip() for r in rows]
        top = [
            i for i, n in enumerate(names) if n.strip() == "asyncio" and not n[1:].startswith(" ")
        ]
        for r in rows[top[0] + 1 :] if top else rows:
            per_module[r[2].strip()].append(int(r[0].split(":")[1]))
    med = {m: sorted(v)[len(v) // 2] for m, v in per_module.items() if len(v) > runs // 2}
    total = sum(med.values()) or 1
    ours = sum(v for m, v in med.items() if m.startswith("ccwire"))
    ranked = sorted(med.items(), key=lambda kv: -kv[1])
    return {
        "command": f'`python -X importtime -c "import anyio, asyncio; {USUAL}"`',
        "modules": len(med),
        "total_ms": total / 1000,
        "ccwire_ms": ours / 1000,
        "top": [(m, us / 1000, us / total * 100) for m, us in ranked[:20]],
    }


def driver_failure(proc: subprocess.CompletedProcess[str]) -> str | None:
    """Why a profiled driver run failed, or ``None``: the driver prints one JSON line
    with ``"ok"`` (and exits 0 even when the measurement failed)."""
    if proc.returncode != 0:
        return proc.stderr[-500:] or f"exit {proc.returncode}"
    lines = proc.stdout.strip().splitlines()
    try:
        verdict = json.loads(lines[-1]) if lines else None
    except ValueError:
        verdict = None
    if not isinstance(verdict, dict):
        return f"no verdict from the driver: {proc.stdout[-300:]!r}"
    if not verdict.get("ok"):
        return str(verdict.get("error", "the driver reported a failure"))[:500]
    return None


def profile_all(
    python: str, cli: Path, work: Path, *, smoke: bool = False
) -> dict[str, Any]:
    """Profile each scenario of :data:`PROFILES` (`SMOKE_PROFILES` with ``smoke``) with
    ``python`` (ccwire's); returns summaries by name."""
    out: dict[str, Any] = {}
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    for name, (scenario, spec) in (SMOKE_PROFILES if smoke else PROFILES).items():
        target = work / f"profile-{scenario}.json"
        target.unlink(missing_ok=True)
        driver = [
            "bench/driver.py",
            "--impl",
            "ccwire",
            "--scenario",
            scenario,
            "--cli",
            str(cli),
            "--work",
            str(work),
            "--spec",
            json.dumps(spec),
        ]
        cmd = [python, "-m", "pyinstrument", "-i", "0.0002", "-r", "json", "-o", str(target)]
        proc = subprocess.run(
            [*cmd, *driver], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900
        )
        failure = driver_failure(proc)
        if failure is None and not target.exists():
            failure = "pyinstrument wrote no profile"
        if failure is not None:
            out[name] = {"error": failure}
            continue
        tree = json.loads(target.read_text())
        areas, top = summarise(tree)
        out[name] = {
            "command": f"`pyinstrument -i 0.0002 {' '.join(driver)}`",
            "duration_s": tree["duration"],
            "areas": areas,
            "top": top,
        }
        print(f"profiled {name}", flush=True)
    try:
        out["import"] = import_profile(os.environ.get("BENCH_PYTHON", "python3"), work)
    except (OSError, IndexError, ValueError) as exc:
        out["import"] = {"error": repr(exc)}
    return out
