"""Tests of SubprocessTransport against small Python child processes (not the real CLI)."""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from ccwire._core.errors import (
    CcwireError,
    CLIConnectionError,
    CLINotFoundError,
    MessageDecodeError,
    MessageEncodeError,
    ProcessError,
)
from ccwire._transport import subprocess as _subprocess_transport
from ccwire._transport.subprocess import SubprocessTransport
from ccwire._wire.framing import encode_line

pytestmark = pytest.mark.anyio

LIMIT = 15  # seconds; every test is bounded by this

ECHO = """
import sys
for line in sys.stdin.buffer:
    sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()
"""


def py(code: str) -> list[str]:
    return [sys.executable, "-c", code]


@asynccontextmanager
async def running(argv: list[str], **kwargs: Any) -> AsyncIterator[SubprocessTransport]:
    """Start a transport in a task group, and always aclose it."""
    transport = SubprocessTransport(argv, **kwargs)
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg:
            await transport.start(tg)
            try:
                yield transport
            finally:
                await transport.aclose()


def assert_reaped(pid: int) -> None:
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


async def test_echo_round_trip() -> None:
    async with running(py(ECHO)) as t:
        assert t.exit_info is None
        messages = [{"type": "user", "n": i, "text": "héllo\n€"} for i in range(3)]
        for message in messages:
            await t.send_line(encode_line(message))
        received = [await t.receive_line() for _ in messages]
        assert [json.loads(line or b"") for line in received] == messages
        await t.end_input()
        await t.end_input()  # idempotent
        assert await t.receive_line() is None
        assert await t.receive_line() is None  # stays at the end
        assert t.exit_info is not None
        assert t.exit_info.returncode == 0
        pid = t.pid
    assert pid is not None
    assert_reaped(pid)


@pytest.mark.parametrize("sizes", ["large", "mixed"])
async def test_concurrent_senders_never_interleave(sizes: str) -> None:
    senders, per_sender = 20, 10
    received: list[bytes] = []
    async with running(py(ECHO)) as t:

        async def sender(k: int) -> None:
            for i in range(per_sender):
                # large: more than a pipe buffer (the writer task writes them); mixed:
                # every other line fits in PIPE_BUF (written inline when nothing else is)
                small = sizes == "mixed" and (k + i) % 2 == 0
                pad = "x" * (10 * k + i if small else 50_000 + 997 * k + 13 * i)
                await t.send_line(encode_line({"k": k, "i": i, "pad": pad}))

        async def reader() -> None:
            while (line := await t.receive_line()) is not None:
                received.append(line)

        async with anyio.create_task_group() as tg:
            tg.start_soon(reader)
            async with anyio.create_task_group() as senders_tg:
                for k in range(senders):
                    senders_tg.start_soon(sender, k)
            await t.end_input()
    decoded = [json.loads(line) for line in received]
    assert sorted((d["k"], d["i"]) for d in decoded) == [
        (k, i) for k in range(senders) for i in range(per_sender)
    ]
    for k in range(senders):  # each sender's lines keep their order
        assert [d["i"] for d in decoded if d["k"] == k] == list(range(per_sender))


async def test_cancelled_sender_does_not_tear_its_line(tmp_path: Path) -> None:
    """A send cancelled while the pipe is full still writes its whole line."""
    fifo = tmp_path / "go"
    os.mkfifo(fifo)
    child = f"import sys\nopen({str(fifo)!r}, 'rb').read(1)\n{ECHO}"
    big = encode_line({"big": "b" * 1_000_000})
    async with running(py(child)) as t:
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tg:
                tg.start_soon(t.send_line, big)
                await anyio.wait_all_tasks_blocked()
                scope.cancel()
        go = os.open(fifo, os.O_RDWR)  # the child waits for one byte here
        try:
            os.write(go, b"!")
            await t.send_line(encode_line({"small": 1}))
            await t.end_input()
            lines = [await t.receive_line(), await t.receive_line()]
        finally:
            os.close(go)
    assert lines == [big[:-1], b'{"small":1}']


