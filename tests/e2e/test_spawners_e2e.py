"""The ready-made spawners with the real CLI and the scripted model: a bubblewrap sandbox
(for real), SSH to a real ``sshd`` this module starts on 127.0.0.1 (a throwaway host key
and user key, Debian's ``openssh-server``), and a container runtime where an engine is
present."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import psutil
import pytest
import sniffio

from ccwire import (
    BubblewrapSpawner,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    ContainerSpawner,
    Message,
    ProcessError,
    ResultMessage,
    SparePool,
    SpawnError,
    SpawnOptions,
    SSHSpawner,
    SystemMessage,
    query,
)
from ccwire._transport.container import find_container_runtime
from ccwire.testing import ScriptedModel, text, tool_use

from .conftest import CLI_PATH

pytestmark = pytest.mark.anyio

TIMEOUT = 60
SSHD = "/usr/sbin/sshd"
CLI_REAL = os.path.realpath(CLI_PATH or "claude")  # the executable, not the npm link


async def run(options: ClaudeAgentOptions, prompt: str = "go") -> list[Message]:
    with anyio.fail_after(TIMEOUT):
        return [m async for m in query(prompt=prompt, options=options)]


def init_cwd(messages: list[Message]) -> str:
    init = next(m for m in messages if isinstance(m, SystemMessage) and m.subtype == "init")
    return str(init.data["cwd"])


def bash_output(model: ScriptedModel) -> str:
    return "\n".join(r.content for req in model.turn_requests for r in req.tool_results())


def processes_with(marker: str) -> list[int]:
    """The processes whose environment holds ``marker`` (``NAME=value``)."""
    found = []
    needle = marker.encode() + b"\0"
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                if needle in Path(f"/proc/{entry}/environ").read_bytes():
                    found.append(int(entry))
    return found


def command_lines(pids: list[int] | None = None) -> list[bytes]:
    """The command lines of ``pids``, or of every process on the machine."""
    out = []
    for entry in map(str, pids) if pids is not None else os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                out.append(Path(f"/proc/{entry}/cmdline").read_bytes())
    return out


async def wait_gone(pids: list[int], timeout: float = 20.0) -> None:
    """Wait (bounded) until every process of ``pids`` has exited, with pidfds."""
    for pid in pids:
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        try:
            ready, _, _ = await anyio.to_thread.run_sync(select.select, [fd], [], [], timeout)
            assert ready, f"process {pid} still runs {timeout} s later"
        finally:
            os.close(fd)


# ---------------------------------------------------------------- the default spawner

PROGRAM = textwrap.dedent(
    """
    import json, sys
    import anyio
    from ccwire import ClaudeAgentOptions, ClaudeSDKClient

    async def main():
        options = ClaudeAgentOptions(**json.loads(sys.argv[1]))
        async with ClaudeSDKClient(options) as client:
            await client.query("go")
            async for _ in client.receive_response():
                pass

    anyio.run(main, backend=sys.argv[2])
    """
)
"""A program that runs one session to its end (its tool runs for 5 minutes)."""


async def test_a_program_killed_mid_tool_leaves_neither_its_cli_nor_the_tool_running(
    model: ScriptedModel, make_options: Any, tmp_path: Path
) -> None:
    """The program itself is SIGKILLed while the CLI's Bash tool runs: nothing closes the
    session, the CLI only sees its input close, and it would wait out its tool (5 minutes)
    before it exits; the tool, in a session of its own, would run to its end."""
    fifo = tmp_path / "begun"
    os.mkfifo(fifo)
    command = f"echo begun > {fifo}; sleep 300; echo finished"
    model.add(tool_use("Bash", {"command": command}), text("never"))
    marker = f"CCWIRE_TEST_MARKER={os.urandom(6).hex()}"
    name, value = marker.split("=")
    options = make_options(env={name: value}, allowed_tools=["Bash"])
    given = {"cli_path": options.cli_path, "cwd": options.cwd, "env": options.env,
             "allowed_tools": options.allowed_tools}  # fmt: skip
    argv = [sys.executable, "-c", PROGRAM, json.dumps(given), sniffio.current_async_library()]
    begun = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    program = await anyio.open_process(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        ready, _, _ = await anyio.to_thread.run_sync(select.select, [begun], [], [], TIMEOUT)
        assert ready, "the tool did not start"
        cli = next(p for p in processes_with(marker) if psutil.Process(p).exe() == CLI_REAL)
        tag = f"CCWIRE_SESSION_TAG={psutil.Process(cli).environ()['CCWIRE_SESSION_TAG']}"
        tagged = processes_with(tag)
        assert cli in tagged and len(tagged) >= 2, "the CLI and the tool's shell carry the tag"
        program.kill()
        with anyio.fail_after(TIMEOUT):
            await program.wait()
        await wait_gone(tagged, timeout=15)
        await wait_gone(processes_with(tag), timeout=15)  # the tool's sleep, started since
        assert processes_with(tag) == []
    finally:
        os.close(begun)
        for pid in processes_with(marker):  # what outlived the test
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        await program.aclose()


# ------------------------------------------------------------------- bubblewrap

_IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def unavailable(reason: str) -> None:
    """Skip locally; fail in CI, which installs bubblewrap and OpenSSH (.ci/run)."""
    if _IN_CI:
        pytest.fail(f"{reason} (CI must have it: see .ci/run)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture
def bwrap() -> None:
    if shutil.which("bwrap") is None:
        unavailable("bubblewrap is not installed (apt-get install bubblewrap)")


async def test_a_sandboxed_session_cannot_write_outside_its_work_folder(
    model: ScriptedModel, make_options: Any, tmp_path: Path, bwrap: None
) -> None:
    other = tmp_path / "other-session"  # a folder next to the work folder
    other.mkdir()
    (other / "secret.txt").write_text("TOP-SECRET")
    shown = tmp_path / "shown"  # shown to the sandbox, read-only
    shown.mkdir()
    (shown / "readme.txt").write_text("READABLE")
    host_home = Path.home()
    command = "; ".join(
        [
            f"echo pwned > {other}/new.txt",
            f"cat {other}/secret.txt",
            f"echo pwned > {shown}/new.txt",
            f"cat {shown}/readme.txt",
            f"echo pwned > {host_home}/ccwire-sandbox-escape.txt",
            "echo pwned > $HOME/in-sandbox-home.txt && echo home-ok",
            f"test -e /proc/{os.getpid()} && echo host-pid-visible || echo host-pid-hidden",
            "echo ok > inside.txt",
        ]
    )
    model.add(tool_use("Bash", {"command": command}), text("done"))
    options = make_options(
        allowed_tools=["Bash"], spawn_claude_code_process=BubblewrapSpawner(readable=[str(shown)])
    )
    messages = await run(options)
    assert isinstance(messages[-1], ResultMessage) and not messages[-1].is_error
    work = Path(str(options.cwd))
    assert (work / "inside.txt").read_text() == "ok\n"  # the work folder is writable
    assert sorted(p.name for p in other.iterdir()) == ["secret.txt"]
    assert sorted(p.name for p in shown.iterdir()) == ["readme.txt"]
    assert not (host_home / "ccwire-sandbox-escape.txt").exists()
    out = bash_output(model)
    assert "TOP-SECRET" not in out  # other sessions' folders are hidden
    assert "READABLE" in out and "Read-only file system" in out
    assert "home-ok" in out  # a private, writable HOME
    assert "host-pid-hidden" in out  # a process namespace of its own
    assert init_cwd(messages) == str(work)


# -------------------------------------------------------------------------- ssh


@pytest.fixture(scope="module")
def sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A real sshd on 127.0.0.1 (a free high port), for root with a throwaway key."""
    if not (os.path.exists(SSHD) and shutil.which("ssh") and shutil.which("ssh-keygen")):
        unavailable("openssh-server/openssh-client are not installed")
    if os.geteuid() != 0:
        pytest.skip("the test sshd runs as root (it logs in as the current user: root)")
    d = tmp_path_factory.mktemp("sshd")
    for name in ("host_key", "user_key"):
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / name)], check=True
        )
    (d / "authorized_keys").write_text((d / "user_key.pub").read_text())
    os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # sshd's privilege separation dir
    config = d / "sshd_config"
    config.write_text(
        "\n".join(
            [
                "Port 0",  # replaced below
                "ListenAddress 127.0.0.1",
                f"HostKey {d / 'host_key'}",
                f"AuthorizedKeysFile {d / 'authorized_keys'}",
                "StrictModes no",
                "PasswordAuthentication no",
                "KbdInteractiveAuthentication no",
                "PubkeyAuthentication yes",
                "PermitRootLogin prohibit-password",
                "UsePAM no",
                f"PidFile {d / 'sshd.pid'}",
                "",
            ]
        )
    )
    with socket.socket() as s:  # a free port (sshd cannot report the one it picks)
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config.write_text(config.read_text().replace("Port 0", f"Port {port}"))
    proc = subprocess.Popen(
        [SSHD, "-D", "-e", "-f", str(config)], stderr=subprocess.PIPE, text=True
    )
    assert proc.stderr is not None
    line = proc.stderr.readline()  # "Server listening on 127.0.0.1 port N."
    if "listening" not in line:
        proc.kill()
        pytest.fail(f"sshd did not start: {line}{proc.stderr.read()}")
    (d / "known_hosts").write_text(f"[127.0.0.1]:{port} {(d / 'host_key.pub').read_text()}")
    try:
        yield {
            "port": port,
            "key": str(d / "user_key"),
            "known_hosts": str(d / "known_hosts"),
        }
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
        proc.stderr.close()


