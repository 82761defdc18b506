"""The batch building blocks without a CLI: tasks, task files, retry rules, results files,
resumption, references, and `run_batch` itself against a CLI that cannot start."""

from __future__ import annotations

import dataclasses
import json
import math
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from ccwire import ClaudeAgentOptions, HookMatcher, InMemorySessionStore
from ccwire._batch.refs import resolve_hooks, resolve_tools
from ccwire._batch.results import api_error_retryable
from ccwire._batch.tasks import coerce_task
from ccwire.batch import (
    BatchConfigError,
    BatchError,
    BatchInputError,
    BatchResult,
    BatchState,
    BatchTask,
    DuplicateTaskIdError,
    ResultsFile,
    RetryPolicy,
    TaskFileChangedError,
    finished_ids,
    iter_task_file,
    read_results,
    run_batch,
    scan_task_file,
)

from .spawners import counting

# ----------------------------------------------------------------------------- tasks


def test_a_task_from_a_mapping_carries_its_overrides() -> None:
    task = coerce_task(
        {"id": 7, "prompt": "hi", "model": "m", "max_turns": 2, "allowed_tools": ["Read"]}
    )
    assert task.id == "7"
    assert task.allowed_tools == ("Read",)
    opts = task.apply(ClaudeAgentOptions(model="base", cwd="/tmp"))
    assert (opts.model, opts.max_turns, opts.allowed_tools, opts.cwd) == ("m", 2, ["Read"], "/tmp")


def test_a_task_from_a_dataclass_and_from_a_function() -> None:
    @dataclasses.dataclass
    class Item:
        id: str
        prompt: str
        expected: int = 3  # not a task field: ignored

    assert coerce_task(Item("a", "p")) == BatchTask(id="a", prompt="p")

    async def review_repo(client: Any) -> str:
        return "done"

    task = coerce_task(review_repo)
    assert task.id == "review_repo"
    assert task.run is review_repo


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"prompt": "x"}, "'id' must be"),
        ({"id": "a"}, "'prompt' must be a non-empty string"),
        ({"id": "a", "prompt": "x", "max_turns": 0}, "'max_turns' must be a positive"),
        ({"id": "a", "prompt": "x", "allowed_tools": "Read"}, "'allowed_tools' must be a list"),
        ({"id": "a", "prompt": "x", "prmpt": "y"}, "unknown key(s) 'prmpt'"),
        ({"id": True, "prompt": "x"}, "'id' must be"),
    ],
)
def test_a_malformed_task_is_a_typed_error(data: dict[str, Any], message: str) -> None:
    with pytest.raises(BatchInputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        coerce_task(data)


def test_a_time_limit_is_a_positive_number_of_seconds(tmp_path: Path) -> None:
    assert coerce_task({"id": "a", "prompt": "x", "timeout": 2}).timeout == 2.0
    assert coerce_task({"id": "a", "prompt": "x", "timeout": None}).timeout is None
    assert BatchTask(id="a", prompt="x", timeout=0.5).to_json()["timeout"] == 0.5
    for bad in (True, 0, -1.5, float("nan"), float("inf"), "5", 10**400, [3]):
        with pytest.raises(BatchInputError) as refused:
            coerce_task({"id": "slow", "prompt": "x", "timeout": bad})
        assert str(refused.value) == (
            f"task 'slow': 'timeout' must be a positive number of seconds, got {bad!r}"
        )
    path = write_lines(tmp_path / "tasks.jsonl", ['{"id": "a", "prompt": "x", "timeout": "1m"}'])
    assert scan_task_file(path).bad == [
        (1, "task 'a': 'timeout' must be a positive number of seconds, got '1m'")
    ]
    for bad in (True, 0, -1, float("nan"), float("inf"), "30"):
        with pytest.raises(BatchConfigError, match="task_timeout must be a positive number"):
            run_batch([], task_timeout=bad)  # type: ignore[arg-type]


def test_something_that_is_not_a_task() -> None:
    with pytest.raises(BatchInputError, match="not int"):
        coerce_task(42)


# ----------------------------------------------------------------------------- task files


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines))
    return path


