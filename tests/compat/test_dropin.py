"""The drop-in (`ccwire compat install`) in a virtual environment of its own.

A venv is made once for the module (``--without-pip``; a ``.pth`` file puts ccwire's
source and the dev venv's packages on its path, so nothing is installed twice), and
the drop-in is installed into *its* site-packages, never into the dev venv. Then code
written for ``claude-agent-sdk`` runs there unchanged: every import answered by
ccwire's objects, patches seen, the distribution reported; langsmith's tracing
integration and Arize's openinference instrumentor (real packages, from the registry)
trace conversations on the real CLI against the scripted model. Where the real
``claude-agent-sdk`` is installed, the drop-in is refused and nothing is written.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import sysconfig
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import ccwire
from ccwire._app.reference_names import REFERENCE_NAMES, REFERENCE_VERSION
from ccwire.testing import ScriptedModel
from tests.compat.conftest import on_reference
from tests.compat.test_new_frames import CLI

TIMEOUT = 120
_UNSET = ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")


@dataclass(frozen=True)
class Venv:
    """A virtual environment for one drop-in."""

    python: Path
    site: Path

    def run(
        self,
        *args: str,
        extra_env: dict[str, str] | None = None,
        cwd: Path | None = None,
        timeout: float = TIMEOUT,
    ) -> subprocess.CompletedProcess[str]:
        # bytecode is written (the uninstall test checks that it goes too)
        env = {k: v for k, v in os.environ.items() if k not in _UNSET}
        env.update(extra_env or {})
        return subprocess.run(
            [str(self.python), *args],
            capture_output=True, text=True, timeout=timeout, env=env, check=False, cwd=cwd,
        )  # fmt: skip

    def ccwire(self, *args: str) -> subprocess.CompletedProcess[str]:
        return self.run("-m", "ccwire", "compat", *args)

    def program(self, source: str, **extra_env: str) -> Any:
        """Run ``source`` in the venv; its last line of output is JSON."""
        done = self.run("-c", textwrap.dedent(source), extra_env=extra_env)
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(done.stdout.strip().splitlines()[-1])

    def tree(self) -> set[str]:
        return {str(p.relative_to(self.site)) for p in self.site.rglob("*")}


def make_venv(where: Path, *, first_on_path: tuple[Path, ...] = ()) -> Venv:
    """A venv whose path holds ``first_on_path``, ccwire's source and this
    interpreter's site-packages (read through a ``.pth`` file)."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(where)], check=True, timeout=TIMEOUT
    )
    python = where / ("Scripts" if os.name == "nt" else "bin") / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True, timeout=TIMEOUT,
    ).stdout.strip()  # fmt: skip
    source = Path(ccwire.__file__).resolve().parents[1]
    ours = sysconfig.get_paths()
    paths = [*map(str, first_on_path), str(source), ours["purelib"], ours["platlib"]]
    Path(purelib, "_ccwire_dev.pth").write_text("\n".join(dict.fromkeys(paths)) + "\n")
    return Venv(python, Path(purelib))


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Venv:
    return make_venv(tmp_path_factory.mktemp("dropin") / "venv")


@pytest.fixture
def installed(venv: Venv) -> Iterator[Venv]:
    done = venv.ccwire("install")
    assert done.returncode == 0, done.stderr
    yield venv
    assert venv.ccwire("uninstall").returncode == 0


# --------------------------------------------------------------------------- the list


def test_the_names_are_the_references(reference_snapshot: dict[str, Any]) -> None:
    assert sorted(reference_snapshot["names"]) == list(REFERENCE_NAMES)
    assert reference_snapshot["version"] == REFERENCE_VERSION


# ---------------------------------------------------------------- install, uninstall


def test_status_on_a_clean_environment(venv: Venv) -> None:
    venv.ccwire("uninstall")
    done = venv.ccwire("status")
    assert done.returncode == 0, done.stderr
    assert "claude-agent-sdk drop-in: not installed" in done.stdout
    assert str(venv.site) in done.stdout
    status = json.loads(venv.ccwire("status", "--json").stdout)
    assert status["state"] == "absent" and status["real_sdk"] == [] and status["files"] == []
    assert venv.run("-c", "import claude_agent_sdk").returncode == 1  # nothing to import


def test_uninstall_leaves_nothing_behind(venv: Venv) -> None:
    venv.ccwire("uninstall")
    before = venv.tree()
    done = venv.ccwire("install")
    assert done.returncode == 0, done.stderr
    assert f"installed claude-agent-sdk {REFERENCE_VERSION}" in done.stdout
    status = json.loads(venv.ccwire("status", "--json").stdout)
    assert status["state"] == "installed" and not status["stale"]
    written = venv.tree() - before
    assert set(status["files"]) <= written
    # importing every module caches bytecode next to them: that goes too
    venv.program("""
        import json, claude_agent_sdk, claude_agent_sdk.types, claude_agent_sdk.client
        import claude_agent_sdk._internal.message_parser, claude_agent_sdk.testing
        print(json.dumps(True))
    """)
    assert any("__pycache__" in p for p in venv.tree() - before)
    again = venv.ccwire("install")  # a second install replaces the first
    assert again.returncode == 0, again.stderr
    done = venv.ccwire("uninstall")
    assert done.returncode == 0, done.stderr
    assert f"removed the drop-in ({len(status['files'])} files)" in done.stdout
    assert venv.tree() == before
    done = venv.ccwire("uninstall")
    assert done.returncode == 0 and "nothing to remove" in done.stdout


