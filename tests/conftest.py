"""Shared test configuration.

* Every async test runs on asyncio and on trio.
* Every test is checked for MCP conformance: whatever an in-process SDK MCP server
  answers or sends during the test (whether the test calls it directly or a fake,
  fault or real CLI reaches it over the control protocol) is validated against the
  official MCP schema (``mcp-types``), and a violation fails the test at teardown
  (see :mod:`tests.fixtures.mcp_schema`).
* No test leaves SIGINT or SIGTERM ignored: an ignored signal is inherited by every
  process the later tests start.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest

from tests.fixtures.mcp_schema import SchemaCheck, conforming

# printed at the end of the run, with or without `pytest -n`: the lines tests record
# (`record_property("summary", line)`) and the fuzz suite's case count
pytest_plugins = ["tests.fixtures.summary", "tests.fuzz.report"]


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Run each ``@pytest.mark.anyio`` test once per backend."""
    return str(request.param)


@pytest.fixture(autouse=True, scope="session")
def offline_sessions_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Offline runs keep their sessions (`ccwire run --offline`, `ccwire demo`): in a
    folder of the test run's own, not in the user's ~/.ccwire/offline."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CCWIRE_OFFLINE_DIR", str(tmp_path_factory.mktemp("offline-sessions")))
        yield


@pytest.fixture(autouse=True, scope="session")
def session_claims_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Session claims (one owner per session id on the host: a lock file in
    `$XDG_RUNTIME_DIR/ccwire-UID/sessions`, see `ownership.claims_folder`) in a folder of
    this test process's own, which the processes it starts inherit. Tests resume fixed ids
    (one test's asyncio and trio runs use the same): on two workers at once (`pytest -n`),
    or beside another test run on the machine, they refused each other."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_RUNTIME_DIR", str(tmp_path_factory.mktemp("runtime")))
        yield


@pytest.fixture(autouse=True)
def signals_left_alone() -> Iterator[None]:
    """Fail a test that leaves SIGINT or SIGTERM ignored when it found them not ignored,
    and put them back: an ignored signal is inherited by every process the later tests
    start (a handler is not: Ray's, for one, installed by its fixtures, is left as is)."""
    kept = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    yield
    leaked = [
        sig
        for sig, handler in kept.items()
        if signal.getsignal(sig) is signal.SIG_IGN and handler is not signal.SIG_IGN
    ]
    for sig in leaked:
        signal.signal(sig, kept[sig])
    assert not leaked, f"the test left {', '.join(s.name for s in leaked)} ignored"


@pytest.fixture(autouse=True)
def mcp_schema_check() -> Iterator[SchemaCheck]:
    """Validate every SDK MCP server message of the test against the MCP schema."""
    with conforming() as check:
        yield check
