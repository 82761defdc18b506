"""`match_denied_models()` answers what the TypeScript SDK's ``matchDeniedModels`` answers.

Every case (a table of families, aliases, versions, snapshots, Bedrock and Vertex
spellings, context-size tags, case and whitespace, typos, dotted versions, literals,
bad input; then a batch drawn by hypothesis from a grammar of model-like names) goes
to the TypeScript SDK's real function, run by ``node`` in one process, and the
``denied`` list and the ``warnings`` must be the same, exactly.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings, strategies as st

from ccwire import match_denied_models
from tests.compat.ts_api import REPO, find_package

ABSENT = object()
"""A case's argument left out (``undefined`` in JavaScript)."""

# Each case: an object with the two arguments; a key left out is ``undefined``.
_NODE_PROGRAM = """
import { pathToFileURL } from "node:url";
const { matchDeniedModels } = await import(pathToFileURL(process.argv[1]).href);
let input = "";
process.stdin.setEncoding("utf8");
for await (const chunk of process.stdin) input += chunk;
const cases = JSON.parse(input);
const answers = [];
for (const c of cases) {
  answers.push(await matchDeniedModels(c.models, c.deniedModels));
}
process.stdout.write(JSON.stringify(answers));
"""


def _find_node() -> str | None:
    bundled = REPO / "node_modules" / "node" / "bin" / "node"
    return shutil.which("node") or (str(bundled) if bundled.is_file() else None)


def _unavailable(message: str) -> None:
    if os.environ.get("CCWIRE_REQUIRE_TS_SDK") == "1":
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="module")
def sdk_module(ts_api: Any) -> Path:
    """The TypeScript SDK's ``sdk.mjs`` (``ts_api`` skips or fails without the pinned one)."""
    found = find_package()
    assert found is not None
    return found / "sdk.mjs"


