"""Real database servers for the session store tests, started on loopback and stopped.

* `postgres_dsn`: a throw-away PostgreSQL cluster (`initdb` + `pg_ctl`) in a temporary
  directory, trust authentication, listening on 127.0.0.1 on a free port. `initdb`
  refuses to run as root, so as root the cluster belongs to the `postgres` user.
* `redis_url`: a `redis-server` on 127.0.0.1 on a free port, no persistence, its
  working directory a temporary one.

Both are session-scoped. When a server's binaries (or its Python driver) are missing,
the tests that need it skip with the reason locally, and FAIL under `CI=true`: CI
installs them (`.ci/run`), so a skip there would hide a broken install step.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pytest

_IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
_START_TIMEOUT = 60.0


def _unavailable(reason: str) -> NoReturn:
    """Skip locally, fail in CI."""
    if _IN_CI:
        pytest.fail(f"{reason} (CI must have it: see .ci/run)", pytrace=False)
    pytest.skip(reason)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pg_bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(
        glob.glob(f"/usr/lib/postgresql/*/bin/{name}"),
        key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0,
    )
    return candidates[-1] if candidates else None


def _as_owner(argv: list[str], as_postgres: bool) -> list[str]:
    if not as_postgres:
        return argv
    return ["su", "postgres", "-s", "/bin/sh", "-c", subprocess.list2cmdline(argv)]


@pytest.fixture(scope="session")
def postgres_dsn() -> Iterator[str]:
    """The DSN of a fresh PostgreSQL server on loopback (database `postgres`)."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        _unavailable("psycopg is not installed (pip install 'ccwire[postgres]')")
    initdb, pg_ctl = _pg_bin("initdb"), _pg_bin("pg_ctl")
    if initdb is None or pg_ctl is None:
        _unavailable("PostgreSQL server binaries (initdb, pg_ctl) are not installed")
    assert initdb is not None and pg_ctl is not None
    as_postgres = os.geteuid() == 0
    base = Path(tempfile.mkdtemp(prefix="ccwire-pg-"))
    data = base / "data"
    if as_postgres:
        shutil.chown(base, user="postgres")
    port = _free_port()
    try:
        subprocess.run(
            _as_owner([initdb, "-D", str(data), "-A", "trust", "-U", "postgres"], as_postgres),
            check=True,
            capture_output=True,
            timeout=_START_TIMEOUT,
        )
        options = f"-p {port} -k {base} -c listen_addresses=127.0.0.1 -c fsync=off"
        subprocess.run(
            _as_owner(
                [pg_ctl, "-D", str(data), "-l", str(base / "log"), "-o", options, "-w", "start"],
                as_postgres,
            ),
            check=True,
            capture_output=True,
            timeout=_START_TIMEOUT,
        )
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        log = (base / "log").read_text(errors="replace") if (base / "log").exists() else ""
        stderr = getattr(exc, "stderr", b"") or b""
        shutil.rmtree(base, ignore_errors=True)
        pytest.fail(f"could not start PostgreSQL: {exc}\n{stderr.decode(errors='replace')}\n{log}")
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            _as_owner([pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop"], as_postgres),
            capture_output=True,
            timeout=_START_TIMEOUT,
            check=False,
        )
        shutil.rmtree(base, ignore_errors=True)


@contextlib.contextmanager
def redis_server(port: int | None = None) -> Iterator[subprocess.Popen[bytes]]:
    """A `redis-server` on 127.0.0.1 (on ``port``, else a free one), stopped at the end;
    its port is ``proc.args`` after ``--port``."""
    try:
        import redis  # noqa: F401
    except ImportError:
        _unavailable("redis-py is not installed (pip install 'ccwire[redis]')")
    server = shutil.which("redis-server")
    if server is None:
        _unavailable("redis-server is not installed (apt-get install redis-server)")
    assert server is not None
    workdir = Path(tempfile.mkdtemp(prefix="ccwire-redis-"))
    port = port or _free_port()
    proc = subprocess.Popen(
        [
            server,
            "--port", str(port),
            "--bind", "127.0.0.1",
            "--save", "",
            "--appendonly", "no",
            "--dir", str(workdir),
            "--daemonize", "no",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )  # fmt: skip
    ready = threading.Event()
    output: list[str] = []

    def watch() -> None:  # the server says when it accepts connections
        assert proc.stdout is not None
        for raw in proc.stdout:
            line = raw.decode(errors="replace")
            output.append(line)
            if "Ready to accept connections" in line:
                ready.set()
        ready.set()  # it exited

    reader = threading.Thread(target=watch, daemon=True)
    reader.start()
    try:
        if not ready.wait(_START_TIMEOUT) or proc.poll() is not None:
            pytest.fail("could not start redis-server:\n" + "".join(output))
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=_START_TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        reader.join(timeout=_START_TIMEOUT)
        shutil.rmtree(workdir, ignore_errors=True)


def redis_port(proc: subprocess.Popen[bytes]) -> int:
    """The port a `redis_server()` listens on."""
    args = [str(a) for a in proc.args]  # type: ignore[union-attr]
    return int(args[args.index("--port") + 1])


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """The URL of a fresh Redis server on loopback (database 0)."""
    with redis_server() as proc:
        yield f"redis://127.0.0.1:{redis_port(proc)}/0"
