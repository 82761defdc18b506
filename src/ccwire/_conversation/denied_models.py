"""`match_denied_models()`: which model names a ``deniedModels`` settings list blocks.

The TypeScript SDK exports the CLI's own rules for this as ``matchDeniedModels``; this
module holds the same rules, with the CLI's tables, so that the same question gets the
same answer and the same notes.

An entry of ``deniedModels`` is read as one of three kinds:

* **a family** (``opus``, ``sonnet``, ``haiku``, ``fable``): it blocks every model of
  that family, and any model name in which the family's name stands as a word;
* **a model**: a model ID with a version (``claude-opus-4-5``, ``opus-4-5``,
  ``claude-3-5-sonnet``, a snapshot ``claude-opus-4-5-20251101``, a Bedrock or Vertex
  spelling). With a minor version it blocks that version in every spelling and
  snapshot; without one (``claude-opus-4``) it blocks every ``4.x``. A date, ``-fast``,
  ``-latest`` or a Bedrock ``-v1:0`` after the version is ignored; any other suffix must
  match too;
* **a literal**: anything else blocks only that exact name.

Aliases whose meaning changes with the release (``best``, ``opusplan``, ``default``)
and empty entries are ignored. Case, surrounding whitespace and context-size tags
(``[1m]``, ``[2m]``) never matter. Each entry that is ignored, or that blocks more or
less than it may seem to, gets a warning.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TypeAlias

__all__ = ["DeniedModelsMatch", "match_denied_models"]

# ----------------------------------------------------------------- the CLI's tables

FAMILIES: tuple[str, ...] = ("sonnet", "opus", "haiku", "fable")
"""The model families an entry may name on its own, in the CLI's order."""

MODEL_ALIASES: tuple[str, ...] = (
    "sonnet",
    "opus",
    "haiku",
    "fable",
    "best",
    "sonnet[1m]",
    "opus[1m]",
    "fable[1m]",
    "opusplan",
)
"""The CLI's model aliases. Those that are not a family name a different model from one
release (or one setting) to the next, so an entry made of one is ignored."""

BEDROCK_REGIONS: tuple[str, ...] = ("us", "eu", "apac", "jp", "au", "us-gov", "global")
"""The region prefixes of Bedrock's cross-region model IDs (``us.anthropic.claude-...``)."""

