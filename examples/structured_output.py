"""Structured output: the final answer as JSON that matches your schema.

Run it:  python examples/structured_output.py

``output_format`` hands the CLI a JSON Schema; the model answers through the CLI's
``StructuredOutput`` tool and the validated object arrives as
``ResultMessage.structured_output``. Offline by default; with ANTHROPIC_API_KEY the
real model answers.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from typing import Any

import anyio

from ccwire import ClaudeAgentOptions, ResultMessage, query
from ccwire.testing import ScriptedModel, Step, tool_use

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "country": {"type": "string"},
        "population_millions": {"type": "number"},
    },
    "required": ["city", "country", "population_millions"],
}


@contextlib.contextmanager
def model_env(*steps: Step) -> Iterator[dict[str, str]]:
    """The real model when ANTHROPIC_API_KEY is set, else a local scripted one."""
    if os.environ.get("ANTHROPIC_API_KEY"):
        yield {}
        return
    with tempfile.TemporaryDirectory() as home, ScriptedModel(*steps) as model:
        print("[offline: a scripted model plays Claude; set ANTHROPIC_API_KEY for the real one]")
        yield model.env(home)


async def main() -> None:
    answer = {"city": "Tokyo", "country": "Japan", "population_millions": 37.4}
    with model_env(tool_use("StructuredOutput", answer)) as env:
        options = ClaudeAgentOptions(
            output_format={"type": "json_schema", "schema": SCHEMA}, max_turns=3, env=env
        )
        prompt = "Which is the largest city in the world by metropolitan population?"
        async for message in query(prompt=prompt, options=options):
            if isinstance(message, ResultMessage):
                data = message.structured_output
                print(f"structured   {data}")
                if isinstance(data, dict):
                    print(f"answer       {data['city']}, {data['country']}: "
                          f"{data['population_millions']} million people")  # fmt: skip


if __name__ == "__main__":
    anyio.run(main)
