"""Run session-helper calls through one package and print the results as JSON.

Used by the differential tests: the reference SDK runs this file in its own venv
(`python dump_calls.py claude_agent_sdk < calls.json`), and ccwire runs `run_calls`
in-process; both read the same transcript directory (`CLAUDE_CONFIG_DIR`).
Each call is `[name, args, kwargs]`; each result is `{"ok": value}` or
`{"error": "ValueError" | "FileNotFoundError" | other, "message": ...}`.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import sys
from typing import Any

# fields ccwire has and the reference lacks (the TypeScript SDK's): left out while unset
_UNSET_ADDITIONS = frozenset({"archived"})


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = dataclasses.asdict(value)
        kept = {k: v for k, v in fields.items() if not (k in _UNSET_ADDITIONS and v is None)}
        return {"__class__": type(value).__name__, **kept}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def run_calls(package: Any, calls: list[list[Any]]) -> list[dict[str, Any]]:
    """Run each `[name, args, kwargs]` against `package`.

    Args:
        package: `claude_agent_sdk` or `ccwire`.
        calls: The calls, in order.

    Returns:
        One `{"ok": ...}` or `{"error": ..., "message": ...}` per call.
    """
    out: list[dict[str, Any]] = []
    for name, args, kwargs in calls:
        try:
            out.append({"ok": _plain(getattr(package, name)(*args, **kwargs))})
        except FileNotFoundError as exc:
            out.append({"error": "FileNotFoundError", "message": str(exc)})
        except ValueError as exc:
            out.append({"error": "ValueError", "message": str(exc)})
    return out


if __name__ == "__main__":
    results = run_calls(importlib.import_module(sys.argv[1]), json.load(sys.stdin))
    json.dump(results, sys.stdout)
