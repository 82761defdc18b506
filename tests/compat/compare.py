"""Compare two API descriptions made by `api_dump` and list what the second lacks.

`differences(reference, ours)` returns one line of text per problem: a reference name
ccwire does not export, a field or key it lacks, a default that differs, a method or
parameter it does not have. Extra names, fields, keys, methods and parameters on the
ccwire side are fine as long as they do not change how reference code calls or builds
things (an extra dataclass field must have a default, an extra parameter too).
"""

from __future__ import annotations

from typing import Any

# Reference names another change is adding: left out of the "must exist" set until
# that work lands (empty now: every reference name is enforced).
PENDING_ELSEWHERE: frozenset[str] = frozenset()

# Option fields another change is adding (see PENDING_ELSEWHERE).
PENDING_OPTION_FIELDS: frozenset[str] = frozenset()

# Deliberate differences, each with its reason: a problem about one of these subjects
# (a name, or ``Name.field``) is not a failure. docs/migration.md shows the reasons.
KNOWN_DIFFERENCES: dict[str, str] = {
    "ClaudeAgentOptions.forward_subagent_text": (
        "defaults to None (the CLI's own default, nothing sent) instead of False; "
        "both leave subagent text unforwarded, and ccwire can also send an explicit False"
    ),
    "ToolPermissionContext.signal": (
        "an `anyio.Event` set when the CLI withdraws the request, instead of the "
        "reference's always-None placeholder"
    ),
    "HookMatcher.hooks": "defaults to an empty tuple instead of an empty list",
}

# Classes whose public methods are compared one by one (for the others only the
# bases: their methods are implementation details or come from pydantic).
METHOD_CHECKED: frozenset[str] = frozenset({"ClaudeSDKClient", "Transport"})

# Keyword names of the reference's dunder methods that differ only in spelling
# (`__aexit__(exc_type, exc_val, exc_tb)`); reference code never passes them by name.
_POSITIONAL_ONLY_IN_PRACTICE = frozenset({"__aexit__", "__init__"})


def _fields(desc: dict[str, Any]) -> dict[str, Any]:
    return {name: default for name, default in desc["fields"]}


def _same_default(ref: str | None, ours: str | None) -> bool:
    # a default where the reference requires a value is fine: every call still works
    return ref == ours or ref is None


