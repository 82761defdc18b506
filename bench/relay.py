"""A timing relay between an SDK and the real Claude Code CLI: stdlib only.

``python relay.py ARGS...`` starts ``$BENCH_REAL_CLI ARGS...`` and copies lines both
ways unchanged. It timestamps, with ``time.perf_counter_ns``:

* each ``tools/call`` request: from the moment the relay has read the CLI's line (just
  before handing it to the SDK) to the moment the SDK's answer line reaches the relay
  (the SDK's share: its read, decode, tool call, encode and write, plus the relay's
  write and one pipe hop each way);
* the turn: from the SDK's prompt line to the CLI's ``result`` line (the whole round
  trip of the user's turn, model requests included).

Statistics go to ``BENCH_SPEC["out"]`` (JSON) when the turn ends and again at exit.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time

_now = time.perf_counter_ns


def main() -> int:
    spec = json.loads(os.environ.get("BENCH_SPEC") or "{}")
    out = spec.get("out")
    cli = os.environ["BENCH_REAL_CLI"]
    proc = subprocess.Popen([cli, *sys.argv[1:]], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    pending: dict[str, int] = {}  # request_id -> when the request went to the SDK
    stats: dict[str, list[int] | int] = {"sdk_ns": [], "turn_ns": 0, "calls": 0}
    marks = {"prompt": 0}
    lock = threading.Lock()

    def save() -> None:
        if out:
            with lock, open(out, "w", encoding="utf-8") as f:
                json.dump(stats, f)

    def from_sdk() -> None:
        sdk_in, cli_in = sys.stdin.buffer, proc.stdin
        assert cli_in is not None
        for line in sdk_in:
            t = _now()
            if pending and b'"control_response"' in line:
                rid = json.loads(line).get("response", {}).get("request_id")
                with lock:
                    t0 = pending.pop(rid, None)
                    if t0 is not None:
                        stats["sdk_ns"].append(t - t0)  # type: ignore[union-attr]
            elif not marks["prompt"] and b'"type":"user"' in line.replace(b" ", b""):
                marks["prompt"] = t
            try:
                cli_in.write(line)
                cli_in.flush()
            except BrokenPipeError:
                break
        with contextlib.suppress(BrokenPipeError):
            cli_in.close()

    threading.Thread(target=from_sdk, daemon=True).start()
    sdk_out = sys.stdout.buffer
    for line in proc.stdout:
        if b'"tools/call"' in line:
            frame = json.loads(line)
            if frame.get("type") == "control_request":
                with lock:  # registered before the SDK can see the line
                    pending[frame["request_id"]] = _now()
                    stats["calls"] += 1  # type: ignore[operator]
        elif b'"type":"result"' in line and marks["prompt"] and not stats["turn_ns"]:
            stats["turn_ns"] = _now() - marks["prompt"]
            save()
        sdk_out.write(line)
        sdk_out.flush()
    code = proc.wait()
    save()
    return code


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (BrokenPipeError, KeyboardInterrupt):
        sys.exit(1)
