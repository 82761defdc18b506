"""`StderrCollector`, the stderr handling both transports share: lines to the callback,
a bounded tail of whole lines, and memory bounded for a line that never ends (a failing
callback: ``test_subprocess_transport.py``)."""

from __future__ import annotations

from ccwire._transport.base import StderrCollector


def test_lines_reach_the_callback_and_the_tail_keeps_the_last_whole_ones() -> None:
    seen: list[str] = []
    collector = StderrCollector(seen.append, tail_bytes=12)
    collector.feed(b"one\ntwo\r\nthr")
    collector.feed(b"ee\nfour  \n")
    assert seen == ["one", "two", "three", "four"]  # line ends and trailing blanks trimmed
    assert collector.tail == "three\nfour"  # "two" would make it 14 bytes with newlines
    collector.write_text("no newline")
    assert seen[-1] == "no newline" and collector.tail == "no newline"


def test_a_line_longer_than_the_tail_keeps_its_end() -> None:
    collector = StderrCollector(tail_bytes=8)
    collector.write_text("short\nTraceback: boom at the end")
    assert collector.tail == " the end"  # the last 8 bytes; "short" gone with the rest
    collector.write_text("next")
    assert collector.tail == "next"  # both would take 13 bytes: the older goes


def test_no_tail_kept_when_its_size_is_zero() -> None:
    seen: list[str] = []
    collector = StderrCollector(seen.append, tail_bytes=0)
    collector.write_text("a\nb")
    assert seen == ["a", "b"] and collector.tail == ""


def test_an_unfinished_line_is_passed_on_in_pieces() -> None:
    seen: list[str] = []
    collector = StderrCollector(seen.append, tail_bytes=64, max_line_bytes=10)
    collector.feed(b"0123456789abc")  # no newline yet, over the limit: passed on now
    assert seen == ["0123456789abc"]
    collector.feed(b"de\n")
    assert seen == ["0123456789abc", "de"]
