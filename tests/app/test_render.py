"""How ``ccwire run`` shows a conversation: the lines of each event (plain, quiet and
verbose) and the rich display's live status on a terminal console: drawn, then erased,
and hidden while the user answers a question (the renderers' other tests:
``test_cli.py``)."""

from __future__ import annotations

import io
from typing import Any

import pytest

from ccwire._app.events import RunEvent, RunTracker
from ccwire._app.render import PlainRenderer, RichRenderer, short_json


def lines(events: list[RunEvent], *, verbose: bool) -> list[str]:
    out = io.StringIO()
    renderer = PlainRenderer(out, verbose=verbose)
    with renderer:
        for event in events:
            renderer.handle(event)
    return out.getvalue().splitlines()


INIT = RunEvent("init", {"session_id": "0123456789", "model": "m", "tools": [], "mcp_servers": []})
EVENTS = [
    RunEvent("start", {"prompt": "go", "offline": False}),
    RunEvent("state", {"state": "running"}),
    INIT,
    RunEvent("thinking", {"text": "let me\n  think " + "x" * 300}),
    RunEvent("tool_call", {"id": "t1", "name": "Read", "input": {"path": "a"}}),
    RunEvent("permission", {"name": "Read", "decision": "allow", "reason": "allowed"}),
    RunEvent("tool_running", {"id": "t1", "name": "Read"}),
    RunEvent("tool_result", {"id": "t1", "name": None, "is_error": False, "text": "ok"}),
    INIT,  # a second init (the CLI re-initialised): only verbose shows it
    RunEvent(
        "retry",
        {
            "attempt": None,
            "max_retries": 0,
            "delay_ms": None,
            "status": None,
            "error": "ECONNRESET",
        },
    ),
    RunEvent("compacted", {}),  # a kind no display shows
    RunEvent(
        "result",
        {
            "subtype": "error_max_turns",
            "is_error": True,
            "num_turns": 2,
            "total_cost_usd": None,
            "duration_ms": 2500,
            "errors": ["too many\nturns", "and more"],
        },
    ),
    RunEvent("interrupted", {}),
]


def test_the_lines_of_a_run() -> None:
    thinking = "  (thinking) " + ("let me think " + "x" * 300)[:197] + "..."  # one line, cut
    assert lines(EVENTS, verbose=False) == [
        "> go",
        "  [session 01234567 - model m - 0 tools]",
        thinking,
        '  tool call    Read {"path": "a"}',
        "  tool result  t1: ok",
        "  api retry    no response (ECONNRESET) - retry ?",
        "error result (error_max_turns) - 2 turns - $- - 2.5 s",
        "  too many turns",
        "  and more",
        "interrupted",
    ]


def test_verbose_adds_states_runs_allowed_tools_and_every_init() -> None:
    shown = lines(EVENTS, verbose=True)
    assert "  [state] running" in shown
    assert "  permission   allowed Read (allowed)" in shown
    assert "  running      Read" in shown
    assert shown.count("  [session 01234567 - model m - 0 tools]") == 2
    assert len(shown) == len(lines(EVENTS, verbose=False)) + 4


def test_no_terminal_control_sequence_from_the_model_or_a_tool_is_written() -> None:
    hostile = "a\x1b]0;title\x07b\x1b[2Jc\rd\x9b31m"
    events = [
        RunEvent("text", {"text": f"line one\n\t{hostile}"}),
        RunEvent("tool_call", {"id": "t1", "name": f"Read{hostile}", "input": {"p": hostile}}),
        RunEvent("tool_result", {"id": "t1", "name": "Read", "is_error": False, "text": hostile}),
    ]
    text = "\n".join(lines(events, verbose=False))
    for control in ("\x1b", "\x07", "\r", "\x9b"):
        assert control not in text
    assert "line one\n\ta\\x1b]0;title\\x07b\\x1b[2Jc\\x0dd\\x9b31m" in text  # visible


def test_an_error_result_that_says_success_is_still_an_error() -> None:
    result = RunEvent("result", {"subtype": "success", "is_error": True, "num_turns": 1,
                                 "duration_ms": 10})  # fmt: skip
    start = RunEvent("start", {"prompt": "p", "offline": True})
    assert lines([start, result], verbose=False)[-1] == "error result - 1 turn - 10 ms"


def test_short_json_of_what_json_cannot_encode() -> None:
    loop: list[Any] = [1]
    loop.append(loop)
    assert short_json(loop) == "[1, [...]]"  # its repr
    assert short_json({"k": "v" * 200}, limit=20) == '{"k": "vvvvvvvvvv...'


# ---------------------------------------------------------------------- the live status


@pytest.fixture
def terminal() -> tuple[Any, io.StringIO]:
    from rich.console import Console

    out = io.StringIO()
    return Console(file=out, width=100, force_terminal=True, color_system=None), out


def test_the_status_is_drawn_then_erased(terminal: tuple[Any, io.StringIO]) -> None:
    console, out = terminal
    tracker = RunTracker(lambda e: None)
    renderer = RichRenderer(out, tracker, console=console)
    with renderer:
        renderer.handle(RunEvent("start", {"prompt": "hi", "offline": True}))
    drawn = out.getvalue()
    assert "> hi" in drawn
    assert "connecting - turn 0 - tools 0 done - " in drawn  # the status was shown
    assert drawn.endswith("\r\x1b[1A\x1b[2K")  # and erased at the end (it is transient)


def test_the_status_steps_aside_for_a_question(terminal: tuple[Any, io.StringIO]) -> None:
    console, out = terminal
    renderer = RichRenderer(out, RunTracker(lambda e: None), console=console)
    with renderer.suspended():  # not started: nothing to hide
        console.file.write("before\n")
    with renderer:
        with renderer.suspended():
            mark = len(out.getvalue())
            console.file.write("Allow Bash? [y/N] ")
            asked = out.getvalue()[mark:]
        after = out.getvalue()[mark:]
    assert asked == "Allow Bash? [y/N] "  # nothing drawn while the user types
    # afterwards the status comes back below the question, which is not erased
    assert after.startswith("Allow Bash? [y/N] ")
    redrawn = after[len(asked) :]
    assert "connecting - turn 0" in redrawn
    assert "\x1b[2K" not in redrawn.split("connecting")[0]  # no line erased before it
