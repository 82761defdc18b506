"""Compare source trees step by step: one driver scenario, fresh processes, interleaved.

``python bench/steps.py SCENARIO SPEC ROUNDS LABEL=SRC [LABEL=SRC ...]``

Each ``SRC`` is a directory holding a ``ccwire`` package (``floor`` for the floor
driver, ``floor+anyio`` for the floor that also pays anyio's first use while the CLI
boots: `floor.touch_anyio`). Every round runs ``bench/driver.py`` once per tree, the
order rotating each round; the metric is the scenario's own (the handshake in ms, the
p50 round trip in us for ``tools_seq``, calls/s for ``tools_conc``, messages/s over 100
sessions for ``hundred``, prompt to result in ms otherwise).
Printed: each tree's median, and the median of its ratios to the first tree paired by
round. Bytecode is compiled first, so that no tree pays for compiling.
"""

from __future__ import annotations

import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def fake_cli(work: Path) -> str:
    path = work / "claude"
    path.write_text(f'#!/bin/sh\nexec {sys.executable} -I -S {HERE / "fake_cli.py"} "$@"\n')
    path.chmod(0o755)
    return str(path)


def metric(scenario: str, d: dict[str, Any]) -> float:
    if scenario == "hundred":
        return float(d["msgs_per_s"])
    cli = d.get("cli") or {}
    if "latencies_ns" in cli:
        lat = sorted(cli["latencies_ns"])
        return float(lat[len(lat) // 2] / 1000)
    if "elapsed_ns" in cli:
        return float(cli["calls"] / (cli["elapsed_ns"] / 1e9))
    if scenario == "handshake":
        return float(d["handshake_s"] * 1000)
    return float(d["prompt_to_result_s"] * 1000)


def main() -> None:
    scenario, spec, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    trees = [arg.split("=", 1) for arg in sys.argv[4:]]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for _, src in trees:
        if not src.startswith("floor"):
            compileall.compile_dir(src, quiet=1)
    results: dict[str, list[float]] = {label: [] for label, _ in trees}
    with tempfile.TemporaryDirectory() as tmp:
        cli = fake_cli(Path(tmp))
        for r in range(rounds):
            k = r % len(trees)
            for label, src in trees[k:] + trees[:k]:
                impl = "floor" if src.startswith("floor") else "ccwire"
                run_env = {**env, "PYTHONPATH": str(ROOT / "src") if impl == "floor" else src}
                if src == "floor+anyio":
                    run_env["BENCH_FLOOR_ANYIO"] = "1"
                cmd = [sys.executable, str(HERE / "driver.py"), "--impl", impl, "--scenario",
                       scenario, "--cli", cli, "--work", tmp, "--spec", spec]  # fmt: skip
                if scenario == "hundred":
                    cmd += ["--sessions", "100"]
                out = subprocess.run(cmd, env=run_env, capture_output=True, text=True, check=True)
                d = json.loads(out.stdout.strip().splitlines()[-1])
                if not d.get("ok"):
                    raise SystemExit(f"{label}: {d.get('error')}")
                results[label].append(metric(scenario, d))
    first = results[trees[0][0]]
    for label, values in results.items():
        paired = statistics.median(a / b for a, b in zip(values, first, strict=True))
        q1, _, q3 = statistics.quantiles(values, n=4) if len(values) > 1 else (values * 3)
        print(f"{label:12s} median {statistics.median(values):10.2f}   "
              f"paired vs {trees[0][0]}: {paired:.3f}   n={len(values)}   "
              f"quartiles {q1:.2f} .. {q3:.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
