"""claude-agent-sdk's own unit tests, run against the drop-in (`ccwire compat install`).

The reference's 0.2.187 sdist ships its test suite; ``make ref-venv`` unpacks it under
``bench/.ref-src`` (ignored by git: none of the reference's code is kept here). The
tests that use only its public API (and ``_internal.message_parser``, which the
drop-in serves) run unchanged, with the reference's own ``conftest.py`` (asyncio and
trio), in a venv where the drop-in is installed (`make_venv` of ``test_dropin``: ccwire's
source and this venv's packages on its path, the drop-in in its own site-packages),
and must all pass. The others import or patch the reference's private modules
(``_internal.query``, ``_internal.transport.subprocess_cli``, ...): each is listed
with the reason, and every file of the suite is accounted for, so a new file of a new
reference version is looked at rather than silently skipped.

Without the unpacked sdist these tests skip, or fail under ``CCWIRE_REQUIRE_REF=1``.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping
from pathlib import Path

import pytest

from tests.compat.reference_examples import SDIST
from tests.compat.test_dropin import Venv, make_venv

TESTS = SDIST / "tests"

RUN: Mapping[str, tuple[str, ...]] = {
    "test_errors.py": (),  # () runs the whole file
    "test_message_parser.py": (),
    "test_rate_limit_event_repro.py": (),
    "test_run_end_subprocess.py": (),
    "test_session_helpers_store.py": (),
    "test_session_import.py": (),
    "test_types.py": (),
    # the rest of these two files patches the private _internal.client and _internal.query
    "test_client.py": (
        "TestClaudeSDKClientTrioBackend",
        "TestClaudeSDKClientSystemPromptSnapshot",
    ),
    "test_integration.py": ("TestIntegration::test_cli_not_found",),
}
"""The files run, each whole or only the tests named (``Class`` or ``Class::test``)."""

LEFT_OUT: Mapping[str, str] = {
    "test_session_import.py::TestKeyParity::test_subpath_matches_file_path_to_session_key": (
        "imports the private _internal.session_store"
    ),
    "test_types.py::TestHookSpecificOutputTypes::test_output_key_sets_match_typescript": (
        "needs claude_agent_sdk.types.HookSpecificOutput to be the Union of the hook output "
        "TypedDicts; ccwire's HookSpecificOutput is the base class of its typed hook outputs"
    ),
}
"""Tests of the files run that are deselected, with the reason."""

_PRIVATE = "imports the private "
NOT_RUN: Mapping[str, str] = {
    "test_build_wheel.py": "tests the reference's packaging",
    "test_changelog.py": "tests the reference's packaging",
    "test_download_cli.py": "tests the reference's packaging",
    "test_update_cli_version.py": "tests the reference's packaging",
    "test_client_app.py": _PRIVATE + "_internal._client_app",
    "test_close_cancellation.py": _PRIVATE + "_internal.transport.subprocess_cli",
    "test_example_postgres_session_store.py": _PRIVATE + "_internal.session_resume",
    "test_example_redis_session_store.py": _PRIVATE + "_internal.session_resume",
    "test_example_redis_session_store_live.py": _PRIVATE + "_internal.session_resume",
    "test_example_s3_session_store.py": _PRIVATE + "_internal.session_resume",
    "test_example_s3_session_store_live.py": _PRIVATE + "_internal.session_resume",
    "test_mcp_large_output.py": _PRIVATE + "_internal.transport.subprocess_cli",
    "test_option_warnings.py": _PRIVATE + "types._get_can_use_tool_shadowed_warning",
    "test_query.py": _PRIVATE + "_internal.query",
    "test_sdk_mcp_integration.py": _PRIVATE + "_python_type_to_json_schema",
    "test_session_mutations.py": _PRIVATE + "_internal.session_mutations",
    "test_session_resume.py": _PRIVATE + "_internal.session_resume",
    "test_session_store_anyio.py": _PRIVATE + "_internal.session_resume",
    "test_session_store_conformance.py": _PRIVATE + "_internal.session_store_validation",
    "test_session_summary.py": _PRIVATE + "_internal.sessions",
    "test_sessions.py": _PRIVATE + "_internal.sessions",
    "test_streaming_client.py": _PRIVATE + "_internal.transport.subprocess_cli",
    "test_subprocess_buffering.py": _PRIVATE + "_internal.transport.subprocess_cli",
    "test_task_compat.py": _PRIVATE + "_internal._task_compat",
    "test_tool_callbacks.py": _PRIVATE + "_internal.query",
    "test_transcript_mirror.py": _PRIVATE + "_internal.query",
    "test_transport.py": _PRIVATE + "_internal.transport.subprocess_cli",
    "test_verbatim_prompts.py": _PRIVATE + "_internal.query",
}
"""The files not run, with the reason."""

TIMEOUT = 240


@pytest.fixture(scope="module")
def suite() -> Path:
    """The unpacked tests (skips without them, fails under ``CCWIRE_REQUIRE_REF=1``)."""
    if not TESTS.is_dir():
        message = f"the reference's tests are not unpacked in {TESTS}: run `make ref-venv`"
        if os.environ.get("CCWIRE_REQUIRE_REF") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return TESTS


@pytest.fixture(scope="module")
def dropin(tmp_path_factory: pytest.TempPathFactory) -> Venv:
    """A venv with the drop-in installed (removed with the temporary directory)."""
    venv = make_venv(tmp_path_factory.mktemp("ref-unit-tests") / "venv")
    done = venv.ccwire("install")
    assert done.returncode == 0, done.stderr
    return venv


def _selection() -> list[str]:
    """The pytest arguments: what to run, then what to leave out."""
    args = [
        f"{name}::{test}" if test else name
        for name, selected in RUN.items()
        for test in (selected or ("",))
    ]
    for node in LEFT_OUT:
        args += ["--deselect", node]
    return args


def test_every_file_of_the_suite_is_run_or_excused(suite: Path) -> None:
    files = {p.name for p in suite.glob("test_*.py")}
    assert files == set(RUN) | set(NOT_RUN)
    assert not set(RUN) & set(NOT_RUN)
    assert {node.split("::")[0] for node in LEFT_OUT} <= set(RUN)


def test_the_references_public_tests_pass_on_the_drop_in(
    suite: Path, dropin: Venv, tmp_path: Path
) -> None:
    work = tmp_path / "tests"
    shutil.copytree(suite, work)
    # the reference's pytest options (its pyproject.toml is not copied)
    (work / "pytest.ini").write_text("[pytest]\naddopts = --import-mode=importlib -p anyio\n")
    home = tmp_path / "home"  # no CLI in a usual place, no user settings
    home.mkdir()
    # and none from CCWIRE_CLI_PATH: test_cli_not_found hides PATH and the bundled CLI
    env = {"CCWIRE_CLI_PATH": "", "HOME": str(home)}
    done = dropin.run(
        "-m", "pytest", "-q", "-p", "no:cacheprovider", "--timeout", "60",
        "--rootdir", str(work), *_selection(),
        extra_env=env, cwd=work, timeout=TIMEOUT,
    )  # fmt: skip
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    counts = dict(
        (word, int(n)) for n, word in re.findall(r"(\d+) (passed|failed|errors?|skipped)", summary)
    )
    assert counts.get("passed", 0) >= 330, summary  # all of them ran (332)
    assert set(counts) <= {"passed", "skipped"}, summary
