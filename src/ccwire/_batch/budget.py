"""A cost budget across a batch: stop starting tasks once it is spent.

The budget counts the cost of every result the batch records, results already in
its results file included (so running the same batch again with the same budget does
not spend it twice). Once the cost reaches the budget no task is started; the tasks
running then finish (``finish``) or are cancelled (``interrupt``). Tasks that did not
run, or were cancelled, have no result in the file, so running the batch again (with
a larger budget, or none) runs exactly them.
"""

from __future__ import annotations

import math
from typing import Literal

from .errors import BatchConfigError
from .results import BatchResult

__all__ = ["BudgetAction", "CostBudget"]

BudgetAction = Literal["finish", "interrupt"]
"""What happens to the running tasks when the budget is spent: they ``finish`` (the
total may pass the budget by what they cost), or they are cancelled (``interrupt``)."""


class CostBudget:
    """How much a batch may still spend, in US dollars (the CLI's ``total_cost_usd``).

    Args:
        max_cost_usd: The budget.
        on_spent: ``finish`` or ``interrupt``.
        spent: The cost already recorded in the results file.

    Attributes:
        max_cost_usd: The budget.
        on_spent: What happens to running tasks once it is spent.
        spent: The cost recorded so far.

    Raises:
        BatchConfigError: A budget that is not a positive number, or a bad `on_spent`.
    """

    def __init__(self, max_cost_usd: float, on_spent: BudgetAction, spent: float = 0.0) -> None:
        if (
            isinstance(max_cost_usd, bool)
            or not isinstance(max_cost_usd, (int, float))
            or not math.isfinite(max_cost_usd)
            or max_cost_usd <= 0
        ):
            raise BatchConfigError(f"max_cost_usd must be a positive number, got {max_cost_usd!r}")
        if on_spent not in ("finish", "interrupt"):
            raise BatchConfigError(f"on_budget must be 'finish' or 'interrupt', got {on_spent!r}")
        self.max_cost_usd = float(max_cost_usd)
        self.on_spent: BudgetAction = on_spent
        self.spent = spent

    @property
    def exhausted(self) -> bool:
        """True once the recorded cost has reached the budget: start no more tasks.

        Reached exactly counts, whatever the float sum's last bit (``0.7 + 0.1`` is
        ``0.7999999999999999``): a budget of the cost of k tasks runs k of them."""
        spent, budget = self.spent, self.max_cost_usd
        return spent >= budget or math.isclose(spent, budget, rel_tol=1e-9)

    def charge(self, result: BatchResult) -> bool:
        """Add the cost of a recorded result.

        Returns:
            True when this result spent an ``interrupt`` budget: cancel the running tasks.
        """
        was = self.exhausted
        self.spent += result.cost_usd
        return self.exhausted and not was and self.on_spent == "interrupt"
