"""A cost budget across a batch: stop starting tasks once it is spent.

The budget counts the cost of every result the batch records, results already in
its results file included (so running the same batch again with the same budget does
not spend it twice). Once the cost reaches the budget no task is started; the tasks
running then finish (``finish``) or are cancelled (``interrupt``). Tasks that did not
run, or were cancelled, have no result in the file, so running the batch again (with
a larger budget, or none) runs exactly them.

Before that, three rules hold the spend to the budget (`room`, `task_cap`, `reserve`;
the local executor and the Ray driver use them alike):

* While no cost is known yet (no result with a cost recorded, results file included),
  one task runs at a time: the first (a probe) says what a task costs before the
  others start. A result that cost nothing (a CLI that failed to start) says nothing
  of it, so the next task is a probe again.
* Each task's session gets the CLI's own cap (``max_budget_usd``, ``--max-budget-usd``),
  which is set aside for it (`reserve`) until its result is counted: its share of what
  is left of the budget once the cost so far and the caps of the running tasks are set
  aside, shared among the tasks that can start now (the free slots, as many as the
  mean cost fits in what is left, at least one: so each share is at least the mean),
  or the options' own ``max_budget_usd`` when it is smaller. The CLI ends a session
  once its cost reaches that cap, after the model call that reached it; its result is
  an ``error_max_budget_usd`` failure, recorded with what it spent. The cap covers all
  the task's attempts: a retry's session gets what the attempts before left of it (and
  a task whose cap is spent is not retried).
* Then a task starts only while what is left, once the cost so far and the running
  tasks' caps are set aside, is at least the mean cost; else it waits for a running
  task to end.

What this guarantees: the cost so far plus the caps of the running tasks never exceed
the budget when a task starts, and no task spends more than its cap plus the model
call that crossed it; so the batch passes its budget by at most one model call per
task running when it is spent (what such a call costs: one call's tokens), however
far above the mean some tasks cost (`overshoot` says by how much it passed it). A task
that would cost more than its share is cut short at its cap, a failure. A budget worth
one task (or less) runs one task whatever the concurrency.

Only the session the batch starts for a task is capped: a prompt's, or the client a
task function is handed. A task function that opens sessions of its own (`query`, a
`ClaudeSDKClient` of its own) is not: cap those with ``max_budget_usd`` in their own
options. Nor is their cost counted: a result's cost is what the batch's session reported.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from typing import Literal

from .._conversation.options import ClaudeAgentOptions
from .errors import BatchConfigError
from .results import BatchResult

__all__ = ["MIN_TASK_CAP_USD", "BudgetAction", "CostBudget", "capped_options", "check_action"]

MIN_TASK_CAP_USD = 0.000001
"""The smallest cap a task's session gets (the CLI takes only a positive one)."""

# a cost within this of a limit has reached it, whatever the float sums' last bits; a
# task's cap is this much above what is left, so that a task costing exactly that is
# not cut short by the CLI (which ends a session whose cost reached its cap)
_REL_TOL = 1e-9

_FIT_TOL = 1e-6  # how many mean costs fit in what is left, to float sums' last bits

BudgetAction = Literal["finish", "interrupt"]
"""What happens to the running tasks when the budget is spent: they ``finish`` (the
total may pass the budget by what they cost), or they are cancelled (``interrupt``)."""


