"""The results file's edges: lines that are not results, torn tails of any length,
outputs JSON cannot hold, a write that fails half-way on a regular file, paths that are
not regular files, a closed file, Parquet without pyarrow or with its journal gone."""

from __future__ import annotations

import errno
import functools
import gc
import importlib.util
import json
import re
import resource
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ccwire.batch import (
    BatchConfigError,
    BatchResult,
    ResultsFile,
    finished_ids,
    read_results,
    run_batch,
)


def result(task_id: str, **fields: object) -> BatchResult:
    return BatchResult(id=task_id, ok=True, result="r", usage={"input_tokens": 1}, **fields)  # type: ignore[arg-type]


def line(r: BatchResult) -> str:
    return json.dumps(r.to_json()) + "\n"


def test_lines_that_are_not_results_are_skipped_and_the_rest_read(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    path.write_text(
        line(result("a"))
        + "not json at all\n"
        + "[1, 2]\n"
        + '{"no": "id"}\n'
        + '{"id": 7}\n'  # an id that is not a string
        + line(result("b"))
    )
    assert [r.id for r in read_results(path)] == ["a", "b"]
    assert finished_ids(path) == {"a", "b"}


@pytest.mark.parametrize(
    "odd",
    [
        '{"id": "x"}',  # no ok
        '{"id": "x", "ok": "yes"}',
        '{"id": "x", "ok": true, "cost_usd": "abc"}',
        '{"id": "x", "ok": true, "usage": [1, 2]}',
        '{"id": "x", "ok": true, "usage": {"input_tokens": "many"}}',
        '{"id": "x", "ok": true, "metadata": 5}',
        '{"id": "x", "ok": true, "attempts": null}',
        '{"id": "x", "ok": true, "duration_s": "1s"}',
        '{"id": "x", "ok": true, "cost_usd": NaN}',
        '{"id": "x", "ok": true, "cost_usd": -3.0}',
        '{"id": "x", "ok": true, "error": {"nested": 1}}',
        '{"id": "x", "ok": true, "cost_usd": ' + "9" * 400 + "}",  # past any float
        '{"id": "x", "ok": true, "tool_calls": ' + "9" * 4000 + "}",
        '{"id": "x", "ok": true, "metadata": ' + "[" * 100_000 + "]" * 100_000 + "}",
    ],
)
def test_lines_with_a_field_of_the_wrong_type_are_skipped_not_crashed_on(
    tmp_path: Path, odd: str
) -> None:
    path = tmp_path / "out.jsonl"
    path.write_text(line(result("a")) + odd + "\n" + line(result("b", cost_usd=0.5)))
    assert [r.id for r in read_results(path)] == ["a", "b"]  # x runs again
    assert sum(r.cost_usd for r in read_results(path)) == 0.5
    assert sum(r.input_tokens for r in read_results(path)) == 2


def test_usage_with_counts_of_its_own_is_read_back(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    usage = {"input_tokens": 1, "server_tool_use": {"web_search_requests": 0}, "tier": "x"}
    path.write_text(line(BatchResult(id="a", ok=True, usage=usage)))
    assert [r.usage for r in read_results(path)] == [usage]


@pytest.mark.parametrize("torn", [10, 70_000], ids=["short", "longer-than-a-block"])
def test_a_torn_tail_is_cut_back_to_the_last_whole_line(tmp_path: Path, torn: int) -> None:
    path = tmp_path / "out.jsonl"
    path.write_text(line(result("a")) + "x" * torn)  # a crash mid-write of a long line
    with ResultsFile(path) as out:
        out.write(result("b"))
    assert path.read_text() == line(result("a")) + line(result("b"))


@pytest.mark.parametrize("before", ["", "a"], ids=["alone", "after-a-line"])
def test_a_whole_last_result_without_its_newline_is_kept_not_cut(
    tmp_path: Path, before: str
) -> None:
    path = tmp_path / "out.jsonl"
    head = line(result(before)) if before else ""
    path.write_text(head + line(result("b")).rstrip("\n"))  # an editor dropped the newline
    assert [r.id for r in read_results(path)][-1] == "b"
    assert "b" in finished_ids(path)  # not run (and paid for) again
    with ResultsFile(path) as out:
        out.write(result("c"))
    assert path.read_text() == head + line(result("b")) + line(result("c"))


def test_a_file_that_is_only_a_torn_line_is_emptied(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    path.write_text('{"id": "a", "ok": tr')
    with ResultsFile(path) as out:
        out.write(result("b"))
    assert path.read_text() == line(result("b"))


def test_an_output_json_cannot_hold_is_recorded_as_its_repr(tmp_path: Path) -> None:
    cycle: list[object] = [1]
    cycle.append(cycle)
    path = tmp_path / "out.jsonl"
    with ResultsFile(path) as out:
        out.write(result("cycle", output=cycle))
        out.write(result("keys", output={(1, 2): "pair"}))  # keys JSON cannot have
        out.write(result("fine", output={"n": 1}))
        # strict JSON: no NaN or Infinity literal, which jq and other readers refuse
        out.write(result("nan", output=[float("nan")], metadata={"m": float("inf")}))
    got = {r.id: r for r in read_results(path)}
    assert got["cycle"].output == "[1, [...]]"
    assert got["keys"].output == "{(1, 2): 'pair'}"
    assert got["nan"].output == "[nan]"
    assert got["nan"].metadata == {"unrecordable": "{'m': inf}"}
    assert "NaN" not in path.read_text() and "Infinity" not in path.read_text()
    assert got["fine"].output == {"n": 1}


@pytest.fixture
def small_file_limit() -> Iterator[None]:
    """Restore the file size limit (and SIGXFSZ) a test lowers."""
    limits = resource.getrlimit(resource.RLIMIT_FSIZE)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of a signal
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, limits)
        signal.signal(signal.SIGXFSZ, handler)


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_FSIZE semantics of Linux")
def test_an_output_nested_too_deeply_to_encode_is_recorded_by_its_type(tmp_path: Path) -> None:
    deep: list[object] = []
    for _ in range(100_000):
        deep = [deep]
    with ResultsFile(tmp_path / "out.jsonl") as out:
        out.write(result("a", output=deep))
        out.write(result("b", metadata={"m": deep}))
    got = {r.id: r for r in read_results(tmp_path / "out.jsonl")}
    assert got["a"].output == "<list nested too deeply to record>"
    assert got["b"].metadata == {"unrecordable": "<dict nested too deeply to record>"}


def test_a_write_that_fails_half_way_is_cut_back_to_the_last_whole_line(
    tmp_path: Path, small_file_limit: None
) -> None:
    path = tmp_path / "out.jsonl"
    with ResultsFile(path) as out:
        out.write(result("a"))
        before = path.read_bytes()
        # the file may grow by 10 bytes only: the next line is written in part, then
        # the rest fails (EFBIG), like a disk that fills up mid-line
        resource.setrlimit(resource.RLIMIT_FSIZE, (len(before) + 10, resource.RLIM_INFINITY))
        with pytest.raises(OSError, match="File too large") as caught:
            out.write(result("b", output="x" * 100))
        resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY,) * 2)
        assert caught.value.errno == errno.EFBIG
        assert path.read_bytes() == before  # no torn line left behind
        out.write(result("c"))
    assert [r.id for r in read_results(path)] == ["a", "c"]


