"""claude-agent-sdk's own examples, run on ccwire with one import changed: each gives the
same output (ids, costs and durations aside) and the same exit code as on the reference.

Left out, each for a reason:

* ``streaming_mode_ipython.py``: IPython snippets, not a program.
* ``streaming_mode.py concurrent_responses`` / ``with_interrupt`` / ``control_protocol``
  / ``error_handling``: built around fixed ``sleep()`` calls racing the model (an
  interrupt "after 2 seconds", a 20-second timeout), so what they print depends on
  timing, not on the SDK; the interrupt path is covered by tests/e2e/reference.
* ``filesystem_agents.py`` and ``agents.py``: they read the reference's own source tree
  (``src/claude_agent_sdk/types.py``), which is not where the examples run.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.compat.reference_examples import REF_SRC, run_both
from tests.e2e.conftest import CLI_PATH

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(CLI_PATH is None, reason="Claude Code CLI not installed"),
]

EXAMPLES: list[tuple[str, list[str]]] = [
    ("quick_start.py", []),
    ("system_prompt.py", []),
    ("tools_option.py", []),
    ("max_budget_usd.py", []),
    ("mcp_calculator.py", []),
    ("tool_permission_callback.py", []),
    ("include_partial_messages.py", []),
    ("stderr_callback_example.py", []),
    ("plugin_example.py", []),
    ("setting_sources.py", ["all"]),
    ("streaming_mode_trio.py", []),
    ("hooks.py", ["all"]),
    *[
        ("streaming_mode.py", [name])
        for name in (
            "basic_streaming",
            "multi_turn_conversation",
            "manual_message_handling",
            "with_options",
            "async_iterable_prompt",
            "bash_command",
        )
    ],
]


@pytest.fixture(scope="module")
def examples_dir(reference_python: Path) -> Path:
    if not REF_SRC.is_dir():
        message = "the reference's examples are not unpacked: run `make ref-venv`"
        if os.environ.get("CCWIRE_REQUIRE_REF") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return REF_SRC


@pytest.mark.parametrize(("name", "args"), EXAMPLES, ids=[" ".join([n, *a]) for n, a in EXAMPLES])
def test_example_runs_as_on_the_reference(
    name: str, args: list[str], examples_dir: Path, reference_python: Path
) -> None:
    assert CLI_PATH is not None
    theirs, ours = run_both(name, args, str(reference_python), CLI_PATH)
    assert "Traceback" not in ours.stderr or theirs.returncode != 0, ours.stderr[-3000:]
    assert ours.returncode == theirs.returncode, (ours.stderr[-2000:], theirs.stderr[-2000:])
    assert ours.stdout == theirs.stdout
    assert ours.stdout.strip(), "the example printed nothing"