def test_every_import_is_answered_by_ccwires_objects(installed: Venv) -> None:
    found = installed.program("""
        import importlib, importlib.metadata as md, json, sys
        import ccwire, ccwire.testing, ccwire.types
        import claude_agent_sdk as sdk
        from claude_agent_sdk import *  # noqa: F403
        names = [n for n in sdk.__all__ if n != "__version__"]
        modules = {
            "claude_agent_sdk.types": (ccwire.types, ccwire.types.__all__),
            "claude_agent_sdk.query": (ccwire, ["query"]),
            "claude_agent_sdk.client": (ccwire, ["ClaudeSDKClient"]),
            "claude_agent_sdk._errors": (ccwire, ["ClaudeSDKError", "CLIConnectionError",
                "CLINotFoundError", "CLIJSONDecodeError", "ProcessError", "ResultError"]),
            "claude_agent_sdk._internal.transport": (ccwire, ["Transport"]),
            "claude_agent_sdk._internal.query": (
                importlib.import_module("ccwire._conversation.reference_query"), ["Query"]),
            "claude_agent_sdk.testing": (ccwire.testing, ["run_session_store_conformance"]),
            # the module the reference's testing package imports it from
            "claude_agent_sdk.testing.session_store_conformance": (
                ccwire.testing, ["run_session_store_conformance"]),
        }
        not_same = [n for n in names if getattr(sdk, n) is not getattr(ccwire, n)]
        for module, (source, wanted) in modules.items():
            loaded = importlib.import_module(module)
            not_same += [f"{module}.{n}" for n in wanted
                         if getattr(loaded, n) is not getattr(source, n)]
        from claude_agent_sdk._errors import MessageParseError
        from claude_agent_sdk._internal.message_parser import parse_message
        content = [{"type": "text", "text": "hi"}]
        parsed = parse_message({"type": "assistant", "message": {"model": "m", "content": content}})
        try:
            parse_message({"no": "type"})
        except MessageParseError as exc:
            refused = str(exc)
        dist = md.distribution("claude-agent-sdk")
        print(json.dumps({
            "all": sorted(sdk.__all__), "not_same": not_same,
            "star": "ClaudeSDKClient" in globals() and "Session" not in globals(),
            "query_is_function": sdk.query is ccwire.query,
            "version": sdk.__version__, "cli_version": importlib.import_module(
                "claude_agent_sdk._cli_version").__cli_version__,
            "metadata": [md.version("claude-agent-sdk"), md.version("claude_agent_sdk"),
                         dist.read_text("INSTALLER").strip(), dist.metadata["Name"]],
            "files": sorted(str(f) for f in dist.files),
            "parsed": type(parsed).__name__, "text": parsed.content[0].text,
            "unknown": parse_message({"type": "tool_progress"}), "refused": refused,
            "missing": importlib.util.find_spec(
                "claude_agent_sdk._internal.session_mutations") is None,
        }))
    """)
    assert found["all"] == list(REFERENCE_NAMES) and found["not_same"] == []
    assert found["star"] and found["query_is_function"]
    assert found["version"] == REFERENCE_VERSION and found["cli_version"] == "2.1.330"
    assert found["metadata"] == [REFERENCE_VERSION, REFERENCE_VERSION, "ccwire", "claude-agent-sdk"]
    assert "claude_agent_sdk/types.py" in found["files"]
    assert (found["parsed"], found["text"], found["unknown"]) == ("AssistantMessage", "hi", None)
    assert "missing 'type'" in found["refused"]
    assert found["missing"]  # the reference's internals ccwire has no equivalent of


def test_a_patch_made_through_the_drop_in_is_what_code_gets(installed: Venv) -> None:
    # what integrations do: wrap methods on the class, replace the query function
    found = installed.program("""
        import importlib, json, sys
        import ccwire
        import claude_agent_sdk
        from claude_agent_sdk import ClaudeSDKClient
        query_module = importlib.import_module("claude_agent_sdk.query")
        original = query_module.query

        def traced_query(*args, **kwargs):
            return original(*args, **kwargs)

        query_module.query = traced_query
        claude_agent_sdk.query = query_module.query
        original_connect = claude_agent_sdk.client.ClaudeSDKClient.connect

        async def traced_connect(self, *args, **kwargs):
            return await original_connect(self, *args, **kwargs)

        claude_agent_sdk.client.ClaudeSDKClient.connect = traced_connect
        from claude_agent_sdk import query
        print(json.dumps({
            "query": query is traced_query and original is ccwire.query,
            "class": ClaudeSDKClient.connect is traced_connect
                     and ccwire.ClaudeSDKClient.connect is traced_connect,
        }))
    """)
    assert found == {"query": True, "class": True}