def _compare_params(
    where: str, ref: list[list[Any]], ours: list[list[Any]], positional_names: bool = True
) -> list[str]:
    problems: list[str] = []
    ours_by_name = {p[0]: p for p in ours}
    has_var_kw = any(p[1] == "VAR_KEYWORD" for p in ours)
    ref_positional = [p for p in ref if p[1] in ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD")]
    our_positional = [p for p in ours if p[1] in ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD")]
    for i, p in enumerate(ref_positional):
        if i >= len(our_positional):
            problems.append(f"{where}: parameter {p[0]!r} cannot be passed by position")
            continue
        if positional_names and our_positional[i][0] != p[0]:
            problems.append(
                f"{where}: positional parameter {i} is {our_positional[i][0]!r}, "
                f"the reference's is {p[0]!r}"
            )
    for name, kind, default in ref:
        if kind in ("VAR_POSITIONAL", "VAR_KEYWORD"):
            continue
        mine = ours_by_name.get(name)
        if mine is None:
            if not has_var_kw and positional_names:
                problems.append(f"{where}: no parameter {name!r}")
            continue
        if not _same_default(default, mine[2]):
            problems.append(f"{where}: parameter {name!r} defaults to {mine[2]}, not {default}")
    ref_names = {p[0] for p in ref}
    for name, kind, default in ours:
        if kind in ("VAR_POSITIONAL", "VAR_KEYWORD") or name in ref_names:
            continue
        if default is None:
            problems.append(f"{where}: extra parameter {name!r} is required")
    return problems


def _compare_dataclass(name: str, ref: dict[str, Any], ours: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    ref_fields = _fields(ref)
    our_fields = _fields(ours)
    for field_name, default in ref_fields.items():
        if name == "ClaudeAgentOptions" and field_name in PENDING_OPTION_FIELDS:
            continue
        if field_name not in our_fields:
            problems.append(f"{name}: no field {field_name!r}")
        elif not _same_default(default, our_fields[field_name]):
            problems.append(
                f"{name}.{field_name}: default {our_fields[field_name]}, "
                f"the reference's is {default}"
            )
    for field_name, default in our_fields.items():
        if field_name not in ref_fields and default is None:
            problems.append(f"{name}: extra field {field_name!r} is required")
    ref_required = [f for f, d in ref_fields.items() if d is None]
    our_order = list(our_fields)
    if name != "ClaudeAgentOptions" and ref_required != our_order[: len(ref_required)]:
        problems.append(
            f"{name}: fields {our_order[: len(ref_required)]} come first, the reference's "
            f"positional fields are {ref_required}"
        )
    problems += _compare_bases(name, ref, ours)
    return problems


def _compare_bases(name: str, ref: dict[str, Any], ours: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    for base in ref.get("bases", []):
        if base in PENDING_ELSEWHERE:
            continue
        if base not in ours.get("bases", []):
            problems.append(f"{name}: not a subclass of {base}")
    for base in ref.get("builtin_bases", []):
        if base not in ours.get("builtin_bases", []):
            problems.append(f"{name}: not a subclass of {base}")
    return problems


def _compare_methods(name: str, ref: dict[str, Any], ours: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    for method, info in ref["methods"].items():
        mine = ours["methods"].get(method)
        where = f"{name}.{method}"
        if mine is None:
            problems.append(f"{where}: missing")
            continue
        if info["kind"] != mine["kind"]:
            problems.append(f"{where}: is {mine['kind']}, the reference's is {info['kind']}")
        if "params" in info:
            if method == "__aexit__":  # called by `async with`, never by keyword
                continue
            problems += _compare_params(
                where,
                info["params"],
                mine.get("params", []),
                positional_names=method not in _POSITIONAL_ONLY_IN_PRACTICE,
            )
    return problems


def _compare_one(
    name: str, ref: dict[str, Any], ours: dict[str, Any], all_ours: dict[str, Any]
) -> list[str]:
    kind = ref["kind"]
    if kind == "typeddict" and ours["kind"] == "dataclass" and ours.get("mapping"):
        # a typed object that is also a read-only mapping of the same keys (hook inputs)
        fields = {f for f, _ in ours["fields"]}
        keys = set(ref["required"]) | set(ref["optional"])
        return [f"{name}: no field {key!r}" for key in sorted(keys - fields)]
    if kind == "union" and ours["kind"] in ("dataclass", "class"):
        # a base class every member derives from (ccwire's `HookInput`)
        problems = []
        for member in ref["members"]:
            mine = all_ours.get(member)
            if mine is None or (name not in mine.get("bases", []) and member != name):
                problems.append(f"{name}: {member} is not one of its subclasses")
        return problems
    if kind != ours["kind"]:
        return [f"{name}: is a {ours['kind']}, the reference's is a {kind}"]
    if kind == "typeddict":
        problems = []
        ref_keys = set(ref["required"]) | set(ref["optional"])
        our_keys = set(ours["required"]) | set(ours["optional"])
        for key in sorted(ref_keys - our_keys):
            problems.append(f"{name}: no key {key!r}")
        for key in sorted(set(ours["required"]) - set(ref["required"])):
            problems.append(f"{name}: key {key!r} is required, the reference's is optional")
        for key in sorted((set(ref["required"]) & our_keys) - set(ours["required"])):
            problems.append(f"{name}: key {key!r} is optional, the reference's is required")
        return problems
    if kind == "dataclass":
        return _compare_dataclass(name, ref, ours)
    if kind == "class":
        problems = _compare_bases(name, ref, ours)
        if name in METHOD_CHECKED:
            problems += _compare_methods(name, ref, ours)
        return problems
    if kind == "literal":
        missing = sorted(set(ref["values"]) - set(ours["values"]))
        return [f"{name}: lacks the values {missing}"] if missing else []
    if kind == "union":
        missing = sorted(set(ref["members"]) - set(ours["members"]))
        return [f"{name}: lacks the members {missing}"] if missing else []
    if kind == "generic":
        if ref["origin"] != ours["origin"]:
            return [f"{name}: is a {ours['origin']}, the reference's is a {ref['origin']}"]
        return []
    if kind == "function":
        problems = []
        if ref["call"] != ours["call"]:
            problems.append(f"{name}: is {ours['call']}, the reference's is {ref['call']}")
        return problems + _compare_params(name, ref["params"], ours["params"])
    if kind == "value":
        if ref.get("value") != ours.get("value") or ref["type"] != ours["type"]:
            return [f"{name}: value {ours.get('value')}, the reference's is {ref.get('value')}"]
        return []
    return [f"{name}: cannot compare a {kind}"]  # pragma: no cover


def subject(problem: str) -> str:
    """What a problem line is about: ``Name`` or ``Name.member``."""
    return problem.split(":", 1)[0]


def all_differences(reference: dict[str, Any], ours: dict[str, Any]) -> list[str]:
    """Every way ``ours`` falls short of ``reference`` (both from `api_dump`),
    deliberate ones included (only `PENDING_ELSEWHERE` is left out)."""
    problems: list[str] = []
    our_names = set(ours["names"])
    for name in reference["names"]:
        if name in PENDING_ELSEWHERE or name == "__version__":
            continue
        if name not in our_names:
            problems.append(f"{name}: missing")
            continue
        problems += _compare_one(
            name, reference["objects"][name], ours["objects"][name], ours["objects"]
        )
    return problems


def _excused(problem: str, excuses: dict[str, str]) -> bool:
    about = subject(problem)
    return about in excuses or about.split(".", 1)[0] in excuses


def differences(reference: dict[str, Any], ours: dict[str, Any]) -> list[str]:
    """The problems that are not `KNOWN_DIFFERENCES`."""
    excuses = KNOWN_DIFFERENCES
    return [p for p in all_differences(reference, ours) if not _excused(p, excuses)]
