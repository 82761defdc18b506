"""The scripted model of the batch tests: what each prompt gets, attempt by attempt."""

from __future__ import annotations

import collections
import re
import threading
from typing import Any

from ccwire.testing import ModelRequest, error, text, tool_use

_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)


def first_prompt(request: ModelRequest) -> str:
    """The text of the session's first user message (its task prompt)."""
    first = request.messages[0].get("content") if request.messages else ""
    if isinstance(first, list):
        first = " ".join(b.get("text", "") for b in first if isinstance(b, dict))
    return _REMINDER.sub("", str(first)).strip()


class BatchScript:
    """A `ScriptedModel` default step keyed by the task's prompt.

    * ``rate ...``: the first session gets a 429, the next ones an answer;
    * ``overload ...``: two sessions get a 529, then an answer;
    * ``hopeless ...``: every session gets a 529;
    * ``add A B``: a call of ``mcp__calc__add``, then the tool's result as the answer;
    * anything else: ``echo: <prompt>`` (each later prompt of a session is echoed too).

    Errors carry ``x-should-retry: false`` so the CLI gives up at once and the batch's
    own retries are what is tested. ``sessions[prompt]`` counts first turns.
    """

    def __init__(self) -> None:
        self.sessions: collections.Counter[str] = collections.Counter()
        self._lock = threading.Lock()

    def __call__(self, request: ModelRequest) -> Any:
        prompt = first_prompt(request)
        turn = sum(1 for m in request.messages if m.get("role") == "assistant")
        if turn == 0:
            with self._lock:
                self.sessions[prompt] += 1
                session = self.sessions[prompt]
            if prompt.startswith("rate") and session == 1:
                return error(429, "Rate limited", "rate_limit_error", retry=False)
            if prompt.startswith("overload") and session <= 2:
                return error(529, "Overloaded", "overloaded_error", retry=False)
            if prompt.startswith("hopeless"):
                return error(529, "Overloaded", "overloaded_error", retry=False)
            if prompt.startswith("add "):
                _, a, b = prompt.split()
                return tool_use("mcp__calc__add", {"a": float(a), "b": float(b)})
            return text(f"echo: {prompt}")
        results = request.tool_results()
        if results:
            return text("sum: " + " ".join(r.content for r in results))
        return text(f"echo: {_REMINDER.sub('', request.last_user_text()).strip()}")
