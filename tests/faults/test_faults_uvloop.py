"""The fault suite again, on uvloop (see :mod:`tests.fixtures.uvloop`)."""

from __future__ import annotations

import pytest

pytest.importorskip("uvloop")

from tests.faults.test_faults import *  # noqa: F403
from tests.fixtures.uvloop import anyio_backend, test_the_loop_is_uvloops  # noqa: F401
