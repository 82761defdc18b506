"""`ccwire sessions` and `ccwire show`: browse past sessions from the CLI's transcripts.

`ccwire sessions` lists them (id, title, when, turns, cost, tag) as a table or JSON;
`--offline` lists the sessions of offline runs instead (kept in their own folder, see
`offline`). `ccwire show SESSION_ID` prints one conversation with tool calls folded to
one line each (`--full` unfolds them), in colour with `rich` when it is installed and
writing to a terminal; `--html FILE` writes it as one self-contained page instead.
`SESSION_ID` is the whole id or its start (the 8 characters `ccwire run` shows), looked
up among your sessions, then among the offline ones. Offline sessions show no dollar
cost: the scripted model's usage costs nothing.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from .._sessions.transcripts.chain import parse_transcript, session_messages
from .._sessions.transcripts.listing import list_sessions
from .._sessions.transcripts.paths import candidate_project_dirs, projects_dir, valid_uuid
from .._sessions.transcripts.reading import find_session_file
from .._sessions.transcripts.types import SDKSessionInfo
from .errors import SessionsCommandError
from .html import page_bytes, render_html
from .io import json_for
from .offline import offline_dir, reading_config_dir
from .render import printable, rich_available, short_json
from .transcript_view import (
    SessionView,
    TextItem,
    ToolCall,
    Turn,
    build_turns,
    cost_from_text,
    format_when,
    load_session_view,
    turn_count,
)

__all__ = [
    "SessionsCommandError",
    "format_when",
    "render_text",
    "sessions_command",
    "show_command",
    "turn_count",
]


def _row(info: SDKSessionInfo, *, offline: bool = False) -> dict[str, Any]:
    """The listing fields plus turns and cost (one full read of the transcript; no
    cost for an offline session)."""
    row: dict[str, Any] = {
        "session_id": info.session_id,
        "title": info.summary,
        "first_prompt": info.first_prompt,
        "last_modified": info.last_modified,
        "created_at": info.created_at,
        "cwd": info.cwd,
        "git_branch": info.git_branch,
        "tag": info.tag,
        "turns": None,
        "cost_usd": None,
    }
    found = find_session_file(info.session_id, info.cwd) or find_session_file(info.session_id, None)
    if found is None:
        return row
    try:
        text = found[0].read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return row
    turns = build_turns(session_messages(parse_transcript(text).entries))
    row["turns"] = sum(1 for t in turns if t.prompt)
    cost = cost_from_text(text)
    row["cost_usd"] = cost.usd if cost and not offline else None
    return row


def _cut(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "\u2026"


def _table(rows: list[dict[str, Any]], out: IO[str]) -> None:
    header = f"{'SESSION':36}  {'WHEN':16}  {'TURNS':>5}  {'COST':>8}  {'TAG':10}  TITLE"
    out.write(header + "\n")
    for r in rows:
        cost = f"${r['cost_usd']:.4f}" if r["cost_usd"] is not None else "-"
        turns = str(r["turns"]) if r["turns"] is not None else "-"
        out.write(
            f"{r['session_id']:36}  {format_when(r['last_modified']):16}  {turns:>5}  "
            f"{cost:>8}  {_cut(r['tag'] or '', 10):10}  {_cut(r['title'], 60)}\n"
        )


def _quiet_transcript_log() -> None:
    # The command reports unreadable lines itself; keep the library's warnings off stderr.
    logging.getLogger("ccwire.transcripts").setLevel(logging.ERROR)


def sessions_command(
    args: argparse.Namespace, out: IO[str], environ: Mapping[str, str] | None = None
) -> int:
    """Run `ccwire sessions`.

    Args:
        args: The parsed options.
        out: Where to print.
        environ: The environment (where the offline sessions are); default `os.environ`.

    Returns:
        The exit code (0).
    """
    _quiet_transcript_log()
    offline = bool(getattr(args, "offline", False))
    folder = offline_dir(os.environ if environ is None else environ) if offline else None
    with reading_config_dir(folder):
        if args.all:
            infos = list_sessions(limit=args.limit or None)
        else:
            # The directory need not exist any more: its transcripts outlive it.
            infos = list_sessions(args.project or os.getcwd(), limit=args.limit or None)
        rows = [_row(info, offline=offline) for info in infos]
        where_kept = projects_dir()
    if args.json:
        out.write(json_for(out, rows, indent=2) + "\n")
    elif not rows:
        where = "any project" if args.all else (args.project or "this directory")
        kind = "offline sessions" if offline else "sessions"
        out.write(f"No {kind} for {where} under {where_kept}.\n")
        if not args.all:
            out.write(
                f"(`ccwire sessions{' --offline' if offline else ''} --all` lists every project.)\n"
            )
    else:
        _table(rows, out)
    return 0


def _fold(text: str, full: bool, width: int = 100) -> str:
    if full:
        return text
    return _cut(text, width)


def _turn_lines(turns: list[Turn], full: bool, indent: str = "") -> list[tuple[str, str]]:
    """(line, rich style) pairs for a conversation."""
    lines: list[tuple[str, str]] = []
    for number, turn in enumerate(turns, 1):
        if turn.prompt:
            lines.append((f"{indent}[{number}] > {_fold(turn.prompt, full, 200)}", "bold cyan"))
        for item in turn.items:
            if isinstance(item, TextItem):
                style = "dim italic" if item.kind == "thinking" else ""
                label = "(thinking) " if item.kind == "thinking" else ""
                for line in f"{label}{item.text}".splitlines() or [""]:
                    lines.append((f"{indent}    {line}", style))
                continue
            lines.extend(_call_lines(item, full, indent))
    return lines


def _call_lines(call: ToolCall, full: bool, indent: str) -> list[tuple[str, str]]:
    given = (
        json.dumps(call.input, ensure_ascii=False, indent=2) if full else short_json(call.input, 90)
    )
    lines = [(f"{indent}    \u2699 {call.name} {given}", "yellow")]
    if call.subagent:
        lines += _turn_lines(call.subagent, full, indent + "      \u2502 ")
    if call.result is None:
        lines.append((f"{indent}      \u21b3 (no result recorded)", "dim"))
    else:
        label = "error" if call.is_error else "\u21b3"
        result = call.result if full else _fold(call.result, False)
        style = "red" if call.is_error else "green"
        for line in result.splitlines() or [""]:
            lines.append((f"{indent}      {label} {line}", style))
            label = " "
    return lines


def _header(view: SessionView) -> list[tuple[str, str]]:
    info = view.info
    facts = [turn_count(view.turns)]
    if view.cost is not None:
        tokens = f"{view.cost.input_tokens} in / {view.cost.output_tokens} out tokens"
        if view.cost.models:  # none when no model ran ("Not logged in")
            tokens += f"; {', '.join(view.cost.models)}"
        if view.cost.usd is None:  # an offline session: nothing was billed
            facts.append(f"offline ({tokens})")
        else:
            facts.append(f"${view.cost.usd:.4f} ({tokens})")
    if info is not None:
        facts.insert(0, f"started {format_when(info.created_at)}")
        if info.tag:
            facts.append(f"tag: {info.tag}")
    lines = [(f"Session {view.session_id}: {view.title}", "bold")]
    if info is not None and info.cwd:
        lines.append(
            (f"  project {info.cwd}" + (f" ({info.git_branch})" if info.git_branch else ""), "dim")
        )
    lines.append(("  " + " \u00b7 ".join(facts), "dim"))
    if view.skipped_lines:
        lines.append((f"  ({view.skipped_lines} unreadable transcript line(s) skipped)", "red"))
    return lines


def render_text(view: SessionView, *, full: bool = False) -> list[tuple[str, str]]:
    """The whole session as lines of text, each with a rich style name.

    Args:
        view: The session.
        full: Unfold tool inputs and results instead of one line each.

    Returns:
        `(line, style)` pairs; the style is `""` for plain text.
    """
    return [*_header(view), ("", ""), *_turn_lines(view.turns, full)]


def _write(lines: list[tuple[str, str]], out: IO[str], use_rich: bool) -> None:
    if use_rich:
        from rich.console import Console
        from rich.text import Text

        console = Console(file=out, highlight=False, soft_wrap=True)
        for line, style in lines:
            console.print(Text(printable(line), style=style or ""))
        return
    out.write("".join(f"{printable(line)}\n" for line, _ in lines))


_ID_START = re.compile(r"[0-9a-f][0-9a-f-]{3,35}")


def _matching_ids(start: str, project: str | None) -> list[str]:
    """The ids of the sessions (in the config directory read now) that start with
    `start`: itself when it is a whole id, none when it is not the start of one."""
    if valid_uuid(start):
        return [start]
    start = start.lower()
    if not _ID_START.fullmatch(start):
        return []
    found: set[str] = set()
    for project_dir, _ in candidate_project_dirs(project):
        try:
            names = [p.stem for p in project_dir.glob(f"{start}*.jsonl")]
        except OSError:
            continue
        found.update(name for name in names if valid_uuid(name))
    return sorted(found)


def _find_view(
    session_id: str, project: str | None, environ: Mapping[str, str], *, offline: bool
) -> tuple[SessionView | None, list[str]]:
    """The session among yours, else (or, with `offline`, only) among the offline ones
    (shown without dollars); with the ids that matched when more than one did."""
    folders = (offline_dir(environ),) if offline else (None, offline_dir(environ))
    for folder in folders:
        with reading_config_dir(folder):
            ids = _matching_ids(session_id, project)
            if len(ids) > 1:
                return None, ids
            view = load_session_view(ids[0], project) if ids else None
        if view is not None:
            if folder is not None and view.cost is not None:
                view = dataclasses.replace(view, cost=dataclasses.replace(view.cost, usd=None))
            return view, ids
    return None, []


def show_command(
    args: argparse.Namespace, out: IO[str], environ: Mapping[str, str] | None = None
) -> int:
    """Run `ccwire show`.

    Args:
        args: The parsed options.
        out: Where to print.
        environ: The environment (where the offline sessions are); default `os.environ`.

    Returns:
        The exit code (0).

    Raises:
        SessionsCommandError: No such session, more than one starting so, or the HTML
            file cannot be written.
    """
    _quiet_transcript_log()
    offline = bool(getattr(args, "offline", False))
    environ = os.environ if environ is None else environ
    view, ids = _find_view(args.session_id, args.project, environ, offline=offline)
    if view is None and len(ids) > 1:
        shown = ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
        raise SessionsCommandError(
            f"{len(ids)} sessions start with {args.session_id}: {shown}",
            "give more of the id",
        )
    if view is None:
        where = f"project {args.project}" if args.project else str(projects_dir())
        found_in = (
            f"among the offline sessions ({offline_dir(environ)})"
            if offline
            else f"in {where}, nor among the offline sessions"
        )
        raise SessionsCommandError(
            f"no session {args.session_id} {found_in}",
            "`ccwire sessions --all` lists the sessions there are "
            "(`ccwire sessions --offline --all` the offline ones)",
        )
    if args.html:
        try:
            Path(args.html).write_bytes(page_bytes(render_html(view)))
        except OSError as exc:
            raise SessionsCommandError(
                f"cannot write {args.html}: {exc.strerror or exc}", "choose a writable path"
            ) from exc
        out.write(f"wrote {args.html}\n")
        return 0
    isatty = getattr(out, "isatty", None)
    use_rich = not args.plain and rich_available() and bool(isatty and isatty())
    _write(render_text(view, full=args.full), out, use_rich)
    return 0
