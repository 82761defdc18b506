"""A cost budget across a batch: stop starting tasks once it is spent.

The budget counts the cost of every result the batch records, results already in
its results file included (so running the same batch again with the same budget does
not spend it twice). Once the cost reaches the budget no task is started; the tasks
running then finish (``finish``) or are cancelled (``interrupt``). Tasks that did not
run, or were cancelled, have no result in the file, so running the batch again (with
a larger budget, or none) runs exactly them.

Before that, a task starts only while the cost so far, plus what the tasks running and
this one are expected to cost (the mean cost of the results counted), stays within the
budget (`room`); else it waits for a running task to end. So the running tasks cannot
together pass the budget by one task's cost each (16 of them, with ``-j 16``), only by
how much their costs differ from the mean; a task that costs more than expected is the
one overspend left (set ``max_budget_usd`` in the options to cap each session too).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
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
        counted: How many results that cost is of.

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
        self.counted = 0  # results whose cost is in `spent`

    def count_prior(self, results: Iterable[BatchResult]) -> None:
        """Count the results already recorded (the results file's) in `spent`."""
        for result in results:
            self.spent += result.cost_usd
            self.counted += 1

    @property
    def exhausted(self) -> bool:
        """True once the recorded cost has reached the budget: start no more tasks.

        Reached exactly counts, whatever the float sum's last bit (``0.7 + 0.1`` is
        ``0.7999999999999999``): a budget of the cost of k tasks runs k of them."""
        spent, budget = self.spent, self.max_cost_usd
        return spent >= budget or math.isclose(spent, budget, rel_tol=1e-9)

    def room(self, running: int) -> bool:
        """Whether a task may start while ``running`` tasks run: the budget is not
        spent, and (with tasks running and a cost known) the cost so far plus the mean
        cost of a result for each running task and this one stays within it.

        Args:
            running: Tasks started and not yet counted.
        """
        if self.exhausted:
            return False
        if running <= 0 or self.counted == 0:  # nothing to go by: the budget alone
            return True
        projected = self.spent + (running + 1) * (self.spent / self.counted)
        budget = self.max_cost_usd
        return projected <= budget or math.isclose(projected, budget, rel_tol=1e-9)

    def charge(self, result: BatchResult) -> bool:
        """Add the cost of a recorded result.

        Returns:
            True when this result spent an ``interrupt`` budget: cancel the running tasks.
        """
        was = self.exhausted
        self.spent += result.cost_usd
        self.counted += 1
        return self.exhausted and not was and self.on_spent == "interrupt"
