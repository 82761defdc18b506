"""The results file: one line per finished task, written so that a crash loses nothing.

JSONL (the default): each result is one ``write()`` of a whole line to a file opened
for appending, then ``fsync``; a line is either entirely there or not at all. A write
that fails (a full disk) is undone: the file is cut back to its last whole line
before the error is raised. A torn last line (power loss) is cut off when the file is
opened again; a last line that is a whole result, only without its newline (a file
edited by hand), is kept and given its newline. A path that is not a regular file
(``/dev/null``, a pipe) is written to but never read back nor synced. Parquet (a path
ending in ``.parquet``, needs pyarrow): results are journaled to
``<path>.journal.jsonl`` the same way, and folded into the Parquet file (written to a
temporary file, then renamed) when the batch ends or is interrupted. One batch at a
time writes a results file: it holds an advisory lock (``flock``) on it while open, and
a second batch given the same file is refused (they would run the same tasks twice).
The lock is taken on the file opened, so a writer checks then that the path still
names that file (a Parquet journal the batch before deleted as it folded it, or a file
replaced meanwhile), and opens it again if not: no result goes to a file nobody reads.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .errors import BatchConfigError
from .results import BatchResult

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no lock, as before
    fcntl = None  # type: ignore[assignment]

__all__ = ["CountedResults", "ResultsFile", "read_results", "read_results_counted"]


def _journal(path: Path) -> Path:
    return path.with_name(path.name + ".journal.jsonl")


def _is_parquet(path: Path) -> bool:
    return path.suffix.lower() == ".parquet"


def _is_regular(path: Path) -> bool:
    """Whether `path` is a regular file (a missing one is not)."""
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except FileNotFoundError:
        return False


def _read_jsonl(path: Path, skipped: list[int] | None = None) -> Iterator[dict[str, Any]]:
    """The JSON objects of `path`; ``skipped[0]`` counts the other lines (blank ones aside)."""
    if not _is_regular(path):  # missing, or a device or pipe: nothing to resume
        return
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        return
    with handle:
        for raw in handle:
            data = _parsed(raw)
            if data is not None:
                yield data
            elif skipped is not None and raw.strip() and not _torn(raw):
                skipped[0] += 1


def _torn(raw: bytes) -> bool:
    """A last line without its newline that starts a JSON object: one a running batch
    is writing (read by ``batch report``), or that a crash cut short (cut off by
    `ResultsFile`, and its task runs again): not an unreadable line."""
    return not raw.endswith(b"\n") and raw.lstrip().startswith(b"{")


def _parsed(raw: bytes) -> dict[str, Any] | None:
    """The JSON object with a string ``id`` that `raw` holds, if it holds one."""
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):  # (JSON nested too deeply to read)
        return None
    return data if isinstance(data, dict) and isinstance(data.get("id"), str) else None


def read_results(path: str | os.PathLike[str]) -> Iterator[BatchResult]:
    """Every result in a results file (JSONL or Parquet with its journal), in order.

    Args:
        path: The results file; a missing file has no results.

    Returns:
        An iterator of results; unreadable lines are skipped, as are lines with a
        field of the wrong type (``"cost_usd": "abc"``, no ``ok``...).
    """
    return _read_results(Path(path), None)


class CountedResults:
    """`read_results` that also counts the lines (or rows) skipped as unreadable: the
    results are read as they are iterated (once; a huge file is never held whole), and
    `skipped` is their count once the iteration has ended.

    Args:
        path: The results file; a missing file has no results.

    Attributes:
        skipped: Lines that held no readable result (complete after the iteration).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._path = Path(path)
        self.skipped = 0

    def __iter__(self) -> Iterator[BatchResult]:
        counter = [0]
        try:
            yield from _read_results(self._path, counter)
        finally:
            self.skipped = counter[0]


def read_results_counted(path: str | os.PathLike[str]) -> CountedResults:
    """`read_results`, counting the lines (or rows) skipped as unreadable (`CountedResults`).

    Args:
        path: The results file; a missing file has no results.

    Returns:
        The results, in order, as they are iterated; then the count of skipped lines.
    """
    return CountedResults(path)


