"""The benchmark harness keeps working: a smoke run (tiny sizes, one round) of
``bench/run.py`` over ccwire and the floor, in a subprocess as ``make bench`` runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bench_smoke_run(tmp_path: Path) -> None:
    out = tmp_path / "RESULTS.md"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "run.py"), "--smoke", "--impls", "ccwire,floor",
         "--out", str(out), "--before", str(ROOT / "src"), "--profile", "--only",
         "import,handshake,tools_seq,tools_conc,messages,big_100MB,many_10,sessions_100"],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    raw = json.loads(out.with_suffix(".json").read_text())
    assert raw["smoke"] is True
    for scenario, per_impl in raw["results"].items():
        for impl in ("ccwire", "floor", "before"):
            runs = per_impl[impl]
            assert runs and all(r["ok"] for r in runs), (scenario, impl, runs)
    assert {"handshake", "tools_seq", "messages", "big_100MB", "many_10", "sessions_100"} <= set(
        raw["results"]
    )
    anyio_floor = raw["results"]["handshake"]["floor_anyio"]  # the floor + anyio's first use
    assert anyio_floor and all(r["ok"] and r["handshake_s"] > 0 for r in anyio_floor)
    assert "floor_anyio" not in raw["results"]["messages"]  # the first connect only
    hundred = raw["results"]["sessions_100"]["ccwire"][0]
    assert hundred["messages"] == 3 * 5 and hundred["rss_per_idle_session"] > 0
    imports = raw["imports"]
    assert {"usual", "anyio_asyncio", "asyncio_usual", "bare", "before_usual"} <= set(imports)
    assert all(len(v["wall_s"]) == 3 and len(v["import_s"]) == 3 for v in imports.values())
    assert imports["bare"]["heavy"] == []  # `import ccwire` pulls no heavy package
    profiles = raw["profiles"]  # profiled runs of the driver that succeeded, not start-up
    assert {"tools_seq (20 calls)", "messages (50 x 200 B)", "import"} <= set(profiles)
    for name, prof in profiles.items():
        assert "error" not in prof, (name, prof)
    assert any("ccwire." in area for area, _ in profiles["tools_seq (20 calls)"]["areas"])
    page = out.read_text()
    assert "SMOKE RUN" in page and "## Targets" in page and "ccwire / before" in page
    assert "guard rail (fake CLI)" in page and "<= 2 MB RSS per idle session" in page
    assert "as an asyncio program runs it" in page  # the usual import loads no asyncio
    for target in ("usual import", "tools/call p50", "16 in flight", "100 sessions", "100 MB"):
        assert target in page, target
    assert "profiling failed" not in page and "**tools_seq (20 calls)**" in page
