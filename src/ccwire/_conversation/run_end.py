"""The run-end ceiling: how long `query()` keeps stdin open between turns.

After a result, a CLI that reports session state says ``running`` while a background
agent is live or its completion is still to wake another turn, and ``idle`` once
nothing more is owed; `query()` keeps stdin open meanwhile (that turn's hooks,
permissions and tools answer over it). A CLI whose background work never finishes
would hold it open forever, so the wait *between turns* is bounded by
``CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS``, the variable with which the CLI bounds its
own wait for background work once stdin is closed (as the reference SDKs do):

* the clock starts at a result while the CLI reports ``running``, and again at each
  ``running`` reported between turns;
* output of a turn of the main thread stops it (the turn is under way), as do the
  ``requires_action`` state (the host answers a request), ``idle`` and a new prompt;
* when it runs out the run is over and stdin is closed, unless a tracked background
  agent (``local_agent``/``local_workflow`` task) is still in flight: the clock then
  starts again once the last one settles.

`RunEndClock` is the bookkeeping, pure (no I/O; the caller passes the time);
`Connection` feeds it and `Connection.messages()` waits at most until its deadline.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Final

__all__ = [
    "CEILING_ENV",
    "DEFAULT_CEILING_MS",
    "MAX_CEILING_MS",
    "RunEndClock",
    "RunPhase",
    "run_end_ceiling",
]

CEILING_ENV: Final = "CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS"
DEFAULT_CEILING_MS: Final = 600_000
"""The CLI's default (10 minutes)."""
MAX_CEILING_MS: Final = 2**31 - 1
"""The longest ceiling honoured (~24.8 days), as the TypeScript SDK's timers allow."""

_TRACKED_TASK_TYPES: Final = frozenset({"local_agent", "local_workflow"})
"""Delegated agent work, which reliably reaches a terminal status; a background shell
may never, so it is not tracked (it would hold stdin open for good)."""


def run_end_ceiling(env: Mapping[str, str], base_env: Mapping[str, str]) -> float | None:
    """The run-end ceiling in seconds, as the CLI reads it; ``None`` for no limit.

    Args:
        env: ``options.env``, which overrides ``base_env`` as it does for the CLI.
        base_env: The environment the CLI inherits (``os.environ``).

    Returns:
        ``CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS`` / 1000 (at most `MAX_CEILING_MS`);
        ``None`` for ``0``; the default of 10 minutes when it is unset or not a plain
        non-negative integer.
    """
    given = env if isinstance(env, Mapping) else {}  # a bad env is refused elsewhere
    raw = given[CEILING_ENV] if CEILING_ENV in given else base_env.get(CEILING_ENV)
    text = raw.strip() if isinstance(raw, str) else ""
    millis = int(text) if text.isascii() and text.isdigit() else DEFAULT_CEILING_MS
    if millis == 0:
        return None
    return min(millis, MAX_CEILING_MS) / 1000


class RunPhase(enum.Enum):
    """Where a run stands, for the ceiling."""

    OWED = "owed"
    """A prompt was written and no output of its turn has come yet (no clock)."""
    TURN = "turn"
    """A turn of the main thread is under way (no clock)."""
    BETWEEN = "between"
    """Past a result: the clock runs while the CLI reports ``running``."""
    ENDED = "ended"
    """The ceiling ran out between turns: the run is over."""


class RunEndClock:
    """The ceiling's bookkeeping (see the module docstring). Pure: the caller passes
    ``now`` (any monotonic clock, in seconds) and waits until `deadline` itself.

    Args:
        ceiling: Seconds between turns before the run ends; ``None`` for no limit.
    """

    def __init__(self, ceiling: float | None) -> None:
        self.ceiling = ceiling
        self.phase = RunPhase.OWED
        self.deadline: float | None = None
        """When the run ends if nothing happens first (only in `RunPhase.BETWEEN`)."""
        self._cli_state: str | None = None
        self._tasks: set[str] = set()  # tracked background agents in flight

    @property
    def ended(self) -> bool:
        """True once the ceiling ran out (until the CLI takes up work again)."""
        return self.phase is RunPhase.ENDED

    # ------------------------------------------------------------------ events

    def on_prompt(self) -> None:
        """A prompt was written: it owes a run of its own."""
        self._enter(RunPhase.OWED, None)

    def on_turn_output(self) -> None:
        """Output of a main-thread turn (assistant message or stream event)."""
        self._enter(RunPhase.TURN, None)

    def on_result(self, now: float) -> None:
        """A result: one turn ended; the wait between turns starts if the CLI is busy."""
        self._enter(RunPhase.BETWEEN, self._deadline(now))

    def on_state(self, state: str, now: float) -> None:
        """The CLI reported its session state."""
        self._cli_state = state
        if self.phase is RunPhase.ENDED and state != "idle":
            # work the CLI took up after the run ended reopens it
            self._enter(RunPhase.BETWEEN, self._deadline(now))
        elif self.phase is RunPhase.BETWEEN:
            self._enter(RunPhase.BETWEEN, self._deadline(now))

    def on_task_started(self, task_id: str, task_type: str | None) -> None:
        """A background task started (only agent tasks are tracked)."""
        if task_type in _TRACKED_TASK_TYPES:
            self._tasks.add(task_id)

    def on_task_ended(self, task_id: str, now: float) -> None:
        """A task reached a terminal status; the last tracked one restarts the clock."""
        if task_id not in self._tasks:
            return
        self._tasks.discard(task_id)
        if not self._tasks and self.phase is RunPhase.BETWEEN:
            self._enter(RunPhase.BETWEEN, self._deadline(now))

    def expire_if_due(self, now: float) -> bool:
        """End the run if its deadline has passed (a tracked agent in flight stops the
        clock instead); returns `ended`."""
        if self.deadline is not None and now >= self.deadline:
            if self._tasks:
                self._enter(RunPhase.BETWEEN, None)
            else:
                self._enter(RunPhase.ENDED, None)
        return self.ended

    # ------------------------------------------------------------- transition

    def _deadline(self, now: float) -> float | None:
        """The deadline of a clock (re)started now, if the CLI still reports work."""
        if self.ceiling is None or self._cli_state in (None, "idle", "requires_action"):
            return None
        return now + self.ceiling

    def _enter(self, phase: RunPhase, deadline: float | None) -> None:
        """The one transition: a deadline only ever runs between turns."""
        self.phase = phase
        self.deadline = deadline if phase is RunPhase.BETWEEN else None
