"""The fuzz suite's hypothesis profile.

The profile has no deadline (a slow CI machine must not turn into a flaky failure) and no
example database (nothing is written outside the tests). ``CCWIRE_FUZZ_EXAMPLES=N``
raises every property's ``max_examples`` to ``N`` (see ``_support.fuzz_settings``).
At the end of the session one line reports how many cases ran, e.g.
``fuzz: 12345 cases over 9 properties`` (``report.py``).
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

from tests.fuzz._support import PROFILE

settings.register_profile(
    PROFILE,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