def test_a_device_is_written_but_never_synced_nor_read_back() -> None:
    # fsync of /dev/null fails (EINVAL): a results file that is not a regular file
    # must not be synced, or every write would fail
    with ResultsFile("/dev/null", fsync=True) as out:
        out.write(result("a"))
    assert list(read_results("/dev/null")) == []


def test_a_closed_results_file_refuses_writes_and_closes_once(tmp_path: Path) -> None:
    out = ResultsFile(tmp_path / "out.jsonl")
    out.write(result("a"))
    out.close()
    out.close()  # a second close does nothing (the descriptor is not closed twice)
    with pytest.raises(OSError, match="is closed"):
        out.write(result("b"))
    assert [r.id for r in read_results(tmp_path / "out.jsonl")] == ["a"]


def test_parquet_without_pyarrow_is_a_config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)  # as if not installed
    with pytest.raises(BatchConfigError, match=re.escape("pip install 'ccwire[parquet]'")):
        ResultsFile(tmp_path / "out.parquet")
    assert not (tmp_path / "out.parquet.journal.jsonl").exists()  # refused before opening


def test_one_writer_at_a_time_and_the_next_one_appends(tmp_path: Path) -> None:
    # two batches writing one file would run the same tasks twice (and one could cut
    # the other's line): the second is refused while the first has it open
    formats = ["out.jsonl"] + (["out.parquet"] if importlib.util.find_spec("pyarrow") else [])
    for name in formats:
        path = tmp_path / name
        first = ResultsFile(path)
        first.write(result("a"))
        with pytest.raises(BatchConfigError, match="is being written by another batch"):
            ResultsFile(path)
        first.close()  # Parquet: folds the journal into the Parquet file
        with ResultsFile(path) as second:
            second.write(result("b"))
        assert [r.id for r in read_results(path)] == ["a", "b"]
    assert not (tmp_path / "out.parquet.journal.jsonl").exists()
    # a batch made but never entered does not keep the file once it is dropped
    unused = run_batch([{"id": "c", "prompt": "p"}], output=tmp_path / "out.jsonl")
    del unused
    gc.collect()
    ResultsFile(tmp_path / "out.jsonl").close()


def test_a_results_file_deleted_or_replaced_before_its_lock_is_taken_is_opened_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a writer opens the file, then the one before it (closing) folds the Parquet
    # journal and deletes it, or the file is replaced: the lock is then taken on a file
    # nobody reads, and every result written to it was lost
    fcntl = pytest.importorskip("fcntl")
    real_flock = fcntl.flock
    race: list[Callable[[], object]] = []

    def flock(fd: int, how: int) -> None:
        if race:
            race.pop()()  # between this writer's open and its lock
        real_flock(fd, how)

    monkeypatch.setattr(fcntl, "flock", flock)
    names = ["out.jsonl"] + (["out.parquet"] if importlib.util.find_spec("pyarrow") else [])
    for name in names:
        path = tmp_path / name
        first = ResultsFile(path)
        first.write(result("a"))
        if name.endswith(".parquet"):
            race.append(first.close)  # folds the journal into out.parquet, deletes it
        else:
            first.close()
            (tmp_path / "new.jsonl").write_text(line(result("a")))
            race.append(functools.partial((tmp_path / "new.jsonl").replace, path))
        with ResultsFile(path) as second:
            second.write(result("b"))
        assert [r.id for r in read_results(path)] == ["a", "b"]  # "b" was written unread

    def replaced() -> None:  # every time: it never ends
        race.append(replaced)
        (tmp_path / "other.jsonl").write_text("")
        (tmp_path / "other.jsonl").replace(tmp_path / "out.jsonl")

    race.append(replaced)
    with pytest.raises(BatchConfigError, match="was deleted or replaced each time it was opened"):
        ResultsFile(tmp_path / "out.jsonl")
    race.clear()
