"""A busy process switches to the fast JSON parser and encoder (msgspec), which read
every line as json does: the same messages, values and decode errors, in order.

The switch comes after `control._FAST_JSON_AFTER` lines read or answers written; these
tests lower it to 16, and write 21 lines at once."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from ccwire import AssistantMessage, ClaudeSDKClient, MessageDecodeError
from ccwire._protocol import control
from ccwire._wire.framing import encode_line, parse_object

from .conftest import FaultOptions, no_leaks
from .test_faults import LIMIT, collect

pytestmark = pytest.mark.anyio

# Lines JSON readers disagree on: the fast parser refuses them or reads them as json does.
DISPUTED_LINES = [
    b'{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"x",'
    b'"input":{"big":123456789012345678901234567890,"neg":-9223372036854775809,'
    b'"nan":NaN,"inf":-Infinity,"huge":1e400,"tiny":1e-400,"zero":-0.0}}]}}\n',
    b'{"type":"assistant","message":{"content":[{"type":"text","text":"\\ud800 lone"}]}}\n',
    b'{"type":"assistant","message":{"content":[{"type":"text","text":"\\ud83d\\ude00"}]}}\n',
    b'{"type":"assistant","message":{"content":[{"type":"text","text":"ff"}]}}\x0c\n',
    b'{"type":"assistant","message":{"content":[{"type":"text","text":"a\tb"}]}}\n',
    b'{"type":"system","subtype":"x","n":18446744073709551616,"d":{"k":1,"k":2}}\n',
    b'{"type":"assistant","message":{"content":[{"type":"text","text":"\xed\xa0\x80"}]}}\n',
]


def _shown(item: object) -> str:
    """An item as compared: its class and content (NaN and -0.0 told apart by repr)."""
    if isinstance(item, AssistantMessage):
        return f"Assistant {item.content!r}"
    if isinstance(item, MessageDecodeError):
        return f"MessageDecodeError: {str(item).splitlines()[0]}"
    return f"{type(item).__name__} {getattr(item, 'data', '')!r}"


async def _read(fault_options: FaultOptions, path: Path) -> list[str]:
    async with no_leaks():
        with anyio.fail_after(LIMIT):
            async with ClaudeSDKClient(fault_options("lines_at_once", path)) as client:
                await client.query("hi")
                return [_shown(item) for item in await collect(client)]


async def test_a_burst_of_lines_switches_to_the_fast_parser_which_reads_as_json_does(
    fault_options: FaultOptions, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "lines.jsonl"
    path.write_bytes(b"".join(DISPUTED_LINES * 3))  # 21 lines, written at once
    monkeypatch.setattr(control, "_parse_line", parse_object)
    monkeypatch.setattr(control, "_encode_line", encode_line)
    monkeypatch.setattr(control, "_lines_seen", control._FAST_JSON_AFTER)  # json only
    with_json = await _read(fault_options, path)
    assert control._parse_line is parse_object and control._encode_line is encode_line
    monkeypatch.setattr(control, "_lines_seen", 0)  # as in a fresh process
    monkeypatch.setattr(control, "_FAST_JSON_AFTER", 16)
    with_msgspec = await _read(fault_options, path)
    assert control._parse_line.__qualname__ == "fast_object_parser.<msgspec>"
    assert control._encode_line.__qualname__ == "fast_line_encoder.<msgspec>"
    assert with_msgspec == with_json
    assert with_json[:7] == [
        "Assistant [ToolUseBlock(id='t1', name='x', input={'big': 123456789012345678901234567890,"
        " 'neg': -9223372036854775809, 'nan': nan, 'inf': -inf, 'huge': inf, 'tiny': 0.0,"
        " 'zero': -0.0})]",
        "Assistant [TextBlock(text='\\ud800 lone')]",
        "Assistant [TextBlock(text='😀')]",
        "Assistant [TextBlock(text='ff')]",
        "MessageDecodeError: the CLI wrote a line that is not valid JSON: "
        + repr(DISPUTED_LINES[4].decode().rstrip("\n")),  # a raw tab in a string
        "SystemMessage {'type': 'system', 'subtype': 'x', 'n': 18446744073709551616,"
        " 'd': {'k': 2}}",
        "Assistant [TextBlock(text='\\ud800')]",
    ]
    assert with_json[7:21] == with_json[:7] * 2
    assert with_json[21:] == ["ResultMessage ''"]


async def test_without_msgspec_json_parses_every_line(
    fault_options: FaultOptions, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "lines.jsonl"
    path.write_bytes(b"".join(DISPUTED_LINES * 3))
    for name in ("msgspec", "msgspec.json"):  # not installed
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setattr(control, "_parse_line", parse_object)
    monkeypatch.setattr(control, "_encode_line", encode_line)
    monkeypatch.setattr(control, "_lines_seen", 0)
    monkeypatch.setattr(control, "_FAST_JSON_AFTER", 16)
    items = await _read(fault_options, path)
    assert control._lines_seen >= control._FAST_JSON_AFTER  # the switch came
    assert control._parse_line is parse_object and control._encode_line is encode_line
    assert len(items) == 22 and items[4].startswith("MessageDecodeError")
