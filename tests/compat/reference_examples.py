"""Run claude-agent-sdk's own example programs on ccwire and on the reference, offline.

The examples come from the reference's 0.2.187 sdist on PyPI: ``make ref-venv``
downloads and unpacks it under ``bench/.ref-src`` (ignored by git: none of the
reference's code is kept in this repository).

**Where an example runs.** The whole unpacked sdist is copied into a fresh temporary
directory and the example runs the way its usage line says (``./examples/hooks.py
all``): from the copy's root, where the examples expect ``README.md``,
``src/claude_agent_sdk/types.py`` and ``examples/plugins``. `layout` adds the two files
the SDK's git repository has beside them and the sdist lacks (a project agent and a
project command, with our own text).

**Two runs at once.** Each case runs twice, side by side (`run_both`), each in its own
copy, with its own HOME and its own `ScriptedModel`:

* unchanged, with the reference venv's interpreter (it runs its bundled CLI 2.1.330);
* with only its import lines switched to ``ccwire`` (`switch_imports`), with ccwire's
  interpreter and ``CCWIRE_CLI_PATH`` set to the pinned CLI 2.1.330.

**The model.** Every answer comes from `respond`, a deterministic function of the request:
a prompt that asks for a tool gets a ``tool_use`` of it (if the request offers it), a
tool result an answer derived from it, anything else ``Scripted answer to: ...``. So both
SDKs get the same answers as long as their CLIs ask the same questions.

**The comparison.** Both stdouts, normalised (`normalise`: ids, durations, costs, paths,
a printed ``set``), must be equal; so must the exit codes, the exception a run ends with
(`raised`), the records the example logs (`log_lines`) and every model request each CLI
made (`Outcome.requests`): the same options must give the same CLI behaviour, not only
the same printed lines.

**Not only programs.** ``examples/session_stores/redis_session_store.py`` is a module; our
`session_store_program` uses it as its README shows, on both SDKs alike.

**Timing.** Four sub-examples of ``streaming_mode.py`` race fixed ``sleep()`` calls
(prompts 3 s apart, an interrupt after 2 s, a 3 s timeout, a 30 s wait for a result that
never comes). They are still compared exactly: the scripted model answers at once and the
"slow" step is a 5 s ``sleep`` in Bash, so each race is won by seconds; checked with both
cores of a 2-core machine three times oversubscribed.
"""

from __future__ import annotations

import ast
import json
import operator
import re
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ccwire.testing import ModelRequest, ScriptedModel, StepResult, reply, text, thinking, tool_use

ROOT = Path(__file__).resolve().parents[2]
REFERENCE_VERSION = "0.2.187"
SDIST = ROOT / "bench" / ".ref-src" / f"claude_agent_sdk-{REFERENCE_VERSION}"
"""The unpacked sdist (``make ref-venv``)."""
EXAMPLES = SDIST / "examples"
TIMEOUT = 180.0
"""Seconds one run may take (the slowest, ``streaming_mode.py async_iterable_prompt``,
waits 30 s by design)."""


# --------------------------------------------------------------------------- the cases


@dataclass(frozen=True)
class Case:
    """One run: ``examples/<script> <args>``, or ``program`` for a script that is none."""

    script: str
    args: tuple[str, ...] = ()
    program: str | None = None
    """A program of ours (beside this module) that drives ``script``, a module."""
    redis: bool = False
    """Whether the run needs a Redis server (``STORE_REDIS_URL``)."""

    @property
    def id(self) -> str:
        """``script args...``, the pytest id."""
        return " ".join([self.script, *self.args])


PROGRAMS = (
    "quick_start.py",
    "system_prompt.py",
    "tools_option.py",
    "max_budget_usd.py",
    "agents.py",
    "filesystem_agents.py",
    "mcp_calculator.py",
    "tool_permission_callback.py",
    "include_partial_messages.py",
    "stderr_callback_example.py",
    "plugin_example.py",
    "streaming_mode_trio.py",
)
"""The examples that run as they are."""

