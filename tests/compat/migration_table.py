"""The generated part of ``docs/migration.md``: every name of ``claude-agent-sdk``.

`render()` builds the tables from the reference's API description
(``tests/compat/reference_api.json``), ccwire's own (made in-process) and the notes
below; ``test_migration_doc.py`` checks the document holds exactly that, so the table
cannot drift from the code. ``python -m tests.compat.migration_table`` rewrites it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.compat.api_dump import describe_package
from tests.compat.compare import (
    KNOWN_DIFFERENCES,
    PENDING_ELSEWHERE,
    PENDING_OPTION_FIELDS,
    all_differences,
    subject,
)

HERE = Path(__file__).resolve().parent
DOC = HERE.parents[1] / "docs" / "migration.md"
BEGIN = "<!-- BEGIN GENERATED: tests/compat/migration_table.py -->"
END = "<!-- END GENERATED -->"

ALIASES: dict[str, str] = {
    "ClaudeSDKError": "the same class as `CcwireError`, the root of every ccwire error",
    "CLIJSONDecodeError": "the same class as `MessageDecodeError`",
    "HookJSONOutput": (
        "the dict form a hook may return; `HookOutput` and `AsyncHookOutput` are the typed form"
    ),
    "McpServerStatus": (
        "the dict `get_mcp_status()` returns; `mcp_status()` returns the typed `McpServerState`"
    ),
    "McpToolInfo": "the dict form; `McpServerState.tools` holds the typed `McpServerTool`",
    "ContextUsageResponse": (
        "`get_context_usage()` returns `ContextUsage`, a dataclass that is also this dict"
    ),
    "HookInput": (
        "ccwire's `HookInput` is the base class of every typed hook input; each is also a "
        "dict of the wire keys, so dict-style code works unchanged"
    ),
}
"""Reference names ccwire also offers under a name of its own."""

METHOD_NOTES: dict[str, str] = {
    "query": "same; returns the `uuid` the prompt carries instead of None",
    "interrupt": "same; returns an `InterruptResult` instead of None",
    "set_permission_mode": "same; returns a `PermissionModeChange` instead of None",
    "set_model": "same; returns a `ModelChange` instead of None",
    "rewind_files": "same; returns a `RewindFilesResult` instead of None",
    "get_context_usage": "same; returns `ContextUsage`, also readable as the reference's dict",
    "get_mcp_status": "same; alias: `mcp_status()` returns typed `McpServerState` values",
    "reconnect_mcp_server": "same; alias: `mcp_reconnect()`",
    "toggle_mcp_server": "same; alias: `mcp_toggle()`",
    "get_server_info": "same",
}
"""Notes on `ClaudeSDKClient` methods (the others are the same)."""

OPTION_NOTES: dict[str, str] = {
    "debug_stderr": "accepted and not read, as in the reference (deprecated there): use `stderr`",
    "session_store": (
        "same; a failing store call while resuming raises `SessionStoreError` (not `RuntimeError`)"
    ),
    "verbatim_prompts": "same: each user message is sent with `client_composed: true`",
    "max_buffer_size": "same; `None` means no limit on one stdout line",
}
"""Notes on `ClaudeAgentOptions` fields (the others are the same)."""


def _escape(text: str) -> str:
    return text.replace("|", "\\|")


def _problems_by_subject(problems: list[str]) -> dict[str, list[str]]:
    by: dict[str, list[str]] = {}
    for p in problems:
        by.setdefault(subject(p).split(".", 1)[0], []).append(p)
    return by


def _member_note(about: str, note: str) -> str:
    """``note``, prefixed with the member (``field``) it is about, if any."""
    member = about.split(".", 1)[1] if "." in about else ""
    return f"`{member}`: {note}" if member else note


def _default_text(default: str | None) -> str:
    import ccwire

    if default is None:
        return "required"
    if default == repr(ccwire.CLI_ENV_ALLOWLIST):
        return "CLI_ENV_ALLOWLIST"
    return default.removeprefix("factory:")


def _kind_note(ref: dict[str, Any], ours: dict[str, Any]) -> str | None:
    if ref["kind"] == "typeddict" and ours["kind"] == "dataclass" and ours.get("dict"):
        return "a typed dataclass that is also a dict of the same keys"
    if ref["kind"] == "typeddict" and ours["kind"] == "dataclass" and ours.get("mapping"):
        return "a typed dataclass that is also a read-only mapping of the same keys"
    if ref["kind"] == "dataclass" and ours["kind"] == "dataclass":
        return None
    return None


def name_status(name: str, reference: dict[str, Any], ours: dict[str, Any]) -> tuple[str, str]:
    """``(status, note)`` of one reference name: ``same``, ``alias``, ``different`` or
    ``not yet``."""
    problems = _problems_by_subject(all_differences(reference, ours)).get(name, [])
    if name in PENDING_ELSEWHERE:
        if name in ours["names"]:
            return "different", "ccwire's name of the same spelling is being replaced"
        return "not yet", "being added with the session transcripts and stores"
    if name not in ours["names"]:
        return "missing", "; ".join(problems)
    notes = [
        _member_note(s, KNOWN_DIFFERENCES[s])
        for s in sorted({subject(p) for p in problems})
        if s in KNOWN_DIFFERENCES
    ]
    if name in KNOWN_DIFFERENCES and KNOWN_DIFFERENCES[name] not in notes:
        notes.append(KNOWN_DIFFERENCES[name])
    if notes:
        return "different", "; ".join(dict.fromkeys(notes))
    if name in ALIASES:
        return "alias", ALIASES[name]
    kind = _kind_note(reference["objects"][name], ours["objects"][name])
    if kind is not None:
        return "same", kind
    if name.endswith("HookSpecificOutput"):
        typed = name.replace("HookSpecificOutput", "Output")
        if typed in ours["names"]:
            return "alias", f"the dict form; typed: `{typed}`"
    return "same", ""


def _table(header: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_escape(c) for c in row) + " |" for row in rows]
    return lines


def _first_line(obj: Any) -> str:
    if not (isinstance(obj, type) or callable(obj)):
        return ""  # a constant or a type alias: its own docstring is not at hand
    doc = (getattr(obj, "__doc__", None) or "").strip().splitlines()
    return doc[0].strip() if doc else ""


def render(reference: dict[str, Any], ours: dict[str, Any]) -> str:
    """The generated Markdown (between `BEGIN` and `END`)."""
    import ccwire

    out: list[str] = [
        f"## Every name of claude-agent-sdk {reference['version']}",
        "",
        "Generated from both packages by `tests/compat/migration_table.py`; a test keeps it",
        "current. **same**: same name, fields, defaults and meaning. **alias**: the same,",
        "and ccwire also has a name of its own for it. **different**: works, with the",
        "difference noted. **not yet**: being added.",
        "",
    ]
    rows = []
    counts: dict[str, int] = {}
    for name in sorted(n for n in reference["names"] if n != "__version__"):
        status, note = name_status(name, reference, ours)
        counts[status] = counts.get(status, 0) + 1
        rows.append((f"`{name}`", status, note))
    summary = ", ".join(f"{counts[s]} {s}" for s in sorted(counts))
    out += [f"{len(rows)} names: {summary}.", ""]
    out += _table(("Name", "Status", "Note"), rows)

    out += ["", "### `ClaudeSDKClient` methods", ""]
    methods = reference["objects"]["ClaudeSDKClient"]["methods"]
    method_rows = [
        (f"`{m}()`", METHOD_NOTES.get(m, "same")) for m in sorted(methods) if not m.startswith("_")
    ]
    out += _table(("Method", "In ccwire"), method_rows)

    out += ["", "### `ClaudeAgentOptions` fields", ""]
    problems = all_differences(reference, ours)
    option_rows = []
    for field_name, default in reference["objects"]["ClaudeAgentOptions"]["fields"]:
        about = f"ClaudeAgentOptions.{field_name}"
        if field_name in PENDING_OPTION_FIELDS:
            note = "not yet: being added with the session stores"
        elif about in KNOWN_DIFFERENCES:
            note = f"different: {KNOWN_DIFFERENCES[about]}"
        elif any(subject(p) == about for p in problems):
            note = "missing"
        else:
            note = OPTION_NOTES.get(field_name, "same")
        option_rows.append((f"`{field_name}`", f"`{_default_text(default)}`", note))
    out += _table(("Field", "Default", "In ccwire"), option_rows)
    ref_fields = {f for f, _ in reference["objects"]["ClaudeAgentOptions"]["fields"]}
    extra_fields = [
        (f"`{f}`", f"`{_default_text(d)}`")
        for f, d in ours["objects"]["ClaudeAgentOptions"]["fields"]
        if f not in ref_fields
    ]
    out += ["", "Options only ccwire has:", ""]
    out += _table(("Field", "Default"), extra_fields)

    added = sorted(n for n in ours["names"] if n not in reference["names"])
    out += [
        "",
        "### What ccwire adds",
        "",
        f"{len(added)} names the reference does not have:",
        "",
    ]
    out += _table(
        ("Name", "What it is"), [(f"`{n}`", _first_line(getattr(ccwire, n))) for n in added]
    )
    text = "\n".join(out) + "\n"
    return re.sub(r"[ \t]+\n", "\n", text)


def current() -> str:
    """`render()` for the stored reference snapshot and this ccwire."""
    reference = json.loads((HERE / "reference_api.json").read_text(encoding="utf-8"))
    return render(reference, describe_package("ccwire"))


def generated_part(doc: str, begin: str = BEGIN, end: str = END) -> str:
    """The text between the markers ``begin`` and ``end`` of ``doc`` ('' when they are
    missing)."""
    start, stop = doc.find(begin), doc.find(end)
    if start < 0 or stop < start:
        return ""
    return doc[start + len(begin) : stop].strip("\n") + "\n"


def write_generated(text: str, begin: str = BEGIN, end: str = END) -> None:
    """Put ``text`` between the markers ``begin`` and ``end`` of ``docs/migration.md``
    (appended with them when they are missing)."""
    doc = DOC.read_text(encoding="utf-8")
    start, stop = doc.find(begin), doc.find(end)
    body = f"{begin}\n{text}{end}"
    if start < 0 or stop < start:
        doc = doc.rstrip("\n") + "\n\n" + body + "\n"
    else:
        doc = doc[:start] + body + doc[stop + len(end) :]
    DOC.write_text(doc, encoding="utf-8")


def write() -> None:
    """Rewrite the generated part of ``docs/migration.md``."""
    write_generated(current())


if __name__ == "__main__":
    write()
