"""Tests of find_cli: each step of the discovery order, and the not-found message."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ccwire._core.errors import CLINotFoundError
from ccwire._transport import discovery as _discovery
from ccwire._transport.discovery import find_cli


def make_exe(path: Path, *, executable: bool = True) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\necho fake claude\n")
    path.chmod(0o755 if executable else 0o644)
    return str(path)


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """Empty home, PATH dir and project dir; the system-wide location points into tmp."""
    dirs = {name: tmp_path / name for name in ("home", "bin", "project", "system", "elsewhere")}
    for d in dirs.values():
        d.mkdir()
    monkeypatch.chdir(dirs["elsewhere"])  # the process's own directory: nothing there
    system = str(dirs["system"] / "claude")
    monkeypatch.setattr(
        _discovery,
        "_USUAL_LOCATIONS",
        tuple(
            system if loc == "/usr/local/bin/claude" else loc for loc in _discovery._USUAL_LOCATIONS
        ),
    )
    return dirs


def env_for(world: dict[str, Path], **extra: str) -> dict[str, str]:
    return {"PATH": str(world["bin"]), "HOME": str(world["home"]), **extra}


def test_explicit_path_wins(world: dict[str, Path]) -> None:
    explicit = make_exe(world["project"] / "my-claude")
    make_exe(world["bin"] / "claude")
    env = env_for(world, CCWIRE_CLI_PATH=make_exe(world["home"] / "env-claude"))
    assert find_cli(explicit, environ=env, cwd=world["project"]) == explicit
    assert find_cli(Path(explicit), environ=env, cwd=world["project"]) == explicit


def test_explicit_path_missing(world: dict[str, Path]) -> None:
    make_exe(world["bin"] / "claude")  # must not be used as a fallback
    missing = world["project"] / "nope"
    with pytest.raises(
        CLINotFoundError, match=r"^Claude Code not found at: .*does not exist"
    ) as info:
        find_cli(missing, environ=env_for(world), cwd=world["project"])
    assert str(missing) in str(info.value)
    assert info.value.searched == (str(missing),)


def test_explicit_path_not_executable(world: dict[str, Path]) -> None:
    plain = make_exe(world["project"] / "claude", executable=False)
    with pytest.raises(CLINotFoundError, match=r"^Claude Code not found at: .*not an executable"):
        find_cli(plain, environ=env_for(world), cwd=world["project"])
    with pytest.raises(CLINotFoundError, match="not an executable file"):
        find_cli(world["project"], environ=env_for(world), cwd=world["project"])  # a directory


def test_a_folder_holding_the_cli_is_refused_naming_the_executable(
    world: dict[str, Path],
) -> None:
    """``cli_path="~/.ccwire/cli"`` (the folder the install line puts the CLI in), or the
    npm package's folder: the error names the executable inside, to give instead."""
    prefix = world["home"] / ".ccwire" / "cli"
    inside = make_exe(prefix / "node_modules" / ".bin" / "claude")
    package = prefix / "node_modules" / "@anthropic-ai" / "claude-code"
    in_package = make_exe(package / "bin" / "claude.exe")
    for folder, executable in ((prefix, inside), (package, in_package)):
        with pytest.raises(CLINotFoundError) as caught:
            find_cli(folder, environ=env_for(world), cwd=world["project"])
        assert str(caught.value).startswith(
            f"Claude Code not found at: {folder} (given by cli_path: a folder; the CLI in "
            f"it is {executable}: give that)"
        ), str(caught.value)
        assert "npm install" not in str(caught.value)  # installed already: no install hint
        assert find_cli(executable, environ=env_for(world)) == executable
    with pytest.raises(CLINotFoundError, match=r"\(given by CCWIRE_CLI_PATH: a folder; the CLI"):
        find_cli(environ=env_for(world, CCWIRE_CLI_PATH=str(prefix)))


def test_env_var(world: dict[str, Path]) -> None:
    from_env = make_exe(world["home"] / "env-claude")
    make_exe(world["bin"] / "claude")
    env = env_for(world, CCWIRE_CLI_PATH=from_env)
    assert find_cli(environ=env, cwd=world["project"]) == from_env