# What JavaScript counts as whitespace (String.prototype.trim, the regex ``\s``): the
# CLI's rules trim with it, and a name with whitespace inside is no model ID.
_WHITESPACE = (
    "\t\n\v\f\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_SPACE = f"[{_WHITESPACE}]"

_CONTEXT_TAG = re.compile(r"\[[12]m\]", re.IGNORECASE | re.ASCII)
_NUMBER = r"([0-9]{1,2})(?![0-9])"  # one or two digits, no more
_VERSION_FIRST_FAMILY = re.compile(rf"claude-([a-z]+)-{_NUMBER}(?:-{_NUMBER})?")
_VERSION_FIRST_VERSION = re.compile(rf"claude-{_NUMBER}(?:-{_NUMBER})?-([a-z]+)")
_BEDROCK = re.compile(r"(?:([a-z-]+)\.)?anthropic\.(claude-.*)", re.DOTALL)
_STANDARD_SUFFIX = re.compile(
    r"(?:-fast|-latest)?"  # a speed or channel
    r"(?:-v[0-9]{1,3}@[0-9]{8}|[-@][0-9]{8})?"  # a snapshot date (Vertex: @date)
    r"(?:-v[0-9]{1,3}(?::[0-9]{1,3})?)?"  # a Bedrock revision (-v1:0)
)
_DOTTED_VERSION = re.compile(r"([0-9])\.([0-9])")
_FAMILY_AND_NUMBER = re.compile(rf"({'|'.join(FAMILIES)}){_SPACE}+([0-9]+)(?:\.([0-9]+))?")
_LOWERCASE_WORD = re.compile(r"[a-z]+")
_ALPHANUMERIC = frozenset(string.ascii_letters + string.digits)
_SHOWN_LENGTH = 128
"""The longest text a warning quotes, in UTF-16 code units (as JavaScript counts)."""
_EXAMPLE_MODEL = "claude-opus-5-5"

_NOT_A_LIST = (
    '"deniedModels" was present but is not a list of model names, so it was ignored and '
    "blocks no models until it is fixed."
)
_MODELS_NOT_A_LIST = '"models" is not a list of model names, so nothing was matched.'
_TAGS_IGNORED = (
    " Context-size tags such as [1m] are ignored: the entry blocks the model at every context size."
)


@dataclass(frozen=True)
class DeniedModelsMatch:
    """What `match_denied_models()` answers.

    Attributes:
        denied: For each model asked about, in order: whether an entry blocks it.
        warnings: The CLI's notes on the entries (why one was ignored, or what one
            blocks where that may surprise) and on what was asked about but is no
            model name; each note once, in order.
    """

    denied: list[bool]
    warnings: list[str]


# ------------------------------------------------------------------- model IDs


@dataclass(frozen=True)
class _ModelId:
    """A model ID read as family and version."""

    family: str
    major: int
    minor: int | None
    base: str
    """The text the family and version were read from (``claude-opus-4-5``)."""
    suffix: str | None
    """What follows ``base``; None when that is only what every spelling may add (a
    snapshot date, ``-fast``, ``-latest``, a Bedrock revision ``-v1:0``)."""


def _strip(text: str) -> str:
    return text.strip(_WHITESPACE)


def _has_space(text: str) -> bool:
    return any(c in _WHITESPACE for c in text)


def _without_context_tags(text: str) -> str:
    return _CONTEXT_TAG.sub("", text)


def _parse_model_id(name: str) -> _ModelId | None:
    """``name`` as a model ID (a path's last part, a Bedrock ID's model), or None."""
    text = _strip(name).lower()
    if text == "" or _has_space(text):
        return None
    if text.endswith(("[1m]", "[2m]")):
        text = text[: -len("[1m]")]  # one context-size tag, at the end
    text = text[text.rfind("/") + 1 :]  # Vertex and other paths: the last part
    bedrock = _BEDROCK.fullmatch(text)
    if bedrock:
        region, text = bedrock.groups()
        if region is not None and region not in BEDROCK_REGIONS:
            return None
    version = _read_version(text)
    if version is None:
        return None
    family, major, minor, base = version
    rest = text[len(base) :]
    if rest and rest[0] not in "-@":
        return None  # claude-opus-45: no version boundary
    suffix = None if _STANDARD_SUFFIX.fullmatch(rest) else rest
    return _ModelId(family, major, minor, base, suffix)


def _read_version(text: str) -> tuple[str, int, int | None, str] | None:
    """Family, major, minor and the text they fill at the start of ``text``: in the
    current order (``claude-opus-4-5``) or the older one (``claude-3-5-sonnet``)."""
    match = _VERSION_FIRST_FAMILY.match(text)
    if match:
        family, major, minor = match.groups()
    else:
        match = _VERSION_FIRST_VERSION.match(text)
        if match is None:
            return None
        major, minor, family = match.groups()
    return family, int(major), None if minor is None else int(minor), match.group()


def _same_model(entry: _ModelId, model: _ModelId) -> bool:
    """Whether the model ``entry`` names covers ``model`` (no minor: every minor; a
    model without a minor is ``.0``; an entry's suffix must start the model's)."""
    if (entry.family, entry.major) != (model.family, model.major):
        return False
    if entry.minor is not None and (model.minor or 0) != entry.minor:
        return False
    if entry.suffix is None:
        return True
    suffix = model.suffix or ""
    return suffix == entry.suffix or suffix.startswith(f"{entry.suffix}-")


def _contains_word(text: str, word: str) -> bool:
    """Whether ``word`` stands in ``text`` with no letter or digit on either side."""
    start = text.find(word)
    while start != -1:
        end = start + len(word)
        before_ok = start == 0 or text[start - 1] not in _ALPHANUMERIC
        after_ok = end == len(text) or text[end] not in _ALPHANUMERIC
        if before_ok and after_ok:
            return True
        start = text.find(word, start + 1)
    return False


# --------------------------------------------------------------------- entries


@dataclass(frozen=True)
class _Family:
    """An entry naming a family: it blocks every model of it."""

    family: str


@dataclass(frozen=True)
class _Model:
    """An entry naming a model ID: it blocks that version in every spelling."""

    model: _ModelId


@dataclass(frozen=True)
class _Literal:
    """Any other entry: it blocks only that name."""

    name: str


_Entry: TypeAlias = _Family | _Model | _Literal


@dataclass(frozen=True)
class _ReadEntry:
    """An entry as read: what it blocks (None: nothing) and the note on it."""

    entry: _Entry | None
    warning: str | None = None


def _read_entry(raw: str) -> _ReadEntry:
    """What one ``deniedModels`` entry blocks, and the warning it gets, if any."""
    lowered = _strip(raw).lower()
    name = _strip(_without_context_tags(lowered))
    tags_note = _TAGS_IGNORED if name != lowered else ""
    shown = _shown(raw)
    if name == "":
        return _ReadEntry(None, "An empty deniedModels entry was ignored.")
    if name in FAMILIES:
        note = f'"{shown}" blocks every {_title(name)} model.{tags_note}' if tags_note else None
        return _ReadEntry(_Family(name), note)
    if name in MODEL_ALIASES or name == "default":
        return _ReadEntry(
            None,
            f'"{shown}" was ignored: it names a different model depending on the release '
            f'and settings. Name the model instead, for example "{_EXAMPLE_MODEL}".',
        )
    model = _parse_model_id(name)
    spelled = name if model is not None or name.startswith("claude-") else f"claude-{name}"
    if model is None and spelled != name:
        model = _parse_model_id(spelled)  # opus-4-5 for claude-opus-4-5
    if model is None:
        return _ReadEntry(_Literal(name), _literal_warning(raw, name))
    after = spelled[spelled.rfind(model.base) + len(model.base) :]
    ignored = f' "{_shown(after)}" is ignored.' if model.suffix is None and after else ""
    if not (ignored or tags_note):
        return _ReadEntry(_Model(model))
    return _ReadEntry(_Model(model), f'"{shown}" blocks {_describe(model)}.{ignored}{tags_note}')


def _blocks(entry: _Entry, name: str, model: _ModelId | None) -> bool:
    """Whether ``entry`` blocks the model called ``name`` (normalised), read as ``model``."""
    if isinstance(entry, _Literal):
        return name == entry.name
    if isinstance(entry, _Family):
        return (model is not None and model.family == entry.family) or _contains_word(
            name, entry.family
        )
    return model is not None and _same_model(entry.model, model)


# -------------------------------------------------------------------- warnings


def _shown(text: str) -> str:
    """``text`` as a warning quotes it: control characters as ``?``, cut after 128
    UTF-16 code units (as the CLI counts) with an ellipsis."""
    text = "".join("?" if c <= "\x1f" or "\x7f" <= c <= "\x9f" else c for c in text)
    units = text.encode("utf-16-le", "surrogatepass")
    if len(units) <= 2 * _SHOWN_LENGTH:
        return text
    return units[: 2 * _SHOWN_LENGTH].decode("utf-16-le", "surrogatepass") + "…"


def _title(family: str) -> str:
    return family[:1].upper() + family[1:]


def _describe(model: _ModelId) -> str:
    family = _title(model.family)
    if model.minor is None:
        return f"every {family} {model.major}.x model"
    return f"{family} {model.major}.{model.minor} in every spelling and snapshot"


def _literal_warning(raw: str, name: str) -> str:
    """The note on a literal entry, with a hint when it looks like a misspelt version
    (``claude-opus-4.5``, ``opus 4.5``) or family (``opsu``)."""
    note = (
        f'"{_shown(raw)}" blocks only the exact model name "{_shown(name)}"; other '
        "spellings of the same model are not blocked."
    )
    hyphenated = _DOTTED_VERSION.sub(r"\1-\2", name)
    if hyphenated != name:
        model_id = hyphenated if hyphenated.startswith("claude-") else f"claude-{hyphenated}"
        if _parse_model_id(model_id) is not None:
            return f'{note} To block a version, write it with a hyphen: "{_shown(model_id)}".'
    spoken = _FAMILY_AND_NUMBER.fullmatch(name)
    if spoken:
        family, major, minor = spoken.groups()
        if minor is not None:
            example = f"claude-{family}-{major}-{minor}"
            return f'{note} To block a version, write its model ID, for example "{example}".'
        return (
            f'{note} To block only version {major}, write "claude-{family}-{major}-0"; '
            f'"claude-{family}-{major}" blocks every {_title(family)} {major}.x model.'
        )
    if _LOWERCASE_WORD.fullmatch(name):
        meant = next((f for f in FAMILIES if _one_edit_apart(name, f)), None)
        if meant is not None:
            return f'{note} If you meant the {_title(meant)} family, write "{meant}".'
        others = f"{', '.join(FAMILIES[:-1])} or {FAMILIES[-1]}"
        return f"{note} To block a model family other than {others}, list its versioned IDs."
    return note


def _one_edit_apart(a: str, b: str) -> bool:
    """Whether one edit turns ``a`` into ``b``: a letter added, removed or changed, or
    two neighbours swapped."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        differ = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        if len(differ) == 1:
            return True
        i = differ[0]
        return differ == [i, i + 1] and a[i] == b[i + 1] and a[i + 1] == b[i]
    short, long = (a, b) if len(a) < len(b) else (b, a)
    i = next((i for i, (x, y) in enumerate(zip(short, long, strict=False)) if x != y), len(short))
    return short[i:] == long[i + 1 :]


def _type_name(value: object) -> str:
    """What JavaScript's ``typeof`` says of a JSON value (``null`` for None)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "object"


def _is_list(value: object) -> bool:
    """Whether ``value`` is what JavaScript calls an array: a sequence, not a string."""
    return isinstance(value, Sequence) and not isinstance(value, (str, bytes, bytearray))


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


# --------------------------------------------------------------------- the call


def match_denied_models(
    models: Sequence[str], denied_models: Sequence[str] | None
) -> DeniedModelsMatch:
    """Say which of ``models`` a ``deniedModels`` settings list blocks, by the CLI's rules.

    The rules and their warnings are the CLI's (the TypeScript SDK's ``matchDeniedModels``):
    an entry names a family (``"opus"``: every Opus model), a model with a version
    (``"claude-opus-4-5"``: Opus 4.5 in every spelling and snapshot; ``"claude-opus-4"``:
    every Opus 4.x), or a literal name (only that name). Case, surrounding whitespace and
    context-size tags (``[1m]``) never matter. Aliases whose meaning changes with the
    release (``"best"``, ``"opusplan"``, ``"default"``) and empty entries are ignored,
    with a warning. It computes only: no CLI is started.

    Not the CLI's enforcement: grant nothing by it. ``True`` means the CLI refuses the
    model too; ``False`` promises nothing (the CLI also judges what an alias or a custom
    name stands for, a model's other names and ``modelOverrides``).

    Nothing raises: an input of the wrong shape gets a warning instead. ``models`` that
    is not a list (any sequence but a string) gets an empty ``denied``; a non-string in
    it is ``False``. ``denied_models`` that is not a list blocks nothing (``None``: no
    list, no warning); a non-string entry in it is ignored.

    Args:
        models: The model names asked about (a list of strings).
        denied_models: The ``deniedModels`` list, e.g. ``resolve_settings()``'s
            ``effective.get("deniedModels")``; None when there is none.

    Returns:
        Whether each model is blocked, in order, and the warnings, each once.

    Example:
        >>> match = match_denied_models(
        ...     ["claude-opus-4-5-20251101", "claude-sonnet-4-5"], ["opus", "best"]
        ... )
        >>> match.denied
        [True, False]
        >>> match.warnings[0].startswith('"best" was ignored')
        True
    """
    asked = list(models) if _is_list(models) else []
    model_notes = (
        [
            f'"models" contained a non-string entry ({_type_name(model)}), which is not a '
            "model name, so it cannot be matched."
            for model in asked
            if not isinstance(model, str)
        ]
        if _is_list(models)
        else [_MODELS_NOT_A_LIST]
    )
    if denied_models is None:
        denied_models = []
    if not _is_list(denied_models):
        return DeniedModelsMatch([False] * len(asked), _unique([_NOT_A_LIST, *model_notes]))
    entry_notes = [
        f'"deniedModels" contained a non-string entry ({_type_name(raw)}); the entry was ignored.'
        for raw in denied_models
        if not isinstance(raw, str)
    ]
    read = [_read_entry(raw) for raw in denied_models if isinstance(raw, str)]
    entries = [r.entry for r in read if r.entry is not None]
    denied = [isinstance(model, str) and _is_denied(model, entries) for model in asked]
    warnings = [*entry_notes, *(r.warning for r in read if r.warning), *model_notes]
    return DeniedModelsMatch(denied, _unique(warnings))


def _is_denied(model: str, entries: list[_Entry]) -> bool:
    name = _without_context_tags(_strip(model)).lower()  # no second trim, as the CLI
    model_id = _parse_model_id(name)
    return any(_blocks(entry, name, model_id) for entry in entries)
