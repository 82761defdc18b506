"""NDJSON framing: split a byte stream into lines, parse a line, encode an object as one.

Pure functions and state machines only, no I/O. Both transports (the subprocess one and
the in-memory one used in tests) frame through `LineDecoder`, so framing bugs show
up in every test.

`LineDecoder` is linear in its total input: pending partial data is appended to
one ``bytearray`` (amortised growth) and only each *new* chunk is searched for a newline,
so a 100 MB line arriving in 4 KiB chunks costs the same as arriving in one piece, and
its peak memory is the buffer plus the finished line (the many small chunks of a list
would fragment the heap and stay resident). It works on bytes, so a chunk
boundary inside a multi-byte UTF-8 sequence is harmless.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from .._core.errors import LineTooLongError, MessageDecodeError, MessageEncodeError

__all__ = ["LineDecoder", "encode_line", "parse_object"]

_PREVIEW = 200
_raw_decode = json.JSONDecoder().raw_decode
# one encoder for every line (json.dumps with options builds a new one per call)
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


def _preview(data: bytes) -> str:
    return data[:_PREVIEW].decode("utf-8", "replace")


class LineDecoder:
    """Incrementally split a byte stream into lines.

    Each complete line is returned without its ``b"\\n"`` and without one trailing
    ``b"\\r"``; lines that are empty or only whitespace are skipped. ``max_line_bytes``
    (default: unlimited) caps one line, counted without its ``b"\\n"``. A longer line (or
    a longer unfinished line) breaks the decoder: `error` is set and every further
    call raises it as `MessageDecodeError`. The call that meets the long
    line raises at once if it completed no line before it; otherwise it returns those
    lines first (check `error` after each call).
    """

    def __init__(self, max_line_bytes: int | None = None) -> None:
        if max_line_bytes is not None and max_line_bytes < 1:
            raise ValueError("max_line_bytes must be a positive integer or None")
        self._max = max_line_bytes
        self._buf = bytearray()
        self._broken: MessageDecodeError | None = None

    @property
    def pending_bytes(self) -> int:
        """Number of bytes of the unfinished line held so far."""
        return len(self._buf)

    @property
    def error(self) -> MessageDecodeError | None:
        """The error that broke the decoder (a line over ``max_line_bytes``), if any."""
        return self._broken

    def feed(self, chunk: bytes) -> list[bytes]:
        """Add ``chunk`` and return the lines it completed, in order."""
        if self._broken is not None:
            raise self._broken
        if type(chunk) is not bytes:
            chunk = bytes(chunk)
        lines: list[bytes] = []
        nl = chunk.find(b"\n")
        if nl < 0:  # the common case for a long line: no copy but the append
            if chunk:
                self._check(len(self._buf) + len(chunk), self._buf, chunk)
                self._buf += chunk
            return lines
        start = 0
        try:
            if self._buf:
                self._check(len(self._buf) + nl, self._buf, chunk)
                self._buf += memoryview(chunk)[:nl]
                line = bytes(self._buf)
                self._buf = bytearray()  # frees the big buffer now
                self._emit(line, lines)
                del line
                start = nl + 1
                nl = chunk.find(b"\n", start)
            limit = self._max
            while nl >= 0:  # the lines a chunk holds (their checks inline: one per line)
                line = chunk[start:nl]
                if limit is not None and nl - start > limit:
                    self._check(nl - start, line, b"")
                if line.endswith(b"\r"):
                    line = line[:-1]
                if line and not line.isspace():
                    lines.append(line)
                start = nl + 1
                nl = chunk.find(b"\n", start)
            if start < len(chunk):
                rest = memoryview(chunk)[start:]
                self._check(len(rest), chunk[start : start + _PREVIEW], b"")
                self._buf += rest
        except MessageDecodeError:
            if not lines:
                raise
        return lines

    def flush(self) -> bytes | None:
        """Return (and forget) the unfinished line at end of stream.

        ``None`` if nothing but whitespace is pending.
        """
        if self._broken is not None:
            raise self._broken
        data = bytes(self._buf)
        self._buf = bytearray()
        if data.endswith(b"\r"):
            data = data[:-1]
        if not data or data.isspace():
            return None
        return data

    @staticmethod
    def _emit(line: bytes, out: list[bytes]) -> None:
        if line.endswith(b"\r"):
            line = line[:-1]
        if line and not line.isspace():
            out.append(line)

    def _check(self, size: int, head: bytes | bytearray, more: bytes) -> None:
        """Break the decoder if a line of ``size`` bytes is too long; the line starts
        with ``head`` and goes on with ``more`` (for the error's preview only).

        The preview is the line's first ``min(max_line_bytes + 1, 200)`` bytes: always
        at hand when the line is found too long, so it does not depend on how the
        stream was chunked.
        """
        if self._max is not None and size > self._max:
            limit = min(self._max + 1, _PREVIEW)
            start = bytes(head[:limit])
            if len(start) < limit:
                start += more[: limit - len(start)].split(b"\n", 1)[0]
            self._buf = bytearray()
            self._broken = LineTooLongError(self._max, _preview(start))
            raise self._broken


def encode_line(obj: object) -> bytes:
    """Encode ``obj`` as one compact UTF-8 JSON line ending in ``b"\\n"``.

    The result never holds a raw newline except the final one. The rules (also in
    ``docs/protocol.md``): strings, integers (up to ``sys.get_int_max_str_digits()``
    digits, 4300 by default), finite floats, booleans and ``None`` as JSON writes them
    (``int`` and ``str`` enums by their value); lists and tuples as arrays; dicts as
    objects, their ``int``/``float``/``bool``/``None`` keys as their JSON text. Raises
    `MessageEncodeError` (nothing is written), naming the cause, for anything else:
    NaN and Infinity, a longer integer, a lone surrogate, other key types, a value JSON
    has no type for (``set``, ``bytes``, ``datetime``, a dataclass...), a circular or
    too deeply nested value. Lines have no size limit.
    """
    try:
        return _encode(obj).encode("utf-8") + b"\n"
    except (TypeError, ValueError, RecursionError) as exc:
        raise MessageEncodeError(f"cannot encode the message as JSON: {_why(exc)}") from exc


def _why(exc: BaseException) -> str:
    """The reason an encoding failed, in words a user recognises."""
    if isinstance(exc, UnicodeEncodeError):
        return f"{exc.object[exc.start : exc.end]!r} is a lone surrogate, not text UTF-8 can carry"
    if isinstance(exc, ValueError) and "Out of range float" in str(exc):
        return "NaN and Infinity have no spelling in JSON"
    if isinstance(exc, ValueError) and "integer string conversion" in str(exc):
        limit = sys.get_int_max_str_digits()
        return (
            f"an integer of more than {limit} digits (Python's limit, sys.get_int_max_str_digits())"
        )
    if isinstance(exc, RecursionError):
        return "the value is nested too deeply"
    return str(exc)


def parse_object(text: str) -> Any:
    """``json.loads(text)`` for a line known to start with ``{``, minus its two regex
    scans for surrounding blanks (a measurable share of every message).

    Raises:
        ValueError: ``text`` is not one JSON value (optionally followed by blanks).
        RecursionError: ``text`` is nested too deeply.
    """
    obj, end = _raw_decode(text)
    if end != len(text) and not text[end:].isspace():
        raise ValueError(f"Extra data at character {end}")
    return obj