def ssh_spawner(sshd: dict[str, Any], home: str) -> SSHSpawner:
    return SSHSpawner(
        "root@127.0.0.1",
        cli=CLI_REAL,
        port=sshd["port"],
        identity_file=sshd["key"],
        config_file="/dev/null",
        ssh_options={
            "UserKnownHostsFile": sshd["known_hosts"],
            "StrictHostKeyChecking": "yes",
            "IdentitiesOnly": "yes",
        },
        env={"HOME": home},  # the remote login's HOME is the real one: use the test's
    )


ODD = "l1\nl2 'single' \"double\" $HOME `x` \\ \t é 😀 end"
"""A value a shell or a quoting mistake would change: it must arrive byte for byte."""


async def test_a_session_over_ssh(
    model: ScriptedModel,
    make_options: Any,
    sshd: dict[str, Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    secret = "sk-ant-test-" + os.urandom(8).hex() + ODD
    command = "printf '[%s]' \"$CCWIRE_TEST_SECRET\"; pwd"
    model.add(tool_use("Bash", {"command": command}), text("done"))
    prompt = "Answer in French. " * 6000  # over the argv limit: a private file, shipped
    work = tmp_path / "my work's folder"  # a space and a quote
    work.mkdir()
    monkeypatch.setenv("CCWIRE-TEST-INHERITED", "1")  # no shell can set it: skipped
    options = make_options(
        allowed_tools=["Bash"],
        system_prompt=prompt + ODD,
        extra_args={"append-system-prompt": ODD},  # a short argument: on the command line
        cwd=str(work),
        env={"CCWIRE_TEST_SECRET": secret},
        spawn_claude_code_process=ssh_spawner(sshd, str(tmp_path / "home")),
    )
    with anyio.fail_after(TIMEOUT), caplog.at_level(logging.DEBUG, logger="ccwire"):
        async with ClaudeSDKClient(options) as client:
            lines = command_lines()
            # this test's ssh: not another test's, beside it under `pytest -n`
            ours = command_lines([p.pid for p in psutil.Process().children(recursive=True)])
            await client.query("go")
            messages = [m async for m in client.receive_response()]
    assert not [c for c in lines if secret.encode() in c]  # on no command line, either side
    assert any(b"ssh\0" in c and b"127.0.0.1" in c for c in ours)
    assert isinstance(messages[-1], ResultMessage) and not messages[-1].is_error
    assert init_cwd(messages) == str(work)  # cwd honoured
    out = bash_output(model)
    assert f"[{secret}]" in out and str(work) in out  # the environment reached the CLI, exact
    system = model.turn_requests[0].system
    assert (prompt + ODD).strip() in system and system.count(ODD) == 2  # arguments, exact
    assert "skips the inherited variable 'CCWIRE-TEST-INHERITED'" in caplog.text


async def test_a_variable_given_that_a_shell_cannot_set_is_refused_over_ssh(
    make_options: Any, sshd: dict[str, Any], tmp_path: Path
) -> None:
    """It was dropped without a word: the remote CLI ran without it."""
    spawner = ssh_spawner(sshd, str(tmp_path / "home"))
    options = make_options(env={"MY-TOKEN": "x"}, spawn_claude_code_process=spawner)
    with pytest.raises(
        SpawnError, match=r"SSHSpawner cannot pass ClaudeAgentOptions.env\['MY-TOKEN'\]"
    ):
        await run(options)


async def test_values_arrive_byte_for_byte_over_ssh(sshd: dict[str, Any], tmp_path: Path) -> None:
    """The variables, arguments and folder of ``SpawnOptions``, as the remote process
    sees them: byte for byte, bytes that are not UTF-8 too (an inherited variable, a
    path: Python holds them as surrogates; the start-up script failed to encode them,
    and the session with it)."""
    odd = ODD + " caf\udce9"  # the byte 0xE9 alone
    work = tmp_path / f"a folder's name {odd.replace(chr(10), ' ').replace('/', '')}"
    work.mkdir()
    spawner = replace(ssh_spawner(sshd, str(tmp_path)), cli="sh")
    script = 'printf "%s\\0" "$CCWIRE_TEST_ODD" "$1" "$(pwd)"'
    options = SpawnOptions(
        command="claude",
        args=("-c", script, "sh", odd),
        cwd=str(work),
        env={"CCWIRE_TEST_ODD": odd},
    )
    with anyio.fail_after(TIMEOUT):
        proc = await spawner(options)
        try:
            await proc.stdin.send(b"")  # the start-up line
            out = b""
            assert proc.stdout is not None
            with contextlib.suppress(anyio.EndOfStream):
                while True:
                    out += await proc.stdout.receive()
            assert await proc.wait() == 0
        finally:
            if proc.returncode is None:
                proc.kill()
            await proc.aclose()
    assert out.split(b"\0")[:3] == [os.fsencode(odd), os.fsencode(odd), os.fsencode(work)]


async def test_the_remote_cli_ends_with_the_session(
    model: ScriptedModel, make_options: Any, sshd: dict[str, Any], tmp_path: Path
) -> None:
    marker = f"CCWIRE_TEST_MARKER={os.urandom(6).hex()}"
    name, value = marker.split("=")
    spawner = ssh_spawner(sshd, str(tmp_path / "home"))
    options = make_options(env={name: value}, spawn_claude_code_process=spawner)
    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(options):
            remote = processes_with(marker)
            assert remote, "the remote CLI runs"
        await wait_gone(remote)


async def test_a_spare_whose_ssh_connection_drops_is_replaced(
    model: ScriptedModel, make_options: Any, sshd: dict[str, Any], tmp_path: Path
) -> None:
    model.add(text("over a new connection"))
    marker = f"CCWIRE_TEST_MARKER={os.urandom(6).hex()}"
    name, value = marker.split("=")
    park = tmp_path / "park"  # a parking folder that exists on the remote side
    park.mkdir()
    spawner = ssh_spawner(sshd, str(tmp_path / "home"))
    options = make_options(env={name: value}, spawn_claude_code_process=spawner)
    with anyio.fail_after(TIMEOUT):
        async with SparePool(replace(options, cwd=str(park)), restart_backoff=(0, 0)) as pool:
            while pool.parked < 1:
                await pool.changed()
            remote = processes_with(marker)
            [ssh] = [p for p in psutil.Process().children() if p.name() == "ssh"]
            ssh.kill()  # the connection drops while the spare is parked
            while pool.restarts < 1 or pool.parked < 1:
                await pool.changed()
            await wait_gone(remote)  # the remote CLI of the dropped connection ended
            messages = [m async for m in pool.query("hi", options)]
            assert (pool.claimed, pool.cold) == (1, 0)
    assert isinstance(messages[-1], ResultMessage)
    assert messages[-1].result == "over a new connection"


async def test_the_remote_cli_ends_when_the_connection_drops_mid_turn(
    model: ScriptedModel, make_options: Any, sshd: dict[str, Any], tmp_path: Path
) -> None:
    release = threading.Event()

    def held(request: Any) -> Any:  # the CLI waits for the model: busy, not reading stdin
        release.wait(TIMEOUT)
        return text("too late")

    model.add(held)
    marker = f"CCWIRE_TEST_MARKER={os.urandom(6).hex()}"
    name, value = marker.split("=")
    spawner = ssh_spawner(sshd, str(tmp_path / "home"))
    options = make_options(env={name: value}, spawn_claude_code_process=spawner)
    try:
        with anyio.fail_after(TIMEOUT):
            client = ClaudeSDKClient(options)
            await client.connect()
            try:
                remote = processes_with(marker)
                assert remote, "the remote CLI runs"
                await client.query("go")
                await anyio.to_thread.run_sync(model.wait_for_turns, 1)
                transport = client._connection()._transport
                pid = getattr(transport, "pid", None)
                assert pid is not None
                os.kill(pid, signal.SIGKILL)  # the connection drops: ssh dies without a word
                await wait_gone(remote)  # while the model still holds its answer
            finally:
                await client.disconnect()
    finally:
        release.set()


async def test_what_a_remote_cli_killed_mid_tool_started_is_stopped(
    model: ScriptedModel, make_options: Any, sshd: dict[str, Any], tmp_path: Path
) -> None:
    """The remote CLI is killed (out of memory...) while its Bash tool runs: the tool,
    in a session of its own that only the CLI would have stopped, ran on."""
    fifo = tmp_path / "begun"  # the tool says it runs (the "remote" machine is this one)
    os.mkfifo(fifo)
    command = f"echo begun > {fifo}; sleep 300; echo finished"
    model.add(tool_use("Bash", {"command": command}), text("never"))
    marker = f"CCWIRE_TEST_MARKER={os.urandom(6).hex()}"
    name, value = marker.split("=")
    options = make_options(
        env={name: value},
        allowed_tools=["Bash"],
        spawn_claude_code_process=ssh_spawner(sshd, str(tmp_path / "home")),
    )
    begun = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        with anyio.fail_after(TIMEOUT):
            async with ClaudeSDKClient(options) as client:
                remote = processes_with(marker)
                await client.query("go")
                ready, _, _ = await anyio.to_thread.run_sync(select.select, [begun], [], [], 30)
                assert ready, "the tool did not start"
                tools = [p for p in processes_with(marker) if p not in remote]
                assert tools, "the tool runs"  # its shell (and the watchdog's nap)
                os.kill(
                    next(p for p in remote if psutil.Process(p).exe() == CLI_REAL), signal.SIGKILL
                )
                with pytest.raises(ProcessError, match="exit code: 137"):
                    async for _ in client.receive_response():
                        pass
            await wait_gone(tools)
    finally:
        os.close(begun)


async def test_a_refused_login_or_an_unreachable_host_is_a_process_error_saying_why(
    make_options: Any, sshd: dict[str, Any], tmp_path: Path
) -> None:
    stranger = tmp_path / "stranger_key"
    keygen = ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(stranger)]
    await anyio.run_process(keygen)
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    spawner = ssh_spawner(sshd, str(tmp_path / "home"))
    for changed, why in [
        (replace(spawner, identity_file=str(stranger)), "Permission denied"),
        (replace(spawner, port=closed), "Connection refused"),
    ]:
        with anyio.fail_after(TIMEOUT), pytest.raises(ProcessError) as info:
            async with ClaudeSDKClient(make_options(spawn_claude_code_process=changed)):
                pass
        assert info.value.exit_code == 255 and why in str(info.value)
    assert not [p for p in psutil.Process().children() if p.name() == "ssh"]


async def test_the_remote_cli_ends_when_a_shared_connection_is_configured(
    sshd: dict[str, Any], tmp_path: Path
) -> None:
    """A configuration that multiplexes sessions over one persisting connection
    (``ControlMaster auto``, common in ~/.ssh/config) would keep the SSH connection, which
    the remote watchdog watches, alive after ``ssh`` dies: each session has its own."""
    sock = tmp_path / "mux"
    config = tmp_path / "ssh_config"
    config.write_text(f"Host *\n  ControlMaster auto\n  ControlPath {sock}\n  ControlPersist 5\n")
    marker = f"CCWIRE_TEST_MARKER={os.urandom(6).hex()}"
    name, value = marker.split("=")
    spawner = replace(ssh_spawner(sshd, str(tmp_path)), config_file=str(config), cli="sh")
    busy = SpawnOptions(command="claude", args=("-c", "echo up; exec sleep 600"), env={name: value})
    with anyio.fail_after(TIMEOUT):  # a remote "CLI" busy, not reading its input
        proc = await spawner(busy)
        try:
            await proc.stdin.send(b"")  # the start-up line
            assert proc.stdout is not None and await proc.stdout.receive() == b"up\n"
            remote = processes_with(marker)
            proc.kill()  # ssh dies without a word
            await proc.wait()
            await wait_gone(remote)
        finally:
            if proc.returncode is None:
                proc.kill()
            await proc.aclose()


# -------------------------------------------------------------------- container

IMAGE = os.environ.get("CCWIRE_TEST_IMAGE", "docker.io/library/debian:stable-slim")


def _container_runtime() -> str:
    runtime = find_container_runtime()
    if runtime is None:
        pytest.skip("no container runtime (podman or docker) is installed")
    engine = subprocess.run([runtime, "info"], capture_output=True, text=True, check=False)
    if engine.returncode != 0:
        pytest.skip(
            f"{os.path.basename(runtime)} is installed but no engine answers "
            f"({(engine.stderr.strip().splitlines() or ['?'])[-1]})"
        )
    image = subprocess.run([runtime, "image", "inspect", IMAGE], capture_output=True, check=False)
    if image.returncode != 0:
        pytest.skip(f"the image {IMAGE} is not present (set CCWIRE_TEST_IMAGE)")
    return runtime


async def test_a_session_in_a_container(model: ScriptedModel, make_options: Any) -> None:
    runtime = _container_runtime()
    cli = CLI_REAL
    model.add(text("done"))
    options = make_options(
        spawn_claude_code_process=ContainerSpawner(
            IMAGE,
            runtime=runtime,
            cli="/opt/claude",
            volumes=[f"{cli}:/opt/claude:ro"],
            extra_args=["--network=host"],  # the scripted model listens on 127.0.0.1
        )
    )
    messages = await run(options)
    assert isinstance(messages[-1], ResultMessage) and not messages[-1].is_error
    assert init_cwd(messages) == str(options.cwd)


# ------------------------------------------------------------------- ccwire run

SPAWN_MODULE = """
from pathlib import Path
from ccwire import BubblewrapSpawner

sandbox = BubblewrapSpawner()

async def spawn(options):
    Path("spawned.txt").write_text(" ".join(options.argv[:1]))
    return await sandbox(options)
"""


def test_ccwire_run_with_a_spawner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bwrap: None
) -> None:
    import io
    import json
    import sys

    from ccwire._app.main import CliIO, main

    (tmp_path / "spawnmod.py").write_text(SPAWN_MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    work = tmp_path / "work"
    work.mkdir()
    cli_io = CliIO(io.StringIO(), io.StringIO(), io.StringIO(), dict(os.environ))
    argv = ["run", "say hi", "--offline", "--json", "--cwd", str(work), "--spawn", "spawnmod:spawn"]
    code = main([*argv, "--cli-path", str(CLI_PATH)], io=cli_io)
    assert isinstance(cli_io.stdout, io.StringIO) and isinstance(cli_io.stderr, io.StringIO)
    assert code == 0, cli_io.stderr.getvalue()
    events = [json.loads(line) for line in cli_io.stdout.getvalue().splitlines()]
    results = [e for e in events if e["event"] == "result"]
    assert len(results) == 1 and "say hi" in json.dumps(results[0])
    assert (tmp_path / "spawned.txt").read_text() == str(CLI_PATH)