async def test_cancelled_small_sender_writes_all_or_nothing(tmp_path: Path) -> None:
    """A small line sent while the pipe is full and then cancelled is never torn."""
    fifo = tmp_path / "go"
    os.mkfifo(fifo)
    child = f"import sys\nopen({str(fifo)!r}, 'rb').read(1)\n{ECHO}"
    fill = [encode_line({"fill": i, "pad": "f" * 3000}) for i in range(40)]  # > 64 KiB
    small = encode_line({"small": "s" * 100})
    async with running(py(child)) as t:
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tg:
                for line in fill:
                    tg.start_soon(t.send_line, line)
                    await anyio.wait_all_tasks_blocked()
                tg.start_soon(t.send_line, small)
                await anyio.wait_all_tasks_blocked()
                scope.cancel()
        go = os.open(fifo, os.O_RDWR)
        try:
            os.write(go, b"!")
            await t.send_line(encode_line({"last": 1}))
            await t.end_input()
            lines: list[bytes] = []
            while (got := await t.receive_line()) is not None:
                lines.append(got)
        finally:
            os.close(go)
    decoded = [json.loads(x) for x in lines]  # every line arrived whole
    assert decoded[-1] == {"last": 1}
    fills = [d for d in decoded if "fill" in d]  # the ones written, in order
    assert fills == [json.loads(f) for f in fill[: len(fills)]]


async def test_exit_zero_returns_none() -> None:
    async with running(py("print('{\"a\": 1}')")) as t:
        assert await t.receive_line() == b'{"a": 1}'
        assert await t.receive_line() is None
        assert t.exit_info is not None
        assert t.exit_info.returncode == 0


async def test_stderr_callback_and_tail_in_process_error() -> None:
    child = """
import sys
for i in range(200):
    sys.stderr.write(f"err line {i}\\n")
sys.stderr.write("last words")
sys.exit(3)
"""
    seen: list[str] = []
    async with running(py(child), stderr_callback=seen.append, stderr_tail_bytes=100) as t:
        with pytest.raises(ProcessError) as info:
            await t.receive_line()
        with pytest.raises(ProcessError):
            await t.receive_line()  # the end stays the end
    err = info.value
    assert err.exit_code == 3
    assert str(err.stderr).endswith("err line 199\nlast words")
    assert len(str(err.stderr)) <= 100
    assert "err line 0\n" not in str(err.stderr)
    assert "exit code: 3" in str(err)
    assert seen == [f"err line {i}" for i in range(200)] + ["last words"]
    assert t.exit_info is not None
    assert t.exit_info.returncode == 3
    assert t.exit_info.stderr_tail == err.stderr


async def test_failing_stderr_callback_keeps_draining(caplog: pytest.LogCaptureFixture) -> None:
    child = "import sys\nsys.stderr.write('a\\nb\\nc\\n')\nsys.stderr.flush()\nsys.exit(1)"
    calls: list[str] = []

    def callback(line: str) -> None:
        calls.append(line)
        raise RuntimeError("callback broke")

    with caplog.at_level(logging.ERROR, logger="ccwire"):
        async with running(py(child), stderr_callback=callback) as t:
            with pytest.raises(ProcessError) as info:
                await t.receive_line()
    assert calls == ["a", "b", "c"]
    assert info.value.stderr == "a\nb\nc"
    assert len([r for r in caplog.records if "stderr callback" in r.getMessage()]) == 1


async def test_killed_mid_stream() -> None:
    child = """
import os, signal, sys
sys.stdout.buffer.write(b'{"a":1}\\n{"partial')
sys.stdout.buffer.flush()
os.kill(os.getpid(), signal.SIGKILL)
"""
    async with running(py(child)) as t:
        assert await t.receive_line() == b'{"a":1}'
        assert await t.receive_line() == b'{"partial'
        with pytest.raises(ProcessError) as info:
            await t.receive_line()
    assert info.value.exit_code == -9


async def test_50mb_of_stderr_does_not_block_stdout() -> None:
    child = """
import sys
chunk = (b"e" * 1023 + b"\\n") * 1024
for _ in range(50):
    sys.stderr.buffer.write(chunk)
sys.stderr.buffer.flush()
sys.stdout.write('{"done":true}\\n')
sys.stdout.flush()
sys.stdin.read()
"""
    async with running(py(child), stderr_tail_bytes=4096) as t:
        assert await t.receive_line() == b'{"done":true}'
        await t.end_input()
        assert await t.receive_line() is None
        assert t.exit_info is not None
        assert 0 < len(t.exit_info.stderr_tail) <= 4096