def run_typescript(sdk_module: Path, cases: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """What ``matchDeniedModels`` answers to each case, all in one ``node`` process."""
    node = _find_node()
    if node is None:
        _unavailable("node not found: it runs the TypeScript SDK's matchDeniedModels")
    assert node is not None
    arguments = [
        {k: a for k, a in zip(("models", "deniedModels"), case, strict=True) if a is not ABSENT}
        for case in cases
    ]
    run = subprocess.run(
        [node, "--input-type=module", "-e", _NODE_PROGRAM, str(sdk_module)],
        input=json.dumps(arguments),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    answers: list[dict[str, Any]] = json.loads(run.stdout)
    assert len(answers) == len(cases)
    return answers


def run_ccwire(case: tuple[Any, ...]) -> dict[str, Any]:
    models: Any
    denied: Any
    models, denied = (None if a is ABSENT else a for a in case)
    match = match_denied_models(models, denied)
    return {"denied": match.denied, "warnings": match.warnings}


def assert_same(sdk_module: Path, cases: list[tuple[Any, ...]]) -> None:
    theirs = run_typescript(sdk_module, cases)
    differ = [
        {"models": c[0], "denied_models": c[1], "typescript": t, "ccwire": ours}
        for c, t in zip(cases, theirs, strict=True)
        if (ours := run_ccwire(c)) != t
    ]
    assert differ == [], f"{len(differ)} of {len(cases)} cases differ, first: {differ[:3]}"


# ----------------------------------------------------------------------- the table

ENTRIES = [
    # families, in every case and with tags
    *["opus", "sonnet", "haiku", "fable", "OPUS", " Sonnet ", "haiku[1m]", "opus[1M]"],
    *["fable [2m]", "[1m]opus", "opus[3m]", "mythos", "claude-opus", "claude"],
    # aliases and other names that change with the release
    *["best", "opusplan", "default", "DEFAULT", "sonnet[1m]", "opus[1m]", "fable[1m]"],
    *["opusplan[1m]", "best[2m]"],
    # versions, in every form
    *["claude-opus-4-5", "claude-opus-4", "claude-opus-4-0", "claude-opus-4-1"],
    *["claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-5", "claude-opus-5-5"],
    *["claude-fable-5-1", "claude-mythos-5", "opus-4-5", "sonnet-4", "haiku-4-5[1m]"],
    *["claude-3-5-sonnet", "claude-3-7-sonnet", "claude-3-5-haiku", "claude-3-haiku"],
    *["3-5-sonnet", "claude-opus-4-05", "claude-opus-04", "claude-opus-10-12"],
    *["claude-opus-123", "claude-opus-4-123", "claude-opus-45", "claude-opus-4-5x"],
    *["Claude-Opus-4-5", "  claude-opus-4-5  ", "claude-foo-1-2", "claude-x-9"],
    # snapshots and standard suffixes (ignored, with a note)
    *["claude-opus-4-5-20251101", "claude-opus-4-20250514", "claude-3-5-sonnet-20241022"],
    *["claude-opus-4-5@20251101", "claude-opus-4-5-v1@20251101", "claude-opus-4-5-fast"],
    *["claude-opus-4-5-latest", "claude-opus-4-5-fast-20251101", "claude-opus-4-5-v1:0"],
    *["claude-opus-4-5-v2", "claude-opus-4-5-20251101[1m]", "opus-4-5-20251101"],
    # other suffixes (they must match too)
    *["claude-opus-4-5-foo", "claude-opus-4-5-foo-bar", "claude-opus-4-5-2025", "claude-opus-4@x"],
    *["claude-opus-4-5-v1:0-extra", "claude-opus-4-5-latest-fast"],
    # Bedrock, Vertex and paths
    *["us.anthropic.claude-opus-4-5-20251101-v1:0", "anthropic.claude-opus-4-5"],
    *["eu.anthropic.claude-sonnet-4-5", "us-gov.anthropic.claude-opus-4-1"],
    *["xx.anthropic.claude-opus-4-5", "global.anthropic.claude-3-5-haiku-20241022-v1:0"],
    *["publishers/anthropic/models/claude-opus-4-5@20251101", "a/b/opus-4-5"],
    *["arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-opus-4-5"],
    # dotted versions, spoken versions and typos
    *["claude-opus-4.5", "opus-4.5", "opus 4.5", "opus 4", "Opus  4.5", "sonnet\t4"],
    *["opus 4.5.1", "opus 123", "haiku 4.x", "claude-opus-4.5.6", "opus4.5"],
    *["opsu", "opuss", "opu", "sonet", "sonnett", "hiaku", "haikuu", "fabel", "fablee"],
    *["pous", "oups", "xpus", "gpt", "gemini", "llama", "o"],
    # literals
    *["my-model", "my-opus-finetune", "gpt-4o", "claude-", "claude-opus-", "claude-4"],
    *["Ωmega", "İnstant", "claude-opus-4-5\u00a0", "\ufeffopus", "\x1copus", "op\x00us"],
    *["x" * 200, "é" * 130, "😀" * 70, "a" + "😀" * 64],
    # empty and blank
    *["", "   ", "\n", "[1m]", " [2M] "],
]

MODELS = [
    *["opus", "sonnet", "haiku", "fable", "best", "default", "opus[1m]", "opusplan"],
    *["claude-opus-4-5", "claude-opus-4-5-20251101", "claude-opus-4-5@20251101"],
    *["claude-opus-4-5-v1@20251101", "claude-opus-4-5-fast", "claude-opus-4-5-latest"],
    *["claude-opus-4-5-foo", "claude-opus-4-5-foo-bar", "claude-opus-4-5-foobar"],
    *["claude-opus-4", "claude-opus-4-0", "claude-opus-4-20250514", "claude-opus-4-1"],
    *["claude-opus-4-1-20250805", "claude-opus-5", "claude-opus-5-5", "claude-opus-45"],
    *["claude-sonnet-4-5", "claude-sonnet-4-5[1m]", "claude-sonnet-4-5 [1m]", "Claude-Sonnet-4-5"],
    *["claude-3-5-sonnet-20241022", "claude-3-5-sonnet-latest", "claude-3-7-sonnet"],
    *["claude-3-haiku-20240307", "claude-haiku-4-5", "claude-fable-5-2", "claude-mythos-5"],
    *["us.anthropic.claude-opus-4-5-20251101-v1:0", "xx.anthropic.claude-opus-4-5"],
    *["publishers/anthropic/models/claude-opus-4-5@20251101", "a/b/opus-4-5"],
    *["my-opus-finetune", "opus4", "sonnet-x", "xopus", "opus_2", "my-model", "My-Model"],
    *["gpt-4o", "opus 4.5", "  opus  ", "claude-opus-4-5\u00a0", "\ufeffclaude-opus-4-5"],
    *["\x1cclaude-opus-4-5", "claude-opus-4-5[2m][1m]", "claude-opus-4-5[1m]x", ""],
]


def table_cases() -> list[tuple[Any, ...]]:
    """Each entry alone against every model; then lists of entries (order, de-duplicated
    warnings) and input of the wrong shape."""
    cases: list[tuple[Any, ...]] = [(MODELS, [entry]) for entry in ENTRIES]
    cases += [
        (MODELS, ENTRIES),
        (MODELS, ["opus", "opus", "OPUS", "best", "best", "x" * 200, "x" * 300]),
        (MODELS, ["opus[1m]", "opus[1m]", "claude-opus-4-5-20251101", "opus-4-5-20251101"]),
        (MODELS, []),
        (MODELS, None),
        (MODELS, ABSENT),
        (ABSENT, ABSENT),
        ([], ["opus"]),
        (["opus", "opus", "sonnet"], ["opus"]),
    ]
    bad_values: list[Any] = [None, True, False, 0, 4.5, {}, {"a": 1}, [], ["opus"], "opus"]
    cases += [(MODELS[:5], bad) for bad in bad_values]
    cases += [(bad, ["opus"]) for bad in bad_values]
    cases += [(bad, bad) for bad in bad_values]
    cases += [(["opus", *bad_values, "sonnet", None, 1], ["sonnet", *bad_values, None, 2])]
    cases += [([bad], [bad, "opsu"]) for bad in bad_values]
    return cases


def test_the_table(sdk_module: Path) -> None:
    assert_same(sdk_module, table_cases())


# ------------------------------------------------------------ a generated batch

PREFIXES = ["", "", "", "claude-", "claude-", "Claude-", "anthropic.", "us.anthropic."]
PREFIXES += ["us.anthropic.claude-", "zz.anthropic.claude-", "models/", "a/b/claude-", "."]
FAMILIES = ["opus", "sonnet", "haiku", "fable", "mythos", "opsu", "sonet", "hiaku", "x"]
FAMILIES += ["3-5-sonnet", "3-haiku", "4-opus", "best", "default", "opusplan", ""]
VERSIONS = ["", "", "-4", "-4-5", "-4-0", "-5", "-3-7", "-45", "-4.5", " 4.5", " 4", "-04"]
VERSIONS += ["-10-12", "-123", "-4-5-6", "4", "-4-"]
SUFFIXES = ["", "", "", "-20251101", "@20251101", "-v1@20251101", "-v1:0", "-v2", "-fast"]
SUFFIXES += ["-latest", "-fast-20251101", "-foo", "-foo-bar", "-2025", "x", "-", "@", ".1"]
TAGS = ["", "", "", "[1m]", "[2M]", " [1m]", "[3m]", "[1m][2m]", "[1m]-x"]
SPACES = ["", "", "", " ", "  ", "\t", "\u00a0", "\ufeff", "\x1c", "\x85", "\n"]


@st.composite
def model_names(draw: st.DrawFn) -> str:
    """A name from the grammar of model IDs (prefix, family, version, suffix, tag),
    in some case, with whitespace around it; sometimes plain noise."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.text(st.sampled_from("opus-sonet4.5 [1m]@/xÉé😀\t"), max_size=12))
    parts = [draw(st.sampled_from(group)) for group in (PREFIXES, FAMILIES, VERSIONS)]
    parts += [draw(st.sampled_from(SUFFIXES)), draw(st.sampled_from(TAGS))]
    name = "".join(parts)
    name = draw(st.sampled_from([name, name, name.upper(), name.title()]))
    return draw(st.sampled_from(SPACES)) + name + draw(st.sampled_from(SPACES))


def case_strategy() -> st.SearchStrategy[tuple[Any, ...]]:
    names = st.lists(model_names(), max_size=6)
    odd: st.SearchStrategy[Any] = st.sampled_from([None, 1, True, {}, []])
    lists = st.one_of(names, st.lists(st.one_of(model_names(), odd), max_size=4))
    return st.tuples(
        st.one_of(lists, odd, st.just(ABSENT)), st.one_of(lists, lists, odd, st.just(ABSENT))
    )


def test_a_generated_batch(sdk_module: Path) -> None:
    cases: list[tuple[Any, ...]] = []

    @settings(
        max_examples=600,
        database=None,
        derandomize=True,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
        deadline=None,
    )
    @given(case_strategy())
    def collect(case: tuple[Any, ...]) -> None:
        cases.append(case)

    collect()
    assert len(cases) >= 300
    assert_same(sdk_module, cases)


def test_every_entry_and_model_form_is_covered() -> None:
    """The table's entries reach every kind of answer (so it tests what it claims)."""
    kinds = {
        "family": "blocks every",
        "model": "in every spelling and snapshot",
        "minor-less": ".x model.",
        "ignored alias": "was ignored: it names",
        "literal": "blocks only the exact model name",
        "hyphen hint": "write it with a hyphen",
        "spoken version": "write its model ID",
        "spoken major": "To block only version",
        "typo": "If you meant the",
        "other family": "To block a model family other than",
        "empty": "An empty deniedModels entry",
        "suffix ignored": '"-20251101" is ignored.',
        "tags": "Context-size tags",
        "shortened": "…",
    }
    warnings = match_denied_models(MODELS, ENTRIES).warnings
    missing = [kind for kind, text in kinds.items() if not any(text in w for w in warnings)]
    assert missing == []
    blocked = [match_denied_models(MODELS, [e]).denied for e in ENTRIES]
    counts = {sum(d) for d in blocked}
    assert {0, 1} < counts, "entries that block no model, one model and several"
