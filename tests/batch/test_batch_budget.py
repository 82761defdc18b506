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

import anyio
import pytest

from ccwire import ClaudeAgentOptions
from ccwire._app.main import CliIO, main
from ccwire._batch.budget import MIN_TASK_CAP_USD, BudgetAction, CostBudget, capped_options
from ccwire.batch import (
    BatchConfigError,
    BatchResult,
    BatchState,
    RetryPolicy,
    read_results,
    run_batch,
)
from ccwire.testing import ModelRequest, ScriptedModel, error, reply, text, tool_use

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
    assert 1 < len(first) < TASKS
    assert sum(costs) >= float(budget)  # it went on while there was money left...
    assert sum(costs) - costs[-1] < float(budget)  # ...and stopped at the task that spent it
    # which its CLI cut short at what was left ($0.0003): a failure, with what it spent
    assert all(r.ok for r in first[:-1]) and first[-1].subtype == "error_max_budget_usd"
    assert f"{TASKS - len(first)} tasks not run" in err
    over = sum(costs) - float(budget)  # the model call that crossed the last one's cap
    assert f"overshot by ${over:.4f} (the model calls that crossed" in err, err
    page = report.read_text()  # the live report, written a last time at the end
    assert f'<div class="total" id="total-total"><b>{len(first)}</b>' in page
    assert 'http-equiv="refresh"' not in page

    code, err = run_cli([*base, "--max-cost-usd", budget], cli_path)  # already spent
    assert (code, len(recorded(results))) == (1, len(first))
    assert "budget spent" in err

    # no budget: the tasks left, and only them (with the one cut short: it failed)
    code, err = run_cli([*base, "--rerun-failed"], cli_path)
    assert code == 0, err
    every = recorded(results)
    assert Counter(r.id for r in every) == Counter(ids) + Counter([first[-1].id])
    assert [r.id for r in every[len(first) :]] == ids[len(first) - 1 :]


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
    assert all(r.ok for r in recorded(results))  # each within its cap: none cut short


def test_a_budget_worth_one_task_runs_one_task_with_four_at_once(
    cli_path: str, tmp_path: Path
) -> None:
    # while no cost was known, every slot started a task: four ran (and spent four
    # times the budget); now the first runs alone, and its cost spends the budget
    tasks, results = tmp_path / "tasks.jsonl", tmp_path / "results.jsonl"
    write_tasks(tasks, [f"t{i}" for i in range(TASKS)])
    argv = ["batch", str(tasks), "-o", str(results), "--offline", "--plain", "-j", "4",
            "--max-cost-usd", "0.0006"]  # fmt: skip
    code, err = run_cli(argv, cli_path)
    got = recorded(results)
    assert code == 1 and f"{TASKS - 1} tasks not run" in err, err
    assert [(r.id, r.ok) for r in got] == [("t0", True)]
    assert got[0].cost_usd == pytest.approx(0.0006)


@pytest.mark.anyio
async def test_each_session_is_capped_by_what_is_left_of_the_budget(
    cli_path: str, tmp_path: Path
) -> None:
    marks = tmp_path / "marks"  # the spawner writes each CLI's arguments there
    marks.mkdir()
    tasks = [{"id": f"t{i}", "prompt": f"item {i}"} for i in range(TASKS)]
    with ScriptedModel(default=lambda r: text(f"echo: {first_prompt(r)}")) as model:
        env = {**model.env(tmp_path / "home"), "SPAWN_MARKS": str(marks)}
        opts = ClaudeAgentOptions(cli_path=cli_path, env=env, cwd=str(tmp_path),
                                  max_budget_usd=0.002)  # fmt: skip
        async with run_batch(tasks, options=opts, concurrency=4, max_cost_usd=0.003,
                             spawn="tests.batch.spawners:counting") as results:  # fmt: skip
            got = await results.collect()
    assert len(got) == 5 and all(r.ok for r in got)  # $0.0006 each
    caps = sorted(float(mark.read_text().split("--max-budget-usd=")[1].split()[0])
                  for mark in marks.iterdir())  # fmt: skip
    # the first alone: its options' own $0.002 (the budget left is $0.003); then four
    # at once, each capped by its share of what is left once the cost so far and the caps
    # of those running are set aside ($0.0024 shared by four: $0.0006 each)
    assert caps == pytest.approx([0.0006, 0.0006, 0.0006, 0.0006, 0.002])
    assert opts.max_budget_usd == 0.002  # the caller's options are left alone


