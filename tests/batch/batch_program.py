"""A user's program around `run_batch` (``python batch_program.py BACKEND CLI OUT
[RAY_ADDRESS]``): six echoes, then three sessions that wait (on Ray at RAY_ADDRESS, if
given); every result is printed as it arrives, and whatever ends the program is printed
last (its type and message)."""

from __future__ import annotations

import json
import sys

import anyio

from ccwire import ClaudeAgentOptions
from ccwire.batch import run_batch


async def main(cli_path: str, output: str, ray_address: str | None) -> None:
    tasks = [{"id": f"e{i}", "prompt": f"echo {i}"} for i in range(6)]
    tasks += [{"id": f"h{i}", "prompt": f"hold {i}"} for i in range(3)]
    options = ClaudeAgentOptions(cli_path=cli_path)
    on_ray = {"executor": "ray", "ray_address": ray_address, "num_cpus": 0.5}
    async with run_batch(tasks, options=options, concurrency=3, output=output,
                         **(on_ray if ray_address else {})) as results:  # type: ignore[arg-type]  # fmt: skip
        async for result in results:
            print(json.dumps({"result": result.id}), flush=True)


if __name__ == "__main__":
    address = sys.argv[4] if len(sys.argv) > 4 else None
    try:
        anyio.run(main, sys.argv[2], sys.argv[3], address, backend=sys.argv[1])
    except BaseException as exc:
        print(json.dumps({"raised": type(exc).__name__, "message": str(exc)}), flush=True)
        raise
