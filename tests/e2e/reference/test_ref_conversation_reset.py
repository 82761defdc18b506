"""Port of the reference SDK's ``e2e-tests/test_conversation_reset.py``.

``/clear`` sent mid-session in streaming mode resets the conversation without closing
the connection: a `ConversationResetMessage` stamped with the old session's id arrives,
and what follows belongs to a new session.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from ccwire import ClaudeSDKClient, ConversationResetMessage, ResultMessage
from ccwire.testing import ScriptedModel, text

pytestmark = pytest.mark.anyio

TIMEOUT = 60


async def test_clear_emits_conversation_reset(model: ScriptedModel, make_options: Any) -> None:
    model.add(text("one"))
    first: ResultMessage | None = None
    reset: ConversationResetMessage | None = None
    after_clear: ResultMessage | None = None
    with anyio.fail_after(TIMEOUT):
        async with ClaudeSDKClient(options=make_options(max_turns=1)) as client:
            await client.query("Reply with exactly: one")
            async for message in client.receive_response():
                if isinstance(message, ResultMessage):
                    first = message
            assert first is not None

            await client.query("/clear")
            async for message in client.receive_response():
                if isinstance(message, ConversationResetMessage):
                    reset = message
                elif isinstance(message, ResultMessage):
                    after_clear = message

    assert reset is not None, "no ConversationResetMessage after /clear"
    assert reset.session_id == first.session_id
    assert reset.new_conversation_id
    assert reset.uuid
    assert after_clear is not None
    assert after_clear.session_id != first.session_id
    # beyond the port: the fields the TypeScript SDK declares, typed
    assert reset.trigger == "clear" and reset.timestamp
    assert after_clear.local_command == "clear" and after_clear.queued_turn_count == 0
    assert (first.result_index, after_clear.result_index) == (0, 1)
    assert after_clear.fast_mode_state == "off"
    # /clear is a local command: the model was asked once, for the first prompt only
    assert len(model.turn_requests) == 1
