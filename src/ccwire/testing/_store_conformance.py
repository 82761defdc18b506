"""`run_session_store_conformance`: the contracts every `SessionStore` adapter meets.

The same 14 contracts as the reference SDK's helper of the same name. Plain
`assert`s, so it runs under any test runner; call it from an async test.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Awaitable, Callable
from typing import Any, cast

from .._conversation.transcript_store.protocol import (
    OPTIONAL_METHODS,
    SessionKey,
    SessionStore,
    SessionStoreEntry,
    store_implements,
)
from .._sessions.stores.summary import fold_session_summary

__all__ = ["run_session_store_conformance"]

_KEY: SessionKey = {"project_key": "proj", "session_id": "sess"}
_SUB1: SessionKey = {**_KEY, "subpath": "subagents/agent-1"}
_SUB2: SessionKey = {**_KEY, "subpath": "subagents/agent-2"}


def _e(**fields: Any) -> SessionStoreEntry:
    """A test entry: `type` is required, its value does not matter."""
    return cast("SessionStoreEntry", {"type": "x", **fields})


def _k(project_key: str, session_id: str, subpath: str | None = None) -> SessionKey:
    key: SessionKey = {"project_key": project_key, "session_id": session_id}
    if subpath is not None:
        key["subpath"] = subpath
    return key


async def run_session_store_conformance(  # noqa: C901 - one check after another, in order
    make_store: Callable[[], SessionStore | Awaitable[SessionStore]],
    *,
    skip_optional: frozenset[str] = frozenset(),
) -> None:
    """Assert the 14 behavioural contracts of a `SessionStore` adapter.

    Required (always checked): append then load returns the same entries in order;
    an unknown key (or unknown subpath) loads as `None`; several appends keep call
    order; `append(key, [])` changes nothing; subpaths are stored apart from the main
    transcript; project keys are isolated. Optional (checked when the store
    implements the method and it is not named in `skip_optional`): `list_sessions`
    lists main transcripts only, with epoch-millisecond `mtime`s;
    `list_session_summaries` returns folds that fold again, unaffected by subagent
    appends, with an `mtime` on the `list_sessions` clock; `delete` of a main
    transcript cascades to its subkeys and nothing else, and a subpath delete removes
    that one transcript; `list_subkeys` lists a session's subpaths only.

    Args:
        make_store: Called once per contract for a fresh, empty store; sync or async.
        skip_optional: Optional methods not to check (`"list_sessions"`,
            `"list_session_summaries"`, `"delete"`, `"list_subkeys"`).

    Raises:
        AssertionError: A contract does not hold, or `skip_optional` names an unknown
            method.
    """
    unknown = skip_optional - OPTIONAL_METHODS
    assert not unknown, f"unknown optional methods in skip_optional: {sorted(unknown)}"

    async def fresh() -> SessionStore:
        made = make_store()
        if inspect.isawaitable(made):
            return await made
        return made

    probe = await fresh()

    def has(method: str) -> bool:
        return method not in skip_optional and store_implements(probe, method)

    has_list, has_summaries = has("list_sessions"), has("list_session_summaries")
    has_delete, has_subkeys = has("delete"), has("list_subkeys")

    # 1. append then load: the same entries, in the same order (deep-equal)
    store = await fresh()
    await store.append(_KEY, [_e(uuid="b", n=1), _e(uuid="a", n=2)])
    assert await store.load(_KEY) == [_e(uuid="b", n=1), _e(uuid="a", n=2)], "1: round trip"

    # 2. an unknown key, or an unknown subpath of a known session, loads as None
    store = await fresh()
    assert await store.load(_k("proj", "nope")) is None, "2: unknown key"
    await store.append(_KEY, [_e(uuid="x", n=1)])
    assert await store.load(_k("proj", "sess", "nope")) is None, "2: unknown subpath"

    # 3. several appends keep call order
    store = await fresh()
    await store.append(_KEY, [_e(uuid="z", n=1)])
    await store.append(_KEY, [_e(uuid="a", n=2), _e(uuid="m", n=3)])
    await store.append(_KEY, [_e(uuid="b", n=4)])
    assert await store.load(_KEY) == [
        _e(uuid="z", n=1),
        _e(uuid="a", n=2),
        _e(uuid="m", n=3),
        _e(uuid="b", n=4),
    ], "3: call order"

    # 4. append([]) is a no-op
    store = await fresh()
    await store.append(_KEY, [_e(uuid="a", n=1)])
    await store.append(_KEY, [])
    assert await store.load(_KEY) == [_e(uuid="a", n=1)], "4: empty append"

    # 5. a subpath is stored apart from the main transcript
    store = await fresh()
    await store.append(_KEY, [_e(uuid="m", n=1)])
    await store.append(_SUB1, [_e(uuid="s", n=1)])
    assert await store.load(_KEY) == [_e(uuid="m", n=1)], "5: main"
    assert await store.load(_SUB1) == [_e(uuid="s", n=1)], "5: subpath"

    # 6. project keys are isolated
    store = await fresh()
    await store.append(_k("A", "s1"), [_e(**{"from": "A"})])
    await store.append(_k("B", "s1"), [_e(**{"from": "B"})])
    assert await store.load(_k("A", "s1")) == [_e(**{"from": "A"})], "6: project A"
    assert await store.load(_k("B", "s1")) == [_e(**{"from": "B"})], "6: project B"
    if has_list:
        assert len(await store.list_sessions("A")) == 1, "6: list A"
        assert len(await store.list_sessions("B")) == 1, "6: list B"

    if has_list:
        # 7. list_sessions lists a project's sessions, mtime in epoch milliseconds
        store = await fresh()
        await store.append(_k("proj", "a"), [_e(n=1)])
        await store.append(_k("proj", "b"), [_e(n=1)])
        await store.append(_k("other", "c"), [_e(n=1)])
        listed = await store.list_sessions("proj")
        assert sorted(s["session_id"] for s in listed) == ["a", "b"], "7: session ids"
        assert all(math.isfinite(s["mtime"]) and s["mtime"] > 1e12 for s in listed), (
            "7: mtime must be Unix epoch milliseconds"
        )
        assert await store.list_sessions("never-appended-project") == [], "7: empty project"

        # 8. list_sessions leaves subagent transcripts out
        store = await fresh()
        await store.append(_k("proj", "main"), [_e(n=1)])
        await store.append(_k("proj", "main", "subagents/agent-1"), [_e(n=1)])
        listed = await store.list_sessions("proj")
        assert [s["session_id"] for s in listed] == ["main"], "8: no subpaths"

    if has_summaries:
        # 14. summaries are persisted folds that fold again; subagents don't touch them
        store = await fresh()
        key = _k("proj", "summ-sess")
        await store.append(
            key,
            [
                _e(timestamp="2024-01-01T00:00:00.000Z", customTitle="first"),
                _e(timestamp="2024-01-01T00:00:01.000Z"),
            ],
        )
        await store.append(key, [_e(timestamp="2024-01-01T00:00:02.000Z", customTitle="second")])
        await store.append(_k("other", "elsewhere"), [_e(timestamp="2024-01-01T00:00:00.000Z")])
        by_id = {s["session_id"]: s for s in await store.list_session_summaries("proj")}
        assert set(by_id) == {"summ-sess"}, "14: one summary for the project"
        summ = by_id["summ-sess"]
        assert math.isfinite(summ["mtime"]) and summ["mtime"] > 1e12, "14: epoch-ms mtime"
        if has_list:
            listed_mtime = {e["session_id"]: e["mtime"] for e in await store.list_sessions("proj")}
            assert summ["mtime"] >= listed_mtime["summ-sess"], (
                "14: the summary's mtime must be the store's write time, on the list_sessions clock"
            )
        assert isinstance(summ["data"], dict), "14: data is a dict"
        refolded = fold_session_summary(summ, key, [_e(timestamp="2024-01-01T00:00:03.000Z")])
        assert refolded["session_id"] == "summ-sess", "14: refold keeps the id"
        assert refolded["mtime"] == summ["mtime"], "14: refold keeps the mtime"
        await store.append(
            _k("proj", "summ-sess", "subagents/agent-1"),
            [_e(timestamp="2024-01-01T00:00:09.000Z", customTitle="subagent")],
        )
        after = {s["session_id"]: s for s in await store.list_session_summaries("proj")}
        assert after["summ-sess"]["data"] == summ["data"], "14: subagents leave it alone"
        assert await store.list_session_summaries("never-appended-project") == [], (
            "14: empty project"
        )
        if has_delete:
            await store.delete(key)
            assert await store.list_session_summaries("proj") == [], "14: delete drops it"

    if has_delete:
        # 9. delete a main transcript, then it loads as None (unknown key: a no-op)
        store = await fresh()
        await store.delete(_k("proj", "never-written"))
        await store.append(_KEY, [_e(n=1)])
        await store.delete(_KEY)
        assert await store.load(_KEY) is None, "9: deleted"

        # 10. deleting a main transcript cascades to its subkeys, and only those
        store = await fresh()
        other, other_project = _k("proj", "sess2"), _k("other-proj", "sess")
        for k in (_KEY, _SUB1, _SUB2, other, other_project):
            await store.append(k, [_e(n=1)])
        await store.delete(_KEY)
        for k in (_KEY, _SUB1, _SUB2):
            assert await store.load(k) is None, f"10: {k} deleted"
        for k in (other, other_project):
            kept = await store.load(k)
            assert kept is not None and len(kept) == 1, f"10: {k} kept"
        if has_subkeys:
            assert await store.list_subkeys(_KEY) == [], "10: no subkeys left"
        if has_list:
            listed_ids = [s["session_id"] for s in await store.list_sessions("proj")]
            assert "sess" not in listed_ids, "10: not listed"

        # 11. deleting a subpath removes that one transcript
        store = await fresh()
        for k in (_KEY, _SUB1, _SUB2):
            await store.append(k, [_e(n=1)])
        await store.delete(_SUB1)
        assert await store.load(_SUB1) is None, "11: deleted"
        for k in (_SUB2, _KEY):
            kept = await store.load(k)
            assert kept is not None and len(kept) == 1, f"11: {k} kept"
        if has_subkeys:
            assert await store.list_subkeys(_KEY) == ["subagents/agent-2"], "11: one left"

    if has_subkeys:
        # 12. list_subkeys lists a session's subpaths, not another session's
        store = await fresh()
        await store.append(_KEY, [_e(n=1)])
        await store.append(_SUB1, [_e(n=1)])
        await store.append(_SUB2, [_e(n=1)])
        await store.append(_k("proj", "other-sess", "subagents/agent-x"), [_e(n=1)])
        subkeys = await store.list_subkeys(_KEY)
        assert sorted(subkeys) == ["subagents/agent-1", "subagents/agent-2"], "12: subpaths"

        # 13. list_subkeys leaves the main transcript out
        store = await fresh()
        await store.append(_KEY, [_e(n=1)])
        assert await store.list_subkeys(_KEY) == [], "13: no main transcript"
        assert await store.list_subkeys(_k("proj", "never-appended")) == [], "13: unknown"