_SUBPROCESS_TRANSPORT = """
    import json, os, sys
    import anyio
    from claude_agent_sdk import (
        ClaudeAgentOptions, ClaudeSDKClient, CLINotFoundError, ProcessError, ResultMessage,
        Transport, query,
    )
    from claude_agent_sdk._internal.transport.subprocess_cli import SubprocessCLITransport

    events = []

    class Timed(SubprocessCLITransport):  # what projects do to time or wrap the CLI
        def _build_command(self):
            command = super()._build_command()
            events.append(["command", os.path.basename(command[0])])
            return ["env", "MARK=wrapped", *command]

        async def connect(self):
            await super().connect()
            events.append(["connected", os.path.basename(self._cli_path), self.is_ready()])

        async def write(self, data):
            events.append(["write", json.loads(data)["type"]])
            await super().write(data)

        async def close(self):
            await super().close()
            events.append(["closed", self.is_ready()])

    class Middleware(Transport):  # holds the reference's transport, not derived from it
        def __init__(self, inner):
            self.inner = inner
        async def connect(self): await self.inner.connect()
        async def write(self, data): await self.inner.write(data)
        def read_messages(self): return self.inner.read_messages()
        async def close(self): await self.inner.close()
        def is_ready(self): return self.inner.is_ready()
        async def end_input(self): await self.inner.end_input()

    def options(**more):
        return ClaudeAgentOptions(cli_path=sys.argv[1], cwd=sys.argv[2],
                                  env=json.loads(sys.argv[3]), **more)

    async def main():
        out = {}
        opts = options(allowed_tools=["Bash"])
        async for message in query(prompt="mark?", options=opts, transport=Timed("mark?", opts)):
            if isinstance(message, ResultMessage):
                out["query"] = message.result
        opts = options()
        async with ClaudeSDKClient(opts, Middleware(SubprocessCLITransport("", opts))) as client:
            await client.query("again")
            out["client"] = [type(m).__name__ async for m in client.receive_response()]
        bad = options(extra_args={"no-such-flag": None})
        try:
            async for _ in query(prompt="x", options=bad, transport=Timed("x", bad)):
                pass
        except ProcessError as exc:
            out["bad_flag"] = exc.exit_code
        unresolved = SubprocessCLITransport("x", ClaudeAgentOptions())
        try:
            unresolved._build_command()
        except CLINotFoundError as exc:
            out["unresolved"] = [str(exc), unresolved._cli_path, unresolved.is_ready()]
        out["events"] = events
        return out

    print(json.dumps(anyio.run(main)))
"""


def _on_both(
    installed: Venv,
    reference_python: Path,
    tmp_path: Path,
    source: str,
    *steps: Any,
    check: Callable[[ScriptedModel], None] = lambda model: None,
) -> tuple[Any, Any]:
    """Run ``source`` on the reference (in its venv) and on ccwire (through the drop-in),
    each against the real CLI and a scripted model playing ``steps`` (``check``ed
    after the run); its arguments are the CLI, a fresh home and the model's
    environment, its last line of output JSON. Returns (reference's, ccwire's)."""
    from ccwire.testing import ScriptedModel

    if CLI is None:
        pytest.skip("Claude Code CLI not installed (run `make cli`)")
    outputs = []
    for side, run in (
        ("reference", lambda *args: subprocess.run(
            [str(reference_python), *args],
            capture_output=True, text=True, timeout=TIMEOUT, check=False,
        )),
        ("ccwire", installed.run),
    ):  # fmt: skip
        with ScriptedModel(*steps) as model:
            home = tmp_path / side
            home.mkdir()
            env = json.dumps(model.env(str(home)))
            done = run("-c", textwrap.dedent(source), str(CLI), str(home), env)
            assert done.returncode == 0, done.stderr[-3000:]
            outputs.append(json.loads(done.stdout.strip().splitlines()[-1]))
            check(model)
    return outputs[0], outputs[1]


@pytest.mark.e2e
def test_the_references_subprocess_transport_subclassed_and_wrapped(
    installed: Venv, reference_python: Path, tmp_path: Path
) -> None:
    # projects import SubprocessCLITransport from the reference's private module: they
    # subclass it to time or wrap the CLI (connect/write/close/_build_command) and pass
    # it as transport=, or hold it in a middleware transport. On the drop-in the import
    # failed (ModuleNotFoundError). Run on both against the real CLI: the same
    from ccwire.testing import text, tool_use

    def wrapped_command_ran(model: ScriptedModel) -> None:  # the Bash tool saw `env`'s
        assert model.turn_requests[1].tool_results()[0].content == "wrapped"

    call = tool_use("Bash", {"command": "echo $MARK"})
    reference, ours = _on_both(
        installed, reference_python, tmp_path, _SUBPROCESS_TRANSPORT,
        call, text("done"), text("hi"), check=wrapped_command_ran,
    )  # fmt: skip
    assert ours == reference
    assert ours["query"] == "done" and ours["bad_flag"] == 1
    assert ours["events"][:3] == [
        ["command", "claude"], ["connected", "claude", True], ["write", "control_request"]
    ]  # fmt: skip
    assert ours["events"][-1] == ["closed", False]


