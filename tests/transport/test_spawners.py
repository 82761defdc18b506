"""The command lines the ready-made spawners build (no process is started here; the real
CLI runs through each of them in ``tests/e2e/test_spawners_e2e.py``)."""

from __future__ import annotations

import base64
import dataclasses
import itertools
import logging
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from ccwire import (
    LOCAL_ONLY_ENV,
    BubblewrapSpawner,
    ClaudeAgentOptions,
    ContainerSpawner,
    OptionsError,
    SpawnError,
    SpawnOptions,
    SSHSpawner,
    prewarm,
)
from ccwire._transport.container import find_container_runtime
from ccwire._transport.remote_env import forwarded_env
from ccwire._transport.ssh import _BOOTSTRAP
from tests.e2e.test_spawners_e2e import processes_with

SECRET = "sk-ant-api03-secret-value"


def triples(args: tuple[str, ...] | list[str]) -> list[tuple[str, str, str]]:
    return [(args[i], args[i + 1], args[i + 2]) for i in range(len(args) - 2)]


@pytest.fixture
def spawn(tmp_path: Path) -> SpawnOptions:
    work = tmp_path / "work"
    work.mkdir()
    spill = tmp_path / "ccwire-spill"
    spill.mkdir(mode=0o700)
    settings = spill / "settings-1.json"
    settings.write_text('{"env": {"TOKEN": "x"}}')
    cli = tmp_path / "bin" / "claude"
    cli.parent.mkdir()
    cli.write_text("#!/bin/sh\n")
    cli.chmod(0o755)
    return SpawnOptions(
        command=str(cli),
        args=("--output-format", "stream-json", "--settings", str(settings), "--x", "it's"),
        cwd=str(work),
        env={
            "ANTHROPIC_API_KEY": SECRET,
            "PATH": os.environ["PATH"],
            "HOME": str(tmp_path / "home"),
            "XDG_CONFIG_HOME": "/here",
            "BASH_FUNC_x%%": "() { :; }",
        },
        private_files=(str(settings),),
    )


def test_forwarded_env_keeps_the_other_sides_own_variables() -> None:
    env = {"PATH": "/here", "HOME": "/h", "XDG_DATA_HOME": "/d", "API_KEY": "k", "A%B": "x"}
    assert forwarded_env(env, {}) == {"API_KEY": "k"}
    assert forwarded_env(env, {"HOME": "/there"}) == {"API_KEY": "k", "HOME": "/there"}
    assert forwarded_env(env, {}, local_only=()) == {k: v for k, v in env.items() if k != "A%B"}
    assert "PATH" in LOCAL_ONLY_ENV and "HOME" in LOCAL_ONLY_ENV


