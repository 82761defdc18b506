"""Batch test fixtures: the real CLI (skipped like the e2e suite when it is missing), the
fake CLI of ``fake_cli.py``, and `Holds`, which keeps fake sessions waiting."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from ccwire import ClaudeAgentOptions
from tests.e2e.conftest import CLI_PATH

BATCH_DIR = Path(__file__).parent
FAKE_CLI = BATCH_DIR / "fake_cli.py"
REAL_CLI_MODULES = ("test_batch_cli_e2e", "test_batch_e2e", "test_batch_ray", "test_batch_budget")
FakeOptions = Callable[..., ClaudeAgentOptions]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        path = str(item.fspath).replace(os.sep, "/")
        if "tests/batch/" in path and Path(path).stem in REAL_CLI_MODULES:
            item.add_marker(pytest.mark.e2e)
            if CLI_PATH is None:
                item.add_marker(
                    pytest.mark.skip(reason="Claude Code CLI not installed (run `make cli`)")
                )


@pytest.fixture
def cli_path() -> str:
    """The real Claude Code CLI (the test is skipped without it)."""
    if CLI_PATH is None:
        pytest.skip("Claude Code CLI not installed (run `make cli`)")
    return CLI_PATH


class Holds:
    """A loopback server that keeps ``hold``/``act`` sessions of the fake CLI waiting.

    Each waiting session connects and says who it is; `release` lets every waiting one
    go on, and after `release(forever=True)` new ones go on at once.
    """

    def __init__(self) -> None:
        self._server = socket.create_server(("127.0.0.1", 0))
        self.address = f"127.0.0.1:{self._server.getsockname()[1]}"
        self.arrived: list[dict[str, Any]] = []
        self._waiting: list[socket.socket] = []
        self._open = False
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            line = b""
            while not line.endswith(b"\n"):
                chunk = conn.recv(4096)
                if not chunk:
                    break
                line += chunk
            with self._cond:
                if line:
                    self.arrived.append(json.loads(line))
                if self._open:
                    conn.sendall(b"go\n")
                    conn.close()
                else:
                    self._waiting.append(conn)
                self._cond.notify_all()

    def wait_for(self, count: int, timeout: float = 60) -> list[dict[str, Any]]:
        """Block (in a thread) until `count` sessions arrived in all; return them."""
        with self._cond:
            assert self._cond.wait_for(lambda: len(self.arrived) >= count, timeout), (
                f"{len(self.arrived)} of {count} sessions arrived"
            )
            return list(self.arrived)

    def release(self, *, forever: bool = False) -> None:
        """Let every waiting session go on (and, with `forever`, every later one)."""
        with self._cond:
            self._open = self._open or forever
            for conn in self._waiting:
                try:
                    conn.sendall(b"go\n")
                finally:
                    conn.close()
            self._waiting.clear()

    def close(self) -> None:
        self.release(forever=True)
        # shutdown() wakes the accept() of `_serve` (EINVAL), which then ends; the socket
        # is closed only after: a thread that enters accept() on a closed descriptor can
        # take the connections of a later server given the same descriptor (a scripted
        # model's: the CLI's request then waited forever for an answer)
        with contextlib.suppress(OSError):
            self._server.shutdown(socket.SHUT_RDWR)
        self._thread.join(10)
        self._server.close()


@pytest.fixture
def holds() -> Iterator[Holds]:
    server = Holds()
    try:
        yield server
    finally:
        server.close()


def fake_cli_wrapper(directory: Path, holds: Holds) -> str:
    """An executable that runs ``fake_cli.py`` waiting on `holds` (as ``cli_path``; the
    address is set here, since the SDK passes the CLI only part of its environment)."""
    wrapper = directory / "fake-claude"
    wrapper.write_text(
        f"#!/bin/sh\nFAKE_HOLD={holds.address} export FAKE_HOLD\n"
        f'exec {shlex.quote(sys.executable)} {shlex.quote(str(FAKE_CLI))} "$@"\n'
    )
    wrapper.chmod(0o755)
    return str(wrapper)


@pytest.fixture
def fake_options(tmp_path: Path, holds: Holds) -> FakeOptions:
    """``fake_options(**options)``: options running the fake CLI (waiting on `holds`)."""
    wrapper = fake_cli_wrapper(tmp_path, holds)

    def make(**kw: Any) -> ClaudeAgentOptions:
        kw.setdefault("initialize_timeout", 20)
        return ClaudeAgentOptions(cli_path=wrapper, cwd=str(tmp_path), **kw)

    return make


def fake_cli_processes(holds: Holds) -> list[psutil.Process]:
    """The live fake CLI processes of one test (those waiting on its `holds`), wherever
    they were started (here, or by a Ray worker); zombies excluded."""
    found = []
    for proc in psutil.process_iter():
        try:
            if (
                str(FAKE_CLI) in proc.cmdline()
                and proc.status() != psutil.STATUS_ZOMBIE
                and proc.environ().get("FAKE_HOLD") == holds.address
            ):
                found.append(proc)
        except psutil.Error:
            continue
    return found
