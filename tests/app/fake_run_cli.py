"""A fake Claude Code CLI for in-process ``ccwire run`` tests (stdlib only), run as a real
subprocess. It answers ``initialize``, then plays the prompt by its first word:

* ``refuse``: an error result saying the API key is invalid (as the real model does);
* ``silent``: exits with status 0 without a result;
* ``crash``: three lines of stderr, then exit status 3;
* anything else: ``echo: <prompt>`` and a successful result.
"""

from __future__ import annotations

import json
import sys
from typing import Any

SID = "00000000-0000-4000-8000-0000000000a1"


def send(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def frames() -> Any:
    for line in sys.stdin:
        if line.strip():
            yield json.loads(line)


def result(text: str, *, is_error: bool = False) -> None:
    send({"type": "result", "subtype": "success", "is_error": is_error, "duration_ms": 5,
          "duration_api_ms": 1, "num_turns": 1, "result": text, "session_id": SID,
          "total_cost_usd": 0.0123, "usage": {"input_tokens": 3, "output_tokens": 2}})  # fmt: skip


def main() -> None:
    for frame in frames():
        if frame.get("type") == "control_request" and frame["request"]["subtype"] == "initialize":
            send({"type": "control_response", "response": {"subtype": "success",
                  "request_id": frame["request_id"], "response": {"commands": []}}})  # fmt: skip
        elif frame.get("type") == "user":
            prompt = str(frame["message"]["content"])
            word = prompt.split()[0]
            if word == "refuse":  # the real CLI's answer, then its error result
                send({"type": "assistant", "session_id": SID, "parent_tool_use_id": None,
                      "error": "authentication_failed",
                      "message": {"id": "m0", "type": "message", "role": "assistant",
                                  "model": "<synthetic>", "content": [{"type": "text",
                                  "text": "Invalid API key · Please run /login"}]}})  # fmt: skip
                result("Invalid API key · Please run /login", is_error=True)
            elif word == "silent":
                sys.exit(0)
            elif word == "crash":
                sys.stderr.write("starting\nloading\nfatal: out of cheese\n")
                sys.stderr.flush()
                sys.exit(3)
            else:
                send({"type": "assistant", "session_id": SID, "parent_tool_use_id": None,
                      "message": {"id": "m1", "type": "message", "role": "assistant",
                                  "model": "fake", "content": [
                                      {"type": "text", "text": f"echo: {prompt}"}]}})  # fmt: skip
                result(f"echo: {prompt}")


if __name__ == "__main__":
    main()
