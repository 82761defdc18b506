"""A cost budget across a batch (real CLI, scripted model): it stops the batch within one
task of the limit, counts the cost already recorded, and a re-run finishes exactly the
tasks left; with ``interrupt`` the running tasks are cancelled and run again later."""

from __future__ import annotations

import io
import json
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from ccwire import ClaudeAgentOptions
from ccwire._app.main import CliIO, main
from ccwire._batch.budget import CostBudget
from ccwire.batch import BatchConfigError, BatchResult, read_results, run_batch
from ccwire.testing import ModelRequest, ScriptedModel, text

from .scripted import first_prompt

TASKS = 8


def write_tasks(path: Path, ids: list[str]) -> None:
    path.write_text("".join(json.dumps({"id": i, "prompt": f"item {i}"}) + "\n" for i in ids))


def recorded(path: Path) -> list[BatchResult]:
    return list(read_results(path))


def run_cli(argv: list[str], cli_path: str) -> tuple[int, str]:
    cli_io = CliIO(io.StringIO(), io.StringIO(), io.StringIO(), {"CCWIRE_CLI_PATH": cli_path})
    code = main(argv, io=cli_io)
    assert isinstance(cli_io.stderr, io.StringIO)
    return code, cli_io.stderr.getvalue()


def test_the_budget_stops_within_one_task_and_a_rerun_finishes_the_rest(
    cli_path: str, tmp_path: Path
) -> None:
    tasks, results = tmp_path / "tasks.jsonl", tmp_path / "results.jsonl"
    ids = [f"t{i}" for i in range(TASKS)]
    write_tasks(tasks, ids)
    base = ["batch", str(tasks), "-o", str(results), "--offline", "--plain", "-j", "1"]
    budget = "0.0015"  # an echo session costs $0.0006 here: the third one spends it

    report = tmp_path / "report.html"
    code, err = run_cli([*base, "--max-cost-usd", budget, "--report", str(report)], cli_path)
    first = recorded(results)
    costs = [r.cost_usd for r in first]
    assert code == 1, err
    assert all(r.ok for r in first) and 1 < len(first) < TASKS
    assert sum(costs) >= float(budget)  # it went on while there was money left...
    assert sum(costs) - costs[-1] < float(budget)  # ...and stopped at the task that spent it
    assert f"{TASKS - len(first)} tasks not run" in err
    page = report.read_text()  # the live report, written a last time at the end
    assert f'<div class="total" id="total-total"><b>{len(first)}</b>' in page
    assert 'http-equiv="refresh"' not in page

    code, err = run_cli([*base, "--max-cost-usd", budget], cli_path)  # already spent
    assert (code, len(recorded(results))) == (1, len(first))
    assert "budget spent" in err

    code, err = run_cli(base, cli_path)  # no budget: the tasks left, and only them
    assert code == 0, err
    every = recorded(results)
    assert Counter(r.id for r in every) == Counter(ids)  # each task exactly once
    assert [r.id for r in every[len(first) :]] == ids[len(first) :]


def test_tasks_running_together_do_not_each_pass_the_budget(cli_path: str, tmp_path: Path) -> None:
    # with -j 4, a task started whenever one ended while the budget was not spent: the
    # three others running then each added their cost past it (8 tasks run for a budget
    # of 5); now a task starts only while the cost so far and the mean cost of each
    # running task and this one stay within the budget
    tasks, results = tmp_path / "tasks.jsonl", tmp_path / "results.jsonl"
    ids = [f"t{i}" for i in range(12)]
    write_tasks(tasks, ids)
    base = ["batch", str(tasks), "-o", str(results), "--offline", "--plain", "-j", "4"]
    code, err = run_cli([*base, "--max-cost-usd", "0.003"], cli_path)  # five echo sessions
    costs = [r.cost_usd for r in recorded(results)]
    assert code == 1 and "7 tasks not run" in err, err
    assert len(set(costs)) == 1 and len(costs) == 5 and sum(costs) == pytest.approx(0.003)