_PROCESS_QUERY_PATCHED = """
import functools, json, sys
from unittest import mock
import anyio
import claude_agent_sdk
from claude_agent_sdk import AssistantMessage, ClaudeAgentOptions, ResultMessage, TextBlock
from claude_agent_sdk._internal.client import (
    InternalClient, SubprocessCLITransport, Transport, parse_message,
)

FAKE = [AssistantMessage(content=[TextBlock(text="recorded")], model="m"),
        ResultMessage(subtype="success", duration_ms=1, duration_api_ms=1, is_error=False,
                      num_turns=1, session_id="s", result="recorded")]

async def fake_process_query(self, prompt, options, transport=None):  # a test's fixture
    for message in FAKE:
        yield message

async def failing_process_query(self, prompt, options, transport=None):
    raise ValueError("Connection failed")
    yield

traced = []
original = InternalClient.process_query

@functools.wraps(original)
async def tracing_process_query(self, *args, **kwargs):  # an integration's wrapper
    traced.append(sorted(kwargs))
    async for message in original(self, *args, **kwargs):
        traced.append(type(message).__name__)
        yield message

async def main():
    out = {}
    with mock.patch("claude_agent_sdk._internal.client.InternalClient.process_query",
                    fake_process_query):
        out["fed"] = [[type(m).__name__, getattr(m, "result", None)]
                      async for m in claude_agent_sdk.query(prompt="hi")]
    with mock.patch("claude_agent_sdk._internal.client.InternalClient.process_query",
                    failing_process_query):
        try:
            async for _ in claude_agent_sdk.query(prompt="hi"):
                pass
        except ValueError as exc:
            out["failed"] = str(exc)
    InternalClient.process_query = tracing_process_query
    try:
        options = ClaudeAgentOptions(cli_path=sys.argv[1], cwd=sys.argv[2],
                                     env=json.loads(sys.argv[3]))
        out["live"] = [m.result async for m in claude_agent_sdk.query(prompt="hi", options=options)
                       if isinstance(m, ResultMessage)]
    finally:
        InternalClient.process_query = original
    out["traced"] = traced
    # what the reference's module imports, patched or read there by some projects
    frame = {"type": "assistant", "message": {"model": "m", "content": []}}
    out["names"] = [type(parse_message(frame)).__name__,
                    issubclass(SubprocessCLITransport, Transport)]
    return out

print(json.dumps(anyio.run(main)))
"""


@pytest.mark.e2e
def test_a_patch_of_the_references_internal_client_is_what_query_runs(
    installed: Venv, reference_python: Path, tmp_path: Path
) -> None:
    # tracing integrations wrap InternalClient.process_query, "the method query()
    # funnels through", and tests (dd-trace-py's claude_agent_sdk fixtures) patch it to
    # feed recorded messages to query(). On the drop-in there was no
    # claude_agent_sdk._internal.client: mock.patch raised ModuleNotFoundError
    from ccwire.testing import text

    reference, ours = _on_both(
        installed, reference_python, tmp_path, _PROCESS_QUERY_PATCHED, text("live answer")
    )
    assert ours == reference
    assert ours["fed"] == [["AssistantMessage", None], ["ResultMessage", "recorded"]]
    assert ours["failed"] == "Connection failed" and ours["live"] == ["live answer"]
    assert ours["traced"][0] == ["options", "prompt", "transport"]
    assert ours["names"] == ["AssistantMessage", True]


_PRIVATE_QUERY = """
import json, sys
import anyio
from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient, ResultMessage
from claude_agent_sdk._internal.query import Query

def options():
    return ClaudeAgentOptions(cli_path=sys.argv[1], cwd=sys.argv[2], env=json.loads(sys.argv[3]))

async def failure(request, query=None, **kwargs):  # the reference raises a bare Exception
    try:
        await (query or client._query)._send_control_request(request, **kwargs)
    except Exception as exc:
        return [type(exc).__name__, str(exc)]
    return None

async def main():
    global client
    out = {}
    client = ClaudeSDKClient(options())
    out["before"] = client._query is None
    async with client:
        query = client._query
        out["query"] = [isinstance(query, Query), client._query is query]
        answer = await query._send_control_request({"subtype": "mcp_status"})
        out["mcp_status"] = [type(answer).__name__, answer]
        out["mode"] = await query._send_control_request(
            {"subtype": "set_permission_mode", "mode": "acceptEdits"}, timeout=30
        )
        out["timed_out"] = await failure({"subtype": "mcp_status"}, timeout=0)
        out["refused"] = await failure({"subtype": "set_permission_mode", "mode": "no-such"})
        out["unknown"] = await failure({"subtype": "no_such_request"})
        await client.query("hi")
        out["turn"] = [m.result async for m in client.receive_response()
                       if isinstance(m, ResultMessage)]
        # what public code does: its own bound, around the request
        with anyio.fail_after(30):
            out["bounded"] = await client._query._send_control_request({"subtype": "mcp_status"})
    out["after"] = client._query is None
    out["closed"] = await failure({"subtype": "mcp_status"}, query)
    print(json.dumps(out))

anyio.run(main)
"""