def check_action(on_spent: object) -> BudgetAction:
    """`on_spent` as a `BudgetAction`, checked (with a budget or without one: a typo is
    refused either way, not only once a budget is set).

    Raises:
        BatchConfigError: It is neither ``finish`` nor ``interrupt``.
    """
    for action in ("finish", "interrupt"):
        if on_spent == action:
            return action
    raise BatchConfigError(f"on_budget must be 'finish' or 'interrupt', got {on_spent!r}")


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
        prior: What of it the results file held before this batch (``spent`` and
            `count_prior`).
        reserved: The caps set aside for the running tasks, by task id (`reserve`).
        counted: How many results that cost is of.
        priced: How many of them cost something (the mean cost is theirs: a result
            that cost nothing, a CLI that failed to start, says nothing of it).

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
        self.max_cost_usd = float(max_cost_usd)
        self.on_spent: BudgetAction = check_action(on_spent)
        self.spent = spent
        self.prior = spent  # of `spent`: what the results file held before this batch
        self.counted = 0  # results whose cost is in `spent`
        self.priced = 0  # those of them with a cost
        self.reserved: dict[str, float] = {}  # the caps of the running tasks, by id

    def count_prior(self, results: Iterable[BatchResult]) -> None:
        """Count the results already recorded (the results file's) in `spent`."""
        for result in results:
            self._add(result)
            self.prior += result.cost_usd

    def _add(self, result: BatchResult) -> None:
        self.spent += result.cost_usd
        self.counted += 1
        if result.cost_usd > 0:
            self.priced += 1

    @property
    def exhausted(self) -> bool:
        """True once the recorded cost has reached the budget: start no more tasks.

        Reached exactly counts, whatever the float sum's last bit (``0.7 + 0.1`` is
        ``0.7999999999999999``): a budget of the cost of k tasks runs k of them."""
        spent, budget = self.spent, self.max_cost_usd
        return spent >= budget or math.isclose(spent, budget, rel_tol=_REL_TOL)

    def expected(self) -> float | None:
        """What a task is expected to cost: the mean cost of the results with a cost,
        or `None` while none has one."""
        return self.spent / self.priced if self.priced else None

    @property
    def overshoot(self) -> float:
        """How far the cost this batch recorded took the total past the budget (0 while
        within it): a results file that had passed it already (a run without a budget,
        or with a larger one) is not this batch's overshoot."""
        limit = max(self.max_cost_usd, self.prior)
        over = self.spent - limit
        if over <= 0 or math.isclose(self.spent, limit, rel_tol=_REL_TOL):
            return 0.0
        return over

    def _held(self, running: int) -> float:
        """What ``running`` tasks may still spend: their caps, and the mean cost for
        each one without a cap (a session on a spare)."""
        uncapped = max(0, running - len(self.reserved))
        return sum(self.reserved.values()) + uncapped * (self.expected() or 0.0)

    def room(self, running: int) -> bool:
        """Whether a task may start while ``running`` tasks run: the budget is not
        spent, and either nothing runs, or a cost is known and what is left once the
        cost so far and what the running tasks may spend (their caps) are set aside
        is at least the mean cost.

        While no cost is known, one task runs at a time: the first says what a task
        costs before more start (with ``-j 16``, 16 tasks could spend 16 times a
        budget worth one).

        Args:
            running: Tasks started and not yet counted.
        """
        if self.exhausted:
            return False
        if running <= 0:  # alone: the budget is not spent, and the task is capped
            return True
        mean = self.expected()
        if mean is None:  # no cost known yet: one probe at a time
            return False
        projected = self.spent + self._held(running) + mean
        budget = self.max_cost_usd
        return projected <= budget or math.isclose(projected, budget, rel_tol=_REL_TOL)

    def task_cap(self, running: int, slots: int = 1) -> float:
        """The most the session of a task starting now may spend (its
        ``max_budget_usd``): what is left of the budget once the cost so far and what
        the ``running`` tasks may spend are set aside, shared among the tasks that may
        start now (`slots`, at most as many as the mean cost fits in it), and at least
        `MIN_TASK_CAP_USD`; a hair above that, so that a task costing exactly its
        share is not cut short.

        Args:
            running: Tasks started and not yet counted (not this one).
            slots: Tasks that may start now, this one included (the free slots).
        """
        return self._share(running, slots) * (1 + _REL_TOL)

    def _share(self, running: int, slots: int) -> float:
        """`task_cap` without its hair: what is set aside for the task."""
        left = self.max_cost_usd - self.spent - self._held(running)
        mean = self.expected()
        if mean and slots > 1 and left > 0:
            left /= max(1, min(slots, math.floor(left / mean * (1 + _FIT_TOL))))
        return max(left, MIN_TASK_CAP_USD)

    def cap_for(self, task_id: str, running: int, slots: int, own: float | None) -> float:
        """The cap of task `task_id` starting now (`task_cap`, or the options' `own`
        ``max_budget_usd`` when smaller), set aside for it (`reserve`).

        Args:
            task_id: The task.
            running: Tasks started and not yet counted (not this one).
            slots: Tasks that may start now, this one included.
            own: The options' ``max_budget_usd``, if any.
        """
        self.release(task_id)  # (run again after its Ray actor was lost)
        share = self._share(running, slots)
        cap = share * (1 + _REL_TOL)
        if own is not None and own < cap:
            cap = share = own
        self.reserve(task_id, share)
        return cap

    def reserve(self, task_id: str, cap: float) -> None:
        """Set `cap` aside for the running task `task_id` until its result is counted
        (`charge`) or it ends without one (`release`)."""
        self.reserved[task_id] = cap

    def release(self, task_id: str) -> None:
        """`task_id` no longer runs: what was set aside for it is free again."""
        self.reserved.pop(task_id, None)

    def charge(self, result: BatchResult) -> bool:
        """Add the cost of a recorded result.

        Returns:
            True when this result spent an ``interrupt`` budget: cancel the running tasks.
        """
        was = self.exhausted
        self.release(result.id)
        self._add(result)
        return self.exhausted and not was and self.on_spent == "interrupt"


def capped_options(options: ClaudeAgentOptions, cap: float | None) -> ClaudeAgentOptions:
    """`options` for a task's session under a budget's `CostBudget.task_cap`: a copy
    whose ``max_budget_usd`` is the smaller of theirs and `cap` (`options` itself when
    theirs is smaller, or there is no cap).

    Args:
        options: The task's options (never changed).
        cap: The task's cap, `None` without a budget.
    """
    own = options.max_budget_usd
    if cap is None or (own is not None and own <= cap):
        return options
    return dataclasses.replace(options, max_budget_usd=cap)
