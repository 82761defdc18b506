"""What a batch yields per task (`BatchResult`) and how failures are retried (`RetryPolicy`)."""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from .errors import BatchConfigError

__all__ = [
    "RETRYABLE_STATUSES",
    "STDERR_TAIL_CHARS",
    "STDERR_TAIL_LINES",
    "BatchResult",
    "ErrorKind",
    "RetryPolicy",
    "api_error_retryable",
]

ErrorKind = Literal["api", "model", "crash", "start", "exception", "config", "lost", "timeout"]
"""Why a task failed: ``api`` (an API error result: 429, 529...), ``model`` (an error
result of the session itself: max turns, budget...), ``start`` (the CLI did not
start or died before its first message), ``crash`` (the CLI died mid-session),
``exception`` (a task function raised), ``config`` (the task cannot run here),
``lost`` (Ray: the node or actor running the session was lost, and the task was not
run again, because its session may have acted or it had no attempt left),
``timeout`` (the task's time limit passed: `BatchTask.timeout`, or the batch's
``task_timeout``; its session was stopped, and it is never retried)."""

RETRYABLE_STATUSES = frozenset({429, 529})
"""API statuses worth another attempt: rate limited (429) and overloaded (529)."""

STDERR_TAIL_LINES = 20
"""At most this many of the CLI's last stderr lines are kept in a failed result."""

STDERR_TAIL_CHARS = 4000
"""At most this many characters of them (the end is kept)."""

_RETRYABLE_TYPES = frozenset({"rate_limit_error", "overloaded_error"})
_RETRYABLE_ASSISTANT_ERRORS = frozenset({"rate_limit", "overloaded"})
_RETRYABLE_TEXT = re.compile(r"API Error: (?:Request rejected )?\(?(?:429|529)\b|overloaded", re.I)


def api_error_retryable(
    status: object, error_type: object, assistant_error: object, text: object
) -> bool:
    """Whether an API error reported by the CLI is worth retrying.

    Args:
        status: The result's ``api_error_status`` (an int, or `None`).
        error_type: The result's ``api_error_type`` (e.g. ``overloaded_error``).
        assistant_error: The ``error`` field of the CLI's synthetic assistant message.
        text: The result text (``API Error: 529 Overloaded...``), the last resort.

    Returns:
        True for rate limits (429) and overloads (529), however they are reported.
    """
    if isinstance(status, int) and not isinstance(status, bool):
        return status in RETRYABLE_STATUSES
    if error_type in _RETRYABLE_TYPES or assistant_error in _RETRYABLE_ASSISTANT_ERRORS:
        return True
    return isinstance(text, str) and bool(_RETRYABLE_TEXT.search(text))