@pytest.mark.anyio
async def test_interrupt_cancels_the_running_tasks_which_run_again_later(
    cli_path: str, tmp_path: Path
) -> None:
    release = threading.Event()

    def step(request: ModelRequest) -> Any:
        prompt = first_prompt(request)
        if prompt.startswith("slow"):
            release.wait(60)  # held until the test lets go
        if prompt.startswith("big"):
            return reply(text("a costly answer"), usage={"input_tokens": 10_000})
        return text(f"echo: {prompt}")

    # the first runs alone (no cost known yet); then three start: two held, and one
    # whose model call costs $0.03, past its cap (what was left): it spends the budget
    tasks = [{"id": "fast-1", "prompt": "fast one"}, {"id": "slow-1", "prompt": "slow one"},
             {"id": "slow-2", "prompt": "slow two"}, {"id": "big-1", "prompt": "big one"},
             {"id": "fast-2", "prompt": "fast two"},
             {"id": "fast-3", "prompt": "fast three"}]  # fmt: skip
    out = tmp_path / "results.jsonl"
    with ScriptedModel(default=step) as model:
        try:
            opts = ClaudeAgentOptions(cli_path=cli_path, env=model.env(tmp_path / "home"),
                                      cwd=str(tmp_path))  # fmt: skip
            # (with a time limit far off: its cancellation of the held tasks is the
            # budget's, not a time-out, and records nothing)
            run = run_batch(tasks, options=opts, concurrency=3, output=out, task_timeout=60,
                            max_cost_usd=0.003, on_budget="interrupt")  # fmt: skip
            async with run as results:
                got = await results.collect()
            assert [r.id for r in got] == ["fast-1", "big-1"]  # the slow ones were cancelled
            assert got[1].subtype == "error_max_budget_usd"  # cut short by its cap
            assert run.over_budget() and run.submitted == 4
            assert [r.id for r in recorded(out)] == ["fast-1", "big-1"]
        finally:
            release.set()

        async with run_batch(tasks, options=opts, concurrency=3, output=out) as results:
            again = await results.collect()
    assert sorted(r.id for r in again) == ["fast-2", "fast-3", "slow-1", "slow-2"]
    assert Counter(r.id for r in recorded(out)) == Counter(t["id"] for t in tasks)


@pytest.mark.anyio
@pytest.mark.parametrize("on_budget", ["finish", "interrupt"])
async def test_a_batch_its_budget_left_unfinished_is_stopped_not_completed(
    fake_options: Any, on_budget: BudgetAction
) -> None:
    # `completed` says every task has its result: a batch whose budget left tasks
    # unrun ended `completed` all the same (only `over_budget()` told them apart)
    paid = [{"id": "p", "prompt": "pay 0.01 p"}]
    echo = [{"id": "a", "prompt": "echo a"}, {"id": "b", "prompt": "echo b"}]
    with anyio.fail_after(60):
        async with run_batch(paid + echo, options=fake_options(), concurrency=1,
                             max_cost_usd=0.005, on_budget=on_budget) as run:  # fmt: skip
            got = await run.collect()
    assert [r.id for r in got] == ["p"] and run.over_budget()
    assert run.state is BatchState.STOPPED
    with anyio.fail_after(60):  # spent by the last task: none is left, it completed
        async with run_batch(echo + paid, options=fake_options(), concurrency=1,
                             max_cost_usd=0.005, on_budget=on_budget) as run:  # fmt: skip
            got = await run.collect()
    assert [r.id for r in got] == ["a", "b", "p"] and run.over_budget()
    assert run.state is BatchState.COMPLETED