SUB_EXAMPLES: Mapping[str, tuple[str, ...]] = {
    "streaming_mode.py": (
        "basic_streaming",
        "multi_turn_conversation",
        "concurrent_responses",
        "with_interrupt",
        "manual_message_handling",
        "with_options",
        "async_iterable_prompt",
        "bash_command",
        "control_protocol",
        "error_handling",
    ),
    "hooks.py": (
        "PreToolUse",
        "UserPromptSubmit",
        "PostToolUse",
        "DecisionFields",
        "ContinueControl",
    ),
    "setting_sources.py": ("default", "disable_all", "user_only", "project_and_user"),
}
"""The examples that take the name of a sub-example. Each name runs on its own, and so
does the example without one (it prints its usage); ``all`` is not run: it calls the
same functions one after the other."""

REDIS_STORE = Case(
    "session_stores/redis_session_store.py", program="session_store_program.py", redis=True
)
"""The Redis adapter, driven as its README shows (`session_store_program`)."""

CASES: list[Case] = [
    *(Case(script) for script in PROGRAMS),
    REDIS_STORE,
    *(
        case
        for script, names in SUB_EXAMPLES.items()
        for case in (Case(script), *(Case(script, (name,)) for name in names))
    ),
]
"""Every run."""

NOT_RUN: Mapping[str, str] = {
    "streaming_mode_ipython.py": (
        "IPython snippets to paste one at a time (top-level ``async with`` and ``await``): "
        "not a program, Python refuses the file"
    ),
    "session_stores/s3_session_store.py": (
        "a SessionStore adapter module, not a program; it needs boto3 and an S3 endpoint "
        "(offline: moto), none of which either venv has (its Redis sibling runs)"
    ),
    "session_stores/postgres_session_store.py": (
        "a SessionStore adapter module, not a program; it needs asyncpg, which neither "
        "venv has (ccwire's own PostgresStore uses psycopg; its Redis sibling runs)"
    ),
}
"""The Python files under ``examples/`` that are not run, each with the reason."""


def example_files() -> set[str]:
    """Every Python file under the unpacked ``examples/``, relative to it (no __init__)."""
    return {str(p.relative_to(EXAMPLES)) for p in EXAMPLES.rglob("*.py") if p.name != "__init__.py"}


# --------------------------------------------------------------------------- the model

_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)
_CLI_NOTES = ("[Request interrupted",)
"""Text the CLI puts before the next prompt (after an interrupt): not the user's words."""
_CWD = re.compile(r"Primary working directory: (\S+)")
_FILE = re.compile(r"\b([\w-]+\.(?:txt|py|md))\b")
_QUOTED = re.compile(r"'([^']+)'")
_RUN = re.compile(r"\brun (?:the |this )?(?:bash )?command:?\s+(.+)$", re.IGNORECASE)
_AGENT = re.compile(r"\buse the ([\w-]+) agent to (.+)$", re.IGNORECASE)
_NUMBERED = re.compile(r"^\s*\d+\.\s+(.+)$", re.MULTILINE)
_SECONDS = re.compile(r"(\d+) seconds?")
_WRITTEN = re.compile(r"\bat: (\S+\.py)")
_CALC_WORDS = [
    (re.compile(r"square root of (\d+)"), "sqrt", ("n",)),
    (re.compile(r"(\d+) raised to the power of (\d+)"), "power", ("base", "exponent")),
    (re.compile(r"(\d+) divided by (\d+)"), "divide", ("a", "b")),
]
_CALC_EXPRESSION = re.compile(r"([\d(][\d\s()+*/.-]*[\d)])")
_CALC_OPS: Mapping[type[ast.operator], tuple[str, Callable[[Any, Any], Any]]] = {
    ast.Add: ("add", operator.add),
    ast.Sub: ("subtract", operator.sub),
    ast.Mult: ("multiply", operator.mul),
    ast.Div: ("divide", operator.truediv),
}
_SIGNATURE = "c2NyaXB0ZWQtdGhpbmtpbmc="
"""The thinking blocks' signature: fixed, so printed ThinkingBlocks compare equal."""
_CANNED = {
    "programming languages": (
        "Python for data science, JavaScript for the web, Go for cloud services, "
        "Rust for systems programming and Ruby for scripting."
    ),
    "favorite color": "I don't know your favorite color.",
}

Call = tuple[str, dict[str, Any]]
"""A tool call: the tool's name and its input."""
Result = tuple[str, bool]
"""A tool result: its text and whether it is an error."""


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]


def _tool_results(message: Mapping[str, Any]) -> list[Result]:
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [
        (_REMINDER.sub("", "\n".join(_texts(b.get("content")))).strip(), bool(b.get("is_error")))
        for b in content
        if isinstance(b, dict) and b.get("type") == "tool_result"
    ]


