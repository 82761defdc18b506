"""The wire's encoding rules, as documented on `encode_line` and in docs/protocol.md:
every value either becomes one line in one defined way, or a `MessageEncodeError`
naming the cause. Never anything else: no silent substitution, no torn line.

The values mix JSON values with everything a frame may carry that JSON has no spelling
for: NaN and Infinity, integers past Python's limit, lone surrogates, non-string keys, tuples,
sets, bytes, dates, UUIDs, decimals, enums, dataclasses, dict subclasses, circular and
deeply nested values. `_expected` states the rules independently of the encoder.
"""

from __future__ import annotations

import collections
import dataclasses
import datetime
import decimal
import enum
import json
import math
import sys
import uuid
from typing import Any

import pytest
from hypothesis import example, given, strategies as st

from ccwire import MessageEncodeError
from ccwire._wire.framing import encode_line
from tests.fuzz._support import counted, fuzz_settings, wire_scalars


class _Color(enum.Enum):
    RED = "red"


class _Level(enum.IntEnum):
    HIGH = 3


class _Mode(str, enum.Enum):
    AUTO = "auto"


@dataclasses.dataclass
class _Point:
    x: int


def _huge(sign: int = 1) -> int:
    """One digit more than Python turns into text (made by a function: hypothesis
    shows its strategies by repr(), which refuses it)."""
    return sign * int(10 ** sys.get_int_max_str_digits())


_ODD_SCALARS = st.sampled_from(
    [(1, 2), frozenset({1}), {2}, b"bytes", bytearray(b"x"), datetime.date(2026, 1, 2),
     datetime.datetime(2026, 1, 2, 3, 4, 5), uuid.UUID(int=7), decimal.Decimal("1.5"),
     _Color.RED, _Level.HIGH, _Mode.AUTO, _Point(1), object(), 1e16, 2.5e-05, -0.0,
     1.7976931348623157e308, 5e-324, 2**64, -(2**63) - 1, 10**40, True, None, "\ud800",
     "a\u2028b\x7f\x00\x1f\"\\", "é😀", float("nan"), float("inf")]
) | st.builds(_huge)  # fmt: skip
_KEYS = st.one_of(
    st.text(max_size=3),
    st.sampled_from([1, 1.5, True, None, "\udc00", float("nan"), (1,), _Level.HIGH]),
    st.builds(_huge, st.just(-1)),
)
_values = st.recursive(
    st.one_of(wire_scalars, _ODD_SCALARS, st.text(alphabet=st.characters(), max_size=4)),
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.lists(children, max_size=3).map(tuple),
        st.dictionaries(st.text(max_size=3), children, max_size=3),
        st.dictionaries(_KEYS, children, max_size=2),
        st.dictionaries(st.text(max_size=3), children, max_size=2).map(collections.OrderedDict),
    ),
    max_leaves=12,
)


_NAN = "NaN and Infinity have no spelling in JSON"


def _text(s: str, refused: list[str]) -> str:
    if any(0xD800 <= ord(c) <= 0xDFFF for c in s):
        refused.append("is a lone surrogate")
    return s


def _int(n: int, refused: list[str]) -> int:
    if abs(n) >= 10 ** sys.get_int_max_str_digits():
        refused.append("an integer of more than")
        return 0
    return int(n)


def _key(k: Any, refused: list[str]) -> str:
    if isinstance(k, str):
        return _text(str.__str__(k), refused)
    if k is True or k is False:
        return "true" if k else "false"
    if k is None:
        return "null"
    if isinstance(k, int):
        return str(_int(k, refused))
    if isinstance(k, float):
        if not math.isfinite(k):
            refused.append(_NAN)
        return float.__repr__(k)
    refused.append("keys must be str, int, float, bool or None")
    return ""


def _expected(value: Any, refused: list[str]) -> Any:
    """The value a reader gets back from the line, by the rules; each reason to refuse
    the value is added to ``refused``."""
    if value is None or value is True or value is False:
        return value
    if isinstance(value, str):  # str enums included: their text
        return _text(str.__str__(value), refused)
    if isinstance(value, int):  # int enums included: their number
        return _int(value, refused)
    if isinstance(value, float):
        if not math.isfinite(value):
            refused.append(_NAN)
        return float(value)
    if isinstance(value, (list, tuple)):
        return [_expected(v, refused) for v in value]
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            key = _key(k, refused)
            out[key] = _expected(v, refused)  # keys that collide: the last one wins
        return out
    refused.append(f"Object of type {type(value).__name__} is not JSON serializable")
    return None


def _check(value: Any) -> None:
    refused: list[str] = []
    expected = _expected(value, refused)
    if refused:  # refused, naming one of the causes
        with pytest.raises(MessageEncodeError) as error:
            encode_line(value)
        assert any(cause in str(error.value) for cause in refused), (refused, error.value)
        return
    line = encode_line(value)
    assert line.endswith(b"\n") and b"\n" not in line[:-1]
    assert repr(json.loads(line)) == repr(expected)  # by repr: 1 and 1.0, -0.0 told apart


@fuzz_settings(2000)
@given(value=st.dictionaries(st.sampled_from(["type", "a", "b"]), _values, max_size=4))
@example(value={"a": float("nan")})
@example(value={"a": [float("inf")]})
@example(value={"a": {1}, "b": b"x"})
@example(value={1: "a", "1": "b"})
@example(value={"a": (1, 2)})
@example(value={"a": "\ud800"})
@example(value={"\udc00": 1})
@example(value={"a": _Point(1), "b": _Color.RED, "c": _Level.HIGH, "d": _Mode.AUTO})
@example(value={"a": datetime.date(2026, 1, 2), "b": uuid.UUID(int=7)})
@example(value={"a": decimal.Decimal("1.5")})
@example(value={"a": 10**40, "b": -(2**63) - 1})
@example(value={"a": _huge() - 1, "b": _huge(-1)})
@example(value={"a": 1e16, "b": 2.5e-05, "c": -0.0})
@counted
def test_every_value_is_encoded_by_the_rules_or_refused_naming_the_cause(
    value: dict[Any, Any],
) -> None:
    _check(value)


def test_circular_and_too_deep_values_are_refused_naming_the_cause() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(MessageEncodeError, match="Circular reference"):
        encode_line({"a": loop})
    deep: list[Any] = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(MessageEncodeError, match="nested too deeply"):
        encode_line({"a": deep})


def test_a_large_value_is_one_line() -> None:
    """Lines written have no size limit (the CLI reads what it is sent)."""
    big = {"a": "x" * (8 << 20), "b": "é\n" * 1000}
    line = encode_line(big)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert json.loads(line) == big
