"""What one CLI process spent, from the ``total_cost_usd`` of its results.

The CLI's ``total_cost_usd`` is cumulative over its process, and on ``--resume``
(``--fork-session`` too) the CLI 2.1.330 first restores the cost the session's
earlier processes recorded when they ended cleanly (none when one was killed), so the
total of a resumed process counts them too. What the process itself spent is its
total less what it carried in. A result frame says how much of the total was spent
since the previous result (``model_usage_since_last_result``, per model): on a
process's first result, the rest is what it carried in.
"""

from __future__ import annotations

from collections.abc import Mapping

from .messages import ResultMessage

__all__ = ["CostMeter", "carried_cost"]

_NOISE = 1e-12  # below this, a difference of float sums is rounding, not money


def carried_cost(result: ResultMessage) -> float | None:
    """The cost the CLI carried into its process, read from its first result.

    ``total_cost_usd`` less the ``costUSD`` of the frame's
    ``model_usage_since_last_result``; `None` when the frame lacks either.
    """
    since = result.raw.get("model_usage_since_last_result") if result.raw else None
    if result.total_cost_usd is None or not isinstance(since, Mapping):
        return None
    spent = 0.0
    for usage in since.values():
        cost = usage.get("costUSD") if isinstance(usage, Mapping) else None
        if isinstance(cost, (int, float)) and not isinstance(cost, bool):
            spent += cost
    carried = result.total_cost_usd - spent
    return carried if carried > _NOISE else 0.0


class CostMeter:
    """What one CLI process spent: feed it each of the process's results, in order.

    Args:
        carried: The cost the process started with, if known (0 for a new session);
            `None` to read it from the first result (`carried_cost`), falling back to
            ``fallback`` when that result does not say.
        fallback: The cost assumed carried in when neither says (a CLI older than
            2.1.330).
    """

    def __init__(self, carried: float | None = None, *, fallback: float = 0.0) -> None:
        self._carried = carried
        self._fallback = fallback
        self.spent = 0.0
        """What the process spent up to its last result, in dollars."""

    def add(self, result: ResultMessage) -> float | None:
        """Count `result`; return what was spent since the previous one (`None`: unknown)."""
        total = result.total_cost_usd
        if total is None:
            return None
        if self._carried is None:
            found = carried_cost(result)
            self._carried = min(total, self._fallback) if found is None else found
        spent = max(0.0, total - self._carried)
        delta = max(0.0, spent - self.spent)
        self.spent = spent
        return delta