@dataclass(frozen=True)
class _Turn:
    """What the responder reads from a request."""

    prompt: str
    """The user's words being answered: the last user message with text."""
    results: list[Result]
    """The results of the tools already called for that prompt, in order."""
    schemas: Mapping[str, Any]
    """The input schema of every tool offered, by name."""
    cwd: str
    """The working directory the CLI tells the model about."""
    thinking: bool

    @property
    def tools(self) -> frozenset[str]:
        return frozenset(self.schemas)

    @classmethod
    def of(cls, request: ModelRequest) -> _Turn:
        cwd = next(
            (
                found.group(1)
                for m in request.messages
                if m.get("role") == "user"
                and (found := _CWD.search("\n".join(_texts(m.get("content"))))) is not None
            ),
            "",
        )
        prompt, results = "", list[Result]()
        for message in reversed(request.messages):
            if message.get("role") != "user":
                continue
            said = [_REMINDER.sub("", t).strip() for t in _texts(message.get("content"))]
            words = "\n".join(t for t in said if t and not t.startswith(_CLI_NOTES))
            if words:  # results sent along (an interrupted call's) belong to the turn before
                prompt = words
                break
            results[:0] = _tool_results(message)
        schemas = {str(t.get("name")): t.get("input_schema") or {} for t in request.tools}
        enabled = isinstance(request.body.get("thinking"), dict)
        return cls(prompt, results, schemas, cwd, enabled)


def _calc_plan(prompt: str, tools: frozenset[str]) -> list[Call]:
    """The calculator (``mcp__calc__*``) calls that work an arithmetic prompt out."""
    lower = prompt.lower()
    for pattern, name, keys in _CALC_WORDS:
        found = pattern.search(lower)
        if found:
            return [(f"mcp__calc__{name}", dict(zip(keys, map(int, found.groups()), strict=True)))]
    expression = _CALC_EXPRESSION.search(prompt)
    if expression is None:
        return []
    calls: list[Call] = []

    def work_out(node: ast.expr) -> Any:  # innermost operation first, one call each
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.BinOp) and type(node.op) in _CALC_OPS:
            a, b = work_out(node.left), work_out(node.right)
            name, apply = _CALC_OPS[type(node.op)]
            calls.append((f"mcp__calc__{name}", {"a": a, "b": b}))
            return apply(a, b)
        raise ValueError("not arithmetic")

    try:
        work_out(ast.parse(expression.group(1), mode="eval").body)
    except (SyntaxError, ValueError):
        return []
    return calls if all(name in tools for name, _ in calls) else []


def _write_call(item: str, turn: _Turn) -> Call | None:
    lower = item.lower()
    name = _FILE.search(item)
    if "Write" not in turn.tools or name is None or not ("write" in lower or "create" in lower):
        return None
    quoted = [q for q in _QUOTED.findall(item) if q != name.group(1)]
    if quoted:
        content = quoted[0]
    elif name.group(1).endswith(".py"):
        content = 'print("Hello, world!")\n'
    else:
        content = "Hello from the scripted model!"
    return "Write", {"file_path": f"{turn.cwd}/{name.group(1)}", "content": content}


def _bash_call(item: str, earlier: Sequence[Result]) -> Call | None:
    lower = item.lower()
    run = _RUN.search(item)
    if run:
        return "Bash", {"command": run.group(1), "description": "Run the given command"}
    if "echo" in lower and _QUOTED.search(item):
        said = _QUOTED.findall(item)[0]
        return "Bash", {"command": f"echo '{said}'", "description": "Echo the text"}
    if "sleep" in lower:
        seconds = _SECONDS.search(item)
        command = f"sleep {seconds.group(1) if seconds else 1}"
        return "Bash", {"command": command, "description": "Sleep"}
    if "count from" in lower and "slowly" in lower:
        # a pause longer than the examples wait before they interrupt (2 s); the CLI
        # refuses a standalone sleep much longer than this one
        return "Bash", {"command": "sleep 5", "description": "Pause between numbers"}
    if "list the files" in lower:
        return "Bash", {"command": "ls", "description": "List the files"}
    if "run the script" in lower:  # the one an earlier step wrote, where it was written
        written = [_WRITTEN.search(r) for r, error in earlier if not error]
        paths = [w.group(1) for w in written if w is not None]
        command = f"python3 {paths[-1] if paths else 'hello.py'}"
        return "Bash", {"command": command, "description": "Run the script"}
    return None


