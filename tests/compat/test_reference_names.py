"""ccwire against Anthropic's ``claude-agent-sdk`` 0.2.187, name by name.

The reference's own interpreter describes its public API (`api_dump`); the
description is compared with ccwire's (`compare`): every public name, every
dataclass field and default, every `TypedDict` key, every ``ClaudeAgentOptions``
field, every ``ClaudeSDKClient`` method and parameter, the abstract ``Transport``
methods. Anything missing or defaulted differently fails, except the deliberate
differences listed (with their reasons) in `compare.KNOWN_DIFFERENCES` and the
names another change is adding (`compare.PENDING_ELSEWHERE`).
"""

from __future__ import annotations

from typing import Any

from tests.compat.compare import (
    KNOWN_DIFFERENCES,
    PENDING_ELSEWHERE,
    PENDING_OPTION_FIELDS,
    all_differences,
    differences,
    subject,
)
from tests.compat.conftest import REFERENCE_VERSION


def test_the_reference_is_the_pinned_version(reference_api: dict[str, Any]) -> None:
    assert reference_api["version"] == REFERENCE_VERSION


def test_snapshot_is_current(
    reference_api: dict[str, Any], reference_snapshot: dict[str, Any]
) -> None:
    # docs/migration.md is generated from the snapshot: it must be the reference's API
    assert reference_snapshot == reference_api


def test_ccwire_lacks_nothing_of_the_reference(
    reference_api: dict[str, Any], ccwire_api: dict[str, Any]
) -> None:
    problems = differences(reference_api, ccwire_api)
    assert problems == [], "\n".join(problems)


def test_every_known_difference_is_still_real(
    reference_snapshot: dict[str, Any], ccwire_api: dict[str, Any]
) -> None:
    # an entry whose difference is gone must leave the list (and the migration table)
    found = {subject(p) for p in all_differences(reference_snapshot, ccwire_api)}
    found |= {s.split(".", 1)[0] for s in found}
    stale = sorted(set(KNOWN_DIFFERENCES) - found)
    assert stale == []


def test_pending_names_are_reference_names(reference_snapshot: dict[str, Any]) -> None:
    # no typos in the allow-list: each entry is a public name of the reference
    assert set(reference_snapshot["names"]) >= PENDING_ELSEWHERE
    options = reference_snapshot["objects"]["ClaudeAgentOptions"]["fields"]
    assert {name for name, _ in options} >= PENDING_OPTION_FIELDS


def test_the_comparison_catches_what_it_should(
    reference_snapshot: dict[str, Any], ccwire_api: dict[str, Any]
) -> None:
    # the checker itself: take things away from ccwire's description and see them reported
    import copy

    broken = copy.deepcopy(ccwire_api)
    broken["names"].remove("RateLimitEvent")
    result = broken["objects"]["ResultMessage"]
    result["fields"] = [
        [name, "'x'" if name == "api_error_status" else default]
        for name, default in result["fields"]
        if name != "origin"
    ]
    del broken["objects"]["ClaudeSDKClient"]["methods"]["get_mcp_status"]
    broken["objects"]["ThinkingConfigEnabled"]["optional"].remove("display")
    found = differences(reference_snapshot, broken)
    assert "RateLimitEvent: missing" in found
    assert "ResultMessage: no field 'origin'" in found
    assert any(p.startswith("ResultMessage.api_error_status: default 'x'") for p in found)
    assert "ClaudeSDKClient.get_mcp_status: missing" in found
    assert "ThinkingConfigEnabled: no key 'display'" in found