async def test_20mb_line_round_trip() -> None:
    line = encode_line({"type": "user", "blob": "z€" * (10 * 1024 * 1024)})
    assert len(line) > 20 * 1024 * 1024
    async with running(py(ECHO)) as t, anyio.create_task_group() as tg:
        tg.start_soon(t.send_line, line)
        assert await t.receive_line() == line[:-1]


async def test_aclose_escalates_and_reaps() -> None:
    child = """
import signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
print('{"ready":true}', flush=True)
while True:
    time.sleep(1)
"""
    transport = SubprocessTransport(py(child), close_grace=0.2, terminate_grace=0.2)
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg:
            await transport.start(tg)
            assert await transport.receive_line() == b'{"ready":true}'
            with anyio.fail_after(5):
                await transport.aclose()
            await transport.aclose()  # idempotent
    assert transport.exit_info is not None
    assert transport.exit_info.returncode == -9
    assert transport.pid is not None
    assert_reaped(transport.pid)
    assert await transport.receive_line() is None  # we asked for the end
    with pytest.raises(CLIConnectionError):
        await transport.send_line(b"{}\n")


async def test_exit_status_after_our_sigterm_is_not_an_error() -> None:
    child = """
import signal, sys, time
signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
print('{"ready":true}', flush=True)
while True:
    time.sleep(1)
"""
    async with running(py(child), close_grace=0.1) as t:
        assert await t.receive_line() == b'{"ready":true}'
        await t.aclose()
        assert await t.receive_line() is None
        assert t.exit_info is not None
        assert t.exit_info.returncode == 143


async def test_task_group_ends_after_exit_without_aclose() -> None:
    """Once the child has exited, the background tasks end on their own."""
    transport = SubprocessTransport(py("import sys\nsys.stderr.write('x')\nsys.exit(4)"))
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg:
            await transport.start(tg)
            with pytest.raises(ProcessError):
                await transport.receive_line()
    assert transport.pid is not None
    assert_reaped(transport.pid)


async def test_nonzero_exit_after_stdin_eof_during_aclose() -> None:
    child = "import sys\nsys.stdin.read()\nsys.stderr.write('bye')\nsys.exit(2)"
    async with running(py(child)) as t:
        await t.aclose()
        with pytest.raises(ProcessError) as info:
            await t.receive_line()
    assert info.value.exit_code == 2
    assert info.value.stderr == "bye"


async def test_output_closed_but_process_lingers() -> None:
    child = "import os, sys\nos.close(1)\nsys.stdin.read()"
    async with running(py(child), exit_wait=0.2) as t:
        with pytest.raises(ProcessError) as info:
            await t.receive_line()
        assert info.value.exit_code is None
        assert "did not exit" in str(info.value)


async def test_grandchild_holding_stdout_does_not_hang(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_subprocess_transport, "_EOF_GRACE", 0.2)
    sleeper = "import sys, time\nsys.stdin.read()"
    child = f"""
import subprocess, sys
p = subprocess.Popen([sys.executable, "-c", {sleeper!r}], stdin=subprocess.PIPE)
print('{{"grandchild":' + str(p.pid) + '}}', flush=True)
"""
    async with running(py(child)) as t:
        line = await t.receive_line()
        assert line is not None
        try:
            assert await t.receive_line() is None
        finally:
            os.kill(json.loads(line)["grandchild"], 9)


