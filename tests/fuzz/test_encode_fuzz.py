"""The fast line encoder (msgspec) against `encode_line` (json): for any value, a line
with the same value, or the same `MessageEncodeError`.

The values are JSON values mixed with everything a frame may carry that JSON has no
spelling for, or that msgspec writes differently: NaN and Infinity, integers of any
size, lone surrogates, non-string keys, tuples, sets, bytes, dates, UUIDs, decimals,
enums, dataclasses, dict subclasses, circular and deeply nested values. A line both
encoders write must be byte for byte json's unless the value holds a float (msgspec
may spell an exponent differently: ``1e16`` for ``1e+16``, the same number).
"""

from __future__ import annotations

import collections
import dataclasses
import datetime
import decimal
import enum
import json
import uuid
from typing import Any

import pytest
from hypothesis import example, given, strategies as st

from ccwire import MessageEncodeError
from ccwire._wire.framing import FAST_ENCODE_MAX_BYTES, encode_line, fast_line_encoder
from tests.fuzz._support import counted, fuzz_settings, wire_scalars

fast = fast_line_encoder()
pytestmark = pytest.mark.skipif(fast is None, reason="msgspec is not installed")


class _Color(enum.Enum):
    RED = "red"


class _Level(enum.IntEnum):
    HIGH = 3


class _Mode(str, enum.Enum):
    AUTO = "auto"


@dataclasses.dataclass
class _Point:
    x: int


_ODD_SCALARS = st.sampled_from(
    [(1, 2), frozenset({1}), {2}, b"bytes", bytearray(b"x"), datetime.date(2026, 1, 2),
     datetime.datetime(2026, 1, 2, 3, 4, 5), uuid.UUID(int=7), decimal.Decimal("1.5"),
     _Color.RED, _Level.HIGH, _Mode.AUTO, _Point(1), object(), 1e16, 2.5e-05, -0.0,
     1.7976931348623157e308, 5e-324, 2**64, -(2**63) - 1, 10**40, True, None, "\ud800",
     "a\u2028b\x7f\x00\x1f\"\\", "é😀"]
)  # fmt: skip
_KEYS = st.one_of(
    st.text(max_size=3),
    st.sampled_from([1, 1.5, True, None, "\udc00", float("nan"), (1,), _Level.HIGH]),
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


def _has_float(value: Any) -> bool:
    if isinstance(value, float):
        return True
    if isinstance(value, dict):
        return any(_has_float(k) or _has_float(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(_has_float(v) for v in value)
    return False


def _outcome(encode: Any, value: Any) -> tuple[str, Any]:
    """What encoding gave: the line's value (by repr: int and float, -0.0 told apart),
    or the error's type and text."""
    try:
        line = encode(value)
    except MessageEncodeError as exc:
        return "MessageEncodeError", str(exc)
    assert line.endswith(b"\n") and b"\n" not in line[:-1]
    return "line", repr(json.loads(line))


def _check(value: Any) -> None:
    assert fast is not None
    assert _outcome(fast, value) == _outcome(encode_line, value)
    try:
        expected = encode_line(value)
    except MessageEncodeError:
        return
    if not _has_float(value):
        assert fast(value) == expected


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
@example(value={"a": 1e16, "b": 2.5e-05, "c": -0.0})
@counted
def test_the_fast_encoder_gives_what_json_gives(value: dict[Any, Any]) -> None:
    _check(value)


def test_circular_and_too_deep_values_give_json_s_errors() -> None:
    loop: list[Any] = []
    loop.append(loop)
    _check({"a": loop})
    deep: list[Any] = []
    for _ in range(100_000):
        deep = [deep]
    _check({"a": deep})


def test_a_line_over_the_cap_is_left_to_json() -> None:
    """Past the cap json encodes alone: the line is json's, byte for byte."""
    assert fast is not None
    big = {"a": "x" * FAST_ENCODE_MAX_BYTES, "b": 1e16}
    assert fast(big) == encode_line(big)