def test_env_var_pointing_nowhere(world: dict[str, Path]) -> None:
    env = env_for(world, CCWIRE_CLI_PATH=str(world["home"] / "gone"))
    with pytest.raises(CLINotFoundError, match="CCWIRE_CLI_PATH"):
        find_cli(environ=env, cwd=world["project"])


def test_path(world: dict[str, Path]) -> None:
    on_path = make_exe(world["bin"] / "claude")
    make_exe(world["project"] / "node_modules" / ".bin" / "claude")
    assert find_cli(environ=env_for(world), cwd=world["project"]) == on_path


def test_path_skips_non_executable(world: dict[str, Path]) -> None:
    make_exe(world["bin"] / "claude", executable=False)
    local = make_exe(world["project"] / "node_modules" / ".bin" / "claude")
    assert find_cli(environ=env_for(world), cwd=world["project"]) == local


def test_project_local_in_cwd(world: dict[str, Path]) -> None:
    local = make_exe(world["project"] / "node_modules" / ".bin" / "claude")
    make_exe(world["home"] / ".local" / "bin" / "claude")
    assert find_cli(environ=env_for(world), cwd=world["project"]) == local


def test_project_local_in_parent(world: dict[str, Path]) -> None:
    local = make_exe(world["project"] / "node_modules" / ".bin" / "claude")
    deep = world["project"] / "src" / "pkg"
    deep.mkdir(parents=True)
    assert find_cli(environ=env_for(world), cwd=deep) == local
    assert find_cli(environ=env_for(world), cwd=str(deep)) == local


@pytest.mark.parametrize(
    "relative",
    [
        ".ccwire/cli/node_modules/.bin/claude",  # where INSTALL_COMMAND puts it
        ".npm-global/bin/claude",
        "SYSTEM",
        ".local/bin/claude",
        "node_modules/.bin/claude",
        ".yarn/bin/claude",
        ".claude/local/claude",
    ],
)
def test_usual_locations(world: dict[str, Path], relative: str) -> None:
    target = world["system"] / "claude" if relative == "SYSTEM" else world["home"] / relative
    expected = make_exe(target)
    # cwd is outside home, so ~/node_modules/.bin/claude is not found as project-local
    assert find_cli(environ=env_for(world), cwd=world["project"]) == expected


def test_project_install_found_from_the_process_directory(
    world: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # the session runs in some other directory; the CLI is installed in the project
    # the program was started from
    expected = make_exe(world["project"] / "node_modules" / ".bin" / "claude")
    monkeypatch.chdir(world["project"])
    assert find_cli(environ=env_for(world), cwd=world["elsewhere"]) == expected


def test_usual_locations_order(world: dict[str, Path]) -> None:
    first = make_exe(world["home"] / ".ccwire" / "cli" / "node_modules" / ".bin" / "claude")
    make_exe(world["home"] / ".npm-global" / "bin" / "claude")
    make_exe(world["home"] / ".claude" / "local" / "claude")
    assert find_cli(environ=env_for(world), cwd=world["project"]) == first


def test_not_found_lists_everything(world: dict[str, Path]) -> None:
    deep = world["project"] / "a"
    deep.mkdir()
    with pytest.raises(CLINotFoundError) as info:
        find_cli(environ=env_for(world), cwd=deep)
    message = str(info.value)
    assert message.startswith("Claude Code not found")  # the reference's words
    assert _discovery.INSTALL_COMMAND in message
    assert "npm install --prefix ~/.ccwire/cli @anthropic-ai/claude-code@2.1.330" in message
    assert "CCWIRE_CLI_PATH" in message
    assert "cli_path" in message
    assert str(world["bin"]) in message
    expected = [
        str(deep / "node_modules" / ".bin" / "claude"),
        str(world["project"] / "node_modules" / ".bin" / "claude"),
        os.path.join(os.sep, "node_modules", ".bin", "claude"),
        str(world["home"] / ".ccwire" / "cli" / "node_modules" / ".bin" / "claude"),
        str(world["home"] / ".npm-global" / "bin" / "claude"),
        str(world["system"] / "claude"),
        str(world["home"] / ".claude" / "local" / "claude"),
    ]
    for path in expected:
        assert path in info.value.searched
        assert path in message