async def test_nonexistent_executable(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such-claude")
    transport = SubprocessTransport([missing])
    async with anyio.create_task_group() as tg:
        with pytest.raises(
            CLINotFoundError, match=r"^Claude Code not found at: .*no-such-claude"
        ) as info:
            await transport.start(tg)
    assert info.value.searched == (missing,)
    assert isinstance(info.value.__cause__, FileNotFoundError)


async def test_a_script_whose_interpreter_is_missing_is_not_called_missing(
    tmp_path: Path,
) -> None:
    """It was a `CLINotFoundError` saying "Claude Code not found at" the script, which
    exists: the OS says ENOENT for the interpreter of its ``#!`` line."""
    script = tmp_path / "claude"
    script.write_text("#!/nonexistent/node\n")
    script.chmod(0o755)
    transport = SubprocessTransport([str(script)])
    async with anyio.create_task_group() as tg:
        with pytest.raises(CLIConnectionError, match=r"\(#!/nonexistent/node\) was not found"):
            await transport.start(tg)


async def test_not_executable(tmp_path: Path) -> None:
    script = tmp_path / "claude"
    script.write_text("#!/bin/sh\n")
    transport = SubprocessTransport([str(script)])
    async with anyio.create_task_group() as tg:
        with pytest.raises(CLIConnectionError, match="claude") as info:
            await transport.start(tg)
    assert not isinstance(info.value, CLINotFoundError)


async def test_missing_working_directory(tmp_path: Path) -> None:
    transport = SubprocessTransport(py("pass"), cwd=tmp_path / "gone")
    async with anyio.create_task_group() as tg:
        with pytest.raises(CLIConnectionError, match="working directory"):
            await transport.start(tg)


@pytest.mark.skipif(sys.platform != "linux", reason="Linux's limit of one variable (128 KiB)")
async def test_an_environment_too_large_for_the_os_names_its_largest_variable() -> None:
    """The OS's "Argument list too long" read as if the command line were at fault."""
    env = {**os.environ, "HUGE_VALUE": "x" * 200_000}
    transport = SubprocessTransport(py("pass"), env=env)
    async with anyio.create_task_group() as tg:
        with pytest.raises(CLIConnectionError, match="largest variable, HUGE_VALUE, holds 200000 "):
            await transport.start(tg)


async def test_send_after_child_died() -> None:
    async with running(py("import sys\nsys.exit(5)")) as t:
        with pytest.raises(ProcessError) as info:
            await t.receive_line()
        assert info.value.exit_code == 5
        with pytest.raises(ProcessError) as send_info:
            await t.send_line(b"{}\n")
        assert send_info.value.exit_code == 5


async def test_send_while_child_dies_raises_ccwire_error() -> None:
    """Writes racing the child's death fail with a CcwireError, never BrokenPipeError."""
    line = encode_line({"pad": "p" * 65536})
    async with running(py("import sys\nsys.exit(5)")) as t:

        async def send_until_failure() -> None:
            for _ in range(1000):
                await t.send_line(line)

        with pytest.raises(CcwireError) as info:
            await send_until_failure()
    assert isinstance(info.value, ProcessError)
    assert info.value.exit_code == 5


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_broken_stdin_leaves_no_error_for_asyncio_to_log() -> None:
    """The child closes its stdin while a write waits on it: the write fails with a
    `CcwireError`, and no error is left in a future nobody awaits, which asyncio
    would log as "Future exception was never retrieved" once collected (CPython
    3.10)."""
    import asyncio
    import gc
    import signal

    logged: list[Any] = []
    asyncio.get_running_loop().set_exception_handler(lambda _loop, ctx: logged.append(ctx))
    child = (
        "import os, signal\n"
        "signal.signal(signal.SIGUSR1, lambda *_: os.close(0))\n"
        "print('ready', flush=True)\n"
        "while True: signal.pause()"
    )
    async with running(py(child), close_grace=0.2, terminate_grace=0.2) as t:
        assert await t.receive_line() == b"ready"
        failed: list[str] = []  # not the errors: their tracebacks hold the pipes

        async def send_big(transport: SubprocessTransport) -> None:
            # more than the pipe holds: it waits for the child, which never reads
            try:
                await transport.send_line(encode_line({"pad": "p" * 4_000_000}))
            except CcwireError as exc:
                failed.append(type(exc).__name__)

        async with anyio.create_task_group() as tg:
            tg.start_soon(send_big, t)
            await anyio.wait_all_tasks_blocked()
            assert t.pid is not None
            os.kill(t.pid, signal.SIGUSR1)
        assert failed == ["CLIConnectionError"]
    del t  # the process and its pipes with it
    gc.collect()
    await anyio.lowlevel.checkpoint()
    assert logged == []


async def test_send_after_end_input() -> None:
    async with running(py(ECHO)) as t:
        await t.end_input()
        with pytest.raises(CLIConnectionError, match="input is closed"):
            await t.send_line(b"{}\n")


async def test_send_line_rejects_partial_lines() -> None:
    async with running(py(ECHO)) as t:
        for bad in (b"{}", b"{}\n{}\n", b"{\n}\n", b""):
            with pytest.raises(MessageEncodeError):
                await t.send_line(bad)
        await t.send_line(b"{}\n")
        assert await t.receive_line() == b"{}"


async def test_max_line_bytes() -> None:
    child = "print('{\"ok\":1}')\nprint('x' * 5000, flush=True)\nimport sys\nsys.stdin.read()"
    async with running(py(child), max_line_bytes=1000) as t:
        assert await t.receive_line() == b'{"ok":1}'
        with pytest.raises(MessageDecodeError, match="max_line_bytes"):
            await t.receive_line()


async def test_not_started() -> None:
    transport = SubprocessTransport(py("pass"))
    assert transport.exit_info is None
    with pytest.raises(CLIConnectionError):
        await transport.send_line(b"{}\n")
    with pytest.raises(CLIConnectionError):
        await transport.receive_line()
    await transport.end_input()
    await transport.aclose()


async def test_aclose_leaves_no_task_waiting_for_the_pipes_it_gave_up() -> None:
    # nobody read the output to its end: the exit watcher used to wait its whole grace
    # (2 s) for the pipes' ends after aclose() had given them up, holding the task group
    transport = SubprocessTransport(py(ECHO))
    with anyio.fail_after(1.5):
        async with anyio.create_task_group() as tg:
            await transport.start(tg)
            await transport.aclose()
    assert transport.exit_info is not None and transport.exit_info.returncode == 0


async def test_repr_hides_env() -> None:
    env = {**os.environ, "ANTHROPIC_API_KEY": "sk-ant-secret-value"}
    transport = SubprocessTransport(py(ECHO), env=env)
    assert "sk-ant-secret" not in repr(transport)
    assert "not started" in repr(transport)
    async with anyio.create_task_group() as tg:
        await transport.start(tg)
        text = repr(transport)
        await transport.aclose()
    assert sys.executable in text
    assert f"pid={transport.pid}" in text
    assert "sk-ant-secret" not in text
    assert "sk-ant-secret" not in repr(transport)


def test_argv_must_not_be_empty() -> None:
    with pytest.raises(ValueError, match="argv"):
        SubprocessTransport([])


@pytest.mark.anyio
async def test_a_client_whose_cli_cannot_start_fails_at_once(tmp_path: Path) -> None:
    from ccwire import ClaudeAgentOptions, ClaudeSDKClient

    options = ClaudeAgentOptions(cli_path=sys.executable, cwd=str(tmp_path / "missing"))
    started = anyio.current_time()
    with pytest.raises(CLIConnectionError, match="working directory"):
        async with ClaudeSDKClient(options):
            pytest.fail("connected without a CLI")
    # no shutdown grace (5 s + 5 s + ...) is waited for a process that never ran
    assert anyio.current_time() - started < 5


GREETER = """
import sys
sys.stdout.write('{"hello": 1}\\n')
sys.stdout.flush()
for line in sys.stdin.buffer:
    sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()
"""


async def test_launch_then_start_keeps_early_output() -> None:
    transport = SubprocessTransport(py(GREETER))
    with anyio.fail_after(LIMIT):
        await transport.launch()
        pid = transport.pid
        assert pid is not None
        # launched, not started: nothing can be sent or received yet
        with pytest.raises(CLIConnectionError, match="not started"):
            await transport.send_line(b"{}\n")
        async with anyio.create_task_group() as tg:
            await transport.start(tg)
            assert transport.pid == pid  # start() did not spawn a second process
            assert json.loads(await transport.receive_line() or b"") == {"hello": 1}
            await transport.send_line(encode_line({"n": 2}))
            assert json.loads(await transport.receive_line() or b"") == {"n": 2}
            await transport.aclose()
    assert transport.exit_info is not None
    assert_reaped(pid)


async def test_launched_but_never_started_is_killed_and_reaped() -> None:
    # a CLI that would never exit by itself: it ignores its stdin
    transport = SubprocessTransport(py("import time\ntime.sleep(60)"))
    with anyio.fail_after(LIMIT):
        await transport.launch()
        pid = transport.pid
        assert pid is not None
        await transport.aclose()
        await transport.aclose()  # idempotent
    assert transport.exit_info is not None
    assert transport.exit_info.returncode == -9
    assert_reaped(pid)
    async with anyio.create_task_group() as tg:
        with pytest.raises(CLIConnectionError, match="already started"):
            await transport.start(tg)


async def test_launch_twice_is_refused() -> None:
    async with running(py(ECHO)) as t:
        with pytest.raises(CLIConnectionError, match="already started"):
            await t.launch()


async def test_failed_launch_leaves_nothing_to_close(tmp_path: Path) -> None:
    transport = SubprocessTransport([str(tmp_path / "no-such-claude")])
    with anyio.fail_after(LIMIT):
        with pytest.raises(CLINotFoundError):
            await transport.launch()
        await transport.aclose()
    assert transport.pid is None


async def test_aclose_while_launching_leaves_no_process() -> None:
    transport = SubprocessTransport(py("import time\ntime.sleep(60)"))
    outcome: list[BaseException | None] = []

    async def launch() -> None:
        try:
            await transport.launch()
            outcome.append(None)
        except CLIConnectionError as exc:
            outcome.append(exc)

    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(launch)
            await anyio.lowlevel.checkpoint()  # the launch may now be spawning
            await transport.aclose()
        await transport.aclose()
    assert len(outcome) == 1
    pid = transport.pid
    if pid is None:  # closed before the launch began (trio schedules it later)
        assert "already started (or closed)" in str(outcome[0])
        return
    # closed mid-spawn: the child was killed at once; or closed after it
    if outcome[0] is not None:
        assert "closed while the CLI was starting" in str(outcome[0])
    assert transport.exit_info is not None
    assert transport.exit_info.returncode == -9
    assert_reaped(pid)


async def test_a_child_that_closed_its_stdin_but_runs_on_is_a_connection_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_subprocess_transport, "_BROKEN_PIPE_EXIT_WAIT", 0.1)
    monkeypatch.setattr(_subprocess_transport, "_EOF_GRACE", 0.1)  # stdout is not read out
    child = "import os, sys, time\nos.close(0)\nprint('{}', flush=True)\ntime.sleep(60)"
    async with running(py(child), close_grace=0.1) as t:
        assert await t.receive_line() == b"{}"  # its stdin is closed from now on
        with pytest.raises(CLIConnectionError, match="writing to the CLI's stdin failed"):
            await t.send_line(b"{}\n")
        assert t.exit_info is None  # still running: not a ProcessError


