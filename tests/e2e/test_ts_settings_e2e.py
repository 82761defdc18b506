"""`resolve_settings()` against the real CLI: its merge of the settings files, without a
session of ours."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from ccwire import filter_escalating_default_mode, resolve_settings

from .conftest import CLI_PATH

pytestmark = pytest.mark.anyio


async def test_resolve_settings_merges_as_a_session_would(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    (home / ".claude").mkdir(parents=True)
    (work / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text(json.dumps({"model": "sonnet"}))
    project = {"permissions": {"deny": ["WebFetch"], "defaultMode": "acceptEdits"}}
    (work / ".claude" / "settings.json").write_text(json.dumps(project))
    with anyio.fail_after(60):
        resolved = await resolve_settings(
            cwd=work,
            managed_settings={"permissions": {"deny": ["Bash"]}},
            settings={"model": "opus"},  # as the TypeScript SDK's Settings object
            cli_path=CLI_PATH,
            env={"HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude")},
        )
    assert resolved.effective["model"] == "opus" and resolved.provenance["model"] == "flag"
    assert [s.source for s in resolved.sources] == ["user", "project", "flag", "managed"]
    assert set(resolved.effective["permissions"]["deny"]) == {"WebFetch", "Bash"}
    assert resolved.effective["permissions"]["defaultMode"] == "acceptEdits"
    trusted = filter_escalating_default_mode(resolved)
    assert "defaultMode" not in trusted["permissions"]  # a repository may not escalate
    assert not list((home / ".claude" / "projects").rglob("*.jsonl"))  # no session kept
