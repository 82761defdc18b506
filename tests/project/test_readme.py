"""The README's example is the documented one, and it runs: offline, against the real CLI;
and so does every python block of the docs pages (or the example file it includes)."""

from __future__ import annotations

import ast
import inspect
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ccwire._transport.discovery import INSTALL_COMMAND
from ccwire.testing import ScriptedModel, text, tool_use

ROOT = Path(__file__).resolve().parents[2]


def first_python_block(markdown: str) -> str:
    match = re.search(r"```python\n(.*?)```", markdown, re.DOTALL)
    assert match is not None, "no python code block"
    return match.group(1)


NO_CLI = f"Claude Code CLI not installed: {INSTALL_COMMAND}"
README_CODE = first_python_block((ROOT / "README.md").read_text(encoding="utf-8"))


def _cli() -> str | None:
    explicit = os.environ.get("CCWIRE_CLI_PATH")
    if explicit:
        return explicit
    local = ROOT / "node_modules" / ".bin" / "claude"
    return str(local) if local.exists() else None


def test_readme_example_is_the_one_in_the_docs() -> None:
    snippet = (ROOT / "docs" / "snippets" / "readme_greet.py").read_text(encoding="utf-8")
    assert snippet == README_CODE


@pytest.mark.e2e
@pytest.mark.skipif(_cli() is None, reason=NO_CLI)
def test_readme_example_runs_offline(tmp_path: Path) -> None:
    script = tmp_path / "readme_example.py"
    script.write_text(README_CODE, encoding="utf-8")
    with ScriptedModel(
        tool_use("mcp__demo_tools__greet", {"name": "Alice"}), text("I greeted Alice.")
    ) as model:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
        env.update(model.env(tmp_path / "home"), CCWIRE_CLI_PATH=str(_cli()))
        (tmp_path / "home").mkdir()
        done = subprocess.run(
            [sys.executable, str(script)],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        model.assert_script_consumed()
        assert model.turn_requests[1].tool_results()[0].content == "Hello, Alice! Welcome."
    assert "ToolUseBlock(id=" in done.stdout and "name='mcp__demo_tools__greet'" in done.stdout
    assert "Hello, Alice! Welcome." in done.stdout
    assert done.stdout.rstrip().splitlines()[-1].startswith("ResultMessage(subtype='success'")


README_TEST = re.search(
    r"<!-- readme-test: (\S+) -->\n```python\n(.*?)```",
    (ROOT / "README.md").read_text(encoding="utf-8"),
    re.DOTALL,
)


@pytest.mark.e2e
@pytest.mark.skipif(_cli() is None, reason=NO_CLI)
def test_readme_test_file_passes_in_a_project_of_its_own(tmp_path: Path) -> None:
    """The README's "Testing offline" file, run with pytest outside this repository (its
    fixtures come from ccwire's pytest plugin, as a user's do), passes without warnings."""
    assert README_TEST is not None, "the README's test file block is missing"
    name, code = README_TEST.groups()
    (tmp_path / name).write_text(code, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env["CCWIRE_CLI_PATH"] = str(_cli())
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", name],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert " passed" in done.stdout and "warning" not in done.stdout, done.stdout


# --------------------------------------------------------------------------- every docs block

DOCS = ROOT / "docs"
OTHERS = {  # pages written and tested elsewhere
    "migration.md",
    "reliability.md",
    "security.md",
    "concepts/session-stores.md",
    "concepts/transcripts.md",
    "how-to/batch-evaluation.md",
}
SKIP = re.compile(r"<!-- docs-test: skip: (.+?) -->\n```python\n", re.DOTALL)
BLOCK = re.compile(r"^(?:<!-- docs-test: skip: .+? -->\n)?```python\n(.*?)^```", re.M | re.DOTALL)
INCLUDE = re.compile(r'^--8<-- "([^"]+)"\s*$')
# The README's example, written out where a reader meets it (the quickstart, the home
# page: a `--8<--` include shows as that line on GitHub) and run whole elsewhere
SNIPPET_CODE = (DOCS / "snippets" / "readme_greet.py").read_text(encoding="utf-8")


def _run_elsewhere(code: str) -> bool:
    """A block that includes a file, or is the README's example: run by its own test."""
    return bool(INCLUDE.match(code.strip())) or code == SNIPPET_CODE


def _pages() -> list[Path]:
    return [
        p
        for p in sorted(DOCS.rglob("*.md"))
        if p.relative_to(DOCS).as_posix() not in OTHERS and "snippets" not in p.parts
    ]


def _blocks(page: Path) -> list[tuple[str, str | None]]:
    """`(code, skip reason or None)` of each python block of `page`, in order."""
    text = page.read_text(encoding="utf-8")
    found = []
    for match in BLOCK.finditer(text):
        skip = SKIP.match(text, match.start())
        found.append((match.group(1), skip.group(1) if skip else None))
    return found


def _tested_files() -> str:
    """The sources of the tests that run whole files (examples, the README snippet)."""
    return (
        "".join(p.read_text(encoding="utf-8") for p in (ROOT / "tests").rglob("test_examples*.py"))
        + "docs/snippets/readme_greet.py"
    )


def test_skipped_docs_blocks_are_few() -> None:
    skipped = [reason for page in _pages() for _, reason in _blocks(page) if reason]
    assert len(skipped) <= 3, skipped


def test_included_files_are_run_by_a_test() -> None:
    tested = _tested_files()
    for page in _pages():
        for code, _ in _blocks(page):
            include = INCLUDE.match(code.strip())
            if include:
                path = include.group(1)
                assert (ROOT / path).is_file(), (page, path)
                assert Path(path).name in tested, f"{page}: {path} is not run by any test"


async def _run_page(page: Path, namespace: dict[str, object]) -> int:
    ran = 0
    for i, (code, skip) in enumerate(_blocks(page), 1):
        if skip or _run_elsewhere(code):
            continue
        compiled = compile(
            code, f"{page.relative_to(ROOT)}[{i}]", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
        )
        result = eval(compiled, namespace)  # the block itself, as the reader would run it
        if inspect.isawaitable(result):
            await result
        ran += 1
    return ran


def _pages_with_code() -> list[Path]:
    """The pages with at least one inline python block to run."""
    return [
        page
        for page in _pages()
        if any(not skip and not _run_elsewhere(c) for c, skip in _blocks(page))
    ]


@pytest.mark.e2e
@pytest.mark.skipif(_cli() is None, reason=NO_CLI)
@pytest.mark.parametrize("page", _pages_with_code(), ids=lambda p: p.relative_to(DOCS).as_posix())
def test_docs_blocks_run_offline(
    page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each page's python blocks run in order in one namespace (a reader following the
    page, in the asyncio REPL), offline: nothing is given to them, they define every
    name they use (`options` too); the environment points the real CLI they start at
    a scripted model that answers "Done." (as a reader's API key points it at Claude);
    top-level `await` and `async for` are allowed."""
    import anyio

    # the work folder next to HOME, not holding it (a sandbox refuses to expose a home)
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    monkeypatch.chdir(work)
    for name in [k for k in os.environ if k.startswith("ANTHROPIC_")]:
        monkeypatch.delenv(name)
    with ScriptedModel(default=text("Done.")) as model:
        for name, value in {**model.env(home), "CCWIRE_CLI_PATH": str(_cli())}.items():
            monkeypatch.setenv(name, value)
        namespace: dict[str, object] = {"__name__": "docs_block"}
        ran = anyio.run(_run_page, page, namespace)
        talks = any(re.search(r"^(async (with|for)|await) ", c, re.M) for c, _ in _blocks(page))
        assert bool(model.requests) == talks  # a page that converses reached the model
    assert ran > 0


@pytest.mark.e2e
@pytest.mark.skipif(_cli() is None, reason=NO_CLI)
def test_quickstart_run_command_with_its_tools_module(tmp_path: Path) -> None:
    """The quickstart's `calc_tools.py` and its `ccwire run ... --tools calc_tools:server`
    line, offline with the page's own `replies.json` (`--scripted replies.json`, as the
    page says: the model calls `add`, then answers with its result)."""
    page = (DOCS / "quickstart.md").read_text(encoding="utf-8")
    module = next(code for code, _ in _blocks(DOCS / "quickstart.md") if "server =" in code)
    (tmp_path / "calc_tools.py").write_text(module)
    line = next(ln for ln in page.splitlines() if ln.startswith("ccwire run ") and "--tools" in ln)
    replies = re.search(r"^```json\n(.*?)^```", page, re.M | re.DOTALL)
    assert replies is not None, "the quickstart's replies.json block is missing"
    assert "--scripted replies.json" in page
    json.loads(replies.group(1))
    (tmp_path / "replies.json").write_text(replies.group(1))
    argv = [*shlex.split(line)[1:], "--scripted", "replies.json", "--plain"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(CCWIRE_CLI_PATH=str(_cli()), PYTHONPATH=str(tmp_path), HOME=str(tmp_path))
    done = subprocess.run(
        [sys.executable, "-m", "ccwire", *argv],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "tool result  mcp__calc__add" in done.stdout and ": 4" in done.stdout, done.stdout
    assert "2 + 2 = 4." in done.stdout
    # the output the page shows is the whole output, but for times, ids and counts
    shown = re.search(r"^```text\n(.*?)^```", page, re.M | re.DOTALL)
    assert shown is not None, "the quickstart's output block is missing"

    def norm(out: str) -> list[str]:
        return re.sub(r"\d+ ms|session [0-9a-f]{8}|\d+ tools", "#", out).splitlines()

    assert norm(shown.group(1)) == norm(done.stdout)


def test_the_quickstart_names_the_first_errors_as_python_words_them() -> None:
    """A newcomer's first slips with `query()` and `ClaudeSDKClient` (a plain `for` or
    `with`, an `await`, `async for` in a plain script, a positional prompt): the
    quickstart quotes each error, word for word (the start of ccwire's own), with its
    fix."""
    import anyio

    from ccwire import ClaudeSDKClient, query

    page = (DOCS / "quickstart.md").read_text(encoding="utf-8")
    said: list[str] = []
    with pytest.raises(TypeError) as plain_for:
        for _ in query(prompt="hi"):  # type: ignore[attr-defined]
            pass  # pragma: no cover
    said.append(f"TypeError: {plain_for.value}")
    plain: Any = ClaudeSDKClient()
    with pytest.raises(TypeError) as plain_with, plain:
        pass  # pragma: no cover
    said.append(f"AsyncOnlyError: {str(plain_with.value).partition(' `')[0]} ...")

    async def awaited() -> None:
        await query(prompt="hi")  # type: ignore[misc]

    with pytest.raises(TypeError) as await_query:
        anyio.run(awaited)
    said.append(f"TypeError: {await_query.value}")
    with pytest.raises(SyntaxError) as outside:
        compile('async for m in query(prompt="hi"):\n    print(m)\n', "main.py", "exec")
    said.append(f"SyntaxError: {outside.value.msg}")
    with pytest.raises(TypeError) as positional:
        query("hi")  # type: ignore[call-arg]
    said.append(f"TypeError: {positional.value}")
    missing = [words for words in said if f"`{words}`" not in page]
    assert not missing, missing


# --------------------------------------------------------------------------- installing

INSTALL_BLOCK = re.compile(r"<!-- install: (.+?) -->\n```bash\n(.*?)```", re.DOTALL)
SNIPPETS = {
    "from a checkout": DOCS / "snippets" / "install_checkout.sh",
    "from a wheel": DOCS / "snippets" / "install_wheel.sh",
}


def _readme_install_blocks() -> dict[str, str]:
    return dict(INSTALL_BLOCK.findall((ROOT / "README.md").read_text(encoding="utf-8")))


def _written_pages() -> list[Path]:
    return [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted(DOCS.rglob("*.md"))]


def test_the_install_story_is_one_story() -> None:
    """The README's install lines are the docs' (the quickstart and the home page include
    the same files); no page tells a reader to `pip install ccwire` from PyPI, where it is
    not, nor to install the CLI unpinned or into the project's own package.json."""
    blocks = _readme_install_blocks()
    assert set(blocks) == set(SNIPPETS)
    for name, path in SNIPPETS.items():
        assert blocks[name] == path.read_text(encoding="utf-8"), name
    # written out, not included: on GitHub, where the README links them, an include is
    # its `--8<--` line
    blocks_of = {
        name: re.findall(r"^```\w+\n(.*?)^```", (DOCS / name).read_text(), re.M | re.DOTALL)
        for name in ("quickstart.md", "index.md")
    }
    for name, path in SNIPPETS.items():
        assert path.read_text(encoding="utf-8") in blocks_of["quickstart.md"], name
    assert SNIPPETS["from a checkout"].read_text(encoding="utf-8") in blocks_of["index.md"]
    for name, written in blocks_of.items():
        assert SNIPPET_CODE in written, f"{name}: the README's example is missing"
        assert not any("--8<--" in block for block in written), name
    assert INSTALL_COMMAND in blocks["from a checkout"]
    wrong = []
    for page in _written_pages():
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            where = f"{page.relative_to(ROOT)}:{number}: {line.strip()}"
            if re.search(r"pip install ['\"]?ccwire(?![\w\[.-])", line):
                wrong.append(where)  # not on PyPI (extras of an installed ccwire are fine)
            cli = re.search(r"npm install\b[^`]*@anthropic-ai/claude-code(@[\d.]+)?", line)
            if cli and (cli.group(1) is None or not re.search(r"--prefix|-g\b", cli.group(0))):
                wrong.append(where)  # unpinned, or into the project's package.json
    assert not wrong, "\n".join(wrong)


def test_the_readme_links_only_to_pages_that_render() -> None:
    """On GitHub, docs/api.md is raw `:::` directives: the README points to the built page."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "docs/api.md" not in readme
    assert "site/api/index.html" in readme
    for target in re.findall(r"\]\(([^)#]+)", readme):
        if not target.startswith("http"):
            assert (ROOT / target).exists(), target


def _unreachable_registry() -> str | None:
    import urllib.request

    for url in ("https://registry.npmjs.org/", "https://pypi.org/simple/pip/"):
        try:
            urllib.request.urlopen(url, timeout=15).close()
        except OSError as exc:
            return f"{url} is unreachable ({exc}): the install lines need npm and PyPI"
    return None


def _clean_copy(target: Path) -> None:
    """The checkout's tracked files as they are now, committed in a fresh repository."""
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=60
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    for step in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "checkout"]):
        subprocess.run([*git, *step], cwd=target, check=True, capture_output=True, timeout=60)