@pytest.mark.anyio
async def test_interrupt_cancels_the_running_tasks_which_run_again_later(
    cli_path: str, tmp_path: Path
) -> None:
    release = threading.Event()

    def step(request: ModelRequest) -> Any:
        prompt = first_prompt(request)
        if prompt.startswith("slow"):
            release.wait(60)  # held until the test lets go
        return text(f"echo: {prompt}")

    tasks = [{"id": "slow-1", "prompt": "slow one"}, {"id": "slow-2", "prompt": "slow two"},
             {"id": "fast-1", "prompt": "fast one"}, {"id": "fast-2", "prompt": "fast two"},
             {"id": "fast-3", "prompt": "fast three"}]  # fmt: skip
    out = tmp_path / "results.jsonl"
    with ScriptedModel(default=step) as model:
        try:
            opts = ClaudeAgentOptions(cli_path=cli_path, env=model.env(tmp_path / "home"),
                                      cwd=str(tmp_path))  # fmt: skip
            # (with a time limit far off: its cancellation of the held tasks is the
            # budget's, not a time-out, and records nothing)
            run = run_batch(tasks, options=opts, concurrency=3, output=out, task_timeout=60,
                            max_cost_usd=0.0001, on_budget="interrupt")  # fmt: skip
            async with run as results:
                got = await results.collect()
            assert [r.id for r in got] == ["fast-1"]  # the slow ones were cancelled
            assert run.over_budget() and run.submitted == 3
            assert [r.id for r in recorded(out)] == ["fast-1"]
        finally:
            release.set()

        async with run_batch(tasks, options=opts, concurrency=3, output=out) as results:
            again = await results.collect()
    assert sorted(r.id for r in again) == ["fast-2", "fast-3", "slow-1", "slow-2"]
    assert Counter(r.id for r in recorded(out)) == Counter(t["id"] for t in tasks)


def test_a_budget_must_be_positive() -> None:
    for bad in (0, -1.0, float("nan"), True):
        with pytest.raises(BatchConfigError, match="max_cost_usd"):
            run_batch([], max_cost_usd=bad)
    with pytest.raises(BatchConfigError, match="on_budget"):
        run_batch([], max_cost_usd=1.0, on_budget="later")  # type: ignore[arg-type]


def test_a_budget_reached_exactly_is_spent_whatever_the_float_sum() -> None:
    for costs in ([0.7, 0.1], [0.1] * 10, [0.0006] * 3):
        budget = CostBudget(float(f"{sum(costs):.6f}"), "finish")  # as a user writes it
        for cost in costs:
            assert not budget.exhausted, costs
            budget.charge(BatchResult(id="t", ok=True, cost_usd=cost))
        assert budget.exhausted, (costs, budget.spent, budget.max_cost_usd)
    barely = CostBudget(1.0, "finish", spent=0.999)
    assert not barely.exhausted  # a real shortfall is not rounded away


def test_room_for_a_task_counts_what_the_running_ones_are_expected_to_cost() -> None:
    budget = CostBudget(1.0, "finish")
    assert budget.room(15)  # no cost known yet: the budget alone
    budget.count_prior([BatchResult(id="a", ok=True, cost_usd=0.1)] * 3)  # a results file
    assert budget.spent == pytest.approx(0.3) and budget.counted == 3
    assert budget.room(0) and budget.room(5)  # 0.3 + 6 * 0.1 = 0.9
    assert budget.room(6) and not budget.room(7)  # 1.0 exactly is within it; 1.1 is not
    budget.charge(BatchResult(id="b", ok=True, cost_usd=0.65))  # 0.95, a mean of 0.19
    assert budget.room(0) and not budget.room(1)  # alone it may still start: not spent
    budget.charge(BatchResult(id="c", ok=True, cost_usd=0.05))
    assert not budget.room(0)  # spent
