"""The subprocess transport's tests again, on uvloop (see :mod:`tests.fixtures.uvloop`);
the fault suite does the same in ``tests/faults``."""

from __future__ import annotations

import pytest

pytest.importorskip("uvloop")

from tests.fixtures.uvloop import anyio_backend, inherits_own_stdio, test_the_loop_is_uvloops  # noqa: F401
from tests.transport.test_process_group import (  # noqa: F401
    test_a_cli_that_exits_leaving_a_child_behind_keeps_its_exit_status,
    test_a_cli_that_needs_sigkill_takes_its_children_with_it,
    test_a_wrapper_script_that_does_not_exec_takes_the_cli_with_it,
)
from tests.transport.test_subprocess_transport import *  # noqa: F403

test_output_closed_but_process_lingers = inherits_own_stdio(
    test_output_closed_but_process_lingers  # noqa: F405
)
test_a_child_that_closed_its_stdin_but_runs_on_is_a_connection_error = inherits_own_stdio(
    test_a_child_that_closed_its_stdin_but_runs_on_is_a_connection_error  # noqa: F405
)