@dataclass(frozen=True)
class RetryPolicy:
    """Retries with jittered exponential backoff, for retryable failures only.

    A task's time limit (``timeout``) covers all its attempts and their backoff: a task
    that runs out of time is final (``error_kind="timeout"``, not retryable), since
    another attempt would have no time left, and a session that runs too long (a tool
    loop) would most likely do it again.

    Attributes:
        max_attempts: Attempts per task, the first included (1 disables retries).
        base_delay: Seconds before the first retry.
        max_delay: Upper bound of one delay.
        jitter: Fraction of each delay that is random (0 to 1): "full jitter" is 1.

    Raises:
        BatchConfigError: A field is not a number in its range (NaN, infinite delays, a
            ``max_attempts`` that is not an integer).
    """

    max_attempts: int = 4
    base_delay: float = 1.0
    max_delay: float = 60.0
    jitter: float = 0.5

    def __post_init__(self) -> None:
        # (NaN passes every comparison's negation: a NaN or infinite policy retried
        # forever, slept forever, or stopped the batch with an unexpected error)
        attempts = self.max_attempts
        if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
            raise BatchConfigError(
                f"RetryPolicy.max_attempts must be an integer, at least 1, got {attempts!r}"
            )
        for name in ("base_delay", "max_delay", "jitter"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise BatchConfigError(f"RetryPolicy.{name} must be a number, got {value!r}")
        if not (0 <= self.base_delay < math.inf and 0 <= self.max_delay < math.inf):
            raise BatchConfigError("RetryPolicy delays must be finite numbers >= 0")
        if not 0 <= self.jitter <= 1:
            raise BatchConfigError("RetryPolicy.jitter must be within [0, 1]")

    def delay(self, attempt: int, rng: random.Random | None = None) -> float:
        """Seconds to wait after failed attempt number `attempt` (1-based).

        Args:
            attempt: The attempt that just failed.
            rng: The random source (the module's by default).

        Returns:
            ``min(max_delay, base_delay * 2 ** (attempt - 1))``, of which the `jitter`
            fraction is drawn at random.
        """
        cap = min(self.max_delay, self.base_delay * 2.0 ** min(attempt - 1, 1000))  # no overflow
        draw = float((rng or random).random())
        return cap * (1 - self.jitter) + cap * self.jitter * draw


@dataclass(frozen=True)
class BatchResult:
    """The outcome of one task, after its last attempt.

    Attributes:
        id: The task id.
        ok: True when the session ended with a successful result.
        session_id: The CLI session id of the last attempt (`None` if it never started).
        result: The final result text.
        is_error: The result's ``is_error`` (True for every failure).
        subtype: The result's subtype (``success``, ``error_max_turns``...), if any.
        num_turns: Turns of the last attempt.
        tool_calls: Tool calls made by the model in the last attempt.
        cost_usd: What the attempts' CLIs spent, by their ``total_cost_usd`` (less the
            cost a CLI restores on ``--resume``), of those whose cost is known: see
            `cost_known`.
        cost_known: False when an attempt ended without the CLI's final result
            after its session started (the CLI crashed, its Ray node or actor was
            lost, or its time limit stopped it in the middle of a turn): what that
            attempt spent is unknown, and not in `cost_usd`.
        usage: The token usage of the last attempt (the CLI's ``usage`` object).
        duration_s: Wall time of the task, all attempts and backoff included.
        blocked_s: How long the task's own code held the event loop it ran on, in
            stretches of a second or more (synchronous code in a task function:
            ``time.sleep``, a CPU-bound loop): no other session ran meanwhile, and
            its time limit could not stop it until it yielded. 0 for a task that
            never blocked it.
        attempts: How many attempts ran.
        error: What went wrong (`None` when `ok`).
        error_kind: The category of `error` (see `ErrorKind`).
        retryable: Whether the last failure was of a retryable kind.
        output: What a task function returned (JSON-able), else `None`.
        metadata: The task's metadata.
        exit_code: The CLI's exit status when it ended the last attempt with an error
            (negative for a signal), else `None`.
        stderr: The last lines the CLI wrote to stderr in a failed last attempt (at
            most `STDERR_TAIL_LINES` lines of `STDERR_TAIL_CHARS` characters in all,
            secrets masked), else `None`.
    """

    id: str
    ok: bool
    session_id: str | None = None
    result: str | None = None
    is_error: bool = False
    subtype: str | None = None
    num_turns: int = 0
    tool_calls: int = 0
    cost_usd: float = 0.0
    cost_known: bool = True
    usage: Mapping[str, Any] = field(default_factory=dict)
    duration_s: float = 0.0
    blocked_s: float = 0.0
    attempts: int = 1
    error: str | None = None
    error_kind: ErrorKind | None = None
    retryable: bool = False
    output: Any = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    exit_code: int | None = None
    stderr: str | None = None

    @property
    def input_tokens(self) -> int:
        """Input tokens of the last attempt, cache reads and writes included."""
        u = self.usage
        return sum(
            int(u.get(k) or 0)
            for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        )

    @property
    def output_tokens(self) -> int:
        """Output tokens of the last attempt."""
        return int(self.usage.get("output_tokens") or 0)

    def to_json(self) -> dict[str, Any]:
        """The result as one JSON object (a line of the results file).

        Shallow: `output` is the task function's own object (a cycle in it is the
        results file's to handle, which a deep copy would never reach).
        """
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["usage"] = dict(self.usage)
        out["metadata"] = dict(self.metadata)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BatchResult:
        """Read a result written by `to_json` (unknown keys are ignored).

        Args:
            data: One parsed line of a results file.

        Returns:
            The result.

        Raises:
            ValueError: `id` or `ok` is missing, or a field has a type `to_json` never
                writes (a results file edited by hand, or written by something else).
        """
        known = {f for f in cls.__dataclass_fields__}
        kwargs = {k: v for k, v in data.items() if k in known}
        for name in ("id", "ok"):
            if name not in kwargs:
                raise ValueError(f"a result needs {name!r}")
        for name, value in kwargs.items():
            if not _FIELD_CHECKS.get(name, _anything)(value):
                raise ValueError(f"a result's {name!r} cannot be {value!r}")
        kwargs["usage"] = dict(kwargs.get("usage") or {})
        kwargs["metadata"] = dict(kwargs.get("metadata") or {})
        return cls(**kwargs)


def _anything(value: object) -> bool:
    return True


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return _is_int(value) or isinstance(value, float)


_MAX_COUNT = 2**63 - 1  # what an int64 (a Parquet column) holds, and a float roughly


def _is_count(value: object) -> bool:
    """A count: an int from 0 to 2**63 - 1 (a larger one made ``batch report`` crash)."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _MAX_COUNT


def _is_amount(value: object) -> bool:
    """A finite, non-negative number: a cost a budget can add up (a NaN would switch the
    budget off, a negative one give money back), a duration, a token count (a NaN or
    an infinity made ``batch report`` crash, or print JSON no parser reads)."""
    if not _is_number(value):
        return False
    assert isinstance(value, (int, float))
    try:
        number = float(value)
    except OverflowError:  # an int past any float: it made `batch report` crash
        return False
    return math.isfinite(number) and number >= 0


_TOKEN_KEYS = (
    "input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "output_tokens",
)


def _is_usage(value: object) -> bool:
    """A mapping whose token counts (what `BatchResult` sums) are finite numbers >= 0."""
    if value is None:
        return True
    return isinstance(value, Mapping) and all(
        value.get(k) is None or _is_amount(value.get(k)) for k in _TOKEN_KEYS
    )


_FIELD_CHECKS: dict[str, Callable[[object], bool]] = {
    "id": lambda v: isinstance(v, str) and v != "",
    "ok": lambda v: isinstance(v, bool),
    "session_id": lambda v: v is None or isinstance(v, str),
    "result": lambda v: v is None or isinstance(v, str),
    "is_error": lambda v: isinstance(v, bool),
    "subtype": lambda v: v is None or isinstance(v, str),
    "num_turns": _is_count,
    "tool_calls": _is_count,
    "cost_usd": _is_amount,
    "cost_known": lambda v: isinstance(v, bool),
    "usage": _is_usage,
    "duration_s": _is_amount,
    "blocked_s": _is_amount,
    "attempts": _is_count,
    "error": lambda v: v is None or isinstance(v, str),
    "error_kind": lambda v: v is None or isinstance(v, str),
    "retryable": lambda v: isinstance(v, bool),
    "metadata": lambda v: v is None or isinstance(v, Mapping),
    "exit_code": lambda v: v is None or _is_int(v),
    "stderr": lambda v: v is None or isinstance(v, str),
}
"""What `BatchResult.from_json` accepts for each field (`output` is anything)."""
