"""`match_denied_models()` on its own: the CLI's rules for ``deniedModels`` entries
(tests/compat/test_ts_denied_models.py compares it with the TypeScript SDK's)."""

from __future__ import annotations

from typing import Any, cast

import pytest

from ccwire import DeniedModelsMatch, match_denied_models

TAGS_NOTE = (
    " Context-size tags such as [1m] are ignored: the entry blocks the model at every context size."
)


def denied(models: list[str], entries: list[str]) -> list[bool]:
    return match_denied_models(models, entries).denied


def test_a_family_blocks_its_models_and_names_holding_it_as_a_word() -> None:
    models = ["claude-opus-4-5", "claude-3-opus-20240229", "opus", "my-opus-tune", "opusx"]
    assert denied(models, ["Opus"]) == [True, True, True, True, False]
    assert denied(["claude-sonnet-4-5"], ["opus"]) == [False]
    assert match_denied_models(models, ["opus"]).warnings == []


def test_a_version_blocks_every_spelling_and_snapshot() -> None:
    models = [
        "claude-opus-4-5",
        "claude-opus-4-5-20251101",
        "claude-opus-4-5@20251101",
        "us.anthropic.claude-opus-4-5-20251101-v1:0",
        "publishers/anthropic/models/claude-opus-4-5",
        "CLAUDE-OPUS-4-5[1m]",
        "claude-opus-4-1",
        "xx.anthropic.claude-opus-4-5",  # no Bedrock region
    ]
    assert denied(models, ["claude-opus-4-5"]) == [True] * 6 + [False, False]
    assert denied(models, ["opus-4-5"]) == denied(models, ["claude-opus-4-5"])


def test_a_major_version_blocks_every_minor_and_a_model_without_minor_is_dot_zero() -> None:
    models = ["claude-opus-4", "claude-opus-4-20250514", "claude-opus-4-1", "claude-opus-5"]
    assert denied(models, ["claude-opus-4"]) == [True, True, True, False]
    assert denied(models, ["claude-opus-4-0"]) == [True, True, False, False]
    assert denied(["claude-3-5-sonnet-20241022", "claude-3-7-sonnet"], ["claude-3-5-sonnet"]) == [
        True,
        False,
    ]


def test_a_suffix_other_than_a_date_or_channel_must_match() -> None:
    models = ["claude-opus-4-5-foo", "claude-opus-4-5-foo-bar", "claude-opus-4-5-foobar"]
    assert denied(models, ["claude-opus-4-5-foo"]) == [True, True, False]
    assert denied(["claude-opus-4-5"], ["claude-opus-4-5-foo"]) == [False]


def test_the_warnings_of_entries_that_block_more_than_they_say() -> None:
    match = match_denied_models(["claude-opus-4-5"], ["claude-opus-4-5-20251101[1m]", "sonnet[1m]"])
    assert match == DeniedModelsMatch(
        denied=[True],
        warnings=[
            '"claude-opus-4-5-20251101[1m]" blocks Opus 4.5 in every spelling and snapshot. '
            f'"-20251101" is ignored.{TAGS_NOTE}',
            f'"sonnet[1m]" blocks every Sonnet model.{TAGS_NOTE}',
        ],
    )


@pytest.mark.parametrize("alias", ["best", "opusplan", "Default", "opusplan[1m]"])
def test_aliases_that_change_with_the_release_are_ignored(alias: str) -> None:
    match = match_denied_models(["claude-opus-4-5", alias], [alias])
    assert match.denied == [False, False]
    assert match.warnings == [
        f'"{alias}" was ignored: it names a different model depending on the release and '
        'settings. Name the model instead, for example "claude-opus-5-5".'
    ]


@pytest.mark.parametrize(
    ("entry", "hint"),
    [
        ("claude-opus-4.5", ' To block a version, write it with a hyphen: "claude-opus-4-5".'),
        ("opus 4.5", ' To block a version, write its model ID, for example "claude-opus-4-5".'),
        (
            "opus 4",
            ' To block only version 4, write "claude-opus-4-0"; "claude-opus-4" blocks every '
            "Opus 4.x model.",
        ),
        ("opsu", ' If you meant the Opus family, write "opus".'),
        ("sonet", ' If you meant the Sonnet family, write "sonnet".'),
        (
            "gemini",
            " To block a model family other than sonnet, opus, haiku or fable, list its "
            "versioned IDs.",
        ),
        ("my-model-7", ""),
    ],
)
def test_a_literal_blocks_only_its_name_with_a_hint(entry: str, hint: str) -> None:
    match = match_denied_models([entry.upper(), f"{entry}-x", "claude-opus-4-5"], [entry])
    assert match.denied == [True, False, False]
    assert match.warnings == [
        f'"{entry}" blocks only the exact model name "{entry}"; other spellings of the same '
        f"model are not blocked.{hint}"
    ]


def test_a_warning_quotes_at_most_128_characters_without_control_characters() -> None:
    (warning,) = match_denied_models([], ["a\x01" + "b" * 200]).warnings
    assert warning.startswith('"a?' + "b" * 126 + '…" blocks only')


def test_bad_input_gets_warnings_not_exceptions() -> None:
    seven: Any = 7
    nothing: Any = None
    assert match_denied_models("opus", ["opus"]) == DeniedModelsMatch(
        [], ['"models" is not a list of model names, so nothing was matched.']
    )
    assert match_denied_models(["opus", seven], "opus") == DeniedModelsMatch(
        [False, False],
        [
            '"deniedModels" was present but is not a list of model names, so it was ignored '
            "and blocks no models until it is fixed.",
            '"models" contained a non-string entry (number), which is not a model name, so '
            "it cannot be matched.",
        ],
    )
    match = match_denied_models(("opus", nothing), ["opus", nothing, cast(Any, {}), "", ""])
    assert match == DeniedModelsMatch(
        [True, False],
        [
            '"deniedModels" contained a non-string entry (null); the entry was ignored.',
            '"deniedModels" contained a non-string entry (object); the entry was ignored.',
            "An empty deniedModels entry was ignored.",
            '"models" contained a non-string entry (null), which is not a model name, so it '
            "cannot be matched.",
        ],
    )
    assert match_denied_models(["opus"], None) == DeniedModelsMatch([False], [])
    assert match_denied_models(cast(Any, range(2)), cast(Any, b"opus")).denied == [False, False]
