"""Tests of NDJSON framing: LineDecoder and encode_line."""

from __future__ import annotations

import json
import math
import sys

import pytest

from ccwire._core.errors import MessageDecodeError, MessageEncodeError
from ccwire._wire.framing import LineDecoder, encode_line

STREAM = (
    b'{"type":"a","text":"h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80"}\r\n'
    b"\n"
    b"   \t\r\n"
    b'{"type":"b","n":1}\n'
    b"\r\n"
    b'{"type":"c","s":"\xe6\x97\xa5\xe6\x9c\xac"}\r\n'
    b'{"type":"d"}'
)
EXPECTED = [
    b'{"type":"a","text":"h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80"}',
    b'{"type":"b","n":1}',
    b'{"type":"c","s":"\xe6\x97\xa5\xe6\x9c\xac"}',
]
TAIL = b'{"type":"d"}'


def decode_all(chunks: list[bytes], max_line_bytes: int | None = None) -> list[bytes]:
    decoder = LineDecoder(max_line_bytes)
    lines: list[bytes] = []
    for chunk in chunks:
        lines.extend(decoder.feed(chunk))
    rest = decoder.flush()
    if rest is not None:
        lines.append(rest)
    return lines


def test_whole_stream() -> None:
    assert decode_all([STREAM]) == [*EXPECTED, TAIL]


@pytest.mark.parametrize("cut", range(len(STREAM) + 1))
def test_split_at_every_position(cut: int) -> None:
    assert decode_all([STREAM[:cut], STREAM[cut:]]) == [*EXPECTED, TAIL]


def test_split_at_every_pair_of_positions() -> None:
    for i in range(len(STREAM) + 1):
        for j in range(i, len(STREAM) + 1):
            assert decode_all([STREAM[:i], STREAM[i:j], STREAM[j:]]) == [*EXPECTED, TAIL]


def test_one_byte_chunks() -> None:
    assert decode_all([STREAM[i : i + 1] for i in range(len(STREAM))]) == [*EXPECTED, TAIL]


def test_lines_are_valid_utf8_json() -> None:
    for line in decode_all([STREAM[i : i + 1] for i in range(len(STREAM))]):
        assert isinstance(json.loads(line.decode("utf-8")), dict)


def test_pending_bytes_and_flush() -> None:
    decoder = LineDecoder()
    assert decoder.feed(b'{"a":') == []
    assert decoder.pending_bytes == 5
    assert decoder.feed(b"1}\n{") == [b'{"a":1}']
    assert decoder.pending_bytes == 1
    assert decoder.flush() == b"{"
    assert decoder.pending_bytes == 0
    assert decoder.flush() is None


def test_flush_ignores_whitespace() -> None:
    decoder = LineDecoder()
    assert decoder.feed(b"x\n  \r") == [b"x"]
    assert decoder.flush() is None


def test_only_one_trailing_cr_removed() -> None:
    assert decode_all([b"a\r\r\n"]) == [b"a\r"]


def test_huge_line_in_256k_chunks() -> None:
    size = 100 * 1024 * 1024
    payload = b'{"k":"' + b"x" * (size - 8) + b'"}'
    assert len(payload) == size
    data = payload + b"\n"
    decoder = LineDecoder()
    step = 256 * 1024
    lines: list[bytes] = []
    for start in range(0, len(data), step):
        lines.extend(decoder.feed(data[start : start + step]))
    assert len(lines) == 1
    assert len(lines[0]) == size
    assert json.loads(lines[0])["k"] == "x" * (size - 8)
    assert decoder.pending_bytes == 0


def test_huge_line_in_4k_chunks_finishes() -> None:
    """A 100 MB line fed 4 KiB at a time (25600 chunks) decodes: the work is linear."""
    size = 100 * 1024 * 1024
    data = b"y" * size + b"\n"
    decoder = LineDecoder()
    view = memoryview(data)
    step = 4096
    lines: list[bytes] = []
    for start in range(0, len(data), step):
        lines.extend(decoder.feed(view[start : start + step].tobytes()))
        if start + step < size:
            assert decoder.pending_bytes == start + step
    assert [len(line) for line in lines] == [size]