@pytest.mark.e2e
def test_the_references_private_query_sends_control_requests(
    installed: Venv, reference_python: Path, tmp_path: Path
) -> None:
    # code reaches past ClaudeSDKClient's methods into `client._query`: tests it for None,
    # and sends the CLI's control requests that have no method through
    # `client._query._send_control_request({"subtype": ...})` (get_usage, interrupt with
    # cancel_queued, apply_flag_settings...). On ccwire `client._query` raised
    # AttributeError. Run on both against the real CLI: the same answers, dicts
    from ccwire.testing import text

    reference, ours = _on_both(
        installed, reference_python, tmp_path, _PRIVATE_QUERY, text("answered")
    )
    failures = ("timed_out", "refused", "unknown", "closed")
    assert {k: v for k, v in ours.items() if k not in failures} == {
        k: v for k, v in reference.items() if k not in failures
    }
    assert ours["query"] == [True, True] and ours["before"] and ours["after"]
    assert ours["mcp_status"] == ["dict", {"mcpServers": []}] and ours["turn"] == ["answered"]
    assert ours["mode"] == {"mode": "acceptEdits"}
    # where the reference raises a bare Exception, ccwire raises its typed errors (each
    # an Exception), whose text holds the CLI's
    assert reference["timed_out"] == ["Exception", "Control request timeout: mcp_status"]
    assert ours["timed_out"][0] == "ControlTimeoutError" and "mcp_status" in ours["timed_out"][1]
    for key, typed in (("refused", "ControlProtocolError"), ("unknown", "UnsupportedFeatureError")):
        assert reference[key][0] == "Exception" and ours[key][0] == typed
        assert reference[key][1] in ours[key][1]
    assert ours["closed"][0] == reference["closed"][0] == "CLIConnectionError"


def _fake_real_sdk(site: Path) -> None:
    """What ``pip install claude-agent-sdk`` leaves in ``site``."""
    (site / "claude_agent_sdk").mkdir()
    (site / "claude_agent_sdk" / "__init__.py").write_text("__version__ = '0.2.187'\n")
    info = site / "claude_agent_sdk-0.2.187.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: claude-agent-sdk\nVersion: 0.2.187\n"
    )
    (info / "INSTALLER").write_text("pip\n")
    (info / "RECORD").write_text(
        "claude_agent_sdk/__init__.py,,\nclaude_agent_sdk-0.2.187.dist-info/RECORD,,\n"
    )


def test_the_real_sdk_is_never_hidden(tmp_path: Path) -> None:
    venv = make_venv(tmp_path / "venv")
    _fake_real_sdk(venv.site)
    before = venv.tree()
    done = venv.ccwire("install")
    assert done.returncode == 1
    assert "ccwire: error: the real claude-agent-sdk is installed here" in done.stderr
    assert "pip uninstall claude-agent-sdk" in done.stderr  # the hint
    assert venv.tree() == before  # nothing written
    status = json.loads(venv.ccwire("status", "--json").stdout)
    assert status["state"] == "real-sdk" and "claude-agent-sdk 0.2.187" in status["real_sdk"][0]
    assert "not installable here" in venv.ccwire("status").stdout
    done = venv.ccwire("uninstall")
    assert done.returncode == 1 and "not installed by ccwire" in done.stderr
    assert venv.tree() == before  # nothing removed


def test_a_claude_agent_sdk_importable_from_elsewhere_is_not_hidden(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "claude_agent_sdk").mkdir()
    (checkout / "claude_agent_sdk" / "__init__.py").write_text("")
    venv = make_venv(tmp_path / "venv", first_on_path=(checkout,))
    done = venv.ccwire("install")
    assert done.returncode == 1, done.stdout
    assert f"a claude_agent_sdk package at {checkout / 'claude_agent_sdk'}" in done.stderr
    assert not (venv.site / "claude_agent_sdk").exists()


def test_compat_needs_an_action(venv: Venv) -> None:
    done = venv.run("-m", "ccwire", "compat")
    assert done.returncode == 2 and "install" in done.stderr


# ------------------------------------------------------------- real integrations


def _needs(*modules: str) -> None:
    if CLI is None:
        pytest.skip("Claude Code CLI not installed (run `make cli`)")
    for module in modules:
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (it is in the dev extra)")


