"""``ccwire serve`` on stdio stopped by a signal (a real ``python -m ccwire serve``
process): SIGTERM or Ctrl-C stops the reading of requests, the calls running get
``--drain-timeout`` to finish, those cut off are answered with a -32603, and the exit
is the signal's (130 for Ctrl-C, SIGTERM's own: 143 in a shell) or 1 after a loss."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.jsonrpc import initialize, line, tools_call

ROOT = Path(__file__).resolve().parents[2]
BOUND = 60

SERVER_MODULE = """
import sys
import anyio
from ccwire import create_sdk_mcp_server, tool

def started(name):
    sys.stderr.write(name + ": started\\n")
    sys.stderr.flush()

@tool("gated", "Returns the line written to its gate (a FIFO)", {"gate": str})
def gated(args):
    started("gated")
    with open(args["gate"]) as gate:
        return "released: " + gate.readline().strip()

@tool("endless", "Never returns", {})
async def endless(args):
    started("endless")
    await anyio.sleep_forever()

@tool("stubborn", "Ignores its cancellation for an hour", {})
async def stubborn(args):
    started("stubborn")
    with anyio.CancelScope(shield=True):
        await anyio.sleep(3600)

server = create_sdk_mcp_server("stopping", tools=[gated, endless, stubborn])
"""


def _signals_as_from_a_terminal() -> None:
    """In the child: a process started in the background ignores SIGINT."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@contextmanager
def serving(tmp_path: Path, *args: str) -> Iterator[subprocess.Popen[bytes]]:
    """``python -m ccwire serve ARGS stopping_server:server``, initialized."""
    (tmp_path / "stopping_server.py").write_text(SERVER_MODULE)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "ccwire", "serve", *args, "stopping_server:server"],
        cwd=tmp_path, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, preexec_fn=_signals_as_from_a_terminal,
    )  # fmt: skip
    try:
        send(proc, initialize())
        assert proc.stdout is not None
        assert json.loads(proc.stdout.readline())["id"] == 0
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(BOUND)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def send(proc: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(line(message))
    proc.stdin.flush()


def stderr_line(proc: subprocess.Popen[bytes]) -> str:
    assert proc.stderr is not None
    return proc.stderr.readline().decode()


def call_running(proc: subprocess.Popen[bytes], name: str, arguments: dict[str, Any]) -> None:
    send(proc, tools_call(1, name, arguments))
    assert stderr_line(proc) == f"{name}: started\n"


def stop(proc: subprocess.Popen[bytes], signum: int) -> None:
    proc.send_signal(signum)
    said = stderr_line(proc)
    assert said.startswith(f"ccwire: stopping ({signal.Signals(signum).name})"), said


def answers(stdout: bytes) -> dict[Any, dict[str, Any]]:
    return {m["id"]: m for m in map(json.loads, stdout.splitlines())}


@pytest.mark.parametrize(
    ("signum", "code"), [(signal.SIGTERM, -signal.SIGTERM), (signal.SIGINT, 130)]
)
def test_a_call_running_when_stopped_finishes_and_is_answered(
    tmp_path: Path, signum: int, code: int
) -> None:
    """The call running when the signal came finishes (its gate released only once
    the server said it stops) and its answer is written; a request sent after the
    signal is not read.  A clean stop ends as the signal does: Ctrl-C with 130,
    SIGTERM with SIGTERM itself (143 in a shell)."""
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    release = os.open(gate, os.O_RDWR)  # never blocks, and keeps the FIFO open
    try:
        with serving(tmp_path) as proc:
            call_running(proc, "gated", {"gate": str(gate)})
            stop(proc, signum)
            send(proc, {"jsonrpc": "2.0", "id": 2, "method": "ping"})  # not read any more
            os.write(release, b"go\n")
            stdout, stderr = proc.communicate(timeout=BOUND)
            assert proc.returncode == code, stderr
    finally:
        os.close(release)
    answered = answers(stdout)
    assert sorted(answered) == [1], answered
    assert answered[1]["result"]["content"] == [{"type": "text", "text": "released: go"}]


def test_a_call_that_never_returns_is_cut_off_after_the_drain_timeout(tmp_path: Path) -> None:
    with serving(tmp_path, "--drain-timeout", "0.2") as proc:
        call_running(proc, "endless", {})
        stop(proc, signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=BOUND)
        assert proc.returncode == 1, stderr
    answer = answers(stdout)[1]
    assert answer["error"]["code"] == -32603 and "shutting down" in answer["error"]["message"]
    assert "ccwire: error: stopped" in stderr.decode() and "0.2 s later" in stderr.decode()


def test_a_second_signal_cuts_the_calls_off_at_once(tmp_path: Path) -> None:
    """A drain timeout far longer than the test's bound: only the second signal ends it."""
    with serving(tmp_path, "--drain-timeout", "3600") as proc:
        call_running(proc, "endless", {})
        stop(proc, signal.SIGTERM)
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=BOUND)
        assert proc.returncode == 1, stderr
    assert answers(stdout)[1]["error"]["code"] == -32603


@pytest.mark.parametrize("how", ["signal", "end of stdin"])
def test_a_call_that_ignores_its_cancellation_does_not_hold_the_server_for_ever(
    tmp_path: Path, how: str
) -> None:
    """Cut off at the end of the drain, a tool that shields itself never ends: the server
    exits without it `STUCK_SECONDS` (5 s) later, with 1 and a line saying why."""
    with serving(tmp_path, "--drain-timeout", "0.2") as proc:
        call_running(proc, "stubborn", {})
        assert proc.stdin is not None and proc.stderr is not None
        if how == "signal":
            stop(proc, signal.SIGTERM)
        proc.stdin.close()
        code = proc.wait(BOUND)
        said = proc.stderr.read().decode()
        assert code == 1, said
    assert "had not ended 5 s later (a tool that ignores its cancellation)" in said


def test_a_client_that_closed_stdout_ends_the_server_with_141(tmp_path: Path) -> None:
    """The client closed its end of stdout, its stdin still open: the next answer cannot
    be written, so the server stops reading, cuts the call running off and exits as a
    command whose output was closed does (141), without a traceback."""
    with serving(tmp_path) as proc:
        call_running(proc, "endless", {})
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()
        send(proc, {"jsonrpc": "2.0", "id": 2, "method": "ping"})  # its answer: EPIPE
        assert proc.wait(BOUND) == 141
        assert proc.stderr.read() == b""
