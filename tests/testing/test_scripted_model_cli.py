"""End to end: the real ``claude`` CLI, offline, against ScriptedModel (no ccwire client)."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from ccwire.testing import ScriptedModel, error, reply, text, thinking, tool_use


def _find_cli() -> tuple[str | None, str]:
    """The CLI to run, or None and why not: $CCWIRE_CLI_PATH, else node_modules/.bin/claude."""
    explicit = os.environ.get("CCWIRE_CLI_PATH")
    if explicit:
        if os.path.isfile(explicit) and os.access(explicit, os.X_OK):
            return explicit, ""
        return None, f"CCWIRE_CLI_PATH={explicit!r} is not an executable file"
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "node_modules" / ".bin" / "claude"
        if candidate.exists():
            return str(candidate), ""
    return None, "Claude Code CLI not found: set CCWIRE_CLI_PATH or run `make cli`"


CLI, WHY_NO_CLI = _find_cli()
TIMEOUT = 60  # seconds; each run normally takes about one

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(CLI is None, reason=WHY_NO_CLI)]


def run_cli(
    env: dict[str, str], cwd: Path, prompt: str, *args: str
) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    """Run ``claude -p`` in stream-json mode; return the process and its stdout frames."""
    assert CLI is not None
    cwd.mkdir(exist_ok=True)
    argv = [CLI, "-p", prompt, "--output-format", "stream-json", "--verbose", *args]
    proc = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT)
    frames = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert frames, f"no output; stderr: {proc.stderr}"
    return proc, frames


def test_one_shot_text_reply(
    scripted_model: ScriptedModel, offline_env: dict[str, str], tmp_path: Path
) -> None:
    scripted_model.add(text("Hi there"))
    proc, frames = run_cli(offline_env, tmp_path / "work", "hello")
    result = frames[-1]
    assert proc.returncode == 0, proc.stderr
    assert result["type"] == "result"
    assert result["subtype"] == "success"
    assert result["is_error"] is False
    assert result["result"] == "Hi there"
    # claude-sonnet-4-5 is priced $3/$15 per Mtok: 100 in + 20 out.
    assert result["total_cost_usd"] == pytest.approx(0.0006)
    assert list(result["modelUsage"]) == ["claude-sonnet-4-5"]
    (turn,) = scripted_model.turn_requests
    assert turn.last_user_text() == "hello"
    assert turn.stream
    assert "Bash" in turn.tool_names
    assert scripted_model.requests == [turn]  # no side traffic in one-shot mode
    scripted_model.assert_script_consumed()
    # the CLI's temporary files stay in the run's HOME, not in the machine's /tmp (what
    # it puts there varies with timing: its socket folder, a file-watch probe that it
    # may have removed again by its exit)
    assert any(Path(offline_env["HOME"], ".tmp").iterdir())


def test_builtin_bash_tool_round_trip(tmp_path: Path) -> None:
    call = tool_use("Bash", {"command": "echo scripted"})
    with ScriptedModel(call, text("done")) as model:
        proc, frames = run_cli(
            model.env(tmp_path), tmp_path / "work", "go", "--allowedTools", "Bash"
        )
        assert proc.returncode == 0, proc.stderr
        assert frames[-1]["result"] == "done"
        first, second = model.turn_requests
        assert first.last_user_text() == "go"
        assert first.tool_results() == []
        (result,) = second.tool_results()
        assert result.tool_use_id == call.id
        assert result.content == "scripted"
        assert result.is_error is False
        assistant = [f for f in frames if f["type"] == "assistant"]
        assert assistant[0]["message"]["content"][0]["input"] == {"command": "echo scripted"}
        model.assert_script_consumed()


def test_two_tool_uses_in_one_message(tmp_path: Path) -> None:
    one = tool_use("Bash", {"command": "echo one"})
    two = tool_use("Bash", {"command": "echo two"})
    with ScriptedModel(reply(one, two), text("both done")) as model:
        proc, frames = run_cli(
            model.env(tmp_path), tmp_path / "work", "go", "--allowedTools", "Bash"
        )
        assert proc.returncode == 0, proc.stderr
        assert frames[-1]["result"] == "both done"
        results = {r.tool_use_id: r.content for r in model.turn_requests[1].tool_results()}
        assert results == {one.id: "one", two.id: "two"}
        # The CLI emits one assistant line per content block of the same message.
        tool_lines = [f for f in frames if f["type"] == "assistant"][:2]
        assert len({f["message"]["id"] for f in tool_lines}) == 1
        model.assert_script_consumed()


def test_thinking_blocks_are_accepted_and_sent_back(tmp_path: Path) -> None:
    pondering = thinking("pondering")
    first = reply(pondering, tool_use("Bash", {"command": "echo hi"}))
    with ScriptedModel(first, reply(thinking("more"), text("thought it through"))) as model:
        proc, frames = run_cli(
            model.env(tmp_path), tmp_path / "work", "go", "--allowedTools", "Bash"
        )
        assert proc.returncode == 0, proc.stderr
        assert frames[-1]["result"] == "thought it through"
        blocks = [f["message"]["content"][0] for f in frames if f["type"] == "assistant"]
        assert blocks[0]["thinking"] == "pondering"
        assert blocks[0]["signature"] == pondering.signature
        history = [m for m in model.turn_requests[1].messages if m["role"] == "assistant"]
        assert [b["type"] for b in history[0]["content"]] == ["thinking", "tool_use"]
        model.assert_script_consumed()


def test_exhausted_script_fails_fast_with_api_error(tmp_path: Path) -> None:
    with ScriptedModel() as model:
        proc, frames = run_cli(model.env(tmp_path), tmp_path / "work", "anyone?")
        result = frames[-1]
        assert proc.returncode == 1
        assert result["is_error"] is True
        assert result["api_error_status"] == 500
        assert "script exhausted after 0 replies" in result["result"]
        assert len(model.requests) == 1  # x-should-retry: false, so no retries
        with pytest.raises(AssertionError, match="anyone"):
            model.assert_script_consumed()


def test_overloaded_error_is_retried_by_the_cli(tmp_path: Path) -> None:
    with ScriptedModel(error(529, "Overloaded", "overloaded_error"), text("recovered")) as model:
        proc, frames = run_cli(model.env(tmp_path), tmp_path / "work", "hello")
        assert proc.returncode == 0, proc.stderr
        assert frames[-1]["result"] == "recovered"
        assert len(model.turn_requests) == 2
        model.assert_script_consumed()


def test_side_requests_in_a_stream_json_session(tmp_path: Path) -> None:
    """set_model's probe and get_context_usage's count_tokens consume no steps."""
    assert CLI is not None
    argv = [CLI, "--output-format", "stream-json", "--verbose", "--input-format", "stream-json"]
    with ScriptedModel(text("first"), text("second")) as model:
        (tmp_path / "work").mkdir()
        proc = subprocess.Popen(
            argv,
            env=model.env(tmp_path),
            cwd=tmp_path / "work",
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        watchdog = threading.Timer(TIMEOUT, proc.kill)
        watchdog.start()
        assert proc.stdin is not None
        assert proc.stdout is not None

        def send(frame: dict[str, Any]) -> None:
            assert proc.stdin is not None
            proc.stdin.write(json.dumps(frame) + "\n")
            proc.stdin.flush()

        def next_of(kind: str) -> dict[str, Any]:
            assert proc.stdout is not None
            for line in proc.stdout:
                frame: dict[str, Any] = json.loads(line)
                if frame.get("type") == kind:
                    return frame
            raise AssertionError(f"CLI stdout ended before a {kind!r} frame")

        def control(request_id: str, request: dict[str, Any]) -> dict[str, Any]:
            send({"type": "control_request", "request_id": request_id, "request": request})
            response: dict[str, Any] = next_of("control_response")["response"]
            return response

        def prompt(content: str) -> dict[str, Any]:
            send({"type": "user", "message": {"role": "user", "content": content}})
            return next_of("result")

        try:
            control("init", {"subtype": "initialize", "hooks": None})
            assert prompt("one")["result"] == "first"
            switched = control("m", {"subtype": "set_model", "model": "claude-haiku-4-5"})
            assert switched["response"] == {"model": "claude-haiku-4-5"}
            usage = control("u", {"subtype": "get_context_usage"})
            assert usage["subtype"] == "success"
            assert prompt("two")["result"] == "second"
            proc.stdin.close()
            assert proc.wait(TIMEOUT) == 0
        finally:
            watchdog.cancel()
            proc.kill()
            proc.wait()
            proc.stdout.close()
            assert proc.stderr is not None
            proc.stderr.close()

        kinds = [r.kind for r in model.requests]
        assert kinds.count("turn") == 2
        assert kinds.count("probe") == 1
        assert kinds.count("count_tokens") >= 1
        assert set(kinds) == {"turn", "probe", "count_tokens"}
        assert [r.model for r in model.turn_requests] == ["claude-sonnet-4-5", "claude-haiku-4-5"]
        model.assert_script_consumed()
