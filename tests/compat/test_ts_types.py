"""The object types ccwire shares a name with the TypeScript SDK have every member its
declarations give them: a field, key, property or method, under the TypeScript name,
its snake_case, or with ``_`` after a Python keyword (``continue_``)."""

from __future__ import annotations

from typing import Any, get_origin

import ccwire
import ccwire.types
from tests.compat.ts_api import find_package, members, statements
from tests.compat.ts_migration_table import _fields, snake

ON_PURPOSE = {
    "ResolvedSettings.machinePolicy": "the TypeScript SDK reads this machine's MDM profile "
    "and registry itself; ccwire asks the CLI, whose answer has no such member",
    "SDKSystemMessage.effort": "claude-agent-sdk's own tests pin SystemInitData's keys "
    "(the value is in the message's `data`)",
    "SDKSystemMessage.view_mode": "as `effort`",
    "SpawnOptions.signal": "a spawner is cancelled with its task (anyio), not by a signal",
    "SpareProcess.claimed": "`claim()` / `claim_client()` report the claim's outcome",
    "SpareProcess.exited": "`wait_exited()`",
    # ccwire's SpawnedProcess is anyio's process shape, not Node's ChildProcess
    **{
        f"SpawnedProcess.{name}": "shaped like anyio.abc.Process (`returncode`, `wait()`)"
        for name in ("killed", "exitCode", "signalCode", "on", "once", "off")
    },
    # ccwire's Transport is claude-agent-sdk's (Python) transport interface
    **{
        f"Transport.{name}": "claude-agent-sdk's transport interface has no such method"
        for name in ("expectControlResponse", "markDelivered", "waitForExit")
    },
}


RENAMED: dict[str, type] = {"SDKSystemMessage": ccwire.SystemInitData}
"""TypeScript types ccwire has under another name."""


def test_every_declared_member_of_a_shared_type_is_there(ts_api: Any) -> None:
    package = find_package()
    assert package is not None
    declared = {s.name: s for s in statements((package / "sdk.d.ts").read_text("utf-8"))}
    missing: list[str] = []
    checked = 0
    for name in ts_api.types:
        ours = RENAMED.get(name) or getattr(ccwire, name, None) or getattr(ccwire.types, name, None)
        if not isinstance(ours, type) or get_origin(ours) is not None:
            continue  # (on Python 3.10 a `Callable[...]` alias passes for a type)
        have = _fields(ours) | set(dir(ours))
        for member in members(declared[name].text):
            key = f"{name}.{member.name}"
            checked += 1
            if key in ON_PURPOSE:
                continue
            if not {member.name, snake(member.name), member.name + "_"} & have:
                missing.append(key)
    assert missing == []
    assert checked >= 400


def test_every_hook_specific_output_has_its_dict_type(ts_api: Any) -> None:
    # what a hook callback may return in the dict form, one type per event
    declared = [n for n in ts_api.types if n.endswith("HookSpecificOutput")]
    assert [n for n in declared if not hasattr(ccwire, n)] == []
    assert len(declared) >= 20
