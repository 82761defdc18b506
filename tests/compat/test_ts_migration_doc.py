"""``docs/migration.md`` compares ccwire with Anthropic's TypeScript Agent SDK, generated
from the SDK's shipped declarations and ccwire itself, so it stays true when they move.
The package comes from ``make ts-sdk`` (these tests skip without it, or fail under
``CCWIRE_REQUIRE_TS_SDK=1``, as ``make test`` sets)."""

from __future__ import annotations

from typing import Any

from tests.compat.ts_migration_table import DOC, generated_part, render, sections


def test_the_generated_typescript_table_is_current(ts_api: Any) -> None:
    # on failure: python -m tests.compat.ts_migration_table
    assert generated_part(DOC.read_text(encoding="utf-8")) == render(ts_api)


def test_no_capability_is_missing(ts_api: Any) -> None:
    missing = [
        f"{title}: {row[0]} (looked for {row[1]})"
        for title, rows in sections(ts_api)
        for row in rows
        if row[2] == "missing"
    ]
    assert missing == []


def test_every_option_method_message_and_event_has_a_row(ts_api: Any) -> None:
    parts = dict(sections(ts_api))
    assert len(parts["`Options` fields"]) == len(ts_api.options) >= 60
    assert len(parts["`Query` methods (on `ClaudeSDKClient`)"]) == len(ts_api.query_methods) >= 25
    assert len(parts["Messages (the `SDKMessage` union)"]) == len(ts_api.messages) >= 40
    assert len(parts["Hook events"]) == len(ts_api.hook_events) >= 33
    # a row says why when ccwire has no Python name for the capability
    for rows in parts.values():
        for ts_name, python, _status, note in rows:
            assert python or note, ts_name
