"""Nothing the CLI started outlives it: the default spawner's process leads its own
process group, and closing the transport stops the whole group.

The stand-in CLIs are small Python scripts (and a wrapper shell script that does not
``exec``) that start a child, as the CLI starts MCP servers, hooks and tools.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
import sniffio
from anyio.streams.buffered import BufferedByteReceiveStream

from ccwire._core.errors import ProcessError
from ccwire._transport.spawn import _carrying, _each_process
from ccwire._transport.subprocess import SubprocessTransport

pytestmark = pytest.mark.anyio

# each test carries it (tests/transport/test_uvloop.py runs them again)
linux_only = pytest.mark.skipif(
    not Path("/proc/self/stat").exists(), reason="looks at processes in Linux's /proc"
)

LIMIT = 15  # seconds; every test is bounded by this

# a child that ignores SIGTERM, writes its pid to a file, then says it is ready
CHILD = """
import os, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
with open(sys.argv[1], "w") as f:
    f.write(str(os.getpid()))
print("ready", flush=True)
while True:
    time.sleep(60)
"""

# a CLI that starts CHILD and prints both pids; IGNORE_TERM: it ignores SIGTERM and runs
# on; otherwise it exits with status 2 at the end of its input, leaving the child behind;
# NEW_SESSION: the child runs in a session of its own (as the CLI runs its tools)
CLI = """
import json, os, signal, subprocess, sys, time
child = subprocess.Popen(
    [sys.executable, "-c", {child!r}, sys.argv[1]],
    stdin=subprocess.DEVNULL,
    stdout=subprocess.PIPE,
    start_new_session={new_session},
)
child.stdout.readline()
print(json.dumps({{"cli": os.getpid(), "child": child.pid}}), flush=True)
if {ignore_term}:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    while True:
        time.sleep(60)
sys.stdin.read()
sys.exit(2)
"""


def write_cli(tmp_path: Path, *, ignore_term: bool, new_session: bool = False) -> Path:
    path = tmp_path / "cli.py"
    path.write_text(CLI.format(child=CHILD, ignore_term=ignore_term, new_session=new_session))
    return path


def gone(pid: int) -> bool:
    """The process has ended: it no longer exists, or is a zombie waiting to be reaped."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except FileNotFoundError:
        return True
    return stat[stat.rfind(b")") + 2 :].split()[0] in (b"Z", b"X")


@contextlib.contextmanager
def no_leak(pids: list[int]) -> Iterator[None]:
    """Kill what the test found, whatever happens (a failing test leaks nothing)."""
    try:
        yield
    finally:
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


async def close_and_check(
    transport: SubprocessTransport, pid_file: Path
) -> tuple[dict[str, int], ProcessError | None]:
    """Start ``transport``, read the pids the stand-in prints, close it, read to the
    end; returns the pids, after checking they are all gone, and the error at the end
    of the output (``None``: none)."""
    pids: list[int] = []
    error: ProcessError | None = None
    with no_leak(pids), anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as tg:
            await transport.start(tg)
            line = await transport.receive_line()
            assert line is not None
            started: dict[str, int] = json.loads(line)
            pids.extend(started.values())
            assert int(await anyio.Path(pid_file).read_text()) == started["child"]
            try:
                await transport.aclose()
            finally:
                ended = {name: gone(pid) for name, pid in started.items()}
            try:
                assert await transport.receive_line() is None
            except ProcessError as exc:
                error = exc
        assert ended == dict.fromkeys(started, True)
    return started, error