def _read_results(target: Path, skipped: list[int] | None) -> Iterator[BatchResult]:
    if _is_parquet(target):
        if target.exists():
            pq = _pyarrow_parquet()
            for row in pq.read_table(target).to_pylist():
                yield from _result(_from_parquet_row(row), skipped)
        target = _journal(target)
    for data in _read_jsonl(target, skipped):
        yield from _result(data, skipped)


def _result(data: dict[str, Any], skipped: list[int] | None = None) -> Iterator[BatchResult]:
    """The result `data` holds, if it is one (a field of the wrong type: none)."""
    try:
        yield BatchResult.from_json(data)
    except ValueError:
        if skipped is not None:
            skipped[0] += 1


def _pyarrow_parquet() -> Any:
    try:
        pq = importlib.import_module("pyarrow.parquet")
    except ImportError:
        raise BatchConfigError(
            "a .parquet results file needs pyarrow: pip install 'ccwire[parquet]' (or use .jsonl)"
        ) from None
    return pq


_JSON_COLUMNS = ("usage", "metadata", "output")


def _to_parquet_row(data: dict[str, Any]) -> dict[str, Any]:
    return {k: json.dumps(v) if k in _JSON_COLUMNS else v for k, v in data.items()}


def _from_parquet_row(row: dict[str, Any]) -> dict[str, Any]:
    return {k: json.loads(v) if k in _JSON_COLUMNS and v else v for k, v in row.items()}


def _cut_torn_tail(path: Path) -> None:
    """Truncate `path` after its last newline (drops a half-written last line); a last
    line that is a whole result without its newline (an edited file) gets the newline."""
    if not _is_regular(path):
        return
    size = path.stat().st_size
    with path.open("rb+") as handle:
        handle.seek(max(0, size - 1))
        if handle.read(1) in (b"\n", b""):
            return
        block, end, cut = 65536, size, 0
        while end > 0:
            start = max(0, end - block)
            handle.seek(start)
            found = handle.read(end - start).rfind(b"\n")
            if found >= 0:
                cut = start + found + 1
                break
            end = start
        handle.seek(cut)
        if _parsed(handle.read()) is not None:
            handle.write(b"\n")  # at the end: the read went there
        else:
            handle.truncate(cut)


def _line(result: BatchResult) -> bytes:
    """`result` as one line of UTF-8 JSON.

    Text UTF-8 cannot carry (a lone surrogate from a ``\\ud800`` escape) is written
    escaped, and an `output` (or `metadata`) JSON cannot hold (a cycle, keys that are
    not strings, nesting too deep to encode, NaN and infinities, which strict JSON
    readers refuse) as its ``repr``, or its type when even that fails: the result is
    recorded either way.
    """
    data = result.to_json()
    try:
        text = json.dumps(data, ensure_ascii=False, allow_nan=False, default=str)
    except (ValueError, TypeError, RecursionError):  # a circular output, tuple keys...
        data["output"] = _described(result.output)
        try:
            text = json.dumps(data, ensure_ascii=False, allow_nan=False, default=str)
        except (ValueError, TypeError, RecursionError):  # the task's metadata, then
            data["metadata"] = {"unrecordable": _described(result.metadata)}
            text = json.dumps(data, ensure_ascii=False, allow_nan=False, default=str)
    try:
        return (text + "\n").encode()
    except UnicodeEncodeError:
        return (json.dumps(data, allow_nan=False, default=str) + "\n").encode()


def _described(value: object) -> str:
    """``repr(value)``, or what it is when even that fails (nested too deeply)."""
    try:
        return repr(value)
    except RecursionError:
        return f"<{type(value).__name__} nested too deeply to record>"


_OPEN_TRIES = 5  # opens of a results file whose path stopped naming it before its lock


def _names(path: Path, fd: int) -> bool:
    """Whether `path` still names the file open as `fd` (same device and inode)."""
    try:
        now = os.stat(path)
    except FileNotFoundError:
        return False
    opened = os.fstat(fd)
    return (now.st_dev, now.st_ino) == (opened.st_dev, opened.st_ino)


