"""The benchmark harness keeps working: a smoke run (tiny sizes, one round) of
``bench/run.py`` over ccwire and the floor, in a subprocess as ``make bench`` runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_bench_smoke_run(tmp_path: Path) -> None:
    out = tmp_path / "RESULTS.md"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "run.py"), "--smoke", "--impls", "ccwire,floor",
         "--out", str(out)],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    raw = json.loads(out.with_suffix(".json").read_text())
    assert raw["smoke"] is True
    for scenario, per_impl in raw["results"].items():
        for impl in ("ccwire", "floor"):
            runs = per_impl[impl]
            assert runs and all(r["ok"] for r in runs), (scenario, impl, runs)
    assert {"handshake", "tools_seq", "messages", "big_100MB", "many_10"} <= set(raw["results"])
    page = out.read_text()
    assert "SMOKE RUN" in page and "## Targets" in page
