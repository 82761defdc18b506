"""Which prompts are still owed an answer.

Every prompt we write carries a ``uuid``. The CLI may answer prompts one turn each,
merge prompts sent back to back into one turn, or fold a prompt sent mid-turn into the
running turn; so "one prompt, one result" is wrong. The ledger settles a prompt when:

* a result lists it in ``user_message_uuids``;
* its ``command_lifecycle`` reaches ``completed``/``cancelled`` (CLIs that report
  lifecycles: ``msg_lifecycle_v1``);
* the CLI reports ``idle``: on lifecycle-reporting CLIs only for prompts it had already
  acknowledged (a prompt written just before a late ``idle`` of the previous turn is
  still owed), otherwise for every prompt;
* a result that names no prompts arrives from a CLI without lifecycles (old CLIs).
"""

from __future__ import annotations

__all__ = ["PromptLedger"]

_ACKNOWLEDGED_STATES = frozenset({"queued", "started"})
_SETTLED_STATES = frozenset({"completed", "cancelled"})


class PromptLedger:
    """Bookkeeping of issued and owed prompt uuids. Pure: no I/O, no clocks."""

    def __init__(self) -> None:
        self._issued: set[str] = set()
        self._owed: set[str] = set()
        self._acknowledged: set[str] = set()
        self.lifecycle_reported = False
        """True once the CLI is known to report ``command_lifecycle`` frames."""

    @property
    def owed(self) -> bool:
        """True while some prompt is not settled."""
        return bool(self._owed)

    def issued(self, uid: str) -> bool:
        """True if we wrote a prompt with this uuid."""
        return uid in self._issued

    def issue(self, uid: str) -> None:
        """A prompt with this uuid is being written."""
        self._issued.add(uid)
        self._owed.add(uid)

    def settle(self, uid: str) -> None:
        """This prompt is owed nothing more."""
        self._owed.discard(uid)
        self._acknowledged.discard(uid)

    def on_lifecycle(self, uid: str, state: str) -> None:
        """A ``command_lifecycle`` frame for one of our prompts."""
        self.lifecycle_reported = True
        if state in _SETTLED_STATES:
            self.settle(uid)
        elif state in _ACKNOWLEDGED_STATES and uid in self._owed:
            self._acknowledged.add(uid)

    def on_result(self, answered: tuple[str, ...]) -> None:
        """A result frame, naming the prompts it answered (maybe none)."""
        if answered:
            for uid in answered:
                self.settle(uid)
        elif not self.lifecycle_reported:
            self.clear()

    def on_idle(self) -> None:
        """The CLI reported ``idle``."""
        if self.lifecycle_reported:
            for uid in list(self._acknowledged):
                self.settle(uid)
        else:
            self.clear()

    def clear(self) -> None:
        """Settle everything (the connection ended)."""
        self._owed.clear()
        self._acknowledged.clear()