class ResultsFile:
    """Appends results to a results file; see the module docstring.

    Args:
        path: ``*.jsonl`` (or any other name) for JSON lines, ``*.parquet`` for Parquet.
        fsync: Force each line to disk before the task counts as written.

    Raises:
        BatchConfigError: The file (or its directory) cannot be written, or Parquet was
            asked for without pyarrow. Raised by the constructor, before any task runs.
    """

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = True) -> None:
        self.path = Path(path)
        self.parquet = _is_parquet(self.path)
        self.fsync = fsync
        if self.parquet:
            _pyarrow_parquet()
        self._lines = _journal(self.path) if self.parquet else self.path
        if self.path.is_dir():
            raise BatchConfigError(f"results file {str(self.path)!r} is a directory")
        self._fd: int | None = self._open_locked()
        if self.parquet and self.path.exists() and not os.access(self.path, os.W_OK):
            self.close()
            raise BatchConfigError(f"cannot write the results file {str(self.path)!r}")

    def _open_locked(self) -> int:
        """Open the lines file and take its lock; return the descriptor.

        The lock is taken on the file opened: if the path stopped naming it meanwhile
        (the batch before, closing, folded a Parquet journal and deleted it; or it was
        replaced), the lock guards a file nobody reads, so it is opened again.
        """
        for _ in range(_OPEN_TRIES):
            try:
                fd = os.open(self._lines, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            except OSError as exc:
                raise BatchConfigError(
                    f"cannot write the results file {str(self._lines)!r}: {exc.strerror or exc}"
                ) from exc
            self._regular = stat.S_ISREG(os.fstat(fd).st_mode)
            try:
                if self._regular and fcntl is not None:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    if not _names(self._lines, fd):  # deleted or replaced before we locked it
                        os.close(fd)
                        continue
                _cut_torn_tail(self._lines)  # only once it is ours: a line may be on its way
            except OSError as exc:
                os.close(fd)  # (nothing to fold: this writer wrote nothing)
                if isinstance(exc, BlockingIOError):
                    raise BatchConfigError(
                        f"the results file {str(self._lines)!r} is being written by another "
                        "batch: wait for it to end (the same command then runs the tasks it "
                        "did not), or give this one another file"
                    ) from None
                raise BatchConfigError(
                    f"cannot write the results file {str(self._lines)!r}: {exc.strerror or exc}"
                ) from exc
            return fd
        raise BatchConfigError(
            f"the results file {str(self._lines)!r} was deleted or replaced each time it was "
            f"opened ({_OPEN_TRIES} times): is something else writing it?"
        )

    @property
    def lines_path(self) -> Path:
        """The file the lines go to (the journal, for Parquet)."""
        return self._lines

    def write(self, result: BatchResult) -> None:
        """Append `result` as one line (one ``write``, then ``fsync`` when enabled).

        Args:
            result: The result.

        Raises:
            OSError: The line could not be written or synced (a full disk...); what
                was written of it is cut off again, so the file ends with a whole line.
        """
        if self._fd is None:
            raise OSError(f"the results file {str(self._lines)!r} is closed")
        line = _line(result)
        start = os.fstat(self._fd).st_size if self._regular else 0
        try:
            view = memoryview(line)
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
            if self.fsync and self._regular:
                os.fsync(self._fd)
        except OSError:
            if self._regular:
                with contextlib.suppress(OSError):  # best effort: the error is what counts
                    os.ftruncate(self._fd, start)
            raise

    def close(self) -> None:
        """Close the file; for Parquet, fold the journal into the Parquet file."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            if self.parquet:  # while the lock is held
                self._fold()
        finally:
            os.close(fd)  # drops the lock

    def _fold(self) -> None:
        journal = _journal(self.path)
        rows = [r.to_json() for r in read_results(self.path)]
        if not journal.exists():
            return
        pa = importlib.import_module("pyarrow")
        pq = _pyarrow_parquet()
        tmp = self.path.with_name(self.path.name + ".tmp")
        pq.write_table(pa.Table.from_pylist([_to_parquet_row(r) for r in rows]), tmp)
        with tmp.open("rb") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, self.path)
        journal.unlink()

    def __enter__(self) -> ResultsFile:
        """Return self."""
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Close the file."""
        self.close()

    def __del__(self) -> None:
        """Let the file go (and its lock) if it was never closed: a batch never entered."""
        fd = getattr(self, "_fd", None)  # (not set when the constructor failed early)
        if fd is not None:
            os.close(fd)
