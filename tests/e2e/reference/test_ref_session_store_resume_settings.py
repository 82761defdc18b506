"""Port of the reference SDK's ``e2e-tests/test_session_store_resume_settings.py``.

A resume through a `SessionStore` runs the CLI under a temporary ``CLAUDE_CONFIG_DIR``
seeded from the caller's; the user ``settings.json`` must be part of that seed. The
observable is ``outputStyle``, echoed on the ``init`` message.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest

from ccwire import InMemorySessionStore, ResultMessage, SystemMessage, query
from ccwire.testing import ScriptedModel, text

pytestmark = pytest.mark.anyio

TIMEOUT = 60


async def _run(options: Any, prompt: str) -> tuple[dict[str, Any], ResultMessage]:
    init: dict[str, Any] | None = None
    result: ResultMessage | None = None
    with anyio.fail_after(TIMEOUT):
        async for message in query(prompt=prompt, options=options):
            if isinstance(message, SystemMessage) and message.subtype == "init":
                init = dict(message.data)
            elif isinstance(message, ResultMessage):
                result = message
    assert init is not None, "no init message"
    assert result is not None, "no result message"
    assert not result.is_error, result
    return init, result


async def test_store_resume_applies_user_settings(
    model: ScriptedModel, make_options: Any, tmp_path: Path
) -> None:
    store = InMemorySessionStore()
    config_dir = tmp_path / "caller-config"
    config_dir.mkdir()
    model.add(text("one"), text("two"))

    def options(**kwargs: Any) -> Any:
        return make_options(
            session_store=store,
            env={"CLAUDE_CONFIG_DIR": str(config_dir)},
            max_turns=1,
            **kwargs,
        )

    first_init, first = await _run(options(), "Reply with exactly: one")
    assert first_init.get("output_style") == "default"

    # a user setting appears, and the local transcript goes: the resume can only work
    # through the store, under the temporary config directory seeded from this one
    (config_dir / "settings.json").write_text(json.dumps({"outputStyle": "Explanatory"}))
    assert (config_dir / "projects").is_dir()
    shutil.rmtree(config_dir / "projects")

    resumed_init, resumed = await _run(options(resume=first.session_id), "Reply with exactly: two")

    assert resumed.session_id == first.session_id, "did not resume the session"
    assert resumed_init.get("output_style") == "Explanatory"
    # the model saw the first turn again: the conversation came from the store
    assert "Reply with exactly: one" in str(model.turn_requests[1].messages)