_LANGSMITH = """
    import json, os, tempfile, threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    import anyio
    import langsmith
    from langsmith.integrations.claude_agent_sdk import configure_claude_agent_sdk

    received = []  # what reached the (local, fake) LangSmith API
    root_posted = threading.Event()

    class LangSmithAPI(BaseHTTPRequestHandler):
        def _store(self):
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            run = json.loads(body) if body else None
            received.append({"method": self.command, "path": self.path, "run": run})
            if run and run.get("name") == "ccwire-compat":
                root_posted.set()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b"{}")

        do_POST = do_PATCH = _store

        def do_GET(self):
            self.send_response(404)
            self.end_headers()

        def log_message(self, *args):
            pass

    api = ThreadingHTTPServer(("127.0.0.1", 0), LangSmithAPI)
    threading.Thread(target=api.serve_forever, daemon=True).start()

    assert configure_claude_agent_sdk(name="ccwire-compat")
    import claude_agent_sdk as sdk
    from ccwire.testing import ScriptedModel, text, tool_use

    @langsmith.traceable(name="inner-step")
    def inner(a, b):
        return a + b

    @sdk.tool("add", "Add two numbers", {"a": int, "b": int})
    async def add(args):
        return {"content": [{"type": "text", "text": str(inner(args["a"], args["b"]))}]}

    async def main():
        ls = langsmith.Client(api_url=f"http://127.0.0.1:{api.server_port}", api_key="fake",
                              auto_batch_tracing=False)
        home, cwd = tempfile.mkdtemp(), tempfile.mkdtemp()
        seen = []
        def call_add(request):
            # langsmith opens its root run when receive_response() starts, and posts it
            # from a thread; a PreToolUse hook that comes first finds no run to nest in
            # (so would the reference's): answer the model's first turn after that post
            assert root_posted.wait(30), "langsmith never posted its root run"
            return tool_use("mcp__calc__add", {"a": 2, "b": 3})

        with ScriptedModel(call_add, text("5")) as model:
            options = sdk.ClaudeAgentOptions(
                cli_path=os.environ["CCWIRE_CLI_PATH"], cwd=cwd, env=model.env(home),
                mcp_servers={"calc": sdk.create_sdk_mcp_server("calc", tools=[add])},
                allowed_tools=["mcp__calc__add"],
            )
            with langsmith.tracing_context(client=ls, enabled=True):
                async with sdk.ClaudeSDKClient(options=options) as client:
                    await client.query("add 2 and 3")
                    async for message in client.receive_response():
                        seen.append(type(message).__name__)
        return seen

    seen = anyio.run(main)
    print(json.dumps({"seen": seen, "wrapped": getattr(add.handler, "_langsmith_wrapped", False),
                      "received": received}))
"""


@pytest.mark.e2e
def test_langsmith_traces_a_conversation_on_ccwire(installed: Venv) -> None:
    _needs("langsmith")
    out = installed.program(_LANGSMITH, CCWIRE_CLI_PATH=str(CLI))
    assert out["wrapped"]  # langsmith replaced the tool's handler: the tool took it
    assert out["seen"][-1] == "ResultMessage" and "UserMessage" in out["seen"]
    runs: dict[str, dict[str, Any]] = {}
    for request in out["received"]:
        assert request["method"] in ("POST", "PATCH"), request
        run = request["run"]
        runs.setdefault(run["id"], {}).update({k: v for k, v in run.items() if v is not None})
    by_name: dict[str, list[dict[str, Any]]] = {}
    for run in runs.values():
        by_name.setdefault(run["name"], []).append(run)
    (root,) = by_name["ccwire-compat"]
    assert root["run_type"] == "chain" and "parent_run_id" not in root
    assert root["inputs"] == {"prompt": "add 2 and 3"}
    assert root["outputs"]["content"] == [{"type": "text", "text": "5"}]
    metadata = root["extra"]["metadata"]
    assert metadata["ls_integration_version"] == REFERENCE_VERSION  # from the dist-info
    assert metadata["num_turns"] == 2 and metadata["is_error"] is False
    turns = by_name["claude.assistant.turn"]
    assert len(turns) == 2 and all(t["parent_run_id"] == root["id"] for t in turns)
    assert {t["outputs"]["stop_reason"] for t in turns} == {"tool_use", "end_turn"}
    (tool_run,) = by_name["mcp__calc__add"]
    assert tool_run["run_type"] == "tool" and tool_run["parent_run_id"] == root["id"]
    assert tool_run["inputs"] == {"input": {"a": 2, "b": 3}}
    assert tool_run["outputs"]["content"] == [{"type": "text", "text": "5"}]
    # the handler ran under langsmith's wrapper: a traced call inside it nests in the tool
    (step,) = by_name["inner-step"]
    assert step["parent_run_id"] == tool_run["id"] and step["outputs"] == {"output": 5}