@pytest.mark.e2e
def test_the_install_lines_work_on_a_fresh_machine(tmp_path: Path) -> None:
    """Every line of the README's two install blocks, as written, in a shell: a fresh HOME,
    no CLI anywhere, a clean copy of the checkout (the `git clone` line is that copy).
    Both `ccwire doctor`s pass, both demos run offline, and the checkout is unchanged."""
    reason = _unreachable_registry()
    if reason is not None:
        pytest.skip(reason)
    npm_cache = subprocess.run(
        ["npm", "config", "get", "cache"], capture_output=True, text=True, timeout=60, check=True
    ).stdout.strip()  # the machine's download cache, kept: a fresh HOME, not a fresh network
    checkout, home, bin_dir = tmp_path / "ccwire", tmp_path / "home", tmp_path / "bin"
    for folder in (checkout, home, bin_dir):
        folder.mkdir()
    _clean_copy(checkout)
    (bin_dir / "python3").symlink_to(sys.executable)
    (bin_dir / "python").symlink_to(sys.executable)
    blocks = _readme_install_blocks()
    first = blocks["from a checkout"].splitlines()
    assert first[0].startswith("git clone ")
    script = "\n".join(
        ["set -ex", f"cd {shlex.quote(str(checkout))}", *first[1:], blocks["from a wheel"]]
    )
    # the machine's settings (certificates, proxies, pip's indexes) stay; what points at
    # this checkout, its venv, its CLI or a model goes
    mine = ("CCWIRE_", "ANTHROPIC_", "CLAUDE_", "VIRTUAL_ENV", "PYTHON", "PYENV", "npm_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(mine)}
    env.update(
        HOME=str(home),
        PATH=os.pathsep.join([str(bin_dir), "/usr/local/bin", "/usr/bin", "/bin"]),
        npm_config_cache=npm_cache,
        PIP_CACHE_DIR=str(Path.home() / ".cache" / "pip"),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    try:
        done = subprocess.run(
            ["bash", "-c", script], cwd=tmp_path, env=env,
            capture_output=True, text=True, timeout=900, check=False,
        )  # fmt: skip
        output = done.stdout + done.stderr
        assert done.returncode == 0, output[-6000:]
        assert done.stdout.count("0 problem(s)") == 2, done.stdout[-4000:]
        assert done.stdout.count("found via ccwire's CLI folder, ~/.ccwire/cli") == 2
        assert done.stdout.count("done: success - 3 turns") == 2, done.stdout[-4000:]
        installed = home / ".ccwire" / "cli" / "node_modules" / "@anthropic-ai" / "claude-code"
        assert json.loads((installed / "package.json").read_text())["version"] == "2.1.330"
        status = subprocess.run(
            ["git", "status", "--porcelain"], cwd=checkout,
            capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
        assert status.stdout == "", "the install changed the checkout:\n" + status.stdout
    finally:  # the CLI alone is 360 MB: not kept with the test's temporary files
        shutil.rmtree(home / ".ccwire" / "cli", ignore_errors=True)
