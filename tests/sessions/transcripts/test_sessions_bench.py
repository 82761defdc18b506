"""`bench/sessions_bench.py` still runs, on a few transcripts (figures are not checked)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from .conftest import ROOT


def test_sessions_bench_smoke(ref_python: str, tmp_path: Path) -> None:
    out = tmp_path / "RESULTS.md"
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "sessions_bench.py"),
            "--ref-python",
            ref_python,
            "--count",
            "60",
            "--rounds",
            "1",
            "--repeat",
            "1",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = out.read_text()
    assert "| `list_sessions()`: all " in report
    assert "identical results" in report
