"""Tool argument validation: jsonschema-rs (ccwire now) vs the hand-written validator it replaced.

``python bench/schema_bench.py [--rounds 7]`` measures, for a few tool input schemas:

* **compile**: turning the schema into a validator, as a tool definition does once;
* **valid call**: validating one set of valid arguments, as every ``tools/call`` does;
* **invalid call**: the same with one wrong field, message included;
* **decoded call**: arguments with a JSON-encoded array where the schema wants an array.

"new" is ``ccwire._mcp.validation.compile_validator`` (jsonschema-rs, ``format``
checked), "old" is ``bench/old_validator.py``, the hand-written validator as it was
before the switch.  Both run in this process, interleaved round by round, on the same
values; each figure is the median over the rounds of the mean time per operation.
The one-off cost of ``import jsonschema_rs`` (paid by the first tool definition) is
measured in fresh processes.  Results go to ``bench/SCHEMA_RESULTS.md`` and are spliced
into ``bench/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

from report import splice

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "src"))

import old_validator  # noqa: E402

from ccwire._mcp.validation import compile_validator  # noqa: E402

N, S, INT = {"type": "number"}, {"type": "string"}, {"type": "integer"}

SMALL = {"type": "object", "properties": {"a": N, "b": N}, "required": ["a", "b"]}
TYPICAL = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "minLength": 1, "pattern": "^/[^*?]*$"},
        "mode": {"enum": ["read", "write", "append"]},
        "limit": {"type": "integer", "minimum": 1, "maximum": 1000},
        "tags": {"type": "array", "items": S, "maxItems": 20},
        "owner": {"anyOf": [{"$ref": "#/$defs/user"}, {"type": "null"}]},
    },
    "required": ["path", "mode"],
    "additionalProperties": False,
    "$defs": {
        "user": {
            "type": "object",
            "properties": {"id": INT, "name": S, "email": {"type": "string"}},
            "required": ["id", "name"],
        }
    },
}
WIDE = {
    "type": "object",
    "properties": {f"f{i}": [N, S, INT, {"type": "boolean"}][i % 4] for i in range(40)},
    "required": [f"f{i}" for i in range(0, 40, 2)],
}
CASES: dict[str, tuple[dict[str, Any], Any, Any, Any]] = {
    # name: (schema, valid, invalid, JSON-encoded array inside)
    "2 numbers": (SMALL, {"a": 1, "b": 2.5}, {"a": 1, "b": "2"}, None),
    "typical (enum, bounds, pattern, anyOf, $ref)": (
        TYPICAL,
        {
            "path": "/tmp/x",
            "mode": "read",
            "limit": 10,
            "tags": ["a", "b"],
            "owner": {"id": 1, "name": "ann", "email": "ann@example.com"},
        },
        {"path": "/tmp/x", "mode": "read", "limit": 0},
        {"path": "/tmp/x", "mode": "read", "tags": '["a", "b"]'},
    ),
    "40 properties": (
        WIDE,
        {f"f{i}": [1.5, "s", 3, True][i % 4] for i in range(40)},
        {**{f"f{i}": [1.5, "s", 3, True][i % 4] for i in range(40)}, "f39": "no"},
        None,
    ),
}


def per_op(fn: Callable[[], Any], seconds: float = 0.05) -> float:
    """Mean seconds per call of ``fn`` over about ``seconds`` of calls."""
    n = 1
    while True:
        start = time.perf_counter()
        for _ in range(n):
            fn()
        took = time.perf_counter() - start
        if took >= seconds:
            return took / n
        n *= 2 if took < seconds / 4 else 1 + int(seconds / max(took, 1e-9))


def import_cost(runs: int = 5) -> float:
    code = "import time; t = time.perf_counter(); import jsonschema_rs; "
    code += "print(time.perf_counter() - t)"
    command = [sys.executable, "-c", code]
    times = [
        float(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
        for _ in range(runs)
    ]
    return statistics.median(times)


def measure(rounds: int) -> dict[str, dict[str, tuple[float, float]]]:
    """``{case: {measure: (new seconds, old seconds)}}``."""
    return {name: measure_case(*case, rounds=rounds) for name, case in CASES.items()}


def measure_case(
    schema: dict[str, Any], valid: Any, invalid: Any, encoded: Any, *, rounds: int
) -> dict[str, tuple[float, float]]:
    new, old = compile_validator(schema), old_validator.compile_validator(schema)
    assert new.validate(valid)[1] is None and old.validate(valid)[1] is None
    assert new.validate(invalid)[1] and old.validate(invalid)[1]
    checks: dict[str, tuple[Callable[[], Any], Callable[[], Any]]] = {
        "compile": (
            lambda: compile_validator(schema),
            lambda: old_validator.compile_validator(schema),
        ),
        "valid call": (lambda: new.validate(valid), lambda: old.validate(valid)),
        "invalid call": (
            lambda: str(new.validate(invalid)[1]),
            lambda: str(old.validate(invalid)[1]),
        ),
    }
    if encoded is not None:
        assert new.validate(encoded)[1] is None and old.validate(encoded)[1] is None
        checks["decoded call"] = (lambda: new.validate(encoded), lambda: old.validate(encoded))
    samples: dict[str, tuple[list[float], list[float]]] = {k: ([], []) for k in checks}
    for _ in range(rounds):
        for key, (run_new, run_old) in checks.items():
            samples[key][0].append(per_op(run_new))
            samples[key][1].append(per_op(run_old))
    return {k: (statistics.median(a), statistics.median(b)) for k, (a, b) in samples.items()}


def fmt(seconds: float) -> str:
    return f"{seconds * 1e6:,.1f} µs" if seconds < 1e-3 else f"{seconds * 1e3:,.2f} ms"


def render(
    results: dict[str, dict[str, tuple[float, float]]], imported: float, args: Any, took: float
) -> str:
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# Tool argument validation: jsonschema-rs vs the old hand-written validator",
        "",
        f"Generated by `bench/schema_bench.py --rounds {args.rounds}` on {when} ({took:.0f} s).",
        "",
        f"- Machine: {os.cpu_count()} CPUs, {platform.platform()}, Python "
        f"{platform.python_version()}; jsonschema-rs {version('jsonschema-rs')}.",
        "- new: `ccwire._mcp.validation.compile_validator` (jsonschema-rs, draft 2020-12, "
        "`format` checked, JSON-encoded objects/arrays decoded); old: `bench/old_validator.py`"
        " (the validator it replaced: no `format`, no `$dynamicRef`, `unevaluated*`, "
        "`dependent*`, `if`/`then`, `uniqueItems`, ...).",
        "- Method: both in one process, interleaved round by round on the same values; each "
        f"figure is the median over {args.rounds} rounds of the mean time per operation. "
        "Lower is better.",
        f"- One-off: `import jsonschema_rs` takes {fmt(imported)} (median of 5 fresh "
        "processes), paid by the first tool definition, not by `import ccwire`.",
        "",
        "| schema | measure | new | old | new / old |",
        "|---|---|---|---|---|",
    ]
    for name, measures in results.items():
        for key, (new, old) in measures.items():
            lines.append(f"| {name} | {key} | {fmt(new)} | {fmt(old)} | {new / old:.2f}x |")
    ratios: dict[str, list[float]] = {}
    for measures in results.values():
        for key, (new, old) in measures.items():
            ratios.setdefault(key, []).append(new / old)
    summary = "; ".join(
        f"{key} {min(r):.2f}x to {max(r):.2f}x" if len(r) > 1 else f"{key} {r[0]:.2f}x"
        for key, r in ratios.items()
    )
    lines += [
        "",
        f"new / old by measure: {summary}.",
        "",
        "Where the time goes: jsonschema-rs compiles and checks a schema in Rust (it also "
        "validates the schema against its meta-schema). A call with valid arguments is one "
        "Rust call after a Python walk that refuses what is not plain JSON (NaN, infinities, "
        "non-string keys, nesting deeper than 200 levels): that walk is most of the "
        "per-call time. Invalid arguments, and strings that must be decoded, cost more than "
        "before: every error is collected, located in the value and worded for the model "
        "(all of them, not only the first), and decoding validates again; this happens only "
        "when the model sent a wrong call.",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    start = time.perf_counter()
    imported = import_cost()
    results = measure(args.rounds)
    page = render(results, imported, args, time.perf_counter() - start)
    (HERE / "SCHEMA_RESULTS.md").write_text(page, encoding="utf-8")
    print(page)
    overall = HERE / "RESULTS.md"
    if overall.exists():
        overall.write_text(splice(overall.read_text(encoding="utf-8")), encoding="utf-8")


if __name__ == "__main__":
    main()
