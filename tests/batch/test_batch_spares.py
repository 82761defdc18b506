"""Spare CLIs in batches (``run_batch(spares=N)``, ``ccwire batch --spares N``) and a
spawner by reference (``spawn=``, ``--spawn``), on the small fake CLI that parks and
takes claims like the real one (``tests/fixtures/mini_cli.py``)."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from ccwire import ClaudeAgentOptions
from ccwire._app.main import CliIO, main
from ccwire.batch import BatchConfigError, run_batch

pytestmark = pytest.mark.anyio

LIMIT = 60
MINI_CLI = Path(__file__).parents[1] / "fixtures" / "mini_cli.py"


@pytest.fixture
def mini(tmp_path: Path) -> ClaudeAgentOptions:
    wrapper = tmp_path / "claude"
    wrapper.write_text(  # the result's text is the mini CLI's report (MINI_RESULT)
        "#!/bin/sh\nMINI_RESULT=report exec "
        f'{shlex.quote(sys.executable)} {shlex.quote(str(MINI_CLI))} "$@"\n'
    )
    wrapper.chmod(0o755)
    (tmp_path / "home").mkdir()
    (tmp_path / "marks").mkdir()
    env = {"HOME": str(tmp_path / "home"), "SPAWN_MARKS": str(tmp_path / "marks")}
    return ClaudeAgentOptions(cli_path=str(wrapper), env=env, initialize_timeout=20)


def reports(results: list[Any]) -> dict[str, dict[str, Any]]:
    return {r.id: json.loads(r.result) for r in results}


async def test_tasks_start_on_spares_when_a_claim_can_give_their_options(
    mini: ClaudeAgentOptions, tmp_path: Path
) -> None:
    folders = [tmp_path / f"w{i}" for i in range(3)]
    for folder in folders:
        folder.mkdir()
    tasks: list[dict[str, Any]] = [
        {"id": f"t{i}", "prompt": "hi", "cwd": str(folders[i % 3])} for i in range(6)
    ]
    tasks.append({"id": "turns", "prompt": "hi", "cwd": str(folders[0]), "max_turns": 2})
    with anyio.fail_after(LIMIT):
        async with run_batch(tasks, options=mini, concurrency=2, spares=2,
                             spawn="tests.batch.spawners:counting") as batch:  # fmt: skip
            results = await batch.collect()
    assert all(r.ok for r in results), [r.error for r in results]
    got = reports(results)
    for i in range(6):  # each on a claimed spare, in its own folder
        assert got[f"t{i}"]["claimed"] and got[f"t{i}"]["cwd"] == str(folders[i % 3])
    assert not got["turns"]["claimed"]  # max_turns is fixed at start-up: a cold start
    marks = list((tmp_path / "marks").iterdir())
    assert len(marks) >= 7  # every CLI, spares included, went through the spawner
    parked = [m for m in marks if "--await-claim" in m.read_text()]
    assert len(parked) >= 6
    assert list((tmp_path / "home" / ".claude" / "spares").iterdir()) == []


async def test_batch_arguments_are_checked(mini: ClaudeAgentOptions) -> None:
    for kw in ({"spares": -1}, {"spares": True}, {"spawn": "no_colon"}):
        with pytest.raises(BatchConfigError):
            run_batch([{"id": "a", "prompt": "hi"}], options=mini, **kw)
    with pytest.raises(BatchConfigError, match="expected a spawner"):
        async with run_batch([{"id": "a", "prompt": "hi"}], options=mini,
                             spawn="ccwire:__version__") as batch:  # fmt: skip
            await batch.collect()


def test_ccwire_batch_spawn_and_spares(
    mini: ClaudeAgentOptions, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(json.dumps({"id": f"t{i}", "prompt": "hi"}) + "\n" for i in range(3)))
    out = tmp_path / "out.jsonl"
    for key, value in mini.env.items():  # the CLI's HOME, the spawner's folder of marks
        monkeypatch.setenv(key, value)
    env = {**os.environ, "ANTHROPIC_API_KEY": "sk-ant-offline-test"}
    cli_io = CliIO(io.StringIO(), io.StringIO(), io.StringIO(), env)
    spawner = "tests.batch.spawners:counting"
    argv = ["batch", str(tasks), "-o", str(out), "-j", "2", "--plain", "--cli-path",
            str(mini.cli_path), "--spares", "2", "--spawn", spawner]  # fmt: skip
    code = main(argv, io=cli_io)
    assert isinstance(cli_io.stderr, io.StringIO)
    assert code == 0, cli_io.stderr.getvalue()
    results = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["id"] for r in results) == ["t0", "t1", "t2"]
    assert all(json.loads(r["result"])["claimed"] for r in results)
    assert len(list((tmp_path / "marks").iterdir())) >= 3
    bad = CliIO(io.StringIO(), io.StringIO(), io.StringIO(), env)
    assert main([*argv[:-4], "--spares", "-1"], io=bad) == 2


async def test_a_session_on_a_spare_is_traced_under_the_task_that_claimed_it(
    mini: ClaudeAgentOptions, tmp_path: Path
) -> None:
    pytest.importorskip("opentelemetry.sdk.trace", reason="needs ccwire[otel]")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from ccwire import Telemetry

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    options = dataclasses.replace(mini, telemetry=Telemetry(tracer_provider=provider))
    tasks = [{"id": f"t{i}", "prompt": "hi", "cwd": str(tmp_path)} for i in range(4)]
    with anyio.fail_after(LIMIT):
        async with run_batch(tasks, options=options, concurrency=2, spares=2) as batch:
            results = await batch.collect()
    assert all(report["claimed"] for report in reports(results).values())
    spans = exporter.get_finished_spans()
    task_spans = [s for s in spans if s.name == "ccwire.batch.task"]
    sessions = [s for s in spans if s.name == "invoke_agent claude-code"]
    # one session per task, under it: not under the batch (where the spare booted), nor
    # under the task that took the spare before (where its replacement booted); a spare
    # never claimed records nothing
    assert len(task_spans) == len(sessions) == 4
    assert sorted(s.parent.span_id for s in sessions if s.parent) == sorted(
        t.context.span_id for t in task_spans
    )