async def test_start_into_an_ended_task_group_stops_the_launched_child() -> None:
    transport = SubprocessTransport(py("import time\ntime.sleep(60)"))  # not stopped by EOF
    with anyio.fail_after(LIMIT):
        await transport.launch()
        pid = transport.pid
        assert pid is not None
        async with anyio.create_task_group() as ended:
            pass
        with pytest.raises(RuntimeError):
            await transport.start(ended)
        assert transport.exit_info is not None  # killed and reaped
        assert_reaped(pid)
        await transport.aclose()  # nothing left to close: returns at once
        with pytest.raises(CLIConnectionError, match="already started"):
            await transport.start(ended)


class Unstoppable:
    """A spawner's process whose terminate() finds it gone and whose kill() fails (a
    remote end that cannot be reached), around a real child."""

    def __init__(self, inner: anyio.abc.Process) -> None:
        self.inner = inner
        self.stdin, self.stdout, self.stderr = inner.stdin, inner.stdout, inner.stderr
        self.pid = inner.pid

    @property
    def returncode(self) -> int | None:
        return self.inner.returncode

    async def wait(self) -> int:
        return await self.inner.wait()

    def terminate(self) -> None:
        raise ProcessLookupError

    def kill(self) -> None:
        raise OSError("the remote end is unreachable")

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_a_process_that_cannot_be_stopped_is_logged_and_closing_ends(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(_subprocess_transport, "_KILL_WAIT", 0.2)
    monkeypatch.setattr(_subprocess_transport, "_EOF_GRACE", 0.1)  # stdout is not read out
    children: list[anyio.abc.Process] = []

    async def spawner(spawn: Any) -> Unstoppable:
        child = await anyio.open_process(spawn.argv)  # stdin ignored: it runs on
        children.append(child)
        return Unstoppable(child)

    sleeper = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(60)"
    transport = SubprocessTransport(
        py(sleeper), spawner=spawner, close_grace=0.1, terminate_grace=0.1
    )
    try:
        with anyio.fail_after(LIMIT):
            async with anyio.create_task_group() as tg:
                await transport.start(tg)
                await transport.aclose()  # bounded, though the process is not stopped
                assert "stopping the CLI's process" in caplog.text
                assert "the remote end is unreachable" in caplog.text
                assert "survived SIGKILL" in caplog.text
            # the transport's tasks ended without the process: the task group is done
            assert children[0].returncode is None  # it really was left running
    finally:
        children[0].kill()
        with anyio.fail_after(LIMIT):
            await children[0].wait()
