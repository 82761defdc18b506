"""The fault suite again, on uvloop (see :mod:`tests.fixtures.uvloop`)."""

from __future__ import annotations

import pytest

pytest.importorskip("uvloop")

from tests.faults.test_faults import *  # noqa: F403
from tests.fixtures.uvloop import anyio_backend, inherits_own_stdio, test_the_loop_is_uvloops  # noqa: F401

test_partial_lines_and_a_final_line_without_newline = inherits_own_stdio(
    test_partial_lines_and_a_final_line_without_newline  # noqa: F405
)
test_stdin_closes_under_us = inherits_own_stdio(test_stdin_closes_under_us)  # noqa: F405
