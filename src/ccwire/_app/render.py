"""How ``ccwire run`` shows a conversation: NDJSON, plain lines, or rich with a live status.

Every renderer takes the `RunEvent` stream through
`Renderer.handle()`. `RichRenderer` also draws a live status line (session
state, turn, tools in flight with spinners and durations, cost) from the
`RunTracker`; ``rich`` is imported only when it is used.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator, Mapping
from typing import IO, Any

from .events import RunEvent, RunTracker
from .io import json_for

__all__ = [
    "JsonRenderer",
    "PlainRenderer",
    "Renderer",
    "RichRenderer",
    "format_duration",
    "printable",
    "retry_text",
    "rich_available",
    "short_json",
]


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` safe for a terminal: each control character but newline and tab is
    shown as ``\\xNN`` (a model's or a tool's text, a transcript, may hold escape
    sequences that retitle the terminal, set its clipboard or erase the screen)."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def short_json(value: Any, limit: int = 120) -> str:
    """Compact JSON of ``value``, cut to ``limit`` characters."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return _cut(text, limit)


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def format_duration(seconds: float | None) -> str:
    """``850 ms``, ``1.2 s`` or ``2 min 5 s``."""
    if seconds is None:
        return "?"
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    return f"{int(seconds // 60)} min {seconds % 60:.0f} s"


def _cost(value: Any) -> str:
    return f"${value:.4f}" if isinstance(value, (int, float)) else "$-"


def rich_available() -> bool:
    """True if the optional ``rich`` package can be imported."""
    try:
        import rich  # noqa: F401
    except ImportError:
        return False
    return True


class Renderer:
    """Base renderer: ignores everything. Use as a context manager around the run."""

    def handle(self, event: RunEvent) -> None:
        """Show one event."""

    def __enter__(self) -> Renderer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        return None

    @contextlib.contextmanager
    def suspended(self) -> Iterator[None]:
        """Stop drawing while the user answers a question at the terminal."""
        yield


class JsonRenderer(Renderer):
    """One JSON object per line (``ccwire run --json``), flushed as it goes."""

    def __init__(self, out: IO[str]) -> None:
        self._out = out

    def handle(self, event: RunEvent) -> None:
        """Write the event as one NDJSON line."""
        self._out.write(json_for(self._out, event.to_json(), default=str) + "\n")
        self._out.flush()


def retry_text(attempt: Any, max_retries: Any, delay_ms: Any, status: Any, error: Any) -> str:
    """``529 overloaded - retry 2 of 10 in 1.2 s`` (or ``no response - ...`` when the
    connection failed): one retry notice of the CLI, as shown."""
    if status:
        why = f"{status} {error}"
    else:  # the connection failed (no network, a proxy, a wrong ANTHROPIC_BASE_URL)
        why = "no response" if error in (None, "", "unknown") else f"no response ({error})"
    which = f"retry {attempt if attempt is not None else '?'}"
    if max_retries:
        which += f" of {max_retries}"
    if isinstance(delay_ms, (int, float)):
        which += f" in {format_duration(delay_ms / 1000)}"
    return f"{why} - {which}"


def describe(
    event: RunEvent, *, verbose: bool, first_init: bool, offline: bool = False
) -> tuple[str, str] | None:
    """The line (and a rich style name) for ``event``, or None to show nothing; the
    line is `printable`.

    Offline runs show no dollar costs: the scripted model's usage costs nothing.
    """
    found = _describe(event, verbose=verbose, first_init=first_init, offline=offline)
    return None if found is None else (printable(found[0]), found[1])


