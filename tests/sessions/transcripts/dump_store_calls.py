"""Run store-backed session-helper calls through one package and print the results as JSON.

Used by the store differential tests: the reference SDK runs this file in its own venv
(`python dump_store_calls.py claude_agent_sdk < job.json`), and ccwire runs
`run_store_job` in-process. A job is `{"store", "path", "fill", "calls"}`:

* `store`: `"memory"` (each package's own `InMemorySessionStore`), or `"sqlite"`
  (ccwire's `SQLiteStore` on the file `path`, which both packages then read), and
  optionally `+nosummaries` (a wrapper without `list_session_summaries`) or
  `+minimal` (only `append` and `load`);
* `fill`: `[key, entries]` pairs appended first, in order;
* `calls`: `[name, args, kwargs]`, the store passed as the first argument.

Each result is `{"ok": value}` or `{"error": "ValueError" | "FileNotFoundError",
"message": ...}`; a successful `fork_session_via_store` also returns the new session's
entries, as the store loads them.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import sys
from pathlib import Path
from typing import Any

import anyio

SRC = Path(__file__).resolve().parents[3] / "src"


# fields ccwire has and the reference lacks (the TypeScript SDK's): left out while unset
_UNSET_ADDITIONS = frozenset({"archived"})


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = dataclasses.asdict(value)
        kept = {k: v for k, v in fields.items() if not (k in _UNSET_ADDITIONS and v is None)}
        return {"__class__": type(value).__name__, **kept}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


class _Minimal:
    """Only the two required methods of a store."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def append(self, key: Any, entries: Any) -> None:
        await self.inner.append(key, entries)

    async def load(self, key: Any) -> Any:
        return await self.inner.load(key)


class _NoSummaries(_Minimal):
    """Every method but `list_session_summaries`."""

    async def list_sessions(self, project_key: str) -> Any:
        return await self.inner.list_sessions(project_key)

    async def list_subkeys(self, key: Any) -> Any:
        return await self.inner.list_subkeys(key)


def _store(package: Any, kind: str, path: str | None) -> Any:
    base, _, variant = kind.partition("+")
    if base == "memory":
        store = package.InMemorySessionStore()
    else:
        if str(SRC) not in sys.path:
            sys.path.insert(0, str(SRC))
        import ccwire

        store = ccwire.SQLiteStore(path)
    if variant == "minimal":
        return _Minimal(store)
    if variant == "nosummaries":
        return _NoSummaries(store)
    return store


async def run_store_job(package: Any, job: dict[str, Any]) -> list[dict[str, Any]]:
    """Fill a store and run each call against `package`.

    Args:
        package: `claude_agent_sdk` or `ccwire`.
        job: See the module docstring.

    Returns:
        One `{"ok": ...}` or `{"error": ..., "message": ...}` per call.
    """
    store = _store(package, job["store"], job.get("path"))
    for key, entries in job.get("fill", []):
        await store.append(key, entries)
    out: list[dict[str, Any]] = []
    for name, args, kwargs in job["calls"]:
        try:
            value = await getattr(package, name)(store, *args, **kwargs)
        except FileNotFoundError as exc:
            out.append({"error": "FileNotFoundError", "message": str(exc)})
            continue
        except ValueError as exc:
            out.append({"error": "ValueError", "message": str(exc)})
            continue
        result = _plain(value)
        if name == "fork_session_via_store":
            directory = kwargs.get("directory", args[1] if len(args) > 1 else None)
            key = {
                "project_key": package.project_key_for_directory(directory),
                "session_id": value.session_id,
            }
            result["entries"] = await store.load(key)
        out.append({"ok": result})
    return out


if __name__ == "__main__":
    job = json.load(sys.stdin)
    pkg = importlib.import_module(sys.argv[1])
    json.dump(anyio.run(run_store_job, pkg, job), sys.stdout)
