"""``docs/migration.md`` lists every name of ``claude-agent-sdk``, generated from the
same API descriptions the name comparison uses, so it cannot drift from the code."""

from __future__ import annotations

import re
from typing import Any

from tests.compat.migration_table import DOC, current, generated_part


def test_the_generated_tables_are_current() -> None:
    # on failure: python -m tests.compat.migration_table
    assert generated_part(DOC.read_text(encoding="utf-8")) == current()


def test_every_reference_name_has_a_row(reference_snapshot: dict[str, Any]) -> None:
    doc = DOC.read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| `([^`]+)` \| (?:same|alias|different|not yet) \|", doc, re.M))
    missing = sorted(set(reference_snapshot["names"]) - {"__version__"} - rows)
    assert missing == []


def test_the_switch_is_two_import_lines() -> None:
    doc = DOC.read_text(encoding="utf-8")
    assert "from claude_agent_sdk import" in doc and "from ccwire import" in doc