def _step_call(item: str, turn: _Turn, earlier: Sequence[Result]) -> Call | None:
    """The one tool call an instruction asks for, if its tool is offered."""
    lower = item.lower()
    tools = turn.tools
    call = _bash_call(item, earlier) if "Bash" in tools else None
    if call is None:
        call = _write_call(item, turn)
    if call is None and "Read" in tools and ("read" in lower or "review" in lower):
        path = re.search(r"([\w./-]+\.(?:md|py|txt))\b", item)
        if path is not None:
            call = "Read", {"file_path": f"{turn.cwd}/{path.group(1)}"}
    if call is None and "Glob" in tools and "python files" in lower:
        folder = re.search(r"in the ([\w./-]+?)/? directory", item)
        where = f"{turn.cwd}/{folder.group(1)}" if folder else turn.cwd
        call = "Glob", {"pattern": "**/*.py", "path": where}
    return call


def _plan(turn: _Turn) -> list[Call]:
    """Every tool call the prompt asks for, in order (none: answer with text)."""
    prompt, tools = turn.prompt, turn.tools
    agent = _AGENT.search(prompt)
    delegate = next((t for t in ("Agent", "Task") if t in tools), None)
    if agent is not None and delegate is not None:
        name, task = agent.groups()
        given: dict[str, Any] = {"description": f"{name} task", "subagent_type": name}
        given["prompt"] = task[0].upper() + task[1:]
        if "run_in_background" in turn.schemas[delegate].get("properties", {}):
            given["run_in_background"] = False  # its report in the result: a fixed order
        return [(delegate, given)]
    if any(t.startswith("mcp__calc__") for t in tools):
        return _calc_plan(prompt, tools)
    calls: list[Call] = []
    for index, item in enumerate(_NUMBERED.findall(prompt) or [prompt]):
        call = _step_call(item, turn, turn.results[:index])
        if call is not None:
            calls.append(call)
    return calls


_FRAMING = re.compile(r"<(tools-used-before-summary|usage)>.*?</\1>", re.DOTALL)
_TAG = re.compile(r"</?[\w-]+>")
_PATH = re.compile(r"[\w./-]+\.\w+")


def _summary(result: str) -> str:
    """A short account of a tool result, for the answer that follows it."""
    framed = "[Subagent hand-back]" in result  # the CLI indents a subagent's own lines
    lines = [
        line.strip()
        for line in _TAG.sub("", _FRAMING.sub("", result)).splitlines()
        if line.strip()
        and not line.startswith(("[Subagent hand-back]", "agentId:"))
        and (not framed or line.startswith("  "))
    ]
    if not lines:
        return "(no output)"
    if len(lines) > 3 and all(_PATH.fullmatch(line) for line in lines):  # a file listing
        names = sorted(Path(line).name for line in lines)
        return f"{len(names)} files: {', '.join(names)}"
    first = lines[0]
    return first if len(first) <= 100 else first[:97] + "..."


def respond(request: ModelRequest) -> StepResult:
    """The scripted model's answer, from the request alone (the same for both SDKs).

    A prompt that asks for a tool (Write a file, run a Bash command, sleep, count slowly,
    the calculator's ``mcp__calc__*`` tools, an agent, Read a file, Glob...) gets a
    ``tool_use`` of it when the request offers it; a prompt with numbered steps, or a
    calculation with several operations, one call per step. Once they are done the
    answer is derived from the last tool result. A prompt that asks for the tools gets
    their names, any other ``Scripted answer to: <its first words>`` (with a thinking
    block before it if it asks to think and thinking is on).
    """
    turn = _Turn.of(request)
    plan = _plan(turn)
    if len(turn.results) < len(plan):
        name, arguments = plan[len(turn.results)]
        return tool_use(name, arguments)
    if turn.results:
        result, error = turn.results[-1]
        return text(f"{'The tool failed' if error else 'Done'}: {_summary(result)}")
    lower = turn.prompt.lower()
    if "tools" in lower and ("list" in lower or "available" in lower):
        names = sorted(turn.tools)
        return text(f"I have {len(names)} tools: {', '.join(names) or 'none'}.")
    answer = next((a for key, a in _CANNED.items() if key in lower), None)
    if answer is None:
        answer = f"Scripted answer to: {' '.join(turn.prompt.split()[:8])}"
    if turn.thinking and lower.startswith("think"):
        thought = thinking("Three jokes come to mind; the second is best.", signature=_SIGNATURE)
        return reply(thought, text(answer))
    return text(answer)


