"""`ccwire show --html`: one session as a single self-contained HTML page.

Everything is inline (CSS, a few lines of JavaScript for "expand all"), nothing is
fetched, so the page opens offline from a `file://` URL. Each tool call is a
`<details>` element: folded to its name and a one-line input, unfolded to the full
input, the result and, for a subagent, its own conversation.
"""

from __future__ import annotations

import json
from html import escape

from .render import short_json
from .transcript_view import SessionView, TextItem, ToolCall, Turn, format_when, turn_count

__all__ = ["page_bytes", "render_html"]

_CSS = """
:root { --bg:#fbfbfa; --fg:#1f2328; --muted:#6a737d; --card:#fff; --line:#e3e6ea;
  --user:#eef4ff; --tool:#fff8e6; --ok:#1a7f37; --err:#cf222e; --code:#f4f5f7; }
@media (prefers-color-scheme: dark) { :root { --bg:#16181c; --fg:#e6e6e6; --muted:#9aa4ad;
  --card:#1e2126; --line:#30353c; --user:#1c2a40; --tool:#2d2818; --code:#14161a; } }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--fg);
  font:15px/1.5 -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; }
main { max-width: 920px; margin: 0 auto; padding: 24px 20px 64px; }
header h1 { font-size: 1.35rem; margin: 0 0 4px; }
.meta { color: var(--muted); font-size: .9rem; }
.meta span + span::before { content: "\\00b7"; margin: 0 .45em; }
.toolbar { margin: 14px 0 8px; display: flex; gap: 8px; }
button { font: inherit; font-size: .85rem; padding: 3px 10px; border-radius: 6px;
  border: 1px solid var(--line); background: var(--card); color: var(--fg); cursor: pointer; }
.turn { background: var(--card); border: 1px solid var(--line); border-radius: 10px;
  padding: 12px 16px; margin: 14px 0; }
.prompt { background: var(--user); border-radius: 8px; padding: 8px 12px; white-space: pre-wrap;
  font-weight: 600; }
.prompt .n { color: var(--muted); font-weight: 400; margin-right: 6px; }
.text { white-space: pre-wrap; margin: 10px 2px; }
.thinking { white-space: pre-wrap; margin: 10px 2px; color: var(--muted); font-style: italic; }
details.tool { background: var(--tool); border: 1px solid var(--line); border-radius: 8px;
  margin: 8px 0; }
details.tool > summary { cursor: pointer; padding: 6px 10px; list-style: none; display: flex;
  gap: 8px; align-items: baseline; }
details.tool > summary::-webkit-details-marker { display: none; }
details.tool > summary::before { content: "\\25B6"; font-size: .7rem; color: var(--muted); }
details.tool[open] > summary::before { content: "\\25BC"; }
.tool-name { font-weight: 600; }
.tool-brief { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: .82rem;
  color: var(--muted); overflow: hidden; text-overflow: ellipsis; white-space: nowrap; flex: 1; }
.status-ok { color: var(--ok); } .status-err { color: var(--err); }
.tool-body { padding: 0 12px 10px; }
.tool-body h4 { margin: 8px 0 4px; font-size: .8rem; text-transform: uppercase;
  letter-spacing: .04em; color: var(--muted); }
pre { background: var(--code); border: 1px solid var(--line); border-radius: 6px; margin: 0;
  padding: 8px 10px; overflow-x: auto; white-space: pre-wrap; word-break: break-word;
  font: .82rem/1.45 ui-monospace, Menlo, Consolas, monospace; }
pre.error { border-color: var(--err); }
.subagent { border-left: 3px solid var(--line); padding-left: 10px; margin-top: 8px; }
.subagent .turn { margin: 8px 0; }
footer { color: var(--muted); font-size: .8rem; margin-top: 30px; }
"""

_JS = """
function setAll(open) {
  document.querySelectorAll('details.tool').forEach(function (d) { d.open = open; });
}
"""


