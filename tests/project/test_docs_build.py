"""The documentation site builds strictly, and its API reference renders: no raw reST roles,
no internal references ("seed", "§"), every public name documented, and every field of
`ClaudeAgentOptions` and of every message type described."""

from __future__ import annotations

import dataclasses
import html
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import ccwire
import ccwire.batch
import ccwire.testing
from ccwire._wire import messages

ROOT = Path(__file__).resolve().parents[2]

pytest.importorskip("mkdocs", reason="the docs extra is not installed: pip install -e '.[docs]'")
pytest.importorskip("mkdocstrings", reason="the docs extra is not installed")

RAW_ROLE = re.compile(r":(class|func|meth|data|attr|mod|exc|obj):`")
INTERNAL = re.compile(r"\bseed\b|§", re.IGNORECASE)
HEADING = re.compile(r'<h\d id="(ccwire\.[\w.]+)" class="doc doc-heading">')

MESSAGE_TYPES = [
    obj
    for name in messages.__all__
    if dataclasses.is_dataclass(obj := getattr(messages, name)) and isinstance(obj, type)
]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-5000:]
    return out


@pytest.fixture(scope="module")
def api(site: Path) -> str:
    return (site / "api" / "index.html").read_text(encoding="utf-8")


def _prose(page: str) -> str:
    """The page's running text: no scripts, code blocks or code spans."""
    page = re.sub(r"<(script|style|pre)\b.*?</\1>", " ", page, flags=re.DOTALL)
    page = re.sub(r"<code\b.*?</code>", " ", page, flags=re.DOTALL)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def _text(page: str) -> str:
    page = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.DOTALL)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


# `seed` as a public parameter (ccwire.batch.RetryPolicy), not a reference to the project's
# own planning notes: its description, and the name itself in code (signatures, tables)
PUBLIC_SEED = "Seed of the backoff jitter"


def test_no_page_shows_a_raw_role_or_an_internal_reference(site: Path) -> None:
    bad = []
    for page in sorted(site.rglob("*.html")):
        source = page.read_text(encoding="utf-8")
        for pattern, text in (
            (RAW_ROLE, _text(source)),
            (INTERNAL, _prose(source).replace(PUBLIC_SEED, "")),
        ):
            for match in pattern.finditer(text):
                around = text[max(0, match.start() - 60) : match.end() + 60]
                bad.append(f"{page.relative_to(site)}: {' '.join(around.split())!r}")
    assert not bad, "\n".join(bad[:40])


def _sections(api: str) -> dict[str, str]:
    """Each documented object's own part of the page: from its heading to the next one."""
    marks = [(m.group(1), m.start()) for m in HEADING.finditer(api)]
    ends = [start for _, start in marks[1:]] + [len(api)]
    return {name: api[start:end] for (name, start), end in zip(marks, ends, strict=True)}


def _has_summary(section: str) -> bool:
    contents = section.split('class="doc doc-contents', 1)
    if len(contents) < 2:
        return False
    match = re.search(r"<p>(.*?)</p>", contents[1], re.DOTALL)
    return match is not None and bool(_text(match.group(1)).strip())


def test_every_public_name_is_documented(api: str) -> None:
    sections = _sections(api)
    public = [f"ccwire.{n}" for n in ccwire.__all__]
    public += [f"ccwire.testing.{n}" for n in ccwire.testing.__all__]
    public += [f"ccwire.batch.{n}" for n in ccwire.batch.__all__]
    missing = [n for n in public if n not in sections]
    assert not missing, f"not in docs/api.md (add a `::: {{name}}` block): {missing}"
    undocumented = [n for n in public if not _has_summary(sections[n])]
    assert not undocumented, f"no docstring summary: {undocumented}"


def test_the_api_page_shows_no_rest_markup(api: str) -> None:
    """Docstrings are Markdown: a reST `Example::` marker or a ``literal`` split over
    two lines would show as is."""
    text = _prose(api)
    found = [
        " ".join(text[max(0, m.start() - 60) : m.end() + 20].split())
        for m in re.finditer(r"\S::(?=\s)|``", text)
    ]
    assert not found, found