def test_a_task_file_reports_malformed_lines_with_their_numbers(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "t.jsonl",
        ['{"id": "a", "prompt": "x"}', "{oops", "", "[1, 2]", '{"id": "b", "prompt": "y"}'],
    )
    report = scan_task_file(path)
    assert report.tasks == 2 and report.ids == {"a", "b"}
    assert [line for line, _ in report.bad] == [2, 4]
    assert "not valid JSON" in report.bad[0][1]
    assert "expected a JSON object" in report.bad[1][1]
    assert [t.id for t in iter_task_file(path)] == ["a", "b"]
    with pytest.raises(BatchInputError, match="line 2: not valid JSON") as caught:
        scan_task_file(path, strict=True)
    assert caught.value.line == 2


def test_bytes_that_are_not_utf8_make_a_line_malformed_never_rewritten(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(
        b'{"id": "a", "prompt": "x"}\n'
        b'{"id": "b\xff", "prompt": "y"}\n'
        b'{"id": "c", "prompt": "caf\xc3\xa9 \\ud800"}\n'  # valid UTF-8, a lone surrogate
        b'{"id": "d", "prompt": "caf\xc3\xa9"}\n'
    )
    report = scan_task_file(path)
    assert (report.tasks, report.bad_count, report.lines) == (2, 2, 4)
    assert report.bad[0] == (2, "not valid UTF-8 (byte 10 of the line: b'\\xff')")
    assert report.bad[1][0] == 3 and "UTF-8 cannot carry (\\ud800)" in report.bad[1][1]
    assert [(t.id, t.prompt) for t in iter_task_file(path)] == [("a", "x"), ("d", "café")]
    with pytest.raises(BatchInputError, match="line 2: not valid UTF-8"):
        scan_task_file(path, strict=True)


def test_a_byte_order_mark_is_not_part_of_the_first_line_and_deep_json_is_malformed(
    tmp_path: Path,
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(
        b'\xef\xbb\xbf{"id": "a", "prompt": "x"}\r\n'
        + b'{"id": "b", "prompt": "y", "metadata": '
        + b"[" * 100_000
        + b"]" * 100_000
        + b"}\n"
    )
    report = scan_task_file(path)
    assert (report.tasks, report.ids) == (1, {"a"})
    assert report.bad == [(2, "JSON nested too deeply to read")]
    assert [t.id for t in iter_task_file(path, expect=report)] == ["a"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("rewrite", r"line 3 holds task 'u2', which it did not hold before"),
        ("append", r"line 5 holds task 'extra'"),
        ("cut", "its content is not what was checked"),
        ("edit", "its content is not what was checked"),
    ],
)
def test_a_task_file_that_changes_while_it_is_read_is_an_error(
    tmp_path: Path, change: str, message: str
) -> None:
    pad = {"pad": "x" * 20_000}  # lines longer than a read's buffer

    def task_lines(prefix: str) -> list[str]:
        return [
            json.dumps({"id": f"{prefix}{i}", "prompt": "p", "metadata": pad}) for i in range(4)
        ]

    path = write_lines(tmp_path / "t.jsonl", task_lines("t"))
    report = scan_task_file(path)
    tasks = iter_task_file(path, expect=report)
    assert next(tasks).id == "t0"  # the batch runs; the file is changed behind it
    if change == "rewrite":
        write_lines(path, task_lines("u"))
    elif change == "append":
        with path.open("a") as f:
            f.write(json.dumps({"id": "extra", "prompt": "p"}) + "\n")
    elif change == "cut":
        write_lines(path, task_lines("t")[:1])
    else:
        path.write_text(path.read_text().replace('"t3", "prompt": "p"', '"t3", "prompt": "q"'))
    with pytest.raises(TaskFileChangedError, match=message) as caught:
        list(tasks)
    assert isinstance(caught.value, BatchInputError) and caught.value.path == str(path)
    assert [t.id for t in iter_task_file(path)] != []  # without `expect`: read as it is


def test_duplicate_ids_in_a_task_file_are_an_error(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "t.jsonl",
        ['{"id": "a", "prompt": "x"}', '{"id": "b", "prompt": "x"}', '{"id": "a", "prompt": "z"}'],
    )
    with pytest.raises(DuplicateTaskIdError, match=r"line 3: duplicate task id 'a'.*line 1"):
        scan_task_file(path)


def test_a_missing_task_file(tmp_path: Path) -> None:
    with pytest.raises(BatchConfigError, match="cannot read the task file"):
        scan_task_file(tmp_path / "nope.jsonl")


# ----------------------------------------------------------------------------- retry rules


@pytest.mark.parametrize(
    ("status", "etype", "assistant", "text", "expected"),
    [
        (429, "rate_limit_error", "rate_limit", "API Error: Request rejected (429)", True),
        (529, "overloaded_error", "server_error", "API Error: 529 Overloaded.", True),
        (400, "invalid_request_error", "invalid_request", "API Error: 400", False),
        (500, "api_error", "server_error", "API Error: 500", False),
        (None, None, "overloaded", None, True),
        (None, None, None, "API Error: 529 Overloaded", True),
        (None, None, None, "the answer is 42", False),
    ],
)
def test_which_api_errors_are_retried(
    status: int | None, etype: str | None, assistant: str | None, text: str | None, expected: bool
) -> None:
    assert api_error_retryable(status, etype, assistant, text) is expected


def test_backoff_grows_is_capped_and_jittered() -> None:
    policy = RetryPolicy(max_attempts=10, base_delay=1.0, max_delay=8.0, jitter=0.5)
    rng = random.Random(1)
    delays = [policy.delay(n, rng) for n in range(1, 8)]
    caps = [1, 2, 4, 8, 8, 8, 8]
    for delay, cap in zip(delays, caps, strict=True):
        assert cap / 2 <= delay <= cap
    assert len(set(delays[3:])) > 1  # jitter: equal caps, different delays
    assert RetryPolicy(jitter=0).delay(2) == 2.0
    with pytest.raises(ValueError, match="at least 1"):
        RetryPolicy(max_attempts=0)
    assert RetryPolicy(max_attempts=5000, max_delay=8.0, jitter=0).delay(5000) == 8.0


@pytest.mark.parametrize(
    "fields",
    [{"max_attempts": math.nan}, {"max_attempts": 2.5}, {"max_attempts": "3"},
     {"max_attempts": True}, {"base_delay": math.nan}, {"max_delay": math.nan},
     {"base_delay": math.inf, "max_delay": math.inf}, {"jitter": math.nan},
     {"base_delay": "1"}],
)  # fmt: skip
def test_a_retry_policy_that_would_retry_or_sleep_forever_is_a_config_error(
    fields: dict[str, Any],
) -> None:
    # NaN attempts retried a failing start forever; a NaN max_delay stopped the batch
    # with an unexpected error; infinite delays slept forever
    with pytest.raises(BatchConfigError, match="RetryPolicy"):
        RetryPolicy(**fields)


# ----------------------------------------------------------------------------- results files


def result(task_id: str, ok: bool = True) -> BatchResult:
    return BatchResult(
        id=task_id, ok=ok, result="r" if ok else None, is_error=not ok,
        error=None if ok else "boom", error_kind=None if ok else "model",
        usage={"input_tokens": 10, "output_tokens": 2}, metadata={"k": 1},
    )  # fmt: skip


def test_results_round_trip_through_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    with ResultsFile(path) as out:
        out.write(result("a"))
        out.write(result("b", ok=False))
    assert list(read_results(path)) == [result("a"), result("b", ok=False)]
    assert all(line.endswith("\n") for line in path.read_text().splitlines(keepends=True))
    assert finished_ids(path) == {"a", "b"}
    assert finished_ids(path, rerun_failed=True) == {"a"}


def test_a_torn_last_line_is_ignored_and_cut_before_appending(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    line = json.dumps(result("a").to_json())
    path.write_text(line + "\n" + line[: len(line) // 2])  # a crash mid-write
    assert [r.id for r in read_results(path)] == ["a"]
    with ResultsFile(path) as out:
        out.write(result("b"))
    lines = path.read_text().splitlines()
    assert [json.loads(x)["id"] for x in lines] == ["a", "b"]


def test_results_round_trip_through_parquet(tmp_path: Path) -> None:
    path = tmp_path / "out.parquet"
    with ResultsFile(path) as out:
        out.write(result("a"))
    with ResultsFile(path) as out:  # a second run appends
        out.write(result("b", ok=False))
    assert not (tmp_path / "out.parquet.journal.jsonl").exists()
    assert list(read_results(path)) == [result("a"), result("b", ok=False)]
    assert finished_ids(path, rerun_failed=True) == {"a"}


def test_text_utf8_cannot_carry_is_recorded_escaped_and_read_back_whole(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    odd = dataclasses.replace(result("a"), result="half \ud800 a pair")  # from a JSON escape
    with ResultsFile(path) as out:
        out.write(odd)
        out.write(result("b"))
    assert list(read_results(path)) == [odd, result("b")]


def test_a_results_path_that_is_not_a_regular_file(tmp_path: Path) -> None:
    # /dev/full reads as endless zeros and takes no write: nothing to resume from it,
    # and a write is an OSError (ENOSPC), as on a full disk
    assert list(read_results("/dev/full")) == []
    assert finished_ids("/dev/full") == set()
    with ResultsFile("/dev/full") as out, pytest.raises(OSError, match="No space left"):
        out.write(result("a"))


def test_an_unwritable_results_file_fails_at_once(tmp_path: Path) -> None:
    with pytest.raises(BatchConfigError, match="cannot write the results file"):
        ResultsFile(tmp_path / "no" / "such" / "dir" / "out.jsonl")
    with pytest.raises(BatchConfigError, match="is a directory"):
        ResultsFile(tmp_path)


# ----------------------------------------------------------------------------- references


def test_tools_and_hooks_by_reference() -> None:
    servers = resolve_tools(["tests.batch.calc_tools:server"])
    assert list(servers) == ["calc"]
    with pytest.raises(BatchConfigError, match="cannot import 'no_such_module_xyz'"):
        resolve_tools(["no_such_module_xyz:server"])
    with pytest.raises(BatchConfigError, match="has no 'missing'"):
        resolve_tools(["tests.batch.calc_tools:missing"])
    with pytest.raises(BatchConfigError, match="expected an in-process MCP server, got int"):
        resolve_tools(["tests.batch.calc_tools:not_a_server"])
    with pytest.raises(BatchConfigError, match=r"expected package\.module:attribute"):
        resolve_tools(["calc_tools"])
    with pytest.raises(BatchConfigError, match="expected a mapping"):
        resolve_hooks("tests.batch.calc_tools:not_a_server")
    assert resolve_hooks(None) is None
    hooks = resolve_hooks("tests.batch.calc_tools:HOOKS")
    assert hooks is not None and list(hooks) == ["PreToolUse"]


# ----------------------------------------------------------------------------- run_batch


@pytest.fixture
def dead_cli(tmp_path: Path) -> str:
    """A 'CLI' that exits at once: every session fails to start."""
    path = tmp_path / "dead-cli"
    path.write_text("#!/bin/sh\necho 'cannot start' >&2\nexit 3\n")
    path.chmod(0o755)
    return str(path)


def quick(attempts: int) -> RetryPolicy:
    return RetryPolicy(max_attempts=attempts, base_delay=0.001, max_delay=0.002)


@pytest.mark.anyio
async def test_a_cli_that_fails_to_start_is_retried_then_reported(
    dead_cli: str, tmp_path: Path
) -> None:
    out = tmp_path / "out.jsonl"
    tasks = [{"id": f"t{i}", "prompt": "x"} for i in range(3)]
    events: list[str] = []
    async with run_batch(
        tasks, options=ClaudeAgentOptions(cli_path=dead_cli), concurrency=2,
        retries=quick(3), output=out, events=lambda e: events.append(e.kind),
    ) as results:  # fmt: skip
        got = await results.collect()
    assert sorted(r.id for r in got) == ["t0", "t1", "t2"]
    for r in got:
        assert (r.ok, r.error_kind, r.attempts, r.retryable) == (False, "start", 3, True)
    assert events.count("retry") == 6
    assert events.count("finished") == 3
    assert sorted(r.id for r in read_results(out)) == ["t0", "t1", "t2"]


class Source:
    """A huge lazy task iterable that counts what was taken from it."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.taken = 0

    def __iter__(self) -> Iterator[dict[str, str]]:
        for i in range(self.size):
            self.taken += 1
            yield {"id": f"t{i}", "prompt": "x"}


@pytest.mark.anyio
async def test_the_task_iterable_is_consumed_lazily(dead_cli: str) -> None:
    source = Source(10**9)
    opts = ClaudeAgentOptions(cli_path=dead_cli)
    async with run_batch(source, options=opts, concurrency=2, retries=0) as results:
        seen = 0
        async for _ in results:
            seen += 1
            # never more than: results seen + the result buffer + running + one pending
            assert source.taken <= seen + 2 + 2 + 1
            if seen == 5:
                break
    assert source.taken < 20


@pytest.mark.anyio
async def test_resuming_skips_finished_ids(dead_cli: str, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    with ResultsFile(out) as f:
        f.write(result("t0"))
        f.write(result("t1", ok=False))
    tasks = [{"id": f"t{i}", "prompt": "x"} for i in range(3)]
    opts = ClaudeAgentOptions(cli_path=dead_cli)
    async with run_batch(tasks, options=opts, retries=0, output=out) as results:
        assert [r.id for r in await results.collect()] == ["t2"]
        assert results.skipped == ["t0", "t1"]
    async with run_batch(tasks, options=opts, retries=0, output=out, rerun_failed=True) as again:
        assert sorted(r.id for r in await again.collect()) == ["t1", "t2"]  # t2 had failed
    assert [r.id for r in read_results(out)][:3] == ["t0", "t1", "t2"]
    assert finished_ids(out, rerun_failed=True) == {"t0"}


@pytest.mark.anyio
async def test_a_duplicate_id_stops_feeding_and_is_raised(dead_cli: str) -> None:
    tasks = [{"id": "a", "prompt": "x"}, {"id": "b", "prompt": "x"}, {"id": "a", "prompt": "y"}]
    opts = ClaudeAgentOptions(cli_path=dead_cli)
    got: list[str] = []
    with pytest.raises(DuplicateTaskIdError, match="'a'"):
        async with run_batch(tasks, options=opts, retries=0) as results:
            async for r in results:
                got.append(r.id)
    assert sorted(got) == ["a", "b"]  # what was started still finished


def test_bad_arguments_fail_before_anything_runs(tmp_path: Path) -> None:
    tasks = [{"id": "a", "prompt": "x"}]
    with pytest.raises(BatchConfigError, match="concurrency"):
        run_batch(tasks, concurrency=0)
    with pytest.raises(BatchConfigError, match="executor"):
        run_batch(tasks, executor="dask")  # type: ignore[arg-type]
    with pytest.raises(BatchConfigError, match="cannot write the results file"):
        run_batch(tasks, output=tmp_path / "missing" / "out.jsonl")
    with pytest.raises(BatchConfigError, match="store"):
        run_batch(tasks, store=object())  # type: ignore[arg-type]
    with pytest.raises(BatchConfigError, match=r"package\.module:attribute"):
        run_batch(tasks, tools=["nocolon"])
    with pytest.raises(BatchConfigError, match="sessions_per_actor"):
        run_batch(tasks, executor="ray", sessions_per_actor=0)
    with pytest.raises(BatchConfigError, match="retries must be >= 0"):
        run_batch(tasks, retries=-1)
    with pytest.raises(BatchConfigError, match=r"hooks.*package\.module:attribute"):
        run_batch(tasks, hooks="nocolon")
    with pytest.raises(BatchConfigError, match=r"spawn.*package\.module:attribute"):
        run_batch(tasks, spawn="nocolon")
    for spares in (-1, True):
        with pytest.raises(BatchConfigError, match="spares must be an integer >= 0"):
            run_batch(tasks, spares=spares)
    bad: list[tuple[dict[str, Any], str]] = [
        ({"retries": "3"}, "retries must be a RetryPolicy or an int"),  # was: at the 1st retry
        ({"retries": True}, "retries must be a RetryPolicy or an int"),
        ({"options": {"model": "x"}}, "options must be a ClaudeAgentOptions, not dict"),
        ({"output": 123}, "output must be a path, not int"),  # was a TypeError
        ({"tools": "pkg.mod:server"}, r"not one string: \['pkg.mod:server'\]"),  # was: 'p'
        ({"events": 5}, "events must be callable"),  # was: logged at every event
    ]
    for kwargs, message in bad:
        with pytest.raises(BatchConfigError, match=message):
            run_batch(tasks, **kwargs)
    run_batch(tasks, store=InMemorySessionStore())  # accepted


def test_sessions_per_actor_by_default_fill_the_smallest_node_that_fits_one() -> None:
    from ccwire._batch.ray_executor import MAX_PER_ACTOR, default_per_actor

    def node(cpus: float, memory: float = 64e9, alive: bool = True) -> dict[str, Any]:
        return {"Alive": alive, "Resources": {"CPU": cpus, "memory": memory}}

    assert default_per_actor([node(16)] * 4, 64, 1.0, None) == 16
    assert default_per_actor([node(16), node(4)], 64, 1.0, None) == 4
    assert default_per_actor([node(0), node(8)], 64, 1.0, None) == 8  # a head without CPUs
    assert default_per_actor([node(2, alive=False), node(8)], 64, 1.0, None) == 8
    assert default_per_actor([node(4)], 4, 1.0, None) == 4
    assert default_per_actor([node(2)], 4, 1.0, None) == 2
    assert default_per_actor([node(2)], 4, 0.5, None) == 4
    assert default_per_actor([node(3)], 8, 1.5, None) == 2
    assert default_per_actor([node(16, memory=20e9)], 64, 1.0, int(8e9)) == 2
    assert default_per_actor([node(256)], 1000, 1.0, None) == MAX_PER_ACTOR
    assert default_per_actor([node(8)], 3, 0.0, None) == 3  # no CPU hint: concurrency
    assert default_per_actor([node(0.5)], 4, 1.0, None) == 1  # fits nowhere: one per actor
    assert default_per_actor([], 4, 1.0, None) == 1


@pytest.mark.anyio
async def test_ray_refuses_in_process_objects(tmp_path: Path) -> None:
    from ccwire._batch.ray_executor import portable_options

    servers = resolve_tools(["tests.batch.calc_tools:server"])
    with pytest.raises(BatchConfigError, match=r"tools=\['package.module:server'\]"):
        portable_options(ClaudeAgentOptions(mcp_servers=dict(servers)))
    with pytest.raises(BatchConfigError, match="stderr"):
        portable_options(ClaudeAgentOptions(stderr=print))
    hooks = ClaudeAgentOptions(hooks={"PreToolUse": [HookMatcher(hooks=[_note])]})
    with pytest.raises(BatchConfigError, match=r"hooks='package\.module:HOOKS'"):
        portable_options(hooks)
    with pytest.raises(BatchConfigError, match=r"spawn='package\.module:spawner'"):
        portable_options(ClaudeAgentOptions(spawn_claude_code_process=counting))
    # (these two were shipped by value: run on the worker, or failed to pickle there)
    with pytest.raises(BatchConfigError, match=r"options\.on_elicitation is an in-process"):
        portable_options(ClaudeAgentOptions(on_elicitation=_note))
    with pytest.raises(BatchConfigError, match=r"options\.on_user_dialog is an in-process"):
        portable_options(ClaudeAgentOptions(on_user_dialog=_note))
    # servers that are not in-process travel as they are
    remote: dict[str, Any] = {"files": {"type": "stdio", "command": "files-server"},
                              "web": {"type": "http", "url": "http://127.0.0.1:1/mcp"}}  # fmt: skip
    assert portable_options(ClaudeAgentOptions(mcp_servers=remote)).mcp_servers == remote
    assert portable_options(ClaudeAgentOptions(mcp_servers="x.json")).mcp_servers == "x.json"


async def _note(*_: object) -> dict[str, object]:
    return {}


@pytest.mark.anyio
async def test_the_ray_executor_without_ray_is_a_config_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # as if not installed
    with anyio.fail_after(60), pytest.raises(BatchConfigError, match=r"ccwire\[ray\]"):
        async with run_batch([{"id": "a", "prompt": "x"}], executor="ray") as batch:
            await batch.collect()
    assert (batch.state, batch.submitted) == (BatchState.FAILED, 0)


@pytest.mark.parametrize("address", ["auto", "local", "ray://head", "head:port", ":6379"])
def test_ray_addresses_that_are_not_host_and_port_are_left_to_ray(address: str) -> None:
    from ccwire._batch.ray_executor import _probe

    _probe(address)  # no connection tried, no error: Ray resolves these itself


def test_iterating_outside_async_with_is_a_clear_error() -> None:
    run = run_batch([{"id": "a", "prompt": "x"}])
    with pytest.raises(BatchError, match="async with run_batch"):
        run.__aiter__()


@pytest.mark.anyio
async def test_a_batch_stopped_before_it_starts_runs_nothing_and_runs_once(dead_cli: str) -> None:
    run = run_batch([{"id": "a", "prompt": "x"}], options=ClaudeAgentOptions(cli_path=dead_cli))
    assert run.state is BatchState.NEW
    run.stop()
    async with run as results:
        assert await results.collect() == []
    assert (run.state, run.submitted, run.error) == (BatchState.STOPPED, 0, None)
    with pytest.raises(BatchError, match="a batch runs once"):
        async with run:
            pass


@pytest.mark.anyio
async def test_an_event_callback_that_raises_is_logged_and_the_batch_goes_on(
    fake_options: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    seen: list[str] = []

    def flaky(event: Any) -> None:
        seen.append(event.kind)
        raise RuntimeError(f"the dashboard is down ({event.kind})")

    tasks = [{"id": f"t{i}", "prompt": f"p{i}"} for i in range(3)]
    out = tmp_path / "out.jsonl"
    async with run_batch(
        tasks, options=fake_options(), concurrency=2, output=out, events=flaky
    ) as results:
        got = await results.collect()
    assert sorted((r.id, r.ok, r.result) for r in got) == [
        (f"t{i}", True, f"echo: p{i}") for i in range(3)
    ]
    assert seen.count("finished") == 3  # every event still delivered
    assert "batch event callback failed on finished" in caplog.text
    assert "the dashboard is down (finished)" in caplog.text
    assert sorted(r.id for r in read_results(out)) == ["t0", "t1", "t2"]


@pytest.mark.anyio
async def test_an_event_callback_raising_a_cancellation_is_logged_and_the_batch_goes_on(
    fake_options: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # it escaped into the batch's task group, which ended quietly: no task ran, no
    # error, and the batch said it had completed
    import asyncio

    def cancelling(event: Any) -> None:
        if event.kind == "started":
            raise asyncio.CancelledError

    tasks = [{"id": f"t{i}", "prompt": f"p{i}"} for i in range(3)]
    out = tmp_path / "out.jsonl"
    with anyio.fail_after(60):
        async with run_batch(
            tasks, options=fake_options(), concurrency=1, output=out, events=cancelling
        ) as results:
            got = await results.collect()
    assert results.state is BatchState.COMPLETED
    assert sorted((r.id, r.ok) for r in got) == [(f"t{i}", True) for i in range(3)]
    assert "batch event callback failed on started" in caplog.text
    assert sorted(r.id for r in read_results(out)) == ["t0", "t1", "t2"]


@pytest.mark.anyio
async def test_a_task_cancelled_by_no_scope_of_the_batch_fails_it_and_a_rerun_runs_the_rest(
    fake_options: Any, tmp_path: Path, anyio_backend: str
) -> None:
    # a synchronous callback cannot withdraw the asyncio cancel it asked for: the task
    # ends cancelled, which ended the batch's task group quietly (every other task
    # unrun, and the batch said it had completed)
    if anyio_backend != "asyncio":
        pytest.skip("an asyncio task's own cancel()")
    import asyncio

    def cancelling(event: Any) -> None:
        if event.kind == "started" and event.task_id == "t1":
            task = asyncio.current_task()
            assert task is not None
            task.cancel()

    tasks = [{"id": f"t{i}", "prompt": f"p{i}"} for i in range(4)]
    out = tmp_path / "out.jsonl"
    batch = run_batch(tasks, options=fake_options(), concurrency=1, output=out, events=cancelling)
    with anyio.fail_after(60), pytest.raises(BatchError, match="nothing cancelled the batch"):
        async with batch as results:
            await results.collect()
    assert batch.state is BatchState.FAILED
    assert "t1" not in [r.id for r in read_results(out)]
    async with run_batch(tasks, options=fake_options(), output=out) as again:
        await again.collect()
    assert again.state is BatchState.COMPLETED
    assert sorted(r.id for r in read_results(out)) == ["t0", "t1", "t2", "t3"]


def test_the_report_names_the_tasks_that_blocked_the_event_loop(tmp_path: Path) -> None:
    from ccwire._app.batch_report import read_latest, render_report, summarize
    from ccwire.batch import ResultsFile

    out = tmp_path / "out.jsonl"
    with ResultsFile(out) as writer:
        writer.write(BatchResult(id="hog", ok=False, error_kind="timeout", blocked_s=4.25))
        writer.write(BatchResult(id="fine", ok=True))
        writer.write(BatchResult(id="nap", ok=True, blocked_s=1.5))
    results, _ = read_latest(out)  # the field survives the file and the report's view
    summary = summarize(results, source=str(out))
    assert summary["blocked_tasks"] == 2
    assert summary["blocked"] == [
        {"id": "hog", "ok": False, "error_kind": "timeout", "blocked_s": 4.25},
        {"id": "nap", "ok": True, "error_kind": None, "blocked_s": 1.5},
    ]
    page = render_report(results, source=str(out), links={})
    assert 'id="blocked" data-count="2"' in page and "hog (4.2 s), nap (1.5 s)" in page
    assert 'id="blocked"' not in render_report(results[1:2], source=str(out), links={})


def test_an_attempt_costs_what_its_cli_spent_not_what_a_resume_restored() -> None:
    from ccwire import ResultMessage
    from ccwire._batch.session import Attempt

    attempt = Attempt()
    for total in (0.003, 0.0042):  # a task resuming a session that had cost 0.0018
        spent = {"model_usage_since_last_result": {"m": {"costUSD": 0.0012}}}
        attempt.observe(ResultMessage("success", 1, 1, False, 1, "s", total_cost_usd=total,
                                      raw=spent))  # fmt: skip
    assert attempt.meter.spent == pytest.approx(0.0024)
