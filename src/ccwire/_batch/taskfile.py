"""Task files: JSON lines, one task per line, checked up front and then read lazily.

A line is taken as it is or refused, never repaired: bytes that are not UTF-8 make the
line malformed (reported with its number), as does text that UTF-8 cannot carry.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .errors import BatchConfigError, BatchInputError, DuplicateTaskIdError
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
    """

    tasks: int = 0
    bad: list[tuple[int, str]] = field(default_factory=list)
    bad_count: int = 0
    lines: int = 0
    ids: set[str] = field(default_factory=set)


def _open(path: Path) -> Iterator[tuple[int, bytes]]:
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise BatchConfigError(f"cannot read the task file {str(path)!r}: {exc.strerror}") from exc
    with handle:
        for number, line in enumerate(handle, start=1):
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
    except RecursionError:  # `[[[[...`: deeper than the parser goes
        raise BatchInputError("not valid JSON (nested too deeply)", line=number) from None
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
    for number, line in _open(Path(path)):
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
    return report


def iter_task_file(path: str | os.PathLike[str]) -> Iterator[BatchTask]:
    """The well-formed tasks of a task file, read lazily (malformed lines skipped).

    Args:
        path: The task file.

    Returns:
        An iterator of tasks, in file order.
    """
    for number, line in _open(Path(path)):
        try:
            yield _parse(line, number)
        except BatchInputError:
            continue