def _field_documented(api: str, sections: dict[str, str], owner: str, field: str) -> bool:
    own = sections.get(f"{owner}.{field}")
    if own is not None and _has_summary(own):
        return True
    row = re.search(
        rf'title="{re.escape(owner)}\.{field}">{field}</span></code></td>(.*?)</tr>',
        sections.get(owner, ""),
        re.DOTALL,
    )
    if row is None:
        return False
    description = re.search(r'doc-md-description">\s*<p>(.*?)</p>', row.group(1), re.DOTALL)
    return description is not None and bool(_text(description.group(1)).strip())


def test_every_option_field_is_documented(api: str) -> None:
    sections = _sections(api)
    names = [f.name for f in dataclasses.fields(ccwire.ClaudeAgentOptions)]
    missing = [
        n for n in names if not _field_documented(api, sections, "ccwire.ClaudeAgentOptions", n)
    ]
    assert not missing, f"ClaudeAgentOptions fields without documentation: {missing}"
    for name in ("max_turns", "cwd", "control_timeout"):  # the default is said
        assert re.search(
            rf"{name}</span></code></td>.*?Default <code>", sections["ccwire.ClaudeAgentOptions"],
            re.DOTALL,
        )  # fmt: skip


@pytest.mark.parametrize("cls", MESSAGE_TYPES, ids=lambda c: c.__qualname__)
def test_every_message_field_is_documented(api: str, cls: type) -> None:
    """(``__qualname__``: a typed system message's ``__name__`` is ``SystemMessage``.)"""
    sections = _sections(api)
    owner = f"ccwire.{cls.__qualname__}"
    fields = [f.name for f in dataclasses.fields(cls)]
    missing = [n for n in fields if not _field_documented(api, sections, owner, n)]
    assert not missing, f"{cls.__qualname__} fields without documentation: {missing}"


# --------------------------------------------------------------------------- diagrams

ARCHITECTURE = ROOT / "docs" / "concepts" / "architecture.md"


def _mermaid_blocks(markdown: str) -> list[str]:
    return re.findall(r"^```mermaid\n(.*?)^```", markdown, re.DOTALL | re.MULTILINE)


def test_the_state_diagram_is_the_transition_table() -> None:
    """The committed diagram is what `python -m ccwire._sessions.diagram` prints."""
    from ccwire._sessions.diagram import state_diagram

    done = subprocess.run(
        [sys.executable, "-m", "ccwire._sessions.diagram"],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert done.stdout == state_diagram()
    states = [b for b in _mermaid_blocks(ARCHITECTURE.read_text()) if "stateDiagram" in b]
    assert states == [state_diagram()], "run `python -m ccwire._sessions.diagram` and paste it"
    from ccwire._sessions.state import TRANSITIONS

    edges = sum(len(targets) for targets in TRANSITIONS.values())
    assert states[0].count(" --> ") == edges + 1 + sum(not t for t in TRANSITIONS.values())


def test_the_diagrams_render_offline(site: Path) -> None:
    """Every mermaid fence becomes a `<pre class="mermaid">` that the vendored mermaid draws;
    the page loads it from the site itself, never from a CDN."""
    page = (site / "concepts" / "architecture" / "index.html").read_text(encoding="utf-8")
    blocks = re.findall(r'<pre class="mermaid"><code>(.*?)</code></pre>', page, re.DOTALL)
    sources = _mermaid_blocks(ARCHITECTURE.read_text())
    assert len(blocks) == len(sources) == 4
    kinds = [html.unescape(b).split()[0] for b in blocks]
    assert kinds == ["flowchart", "stateDiagram-v2", "sequenceDiagram", "sequenceDiagram"]
    scripts = re.findall(r'<script src="([^"]+)"', page)
    assert any(s.endswith("javascripts/mermaid.min.js") for s in scripts), scripts
    assert not [s for s in scripts if s.startswith(("http:", "https:", "//"))], scripts
    vendored = (site / "javascripts" / "mermaid.min.js").read_text(encoding="utf-8")
    assert 'globalThis["mermaid"]' in vendored  # defines `mermaid`: material skips its CDN