def _call(call: ToolCall) -> str:
    if call.result is None:
        status = '<span class="status-err" title="no result recorded">\u2026</span>'
    elif call.is_error:
        status = '<span class="status-err" title="error">\u2717 error</span>'
    else:
        status = '<span class="status-ok" title="ok">\u2713</span>'
    full_input = json.dumps(call.input, ensure_ascii=False, indent=2)
    body = [f'<h4>Input</h4><pre class="tool-input">{escape(full_input)}</pre>']
    if call.subagent:
        body.append(f'<h4>Subagent</h4><div class="subagent">{_turns(call.subagent)}</div>')
    if call.result is not None:
        cls = "tool-result error" if call.is_error else "tool-result"
        body.append(f'<h4>Result</h4><pre class="{cls}">{escape(call.result)}</pre>')
    return (
        f'<details class="tool" data-tool-id="{escape(call.id)}"><summary>'
        f'<span class="tool-name">{escape(call.name)}</span>'
        f'<span class="tool-brief">{escape(short_json(call.input, 110))}</span>{status}'
        f'</summary><div class="tool-body">{"".join(body)}</div></details>'
    )


def _turns(turns: list[Turn]) -> str:
    parts = []
    for number, turn in enumerate(turns, 1):
        inner = []
        if turn.prompt:
            inner.append(
                f'<div class="prompt"><span class="n">#{number}</span>{escape(turn.prompt)}</div>'
            )
        for item in turn.items:
            if isinstance(item, TextItem):
                inner.append(f'<div class="{item.kind}">{escape(item.text)}</div>')
            else:
                inner.append(_call(item))
        parts.append(f'<section class="turn">{"".join(inner)}</section>')
    return "".join(parts)


def render_html(view: SessionView) -> str:
    """The session as one HTML document with inline CSS and JavaScript.

    Args:
        view: The session.

    Returns:
        The page's source.
    """
    info = view.info
    facts = [f"<span>{turn_count(view.turns)}</span>"]
    if info is not None:
        facts.insert(0, f"<span>started {escape(format_when(info.created_at))}</span>")
        if info.cwd:
            facts.append(f"<span>{escape(info.cwd)}</span>")
        if info.tag:
            facts.append(f'<span class="tag">tag: {escape(info.tag)}</span>')
    if view.cost is not None:
        c = view.cost
        billed = "offline" if c.usd is None else f"${c.usd:.4f}"
        models = f" ({escape(', '.join(c.models))})" if c.models else ""
        facts.append(
            f'<span class="cost">{billed} \u2014 {c.input_tokens} in / '
            f"{c.output_tokens} out tokens{models}</span>"
        )
    if view.skipped_lines:
        facts.append(f"<span>{view.skipped_lines} unreadable line(s) skipped</span>")
    title = escape(view.title)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">"
        f"<title>{title}</title><style>{_CSS}</style><script>{_JS}</script></head>"
        f"<body><main><header><h1>{title}</h1>"
        f'<div class="meta">{"".join(facts)}</div>'
        f'<div class="meta">session <code>{escape(view.session_id)}</code></div></header>'
        '<div class="toolbar"><button type="button" onclick="setAll(true)">Expand all</button>'
        '<button type="button" onclick="setAll(false)">Collapse all</button></div>'
        f"{_turns(view.turns)}"
        "<footer>Written by <code>ccwire show --html</code> "
        "from the Claude Code transcript.</footer>"
        "</main></body></html>\n"
    )


def page_bytes(page: str) -> bytes:
    """A page as the UTF-8 bytes of its file. Text UTF-8 cannot carry (a lone surrogate,
    which a ``\\ud800`` escape in a JSON results file or transcript gives) is written as
    that escape, not failing the command.

    Args:
        page: The page's source.

    Returns:
        Its bytes.
    """
    return page.encode("utf-8", "backslashreplace")
