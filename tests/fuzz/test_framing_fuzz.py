"""Properties of the NDJSON framer: ``LineDecoder`` and ``encode_line``.

The model of the framer is the whole stream split at ``b"\\n"`` in one go: each complete
segment loses one trailing ``b"\\r"`` and is dropped if empty or whitespace; the last
(unfinished) segment is what ``flush()`` returns. With ``max_line_bytes`` the first
segment longer than the cap (counted with its ``\\r``, without its ``\\n``) breaks the
decoder; every line before it is still delivered. Any chunking must agree with it.
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import example, given, strategies as st

from ccwire import MessageDecodeError, MessageEncodeError
from ccwire._wire.framing import LineDecoder, encode_line
from tests.fuzz._support import counted, fuzz_settings, json_values

# ------------------------------------------------------------------------- strategies

# Pieces that make framing interesting: separators, \r in every position, ASCII
# whitespace (bytes.isspace), and multi-byte UTF-8 sequences that chunk cuts can split.
_PIECES = st.sampled_from(
    [b"\n", b"\r\n", b"\r", b" ", b"\t", b"\x0b", b"\x0c", b"\n\n", b"\r\r\n", b"{}", b"x",
     "é".encode(), "€".encode(), "😀".encode(), "\u2028".encode(), b"\xff", b"\xc3"]
)  # fmt: skip
_streams = st.lists(
    st.one_of(_PIECES, st.binary(max_size=12), st.text(max_size=6).map(str.encode)), max_size=24
).map(b"".join)


@st.composite
def _stream_and_cuts(draw: st.DrawFn) -> tuple[bytes, list[bytes]]:
    """A byte stream and one way of cutting it into chunks (empty chunks included)."""
    data = draw(_streams)
    cuts = sorted(draw(st.lists(st.integers(0, len(data)), max_size=12)))
    bounds = [0, *cuts, len(data)]
    chunks = [data[a:b] for a, b in itertools.pairwise(bounds)]
    return data, chunks


# ------------------------------------------------------------------------------ model


@dataclass
class Outcome:
    lines: list[bytes]
    tail: bytes | None  # what flush() returned (only when not broken)
    error: str | None  # the error's message without its preview of the line


def _strip(line: bytes) -> bytes | None:
    if line.endswith(b"\r"):
        line = line[:-1]
    return None if not line or line.isspace() else line


def _cap_message(cap: int) -> str:
    return f"a line from the CLI exceeds max_line_bytes ({cap} bytes)"


def model(data: bytes, cap: int | None) -> Outcome:
    *complete, last = data.split(b"\n")
    lines: list[bytes] = []
    for segment in complete:
        if cap is not None and len(segment) > cap:
            return Outcome(lines, None, _cap_message(cap))
        kept = _strip(segment)
        if kept is not None:
            lines.append(kept)
    if cap is not None and len(last) > cap:
        return Outcome(lines, None, _cap_message(cap))
    return Outcome(lines, _strip(last), None)


@dataclass
class Run:
    outcome: Outcome
    exc: MessageDecodeError | None


def run(chunks: list[bytes], cap: int | None) -> Run:
    """Feed ``chunks`` like a transport does: stop at the first error, flush at the end."""
    decoder = LineDecoder(cap)
    lines: list[bytes] = []
    raised: MessageDecodeError | None = None
    for chunk in chunks:
        try:
            lines += decoder.feed(chunk)
        except MessageDecodeError as exc:
            raised = exc
        error = decoder.error
        if error is not None:
            assert raised is None or raised is error
            # Broken for good: every later call raises the same error.
            with pytest.raises(MessageDecodeError) as again:
                decoder.feed(b"more\n")
            assert again.value is error
            with pytest.raises(MessageDecodeError):
                decoder.flush()
            return Run(Outcome(lines, None, error.args[0].split(": ", 1)[0]), error)
        assert raised is None
        if cap is not None:  # a decoder never holds more than one capped line
            assert decoder.pending_bytes <= cap
    return Run(Outcome(lines, decoder.flush(), None), None)


# ------------------------------------------------------------------------- properties


@fuzz_settings(1000)
@given(case=_stream_and_cuts())
@counted
def test_any_chunking_yields_the_lines_of_the_whole_stream(
    case: tuple[bytes, list[bytes]],
) -> None:
    data, chunks = case
    expected = model(data, None)
    assert run([data], None).outcome == expected
    assert run(chunks, None).outcome == expected
    # One byte at a time: every multi-byte character and every \r\n is split.
    assert run([data[i : i + 1] for i in range(len(data))], None).outcome == expected
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return
    for line in expected.lines:  # valid UTF-8 in, valid UTF-8 lines out
        line.decode("utf-8")


@fuzz_settings(1000)
@given(case=_stream_and_cuts(), cap=st.integers(1, 40))
@counted
def test_max_line_bytes_fails_the_same_way_for_any_chunking(
    case: tuple[bytes, list[bytes]], cap: int
) -> None:
    data, chunks = case
    expected = model(data, cap)
    whole, chunked = run([data], cap), run(chunks, cap)
    assert whole.outcome == expected
    assert chunked.outcome == expected
    for result in (whole, chunked):
        if result.exc is not None:
            assert isinstance(result.exc.line, str)
            assert len(result.exc.line) <= 200


@fuzz_settings(100)
@given(case=_stream_and_cuts(), cap=st.integers(1, 40))
@example(case=(b"abcdefgh\n", [b"abc", b"defgh\n"]), cap=5)
@counted
def test_max_line_bytes_error_text_is_independent_of_chunking(
    case: tuple[bytes, list[bytes]], cap: int
) -> None:
    data, chunks = case
    whole, chunked = run([data], cap), run(chunks, cap)
    assert (whole.exc is None) == (chunked.exc is None)
    if whole.exc is not None and chunked.exc is not None:
        assert str(chunked.exc) == str(whole.exc)
        assert chunked.exc.line == whole.exc.line


@fuzz_settings(600)
@given(value=json_values)
@counted
def test_encode_line_is_one_line_that_decodes_back(value: Any) -> None:
    line = encode_line(value)
    assert line.endswith(b"\n")
    assert line.count(b"\n") == 1  # no raw newline inside, exactly one at the end
    assert json.loads(line.decode("utf-8")) == value
    # ... and the framer gives it back as exactly one line, whatever the chunking.
    decoder = LineDecoder(len(line) - 1)
    half = len(line) // 2
    assert decoder.feed(line[:half]) + decoder.feed(line[half:]) == [line[:-1]]
    assert decoder.flush() is None


class _Opaque:
    """Not JSON-serializable."""


def _circular_list() -> list[Any]:
    loop: list[Any] = []
    loop.append(loop)
    return loop


def _circular_dict() -> dict[str, Any]:
    loop: dict[str, Any] = {}
    loop["self"] = loop
    return loop


_BAD_LEAVES = st.one_of(
    st.sampled_from([math.nan, math.inf, -math.inf]),
    st.builds(_Opaque),
    st.sampled_from([b"bytes", {1, 2}, 1j, frozenset()]),
    st.characters(categories=["Cs"]).map(lambda s: f"a{s}b"),  # lone surrogates
    st.builds(_circular_list),
    st.builds(_circular_dict),
    st.just(10**5000),  # more digits than Python converts to text
)
_BAD_KEYS = st.one_of(
    st.characters(categories=["Cs"]),  # a lone surrogate as a key
    st.sampled_from([(1, 2), frozenset({1})]),  # keys json.dumps refuses
)


@st.composite
def _unrepresentable(draw: st.DrawFn) -> Any:
    """A JSON value with one thing JSON cannot represent hidden somewhere inside."""
    bad_key = draw(st.booleans())
    bad: Any = {draw(_BAD_KEYS): 1} if bad_key else draw(_BAD_LEAVES)
    for _ in range(draw(st.integers(0, 4))):
        siblings = draw(st.lists(json_values, max_size=3))
        at = draw(st.integers(0, len(siblings)))
        if draw(st.booleans()):
            bad = [*siblings[:at], bad, *siblings[at:]]
        else:
            n = len(siblings) + 1
            keys = draw(st.lists(st.text(max_size=4), min_size=n, max_size=n, unique=True))
            bad = dict(zip(keys, [*siblings[:at], bad, *siblings[at:]], strict=True))
    return bad


@fuzz_settings(300)
@given(value=_unrepresentable())
@counted
def test_encode_line_refuses_unrepresentable_values_with_the_typed_error(value: Any) -> None:
    with pytest.raises(MessageEncodeError) as info:
        encode_line(value)
    assert type(info.value) is MessageEncodeError
    assert str(info.value).startswith("cannot encode the message as JSON")


def test_encode_line_refuses_a_too_deeply_nested_value() -> None:
    # Not a hypothesis example: hypothesis would try to pretty-print it.
    deep: list[Any] = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(MessageEncodeError):
        encode_line(deep)
    with pytest.raises(MessageEncodeError):
        encode_line({"a": deep})
