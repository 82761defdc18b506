"""The errors of batch runs (all under `CcwireError`)."""

from __future__ import annotations

from .._core.errors import CcwireError

__all__ = [
    "BatchConfigError",
    "BatchError",
    "BatchInputError",
    "BatchProcessLostError",
    "DuplicateTaskIdError",
    "ResultsWriteError",
    "TaskFileChangedError",
]


class BatchError(CcwireError):
    """Base class of the errors a batch run raises."""


class BatchInputError(BatchError, ValueError):
    """A task (or a line of a task file) is malformed.

    Attributes:
        line: The 1-based line number in the task file, or `None` when the task did
            not come from a file.
    """

    def __init__(self, message: str, *, line: int | None = None) -> None:
        super().__init__(f"line {line}: {message}" if line is not None else message)
        self.line = line


class DuplicateTaskIdError(BatchInputError):
    """Two tasks of one batch have the same id.

    Attributes:
        task_id: The repeated id.
    """

    def __init__(self, task_id: str, *, line: int | None = None, first: int | None = None) -> None:
        where = f" (first seen on line {first})" if first is not None else ""
        super().__init__(f"duplicate task id {task_id!r}{where}", line=line)
        self.task_id = task_id


class TaskFileChangedError(BatchInputError):
    """A task file changed while its batch read it (edited, cut short, rewritten).

    A task file is checked whole before anything runs, then read again lazily as the
    tasks start; a line that differs from what was checked would run tasks nobody
    counted, or skip some that were. The batch stops feeding at the first task it did
    not check (the running ones finish, each result recorded), or, if the difference
    comes after the last task, once the file is read; either way this error says so,
    and the same command run again runs exactly the tasks of the file as it is then
    that have no result.

    Attributes:
        path: The task file.
    """

    def __init__(self, path: str, detail: str) -> None:
        super().__init__(
            f"the task file {path!r} changed while the batch ran ({detail}); the tasks of "
            "the file as it is now that have no result run when the same command is run again"
        )
        self.path = path


class BatchConfigError(BatchError, ValueError):
    """The batch cannot run as configured (output path, executor, references...)."""


class ResultsWriteError(BatchError):
    """A result could not be written to the results file (a full disk, say).

    The batch stops at once: running sessions are cancelled, and every result written
    before stays in the file (the failed line is undone), so the same call continues
    once the cause is fixed.

    Attributes:
        path: The results file.
        cause: The error of the write (also the exception's ``__cause__``).
    """

    def __init__(self, path: str, cause: OSError) -> None:
        reason = cause.strerror or str(cause) or type(cause).__name__
        super().__init__(f"cannot write the results file {path!r}: {reason}")
        self.path = path
        self.cause = cause
        self.__cause__ = cause


class BatchProcessLostError(BatchError):
    """The process running a Ray batch's driver ended abruptly (``executor="ray"``).

    Ray ends its driver's process at once, from its C++ core (exit code 1, no Python
    code runs), when a Ray node it needs dies: the head node, or the node of the
    machine it runs on. `run_batch` runs that driver in a child process of its own,
    so the caller survives it: every result that arrived before was recorded and
    yielded; the tasks without a result were not recorded, so the same call (same
    `output`) runs them once the cluster is up again.

    Attributes:
        exit_code: The child's exit code (negative: the signal that ended it), or
            `None` if it could not be had.
        stderr_tail: The child's last lines on stderr (Ray's last words).
        not_run: Ids of tasks handed to the child that got no result (tasks the
            source had not given yet are not listed).
    """

    def __init__(
        self,
        message: str,
        *,
        exit_code: int | None = None,
        stderr_tail: tuple[str, ...] = (),
        not_run: tuple[str, ...] = (),
    ) -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.stderr_tail = stderr_tail
        self.not_run = not_run
