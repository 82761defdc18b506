"""Port of the reference SDK's ``e2e-tests/test_error_results.py``.

An API-side failure (the model id is rejected) ends the run with an error result; the
`ResultMessage` is yielded, then `query()` raises `ResultError` (a `ProcessError`)
carrying the CLI's own error text and the result's payload.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from ccwire import ProcessError, ResultError, ResultMessage, query
from ccwire.testing import ScriptedModel, error

pytestmark = pytest.mark.anyio

TIMEOUT = 60
BAD_MODEL = "claude-nonexistent-model-for-sdk-e2e"


async def test_query_api_error_raises_result_error_with_payload(
    model: ScriptedModel, make_options: Any
) -> None:
    # what the API answers for an unknown model id; CLI 2.1.330 tries twice (the second
    # time with fewer beta headers), the same answer each time
    rejected = error(404, f"model: {BAD_MODEL}", "not_found_error")
    model.add(rejected, rejected)
    options = make_options(model=BAD_MODEL, max_turns=1)
    result: ResultMessage | None = None
    with anyio.fail_after(TIMEOUT), pytest.raises(Exception) as caught:  # noqa: PT011
        async for message in query(prompt="Reply with: pong", options=options):
            if isinstance(message, ResultMessage):
                result = message

    assert model.turn_requests[0].model == BAD_MODEL
    model.assert_script_consumed()
    exc = caught.value
    assert result is not None, "the error result comes before the exception"
    assert result.is_error is True
    assert isinstance(exc, ResultError), f"{type(exc).__name__}: {exc}"
    assert isinstance(exc, ProcessError)
    assert exc.exit_code is not None
    said = str(exc)
    assert "error result: success" not in said
    assert BAD_MODEL in said  # the API's own words
    assert result.result and result.result.strip() in said
    assert exc.subtype == result.subtype
    assert exc.result == result.result
    assert exc.session_id == result.session_id
    assert exc.terminal_reason == result.terminal_reason
    assert exc.api_error_status == result.api_error_status
    assert exc.data.get("uuid") == result.uuid
    # the mid-turn API failure shape
    assert exc.subtype == "success"
    assert exc.terminal_reason == "api_error"