def test_a_budget_must_be_positive() -> None:
    for bad in (0, -1.0, float("nan"), True):
        with pytest.raises(BatchConfigError, match="max_cost_usd"):
            run_batch([], max_cost_usd=bad)
    for budget in (1.0, None):  # a typo without a budget was taken silently
        with pytest.raises(BatchConfigError, match="on_budget"):
            run_batch([], max_cost_usd=budget, on_budget="later")  # type: ignore[arg-type]


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
    assert budget.room(0)  # no cost known yet: one task, a probe...
    assert not budget.room(1) and not budget.room(15)  # ...alone (was: 16 at once)
    budget.count_prior([BatchResult(id="f", ok=False, cost_usd=0.0)])  # a CLI that did not start
    assert budget.counted == 1 and budget.room(0) and not budget.room(1)  # no cost known still
    budget = CostBudget(1.0, "finish")
    budget.count_prior([BatchResult(id="a", ok=True, cost_usd=0.1)] * 3)  # a results file
    assert budget.spent == pytest.approx(0.3) and budget.counted == 3
    assert budget.room(0) and budget.room(5)  # 0.3 + 6 * 0.1 = 0.9
    assert budget.room(6) and not budget.room(7)  # 1.0 exactly is within it; 1.1 is not
    budget.charge(BatchResult(id="b", ok=True, cost_usd=0.65))  # 0.95, a mean of 0.19
    assert budget.room(0) and not budget.room(1)  # alone it may still start: not spent
    budget.charge(BatchResult(id="c", ok=True, cost_usd=0.05))
    assert not budget.room(0)  # spent


def test_a_tasks_cap_is_what_is_left_once_the_running_ones_are_set_aside() -> None:
    budget = CostBudget(1.0, "finish")
    assert budget.task_cap(0) == pytest.approx(1.0)  # the probe: the whole budget
    budget.charge(BatchResult(id="a", ok=True, cost_usd=0.2))
    assert budget.task_cap(0) == pytest.approx(0.8)
    assert budget.task_cap(2) == pytest.approx(0.4)  # two running, at the mean of 0.2
    assert budget.task_cap(0) > 0.8  # a hair above: a task costing exactly that finishes
    assert budget.task_cap(9) == pytest.approx(MIN_TASK_CAP_USD)  # never 0 nor less
    assert budget.task_cap(0, slots=3) == pytest.approx(0.8 / 3)  # shared by those starting
    assert budget.task_cap(0, slots=9) == pytest.approx(0.2)  # at least the mean each
    assert budget.cap_for("b", 0, 3, None) == pytest.approx(0.8 / 3)  # set aside for it
    assert budget.reserved == {"b": pytest.approx(0.8 / 3)}
    assert budget.task_cap(1) == pytest.approx(0.8 * 2 / 3)  # a capped task holds its cap
    assert budget.cap_for("c", 1, 1, 0.1) == 0.1  # the options' own, when smaller
    budget.charge(BatchResult(id="b", ok=True, cost_usd=0.2))  # counted: its cap is free
    assert budget.reserved == {"c": 0.1}
    budget.release("c")  # cancelled
    assert budget.reserved == {} and budget.task_cap(0) == pytest.approx(0.6)
    opts = ClaudeAgentOptions(max_budget_usd=0.5)
    assert capped_options(opts, None) is opts  # no budget
    assert capped_options(opts, 0.6) is opts  # the options' own is smaller
    capped = capped_options(opts, 0.3)
    assert (capped.max_budget_usd, opts.max_budget_usd) == (0.3, 0.5)  # a copy
    assert capped_options(ClaudeAgentOptions(), 0.3).max_budget_usd == 0.3


def test_with_spares_the_sessions_are_not_capped() -> None:
    # a spare, booted before, cannot take a cap of its own: a capped session starts cold
    assert run_batch([], max_cost_usd=1.0, spares=1).budget_cap("t", 0) is None
    assert run_batch([], max_cost_usd=1.0).budget_cap("t", 0) == pytest.approx(1.0)