def test_max_line_bytes_complete_line() -> None:
    decoder = LineDecoder(max_line_bytes=10)
    assert decoder.feed(b"0123456789\n") == [b"0123456789"]
    with pytest.raises(MessageDecodeError, match="max_line_bytes"):
        decoder.feed(b"01234567890\n")


def test_max_line_bytes_pending_partial() -> None:
    decoder = LineDecoder(max_line_bytes=10)
    decoder.feed(b"01234")
    with pytest.raises(MessageDecodeError, match="max_line_bytes"):
        decoder.feed(b"567890")
    with pytest.raises(MessageDecodeError):
        decoder.feed(b"\n")  # broken from now on


def test_max_line_bytes_after_good_lines_in_same_chunk() -> None:
    decoder = LineDecoder(max_line_bytes=10)
    assert decoder.error is None
    assert decoder.feed(b"ok\n" + b"x" * 20 + b"\nmore\n") == [b"ok"]
    assert isinstance(decoder.error, MessageDecodeError)
    with pytest.raises(MessageDecodeError):
        decoder.feed(b"")
    with pytest.raises(MessageDecodeError):
        decoder.flush()


def test_max_line_bytes_across_chunks() -> None:
    decoder = LineDecoder(max_line_bytes=8)
    decoder.feed(b"abcd")
    with pytest.raises(MessageDecodeError):
        decoder.feed(b"efghi\n")


def test_invalid_max_line_bytes() -> None:
    with pytest.raises(ValueError, match="max_line_bytes"):
        LineDecoder(max_line_bytes=0)


def test_encode_line_compact_utf8() -> None:
    line = encode_line({"type": "user", "text": "héllo €", "n": [1, 2.5, None, True]})
    assert line == '{"type":"user","text":"héllo €","n":[1,2.5,null,true]}\n'.encode()


@pytest.mark.parametrize("text", ["a\nb", "a\r\nb", "a\u2028b\u2029c", "\x00\x1f", "x\n" * 5])
def test_encode_line_escapes_newlines(text: str) -> None:
    line = encode_line({"text": text})
    assert line.endswith(b"\n")
    assert line.count(b"\n") == 1
    assert b"\r" not in line
    assert LineDecoder().feed(line) == [line[:-1]]
    assert json.loads(line) == {"text": text}


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_encode_line_rejects_nan(value: float) -> None:
    with pytest.raises(MessageEncodeError, match="JSON"):
        encode_line({"x": value})


def test_encode_line_rejects_unserializable() -> None:
    with pytest.raises(MessageEncodeError, match="not JSON serializable") as info:
        encode_line({"x": object()})
    assert isinstance(info.value.__cause__, TypeError)


def test_encode_line_rejects_circular() -> None:
    data: dict[str, object] = {}
    data["self"] = data
    with pytest.raises(MessageEncodeError, match="ircular"):
        encode_line(data)


def test_encode_line_rejects_lone_surrogate() -> None:
    with pytest.raises(MessageEncodeError):
        encode_line({"x": "\ud800"})


def test_encode_line_writes_integers_up_to_pythons_limit_and_names_it_past_it() -> None:
    """The rule is Python's limit on turning an integer into text (4300 digits unless
    changed); a longer one was refused with advice to raise a process-wide limit."""
    limit = sys.get_int_max_str_digits()
    assert encode_line({"n": 10 ** (limit - 1)}) == b'{"n":1' + b"0" * (limit - 1) + b"}\n"
    for value in ({"n": 10**limit}, {10**limit: 1}):
        with pytest.raises(MessageEncodeError) as info:
            encode_line(value)
        assert str(info.value) == (
            "cannot encode the message as JSON: an integer of more than "
            f"{limit} digits (Python's limit, sys.get_int_max_str_digits())"
        )