_OPENINFERENCE = """
    import json, os, tempfile

    import anyio
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from openinference.instrumentation.claude_agent_sdk import ClaudeAgentSDKInstrumentor

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = ClaudeAgentSDKInstrumentor()
    instrumentor.instrument(tracer_provider=provider)  # finds claude-agent-sdk's metadata

    import claude_agent_sdk as sdk
    from ccwire.testing import ScriptedModel, text, tool_use

    @sdk.tool("add", "Add two numbers", {"a": int, "b": int})
    async def add(args):
        return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}

    async def main():
        home, cwd = tempfile.mkdtemp(), tempfile.mkdtemp()
        steps = [tool_use("mcp__calc__add", {"a": 2, "b": 3}), text("5"), text("two")]
        with ScriptedModel(*steps) as model:
            options = sdk.ClaudeAgentOptions(
                cli_path=os.environ["CCWIRE_CLI_PATH"], cwd=cwd, env=model.env(home),
                mcp_servers={"calc": sdk.create_sdk_mcp_server("calc", tools=[add])},
                allowed_tools=["mcp__calc__add"],
            )
            async for message in sdk.query(prompt="add 2 and 3", options=options):
                pass
            async with sdk.ClaudeSDKClient(options=options) as client:
                await client.query("second")
                async for message in client.receive_response():
                    pass

    anyio.run(main)
    spans = [{
        "name": s.name, "id": s.context.span_id, "parent": s.parent.span_id if s.parent else None,
        "status": s.status.status_code.name, "attributes": dict(s.attributes),
    } for s in exporter.get_finished_spans()]
    print(json.dumps({"instrumented": instrumentor.is_instrumented_by_opentelemetry,
                      "spans": spans}))
"""


@pytest.mark.e2e
def test_openinference_instruments_ccwire(installed: Venv) -> None:
    _needs("openinference.instrumentation.claude_agent_sdk", "opentelemetry.sdk")
    out = installed.program(_OPENINFERENCE, CCWIRE_CLI_PATH=str(CLI))
    assert out["instrumented"]
    spans = {s["name"]: s for s in out["spans"]}
    assert len(spans) == len(out["spans"]) == 3, [s["name"] for s in out["spans"]]
    query = spans["ClaudeAgentSDK.query"]
    assert query["parent"] is None and query["status"] == "OK"
    assert query["attributes"]["openinference.span.kind"] == "AGENT"
    assert query["attributes"]["input.value"] == "add 2 and 3"
    assert query["attributes"]["output.value"] == "5"
    tool = spans["mcp__calc__add"]
    assert tool["parent"] == query["id"] and tool["attributes"]["openinference.span.kind"] == "TOOL"
    assert json.loads(tool["attributes"]["input.value"]) == {"a": 2, "b": 3}
    turn = spans["ClaudeAgentSDK.ClaudeSDKClient.receive_response"]
    assert turn["attributes"]["input.value"] == "second"
    assert turn["attributes"]["output.value"] == "two"


# ------------------------------------------------------ the same parts, in process


def test_install_and_uninstall_in_a_directory(tmp_path: Path) -> None:
    from ccwire._app.compat import dropin_status, install_dropin, uninstall_dropin

    status = install_dropin(tmp_path)
    assert status.installed and not status.stale and status.real_sdk == ()
    record = (tmp_path / f"claude_agent_sdk-{REFERENCE_VERSION}.dist-info" / "RECORD").read_text()
    for line in record.splitlines():
        path, digest, size = line.split(",")
        if digest:  # every file but RECORD carries its hash and size, as pip writes them
            assert digest.startswith("sha256=") and int(size) == (tmp_path / path).stat().st_size
    for path in status.files:
        if path.endswith(".py"):  # every module is valid Python
            compile((tmp_path / path).read_text(), path, "exec")
    assert dropin_status(tmp_path).files == status.files
    assert sorted(uninstall_dropin(tmp_path)) == sorted(status.files)
    assert list(tmp_path.iterdir()) == []
    assert uninstall_dropin(tmp_path) == []


def test_a_drop_in_of_another_ccwire_version_is_stale(tmp_path: Path) -> None:
    from ccwire._app.compat import dropin_status, install_dropin

    install_dropin(tmp_path)
    marker = tmp_path / f"claude_agent_sdk-{REFERENCE_VERSION}.dist-info" / "ccwire.json"
    marker.write_text(json.dumps({"ccwire_version": "0.0.1"}))
    status = dropin_status(tmp_path)
    assert status.installed and status.stale and status.to_dict()["stale"] is True
    assert install_dropin(tmp_path).ccwire_version == ccwire.__version__  # refreshed


def test_a_directory_it_did_not_write_is_left_alone(tmp_path: Path) -> None:
    from ccwire._app.compat import DropInError, install_dropin, uninstall_dropin

    (tmp_path / "claude_agent_sdk").mkdir()
    (tmp_path / "claude_agent_sdk" / "__init__.py").write_text("# someone else's\n")
    with pytest.raises(DropInError, match="did not write") as refused:
        install_dropin(tmp_path)
    assert "pip uninstall claude-agent-sdk" in refused.value.hint
    with pytest.raises(DropInError, match="not installed by ccwire"):
        uninstall_dropin(tmp_path)
    assert (tmp_path / "claude_agent_sdk" / "__init__.py").read_text() == "# someone else's\n"


