"""OpenTelemetry on the wire: ``ccwire batch --otel`` exports over OTLP/HTTP to a real
collector the test starts (Arize Phoenix's local server, from PyPI), read back through
its REST API.

* A batch on a local Ray cluster is one trace: one ``ccwire.batch`` span, a task span
  per task, one ``invoke_agent`` span per session, one ``execute_tool`` span per tool
  call (in-process and built in), with the tokens and cost of the results file.
* With ``--otel-cli`` the CLI's own spans join the same trace under the session's span
  (the CLI honours ``TRACEPARENT``).

Phoenix lives in a venv of its own (``make phoenix-venv``; ``CCWIRE_PHOENIX_PYTHON``
names its interpreter). Without it these tests skip, or fail under
``CCWIRE_REQUIRE_PHOENIX=1`` (``make test``).
"""

from __future__ import annotations

import json
import os
import queue
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ccwire.batch import BatchResult, read_results

from .conftest import CLI_PATH

pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason="needs ccwire[otel]")

REPO = Path(__file__).resolve().parents[2]
STARTUP_SECONDS = 120
SCRIPT = [
    {"reply": [{"tool_use": {"name": "mcp__calc__add", "input": {"a": 2, "b": 40}}},
               {"tool_use": {"name": "Bash", "input": {"command": "echo built-in"}}}]},
    {"text": "the sum is {tool_results}"},
]  # fmt: skip


