"""``ccwire batch``: run every task of a JSONL file, resumably, with live progress.

The tasks go through `run_batch` (local subprocesses, or Ray with ``--ray``). Malformed
lines (bad JSON, bad fields, bytes that are not UTF-8) are reported with their line
numbers and skipped, counted in the summary, and make the exit code 1 unless
``--allow-skipped`` (``--strict``: the command stops before anything runs); a file
without a task, duplicate ids and an unwritable results file stop it before anything
runs too. A results file that fails mid-batch ends it with the error (exit 1), every
result written before kept. Progress that cannot be written to standard output (a full
disk) is no longer written, the batch goes on, and the command then says so (exit 1).
The exit code is 0 only when every task of the file has a successful result. Ctrl-C
or SIGTERM stops the batch: the running sessions are cancelled (their CLIs ended),
every result kept; the exit code is then 130 or 143, and the same command continues.
Offline runs (``--offline``, ``--scripted FILE``) start one `ScriptedModel` that plays
each session's script from its first step.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import shutil
import signal
import stat
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import anyio

from .._batch.errors import BatchConfigError, BatchError
from .._batch.output import read_results
from .._batch.refs import resolve_spawner, resolve_tools
from .._batch.results import BatchResult, RetryPolicy
from .._batch.run import BatchRun, run_batch
from .._batch.session import BatchEvent
from .._batch.taskfile import iter_task_file, scan_task_file
from .._conversation.options import ClaudeAgentOptions
from .._transport.discovery import find_cli, spawned_command
from ..testing import DEFAULT_MODEL, ScriptedModel
from .batch_progress import (
    BatchDisplay,
    BatchProgress,
    JsonBatchDisplay,
    PlainBatchDisplay,
    RichBatchDisplay,
)
from .batch_report import (
    Superseded,
    add_latest,
    read_latest,
    refuse_overwriting,
    write_report,
)
from .doctor import detect_auth
from .errors import AuthMissingError, ReportWriteError, utf8_options
from .io import watch_signals
from .loaders import UsageError, load_script, parse_step
from .otel import exporting, start_otel, under_parent
from .render import rich_available

if TYPE_CHECKING:
    from ..testing import ModelRequest, Step
    from .io import CliIO

__all__ = ["batch_command", "per_session_script"]

_ECHO = "(offline echo) {prompt}"
logger = logging.getLogger("ccwire")


def per_session_script(steps: list[Step]) -> Step:
    """A `ScriptedModel` default step that plays `steps` from the start in every session.

    Turn ``k`` of a session (``k`` assistant messages already in its request) gets
    ``steps[k]``; past the script, the prompt is echoed. Sessions running at once do
    not disturb each other, whatever their order.
    """
    echo = parse_step(_ECHO)

    def step(request: ModelRequest) -> Any:
        turn = sum(1 for m in request.messages if m.get("role") == "assistant")
        chosen = steps[turn] if turn < len(steps) else echo
        return chosen(request) if callable(chosen) else chosen

    return step


@contextlib.contextmanager
def _offline(args: argparse.Namespace) -> Iterator[dict[str, str]]:
    if not (args.offline or args.scripted):
        yield {}
        return

    steps, model_name = load_script(args.scripted) if args.scripted else ([], None)
    home = tempfile.mkdtemp(prefix="ccwire-batch-")
    model = ScriptedModel(default=per_session_script(steps), model=model_name or DEFAULT_MODEL)
    try:
        with model:
            yield model.env(home)
    finally:
        shutil.rmtree(home, ignore_errors=True)


class ProgressOutput:
    """Standard output as the batch's progress is written to it: once a write fails (a
    full disk, an I/O error), the progress is no longer written and the batch goes on
    (its results go to the results file, and to the report page); `failure` says why.
    A closed pipe (`BrokenPipeError`) is raised, as before: nobody reads any more.

    Args:
        out: The stream.
    """

    def __init__(self, out: IO[str]) -> None:
        self._out = out
        self.failure: OSError | None = None

    def write(self, text: str) -> int:
        """Write `text`, unless a write failed before (then nothing is written)."""
        self._guarded(self._out.write, text)
        return len(text)

    def flush(self) -> None:
        """Flush, unless a write failed before."""
        self._guarded(self._out.flush)

    def _guarded(self, call: Callable[..., object], *args: object) -> None:
        if self.failure is not None:
            return
        try:
            call(*args)
        except BrokenPipeError:
            raise
        except OSError as exc:
            self.failure = exc

    def __getattr__(self, name: str) -> Any:
        return getattr(self._out, name)  # isatty, encoding, fileno...


def _display(args: argparse.Namespace, out: Any, progress: BatchProgress) -> BatchDisplay:
    if args.json:
        return JsonBatchDisplay(progress, out)
    if args.live or (not args.plain and out.isatty() and rich_available()):
        return RichBatchDisplay(progress, out, force=args.live, verbose=args.verbose)
    return PlainBatchDisplay(progress, out, verbose=args.verbose)


def _check_arguments(args: argparse.Namespace) -> None:
    """Refuse numbers out of range with a `UsageError`, before anything starts."""
    if args.jobs < 1:
        raise UsageError(f"-j must be at least 1, got {args.jobs}")
    if args.retries < 0:
        raise UsageError("--retries must be >= 0")
    if args.max_turns is not None and args.max_turns < 1:
        raise UsageError(f"--max-turns must be at least 1, got {args.max_turns}")
    if not 0 <= args.num_cpus < float("inf"):  # NaN too
        raise UsageError(f"--num-cpus must be a number of CPUs, 0 or more, got {args.num_cpus}")
    if args.memory_mb is not None and args.memory_mb < 1:
        raise UsageError(f"--memory-mb must be at least 1, got {args.memory_mb}")
    if args.sessions_per_actor is not None and args.sessions_per_actor < 1:
        raise UsageError(f"--sessions-per-actor must be at least 1, got {args.sessions_per_actor}")
    if args.max_cost_usd is not None and not args.max_cost_usd > 0:
        raise UsageError(f"--max-cost-usd must be positive, got {args.max_cost_usd}")
    if args.silence_timeout is not None and not 0 < args.silence_timeout < float("inf"):
        raise UsageError(f"--silence-timeout must be a positive number of seconds, got "
                         f"{args.silence_timeout}")  # fmt: skip
    if args.task_timeout is not None and not 0 < args.task_timeout < float("inf"):
        raise UsageError(f"--task-timeout must be a positive number of seconds, got "
                         f"{args.task_timeout}")  # fmt: skip


def batch_command(args: argparse.Namespace, io: CliIO) -> int:
    """``ccwire batch``: returns the exit code (errors are raised for the caller to map)."""
    _check_arguments(args)
    if args.report:
        refuse_overwriting(args.report, results_file=args.output, task_file=args.tasks)
    with _readable_twice(args.tasks, args.output) as tasks:
        return _batch(args, io, tasks)


@contextlib.contextmanager
def _readable_twice(tasks: str, output: str) -> Iterator[str]:
    """The task file as a path that can be read twice (scanned, then read lazily): a
    pipe (``/dev/stdin``, ``<(...)``) is copied to a temporary file as it is read
    (the second reading found it empty, and nothing ran). A results file that is the
    task file is refused (the results were appended to the tasks).

    Raises:
        BatchConfigError: The results file is the task file.
    """
    try:
        if Path(output).exists() and Path(output).samefile(tasks):
            raise BatchConfigError(
                f"the results file {output!r} is the task file: the results would be "
                "appended to the tasks; give -o another file"
            )
        mode = Path(tasks).stat().st_mode
    except OSError:  # missing or unreadable: the scan says so
        mode = stat.S_IFREG
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        yield tasks
        return
    folder = tempfile.mkdtemp(prefix="ccwire-batch-tasks-")
    try:
        copy = Path(folder) / "tasks.jsonl"
        try:
            with open(tasks, "rb") as source, copy.open("wb") as target:
                shutil.copyfileobj(source, target)
        except OSError as exc:
            raise BatchConfigError(
                f"cannot read the task file {tasks!r}: {exc.strerror or exc}"
            ) from exc
        yield str(copy)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _batch(args: argparse.Namespace, io: CliIO, tasks: str) -> int:
    """``ccwire batch`` reading its tasks from ``tasks`` (`args.tasks` or its copy)."""
    utf8_options(args, "model", "allow")
    telemetry = start_otel(args.otel, args.otel_cli, worker_setup="ccwire:setup_otlp")
    report = scan_task_file(tasks, strict=args.strict)
    if report.lines == 0:
        raise BatchConfigError(f"the task file {args.tasks!r} has no tasks: it is empty")
    # the results of this file's tasks (a results file may hold other files' too)
    prior = {r.id: r.ok for r in read_results(args.output) if r.id in report.ids}
    find = find_cli if args.spawn is None else spawned_command  # it may run the CLI elsewhere
    cli_path = find(args.cli_path, environ=io.environ)
    offline = bool(args.offline or args.scripted)
    if not offline and detect_auth(io.environ).found is False:
        raise AuthMissingError(detect_auth(io.environ).detail)
    servers = resolve_tools(args.tools)  # fail here, before any task, if one cannot load
    resolve_spawner(args.spawn)  # likewise
    allowed = [*args.allow, *(f"mcp__{name}" for name in servers)]
    progress = BatchProgress(total=0)
    out = ProgressOutput(io.stdout)
    display = _display(args, out, progress)
    notes = [f"{args.tasks} line {line}: {message}; skipped" for line, message in report.bad]
    if report.bad_count > len(report.bad):
        notes.append(f"{report.bad_count - len(report.bad)} more malformed lines skipped")
    for note in notes:
        io.stderr.write(f"ccwire: warning: {note}\n")
        display.note(note)
    if report.tasks == 0:
        raise BatchConfigError(
            f"the task file {args.tasks!r} has no well-formed task "
            f"({report.bad_count} malformed line{'s' if report.bad_count != 1 else ''})"
        )
    progress.malformed = report.bad_count

    live = LiveReport(args.report, args.output)
    live.start()  # a report that cannot be written fails here, before any task runs

    closed: list[BrokenPipeError] = []  # the output's reader has gone (`| head -1`)

    def on_event(event: BatchEvent) -> None:
        progress.on_event(event)
        if not closed:
            try:
                display.event(event)
            except BrokenPipeError as exc:  # stop the batch, as Ctrl-C does; exit code 141
                closed.append(exc)
                run.stop()
        live.on_event(event)

    interrupted: list[int] = []  # the signal that stopped the batch
    failure: BatchError | None = None
    with _offline(args) as env:
        options = ClaudeAgentOptions(
            cli_path=cli_path,
            env=env,
            allowed_tools=allowed,
            model=args.model,
            max_turns=args.max_turns,
            permission_mode=args.permission_mode,
            telemetry=telemetry,
            silence_timeout=args.silence_timeout,
        )
        run = run_batch(
            iter_task_file(tasks, expect=report),
            options=options,
            concurrency=args.jobs,
            executor="ray" if args.ray is not None else "local",
            retries=RetryPolicy(max_attempts=args.retries + 1),
            output=args.output,
            rerun_failed=args.rerun_failed,
            tools=args.tools,
            events=on_event,
            ray_address=args.ray or None,
            num_cpus=args.num_cpus,
            memory=args.memory_mb * 2**20 if args.memory_mb else None,
            sessions_per_actor=args.sessions_per_actor,
            max_cost_usd=args.max_cost_usd,
            on_budget=args.on_budget,
            spawn=args.spawn,
            spares=args.spares,
            task_timeout=args.task_timeout,
        )
        skip = {i for i, ok in prior.items() if ok or not args.rerun_failed}
        progress.total = report.tasks - len(skip)
        progress.skipped = len(skip)
        progress.prior_failed = sum(1 for i in skip if not prior[i])
        report_failure: ReportWriteError | None = None
        try:
            with display, exporting(telemetry), under_parent(telemetry, io.environ):
                failure = anyio.run(_main, run, io, interrupted)
        finally:
            report_failure = live.finish(_unfinished(run, progress, interrupted))
        if closed:
            raise closed[0]
        # the file's tasks without a result before (a batch its budget stopped did not
        # read on to the tasks of the file that had one: not `run.skipped`)
        expected = progress.total
        progress.budget = _budget_state(run, progress, expected)
        display.finish(interrupted=bool(interrupted))
    lost = [x for x in (report_failure, _progress_failure(out, args.output)) if x is not None]
    if interrupted:
        _say_lost(lost, io)
        signum = interrupted[0]
        how = "interrupted" if signum == signal.SIGINT else "terminated (SIGTERM)"
        before = f" (and {len(prior)} from before)" if prior else ""
        io.stderr.write(
            f"ccwire: {how}: {progress.done} results saved in {args.output} this run{before}; "
            "run the same command again to continue\n"
        )
        _warn_blocked(run, io)
        return 128 + signum  # 130 for Ctrl-C, 143 for SIGTERM, as a shell reports them
    _warn_blocked(run, io)
    if failure is not None:
        _say_lost(lost, io)
        raise failure  # reported as one error line (exit code 1 or 2)
    code = 1 if progress.failed or progress.prior_failed else 0
    budget = progress.budget
    if budget is not None and budget["spent"]:
        if _say_budget(budget, args, io):
            code = 1
    elif progress.done < expected:  # never exit 0 while a task has no result
        io.stderr.write(
            f"ccwire: error: {expected - progress.done} of {expected} tasks ended without a "
            "result; run the same command again to run them\n"
        )
        code = 1
    if report.bad_count and not args.allow_skipped:
        were = "s were" if report.bad_count != 1 else " was"
        io.stderr.write(
            f"ccwire: {report.bad_count} malformed line{were} skipped (their tasks did not "
            "run): fix them and run the same command again, or pass --allow-skipped\n"
        )
        code = 1
    if lost:  # after the summary and every other message (exit code 1)
        _say_lost(lost[:-1], io)
        raise lost[-1]
    return code


def _budget_state(run: BatchRun, progress: BatchProgress, expected: int) -> dict[str, Any] | None:
    """The batch's budget once it has run (`BatchProgress.budget`), `None` without one.

    Args:
        run: The batch.
        progress: Its totals.
        expected: The tasks of the file that had no result before this run.
    """
    budget = run.budget
    if budget is None:
        return None
    spent = run.over_budget()
    left = max(0, expected - progress.done) if spent else 0
    # cancelled by --on-budget interrupt: they ran, and spent what no result says
    cut = min(left, len(progress.running)) if spent and run.interrupted else 0
    return {
        "max_cost_usd": budget.max_cost_usd,
        "spent_usd": round(budget.spent, 10),
        "spent": spent,
        "not_run": left - cut,
        "interrupted": cut,
        "overshoot_usd": round(budget.overshoot, 10),
    }


def _progress_failure(out: ProgressOutput, results: str) -> ReportWriteError | None:
    """Why the progress could not be written to standard output, if it could not."""
    if out.failure is None:
        return None
    return ReportWriteError(
        "cannot write the progress to standard output: "
        f"{out.failure.strerror or out.failure}; it was not written from then on",
        hint=f"every result is in {results}; `ccwire batch report {results} --json` "
        "summarizes them",
    )


def _say_lost(lost: list[ReportWriteError], io: CliIO) -> None:
    """Say that the report page or the progress was lost, when another cause ends the
    command."""
    for failure in lost:
        io.stderr.write(f"ccwire: error: {failure}\n")


def _unfinished(
    run: BatchRun, progress: BatchProgress, interrupted: list[int]
) -> tuple[int, str] | None:
    """The tasks of the file this run left without a result, and why (for the report
    page); `None` when it left none."""
    left = progress.total - progress.done
    if left <= 0:
        return None
    if interrupted:
        why = ("the batch was interrupted (Ctrl-C)" if interrupted[0] == signal.SIGINT
               else "the batch was terminated (SIGTERM)")  # fmt: skip
    elif run.over_budget():
        why = "the batch's budget (--max-cost-usd) was spent"
    else:
        why = "the batch stopped before they had one"
    return left, why


def _say_budget(budget: dict[str, Any], args: argparse.Namespace, io: CliIO) -> bool:
    """Say what the spent budget (`_budget_state`) left undone; returns whether it left
    tasks without a result (the exit code is then 1)."""
    not_run, cut = budget["not_run"], budget["interrupted"]
    spent = (f"ccwire: budget spent: ${budget['spent_usd']:.4f} recorded of "
             f"${budget['max_cost_usd']:.4f}")  # fmt: skip
    over = _overshoot(budget["overshoot_usd"], args.spares)
    if not_run or cut:
        what = f"{not_run} tasks not run"
        if cut:
            what += f" and {cut} interrupted (what they spent is not known, nor counted)"
        io.stderr.write(
            f"{spent}; {what}{over} (not in {args.output}); "
            "run again with a higher --max-cost-usd (or none) to run them\n"
        )
        return True
    if over:  # every task ran: nothing to run again, but the total went past the budget
        io.stderr.write(f"{spent}; every task ran{over}\n")
    return False


def _overshoot(over: float, spares: int) -> str:
    """What the budget message says of a budget the batch passed (nothing if it did not)."""
    if not over:
        return ""
    why = "sessions on spares have no cap" if spares else (
        "the model calls that crossed the running tasks' caps")  # fmt: skip
    return f"; the budget was overshot by ${over:.4f} ({why})"


def _warn_blocked(run: BatchRun, io: CliIO) -> None:
    """Say when synchronous code blocked the batch's event loop (an in-process tool or
    hook, ``--tools``): no other session ran meanwhile, no time limit could stop it; and
    how many spans the Ray workers could not export (``--otel``)."""
    if run.spans_unexported:
        io.stderr.write(
            f"ccwire: warning: {run.spans_unexported} spans of the Ray workers were not "
            "exported (the OTLP endpoint did not take them in time: is it up, and "
            "reachable from the workers?)\n"
        )
    stalls = run.loop_stalls
    if not stalls:
        return
    total = sum(seconds for _, seconds, _ in stalls)
    _, longest, where = max(stalls, key=lambda stall: stall[1])
    io.stderr.write(
        f"ccwire: warning: synchronous code blocked the batch's event loop {len(stalls)} "
        f"time{'s' if len(stalls) != 1 else ''} ({total:.1f} s in all, the longest "
        f"{longest:.1f} s{f' at {where}' if where else ''}): no other session ran "
        "meanwhile; make the tool or hook async (anyio.to_thread.run_sync for blocking "
        "calls)\n"
    )


class LiveReport:
    """With ``--report``: the report page, rewritten as results arrive (the page reloads
    itself meanwhile), and once more at the end.

    The results file is read once, at the start; then each result the batch records
    is added as it comes (the event says what was written), so a rewrite costs the
    drawing of the page only, never a reading of the file (which grows with the batch).
    A rewrite runs in the batch's event loop: they are at least `EVERY` seconds apart,
    and 20 times what the last one took, so the page takes at most about 5% of the
    loop's time whatever the batch's size."""

    EVERY = 5.0
    SHARE = 20.0  # the gap between rewrites, at least, in multiples of the last one's time

    def __init__(self, target: str | None, results: str) -> None:
        self._target = Path(target) if target else None
        self._results = results
        self._latest: dict[str, BatchResult] = {}
        self._superseded = Superseded()  # earlier results of re-run tasks
        self._skipped = 0
        self._next = 0.0  # time.monotonic() from which the page may be rewritten
        self._failure: OSError | None = None  # why the last write failed

    def start(self) -> None:
        """Read the results file and write the first page.

        Raises:
            BatchConfigError: The page cannot be written.
        """
        if self._target is None:
            return
        results, self._skipped = read_latest(self._results, self._superseded)
        for result in results:
            self._latest[result.id] = result
        try:
            self._write(live=True)
        except OSError as exc:
            raise BatchConfigError(
                f"cannot write the report {str(self._target)!r}: {exc.strerror or exc}"
            ) from exc

    def on_event(self, event: BatchEvent) -> None:
        """Add a recorded result; rewrite the page when it is due. A page that cannot
        be written (a full disk) does not stop the batch: it is tried again when due,
        and `finish` says whether the last try failed."""
        if self._target is None or event.kind != "finished" or event.result is None:
            return
        add_latest(self._latest, event.result, self._superseded)
        if time.monotonic() >= self._next:
            self._try_write(live=True)

    def finish(self, unfinished: tuple[int, str] | None = None) -> ReportWriteError | None:
        """Write the last page, with the transcripts of the slowest and costliest tasks.

        Args:
            unfinished: The tasks the batch left without a result, and why: said on
                the page.

        Returns:
            Why the page could not be written, or `None` when it was.
        """
        if self._target is None:
            return None
        self._try_write(live=False, unfinished=unfinished)
        if self._failure is None:
            return None
        return ReportWriteError(
            f"cannot write the report {str(self._target)!r}: "
            f"{self._failure.strerror or self._failure}; the page is not up to date",
            hint=f"every result is in {self._results}; once the cause is fixed, "
            f"`ccwire batch report {self._results} --html {self._target}` draws the page",
        )

    def _try_write(self, *, live: bool, unfinished: tuple[int, str] | None = None) -> None:
        try:
            self._write(live=live, unfinished=unfinished)
        except OSError as exc:
            self._failure = exc
            self._next = time.monotonic() + self.EVERY
        else:
            self._failure = None

    def _write(self, *, live: bool, unfinished: tuple[int, str] | None = None) -> None:
        assert self._target is not None
        began = time.monotonic()
        write_report(list(self._latest.values()), self._target, source=self._results,
                     transcripts=not live, refresh=int(self.EVERY) if live else None,
                     skipped=self._skipped, superseded=self._superseded,
                     unfinished=unfinished)  # fmt: skip
        now = time.monotonic()
        self._next = now + max(self.EVERY, self.SHARE * (now - began))


async def _main(run: BatchRun, io: CliIO, interrupted: list[int]) -> BatchError | None:
    """Run the batch to its end; its failure is returned, to be reported after the
    summary (nothing else can come out of here but a bug)."""
    async with anyio.create_task_group() as tg:
        if io.handle_signals:
            tg.start_soon(_watch_signals, run, interrupted)
        try:
            async with run as results:
                async for _ in results:
                    pass
        except BatchError as exc:
            return exc
        finally:
            tg.cancel_scope.cancel()
    return None


async def _watch_signals(run: BatchRun, interrupted: list[int]) -> None:
    """On Ctrl-C or SIGTERM (a service manager, ``timeout``, ``kill``): stop the batch
    (the running sessions are cancelled and their CLIs ended, failures from then on
    are not recorded: the CLIs may have got the signal too). Later signals are taken
    here too, so that they cannot break the bounded shutdown."""

    def stop(signum: int) -> None:
        interrupted.append(signum)
        run.stop()

    await watch_signals(stop)
