"""The subprocess transport's tests again, on uvloop (see :mod:`tests.fixtures.uvloop`);
the fault suite does the same in ``tests/faults``."""

from __future__ import annotations

import pytest

pytest.importorskip("uvloop")

from tests.fixtures.uvloop import anyio_backend, inherits_own_stdio, test_the_loop_is_uvloops  # noqa: F401
from tests.transport.test_subprocess_transport import *  # noqa: F403

test_output_closed_but_process_lingers = inherits_own_stdio(
    test_output_closed_but_process_lingers  # noqa: F405
)
test_a_child_that_closed_its_stdin_but_runs_on_is_a_connection_error = inherits_own_stdio(
    test_a_child_that_closed_its_stdin_but_runs_on_is_a_connection_error  # noqa: F405
)
