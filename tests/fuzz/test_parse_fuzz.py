"""The fast line parser (msgspec) against json: for any line starting with ``{`` (what
both are given), the same value or the same error.

The texts are JSON objects as the CLI writes them (any values: integers of any size,
NaN and Infinity, lone surrogates, escaped or not, and keys repeated), then mutated:
a piece cut out, a piece put in (blanks JSON knows or not, numbers out of range,
broken escapes, raw control characters), or the text cut short; its first ``{`` stays.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import example, given, strategies as st

from ccwire._wire.framing import FAST_PARSE_MAX_CHARS, fast_object_parser, parse_object
from tests.fuzz._support import counted, fuzz_settings, json_values, wire_scalars

fast = fast_object_parser()
pytestmark = pytest.mark.skipif(fast is None, reason="msgspec is not installed")

_PIECES = st.sampled_from(
    [" ", "\t", "\r", "\n", "\x0c", "\x0b", "\xa0", "\u2028", ",", ":", "[", "]", "{", "}",
     '"', "\\", "\\u", "\\ud800", "\\udc00", "\ud800", "\x00", "\x01", "-", "0", "1e400",
     "-1e400", "1e-400", "NaN", "Infinity", "-Infinity", "18446744073709551616",
     "-9223372036854775809", "123456789012345678901234567890", ".5", "1.", "01", "+1",
     "true", "nul", "é", "😀"]
)  # fmt: skip
_values = st.recursive(
    st.one_of(json_values, wire_scalars, st.text(alphabet=st.characters(), max_size=4)),
    lambda children: st.one_of(
        st.lists(children, max_size=3), st.dictionaries(st.text(max_size=3), children, max_size=3)
    ),
    max_leaves=12,
)


@st.composite
def _texts(draw: st.DrawFn) -> str:
    obj = draw(st.dictionaries(st.sampled_from(["type", "a", "b", "a"]), _values, max_size=4))
    text = json.dumps(obj, ensure_ascii=draw(st.booleans()), separators=(",", ":"))
    if draw(st.booleans()):  # a key written twice
        text = text[:-1] + (',"type":1}' if len(text) > 2 else '"type":1}')
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(1, len(text)))
        how = draw(st.sampled_from(["insert", "cut", "truncate"]))
        if how == "insert":
            text = text[:at] + draw(_PIECES) + text[at:]
        elif how == "cut":
            text = text[:at] + text[at + draw(st.integers(1, 3)) :]
        else:
            text = text[:at]
    return text


def _outcome(parse: Any, text: str) -> tuple[str, str]:
    """What parsing gave: the value's repr (NaN, -0.0, int and float told apart), or the
    error's type and text."""
    try:
        return "value", repr(parse(text))
    except (ValueError, RecursionError) as exc:
        return type(exc).__name__, str(exc)


@fuzz_settings(3000)
@given(text=_texts())
@example(text='{"a":123456789012345678901234567890,"b":-9223372036854775809}')
@example(text='{"a":NaN,"b":-Infinity,"c":1e400,"d":1e-400,"e":-0.0}')
@example(text='{"a":"\\ud800","b":"\ud800","c":"\\ud83d\\ude00"}')
@example(text='{"a":1}\x0c')
@example(text='{"a":1,"a":2,"b":{"a":3,"a":[4]}}')
@example(text='{"a":"\t"}')
@example(text='{"a":' + "[" * 5000 + "]" * 5000 + "}")
@counted
def test_the_fast_parser_gives_what_json_gives(text: str) -> None:
    assert fast is not None
    assert _outcome(fast, text) == _outcome(parse_object, text)


def test_a_line_over_the_cap_is_left_to_json() -> None:
    """Past the cap json parses alone (its errors and values are the reference anyway):
    the result is still json's."""
    assert fast is not None
    big = '{"a":"' + "x" * FAST_PARSE_MAX_CHARS + '","n":NaN}'
    assert math.isnan(fast(big)["n"])
    assert fast(big)["a"] == "x" * FAST_PARSE_MAX_CHARS