def _describe(
    event: RunEvent, *, verbose: bool, first_init: bool, offline: bool
) -> tuple[str, str] | None:
    d = event.data
    kind = event.kind
    if kind == "start":
        line = f"> {d.get('prompt', '')}"
        if d.get("offline"):
            line += "\n  [offline: scripted model; set ANTHROPIC_API_KEY for the real one]"
        return line, "bold cyan"
    if kind == "state":
        return (f"  [state] {d.get('state')}", "dim") if verbose else None
    if kind == "init":
        if not (verbose or first_init):
            return None
        servers = ", ".join(f"{s.get('name')} ({s.get('status')})" for s in d["mcp_servers"])
        return (
            f"  [session {str(d.get('session_id'))[:8]} - model {d.get('model')} - "
            f"{len(d.get('tools') or [])} tools{' - servers: ' + servers if servers else ''}]",
            "dim",
        )
    if kind == "retry":
        notice = retry_text(
            d.get("attempt"),
            d.get("max_retries"),
            d.get("delay_ms"),
            d.get("status"),
            d.get("error"),
        )
        return f"  api retry    {notice}", "yellow"
    if kind == "text":
        return str(d.get("text", "")), ""
    if kind == "thinking":
        return f"  (thinking) {_cut(str(d.get('text', '')), 200)}", "dim italic"
    if kind == "tool_call":
        return f"  tool call    {d.get('name')} {short_json(d.get('input'))}", "yellow"
    if kind == "tool_running":
        return (f"  running      {d.get('name')}", "dim") if verbose else None
    if kind == "permission":
        if d.get("reason") == "allowed" and not verbose:
            return None
        verdict = "allowed" if d.get("decision") == "allow" else "denied"
        style = "green" if verdict == "allowed" else "red"
        return f"  permission   {verdict} {d.get('name')} ({d.get('reason')})", style
    if kind == "tool_result":
        label = "tool error " if d.get("is_error") else "tool result"
        ms = d.get("duration_ms")
        took = f" ({format_duration(ms / 1000)})" if isinstance(ms, int) else ""
        text = _cut(str(d.get("text", "")), 160)
        return f"  {label}  {d.get('name') or d.get('id')}{took}: {text}", (
            "red" if d.get("is_error") else "green"
        )
    if kind == "result":
        return _result_line(d, offline)
    if kind == "interrupted":
        return "interrupted", "bold red"
    return None


def _result_line(d: Mapping[str, Any], offline: bool) -> tuple[str, str]:
    subtype = d.get("subtype")
    if d.get("is_error"):
        head = "error result" if subtype == "success" else f"error result ({subtype})"
    else:
        head = f"done: {subtype}"
    took = format_duration((d.get("duration_ms") or 0) / 1000)
    turns = _plural(d.get("num_turns"), "turn")
    cost = "" if offline else f" - {_cost(d.get('total_cost_usd'))}"
    line = f"{head} - {turns}{cost} - {took}"
    if d.get("structured_output") is not None:
        line = f"structured output: {short_json(d['structured_output'], 400)}\n{line}"
    for problem in d.get("errors") or ():
        line += f"\n  {_cut(str(problem), 300)}"
    return line, "bold red" if d.get("is_error") else "bold green"


class _Lines:
    """`describe()` for the events of one run, in order: it tells the first ``init``
    and whether the run is offline (from its ``start``)."""

    def __init__(self, *, verbose: bool) -> None:
        self.verbose = verbose
        self.offline = False
        self._seen_init = False

    def describe(self, event: RunEvent) -> tuple[str, str] | None:
        """The event's line and style, or None (see `describe()`)."""
        first_init = event.kind == "init" and not self._seen_init
        self._seen_init = self._seen_init or event.kind == "init"
        if event.kind == "start":
            self.offline = bool(event.data.get("offline"))
        return describe(event, verbose=self.verbose, first_init=first_init, offline=self.offline)


class PlainRenderer(Renderer):
    """Plain text lines: no colours, no status line (pipes, dumb terminals, no rich)."""

    def __init__(self, out: IO[str], *, verbose: bool = False) -> None:
        self._out = out
        self._lines = _Lines(verbose=verbose)

    def handle(self, event: RunEvent) -> None:
        """Write the event's line, if it has one."""
        found = self._lines.describe(event)
        if found is not None:
            self._out.write(found[0] + "\n")
            self._out.flush()


