"""Task files: JSON lines, one task per line, checked up front and then read lazily.

A line is taken as it is or refused, never repaired: bytes that are not UTF-8 make the
line malformed (reported with its number), as does text that UTF-8 cannot carry. A
UTF-8 byte order mark at the start of the file (Windows editors write one) is not
part of the first line.

`iter_task_file` given the scan's report (``expect=``) checks that the file it reads
is the file that was scanned: a task the scan did not see, or (at the end) bytes that
differ, raise `TaskFileChangedError` instead of running tasks nobody counted and
skipping some that were.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import BatchConfigError, BatchInputError, DuplicateTaskIdError, TaskFileChangedError
from .tasks import BatchTask, from_mapping

__all__ = ["TaskFileReport", "iter_task_file", "scan_task_file"]

_MAX_REPORTED = 1000  # malformed lines kept for the report; the count goes on


@dataclass
class TaskFileReport:
    """What a scan of a task file found.

    Attributes:
        tasks: Well-formed tasks.
        bad: ``(line, message)`` of malformed lines (at most the first 1000).
        bad_count: How many lines were malformed.
        lines: Lines that are not blank.
        ids: The ids of the well-formed tasks.
        digest: The SHA-256 of the file's bytes, as read (hex).
    """

    tasks: int = 0
    bad: list[tuple[int, str]] = field(default_factory=list)
    bad_count: int = 0
    lines: int = 0
    ids: set[str] = field(default_factory=set)
    digest: str = ""


_BOM = b"\xef\xbb\xbf"


def _open(path: Path, digest: Any = None) -> Iterator[tuple[int, bytes]]:
    """The lines of `path` that are not blank, numbered; every byte goes to `digest`."""
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise BatchConfigError(f"cannot read the task file {str(path)!r}: {exc.strerror}") from exc
    with handle:
        for number, line in enumerate(handle, start=1):
            if digest is not None:
                digest.update(line)
            if number == 1 and line.startswith(_BOM):
                line = line[len(_BOM) :]
            if line.strip():
                yield number, line


def _parse(raw: bytes, number: int) -> BatchTask:
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = raw[exc.start : exc.start + 1]
        raise BatchInputError(
            f"not valid UTF-8 (byte {exc.start + 1} of the line: {bad!r})", line=number
        ) from None
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise BatchInputError(f"not valid JSON ({exc.msg})", line=number) from None
    except ValueError as exc:
        raise BatchInputError(f"not valid JSON ({exc})", line=number) from None
    except RecursionError:
        raise BatchInputError("JSON nested too deeply to read", line=number) from None
    if not isinstance(data, dict):
        raise BatchInputError(f"expected a JSON object, got {type(data).__name__}", line=number)
    return from_mapping(data, line=number)


def scan_task_file(path: str | os.PathLike[str], *, strict: bool = False) -> TaskFileReport:
    """Check every line of a task file before anything runs (memory: one id per task).

    Args:
        path: The task file (JSON lines; blank lines are ignored).
        strict: Raise on the first malformed line instead of reporting it.

    Returns:
        The report; malformed lines are listed with their line numbers.

    Raises:
        BatchConfigError: The file cannot be read.
        BatchInputError: A malformed line, with `strict`.
        DuplicateTaskIdError: Two well-formed lines have the same id.
    """
    report = TaskFileReport()
    first_line: dict[str, int] = {}
    digest = hashlib.sha256()
    for number, line in _open(Path(path), digest):
        report.lines += 1
        try:
            task = _parse(line, number)
        except BatchInputError as exc:
            if strict:
                raise
            report.bad_count += 1
            if len(report.bad) < _MAX_REPORTED:
                report.bad.append((number, str(exc).partition(": ")[2] or str(exc)))
            continue
        if task.id in first_line:
            raise DuplicateTaskIdError(task.id, line=number, first=first_line[task.id])
        first_line[task.id] = number
        report.tasks += 1
    report.ids = set(first_line)
    report.digest = digest.hexdigest()
    return report


def iter_task_file(
    path: str | os.PathLike[str], *, expect: TaskFileReport | None = None
) -> Iterator[BatchTask]:
    """The well-formed tasks of a task file, read lazily (malformed lines skipped).

    Args:
        path: The task file.
        expect: The report of the file's scan (`scan_task_file`): the file read must
            be the file scanned.

    Returns:
        An iterator of tasks, in file order.

    Raises:
        TaskFileChangedError: With `expect`: a task the scan did not see (before it
            is yielded), or, once the file is read, bytes that differ from the scan's.
    """
    digest = hashlib.sha256() if expect is not None else None
    for number, line in _open(Path(path), digest):
        try:
            task = _parse(line, number)
        except BatchInputError:
            continue
        if expect is not None and task.id not in expect.ids:
            raise TaskFileChangedError(
                str(path), f"line {number} holds task {task.id!r}, which it did not hold before"
            )
        yield task
    if digest is not None and expect is not None and digest.hexdigest() != expect.digest:
        raise TaskFileChangedError(str(path), "its content is not what was checked")
