"""The fuzz suite's case count at the end of the session: ``fuzz: N cases over M
properties`` (``-v`` adds the count of each property).

A plugin of the whole test run (``tests/conftest.py`` loads it), so that it reports
under ``pytest -n`` too (pytest-xdist, as `make test` runs): each worker hands its
counts to the controller through xdist's ``workeroutput``, and the controller, which
runs no test itself, adds them up and prints them.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.fuzz._support import CASES

_KEY = "fuzz_cases"


def pytest_sessionfinish(session: pytest.Session) -> None:
    """On an xdist worker: hand this worker's counts to the controller."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput[_KEY] = dict(CASES)


@pytest.hookimpl(optionalhook=True)  # an xdist hook: absent without pytest-xdist
def pytest_testnodedown(node: Any, error: object) -> None:
    """On the xdist controller: add a worker's counts to this process's."""
    CASES.update(getattr(node, "workeroutput", {}).get(_KEY, {}))


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config
) -> None:
    """Print ``fuzz: N cases over M properties`` (and per property with ``-v``)."""
    ran = {name: n for name, n in CASES.items() if n}
    if not ran:
        return
    if config.get_verbosity() > 0:
        terminalreporter.section("fuzz cases per property")
        for name, n in sorted(ran.items()):
            terminalreporter.write_line(f"{n:8d}  {name}")
    terminalreporter.write_line(f"fuzz: {sum(ran.values())} cases over {len(ran)} properties")
