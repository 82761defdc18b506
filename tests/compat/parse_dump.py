"""Decode captured frames with a package's own parser and print the results as JSON.

``python tests/compat/parse_dump.py claude_agent_sdk FILE.jsonl...`` runs under the
reference's interpreter (standard library only besides the package): each frame goes
through ``claude_agent_sdk._internal.message_parser.parse_message``. `normalize`
turns a decoded message into plain JSON (``{"__class__": name, field: value, ...}``)
the same way for both packages, so their decodes can be compared field by field.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Mapping
from typing import Any


def normalize(value: Any) -> Any:
    """Plain JSON for a decoded message: dataclasses become dicts with ``__class__``."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {"__class__": type(value).__name__}
        for f in dataclasses.fields(value):
            out[f.name] = normalize(getattr(value, f.name))
        return out
    if isinstance(value, Mapping):
        return {str(k): normalize(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [normalize(v) for v in value]
    return value


def main(paths: list[str]) -> None:
    from claude_agent_sdk._internal.message_parser import (  # type: ignore[import-not-found]
        parse_message,
    )

    out = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            frames = [json.loads(line) for line in f if line.strip()]
        out.append([normalize(parse_message(frame)) for frame in frames])
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[2:])
