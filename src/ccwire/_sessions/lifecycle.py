"""Where a session's CLI process is, and the reply gate that pause closes.

A session has two explicit states. `SessionState` (in `state`) is where the
conversation is: running, waiting for a tool call, paused, completed... `Lifecycle`
is where the CLI process behind it is: not started yet, starting, serving, closing,
released. A completed conversation still has a serving CLI (``send()`` starts the
next turn); a cancelled one that never started never had one. Every question of the
kind "has it started", "can it take a prompt", "is it closed" reads `Lifecycle`,
and every move goes through `advance()`, which checks it against `TRANSITIONS`.

The reply gate holds what we write to the CLI while the session is paused; its own
enum says whether it lets writers through, holds them, or is releasing what it held.
"""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final

import anyio

from .._core.errors import InvalidTransitionError

__all__ = ["TRANSITIONS", "GateState", "Lifecycle", "ReplyGate", "advance"]


class Lifecycle(enum.Enum):
    """Where the CLI process behind a session is."""

    NEW = "new"
    """Made, not started (``agent.create_session()``)."""
    LAUNCHED = "launched"
    """The runner started: waiting for a slot, or for the CLI to connect."""
    SERVING = "serving"
    """The CLI is connected and the session serves it."""
    CLOSING = "closing"
    """The session asked to release the CLI, or the CLI's output ended."""
    CLOSED = "closed"
    """The CLI was released (or never started); nothing runs any more."""


TRANSITIONS: Final[Mapping[Lifecycle, frozenset[Lifecycle]]] = {
    Lifecycle.NEW: frozenset({Lifecycle.LAUNCHED, Lifecycle.CLOSED}),
    Lifecycle.LAUNCHED: frozenset({Lifecycle.SERVING, Lifecycle.CLOSING, Lifecycle.CLOSED}),
    Lifecycle.SERVING: frozenset({Lifecycle.CLOSING, Lifecycle.CLOSED}),
    Lifecycle.CLOSING: frozenset({Lifecycle.CLOSED}),
    Lifecycle.CLOSED: frozenset(),
}
"""Every allowed move; staying where one is is always allowed (a no-op)."""


def advance(current: Lifecycle, to: Lifecycle) -> Lifecycle:
    """The lifecycle after a move from ``current`` to ``to``.

    Args:
        current: Where the session's CLI is now.
        to: Where it should be.

    Returns:
        ``to``, or ``current`` when ``to`` is ``current``, or when ``to`` lies behind
        ``current`` (a late "serving" after close was asked: the close wins).

    Raises:
        InvalidTransitionError: when ``TRANSITIONS`` has no such move forward.
    """
    if to is current or _ORDER[to] < _ORDER[current]:
        return current
    if to not in TRANSITIONS[current]:
        raise InvalidTransitionError(current.value, to.value)
    return to


_ORDER: Final = {state: i for i, state in enumerate(Lifecycle)}


class GateState(enum.Enum):
    """What the reply gate does with a writer that reaches it."""

    OPEN = "open"
    """Lets it through."""
    HOLDING = "holding"
    """Holds it (the session is paused)."""
    RELEASING = "releasing"
    """Resumed: lets held writers through one at a time; new writers queue behind."""


@dataclass(eq=False)
class _Held:
    """A writer stopped at the gate."""

    release: anyio.Event = field(default_factory=anyio.Event)
    passed: anyio.Event = field(default_factory=anyio.Event)


class ReplyGate:
    """Holds our answers and prompts while paused, releases them in order on resume."""

    def __init__(self, release_timeout: float) -> None:
        self.state = GateState.OPEN
        self._held: deque[_Held] = deque()
        self._release_timeout = release_timeout

    @property
    def holds(self) -> bool:
        """Whether a writer arriving now would wait."""
        return self.state is not GateState.OPEN

    def close(self) -> None:
        """Hold every writer from now on (pause)."""
        self.state = GateState.HOLDING

    async def wait(self) -> None:
        """Pass the gate: at once when open, else when released, in arrival order."""
        if not self.holds:
            return
        held = _Held()
        self._held.append(held)
        try:
            await held.release.wait()
        finally:
            held.passed.set()

    async def open(self, still_paused: Callable[[], bool]) -> None:
        """Release the held writers one at a time, then open.

        Args:
            still_paused: A callable answering whether the session was paused again
                meanwhile; the release stops there and the gate stays closed.
        """
        self.state = GateState.RELEASING
        # One at a time: a released writer takes its place in the transport's write
        # queue in the step it wakes up in, so waiting for it to pass keeps the order.
        while self._held and not still_paused():
            held = self._held.popleft()
            held.release.set()
            with anyio.move_on_after(self._release_timeout):
                await held.passed.wait()
        self.state = GateState.HOLDING if still_paused() else GateState.OPEN