def test_tasks_far_above_the_mean_pass_the_budget_by_one_call_each_at_most() -> None:
    # the mean says $0.01 a task; then four start at once and each spends its whole cap,
    # and one model call past it: each cap set the others aside at the mean only, so the
    # four spent almost four budgets; now the caps set aside never pass what is left
    call = 0.003
    budget = CostBudget(1.0, "finish")
    budget.charge(BatchResult(id="probe", ok=True, cost_usd=0.01))
    caps = {f"big{i}": budget.cap_for(f"big{i}", i, 4 - i, None) for i in range(4)}
    assert not budget.room(4)
    for task_id, cap in caps.items():
        budget.charge(BatchResult(id=task_id, ok=False, cost_usd=cap + call))
    assert budget.exhausted
    assert 0 < budget.overshoot <= 4 * call + 1e-9
    assert budget.spent == pytest.approx(1.0 + budget.overshoot)


@pytest.mark.anyio
async def test_costly_tasks_at_once_overshoot_the_budget_by_at_most_a_call_each(
    cli_path: str, tmp_path: Path
) -> None:
    # after a cheap first task, four tasks each loop on a tool whose every model call
    # costs $0.003, until their cap ends them: together they stay within the budget
    # but for the one call that crossed each cap (they spent four times it before)
    def step(request: ModelRequest) -> Any:
        if first_prompt(request).startswith("big"):
            return reply(tool_use("mcp__calc__add", {"a": 1, "b": 1}), usage={"input_tokens": 1000})
        return text("echo")

    tasks = [{"id": "cheap", "prompt": "cheap"}] + [
        {"id": f"big{i}", "prompt": f"big {i}"} for i in range(4)
    ]
    with ScriptedModel(default=step) as model:
        opts = ClaudeAgentOptions(cli_path=cli_path, env=model.env(tmp_path / "home"),
                                  cwd=str(tmp_path), allowed_tools=["mcp__calc"],
                                  max_turns=100)  # fmt: skip
        async with run_batch(tasks, options=opts, concurrency=4, max_cost_usd=0.05,
                             tools=["tests.batch.calc_tools:server"]) as run:  # fmt: skip
            got = {r.id: r for r in await run.collect()}
    assert sorted(got) == sorted(t["id"] for t in tasks)
    big = [got[f"big{i}"] for i in range(4)]
    assert all(r.subtype == "error_max_budget_usd" for r in big), [r.error for r in big]
    assert run.budget is not None and run.budget.exhausted
    call = 0.003
    assert sum(r.cost_usd for r in got.values()) <= 0.05 + 4 * call + 1e-9
    assert run.budget.overshoot <= 4 * call + 1e-9


@pytest.mark.anyio
async def test_a_tasks_cap_covers_its_retries(cli_path: str, tmp_path: Path) -> None:
    # the first session spends $0.003 on a tool call, then gets a 529 (retried): the
    # second session's cap is what is left of the task's $0.005 (each had it whole)
    marks = tmp_path / "marks"
    marks.mkdir()
    sessions: list[str] = []

    def step(request: ModelRequest) -> Any:
        turn = sum(1 for m in request.messages if m.get("role") == "assistant")
        if turn == 0:
            sessions.append("started")
        if len(sessions) == 1:
            if turn == 0:
                return reply(tool_use("mcp__calc__add", {"a": 1, "b": 1}),
                             usage={"input_tokens": 1000})  # fmt: skip
            return error(529, "Overloaded", "overloaded_error", retry=False)
        return text("done")

    with ScriptedModel(default=step) as model:
        env = {**model.env(tmp_path / "home"), "SPAWN_MARKS": str(marks)}
        opts = ClaudeAgentOptions(cli_path=cli_path, env=env, cwd=str(tmp_path),
                                  allowed_tools=["mcp__calc"], max_budget_usd=0.005)  # fmt: skip
        async with run_batch([{"id": "t", "prompt": "flaky"}], options=opts,
                             retries=RetryPolicy(max_attempts=2, base_delay=0.01),
                             tools=["tests.batch.calc_tools:server"],
                             spawn="tests.batch.spawners:counting") as results:  # fmt: skip
            (got,) = await results.collect()
    assert (got.ok, got.attempts) == (True, 2), got.error
    caps = sorted(float(mark.read_text().split("--max-budget-usd=")[1].split()[0])
                  for mark in marks.iterdir())  # fmt: skip
    first = 0.005 - caps[0]  # what the first session spent: its call of $0.003 and more
    assert caps[1] == pytest.approx(0.005) and 0.003 <= first < got.cost_usd
