"""Run claude-agent-sdk's own example programs on ccwire and on the reference, offline.

The examples come from the reference's 0.2.187 sdist on PyPI (``make ref-venv`` unpacks
it under ``bench/.ref-src``; nothing of it is kept in this repository). Each example runs
twice, at the same time: unchanged with the reference's interpreter, and with its one
import line switched to ``ccwire`` with ccwire's. Both talk to the real Claude Code CLI
(the reference's bundled 2.1.330, ccwire's pinned 2.1.330), each against its own
`ScriptedModel` answering with the same deterministic `respond`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ccwire.testing import ModelRequest, ScriptedModel, StepResult, text, tool_use

ROOT = Path(__file__).resolve().parents[2]
REF_SRC = ROOT / "bench" / ".ref-src" / "claude_agent_sdk-0.2.187" / "examples"
TIMEOUT = 180

_WRITE = re.compile(r"([\w-]+\.txt)")
_CWD = re.compile(r"[Ww]orking directory: (/\S+)")


def respond(request: ModelRequest) -> StepResult:
    """The scripted model's answer, from the request alone (the same for both SDKs)."""
    results = request.tool_results()
    if results:
        first = results[0]
        status = "error" if first.is_error else "ok"
        return text(f"Tool finished ({status}).")
    prompt = request.last_user_text()
    lower = prompt.lower()
    tools = set(request.tool_names)
    numbers = re.findall(r"\d+(?:\.\d+)?", prompt)
    if "mcp__calc__add" in tools and "+" in prompt and len(numbers) >= 2:
        return tool_use("mcp__calc__add", {"a": float(numbers[0]), "b": float(numbers[1])})
    if "Write" in tools and ("write" in lower or "create" in lower) and "file" in lower:
        name = _WRITE.search(prompt)
        cwd = _CWD.search(request.system)  # the CLI tells the model its working directory
        if cwd is not None:
            path = Path(cwd.group(1)) / (name.group(1) if name else "out.txt")
            return tool_use("Write", {"file_path": str(path), "content": "test data"})
    if "Bash" in tools and ("bash" in lower or "command" in lower):
        command = "echo 'Hello from bash!'"
        quoted = re.search(r"(?:command|bash):?\s+(.+?)\s*$", prompt)
        if quoted and "foo.sh" in quoted.group(1):
            command = quoted.group(1)
        return tool_use("Bash", {"command": command, "description": "run it"})
    words = " ".join(prompt.split()[:8])
    return text(f"Scripted answer to: {words}")


@dataclass(frozen=True)
class Outcome:
    """One run of one example."""

    returncode: int
    stdout: str
    stderr: str


def _run(python: str, script: Path, args: list[str], cli: str | None) -> Outcome:
    with ScriptedModel(default=respond) as model, tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "work"
        shutil.copytree(script.parent, work)  # plugins/ and the like sit beside the script
        home = Path(tmp) / "home"
        home.mkdir()
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        env.update(model.env(home))
        if cli is not None:
            env["CCWIRE_CLI_PATH"] = cli
        done = subprocess.run(
            [python, str(work / script.name), *args],
            cwd=work, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False,
        )  # fmt: skip
        return Outcome(done.returncode, _normalise(done.stdout, tmp), done.stderr)


_NOISE = [
    (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "<uuid>"),
    (re.compile(r"\b(toolu|msg|req)_[A-Za-z0-9]+"), r"\1_<id>"),
    (re.compile(r"\$\d+\.\d+"), "$<cost>"),
    (re.compile(r"\b\d+(\.\d+)?\s*(ms|s)\b"), "<duration>"),
    (re.compile(r"(duration(?:_api)?_ms)=\d+"), r"\1=<ms>"),
    (re.compile(r"/tmp/cc-socks/\d+\.sock"), "<socket>"),  # the CLI's pid
    (re.compile(r"-tmp-tmp[A-Za-z0-9-]+-work"), "<tmp-key>-work"),  # the CLI's key of its cwd
]


# ccwire gives every prompt a uuid (it matches results to prompts with it); the CLI
# then reports ``user_message_uuids`` on the frames of that turn, where the reference's
# prompts carry none. A deliberate difference (docs/migration.md), hidden here.
_TURN_IDS = [
    (re.compile(r"user_message_uuids=\[[^\]]*\]"), "user_message_uuids=None"),
    (re.compile(r"user_message_uuid='[^']*'"), "user_message_uuid=None"),
    (re.compile(r", 'user_message_uuids': \[[^\]]*\]"), ""),
    (re.compile(r", 'user_message_uuids'(?=[,\]])"), ""),
]


def _sorted_set(match: re.Match[str]) -> str:
    return match.group(1) + ", ".join(sorted(match.group(2).split(", ")))


# lines an example prints from a ``set`` (string hashing differs per process)
_SET_LINE = re.compile(r"^(Message types received: )(.*)$", re.M)


def _normalise(out: str, tmp: str) -> str:
    out = _SET_LINE.sub(_sorted_set, out.replace(tmp, "<tmp>"))
    for pattern, replacement in _TURN_IDS:
        out = pattern.sub(replacement, out)
    for pattern, replacement in _NOISE:
        out = pattern.sub(replacement, out)
    return out


def switched(script: Path, into: Path) -> Path:
    """A copy of ``script`` whose imports name ``ccwire`` instead of ``claude_agent_sdk``."""
    target = into / script.name
    target.write_text(
        script.read_text(encoding="utf-8").replace("claude_agent_sdk", "ccwire"), encoding="utf-8"
    )
    return target


def run_both(
    name: str, args: list[str], reference_python: str, cli: str
) -> tuple[Outcome, Outcome]:
    """``(reference, ccwire)`` outcomes of example ``name`` run with ``args``."""
    script = REF_SRC / name
    with tempfile.TemporaryDirectory() as tmp:
        ours_dir = Path(tmp) / "examples"
        shutil.copytree(REF_SRC, ours_dir)
        ours = switched(script, ours_dir)
        with ThreadPoolExecutor(2) as pool:
            theirs_f = pool.submit(_run, reference_python, script, args, None)
            ours_f = pool.submit(_run, sys.executable, ours, args, cli)
            return theirs_f.result(), ours_f.result()
