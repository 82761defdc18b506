"""Run one agent over many inputs: bounded, retried, resumable, locally or on Ray.

```python
import anyio
from ccwire import ClaudeAgentOptions
from ccwire.batch import run_batch

tasks = [{"id": f"q{i}", "prompt": f"Question {i}?"} for i in range(1000)]

async def main() -> None:
    opts = ClaudeAgentOptions(max_turns=4)
    async with run_batch(tasks, options=opts, concurrency=8, output="out.jsonl") as results:
        async for r in results:
            print(r.id, "ok" if r.ok else r.error)

anyio.run(main)
```

Run the same call again and the ids already in ``out.jsonl`` are skipped. The command
``ccwire batch TASKS.jsonl -o RESULTS.jsonl`` does the same from a task file, with a
live progress display.
"""

from typing import TYPE_CHECKING

from .._core.lazy import install_lazy_importer, publish

if TYPE_CHECKING or not install_lazy_importer(__name__):
    from .._batch.errors import (
        BatchConfigError,
        BatchError,
        BatchInputError,
        BatchProcessLostError,
        DuplicateTaskIdError,
        ResultsWriteError,
        TaskFileChangedError,
    )
    from .._batch.output import ResultsFile, read_results
    from .._batch.results import RETRYABLE_STATUSES, BatchResult, ErrorKind, RetryPolicy
    from .._batch.run import BatchRun, BatchState, Executor, finished_ids, run_batch
    from .._batch.session import BatchEvent, EventSink
    from .._batch.taskfile import TaskFileReport, iter_task_file, scan_task_file
    from .._batch.tasks import TASK_FIELDS, BatchTask, TaskFunction, TaskLike

    publish(__name__)


__all__ = [
    "RETRYABLE_STATUSES",
    "TASK_FIELDS",
    "BatchConfigError",
    "BatchError",
    "BatchEvent",
    "BatchInputError",
    "BatchProcessLostError",
    "BatchResult",
    "BatchRun",
    "BatchState",
    "BatchTask",
    "DuplicateTaskIdError",
    "ErrorKind",
    "EventSink",
    "Executor",
    "ResultsFile",
    "ResultsWriteError",
    "RetryPolicy",
    "TaskFileChangedError",
    "TaskFileReport",
    "TaskFunction",
    "TaskLike",
    "finished_ids",
    "iter_task_file",
    "read_results",
    "run_batch",
    "scan_task_file",
]