def test_a_record_naming_other_files_removes_nothing(tmp_path: Path) -> None:
    from ccwire._app.compat import DropInError, install_dropin, uninstall_dropin

    install_dropin(tmp_path)
    (tmp_path / "precious.txt").write_text("keep")
    record = tmp_path / f"claude_agent_sdk-{REFERENCE_VERSION}.dist-info" / "RECORD"
    record.write_text(record.read_text() + "precious.txt,,\n")
    with pytest.raises(DropInError, match="outside the drop-in"):
        uninstall_dropin(tmp_path)
    assert (tmp_path / "precious.txt").exists() and (tmp_path / "claude_agent_sdk").exists()


def test_compat_status_through_the_command_line() -> None:
    import io

    from ccwire._app.io import CliIO
    from ccwire._app.main import main

    cli_io = CliIO(io.StringIO(), io.StringIO(), io.StringIO(), {})
    assert main(["compat", "status", "--json"], io=cli_io) == 0
    assert isinstance(cli_io.stdout, io.StringIO)
    status = json.loads(cli_io.stdout.getvalue())
    assert status["state"] == "absent"  # the dev venv never holds the drop-in
    cli_io = CliIO(io.StringIO(), io.StringIO(), io.StringIO(), {})
    assert main(["compat", "status"], io=cli_io) == 0
    assert isinstance(cli_io.stdout, io.StringIO)
    assert "drop-in: not installed" in cli_io.stdout.getvalue()


SESSION_PATHS = """
    import json, os, sys
    from pathlib import Path
    home = Path(sys.argv[1])
    os.environ["CLAUDE_CONFIG_DIR"] = str(home / "config")
    from claude_agent_sdk._internal.sessions import (
        MAX_SANITIZED_LENGTH, _canonicalize_path, _find_project_dir, _get_claude_config_home_dir,
        _get_project_dir, _get_projects_dir, _sanitize_path,
        get_session_info, get_session_messages, list_sessions, project_key_for_directory,
    )
    import claude_agent_sdk
    import claude_agent_sdk._internal.sessions as sessions
    work = home / "work dir"
    work.mkdir()
    (home / "link").symlink_to(work)
    canonical = _canonicalize_path(str(home / "link"))
    _get_project_dir(canonical).mkdir(parents=True)
    long = "/" + "x" * 250
    Path(str(_get_projects_dir() / _sanitize_path(long)[:MAX_SANITIZED_LENGTH]) + "-other").mkdir()
    rel = lambda p: None if p is None else str(Path(p).relative_to(home))
    print(json.dumps({
        "canonical": rel(canonical), "config": rel(_get_claude_config_home_dir()),
        "projects": rel(_get_projects_dir()),
        "override": str(_get_projects_dir({"CLAUDE_CONFIG_DIR": "/elsewhere"})),
        "project": rel(_get_project_dir(canonical)), "found": rel(_find_project_dir(canonical)),
        "long": rel(_find_project_dir(long)), "none": _find_project_dir(str(home / "nothing")),
        "sanitized": [_sanitize_path("/a b/c.d"), len(_sanitize_path(long))],
        "public": sorted(n for n in ("SDKSessionInfo", "SessionKey", "SessionMessage",
                  "SessionStore", "get_session_info", "get_session_messages",
                  "get_subagent_messages", "list_sessions", "list_subagents",
                  "project_key_for_directory")
                  if getattr(sessions, n) is getattr(claude_agent_sdk, n)),
        "key": project_key_for_directory(canonical) == _get_project_dir(canonical).name,
        "sessions": [len(list_sessions(directory=canonical)),
                     get_session_info("123e4567-e89b-12d3-a456-426614174000"),
                     get_session_messages("123e4567-e89b-12d3-a456-426614174000")],
    }))
"""


def test_the_references_session_path_helpers(
    installed: Venv, reference_python: Path, tmp_path: Path
) -> None:
    # Code that finds the CLI's transcripts imports these private helpers of the
    # reference's `_internal.sessions` (`_canonicalize_path`, `_find_project_dir`, ...).
    outputs = []
    for side, python in (("sideA", reference_python), ("sideB", installed.python)):
        home = tmp_path / side
        home.mkdir()
        done = subprocess.run(
            [str(python), "-c", textwrap.dedent(SESSION_PATHS), str(home)],
            capture_output=True, text=True, timeout=TIMEOUT, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        # the home's path (in the project keys) names the side
        outputs.append(json.loads(done.stdout.strip().splitlines()[-1].replace(side, "SIDE")))
    reference, ours = outputs
    assert ours == reference
    assert reference["found"] == reference["project"] != None  # noqa: E711
    assert reference["long"] is not None and reference["long"].endswith("-other")
    assert len(reference["public"]) == 10 and reference["key"]


BUFFER_CAP = """
import json
from claude_agent_sdk._internal.transport import subprocess_cli
print(json.dumps(subprocess_cli._DEFAULT_MAX_BUFFER_SIZE))
"""


def test_the_references_default_line_cap_reads_as_its_value(
    installed: Venv, reference_python: Path
) -> None:
    # Code reads it to check its own max_buffer_size is above the SDK's default (ccwire's
    # default has no cap: a program that raised the module's value loses nothing)
    assert installed.program(BUFFER_CAP) == on_reference(reference_python, BUFFER_CAP)
