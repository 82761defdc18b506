"""What a batch runs: `BatchTask`, and turning dicts, dataclasses and callables into one."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias, Union, cast

from .._conversation.client import ClaudeSDKClient  # at run time: for get_type_hints()
from .._conversation.options import ClaudeAgentOptions
from .errors import BatchInputError

__all__ = ["TASK_FIELDS", "BatchTask", "TaskFunction", "TaskLike", "coerce_task"]

TaskFunction: TypeAlias = Callable[[ClaudeSDKClient], Awaitable[Any]]
"""A task that drives its session itself: called with a connected `ClaudeSDKClient`.

Whatever it returns (JSON-able) becomes `BatchResult.output`; the session's last
`ResultMessage` fills the rest of the result."""

TASK_FIELDS = (
    "id",
    "prompt",
    "cwd",
    "model",
    "max_turns",
    "system_prompt",
    "allowed_tools",
    "metadata",
    "timeout",
)
"""The keys a task mapping (or a line of a task file) may have."""


@dataclass(frozen=True)
class BatchTask:
    """One unit of a batch: a prompt for a fresh session, or a function driving one.

    Attributes:
        id: Unique within the batch; results and resumption are keyed by it.
        prompt: The prompt sent to the session (required unless `run` is set).
        cwd: Per-task working directory of the CLI (overrides the batch options).
        model: Per-task model.
        max_turns: Per-task turn limit.
        system_prompt: Per-task system prompt.
        allowed_tools: Per-task allowed tools (replaces the batch's list).
        metadata: Free JSON data copied into the task's result (expected answers...).
        run: A `TaskFunction` that drives the session instead of `prompt`.
        timeout: Wall-clock limit of the task in seconds (a positive number), all its
            attempts and their backoff included; `None` takes the batch's
            ``task_timeout`` (no limit without one). Once it passes, the task's session
            is stopped (its CLI ended) and the task fails with ``error_kind="timeout"``,
            not retried. A task function that blocks the event loop (synchronous code)
            is stopped only where it yields (see `run_batch`'s ``task_timeout``).
    """

    id: str
    prompt: str | None = None
    cwd: str | None = None
    model: str | None = None
    max_turns: int | None = None
    system_prompt: str | None = None
    allowed_tools: tuple[str, ...] | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    run: TaskFunction | None = field(default=None, compare=False, repr=False)
    timeout: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise BatchInputError(f"a task id must be a non-empty string, got {self.id!r}")
        if self.run is None and (not isinstance(self.prompt, str) or not self.prompt.strip()):
            raise BatchInputError(f"task {self.id!r}: 'prompt' must be a non-empty string")
        if self.max_turns is not None and (
            isinstance(self.max_turns, bool)
            or not isinstance(self.max_turns, int)
            or self.max_turns < 1
        ):
            raise BatchInputError(f"task {self.id!r}: 'max_turns' must be a positive integer")
        for name in ("cwd", "model", "system_prompt"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise BatchInputError(f"task {self.id!r}: {name!r} must be a string")
        if self.allowed_tools is not None:
            tools = self.allowed_tools
            if isinstance(tools, str) or not all(isinstance(t, str) for t in tools):
                raise BatchInputError(f"task {self.id!r}: 'allowed_tools' must be a list of names")
            object.__setattr__(self, "allowed_tools", tuple(tools))
        if not isinstance(self.metadata, Mapping):
            raise BatchInputError(f"task {self.id!r}: 'metadata' must be an object")
        if self.timeout is not None:
            limit = check_timeout(self.timeout, f"task {self.id!r}: 'timeout'")
            object.__setattr__(self, "timeout", limit)

    def apply(self, options: ClaudeAgentOptions) -> ClaudeAgentOptions:
        """The batch's options with this task's overrides.

        Args:
            options: The options shared by the batch.

        Returns:
            A copy of `options` with every override this task sets.
        """
        changes: dict[str, Any] = {}
        for name in ("cwd", "model", "max_turns", "system_prompt"):
            value = getattr(self, name)
            if value is not None:
                changes[name] = value
        if self.allowed_tools is not None:
            changes["allowed_tools"] = list(self.allowed_tools)
        return dataclasses.replace(options, **changes) if changes else options

    def to_json(self) -> dict[str, Any]:
        """The task as a JSON object (without `run`)."""
        out: dict[str, Any] = {"id": self.id}
        for name in TASK_FIELDS[1:]:
            value = getattr(self, name)
            if value is not None and value != {}:
                out[name] = list(value) if isinstance(value, tuple) else value
        return out


TaskLike: TypeAlias = Union[BatchTask, Mapping[str, Any], TaskFunction, Any]
"""A `BatchTask`, a mapping or dataclass with its fields, or a `TaskFunction` (an
object, not a string: ``typing.get_type_hints`` of a function that takes one resolves
it where that function is defined)."""


def check_timeout(value: object, what: str) -> float:
    """A time limit as seconds: a finite, positive number (not a bool, not text).

    Args:
        value: The limit given.
        what: How to name it in the error (``task 'x': 'timeout'``).

    Returns:
        The limit as a float.

    Raises:
        BatchInputError: It is not a finite, positive number of seconds.
    """
    seconds = math.nan
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            seconds = float(value)
        except OverflowError:  # an int too large for a float
            seconds = math.inf
    if not (math.isfinite(seconds) and seconds > 0):
        raise BatchInputError(f"{what} must be a positive number of seconds, got {value!r}")
    return seconds


def from_mapping(data: Mapping[str, Any], *, line: int | None = None) -> BatchTask:
    """Build a task from a mapping with the keys of `TASK_FIELDS`.

    Args:
        data: The mapping (e.g. one parsed line of a task file).
        line: The line number to name in errors.

    Returns:
        The task.

    Raises:
        BatchInputError: A key is unknown, `id` is missing, or a value has the wrong type.
    """
    unknown = sorted(str(k) for k in data if k not in TASK_FIELDS)
    if unknown:
        raise BatchInputError(
            f"unknown key(s) {', '.join(map(repr, unknown))}; a task has "
            f"{', '.join(TASK_FIELDS)} (put anything else under 'metadata')",
            line=line,
        )
    raw_id = data.get("id")
    if isinstance(raw_id, bool) or not isinstance(raw_id, (str, int)) or raw_id == "":
        raise BatchInputError("'id' must be a non-empty string or an integer", line=line)
    try:  # a lone surrogate (from a "\\ud800" escape) would reach no CLI and no results file
        json.dumps(dict(data), ensure_ascii=False, default=str).encode()
    except UnicodeEncodeError as exc:
        bad = exc.object[exc.start : exc.end].encode("unicode_escape").decode()
        raise BatchInputError(f"holds text UTF-8 cannot carry ({bad})", line=line) from None
    except (TypeError, ValueError, RecursionError):
        pass  # not JSON (a Python object in metadata): checked where it is written
    kwargs = {k: data[k] for k in TASK_FIELDS[1:] if k in data and data[k] is not None}
    try:
        return BatchTask(id=str(raw_id), **kwargs)
    except BatchInputError as exc:
        raise BatchInputError(str(exc), line=line) from None


def coerce_task(obj: TaskLike) -> BatchTask:
    """Turn anything `run_batch` accepts into a `BatchTask`.

    Args:
        obj: A `BatchTask`; a mapping or a dataclass instance with task fields; or a
            `TaskFunction` (its id is its ``batch_id`` attribute, else its ``__name__``).

    Returns:
        The task.

    Raises:
        BatchInputError: `obj` is none of these, or its fields are invalid.
    """
    if isinstance(obj, BatchTask):
        return obj
    if isinstance(obj, Mapping):
        return from_mapping(obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        names = {f.name for f in dataclasses.fields(obj)}
        return from_mapping({n: getattr(obj, n) for n in names if n in TASK_FIELDS})
    if callable(obj):
        task_id = getattr(obj, "batch_id", None) or getattr(obj, "__name__", None)
        if not isinstance(task_id, str):
            raise BatchInputError(f"a task function needs a name or a batch_id: {obj!r}")
        return BatchTask(id=task_id, run=cast("TaskFunction", obj))
    raise BatchInputError(
        f"a task is a BatchTask, a mapping, a dataclass or an async function, "
        f"not {type(obj).__name__}"
    )