class RichRenderer(Renderer):
    """Coloured lines plus a live status line under them (needs ``rich``)."""

    def __init__(
        self, out: IO[str], tracker: RunTracker, *, verbose: bool = False, console: Any = None
    ) -> None:
        from rich.console import Console

        self._console = console if console is not None else Console(file=out, highlight=False)
        self._tracker = tracker
        self._lines = _Lines(verbose=verbose)
        self._live: Any = None
        self._spinners: dict[str, Any] = {}
        self._row_lengths: list[int] = []  # the status rows last rendered, in cells
        self._drawn_rows: list[int] = []  # those on screen now, in cells
        self._drawn_width = 0  # the terminal's width when they were drawn

    # -------------------------------------------------------------- lifecycle

    def __enter__(self) -> RichRenderer:
        from rich.live import Live

        self._live = Live(
            console=self._console,
            transient=True,
            refresh_per_second=12,
            get_renderable=self._status,
            redirect_stdout=False,
            redirect_stderr=False,
        )
        live_render = self._live._live_render
        position_cursor = live_render.position_cursor

        def reposition() -> Any:
            self._count_reflowed_rows(live_render)
            return position_cursor()

        live_render.position_cursor = reposition
        self._live.start()
        return self

    def _count_reflowed_rows(self, live_render: Any) -> None:
        """After the terminal got narrower, count the rows the status now takes.

        Terminals (tmux, VTE, iTerm2, Windows Terminal, ...) re-wrap the rows already
        on screen when they shrink: a status row drawn at the old width may now take
        two rows, and erasing only as many rows as were drawn would leave the rest
        behind. The rows are never wider than the terminal they were drawn on.

        Called right before the status is drawn again: by then the status was already
        rendered anew (at the new width), so the rows on screen are those remembered
        from the last draw.
        """
        width = self._console.width
        shape = live_render._shape
        if shape is not None and self._drawn_width and width < self._drawn_width:
            drawn = [min(n, self._drawn_width - 1) for n in self._drawn_rows]
            rows = sum(max(1, -(-n // width)) for n in drawn)
            if rows > shape[1]:
                live_render._shape = (shape[0], rows)
        self._drawn_width = width
        self._drawn_rows = list(self._row_lengths)  # what is drawn next, right after this

    def __exit__(self, *exc_info: object) -> None:
        live, self._live = self._live, None
        if live is not None:
            live.stop()

    @contextlib.contextmanager
    def suspended(self) -> Iterator[None]:
        """Hide the status line while the user types an answer."""
        live = self._live
        if live is None:
            yield
            return
        live.stop()  # erases the status rows; what is written next stays on screen
        live._live_render._shape = None  # so the restart erases none of it
        try:
            yield
        finally:
            live.start(refresh=True)

    # ----------------------------------------------------------------- output

    def handle(self, event: RunEvent) -> None:
        """Print the event's line above the status line."""
        from rich.text import Text

        found = self._lines.describe(event)
        if found is None:
            return
        line, style = found
        live = self._live
        # Live's refresh thread redraws the status under this lock; printing outside it
        # lets both erase-and-redraw at once, leaving a copy of the status behind.
        with live._lock if live is not None else contextlib.nullcontext():
            self._console.print(Text(line, style=style or ""), soft_wrap=True)

    def _spinner(self, key: str) -> Any:
        from rich.spinner import Spinner

        spinner = self._spinners.get(key)
        if spinner is None:
            spinner = self._spinners[key] = Spinner("dots", style="cyan")
        return spinner

    def _status(self) -> Any:
        """The status rows, each cut to one terminal row (minus a column, so that no
        terminal wraps them: a wrapped row would be miscounted when it is erased)."""
        from rich.console import Group
        from rich.text import Text

        t = self._tracker
        room = max(self._console.width - 3, 10)  # the spinner and its space take 2
        rows: list[Any] = []
        state = t.state
        retry = t.retry
        if retry is not None:
            notice = retry_text(
                retry.attempt, retry.max_retries, retry.delay_ms, retry.status, retry.error
            )
            state = f"{state}, model unreachable: {notice}"
        cost = "" if self._lines.offline else f" - {_cost(t.cost_usd)}"
        texts = [
            (
                "",
                f"{state} - turn {t.turns} - tools {t.tools_done} done - "
                f"{format_duration(t.elapsed)}{cost}",
                "yellow" if retry is not None else "dim",
            )
        ]
        texts += [
            (
                status.id,
                f"{status.name} - {status.phase.value} {format_duration(t.tool_seconds(status))}",
                "yellow",
            )
            for status in t.active_tools()
        ]
        self._row_lengths = []
        for key, line, style in texts:
            spinner = self._spinner(key)
            shown = _cut(line, room)
            spinner.update(text=Text(shown, style=style, no_wrap=True))
            rows.append(spinner)
            self._row_lengths.append(len(shown) + 2)
        return Group(*rows)


def _plural(count: Any, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