# --------------------------------------------------------------------------- the runs


@dataclass(frozen=True)
class Outcome:
    """One run of one example."""

    returncode: int
    stdout: str
    """Normalised (`normalise`)."""
    stderr: str
    """Normalised (`normalise`)."""
    requests: list[str] = field(default_factory=list)
    """The main-loop model requests, in order: their JSON bodies, normalised."""


def switch_imports(source: str, old: str = "claude_agent_sdk", new: str = "ccwire") -> str:
    """``source`` with its import lines naming package ``new`` instead of ``old``.

    Only ``from claude_agent_sdk... import`` and ``import claude_agent_sdk...`` change:
    a prompt that mentions ``src/claude_agent_sdk/types.py`` stays as it is.
    """
    line = re.compile(rf"^(\s*)(from|import)(\s+){re.escape(old)}\b", re.MULTILINE)
    return line.sub(rf"\1\2\3{new}", source)


_TEST_AGENT = """\
---
name: test-agent
description: A test agent for the filesystem agents example
tools: Read
---

You are a test agent. Answer in one short sentence.
"""
_COMMIT_COMMAND = """\
---
description: Create a git commit
---

Create a git commit with a short message describing the staged changes.
"""


def layout(into: Path, case: Case, *, ccwire: bool) -> Path:
    """Copy the sdist to ``into/claude-agent-sdk`` as the examples expect it; returns it.

    Adds what the SDK's repository has beside its examples and the sdist lacks: a
    project agent (``.claude/agents/test-agent.md``, which filesystem_agents.py looks
    for) and a project command (``.claude/commands/commit.md``, which setting_sources.py
    looks for). With ``ccwire`` the example's imports are switched (`switch_imports`);
    the case's own program goes to the root, its imports switched for the reference.
    """
    script = case.script
    root = into / "claude-agent-sdk"
    shutil.copytree(SDIST, root)
    (root / ".claude" / "agents").mkdir(parents=True)
    (root / ".claude" / "agents" / "test-agent.md").write_text(_TEST_AGENT, encoding="utf-8")
    (root / ".claude" / "commands").mkdir()
    (root / ".claude" / "commands" / "commit.md").write_text(_COMMIT_COMMAND, encoding="utf-8")
    if ccwire:
        original, target = EXAMPLES / script, root / "examples" / script
        target.write_text(switch_imports(original.read_text(encoding="utf-8")), encoding="utf-8")
        shutil.copystat(original, target)  # Glob lists the newest files first
    if case.program is not None:
        program = (Path(__file__).parent / case.program).read_text(encoding="utf-8")
        if not ccwire:
            program = switch_imports(program, "ccwire", "claude_agent_sdk")
        (root / case.program).write_text(program, encoding="utf-8")
    return root


_TMP = "/var/tmp" if Path("/var/tmp").is_dir() else None
"""Where the copies go: outside ``/tmp``, as a project would be. tool_permission_callback.py
lets writes under ``/tmp/`` through as they are and redirects the others (its
``updated_input``: the path worth running)."""


def run_example(
    python: str,
    case: Case,
    *,
    ccwire: bool,
    cli: str | None = None,
    extra_env: Mapping[str, str] | None = None,
) -> Outcome:
    """Run ``case`` in a fresh copy against a fresh scripted model."""
    with ScriptedModel(default=respond) as model, tempfile.TemporaryDirectory(dir=_TMP) as tmp:
        root = layout(Path(tmp), case, ccwire=ccwire)
        home = Path(tmp) / "home"
        home.mkdir()
        env = model.env(home, extra=extra_env)  # nothing else of this process's environment
        if cli is not None:
            env["CCWIRE_CLI_PATH"] = cli
        command = [case.program] if case.program else [f"examples/{case.script}", *case.args]
        done = subprocess.run(
            [python, *command],
            cwd=root, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
            timeout=TIMEOUT, check=False,
        )  # fmt: skip
        requests = [_request_text(r, tmp) for r in model.turn_requests]
        assert not model.errors, model.errors
        stdout, stderr = normalise(done.stdout, tmp), normalise(done.stderr, tmp)
        return Outcome(done.returncode, stdout, stderr, requests)


