"""The fuzz suite's hypothesis profile and its case count.

The profile has no deadline (a slow CI machine must not turn into a flaky failure) and no
example database (nothing is written outside the tests). ``CCWIRE_FUZZ_EXAMPLES=N``
raises every property's ``max_examples`` to ``N`` (see ``_support.fuzz_settings``).
At the end of the session one line reports how many cases ran, e.g.
``fuzz: 12345 cases over 9 properties`` (``-v`` adds the count of each property).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings

from tests.fuzz._support import CASES, PROFILE

settings.register_profile(
    PROFILE,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


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