def test_a_variable_a_shell_cannot_set_is_refused_if_given_and_skipped_if_inherited(
    spawn: SpawnOptions, caplog: pytest.LogCaptureFixture
) -> None:
    """Over SSH and into a container, a shell (or ``-e NAME``) sets the variables: a name
    it cannot set is not carried. One of ``ClaudeAgentOptions.env`` was dropped without
    a word (the CLI ran without it): refused, named; an inherited one is skipped."""
    given = dataclasses.replace(
        spawn, env={**spawn.env, "MY-TOKEN": "x"}, explicit_env=frozenset({"MY-TOKEN"})
    )
    spawners: list[SSHSpawner | ContainerSpawner] = [SSHSpawner("h")]
    if find_container_runtime() is not None:
        spawners.append(ContainerSpawner("img:1"))
    for spawner in spawners:
        with pytest.raises(SpawnError, match=r"env\['MY-TOKEN'\].*shell") as caught:
            spawner.wrap(given)
        assert type(spawner).__name__ in str(caught.value)
        with caplog.at_level(logging.DEBUG, logger="ccwire"):
            spawner.wrap(dataclasses.replace(given, explicit_env=frozenset()))
        assert "'MY-TOKEN'" in caplog.text and "'BASH_FUNC_x%%'" in caplog.text
        caplog.clear()
    for cls in (SSHSpawner, ContainerSpawner):
        with pytest.raises(OptionsError, match=f"{cls.__name__}.env: 'NOT VALID'"):
            cls("x", env={"NOT VALID": "x"})
    assert "explicit_env=<MY-TOKEN>" in repr(given)


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_bubblewrap_refuses_a_work_folder_that_holds_a_hidden_one(
    spawn: SpawnOptions, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bound read-write over the hidden folders, ``/`` showed ``/root`` and ``/home``
    again and made ``/etc`` writable (a service's working directory is often ``/``)."""
    for cwd in ("/", "/var"):  # /var holds /var/tmp
        with pytest.raises(SpawnError, match=f"'{cwd}' \\(ClaudeAgentOptions.cwd\\).*hides"):
            BubblewrapSpawner().wrap(dataclasses.replace(spawn, cwd=cwd))
    monkeypatch.chdir("/")
    with pytest.raises(SpawnError, match="this process's working directory"):
        BubblewrapSpawner().wrap(dataclasses.replace(spawn, cwd=None))
    args = BubblewrapSpawner().wrap(dataclasses.replace(spawn, cwd="/tmp")).args  # it, not more
    assert ("--bind", "/tmp", "/tmp") in triples(args)


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_bubblewrap_refuses_a_writable_folder_that_holds_a_hidden_one(spawn: SpawnOptions) -> None:
    """``writable=["/"]`` was bound read-write over everything the sandbox hides: the
    whole host writable, its home folders shown again."""
    for folder in ("/", "/var"):
        with pytest.raises(SpawnError, match=f"'{folder}' \\(writable\\).*hides"):
            BubblewrapSpawner(writable=[folder]).wrap(spawn)
    shared = os.path.dirname(str(spawn.cwd))  # hidden itself: bound over, fine
    inner = os.path.join(shared, "cache")  # in a hidden folder: shown again, fine
    os.mkdir(inner)
    args = BubblewrapSpawner(writable=[shared, inner]).wrap(spawn).args
    assert {("--bind", shared, shared), ("--bind", inner, inner)} <= set(triples(args))


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_bubblewrap_refuses_a_missing_writable_folder_or_home(
    spawn: SpawnOptions, tmp_path: Path
) -> None:
    """bwrap itself failed on them, inside the sandbox: the session saw "the Claude Code
    CLI exited (exit code: 1)", the cause only in the quoted stderr."""
    missing = str(tmp_path / "missing")
    for spawner, name in (
        (BubblewrapSpawner(writable=[missing]), "writable"),
        (BubblewrapSpawner(home=missing), "home"),
    ):
        with pytest.raises(SpawnError, match=f"{name}: '{missing}' is not an existing folder"):
            spawner.wrap(spawn)


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_bubblewrap_shows_the_interpreter_of_the_cli_script(
    spawn: SpawnOptions, tmp_path: Path
) -> None:
    """A CLI run by a node in a hidden folder (nvm's, in the home) could not start in the
    sandbox: `env: 'node': No such file or directory`, exit 127."""
    real = tmp_path / "nvm" / "v22" / "bin"
    real.mkdir(parents=True)
    (real / "node").write_text("#!/bin/sh\n")
    (real / "node").chmod(0o755)
    (tmp_path / "nvm" / "current").symlink_to(real.parent)
    on_path = str(tmp_path / "nvm" / "current" / "bin")
    Path(spawn.command).write_text("#!/usr/bin/env node\n")
    env = {**spawn.env, "PATH": f"{on_path}:{os.environ['PATH']}"}
    shown = triples(BubblewrapSpawner().wrap(dataclasses.replace(spawn, env=env)).args)
    for folder in (on_path, str(real)):  # as the PATH names it, and where it is
        assert ("--ro-bind", folder, folder) in shown


def test_a_spawner_refuses_a_list_option_given_as_one_string() -> None:
    """``BubblewrapSpawner(writable="/srv")`` iterated the string's characters: it bound
    ``/`` (the first one) read-write, the whole host writable in the sandbox."""
    makers: list[tuple[type[Any], dict[str, Any], str]] = [
        (BubblewrapSpawner, {}, "writable"),
        (BubblewrapSpawner, {}, "readable"),
        (BubblewrapSpawner, {}, "hidden"),
        (BubblewrapSpawner, {}, "extra_args"),
        (SSHSpawner, {"host": "box"}, "extra_args"),
        (ContainerSpawner, {"image": "img"}, "volumes"),
        (ContainerSpawner, {"image": "img"}, "extra_args"),
    ]
    for cls, given, field in makers:
        name = f"{cls.__name__}.{field}"
        with pytest.raises(OptionsError, match=f"{name} must be a list of strings, not one"):
            cls(**given, **{field: "/srv"})
        with pytest.raises(OptionsError, match=f"{name} must hold strings, got int"):
            cls(**given, **{field: ["/srv", 1]})
    assert BubblewrapSpawner(writable=("/srv",)).writable == ("/srv",)


def test_ssh_and_container_spawners_check_their_settings_when_made() -> None:
    """A bad port or destination, or a value of env that is not a string, failed only
    at the first session (ssh's usage message, or a TypeError in the start-up script)."""
    for port in (0, -1, 70000, "22", True):
        with pytest.raises(OptionsError, match=r"SSHSpawner\.port must be a port number"):
            SSHSpawner("box", port=port)  # type: ignore[arg-type]
    for host in ("", "-oProxyCommand=x"):
        with pytest.raises(OptionsError, match=r"SSHSpawner\.host must be a destination"):
            SSHSpawner(host)
    for image in ("", "--privileged", None):  # the first was read by `run` as an option
        with pytest.raises(OptionsError, match=r"ContainerSpawner\.image must be an image name"):
            ContainerSpawner(image)  # type: ignore[arg-type]
    for make in (lambda e: SSHSpawner("box", env=e), lambda e: ContainerSpawner("img", env=e)):
        with pytest.raises(OptionsError, match=r"\.env\['N'\] must be a string, got int"):
            make({"N": 1})
    for make in (lambda e: SSHSpawner("box", env=e), lambda e: ContainerSpawner("img", env=e)):
        with pytest.raises(OptionsError, match=r"\.env must be a mapping"):  # AttributeError
            make([("A", "b")])
        with pytest.raises(OptionsError, match=r"\.env\['A'\] holds a NUL"):  # cut over SSH
            make({"A": "x\0y"})
    for options, words in (
        ("BatchMode=no", r"ssh_options must be a mapping"),  # an AttributeError at the start
        ({"Bad Key": "x"}, r"ssh_options: 'Bad Key' is not an SSH option name"),
        ({"Port": 22}, r"ssh_options\['Port'\] must be a one-line string"),
        ({"ProxyCommand": "a\nb"}, r"ssh_options\['ProxyCommand'\] must be a one-line"),
    ):
        with pytest.raises(OptionsError, match=words):
            SSHSpawner("box", ssh_options=options)  # type: ignore[arg-type]
    assert SSHSpawner("me@box", port=2222).port == 2222


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_bubblewrap_command_line(spawn: SpawnOptions, tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "keep").mkdir()
    wrapped = BubblewrapSpawner(writable=[str(tmp_path / "out")], hidden=["/srv"]).wrap(spawn)
    args = list(wrapped.args)
    assert os.path.basename(wrapped.command) == "bwrap"
    for flag in ("--die-with-parent", "--new-session", "--unshare-all", "--share-net"):
        assert flag in args
    pairs = triples(args)
    work = str(spawn.cwd)
    assert ("--ro-bind", "/", "/") in pairs
    assert ("--bind", work, work) in pairs  # the work folder, read-write
    assert ("--bind", str(tmp_path / "out"), str(tmp_path / "out")) in pairs
    spill = str(tmp_path / "ccwire-spill")
    assert ("--ro-bind", spill, spill) in pairs  # private files stay readable
    tmpfs = [b for a, b in itertools.pairwise(args) if a == "--tmpfs"]
    assert str(tmp_path) in tmpfs  # the folder holding the work folder (other sessions)
    assert "/tmp" in tmpfs and str(tmp_path / "home") in tmpfs  # a private HOME
    assert args[args.index("--chdir") + 1] == work
    assert args[args.index("--") + 1 :] == [spawn.command, *spawn.args]
    assert args.index("--bind") > max(i for i, a in enumerate(args) if a == "--tmpfs")
    assert not [a for a in args if SECRET in a]  # the environment is not on the command line
    assert wrapped.env["ANTHROPIC_API_KEY"] == SECRET
    assert BubblewrapSpawner(network=False).wrap(spawn).args.count("--share-net") == 0
    homed = BubblewrapSpawner(home=str(tmp_path / "keep")).wrap(spawn)
    assert ("--bind", str(tmp_path / "keep"), str(tmp_path / "home")) in triples(homed.args)


@pytest.mark.anyio
async def test_bubblewrap_does_not_start_spares(tmp_path: Path) -> None:
    # a claim would move the sandboxed CLI out of the one folder it may write, into
    # one next to other sessions' folders, which its sandbox does not hide
    sandboxed = ClaudeAgentOptions(
        cli_path=sys.executable, cwd=str(tmp_path), spawn_claude_code_process=BubblewrapSpawner()
    )
    with pytest.raises(SpawnError, match="does not start spares"):
        await prewarm(options=sandboxed)


@pytest.mark.skipif(shutil.which("ssh") is None, reason="the OpenSSH client is not installed")
def test_ssh_command_line_carries_nothing_of_the_session(spawn: SpawnOptions) -> None:
    spawner = SSHSpawner("me@build-box", cli="/opt/claude", port=2222, env={"HOME": "/srv/me"})
    local, line = spawner.wrap(spawn)
    assert local.args[-2] == "me@build-box" and local.args[local.args.index("-p") + 1] == "2222"
    assert local.args[-1].startswith("exec /bin/sh -c ")
    joined = " ".join(local.args)
    for value in (SECRET, "stream-json", "--settings", str(spawn.cwd)):
        assert value not in joined
    assert local.cwd is None and SECRET not in local.env.values()
    script = base64.b64decode(line.strip()).decode()
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert f"export ANTHROPIC_API_KEY={SECRET}" in script
    assert "export HOME=/srv/me" in script and "XDG_CONFIG_HOME" not in script
    assert "export PATH" not in script and "BASH_FUNC" not in script
    assert f"cd -- {spawn.cwd} || exit 125" in script
    assert '/opt/claude --output-format stream-json --settings "$ccwire_d"/0-settings-1.json' in (
        script
    )
    assert "'it'\"'\"'s'" in script  # quoted for sh
    payload = base64.b64encode(b'{"env": {"TOKEN": "x"}}').decode()
    assert f"printf %s {payload} | base64 -d" in script
    with pytest.raises(SpawnError, match="user"):
        spawner.wrap(SpawnOptions(command="claude", user="nobody"))


@pytest.mark.skipif(shutil.which("ssh") is None, reason="the OpenSSH client is not installed")
def test_ssh_options_given_win_over_the_defaults(spawn: SpawnOptions, tmp_path: Path) -> None:
    config = tmp_path / "ssh_config"
    config.write_text("Host *\n  ControlMaster auto\n  ControlPath /tmp/mux\n  BatchMode no\n")
    given = {"ServerAliveInterval": "5", "BatchMode": "no", "ControlPath": "/tmp/other"}
    local, _ = SSHSpawner("me@build-box", config_file=str(config), ssh_options=given).wrap(spawn)
    given_timeout = {"ConnectTimeout": "3"}
    local3, _ = SSHSpawner("me@build-box", ssh_options=given_timeout).wrap(spawn)
    effective3 = subprocess.run(
        [local3.command, "-G", *local3.args], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert "connecttimeout 3" in effective3
    effective = subprocess.run(  # what ssh makes of its command line (it connects nowhere)
        [local.command, "-G", *local.args], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert "serveraliveinterval 5" in effective and "serveralivecountmax 3" in effective
    assert "connecttimeout 15" in effective  # a host that never answers: not 60 s later
    assert "batchmode yes" in effective  # never a password prompt
    assert "controlmaster false" in effective  # a connection of its own
    assert not [line for line in effective if line.startswith("controlpath")]


@pytest.mark.skipif(shutil.which("ssh") is None, reason="the OpenSSH client is not installed")
def test_the_ssh_start_up_script_runs_in_a_posix_shell(spawn: SpawnOptions, tmp_path: Path) -> None:
    """The script the remote shell evaluates, run by the local ``sh`` with a stand-in CLI."""
    cli = tmp_path / "fake-claude"
    cli.write_text(
        '#!/bin/sh\necho "cwd=$(pwd) key=$ANTHROPIC_API_KEY"\n'
        'for a in "$@"; do echo "arg=$a"; done\ncat "$4"; echo; cat\n'
    )
    cli.chmod(0o755)
    _, line = SSHSpawner("unused", cli=str(cli)).wrap(spawn)
    bootstrap = (
        'IFS= read -r ccwire_boot || exit 125; eval "$(printf %s "$ccwire_boot" | base64 -d)"'
    )
    done = subprocess.run(
        ["sh", "-c", bootstrap], input=line + b"the session's input\n", capture_output=True,
        timeout=30, check=False,
    )  # fmt: skip
    out = done.stdout.decode()
    assert done.returncode == 0, done.stderr
    assert f"cwd={spawn.cwd} key={SECRET}" in out
    assert "arg=it's" in out and '{"env": {"TOKEN": "x"}}' in out
    assert out.rstrip().endswith("the session's input")


def _start_up(cli: str, private_files: tuple[str, ...] = ()) -> tuple[str, bytes]:
    """A marker variable (``NAME=value``) and the SSH start-up line of a session that
    sets it and runs ``cli`` (with ``private_files`` as its arguments)."""
    marker = f"CCWIRE_TEST_MARKER={os.urandom(6).hex()}"
    name, value = marker.split("=")
    options = SpawnOptions(
        command="claude", args=private_files, env={name: value}, private_files=private_files
    )
    return marker, SSHSpawner("unused", cli=cli).script(options)


def _wait_for_nap(marker: str) -> None:
    """Wait (bounded) until the watchdog of the session marked ``marker`` naps between
    two checks (a ``sleep`` of the session runs)."""
    deadline = time.monotonic() + 10
    while not [p for p in processes_with(marker) if _name(p) == "sleep"]:
        assert time.monotonic() < deadline, "the watchdog never napped"


def _name(pid: int) -> str | None:
    """The name of process ``pid``; None once it has gone (a nap that just ended)."""
    try:
        return psutil.Process(pid).name()
    except psutil.NoSuchProcess:
        return None


def test_the_ssh_watchdog_leaves_no_process_when_the_session_ends() -> None:
    """The start-up script as the remote shell runs it (here, with ``cat`` as the CLI):
    when the session ends, nothing of it is left, not even the watchdog's nap (its
    ``sleep`` outlived the shell by up to a second, an orphan on the remote machine)."""
    marker, line = _start_up("cat")
    shell = subprocess.Popen(
        ["sh", "-c", _BOOTSTRAP], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL
    )
    assert shell.stdin is not None
    shell.stdin.write(line)
    shell.stdin.flush()
    _wait_for_nap(marker)
    shell.stdin.close()  # ccwire ends the session: the CLI exits
    assert shell.wait(timeout=10) == 0
    assert processes_with(marker) == []


def test_the_ssh_watchdog_leaves_no_process_when_the_connection_drops() -> None:
    """The connection drops (the remote shell's parent, the SSH session, dies): the
    watchdog stops the CLI, and then nothing of the session is left (its 5 s nap
    between SIGTERM and SIGKILL outlived the shell)."""
    marker, line = _start_up("cat")
    session = subprocess.Popen(  # the shell's parent: the SSH session
        ["sh", "-c", 'sh -c "$0"; :', _BOOTSTRAP], stdin=subprocess.PIPE
    )
    assert session.stdin is not None
    session.stdin.write(line)
    session.stdin.flush()
    _wait_for_nap(marker)
    [shell] = psutil.Process(session.pid).children()
    session.kill()  # the connection drops; the CLI still has its input open
    session.wait(timeout=10)
    shell.wait(timeout=20)  # the watchdog saw it, stopped the CLI, and the shell ended
    session.stdin.close()
    assert processes_with(marker) == []


def test_a_dropped_connection_leaves_nothing_of_the_session_on_the_remote_side(
    tmp_path: Path,
) -> None:
    """The connection drops while a tool of the CLI runs: the SSH session dies, and with
    it the remote shell's output. The shell reported the CLI stopped by the watchdog
    ("Terminated") on that output, and SIGPIPE killed it before its clean-up: the
    tool ran on, and the private files (secret argument values) stayed in the remote
    temporary folder."""
    secret = tmp_path / "secret.json"
    secret.write_text("{}")
    cli = tmp_path / "fake-claude"  # a tool left running, then the CLI's work
    cli.write_text("#!/bin/sh\nsleep 300 </dev/null >/dev/null 2>&1 &\nexec cat\n")
    cli.chmod(0o755)
    marker, line = _start_up(str(cli), (str(secret),))
    remote_tmp = tmp_path / "remote-tmp"
    remote_tmp.mkdir()
    session = subprocess.Popen(  # the shell's parent: the SSH session, and its channel
        ["sh", "-c", 'sh -c "$0"; :', _BOOTSTRAP],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "TMPDIR": str(remote_tmp)},
    )
    assert session.stdin is not None and session.stdout and session.stderr
    try:
        session.stdin.write(line)
        session.stdin.flush()
        _wait_for_nap(marker)
        [shell] = psutil.Process(session.pid).children()
        session.kill()  # the connection drops: the channel is gone
        session.stdout.close()
        session.stderr.close()
        session.wait(timeout=10)
        shell.wait(timeout=20)  # the watchdog saw it, stopped the CLI, the shell ended
        assert processes_with(marker) == []
        assert list(remote_tmp.iterdir()) == []
    finally:
        session.stdin.close()
        for pid in processes_with(marker):
            os.kill(pid, 9)


def test_what_a_killed_remote_cli_started_is_stopped(tmp_path: Path) -> None:
    """The remote CLI is killed (out of memory, SIGKILL) while a tool runs: the CLI
    runs its tools in sessions of their own and stops them itself, which a killed CLI
    cannot do. The remote shell stops them (here the "tool" is a ``sleep`` the stand-in
    CLI leaves behind); they ran on, orphans on the remote machine."""
    cli = tmp_path / "fake-claude"
    cli.write_text("#!/bin/sh\nsleep 300 </dev/null >/dev/null 2>&1 &\nkill -KILL $$\n")
    cli.chmod(0o755)
    marker, line = _start_up(str(cli))
    try:
        done = subprocess.run(
            ["sh", "-c", _BOOTSTRAP], input=line, capture_output=True, timeout=30, check=False
        )
        assert done.returncode == 128 + 9, done.stderr
        assert processes_with(marker) == []
    finally:
        for pid in processes_with(marker):
            os.kill(pid, 9)


@pytest.mark.skipif(find_container_runtime() is None, reason="no podman or docker client")
def test_container_command_line(spawn: SpawnOptions, tmp_path: Path) -> None:
    wrapped = ContainerSpawner("img:1", cli="claude", volumes=["/data:/data:ro"]).wrap(spawn)
    args = list(wrapped.args)
    assert args[:5] == ["run", "--rm", "-i", "--init", "--name"]
    assert args[args.index("img:1") + 1 :] == ["claude", *spawn.args]
    pairs = list(itertools.pairwise(args))
    work = str(spawn.cwd)
    assert ("-v", f"{work}:{work}") in pairs and ("--workdir", work) in pairs
    spill = str(tmp_path / "ccwire-spill")
    assert ("-v", f"{spill}:{spill}:ro") in pairs and ("-v", "/data:/data:ro") in pairs
    assert ("-e", "ANTHROPIC_API_KEY") in pairs and ("-e", "PATH") not in pairs
    assert not [a for a in args if SECRET in a]
    assert wrapped.env["ANTHROPIC_API_KEY"] == SECRET  # the client passes the value on


def test_the_repr_of_a_spawner_masks_the_values_of_its_env() -> None:
    """A value with no secret-looking name or shape (the key of a database, a token
    under a plain name) was shown whole by the spawner's repr, and so by the repr of the
    options holding it: in a log, a traceback."""
    plain = "hunter2-plain-value"
    env = {"DB_KEY_FOR_APP": plain, "TOKEN": SECRET}
    for spawner in (SSHSpawner("box", env=env), ContainerSpawner("img:1", env=env)):
        for shown in (repr(spawner), repr(ClaudeAgentOptions(spawn_claude_code_process=spawner))):
            assert plain not in shown and SECRET not in shown
            assert "'DB_KEY_FOR_APP': '***'" in shown and "'TOKEN': '***'" in shown
        assert repr(spawner).startswith(type(spawner).__name__ + "(")
        assert spawner.env == env  # the values themselves are kept


@pytest.mark.skipif(find_container_runtime() is None, reason="no podman or docker client")
def test_container_refuses_a_folder_whose_path_has_a_colon(spawn: SpawnOptions) -> None:
    """``-v a:b:a:b`` would mount the wrong folder, or fail inside the engine."""
    odd = dataclasses.replace(spawn, cwd="/work/a:b")
    with pytest.raises(SpawnError, match=r"'/work/a:b'.*':' in a path"):
        ContainerSpawner("img:1").wrap(odd)
    args = ContainerSpawner("img:1", mount_cwd=False).wrap(odd).args  # not mounted: fine
    assert ("--workdir", "/work/a:b") in itertools.pairwise(args)
    assert not [a for a in args if a.startswith("/work/a:b:")]


def test_load_spawner_takes_a_function_or_a_class() -> None:
    from ccwire._app.loaders import UsageError, load_spawner

    assert isinstance(load_spawner("ccwire:BubblewrapSpawner"), BubblewrapSpawner)
    assert load_spawner("ccwire:spawn_local") is __import__("ccwire").spawn_local
    for spec, why in [
        ("ccwire", "expects package.module:attribute"),
        ("ccwire:nothing_here", "has no attribute"),
        ("no_such_module_x:f", "importing 'no_such_module_x' failed"),
        ("ccwire:__version__", "expected a spawner"),
        ("ccwire:SSHSpawner", "cannot be made without arguments"),
    ]:
        with pytest.raises(UsageError, match=why):
            load_spawner(spec)