def run_both(
    case: Case, reference_python: str, cli: str, redis_url: str | None = None
) -> tuple[Outcome, Outcome]:
    """``(reference, ccwire)`` outcomes of ``case``, run side by side.

    With ``redis_url`` each run gets its own key prefix on that server.
    """

    def env(who: str) -> dict[str, str]:
        if redis_url is None:
            return {}
        return {"STORE_REDIS_URL": redis_url, "STORE_PREFIX": f"{who}-{uuid.uuid4()}"}

    with ThreadPoolExecutor(2) as pool:
        theirs = pool.submit(
            run_example, reference_python, case, ccwire=False, extra_env=env("reference")
        )
        ours = pool.submit(
            run_example, sys.executable, case, ccwire=True, cli=cli, extra_env=env("ccwire")
        )
        return theirs.result(), ours.result()


# --------------------------------------------------------------------------- normalising

_NOISE = [
    (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "<uuid>"),
    (re.compile(r"\b(toolu|msg|req|srvtoolu)_[A-Za-z0-9]+"), r"\1_<id>"),
    (re.compile(r"\ba[0-9a-f]{16}\b"), "<agent-id>"),  # the CLI's id of a subagent run
    (re.compile(r"\$\d+\.\d+"), "$<cost>"),
    (re.compile(r"\b\d+(\.\d+)?\s*ms\b"), "<n>ms"),
    (re.compile(r"(duration(?:_api)?_ms['\"]?(?::\s*|=))\d+"), r"\1<n>"),
    # named after the CLI's pid, in its temporary folder (CLAUDE_CODE_TMPDIR, else /tmp)
    (re.compile(r"[\w./<>-]*/cc-socks/\d+\.sock"), "<socket>"),
    (re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}", re.MULTILINE), "<time>"),
]
"""What differs from run to run and is not behaviour."""

_SET_LINE = re.compile(r"^(Message types received: )(\w+(?:, \w+)*)$", re.MULTILINE)
"""A line streaming_mode.py prints from a ``set``: its order changes from one process to
the next (string hashing is randomised), so its items are sorted."""


def _project_key(path: str) -> str:
    """How the CLI names the folder of a working directory's transcripts."""
    return re.sub(r"[^A-Za-z0-9]", "-", path)


def _sorted_items(found: re.Match[str]) -> str:
    return found.group(1) + ", ".join(sorted(found.group(2).split(", ")))


def normalise(out: str, tmp: str) -> str:
    """``out`` with `_NOISE` replaced and the run's directory ``tmp`` as ``<tmp>``."""
    out = out.replace(tmp, "<tmp>").replace(_project_key(tmp), "<tmp-key>")
    for pattern, replacement in _NOISE:
        out = pattern.sub(replacement, out)
    return _SET_LINE.sub(_sorted_items, out)


_BILLING = re.compile(r"(cc_version=[\d.]+)\.[0-9a-f]+")
"""The CLI's attribution header in the system prompt ends with a hash of the request."""


def _request_text(request: ModelRequest, tmp: str) -> str:
    """A model request's body as compared (``metadata`` holds the session id)."""
    body = {k: v for k, v in request.body.items() if k != "metadata"}
    return normalise(_BILLING.sub(r"\1", json.dumps(body, sort_keys=True)), tmp)


_LOG_LINE = re.compile(r"^<time> - (.*)$", re.MULTILINE)
_SDK_LOG = ("Using bundled Claude Code CLI",)
"""What the reference logs itself at INFO (ccwire has no bundled CLI to announce)."""


def log_lines(stderr: str) -> list[str]:
    """The records an example logs (hooks.py's format: ``<time> - <message>``)."""
    return [m for m in _LOG_LINE.findall(stderr) if not m.startswith(_SDK_LOG)]


_RAISED = re.compile(r"(?:claude_agent_sdk|ccwire)(?:\.\w+)*\.(\w+): (.*)")


def raised(stderr: str) -> str | None:
    """The exception a run ended with (``ResultError: ...``, its module left out), if any."""
    if "Traceback (most recent call last)" not in stderr:
        return None
    last = stderr.rstrip().splitlines()[-1]
    found = _RAISED.fullmatch(last)
    return f"{found.group(1)}: {found.group(2)}" if found else last
