"""A user's program around `run_batch` (``python batch_program.py BACKEND CLI OUT``): six
echoes, then three sessions that wait; every result is printed as it arrives, and
whatever ends the program is printed last."""

from __future__ import annotations

import json
import sys

import anyio

from ccwire import ClaudeAgentOptions
from ccwire.batch import run_batch


async def main(cli_path: str, output: str) -> None:
    tasks = [{"id": f"e{i}", "prompt": f"echo {i}"} for i in range(6)]
    tasks += [{"id": f"h{i}", "prompt": f"hold {i}"} for i in range(3)]
    options = ClaudeAgentOptions(cli_path=cli_path)
    async with run_batch(tasks, options=options, concurrency=3, output=output) as results:
        async for result in results:
            print(json.dumps({"result": result.id}), flush=True)


if __name__ == "__main__":
    try:
        anyio.run(main, sys.argv[2], sys.argv[3], backend=sys.argv[1])
    except BaseException as exc:
        print(json.dumps({"raised": type(exc).__name__}), flush=True)
        raise
