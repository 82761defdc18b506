"""`ccwire sessions` and `ccwire show` on the captured real-CLI transcripts."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from ccwire import rename_session, tag_session
from ccwire._app.main import CliIO, ExitCode, main

from .conftest import Captured


class TTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def run(
    *argv: str, tty: bool = False, environ: dict[str, str] | None = None
) -> tuple[int, str, str]:
    out = TTY() if tty else io.StringIO()
    err = io.StringIO()
    code = main(list(argv), io=CliIO(io.StringIO(), out, err, environ=environ or {}))
    return code, out.getvalue(), err.getvalue()


def test_sessions_table_lists_turns_cost_and_tags(captured: Captured) -> None:
    tag_session(captured.multi_turn, "keep")
    code, out, err = run("sessions", "--all")
    assert (code, err) == (0, "")
    header, *rows = out.splitlines()
    assert header.split() == ["SESSION", "WHEN", "TURNS", "COST", "TAG", "TITLE"]
    by_id = {row.split()[0]: row for row in rows}
    assert set(by_id) == {captured.multi_turn, captured.subagent, captured.forked}
    multi = by_id[captured.multi_turn].split()
    assert multi[3:7] == ["3", "$0.0030", "keep", "Where"]
    assert by_id[captured.forked].split()[3:5] == ["4", "$0.0036"]


def test_sessions_json_and_project_filter(captured: Captured, tmp_path: Path) -> None:
    rename_session(captured.subagent, "Helper run")
    code, out, _ = run("sessions", "--project", str(tmp_path), "--json")
    assert (code, json.loads(out)) == (0, [])  # the parent directory is another project
    code, out, _ = run("sessions", "--all", "--json", "--limit", "2")
    rows = json.loads(out)
    assert code == 0 and len(rows) == 2
    first = rows[0]
    assert first["session_id"] == captured.subagent and first["title"] == "Helper run"
    assert (first["turns"], first["tag"]) == (1, None)
    assert first["cost_usd"] == pytest.approx(0.0018)
    code, out, _ = run("sessions", "--project", str(tmp_path))
    assert code == 0 and out.startswith(f"No sessions for {tmp_path} under ")


def test_sessions_of_a_project_that_is_gone(captured: Captured) -> None:
    code, out, err = run("sessions", "--project", captured.cwd)  # not on this disk
    assert (code, err) == (0, "") and len(out.splitlines()) == 4


def test_sessions_usage_error(captured: Captured, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = run("sessions", "--all", "--project", "x")
    assert code == ExitCode.USAGE
    assert "argument --project: not allowed with argument --all" in capsys.readouterr().err
    code, out, _ = run("sessions", "--all", "--limit", "-1")  # not "all" in disguise
    assert (code, out) == (ExitCode.USAGE, "")
    assert "--limit: expected a count of sessions (0 for all): '-1'" in capsys.readouterr().err


def test_show_folds_tool_calls(captured: Captured) -> None:
    code, out, err = run("show", captured.multi_turn)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == f"Session {captured.multi_turn}: Where were we?"
    assert "3 turns" in lines[2] and "$0.0030 (500 in / 100 out tokens" in lines[2]
    body = "\n".join(lines[3:])
    assert "[1] > Run echo alpha, then echo one and two in parallel" in body
    assert '    \u2699 Bash {"command": "echo one", "description": "Print one"}' in lines
    assert "      \u21b3 one" in lines
    assert body.index("\u21b3 two") < body.index("Both commands ran")
    code, full, _ = run("show", captured.multi_turn, "--full")
    assert '  "command": "echo alpha",' in full  # unfolded JSON input


def test_show_subagent_and_rich(captured: Captured) -> None:
    code, out, _ = run("show", captured.subagent, "--project", captured.cwd, tty=True)
    assert code == 0
    assert "\x1b[" in out  # rich colours on a terminal
    assert "\u2502 [1] > Say done." in out and "The helper says: done." in out
    code, plain, _ = run("show", captured.subagent, "--plain")
    assert "\x1b[" not in plain


def test_show_unknown_session_is_one_line(captured: Captured, tmp_path: Path) -> None:
    code, out, err = run("show", "00000000-0000-0000-0000-000000000000")
    assert code == ExitCode.ERROR and out == ""
    first, hint = err.splitlines()
    assert first.startswith("ccwire: error: no session 00000000-0000-0000-0000-000000000000 in ")
    assert hint == (
        "ccwire: hint: `ccwire sessions --all` lists the sessions there are "
        "(`ccwire sessions --offline --all` the offline ones)"
    )
    code, _, err = run("show", captured.multi_turn, "--html", str(tmp_path / "no" / "x.html"))
    assert code == ExitCode.ERROR and "Traceback" not in err
    assert err.startswith(f"ccwire: error: cannot write {tmp_path / 'no' / 'x.html'}: ")


def test_show_html_is_self_contained(captured: Captured, tmp_path: Path) -> None:
    target = tmp_path / "page.html"
    code, out, _ = run("show", captured.multi_turn, "--html", str(target))
    assert (code, out) == (0, f"wrote {target}\n")
    page = target.read_text()
    assert page.startswith("<!DOCTYPE html>") and page.count('<details class="tool"') == 3
    for remote in ("http://", "https://", "<link", "src="):
        assert remote not in page


@pytest.mark.parametrize("text", ["<script>alert(1)</script>", "a & b"])
def test_show_html_escapes_transcript_text(captured: Captured, tmp_path: Path, text: str) -> None:
    rename_session(captured.multi_turn, text)
    target = tmp_path / "page.html"
    assert run("show", captured.multi_turn, "--html", str(target))[0] == 0
    page = target.read_text()
    assert (
        text not in page
        and f"<title>{text.replace('&', '&amp;').replace('<', '&lt;').replace('>', '&gt;')}</title>"
        in page
    )


def test_show_prints_no_terminal_control_sequence_from_the_transcript(captured: Captured) -> None:
    # a title or text can come from anywhere (a web page, a file): OSC 52 sets the clipboard
    rename_session(captured.multi_turn, "a\x1b]52;c;cHduZWQ=\x07b\x1b[2Jc\rd")
    for tty in (False, True):
        code, out, _ = run("show", captured.multi_turn, tty=tty)
        assert code == 0
        assert "\x1b]" not in out and "\x07" not in out and "\x1b[2J" not in out
        assert "\r" not in out
        assert "a\\x1b]52;c;cHduZWQ=\\x07b\\x1b[2Jc\\x0dd" in out  # shown, harmless


def test_show_takes_the_short_id_that_run_prints(captured: Captured) -> None:
    """`ccwire run` shows `[session 1a2b3c4d - ...]`: those 8 characters are enough."""
    code, whole, _ = run("show", captured.multi_turn)
    assert run("show", captured.multi_turn[:8]) == (0, whole, "")
    assert run("show", captured.multi_turn[:8].upper()) == (0, whole, "")
    twin = captured.multi_turn[:8] + "-0000-4000-8000-000000000000"
    source = captured.project_dir / f"{captured.multi_turn}.jsonl"
    (captured.project_dir / f"{twin}.jsonl").write_bytes(source.read_bytes())
    code, out, err = run("show", captured.multi_turn[:8])
    assert (code, out) == (ExitCode.ERROR, "")
    assert err.splitlines() == [
        f"ccwire: error: 2 sessions start with {captured.multi_turn[:8]}: "
        f"{', '.join(sorted([captured.multi_turn, twin]))}",
        "ccwire: hint: give more of the id",
    ]
    assert run("show", captured.multi_turn[:13]) == (0, whole, "")
    for wrong in ("abc", "not-an-id", captured.multi_turn[:8] + "zz"):
        code, _, err = run("show", wrong)
        assert code == ExitCode.ERROR and err.startswith(f"ccwire: error: no session {wrong} in ")


def test_offline_sessions_are_listed_and_shown_without_dollars(
    captured: Captured, tmp_path: Path
) -> None:
    """Offline runs keep their sessions in their own folder ($CCWIRE_OFFLINE_DIR, by
    default ~/.ccwire/offline): `sessions --offline` lists them, `show` finds them."""
    offline = tmp_path / "offline"
    (offline / "projects").mkdir(parents=True)
    captured.project_dir.rename(offline / "projects" / captured.project_dir.name)
    env = {"CCWIRE_OFFLINE_DIR": str(offline)}
    code, out, _ = run("sessions", "--all", environ=env)
    assert code == 0 and out.startswith("No sessions for any project under ")
    code, out, err = run("sessions", "--offline", "--all", environ=env)
    assert (code, err) == (0, "")
    _, *rows = out.splitlines()
    by_id = {row.split()[0]: row.split() for row in rows}
    assert set(by_id) == {captured.multi_turn, captured.subagent, captured.forked}
    assert by_id[captured.multi_turn][3:5] == ["3", "-"]  # turns, and no dollar cost
    code, out_show, err = run("show", captured.multi_turn[:8], environ=env)
    assert (code, err) == (0, "")
    facts = out_show.splitlines()[2]
    assert "3 turns" in facts and "offline (500 in / 100 out tokens" in facts and "$" not in facts
    target = tmp_path / "page.html"
    assert run("show", captured.multi_turn, "--html", str(target), environ=env)[0] == 0
    assert "$" not in target.read_text().split('class="cost">', 1)[1].split("</span>")[0]
    code, out, _ = run("sessions", "--offline", "--project", str(tmp_path), environ=env)
    assert out.startswith(f"No offline sessions for {tmp_path} under {offline / 'projects'}.")
    # `show --offline`, as `sessions --offline`: only among the offline sessions
    assert run("show", captured.multi_turn[:8], "--offline", environ=env)[:2] == (0, out_show)
    code, _, err = run("show", captured.multi_turn[:8], "--offline")
    assert code == ExitCode.ERROR
    assert f"no session {captured.multi_turn[:8]} among the offline sessions (" in err


def test_a_session_without_a_model_shows_no_empty_model_list() -> None:
    """A session whose only answer was the CLI's own ("Not logged in": no model ran)
    showed "$0.0000 (0 in / 0 out tokens; )" and, as a page, "(0 in / 0 out tokens ())"."""
    from ccwire._app.html import render_html
    from ccwire._app.sessions import render_text
    from ccwire._app.transcript_view import Cost, SessionView

    def view(*models: str) -> SessionView:
        return SessionView("s-1", None, [], Cost(0.0, 0, 0, models), 0)

    assert "$0.0000 (0 in / 0 out tokens)" in render_text(view())[1][0]
    assert "0 out tokens</span>" in render_html(view())
    assert "$0.0000 (0 in / 0 out tokens; m1, m2)" in render_text(view("m1", "m2"))[1][0]
    assert "0 out tokens (m1, m2)</span>" in render_html(view("m1", "m2"))
