"""`resolve_settings()`'s result, read from the CLI's ``get_settings`` answer, and
`filter_escalating_default_mode()` (the TypeScript SDK's rule, read from its sdk.mjs)."""

from __future__ import annotations

from typing import Any

import pytest

from ccwire import ResolvedSettings, SettingsSourceEntry, filter_escalating_default_mode
from ccwire._conversation.settings import _decode

ANSWER = {
    "effective": {"model": "opus", "permissions": {"deny": ["Bash"], "defaultMode": "auto"}},
    "sources": [
        {"source": "userSettings", "settings": {"model": "sonnet"}},
        {"source": "localSettings", "settings": {"permissions": {"defaultMode": "auto"}}},
        {"source": "flagSettings", "settings": {"model": "opus"}},
        {"source": "policySettings", "settings": {"permissions": {"deny": ["Bash"]}}},
    ],
    "applied": {"model": "claude-opus-5-5"},
}


def test_sources_and_provenance() -> None:
    resolved = _decode(ANSWER)
    assert [s.source for s in resolved.sources] == ["user", "local", "flag", "managed"]
    assert resolved.provenance == {"model": "flag", "permissions": "managed"}
    assert resolved.effective == ANSWER["effective"] and resolved.raw["applied"]


def _resolved(mode: str, source: str) -> ResolvedSettings:
    permissions = {"defaultMode": mode, "allow": ["Read"]}
    return ResolvedSettings(
        effective={"permissions": permissions},
        provenance={"permissions": source},
        sources=(SettingsSourceEntry(source, {"permissions": permissions}),),
    )


@pytest.mark.parametrize(
    ("mode", "source", "dropped"),
    [
        ("bypassPermissions", "project", True),
        ("bypassPermissions", "local", True),
        ("auto", "local", True),
        ("acceptEdits", "project", True),
        ("acceptEdits", "local", False),  # only project counts for acceptEdits
        ("bypassPermissions", "user", False),
        ("plan", "project", False),  # not escalating
    ],
)
def test_an_escalating_mode_from_the_repository_is_dropped(
    mode: str, source: str, dropped: bool
) -> None:
    filtered: Any = filter_escalating_default_mode(_resolved(mode, source))
    assert ("defaultMode" not in filtered["permissions"]) is dropped
    assert filtered["permissions"]["allow"] == ["Read"]
