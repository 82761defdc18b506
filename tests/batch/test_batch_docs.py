"""The batch guarantees of ``docs/reliability.md`` name tests that exist."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_batch_guarantee_names_a_test_that_exists() -> None:
    text = (ROOT / "docs" / "reliability.md").read_text(encoding="utf-8")
    section = text.split("\n## Batches\n", 1)[1].split("\n## ", 1)[0]
    named: list[tuple[str, str]] = []
    for row in re.findall(r"^\|.*\|$", section, re.M):
        module = None
        for ref in re.findall(r"`((?:tests/[\w/]+\.py)?::\w+)`", row):
            path, _, name = ref.partition("::")
            module = path or module
            assert module is not None, row
            named.append((module, name))
    assert len(named) >= 15
    for module, name in named:
        tree = ast.parse((ROOT / module).read_text(encoding="utf-8"))
        tests = {
            n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
        }
        assert name in tests, f"{module}::{name} is not a test"