def _phoenix_python() -> str:
    explicit = os.environ.get("CCWIRE_PHOENIX_PYTHON")
    candidate = explicit or str(REPO / ".venv-phoenix" / "bin" / "python")
    if not Path(candidate).exists():
        reason = f"Arize Phoenix is not installed ({candidate}; run `make phoenix-venv`)"
        if os.environ.get("CCWIRE_REQUIRE_PHOENIX") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    return candidate


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Phoenix:
    """A Phoenix server on loopback, in a temporary working directory."""

    def __init__(self, python: str, workdir: Path) -> None:
        self.port = _free_port()
        env = {
            **os.environ,
            "PHOENIX_WORKING_DIR": str(workdir),
            "PHOENIX_HOST": "127.0.0.1",
            "PHOENIX_PORT": str(self.port),
            "PHOENIX_GRPC_PORT": str(_free_port()),
            "PHOENIX_TELEMETRY_ENABLED": "false",
        }
        self.proc = subprocess.Popen(
            [python, "-m", "phoenix.server.main", "serve"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.log: list[str] = []
        lines: queue.Queue[str | None] = queue.Queue()

        def pump() -> None:
            assert self.proc.stdout is not None
            for line in self.proc.stdout:
                self.log.append(line)
                lines.put(line)
            lines.put(None)

        threading.Thread(target=pump, daemon=True).start()
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:  # up once uvicorn says it listens
            line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            if line is None:
                raise RuntimeError("Phoenix exited:\n" + "".join(self.log[-30:]))
            if "Uvicorn running on" in line:
                break

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def spans(self) -> list[dict[str, Any]]:
        url = f"{self.endpoint}/v1/projects/default/spans/otlpv1?limit=1000"
        with urllib.request.urlopen(url, timeout=30) as answer:
            return list(json.load(answer)["data"])

    def wait_for_spans(self, done: Callable[[list[dict[str, Any]]], bool]) -> list[dict[str, Any]]:
        """The stored spans once `done` holds for them (Phoenix stores what it receives
        in the background; polled, at most 60 s)."""
        deadline = time.monotonic() + 60
        while True:
            got = self.spans()
            if done(got) or time.monotonic() > deadline:
                return got
            time.sleep(0.5)

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=30)


@pytest.fixture
def phoenix(tmp_path: Path) -> Iterator[Phoenix]:
    server = Phoenix(_phoenix_python(), tmp_path / "phoenix")
    try:
        yield server
    finally:
        server.close()


def attrs(span: dict[str, Any]) -> dict[str, Any]:
    """A span's attributes from Phoenix's OTLP JSON (``{"key", "value": {"*_value"}}``)."""
    out: dict[str, Any] = {}
    for item in span.get("attributes") or []:
        value: dict[str, Any] = {k: v for k, v in item["value"].items() if v is not None}
        out[item["key"]] = next(iter(value.values()), None)
    return out


def batch_command(tmp_path: Path, tasks: int, *extra: str) -> list[str]:
    script = tmp_path / "steps.json"
    script.write_text(json.dumps(SCRIPT))
    task_file = tmp_path / "tasks.jsonl"
    task_file.write_text("".join(json.dumps({"id": f"t{i}", "prompt": f"task {i}"}) + "\n"
                                 for i in range(tasks)))  # fmt: skip
    return [sys.executable, "-m", "ccwire", "batch", str(task_file), "-o",
            str(tmp_path / "results.jsonl"), "-j", "2", "--scripted", str(script),
            "--tools", "tests.batch.calc_tools:server", "--allow", "Bash", "--plain",
            "--otel", *extra]  # fmt: skip


def run_batch_command(command: list[str], env: dict[str, str], cwd: Path) -> None:
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr


def otlp_env(phoenix: Phoenix) -> dict[str, str]:
    return {
        **os.environ,
        "CCWIRE_CLI_PATH": str(CLI_PATH),
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
        "OTEL_EXPORTER_OTLP_ENDPOINT": phoenix.endpoint,
        "OTEL_SERVICE_NAME": "ccwire-test",
        "OTEL_METRICS_EXPORTER": "none",  # Phoenix takes traces only
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
    }


@pytest.fixture
def ray_cluster(phoenix: Phoenix) -> Iterator[str]:
    """A local Ray cluster (a head node with 2 CPUs) whose workers inherit the OTLP
    endpoint and this checkout on their path; yields its address."""
    cluster_utils = pytest.importorskip("ray.cluster_utils", reason="needs ccwire[ray]")
    with pytest.MonkeyPatch.context() as mp:
        for key, value in otlp_env(phoenix).items():
            if os.environ.get(key) != value:
                mp.setenv(key, value)
        cluster = cluster_utils.Cluster(
            initialize_head=True, head_node_args={"num_cpus": 2, "include_dashboard": False}
        )
    try:
        yield str(cluster.address)
    finally:
        cluster.shutdown()


def test_a_batch_on_ray_is_one_trace_in_the_collector(
    phoenix: Phoenix, ray_cluster: str, tmp_path: Path
) -> None:
    tasks = 3
    run_batch_command(batch_command(tmp_path, tasks, "--ray", ray_cluster),
                      otlp_env(phoenix), tmp_path)  # fmt: skip
    results = {r.id: r for r in read_results(tmp_path / "results.jsonl")}
    assert len(results) == tasks and all(r.ok and r.tool_calls == 2 for r in results.values())
    expected = 1 + tasks * (2 + 2)  # the batch; per task its span, its session, two tools

    spans = phoenix.wait_for_spans(lambda got: len(got) >= expected)
    assert len({s["trace_id"] for s in spans}) == 1  # one trace per batch
    by_name: dict[str, list[dict[str, Any]]] = {}
    for span in spans:
        by_name.setdefault(span["name"], []).append(span)
    assert sorted((n, len(v)) for n, v in by_name.items()) == sorted([
        ("ccwire.batch", 1), ("ccwire.batch.task", tasks), ("invoke_agent claude-code", tasks),
        ("execute_tool mcp__calc__add", tasks), ("execute_tool Bash", tasks),
    ])  # fmt: skip
    ids = {s["span_id"]: s for s in spans}
    (batch,) = by_name["ccwire.batch"]
    assert attrs(batch)["ccwire.batch.executor"] == "ray"
    assert attrs(batch)["ccwire.batch.ok"] == tasks
    assert attrs(batch)["ccwire.usage.cost_usd"] == pytest.approx(
        sum(r.cost_usd for r in results.values())
    )
    sessions = {}
    for task_span in by_name["ccwire.batch.task"]:
        assert task_span["parent_span_id"] == batch["span_id"]
        sessions[attrs(task_span)["ccwire.batch.task_id"]] = task_span["span_id"]
    assert set(sessions) == set(results)
    for session in by_name["invoke_agent claude-code"]:
        a = attrs(session)
        task_span = ids[session["parent_span_id"]]
        result: BatchResult = results[attrs(task_span)["ccwire.batch.task_id"]]
        assert a["gen_ai.conversation.id"] == result.session_id
        assert a["gen_ai.usage.input_tokens"] == result.input_tokens
        assert a["gen_ai.usage.output_tokens"] == result.output_tokens
        assert a["ccwire.usage.cost_usd"] == pytest.approx(result.cost_usd)
        assert a["gen_ai.operation.name"] == "invoke_agent"
    sources = {}
    for name in ("execute_tool mcp__calc__add", "execute_tool Bash"):
        for tool_span in by_name[name]:
            parent = ids[tool_span["parent_span_id"]]
            assert parent["name"] == "invoke_agent claude-code"
            sources[name] = attrs(tool_span)["ccwire.tool.source"]
            assert attrs(tool_span)["gen_ai.operation.name"] == "execute_tool"
    assert sources == {"execute_tool mcp__calc__add": "sdk", "execute_tool Bash": "builtin"}


def test_the_cli_own_spans_join_the_session_trace(phoenix: Phoenix, tmp_path: Path) -> None:
    run_batch_command(batch_command(tmp_path, 1, "--otel-cli"), otlp_env(phoenix), tmp_path)

    def complete(got: list[dict[str, Any]]) -> bool:
        names = {s["name"] for s in got}
        return "ccwire.batch" in names and "claude_code.interaction" in names

    spans = phoenix.wait_for_spans(complete)
    assert len({s["trace_id"] for s in spans}) == 1
    (session,) = [s for s in spans if s["name"] == "invoke_agent claude-code"]
    (interaction,) = [s for s in spans if s["name"] == "claude_code.interaction"]
    assert interaction["parent_span_id"] == session["span_id"]
    cli_tools = [s for s in spans if s["name"] == "claude_code.tool"]
    assert len(cli_tools) == 2  # the CLI's view of the same two tool calls
