"""The reference SDK's error-result and streaming contracts against the real CLI.

* An error result (here: the API answers 404 for an unknown model, as scripted) is yielded, then
  the CLI's non-zero exit is raised as `ResultError` carrying that result.
* ``receive_response()`` with no turn pending waits for the next messages: the
  reference's own streaming example (an async iterable of prompts, then
  ``receive_response()`` in a loop under a timeout) gets every answer and then times
  out instead of spinning.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from ccwire import (
    ClaudeSDKClient,
    ProcessError,
    ResultError,
    ResultMessage,
    query,
)
from ccwire.testing import ScriptedModel, error as api_error, text

pytestmark = pytest.mark.anyio
TIMEOUT = 60


async def test_an_unknown_model_raises_result_error_after_the_error_result(
    model: ScriptedModel, make_options: Any
) -> None:
    # what the Messages API answers for a model it does not know (the CLI asks again)
    model.add(*[api_error(404, "model: no-such-model", "not_found_error")] * 4)
    got: list[Any] = []
    options = make_options(model="no-such-model")
    with anyio.fail_after(TIMEOUT), pytest.raises(ResultError) as info:
        async for message in query(prompt="hello", options=options):
            got.append(message)
    final = got[-1]
    assert isinstance(final, ResultMessage) and final.is_error
    error = info.value
    assert isinstance(error, ProcessError) and error.exit_code == 1
    assert error.api_error_status == 404
    assert error.session_id == final.session_id
    assert error.data["is_error"] is True and error.data["type"] == "result"
    assert str(error).startswith("Claude Code returned an error result: ")
    assert (error.result or "") in str(error) or error.errors


async def test_receive_response_in_a_timeout_loop_waits_instead_of_spinning(
    model: ScriptedModel, make_options: Any
) -> None:
    model.add(text("one"), text("two"))

    async def prompts() -> AsyncIterator[dict[str, Any]]:
        for content in ("first", "second"):
            yield {"type": "user", "message": {"role": "user", "content": content}}

    results: list[str | None] = []
    rounds = 0
    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(make_options()) as client:
            await client.query(prompts())
            while True:  # the reference's examples/streaming_mode.py loop
                rounds += 1
                with anyio.move_on_after(5) as scope:
                    async for message in client.receive_response():
                        if isinstance(message, ResultMessage):
                            results.append(message.result)
                if scope.cancelled_caught:
                    break
    # both prompts answered (maybe merged into one turn), then one timed-out wait:
    # a spinning receive_response() would have run the loop thousands of times
    assert results and results[-1] in ("one", "two")
    assert rounds == len(results) + 1
    assert [r.last_user_text() for r in model.turn_requests][-1].endswith("second")
