"""Bytecodes executed per tool call or per message, by function: a count, not a timing.

``python bench/opcodes.py SRC SCENARIO SPEC N1 N2 [TOP]``

Runs ``bench/driver.py`` (ccwire, the fake CLI) twice, with ``n`` = N1 and N2, under a
tracer that counts every bytecode each function executes (``sys.settrace`` with
``f_trace_opcodes``; its own bytecodes only, not its callees'), and prints the
difference over N2 - N1: what one more item costs, function by function, with the
start-up and the connect cancelled out. The counts do not depend on the machine's load
(only the batching of lines read together does, a little, at 16 in flight), so a change
of a few bytecodes per item shows. cProfile's call counts are no substitute: each
resumption of a coroutine counts as a call there. Bytecodes are not instructions (a
bytecode that calls into C, such as ``json``, costs a thousand times another):
callgrind gives those. Slow: about 20 s per 1,000 tool calls.

Example: ``python bench/opcodes.py src tools_conc '{"concurrency": 16}' 1000 3000``.
"""

from __future__ import annotations

import collections
import json
import os
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _trace(out: str, argv: list[str]) -> None:
    """Run ``argv`` (a script and its arguments) here, counting bytecodes into ``out``."""
    import runpy
    import threading

    counts: collections.Counter[object] = collections.Counter()

    def local(frame, event, arg):  # type: ignore[no-untyped-def]
        if event == "opcode":
            counts[frame.f_code] += 1
        return local

    def enter(frame, event, arg):  # type: ignore[no-untyped-def]
        frame.f_trace_opcodes = True
        return local

    sys.argv = argv
    sys.settrace(enter)
    threading.settrace(enter)
    try:
        runpy.run_path(argv[0], run_name="__main__")
    finally:
        sys.settrace(None)
        by_name: collections.Counter[tuple[str, int, str]] = collections.Counter()
        for code, n in counts.items():
            by_name[(code.co_filename, code.co_firstlineno, code.co_qualname)] += n  # type: ignore[attr-defined]
        Path(out).write_bytes(pickle.dumps(dict(by_name)))


def _run(src: str, scenario: str, spec: dict[str, Any], n: int, work: Path) -> dict[Any, float]:
    cli = work / "claude"
    if not cli.exists():
        cli.write_text(f'#!/bin/sh\nexec {sys.executable} -I -S {HERE / "fake_cli.py"} "$@"\n')
        cli.chmod(0o755)
    out = work / f"ops-{n}.pickle"
    spec_n = json.dumps({**spec, "n": n})
    driver = [str(HERE / "driver.py"), "--impl", "ccwire", "--scenario", scenario,
              "--cli", str(cli), "--work", str(work), "--spec", spec_n]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": src}
    proc = subprocess.run(
        [sys.executable, __file__, "--trace", str(out), *driver],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if '"ok": true' not in proc.stdout:
        raise SystemExit(f"the driver failed (n={n}): {proc.stdout[-500:]}{proc.stderr[-500:]}")
    counts: dict[Any, float] = pickle.loads(out.read_bytes())
    return counts


def main() -> None:
    if sys.argv[1] == "--trace":
        _trace(sys.argv[2], sys.argv[3:])
        return
    src, scenario, spec = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    n1, n2 = int(sys.argv[4]), int(sys.argv[5])
    top = int(sys.argv[6]) if len(sys.argv) > 6 else 40
    with tempfile.TemporaryDirectory() as tmp:
        a = _run(src, scenario, spec, n1, Path(tmp))
        b = _run(src, scenario, spec, n2, Path(tmp))
    per = {k: (v - a.get(k, 0)) / (n2 - n1) for k, v in b.items()}
    print(f"bytecodes per item: {sum(per.values()):.0f}")
    for (path, line, name), count in sorted(per.items(), key=lambda kv: -kv[1])[:top]:
        where = path.split("/ccwire/")[-1] if "/ccwire/" in path else "/".join(path.split("/")[-2:])
        print(f"{count:8.1f}  {where}:{line} {name}")


if __name__ == "__main__":
    main()