@linux_only
async def test_a_cli_that_needs_sigkill_takes_its_children_with_it(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    cli = write_cli(tmp_path, ignore_term=True)
    transport = SubprocessTransport(
        [sys.executable, str(cli), str(pid_file)], close_grace=0.1, terminate_grace=0.2
    )
    started, error = await close_and_check(transport, pid_file)
    assert transport.pid == started["cli"]
    assert transport.exit_info is not None
    assert transport.exit_info.returncode == -signal.SIGKILL
    assert error is None  # the end we forced is not an error


@linux_only
async def test_a_cli_that_needs_sigkill_takes_its_tools_in_sessions_of_their_own_with_it(
    tmp_path: Path,
) -> None:
    """The CLI runs its tools in sessions of their own and stops them itself, which a
    CLI killed (by us, after SIGTERM went unheeded, or out of memory) cannot do: they ran
    on, outside its process group."""
    pid_file = tmp_path / "child.pid"
    cli = write_cli(tmp_path, ignore_term=True, new_session=True)
    transport = SubprocessTransport(
        [sys.executable, str(cli), str(pid_file)], close_grace=0.1, terminate_grace=0.2
    )
    _, error = await close_and_check(transport, pid_file)
    assert transport.exit_info is not None
    assert transport.exit_info.returncode == -signal.SIGKILL
    assert error is None


@linux_only
async def test_a_wrapper_script_that_does_not_exec_takes_the_cli_with_it(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "child.pid"
    cli = write_cli(tmp_path, ignore_term=True)
    wrapper = tmp_path / "claude"
    wrapper.write_text(f'#!/bin/sh\n{sys.executable} {cli} "$@"\n')  # no exec
    wrapper.chmod(0o755)
    transport = SubprocessTransport(
        [str(wrapper), str(pid_file)], close_grace=0.1, terminate_grace=0.2
    )
    started, error = await close_and_check(transport, pid_file)
    assert transport.pid not in started.values()  # the shell, which SIGTERM ended
    assert transport.exit_info is not None
    assert transport.exit_info.returncode == -signal.SIGTERM
    assert error is None


@linux_only
async def test_a_cli_that_exits_leaving_a_child_behind_keeps_its_exit_status(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "child.pid"
    cli = write_cli(tmp_path, ignore_term=False)
    transport = SubprocessTransport(
        [sys.executable, str(cli), str(pid_file)], close_grace=5, terminate_grace=0.2
    )
    _, error = await close_and_check(transport, pid_file)
    assert transport.exit_info is not None
    assert transport.exit_info.returncode == 2
    assert error is not None
    assert error.exit_code == 2


# a program that runs the stand-in CLI (argv[1:]), prints its pids, then waits to be
# killed; FORK: it forks first, a child that lives on and holds what the program held
PROGRAM = """
import json, os, select, sys
import anyio
from ccwire._transport.subprocess import SubprocessTransport

async def main():
    transport = SubprocessTransport([sys.executable, *sys.argv[2:]])
    async with anyio.create_task_group() as tg:
        await transport.start(tg)
        started = json.loads(await transport.receive_line())
        if {fork}:
            started["forked"] = os.fork()
            if started["forked"] == 0:
                select.select([], [], [])
        print(json.dumps(started), flush=True)
        await anyio.sleep_forever()

anyio.run(main, backend=sys.argv[1])
"""


def watchdog_of(pid: int) -> int:
    """The watchdog of the program that started ``pid`` (its tag names the program)."""
    tag = next(v for v in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
               if v.startswith(b"CCWIRE_SESSION_TAG="))  # fmt: skip
    program = tag.rpartition(b"-")[0] + b"-"  # the watchdog's argument
    found = [p for p, cmdline in _each_process("cmdline") if program in cmdline]
    assert len(found) == 1, found
    return found[0]


async def wait_ended(pid: int) -> None:
    """Wait until ``pid`` (not a child of ours) has exited: its pidfd turns readable."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        await anyio.wait_readable(fd)
    finally:
        os.close(fd)


@linux_only
@pytest.mark.parametrize("how", ["plain", "forked", "nested"])
async def test_a_killed_program_takes_its_cli_and_its_tools_with_it(
    tmp_path: Path, how: str
) -> None:
    """The program is SIGKILLed: nothing closes its sessions, and the CLI (which here
    ignores SIGTERM and the end of its input) and its tool, in a session of its own, ran
    on. The program's watchdog stops them (SIGTERM, SIGKILL 5 s later), also when a child
    it forked lives on (it does not keep the watchdog waiting), and when the program ran
    under a CLI of another program (nested: what stops the program, everything that
    carries that CLI's tag, does not stop its watchdog)."""
    pid_file = tmp_path / "child.pid"
    cli = write_cli(tmp_path, ignore_term=True, new_session=True)
    backend = sniffio.current_async_library()
    program_text = PROGRAM.format(fork=how == "forked")
    argv = [sys.executable, "-c", program_text, backend, str(cli), str(pid_file)]
    outer = f"{os.urandom(8).hex()}-{os.urandom(8).hex()}"
    env = {**os.environ, "CCWIRE_SESSION_TAG": outer} if how == "nested" else None
    pids: list[int] = []
    with no_leak(pids), anyio.fail_after(LIMIT):
        async with await anyio.open_process(argv, stdin=subprocess.DEVNULL, env=env) as program:
            assert program.stdout is not None
            line = await BufferedByteReceiveStream(program.stdout).receive_until(b"\n", 4096)
            started: dict[str, int] = json.loads(line)
            pids.extend(started.values())
            watchdog = watchdog_of(started["cli"])
            if how == "nested":  # as the outer program's watchdog would
                for pid in _carrying(f"CCWIRE_SESSION_TAG={outer}"):
                    os.kill(pid, signal.SIGKILL)
            else:
                program.kill()
            await program.wait()
            for pid in (started["cli"], started["child"], watchdog):  # the watchdog ends too
                await wait_ended(pid)
        if how == "forked":
            assert not gone(started["forked"])  # it was not the watchdog's to stop
