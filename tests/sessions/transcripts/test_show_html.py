"""`ccwire show --html` in a real headless Chromium (Debian's `chromium`, driven by Playwright).

Without Chromium or Playwright the test is skipped, except in CI (`CI=true`), where
it fails: `.ci/run` installs Chromium and the dev extra brings Playwright.
"""

from __future__ import annotations

import io
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ccwire._app.main import CliIO, main

from .conftest import Captured

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOT_DIR = os.environ.get("CCWIRE_SCREENSHOT_DIR")
"""Set it to keep the screenshots (e.g. to look at them)."""


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (required in CI)")
    pytest.skip(reason)


@pytest.fixture
def browser_page() -> Iterator[Any]:
    if not os.path.exists(CHROMIUM):
        _unavailable("chromium is not installed (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed (pip install -e '.[dev]')")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1000, "height": 900})
            yield page
        finally:
            browser.close()


def _write_page(session_id: str, path: Path) -> None:
    cli_io = CliIO(io.StringIO(), io.StringIO(), io.StringIO(), environ={})
    assert main(["show", session_id, "--html", str(path)], io=cli_io) == 0
    assert isinstance(cli_io.stdout, io.StringIO)
    assert cli_io.stdout.getvalue() == f"wrote {path}\n"


def _shot(page: Any, tmp_path: Path, name: str) -> Path:
    target = Path(SCREENSHOT_DIR or tmp_path) / name
    target.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(target), full_page=True)
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return target


def test_tool_calls_fold_and_unfold_offline(
    captured: Captured, tmp_path: Path, browser_page: Any
) -> None:
    page_file = tmp_path / "session.html"
    _write_page(captured.multi_turn, page_file)
    html = page_file.read_text()
    assert "http://" not in html and "https://" not in html  # self-contained
    requests: list[str] = []
    page = browser_page
    page.on("request", lambda r: requests.append(r.url))
    page.goto(page_file.as_uri())

    assert page.title() == "Where were we?"
    assert page.get_by_text("Run echo alpha, then echo one and two in parallel").is_visible()
    assert page.get_by_text("Both commands ran: one and two.").is_visible()
    tools = page.locator("details.tool")
    assert tools.count() == 3
    first = tools.nth(0)
    assert first.locator(".tool-name").inner_text() == "Bash"
    assert "echo alpha" in first.locator(".tool-brief").inner_text()
    result = first.locator("pre.tool-result")
    assert not result.is_visible()  # folded
    _shot(page, tmp_path, "folded.png")

    first.locator("summary").click()
    assert result.is_visible()
    assert result.inner_text().strip() == "alpha"
    assert '"command": "echo alpha"' in first.locator("pre.tool-input").inner_text()
    assert not tools.nth(1).locator("pre.tool-result").is_visible()  # the others stay folded
    _shot(page, tmp_path, "one-open.png")

    page.get_by_role("button", name="Expand all").click()
    assert [tools.nth(i).locator("pre.tool-result").inner_text().strip() for i in range(3)] == [
        "alpha",
        "one",
        "two",
    ]
    page.get_by_role("button", name="Collapse all").click()
    assert not result.is_visible()
    assert requests == [page_file.as_uri()]  # nothing fetched but the page itself


def test_subagent_conversation_nests_inside_its_call(
    captured: Captured, tmp_path: Path, browser_page: Any
) -> None:
    page_file = tmp_path / "subagent.html"
    _write_page(captured.subagent, page_file)
    page = browser_page
    page.goto(page_file.as_uri())
    agent = page.locator("details.tool").first
    assert agent.locator(".tool-name").inner_text() in ("Agent", "Task")
    nested = agent.locator(".subagent")
    assert not nested.is_visible()
    agent.locator("summary").click()
    assert nested.is_visible()
    assert nested.get_by_text("The helper says: done.").is_visible()
    assert page.locator(".cost").inner_text().startswith("$0.0018")
    _shot(page, tmp_path, "subagent-open.png")
